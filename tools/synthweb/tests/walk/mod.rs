//! An independent crawler for the manifest tests: a blocking HTTP/1.1 client over
//! `std::net`, a small HTML link scanner, WHATWG resolution by the `url` crate plus
//! trawl's percent rules, and its own RFC 9309 robots.txt parser. It shares no code with
//! the synthweb generator or its manifest walker: it only sees the bytes the server
//! sends, so a manifest that agrees with it agrees with what a crawler can observe.
//!
//! Everything is bounded: response bytes, fetch count and wall time.

#![allow(dead_code, reason = "each test binary uses a different part")]

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use url::Url;

/// Largest response the walker reads.
const MAX_RESPONSE_BYTES: u64 = 16 << 20;
/// Longest URL a trawl-default crawler fetches.
pub const MAX_URL_BYTES: usize = 2048;
/// Longest redirect chain followed.
pub const MAX_REDIRECTS: u32 = 5;

/// A parsed response.
#[derive(Debug, Default)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn header_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Fetch `target` from `addr` with `Host: host`, `Connection: close`, no content coding.
pub fn get(addr: SocketAddr, host: &str, target: &str) -> Result<Response, String> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(3))
        .map_err(|e| format!("connect {addr}: {e}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    stream
        .set_write_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    let request = format!(
        "GET {target} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: trawl/0.0 (independent walker)\r\n\
         From: test@example.org\r\nAccept: */*\r\nAccept-Encoding: identity\r\nConnection: close\r\n\r\n"
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    stream
        .take(MAX_RESPONSE_BYTES)
        .read_to_end(&mut raw)
        .map_err(|e| format!("read {host}{target}: {e}"))?;
    parse_response(&raw)
}

fn parse_response(raw: &[u8]) -> Result<Response, String> {
    let head_end = find(raw, b"\r\n\r\n").ok_or("no end of head")?;
    let head = std::str::from_utf8(&raw[..head_end]).map_err(|_| "head not UTF-8")?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().ok_or("empty head")?;
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or("");
    if !version.starts_with("HTTP/1.") {
        return Err(format!("bad status line {status_line:?}"));
    }
    let status: u16 = parts
        .next()
        .unwrap_or("")
        .parse()
        .map_err(|_| "bad status")?;
    let mut response = Response {
        status,
        ..Response::default()
    };
    for line in lines {
        let (name, value) = line.split_once(':').ok_or("header without colon")?;
        response
            .headers
            .push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let rest = &raw[head_end + 4..];
    let chunked = response
        .header("transfer-encoding")
        .is_some_and(|te| te.to_ascii_lowercase().contains("chunked"));
    response.body = if chunked {
        dechunk(rest)?
    } else if let Some(len) = response.header("content-length") {
        let len: usize = len.parse().map_err(|_| "bad content-length")?;
        rest.get(..len)
            .ok_or("body shorter than content-length")?
            .to_vec()
    } else {
        rest.to_vec()
    };
    Ok(response)
}

fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    loop {
        let line_end = find(rest, b"\r\n").ok_or("chunk size line")?;
        let size_text = std::str::from_utf8(&rest[..line_end]).map_err(|_| "chunk size")?;
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| "chunk size hex")?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Ok(body);
        }
        body.extend_from_slice(rest.get(..size).ok_or("short chunk")?);
        rest = rest.get(size + 2..).ok_or("chunk end")?;
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

// ---------------------------------------------------------------------------------------
// HTML

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
fn decode_refs(value: &str) -> String {
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

fn charset_param(content_type: &str) -> Option<String> {
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

// ---------------------------------------------------------------------------------------
// Encodings and URLs

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

// ---------------------------------------------------------------------------------------
// robots.txt (RFC 9309)

/// Rules of one origin for agent `trawl`.
#[derive(Debug, Clone)]
pub enum Robots {
    AllowAll,
    DisallowAll,
    Rules(Vec<(bool, String)>),
}

impl Robots {
    pub fn allows(&self, path_and_query: &str) -> bool {
        match self {
            Robots::AllowAll => true,
            Robots::DisallowAll => path_and_query == "/robots.txt",
            Robots::Rules(rules) => {
                if path_and_query == "/robots.txt" {
                    return true;
                }
                let mut best: Option<(usize, bool)> = None;
                for (allow, pattern) in rules {
                    if pattern.is_empty() || !wildcard_match(pattern, path_and_query) {
                        continue;
                    }
                    let len = pattern.len();
                    best = match best {
                        Some((bl, ba)) if bl > len || (bl == len && ba) => Some((bl, ba)),
                        _ => Some((len, *allow)),
                    };
                }
                best.is_none_or(|(_, allow)| allow)
            }
        }
    }
}

/// A robots.txt group: its agents, and its rules as (is allow, pattern).
type RobotsGroup = (Vec<String>, Vec<(bool, String)>);

/// Parse a robots.txt body for agent `agent` (lower-case product token).
pub fn parse_robots(body: &[u8], agent: &str) -> Robots {
    let text =
        String::from_utf8_lossy(body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body)).into_owned();
    // Groups: (agents, rules).
    let mut groups: Vec<RobotsGroup> = Vec::new();
    let mut in_agents = false;
    for line in text.split(['\r', '\n']) {
        let line = line.split('#').next().unwrap_or("");
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim_matches([' ', '\t']).to_ascii_lowercase();
        let value = value.trim_matches([' ', '\t']).to_owned();
        match key.as_str() {
            "user-agent" => {
                let token: String = value
                    .chars()
                    .take_while(|c| c.is_ascii_alphabetic() || *c == '_' || *c == '-' || *c == '*')
                    .collect::<String>()
                    .to_ascii_lowercase();
                if !in_agents {
                    groups.push((Vec::new(), Vec::new()));
                    in_agents = true;
                }
                if let Some(g) = groups.last_mut() {
                    g.0.push(token);
                }
            }
            "allow" | "disallow" => {
                in_agents = false;
                if let Some(g) = groups.last_mut() {
                    g.1.push((key == "allow", value));
                }
            }
            _ => {}
        }
    }
    let named: Vec<_> = groups
        .iter()
        .filter(|g| g.0.iter().any(|a| a == agent))
        .collect();
    let chosen = if named.is_empty() {
        groups
            .iter()
            .filter(|g| g.0.iter().any(|a| a == "*"))
            .collect()
    } else {
        named
    };
    let rules: Vec<(bool, String)> = chosen
        .into_iter()
        .flat_map(|g| g.1.iter().cloned())
        .collect();
    Robots::Rules(rules)
}

/// RFC 9309 pattern match by dynamic programming (prefix match, `*`, final `$`).
pub fn wildcard_match(pattern: &str, path: &str) -> bool {
    let (pattern, anchored) = match pattern.strip_suffix('$') {
        Some(p) => (p, true),
        None => (pattern, false),
    };
    let p = pattern.as_bytes();
    let s = path.as_bytes();
    // reach[j]: pattern prefix consumed so far can end at path position j.
    let mut reach = vec![false; s.len() + 1];
    reach[0] = true;
    for &pc in p {
        let mut next = vec![false; s.len() + 1];
        if pc == b'*' {
            let mut any = false;
            for j in 0..=s.len() {
                any |= reach[j];
                next[j] = any;
            }
        } else {
            for j in 0..s.len() {
                next[j + 1] = reach[j] && s[j] == pc;
            }
        }
        reach = next;
    }
    if anchored {
        reach[s.len()]
    } else {
        reach.iter().any(|&r| r)
    }
}

// ---------------------------------------------------------------------------------------
// The walk

/// The crawl policy of the walk (trawl's defaults, as the manifest assumes).
#[derive(Debug, Clone)]
pub struct WalkPolicy {
    pub robots_4xx_disallow: bool,
    pub max_pages_per_host: usize,
    pub max_fetches: usize,
    pub max_time: Duration,
}

/// What the walk saw.
#[derive(Debug, Default)]
pub struct WalkResult {
    /// Canonical URLs fetched (robots files excluded).
    pub fetched: BTreeSet<String>,
    /// Canonical URLs seen as links but refused by robots.txt.
    pub disallowed: BTreeSet<String>,
    /// Canonical URLs refused by the trap filters.
    pub filtered: BTreeSet<String>,
    /// Fetch errors (hostile hosts), by URL.
    pub errors: Vec<(String, String)>,
    /// True when the walk stopped at its fetch or time bound.
    pub truncated: bool,
}

/// Crawl from `seeds`, breadth-first over one global FIFO queue but with per-host
/// budgets, robots.txt first per origin, redirects followed, exact content duplicates
/// not followed. `hosts` maps host names to (address, http port).
pub fn walk(seeds: &[String], hosts: &HashMap<String, IpAddr>, policy: &WalkPolicy) -> WalkResult {
    let started = Instant::now();
    let mut result = WalkResult::default();
    let mut queue: VecDeque<(String, u32)> = seeds.iter().map(|s| (s.clone(), 0)).collect();
    let mut seen: HashSet<String> = seeds.iter().cloned().collect();
    let mut robots: HashMap<String, Robots> = HashMap::new();
    let mut per_host: HashMap<String, usize> = HashMap::new();
    let mut fingerprints: HashSet<Vec<u8>> = HashSet::new();
    let mut fetches = 0usize;
    while let Some((url_text, redirects)) = queue.pop_front() {
        if fetches >= policy.max_fetches || started.elapsed() > policy.max_time {
            result.truncated = true;
            break;
        }
        if is_trap(&url_text) {
            result.filtered.insert(url_text);
            continue;
        }
        let Ok(url) = Url::parse(&url_text) else {
            continue;
        };
        let Some(host) = url.host_str().map(str::to_owned) else {
            continue;
        };
        let Some(&ip) = hosts.get(&host) else {
            continue;
        };
        let Some(port) = url.port_or_known_default() else {
            continue;
        };
        let origin = url.origin().ascii_serialization();
        let host_header = format!("{host}:{port}");
        let rules = robots
            .entry(origin.clone())
            .or_insert_with(|| fetch_robots(&url, hosts, policy.robots_4xx_disallow))
            .clone();
        let target = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_owned(),
        };
        if !rules.allows(&target) {
            result.disallowed.insert(url_text);
            continue;
        }
        let count = per_host.entry(host.clone()).or_default();
        if *count >= policy.max_pages_per_host {
            continue;
        }
        *count += 1;
        fetches += 1;
        let response = match get(SocketAddr::new(ip, port), &host_header, &target) {
            Ok(r) => r,
            Err(e) => {
                result.errors.push((url_text, e));
                continue;
            }
        };
        result.fetched.insert(url_text.clone());
        let mut enqueue = |link: String, redirects: u32| {
            if seen.insert(link.clone()) {
                queue.push_back((link, redirects));
            }
        };
        if (300..400).contains(&response.status) {
            if redirects < MAX_REDIRECTS {
                if let Some(target) = response
                    .header("location")
                    .and_then(|l| canonical(&url, l, false))
                {
                    enqueue(target, redirects + 1);
                }
            }
            continue;
        }
        let is_html = response
            .header("content-type")
            .is_some_and(|ct| ct.to_ascii_lowercase().starts_with("text/html"));
        if !(200..300).contains(&response.status) || !is_html || header_nofollow(&response) {
            continue;
        }
        if !fingerprints.insert(own_locations_abstracted(url.path(), &response.body)) {
            continue;
        }
        let (text, legacy) = decode_body(&response);
        let links = scan(&text);
        if links.nofollow {
            continue;
        }
        let base = links
            .base
            .as_deref()
            .and_then(|b| url.join(b.trim()).ok())
            .unwrap_or_else(|| url.clone());
        for href in &links.hrefs {
            if let Some(link) = canonical(&base, href, legacy) {
                enqueue(link, 0);
            }
        }
    }
    result
}

/// Fetch and interpret an origin's robots.txt (redirects followed up to 5, also across
/// hosts; the result applies to the original origin).
fn fetch_robots(url: &Url, hosts: &HashMap<String, IpAddr>, robots_4xx_disallow: bool) -> Robots {
    let mut current = match url.join("/robots.txt") {
        Ok(u) => u,
        Err(_) => return Robots::DisallowAll,
    };
    for _ in 0..=MAX_REDIRECTS {
        let (Some(host), Some(port)) = (current.host_str(), current.port_or_known_default()) else {
            return Robots::DisallowAll;
        };
        let Some(&ip) = hosts.get(host) else {
            return Robots::AllowAll;
        };
        let target = current.path().to_owned();
        let response = match get(
            SocketAddr::new(ip, port),
            &format!("{host}:{port}"),
            &target,
        ) {
            Ok(r) => r,
            Err(_) => return Robots::DisallowAll,
        };
        match response.status {
            200..=299 => return parse_robots(&response.body, "trawl"),
            300..=399 => match response
                .header("location")
                .and_then(|l| current.join(l).ok())
            {
                Some(next) => current = next,
                None => return Robots::AllowAll,
            },
            401 | 403 if robots_4xx_disallow => return Robots::DisallowAll,
            429 => return Robots::DisallowAll,
            400..=499 => return Robots::AllowAll,
            _ => return Robots::DisallowAll,
        }
    }
    // Too many redirects: RFC 9309 2.3.1.2 allows treating it as unavailable (4xx).
    Robots::AllowAll
}

/// trawl's duplicate reading, written here a third time on purpose (the walker checks
/// the manifest, which models trawl): the body with each mention of the page's own
/// directory (with and without its final `/`) and of its parent (the same), tried in
/// that order, replaced by a marker; never the root `/`, never right after `<`.
fn own_locations_abstracted(path: &str, body: &[u8]) -> Vec<u8> {
    let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
    let mut needles: Vec<String> = Vec::new();
    if dir.len() > 1 {
        let bare = &dir[..dir.len() - 1];
        let parent = &bare[..bare.rfind('/').map_or(0, |i| i + 1)];
        needles.push(dir.to_owned());
        needles.push(bare.to_owned());
        if parent.len() > 1 {
            needles.push(parent.to_owned());
            needles.push(parent[..parent.len() - 1].to_owned());
        }
    }
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        let after_lt = i > 0 && body[i - 1] == b'<';
        let hit = (body[i] == b'/' && !after_lt)
            .then(|| {
                needles
                    .iter()
                    .position(|n| body[i..].starts_with(n.as_bytes()))
            })
            .flatten();
        match hit {
            Some(k) => {
                out.extend_from_slice(&[0, b"DdPp"[k]]);
                i += needles[k].len();
            }
            None => {
                out.push(body[i]);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walker_parts() {
        let links = scan(
            "<html><head><base href='/b/'><meta name=ROBOTS content='noindex, NOFOLLOW'></head>\
             <!-- <a href=/hidden> --><script>x='<a href=/s>'</script><A HREF = \" x?a=1&amp;b=2 \">\
             <iframe src=/f></iframe><meta http-equiv=refresh content='0; URL=/r'><img src=/i.png>",
        );
        assert_eq!(links.base.as_deref(), Some("/b/"));
        assert!(links.nofollow);
        assert_eq!(links.hrefs, [" x?a=1&b=2 ", "/f", "/r"]);
        let base = Url::parse("http://h.test:8080/b/").unwrap();
        assert_eq!(
            canonical(&base, "%7Ex/%2f?q=%7e#f", false).unwrap(),
            "http://h.test:8080/b/~x/%2F?q=~"
        );
        assert_eq!(
            canonical(&base, "HTTP://H.TEST:80/", false).unwrap(),
            "http://h.test/"
        );
        assert_eq!(canonical(&base, "mailto:a@b", false), None);
        assert!(is_trap("http://h/a/b/a/b/a/b/"));
        assert!(is_trap("http://h/d/sub/sub/sub/sub/"));
        assert!(!is_trap("http://h/d/sub/sub/sub/"));
        assert!(is_trap("http://h/x/y/z/x/y/z/x/y/z"));
        let r = parse_robots(b"\xEF\xBB\xBFUser-agent: *\r\nDisallow: /\r\n\r\nUser-Agent: otherbot\nuser-agent: TRAWL\nDisallow: /tmp/ # c\n", "trawl");
        assert!(r.allows("/p/1") && !r.allows("/tmp/x") && r.allows("/robots.txt"));
        assert!(
            wildcard_match("/x/*.php$", "/x/a.php") && !wildcard_match("/x/*.php$", "/x/a.php?y")
        );
        assert_eq!(
            decode_refs("a&amp;b&amp c&ampc&amp=d&#65;&#x42;"),
            "a&b& c&ampc&amp=dAB"
        );
    }
}
