//! What the resolver remembers: answers (positive and negative) until their TTL runs
//! out, and names whose servers never answered. Both are capped; the oldest entry goes
//! first. Sans-IO: time is passed in.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::fetch::DnsFailure;

/// A finished lookup's result: addresses (IPv4 first) or why not.
pub type NameAnswer = Result<Arc<[IpAddr]>, DnsFailure>;

struct Entry<V> {
    value: V,
    seq: u64,
}

/// A map with a cap that forgets its oldest insertions first.
struct Capped<V> {
    map: HashMap<String, Entry<V>>,
    order: VecDeque<(String, u64)>,
    next_seq: u64,
    cap: usize,
}

impl<V> Capped<V> {
    fn new(cap: usize) -> Self {
        Self {
            map: HashMap::new(),
            order: VecDeque::new(),
            next_seq: 0,
            cap,
        }
    }

    fn insert(&mut self, key: String, value: V) {
        if self.cap == 0 {
            return;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.order.push_back((key.clone(), seq));
        self.map.insert(key, Entry { value, seq });
        // Order entries of replaced keys are stale; they are skipped here, and the
        // second bound keeps them from piling up.
        while self.map.len() > self.cap || self.order.len() > self.cap.saturating_mul(2) {
            let Some((old, old_seq)) = self.order.pop_front() else {
                break;
            };
            if self.map.get(&old).is_some_and(|e| e.seq == old_seq) {
                self.map.remove(&old);
            }
        }
    }

    fn get(&self, key: &str) -> Option<&V> {
        self.map.get(key).map(|e| &e.value)
    }

    fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        self.map.get_mut(key).map(|e| &mut e.value)
    }

    fn remove(&mut self, key: &str) {
        self.map.remove(key);
    }

    fn len(&self) -> usize {
        self.map.len()
    }
}

/// Answers by name, each until its expiry.
pub struct AnswerCache {
    inner: Capped<(NameAnswer, Instant)>,
}

impl AnswerCache {
    /// A cache of at most `cap` names.
    pub fn new(cap: usize) -> Self {
        Self {
            inner: Capped::new(cap),
        }
    }

    /// The answer for `name` if it has not expired (an expired one is dropped).
    pub fn get(&mut self, name: &str, now: Instant) -> Option<NameAnswer> {
        let (answer, expires) = self.inner.get(name)?;
        if *expires > now {
            return Some(answer.clone());
        }
        self.inner.remove(name);
        None
    }

    /// Remembers `answer` for `ttl` (nothing when `ttl` is zero).
    pub fn insert(&mut self, name: &str, answer: NameAnswer, ttl: Duration, now: Instant) {
        if ttl.is_zero() {
            return;
        }
        self.inner.insert(name.to_owned(), (answer, now + ttl));
    }

    /// Names cached (some may have expired and not been asked for since).
    pub fn len(&self) -> usize {
        self.inner.len()
    }
}

/// One name whose lookups timed out.
#[derive(Clone, Copy, Debug)]
struct DeadName {
    /// Lookups of it that ended with no server answering.
    timeouts: u32,
    /// Until then its lookups fail at once.
    until: Instant,
}

/// Names no server answered for: a lookup that timed out makes its name dead for
/// `dead_for`; after `max_tries` timed-out lookups it stays dead for the rest of the
/// crawl (as long as the table keeps it: the oldest go when it is full).
pub struct DeadNames {
    inner: Capped<DeadName>,
    dead_for: Duration,
    max_tries: u32,
}

impl DeadNames {
    /// A table of at most `cap` names.
    pub fn new(cap: usize, dead_for: Duration, max_tries: u32) -> Self {
        Self {
            inner: Capped::new(cap),
            dead_for,
            max_tries: max_tries.max(1),
        }
    }

    /// Whether lookups of `name` should fail at once.
    pub fn is_dead(&self, name: &str, now: Instant) -> bool {
        self.inner
            .get(name)
            .is_some_and(|d| d.timeouts >= self.max_tries || d.until > now)
    }

    /// A lookup of `name` timed out with no server answering.
    pub fn timed_out(&mut self, name: &str, now: Instant) {
        let until = now + self.dead_for;
        if let Some(d) = self.inner.get_mut(name) {
            d.timeouts = d.timeouts.saturating_add(1);
            d.until = until;
            return;
        }
        self.inner
            .insert(name.to_owned(), DeadName { timeouts: 1, until });
    }

    /// A server answered for `name`: it is alive again.
    pub fn answered(&mut self, name: &str) {
        self.inner.remove(name);
    }

    /// Names known dead or on probation.
    pub fn len(&self) -> usize {
        self.inner.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_expire_and_the_cache_is_capped() {
        let now = Instant::now();
        let mut c = AnswerCache::new(2);
        let a: NameAnswer = Ok(vec!["127.0.0.1".parse().unwrap()].into());
        c.insert("a", a.clone(), Duration::from_secs(10), now);
        assert_eq!(c.get("a", now + Duration::from_secs(9)), Some(a));
        assert_eq!(c.get("a", now + Duration::from_secs(10)), None);
        for i in 0..10 {
            c.insert(
                &format!("h{i}"),
                Err(DnsFailure::NoSuchName),
                Duration::from_secs(5),
                now,
            );
        }
        assert_eq!(c.len(), 2);
        assert!(c.get("h9", now).is_some() && c.get("h0", now).is_none());
        c.insert("zero", Err(DnsFailure::NoAddress), Duration::ZERO, now);
        assert!(c.get("zero", now).is_none(), "a zero TTL is not cached");
    }

    #[test]
    fn a_dead_name_rests_then_gets_three_tries_in_all() {
        let now = Instant::now();
        let rest = Duration::from_secs(60);
        let mut d = DeadNames::new(16, rest, 3);
        assert!(!d.is_dead("x", now));
        d.timed_out("x", now);
        assert!(d.is_dead("x", now + rest - Duration::from_secs(1)));
        assert!(!d.is_dead("x", now + rest), "tried again after the rest");
        d.timed_out("x", now + rest);
        d.timed_out("x", now + rest * 2);
        assert!(
            d.is_dead("x", now + rest * 100),
            "three timeouts: dead for good"
        );
        d.answered("x");
        assert!(!d.is_dead("x", now));
    }
}
