//! The response reader: one HTTP/1.1 response, parsed from bytes the caller feeds in.
//!
//! Sans-IO: [`ResponseReader::feed`] takes whatever the socket produced and reports how
//! much of it belongs to this response; [`ResponseReader::on_eof`] is told when the peer
//! closed. The head is parsed by httparse with a bounded header array and a bounded
//! head buffer; interim (1xx) responses are skipped; the body is de-framed by
//! Content-Length, by the chunked coding, or by the connection closing, following RFC
//! 9112 §6.3 (the choices are listed in `docs/http.md`).
//!
//! The reader copies at most one head (never more than `max_head_bytes`) into its own
//! buffer, and only when the head arrives split over several feeds; a head that arrives
//! whole is parsed straight from the caller's bytes. It never consumes bytes past the end
//! of its response, so pipelined or keep-alive successors stay in the caller's buffer.

#![deny(clippy::indexing_slicing)]

use std::fmt;
use std::mem::MaybeUninit;

use crate::ascii::trim_ows;

use super::chunked::{ChunkedDecoder, ChunkedError, ChunkedLimits};
use super::request::Method;

/// What happens when a body is larger than [`ResponseLimits::max_body_bytes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyLimitMode {
    /// Keep the first `max_body_bytes`, mark the response truncated, and finish it
    /// there (the connection is then not reused: the rest of the body is unread).
    Truncate,
    /// Fail with [`HttpError::BodyTooLarge`] (at once when Content-Length announces it).
    Abort,
}

/// Caps for one response.
#[derive(Clone, Copy, Debug)]
pub struct ResponseLimits {
    /// Most bytes of one response head (status line, fields, final empty line). Leading
    /// empty lines count too.
    pub max_head_bytes: usize,
    /// Most header fields in one head.
    pub max_headers: usize,
    /// Most body bytes (as framed on the wire, before content decoding).
    pub max_body_bytes: u64,
    /// What to do with a body beyond `max_body_bytes`.
    pub body_limit_mode: BodyLimitMode,
}

impl Default for ResponseLimits {
    /// 64 KiB of head, 128 fields, 16 MiB of body, truncated beyond that.
    fn default() -> Self {
        ResponseLimits {
            max_head_bytes: 64 * 1024,
            max_headers: 128,
            max_body_bytes: 16 * 1024 * 1024,
            body_limit_mode: BodyLimitMode::Truncate,
        }
    }
}

/// Most interim (1xx) responses skipped before the final one; a server that sends more
/// is stalling, not informing.
pub const MAX_INTERIM_RESPONSES: u32 = 32;

/// A parsed response head.
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
}

impl ResponseHead {
    /// The value of the first field named `name` (ASCII case-insensitive).
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_slice())
    }

    /// The values of every field named `name` (ASCII case-insensitive), in order.
    pub fn headers_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> {
        self.headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_slice())
    }

    /// True if any field named `name` holds `token` in its comma-separated list
    /// (ASCII case-insensitive), as for `Connection: close`.
    pub fn has_token(&self, name: &str, token: &str) -> bool {
        self.headers_named(name)
            .flat_map(|v| v.split(|&b| b == b','))
            .any(|t| trim_ows(t).eq_ignore_ascii_case(token.as_bytes()))
    }
}

/// Result of feeding bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Feed {
    /// Input bytes that belonged to this response.
    pub consumed: usize,
    /// The response is complete; later bytes belong to the next response.
    pub done: bool,
}

/// Every way a response can be malformed or too big. The connection must be closed
/// after any of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpError {
    /// The reply does not start with `HTTP/`: an HTTP/0.9-style reply or not HTTP at all.
    NotHttp,
    /// `HTTP/` followed by a version other than 1.0 or 1.1.
    UnsupportedVersion,
    /// Malformed status line or a status code below 100.
    InvalidStatus,
    /// A header field name or value with a forbidden byte (NUL, lone CR).
    InvalidHeader,
    /// A malformed line end in the head.
    InvalidNewLine,
    /// The head is larger than `max_head_bytes`.
    HeadTooLarge,
    /// The head has more than `max_headers` fields.
    TooManyHeaders,
    /// More than [`MAX_INTERIM_RESPONSES`] interim responses.
    TooManyInterimResponses,
    /// `101 Switching Protocols`: we never ask for an upgrade.
    UnexpectedSwitchingProtocols,
    /// A Content-Length value that is not a decimal number that fits in 64 bits.
    InvalidContentLength,
    /// Several Content-Length values that differ.
    ConflictingContentLength,
    /// The chunked framing is malformed.
    Chunked(ChunkedError),
    /// The body exceeds `max_body_bytes` in [`BodyLimitMode::Abort`].
    BodyTooLarge,
    /// The connection closed before any byte of the response.
    ClosedBeforeResponse,
    /// The connection closed inside the head.
    IncompleteHead,
    /// The connection closed before Content-Length body bytes arrived.
    IncompleteBody,
    /// The connection closed before the last chunk of a chunked body.
    IncompleteChunkedBody,
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HttpError::NotHttp => f.write_str("response is not http/1.x"),
            HttpError::UnsupportedVersion => f.write_str("unsupported http version"),
            HttpError::InvalidStatus => f.write_str("invalid status line"),
            HttpError::InvalidHeader => f.write_str("invalid header field"),
            HttpError::InvalidNewLine => f.write_str("invalid line end in head"),
            HttpError::HeadTooLarge => f.write_str("response head too large"),
            HttpError::TooManyHeaders => f.write_str("too many header fields"),
            HttpError::TooManyInterimResponses => f.write_str("too many interim responses"),
            HttpError::UnexpectedSwitchingProtocols => {
                f.write_str("unexpected 101 switching protocols")
            }
            HttpError::InvalidContentLength => f.write_str("invalid content-length"),
            HttpError::ConflictingContentLength => f.write_str("conflicting content-length values"),
            HttpError::Chunked(e) => write!(f, "chunked body: {e}"),
            HttpError::BodyTooLarge => f.write_str("body too large"),
            HttpError::ClosedBeforeResponse => f.write_str("connection closed before response"),
            HttpError::IncompleteHead => f.write_str("connection closed inside response head"),
            HttpError::IncompleteBody => f.write_str("connection closed before end of body"),
            HttpError::IncompleteChunkedBody => f.write_str("connection closed before last chunk"),
        }
    }
}

