//! The crawl key: one canonical form per resource URL, so that `:80`, `%7e`, `#top`
//! and `EXAMPLE.com.` do not make the crawler fetch one page under many names.
//!
//! Parsing and resolution are the `url` crate's (WHATWG URL Standard); the rules on top
//! are in [`canonicalize_with`], in the order `docs/urls.md` lists them. The function is
//! idempotent: `canon(canon(x)) == canon(x)` (a property test checks it).

#![deny(clippy::indexing_slicing)]

use std::borrow::Cow;

use encoding_rs::{Encoding, UTF_8};
use url::{Host, Position, Url};

use crate::ascii::{hex_value, percent_escape};

use super::Reject;

/// Lossy rewrites, all off by default: each one can merge URLs that a server treats
/// as different resources, so a crawl opts in knowingly.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CanonOptions {
    /// Remove well-known session-id query parameters (`jsessionid`, `phpsessid`,
    /// `sid`, `sessionid`, `session_id`, `aspsessionid*`, `cfid`, `cftoken`) and the
    /// `;jsessionid=...` path parameter. If the query ends up empty, the `?` goes too.
    pub strip_session_ids: bool,
    /// Sort the `&`-separated query parameters (`name=value` pairs) by their bytes.
    pub sort_query: bool,
}

/// Query parameter names removed by [`CanonOptions::strip_session_ids`], compared
/// ASCII case-insensitively. `aspsessionid` is a prefix (IIS appends 8 letters).
const SESSION_ID_PARAMS: &[&str] = &[
    "jsessionid",
    "phpsessid",
    "sid",
    "sessionid",
    "session_id",
    "cfid",
    "cftoken",
];

/// Canonicalizes `href` found in a document whose base URL is `base`, with the
/// default (lossless) options and a UTF-8 document.
///
/// # Errors
/// [`Reject::InvalidUrl`] when the WHATWG parser fails, [`Reject::UnsupportedScheme`]
/// when the result is not `http`/`https`.
pub fn canonicalize(base: &Url, href: &str) -> Result<Url, Reject> {
    canonicalize_with(base, href, &CanonOptions::default(), None)
}

/// Canonicalizes an absolute URL (a seed, a redirect target).
///
/// # Errors
/// As [`canonicalize`].
pub fn canonicalize_absolute(url: &str) -> Result<Url, Reject> {
    let parsed = Url::parse(&fix_reference(url, false)).map_err(Reject::InvalidUrl)?;
    finish(parsed, &CanonOptions::default())
}

/// Canonicalizes `href` against `base`.
///
/// `encoding` is the document's character encoding: the WHATWG URL parser encodes the
/// *query* of a URL found in a legacy-encoded page (windows-1252, Shift_JIS ...) in that
/// encoding, and everything else in UTF-8. `None` means UTF-8.
///
/// The rules, in order (see `docs/urls.md`):
/// 1. resolve by the WHATWG algorithm, fixing the `url` crate's deviations (three or
///    more leading slashes in a scheme-less reference; `^` left raw in paths);
/// 2. keep `http` and `https` only;
/// 3. drop the fragment;
/// 4. (the parser lower-cases the host, drops default ports, makes an empty path `/`)
///    strip trailing dots of a domain unless that would make it an IPv4 address;
/// 5. in userinfo, path and query decode escapes of unreserved characters and
///    upper-case the hex digits of all others;
/// 6. apply the lossy [`CanonOptions`] the caller enabled (none by default).
///
/// # Errors
/// As [`canonicalize`].
pub fn canonicalize_with(
    base: &Url,
    href: &str,
    options: &CanonOptions,
    encoding: Option<&'static Encoding>,
) -> Result<Url, Reject> {
    finish(parse_reference(base, href, encoding)?, options)
}

/// The base URL a `<base href>` gives a document: the HTML Standard's "frozen base
/// URL" is the value parsed against the page URL (`None` when that fails: the page
/// URL stays the base). An `http(s)` result is canonicalized (the splice of
/// [`crate::url::Resolver`] needs a canonical base; resolution against it gives the
/// same canonical links); any other result is kept as parsed, so that a
/// `javascript:` or `mailto:` base (no hierarchical path) makes relative links fail
/// and an `ftp:` base makes them `ftp:` links, both rejected, as in a browser, instead
/// of being resolved against the page URL.
pub fn document_base(
    page_url: &Url,
    href: &str,
    encoding: Option<&'static Encoding>,
) -> Option<Url> {
    let parsed = parse_reference(page_url, href, encoding).ok()?;
    if matches!(parsed.scheme(), "http" | "https") {
        if let Ok(canonical) = finish(parsed.clone(), &CanonOptions::default()) {
            return Some(canonical);
        }
    }
    Some(parsed)
}

