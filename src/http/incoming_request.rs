//! The request parser: one HTTP/1.x request head as a server receives it, parsed by
//! httparse over the caller's bytes, bounded in size and field count.
//!
//! trawl is a client, but it also serves a little: the metrics and status listener
//! (`engine/observe/metrics/mod.rs`). That server reads a request head with this parser and no other,
//! as the fetcher reads responses with [`super::ResponseReader`] alone. Like httparse it
//! is sans-IO: [`IncomingRequest::parse`] is called with everything read so far and says
//! either "not complete yet" (`Ok(None)`), or the head and its length, or a typed
//! [`RequestParseError`]. Nothing a client sends can make it panic (fuzzed:
//! [`super::fuzz_request`]).

#![deny(clippy::indexing_slicing)]

use std::fmt;

/// Caps on one request head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestLimits {
    /// Longest head (request line, fields and the empty line), in bytes.
    pub max_head_bytes: usize,
    /// Most header fields.
    pub max_headers: usize,
}

impl Default for RequestLimits {
    /// 8 KiB and 64 fields: far more than any browser, `curl` or Prometheus sends.
    fn default() -> Self {
        Self {
            max_head_bytes: 8 * 1024,
            max_headers: 64,
        }
    }
}

/// Why a request head was refused. Small and `Copy`, as httparse's own errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestParseError {
    /// The head is longer than `max_head_bytes` (or not complete within it).
    HeadTooLarge,
    /// The head has more than `max_headers` fields.
    TooManyHeaders,
    /// The request line is not `METHOD SP TARGET SP HTTP/1.x` (a method that is not a
    /// token, a missing part, a stray byte).
    InvalidRequestLine,
    /// The request target is empty (httparse refuses forbidden bytes in it as a
    /// malformed request line).
    InvalidTarget,
    /// Not `HTTP/1.0` or `HTTP/1.1`.
    InvalidVersion,
    /// A field name that is not a token.
    InvalidHeaderName,
    /// A field value with a forbidden byte (NUL, lone CR, other controls).
    InvalidHeaderValue,
    /// A malformed line end.
    InvalidNewLine,
    /// More than one `Host` field (RFC 9112 §3.2: a server must refuse it).
    DuplicateHost,
}

impl fmt::Display for RequestParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::HeadTooLarge => "request head too large",
            Self::TooManyHeaders => "too many header fields",
            Self::InvalidRequestLine => "malformed request line",
            Self::InvalidTarget => "invalid request target",
            Self::InvalidVersion => "unsupported http version (http/1.0 or http/1.1 only)",
            Self::InvalidHeaderName => "invalid header field name",
            Self::InvalidHeaderValue => "invalid header field value",
            Self::InvalidNewLine => "invalid line end in request head",
            Self::DuplicateHost => "more than one host field",
        })
    }
}

impl std::error::Error for RequestParseError {}

impl RequestParseError {
    /// True for the errors a cap gave (answered `431`), false for malformed heads
    /// (answered `400`).
    pub fn is_cap(self) -> bool {
        matches!(self, Self::HeadTooLarge | Self::TooManyHeaders)
    }
}

/// A parsed request head, owned (the caller's buffer is free again).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IncomingRequest {
    /// The method token as sent (case-sensitive, RFC 9110 §9.1).
    pub method: String,
    /// The request target as sent: origin-form (`/path?query`), or another form the
    /// server may refuse.
    pub target: String,
    /// The `x` of `HTTP/1.x` (0 or 1).
    pub minor_version: u8,
    /// Header fields in order, names as received, values as raw bytes.
    pub headers: Vec<(String, Vec<u8>)>,
}

impl IncomingRequest {
    /// Parses the head at the start of `buf` (leading empty lines skipped, RFC 9112
    /// §2.2). `Ok(None)`: not complete yet, read more and call again with everything.
    /// `Ok(Some((head, len)))`: the head took `len` bytes of `buf`; what follows (a
    /// body, a pipelined request) is left alone.
    ///
    /// # Errors
    /// A malformed head, or one over a cap of `limits`: [`RequestParseError`]. A head
    /// not complete within `max_head_bytes` is `HeadTooLarge` as soon as that many bytes
    /// are in `buf`.
    pub fn parse(
        buf: &[u8],
        limits: RequestLimits,
    ) -> Result<Option<(Self, usize)>, RequestParseError> {
        let window = buf.get(..limits.max_head_bytes).unwrap_or(buf);
        let mut fields = vec![httparse::EMPTY_HEADER; limits.max_headers];
        let mut request = httparse::Request::new(&mut fields);
        let len = match request.parse(window) {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) if window.len() < limits.max_head_bytes => {
                return Ok(None)
            }
            Ok(httparse::Status::Partial) => return Err(RequestParseError::HeadTooLarge),
            Err(e) => return Err(map_error(e)),
        };
        let (Some(method), Some(target), Some(minor_version)) =
            (request.method, request.path, request.version)
        else {
            // httparse fills all three in a complete request; never reached.
            return Err(RequestParseError::InvalidRequestLine);
        };
        if target.is_empty() {
            return Err(RequestParseError::InvalidTarget);
        }
        let headers: Vec<(String, Vec<u8>)> = request
            .headers
            .iter()
            .map(|h| (h.name.to_owned(), h.value.to_vec()))
            .collect();
        let head = Self {
            method: method.to_owned(),
            target: target.to_owned(),
            minor_version,
            headers,
        };
        if head.headers_named("host").nth(1).is_some() {
            return Err(RequestParseError::DuplicateHost);
        }
        Ok(Some((head, len)))
    }

    /// The path of the target: everything before `?` (and before `#`, which a client
    /// should not send).
    pub fn path(&self) -> &str {
        let end = self.target.find(['?', '#']).unwrap_or(self.target.len());
        self.target.get(..end).unwrap_or_default()
    }

    /// The value of the first field named `name` (ASCII case-insensitive).
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        crate::http::fields::first(&self.headers, name)
    }

    /// The values of every field named `name` (ASCII case-insensitive), in order.
    pub fn headers_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> {
        crate::http::fields::named(&self.headers, name)
    }
}