impl std::error::Error for HttpError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HttpError::Chunked(e) => Some(e),
            _ => None,
        }
    }
}

/// How the body of the final response is delimited.
#[derive(Clone, Debug)]
enum Body {
    /// Exactly `remaining` more bytes.
    Length { remaining: u64 },
    /// Chunked transfer coding.
    Chunked(ChunkedDecoder),
    /// Everything until the peer closes.
    UntilClose,
}

/// Where the reader is.
#[derive(Clone, Debug)]
enum State {
    /// Waiting for (the rest of) a head; `started` once any non-blank byte arrived.
    Head,
    /// De-framing the body of the final response.
    Body(Body),
    /// The response is complete.
    Done,
    /// A framing error occurred; every later call repeats it.
    Failed(HttpError),
}

/// One response on a connection. Sans-IO: the caller reads from the socket into its own
/// buffer and feeds it here.
#[derive(Debug)]
pub struct ResponseReader {
    method: Method,
    limits: ResponseLimits,
    state: State,
    /// Head bytes received over several feeds (empty when heads arrive whole).
    head_buf: Vec<u8>,
    /// Bytes of the current head seen so far, leading blank lines included.
    head_bytes: usize,
    /// Whether any byte of a response (blank lines before a head excepted) arrived.
    any_byte: bool,
    interim_count: u32,
    head: Option<ResponseHead>,
    /// Connection reuse allowed by the head's version and `Connection` field.
    persistent: bool,
    /// Cleared when the framing forbids reuse (close-delimited, TE with CL, truncation).
    framing_allows_reuse: bool,
    truncated: bool,
    body_bytes: u64,
    wire_body_bytes: u64,
}

impl ResponseReader {
    /// A reader for the response to a request made with `method`.
    pub fn new(method: Method, limits: ResponseLimits) -> Self {
        ResponseReader {
            method,
            limits,
            state: State::Head,
            head_buf: Vec::new(),
            head_bytes: 0,
            any_byte: false,
            interim_count: 0,
            head: None,
            persistent: false,
            framing_allows_reuse: true,
            truncated: false,
            body_bytes: 0,
            wire_body_bytes: 0,
        }
    }

    /// Feeds bytes. Parses the head (skipping 1xx), then de-frames the body (length,
    /// chunked, or until close), appending body bytes (still content-encoded) to `body`.
    /// Returns how many input bytes were consumed; `done` when the response is complete
    /// (bytes after it belong to the next response on a keep-alive connection).
    ///
    /// # Errors
    /// An [`HttpError`] when the response is malformed or over a cap in
    /// [`BodyLimitMode::Abort`]; the same error is returned by every later call.
    pub fn feed(&mut self, input: &[u8], body: &mut Vec<u8>) -> Result<Feed, HttpError> {
        let mut pos = 0usize;
        loop {
            let rest = input.get(pos..).unwrap_or_default();
            let result = match &mut self.state {
                State::Failed(e) => return Err(*e),
                State::Done => {
                    return Ok(Feed {
                        consumed: pos,
                        done: true,
                    })
                }
                State::Head => {
                    if rest.is_empty() {
                        return Ok(Feed {
                            consumed: pos,
                            done: false,
                        });
                    }
                    self.feed_head(rest)
                }
                State::Body(_) => self.feed_body(rest, body),
            };
            match result {
                Ok(n) => pos += n,
                Err(e) => {
                    self.state = State::Failed(e);
                    return Err(e);
                }
            }
            if matches!(self.state, State::Body(_)) && pos >= input.len() {
                return Ok(Feed {
                    consumed: pos,
                    done: false,
                });
            }
        }
    }