/// Rule 1: the WHATWG parse of `href` against `base`, with the crate's deviations
/// fixed and the query in the document's encoding.
fn parse_reference(
    base: &Url,
    href: &str,
    encoding: Option<&'static Encoding>,
) -> Result<Url, Reject> {
    let special_base = matches!(base.scheme(), "http" | "https");
    let href = fix_reference(href, special_base);
    let encoding = encoding
        .map(Encoding::output_encoding)
        .filter(|e| *e != UTF_8);
    let parsed = match encoding {
        None => Url::options().base_url(Some(base)).parse(&href),
        Some(enc) => {
            let encode: &dyn Fn(&str) -> Cow<'_, [u8]> = &move |query| encode_query(query, enc);
            Url::options()
                .base_url(Some(base))
                .encoding_override(Some(encode))
                .parse(&href)
        }
    };
    parsed.map_err(Reject::InvalidUrl)
}

/// Rules 2-6 on a parsed URL.
fn finish(mut url: Url, options: &CanonOptions) -> Result<Url, Reject> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Reject::UnsupportedScheme);
    }
    url.set_fragment(None);
    if is_dots_only(&url) {
        return Err(Reject::InvalidUrl(url::ParseError::EmptyHost));
    }
    strip_trailing_dots(&mut url);
    let lossy = options.strip_session_ids || options.sort_query;
    let tail = &url[Position::BeforePath..];
    let needs_rewrite = lossy
        || memchr::memchr2(b'%', b'^', tail.as_bytes()).is_some()
        || !url.username().is_empty()
        || url.password().is_some();
    if !needs_rewrite {
        return Ok(url);
    }
    if url.username().is_empty() && url.password().is_none() {
        return rewrite_in_place(url, options, lossy);
    }
    let mut out = String::with_capacity(url.as_str().len() + 8);
    out.push_str(&url[..Position::BeforeUsername]);
    if !url.username().is_empty() || url.password().is_some() {
        normalize_percent_encoding_into(url.username(), false, &mut out);
        if let Some(password) = url.password() {
            out.push(':');
            normalize_percent_encoding_into(password, false, &mut out);
        }
        out.push('@');
    }
    out.push_str(&url[Position::BeforeHost..Position::AfterPort]);
    // Normalize escapes first, so that the lossy options see `sid` in `%73id` and sort
    // the normalized parameters.
    let mut path = String::with_capacity(url.path().len());
    normalize_percent_encoding_into(url.path(), true, &mut path);
    if options.strip_session_ids {
        out.push_str(&strip_path_session_id(&path));
    } else {
        out.push_str(&path);
    }
    if let Some(query) = url.query() {
        let mut normalized = String::with_capacity(query.len());
        normalize_percent_encoding_into(query, false, &mut normalized);
        let query = if lossy {
            rewrite_query(&normalized, options)
        } else {
            Some(Cow::Borrowed(normalized.as_str()))
        };
        if let Some(query) = query {
            out.push('?');
            out.push_str(&query);
        }
    }
    Url::parse(&out).map_err(Reject::InvalidUrl)
}

/// Rule 5-6 without userinfo: only the components that change are set again (each
/// setter re-parses one component, cheaper than parsing the whole URL).
fn rewrite_in_place(mut url: Url, options: &CanonOptions, lossy: bool) -> Result<Url, Reject> {
    let mut path = String::with_capacity(url.path().len());
    normalize_percent_encoding_into(url.path(), true, &mut path);
    let path = if options.strip_session_ids {
        strip_path_session_id(&path).into_owned()
    } else {
        path
    };
    if path != url.path() {
        url.set_path(&path);
    }
    if let Some(query) = url.query() {
        let mut normalized = String::with_capacity(query.len());
        normalize_percent_encoding_into(query, false, &mut normalized);
        let rewritten = if lossy {
            rewrite_query(&normalized, options).map(Cow::into_owned)
        } else {
            Some(normalized)
        };
        match rewritten {
            None => url.set_query(None),
            Some(q) if q != query => url.set_query(Some(&q)),
            Some(_) => {}
        }
    }
    Ok(url)
}