fn map_error(e: httparse::Error) -> RequestParseError {
    match e {
        httparse::Error::HeaderName => RequestParseError::InvalidHeaderName,
        httparse::Error::HeaderValue => RequestParseError::InvalidHeaderValue,
        httparse::Error::NewLine => RequestParseError::InvalidNewLine,
        httparse::Error::TooManyHeaders => RequestParseError::TooManyHeaders,
        httparse::Error::Version => RequestParseError::InvalidVersion,
        // `Token`: a bad method or a missing part of the line; `Status` cannot come from a request parse.
        httparse::Error::Token | httparse::Error::Status => RequestParseError::InvalidRequestLine,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(buf: &[u8]) -> Result<Option<(IncomingRequest, usize)>, RequestParseError> {
        IncomingRequest::parse(buf, RequestLimits::default())
    }

    #[test]
    fn complete_heads_parse_with_their_length() {
        let buf = b"GET /metrics?x=1 HTTP/1.1\r\nHost: 127.0.0.1:9898\r\nAccept: */*\r\n\r\nrest";
        let (head, len) = parse(buf).unwrap().unwrap();
        assert_eq!(len, buf.len() - 4);
        assert_eq!(head.method, "GET");
        assert_eq!(head.target, "/metrics?x=1");
        assert_eq!(head.path(), "/metrics");
        assert_eq!(head.minor_version, 1);
        assert_eq!(head.header("HOST"), Some(&b"127.0.0.1:9898"[..]));
        assert_eq!(head.headers.len(), 2);
        // Bare LF line ends and a leading empty line are accepted.
        let (head, _) = parse(b"\r\nHEAD / HTTP/1.0\nX: y\n\n").unwrap().unwrap();
        assert_eq!((head.method.as_str(), head.minor_version), ("HEAD", 0));
    }

    #[test]
    fn every_prefix_of_a_head_is_partial() {
        let buf = b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
        for end in 0..buf.len() {
            assert_eq!(parse(&buf[..end]), Ok(None), "prefix {end}");
        }
        assert!(matches!(parse(buf), Ok(Some((_, n))) if n == buf.len()));
    }

    #[test]
    fn malformed_heads_are_typed_errors() {
        use RequestParseError as E;
        let cases: &[(&[u8], E)] = &[
            (b"garbage\r\n\r\n", E::InvalidRequestLine),
            (b"\xff\xfe HTTP/1.1\r\n\r\n", E::InvalidRequestLine),
            (b"GET /metrics\r\n\r\n", E::InvalidRequestLine),
            (b"GET /metrics HTTP/2\r\n\r\n", E::InvalidVersion),
            (
                b"GET /metrics HTTP/1.1\r\nBad Name: x\r\n\r\n",
                E::InvalidHeaderName,
            ),
            (b"GET / HTTP/1.1\r\nX: a\0b\r\n\r\n", E::InvalidHeaderValue),
            (b"GET / HTTP/1.1\rX\r\n\r\n", E::InvalidNewLine),
            (
                b"GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n",
                E::DuplicateHost,
            ),
        ];
        for (buf, want) in cases {
            let got = parse(buf).err();
            assert_eq!(got, Some(*want), "{:?}", String::from_utf8_lossy(buf));
        }
    }

    #[test]
    fn caps_give_their_own_errors() {
        let limits = RequestLimits {
            max_head_bytes: 64,
            max_headers: 2,
        };
        let mut big = b"GET / HTTP/1.1\r\nX: ".to_vec();
        big.resize(63, b'a');
        assert_eq!(IncomingRequest::parse(&big, limits), Ok(None));
        big.push(b'a');
        assert_eq!(
            IncomingRequest::parse(&big, limits),
            Err(RequestParseError::HeadTooLarge)
        );
        let many = b"GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n";
        assert_eq!(
            IncomingRequest::parse(many, limits),
            Err(RequestParseError::TooManyHeaders)
        );
        assert!(RequestParseError::TooManyHeaders.is_cap());
        assert!(!RequestParseError::InvalidTarget.is_cap());
        // A head that fits exactly is complete.
        let exact = b"GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\n\r\n";
        let fit = RequestLimits {
            max_head_bytes: exact.len(),
            max_headers: 2,
        };
        assert!(matches!(IncomingRequest::parse(exact, fit), Ok(Some(_))));
    }
}
