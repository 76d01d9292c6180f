//! The request writer: one HTTP/1.1 GET or HEAD request head, serialized into the
//! caller's buffer.
//!
//! The request target is always origin-form (RFC 9112 §3.2.1: path and query, never the
//! fragment); `Host` carries the port only when it is not the scheme's default, and IPv6
//! literals keep their brackets. Header values that came from configuration or from a
//! crawled page (a `Referer`, an `ETag`) could contain CR or LF; written raw they would
//! let a page inject headers or a second request. [`write_request`] therefore never
//! writes such bytes: it replaces CR, LF and NUL in values by spaces and drops extra
//! headers whose name is not a valid token or that would change the message framing.
//! Callers who prefer to refuse such a request use [`RequestHead::validate`] first
//! (or [`try_write_request`]), which reports the first problem as a [`RequestError`].

use std::borrow::Cow;
use std::fmt;

use crate::url::plain::PlainUrl;

/// The request methods a crawler needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Fetch the resource.
    Get,
    /// Fetch only the head; the response has no body whatever its headers say.
    Head,
}

impl Method {
    /// The method token as written on the request line.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
        }
    }
}

/// The default `Accept`: HTML first, plain text next, anything else last, so servers that
/// negotiate send the representation a link extractor can use.
pub const DEFAULT_ACCEPT: &str = "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5";

/// The default `Accept-Encoding`: every coding [`super::decode::ContentDecoder`] handles.
pub const DEFAULT_ACCEPT_ENCODING: &str = "gzip, deflate, br";

/// Headers an extra header may not set: they decide the message framing or the
/// connection's fate, which the writer (and the response reader) own.
const RESERVED_HEADERS: &[&str] = &[
    "host",
    "connection",
    "content-length",
    "transfer-encoding",
    "te",
    "upgrade",
    "expect",
    "keep-alive",
    "proxy-connection",
    "trailer",
];

/// Everything needed to write one request head.
#[derive(Clone, Debug)]
pub struct RequestHead {
    /// GET or HEAD.
    pub method: Method,
    /// The absolute `http` or `https` URL to fetch; its fragment is never sent.
    pub url: url::Url,
    /// The `User-Agent` value, normally [`crate::default_user_agent`].
    pub user_agent: String,
    /// The `From` header (an operator's e-mail address), when configured.
    pub from: Option<String>,
    /// The `Accept` value; empty means the header is not sent.
    pub accept: String,
    /// The `Accept-Encoding` value; empty means the header is not sent.
    pub accept_encoding: String,
    /// The `Accept-Language` value, when configured.
    pub accept_language: Option<String>,
    /// The `Referer`: the page the link was found on. Its fragment and userinfo are never
    /// sent, and it is omitted from `http` requests made from an `https` page.
    pub referer: Option<String>,
    /// `If-None-Match` for a conditional re-fetch (an entity tag from an earlier fetch).
    pub if_none_match: Option<String>,
    /// `If-Modified-Since` for a conditional re-fetch (an HTTP date).
    pub if_modified_since: Option<String>,
    /// Further headers from configuration, written after the standard ones. An extra
    /// header with the name of a standard one (`Accept`, `User-Agent`, ...) replaces it.
    pub extra_headers: Vec<(String, String)>,
}

impl RequestHead {
    /// A GET of `url` with the default `Accept` and `Accept-Encoding` and nothing
    /// optional.
    pub fn get(url: url::Url, user_agent: String) -> Self {
        RequestHead {
            method: Method::Get,
            url,
            user_agent,
            from: None,
            accept: DEFAULT_ACCEPT.to_owned(),
            accept_encoding: DEFAULT_ACCEPT_ENCODING.to_owned(),
            accept_language: None,
            referer: None,
            if_none_match: None,
            if_modified_since: None,
            extra_headers: Vec::new(),
        }
    }

    /// A HEAD of `url`, otherwise as [`RequestHead::get`].
    pub fn head(url: url::Url, user_agent: String) -> Self {
        RequestHead {
            method: Method::Head,
            ..RequestHead::get(url, user_agent)
        }
    }

