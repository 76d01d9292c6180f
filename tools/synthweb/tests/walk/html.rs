//! The walker's HTML link scanner: the links, `<base>`, charset and robots directives of
//! a page, skipping comments, scripts and styles.

use super::http::Response;

/// What the scanner found on a page.
#[derive(Debug, Default)]
pub struct PageLinks {
    /// Raw hrefs of followable links, in document order (a, area, link, frame, iframe,
    /// meta refresh).
    pub hrefs: Vec<String>,
    /// First `<base href>`.
    pub base: Option<String>,
    /// `<meta name=robots>` says nofollow or none.
    pub nofollow: bool,
    /// Declared `<meta charset>` or http-equiv content-type charset.
    pub charset: Option<String>,
}

/// Scan decoded HTML text for links. Comments, `<script>`, `<style>`, `<textarea>` and
/// `<title>` contents are skipped.
pub fn scan(html: &str) -> PageLinks {
    let mut out = PageLinks::default();
    let lower = html.to_ascii_lowercase();
    let bytes = html.as_bytes();
    let mut i = 0;
    while let Some(off) = html[i..].find('<') {
        i += off;
        if lower[i..].starts_with("<!--") {
            i = match lower[i + 4..].find("-->") {
                Some(end) => i + 4 + end + 3,
                None => html.len(),
            };
            continue;
        }
        if lower[i..].starts_with("<!")
            || lower[i..].starts_with("<?")
            || lower[i..].starts_with("</")
        {
            i = lower[i..].find('>').map_or(html.len(), |e| i + e + 1);
            continue;
        }
        let name_start = i + 1;
        let mut j = name_start;
        while j < bytes.len() && bytes[j].is_ascii_alphanumeric() {
            j += 1;
        }
        if j == name_start {
            i += 1;
            continue;
        }
        let name = lower[name_start..j].to_owned();
        let (attrs, end) = attributes(html, j);
        i = end;
        let attr = |n: &str| attrs.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        match name.as_str() {
            "a" | "area" | "link" => out.hrefs.extend(attr("href")),
            "frame" | "iframe" => out.hrefs.extend(attr("src")),
            "base" if out.base.is_none() => out.base = attr("href"),
            "meta" => {
                let content = attr("content").unwrap_or_default();
                if let Some(charset) = attr("charset") {
                    out.charset.get_or_insert(charset.to_ascii_lowercase());
                }
                match attr("http-equiv")
                    .map(|v| v.to_ascii_lowercase())
                    .as_deref()
                {
                    Some("refresh") => out.hrefs.extend(refresh_url(&content)),
                    Some("content-type") => {
                        if let Some(cs) = charset_param(&content) {
                            out.charset.get_or_insert(cs);
                        }
                    }
                    _ => {}
                }
                if attr("name").is_some_and(|n| n.eq_ignore_ascii_case("robots")) {
                    out.nofollow |= directives_nofollow(&content);
                }
            }
            "script" | "style" | "textarea" | "title" => {
                let close = format!("</{name}");
                i = lower[i..].find(&close).map_or(html.len(), |e| i + e);
            }
            _ => {}
        }
    }
    out
}

/// Parse attributes from `pos` (just after the tag name) to the closing `>`.
fn attributes(html: &str, mut pos: usize) -> (Vec<(String, String)>, usize) {
    let b = html.as_bytes();
    let mut attrs = Vec::new();
    loop {
        while pos < b.len() && (b[pos].is_ascii_whitespace() || b[pos] == b'/') {
            pos += 1;
        }
        if pos >= b.len() {
            return (attrs, pos);
        }
        if b[pos] == b'>' {
            return (attrs, pos + 1);
        }
        let start = pos;
        while pos < b.len()
            && !b[pos].is_ascii_whitespace()
            && !matches!(b[pos], b'/' | b'>' | b'=')
        {
            pos += 1;
        }
        let name = html[start..pos].to_ascii_lowercase();
        while pos < b.len() && b[pos].is_ascii_whitespace() {
            pos += 1;
        }
        let mut value = String::new();
        if pos < b.len() && b[pos] == b'=' {
            pos += 1;
            while pos < b.len() && b[pos].is_ascii_whitespace() {
                pos += 1;
            }
            if pos < b.len() && (b[pos] == b'"' || b[pos] == b'\'') {
                let quote = b[pos];
                let vstart = pos + 1;
                let vend = b[vstart..]
                    .iter()
                    .position(|&c| c == quote)
                    .map_or(b.len(), |e| vstart + e);
                value = html[vstart..vend].to_owned();
                pos = (vend + 1).min(b.len());
            } else {
                let vstart = pos;
                while pos < b.len() && !b[pos].is_ascii_whitespace() && b[pos] != b'>' {
                    pos += 1;
                }
                value = html[vstart..pos].to_owned();
            }
        }
        if !attrs.iter().any(|(k, _)| *k == name) {
            attrs.push((name, decode_refs(&value)));
        }
    }
}

