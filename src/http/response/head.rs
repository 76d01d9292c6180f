//! The response head: the parsed status line and fields ([`ResponseHead`]), and finding
//! and parsing a head with httparse, lenient where deployed servers need it. The reader
//! in the parent module decides when a head is complete and what framing follows it.

#![deny(clippy::indexing_slicing)]

use std::mem::MaybeUninit;
use std::ops::Range;
use std::time::{Duration, SystemTime};

use crate::ascii::trim_ows;
use crate::http::date::parse_http_date;
use crate::http::shared::SharedBytes;

use super::HttpError;

/// Most header fields [`ResponseHead::parse`] accepts, as [`super::ResponseLimits`]'s
/// default.
const PARSE_MAX_HEADERS: usize = 128;

/// A parsed response head, with the bytes it was parsed from.
///
/// The response is parsed once, by the fetcher's reader; everything after it (the
/// engine, the WARC writer, the crawl log) reads these typed values. The WARC writer
/// stores [`ResponseHead::raw`] as it came and renames fields in it by the positions the
/// parser recorded ([`ResponseHead::field_name_ranges`]), never by scanning it again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResponseHead {
    /// The status code (100..=999; codes below 100 are rejected).
    pub status: u16,
    /// The reason phrase, empty when absent or not valid UTF-8 text.
    pub reason: String,
    /// The `x` of `HTTP/1.x`.
    pub minor_version: u8,
    /// Header fields in order, names as received. Obsolete line folding is replaced by
    /// spaces (RFC 9112 §5.2); values are otherwise the raw bytes.
    pub headers: Vec<(String, Vec<u8>)>,
    /// The head exactly as received: status line, fields, and the empty line that ends
    /// it (blank lines before the status line are not part of it).
    pub raw: SharedBytes,
    /// Where the name of each field of `headers` starts in `raw`, in the same order.
    name_offsets: Vec<usize>,
}

impl ResponseHead {
    /// Parses one complete head: `head` must end with the empty line that ends the
    /// head, and hold nothing after it. For tests and tools that build responses by
    /// hand; the fetcher's [`super::ResponseReader`] parses what comes off the wire.
    ///
    /// # Errors
    /// The [`HttpError`] the reader would give for the same head; `InvalidNewLine` when
    /// `head` does not end with its first empty line.
    pub fn parse(head: &[u8]) -> Result<Self, HttpError> {
        check_http_prefix(head)?;
        match find_head_end(head, 0) {
            Some(end) if end == head.len() => parse_head_bytes(head, PARSE_MAX_HEADERS),
            _ => Err(HttpError::InvalidNewLine),
        }
    }

