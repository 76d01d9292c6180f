//! The event loop: one mio `Poll`, a slab of connections, a timer heap, a resolver pool,
//! and keep-alive pools. See `docs/fetcher.md` for the life of a request.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TrySendError};
use mio::{Events, Interest, Poll, Token, Waker};

use crate::http::{Method, RequestHead};
use crate::net::admission::{still_wanted, Admission, Decision, Release};
use crate::net::config::{FetchLimits, FetcherConfig};
use crate::net::conn::{
    advance, after, build_outcome, connect_reason, After, Conn, Connecting, Ctx, Deadline,
    Exchange, Idle, Job, Phase, Readiness, ReadingBody, ReadingHead, Sending,
};
use crate::net::dns::{Lookup, Resolver};
use crate::net::outcome::{FailReason, FetchOutcome, TimeoutPhase, Timings};
use crate::net::per_ip::IpSlot;
use crate::net::pool::{Pool, PoolKey};
use crate::net::slab::{Slab, SlotKey};
use crate::net::timer::TimerHeap;
use crate::tls::{TlsClient, TlsSetupError};

/// The waker's token: all ones, which no slot token can equal (see `slab.rs`).
const WAKER: Token = Token(usize::MAX);

/// Slots of the channel a [`Submitter`] sends through; [`Submitter::submit`] reports
/// `Full` beyond them until the loop has taken some.
pub const SUBMIT_CHANNEL_SLOTS: usize = 1024;

/// One request for the fetcher.
#[derive(Clone, Debug)]
pub struct FetchRequest {
    /// Caller's id, echoed in the outcome.
    pub id: u64,
    /// The request head (method, URL, headers).
    pub head: RequestHead,
    /// Caps for this request.
    pub limits: FetchLimits,
    /// Connect to this address instead of resolving the URL's host.
    pub addr: Option<SocketAddr>,
}

impl FetchRequest {
    /// A GET of `url` with default limits.
    pub fn get(id: u64, url: url::Url, user_agent: String) -> Self {
        Self {
            id,
            head: RequestHead::get(url, user_agent),
            limits: FetchLimits::default(),
            addr: None,
        }
    }
}

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

/// Hands requests to a fetcher from another thread.
#[derive(Clone)]
pub struct Submitter {
    tx: Sender<FetchRequest>,
    waker: Arc<Waker>,
}

