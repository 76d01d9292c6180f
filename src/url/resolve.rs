//! The per-link hot path: many references resolved against one base.
//!
//! A crawl canonicalizes every link of every page, and a profile of a real
//! documentation crawl showed the `url` crate's full parse (path parsing and
//! percent-encoding) at about a tenth of the CPU. Most links on real pages are plain
//! ASCII paths relative to a base that is already canonical (`../java.base/x.html`,
//! `/docs/a`, `page.html#top`), and for those the canonical form is a string splice
//! of the base and the reference. [`Resolver`] does that splice directly into a
//! caller's buffer and hands every other reference (escapes, non-ASCII, backslashes,
//! odd characters, IP hosts, userinfo, other schemes, lossy options) to
//! [`canonicalize_with`], which stays the reference implementation: a property test
//! checks that both give byte-identical keys.

#![deny(clippy::indexing_slicing)]

use std::fmt::Write as _;

use encoding_rs::Encoding;
use memchr::memchr;
use url::{Position, Url};

use super::canon::{canonicalize_absolute, canonicalize_with, CanonOptions};
use super::Reject;

/// Resolves and canonicalizes references found in one document (one base, one set
/// of options, the document's encoding).
#[derive(Debug, Clone)]
pub struct Resolver {
    base: Url,
    options: CanonOptions,
    encoding: Option<&'static Encoding>,
    /// Offsets into `base` for the splice; `None` when the base is not a canonical
    /// `http(s)` URL or the options are lossy (every reference then takes the
    /// `url` crate's path).
    fast: Option<FastBase>,
}

/// A canonical URL of [`Resolver::resolve`]: in the caller's buffer (fast path) or a
/// parsed [`Url`] (the `url` crate's path).
#[derive(Debug)]
pub enum Resolved<'s> {
    /// Written into the buffer passed to [`Resolver::resolve`].
    Spliced(&'s str),
    /// From [`canonicalize_with`].
    Parsed(Url),
}

impl Resolved<'_> {
    /// The canonical URL.
    pub fn as_str(&self) -> &str {
        match self {
            Resolved::Spliced(s) => s,
            Resolved::Parsed(u) => u.as_str(),
        }
    }

    /// The canonical URL as an owned string (no copy for [`Resolved::Parsed`]).
    pub fn into_string(self) -> String {
        match self {
            Resolved::Spliced(s) => s.to_owned(),
            Resolved::Parsed(u) => u.into(),
        }
    }
}

/// Where the parts of a canonical `http(s)` base end, as byte offsets into it.
#[derive(Debug, Clone, Copy)]
struct FastBase {
    https: bool,
    /// End of `scheme://host[:port]`.
    origin_end: usize,
    /// Offset of the last `/` of the path: the base path without its last segment.
    dir_end: usize,
    /// End of the path (start of `?query`, or the end).
    path_end: usize,
}

impl FastBase {
    /// The splice is exact only against a base that is its own canonical form: it
    /// appends to the base's bytes without normalizing them.
    fn of(base: &Url, options: &CanonOptions) -> Option<FastBase> {
        let lossless = !options.strip_session_ids && !options.sort_query;
        let https = match base.scheme() {
            "http" => false,
            "https" => true,
            _ => return None,
        };
        if !lossless
            || base.fragment().is_some()
            || !base.username().is_empty()
            || base.password().is_some()
        {
            return None;
        }
        if !is_plainly_canonical(base) {
            match canonicalize_absolute(base.as_str()) {
                Ok(canonical) if canonical.as_str() == base.as_str() => {}
                _ => return None,
            }
        }
        let origin_end = base[..Position::BeforePath].len();
        let path_end = base[..Position::AfterPath].len();
        let path = base.path();
        let dir_end = origin_end + path.rfind('/')?;
        Some(FastBase {
            https,
            origin_end,
            dir_end,
            path_end,
        })
    }
}

/// Whether a parsed `http(s)` URL without userinfo or fragment is its own canonical
/// form without parsing it again (once a page, that parse was 3.5 % of the
/// extraction): a host the splice would copy as it is ([`is_plain_host`]), and a path
/// and query of bytes it copies as they are. Canonicalization changes nothing else
/// of a parsed URL: no escape or `^` to normalize, no trailing dot, no dots-only
/// host. `false` only means "check by parsing".
fn is_plainly_canonical(base: &Url) -> bool {
    base.host_str().is_some_and(is_plain_host)
        && all_in(base.path().as_bytes(), PATH)
        && base.query().is_none_or(|q| all_in(q.as_bytes(), QUERY))
}

