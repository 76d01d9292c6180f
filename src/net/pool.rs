//! Keep-alive pools: idle connections per (scheme, host, port).
//!
//! Connections are also found by the address they are connected to, so a request for
//! another host name on the same address (a shared host, a CDN) can take one when the
//! per-IP cap makes it wait (`Pool::take_by_peer`): HTTP/1.1 names the host in each
//! request, which is how virtual hosting works. The caller decides which connection
//! may carry which name (for HTTPS, the certificate must cover it).
//!
//! The pool only holds slot keys; the connections themselves live in the fetcher's slab
//! in the `Idle` phase. Taking returns the most recently idled connection (warmest, least
//! likely to have been closed by the server). Two caps: idle connections per key and in
//! total; beyond either, the caller closes the oldest idle connection.

use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::net::SocketAddr;
use std::sync::Arc;

use crate::net::slab::SlotKey;

/// Which connections may serve a request: same scheme, host, port and route.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolKey {
    /// `https` rather than `http`.
    pub https: bool,
    /// Host as in the URL (lower-case; IPv6 in brackets).
    pub host: Arc<str>,
    /// Port (explicit or the scheme default).
    pub port: u16,
    /// The route: 0 is `direct`, any other value a proxy route (`Routes::pick`). A
    /// proxied connection serves only its own route.
    pub via: u16,
}

impl Hash for PoolKey {
    /// The host, then the three small fields in one write: SipHash pays per write, and
    /// keys are hashed several times per request.
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.host.hash(state);
        state.write_u64(
            u64::from(self.port) | u64::from(self.via) << 16 | u64::from(self.https) << 32,
        );
    }
}

/// Idle connection bookkeeping.
#[derive(Default)]
pub struct Pool {
    idle: HashMap<PoolKey, Vec<(SlotKey, u64)>>,
    order: VecDeque<(PoolKey, SlotKey, u64)>,
    /// Idle connections by (peer address, https), IPv4-mapped folded; entries taken by
    /// another path are stale and skipped.
    by_peer: HashMap<PeerKey, Vec<(PoolKey, SlotKey, u64)>>,
    by_peer_len: usize,
    count: usize,
    next_seq: u64,
}

/// Peer address (IPv4-mapped folded) and whether the connection is HTTPS.
type PeerKey = (SocketAddr, bool);

fn canonical(peer: SocketAddr) -> SocketAddr {
    SocketAddr::new(peer.ip().to_canonical(), peer.port())
}

impl Pool {
    /// Idle connections over all keys.
    pub fn len(&self) -> usize {
        self.count
    }

    /// No idle connection.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Idle connections for `key`.
    pub fn len_for(&self, key: &PoolKey) -> usize {
        self.idle.get(key).map_or(0, Vec::len)
    }

    /// Records `slot` (connected to `peer`) as idle under `key`.
    pub fn put(&mut self, key: PoolKey, slot: SlotKey, peer: SocketAddr) {
        let seq = self.next_seq;
        self.next_seq += 1;
        // A proxied connection's peer is the proxy: it says nothing about which hosts
        // share an origin address.
        if key.via == 0 {
            let list = self
                .by_peer
                .entry((canonical(peer), key.https))
                .or_default();
            list.push((key.clone(), slot, seq));
            self.by_peer_len += 1;
            if self.by_peer_len > 2 * self.count + 64 {
                let idle = &self.idle;
                self.by_peer.retain(|_, list| {
                    list.retain(|(k, s, q)| idle.get(k).is_some_and(|v| v.contains(&(*s, *q))));
                    !list.is_empty()
                });
                self.by_peer_len = self.by_peer.values().map(Vec::len).sum();
            }
        }
        self.order.push_back((key.clone(), slot, seq));
        self.idle.entry(key).or_default().push((slot, seq));
        self.count += 1;
        // Stale order entries are dropped lazily; keep the deque from growing without end.
        if self.order.len() > 2 * self.count + 64 {
            let idle = &self.idle;
            self.order
                .retain(|(k, s, q)| idle.get(k).is_some_and(|v| v.contains(&(*s, *q))));
        }
    }

    /// Takes the most recently idled connection for `key`.
    pub fn take(&mut self, key: &PoolKey) -> Option<SlotKey> {
        let list = self.idle.get_mut(key)?;
        let (slot, _) = list.pop()?;
        if list.is_empty() {
            self.idle.remove(key);
        }
        self.count -= 1;
        Some(slot)
    }

    /// Whether an idle connection to `peer` (of the given scheme, any host name)
    /// passes `accept`.
    pub fn has_peer(
        &self,
        peer: SocketAddr,
        https: bool,
        mut accept: impl FnMut(SlotKey) -> bool,
    ) -> bool {
        self.by_peer
            .get(&(canonical(peer), https))
            .is_some_and(|list| {
                list.iter().any(|(k, s, q)| {
                    self.idle.get(k).is_some_and(|v| v.contains(&(*s, *q))) && accept(*s)
                })
            })
    }

