//! The active set counted in server addresses as well as hosts: a thousand names on
//! one shared address must not fill the active set while hosts of other servers wait
//! in the line (`docs/frontier.md`, "The active set and the line").
//!
//! BUbiNG counts its front in IP addresses because it resolves a host before admitting
//! it. trawl resolves at the fetch, so a host's address is known only once a fetch of
//! it got an answer: the caller reports it ([`Frontier::note_address`]) and from then
//! on the frontier counts the active hosts of each address. A host found to be one too
//! many on its address is *crowded*: at its next turn with nothing in flight it leaves
//! the active set and waits for its address, in RAM (its entry is there anyway): a
//! list of host ids per address. A marker of the line whose host's address is full
//! puts the host on that list instead of activating it. When a host of the address
//! leaves the active set, the address has room again and its first waiting host is
//! activated before any host of the line (hosts already started come first). Sending
//! them to the back of the line instead made a shared address's hosts cycle through
//! it: each turn read and wrote thousands of markers (six times the CPU on the shared
//! widebench web).
//! The bound is per shard; the fetcher's per-address connection cap
//! (`--per-ip-connections`) still rules what reaches the server.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;

use super::host::HostId;
use super::Frontier;

/// A server address as the frontier counts it: a hash of the IP (IPv4-mapped IPv6
/// folded into IPv4); 0 stands for "not known".
pub(super) type AddrKey = u64;

/// Active hosts per address, and the hosts sent back for their address.
#[derive(Debug, Default)]
pub(super) struct Addresses {
    active: HashMap<AddrKey, u32, ahash::RandomState>,
    hasher: ahash::RandomState,
    /// Hosts that left the active set, or were not let in, because their address had
    /// its share of it.
    pub rotations: u64,
    /// Hosts waiting for room on their address, in arrival order.
    waiting: HashMap<AddrKey, VecDeque<HostId>, ahash::RandomState>,
    /// Addresses that had room when a host of theirs waited (an address may be listed
    /// twice, or have lost its room since: checked when taken).
    ready: VecDeque<AddrKey>,
}

impl Addresses {
    fn key(&self, ip: IpAddr) -> AddrKey {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
            v4 => v4,
        };
        self.hasher.hash_one(ip).max(1)
    }

    fn count(&self, key: AddrKey) -> u32 {
        self.active.get(&key).copied().unwrap_or(0)
    }

    /// One more active host on `key`; returns the new count (0 for an unknown address).
    fn join(&mut self, key: AddrKey) -> u32 {
        if key == 0 {
            return 0;
        }
        let n = self.active.entry(key).or_insert(0);
        *n += 1;
        *n
    }

    fn leave(&mut self, key: AddrKey) {
        if let Some(n) = self.active.get_mut(&key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.active.remove(&key);
            }
        }
    }

    /// Distinct addresses with an active host.
    pub fn len(&self) -> usize {
        self.active.len()
    }

    /// Whether an address with waiting hosts may have room.
    pub fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    fn wait(&mut self, key: AddrKey, id: HostId) {
        self.waiting.entry(key).or_default().push_back(id);
    }

    fn pop_waiting(&mut self, key: AddrKey) -> Option<HostId> {
        let list = self.waiting.get_mut(&key)?;
        let id = list.pop_front();
        if list.is_empty() {
            self.waiting.remove(&key);
        }
        id
    }

    fn has_waiting(&self, key: AddrKey) -> bool {
        self.waiting.contains_key(&key)
    }
}

impl Frontier {
    /// A fetch of `host` was answered from `ip`. An active host that is one too many
    /// on its address becomes crowded: it leaves for the back of the line at its next
    /// turn with nothing in flight, if hosts wait there. Does nothing for a host with
    /// no entry.
    pub fn note_address(&mut self, host: &str, ip: IpAddr) {
        let key = self.addresses.key(ip);
        let Some(id) = self.table.find(host) else {
            return;
        };
        let Some(h) = self.table.get_mut(id) else {
            return;
        };
        if h.addr == key {
            return;
        }
        let old = std::mem::replace(&mut h.addr, key);
        if !h.active {
            return;
        }
        self.addresses.leave(old);
        if self.addresses.join(key) > self.config.max_active_per_address {
            if let Some(h) = self.table.get_mut(id) {
                h.crowded = true;
            }
            self.settling.push(id);
        }
    }

    /// Whether `id`'s address is known and has its share of the active set.
    pub(super) fn address_full(&self, id: HostId) -> bool {
        self.table.get(id).is_some_and(|h| {
            h.addr != 0 && self.addresses.count(h.addr) >= self.config.max_active_per_address
        })
    }

    /// `id` joined the active set: its address, if known, counts one more.
    pub(super) fn join_address(&mut self, id: HostId) {
        if let Some(addr) = self.table.get(id).map(|h| h.addr) {
            self.addresses.join(addr);
        }
    }

    /// `id` left the active set: its address has a place more, which the first host
    /// waiting for it may take.
    pub(super) fn leave_address(&mut self, id: HostId) {
        let Some(h) = self.table.get_mut(id) else {
            return;
        };
        h.crowded = false;
        let addr = h.addr;
        self.addresses.leave(addr);
        if addr != 0
            && self.addresses.has_waiting(addr)
            && self.addresses.count(addr) < self.config.max_active_per_address
        {
            self.addresses.ready.push_back(addr);
        }
    }

    /// `id` (inactive, with a queue) waits for room on its address, in RAM: no record
    /// in the line. Counted with the address rotations.
    pub(super) fn wait_for_address(&mut self, id: HostId) {
        let Some(h) = self.table.get_mut(id) else {
            return;
        };
        h.waiting = true;
        let addr = h.addr;
        self.addresses.wait(addr, id);
        self.addresses.rotations += 1;
    }

