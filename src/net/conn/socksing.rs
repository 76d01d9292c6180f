//! `Socksing`: a SOCKS5 handshake (RFC 1928, with RFC 1929 username/password), then
//! TLS to the origin through the tunnel for `https://`, or the request for `http://`.
//! `socks5` sends the origin's address trawl resolved (`Conn::origin`), `socks5h` its
//! name, for the proxy to resolve.

use std::time::Instant;

use super::connecting::to_origin;
use super::fail::{failed, proxy_failed};
use super::io::{shake, Shook};
use super::{Conn, Ctx, Phase, Readiness, Socksing, Step};
use crate::fetch::ProxyFailKind;

impl Socksing {
    /// Writes each message and reads each reply (method, authentication, connect). A
    /// refusal is the proxy's verdict (`fail::verdict_reason`: the destination's REP
    /// codes are the origin's failures); bytes after the connect reply are `proxy-protocol`;
    /// a close or reset before it is `proxy-unreachable`.
    pub(super) fn step(
        mut self,
        conn: &mut Conn,
        ctx: &mut Ctx<'_>,
        _ready: Readiness,
        now: Instant,
    ) -> Step {
        let done = match shake(&mut conn.stream, ctx.read_buf, &mut *self.client) {
            Shook::Wait => return conn.wait(Phase::Socksing(self)),
            Shook::Failed(reason) => return Step::Done(failed(self.ex, None, reason)),
            Shook::Done(done) => done,
        };
        if done.surplus > 0 {
            return proxy_failed(
                self.ex,
                ProxyFailKind::Protocol,
                "bytes after the SOCKS5 reply",
            );
        }
        let mut ex = self.ex;
        ex.timings.proxy = Some(now.saturating_duration_since(self.since));
        to_origin(conn, ctx, ex, now)
    }
}
