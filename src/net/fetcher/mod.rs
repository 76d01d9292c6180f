//! The event loop: one mio `Poll`, a slab of connections, a timer heap, a DNS client
//! whose sockets share the poll, and keep-alive pools. See `docs/fetcher.md` for the
//! life of a request.
//!
//! This file is the loop itself: taking events and submissions, stepping connections
//! (`conn::advance`; each phase owns its transitions) and acting on what a step returns
//! (`apply`: pool, retry, next address, outcome). Where a request goes is `route.rs`;
//! deadlines are `timers.rs`; who may connect to an address is the socket-free policy in
//! `admission.rs`, whose decisions `route.rs` carries out.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use mio::{Events, Poll, Token, Waker};

use crate::fetch::FetchRequest;
use crate::fetch::{FailReason, FetchOutcome};
use crate::http::{Method, SharedBytes};
use crate::net::address::is_blocked_address;
use crate::net::admission::{Admission, Release};
use crate::net::config::FetcherConfig;
use crate::net::conn::{
    advance, build_outcome, proxied_answer, After, Conn, Ctx, Exchange, Idle, Job, Phase, Readiness,
};
use crate::net::dns::{is_resolver_token, with_port, DnsStats, Resolver};
use crate::net::egress::rules::{RouteId, DIRECT};
use crate::net::pool::{Pool, PoolKey};
use crate::net::request::{Submitter, SUBMIT_CHANNEL_SLOTS};
use crate::net::slab::{Slab, SlotKey};
use crate::net::timer::TimerHeap;
use crate::tls::{TlsClient, TlsSetupError};

#[cfg(test)]
mod proxy_tests;
mod route;
#[cfg(test)]
mod tests;
mod timers;

/// The waker's token: all ones, which no slot token can equal (see `slab.rs`).
const WAKER: Token = Token(usize::MAX);

/// Why a fetcher could not be created.
#[derive(Debug)]
pub enum FetcherError {
    /// Creating the poll or the waker failed.
    Io(io::Error),
    /// The TLS configuration is unusable (e.g. a bad `--ca-file`).
    Tls(TlsSetupError),
}

impl fmt::Display for FetcherError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(_) => f.write_str("cannot create event loop"),
            Self::Tls(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for FetcherError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io(e) => Some(e),
            Self::Tls(e) => Some(e),
        }
    }
}

/// Counters for tests, benchmarks and stats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FetcherStats {
    /// TCP connections opened.
    pub connections_opened: u64,
    /// Exchanges completed (successfully or not) after starting on a connection.
    pub exchanges: u64,
    /// Exchanges that ran on a connection taken from the keep-alive pool.
    pub reused_exchanges: u64,
    /// Requests retried on a fresh connection after a reused one failed.
    pub retries: u64,
    /// Idle connections found closed by the server.
    pub idle_closed_by_peer: u64,
    /// Requests that had to wait for a per-IP slot (counted once per wait).
    pub ip_waits: u64,
    /// Idle connections closed (or not pooled) because requests waited for their
    /// address's per-IP slots.
    pub ip_yielded: u64,
    /// Exchanges that ran on an idle connection opened for another host name
    /// on the same address (shared hosting, under the per-IP cap).
    pub shared_host_reuses: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum TimerKey {
    Conn(SlotKey),
    Queue,
    IpWait,
    ProxyWait,
}

/// A hand-written mio event loop fetching HTTP/1.1 and HTTPS responses.
///
/// Single-threaded: call [`Fetcher::submit`] and [`Fetcher::poll`] from the thread that
/// owns it; other threads use a [`Submitter`].
pub struct Fetcher {
    poll: Poll,
    events: Events,
    ready: Vec<(Token, Readiness)>,
    waker: Arc<Waker>,
    cfg: FetcherConfig,
    tls: TlsClient,
    conns: Slab<Conn>,
    pool: Pool,
    timers: TimerHeap<TimerKey>,
    resolver: Resolver,
    dns_waiters: HashMap<u64, Vec<Job>>,
    /// Jobs in `dns_waiters`, all lookups together.
    dns_waiting: usize,
    queue: VecDeque<Job>,
    queue_timer_at: Option<Instant>,
    /// Jobs waiting for a connection slot of their route's proxy
    /// (`--per-proxy-connections`; the count is shared with other fetchers, so they are
    /// retried on a short timer, `TimerKey::ProxyWait`).
    proxy_waiting: VecDeque<Job>,
    proxy_timer_at: Option<Instant>,
    submissions: Receiver<FetchRequest>,
    submit_tx: Sender<FetchRequest>,
    done: Vec<FetchOutcome>,
    /// Decoded body bytes in `done`.
    done_bytes: usize,
    /// Connection readiness a poll left for the next one, past
    /// [`FetcherConfig::max_done_bytes`]; handled first there.
    deferred: Vec<(Token, Readiness)>,
    read_buf: Vec<u8>,
    body_tmp: Vec<u8>,
    in_flight: usize,
    stats: FetcherStats,
    /// Per-IP cap and address policy: who may connect now (`admission.rs`).
    admission: Admission,
}