    /// Checks that the request can be written exactly as given: an `http`/`https` URL
    /// with a host, no CR/LF/NUL in any value, extra header names that are tokens and
    /// not reserved.
    ///
    /// # Errors
    /// The first problem found, as a [`RequestError`].
    pub fn validate(&self) -> Result<(), RequestError> {
        match self.url.scheme() {
            "http" | "https" => {}
            _ => return Err(RequestError::UnsupportedScheme),
        }
        if self.url.host_str().is_none_or(str::is_empty) {
            return Err(RequestError::MissingHost);
        }
        let values = [
            Some(self.user_agent.as_str()),
            self.from.as_deref(),
            Some(self.accept.as_str()),
            Some(self.accept_encoding.as_str()),
            self.accept_language.as_deref(),
            self.referer.as_deref(),
            self.if_none_match.as_deref(),
            self.if_modified_since.as_deref(),
        ];
        if values.into_iter().flatten().any(has_forbidden_value_byte) {
            return Err(RequestError::InvalidHeaderValue);
        }
        for (name, value) in &self.extra_headers {
            if !is_token(name) {
                return Err(RequestError::InvalidHeaderName);
            }
            if is_reserved(name) {
                return Err(RequestError::ReservedHeader);
            }
            if has_forbidden_value_byte(value) {
                return Err(RequestError::InvalidHeaderValue);
            }
        }
        Ok(())
    }
}

/// Why a request cannot be written exactly as given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestError {
    /// The URL's scheme is neither `http` nor `https`.
    UnsupportedScheme,
    /// The URL has no host.
    MissingHost,
    /// An extra header's name is empty or not an RFC 9110 token.
    InvalidHeaderName,
    /// A header value contains CR, LF or NUL.
    InvalidHeaderValue,
    /// An extra header would set a framing or connection header (`Host`,
    /// `Content-Length`, `Transfer-Encoding`, `Connection`, ...).
    ReservedHeader,
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RequestError::UnsupportedScheme => "url scheme is not http or https",
            RequestError::MissingHost => "url has no host",
            RequestError::InvalidHeaderName => "invalid header name",
            RequestError::InvalidHeaderValue => "header value contains cr, lf or nul",
            RequestError::ReservedHeader => "extra header would set a framing header",
        })
    }
}

impl std::error::Error for RequestError {}

/// Validates `req` and, when it is clean, appends it to `out`.
///
/// # Errors
/// As [`RequestHead::validate`]; nothing is written then.
pub fn try_write_request(req: &RequestHead, out: &mut Vec<u8>) -> Result<(), RequestError> {
    req.validate()?;
    write_request(req, out);
    Ok(())
}

/// Appends the serialized request (request line, headers incl. Host with non-default
/// port, `Connection: keep-alive`, CRLF CRLF) to `out`.
///
/// Never fails and never writes a byte that could split a header: CR, LF and NUL in
/// values become spaces, and extra headers with an invalid or reserved name are skipped
/// (see the module docs; [`RequestHead::validate`] reports them instead).
pub fn write_request(req: &RequestHead, out: &mut Vec<u8>) {
    out.reserve(256);
    out.extend_from_slice(req.method.as_str().as_bytes());
    out.push(b' ');
    write_target(&req.url, out);
    out.extend_from_slice(b" HTTP/1.1\r\n");

    out.extend_from_slice(b"Host: ");
    write_host(&req.url, out);
    out.extend_from_slice(b"\r\n");

    let referer = req
        .referer
        .as_deref()
        .and_then(|r| referer_value(r, &req.url));
    let standard: [(&str, Option<&str>); 8] = [
        (
            "User-Agent",
            Some(req.user_agent.as_str()).filter(|v| !v.is_empty()),
        ),
        (
            "Accept",
            Some(req.accept.as_str()).filter(|v| !v.is_empty()),
        ),
        ("Accept-Language", req.accept_language.as_deref()),
        (
            "Accept-Encoding",
            Some(req.accept_encoding.as_str()).filter(|v| !v.is_empty()),
        ),
        ("From", req.from.as_deref()),
        ("Referer", referer.as_deref()),
        ("If-None-Match", req.if_none_match.as_deref()),
        ("If-Modified-Since", req.if_modified_since.as_deref()),
    ];
    for (name, value) in standard {
        let Some(value) = value else { continue };
        let overridden = req
            .extra_headers
            .iter()
            .any(|(extra, _)| extra.eq_ignore_ascii_case(name) && is_token(extra));
        if !overridden {
            write_header(name, value, out);
        }
    }
    for (name, value) in &req.extra_headers {
        if is_token(name) && !is_reserved(name) {
            write_header(name, value, out);
        }
    }
    out.extend_from_slice(b"Connection: keep-alive\r\n\r\n");
}

