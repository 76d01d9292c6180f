//! Admission: may a request open a connection to its address now?
//!
//! A policy object with no sockets inside, so it can be tested with synthetic time. The
//! loop (`fetcher.rs`) tells it what happened — a request wants an address, the shared
//! table sent notices, a wait deadline fired, an exchange finished on a contended
//! address — and it answers with [`Decision`]s (connect now holding this slot, wait,
//! reuse an idle connection, fail with this reason) or [`Release`]s, which the loop
//! carries out. The counting itself is [`IpSlots`], the table shared by every fetcher of
//! the process (`per_ip.rs`); this object is one fetcher's side of it: its mailbox, its
//! requests waiting per address in ticket order, and the wait deadline.
//!
//! The address check ([`is_blocked_address`]) is made here too, on the resolved address
//! just before a slot is taken, so a refused address never costs a slot or a socket.

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::fetch::{DnsFailure, FailReason, TimeoutPhase};
use crate::net::address::is_blocked_address;
use crate::net::conn::{after, Job};
use crate::net::per_ip::{IpNotify, IpSlot, IpSlots, Notices};
use crate::net::pool::PoolKey;
use crate::net::slab::SlotKey;

/// A connection that finishes while requests wait for its address stays pooled for one
/// more loop turn (its host's next request usually follows at once) at most this many
/// times in a row; then it is closed so the waiting hosts get their turn.
pub(crate) const MAX_CONTENDED_REUSES: u32 = 16;

/// Waiting requests of other hosts a finishing connection is offered to at most (each
/// offer may verify its certificate against the request's host name).
const MAX_COVER_CHECKS: usize = 8;

/// What the loop should do with a request.
#[allow(
    clippy::large_enum_variant,
    reason = "a short-lived return value, moved once; boxing would allocate per request"
)]
pub(crate) enum Decision {
    /// Open a connection to `addr` for `job`, holding `slot` (`None` without a cap).
    Connect {
        job: Job,
        addr: SocketAddr,
        slot: Option<IpSlot>,
    },
    /// The request was parked until a slot of its address `ip` frees. `first`: this is
    /// the start of its wait (count it once). `timer`: arm the wait deadline at this
    /// instant.
    Wait {
        ip: IpAddr,
        first: bool,
        timer: Option<Instant>,
    },
    /// A waiting request for which an idle pooled connection exists (its host's, or a
    /// one of another host to its address that can carry it): route it there (it left the queue, and its
    /// ticket with it).
    Reuse(Job),
    /// The request fails.
    Fail {
        job: Job,
        peer: Option<SocketAddr>,
        reason: FailReason,
    },
}

/// What to do with a connection whose exchange just finished and that the pool would
/// keep.
#[allow(
    clippy::large_enum_variant,
    reason = "a short-lived return value, moved once; boxing would allocate per exchange"
)]
pub(crate) enum Release {
    /// Nobody waits for its address: pool it.
    Pool,
    /// Others wait: pool it for one loop turn (its host may reuse it), then the loop
    /// closes it ([`Admission::take_yield_soon`]).
    PoolOneTurn,
    /// Others wait and this connection has been reused too often in a row: close it.
    Close,
    /// A waiting request of the same host: run it on this connection now.
    Serve(Job),
}

/// One fetcher's admission policy. See the module docs.
pub(crate) struct Admission {
    allow_private: bool,
    /// Whether a connection may serve a waiting request of another host it can carry.
    share_across_hosts: bool,
    ip_wait_timeout: Duration,
    per_ip: Option<PerIp>,
    /// Idle connections whose address others wait for, closed at the start of the next
    /// `poll` unless their host reused them in between.
    yield_soon: Vec<SlotKey>,
}

/// The per-IP cap's state in one fetcher.
struct PerIp {
    table: Arc<IpSlots>,
    notify: Arc<IpNotify>,
    waiting: HashMap<IpAddr, VecDeque<Job>>,
    waiting_len: usize,
    /// The wait deadline currently armed in the loop's timer heap.
    timer_at: Option<Instant>,
}

impl Admission {
    /// `table`: the shared per-IP table (`None`: no cap). `wake` is called (from any
    /// thread) when the table has news for this fetcher.
    pub fn new(
        allow_private: bool,
        ip_wait_timeout: Duration,
        table: Option<Arc<IpSlots>>,
        wake: impl Fn() + Send + Sync + 'static,
    ) -> Self {
        Self {
            allow_private,
            share_across_hosts: true,
            ip_wait_timeout,
            per_ip: table.map(|table| PerIp {
                table,
                notify: IpNotify::new(wake),
                waiting: HashMap::new(),
                waiting_len: 0,
                timer_at: None,
            }),
            yield_soon: Vec::new(),
        }
    }

    /// Turns shared-hosting reuse on or off (on by default).
    pub fn set_share_across_hosts(&mut self, share: bool) {
        self.share_across_hosts = share;
    }

    /// Requests parked for a per-IP slot (they count against `max_queued_requests`).
    pub fn waiting_len(&self) -> usize {
        self.per_ip.as_ref().map_or(0, |p| p.waiting_len)
    }

