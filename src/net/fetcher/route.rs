//! Request routing: where a request goes next (an idle pooled connection, a DNS lookup,
//! the connection-slot queue, admission for its address) and opening connections. The
//! decisions about per-IP slots are `admission.rs`'s; this only carries them out.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::Interest;

use super::{Fetcher, TimerKey};
use crate::fetch::{FailReason, Timings};
use crate::net::admission::{can_share, still_wanted, Decision};
use crate::net::bind::BindAddrs;
use crate::net::conn::{
    after, connect_reason, proxy_connect_reason, Conn, Exchange, Job, Phase, Readiness, Sending,
};
use crate::net::dns::Lookup;
use crate::net::egress::rules::DIRECT;
use crate::net::per_ip::IpSlot;
use crate::net::pool::PoolKey;
use crate::net::slab::{Slab, SlotKey};
use crate::tls::TlsClient;

/// How often jobs waiting for a proxy's connection slot look again: the slots are
/// counted across fetchers, whose closes do not wake this loop.
pub(super) const PROXY_WAIT_RETRY: Duration = Duration::from_millis(20);

impl Fetcher {
    /// Sends `job` on its way: an idle pooled connection, a DNS lookup, a new connection,
    /// or the queue when every connection slot is taken.
    pub(super) fn dispatch(&mut self, mut job: Job, now: Instant) {
        if !job.fresh_only {
            if let Some(slot) = self.pool.take(&job.key) {
                return self.start_on_idle(slot, job, now);
            }
        }
        // Through a proxy that resolves names (HTTP, `socks5h`) there is no lookup and
        // no origin address: the per-IP cap and the address check do not apply.
        let at_proxy = job.key.via != DIRECT && self.proxy_resolves(job.key.via);
        if job.addrs.is_none() && !at_proxy {
            let registry = self.poll.registry();
            match self
                .resolver
                .lookup(&job.key.host, job.key.port, now, registry)
            {
                Lookup::Ready(Ok(addrs)) => {
                    job.addrs = Some(addrs);
                    job.dns = Some(now.saturating_duration_since(job.submitted));
                }
                Lookup::Ready(Err(e)) => return self.fail_job(job, None, FailReason::Dns(e), now),
                Lookup::Pending(id) => {
                    // The resolver keeps the lookup's deadline (`dns_timeout`) itself.
                    self.dns_waiters.entry(id).or_default().push(job);
                    self.dns_waiting += 1;
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
        if at_proxy {
            return self.open_conn(job, None, None, now);
        }
        self.connect(job, now);
    }

    /// Starts queued jobs while there is room.
    pub(super) fn pump(&mut self, now: Instant) {
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
        self.pump_proxy(now);
    }

    /// Retries the jobs waiting for a slot of their proxy (other fetchers may have
    /// closed connections to it), each once; those still without one wait on.
    pub(super) fn pump_proxy(&mut self, now: Instant) {
        let egress = self.cfg.egress.clone();
        for _ in 0..self.proxy_waiting.len() {
            let Some(job) = self.proxy_waiting.pop_front() else {
                break;
            };
            let full = self.pool.len_for(&job.key) == 0
                && egress
                    .as_ref()
                    .is_some_and(|e| e.open(job.key.via) >= e.per_proxy());
            // An idle connection to the proxy that no waiting job can use holds a slot
            // a waiting job needs: close it (this fetcher's own; another fetcher's
            // closes at its idle timeout).
            if full && !self.close_idle_via(job.key.via) {
                self.proxy_waiting.push_back(job);
            } else {
                self.dispatch(job, now);
            }
        }
    }

    /// Closes one idle connection of route `via` (the oldest found); false if none.
    fn close_idle_via(&mut self, via: u16) -> bool {
        let Some((key, slot)) = self
            .pool
            .iter()
            .find(|(k, _)| k.via == via)
            .map(|(k, s)| (k.clone(), s))
        else {
            return false;
        };
        self.pool.remove(&key, slot);
        self.close(slot);
        true
    }

    /// Parks `job` until its proxy has a free connection slot, and arms the retry
    /// timer. The wait counts against the request's total deadline.
    fn wait_for_proxy(&mut self, job: Job, now: Instant) {
        self.proxy_waiting.push_back(job);
        if self.proxy_timer_at.is_none() {
            let at = now + PROXY_WAIT_RETRY;
            self.timers.schedule(at, TimerKey::ProxyWait);
            self.proxy_timer_at = Some(at);
        }
    }

    /// Acts on the per-IP table's notices: closes idle connections to addresses others
    /// wait for, and starts this fetcher's waiting requests whose turn has come.
    pub(super) fn pump_ip(&mut self, now: Instant) {
        let notices = self.admission.take_notices();
        for ip in notices.evict {
            self.yield_idle_to(ip);
        }
        for ip in notices.ready {
            // One decision at a time: acting on one (a reuse takes a pooled connection)
            // changes what the next sees.
            self.serve_waiting(ip, now);
        }
    }

    /// Starts this fetcher's requests waiting for `ip` whose turn has come, or for which
    /// an idle connection exists (their host's, or another host's to the address that
    /// can carry them).
    /// One decision at a time: acting on one (a reuse takes a pooled connection)
    /// changes what the next sees.
    pub(super) fn serve_waiting(&mut self, ip: IpAddr, now: Instant) {
        // Each round takes a request off the queue; the bound is a safety net.
        let share = self.cfg.share_idle_across_hosts;
        for _ in 0..=self.admission.waiting_len() {
            let (pool, conns, tls, bind) = (&self.pool, &self.conns, &self.tls, &self.cfg.bind);
            let Some(d) = self.admission.next_waiting(ip, now, |k| {
                pool.len_for(k) > 0
                    || (share
                        && pool.has_peer(SocketAddr::new(ip, k.port), k.https, |slot| {
                            carries(conns, tls, bind, slot, k)
                        }))
            }) else {
                break;
            };
            self.decide(d, now);
        }
    }

    /// Carries out an admission decision.
    pub(super) fn decide(&mut self, d: Decision, now: Instant) {
        match d {
            Decision::Connect { job, addr, slot } => self.open_conn(job, Some(addr), slot, now),
            Decision::Wait { ip, first, timer } => {
                self.stats.ip_waits += u64::from(first);
                if let Some(at) = timer {
                    self.timers.schedule(at, TimerKey::IpWait);
                }
                // A connection of another host on this address may be idle
                // here: the waiting request can use it rather than wait for a slot.
                if first && !self.pool.is_empty() {
                    self.serve_waiting(ip, now);
                }
            }
            Decision::Reuse(job) => match self.take_shared_idle(&job) {
                Some(slot) => self.start_on_idle(slot, job, now),
                None => self.dispatch(job, now),
            },
            Decision::Fail { job, peer, reason } => self.fail_job(job, peer, reason, now),
        }
    }

    /// Closes the connections left pooled for one turn (`Release::PoolOneTurn`) that
    /// were not reused meanwhile, if requests still wait for their address.
    pub(super) fn yield_contended(&mut self, now: Instant) {
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
    pub(super) fn yield_idle_to(&mut self, ip: IpAddr) {
        let conns = &self.conns;
        let admission = &self.admission;
        let idle: Vec<(PoolKey, SlotKey)> = self
            .pool
            .iter()
            .filter(|(_, slot)| {
                !admission.in_grace(*slot)
                    && conns
                        .get(*slot)
                        .is_some_and(|c| c.origin.is_some_and(|o| o.ip().to_canonical() == ip))
            })
            .map(|(k, s)| (k.clone(), s))
            .collect();
        for (key, slot) in idle {
            self.pool.remove(&key, slot);
            self.stats.ip_yielded += 1;
            self.close(slot);
        }
    }

    pub(super) fn connect(&mut self, job: Job, now: Instant) {
        let d = self.admission.admit(job, now);
        self.decide(d, now);
    }

    /// Opens a connection for `job`, holding `slot` (its per-IP slot): to `origin`
    /// direct; to the route's proxy otherwise (`origin` is then the address trawl
    /// resolved for a `socks5` route, `None` where the proxy resolves the name).
    pub(super) fn open_conn(
        &mut self,
        mut job: Job,
        origin: Option<SocketAddr>,
        slot: Option<IpSlot>,
        now: Instant,
    ) {
        let mut proxy = None;
        let addr = match (&self.cfg.egress, job.key.via) {
            (Some(egress), via) if via != DIRECT => {
                let Some(proxy_slot) = egress.try_slot(via) else {
                    // The origin's slot is not held while waiting for the proxy's.
                    drop(slot);
                    return self.wait_for_proxy(job, now);
                };
                let (Some(addr), Some(v)) =
                    (egress.proxy_addr(via, job.addr_index), egress.via(via))
                else {
                    return self.fail_job(
                        job,
                        None,
                        FailReason::Connect("no proxy address".into()),
                        now,
                    );
                };
                proxy = Some((proxy_slot, Arc::clone(v)));
                addr
            }
            _ => match origin {
                Some(addr) => addr,
                None => {
                    let reason = FailReason::Dns(crate::fetch::DnsFailure::NoAddress);
                    return self.fail_job(job, None, reason, now);
                }
            },
        };
        let (stream, src) = match self.cfg.bind.connect(&job.key.host, addr) {
            Ok(s) => s,
            Err(e) => {
                drop(slot);
                if job.key.via != 0 {
                    // No `--bind-address` of the proxy's family is a configuration
                    // error, not the proxy being down (which would pause its route).
                    let reason = if crate::net::bind::is_no_source(&e) {
                        FailReason::Connect(e.to_string())
                    } else {
                        proxy_connect_reason(&e)
                    };
                    return self.fail_job(job, None, reason, now);
                }
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
        let ex = Exchange::fresh(job, now);
        let mut conn = Conn::connecting(stream, addr, origin, ex, slot, now);
        conn.src = src;
        if let Some((proxy_slot, via)) = proxy {
            conn.proxy_slot = Some(proxy_slot);
            conn.via = Some(via);
        }
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
                    self.fail_job(*p.ex.job, Some(addr), FailReason::Io(e.to_string()), now);
                }
            }
            return;
        }
        self.refresh(key, now);
    }

    /// An idle connection that can carry `job`: its host's, else one of another host
    /// connected to the address `job` is for (plain HTTP; HTTPS when its certificate
    /// covers `job`'s host).
    fn take_shared_idle(&mut self, job: &Job) -> Option<SlotKey> {
        if job.fresh_only {
            return None;
        }
        if let Some(slot) = self.pool.take(&job.key) {
            return Some(slot);
        }
        if !self.cfg.share_idle_across_hosts {
            return None;
        }
        let addr = job.addrs.as_ref()?.get(job.addr_index).copied()?;
        let (conns, tls, bind) = (&self.conns, &self.tls, &self.cfg.bind);
        let (_, slot) = self.pool.take_by_peer(addr, job.key.https, |slot| {
            carries(conns, tls, bind, slot, &job.key)
        })?;
        Some(slot)
    }

    /// Puts `job` on an idle connection taken from the pool and writes the request.
    /// The connection may have served another host name on the same address (plain
    /// HTTP); from now on it is pooled under `job`'s host.
    pub(super) fn start_on_idle(&mut self, slot: SlotKey, job: Job, now: Instant) {
        let Some(conn) = self.conns.get_mut(slot) else {
            // Cannot happen (the pool holds live keys only); route the job afresh.
            return self.dispatch(job, now);
        };
        self.stats.reused_exchanges += 1;
        let mut job = job;
        job.shared_conn = conn.key != job.key;
        if job.shared_conn {
            self.stats.shared_host_reuses += 1;
            conn.key = job.key.clone();
        }
        if let Some(slot) = conn.ip_slot.as_mut() {
            slot.set_idle(false);
        }
        conn.phase = Phase::Sending(Sending {
            ex: Exchange {
                job: Box::new(job),
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
}

/// Whether the idle connection `slot` may carry a request pooled under `want` (same
/// scheme and port, checked by the pool's index and here; the source address `want`'s
/// host leaves from, with `--bind-address`): plain HTTP always; HTTPS when the
/// certificate the connection was given is valid for `want`'s host too.
fn carries(
    conns: &Slab<Conn>,
    tls: &TlsClient,
    bind: &BindAddrs,
    slot: SlotKey,
    want: &PoolKey,
) -> bool {
    let Some(conn) = conns.get(slot) else {
        return false;
    };
    if !can_share(&conn.key, want) || !bind.leaves_alike(conn.src, conn.peer, &want.host) {
        return false;
    }
    !want.https
        || conn
            .tls
            .as_deref()
            .is_some_and(|c| tls.certificate_covers(c, &want.host))
}
