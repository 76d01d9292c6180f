//! `ReadingHead` and `ReadingBody`: receiving the response. Both read what the socket
//! has and feed it to the sans-IO `ResponseReader`; once the head is complete, body bytes
//! go through the `ContentDecoder` (the head says which). The connection waits in
//! `ReadingHead` until the head is in, then in `ReadingBody`; the response ends in an
//! outcome, with the connection reusable or not.

use std::time::Instant;

use super::exchange::{build_outcome, Exchange, ResponseProgress};
use super::fail::{decode_reason, failed, http_reason, io_reason};
use super::io::{read_plaintext, ReadEnd, ReadError};
use super::{After, Conn, Ctx, Phase, Readiness, Reading, ReadingBody, ReadingHead, Step};
use crate::fetch::FailReason;
use crate::fetch::FetchLimits;
use crate::http::{ContentDecoder, ContentEncoding, Feed, Method};

/// Largest body buffer reserved up front from a declared Content-Length; bigger bodies
/// grow as they arrive, so a lying header cannot make us allocate.
const BODY_RESERVE_MAX_BYTES: u64 = 1 << 20;

impl ReadingHead {
    /// Reads until the head is complete (then on into the body, in the same read) or the
    /// socket would block. Silence here is `first_byte_timeout`, then
    /// `read_idle_timeout` once bytes came (`Conn::deadline`).
    pub(super) fn step(
        self,
        conn: &mut Conn,
        ctx: &mut Ctx<'_>,
        ready: Readiness,
        now: Instant,
    ) -> Step {
        read_response(conn, ctx, self.r, None, ready, now)
    }
}

impl ReadingBody {
    /// Reads body bytes until the framing says the body is complete, the peer closes,
    /// or the socket would block.
    pub(super) fn step(
        self,
        conn: &mut Conn,
        ctx: &mut Ctx<'_>,
        ready: Readiness,
        now: Instant,
    ) -> Step {
        read_response(conn, ctx, self.r, Some(self.decoder), ready, now)
    }
}

/// How feeding stopped.
enum Fed {
    More,
    Done { leftover: bool },
    Failed(FailReason),
}

/// Reads what the socket has and feeds it to the response reader and decoder.
fn read_response(
    conn: &mut Conn,
    ctx: &mut Ctx<'_>,
    r: Reading,
    mut decoder: Option<ContentDecoder>,
    ready: Readiness,
    now: Instant,
) -> Step {
    let Reading { ex, mut rx } = r;
    let limits = ex.job.req.limits;
    let mut state = Fed::More;
    let body_tmp = &mut *ctx.body_tmp;
    let drain_fully = ready.read_closed || ready.error;
    let read = read_plaintext(
        &mut conn.stream,
        conn.tls.as_deref_mut(),
        ctx.read_buf,
        drain_fully,
        |chunk| {
            if rx.first_byte_at.is_none() {
                rx.first_byte_at = Some(now);
                rx.rate_window_start = now;
            }
            rx.last_read = now;
            rx.rate_window_bytes += chunk.len() as u64;
            state = feed(&mut rx, &mut decoder, chunk, body_tmp, &limits);
            matches!(state, Fed::More)
        },
    );
    let got_bytes = rx.first_byte_at.is_some();
    // A reused connection that ends before any byte is the classic keep-alive race
    // (the server closed it idle), retried at once on a fresh one; but not on a
    // connection opened for another name (shared hosting): there the request reached
    // the host's server, and an immediate second request to the host would break its
    // politeness (the demo's referee saw two starts 437 us apart). The crawl retries
    // such a failure after its backoff.
    let retryable = ex.reused && !got_bytes && !ex.job.shared_conn;
    let eof = match read {
        Ok(ReadEnd::WouldBlock) => false,
        Ok(ReadEnd::Stopped) => false,
        Ok(ReadEnd::Eof) => true,
        Err(ReadError::Tls(e)) => {
            return Step::Done(failed(ex, Some(rx), FailReason::Tls(e.to_string())));
        }
        Err(ReadError::Io(e)) => {
            return Step::Done(After::Failed {
                ex,
                reading: Some(rx),
                reason: io_reason(&e),
                retryable,
                next_addr: false,
            });
        }
    };
    match state {
        Fed::Failed(reason) => return Step::Done(failed(ex, Some(rx), reason)),
        Fed::Done { .. } if misdirected(&ex, &rx) => {
            // RFC 9110 §15.5.20: the server will not answer this name on a connection
            // opened for another; ask again on a fresh one (the retry path).
            return Step::Done(After::Failed {
                ex,
                reading: Some(rx),
                reason: FailReason::ClosedEarly,
                retryable: true,
                next_addr: false,
            });
        }
        Fed::Done { leftover } => {
            let closing = leftover || ready.read_closed;
            return Step::Done(finish(conn, ex, rx, decoder, closing, now));
        }
        Fed::More => {}
    }
    if eof {
        return Step::Done(match rx.reader.on_eof() {
            Ok(()) if rx.reader.is_done() => finish(conn, ex, rx, decoder, true, now),
            Ok(()) | Err(_) if !got_bytes => After::Failed {
                ex,
                reading: Some(rx),
                reason: FailReason::ClosedEarly,
                retryable,
                next_addr: false,
            },
            Ok(()) => failed(ex, Some(rx), FailReason::ClosedEarly),
            Err(e) => failed(ex, Some(rx), http_reason(e)),
        });
    }
    let r = Reading { ex, rx };
    conn.wait(match decoder {
        None => Phase::ReadingHead(ReadingHead { r }),
        Some(decoder) => Phase::ReadingBody(ReadingBody { r, decoder }),
    })
}