    /// The value of the first field named `name` (ASCII case-insensitive).
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        crate::http::fields::first(&self.headers, name)
    }

    /// The values of every field named `name` (ASCII case-insensitive), in order.
    pub fn headers_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> {
        crate::http::fields::named(&self.headers, name)
    }

    /// True if any field named `name` holds `token` in its comma-separated list
    /// (ASCII case-insensitive), as for `Connection: close`.
    pub fn has_token(&self, name: &str, token: &str) -> bool {
        self.headers_named(name)
            .flat_map(|v| v.split(|&b| b == b','))
            .any(|t| trim_ows(t).eq_ignore_ascii_case(token.as_bytes()))
    }

    /// The byte ranges in [`ResponseHead::raw`] of the names of every field called
    /// `name` (ASCII case-insensitive), in order: where to rename a field in the stored
    /// head without parsing it again.
    pub fn field_name_ranges<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = Range<usize>> + 'a {
        self.headers
            .iter()
            .zip(&self.name_offsets)
            .filter(move |((n, _), _)| n.eq_ignore_ascii_case(name))
            .map(|((n, _), &at)| at..at + n.len())
    }

    /// The declared `Content-Length`, when it is one decimal number (the reader has
    /// already rejected conflicting values).
    pub fn content_length(&self) -> Option<u64> {
        let value = std::str::from_utf8(self.header("content-length")?).ok()?;
        value.trim().parse().ok()
    }

    /// Whether the body has a content coding other than `identity` (`gzip`, `br`,
    /// `deflate`, `zstd`, ...): what the WARC stores is then compressed data already.
    pub fn has_content_coding(&self) -> bool {
        self.headers_named("content-encoding")
            .flat_map(|v| v.split(|&b| b == b','))
            .map(trim_ows)
            .any(|c| !c.is_empty() && !c.eq_ignore_ascii_case(b"identity"))
    }

    /// The media type of `Content-Type`, lowercase, without parameters (`text/html`).
    pub fn media_type(&self) -> Option<String> {
        self.media_type_as_sent().map(str::to_ascii_lowercase)
    }

    /// The media type of `Content-Type` as the server wrote it (any case), without
    /// parameters; `None` when absent, empty or not UTF-8.
    fn media_type_as_sent(&self) -> Option<&str> {
        let value = std::str::from_utf8(self.header("content-type")?).ok()?;
        let media_type = value.split(';').next()?.trim();
        (!media_type.is_empty()).then_some(media_type)
    }

    /// Whether the body is HTML to extract links from: `text/html`,
    /// `application/xhtml+xml`, or no `Content-Type` at all (sniffing is out of scope;
    /// browsers often treat such a body as HTML).
    pub fn is_html(&self) -> bool {
        // Compared without a lower-case copy: every page asks, twice.
        self.media_type_as_sent().is_none_or(|mt| {
            mt.eq_ignore_ascii_case("text/html") || mt.eq_ignore_ascii_case("application/xhtml+xml")
        })
    }

    /// The encoding named by the `charset` parameter of `Content-Type`, if it is one
    /// the WHATWG Encoding Standard knows.
    pub fn charset(&self) -> Option<&'static encoding_rs::Encoding> {
        let value = std::str::from_utf8(self.header("content-type")?).ok()?;
        charset_of(value)
    }

    /// How long `Retry-After` asks to wait, counted from `now`: delay-seconds, or an
    /// HTTP-date (a date in the past is no wait to honour: `None`).
    pub fn retry_after(&self, now: SystemTime) -> Option<Duration> {
        let value = std::str::from_utf8(self.header("retry-after")?)
            .ok()?
            .trim();
        if let Ok(secs) = value.parse::<u64>() {
            return Some(Duration::from_secs(secs));
        }
        let when = u64::try_from(parse_http_date(value)?).ok()?;
        let now = now.duration_since(SystemTime::UNIX_EPOCH).ok()?.as_secs();
        when.checked_sub(now).map(Duration::from_secs)
    }
}

/// The encoding of the `charset` parameter of a `Content-Type` value.
pub fn charset_of(content_type: &str) -> Option<&'static encoding_rs::Encoding> {
    let lower = content_type.to_ascii_lowercase();
    let at = lower.find("charset=")?;
    let rest = lower.get(at + 8..)?;
    let value = rest
        .split(';')
        .next()?
        .trim()
        .trim_matches('"')
        .trim_matches('\'');
    encoding_rs::Encoding::for_label(value.as_bytes())
}

/// Index just past the first empty line (`\n\n` or `\n\r\n`) at or after `from`.
///
/// Only a candidate: httparse decides. Leading blank lines are stripped before, so for a
/// well-formed head the first empty line is its end.
pub(super) fn find_head_end(buf: &[u8], from: usize) -> Option<usize> {
    let hay = buf.get(from..)?;
    for i in memchr::memchr_iter(b'\n', hay) {
        let at = from + i;
        match buf.get(at + 1) {
            Some(b'\n') => return Some(at + 2),
            Some(b'\r') if buf.get(at + 2) == Some(&b'\n') => return Some(at + 3),
            _ => {}
        }
    }
    None
}

/// Fails early on a reply that cannot be HTTP/1.x (HTTP/0.9 or garbage), without waiting
/// for an empty line that may never come.
pub(super) fn check_http_prefix(buf: &[u8]) -> Result<(), HttpError> {
    const PREFIX: &[u8] = b"HTTP/";
    let n = buf.len().min(PREFIX.len());
    if buf.get(..n) != PREFIX.get(..n) {
        return Err(HttpError::NotHttp);
    }
    Ok(())
}

