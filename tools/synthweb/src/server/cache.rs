//! A bounded cache of generated representations: direct-mapped slots, each holding one
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

type Slot = Mutex<Option<(Key, Arc<Response>)>>;

/// The cache.
pub struct Cache {
    slots: Vec<Slot>,
    max_entry_bytes: usize,
}

impl Cache {
    /// A cache of `slots` entries, each at most `max_entry_bytes` of body.
    #[must_use]
    pub fn new(slots: usize, max_entry_bytes: usize) -> Self {
        Self {
            slots: (0..slots).map(|_| Mutex::new(None)).collect(),
            max_entry_bytes,
        }
    }

    fn slot(&self, key: &Key) -> Option<&Slot> {
        if self.slots.is_empty() {
            return None;
        }
        let h = hash_bytes(
            u64::from(key.host) ^ ((key.coding as u64) << 40) ^ ((key.scheme as u64) << 48),
            key.target.as_bytes(),
        );
        self.slots.get((h % self.slots.len() as u64) as usize)
    }

    /// Cached response for `key`, or generate, insert and return it.
    pub fn get_or_insert(&self, key: Key, make: impl FnOnce() -> Response) -> Arc<Response> {
        if let Some(slot) = self.slot(&key) {
            if let Ok(g) = slot.lock() {
                if let Some((k, r)) = g.as_ref() {
                    if *k == key {
                        return r.clone();
                    }
                }
            }
        }
        let r = Arc::new(make());
        if r.body.len() <= self.max_entry_bytes {
            if let Some(slot) = self.slot(&key) {
                if let Ok(mut g) = slot.lock() {
                    *g = Some((key, r.clone()));
                }
            }
        }
        r
    }
}
