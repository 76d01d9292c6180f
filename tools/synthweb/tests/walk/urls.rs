//! Encodings and URLs: windows-1252 bodies, WHATWG resolution plus trawl's percent
//! rules to canonical form, and trawl's trap filter.

use std::borrow::Cow;
use std::collections::HashMap;

use url::Url;

use super::html::{charset_param, scan};
use super::http::Response;
use super::MAX_URL_BYTES;

/// windows-1252 bytes 0x80..=0x9F (WHATWG's mapping for iso-8859-1 labels too).
const W1252_HIGH: [u32; 32] = [
    0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039,
    0x0152, 0x8D, 0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
];

fn is_legacy(charset: &str) -> bool {
    matches!(
        charset,
        "iso-8859-1" | "latin1" | "windows-1252" | "cp1252" | "us-ascii" | "l1" | "iso_8859-1"
    )
}

fn decode_1252(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| match b {
            0x80..=0x9F => char::from_u32(W1252_HIGH[usize::from(b - 0x80)]).unwrap_or('\u{FFFD}'),
            _ => char::from(b),
        })
        .collect()
}

fn encode_1252(s: &str) -> Cow<'_, [u8]> {
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        let code = u32::from(c);
        if code < 0x80 || (0xA0..=0xFF).contains(&code) {
            out.push(code as u8);
        } else if let Some(i) = W1252_HIGH.iter().position(|&w| w == code) {
            out.push(0x80 + i as u8);
        } else {
            out.extend_from_slice(format!("&#{code};").as_bytes());
        }
    }
    Cow::Owned(out)
}

/// Decode a page body by its charset (header first, then meta, default UTF-8).
pub fn decode_body(response: &Response) -> (String, bool) {
    let header = response.header("content-type").and_then(charset_param);
    let sniff_text =
        String::from_utf8_lossy(&response.body[..response.body.len().min(1024)]).into_owned();
    let meta = scan(&sniff_text).charset;
    let charset = header.or(meta).unwrap_or_else(|| "utf-8".to_owned());
    if is_legacy(&charset) {
        (decode_1252(&response.body), true)
    } else {
        (String::from_utf8_lossy(&response.body).into_owned(), false)
    }
}

/// Resolve `href` against `base` and bring it to trawl's canonical form; `None` for
/// links that are not http(s) or do not parse.
pub fn canonical(base: &Url, href: &str, legacy: bool) -> Option<String> {
    let href = href.trim_matches(|c: char| c.is_ascii_whitespace());
    let encode: &dyn Fn(&str) -> Cow<'_, [u8]> = &encode_1252;
    let options = Url::options().base_url(Some(base));
    let options = if legacy {
        options.encoding_override(Some(encode))
    } else {
        options
    };
    let mut url = options.parse(href).ok()?;
    if url.scheme() != "http" && url.scheme() != "https" {
        return None;
    }
    url.set_fragment(None);
    let path = normalize_percent(url.path());
    url.set_path(&path);
    if let Some(query) = url.query().map(normalize_percent) {
        url.set_query(Some(&query));
    }
    Some(url.to_string())
}

/// Decode `%XX` of unreserved characters, upper-case the hex of every other escape.
pub fn normalize_percent(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && b[i + 1].is_ascii_hexdigit()
            && b[i + 2].is_ascii_hexdigit()
        {
            let v = u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap_or(0);
            if v.is_ascii_alphanumeric() || matches!(v, b'-' | b'.' | b'_' | b'~') {
                out.push(char::from(v));
            } else {
                out.push_str(&format!("%{v:02X}"));
            }
            i += 3;
        } else {
            let c = s[i..].chars().next().unwrap_or('\u{FFFD}');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// trawl's default trap filters: too long, or a repeated path pattern (one segment more
/// than 3 times, or a sequence of 2 or 3 segments repeated 3 times in a row).
pub fn is_trap(url: &str) -> bool {
    if url.len() > MAX_URL_BYTES {
        return true;
    }
    let Ok(parsed) = Url::parse(url) else {
        return true;
    };
    let segments: Vec<&str> = parsed.path().split('/').filter(|s| !s.is_empty()).collect();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for s in &segments {
        *counts.entry(s).or_default() += 1;
    }
    if counts.values().any(|&n| n > 3) {
        return true;
    }
    for period in 2..=3 {
        for start in 0..segments.len() {
            if start + 3 * period > segments.len() {
                break;
            }
            let unit = &segments[start..start + period];
            if (1..3).all(|k| &segments[start + k * period..start + (k + 1) * period] == unit) {
                return true;
            }
        }
    }
    false
}