impl Resolver {
    /// A resolver for references against `base`. `encoding` is the document's (for
    /// queries, see [`canonicalize_with`]); `None` means UTF-8.
    pub fn new(base: Url, options: CanonOptions, encoding: Option<&'static Encoding>) -> Self {
        let fast = FastBase::of(&base, &options);
        Resolver {
            base,
            options,
            encoding,
            fast,
        }
    }

    /// The base references are resolved against.
    pub fn base(&self) -> &Url {
        &self.base
    }

    /// The base, given back.
    pub fn into_base(self) -> Url {
        self.base
    }

    /// Changes the document encoding (a `<meta charset>` seen mid-page).
    pub fn set_encoding(&mut self, encoding: Option<&'static Encoding>) {
        self.encoding = encoding;
    }

    /// Whether simple references skip the `url` crate (the base is canonical
    /// `http(s)` and the options lossless).
    pub fn is_fast(&self) -> bool {
        self.fast.is_some()
    }

    /// The canonical URL of `href`, exactly as [`canonicalize_with`] gives it.
    /// `scratch` is a buffer the caller reuses between links; the fast path writes
    /// the result there and allocates nothing.
    ///
    /// # Errors
    /// As [`canonicalize_with`].
    pub fn resolve<'s>(&self, href: &str, scratch: &'s mut String) -> Result<Resolved<'s>, Reject> {
        if let Some(fast) = &self.fast {
            match splice(self.base.as_str(), fast, href, scratch) {
                Splice::Written => return Ok(Resolved::Spliced(scratch.as_str())),
                Splice::OtherScheme => return Err(Reject::UnsupportedScheme),
                Splice::Parse => {}
            }
        }
        canonicalize_with(&self.base, href, &self.options, self.encoding).map(Resolved::Parsed)
    }
}

/// Bytes a path segment may hold on the fast path: ASCII letters and digits and the
/// RFC 3986 unreserved and sub-delimiter characters, `:` and `@`. The WHATWG path
/// percent-encode set contains none of them and canonicalization changes none, so
/// they are copied as they are. Everything else (`%`, `\`, `^`, `|`, `[`, `"`,
/// spaces, controls, non-ASCII ...) takes the `url` crate's path.
pub(super) const PATH: u8 = 1;
/// Query bytes copied as they are: the path set without `'` (in the special-query
/// percent-encode set), plus `?`.
pub(super) const QUERY: u8 = 2;
/// Bytes inside one path segment: [`PATH`] without `/`.
const SEGMENT: u8 = 4;

/// [`PATH`] and [`QUERY`] bits per byte value: one load per byte on the hot path.
static CLASS: [u8; 256] = byte_classes();

#[allow(
    clippy::indexing_slicing,
    reason = "runs at compile time over the constant indices 0..256 of a 256-entry table"
)]
const fn byte_classes() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        let path = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b':'
                    | b'@'
                    | b'/'
            );
        let query = b == b'?' || (path && b != b'\'');
        let segment = path && b != b'/';
        t[i] = ((path as u8) * PATH) | ((query as u8) * QUERY) | ((segment as u8) * SEGMENT);
        i += 1;
    }
    t
}

#[inline]
pub(super) fn is(class: u8, b: u8) -> bool {
    CLASS.get(usize::from(b)).is_some_and(|c| c & class != 0)
}

pub(super) fn all_in(bytes: &[u8], class: u8) -> bool {
    bytes.iter().all(|&b| is(class, b))
}

/// What [`splice`] made of a reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Splice {
    /// The canonical URL is in the buffer.
    Written,
    /// An absolute URL in a scheme other than the special ones (`mailto:`,
    /// `javascript:`, `data:` ...) with an opaque path: the parser cannot fail on it,
    /// and the result is [`Reject::UnsupportedScheme`].
    OtherScheme,
    /// The reference needs the full parser (the buffer holds anything).
    Parse,
}

impl From<bool> for Splice {
    fn from(written: bool) -> Self {
        if written {
            Splice::Written
        } else {
            Splice::Parse
        }
    }
}