    /// Activates the first host waiting for an address that has room again; false if
    /// none may go.
    pub(super) fn activate_waiting_for_address(&mut self) -> bool {
        let cap = self.config.max_active_per_address;
        while let Some(addr) = self.addresses.ready.pop_front() {
            while self.addresses.count(addr) < cap {
                let Some(id) = self.addresses.pop_waiting(addr) else {
                    break;
                };
                let Some(h) = self.table.get_mut(id) else {
                    continue;
                };
                if h.active || !h.waiting || h.addr != addr {
                    continue;
                }
                h.waiting = false;
                if !h.has_queue() {
                    // Its queue was given up meanwhile.
                    self.list_if_idle(id);
                    continue;
                }
                self.activate(id);
                if self.addresses.has_waiting(addr) && self.addresses.count(addr) < cap {
                    self.addresses.ready.push_front(addr);
                }
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;
    use std::time::{Duration, Instant};

    use super::super::{Frontier, FrontierConfig, QueuedUrl};

    fn frontier(max_active: usize, per_address: u32) -> Frontier {
        let mut c = FrontierConfig::new("unused");
        c.max_active_hosts = max_active;
        c.max_active_per_address = per_address;
        Frontier::in_memory(c)
    }

    fn page(host: &str, i: usize) -> QueuedUrl {
        QueuedUrl::seed(format!("http://{host}/{i}"))
    }

    const SHARED: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 9);

    /// A crawl in steps of a second (each fetch ends at once, its host's politeness
    /// delay is a second): every step takes what is ready, reports each `shared*` host
    /// at `SHARED` and every other host at an address of its own. Returns the step at
    /// which the last page of an `own*` host was served, and the pages served.
    fn crawl(f: &mut Frontier) -> (usize, usize) {
        let start = Instant::now();
        let (mut own_done, mut pages) = (0, 0);
        for step in 0..1000 {
            let now = start + Duration::from_secs(step as u64);
            while let Some((host, _)) = f.take_ready(now).unwrap() {
                let ip = if host.starts_with("shared") {
                    SHARED
                } else {
                    Ipv4Addr::new(127, 1, 0, host[3..].parse::<u8>().unwrap() + 1)
                };
                f.note_address(&host, ip.into());
                f.complete(&host, now + Duration::from_secs(1));
                pages += 1;
                if host.starts_with("own") {
                    own_done = step;
                }
            }
            if f.is_exhausted() {
                break;
            }
        }
        (own_done, pages)
    }

    /// Twenty names on one address with ten pages each come first in the line, then
    /// twenty hosts of their own with three pages each; eight hosts may be active.
    fn shared_first(per_address: u32) -> Frontier {
        let mut f = frontier(8, per_address);
        let now = Instant::now();
        for (prefix, pages) in [("shared", 10), ("own", 3)] {
            for h in 0..20 {
                let host = format!("{prefix}{h}");
                for i in 0..pages {
                    f.push(&host, page(&host, i), now).unwrap();
                }
            }
        }
        f
    }

    #[test]
    fn many_names_on_one_address_do_not_fill_the_active_set() {
        // Counted in hosts only, the shared names hold the whole active set until
        // they are done: the other hosts finish after some 33 steps.
        let mut hosts_only = shared_first(u32::MAX);
        let (own_done_before, pages) = crawl(&mut hosts_only);
        assert_eq!(pages, 260);
        assert!(own_done_before >= 25, "{own_done_before}");
        // Counted in addresses as well, two shared names are active at a time once
        // their address is known (each costs one page to learn it): the other hosts
        // take the rest of the set and finish in about half the steps.
        let mut f = shared_first(2);
        let (own_done, pages) = crawl(&mut f);
        assert_eq!(pages, 260, "every page is served once");
        assert!(own_done <= 20, "{own_done} (hosts only: {own_done_before})");
        let s = f.stats();
        assert!(s.address_rotations >= 6, "{s:?}");
        // Each shared name waits for its address at most once an activation: no
        // cycling through the line (which once cost six times the CPU at width).
        assert!(s.address_rotations <= 2 * 20, "{s:?}");
        assert!(s.line_records == 0 && s.blocks_written <= 2, "{s:?}");
        assert_eq!((s.hosts_active, s.active_addresses), (0, 0));
        assert!(f.is_exhausted());
    }

    #[test]
    fn without_a_bound_hosts_are_served_as_before_and_addresses_are_counted() {
        let now = Instant::now();
        let mut f = frontier(8, u32::MAX);
        for h in 0..4 {
            f.push(&format!("shared{h}"), page(&format!("shared{h}"), 0), now)
                .unwrap();
            f.push(&format!("shared{h}"), page(&format!("shared{h}"), 1), now)
                .unwrap();
        }
        let (host, _) = f.take_ready(now).unwrap().unwrap();
        f.note_address(&host, SHARED.into());
        assert_eq!(f.stats().active_addresses, 1);
        // The same address again changes nothing; an IPv4-mapped IPv6 form is the same
        // address.
        f.note_address(&host, SHARED.to_ipv6_mapped().into());
        assert_eq!(f.stats().active_addresses, 1);
        f.complete(&host, now);
        let mut rest = 0;
        while let Some((host, _)) = f.take_ready(now).unwrap() {
            f.note_address(&host, SHARED.into());
            f.complete(&host, now);
            rest += 1;
        }
        assert_eq!(rest, 7);
        assert_eq!(f.stats().address_rotations, 0);
        assert!(f.is_exhausted());
    }
}
