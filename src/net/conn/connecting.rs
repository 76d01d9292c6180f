//! `Connecting`: a non-blocking `connect()` in progress.

use std::io;
use std::time::Instant;

use super::fail::{connect_failed, failed};
use super::{Conn, Connecting, Ctx, Handshaking, Phase, Readiness, Sending, Step};
use crate::fetch::FailReason;

impl Connecting {
    /// Waits for the socket to become writable, then checks the connect's result the
    /// way mio's `TcpStream::connect` documents: `take_error()`, then `peer_addr()`
    /// (`NotConnected`: not yet, wait again). Connected: HTTPS goes on to the TLS
    /// handshake, HTTP straight to sending the request. A failure lets the loop try the
    /// host's next address.
    pub(super) fn step(
        self,
        conn: &mut Conn,
        ctx: &mut Ctx<'_>,
        ready: Readiness,
        now: Instant,
    ) -> Step {
        if !ready.writable && !ready.error && !ready.read_closed {
            return conn.wait(Phase::Connecting(self));
        }
        match conn.stream.take_error() {
            Ok(None) => {}
            Ok(Some(e)) | Err(e) => return Step::Done(connect_failed(self.ex, &e)),
        }
        match conn.stream.peer_addr() {
            Ok(_) => {}
            Err(e)
                if e.kind() == io::ErrorKind::NotConnected
                    || e.kind() == io::ErrorKind::WouldBlock =>
            {
                return conn.wait(Phase::Connecting(self));
            }
            Err(e) => return Step::Done(connect_failed(self.ex, &e)),
        }
        let mut ex = self.ex;
        ex.timings.connect = Some(now.saturating_duration_since(self.since));
        if !ex.job.key.https {
            return conn.go(Phase::Sending(Sending {
                ex,
                since: now,
                written: 0,
            }));
        }
        match ctx.tls.connect(&ex.job.key.host) {
            Ok(c) => conn.tls = Some(Box::new(c)),
            Err(e) => return Step::Done(failed(ex, None, FailReason::Tls(e.to_string()))),
        }
        conn.go(Phase::Handshaking(Handshaking { ex, since: now }))
    }
}