/// The `Referer` to send for `referer` when fetching `target` (RFC 9110 §10.1.3): never
/// the fragment or userinfo of the referring URL, and nothing at all from an `https`
/// page to an `http` URL. A value that is not a URL is sent as given (sanitized).
///
/// The crawl's referers are canonical URLs, and a [`PlainUrl`] (its own parse, no
/// userinfo, no fragment) is sent as it is without parsing it again: one parse a
/// request was a third of the `url` crate's share of a crawl's CPU.
fn referer_value<'r>(referer: &'r str, target: &url::Url) -> Option<Cow<'r, str>> {
    if let Some(plain) = PlainUrl::new(referer) {
        let downgrade = plain.is_https() && target.scheme() == "http";
        return (!downgrade).then_some(Cow::Borrowed(referer));
    }
    parsed_referer(referer, target)
}

/// [`referer_value`] by the `url` crate's parse, for any value.
fn parsed_referer<'r>(referer: &'r str, target: &url::Url) -> Option<Cow<'r, str>> {
    let Ok(mut url) = url::Url::parse(referer) else {
        return Some(Cow::Borrowed(referer));
    };
    if url.scheme() == "https" && target.scheme() == "http" {
        return None;
    }
    url.set_fragment(None);
    // Both fail only for URLs that cannot have credentials, which then have none.
    let _ = url.set_username("");
    let _ = url.set_password(None);
    Some(Cow::Owned(url.into()))
}

/// Writes `name: value\r\n`, with CR, LF and NUL in the value replaced by spaces and
/// surrounding whitespace trimmed (RFC 9110 §5.5: values carry no leading or trailing
/// whitespace).
fn write_header(name: &str, value: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    let value = value.trim_matches(|c: char| c == ' ' || c == '\t');
    if has_forbidden_value_byte(value) {
        out.extend(value.bytes().map(|b| match b {
            b'\r' | b'\n' | 0 => b' ',
            other => other,
        }));
    } else {
        out.extend_from_slice(value.as_bytes());
    }
    out.extend_from_slice(b"\r\n");
}

/// Writes the origin-form request target: the URL's path and query, never its fragment.
///
/// `url::Url` already percent-encodes per the WHATWG URL standard, which leaves a few
/// bytes raw that RFC 3986 does not allow in a path or query (`"`, `<`, `>`, `\`, `^`,
/// `` ` ``, `{`, `|`, `}`, `[`, `]` and, defensively, controls, space and non-ASCII).
/// They are percent-encoded here so that strict servers accept the target; `%` itself is
/// written as is, because the URL may already hold escapes the page author meant.
fn write_target(url: &url::Url, out: &mut Vec<u8>) {
    let path = url.path();
    if path.is_empty() {
        out.push(b'/');
    } else {
        write_encoded(path, out);
    }
    if let Some(query) = url.query() {
        out.push(b'?');
        write_encoded(query, out);
    }
}

fn write_encoded(part: &str, out: &mut Vec<u8>) {
    for &b in part.as_bytes() {
        if is_target_byte(b) {
            out.push(b);
        } else {
            out.extend_from_slice(&crate::ascii::percent_escape(b));
        }
    }
}

/// Bytes allowed raw in an origin-form path or query: RFC 3986 `pchar`, `/`, `?`, and
/// `%` (see [`write_target`]).
fn is_target_byte(b: u8) -> bool {
    matches!(b,
        b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9'
        | b'-' | b'.' | b'_' | b'~'
        | b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'='
        | b':' | b'@' | b'/' | b'?' | b'%')
}

