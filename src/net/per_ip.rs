//! The per-IP connection cap: one table shared by every fetcher of a process.
//!
//! The crawl engine routes hosts to shards by a hash of the host *name*, so the many
//! host names of one shared server live in different shards, each with its own
//! [`crate::net::Fetcher`]. A per-fetcher count could not hold a process-wide cap;
//! [`IpSlots`] is the process-wide structure they all share (through
//! [`crate::net::FetcherConfig::ip_slots`]).
//!
//! - A connection holds an [`IpSlot`] from just before `connect()` until it is dropped,
//!   whatever closes it (error, timeout, reset, pool eviction, the fetcher's drop): the
//!   slot is released in `Drop`, so no close path can leak one. Connecting, TLS,
//!   busy and idle keep-alive connections all hold their slot — a server pays for an
//!   idle connection too.
//! - A request that finds its address at the cap takes an [`IpTicket`]: a place in a
//!   FIFO queue per address, shared by all fetchers, so no shard can starve another by
//!   grabbing each freed slot first. A ticket may take a slot when the tickets ahead of
//!   it fit in the free slots; dropping a ticket (timeout, request served otherwise)
//!   leaves the queue.
//! - When a slot frees, the fetchers whose tickets may now proceed are told which
//!   address (their [`IpNotify`] list) and woken (their `mio::Waker`): bounded
//!   latency, no polling timer.
//! - When a request starts waiting, the fetchers holding *idle* pooled connections to
//!   that address are asked to close them (an idle connection must not keep a waiting
//!   request out for the whole keep-alive timeout).
//!
//! Addresses are counted exactly (a map keyed by the address, IPv4-mapped IPv6 folded
//! into IPv4), not by a hash bucket, so unrelated servers never share a cap. The map is
//! split into [`LOCK_SHARDS`] mutex-protected parts by a hash of the address; an entry
//! lives only while its address has a slot held or a ticket waiting, so the table is
//! bounded by the connections and queued requests of the process (both capped by the
//! fetchers' configuration).

use std::collections::hash_map::Entry as MapEntry;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Independent locks the address map is split into (contention between shards).
pub const LOCK_SHARDS: usize = 64;

/// What one address has: the slots held and the requests waiting, in order.
#[derive(Default)]
struct Entry {
    holders: Vec<Holder>,
    queue: VecDeque<Waiter>,
}

impl Entry {
    fn is_unused(&self) -> bool {
        self.holders.is_empty() && self.queue.is_empty()
    }
}

struct Holder {
    id: u64,
    notify: Arc<IpNotify>,
    idle: bool,
}

struct Waiter {
    id: u64,
    notify: Arc<IpNotify>,
}

/// The process-wide per-IP connection cap (see the module docs).
pub struct IpSlots {
    limit: u32,
    parts: Box<[Mutex<HashMap<IpAddr, Entry>>]>,
    hasher: RandomState,
    next_id: AtomicU64,
    peak: AtomicU32,
}

impl fmt::Debug for IpSlots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IpSlots")
            .field("limit", &self.limit)
            .field("peak", &self.peak())
            .finish_non_exhaustive()
    }
}

/// The same address whether it came as IPv4 or as IPv4-mapped IPv6.
fn canonical(ip: IpAddr) -> IpAddr {
    ip.to_canonical()
}

impl IpSlots {
    /// A table allowing `limit` simultaneous connections per address (at least 1).
    pub fn new(limit: u32) -> Arc<Self> {
        Arc::new(Self {
            limit: limit.max(1),
            parts: (0..LOCK_SHARDS).map(|_| Mutex::default()).collect(),
            hasher: RandomState::new(),
            next_id: AtomicU64::new(1),
            peak: AtomicU32::new(0),
        })
    }

    /// Connections allowed per address.
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// Slots held for `ip` now.
    pub fn open(&self, ip: IpAddr) -> u32 {
        let ip = canonical(ip);
        let part = self.part(ip);
        part.get(&ip)
            .map_or(0, |e| u32::try_from(e.holders.len()).unwrap_or(u32::MAX))
    }

