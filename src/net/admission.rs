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

use crate::net::address::is_blocked_address;
use crate::net::conn::{after, Job};
use crate::net::outcome::{DnsFailure, FailReason, TimeoutPhase};
use crate::net::per_ip::{IpNotify, IpSlot, IpSlots, Notices};
use crate::net::pool::PoolKey;
use crate::net::slab::SlotKey;

/// A connection that finishes while requests wait for its address stays pooled for one
/// more loop turn (its host's next request usually follows at once) at most this many
/// times in a row; then it is closed so the waiting hosts get their turn.
pub(crate) const MAX_CONTENDED_REUSES: u32 = 16;

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
    /// The request was parked until a slot of its address frees. `first`: this is the
    /// start of its wait (count it once). `timer`: arm the wait deadline at this instant.
    Wait { first: bool, timer: Option<Instant> },
    /// A waiting request whose host has an idle pooled connection: route it there
    /// (it left the queue, and its ticket with it).
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
        Decision::Wait { first, timer }
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
    /// exchanges in a row while others waited for `ip`.
    pub fn on_idle(
        &mut self,
        conn: SlotKey,
        key: &PoolKey,
        ip: IpAddr,
        slot: Option<&mut IpSlot>,
        streak: &mut u32,
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
        if let Some(job) = self.take_waiting_for(key, ip.to_canonical(), now) {
            return Release::Serve(job);
        }
        self.yield_soon.push(conn);
        Release::PoolOneTurn
    }

    /// A same-host request waiting for `ip` here, if any.
    fn take_waiting_for(&mut self, key: &PoolKey, ip: IpAddr, now: Instant) -> Option<Job> {
        let p = self.per_ip.as_mut()?;
        let queue = p.waiting.get_mut(&ip)?;
        let pos = queue.iter().position(|j| !j.fresh_only && j.key == *key)?;
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

fn no_address(job: Job) -> Decision {
    Decision::Fail {
        job,
        peer: None,
        reason: FailReason::Dns(DnsFailure::NoAddress),
    }
}

#[cfg(test)]
mod tests {
    //! The policy alone: synthetic `Instant`s, a real shared table, no sockets.

    use super::*;
    use crate::net::FetchRequest;
    use std::net::Ipv4Addr;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const WAIT: Duration = Duration::from_secs(30);
    const SERVER: [u8; 4] = [93, 184, 216, 34];

    fn key(host: &str) -> PoolKey {
        PoolKey {
            https: false,
            host: host.into(),
            port: 80,
        }
    }

    /// A request for `http://{host}/{id}` resolved to `ip`, submitted at `t`.
    fn job(id: u64, host: &str, ip: [u8; 4], t: Instant) -> Job {
        let url = url::Url::parse(&format!("http://{host}/{id}")).unwrap();
        let addr = SocketAddr::from((ip, 80));
        Job {
            req: FetchRequest::get(id, url, "test".into()),
            key: key(host),
            wire: Vec::new(),
            submitted: t,
            dns: Some(Duration::ZERO),
            addrs: Some(vec![addr].into()),
            addr_index: 0,
            retries: 0,
            fresh_only: false,
            ip_ticket: None,
            ip_wait_since: None,
            ip_waited: Duration::ZERO,
        }
    }

    /// An admission with a shared table of `cap` slots per address; counts its wakes.
    fn capped(table: &Arc<IpSlots>) -> (Admission, Arc<AtomicUsize>) {
        let wakes = Arc::new(AtomicUsize::new(0));
        let w = Arc::clone(&wakes);
        let a = Admission::new(false, WAIT, Some(Arc::clone(table)), move || {
            w.fetch_add(1, Ordering::SeqCst);
        });
        (a, wakes)
    }

    fn connect(d: Decision) -> (Job, SocketAddr, Option<IpSlot>) {
        match d {
            Decision::Connect { job, addr, slot } => (job, addr, slot),
            Decision::Wait { .. } => panic!("expected connect, got wait"),
            Decision::Reuse(_) => panic!("expected connect, got reuse"),
            Decision::Fail { reason, .. } => panic!("expected connect, got {reason:?}"),
        }
    }

    fn fail_reason(d: Decision) -> (u64, Option<SocketAddr>, FailReason) {
        match d {
            Decision::Fail { job, peer, reason } => (job.req.id, peer, reason),
            _ => panic!("expected a failure"),
        }
    }

    fn conn_key(n: usize) -> SlotKey {
        SlotKey::from_token(mio::Token(n))
    }

    #[test]
    fn without_a_cap_every_request_connects_at_once() {
        let t0 = Instant::now();
        let mut a = Admission::new(false, WAIT, None, || {});
        for id in 0..100 {
            let (job, addr, slot) = connect(a.admit(job(id, "a.test", SERVER, t0), t0));
            assert_eq!(job.req.id, id);
            assert_eq!(addr, SocketAddr::from((SERVER, 80)));
            assert!(slot.is_none());
        }
        assert_eq!(a.waiting_len(), 0);
        assert_eq!(a.take_notices(), Notices::default());
    }

    #[test]
    fn blocked_addresses_fail_before_taking_a_slot() {
        let t0 = Instant::now();
        let table = IpSlots::new(1);
        let (mut a, _) = capped(&table);
        let (id, peer, reason) = fail_reason(a.admit(job(7, "lo.test", [127, 0, 0, 1], t0), t0));
        assert_eq!(id, 7);
        assert_eq!(peer, Some(SocketAddr::from(([127, 0, 0, 1], 80))));
        assert!(matches!(reason, FailReason::BlockedAddress));
        assert_eq!(table.open_total(), 0, "a refused address holds no slot");
        // The operator's opt-in lets it through.
        let mut open = Admission::new(true, WAIT, Some(Arc::clone(&table)), || {});
        let (_, _, slot) = connect(open.admit(job(8, "lo.test", [127, 0, 0, 1], t0), t0));
        assert!(slot.is_some());
        assert_eq!(table.open(IpAddr::V4(Ipv4Addr::LOCALHOST)), 1);
    }

    #[test]
    fn a_request_without_an_address_fails_as_dns() {
        let t0 = Instant::now();
        let mut a = Admission::new(false, WAIT, None, || {});
        let mut j = job(1, "a.test", SERVER, t0);
        j.addr_index = 1; // past the only address
        let (_, peer, reason) = fail_reason(a.admit(j, t0));
        assert!(peer.is_none());
        assert!(matches!(reason, FailReason::Dns(DnsFailure::NoAddress)));
    }

    #[test]
    fn at_the_cap_requests_wait_and_arm_one_deadline() {
        let t0 = Instant::now();
        let table = IpSlots::new(1);
        let (mut a, _) = capped(&table);
        let (_, _, held) = connect(a.admit(job(1, "a.test", SERVER, t0), t0));
        assert!(held.is_some());
        let t1 = t0 + Duration::from_secs(1);
        match a.admit(job(2, "b.test", SERVER, t1), t1) {
            Decision::Wait { first, timer } => {
                assert!(first);
                assert_eq!(timer, Some(t1 + WAIT));
            }
            _ => panic!("expected a wait"),
        }
        // A later waiter's deadline is later: no new timer entry.
        let t2 = t0 + Duration::from_secs(2);
        assert!(matches!(
            a.admit(job(3, "c.test", SERVER, t2), t2),
            Decision::Wait {
                first: true,
                timer: None
            }
        ));
        assert_eq!(a.waiting_len(), 2);
        assert_eq!(a.timer_at(), Some(t1 + WAIT));
        assert_eq!(table.waiting(IpAddr::from(SERVER)), 2);
    }

    #[test]
    fn a_freed_slot_wakes_the_waiter_and_it_goes_in_ticket_order() {
        let t0 = Instant::now();
        let table = IpSlots::new(1);
        let (mut a, wakes) = capped(&table);
        let (_, _, held) = connect(a.admit(job(1, "a.test", SERVER, t0), t0));
        for id in 2..=4 {
            let t = t0 + Duration::from_secs(id);
            assert!(matches!(
                a.admit(job(id, "b.test", SERVER, t), t),
                Decision::Wait { .. }
            ));
        }
        assert_eq!(wakes.load(Ordering::SeqCst), 0);
        assert_eq!(
            a.next_waiting(IpAddr::from(SERVER), t0, |_| false)
                .map(|_| ()),
            None
        );
        drop(held);
        assert_eq!(wakes.load(Ordering::SeqCst), 1, "the release woke the loop");
        let notices = a.take_notices();
        assert_eq!(notices.ready, vec![IpAddr::from(SERVER)]);
        let t10 = t0 + Duration::from_secs(10);
        let (j, _, slot) = connect(
            a.next_waiting(IpAddr::from(SERVER), t10, |_| false)
                .unwrap(),
        );
        assert_eq!(j.req.id, 2, "first come, first served");
        assert_eq!(j.ip_waited, Duration::from_secs(8), "waited from t2 to t10");
        assert!(j.ip_ticket.is_none());
        // Only one slot: the next waiter stays put until it frees.
        assert!(a
            .next_waiting(IpAddr::from(SERVER), t10, |_| false)
            .is_none());
        drop(slot);
        let (j, _, _) = connect(
            a.next_waiting(IpAddr::from(SERVER), t10, |_| false)
                .unwrap(),
        );
        assert_eq!(j.req.id, 3);
        assert_eq!(a.waiting_len(), 1);
    }

    #[test]
    fn a_waiter_whose_host_has_an_idle_connection_reuses_it_and_passes_the_turn() {
        let t0 = Instant::now();
        let table = IpSlots::new(1);
        let (mut a, _) = capped(&table);
        let (_, _, held) = connect(a.admit(job(1, "a.test", SERVER, t0), t0));
        assert!(matches!(
            a.admit(job(2, "a.test", SERVER, t0), t0),
            Decision::Wait { .. }
        ));
        assert!(matches!(
            a.admit(job(3, "b.test", SERVER, t0), t0),
            Decision::Wait { .. }
        ));
        let t5 = t0 + Duration::from_secs(5);
        let idle_host = key("a.test");
        match a.next_waiting(IpAddr::from(SERVER), t5, |k| *k == idle_host) {
            Some(Decision::Reuse(j)) => {
                assert_eq!(j.req.id, 2);
                assert!(
                    j.ip_ticket.is_none(),
                    "leaving the queue gives the ticket up"
                );
                assert_eq!(j.ip_waited, Duration::from_secs(5));
            }
            _ => panic!("expected a reuse"),
        }
        assert_eq!(table.waiting(IpAddr::from(SERVER)), 1);
        drop(held);
        let (j, _, _) = connect(a.next_waiting(IpAddr::from(SERVER), t5, |_| false).unwrap());
        assert_eq!(j.req.id, 3);
    }

    #[test]
    fn waits_expire_after_the_bound_counted_from_their_start() {
        let t0 = Instant::now();
        let table = IpSlots::new(1);
        let (mut a, _) = capped(&table);
        let (_, _, _held) = connect(a.admit(job(1, "a.test", SERVER, t0), t0));
        let t10 = t0 + Duration::from_secs(10);
        assert!(matches!(
            a.admit(job(2, "b.test", SERVER, t0), t0),
            Decision::Wait { .. }
        ));
        assert!(matches!(
            a.admit(job(3, "c.test", SERVER, t10), t10),
            Decision::Wait { .. }
        ));
        // A stale entry (not the armed deadline) does nothing.
        let (fails, next) = a.expire(t0 + Duration::from_secs(1), t0 + WAIT);
        assert!(fails.is_empty() && next.is_none());
        assert_eq!(a.waiting_len(), 2);
        let (fails, next) = a.expire(t0 + WAIT, t0 + WAIT);
        assert_eq!(fails.len(), 1);
        let mut fails = fails.into_iter();
        let (id, _, reason) = fail_reason(fails.next().unwrap());
        assert_eq!(id, 2);
        assert!(matches!(reason, FailReason::Timeout(TimeoutPhase::Queue)));
        assert_eq!(
            next,
            Some(t10 + WAIT),
            "the next deadline is the survivor's"
        );
        assert_eq!(a.timer_at(), next);
        assert_eq!(a.waiting_len(), 1);
        assert_eq!(
            table.waiting(IpAddr::from(SERVER)),
            1,
            "the ticket left the table"
        );
    }

    #[test]
    fn a_request_waiting_again_keeps_its_start_and_is_counted_once() {
        let t0 = Instant::now();
        let table = IpSlots::new(1);
        let (mut a, _) = capped(&table);
        let (_, _, _held) = connect(a.admit(job(1, "a.test", SERVER, t0), t0));
        let mut j = job(2, "b.test", SERVER, t0);
        j.ip_wait_since = Some(t0);
        assert!(matches!(
            a.admit(j, t0 + Duration::from_secs(3)),
            Decision::Wait {
                first: false,
                timer: Some(t)
            } if t == t0 + WAIT
        ));
    }

    #[test]
    fn an_idle_connection_is_pooled_when_nobody_waits() {
        let t0 = Instant::now();
        let table = IpSlots::new(2);
        let (mut a, _) = capped(&table);
        let (_, _, mut slot) = connect(a.admit(job(1, "a.test", SERVER, t0), t0));
        let mut streak = 5;
        let r = a.on_idle(
            conn_key(1),
            &key("a.test"),
            IpAddr::from(SERVER),
            slot.as_mut(),
            &mut streak,
            t0,
        );
        assert!(matches!(r, Release::Pool));
        assert_eq!(
            streak, 0,
            "the streak counts contended reuses in a row only"
        );
        assert!(!a.in_grace(conn_key(1)));
    }

    #[test]
    fn a_contended_idle_connection_gets_one_turn_then_a_bounded_streak() {
        let t0 = Instant::now();
        let table = IpSlots::new(1);
        let (mut a, _) = capped(&table);
        let (_, _, mut slot) = connect(a.admit(job(1, "a.test", SERVER, t0), t0));
        assert!(matches!(
            a.admit(job(2, "b.test", SERVER, t0), t0),
            Decision::Wait { .. }
        ));
        let mut streak = 0;
        for round in 1..=MAX_CONTENDED_REUSES {
            let r = a.on_idle(
                conn_key(1),
                &key("a.test"),
                IpAddr::from(SERVER),
                slot.as_mut(),
                &mut streak,
                t0,
            );
            assert!(matches!(r, Release::PoolOneTurn), "round {round}");
            assert!(a.in_grace(conn_key(1)));
            assert_eq!(a.take_yield_soon(), vec![conn_key(1)]);
            assert!(still_wanted(slot.as_mut()), "b.test still waits");
            if let Some(s) = slot.as_mut() {
                s.set_idle(false); // its host reused it
            }
        }
        let r = a.on_idle(
            conn_key(1),
            &key("a.test"),
            IpAddr::from(SERVER),
            slot.as_mut(),
            &mut streak,
            t0,
        );
        assert!(
            matches!(r, Release::Close),
            "the 17th contended reuse yields"
        );
    }

    #[test]
    fn a_contended_idle_connection_serves_a_waiter_of_its_own_host() {
        let t0 = Instant::now();
        let table = IpSlots::new(1);
        let (mut a, _) = capped(&table);
        let (_, _, mut slot) = connect(a.admit(job(1, "a.test", SERVER, t0), t0));
        assert!(matches!(
            a.admit(job(2, "b.test", SERVER, t0), t0),
            Decision::Wait { .. }
        ));
        assert!(matches!(
            a.admit(job(3, "a.test", SERVER, t0), t0),
            Decision::Wait { .. }
        ));
        let mut streak = 0;
        let t4 = t0 + Duration::from_secs(4);
        match a.on_idle(
            conn_key(1),
            &key("a.test"),
            IpAddr::from(SERVER),
            slot.as_mut(),
            &mut streak,
            t4,
        ) {
            Release::Serve(j) => {
                assert_eq!(j.req.id, 3, "the same host's request, not b.test's");
                assert_eq!(j.ip_waited, Duration::from_secs(4));
            }
            _ => panic!("expected serve"),
        }
        assert_eq!(a.waiting_len(), 1);
        assert_eq!(table.waiting(IpAddr::from(SERVER)), 1);
    }

    #[test]
    fn a_wait_asks_other_fetchers_to_close_their_idle_connections() {
        let t0 = Instant::now();
        let table = IpSlots::new(1);
        let (mut holder, holder_wakes) = capped(&table);
        let (mut waiter, _) = capped(&table);
        let (_, _, mut slot) = connect(holder.admit(job(1, "a.test", SERVER, t0), t0));
        let mut streak = 0;
        let r = holder.on_idle(
            conn_key(1),
            &key("a.test"),
            IpAddr::from(SERVER),
            slot.as_mut(),
            &mut streak,
            t0,
        );
        assert!(matches!(r, Release::Pool));
        assert!(matches!(
            waiter.admit(job(2, "b.test", SERVER, t0), t0),
            Decision::Wait { .. }
        ));
        assert_eq!(holder_wakes.load(Ordering::SeqCst), 1);
        assert_eq!(holder.take_notices().evict, vec![IpAddr::from(SERVER)]);
        drop(slot); // the holder closed it
        assert_eq!(waiter.take_notices().ready, vec![IpAddr::from(SERVER)]);
        let (j, _, _) = connect(
            waiter
                .next_waiting(IpAddr::from(SERVER), t0, |_| false)
                .unwrap(),
        );
        assert_eq!(j.req.id, 2);
    }
}
