//! `Handshaking`: the TLS handshake of an HTTPS connection.

use std::time::Instant;

use rustls::HandshakeKind;

use super::fail::{failed, io_reason};
use super::io::{flush_tls, read_plaintext, ReadEnd, ReadError};
use super::{Conn, Ctx, Handshaking, Phase, Sending, Step};
use crate::fetch::FailReason;

impl Handshaking {
    /// Flushes what rustls wants to send, reads what the server sent, flushes again;
    /// stays until rustls says the handshake is done, then goes on to sending the
    /// request. Every TLS failure (alert, bad certificate, a plain-HTTP server on the
    /// port, a close mid-handshake) is `FailReason::Tls`.
    pub(super) fn step(self, conn: &mut Conn, ctx: &mut Ctx<'_>, now: Instant) -> Step {
        let Some(tls) = conn.tls.as_deref_mut() else {
            return Step::Done(failed(self.ex, None, FailReason::Tls("no session".into())));
        };
        if let Err(e) = flush_tls(&mut conn.stream, tls) {
            return Step::Done(failed(self.ex, None, io_reason(&e)));
        }
        let read = read_plaintext(
            &mut conn.stream,
            Some(&mut *tls),
            ctx.read_buf,
            true,
            |_| true,
        );
        let reason = match read {
            Ok(ReadEnd::Eof) => Some(FailReason::Tls("connection closed during handshake".into())),
            Ok(_) => None,
            Err(ReadError::Tls(e)) => Some(FailReason::Tls(e.to_string())),
            Err(ReadError::Io(e)) => Some(io_reason(&e)),
        };
        if let Some(reason) = reason {
            return Step::Done(failed(self.ex, None, reason));
        }
        if let Err(e) = flush_tls(&mut conn.stream, tls) {
            return Step::Done(failed(self.ex, None, io_reason(&e)));
        }
        if tls.is_handshaking() {
            return conn.wait(Phase::Handshaking(self));
        }
        let mut ex = self.ex;
        ex.timings.tls = Some(now.saturating_duration_since(self.since));
        ex.tls_resumed = tls.handshake_kind() == Some(HandshakeKind::Resumed);
        conn.go(Phase::Sending(Sending {
            ex,
            since: now,
            written: 0,
        }))
    }
}
