//! One connection: its socket, optional TLS session, and its [`Phase`].
//!
//! Each phase struct holds only what is valid in it (a `Connecting` connection has no
//! response reader; an `Idle` one has no request). The fetcher moves a connection from
//! phase to phase by taking the old phase out (`Phase::take`) and putting the next one
//! in. The mio interest and the next deadline are both functions of the phase
//! ([`Conn::interest`], [`Conn::deadline`]).
//!
//! Each phase owns its transitions, in its own file: `step` takes the readiness and the
//! loop's buffers and names the next phase (`conn.go(..)` / `conn.wait(..)`) or what the
//! loop must do ([`Step::Done`] with an [`After`]). [`advance`] is only the dispatch.
//!
//! | file | phase |
//! | --- | --- |
//! | `connecting.rs` | `Connecting`: non-blocking connect, then TLS or plain, or a proxy's handshake |
//! | `tunneling.rs` | `Tunneling`: an HTTP proxy's `CONNECT`, then TLS to the origin |
//! | `socksing.rs` | `Socksing`: a SOCKS5 handshake (RFC 1928, RFC 1929), then TLS or plain |
//! | `handshaking.rs` | `Handshaking`: the TLS handshake |
//! | `sending.rs` | `Sending`: writing the request |
//! | `reading.rs` | `ReadingHead`, `ReadingBody`: response head, body, decoding |
//! | `idle.rs` | `Idle`: pooled; any readable event closes it |
//! | `exchange.rs` | `Job`, `Exchange`, `ResponseProgress`, building the outcome |
//! | `io.rs` | socket and TLS reads/writes (drain to `WouldBlock`), a proxy handshake's round |
//! | `fail.rs` | error → `FailReason` |

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::Interest;
use rustls::ClientConnection;

use crate::fetch::{FailReason, FetchOutcome, TimeoutPhase};
use crate::http::ContentDecoder;
use crate::net::config::Deadlines;
use crate::net::egress::book::ProxySlot;
use crate::net::egress::connect::ConnectClient;
use crate::net::egress::socks5::Socks5Client;
use crate::net::egress::via::Via;
use crate::net::per_ip::IpSlot;
use crate::net::pool::PoolKey;
use crate::tls::TlsClient;

mod connecting;
mod exchange;
mod fail;
mod handshaking;
mod idle;
mod io;
#[cfg(test)]
mod proxy_tests;
mod reading;
mod sending;
mod socksing;
#[cfg(test)]
mod tests;
mod tunneling;

pub(crate) use exchange::{build_outcome, Exchange, Job, ResponseProgress};
pub(crate) use fail::{connect_reason, proxied_answer, proxy_connect_reason};

pub(crate) struct Connecting {
    pub ex: Exchange,
    pub since: Instant,
}

/// An HTTP proxy's `CONNECT` handshake for an `https://` origin.
pub(crate) struct Tunneling {
    pub ex: Exchange,
    pub since: Instant,
    pub client: ConnectClient,
}

/// A SOCKS5 handshake.
pub(crate) struct Socksing {
    pub ex: Exchange,
    pub since: Instant,
    /// Boxed: the largest proxy state would otherwise set the size of every phase,
    /// and the direct path moves phases at every step.
    pub client: Box<Socks5Client>,
}

pub(crate) struct Handshaking {
    pub ex: Exchange,
    pub since: Instant,
}

pub(crate) struct Sending {
    pub ex: Exchange,
    pub since: Instant,
    /// Bytes of `ex.job.wire` written so far (plain), or handed to rustls (TLS).
    pub written: usize,
}

/// What both reading phases share: the exchange and what has been received for it.
pub(crate) struct Reading {
    pub ex: Exchange,
    /// Boxed, as the exchange's job is: a read event moves the phase out and back.
    pub rx: Box<ResponseProgress>,
}

pub(crate) struct ReadingHead {
    pub r: Reading,
}

pub(crate) struct ReadingBody {
    pub r: Reading,
    pub decoder: ContentDecoder,
}

pub(crate) struct Idle {
    pub since: Instant,
}