    /// The peer closed the connection. Ok(()) when that ends a close-delimited body
    /// (response now done); Err for a premature close (e.g. inside head or chunked body).
    ///
    /// # Errors
    /// [`HttpError::ClosedBeforeResponse`] when nothing arrived (a reused connection the
    /// server had closed: the request may be retried), [`HttpError::IncompleteHead`],
    /// [`HttpError::IncompleteBody`], [`HttpError::IncompleteChunkedBody`], or the
    /// earlier framing error.
    pub fn on_eof(&mut self) -> Result<(), HttpError> {
        let result = match &self.state {
            State::Failed(e) => return Err(*e),
            State::Done => return Ok(()),
            State::Head if !self.any_byte => Err(HttpError::ClosedBeforeResponse),
            State::Head => Err(HttpError::IncompleteHead),
            State::Body(Body::UntilClose) => Ok(()),
            State::Body(Body::Length { .. }) => Err(HttpError::IncompleteBody),
            State::Body(Body::Chunked(_)) => Err(HttpError::IncompleteChunkedBody),
        };
        self.framing_allows_reuse = false;
        self.state = match result {
            Ok(()) => State::Done,
            Err(e) => State::Failed(e),
        };
        result
    }

    /// The final (non-1xx) response head, once parsed.
    pub fn head(&self) -> Option<&ResponseHead> {
        self.head.as_ref()
    }

    /// True once the response is complete.
    pub fn is_done(&self) -> bool {
        matches!(self.state, State::Done)
    }

    /// The framing error that ended this response, if any.
    pub fn error(&self) -> Option<HttpError> {
        match self.state {
            State::Failed(e) => Some(e),
            _ => None,
        }
    }

    /// True if the connection may be reused after this response (HTTP/1.1 without
    /// `Connection: close`, body framed by length or chunked, no framing error).
    pub fn keep_alive(&self) -> bool {
        self.is_done() && self.persistent && self.framing_allows_reuse
    }

    /// True if the body was cut at `max_body_bytes` ([`BodyLimitMode::Truncate`]).
    pub fn body_truncated(&self) -> bool {
        self.truncated
    }

    /// Framed body bytes consumed from the wire (chunk framing included).
    pub fn wire_body_bytes(&self) -> u64 {
        self.wire_body_bytes
    }

    /// Body bytes delivered to the caller (chunk framing excluded).
    pub fn body_bytes(&self) -> u64 {
        self.body_bytes
    }

    /// Interim (1xx) responses skipped so far.
    pub fn interim_responses(&self) -> u32 {
        self.interim_count
    }

    /// Consumes head bytes from `input` (non-empty); returns how many.
    fn feed_head(&mut self, input: &[u8]) -> Result<usize, HttpError> {
        let mut skipped = 0usize;
        if self.head_buf.is_empty() {
            // Blank lines before a status line are skipped (RFC 9112 §2.2 asks servers
            // to do so for requests; some servers send a stray CRLF after a body). They
            // count against the head cap so an endless stream of them ends.
            skipped = input
                .iter()
                .position(|&b| b != b'\r' && b != b'\n')
                .unwrap_or(input.len());
            self.head_bytes += skipped;
            if self.head_bytes > self.limits.max_head_bytes {
                return Err(HttpError::HeadTooLarge);
            }
            let input = input.get(skipped..).unwrap_or_default();
            if input.is_empty() {
                return Ok(skipped);
            }
            // A stray line end after the previous response is not a byte of this one:
            // a reused connection closed after it still counts as closed before any
            // response (the request may be retried).
            self.any_byte = true;
            // Fast path: the whole head is in this input.
            // Judge the prefix only on bytes within the head cap, as the slow path does,
            // so the error does not depend on how the bytes were split.
            let room =
                (self.limits.max_head_bytes.saturating_sub(self.head_bytes)).saturating_add(1);
            check_http_prefix(input.get(..room).unwrap_or(input))?;
            if let Some(end) = find_head_end(input, 0) {
                if self.head_bytes + end > self.limits.max_head_bytes {
                    return Err(HttpError::HeadTooLarge);
                }
                let head = input.get(..end).unwrap_or_default();
                self.parse_head(head)?;
                return Ok(skipped + end);
            }
        }
        let input = input.get(skipped..).unwrap_or_default();
        // Slow path: accumulate up to the cap, never past the head's end.
        let old_len = self.head_buf.len();
        let room = self
            .limits
            .max_head_bytes
            .saturating_sub(self.head_bytes + old_len)
            + 1;
        let take = input.len().min(room);
        self.head_buf
            .extend_from_slice(input.get(..take).unwrap_or_default());
        check_http_prefix(&self.head_buf)?;
        match find_head_end(&self.head_buf, old_len.saturating_sub(2)) {
            Some(end) => {
                let used = end - old_len;
                if self.head_bytes + end > self.limits.max_head_bytes {
                    return Err(HttpError::HeadTooLarge);
                }
                self.head_buf.truncate(end);
                let buf = std::mem::take(&mut self.head_buf);
                let parsed = self.parse_head(&buf);
                // Keep the allocation only for a next head (after a 1xx).
                if matches!(self.state, State::Head) {
                    self.head_buf = buf;
                    self.head_buf.clear();
                }
                parsed?;
                Ok(skipped + used)
            }
            None => {
                if self.head_bytes + self.head_buf.len() > self.limits.max_head_bytes {
                    return Err(HttpError::HeadTooLarge);
                }
                Ok(skipped + take)
            }
        }
    }