    /// Takes the most recently idled connection to `peer` (of the given scheme, any
    /// host name) that passes `accept`; returns the key it was pooled under.
    pub fn take_by_peer(
        &mut self,
        peer: SocketAddr,
        https: bool,
        mut accept: impl FnMut(SlotKey) -> bool,
    ) -> Option<(PoolKey, SlotKey)> {
        let at = (canonical(peer), https);
        let list = self.by_peer.get_mut(&at)?;
        let idle = &self.idle;
        let before = list.len();
        list.retain(|(k, s, q)| idle.get(k).is_some_and(|v| v.contains(&(*s, *q))));
        self.by_peer_len = self.by_peer_len.saturating_sub(before - list.len());
        let pos = list.iter().rposition(|(_, s, _)| accept(*s));
        let found = pos.map(|p| list.remove(p));
        if found.is_some() {
            self.by_peer_len = self.by_peer_len.saturating_sub(1);
        }
        if list.is_empty() {
            self.by_peer.remove(&at);
        }
        let (key, slot, _) = found?;
        self.remove(&key, slot);
        Some((key, slot))
    }

    /// Forgets `slot` (it closed while idle). Returns whether it was there.
    pub fn remove(&mut self, key: &PoolKey, slot: SlotKey) -> bool {
        let Some(list) = self.idle.get_mut(key) else {
            return false;
        };
        let Some(pos) = list.iter().position(|(s, _)| *s == slot) else {
            return false;
        };
        list.remove(pos);
        if list.is_empty() {
            self.idle.remove(key);
        }
        self.count -= 1;
        true
    }

    /// Every idle connection, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&PoolKey, SlotKey)> + '_ {
        self.idle
            .iter()
            .flat_map(|(k, list)| list.iter().map(move |(s, _)| (k, *s)))
    }

    /// Takes the connection idle the longest, over all keys (to close it).
    pub fn take_oldest(&mut self) -> Option<(PoolKey, SlotKey)> {
        while let Some((key, slot, seq)) = self.order.pop_front() {
            let Some(list) = self.idle.get_mut(&key) else {
                continue;
            };
            if let Some(pos) = list.iter().position(|e| *e == (slot, seq)) {
                list.remove(pos);
                if list.is_empty() {
                    self.idle.remove(&key);
                }
                self.count -= 1;
                return Some((key, slot));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::slab::Slab;

    fn key(host: &str) -> PoolKey {
        PoolKey {
            https: false,
            host: host.into(),
            port: 80,
            via: 0,
        }
    }

    #[test]
    fn lifo_per_key_fifo_overall() {
        let mut slab = Slab::default();
        let (a, b, c) = (slab.insert(1), slab.insert(2), slab.insert(3));
        let mut pool = Pool::default();
        let peer: SocketAddr = "127.0.0.1:80".parse().unwrap();
        pool.put(key("x"), a, peer);
        pool.put(key("y"), b, peer);
        pool.put(key("x"), c, peer);
        assert_eq!(pool.len(), 3);
        assert_eq!(pool.len_for(&key("x")), 2);
        assert_eq!(pool.take(&key("x")), Some(c));
        assert_eq!(pool.take_oldest(), Some((key("x"), a)));
        assert!(pool.remove(&key("y"), b));
        assert!(pool.is_empty());
        assert_eq!(pool.take_oldest(), None);
        assert_eq!(pool.take(&key("x")), None);
    }

    #[test]
    fn connections_are_found_by_address_across_host_names() {
        let mut slab = Slab::default();
        let (a, b, c, d) = (
            slab.insert(1),
            slab.insert(2),
            slab.insert(3),
            slab.insert(4),
        );
        let shared: SocketAddr = "10.0.0.1:80".parse().unwrap();
        let mapped: SocketAddr = "[::ffff:10.0.0.1]:80".parse().unwrap();
        let mut pool = Pool::default();
        pool.put(key("a"), a, shared);
        pool.put(key("b"), b, mapped);
        let tls = PoolKey {
            https: true,
            ..key("c")
        };
        pool.put(tls, c, "10.0.0.1:443".parse().unwrap());
        pool.put(key("d"), d, "10.0.0.2:80".parse().unwrap());
        let any = |_| true;
        assert!(pool.has_peer(shared, false, any));
        assert_eq!(
            pool.take(&key("b")),
            Some(b),
            "taken by name: stale by address"
        );
        assert!(
            !pool.has_peer(shared, false, |s| s != a),
            "the caller may refuse one"
        );
        assert_eq!(pool.take_by_peer(mapped, false, any), Some((key("a"), a)));
        assert!(!pool.has_peer(shared, false, any));
        assert_eq!(pool.take_by_peer(shared, false, any), None);
        let https_peer: SocketAddr = "10.0.0.1:443".parse().unwrap();
        assert!(
            !pool.has_peer(https_peer, false, any),
            "schemes are kept apart"
        );
        assert_eq!(
            pool.take_by_peer(https_peer, true, any).map(|(_, s)| s),
            Some(c)
        );
        assert_eq!(pool.len(), 1);
    }

    #[test]
    fn a_proxied_connection_is_found_by_its_key_only_never_by_its_address() {
        let mut slab = Slab::default();
        let (a, b) = (slab.insert(1), slab.insert(2));
        let proxy: SocketAddr = "127.0.0.1:3128".parse().unwrap();
        let via = |host| PoolKey {
            via: 1,
            ..key(host)
        };
        let mut pool = Pool::default();
        pool.put(via("a"), a, proxy);
        pool.put(key("b"), b, "10.0.0.9:80".parse().unwrap());
        assert!(
            !pool.has_peer(proxy, false, |_| true),
            "the proxy is no origin"
        );
        assert_eq!(pool.take_by_peer(proxy, false, |_| true), None);
        assert_eq!(
            pool.take(&key("a")),
            None,
            "a direct request never takes it"
        );
        assert_eq!(pool.take(&via("a")), Some(a));
        assert_eq!(pool.len(), 1);
    }
}