    /// The wait deadline armed in the timer heap, if any (the loop drops older entries).
    pub fn timer_at(&self) -> Option<Instant> {
        self.per_ip.as_ref().and_then(|p| p.timer_at)
    }

    /// `job` wants to connect to its current address (`addrs[addr_index]`).
    pub fn admit(&mut self, mut job: Job, now: Instant) -> Decision {
        let Some(addr) = job
            .addrs
            .as_ref()
            .and_then(|a| a.get(job.addr_index).copied())
        else {
            return no_address(job);
        };
        if !self.allow_private && is_blocked_address(addr.ip()) {
            return Decision::Fail {
                job,
                peer: Some(addr),
                reason: FailReason::BlockedAddress,
            };
        }
        let slot = match &self.per_ip {
            None => None,
            Some(p) => match p.table.acquire(&p.notify, addr.ip(), &mut job.ip_ticket) {
                Some(slot) => Some(slot),
                None => return self.park(job, now),
            },
        };
        job.end_ip_wait(now);
        Decision::Connect { job, addr, slot }
    }

    /// Parks `job` until a slot of its address frees (its ticket is in the table).
    fn park(&mut self, mut job: Job, now: Instant) -> Decision {
        let timeout = self.ip_wait_timeout;
        let (Some(p), Some(ip)) = (self.per_ip.as_mut(), job.ip_ticket.as_ref().map(|t| t.ip()))
        else {
            return Decision::Fail {
                job,
                peer: None,
                reason: FailReason::Overloaded,
            };
        };
        let first = job.ip_wait_since.is_none();
        let since = *job.ip_wait_since.get_or_insert(now);
        let at = after(since, timeout);
        p.waiting.entry(ip).or_default().push_back(job);
        p.waiting_len += 1;
        let mut timer = None;
        if p.timer_at.is_none_or(|t| at < t) {
            p.timer_at = Some(at);
            timer = Some(at);
        }
        Decision::Wait { ip, first, timer }
    }

    /// Takes the table's notices for this fetcher: addresses whose idle connections it
    /// should close, and addresses whose waiting requests may now go
    /// ([`Admission::next_waiting`]).
    pub fn take_notices(&self) -> Notices {
        self.per_ip
            .as_ref()
            .map_or_else(Notices::default, |p| p.notify.take())
    }

    /// The next request waiting for `ip` that may go now, in ticket order, or `None`
    /// when the table gives no slot (or none waits). `has_idle` says whether a host has
    /// an idle pooled connection; the loop must act on each decision before asking
    /// again (a reuse empties the pool).
    pub fn next_waiting(
        &mut self,
        ip: IpAddr,
        now: Instant,
        has_idle: impl Fn(&PoolKey) -> bool,
    ) -> Option<Decision> {
        let p = self.per_ip.as_mut()?;
        let queue = p.waiting.get_mut(&ip)?;
        let Some(front) = queue.front_mut() else {
            p.waiting.remove(&ip);
            return None;
        };
        let reuse = !front.fresh_only && has_idle(&front.key);
        let addr = front
            .addrs
            .as_ref()
            .and_then(|a| a.get(front.addr_index).copied());
        let slot = match (reuse, addr) {
            (false, Some(addr)) => Some((
                addr,
                p.table
                    .acquire(&p.notify, addr.ip(), &mut front.ip_ticket)?,
            )),
            _ => None,
        };
        let mut job = queue.pop_front()?;
        if queue.is_empty() {
            p.waiting.remove(&ip);
        }
        p.waiting_len = p.waiting_len.saturating_sub(1);
        Some(match slot {
            Some((addr, slot)) => {
                job.end_ip_wait(now);
                Decision::Connect {
                    job,
                    addr,
                    slot: Some(slot),
                }
            }
            // Leaving the queue drops the ticket, which passes the turn on.
            None if reuse => {
                job.end_ip_wait(now);
                job.ip_ticket = None;
                Decision::Reuse(job)
            }
            None => {
                job.ip_ticket = None;
                no_address(job)
            }
        })
    }

    /// The wait deadline armed at `at` fired: fails the requests that waited longer
    /// than `ip_wait_timeout`. Returns those failures and the next deadline to arm.
    pub fn expire(&mut self, at: Instant, now: Instant) -> (Vec<Decision>, Option<Instant>) {
        let timeout = self.ip_wait_timeout;
        let Some(p) = self.per_ip.as_mut() else {
            return (Vec::new(), None);
        };
        if p.timer_at != Some(at) {
            return (Vec::new(), None); // stale: replaced by an earlier entry
        }
        p.timer_at = None;
        let mut expired = Vec::new();
        let mut next: Option<Instant> = None;
        p.waiting.retain(|_, queue| {
            let mut kept = VecDeque::with_capacity(queue.len());
            for job in queue.drain(..) {
                let due = after(job.ip_wait_since.unwrap_or(now), timeout);
                if due <= now {
                    expired.push(job);
                } else {
                    next = Some(next.map_or(due, |n| n.min(due)));
                    kept.push_back(job);
                }
            }
            *queue = kept;
            !queue.is_empty()
        });
        p.waiting_len = p.waiting_len.saturating_sub(expired.len());
        p.timer_at = next;
        let fails = expired
            .into_iter()
            .map(|mut job| {
                job.end_ip_wait(now);
                job.ip_ticket = None;
                Decision::Fail {
                    job,
                    peer: None,
                    reason: FailReason::Timeout(TimeoutPhase::Queue),
                }
            })
            .collect();
        (fails, next)
    }