/// The connection state machine (STYLE.md §3).
pub(crate) enum Phase {
    /// Non-blocking connect in progress.
    Connecting(Connecting),
    /// An HTTP proxy's `CONNECT` in progress.
    Tunneling(Tunneling),
    /// A SOCKS5 handshake in progress.
    Socksing(Socksing),
    /// TLS handshake in progress.
    Handshaking(Handshaking),
    /// Writing the request.
    Sending(Sending),
    /// Waiting for / parsing the response head.
    ReadingHead(ReadingHead),
    /// Receiving the body.
    ReadingBody(ReadingBody),
    /// In the keep-alive pool.
    Idle(Idle),
    /// Transient: the phase has been taken out for a transition.
    Gone,
}

impl Phase {
    /// Takes the phase out, leaving `Gone` until the next phase is put in.
    pub fn take(&mut self) -> Phase {
        std::mem::replace(self, Phase::Gone)
    }
}

/// A connection in the fetcher's slab.
pub(crate) struct Conn {
    pub stream: TcpStream,
    pub tls: Option<Box<ClientConnection>>,
    pub key: PoolKey,
    /// The socket's remote address: the origin, or the proxy on the route.
    pub peer: SocketAddr,
    /// The origin's address where trawl knows it (direct and `socks5`); `None` through
    /// an HTTP proxy or `socks5h`, which resolve the name themselves. The outcome's
    /// `peer` (and so `WARC-IP-Address`) comes from here.
    pub origin: Option<SocketAddr>,
    /// The local address the connection left from when `--bind-address` chose one
    /// (`None`: the system chose). Reuse across host names checks it
    /// ([`crate::net::BindAddrs`]): a host always leaves from one address.
    pub src: Option<IpAddr>,
    /// The proxy on the connection's route (`None`: direct; its id is `key.via`), set
    /// by the opener. Kept on the connection, not on each job: a direct request
    /// carries nothing more than before.
    pub via: Option<Arc<Via>>,
    /// Requests go in absolute form to an HTTP proxy (plain HTTP through it): its
    /// error answers are told from the origin's by [`proxied_answer`].
    pub absolute: bool,
    pub phase: Phase,
    /// Interest currently registered with the poll.
    pub registered: Interest,
    /// The earliest timer-heap entry outstanding for this connection.
    pub timer_at: Option<Instant>,
    /// Requests completed on this connection.
    pub served: u32,
    /// The connection's per-IP slot (when a cap is set); released when the connection
    /// is dropped, whatever closed it.
    pub ip_slot: Option<IpSlot>,
    /// The connection's place under `--per-proxy-connections` (proxied connections);
    /// released when the connection is dropped.
    pub proxy_slot: Option<ProxySlot>,
    /// Exchanges finished in a row while requests of other hosts waited for this
    /// connection's address (bounds how long a busy host keeps a contended slot).
    pub contended_reuses: u32,
}

impl Conn {
    /// A connection whose non-blocking `connect()` to `peer` is in flight for `ex`, to
    /// be registered for WRITABLE. `origin`: see [`Conn::origin`].
    pub fn connecting(
        stream: TcpStream,
        peer: SocketAddr,
        origin: Option<SocketAddr>,
        ex: Exchange,
        ip_slot: Option<IpSlot>,
        now: Instant,
    ) -> Self {
        Self {
            stream,
            tls: None,
            key: ex.job.key.clone(),
            peer,
            origin,
            src: None,
            via: None,
            absolute: false,
            phase: Phase::Connecting(Connecting { ex, since: now }),
            registered: Interest::WRITABLE,
            timer_at: None,
            served: 0,
            ip_slot,
            proxy_slot: None,
            contended_reuses: 0,
        }
    }

    /// A phase's transition to `next`, to be run at once.
    #[inline]
    fn go(&mut self, next: Phase) -> Step {
        self.phase = next;
        Step::Go
    }

    /// A phase's transition to `next` (or back to itself), to wait for readiness.
    #[inline]
    fn wait(&mut self, next: Phase) -> Step {
        self.phase = next;
        Step::Wait
    }

    /// Ends the exchange in progress (if any) with `reason`, e.g. on a deadline.
    pub fn fail(&mut self, reason: FailReason) -> After {
        match self.phase.take() {
            Phase::Connecting(Connecting { ex, .. })
            | Phase::Tunneling(Tunneling { ex, .. })
            | Phase::Socksing(Socksing { ex, .. })
            | Phase::Handshaking(Handshaking { ex, .. })
            | Phase::Sending(Sending { ex, .. }) => fail::failed(ex, None, reason),
            Phase::ReadingHead(ReadingHead { r }) | Phase::ReadingBody(ReadingBody { r, .. }) => {
                fail::failed(r.ex, Some(r.rx), reason)
            }
            Phase::Idle(_) | Phase::Gone => After::IdleClosed,
        }
    }