    /// Requests of any fetcher waiting for a slot of `ip` now.
    pub fn waiting(&self, ip: IpAddr) -> usize {
        let ip = canonical(ip);
        self.part(ip).get(&ip).map_or(0, |e| e.queue.len())
    }

    /// Slots held over all addresses now (walks the table: for tests and stats).
    pub fn open_total(&self) -> usize {
        self.parts
            .iter()
            .map(|p| lock(p).values().map(|e| e.holders.len()).sum::<usize>())
            .sum()
    }

    /// Requests waiting over all addresses now (walks the table).
    pub fn waiting_total(&self) -> usize {
        self.parts
            .iter()
            .map(|p| lock(p).values().map(|e| e.queue.len()).sum::<usize>())
            .sum()
    }

    /// The most slots ever held at once for one address.
    pub fn peak(&self) -> u32 {
        self.peak.load(Ordering::Relaxed)
    }

    fn part(&self, ip: IpAddr) -> MutexGuard<'_, HashMap<IpAddr, Entry>> {
        // `parts` has LOCK_SHARDS (> 0) entries by construction.
        let i = (self.hasher.hash_one(ip) as usize) % LOCK_SHARDS;
        lock(&self.parts[i])
    }

    fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Tries to take a slot of `ip` for `notify`'s fetcher.
    ///
    /// `ticket` is the request's place in the queue: `None` for a request that has not
    /// waited yet. On success the ticket (if any) is consumed and set to `None`. On
    /// failure a request without a ticket gets one (and holders of idle connections to
    /// `ip` are asked to close them); a request with one keeps its place.
    pub fn acquire(
        self: &Arc<Self>,
        notify: &Arc<IpNotify>,
        ip: IpAddr,
        ticket: &mut Option<IpTicket>,
    ) -> Option<IpSlot> {
        let ip = canonical(ip);
        let mut consumed = None;
        let got = {
            let mut part = self.part(ip);
            let entry = part.entry(ip).or_default();
            let open = entry.holders.len();
            let mine = ticket.as_ref().and_then(|t| {
                (t.ip == ip)
                    .then(|| entry.queue.iter().position(|w| w.id == t.id))
                    .flatten()
            });
            if mine.is_none() {
                // A ticket for another address (or one no longer queued) is not a place
                // in this queue: let it go (dropped armed, after the lock, it leaves its
                // own queue) and judge the request as a newcomer.
                consumed = ticket.take();
            }
            let ahead = mine.unwrap_or(entry.queue.len());
            if open + ahead < self.limit as usize {
                if let Some(pos) = mine {
                    entry.queue.remove(pos);
                }
                if let Some(mut t) = ticket.take() {
                    t.armed = false;
                    consumed = Some(t);
                }
                let id = self.next_id();
                entry.holders.push(Holder {
                    id,
                    notify: Arc::clone(notify),
                    idle: false,
                });
                let held = u32::try_from(entry.holders.len()).unwrap_or(u32::MAX);
                self.peak.fetch_max(held, Ordering::Relaxed);
                Some(IpSlot {
                    table: Arc::clone(self),
                    ip,
                    id,
                    idle: false,
                })
            } else {
                if ticket.is_none() {
                    let id = self.next_id();
                    entry.queue.push_back(Waiter {
                        id,
                        notify: Arc::clone(notify),
                    });
                    *ticket = Some(IpTicket {
                        table: Arc::clone(self),
                        ip,
                        id,
                        armed: true,
                    });
                    let mut last: Option<&Arc<IpNotify>> = None;
                    for h in entry.holders.iter().filter(|h| h.idle) {
                        if last.is_some_and(|l| Arc::ptr_eq(l, &h.notify)) {
                            continue;
                        }
                        h.notify.push(ip, List::Evict);
                        last = Some(&h.notify);
                    }
                }
                None
            }
        };
        // Dropped outside the lock: an armed ticket's drop takes a lock of its own.
        drop(consumed);
        got
    }

    fn release(&self, ip: IpAddr, id: u64) {
        let mut part = self.part(ip);
        if let MapEntry::Occupied(mut e) = part.entry(ip) {
            let entry = e.get_mut();
            if let Some(pos) = entry.holders.iter().position(|h| h.id == id) {
                entry.holders.swap_remove(pos);
            }
            self.wake_window(ip, entry);
            if entry.is_unused() {
                e.remove();
            }
        }
    }

    fn cancel(&self, ip: IpAddr, id: u64) {
        let mut part = self.part(ip);
        if let MapEntry::Occupied(mut e) = part.entry(ip) {
            let entry = e.get_mut();
            if let Some(pos) = entry.queue.iter().position(|w| w.id == id) {
                entry.queue.remove(pos);
            }
            self.wake_window(ip, entry);
            if entry.is_unused() {
                e.remove();
            }
        }
    }

    /// Marks slot `id` idle or busy; returns whether requests wait for `ip`.
    fn set_idle(&self, ip: IpAddr, id: u64, idle: bool) -> bool {
        let mut part = self.part(ip);
        let Some(entry) = part.get_mut(&ip) else {
            return false;
        };
        if let Some(h) = entry.holders.iter_mut().find(|h| h.id == id) {
            h.idle = idle;
        }
        !entry.queue.is_empty()
    }

    /// Tells the fetchers of the tickets that fit in the free slots to try again.
    fn wake_window(&self, ip: IpAddr, entry: &Entry) {
        let free = (self.limit as usize).saturating_sub(entry.holders.len());
        let mut last: Option<&Arc<IpNotify>> = None;
        for w in entry.queue.iter().take(free) {
            if last.is_some_and(|l| Arc::ptr_eq(l, &w.notify)) {
                continue;
            }
            w.notify.push(ip, List::Ready);
            last = Some(&w.notify);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock cannot leave an entry half-updated in a way that
    // matters more than losing the whole cap; keep going.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One connection's claim on its address. Released when dropped.
pub struct IpSlot {
    table: Arc<IpSlots>,
    ip: IpAddr,
    id: u64,
    idle: bool,
}

impl IpSlot {
    /// The address (canonical form).
    pub fn ip(&self) -> IpAddr {
        self.ip
    }

    /// Marks the connection idle (in a keep-alive pool) or busy. An idle slot is asked
    /// back when a request starts waiting for its address. Returns whether requests
    /// wait for the address now.
    pub fn set_idle(&mut self, idle: bool) -> bool {
        self.idle = idle;
        self.table.set_idle(self.ip, self.id, idle)
    }
}

impl Drop for IpSlot {
    fn drop(&mut self) {
        self.table.release(self.ip, self.id);
    }
}

impl fmt::Debug for IpSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IpSlot")
            .field("ip", &self.ip)
            .field("idle", &self.idle)
            .finish()
    }
}