    /// Parses one complete head (`head` ends with its empty line) and moves to the
    /// next state: another head after a 1xx, the body, or done.
    fn parse_head(&mut self, head: &[u8]) -> Result<(), HttpError> {
        let parsed = parse_head_bytes(head, self.limits.max_headers)?;
        self.head_bytes = 0;
        if parsed.status < 100 {
            return Err(HttpError::InvalidStatus);
        }
        if parsed.status < 200 {
            if parsed.status == 101 {
                return Err(HttpError::UnexpectedSwitchingProtocols);
            }
            self.interim_count += 1;
            if self.interim_count > MAX_INTERIM_RESPONSES {
                return Err(HttpError::TooManyInterimResponses);
            }
            self.state = State::Head;
            return Ok(());
        }
        // The head buffer is not needed for the body; free it now (connections may
        // hold readers for a long body).
        self.head_buf = Vec::new();
        self.persistent = is_persistent(&parsed);
        let framing = self.framing(&parsed)?;
        self.head = Some(parsed);
        self.state = match framing {
            None => State::Done,
            Some(Body::Length { remaining: 0 }) => State::Done,
            Some(Body::Length { remaining })
                if remaining > self.limits.max_body_bytes
                    && self.limits.body_limit_mode == BodyLimitMode::Abort =>
            {
                return Err(HttpError::BodyTooLarge);
            }
            Some(body) => State::Body(body),
        };
        Ok(())
    }

    /// RFC 9112 §6.3: how the body of `head` is delimited (`None`: no body).
    fn framing(&mut self, head: &ResponseHead) -> Result<Option<Body>, HttpError> {
        // 1. HEAD responses, 1xx (handled before), 204 and 304 have no body.
        if self.method == Method::Head || head.status == 204 || head.status == 304 {
            return Ok(None);
        }
        // 3. Transfer-Encoding overrides Content-Length.
        let mut codings = head
            .headers_named("transfer-encoding")
            .flat_map(|v| v.split(|&b| b == b','))
            .map(trim_ows)
            .filter(|c| !c.is_empty() && !c.eq_ignore_ascii_case(b"identity"))
            .peekable();
        if codings.peek().is_some() {
            let chunked_last = codings
                .last()
                .is_some_and(|c| c.eq_ignore_ascii_case(b"chunked"));
            // A Content-Length beside Transfer-Encoding may be a smuggling attempt or a
            // broken intermediary: honour Transfer-Encoding but never reuse the
            // connection (RFC 9112 §6.3 item 3).
            if head.header("content-length").is_some() {
                self.framing_allows_reuse = false;
            }
            // HTTP/1.0 has no transfer codings: the framing is faulty, so read until
            // close and do not reuse the connection (RFC 9112 §6.1).
            if head.minor_version == 0 || !chunked_last {
                self.framing_allows_reuse = false;
                return Ok(Some(Body::UntilClose));
            }
            return Ok(Some(Body::Chunked(ChunkedDecoder::new(
                ChunkedLimits::default(),
            ))));
        }
        // 4/5. Content-Length: every value, in every field, must be the same number.
        let mut length: Option<u64> = None;
        for field in head.headers_named("content-length") {
            // Empty list elements are allowed (RFC 9110 §5.6.1) but a field must hold a
            // number.
            let mut numbers = 0usize;
            for value in field.split(|&b| b == b',').map(trim_ows) {
                if value.is_empty() {
                    continue;
                }
                numbers += 1;
                let n = parse_content_length(value)?;
                match length {
                    Some(prev) if prev != n => return Err(HttpError::ConflictingContentLength),
                    _ => length = Some(n),
                }
            }
            if numbers == 0 {
                return Err(HttpError::InvalidContentLength);
            }
        }
        if let Some(remaining) = length {
            return Ok(Some(Body::Length { remaining }));
        }
        // 7. Otherwise the body runs until the server closes.
        self.framing_allows_reuse = false;
        Ok(Some(Body::UntilClose))
    }

    /// De-frames body bytes from `input`; returns how many were consumed.
    fn feed_body(&mut self, input: &[u8], body: &mut Vec<u8>) -> Result<usize, HttpError> {
        let allowance = self.limits.max_body_bytes.saturating_sub(self.body_bytes);
        let State::Body(framing) = &mut self.state else {
            return Ok(0);
        };
        let (consumed, data, finished, more_data) = match framing {
            Body::Length { remaining } => {
                let take = (*remaining).min(input.len() as u64).min(allowance);
                // `take <= input.len()`, so the cast is lossless.
                let n = take as usize;
                *remaining -= take;
                let more = *remaining > 0 && take == allowance;
                (n, 0..n, *remaining == 0, more)
            }
            Body::UntilClose => {
                let take = (input.len() as u64).min(allowance);
                let n = take as usize;
                let more = input.len() > n;
                (n, 0..n, false, more)
            }
            Body::Chunked(decoder) => {
                let step = decoder.step(input, allowance).map_err(HttpError::Chunked)?;
                // Chunk data beyond the allowance: the decoder stopped at the cap inside
                // a chunk with its data waiting in the input.
                let more = decoder.is_in_data()
                    && step.data.len() as u64 == allowance
                    && step.consumed < input.len();
                (step.consumed, step.data, step.done, more)
            }
        };
        let chunk = input.get(data).unwrap_or_default();
        body.extend_from_slice(chunk);
        self.body_bytes += chunk.len() as u64;
        self.wire_body_bytes += consumed as u64;
        if finished {
            self.state = State::Done;
        } else if more_data || (allowance == 0 && consumed == 0 && !input.is_empty()) {
            // Body bytes beyond the cap are waiting.
            match self.limits.body_limit_mode {
                BodyLimitMode::Abort => return Err(HttpError::BodyTooLarge),
                BodyLimitMode::Truncate => {
                    self.truncated = true;
                    self.framing_allows_reuse = false;
                    self.state = State::Done;
                }
            }
        }
        Ok(consumed)
    }
}

