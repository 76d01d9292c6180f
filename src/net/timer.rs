//! Deadlines: a binary min-heap with lazy deletion.
//!
//! Scheduling costs O(log n). Nothing is ever removed from the middle: when a
//! connection's deadline moves later, its old entry stays and is recognised as stale when
//! it surfaces (the owner compares it with the connection's current timer, see
//! `fetcher.rs`); when the deadline moves earlier, a new entry is pushed. Each connection
//! therefore has O(1) entries in the heap at any moment. The poll timeout is the time to
//! the earliest entry.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

/// Min-heap of `(deadline, key)`.
pub struct TimerHeap<K: Ord> {
    heap: BinaryHeap<Reverse<(Instant, K)>>,
}

impl<K: Ord> Default for TimerHeap<K> {
    fn default() -> Self {
        Self {
            heap: BinaryHeap::new(),
        }
    }
}

impl<K: Ord + Copy> TimerHeap<K> {
    /// Adds a deadline. O(log n).
    pub fn schedule(&mut self, at: Instant, key: K) {
        self.heap.push(Reverse((at, key)));
    }

    /// The earliest deadline, stale or not.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse((at, _))| *at)
    }

    /// How long a poll may sleep: until the earliest deadline (zero when already due),
    /// or `None` (no deadline at all).
    pub fn poll_timeout(&self, now: Instant) -> Option<Duration> {
        self.next_deadline()
            .map(|at| at.saturating_duration_since(now))
    }

    /// Removes and returns the earliest entry if it is due at `now`. O(log n).
    pub fn pop_due(&mut self, now: Instant) -> Option<(Instant, K)> {
        match self.heap.peek() {
            Some(Reverse((at, _))) if *at <= now => self.heap.pop().map(|Reverse(e)| e),
            _ => None,
        }
    }

    /// Entries, stale ones included.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Keeps only the entries `keep` approves (used to drop stale entries in one O(n)
    /// pass when they outnumber live ones).
    pub fn retain(&mut self, mut keep: impl FnMut(Instant, K) -> bool) {
        self.heap.retain(|Reverse((at, k))| keep(*at, *k));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_deadline_order_and_only_when_due() {
        let t0 = Instant::now();
        let mut h = TimerHeap::default();
        h.schedule(t0 + Duration::from_millis(30), 3u32);
        h.schedule(t0 + Duration::from_millis(10), 1u32);
        h.schedule(t0 + Duration::from_millis(20), 2u32);
        assert_eq!(h.poll_timeout(t0), Some(Duration::from_millis(10)));
        assert!(h.pop_due(t0).is_none());
        let now = t0 + Duration::from_millis(25);
        assert_eq!(h.pop_due(now).map(|e| e.1), Some(1));
        assert_eq!(h.pop_due(now).map(|e| e.1), Some(2));
        assert!(h.pop_due(now).is_none());
        assert_eq!(h.len(), 1);
        assert_eq!(
            h.poll_timeout(t0 + Duration::from_secs(1)),
            Some(Duration::ZERO)
        );
    }
}