/// Strips leading and trailing C0 controls and spaces and removes tabs and newlines
/// as the URL parser would, then fixes the `url` crate's one resolution deviation we
/// know of: in a scheme-less reference against a special base, WHATWG's "special
/// authority ignore slashes" state skips any number of `/` and `\` (so `///host/p`
/// means `//host/p`), while the crate reports an empty host.
fn fix_reference(href: &str, special_base: bool) -> Cow<'_, str> {
    let trimmed = href.trim_matches(|c: char| c <= ' ');
    let needs_strip = trimmed.bytes().any(|b| matches!(b, b'\t' | b'\n' | b'\r'));
    let cleaned: Cow<'_, str> = if needs_strip {
        Cow::Owned(
            trimmed
                .chars()
                .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
                .collect(),
        )
    } else {
        Cow::Borrowed(trimmed)
    };
    if !special_base {
        return cleaned;
    }
    let slashes = cleaned
        .bytes()
        .take_while(|b| matches!(b, b'/' | b'\\'))
        .count();
    if slashes < 3 {
        return cleaned;
    }
    let rest = cleaned.get(slashes..).unwrap_or("");
    Cow::Owned(format!("//{rest}"))
}

/// The WHATWG "percent-encode after encoding" for a query in a legacy encoding: bytes
/// the encoding cannot represent become `%26%23NNN%3B` (`&#NNN;` percent-encoded), as
/// the standard says; encoding_rs would give a raw `&#NNN;` instead.
fn encode_query<'q>(query: &'q str, encoding: &'static Encoding) -> Cow<'q, [u8]> {
    let mut encoder = encoding.new_encoder();
    let mut out: Vec<u8> = Vec::with_capacity(query.len() + 16);
    let mut rest = query;
    loop {
        let needed = encoder
            .max_buffer_length_from_utf8_without_replacement(rest.len())
            .unwrap_or(rest.len() * 4 + 16);
        let start = out.len();
        out.resize(start + needed, 0);
        let (result, read, written) = encoder.encode_from_utf8_without_replacement(
            rest,
            out.get_mut(start..).unwrap_or_default(),
            true,
        );
        out.truncate(start + written);
        rest = rest.get(read..).unwrap_or("");
        match result {
            encoding_rs::EncoderResult::InputEmpty => break,
            encoding_rs::EncoderResult::OutputFull => continue,
            encoding_rs::EncoderResult::Unmappable(c) => {
                out.extend_from_slice(format!("%26%23{}%3B", u32::from(c)).as_bytes());
            }
        }
    }
    Cow::Owned(out)
}

/// Rule 4: `example.com.` becomes `example.com`, but `1.2.3.4..` stays (stripping
/// would make it the IPv4 address 1.2.3.4, a different host).
fn strip_trailing_dots(url: &mut Url) {
    let stripped = match url.host() {
        Some(Host::Domain(domain)) if domain.ends_with('.') => {
            let stripped = domain.trim_end_matches('.');
            if stripped.is_empty() || ends_in_number(stripped) {
                return;
            }
            stripped.to_owned()
        }
        _ => return,
    };
    let before = url.clone();
    if url.set_host(Some(&stripped)).is_err() || !matches!(url.host(), Some(Host::Domain(_))) {
        *url = before;
    }
}

/// A host of dots only (`http://./`, `http://.../`, also `%2e` and U+3002 spelled):
/// the WHATWG host parser accepts it as the domain `.` (no label is empty-checked, as
/// `VerifyDnsLength` is off, and "ends in a number" is false), but after rule 4 there
/// is no name left to resolve, so the link is rejected as having an empty host
/// instead of being crawled as a name no resolver can answer.
fn is_dots_only(url: &Url) -> bool {
    matches!(url.host(), Some(Host::Domain(d)) if d.bytes().all(|b| b == b'.'))
}

/// WHATWG "ends in a number checker": would the host parser treat this as IPv4?
fn ends_in_number(host: &str) -> bool {
    let host = host.strip_suffix('.').unwrap_or(host);
    let last = host.rsplit('.').next().unwrap_or("");
    if !last.is_empty() && last.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    match last.strip_prefix("0x").or_else(|| last.strip_prefix("0X")) {
        Some(hex) => hex.bytes().all(|b| b.is_ascii_hexdigit()),
        None => false,
    }
}