/// Writes the `Host` value: the host as the URL serializes it (IDNs in punycode, IPv6
/// in brackets) and `:port` when the port is not the scheme's default.
fn write_host(url: &url::Url, out: &mut Vec<u8>) {
    let host = url.host_str().unwrap_or_default();
    // A host never contains CR/LF (the URL parser forbids them), but the writer's
    // promise holds whatever the caller built.
    if has_forbidden_value_byte(host) {
        return;
    }
    out.extend_from_slice(host.as_bytes());
    // `Url::port` is `None` for the scheme's default port: the URL parser drops it.
    if let Some(port) = url.port() {
        out.push(b':');
        out.extend_from_slice(port.to_string().as_bytes());
    }
}

fn has_forbidden_value_byte(value: &str) -> bool {
    value.bytes().any(|b| matches!(b, b'\r' | b'\n' | 0))
}

fn is_reserved(name: &str) -> bool {
    RESERVED_HEADERS
        .iter()
        .any(|r| r.eq_ignore_ascii_case(name))
}

/// RFC 9110 §5.6.2 `token`: one or more `tchar`.
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name.bytes().all(|b| {
            matches!(b,
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9'
                | b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+' | b'-' | b'.'
                | b'^' | b'_' | b'`' | b'|' | b'~')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(req: &RequestHead) -> String {
        let mut out = Vec::new();
        write_request(req, &mut out);
        String::from_utf8(out).unwrap()
    }

    fn get(url: &str) -> RequestHead {
        RequestHead::get(url::Url::parse(url).unwrap(), "trawl/test".to_owned())
    }

    #[test]
    fn minimal_get() {
        assert_eq!(
            written(&get("http://example.com/a/b?q=1#frag")),
            "GET /a/b?q=1 HTTP/1.1\r\n\
             Host: example.com\r\n\
             User-Agent: trawl/test\r\n\
             Accept: text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5\r\n\
             Accept-Encoding: gzip, deflate, br\r\n\
             Connection: keep-alive\r\n\r\n"
        );
    }

    #[test]
    fn request_line_and_host_table() {
        let cases = [
            ("http://example.com", "GET / HTTP/1.1", "example.com"),
            ("http://example.com:80/", "GET / HTTP/1.1", "example.com"),
            (
                "https://example.com:443/x",
                "GET /x HTTP/1.1",
                "example.com",
            ),
            (
                "http://example.com:8080/x",
                "GET /x HTTP/1.1",
                "example.com:8080",
            ),
            (
                "https://example.com:80/x",
                "GET /x HTTP/1.1",
                "example.com:80",
            ),
            ("http://[::1]:8080/", "GET / HTTP/1.1", "[::1]:8080"),
            ("http://[2001:db8::1]/", "GET / HTTP/1.1", "[2001:db8::1]"),
            (
                "http://127.0.0.1:3000/?",
                "GET /? HTTP/1.1",
                "127.0.0.1:3000",
            ),
            ("http://EXAMPLE.com./", "GET / HTTP/1.1", "example.com."),
            (
                "http://bücher.example/",
                "GET / HTTP/1.1",
                "xn--bcher-kva.example",
            ),
            (
                "http://example.com/a b?c d",
                "GET /a%20b?c%20d HTTP/1.1",
                "example.com",
            ),
            (
                "http://example.com/é?é",
                "GET /%C3%A9?%C3%A9 HTTP/1.1",
                "example.com",
            ),
            (
                "http://example.com/a|b^c[d]?x=[1]|{2}",
                "GET /a%7Cb%5Ec%5Bd%5D?x=%5B1%5D%7C%7B2%7D HTTP/1.1",
                "example.com",
            ),
            (
                "http://example.com/%41%zz",
                "GET /%41%zz HTTP/1.1",
                "example.com",
            ),
            (
                "http://example.com/a/../b/./c",
                "GET /b/c HTTP/1.1",
                "example.com",
            ),
            (
                "http://example.com/#only-fragment",
                "GET / HTTP/1.1",
                "example.com",
            ),
            (
                "http://user:pw@example.com/",
                "GET / HTTP/1.1",
                "example.com",
            ),
        ];
        for (url, line, host) in cases {
            let text = written(&get(url));
            let mut lines = text.split("\r\n");
            assert_eq!(lines.next(), Some(line), "{url}");
            assert_eq!(
                lines.next(),
                Some(format!("Host: {host}").as_str()),
                "{url}"
            );
        }
    }

    #[test]
    fn every_optional_header() {
        let mut req = get("http://example.com/");
        req.method = Method::Head;
        req.from = Some("ops@example.org".into());
        req.accept_language = Some("en, fr;q=0.5".into());
        req.referer = Some("http://example.com/start".into());
        req.if_none_match = Some("\"abc\"".into());
        req.if_modified_since = Some("Sat, 21 Nov 2026 10:00:00 GMT".into());
        req.extra_headers = vec![("X-Crawl".into(), "1".into())];
        assert!(req.validate().is_ok());
        assert_eq!(
            written(&req),
            "HEAD / HTTP/1.1\r\n\
             Host: example.com\r\n\
             User-Agent: trawl/test\r\n\
             Accept: text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5\r\n\
             Accept-Language: en, fr;q=0.5\r\n\
             Accept-Encoding: gzip, deflate, br\r\n\
             From: ops@example.org\r\n\
             Referer: http://example.com/start\r\n\
             If-None-Match: \"abc\"\r\n\
             If-Modified-Since: Sat, 21 Nov 2026 10:00:00 GMT\r\n\
             X-Crawl: 1\r\n\
             Connection: keep-alive\r\n\r\n"
        );
    }

    #[test]
    fn extra_header_overrides_standard_and_empty_values_are_omitted() {
        let mut req = get("http://example.com/");
        req.accept = String::new();
        req.extra_headers = vec![("accept-encoding".into(), "gzip".into())];
        let text = written(&req);
        assert!(!text.contains("Accept:"));
        assert!(!text.contains("Accept-Encoding: gzip, deflate, br"));
        assert!(text.contains("\r\naccept-encoding: gzip\r\n"));
    }

    #[test]
    fn injection_is_impossible() {
        let mut req = get("http://example.com/");
        req.referer = Some("http://a/\r\nX-Evil: 1".into());
        req.user_agent = "ua\nGET /other HTTP/1.1".into();
        req.extra_headers = vec![
            ("X-Ok".into(), "a\r\n\r\nGET / HTTP/1.1".into()),
            ("Bad Name".into(), "v".into()),
            ("X-Evil\r\nHost".into(), "v".into()),
            ("Content-Length".into(), "5".into()),
            ("Transfer-Encoding".into(), "chunked".into()),
            ("Host".into(), "other.example".into()),
            ("".into(), "v".into()),
        ];
        assert!(req.validate().is_err());
        let mut out = Vec::new();
        assert!(try_write_request(&req, &mut out).is_err());
        assert!(out.is_empty());
        let text = written(&req);
        // Exactly one request, one Host, header lines only from allowed names.
        assert_eq!(text.matches("\r\n\r\n").count(), 1);
        assert!(text.ends_with("\r\n\r\n"));
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut parsed = httparse::Request::new(&mut headers);
        let status = parsed.parse(text.as_bytes()).unwrap();
        assert_eq!(status, httparse::Status::Complete(text.len()));
        let names: Vec<&str> = parsed.headers.iter().map(|h| h.name).collect();
        assert_eq!(
            names,
            [
                "Host",
                "User-Agent",
                "Accept",
                "Accept-Encoding",
                "Referer",
                "X-Ok",
                "Connection"
            ]
        );
        assert!(!text.contains("\nX-Evil"));
        assert!(!text.contains("Content-Length"));
        assert!(!text.contains("Transfer-Encoding"));
        assert!(!text.contains("Bad Name"));
        for line in text.trim_end().split("\r\n") {
            assert!(!line.contains('\r') && !line.contains('\n'));
        }
        // The URL parser drops CR/LF from a Referer URL; a non-URL value gets spaces.
        assert!(text.contains("\r\nReferer: http://a/X-Evil:%201\r\n"));
        req.referer = Some("not a url\r\nX-Evil: 1".into());
        assert!(written(&req).contains("\r\nReferer: not a url  X-Evil: 1\r\n"));
    }

    #[test]
    fn referer_follows_rfc_9110() {
        let mut req = get("http://example.com/");
        req.referer = Some("http://user:pw@example.com/from?q#frag".into());
        assert!(written(&req).contains("\r\nReferer: http://example.com/from?q\r\n"));
        // No Referer from a secure page to an insecure request.
        req.referer = Some("https://secure.example/page".into());
        assert!(!written(&req).contains("Referer"));
        let mut secure = get("https://example.com/");
        secure.referer = Some("https://secure.example/page#x".into());
        assert!(written(&secure).contains("\r\nReferer: https://secure.example/page\r\n"));
        secure.referer = Some("http://plain.example/".into());
        assert!(written(&secure).contains("\r\nReferer: http://plain.example/\r\n"));
    }

    #[test]
    fn plain_referers_skip_the_parse_with_the_same_bytes() {
        let http = url::Url::parse("http://t.example/").unwrap();
        let https = url::Url::parse("https://t.example/").unwrap();
        // Plain: borrowed as given (no parse), or dropped on a downgrade.
        let plain = "https://a.example:8443/p/q.html?x=1";
        assert!(matches!(referer_value(plain, &https), Some(Cow::Borrowed(r)) if r == plain));
        assert_eq!(referer_value(plain, &http), None);
        assert!(matches!(
            referer_value("http://a.example/", &https),
            Some(Cow::Borrowed("http://a.example/"))
        ));
        // Not plain: parsed, and rewritten where the parse says so.
        for (given, sent) in [
            ("http://u:p@a.example/x#f", Some("http://a.example/x")),
            ("HTTP://A.example:80/%7e", Some("http://a.example/%7e")),
            ("http://a.example/a/../b", Some("http://a.example/b")),
            ("http://a.example", Some("http://a.example/")),
            ("HTTPS://a.example/", None),
            ("not a url", Some("not a url")),
        ] {
            assert_eq!(referer_value(given, &http).as_deref(), sent, "{given}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 5_000, .. proptest::prelude::ProptestConfig::default()
        })]

        /// The shortcut sends exactly what the parse sends, for crawl keys and for
        /// anything else.
        #[test]
        fn referer_shortcut_equals_the_parse(
            referer in "(https?|HTTPS?)://[a-zA-Z0-9_.:@-]{0,14}(/|[a-z.%#?@ ]|\\.\\./){0,8}",
            secure in proptest::prelude::any::<bool>(),
        ) {
            let target = url::Url::parse(if secure { "https://t/" } else { "http://t/" }).unwrap();
            proptest::prop_assert_eq!(
                referer_value(&referer, &target),
                parsed_referer(&referer, &target)
            );
            if let Ok(key) = crate::url::canonicalize_absolute(&referer) {
                proptest::prop_assert_eq!(
                    referer_value(key.as_str(), &target),
                    parsed_referer(key.as_str(), &target)
                );
            }
        }
    }

    #[test]
    fn validate_reports_each_problem() {
        let mut req = get("http://example.com/");
        assert_eq!(req.validate(), Ok(()));
        req.extra_headers = vec![("Connection".into(), "close".into())];
        assert_eq!(req.validate(), Err(RequestError::ReservedHeader));
        req.extra_headers = vec![("a:b".into(), "x".into())];
        assert_eq!(req.validate(), Err(RequestError::InvalidHeaderName));
        req.extra_headers = vec![("X".into(), "a\0b".into())];
        assert_eq!(req.validate(), Err(RequestError::InvalidHeaderValue));
        req.extra_headers.clear();
        req.url = url::Url::parse("ftp://example.com/").unwrap();
        assert_eq!(req.validate(), Err(RequestError::UnsupportedScheme));
    }

    #[test]
    fn default_user_agent_is_trawls() {
        let req = RequestHead::get(
            url::Url::parse("http://example.com/").unwrap(),
            crate::default_user_agent(),
        );
        assert!(written(&req).contains(&format!("User-Agent: trawl/{}", crate::VERSION)));
    }

    /// The written request parses as exactly one valid request with httparse.
    #[test]
    fn written_request_parses() {
        let mut req = get("http://example.com:8080/p?q");
        req.referer = Some("http://x/\ry".into());
        let mut out = Vec::new();
        write_request(&req, &mut out);
        let mut headers = [httparse::EMPTY_HEADER; 16];
        let mut parsed = httparse::Request::new(&mut headers);
        let status = parsed.parse(&out).unwrap();
        assert_eq!(status, httparse::Status::Complete(out.len()));
        assert_eq!(parsed.method, Some("GET"));
        assert_eq!(parsed.path, Some("/p?q"));
        assert_eq!(parsed.version, Some(1));
    }
}