/// The fast path: writes the canonical URL of `href` against the canonical `base`
/// into `out`, or says that the reference is in another scheme or needs the full
/// parser. It follows the WHATWG URL parser's "scheme", "relative", "path" and
/// "authority" states for the inputs it accepts; the property test
/// `splice_equals_canonicalize` holds it to the `url` crate's answers.
fn splice(base: &str, fast: &FastBase, href: &str, out: &mut String) -> Splice {
    out.clear();
    let bytes = href.as_bytes();
    // Leading and trailing C0 controls and spaces are stripped by the parser.
    let start = bytes.iter().position(|&b| b > b' ').unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|&b| b > b' ')
        .map_or(start, |i| i + 1);
    let Some(trimmed) = href.get(start..end) else {
        return Splice::Parse;
    };
    // The fragment is dropped (rule 3); whatever it holds cannot change the rest.
    let reference = match memchr(b'#', trimmed.as_bytes()) {
        Some(i) => trimmed.get(..i).unwrap_or(""),
        None => trimmed,
    };
    let rb = reference.as_bytes();
    match rb.first() {
        // Empty or fragment-only: the base itself (canonical, without fragment).
        None => {
            out.push_str(base);
            Splice::Written
        }
        // Query-only: the base's path with the new query.
        Some(b'?') => {
            if !all_in(rb, QUERY) {
                return Splice::Parse;
            }
            out.push_str(base.get(..fast.path_end).unwrap_or(base));
            out.push_str(reference);
            Splice::Written
        }
        Some(b'/') => match rb.get(1) {
            // Scheme-relative: `//host/...` with the base's scheme.
            Some(b'/') => {
                let rest = reference.get(2..).unwrap_or("");
                authority_and_path(fast.https, rest, out).into()
            }
            // Path-absolute.
            _ => {
                out.push_str(base.get(..fast.origin_end).unwrap_or(base));
                let floor = out.len();
                path_and_query(reference, true, floor, out).into()
            }
        },
        Some(_) => {
            if let Some(rest) = strip_prefix_ignore_case(reference, "http://") {
                return authority_and_path(false, rest, out).into();
            }
            if let Some(rest) = strip_prefix_ignore_case(reference, "https://") {
                return authority_and_path(true, rest, out).into();
            }
            if is_other_scheme(rb) {
                return Splice::OtherScheme;
            }
            // Path-relative: the base path without its last segment, then ours.
            out.push_str(base.get(..fast.dir_end).unwrap_or(base));
            path_and_query(reference, false, fast.origin_end, out).into()
        }
    }
}

/// Whether `reference` (trimmed, without fragment) is an absolute URL whose scheme is
/// not special and whose rest is an opaque path, which the WHATWG parser accepts
/// whatever it holds: a scheme (an ASCII letter, then letters, digits, `+`, `-`,
/// `.`) other than `http`, `https`, `ws`, `wss`, `ftp`, `file`, then `:` not followed
/// by `/` (an authority or a path, which can fail) nor by a tab or newline (which the
/// parser removes, so a `/` could follow).
fn is_other_scheme(reference: &[u8]) -> bool {
    if !reference.first().is_some_and(u8::is_ascii_alphabetic) {
        return false;
    }
    let Some(colon) = reference
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))
    else {
        return false;
    };
    let (Some(scheme), Some(&b':')) = (reference.get(..colon), reference.get(colon)) else {
        return false;
    };
    let special = ["http", "https", "ws", "wss", "ftp", "file"]
        .iter()
        .any(|s| scheme.eq_ignore_ascii_case(s.as_bytes()));
    !special && !matches!(reference.get(colon + 1), Some(b'/' | b'\t' | b'\n' | b'\r'))
}

fn strip_prefix_ignore_case<'r>(s: &'r str, prefix: &str) -> Option<&'r str> {
    let head = s.get(..prefix.len())?;
    if head.eq_ignore_ascii_case(prefix) {
        s.get(prefix.len()..)
    } else {
        None
    }
}

/// `host[:port][/path][?query]` after `scheme://`: a plain ASCII domain only.
fn authority_and_path(https: bool, rest: &str, out: &mut String) -> bool {
    let rb = rest.as_bytes();
    let end = rb
        .iter()
        .position(|&b| b == b'/' || b == b'?')
        .unwrap_or(rb.len());
    let (Some(host_port), Some(tail)) = (rest.get(..end), rest.get(end..)) else {
        return false;
    };
    let (host, port) = match host_port.split_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (host_port, None),
    };
    out.push_str(if https { "https://" } else { "http://" });
    if !push_host(host, out) {
        return false;
    }
    if let Some(port) = port {
        let default = if https { 443 } else { 80 };
        match parse_port(port) {
            Some(None) => {}
            Some(Some(p)) if p == default => {}
            Some(Some(p)) => {
                let _ = write!(out, ":{p}");
            }
            None => return false,
        }
    }
    let floor = out.len();
    if tail.is_empty() {
        out.push('/');
        return true;
    }
    if tail.starts_with('?') {
        if !all_in(tail.as_bytes(), QUERY) {
            return false;
        }
        out.push('/');
        out.push_str(tail);
        return true;
    }
    path_and_query(tail, true, floor, out)
}

