//! Keep-alive pools: idle connections per (scheme, host, port).
//!
//! The pool only holds slot keys; the connections themselves live in the fetcher's slab
//! in the `Idle` phase. Taking returns the most recently idled connection (warmest, least
//! likely to have been closed by the server). Two caps: idle connections per key and in
//! total; beyond either, the caller closes the oldest idle connection.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use crate::net::slab::SlotKey;

/// Which connections may serve a request: same scheme, host and port.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PoolKey {
    /// `https` rather than `http`.
    pub https: bool,
    /// Host as in the URL (lower-case; IPv6 in brackets).
    pub host: Arc<str>,
    /// Port (explicit or the scheme default).
    pub port: u16,
}

/// Idle connection bookkeeping.
#[derive(Default)]
pub struct Pool {
    idle: HashMap<PoolKey, Vec<(SlotKey, u64)>>,
    order: VecDeque<(PoolKey, SlotKey, u64)>,
    count: usize,
    next_seq: u64,
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

    /// Records `slot` as idle under `key`.
    pub fn put(&mut self, key: PoolKey, slot: SlotKey) {
        let seq = self.next_seq;
        self.next_seq += 1;
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
        }
    }

    #[test]
    fn lifo_per_key_fifo_overall() {
        let mut slab = Slab::default();
        let (a, b, c) = (slab.insert(1), slab.insert(2), slab.insert(3));
        let mut pool = Pool::default();
        pool.put(key("x"), a);
        pool.put(key("y"), b);
        pool.put(key("x"), c);
        assert_eq!(pool.len(), 3);
        assert_eq!(pool.len_for(&key("x")), 2);
        assert_eq!(pool.take(&key("x")), Some(c));
        assert_eq!(pool.take_oldest(), Some((key("x"), a)));
        assert!(pool.remove(&key("y"), b));
        assert!(pool.is_empty());
        assert_eq!(pool.take_oldest(), None);
        assert_eq!(pool.take(&key("x")), None);
    }
}