/// Decode the character references the HTML Standard decodes in attribute values, for
/// the forms this walker supports: numeric, hex, and a few named ones (`&amp` etc., also
/// without `;` unless followed by `=` or an alphanumeric).
pub(super) fn decode_refs(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let (decoded, used) = one_ref(rest);
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[used..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn one_ref(s: &str) -> (Option<char>, usize) {
    if let Some(num) = s.strip_prefix("&#") {
        let (radix, digits_at) = if num.starts_with(['x', 'X']) {
            (16, 3)
        } else {
            (10, 2)
        };
        let digits: String = s[digits_at..]
            .chars()
            .take_while(|c| c.is_digit(radix))
            .collect();
        if digits.is_empty() {
            return (None, 0);
        }
        let mut used = digits_at + digits.len();
        if s[used..].starts_with(';') {
            used += 1;
        }
        let c = u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
            .unwrap_or('\u{FFFD}');
        return (Some(c), used);
    }
    for (name, c) in [
        ("amp", '&'),
        ("lt", '<'),
        ("gt", '>'),
        ("quot", '"'),
        ("apos", '\''),
        ("nbsp", '\u{a0}'),
    ] {
        let Some(after) = s[1..].strip_prefix(name) else {
            continue;
        };
        if after.starts_with(';') {
            return (Some(c), 1 + name.len() + 1);
        }
        // Legacy names without `;` (not apos), unless followed by `=` or alphanumeric.
        let next = after.chars().next();
        if name != "apos" && !next.is_some_and(|n| n == '=' || n.is_ascii_alphanumeric()) {
            return (Some(c), 1 + name.len());
        }
    }
    (None, 0)
}

fn refresh_url(content: &str) -> Option<String> {
    let (_, rest) = content.split_once([';', ','])?;
    let rest = rest.trim_start();
    let lower = rest.to_ascii_lowercase();
    let rest = if lower.starts_with("url") {
        rest[3..].trim_start().strip_prefix('=')?.trim_start()
    } else {
        rest
    };
    let rest = rest.trim_matches(|c| c == '\'' || c == '"');
    (!rest.is_empty()).then(|| rest.to_owned())
}

pub(super) fn charset_param(content_type: &str) -> Option<String> {
    let lower = content_type.to_ascii_lowercase();
    let at = lower.find("charset=")?;
    Some(
        lower[at + 8..]
            .trim_matches(|c: char| c == '"' || c == '\'' || c.is_whitespace())
            .split(';')
            .next()?
            .to_owned(),
    )
}

/// Whether a robots directive list (meta content or X-Robots-Tag value) forbids following.
pub fn directives_nofollow(list: &str) -> bool {
    list.split(',')
        .map(|d| d.trim().to_ascii_lowercase())
        .any(|d| d == "nofollow" || d == "none")
}

/// Whether the X-Robots-Tag headers forbid following for agent `trawl` (plain values and
/// values prefixed `trawl:`; values prefixed by another agent do not apply).
pub fn header_nofollow(response: &Response) -> bool {
    response.header_all("x-robots-tag").any(|value| {
        let applies = match value.split_once(':') {
            Some((agent, rest)) if !agent.contains(',') && !agent.trim().contains(' ') => {
                if agent.trim().eq_ignore_ascii_case("trawl") {
                    return directives_nofollow(rest);
                }
                // `unavailable_after: date` is a directive, not an agent prefix.
                agent.trim().eq_ignore_ascii_case("unavailable_after")
            }
            _ => true,
        };
        applies && directives_nofollow(value)
    })
}