    /// An exchange finished on connection `conn` (host `key`, address `ip`) and the pool
    /// would keep it. `slot` is its per-IP slot, marked idle here; `streak` counts its
    /// exchanges in a row while others waited for `ip`. `covers` says whether the
    /// connection may carry a request for another host of its scheme and port (for
    /// HTTPS: its certificate is valid for that name).
    #[allow(
        clippy::too_many_arguments,
        reason = "one call site; the loop's borrows of one connection, passed apart"
    )]
    pub fn on_idle(
        &mut self,
        conn: SlotKey,
        key: &PoolKey,
        ip: IpAddr,
        slot: Option<&mut IpSlot>,
        streak: &mut u32,
        covers: &dyn Fn(&PoolKey) -> bool,
        now: Instant,
    ) -> Release {
        let wanted = slot.is_some_and(|s| s.set_idle(true));
        if !wanted {
            *streak = 0;
            return Release::Pool;
        }
        // Requests wait for this address. A waiting request of the same host takes the
        // connection now. Otherwise it stays pooled for one loop turn (the caller usually
        // submits the host's next request on seeing this outcome; reusing beats a new
        // connection for the server too), then goes — at most MAX_CONTENDED_REUSES times
        // in a row, so a busy host cannot keep a contended slot for ever.
        *streak += 1;
        if *streak > MAX_CONTENDED_REUSES {
            return Release::Close;
        }
        if let Some(job) = self.take_waiting_for(key, ip.to_canonical(), covers, now) {
            return Release::Serve(job);
        }
        self.yield_soon.push(conn);
        Release::PoolOneTurn
    }

    /// A request waiting for `ip` here that a connection of `key` to that address can
    /// serve: one of the same host, else the first of any host of the same scheme and
    /// port that `covers` accepts (the request names its host itself).
    fn take_waiting_for(
        &mut self,
        key: &PoolKey,
        ip: IpAddr,
        covers: &dyn Fn(&PoolKey) -> bool,
        now: Instant,
    ) -> Option<Job> {
        let share = self.share_across_hosts;
        let p = self.per_ip.as_mut()?;
        let queue = p.waiting.get_mut(&ip)?;
        // Its own host first (as before sharing existed), then any host it can carry.
        // `covers` may verify a certificate: asked of a few candidates at most, so a
        // long queue of names a certificate does not cover costs little per exchange.
        let mut asked = 0usize;
        let pos = queue
            .iter()
            .position(|j| !j.fresh_only && j.key == *key)
            .or_else(|| {
                queue.iter().position(|j| {
                    if !share
                        || j.fresh_only
                        || !can_share(key, &j.key)
                        || asked >= MAX_COVER_CHECKS
                    {
                        return false;
                    }
                    asked += 1;
                    covers(&j.key)
                })
            })?;
        let mut job = queue.remove(pos)?;
        if queue.is_empty() {
            p.waiting.remove(&ip);
        }
        p.waiting_len = p.waiting_len.saturating_sub(1);
        job.ip_ticket = None;
        job.end_ip_wait(now);
        Some(job)
    }

    /// The connections given one turn of grace ([`Release::PoolOneTurn`]); the loop
    /// closes those still idle whose address is still wanted ([`still_wanted`]).
    pub fn take_yield_soon(&mut self) -> Vec<SlotKey> {
        std::mem::take(&mut self.yield_soon)
    }

    /// Whether `conn` is in its one-turn grace (an eviction notice spares it).
    pub fn in_grace(&self, conn: SlotKey) -> bool {
        self.yield_soon.contains(&conn)
    }
}

/// Whether an idle connection holding `slot` should close because requests wait for
/// its address (marks the slot idle either way).
pub(crate) fn still_wanted(slot: Option<&mut IpSlot>) -> bool {
    slot.is_some_and(|s| s.set_idle(true))
}

/// Whether a connection pooled under `conn` may carry a request for `want` to the same
/// address, as far as keys tell: same scheme, same port (the address is checked by the
/// caller; for HTTPS so is the certificate).
pub(crate) fn can_share(conn: &PoolKey, want: &PoolKey) -> bool {
    conn.https == want.https && conn.port == want.port && conn.via == want.via
}

fn no_address(job: Job) -> Decision {
    Decision::Fail {
        job,
        peer: None,
        reason: FailReason::Dns(DnsFailure::NoAddress),
    }
}

#[cfg(test)]
mod tests;