    /// The interest the phase needs. Plain sockets in `Sending` normally never get here
    /// (the request is written at once), so WRITABLE is registered only when a write
    /// blocked.
    pub fn interest(&self) -> Interest {
        let tls_wants_write = self.tls.as_ref().is_some_and(|t| t.wants_write());
        match &self.phase {
            Phase::Connecting(_) => Interest::WRITABLE,
            Phase::Tunneling(p) if !p.client.is_sent() => Interest::WRITABLE,
            Phase::Socksing(p) if !p.client.wants_read() => Interest::WRITABLE,
            Phase::Tunneling(_) | Phase::Socksing(_) => Interest::READABLE,
            Phase::Sending(_) if self.tls.is_none() => Interest::WRITABLE,
            Phase::Sending(_) | Phase::Handshaking(_) => {
                if tls_wants_write {
                    Interest::READABLE | Interest::WRITABLE
                } else {
                    Interest::READABLE
                }
            }
            Phase::ReadingHead(_) | Phase::ReadingBody(_) if tls_wants_write => {
                Interest::READABLE | Interest::WRITABLE
            }
            Phase::ReadingHead(_) | Phase::ReadingBody(_) | Phase::Idle(_) | Phase::Gone => {
                Interest::READABLE
            }
        }
    }

    /// The next deadline of the phase and which timeout it is; `None` for `Idle` (its
    /// deadline is passed in as `idle_timeout`).
    pub fn deadline(&self, d: &Deadlines, idle_timeout: Duration) -> Option<(Instant, Deadline)> {
        let total = |ex: &Exchange| {
            (
                after(ex.started, d.total_timeout),
                Deadline::Fail(TimeoutPhase::Total),
            )
        };
        let min = |a: (Instant, Deadline), b: (Instant, Deadline)| if b.0 < a.0 { b } else { a };
        // A proxy handshake: the proxy's own timeout until it has our request, then the
        // origin's connect timeout while it dials (both over `proxy_timeout`).
        let proxy = |since: Instant, dialling: bool| {
            let phase = if dialling {
                TimeoutPhase::Connect
            } else {
                TimeoutPhase::Proxy
            };
            (after(since, d.proxy_timeout), Deadline::Fail(phase))
        };
        match &self.phase {
            Phase::Connecting(p) => Some(min(
                total(&p.ex),
                (
                    after(p.since, d.connect_timeout),
                    Deadline::Fail(TimeoutPhase::Connect),
                ),
            )),
            Phase::Tunneling(p) => Some(min(total(&p.ex), proxy(p.since, p.client.is_sent()))),
            Phase::Socksing(p) => Some(min(total(&p.ex), proxy(p.since, p.client.is_dialling()))),
            Phase::Handshaking(p) => Some(min(
                total(&p.ex),
                (
                    after(p.since, d.tls_timeout),
                    Deadline::Fail(TimeoutPhase::Tls),
                ),
            )),
            Phase::Sending(p) => Some(min(
                total(&p.ex),
                (
                    after(p.since, d.first_byte_timeout),
                    Deadline::Fail(TimeoutPhase::Send),
                ),
            )),
            Phase::ReadingHead(ReadingHead { r }) | Phase::ReadingBody(ReadingBody { r, .. }) => {
                let (ex, r) = (&r.ex, &r.rx);
                let mut best = total(ex);
                best = min(
                    best,
                    match r.first_byte_at {
                        None => (
                            after(r.sent_at, d.first_byte_timeout),
                            Deadline::Fail(TimeoutPhase::FirstByte),
                        ),
                        Some(_) => (
                            after(r.last_read, d.read_idle_timeout),
                            Deadline::Fail(TimeoutPhase::ReadIdle),
                        ),
                    },
                );
                if d.min_rate_bytes_per_sec > 0 && r.first_byte_at.is_some() {
                    best = min(
                        best,
                        (
                            after(r.rate_window_start, d.rate_window),
                            Deadline::RateCheck,
                        ),
                    );
                }
                Some(best)
            }
            Phase::Idle(p) => Some((after(p.since, idle_timeout), Deadline::IdleExpired)),
            Phase::Gone => None,
        }
    }
}