/// Appends the lower-cased `host` if it is a plain ASCII domain that the WHATWG host
/// parser (IDNA, IPv4) and rule 4 (trailing dots) leave as it is: labels of letters,
/// digits, `-` and `_`, starting and ending with a letter or digit, no `--`
/// anywhere (so no `xn--` label to validate), a last label not starting with a digit
/// (which could make the host an IPv4 address); or an IPv4 address in its own
/// serialization (see [`is_canonical_ipv4`]). Anything else returns `false`.
fn push_host(host: &str, out: &mut String) -> bool {
    if !is_plain_host(host) {
        return false;
    }
    out.extend(host.chars().map(|c| c.to_ascii_lowercase()));
    true
}

/// The test of [`push_host`], on a host in any case.
pub(super) fn is_plain_host(host: &str) -> bool {
    let bytes = host.as_bytes();
    if is_canonical_ipv4(bytes) {
        return true;
    }
    // One pass: `prev` is the byte before (a `.` at a label's start), `first` the
    // first byte of the current label.
    let mut prev = b'.';
    let mut first = b'.';
    for &b in bytes {
        match b {
            b'.' if !prev.is_ascii_alphanumeric() => return false,
            b'-' | b'_' if prev == b'.' || (b == b'-' && prev == b'-') => return false,
            b'.' | b'-' | b'_' => {}
            _ if b.is_ascii_alphanumeric() => {
                if prev == b'.' {
                    first = b;
                }
            }
            _ => return false,
        }
        prev = b;
    }
    prev.is_ascii_alphanumeric() && !first.is_ascii_digit()
}

/// Whether `host` is four dot-separated decimal numbers of at most 255, each `0` or
/// without a leading zero (a leading zero means octal to the WHATWG IPv4 parser):
/// exactly the form the parser serializes an IPv4 address to, so it stays as it is.
pub(super) fn is_canonical_ipv4(host: &[u8]) -> bool {
    let mut parts = 0;
    for part in host.split(|&b| b == b'.') {
        parts += 1;
        let value = match part {
            [b'0'] => 0,
            [b'1'..=b'9', rest @ ..] if rest.len() <= 2 && rest.iter().all(u8::is_ascii_digit) => {
                part.iter().fold(0u32, |n, &d| n * 10 + u32::from(d - b'0'))
            }
            _ => return false,
        };
        if value > 255 {
            return false;
        }
    }
    parts == 4
}

/// The WHATWG port state on ASCII digits: `Some(None)` for an empty port,
/// `Some(Some(n))` for `n <= 65535` (leading zeros allowed), `None` otherwise.
fn parse_port(port: &str) -> Option<Option<u16>> {
    if port.is_empty() {
        return Some(None);
    }
    if !port.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let significant = port.trim_start_matches('0');
    if significant.len() > 5 {
        return None;
    }
    if significant.is_empty() {
        return Some(Some(0));
    }
    significant.parse::<u16>().ok().map(Some)
}

