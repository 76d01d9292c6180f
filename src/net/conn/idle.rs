//! `Idle`: a connection in the keep-alive pool.

use super::io::{read_plaintext, ReadEnd};
use super::{After, Conn, Ctx, Idle, Phase, Readiness, Step};

impl Idle {
    /// An idle connection stays registered for READABLE. Readable while idle means the
    /// server closed, reset, or sent bytes nobody asked for: the connection is dropped
    /// (`After::IdleClosed`). Only TLS housekeeping records (session tickets) keep it
    /// pooled.
    pub(super) fn step(self, conn: &mut Conn, ctx: &mut Ctx<'_>, ready: Readiness) -> Step {
        if !ready.readable && !ready.error && !ready.read_closed {
            return conn.wait(Phase::Idle(self));
        }
        let mut data = false;
        let read = read_plaintext(
            &mut conn.stream,
            conn.tls.as_deref_mut(),
            ctx.read_buf,
            true,
            |_| {
                data = true;
                false
            },
        );
        if matches!(read, Ok(ReadEnd::WouldBlock)) && !data && !ready.read_closed {
            return conn.wait(Phase::Idle(self));
        }
        Step::Done(After::IdleClosed)
    }
}
