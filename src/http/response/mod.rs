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

use crate::ascii::trim_ows;

use super::chunked::{ChunkedDecoder, ChunkedError, ChunkedLimits};
use super::request::Method;

mod head;

pub use head::{charset_of, ResponseHead};
use head::{check_http_prefix, find_head_end, parse_head_bytes};

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
        self.feed_until(input, body, false)
    }

    /// Feeds bytes up to the end of the final (non-1xx) head and no further, so that
    /// the caller can choose where the body goes (and how much room it needs) from the
    /// head before any body byte arrives. Once the head is in, consumes nothing more
    /// (use [`ResponseReader::feed`]); `done` when the response has no body.
    ///
    /// # Errors
    /// As [`ResponseReader::feed`].
    pub fn feed_head(&mut self, input: &[u8]) -> Result<Feed, HttpError> {
        self.feed_until(input, &mut Vec::new(), true)
    }

    fn feed_until(
        &mut self,
        input: &[u8],
        body: &mut Vec<u8>,
        head_only: bool,
    ) -> Result<Feed, HttpError> {
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
                    self.read_head(rest)
                }
                State::Body(_) if head_only => {
                    return Ok(Feed {
                        consumed: pos,
                        done: false,
                    })
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

    /// The final response head, moved out of the reader (no copy of its fields).
    pub fn into_head(self) -> Option<ResponseHead> {
        self.head
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
    fn read_head(&mut self, input: &[u8]) -> Result<usize, HttpError> {
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
mod tests;