/// Index just past the first empty line (`\n\n` or `\n\r\n`) at or after `from`.
///
/// Only a candidate: httparse decides. Leading blank lines are stripped before, so for a
/// well-formed head the first empty line is its end.
fn find_head_end(buf: &[u8], from: usize) -> Option<usize> {
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
fn check_http_prefix(buf: &[u8]) -> Result<(), HttpError> {
    const PREFIX: &[u8] = b"HTTP/";
    let n = buf.len().min(PREFIX.len());
    if buf.get(..n) != PREFIX.get(..n) {
        return Err(HttpError::NotHttp);
    }
    Ok(())
}

/// Parses a complete head with httparse, lenient where deployed servers need it.
fn parse_head_bytes(head: &[u8], max_headers: usize) -> Result<ResponseHead, HttpError> {
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
    Ok(ResponseHead {
        status,
        reason: response.reason.unwrap_or_default().to_owned(),
        minor_version,
        headers,
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

/// HTTP/1.1 persists unless `Connection: close`; HTTP/1.0 only with
/// `Connection: keep-alive` (RFC 9112 §9.3).
fn is_persistent(head: &ResponseHead) -> bool {
    if head.has_token("connection", "close") {
        return false;
    }
    head.minor_version >= 1 || head.has_token("connection", "keep-alive")
}

/// `Content-Length = 1*DIGIT`, fitting in a u64.
fn parse_content_length(value: &[u8]) -> Result<u64, HttpError> {
    if value.is_empty() {
        return Err(HttpError::InvalidContentLength);
    }
    let mut n: u64 = 0;
    for &b in value {
        if !b.is_ascii_digit() {
            return Err(HttpError::InvalidContentLength);
        }
        n = n
            .checked_mul(10)
            .and_then(|n| n.checked_add(u64::from(b - b'0')))
            .ok_or(HttpError::InvalidContentLength)?;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::{run_responses, ResponseRun};

    fn limits() -> ResponseLimits {
        ResponseLimits::default()
    }

    /// Reads `input` as a whole, in pieces of every size from 1 to 7, and byte by byte;
    /// all must agree. Returns the runs.
    fn read_all(input: &[u8], method: Method, limits: ResponseLimits) -> Vec<ResponseRun> {
        let whole = run_responses(input, &[usize::MAX], method, limits);
        for size in 1..=7 {
            let pieces = run_responses(input, &[size], method, limits);
            assert_eq!(whole, pieces, "piece size {size} differs for {input:?}");
        }
        let irregular = run_responses(input, &[3, 1, 11, 2, 64], method, limits);
        assert_eq!(whole, irregular, "irregular pieces differ for {input:?}");
        whole
    }

    fn one(input: &[u8]) -> ResponseRun {
        let runs = read_all(input, Method::Get, limits());
        assert_eq!(
            runs.len(),
            1,
            "expected one response in {input:?}: {runs:?}"
        );
        runs.into_iter().next().unwrap()
    }

    /// Expected outcome of one response: status (0: no head), body, error, keep-alive.
    struct Case {
        name: &'static str,
        input: &'static [u8],
        status: u16,
        body: &'static [u8],
        error: Option<HttpError>,
        keep_alive: bool,
    }

    macro_rules! case {
        ($name:literal, $input:expr, $status:expr, $body:expr, $error:expr, $ka:expr) => {
            Case {
                name: $name,
                input: $input,
                status: $status,
                body: $body,
                error: $error,
                keep_alive: $ka,
            }
        };
    }

    #[test]
    fn framing_table() {
        use HttpError as E;
        let cases = [
            case!("content-length", b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 200, b"hello", None, true),
            case!("zero length", b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 200, b"", None, true),
            case!("chunked", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-T: 1\r\n\r\n", 200, b"hello world", None, true),
            case!("chunked uppercase", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: CHUNKED\r\n\r\n1\r\na\r\n0\r\n\r\n", 200, b"a", None, true),
            case!("close delimited", b"HTTP/1.1 200 OK\r\n\r\nuntil close", 200, b"until close", None, false),
            case!("connection close", b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", 200, b"ok", None, false),
            case!("connection close in list", b"HTTP/1.1 200 OK\r\nConnection: foo, Close\r\nContent-Length: 2\r\n\r\nok", 200, b"ok", None, false),
            case!("http/1.0 default close", b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", 200, b"ok", None, false),
            case!("http/1.0 keep-alive", b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok", 200, b"ok", None, true),
            case!("http/1.0 keep-alive but close-delimited", b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\nok", 200, b"ok", None, false),
            case!("204 ignores length", b"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n", 204, b"", None, true),
            case!("304 ignores chunked", b"HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n", 304, b"", None, true),
            case!("skip 100", b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", 200, b"x", None, true),
            case!("skip 103 with fields", b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", 200, b"x", None, true),
            case!("101 is an error", b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", 0, b"", Some(E::UnexpectedSwitchingProtocols), false),
            case!("duplicate equal lengths", b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", 200, b"abc", None, true),
            case!("equal length list", b"HTTP/1.1 200 OK\r\nContent-Length: 3, 3,3\r\n\r\nabc", 200, b"abc", None, true),
            case!("differing lengths", b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 0, b"", Some(E::ConflictingContentLength), false),
            case!("differing length list", b"HTTP/1.1 200 OK\r\nContent-Length: 3, 4\r\n\r\nabcd", 0, b"", Some(E::ConflictingContentLength), false),
            case!("negative length", b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", 0, b"", Some(E::InvalidContentLength), false),
            case!("plus length", b"HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\nx", 0, b"", Some(E::InvalidContentLength), false),
            case!("hex length", b"HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n", 0, b"", Some(E::InvalidContentLength), false),
            case!("empty length", b"HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n", 0, b"", Some(E::InvalidContentLength), false),
            case!("overflowing length", b"HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551616\r\n\r\n", 0, b"", Some(E::InvalidContentLength), false),
            case!("te and cl: chunked wins, close", b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n", 200, b"ab", None, false),
            case!("te chunked not final: until close", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nraw", 200, b"raw", None, false),
            case!("te gzip only: until close", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 1\r\n\r\nraw", 200, b"raw", None, false),
            case!("te split over fields", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n", 200, b"z", None, true),
            case!("te identity ignored", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 2\r\n\r\nok", 200, b"ok", None, true),
            case!("http/1.0 te: until close", b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n1\r\nz\r\n0\r\n\r\n", 200, b"1\r\nz\r\n0\r\n\r\n", None, false),
            case!("bare lf", b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok", 200, b"ok", None, true),
            case!("bare lf chunked", b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n2\nok\n0\n\n", 200, b"ok", None, true),
            case!("mixed line ends", b"HTTP/1.1 200 OK\r\nContent-Length: 2\n\r\nok", 200, b"ok", None, true),
            case!("leading blank lines", b"\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 200, b"ok", None, true),
            case!("no reason", b"HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok", 200, b"ok", None, true),
            case!("obs-fold", b"HTTP/1.1 200 OK\r\nX-Long: a\r\n b\r\nContent-Length: 2\r\n\r\nok", 200, b"ok", None, true),
            case!("space before colon", b"HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok", 200, b"ok", None, true),
            case!("invalid header line ignored", b"HTTP/1.1 200 OK\r\nBad Header: x\r\nContent-Length: 2\r\n\r\nok", 200, b"ok", None, true),
            case!("http/0.9", b"<html><body>hello</body></html>\n\n", 0, b"", Some(E::NotHttp), false),
            case!("http/0.9 no newline", b"<html>", 0, b"", Some(E::NotHttp), false),
            case!("binary garbage", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 0, b"", Some(E::NotHttp), false),
            case!("lowercase http", b"http/1.1 200 OK\r\n\r\n", 0, b"", Some(E::NotHttp), false),
            case!("http/2 version", b"HTTP/2 200\r\n\r\n", 0, b"", Some(E::UnsupportedVersion), false),
            case!("http/1.2 is read as 1.1", b"HTTP/1.2 200 OK\r\nContent-Length: 2\r\n\r\nok", 200, b"ok", None, true),
            case!("http/1.10 is not a version", b"HTTP/1.10 200 OK\r\n\r\n", 0, b"", Some(E::UnsupportedVersion), false),
            case!("http/3.0 version", b"HTTP/3.0 200 OK\r\n\r\n", 0, b"", Some(E::UnsupportedVersion), false),
            case!("bad status", b"HTTP/1.1 2x0 OK\r\n\r\n", 0, b"", Some(E::InvalidStatus), false),
            case!("status below 100", b"HTTP/1.1 099 Odd\r\n\r\n", 0, b"", Some(E::InvalidStatus), false),
            case!("nul in header", b"HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n", 0, b"", Some(E::InvalidHeader), false),
            case!("lone cr in head", b"HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n", 0, b"", Some(E::InvalidHeader), false),
            case!("closed before response", b"", 0, b"", Some(E::ClosedBeforeResponse), false),
            case!("closed after stray line end", b"\r\n", 0, b"", Some(E::ClosedBeforeResponse), false),
            case!("closed in head", b"HTTP/1.1 200 OK\r\nContent-Len", 0, b"", Some(E::IncompleteHead), false),
            case!("closed in length body", b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", 200, b"short", Some(E::IncompleteBody), false),
            case!("closed in chunked body", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", 200, b"hel", Some(E::IncompleteChunkedBody), false),
            case!("closed before last chunk", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", 200, b"hello", Some(E::IncompleteChunkedBody), false),
            case!("bad chunk size", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 200, b"", Some(E::Chunked(ChunkedError::InvalidSize)), false),
            case!("chunk size overflow", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\n", 200, b"", Some(E::Chunked(ChunkedError::SizeOverflow)), false),
        ];
        for case in cases {
            let runs = read_all(case.input, Method::Get, limits());
            let run = &runs[0];
            assert_eq!(run.error, case.error, "{}: error", case.name);
            let status = run.head.as_ref().map_or(0, |h| h.status);
            if case.error.is_none() || case.status != 0 {
                assert_eq!(status, case.status, "{}: status", case.name);
            }
            assert_eq!(run.body, case.body, "{}: body", case.name);
            assert_eq!(run.keep_alive, case.keep_alive, "{}: keep-alive", case.name);
        }
    }

    #[test]
    fn head_request_has_no_body() {
        let input = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nTransfer-Encoding: chunked\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
        let runs = read_all(input, Method::Head, limits());
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].head.as_ref().unwrap().status, 200);
        assert!(runs[0].body.is_empty());
        assert_eq!(runs[1].head.as_ref().unwrap().status, 404);
    }

    #[test]
    fn pipelined_responses_on_one_buffer() {
        let input = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none\
HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\ntwo\r\n0\r\n\r\n\
HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n\
HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nfour and the rest";
        let runs = read_all(input, Method::Get, limits());
        let bodies: Vec<&[u8]> = runs.iter().map(|r| r.body.as_slice()).collect();
        assert_eq!(bodies, [&b"one"[..], b"two", b"", b"four and the rest"]);
        let statuses: Vec<u16> = runs
            .iter()
            .map(|r| r.head.as_ref().unwrap().status)
            .collect();
        assert_eq!(statuses, [200, 200, 304, 200]);
        assert_eq!(runs.iter().map(|r| r.consumed).sum::<usize>(), input.len());
        assert!(runs.iter().all(|r| r.error.is_none()));
    }

    #[test]
    fn feed_stops_at_end_of_response() {
        let input =
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 204 No Content\r\n\r\n";
        let mut reader = ResponseReader::new(Method::Get, limits());
        let mut body = Vec::new();
        let feed = reader.feed(input, &mut body).unwrap();
        assert!(feed.done);
        assert_eq!(&input[feed.consumed..], b"HTTP/1.1 204 No Content\r\n\r\n");
        // A finished reader takes nothing more.
        assert_eq!(
            reader.feed(b"more", &mut body).unwrap(),
            Feed {
                consumed: 0,
                done: true
            }
        );
        assert!(reader.keep_alive());
        assert_eq!(reader.wire_body_bytes(), 2);
    }

    #[test]
    fn head_fields_are_kept_in_order_and_found_case_insensitively() {
        let run = one(b"HTTP/1.1 200 Very OK\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nX-Fold: one\r\n\ttwo\r\nContent-Length: 0\r\n\r\n");
        let head = run.head.unwrap();
        assert_eq!(head.reason, "Very OK");
        assert_eq!(head.minor_version, 1);
        assert_eq!(head.header("SET-COOKIE"), Some(&b"a=1"[..]));
        let cookies: Vec<&[u8]> = head.headers_named("Set-Cookie").collect();
        assert_eq!(cookies, [&b"a=1"[..], b"b=2"]);
        assert_eq!(head.headers[1].0, "set-cookie");
        assert_eq!(head.header("x-fold"), Some(&b"one  \ttwo"[..]));
        assert!(head.header("missing").is_none());
    }

    #[test]
    fn head_caps() {
        let mut small = limits();
        small.max_head_bytes = 40;
        let input = b"HTTP/1.1 200 OK\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
        let runs = read_all(input, Method::Get, small);
        assert_eq!(runs[0].error, Some(HttpError::HeadTooLarge));
        // No empty line ever: the cap still ends it.
        let endless = vec![b'a'; 100];
        let mut stream = b"HTTP/1.1 200 OK\r\nX: ".to_vec();
        stream.extend_from_slice(&endless);
        let runs = read_all(&stream, Method::Get, small);
        assert_eq!(runs[0].error, Some(HttpError::HeadTooLarge));
        // Blank lines use up the cap before the prefix is judged, split or not.
        let mut late = vec![b'\r'; 38];
        late.extend_from_slice(b"HTT\r\r,");
        assert_eq!(
            read_all(&late, Method::Get, small)[0].error,
            Some(HttpError::HeadTooLarge)
        );
        // Endless blank lines count too.
        let runs = read_all(&[b'\n'; 100], Method::Get, small);
        assert_eq!(runs[0].error, Some(HttpError::HeadTooLarge));
        // Exactly at the cap is fine.
        let exact = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: 1\r\n\r\n";
        small.max_head_bytes = exact.len();
        assert_eq!(read_all(exact, Method::Get, small)[0].error, None);
        small.max_head_bytes = exact.len() - 1;
        assert_eq!(
            read_all(exact, Method::Get, small)[0].error,
            Some(HttpError::HeadTooLarge)
        );

        let mut few = limits();
        few.max_headers = 2;
        let input = b"HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n";
        assert_eq!(
            read_all(input, Method::Get, few)[0].error,
            Some(HttpError::TooManyHeaders)
        );
        few.max_headers = 3;
        assert_eq!(read_all(input, Method::Get, few)[0].error, None);
    }

    #[test]
    fn too_many_interim_responses() {
        let mut input = Vec::new();
        for _ in 0..=MAX_INTERIM_RESPONSES {
            input.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
        input.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        assert_eq!(one(&input).error, Some(HttpError::TooManyInterimResponses));
    }

    #[test]
    fn body_cap_truncates_or_aborts() {
        let truncate = ResponseLimits {
            max_body_bytes: 4,
            ..limits()
        };
        let abort = ResponseLimits {
            body_limit_mode: BodyLimitMode::Abort,
            ..truncate
        };
        let inputs: [&[u8]; 3] = [
            b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n012\r\n7\r\n3456789\r\n0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\n\r\n0123456789",
        ];
        for input in inputs {
            let runs = read_all(input, Method::Get, truncate);
            assert_eq!(runs.len(), 1);
            assert_eq!(runs[0].body, b"0123");
            assert!(runs[0].truncated, "{input:?}");
            assert!(!runs[0].keep_alive);
            assert_eq!(runs[0].error, None);
            let runs = read_all(input, Method::Get, abort);
            assert_eq!(runs[0].error, Some(HttpError::BodyTooLarge), "{input:?}");
        }
        // A body exactly at the cap is complete, not truncated.
        let exact: [&[u8]; 3] = [
            b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n0123",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n0123\r\n0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\n\r\n0123",
        ];
        for input in exact {
            for l in [truncate, abort] {
                let runs = read_all(input, Method::Get, l);
                assert_eq!(runs[0].body, b"0123");
                assert!(!runs[0].truncated, "{input:?}");
                assert_eq!(runs[0].error, None, "{input:?}");
            }
        }
        // Abort knows from Content-Length before any body byte.
        let mut reader = ResponseReader::new(Method::Get, abort);
        let err = reader
            .feed(
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n",
                &mut Vec::new(),
            )
            .unwrap_err();
        assert_eq!(err, HttpError::BodyTooLarge);
        assert_eq!(reader.head().unwrap().status, 200);
    }

    #[test]
    fn errors_repeat_and_eof_after_done_is_fine() {
        let mut reader = ResponseReader::new(Method::Get, limits());
        let mut body = Vec::new();
        assert_eq!(
            reader.feed(b"SSH-2.0-OpenSSH\r\n", &mut body),
            Err(HttpError::NotHttp)
        );
        assert_eq!(
            reader.feed(b"HTTP/1.1 200 OK\r\n\r\n", &mut body),
            Err(HttpError::NotHttp)
        );
        assert_eq!(reader.on_eof(), Err(HttpError::NotHttp));
        assert_eq!(reader.error(), Some(HttpError::NotHttp));

        let mut reader = ResponseReader::new(Method::Get, limits());
        reader
            .feed(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", &mut body)
            .unwrap();
        assert!(reader.is_done());
        assert_eq!(reader.on_eof(), Ok(()));
    }

    #[test]
    fn close_delimited_body_ends_at_eof() {
        let mut reader = ResponseReader::new(Method::Get, limits());
        let mut body = Vec::new();
        let feed = reader
            .feed(b"HTTP/1.1 200 OK\r\n\r\nabc", &mut body)
            .unwrap();
        assert!(!feed.done);
        assert_eq!(feed.consumed, 22);
        reader.feed(b"def", &mut body).unwrap();
        assert!(!reader.is_done());
        assert_eq!(reader.on_eof(), Ok(()));
        assert!(reader.is_done());
        assert!(!reader.keep_alive());
        assert_eq!(body, b"abcdef");
        assert_eq!(reader.wire_body_bytes(), 6);
    }

    /// Random splits of random well-formed and damaged streams: feeding in pieces always
    /// equals feeding whole (a property test with a fixed seed, so failures reproduce).
    #[test]
    fn piecewise_feeding_equals_whole_feeding() {
        let templates: [&[u8]; 6] = [
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n0\r\nT: v\r\n\r\n",
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\nContent-Length: 3\n\nabc\r\nHTTP/1.0 200 OK\r\n\r\nrest",
            b"HTTP/1.1 301 Moved\r\nLocation: /x\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1a\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 1\r\n\r\nx",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\nContent-Length: 4\r\n\r\nnope",
        ];
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for _ in 0..400 {
            let template = templates[(next() % templates.len() as u64) as usize];
            let mut input = template.to_vec();
            // Damage one byte in half of the runs.
            if next() % 2 == 0 {
                let at = (next() % input.len() as u64) as usize;
                input[at] = (next() % 256) as u8;
            }
            let small = ResponseLimits {
                max_body_bytes: next() % 40,
                body_limit_mode: if next() % 2 == 0 {
                    BodyLimitMode::Truncate
                } else {
                    BodyLimitMode::Abort
                },
                ..limits()
            };
            let splits: Vec<usize> = (0..5).map(|_| (next() % 9) as usize + 1).collect();
            for l in [limits(), small] {
                let whole = run_responses(&input, &[usize::MAX], Method::Get, l);
                let pieces = run_responses(&input, &splits, Method::Get, l);
                assert_eq!(whole, pieces, "{input:?} split {splits:?}");
            }
        }
    }
}
