//! `Sending`: writing the request head.

use std::io::Write as _;
use std::time::Instant;

use super::exchange::{Job, ResponseProgress};
use super::fail::io_reason;
use super::io::{flush_tls, write_plain};
use super::{After, Conn, Phase, Reading, ReadingHead, Sending, Step};
use crate::http::ResponseReader;
use crate::net::egress::secret::Secret;

impl Sending {
    /// Writes the rest of the request (plain: straight to the socket; TLS: all of it to
    /// rustls once, then flushes records). Stays while the socket would block; when all
    /// is out, the response clock starts and the connection waits for the head. A write
    /// error on a reused connection is retryable (the server may have closed it just as
    /// we sent).
    pub(super) fn step(mut self, conn: &mut Conn, now: Instant) -> Step {
        let sent = match conn.tls.as_deref_mut() {
            None => match conn.via.as_deref().filter(|v| v.is_http()) {
                None => write_plain(&mut conn.stream, &self.ex.job.wire, &mut self.written),
                Some(via) => {
                    let wire = absolute_form(&self.ex.job, via.basic.as_ref());
                    write_plain(&mut conn.stream, wire.expose(), &mut self.written)
                }
            },
            Some(tls) => {
                let mut r = Ok(());
                if self.written < self.ex.job.wire.len() {
                    r = tls.writer().write_all(&self.ex.job.wire);
                    self.written = self.ex.job.wire.len();
                }
                r.and_then(|()| flush_tls(&mut conn.stream, tls))
                    .map(|()| !tls.wants_write())
            }
        };
        match sent {
            Err(e) => {
                let retryable = self.ex.reused;
                Step::Done(After::Failed {
                    reason: io_reason(&e),
                    ex: self.ex,
                    reading: None,
                    retryable,
                    next_addr: false,
                })
            }
            Ok(false) => conn.wait(Phase::Sending(self)),
            Ok(true) => {
                let req = &self.ex.job.req;
                let reader = ResponseReader::new(req.head.method, req.limits.response);
                conn.wait(Phase::ReadingHead(ReadingHead {
                    r: Reading {
                        ex: self.ex,
                        rx: Box::new(ResponseProgress::new(reader, now)),
                    },
                }))
            }
        }
    }
}

/// A plain-HTTP request as an HTTP proxy takes it (RFC 9112 §3.2.2): the request line
/// in absolute form (`GET http://host[:port]/path HTTP/1.1`), then the
/// `Proxy-Authorization` line when the route has credentials, then the rest of the
/// head as `Job::wire` holds it. Built on the wire only, and a [`Secret`]: the
/// credentials never reach `Job::wire`, the outcome's `request` or a WARC record.
/// Rebuilt on each write attempt (`written` counts over these bytes); only proxied
/// plain requests pay for it.
pub(super) fn absolute_form(job: &Job, auth: Option<&Secret>) -> Secret {
    let wire: &[u8] = &job.wire;
    let key = &job.key;
    let auth = auth.map_or(&[][..], Secret::expose);
    let mut out = Vec::with_capacity(wire.len() + key.host.len() + auth.len() + 16);
    let method_end = wire.iter().position(|&b| b == b' ');
    let line_end = wire.windows(2).position(|w| w == b"\r\n").map(|i| i + 2);
    match (method_end, line_end) {
        (Some(m), Some(e)) if m < e && wire.get(m + 1) == Some(&b'/') => {
            out.extend_from_slice(wire.get(..=m).unwrap_or_default());
            out.extend_from_slice(b"http://");
            out.extend_from_slice(key.host.as_bytes());
            if key.port != 80 {
                out.extend_from_slice(format!(":{}", key.port).as_bytes());
            }
            out.extend_from_slice(wire.get(m + 1..e).unwrap_or_default());
            out.extend_from_slice(auth);
            out.extend_from_slice(wire.get(e..).unwrap_or_default());
        }
        // Not an origin-form request line (`OPTIONS *`): sent as it is, with the
        // credentials after it.
        (_, Some(e)) => {
            out.extend_from_slice(wire.get(..e).unwrap_or_default());
            out.extend_from_slice(auth);
            out.extend_from_slice(wire.get(e..).unwrap_or_default());
        }
        _ => out.extend_from_slice(wire),
    }
    Secret::new(out)
}
