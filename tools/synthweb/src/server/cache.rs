//! A bounded cache of generated representations: 4-way set-associative slots, each one
//! `(key, Arc<Response>)`. Generation costs far more than a lookup, and a benchmark that
//! hits the same pages again must not regenerate them. Memory is bounded by
//! `slots * max_entry_bytes`.

use std::sync::{Arc, Mutex};

use crate::coding::Coding;
use crate::hash::hash_bytes;
use crate::site::{Response, Scheme};

/// Cache key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    /// Scheme.
    pub scheme: Scheme,
    /// Host index.
    pub host: u32,
    /// Request target as sent.
    pub target: String,
    /// Content coding.
    pub coding: Coding,
}

/// Entries per set: a key may live in any way of its set, so a few colliding hot pages
/// do not evict each other on every request (as they would in a direct-mapped cache).
pub const WAYS: usize = 4;

struct Set {
    ways: [Option<(Key, Arc<Response>)>; WAYS],
    next: usize,
}

/// The cache.
pub struct Cache {
    sets: Vec<Mutex<Set>>,
    max_entry_bytes: usize,
}

impl Cache {
    /// A cache of about `slots` entries (rounded up to whole sets), each at most
    /// `max_entry_bytes` of body.
    #[must_use]
    pub fn new(slots: usize, max_entry_bytes: usize) -> Self {
        let n = slots.div_ceil(WAYS);
        Self {
            sets: (0..n)
                .map(|_| {
                    Mutex::new(Set {
                        ways: [None, None, None, None],
                        next: 0,
                    })
                })
                .collect(),
            max_entry_bytes,
        }
    }

    fn set(&self, key: &Key) -> Option<&Mutex<Set>> {
        if self.sets.is_empty() {
            return None;
        }
        let h = hash_bytes(
            u64::from(key.host) ^ ((key.coding as u64) << 40) ^ ((key.scheme as u64) << 48),
            key.target.as_bytes(),
        );
        self.sets.get((h % self.sets.len() as u64) as usize)
    }

    /// Cached response for `key`, or generate, insert (replacing round-robin within the
    /// set) and return it.
    pub fn get_or_insert(&self, key: Key, make: impl FnOnce() -> Response) -> Arc<Response> {
        if let Some(set) = self.set(&key) {
            if let Ok(g) = set.lock() {
                for (k, r) in g.ways.iter().flatten() {
                    if *k == key {
                        return r.clone();
                    }
                }
            }
        }
        let r = Arc::new(make());
        if r.body.len() <= self.max_entry_bytes {
            if let Some(set) = self.set(&key) {
                if let Ok(mut g) = set.lock() {
                    let at = g.next % WAYS;
                    g.next = g.next.wrapping_add(1);
                    if let Some(way) = g.ways.get_mut(at) {
                        *way = Some((key, r.clone()));
                    }
                }
            }
        }
        r
    }
}