impl Fetcher {
    /// Creates the loop, its waker, the TLS client and the resolver.
    ///
    /// # Errors
    /// The poll or waker cannot be created, or the TLS configuration is unusable.
    pub fn new(cfg: FetcherConfig) -> Result<Self, FetcherError> {
        let poll = Poll::new().map_err(FetcherError::Io)?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER).map_err(FetcherError::Io)?);
        let tls = TlsClient::new(&cfg.tls).map_err(FetcherError::Tls)?;
        let resolver = Resolver::new(cfg.dns.clone(), cfg.deadlines.dns_timeout);
        let wake_for_ip = Arc::clone(&waker);
        let mut admission = Admission::new(
            cfg.allow_private_addresses,
            cfg.ip_wait_timeout,
            cfg.ip_slots.clone(),
            move || {
                let _ = wake_for_ip.wake();
            },
        );
        admission.set_share_across_hosts(cfg.share_idle_across_hosts);
        // The cross-thread hand-off only needs to cover one loop turn: a bounded
        // channel allocates and initializes every slot up front, and at the old 65,536
        // slots that was 32 MiB zeroed (and resident) per fetcher, a visible share of a
        // short crawl's CPU. Requests the loop takes wait in its own queue
        // (`max_queued_requests`).
        let (submit_tx, submissions) =
            crossbeam_channel::bounded(cfg.max_queued_requests.clamp(1, SUBMIT_CHANNEL_SLOTS));
        Ok(Self {
            events: Events::with_capacity(cfg.events_capacity.max(16)),
            ready: Vec::with_capacity(cfg.events_capacity.max(16)),
            poll,
            waker,
            tls,
            conns: Slab::default(),
            pool: Pool::default(),
            timers: TimerHeap::default(),
            resolver,
            dns_waiters: HashMap::new(),
            dns_waiting: 0,
            queue: VecDeque::new(),
            queue_timer_at: None,
            proxy_waiting: VecDeque::new(),
            proxy_timer_at: None,
            submissions,
            submit_tx,
            done: Vec::new(),
            done_bytes: 0,
            deferred: Vec::new(),
            read_buf: vec![0; cfg.read_buffer_bytes.max(4096)],
            body_tmp: Vec::new(),
            in_flight: 0,
            stats: FetcherStats::default(),
            admission,
            cfg,
        })
    }

    /// The loop's waker, so another thread can interrupt a blocking [`Fetcher::poll`]
    /// (the crawl engine wakes a shard when links for it arrive).
    pub fn waker(&self) -> Arc<Waker> {
        Arc::clone(&self.waker)
    }

    /// A handle for submitting requests from other threads.
    pub fn submitter(&self) -> Submitter {
        Submitter::new(self.submit_tx.clone(), Arc::clone(&self.waker))
    }

    /// Requests accepted and not yet answered by an outcome.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Open connections (busy and idle).
    pub fn open_connections(&self) -> usize {
        self.conns.len()
    }

    /// Idle connections in the keep-alive pools.
    pub fn idle_connections(&self) -> usize {
        self.pool.len()
    }

    /// Counters since creation.
    pub fn stats(&self) -> FetcherStats {
        self.stats
    }

    /// The resolver's counters: lookups, cache hits, in flight, queued, outcomes by
    /// kind, dead names, retransmits, TCP fallbacks (see [`DnsStats`]).
    pub fn dns_stats(&self) -> DnsStats {
        self.resolver.stats()
    }

    /// Requests accepted that wait for their host's name to resolve: they hold no
    /// connection yet, and a dead name holds its requests for the whole DNS deadline.
    pub fn waiting_for_dns(&self) -> usize {
        self.dns_waiting
    }

    /// Requests waiting for a per-IP connection slot of their address (they are
    /// accepted, not yet connected; `--per-ip-connections` holds them back, not this
    /// fetcher's capacity).
    pub fn waiting_for_address(&self) -> usize {
        self.admission.waiting_len()
    }

    /// Accepts a request. Its outcome comes out of a later [`Fetcher::poll`] (or the
    /// next one, for requests that fail at once, e.g. an unsupported URL).
    pub fn submit(&mut self, req: FetchRequest) {
        let now = Instant::now();
        self.in_flight += 1;
        let url = &req.head.url;
        let https = match url.scheme() {
            "http" => false,
            "https" => true,
            _ => return self.fail_request(req, FailReason::InvalidUrl("scheme not http(s)")),
        };
        let Some(host) = url.host_str().filter(|h| !h.is_empty()) else {
            return self.fail_request(req, FailReason::InvalidUrl("no host"));
        };
        let Some(port) = url.port_or_known_default() else {
            return self.fail_request(req, FailReason::InvalidUrl("no port"));
        };
        if self.queue.len() + self.admission.waiting_len() + self.proxy_waiting.len()
            >= self.cfg.max_queued_requests
        {
            return self.fail_request(req, FailReason::Overloaded);
        }
        // The url crate already lower-cases hosts of http(s) URLs; copy only if needed.
        let host: Arc<str> = if host.bytes().any(|b| b.is_ascii_uppercase()) {
            host.to_ascii_lowercase().into()
        } else {
            host.into()
        };
        let via = self
            .cfg
            .egress
            .as_ref()
            .map_or(DIRECT, |e| e.pick(https, &host));
        let mut job = Job::new(
            req,
            PoolKey {
                https,
                host,
                port,
                via,
            },
            now,
        );
        if via != DIRECT && self.proxy_resolves(via) {
            // The proxy resolves the name: an address given with the request is not
            // where the connection goes, and trawl's resolver is not asked. What can
            // still be checked here is a literal address or a `localhost` name; a name
            // that resolves to a private address cannot be (docs/network.md).
            if !self.cfg.allow_private_addresses && names_private_target(&job.key.host) {
                return self.fail_job(job, None, FailReason::BlockedAddress, now);
            }
            job.addrs = None;
            job.dns = None;
        }
        self.dispatch(job, now);
        self.pump(now);
    }

    /// Runs one turn of the loop: waits for readiness (at most `timeout`, and never past
    /// the nearest deadline), drives every ready connection, takes submissions and DNS
    /// answers, fires due deadlines, and appends finished outcomes to `out`.
    ///
    /// # Errors
    /// Only a failing `epoll_wait` (not per-connection errors: those are outcomes).
    pub fn poll(
        &mut self,
        out: &mut Vec<FetchOutcome>,
        timeout: Option<Duration>,
    ) -> io::Result<()> {
        let now = Instant::now();
        self.yield_contended(now);
        let mut wait = self.timers.poll_timeout(now);
        if let Some(at) = self.resolver.poll_timeout() {
            let dns = at.saturating_duration_since(now);
            wait = Some(wait.map_or(dns, |w| w.min(dns)));
        }
        if let Some(user) = timeout {
            wait = Some(wait.map_or(user, |w| w.min(user)));
        }
        if !self.done.is_empty() || !self.deferred.is_empty() || self.resolver.has_answers() {
            wait = Some(Duration::ZERO);
        }
        match self.poll.poll(&mut self.events, wait) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
        let now = Instant::now();
        self.ready.clear();
        for ev in &self.events {
            self.ready.push((
                ev.token(),
                Readiness {
                    readable: ev.is_readable(),
                    writable: ev.is_writable(),
                    error: ev.is_error(),
                    read_closed: ev.is_read_closed(),
                },
            ));
        }
        // Readiness left by the last poll first, then this poll's; past
        // `max_done_bytes` of finished bodies the rest waits for the next poll (a
        // stale token there is ignored by its generation, a spurious one reads
        // nothing).
        let deferred = std::mem::take(&mut self.deferred);
        let ready = std::mem::take(&mut self.ready);
        for (token, readiness) in deferred.iter().chain(&ready) {
            if *token == WAKER {
                continue;
            }
            if is_resolver_token(*token) {
                self.resolver.on_ready(*token, now, self.poll.registry());
                continue;
            }
            if self.done_bytes >= self.cfg.max_done_bytes {
                self.deferred.push((*token, *readiness));
                continue;
            }
            let key = SlotKey::from_token(*token);
            self.step(key, *readiness, now);
        }
        self.ready = ready;
        self.take_submissions();
        self.resolver.handle_timeout(now, self.poll.registry());
        self.take_dns_answers(now);
        self.fire_timers(now);
        self.pump(now);
        self.compact_timers();
        out.append(&mut self.done);
        self.done_bytes = 0;
        Ok(())
    }

    /// Polls until every accepted request has an outcome (or `limit` passes), handing
    /// outcomes to `f` as they come.
    ///
    /// # Errors
    /// A failing `epoll_wait`.
    pub fn run_until_idle(
        &mut self,
        limit: Duration,
        mut f: impl FnMut(FetchOutcome),
    ) -> io::Result<()> {
        let end = Instant::now() + limit;
        let mut out = Vec::new();
        while self.in_flight > 0 || !self.done.is_empty() || !self.deferred.is_empty() {
            let now = Instant::now();
            if now >= end {
                break;
            }
            self.poll(&mut out, Some(end - now))?;
            for o in out.drain(..) {
                f(o);
            }
        }
        Ok(())
    }

    // ----- connection driving ----------------------------------------------------------

    /// Advances one connection on readiness and applies the result.
    fn step(&mut self, key: SlotKey, ready: Readiness, now: Instant) {
        let Some(conn) = self.conns.get_mut(key) else {
            return; // stale token: the connection it named is gone
        };
        let mut ctx = Ctx {
            tls: &self.tls,
            read_buf: &mut self.read_buf,
            body_tmp: &mut self.body_tmp,
        };
        let after = advance(conn, &mut ctx, ready, now);
        self.apply(key, after, now);
    }

    fn apply(&mut self, key: SlotKey, after: After, now: Instant) {
        match after {
            After::Wait => self.refresh(key, now),
            After::Finished {
                mut outcome,
                reusable,
            } => {
                self.stats.exchanges += 1;
                if let Some(conn) = self.conns.get(key).filter(|c| c.key.via != 0) {
                    // Through a proxy: the origin's address only where trawl knows it,
                    // and a proxy's own error answer to an absolute-form request.
                    outcome.peer = conn.origin;
                    proxied_answer(&mut outcome, conn);
                }
                self.complete(outcome);
                let Some(conn) = self.conns.get_mut(key) else {
                    return;
                };
                conn.served += 1;
                let pool_cfg = self.cfg.pool;
                let keep = reusable
                    && conn.served < pool_cfg.max_requests_per_connection
                    && self.pool.len_for(&conn.key) < pool_cfg.max_idle_per_host
                    && pool_cfg.max_idle_total > 0;
                if !keep {
                    return self.close(key);
                }
                conn.phase = Phase::Idle(Idle { since: now });
                let pool_key = conn.key.clone();
                let (tls, bind) = (&self.tls, &self.cfg.bind);
                let (conn_tls, src, peer) = (conn.tls.as_deref(), conn.src, conn.peer);
                // Another host's request may ride on this connection if that host leaves
                // from the same source address (`--bind-address`): plain HTTP always;
                // HTTPS when the certificate it was given is valid for that name too.
                let covers = |k: &PoolKey| {
                    bind.leaves_alike(src, peer, &k.host)
                        && (!k.https
                            || conn_tls.is_some_and(|c| tls.certificate_covers(c, &k.host)))
                };
                let release = self.admission.on_idle(
                    key,
                    &pool_key,
                    conn.origin.unwrap_or(conn.peer).ip(),
                    conn.ip_slot.as_mut(),
                    &mut conn.contended_reuses,
                    &covers,
                    now,
                );
                match release {
                    Release::Pool | Release::PoolOneTurn => {}
                    Release::Close => {
                        self.stats.ip_yielded += 1;
                        return self.close(key);
                    }
                    Release::Serve(job) => return self.start_on_idle(key, job, now),
                }
                let peer = conn.peer;
                self.pool.put(pool_key, key, peer);
                self.refresh(key, now);
                while self.pool.len() > pool_cfg.max_idle_total {
                    match self.pool.take_oldest() {
                        Some((_, old)) => self.close(old),
                        None => break,
                    }
                }
            }
            After::Failed {
                ex,
                reading,
                reason,
                retryable,
                next_addr,
            } => {
                self.stats.exchanges += 1;
                let peer = self.conns.get(key).and_then(|c| c.origin);
                self.close(key);
                let mut job = ex.job;
                if next_addr
                    && job
                        .addrs
                        .as_ref()
                        .is_some_and(|a| job.addr_index + 1 < a.len())
                {
                    job.addr_index += 1;
                    return self.dispatch(*job, now);
                }
                if retryable && job.retries == 0 && is_idempotent(job.req.head.method) {
                    self.stats.retries += 1;
                    job.retries += 1;
                    job.fresh_only = true;
                    return self.dispatch(*job, now);
                }
                let ex = Exchange { job, ..ex };
                let outcome = build_outcome(ex, reading.map(|r| *r), peer, Some(reason), now);
                self.complete(outcome);
            }
            After::IdleClosed => {
                self.stats.idle_closed_by_peer += 1;
                if let Some(conn) = self.conns.get(key) {
                    let pool_key = conn.key.clone();
                    self.pool.remove(&pool_key, key);
                }
                self.close(key);
            }
        }
    }

    /// Re-registers if the phase needs another interest, and keeps the timer current.
    fn refresh(&mut self, key: SlotKey, now: Instant) {
        let Some(conn) = self.conns.get_mut(key) else {
            return;
        };
        let want = conn.interest();
        if want != conn.registered {
            if let Err(e) = self
                .poll
                .registry()
                .reregister(&mut conn.stream, key.token(), want)
            {
                return self.fail_conn(key, FailReason::Io(e.to_string()), now);
            }
            conn.registered = want;
        }
        if let Some((at, _)) = conn.deadline(&self.cfg.deadlines, self.cfg.pool.idle_timeout) {
            if conn.timer_at.is_none_or(|t| at < t) {
                conn.timer_at = Some(at);
                self.timers.schedule(at, TimerKey::Conn(key));
            }
        }
    }

    /// Fails the exchange on `key` (if any) with `reason` and closes the connection.
    fn fail_conn(&mut self, key: SlotKey, reason: FailReason, now: Instant) {
        let Some(conn) = self.conns.get_mut(key) else {
            return;
        };
        let after = conn.fail(reason);
        self.apply(key, after, now);
    }

    /// Deregisters and drops a connection (closing its socket).
    fn close(&mut self, key: SlotKey) {
        if let Some(mut conn) = self.conns.remove(key) {
            let _ = self.poll.registry().deregister(&mut conn.stream);
        }
    }

    /// Whether route `via`'s proxy resolves origin names itself (HTTP proxies,
    /// `socks5h`).
    fn proxy_resolves(&self, via: RouteId) -> bool {
        self.cfg
            .egress
            .as_ref()
            .is_some_and(|e| e.resolves_names(via))
    }

    fn complete(&mut self, outcome: FetchOutcome) {
        self.in_flight = self.in_flight.saturating_sub(1);
        self.done_bytes = self.done_bytes.saturating_add(outcome.body.len());
        self.done.push(outcome);
    }

    fn fail_request(&mut self, req: FetchRequest, reason: FailReason) {
        // Refused before any work: nothing was sent and no step took time.
        let outcome = FetchOutcome::failed(req.id, req.head.url, SharedBytes::default(), reason);
        self.complete(outcome);
    }

    fn fail_job(&mut self, job: Job, peer: Option<SocketAddr>, reason: FailReason, now: Instant) {
        let ex = Exchange::fresh(job, now);
        let outcome = build_outcome(ex, None, peer, Some(reason), now);
        self.complete(outcome);
    }

    // ----- submissions, DNS -------------------------------------------------------------

    fn take_submissions(&mut self) {
        while let Ok(req) = self.submissions.try_recv() {
            self.submit(req);
        }
    }

    fn take_dns_answers(&mut self, now: Instant) {
        if !self.resolver.has_answers() {
            return;
        }
        let mut answered = Vec::new();
        self.resolver
            .drain(|id, answer| answered.push((id, answer)));
        for (id, answer) in answered {
            let Some(jobs) = self.dns_waiters.remove(&id) else {
                continue;
            };
            self.dns_waiting = self.dns_waiting.saturating_sub(jobs.len());
            for mut job in jobs {
                match &answer {
                    Ok(ips) => {
                        job.addrs = Some(with_port(ips, job.key.port));
                        job.dns = Some(now.saturating_duration_since(job.submitted));
                        self.dispatch(job, now);
                    }
                    Err(e) => self.fail_job(job, None, FailReason::Dns(e.clone()), now),
                }
            }
        }
    }
}

/// Whether `host` (a URL host, lower case) is an address in a blocked range or a
/// `localhost` name (RFC 6761): what the address check can still refuse when a proxy
/// resolves names.
fn names_private_target(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<std::net::IpAddr>() {
        return is_blocked_address(ip);
    }
    let name = host.trim_end_matches('.');
    name == "localhost" || name.ends_with(".localhost")
}

fn is_idempotent(m: Method) -> bool {
    matches!(m, Method::Get | Method::Head)
}