/// `true` for RFC 3986 unreserved characters: `A-Z a-z 0-9 - . _ ~`.
fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn push_escape(b: u8, out: &mut String) {
    out.extend(percent_escape(b).map(char::from));
}

/// Normalizes the percent-encoding of a path or query string (RFC 3986 §6.2.2):
/// `%XX` escapes of unreserved characters are decoded, the hex digits of every other
/// escape are upper-cased, a `%` not followed by two hex digits is left alone, and raw
/// non-ASCII characters are percent-encoded as UTF-8. Reserved escapes (`%2F`, `%3F`
/// ...) are never decoded, so the result means the same to every server. Borrowed
/// when nothing changes. Reused by the robots.txt matcher to compare paths.
pub fn normalize_percent_encoding(input: &str) -> Cow<'_, str> {
    let bytes = input.as_bytes();
    let clean = !bytes.iter().any(|b| *b == b'%' || !b.is_ascii());
    if clean {
        return Cow::Borrowed(input);
    }
    let mut out = String::with_capacity(input.len() + 8);
    normalize_percent_encoding_into(input, false, &mut out);
    if out == input {
        Cow::Borrowed(input)
    } else {
        Cow::Owned(out)
    }
}

/// [`normalize_percent_encoding`] appending to `out`; with `path`, a raw `^` is also
/// encoded, which the WHATWG path percent-encode set requires and the `url` crate
/// omits.
fn normalize_percent_encoding_into(input: &str, path: bool, out: &mut String) {
    let bytes = input.as_bytes();
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        let b = bytes.get(i).copied().unwrap_or(0);
        if b == b'%' {
            let hi = bytes.get(i + 1).copied().and_then(hex_value);
            let lo = bytes.get(i + 2).copied().and_then(hex_value);
            if let (Some(hi), Some(lo)) = (hi, lo) {
                out.push_str(input.get(copied..i).unwrap_or(""));
                let value = hi << 4 | lo;
                if is_unreserved(value) && !completes_escape(out, value) {
                    out.push(char::from(value));
                } else {
                    push_escape(value, out);
                }
                i += 3;
                copied = i;
                continue;
            }
            i += 1;
        } else if (path && b == b'^') || !b.is_ascii() {
            out.push_str(input.get(copied..i).unwrap_or(""));
            push_escape(b, out);
            i += 1;
            copied = i;
        } else {
            i += 1;
        }
    }
    out.push_str(input.get(copied..).unwrap_or(""));
}

/// Would appending the decoded `value` complete a new escape with a literal `%` just
/// written (`%6%65` must not become `%6e`)? Emitted escapes are always complete, so a
/// trailing `%` or `%` + one hex digit is a literal percent sign.
fn completes_escape(out: &str, value: u8) -> bool {
    if !value.is_ascii_hexdigit() {
        return false;
    }
    let tail = out.as_bytes();
    match tail {
        [.., b'%'] => true,
        [.., b'%', h] => h.is_ascii_hexdigit(),
        _ => false,
    }
}

fn is_session_param(name: &str) -> bool {
    SESSION_ID_PARAMS
        .iter()
        .any(|p| name.eq_ignore_ascii_case(p))
        || name
            .get(..12)
            .is_some_and(|p| p.eq_ignore_ascii_case("aspsessionid"))
}

/// Removes every `;jsessionid=...` parameter from the path (each up to the next `/`
/// or `;`).
fn strip_path_session_id(path: &str) -> Cow<'_, str> {
    const NEEDLE: &str = ";jsessionid=";
    let lower = path.to_ascii_lowercase();
    if !lower.contains(NEEDLE) {
        return Cow::Borrowed(path);
    }
    let mut out = String::with_capacity(path.len());
    let mut pos = 0;
    while let Some(found) = lower.get(pos..).and_then(|s| s.find(NEEDLE)) {
        let start = pos + found;
        let after = start + NEEDLE.len();
        let end = lower
            .get(after..)
            .and_then(|s| s.find(['/', ';']))
            .map_or(path.len(), |n| after + n);
        out.push_str(path.get(pos..start).unwrap_or(""));
        pos = end;
    }
    out.push_str(path.get(pos..).unwrap_or(""));
    Cow::Owned(out)
}

