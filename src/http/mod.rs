//! HTTP/1.1 client protocol, sans-IO: the request writer, the response reader, the
//! chunked decoder, content decoding, and the header helpers (HTTP-date, media type,
//! charset, `Retry-After`) everyone else reads responses with; and the request parser
//! the metrics and status listener reads requests with.
//!
//! A response is parsed here once. The fetcher hands the engine a [`ResponseHead`]
//! (typed fields plus the bytes they came from), the payload as it came off the wire
//! and the decoded body, the latter two as [`SharedBytes`]; no other module parses a
//! head or de-chunks a body again (`docs/architecture.md`, "Copies of a body").
//!
//! Nothing here touches a socket or a clock. `net/` writes [`write_request`]'s bytes to
//! a connection, feeds what it reads to a [`ResponseReader`], and pushes the body through
//! a [`ContentDecoder`]. Every input is bounded ([`ResponseLimits`], [`DecodeLimits`]) and
//! every malformation is a typed error ([`HttpError`], [`DecodeError`]). The framing
//! rules and RFC 9112 choices are written up in `docs/http.md`.

// Every file below reads bytes from the network or the disk: no slice indexing and no
// panics (STYLE.md §5). Tests are exempt through clippy.toml.
#![deny(clippy::indexing_slicing, clippy::expect_used, clippy::panic)]

pub mod chunked;
pub mod date;
pub mod decode;
mod fields;
pub mod incoming_request;
pub mod request;
pub mod response;
mod shared;

pub use date::parse_http_date;
pub use decode::{ContentDecoder, ContentEncoding, DecodeError, DecodeLimits};
pub use incoming_request::{IncomingRequest, RequestLimits, RequestParseError};
pub use request::{write_request, Method, RequestHead};
pub use response::{
    charset_of, BodyLimitMode, Feed, HttpError, ResponseHead, ResponseLimits, ResponseReader,
};
pub use shared::SharedBytes;

/// One response reader run over `data` fed in pieces of the given sizes (cycled; a size
/// of 0 counts as 1), as a keep-alive connection would: each completed response that
/// allows reuse is followed by a fresh reader on the remaining bytes. Returns, per
/// response, its head, body, error and flags. Shared by the fuzz entry point and tests.
#[doc(hidden)]
pub fn run_responses(
    data: &[u8],
    splits: &[usize],
    method: Method,
    limits: ResponseLimits,
) -> Vec<ResponseRun> {
    let mut runs = Vec::new();
    let mut pos = 0usize;
    let mut split_index = 0usize;
    // Each response consumes at least one byte or stops the loop, so this terminates.
    loop {
        let mut reader = ResponseReader::new(method, limits);
        let mut body = Vec::new();
        let mut error = None;
        let start = pos;
        while pos < data.len() && !reader.is_done() {
            let size = splits
                .get(split_index % splits.len().max(1))
                .copied()
                .unwrap_or(usize::MAX)
                .max(1);
            split_index += 1;
            let end = pos.saturating_add(size).min(data.len());
            let mut chunk = data.get(pos..end).unwrap_or_default();
            // Feed until the reader takes no more of this chunk.
            loop {
                match reader.feed(chunk, &mut body) {
                    Ok(feed) => {
                        pos += feed.consumed;
                        chunk = chunk.get(feed.consumed..).unwrap_or_default();
                        if feed.done || chunk.is_empty() || feed.consumed == 0 {
                            break;
                        }
                    }
                    Err(e) => {
                        error = Some(e);
                        break;
                    }
                }
            }
            if error.is_some() || (!reader.is_done() && !chunk.is_empty()) {
                break;
            }
        }
        if error.is_none() && !reader.is_done() && pos >= data.len() {
            error = reader.on_eof().err();
        }
        runs.push(ResponseRun {
            head: reader.head().cloned(),
            body,
            error,
            keep_alive: reader.keep_alive(),
            truncated: reader.body_truncated(),
            // Consumption before an error depends on the piece sizes; it is not compared.
            consumed: if error.is_some() { 0 } else { pos - start },
        });
        if error.is_some() || !reader.keep_alive() || pos >= data.len() || pos == start {
            return runs;
        }
    }
}