/// How far away "never" is: deadlines are clamped here so that an absurd configured
/// duration cannot overflow `Instant` arithmetic (which would panic).
const FAR_FUTURE: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

/// `t + d`, saturating at [`FAR_FUTURE`] from `t`.
pub(crate) fn after(t: Instant, d: Duration) -> Instant {
    t + d.min(FAR_FUTURE)
}

/// What happens when a connection's deadline passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Deadline {
    /// The exchange fails with this timeout.
    Fail(TimeoutPhase),
    /// Check the transfer rate over the window just ended.
    RateCheck,
    /// The idle connection is closed.
    IdleExpired,
}

/// What a mio event said, copied out so the events buffer can be reused.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Readiness {
    pub readable: bool,
    pub writable: bool,
    pub error: bool,
    pub read_closed: bool,
}

impl Readiness {
    /// As if ready for everything: used right after a transition (try the next phase's
    /// I/O at once; it stops at `WouldBlock`).
    pub const ALL: Self = Self {
        readable: true,
        writable: true,
        error: false,
        read_closed: false,
    };
}

/// What one step of a connection's state machine asks the loop to do.
#[allow(
    clippy::large_enum_variant,
    reason = "a short-lived return value, moved once; boxing would allocate per step"
)]
pub(crate) enum After {
    /// The connection waits for readiness; refresh interest and deadline.
    Wait,
    /// The exchange completed. `reusable`: the connection may go back to the pool.
    Finished {
        outcome: FetchOutcome,
        reusable: bool,
    },
    /// The exchange failed; the connection is closed.
    Failed {
        ex: Exchange,
        reading: Option<Box<ResponseProgress>>,
        reason: FailReason,
        /// The failure happened on a reused connection before any response byte.
        retryable: bool,
        /// A connect failure: another address of the host may be tried.
        next_addr: bool,
    },
    /// An idle connection was closed by the server (or sent unexpected bytes).
    IdleClosed,
}

/// What one phase's step returns. The phase names its successor through
/// [`Conn::go`] / [`Conn::wait`], which put it in place: a phase is hundreds of bytes,
/// and carrying it back inside the return value cost ~260 instructions of `memcpy` per
/// request (callgrind, `fetchload`, 2026-11-25).
#[allow(
    clippy::large_enum_variant,
    reason = "returned once per step and matched at once, like `After` itself"
)]
pub(crate) enum Step {
    /// Moved on to the next phase (now in `conn.phase`): run it at once.
    Go,
    /// Stay (or start) in the phase now in `conn.phase` until the socket is ready.
    Wait,
    /// The exchange (or the idle connection) ended; the loop acts.
    Done(After),
}

/// The loop-wide buffers and settings a connection step borrows.
pub(crate) struct Ctx<'a> {
    pub tls: &'a TlsClient,
    /// The loop's one read buffer, shared by all connections.
    pub read_buf: &'a mut Vec<u8>,
    /// Scratch for encoded body bytes on their way to the decoder.
    pub body_tmp: &'a mut Vec<u8>,
}

/// One step of the state machine: runs phases until the connection must wait or its
/// exchange ends. Each phase's `step` owns its transitions; this is only the dispatch.
pub(crate) fn advance(
    conn: &mut Conn,
    ctx: &mut Ctx<'_>,
    mut ready: Readiness,
    now: Instant,
) -> After {
    loop {
        let step = match conn.phase.take() {
            Phase::Connecting(p) => p.step(conn, ctx, ready, now),
            Phase::Tunneling(p) => p.step(conn, ctx, ready, now),
            Phase::Socksing(p) => p.step(conn, ctx, ready, now),
            Phase::Handshaking(p) => p.step(conn, ctx, now),
            Phase::Sending(p) => p.step(conn, now),
            Phase::ReadingHead(p) => p.step(conn, ctx, ready, now),
            Phase::ReadingBody(p) => p.step(conn, ctx, ready, now),
            Phase::Idle(p) => p.step(conn, ctx, ready),
            // Only seen mid-transition; a connection left in it has nothing to finish.
            Phase::Gone => Step::Done(After::IdleClosed),
        };
        match step {
            Step::Go => ready = Readiness::ALL,
            Step::Wait => return After::Wait,
            Step::Done(after) => return after,
        }
    }
}