/// Parses a complete head with httparse, lenient where deployed servers need it.
pub(super) fn parse_head_bytes(head: &[u8], max_headers: usize) -> Result<ResponseHead, HttpError> {
    // RFC 9110 §2.5: a higher minor version of HTTP/1 is processed as the highest we
    // implement (1.1). httparse knows only 1.0 and 1.1, so such a head is parsed as 1.1
    // from a copy and keeps its own minor version in the result.
    if let [b'H', b'T', b'T', b'P', b'/', b'1', b'.', minor @ b'2'..=b'9', b' ', ..] = head {
        let minor = *minor - b'0';
        let mut copy = head.to_vec();
        if let Some(digit) = copy.get_mut(7) {
            *digit = b'1';
        }
        let mut parsed = parse_head_bytes(&copy, max_headers)?;
        parsed.minor_version = minor;
        // Same length, so the field offsets hold; the stored bytes are the received ones.
        parsed.raw = SharedBytes::from(head);
        return Ok(parsed);
    }
    // Uninitialized header slots: httparse writes each one before reading it, and
    // skipping the initialization of 128 slots is a measurable part of a head parse.
    let mut stack = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; 128];
    let mut heap;
    let slots: &mut [MaybeUninit<httparse::Header<'_>>] = if max_headers <= stack.len() {
        stack.get_mut(..max_headers).unwrap_or_default()
    } else {
        heap = Vec::with_capacity(max_headers);
        heap.resize_with(max_headers, MaybeUninit::uninit);
        &mut heap
    };
    let mut response = httparse::Response::new(&mut []);
    let status = httparse::ParserConfig::default()
        .allow_spaces_after_header_name_in_responses(true)
        .allow_obsolete_multiline_headers_in_responses(true)
        .allow_multiple_spaces_in_response_status_delimiters(true)
        .ignore_invalid_headers_in_responses(true)
        .parse_response_with_uninit_headers(&mut response, head, slots)
        .map_err(|e| match e {
            httparse::Error::Version => {
                if head.starts_with(b"HTTP/") {
                    HttpError::UnsupportedVersion
                } else {
                    HttpError::NotHttp
                }
            }
            httparse::Error::Status => HttpError::InvalidStatus,
            httparse::Error::TooManyHeaders => HttpError::TooManyHeaders,
            httparse::Error::NewLine => HttpError::InvalidNewLine,
            httparse::Error::HeaderName | httparse::Error::HeaderValue | httparse::Error::Token => {
                HttpError::InvalidHeader
            }
        })?;
    if status != httparse::Status::Complete(head.len()) {
        // `head` ends with its first empty line, so anything else means a line end
        // httparse does not accept there.
        return Err(HttpError::InvalidNewLine);
    }
    let (Some(status), Some(minor_version)) = (response.code, response.version) else {
        return Err(HttpError::InvalidStatus);
    };
    let headers = response
        .headers
        .iter()
        .map(|h| (h.name.to_owned(), unfold(h.value)))
        .collect();
    // httparse's names borrow from `head`: their distance from its start is where they
    // are.
    let start = head.as_ptr() as usize;
    let name_offsets = response
        .headers
        .iter()
        .map(|h| (h.name.as_ptr() as usize).saturating_sub(start))
        .collect();
    Ok(ResponseHead {
        status,
        reason: response.reason.unwrap_or_default().to_owned(),
        minor_version,
        headers,
        raw: SharedBytes::from(head),
        name_offsets,
    })
}

/// Replaces the CR and LF of obsolete line folding by spaces (RFC 9112 §5.2).
fn unfold(value: &[u8]) -> Vec<u8> {
    let mut v = value.to_vec();
    if memchr::memchr2(b'\r', b'\n', value).is_some() {
        for b in &mut v {
            if *b == b'\r' || *b == b'\n' {
                *b = b' ';
            }
        }
    }
    v
}