/// Appends the path of `reference` (and its query) to `out`, whose bytes from
/// `floor` on are the path so far as `/segment` items, applying the WHATWG path
/// state: `.` and `..` segments (literal only: escapes go to the full parser) are
/// removed, a trailing one leaves an empty last segment, `..` never climbs above the
/// root. `absolute`: the reference starts with its own `/`; otherwise a `:` in its
/// first segment may be a scheme (`mailto:`, `http:g`, `C:`) and the full parser
/// decides. One pass: each byte is classified once and copied once.
fn path_and_query(reference: &str, absolute: bool, floor: usize, out: &mut String) -> bool {
    let bytes = reference.as_bytes();
    let mut start = usize::from(absolute);
    let mut first = !absolute;
    let i = loop {
        // One segment: a run of segment bytes, then `/`, `?` or the end.
        let rest = bytes.get(start..).unwrap_or_default();
        let i = start
            + rest
                .iter()
                .position(|&b| !is(SEGMENT, b))
                .unwrap_or(rest.len());
        let b = bytes.get(i).copied();
        if !matches!(b, Some(b'/' | b'?') | None) {
            return false;
        }
        let Some(segment) = reference.get(start..i) else {
            return false;
        };
        if first && memchr(b':', segment.as_bytes()).is_some() {
            return false;
        }
        let last = b != Some(b'/');
        match segment {
            ".." => {
                if out.len() > floor {
                    let cut = out
                        .get(floor..)
                        .and_then(|p| p.rfind('/'))
                        .map_or(floor, |at| floor + at);
                    out.truncate(cut);
                }
                if last {
                    out.push('/');
                }
            }
            "." => {
                if last {
                    out.push('/');
                }
            }
            _ => {
                out.push('/');
                out.push_str(segment);
            }
        }
        if last {
            break i;
        }
        first = false;
        start = i + 1;
    };
    if out.len() == floor {
        out.push('/');
    }
    if bytes.get(i) == Some(&b'?') {
        let query = bytes.get(i + 1..).unwrap_or_default();
        if !all_in(query, QUERY) {
            return false;
        }
        out.push('?');
        out.push_str(reference.get(i + 1..).unwrap_or(""));
    }
    true
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn slow(base: &Url, href: &str) -> Result<String, Reject> {
        canonicalize_with(base, href, &CanonOptions::default(), None).map(String::from)
    }

    fn fast(base: &Url, href: &str) -> Option<String> {
        let resolver = Resolver::new(base.clone(), CanonOptions::default(), None);
        let fb = resolver.fast?;
        let mut out = String::new();
        (splice(base.as_str(), &fb, href, &mut out) == Splice::Written).then_some(out)
    }

    fn other_scheme(base: &Url, href: &str) -> bool {
        let resolver = Resolver::new(base.clone(), CanonOptions::default(), None);
        let fb = resolver.fast.expect("fast base");
        splice(base.as_str(), &fb, href, &mut String::new()) == Splice::OtherScheme
    }

    const BASE: &str = "http://docs.example/api/index-files/index-19.html?q=1";

    /// References the fast path must take, with the canonical URL both paths give.
    const SPLICED: &[(&str, &str)] = &[
        ("", "http://docs.example/api/index-files/index-19.html?q=1"),
        (
            "#top",
            "http://docs.example/api/index-files/index-19.html?q=1",
        ),
        (
            "?x=1&y=2",
            "http://docs.example/api/index-files/index-19.html?x=1&y=2",
        ),
        ("?", "http://docs.example/api/index-files/index-19.html?"),
        ("a.html", "http://docs.example/api/index-files/a.html"),
        (
            "../java.base/java/util/List.html#add(E)",
            "http://docs.example/api/java.base/java/util/List.html",
        ),
        ("../../../../x", "http://docs.example/x"),
        ("./", "http://docs.example/api/index-files/"),
        (".", "http://docs.example/api/index-files/"),
        ("..", "http://docs.example/api/"),
        ("a/./b/../c/", "http://docs.example/api/index-files/a/c/"),
        ("a//b", "http://docs.example/api/index-files/a//b"),
        ("/", "http://docs.example/"),
        ("/a/b?c/d?e", "http://docs.example/a/b?c/d?e"),
        ("/..", "http://docs.example/"),
        ("  /a\u{0}", "http://docs.example/a"),
        ("//Other.Example", "http://other.example/"),
        ("//other.example:80/x", "http://other.example/x"),
        (
            "HTTPS://WWW.Example.COM:443/A?B",
            "https://www.example.com/A?B",
        ),
        ("http://h.example:0080", "http://h.example/"),
        ("http://h.example:08080/", "http://h.example:8080/"),
        ("https://h.example:80/", "https://h.example:80/"),
        ("http://h.example:/p", "http://h.example/p"),
        ("http://a_b.example/", "http://a_b.example/"),
        ("http://1.example/", "http://1.example/"),
        ("http://1.2.3.4/", "http://1.2.3.4/"),
        ("HTTP://127.0.0.49:80/a?b", "http://127.0.0.49/a?b"),
        ("//255.0.10.199", "http://255.0.10.199/"),
        (
            "p/q;x=1,2:3@4!$&'()*+~",
            "http://docs.example/api/index-files/p/q;x=1,2:3@4!$&'()*+~",
        ),
    ];

    /// References that need the full parser (and what it makes of them).
    const FALLBACK: &[(&str, &str)] = &[
        ("%7e", "http://docs.example/api/index-files/~"),
        ("a%2e%2e/b", "http://docs.example/api/index-files/a../b"),
        ("%2e%2e/b", "http://docs.example/api/b"),
        ("\\a", "http://docs.example/a"),
        ("a\tb", "http://docs.example/api/index-files/ab"),
        ("é", "http://docs.example/api/index-files/%C3%A9"),
        ("a^b", "http://docs.example/api/index-files/a%5Eb"),
        (
            "?a'b",
            "http://docs.example/api/index-files/index-19.html?a%27b",
        ),
        ("a b", "http://docs.example/api/index-files/a%20b"),
        ("///x.example/", "http://x.example/"),
        ("http:g", "http://docs.example/api/index-files/g"),
        ("http://01.2.3.4/", "http://1.2.3.4/"),
        ("http://1.2.3.04/", "http://1.2.3.4/"),
        ("http://1.2.3/", "http://1.2.0.3/"),
        ("http://1.2.3.4./", "http://1.2.3.4/"),
        ("http://1.2.3.256/", "invalid_url"),
        ("http://1.2.3.4.5/", "invalid_url"),
        ("http://0x7f.0.0.1/", "http://127.0.0.1/"),
        ("ftp://h.example/", "unsupported_scheme"),
        ("ws:x", "unsupported_scheme"),
        ("foo://[x/", "invalid_url"),
        ("foo:\t//[x/", "invalid_url"),
        ("http://h.0x7f/", "invalid_url"),
        ("http://example.com./", "http://example.com/"),
        (
            "http://xn--bcher-kva.example/",
            "http://xn--bcher-kva.example/",
        ),
        ("http://u@h.example/", "http://u@h.example/"),
        ("http://h.example:65536/", "invalid_url"),
        ("http://[::1]/", "http://[::1]/"),
        ("http://./", "invalid_url"),
    ];

    #[test]
    fn splices_the_common_shapes() {
        let base = Url::parse(BASE).expect("base");
        for (href, expected) in SPLICED {
            assert_eq!(
                fast(&base, href).as_deref(),
                Some(*expected),
                "fast {href:?}"
            );
            assert_eq!(slow(&base, href).as_deref(), Ok(*expected), "slow {href:?}");
        }
    }

    /// Absolute URLs in other schemes, rejected without a parse.
    const OTHER_SCHEME: &[&str] = &[
        "mailto:x@y",
        "javascript:void(0)",
        "JavaScript:",
        "tel:+1-555",
        "data:text/html,<p>",
        "a+b-c.d:x",
        "c:\\dir",
        "foo:#frag",
    ];

    #[test]
    fn rejects_other_schemes_without_a_parse() {
        let base = Url::parse(BASE).expect("base");
        for href in OTHER_SCHEME {
            assert!(other_scheme(&base, href), "{href:?}");
            assert_eq!(
                slow(&base, href),
                Err(Reject::UnsupportedScheme),
                "{href:?}"
            );
        }
    }

    #[test]
    fn leaves_the_rest_to_the_url_crate() {
        let base = Url::parse(BASE).expect("base");
        let resolver = Resolver::new(base.clone(), CanonOptions::default(), None);
        let mut scratch = String::new();
        for (href, expected) in FALLBACK {
            assert_eq!(fast(&base, href), None, "{href:?} must fall back");
            assert!(!other_scheme(&base, href), "{href:?} must fall back");
            let got = match resolver.resolve(href, &mut scratch) {
                Ok(r) => r.into_string(),
                Err(e) => e.code().to_owned(),
            };
            assert_eq!(&got, expected, "{href:?}");
        }
    }

    #[test]
    fn only_a_canonical_lossless_http_base_is_fast() {
        let fast_base = |s: &str, o: CanonOptions| {
            Resolver::new(Url::parse(s).expect("base"), o, None).is_fast()
        };
        let lossless = CanonOptions::default;
        assert!(fast_base("http://h.example/a/b", lossless()));
        assert!(fast_base("https://h.example:8443/", lossless()));
        assert!(
            !fast_base("http://h.example/%7e", lossless()),
            "not canonical"
        );
        assert!(!fast_base("http://h.example/#f", lossless()), "fragment");
        assert!(!fast_base("http://u:p@h.example/", lossless()), "userinfo");
        assert!(!fast_base("ftp://h.example/", lossless()), "scheme");
        assert!(!fast_base("javascript:void(0)", lossless()), "opaque");
        let lossy = CanonOptions {
            sort_query: true,
            ..CanonOptions::default()
        };
        assert!(!fast_base("http://h.example/", lossy), "lossy options");
    }

    proptest! {
        /// The shortcut of `FastBase::of` never calls a base canonical that is not.
        #[test]
        fn plainly_canonical_bases_are_canonical(base in any_base_url()) {
            if is_plainly_canonical(&base) {
                let canonical = canonicalize_absolute(base.as_str()).map(String::from);
                prop_assert_eq!(canonical.as_deref(), Ok(base.as_str()));
            }
        }
    }

    #[test]
    fn plain_bases_skip_the_parse() {
        let plain = |s: &str| is_plainly_canonical(&Url::parse(s).expect("base"));
        assert!(plain("http://127.0.0.49/science/a-b-1.html"));
        assert!(plain("https://h.example:8443/a/b?q=1&r=2"));
        assert!(!plain("http://h.example/%7e"), "escape");
        assert!(!plain("http://h.example./"), "trailing dot");
        assert!(!plain("http://xn--bcher-kva.example/"), "IDN");
        assert!(!plain("http://[::1]/"), "IPv6");
    }

    /// The WHATWG URL test inputs (`urltestdata.json`, shipped in the `url` crate's
    /// source, found in the cargo registry; skipped where it is not), each resolved
    /// against its own `http(s)` base and three canonical ones: the resolver answers
    /// exactly as `canonicalize_with`, and the splice takes a fair share of them.
    #[test]
    fn whatwg_inputs_resolve_as_the_url_crate() {
        let home = std::env::var("CARGO_HOME")
            .unwrap_or_else(|_| format!("{}/.cargo", std::env::var("HOME").unwrap_or_default()));
        let data = std::fs::read_dir(format!("{home}/registry/src"))
            .into_iter()
            .flatten()
            .flatten()
            .flat_map(|index| {
                std::fs::read_dir(index.path())
                    .into_iter()
                    .flatten()
                    .flatten()
            })
            .filter(|krate| krate.file_name().to_string_lossy().starts_with("url-2."))
            .find_map(|krate| {
                std::fs::read_to_string(krate.path().join("tests/urltestdata.json")).ok()
            });
        let Some(data) = data else {
            eprintln!("urltestdata.json not found in the cargo registry: skipped");
            return;
        };
        let cases: Vec<serde_json::Value> = serde_json::from_str(&data).expect("json");
        let fixed = [
            "http://127.0.0.49/science/a-b-1.html",
            "https://h.example:8443/d/e/?q=1",
            "http://docs.example/api/index-files/index-19.html?q=1",
        ];
        let (mut checked, mut spliced) = (0, 0);
        for case in cases.iter().filter_map(|c| c.as_object()) {
            let Some(input) = case.get("input").and_then(|v| v.as_str()) else {
                continue;
            };
            let own = case.get("base").and_then(|v| v.as_str());
            for base in own.into_iter().chain(fixed) {
                let Ok(base) = Url::parse(base) else { continue };
                for encoding in [None, Some(encoding_rs::WINDOWS_1252)] {
                    let reference =
                        canonicalize_with(&base, input, &CanonOptions::default(), encoding)
                            .map(String::from);
                    let resolver = Resolver::new(base.clone(), CanonOptions::default(), encoding);
                    let mut scratch = String::new();
                    let got = resolver.resolve(input, &mut scratch);
                    spliced += usize::from(matches!(got, Ok(Resolved::Spliced(_))));
                    assert_eq!(
                        got.map(Resolved::into_string),
                        reference,
                        "base {base} input {input:?}"
                    );
                    checked += 1;
                }
            }
        }
        eprintln!("urltestdata: {checked} resolutions, {spliced} spliced");
        assert!(checked > 4000, "only {checked} cases");
        assert!(
            spliced * 10 > checked,
            "only {spliced} of {checked} spliced"
        );
    }

    /// Parsed bases, canonical or not.
    fn any_base_url() -> impl Strategy<Value = Url> {
        let scheme = prop::sample::select(vec!["http://", "https://", "HTTP://"]);
        let host = prop::sample::select(vec![
            "h.example",
            "H.Example",
            "a_b.example",
            "1.2.3.4",
            "127.0.0.49",
            "01.2.3.4",
            "[::1]",
            "example.com.",
            "x",
            "xn--bcher-kva.example",
            "...",
        ]);
        let port = prop::sample::select(vec!["", ":80", ":443", ":8080", ":"]);
        let path = prop::collection::vec(
            prop::sample::select(vec![
                "/", "a", "B", "..", ".", "%7e", "%2F", "%2e", "é", ";p=1", "//", "^", "'",
            ]),
            0..6,
        );
        let query = prop::sample::select(vec!["", "?", "?q=1", "?a'b", "?%41", "?^"]);
        (scheme, host, port, path, query).prop_filter_map("parses", |(s, h, p, path, q)| {
            Url::parse(&format!("{s}{h}{p}/{}{q}", path.concat())).ok()
        })
    }

    /// Canonical bases: the parsed ones above, canonicalized.
    fn base_url() -> impl Strategy<Value = Url> {
        any_base_url().prop_filter_map("canonical base", |url| {
            canonicalize_absolute(url.as_str()).ok()
        })
    }

    fn nasty_reference() -> impl Strategy<Value = String> {
        let atoms = prop::sample::select(vec![
            "a",
            "B",
            "z9",
            "/",
            "//",
            "///",
            "\\",
            ".",
            "..",
            "./",
            "../",
            "...",
            "%",
            "%2e",
            "%2E",
            "%41",
            "%7e",
            "%zz",
            "?",
            "#",
            "&",
            "=",
            ":",
            "@",
            "'",
            "^",
            "|",
            "[",
            "]",
            "`",
            "{",
            "}",
            " ",
            "\t",
            "\n",
            "\r",
            "\u{0}",
            "\u{7f}",
            "é",
            "€",
            "http:",
            "https:",
            "HTTP:",
            "HTTPS:",
            "http://",
            "https://",
            "ex.com",
            "EXAMPLE.COM",
            "a_b",
            "-a",
            "a-",
            "xn--",
            "a--b",
            "1.2.3.4",
            "127.0.0.49",
            "255.",
            "256",
            "01.",
            "0.",
            "0x7f",
            "tel:",
            "foo:",
            "a+b.c-d:",
            "ws:",
            "FILE:",
            "9",
            ":80",
            ":443",
            ":8080",
            ":0",
            ":65536",
            ":00080",
            "~",
            "!",
            "$",
            "(",
            ")",
            "*",
            "+",
            ",",
            ";",
            "mailto:",
            "javascript:",
            "C:",
            "\"",
            "<",
            ">",
            ".",
        ]);
        prop::collection::vec(atoms, 0..10).prop_map(|v| v.concat())
    }

    /// The property below is only as good as the share of generated cases the fast
    /// path accepts (a generator that never reached it would prove nothing).
    #[test]
    fn generator_reaches_the_fast_path() {
        use proptest::strategy::ValueTree;
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let strategy = (base_url(), nasty_reference());
        let cases = 5_000;
        let mut spliced = 0;
        for _ in 0..cases {
            let Ok(tree) = strategy.new_tree(&mut runner) else {
                continue;
            };
            let (base, href) = tree.current();
            spliced += usize::from(fast(&base, &href).is_some());
        }
        assert!(
            spliced * 10 >= cases,
            "only {spliced} of {cases} cases spliced"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 20_000, .. ProptestConfig::default() })]

        /// The fast path gives byte-identical keys to the `url` crate's path, and the
        /// resolver as a whole answers exactly as `canonicalize_with` does.
        #[test]
        fn splice_equals_canonicalize(
            base in base_url(),
            href in nasty_reference(),
            legacy in any::<bool>(),
        ) {
            let encoding = legacy.then_some(encoding_rs::WINDOWS_1252);
            let reference = canonicalize_with(&base, &href, &CanonOptions::default(), encoding)
                .map(String::from);
            if let Some(spliced) = fast(&base, &href) {
                prop_assert_eq!(Ok(&spliced), reference.as_ref(), "base {} href {:?}", base, href);
            }
            let resolver = Resolver::new(base.clone(), CanonOptions::default(), encoding);
            let mut scratch = String::new();
            let got = resolver.resolve(&href, &mut scratch).map(Resolved::into_string);
            prop_assert_eq!(got, reference, "base {} href {:?}", base, href);
        }
    }
}
