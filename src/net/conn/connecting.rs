//! `Connecting`: a non-blocking `connect()` in progress.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::time::Instant;

use super::exchange::Exchange;
use super::fail::{connect_failed, failed, proxy_connect_reason, verdict_reason};
use super::{
    Conn, Connecting, Ctx, Handshaking, Phase, Readiness, Sending, Socksing, Step, Tunneling,
};
use crate::fetch::FailReason;
use crate::net::egress::connect::ConnectClient;
use crate::net::egress::socks5::{Socks5Client, Target};
use crate::net::egress::status::ProxyVerdict;
use crate::net::egress::url::ProxyKind;

impl Connecting {
    /// Waits for the socket to become writable, then checks the connect's result the
    /// way mio's `TcpStream::connect` documents: `take_error()`, then `peer_addr()`
    /// (`NotConnected`: not yet, wait again). Connected: HTTPS goes on to the TLS
    /// handshake, HTTP straight to sending the request. A failure lets the loop try the
    /// host's next address.
    ///
    /// Through a proxy (`Conn::via`), the socket is the proxy's: an HTTP proxy takes a
    /// plain request in absolute form at once (`Sending`) and a `CONNECT` for HTTPS
    /// (`Tunneling`); a SOCKS5 proxy its handshake (`Socksing`). A failed connect to
    /// the proxy is `proxy-unreachable`.
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
            Ok(Some(e)) | Err(e) => return not_connected(self.ex, conn.via.is_some(), &e),
        }
        match conn.stream.peer_addr() {
            Ok(_) => {}
            Err(e)
                if e.kind() == io::ErrorKind::NotConnected
                    || e.kind() == io::ErrorKind::WouldBlock =>
            {
                return conn.wait(Phase::Connecting(self));
            }
            Err(e) => return not_connected(self.ex, conn.via.is_some(), &e),
        }
        let mut ex = self.ex;
        ex.timings.connect = Some(now.saturating_duration_since(self.since));
        let Some(via) = conn.via.clone() else {
            return to_origin(conn, ctx, ex, now);
        };
        let key = &ex.job.key;
        if via.is_http() {
            if !key.https {
                // Absolute form, straight to the proxy (`Sending` writes it).
                conn.absolute = true;
                return to_origin(conn, ctx, ex, now);
            }
            return match ConnectClient::new(&key.host, key.port, via.basic.as_ref()) {
                Ok(client) => conn.go(Phase::Tunneling(Tunneling {
                    ex,
                    since: now,
                    client,
                })),
                Err(e) => {
                    let reason = verdict_reason(ProxyVerdict::Own(e.kind()), &e.to_string());
                    Step::Done(failed(ex, None, reason))
                }
            };
        }
        let literal = key
            .host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .ok()
            .map(|ip| SocketAddr::new(ip, key.port));
        let target = match (via.kind, conn.origin, literal) {
            (ProxyKind::Socks5, Some(addr), _) | (_, _, Some(addr)) => Target::Addr(addr),
            _ => Target::Name(&key.host, key.port),
        };
        match Socks5Client::new(target, via.creds.as_ref()) {
            Ok(client) => conn.go(Phase::Socksing(Socksing {
                ex,
                since: now,
                client: Box::new(client),
            })),
            Err(e) => {
                let reason = verdict_reason(e.verdict(), &e.to_string());
                Step::Done(failed(ex, None, reason))
            }
        }
    }
}

/// The connection reaches the origin (directly, or through an open tunnel): HTTPS goes
/// on to the TLS handshake, certificates checked against the origin's name; HTTP
/// straight to sending the request.
pub(super) fn to_origin(conn: &mut Conn, ctx: &mut Ctx<'_>, ex: Exchange, now: Instant) -> Step {
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

/// A failed connect: direct, the loop may try the host's next address; to a proxy, it
/// is the proxy's failure.
fn not_connected(ex: Exchange, proxied: bool, e: &io::Error) -> Step {
    if proxied {
        return Step::Done(failed(ex, None, proxy_connect_reason(e)));
    }
    Step::Done(connect_failed(ex, e))
}