/// A 421 (Misdirected Request) to a request sent on a connection opened for another
/// host name (shared hosting), which may be retried: idempotent, not retried yet.
fn misdirected(ex: &Exchange, rx: &ResponseProgress) -> bool {
    ex.reused
        && ex.job.shared_conn
        && ex.job.retries == 0
        && matches!(ex.job.req.head.method, Method::Get | Method::Head)
        && rx.reader.head().is_some_and(|h| h.status == 421)
}

/// Feeds one chunk of plaintext to the reader; body bytes go through the decoder.
///
/// The head is read first ([`crate::http::ResponseReader::feed_head`]), so that the body's
/// buffer is chosen, and sized from Content-Length, before its first byte arrives.
/// Body bytes are then copied once, from the socket buffer to where they stay:
/// - identity coding: straight into `body`, which is also the payload;
/// - a content coding, payload kept (WARC on): into `payload`, and decoded from there
///   into `body`;
/// - a content coding, payload not kept: into the scratch `body_tmp`, decoded into
///   `body`.
fn feed(
    r: &mut ResponseProgress,
    decoder: &mut Option<ContentDecoder>,
    chunk: &[u8],
    body_tmp: &mut Vec<u8>,
    limits: &FetchLimits,
) -> Fed {
    let mut carried = std::mem::take(&mut r.carry);
    let input: &[u8] = if carried.is_empty() {
        chunk
    } else {
        carried.extend_from_slice(chunk);
        &carried
    };
    let mut pos = 0usize;
    loop {
        let rest = input.get(pos..).unwrap_or_default();
        let fed = if decoder.is_none() {
            match r.reader.feed_head(rest) {
                Ok(fed) => fed,
                Err(e) => return Fed::Failed(http_reason(e)),
            }
        } else {
            match feed_body(r, decoder, rest, body_tmp, limits) {
                Ok(fed) => fed,
                Err(reason) => return Fed::Failed(reason),
            }
        };
        r.wire_bytes += fed.consumed as u64;
        pos += fed.consumed;
        if decoder.is_none() {
            if let Some(head) = r.reader.head() {
                match ContentEncoding::from_header(head.header("content-encoding")) {
                    Ok(enc) => {
                        // One allocation for the body instead of doubling from zero.
                        let declared =
                            head.content_length()
                                .unwrap_or(0)
                                .min(limits.decode.max_decoded_bytes)
                                .min(limits.response.max_body_bytes)
                                .min(BODY_RESERVE_MAX_BYTES) as usize;
                        if enc == ContentEncoding::Identity {
                            r.body.reserve(declared);
                            r.identity = true;
                        } else if limits.keep_payload {
                            r.payload.reserve(declared);
                        }
                        *decoder = Some(ContentDecoder::new(enc, limits.decode));
                    }
                    Err(e) => return Fed::Failed(decode_reason(e)),
                }
            }
        }
        if fed.done {
            return Fed::Done {
                leftover: pos < input.len(),
            };
        }
        if pos >= input.len() {
            return Fed::More;
        }
        if fed.consumed == 0 {
            // The reader needs more than it was given (a partial head): keep the rest.
            let rest = input.get(pos..).unwrap_or_default();
            if rest.len() > limits.response.max_head_bytes.saturating_add(4096) {
                return Fed::Failed(FailReason::TooLarge);
            }
            let rest = rest.to_vec();
            r.carry = rest;
            return Fed::More;
        }
    }
}

/// Feeds body bytes to the reader, into the buffer the coding calls for (see [`feed`]),
/// and decodes what a content coding needs decoded.
fn feed_body(
    r: &mut ResponseProgress,
    decoder: &mut Option<ContentDecoder>,
    input: &[u8],
    body_tmp: &mut Vec<u8>,
    limits: &FetchLimits,
) -> Result<Feed, FailReason> {
    if r.identity {
        let fed = r.reader.feed(input, &mut r.body).map_err(http_reason)?;
        if r.body.len() as u64 > limits.decode.max_decoded_bytes {
            return Err(FailReason::TooLarge);
        }
        return Ok(fed);
    }
    let out = if limits.keep_payload {
        &mut r.payload
    } else {
        body_tmp.clear();
        body_tmp
    };
    let start = out.len();
    let fed = r.reader.feed(input, out).map_err(http_reason)?;
    let new = out.get(start..).unwrap_or_default();
    if let Some(dec) = decoder.as_mut() {
        if !new.is_empty() {
            dec.push(new, &mut r.body).map_err(decode_reason)?;
        }
    }
    Ok(fed)
}

/// The response is complete: finish decoding and decide whether the connection is
/// reusable.
fn finish(
    conn: &mut Conn,
    ex: Exchange,
    mut rx: Box<ResponseProgress>,
    decoder: Option<ContentDecoder>,
    closing: bool,
    now: Instant,
) -> After {
    if let Some(mut dec) = decoder {
        if let Err(e) = dec.finish(&mut rx.body) {
            return failed(ex, Some(rx), decode_reason(e));
        }
    }
    let reusable = !closing && rx.reader.keep_alive();
    let outcome = build_outcome(ex, Some(*rx), Some(conn.peer), None, now);
    After::Finished { outcome, reusable }
}