/// What [`run_responses`] saw of one response.
#[doc(hidden)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResponseRun {
    pub head: Option<ResponseHead>,
    pub body: Vec<u8>,
    pub error: Option<HttpError>,
    pub keep_alive: bool,
    pub truncated: bool,
    pub consumed: usize,
}

/// Fuzz entry point for the response reader. Never panics unless the reader is wrong.
///
/// Layout: byte 0 holds flags (bit 0: HEAD request; bit 1: abort on body cap; bit 2:
/// small caps), byte 1 a feed size (0: whole buffer), the rest is the server's byte
/// stream. The stream is read whole and in pieces; both must agree exactly, and each
/// body is pushed through the content decoder its head names.
pub fn fuzz_response(data: &[u8]) {
    let [flags, split, stream @ ..] = data else {
        return;
    };
    let method = if flags & 1 != 0 {
        Method::Head
    } else {
        Method::Get
    };
    let mut limits = ResponseLimits {
        body_limit_mode: if flags & 2 != 0 {
            BodyLimitMode::Abort
        } else {
            BodyLimitMode::Truncate
        },
        ..ResponseLimits::default()
    };
    if flags & 4 != 0 {
        limits.max_head_bytes = 256;
        limits.max_headers = 4;
        limits.max_body_bytes = 64;
    }
    let whole = run_responses(stream, &[usize::MAX], method, limits);
    let pieces = run_responses(stream, &[usize::from(*split).max(1)], method, limits);
    assert_eq!(whole, pieces, "feeding in pieces changed the result");
    let ones = run_responses(stream, &[1], method, limits);
    assert_eq!(whole, ones, "feeding byte by byte changed the result");
    let mut consumed = 0usize;
    for run in &whole {
        // Caps hold, and reuse is only offered after a clean, complete response.
        assert!(run.body.len() as u64 <= limits.max_body_bytes);
        assert!(!run.truncated || run.body.len() as u64 == limits.max_body_bytes);
        assert!(!run.keep_alive || (run.error.is_none() && !run.truncated && run.head.is_some()));
        if let Some(head) = &run.head {
            assert!(head.status >= 200 && head.headers.len() <= limits.max_headers);
            // The bytes kept for the WARC are the head: they parse to the same values,
            // and each recorded field position holds that field's name.
            assert_eq!(ResponseHead::parse(&head.raw).as_ref(), Ok(head));
            for (name, _) in &head.headers {
                assert!(head
                    .field_name_ranges(name)
                    .any(|r| head.raw.get(r) == Some(name.as_bytes())));
            }
            let bodiless = method == Method::Head || head.status == 204 || head.status == 304;
            assert!(!bodiless || run.body.is_empty());
        }
        consumed += run.consumed;
    }
    assert!(consumed <= stream.len());
    let decode_limits = DecodeLimits {
        max_decoded_bytes: 1 << 20,
        max_expansion_ratio: 100,
    };
    for run in &whole {
        let value = run.head.as_ref().and_then(|h| h.header("content-encoding"));
        if let Ok(encoding) = ContentEncoding::from_header(value) {
            let mut decoder = ContentDecoder::new(encoding, decode_limits);
            let mut out = Vec::new();
            if decoder.push(&run.body, &mut out).is_ok() {
                // An error here is an outcome like any other.
                let _ = decoder.finish(&mut out);
            }
            assert!(
                out.len() as u64
                    <= decode_limits.max_decoded_bytes + decode::OUTPUT_STEP_BYTES as u64
            );
        }
    }
}

