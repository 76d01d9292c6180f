//! `Tunneling`: an HTTP proxy's `CONNECT host:port` for an `https://` origin, then TLS
//! to the origin through the tunnel (certificates checked against the origin's name,
//! as on a direct connection: rustls does not care what lies between).

use std::time::Instant;

use super::connecting::to_origin;
use super::fail::{failed, proxy_failed, verdict_reason};
use super::io::{shake, Shook};
use super::{Conn, Ctx, Phase, Readiness, Step, Tunneling};
use crate::fetch::ProxyFailKind;
use crate::net::egress::status::ReplyClass;

impl Tunneling {
    /// Writes the request, reads the proxy's reply head. A 2xx opens the tunnel; bytes
    /// after its head are the proxy speaking out of turn (`proxy-protocol`). Any other
    /// reply is the proxy's verdict ([`verdict_reason`]); a close or reset before the
    /// reply is `proxy-unreachable`.
    pub(super) fn step(
        mut self,
        conn: &mut Conn,
        ctx: &mut Ctx<'_>,
        _ready: Readiness,
        now: Instant,
    ) -> Step {
        let done = match shake(&mut conn.stream, ctx.read_buf, &mut self.client) {
            Shook::Wait => return conn.wait(Phase::Tunneling(self)),
            Shook::Failed(reason) => return Step::Done(failed(self.ex, None, reason)),
            Shook::Done(done) => done,
        };
        match done.reply.class {
            ReplyClass::Tunnel if done.surplus > 0 => proxy_failed(
                self.ex,
                ProxyFailKind::Protocol,
                "bytes after the CONNECT reply",
            ),
            ReplyClass::Tunnel => {
                let mut ex = self.ex;
                ex.timings.proxy = Some(now.saturating_duration_since(self.since));
                to_origin(conn, ctx, ex, now)
            }
            ReplyClass::Failed {
                verdict,
                error_type,
            } => {
                let detail =
                    error_type.unwrap_or_else(|| format!("CONNECT answered {}", done.reply.status));
                Step::Done(failed(self.ex, None, verdict_reason(verdict, &detail)))
            }
            ReplyClass::Answer => proxy_failed(
                self.ex,
                ProxyFailKind::Protocol,
                "CONNECT answered as a request",
            ),
        }
    }
}