impl Submitter {
    /// Queues `req` and wakes the loop.
    ///
    /// # Errors
    /// Gives the request back when the submission channel is full or the fetcher is gone.
    pub fn submit(&self, req: FetchRequest) -> Result<(), Box<FetchRequest>> {
        match self.tx.try_send(req) {
            Ok(()) => {
                let _ = self.waker.wake();
                Ok(())
            }
            Err(TrySendError::Full(r) | TrySendError::Disconnected(r)) => Err(Box::new(r)),
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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum TimerKey {
    Conn(SlotKey),
    Dns(u64),
    Queue,
    IpWait,
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
    queue: VecDeque<Job>,
    queue_timer_at: Option<Instant>,
    submissions: Receiver<FetchRequest>,
    submit_tx: Sender<FetchRequest>,
    done: Vec<FetchOutcome>,
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
        let wake_for_dns = Arc::clone(&waker);
        let resolver = Resolver::new(
            cfg.dns.clone(),
            Arc::new(move || {
                let _ = wake_for_dns.wake();
            }),
        );
        let wake_for_ip = Arc::clone(&waker);
        let admission = Admission::new(
            cfg.allow_private_addresses,
            cfg.ip_wait_timeout,
            cfg.ip_slots.clone(),
            move || {
                let _ = wake_for_ip.wake();
            },
        );
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
            queue: VecDeque::new(),
            queue_timer_at: None,
            submissions,
            submit_tx,
            done: Vec::new(),
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
        Submitter {
            tx: self.submit_tx.clone(),
            waker: Arc::clone(&self.waker),
        }
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
        if self.queue.len() + self.admission.waiting_len() >= self.cfg.max_queued_requests {
            return self.fail_request(req, FailReason::Overloaded);
        }
        // The url crate already lower-cases hosts of http(s) URLs; copy only if needed.
        let host: Arc<str> = if host.bytes().any(|b| b.is_ascii_uppercase()) {
            host.to_ascii_lowercase().into()
        } else {
            host.into()
        };
        let job = Job::new(req, PoolKey { https, host, port }, now);
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
        if let Some(user) = timeout {
            wait = Some(wait.map_or(user, |w| w.min(user)));
        }
        if !self.done.is_empty() {
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
        let ready = std::mem::take(&mut self.ready);
        for (token, readiness) in &ready {
            if *token == WAKER {
                continue;
            }
            let key = SlotKey::from_token(*token);
            self.step(key, *readiness, now);
        }
        self.ready = ready;
        self.take_submissions();
        self.take_dns_answers(now);
        self.fire_timers(now);
        self.pump(now);
        self.compact_timers();
        out.append(&mut self.done);
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
        while self.in_flight > 0 || !self.done.is_empty() {
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

    // ----- request routing -------------------------------------------------------------

    /// Sends `job` on its way: an idle pooled connection, a DNS lookup, a new connection,
    /// or the queue when every connection slot is taken.
    fn dispatch(&mut self, mut job: Job, now: Instant) {
        if !job.fresh_only {
            if let Some(slot) = self.pool.take(&job.key) {
                return self.start_on_idle(slot, job, now);
            }
        }
        if job.addrs.is_none() {
            match self.resolver.lookup(&job.key.host, job.key.port, now) {
                Lookup::Ready(Ok(addrs)) => {
                    job.addrs = Some(addrs);
                    job.dns = Some(now.saturating_duration_since(job.submitted));
                }
                Lookup::Ready(Err(e)) => return self.fail_job(job, None, FailReason::Dns(e), now),
                Lookup::Pending(id) => {
                    let waiters = self.dns_waiters.entry(id).or_default();
                    if waiters.is_empty() {
                        self.timers.schedule(
                            after(now, self.cfg.deadlines.dns_timeout),
                            TimerKey::Dns(id),
                        );
                    }
                    waiters.push(job);
                    return;
                }
            }
        }
        if self.conns.len() >= self.cfg.max_connections {
            match self.pool.take_oldest() {
                Some((_, slot)) => self.close(slot),
                None => {
                    if self.queue.is_empty() || self.queue_timer_at.is_none() {
                        let at = after(job.submitted, self.cfg.deadlines.total_timeout);
                        self.timers.schedule(at, TimerKey::Queue);
                        self.queue_timer_at = Some(at);
                    }
                    self.queue.push_back(job);
                    return;
                }
            }
        }
        self.connect(job, now);
    }

    /// Starts queued jobs while there is room.
    fn pump(&mut self, now: Instant) {
        while let Some(job) = self.queue.front() {
            let can_run = (!job.fresh_only && self.pool.len_for(&job.key) > 0)
                || self.conns.len() < self.cfg.max_connections
                || !self.pool.is_empty();
            if !can_run {
                break;
            }
            if let Some(job) = self.queue.pop_front() {
                self.dispatch(job, now);
            }
        }
        self.pump_ip(now);
    }

    /// Acts on the per-IP table's notices: closes idle connections to addresses others
    /// wait for, and starts this fetcher's waiting requests whose turn has come.
    fn pump_ip(&mut self, now: Instant) {
        let notices = self.admission.take_notices();
        for ip in notices.evict {
            self.yield_idle_to(ip);
        }
        for ip in notices.ready {
            // One decision at a time: acting on one (a reuse takes a pooled connection)
            // changes what the next sees.
            loop {
                let pool = &self.pool;
                let Some(d) = self
                    .admission
                    .next_waiting(ip, now, |k| pool.len_for(k) > 0)
                else {
                    break;
                };
                self.decide(d, now);
            }
        }
    }

    /// Carries out an admission decision.
    fn decide(&mut self, d: Decision, now: Instant) {
        match d {
            Decision::Connect { job, addr, slot } => self.open_conn(job, addr, slot, now),
            Decision::Wait { first, timer } => {
                self.stats.ip_waits += u64::from(first);
                if let Some(at) = timer {
                    self.timers.schedule(at, TimerKey::IpWait);
                }
            }
            Decision::Reuse(job) => self.dispatch(job, now),
            Decision::Fail { job, peer, reason } => self.fail_job(job, peer, reason, now),
        }
    }

    /// Closes the connections left pooled for one turn (`Release::PoolOneTurn`) that
    /// were not reused meanwhile, if requests still wait for their address.
    fn yield_contended(&mut self, now: Instant) {
        let soon = self.admission.take_yield_soon();
        if soon.is_empty() {
            return;
        }
        for slot in soon {
            let Some(conn) = self.conns.get_mut(slot) else {
                continue;
            };
            if !matches!(conn.phase, Phase::Idle(_)) {
                continue; // reused by its host
            }
            if still_wanted(conn.ip_slot.as_mut()) {
                let key = conn.key.clone();
                if self.pool.remove(&key, slot) {
                    self.stats.ip_yielded += 1;
                    self.close(slot);
                }
            }
        }
        self.pump(now);
    }

    /// Closes this fetcher's idle connections to `ip` (requests wait for its slots),
    /// except those in their one-turn grace.
    fn yield_idle_to(&mut self, ip: IpAddr) {
        let conns = &self.conns;
        let admission = &self.admission;
        let idle: Vec<(PoolKey, SlotKey)> = self
            .pool
            .iter()
            .filter(|(_, slot)| {
                !admission.in_grace(*slot)
                    && conns
                        .get(*slot)
                        .is_some_and(|c| c.peer.ip().to_canonical() == ip)
            })
            .map(|(k, s)| (k.clone(), s))
            .collect();
        for (key, slot) in idle {
            self.pool.remove(&key, slot);
            self.stats.ip_yielded += 1;
            self.close(slot);
        }
    }

    fn connect(&mut self, job: Job, now: Instant) {
        let d = self.admission.admit(job, now);
        self.decide(d, now);
    }

    /// Opens a connection to `addr` for `job`, holding `slot` (its per-IP slot).
    fn open_conn(&mut self, mut job: Job, addr: SocketAddr, slot: Option<IpSlot>, now: Instant) {
        let stream = match mio::net::TcpStream::connect(addr) {
            Ok(s) => s,
            Err(e) => {
                drop(slot);
                let reason = connect_reason(&e);
                if job
                    .addrs
                    .as_ref()
                    .is_some_and(|a| job.addr_index + 1 < a.len())
                {
                    job.addr_index += 1;
                    return self.connect(job, now);
                }
                return self.fail_job(job, None, reason, now);
            }
        };
        // Requests go out in one write; Nagle would only delay the next one.
        let _ = stream.set_nodelay(true);
        self.stats.connections_opened += 1;
        let conn = Conn {
            stream,
            tls: None,
            key: job.key.clone(),
            peer: addr,
            phase: Phase::Connecting(Connecting {
                ex: Exchange {
                    job,
                    started: now,
                    timings: Timings::default(),
                    reused: false,
                    tls_resumed: false,
                },
                since: now,
            }),
            registered: Interest::WRITABLE,
            timer_at: None,
            served: 0,
            ip_slot: slot,
            contended_reuses: 0,
        };
        let key = self.conns.insert(conn);
        let registered = match self.conns.get_mut(key) {
            Some(conn) => {
                self.poll
                    .registry()
                    .register(&mut conn.stream, key.token(), Interest::WRITABLE)
            }
            None => Ok(()),
        };
        if let Err(e) = registered {
            if let Some(mut conn) = self.conns.remove(key) {
                if let Phase::Connecting(p) = conn.phase.take() {
                    self.fail_job(p.ex.job, Some(addr), FailReason::Io(e.to_string()), now);
                }
            }
            return;
        }
        self.refresh(key, now);
    }

    /// Puts `job` on an idle connection taken from the pool and writes the request.
    fn start_on_idle(&mut self, slot: SlotKey, job: Job, now: Instant) {
        let Some(conn) = self.conns.get_mut(slot) else {
            // Cannot happen (the pool holds live keys only); route the job afresh.
            return self.dispatch(job, now);
        };
        self.stats.reused_exchanges += 1;
        if let Some(slot) = conn.ip_slot.as_mut() {
            slot.set_idle(false);
        }
        conn.phase = Phase::Sending(Sending {
            ex: Exchange {
                job,
                started: now,
                timings: Timings::default(),
                reused: true,
                tls_resumed: false,
            },
            since: now,
            written: 0,
        });
        self.step(slot, Readiness::ALL, now);
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
            After::Finished { outcome, reusable } => {
                self.stats.exchanges += 1;
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
                let release = self.admission.on_idle(
                    key,
                    &pool_key,
                    conn.peer.ip(),
                    conn.ip_slot.as_mut(),
                    &mut conn.contended_reuses,
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
                self.pool.put(pool_key, key);
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
                let peer = self.conns.get(key).map(|c| c.peer);
                self.close(key);
                let mut job = ex.job;
                if next_addr
                    && job
                        .addrs
                        .as_ref()
                        .is_some_and(|a| job.addr_index + 1 < a.len())
                {
                    job.addr_index += 1;
                    return self.dispatch(job, now);
                }
                if retryable && job.retries == 0 && is_idempotent(job.req.head.method) {
                    self.stats.retries += 1;
                    job.retries += 1;
                    job.fresh_only = true;
                    return self.dispatch(job, now);
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

    fn complete(&mut self, outcome: FetchOutcome) {
        self.in_flight = self.in_flight.saturating_sub(1);
        self.done.push(outcome);
    }

    fn fail_request(&mut self, req: FetchRequest, reason: FailReason) {
        let outcome = FetchOutcome {
            id: req.id,
            url: req.head.url,
            head: None,
            body: Vec::new(),
            body_truncated: false,
            wire_bytes: 0,
            decoded_bytes: 0,
            peer: None,
            reused_connection: false,
            tls_resumed: false,
            retries: 0,
            raw: Vec::new(),
            raw_truncated: false,
            // Refused before any work: no step took time.
            timings: Timings::default(),
            error: Some(reason),
        };
        self.complete(outcome);
    }

    fn fail_job(&mut self, job: Job, peer: Option<SocketAddr>, reason: FailReason, now: Instant) {
        let ex = Exchange {
            job,
            started: now,
            timings: Timings::default(),
            reused: false,
            tls_resumed: false,
        };
        let outcome = build_outcome(ex, None, peer, Some(reason), now);
        self.complete(outcome);
    }

    // ----- submissions, DNS, timers ----------------------------------------------------

    fn take_submissions(&mut self) {
        while let Ok(req) = self.submissions.try_recv() {
            self.submit(req);
        }
    }

    fn take_dns_answers(&mut self, now: Instant) {
        let mut answered = Vec::new();
        self.resolver
            .drain(now, |id, answer| answered.push((id, answer)));
        for (id, answer) in answered {
            let Some(jobs) = self.dns_waiters.remove(&id) else {
                continue;
            };
            for mut job in jobs {
                match &answer {
                    Ok(addrs) => {
                        job.addrs = Some(Arc::clone(addrs));
                        job.dns = Some(now.saturating_duration_since(job.submitted));
                        self.dispatch(job, now);
                    }
                    Err(e) => self.fail_job(job, None, FailReason::Dns(e.clone()), now),
                }
            }
        }
    }

    fn fire_timers(&mut self, now: Instant) {
        while let Some((at, key)) = self.timers.pop_due(now) {
            match key {
                TimerKey::Conn(slot) => {
                    let Some(conn) = self.conns.get_mut(slot) else {
                        continue;
                    };
                    if conn.timer_at != Some(at) {
                        continue; // stale: a later entry replaced it
                    }
                    conn.timer_at = None;
                    match conn.deadline(&self.cfg.deadlines, self.cfg.pool.idle_timeout) {
                        Some((due, what)) if due <= now => self.on_deadline(slot, what, now),
                        _ => self.refresh(slot, now),
                    }
                }
                TimerKey::Dns(id) => {
                    if let Some(jobs) = self.dns_waiters.remove(&id) {
                        self.resolver.abandon(id);
                        for job in jobs {
                            self.fail_job(job, None, FailReason::Timeout(TimeoutPhase::Dns), now);
                        }
                    }
                }
                TimerKey::IpWait => {
                    let (fails, next) = self.admission.expire(at, now);
                    if let Some(next) = next {
                        self.timers.schedule(next, TimerKey::IpWait);
                    }
                    for d in fails {
                        self.decide(d, now);
                    }
                }
                TimerKey::Queue => {
                    if self.queue_timer_at != Some(at) {
                        continue;
                    }
                    self.queue_timer_at = None;
                    let total = self.cfg.deadlines.total_timeout;
                    while self
                        .queue
                        .front()
                        .is_some_and(|j| after(j.submitted, total) <= now)
                    {
                        if let Some(job) = self.queue.pop_front() {
                            self.fail_job(job, None, FailReason::Timeout(TimeoutPhase::Queue), now);
                        }
                    }
                    if let Some(front) = self.queue.front() {
                        let at = after(front.submitted, total);
                        self.timers.schedule(at, TimerKey::Queue);
                        self.queue_timer_at = Some(at);
                    }
                }
            }
        }
    }

    fn on_deadline(&mut self, key: SlotKey, what: Deadline, now: Instant) {
        match what {
            Deadline::Fail(phase) => self.fail_conn(key, FailReason::Timeout(phase), now),
            Deadline::IdleExpired => {
                if let Some(conn) = self.conns.get(key) {
                    let pool_key = conn.key.clone();
                    self.pool.remove(&pool_key, key);
                }
                self.close(key);
            }
            Deadline::RateCheck => {
                let d = self.cfg.deadlines;
                let Some(conn) = self.conns.get_mut(key) else {
                    return;
                };
                let r = match &mut conn.phase {
                    Phase::ReadingHead(ReadingHead { r })
                    | Phase::ReadingBody(ReadingBody { r, .. }) => &mut r.rx,
                    _ => return self.refresh(key, now),
                };
                let elapsed = now.saturating_duration_since(r.rate_window_start);
                let needed = (d.min_rate_bytes_per_sec as f64 * elapsed.as_secs_f64()) as u64;
                if r.rate_window_bytes < needed {
                    return self.fail_conn(
                        key,
                        FailReason::Timeout(TimeoutPhase::SlowTransfer),
                        now,
                    );
                }
                r.rate_window_start = now;
                r.rate_window_bytes = 0;
                self.refresh(key, now);
            }
        }
    }

    /// Drops stale timer entries when they outnumber live ones (keeps the heap O(live)).
    fn compact_timers(&mut self) {
        let live = self.conns.len() + self.dns_waiters.len() + 1;
        if self.timers.len() <= 4 * live + 1024 {
            return;
        }
        let conns = &self.conns;
        let dns = &self.dns_waiters;
        let queue_at = self.queue_timer_at;
        let ip_at = self.admission.timer_at();
        self.timers.retain(|at, k| match k {
            TimerKey::IpWait => ip_at == Some(at),
            TimerKey::Conn(s) => conns.get(s).is_some_and(|c| c.timer_at == Some(at)),
            TimerKey::Dns(id) => dns.contains_key(&id),
            TimerKey::Queue => queue_at == Some(at),
        });
    }
}

fn is_idempotent(m: Method) -> bool {
    matches!(m, Method::Get | Method::Head)
}