/// A waiting request's place in its address's queue. Leaves the queue when dropped.
pub struct IpTicket {
    table: Arc<IpSlots>,
    ip: IpAddr,
    id: u64,
    armed: bool,
}

impl IpTicket {
    /// The address waited for (canonical form).
    pub fn ip(&self) -> IpAddr {
        self.ip
    }
}

impl Drop for IpTicket {
    fn drop(&mut self) {
        if self.armed {
            self.table.cancel(self.ip, self.id);
        }
    }
}

impl fmt::Debug for IpTicket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IpTicket").field("ip", &self.ip).finish()
    }
}

#[derive(Clone, Copy)]
enum List {
    Ready,
    Evict,
}

/// What the table tells one fetcher: addresses whose queue may move (`ready`) and
/// addresses whose idle connections it should close (`evict`).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Notices {
    /// A ticket of this fetcher may now take a slot of these addresses.
    pub ready: Vec<IpAddr>,
    /// Requests wait for these addresses: close idle connections to them.
    pub evict: Vec<IpAddr>,
}

/// One fetcher's mailbox at the table, and how to wake it.
pub struct IpNotify {
    wake: Box<dyn Fn() + Send + Sync>,
    pending: AtomicBool,
    notices: Mutex<Notices>,
}

impl fmt::Debug for IpNotify {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IpNotify")
            .field("pending", &self.pending.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl IpNotify {
    /// A mailbox that calls `wake` when a notice arrives (a fetcher passes its
    /// `mio::Waker`).
    pub fn new(wake: impl Fn() + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(Self {
            wake: Box::new(wake),
            pending: AtomicBool::new(false),
            notices: Mutex::default(),
        })
    }

    fn push(&self, ip: IpAddr, list: List) {
        {
            let mut n = lock(&self.notices);
            let v = match list {
                List::Ready => &mut n.ready,
                List::Evict => &mut n.evict,
            };
            if !v.contains(&ip) {
                v.push(ip);
            }
        }
        if !self.pending.swap(true, Ordering::AcqRel) {
            (self.wake)();
        }
    }

    /// Takes the notices gathered since the last call (cheap when there are none).
    pub fn take(&self) -> Notices {
        if !self.pending.swap(false, Ordering::AcqRel) {
            return Notices::default();
        }
        std::mem::take(&mut *lock(&self.notices))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;
    use std::sync::atomic::AtomicUsize;

    fn ip(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, last))
    }

    fn mailbox() -> (Arc<IpNotify>, Arc<AtomicUsize>) {
        let wakes = Arc::new(AtomicUsize::new(0));
        let w = Arc::clone(&wakes);
        (
            IpNotify::new(move || {
                w.fetch_add(1, Ordering::Relaxed);
            }),
            wakes,
        )
    }

    #[test]
    fn caps_each_address_separately_and_releases_on_drop() {
        let t = IpSlots::new(2);
        let (n, _) = mailbox();
        let a1 = t.acquire(&n, ip(1), &mut None).unwrap();
        let a2 = t.acquire(&n, ip(1), &mut None).unwrap();
        let b1 = t.acquire(&n, ip(2), &mut None).unwrap();
        assert_eq!(t.open(ip(1)), 2);
        let mut ticket = None;
        assert!(t.acquire(&n, ip(1), &mut ticket).is_none());
        assert!(ticket.is_some());
        drop(ticket);
        assert_eq!(t.waiting(ip(1)), 0);
        drop(a1);
        assert_eq!(t.open(ip(1)), 1);
        let a3 = t.acquire(&n, ip(1), &mut None).unwrap();
        drop((a2, a3, b1));
        assert_eq!(t.open_total(), 0);
        assert_eq!(t.waiting_total(), 0);
        assert_eq!(t.peak(), 2);
        // Entries are removed once unused: the table holds nothing.
        assert!(t.parts.iter().all(|p| lock(p).is_empty()));
    }

    #[test]
    fn ipv4_mapped_ipv6_is_the_same_address() {
        let t = IpSlots::new(1);
        let (n, _) = mailbox();
        let _a = t.acquire(&n, ip(9), &mut None).unwrap();
        let mapped = IpAddr::V6(Ipv4Addr::new(10, 0, 0, 9).to_ipv6_mapped());
        assert!(t.acquire(&n, mapped, &mut None).is_none());
        let v6: IpAddr = "::1".parse().unwrap();
        assert!(t.acquire(&n, v6, &mut None).is_some());
    }

    #[test]
    fn waiters_are_served_in_order_across_fetchers() {
        let t = IpSlots::new(1);
        let (na, wakes_a) = mailbox();
        let (nb, wakes_b) = mailbox();
        let held = t.acquire(&na, ip(1), &mut None).unwrap();
        let mut tb = None;
        assert!(t.acquire(&nb, ip(1), &mut tb).is_none()); // b queues first
        let mut ta = None;
        assert!(t.acquire(&na, ip(1), &mut ta).is_none()); // then a
        drop(held);
        // Only the head of the queue (b) is told; a newcomer cannot cut in.
        assert_eq!(wakes_b.load(Ordering::Relaxed), 1);
        assert_eq!(nb.take().ready, vec![ip(1)]);
        assert_eq!(na.take().ready, Vec::<IpAddr>::new());
        assert!(t.acquire(&na, ip(1), &mut ta).is_none());
        assert!(t.acquire(&na, ip(1), &mut None).is_none());
        let b = t.acquire(&nb, ip(1), &mut tb).unwrap();
        assert!(tb.is_none());
        drop(b);
        assert_eq!(na.take().ready, vec![ip(1)]);
        assert!(wakes_a.load(Ordering::Relaxed) >= 1);
    }

    #[test]
    fn a_cancelled_head_passes_the_turn_on() {
        let t = IpSlots::new(1);
        let (na, _) = mailbox();
        let (nb, _) = mailbox();
        let held = t.acquire(&na, ip(1), &mut None).unwrap();
        let mut ta = None;
        let mut tb = None;
        assert!(t.acquire(&na, ip(1), &mut ta).is_none());
        assert!(t.acquire(&nb, ip(1), &mut tb).is_none());
        drop(held);
        assert_eq!(na.take().ready, vec![ip(1)]);
        drop(ta); // a gives up (timeout): b is next
        assert_eq!(nb.take().ready, vec![ip(1)]);
        assert!(t.acquire(&nb, ip(1), &mut tb).is_some());
    }

    #[test]
    fn a_new_waiter_asks_idle_holders_to_close() {
        let t = IpSlots::new(2);
        let (na, _) = mailbox();
        let (nb, _) = mailbox();
        let mut idle = t.acquire(&na, ip(1), &mut None).unwrap();
        let _busy = t.acquire(&na, ip(1), &mut None).unwrap();
        assert!(!idle.set_idle(true));
        let mut tb = None;
        assert!(t.acquire(&nb, ip(1), &mut tb).is_none());
        let notices = na.take();
        assert_eq!(notices.evict, vec![ip(1)]);
        assert!(notices.ready.is_empty());
        // The holder closes it: the waiter is told.
        drop(idle);
        assert_eq!(nb.take().ready, vec![ip(1)]);
        assert!(t.acquire(&nb, ip(1), &mut tb).is_some());
    }

    #[test]
    fn a_ticket_for_another_address_is_not_a_place_in_line() {
        let t = IpSlots::new(1);
        let (n, _) = mailbox();
        let _a = t.acquire(&n, ip(1), &mut None).unwrap();
        let _b = t.acquire(&n, ip(2), &mut None).unwrap();
        let mut ticket = None;
        assert!(t.acquire(&n, ip(1), &mut ticket).is_none());
        assert_eq!(t.waiting(ip(1)), 1);
        // Used for ip(2): the ip(1) place is given up, a new one taken at ip(2).
        assert!(t.acquire(&n, ip(2), &mut ticket).is_none());
        assert_eq!((t.waiting(ip(1)), t.waiting(ip(2))), (0, 1));
        assert_eq!(ticket.as_ref().map(IpTicket::ip), Some(ip(2)));
        drop(ticket);
        assert_eq!(t.waiting_total(), 0);
    }

    #[test]
    fn many_threads_never_exceed_the_cap() {
        let t = IpSlots::new(3);
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let t = Arc::clone(&t);
                std::thread::spawn(move || {
                    let (n, _) = mailbox();
                    let mut got = 0;
                    for i in 0..2000u32 {
                        let mut ticket = None;
                        if let Some(s) = t.acquire(&n, ip((i % 2) as u8), &mut ticket) {
                            got += 1;
                            assert!(t.open(s.ip()) <= 3);
                            drop(s);
                        }
                    }
                    got
                })
            })
            .collect();
        let got: u32 = threads.into_iter().map(|h| h.join().unwrap()).sum();
        assert!(got > 0);
        assert!(t.peak() <= 3);
        assert_eq!(t.open_total(), 0);
        assert_eq!(t.waiting_total(), 0);
    }
}
