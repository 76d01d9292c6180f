//! `Sending`: writing the request head.

use std::io::Write as _;
use std::time::Instant;

use super::exchange::ResponseProgress;
use super::fail::io_reason;
use super::io::{flush_tls, write_plain};
use super::{After, Conn, Phase, Reading, ReadingHead, Sending, Step};
use crate::http::ResponseReader;

impl Sending {
    /// Writes the rest of the request (plain: straight to the socket; TLS: all of it to
    /// rustls once, then flushes records). Stays while the socket would block; when all
    /// is out, the response clock starts and the connection waits for the head. A write
    /// error on a reused connection is retryable (the server may have closed it just as
    /// we sent).
    pub(super) fn step(mut self, conn: &mut Conn, now: Instant) -> Step {
        let sent = match conn.tls.as_deref_mut() {
            None => write_plain(&mut conn.stream, &self.ex.job.wire, &mut self.written),
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
                        rx: ResponseProgress::new(reader, now),
                    },
                }))
            }
        }
    }
}