/// Applies the lossy query options; `None` means the query became empty by stripping
/// and the `?` is dropped.
fn rewrite_query<'q>(query: &'q str, options: &CanonOptions) -> Option<Cow<'q, str>> {
    let mut params: Vec<&str> = query.split('&').collect();
    if options.strip_session_ids {
        let before = params.len();
        params.retain(|p| !is_session_param(p.split('=').next().unwrap_or("")));
        if params.len() != before && params.iter().all(|p| p.is_empty()) {
            return None;
        }
    }
    if options.sort_query {
        // Equal parameters are identical strings, so an unstable sort is stable here.
        params.sort_unstable();
    }
    Some(Cow::Owned(params.join("&")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn canon(base: &str, href: &str) -> Result<String, Reject> {
        let base = Url::parse(base).expect("test base parses");
        canonicalize(&base, href).map(String::from)
    }

    const BASE: &str = "http://base.example/dir/file?q#f";

    /// (base, href, expected canonical URL or reason code)
    const TABLE: &[(&str, &str, &str)] = &[
        // Rule 1: WHATWG resolution (URL Standard tests, RFC 3986 §5.4 examples).
        ("http://a/b/c/d;p?q", "g", "http://a/b/c/g"),
        ("http://a/b/c/d;p?q", "./g", "http://a/b/c/g"),
        ("http://a/b/c/d;p?q", "g/", "http://a/b/c/g/"),
        ("http://a/b/c/d;p?q", "/g", "http://a/g"),
        ("http://a/b/c/d;p?q", "//g", "http://g/"),
        ("http://a/b/c/d;p?q", "?y", "http://a/b/c/d;p?y"),
        ("http://a/b/c/d;p?q", "g?y", "http://a/b/c/g?y"),
        ("http://a/b/c/d;p?q", "#s", "http://a/b/c/d;p?q"),
        ("http://a/b/c/d;p?q", "g;x?y#s", "http://a/b/c/g;x?y"),
        ("http://a/b/c/d;p?q", "", "http://a/b/c/d;p?q"),
        ("http://a/b/c/d;p?q", ".", "http://a/b/c/"),
        ("http://a/b/c/d;p?q", "..", "http://a/b/"),
        ("http://a/b/c/d;p?q", "../..", "http://a/"),
        ("http://a/b/c/d;p?q", "../../../g", "http://a/g"),
        ("http://a/b/c/d;p?q", "/./g", "http://a/g"),
        ("http://a/b/c/d;p?q", "/../g", "http://a/g"),
        ("http://a/b/c/d;p?q", "g.", "http://a/b/c/g."),
        ("http://a/b/c/d;p?q", "..g", "http://a/b/c/..g"),
        ("http://a/b/c/d;p?q", "./g/.", "http://a/b/c/g/"),
        ("http://a/b/c/d;p?q", "g/../h", "http://a/b/c/h"),
        ("http://a/b/c/d;p?q", "http:g", "http://a/b/c/g"),
        ("http://a/b/c/d;p?q", "%2e%2E/g", "http://a/b/g"),
        ("http://a/b/c/d;p?q", "\\g\\h", "http://a/g/h"),
        // Rule 1: the url crate's deviations, fixed to match the standard.
        (BASE, "///x.org/p", "http://x.org/p"),
        (BASE, "////x.org/p", "http://x.org/p"),
        (BASE, "/\\/x.org/p", "http://x.org/p"),
        (BASE, "\\\\\\x.org/p", "http://x.org/p"),
        (BASE, " \t///x.org/p ", "http://x.org/p"),
        (BASE, "https:///x.org/p", "https://x.org/p"),
        (BASE, "/a^b?c^d", "http://base.example/a%5Eb?c^d"),
        // Rule 1: tabs and newlines removed, C0/space trimmed; failures drop the link.
        (BASE, "  /a\n/b\t/c\r  ", "http://base.example/a/b/c"),
        (BASE, "http://", "invalid_url"),
        (BASE, "http://exa mple.com/", "invalid_url"),
        (BASE, "http://[::1/", "invalid_url"),
        (BASE, "http://example.com:99999/", "invalid_url"),
        // Rule 2: http and https only.
        (BASE, "mailto:a@b.c", "unsupported_scheme"),
        (BASE, "javascript:void(0)", "unsupported_scheme"),
        (BASE, "ftp://ftp.example/x", "unsupported_scheme"),
        (BASE, "data:text/html,x", "unsupported_scheme"),
        (BASE, "HTTPS://Example.COM/A", "https://example.com/A"),
        // Rule 3: fragment removed.
        (BASE, "#top", "http://base.example/dir/file?q"),
        (BASE, "/x#a#b", "http://base.example/x"),
        // Rule 4: host case, default ports, empty path, trailing dots.
        (BASE, "http://EXAMPLE.com:80", "http://example.com/"),
        (BASE, "https://example.com:443/", "https://example.com/"),
        (BASE, "http://example.com:8080", "http://example.com:8080/"),
        (BASE, "https://example.com:80/", "https://example.com:80/"),
        (BASE, "http://example.com./a", "http://example.com/a"),
        (BASE, "http://example.com...:80/", "http://example.com/"),
        (BASE, "http://1.2.3.4./", "http://1.2.3.4/"),
        (BASE, "http://1.2.3.4../", "http://1.2.3.4../"),
        (BASE, "http://a.0x1f../", "http://a.0x1f../"),
        (BASE, "http://./", "invalid_url"),
        (BASE, "http://.../x", "invalid_url"),
        (BASE, "http://%2e%2E/", "invalid_url"),
        (BASE, "http://\u{3002}/", "invalid_url"),
        (BASE, "https://..:443/", "invalid_url"),
        (BASE, "//./", "invalid_url"),
        (BASE, "http://.a./", "http://.a/"),
        (BASE, "http://0x7f.1/", "http://127.0.0.1/"),
        (BASE, "http://[::1]:80/", "http://[::1]/"),
        (
            BASE,
            "http://bücher.example/",
            "http://xn--bcher-kva.example/",
        ),
        // Rule 5: unreserved decoded, other escapes upper-cased, reserved kept.
        (BASE, "/%7euser/%7Ea", "http://base.example/~user/~a"),
        (BASE, "/%41%62%2D%2e%5F%7E", "http://base.example/Ab-._~"),
        (BASE, "/a%2fb%2Fc", "http://base.example/a%2Fb%2Fc"),
        (BASE, "/a%3f?b%3d%26c", "http://base.example/a%3F?b%3D%26c"),
        (BASE, "/%25%34%31", "http://base.example/%2541"),
        (BASE, "/%zz%4", "http://base.example/%zz%4"),
        (BASE, "/us%6%655jh", "http://base.example/us%6%655jh"),
        (BASE, "/%%34%31", "http://base.example/%%341"),
        (BASE, "/%%7e", "http://base.example/%~"),
        (BASE, "/é?é", "http://base.example/%C3%A9?%C3%A9"),
        (BASE, "/%c3%a9", "http://base.example/%C3%A9"),
        (BASE, "http://us%65r:p%3aw@h/", "http://user:p%3Aw@h/"),
        (BASE, "/a b?c d'e", "http://base.example/a%20b?c%20d%27e"),
        // Rule 6: nothing lossy by default.
        (BASE, "/b?z=1&a=2", "http://base.example/b?z=1&a=2"),
        (BASE, "http://www.example.com/", "http://www.example.com/"),
        (BASE, "/a?", "http://base.example/a?"),
        (BASE, "/a//b", "http://base.example/a//b"),
        (BASE, "/A/B", "http://base.example/A/B"),
        (
            BASE,
            "/x;jsessionid=1?sid=2",
            "http://base.example/x;jsessionid=1?sid=2",
        ),
    ];

    #[test]
    fn table() {
        for (base, href, expected) in TABLE {
            let got = match canon(base, href) {
                Ok(url) => url,
                Err(reject) => reject.code().to_owned(),
            };
            assert_eq!(&got, expected, "base {base:?} href {href:?}");
            if let Ok(url) = canon(base, href) {
                assert_eq!(canon(base, &url), Ok(url.clone()), "idempotent {url}");
            }
        }
    }

    #[test]
    fn legacy_encoding_query() {
        let base = Url::parse("http://h/").expect("base");
        let enc = Some(encoding_rs::WINDOWS_1252);
        let opts = CanonOptions::default();
        let url = canonicalize_with(&base, "/caf\u{e9}?q=caf\u{e9}", &opts, enc).expect("ok");
        assert_eq!(url.as_str(), "http://h/caf%C3%A9?q=caf%E9");
        // Unmappable characters become an escaped numeric character reference.
        let url = canonicalize_with(&base, "/?q=\u{3042}", &opts, enc).expect("ok");
        assert_eq!(url.as_str(), "http://h/?q=%26%2312354%3B");
        // UTF-16 pages encode URLs as UTF-8 (the encoding's output encoding).
        let url =
            canonicalize_with(&base, "/?q=\u{e9}", &opts, Some(encoding_rs::UTF_16LE)).expect("ok");
        assert_eq!(url.as_str(), "http://h/?q=%C3%A9");
        let url = canonicalize_with(&base, "/?q=\u{3042}", &opts, Some(encoding_rs::SHIFT_JIS))
            .expect("ok");
        assert_eq!(url.as_str(), "http://h/?q=%82%A0");
    }

    #[test]
    fn lossy_options() {
        let base = Url::parse("http://h/").expect("base");
        let strip = CanonOptions {
            strip_session_ids: true,
            sort_query: false,
        };
        let sort = CanonOptions {
            strip_session_ids: false,
            sort_query: true,
        };
        let c = |href: &str, o: &CanonOptions| {
            canonicalize_with(&base, href, o, None)
                .map(String::from)
                .expect("ok")
        };
        assert_eq!(
            c("/a;jsessionid=AB12/b?x=1&PHPSESSID=9&y=2", &strip),
            "http://h/a/b?x=1&y=2"
        );
        assert_eq!(c("/a?sid=1&ASPSESSIONIDQQ=2", &strip), "http://h/a");
        assert_eq!(c("/a?jsessionid", &strip), "http://h/a");
        assert_eq!(c("/a?", &strip), "http://h/a?");
        assert_eq!(c("/a?side=1", &strip), "http://h/a?side=1");
        assert_eq!(c("/a?b=2&a=1&a=0", &sort), "http://h/a?a=0&a=1&b=2");
    }

    #[test]
    fn normalize_percent_encoding_table() {
        for (input, expected) in [
            ("/plain", "/plain"),
            ("/%7e%7E%2f%2F%3a", "/~~%2F%2F%3A"),
            ("/%e2%82%ac", "/%E2%82%AC"),
            ("/\u{20ac}", "/%E2%82%AC"),
            ("/100%", "/100%"),
            ("/%g1", "/%g1"),
            ("/%25", "/%25"),
        ] {
            assert_eq!(normalize_percent_encoding(input), expected, "{input}");
        }
        assert!(matches!(
            normalize_percent_encoding("/%2F"),
            Cow::Borrowed(_)
        ));
    }

    fn url_piece() -> impl Strategy<Value = String> {
        let atoms = prop::sample::select(vec![
            "a",
            "B",
            "/",
            "//",
            "///",
            "\\",
            ".",
            "..",
            "%",
            "%2e",
            "%2F",
            "%7e",
            "%41",
            "%c3%a9",
            "%zz",
            "%6",
            "%%",
            "%65",
            "%3",
            "?",
            "&",
            "=",
            "#",
            ":",
            "@",
            "^",
            "`",
            "{",
            "|",
            " ",
            "\t",
            "é",
            "ü",
            "€",
            "http:",
            "https:",
            "HTTP://",
            "EXAMPLE.com",
            "1.2.3.4",
            "0x7f",
            "[::1]",
            ":80",
            ":443",
            "..",
            ";jsessionid=1",
            "sid=",
            "xn--",
            "\u{0}",
            "'",
            "\"",
            "<",
            "~",
        ]);
        prop::collection::vec(atoms, 0..12).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]
        #[test]
        fn canon_is_idempotent(href in url_piece(), lossy in any::<(bool, bool)>()) {
            let base = Url::parse("http://base.example/d/f?q").expect("base");
            let opts = CanonOptions { strip_session_ids: lossy.0, sort_query: lossy.1 };
            if let Ok(once) = canonicalize_with(&base, &href, &opts, None) {
                let twice = canonicalize_with(&base, once.as_str(), &opts, None);
                prop_assert_eq!(Ok(once.clone()), twice.clone());
                // Also idempotent when the canonical URL is resolved against another base.
                let other = Url::parse("https://other.example/").expect("base");
                prop_assert_eq!(Ok(once), canonicalize_with(&other, twice.expect("ok").as_str(), &opts, None));
            }
        }

        #[test]
        fn canon_absolute_is_idempotent(href in url_piece()) {
            let href = format!("http://h/{href}");
            if let Ok(once) = canonicalize_absolute(&href) {
                prop_assert_eq!(Ok(once.clone()), canonicalize_absolute(once.as_str()));
            }
        }
    }
}