/// Fuzz entry point for the chunked decoder. Never panics unless the decoder is wrong.
///
/// Layout: byte 0 is a feed size (0: whole buffer), the rest a chunked body. Decoding it
/// whole, in pieces and byte by byte must give the same data, consumption and error.
pub fn fuzz_chunked(data: &[u8]) {
    let [split, body @ ..] = data else {
        return;
    };
    let whole = run_chunked(body, usize::MAX);
    let pieces = run_chunked(body, usize::from(*split).max(1));
    let ones = run_chunked(body, 1);
    assert_eq!(whole, pieces, "feeding in pieces changed the result");
    assert_eq!(whole, ones, "feeding byte by byte changed the result");
    // Decoding with a data cap returns a prefix of the data.
    let mut decoder = chunked::ChunkedDecoder::default();
    let mut pos = 0usize;
    let mut capped = Vec::new();
    while let Some(rest) = body.get(pos..).filter(|r| !r.is_empty()) {
        match decoder.step(rest, 3) {
            Ok(step) => {
                assert!(step.data.end <= step.consumed && step.data.len() <= 3);
                capped.extend_from_slice(rest.get(step.data.clone()).unwrap_or_default());
                pos += step.consumed;
                if step.done || step.consumed == 0 {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    assert!(whole.0.starts_with(&capped) || capped.starts_with(&whole.0));
}

/// Fuzz entry point for the request parser. Never panics unless the parser is wrong.
///
/// Layout: byte 0 holds flags (bit 0: small caps, 64 bytes and 2 fields), byte 1 a step
/// (0 counts as 1), the rest is what a client sent. The parse of the whole buffer must
/// agree with the parses of its growing prefixes, as a server that reads in pieces
/// calls it: every prefix is "not complete yet" or gives the whole buffer's answer.
pub fn fuzz_request(data: &[u8]) {
    let [flags, step, stream @ ..] = data else {
        return;
    };
    let limits = if flags & 1 != 0 {
        RequestLimits {
            max_head_bytes: 64,
            max_headers: 2,
        }
    } else {
        RequestLimits::default()
    };
    let whole = IncomingRequest::parse(stream, limits);
    let step = usize::from(*step).max(1);
    let mut end = 0usize;
    while end < stream.len() {
        let prefix = IncomingRequest::parse(stream.get(..end).unwrap_or_default(), limits);
        match &prefix {
            Ok(None) => {}
            // A complete head or an error in a prefix is final: more bytes change nothing.
            other => {
                assert_eq!(other, &whole, "a prefix of {end} bytes decided differently");
                break;
            }
        }
        end += step;
    }
    match whole {
        Ok(Some((head, len))) => {
            assert!(len <= stream.len() && len <= limits.max_head_bytes);
            assert!(head.headers.len() <= limits.max_headers);
            assert!(head.minor_version <= 1 && !head.target.is_empty());
            assert!(!head.method.is_empty() && !head.method.contains([' ', '\r', '\n']));
            assert!(!head.target.contains([' ', '\r', '\n']));
            assert!(head.headers_named("host").count() <= 1);
            // The head's own bytes parse to the same head.
            let own = IncomingRequest::parse(stream.get(..len).unwrap_or_default(), limits);
            assert_eq!(own, Ok(Some((head, len))));
        }
        Ok(None) => assert!(stream.len() < limits.max_head_bytes),
        Err(_) => {}
    }
}

/// Decodes `body` in pieces of `size`: (data, consumed, done, error).
fn run_chunked(body: &[u8], size: usize) -> (Vec<u8>, usize, bool, Option<chunked::ChunkedError>) {
    let mut decoder = chunked::ChunkedDecoder::default();
    let mut out = Vec::new();
    let mut pos = 0usize;
    for piece in body.chunks(size.max(1)) {
        match decoder.decode(piece, &mut out) {
            Ok((consumed, done)) => {
                pos += consumed;
                if done {
                    return (out, pos, true, None);
                }
            }
            // Consumption before an error depends on the piece sizes; it is not compared.
            Err(e) => return (out, 0, false, Some(e)),
        }
    }
    (out, pos, false, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `net/` may hand connections (and their readers and decoders) across threads.
    #[test]
    fn protocol_state_is_send() {
        fn assert_send<T: Send>() {}
        assert_send::<ResponseReader>();
        assert_send::<ContentDecoder>();
        assert_send::<RequestHead>();
    }

    /// Readers live in every connection that is reading; keep them small (the head
    /// buffer and decoder state are heap-allocated only while needed).
    #[test]
    fn reader_is_small() {
        let reader = std::mem::size_of::<ResponseReader>();
        let decoder = std::mem::size_of::<ContentDecoder>();
        println!("ResponseReader {reader} bytes, ContentDecoder {decoder} bytes");
        assert!(reader <= 256, "ResponseReader is {reader} bytes");
        assert!(decoder <= 128, "ContentDecoder is {decoder} bytes");
    }
}
