//! When each host was last asked, shared by every shard: the politeness check a
//! robots.txt redirect to another host needs.
//!
//! A shard keeps its own hosts' pace in its frontier. A robots.txt may redirect to
//! another host (`/robots.txt` → `http://other/robots-cross.txt`, RFC 9309 §2.3.1.2):
//! that request, made on behalf of the first host, reaches a host whose pace another
//! shard keeps, and was sent at once, so it could land a few milliseconds after that
//! host's own request (the referee saw 4.9 ms with a 10 ms delay). Every request start
//! is recorded here; a cross-host robots.txt hop waits until its target's last start
//! is a politeness delay old, and a shard about to ask one of its hosts waits likewise
//! when another shard's hop asked it last.
//!
//! Fixed size, lock-free: 4,096 slots of one `AtomicU64` each, a 16-bit tag of the
//! host and the start in microseconds since the crawl began (48 bits: 8.9 years). Two
//! hosts on one slot overwrite each other's entry: a start may then be forgotten (the
//! check falls back to the frontier's own pace) and, with the same tag (1 in 65,536),
//! a host may wait once for another's start. Sans-IO: the caller gives the instant.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const SLOTS: usize = 4096;
const TIME_BITS: u32 = 48;
const TIME_MASK: u64 = (1 << TIME_BITS) - 1;

/// The last request start of each host (by slot). See the module docs.
#[derive(Debug)]
pub(crate) struct RecentStarts {
    t0: Instant,
    slots: Box<[AtomicU64]>,
}

impl Default for RecentStarts {
    fn default() -> Self {
        Self {
            t0: Instant::now(),
            slots: (0..SLOTS).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

impl RecentStarts {
    fn slot_and_tag(host: &str) -> (usize, u64) {
        let mut h = DefaultHasher::new();
        host.hash(&mut h);
        let v = h.finish();
        (v as usize % SLOTS, v >> 48)
    }

    /// Records a request to `host` (its host key) started at `at`.
    pub(crate) fn record(&self, host: &str, at: Instant) {
        let (slot, tag) = Self::slot_and_tag(host);
        // Rounded up, so a wait never ends before the delay has passed; 0 means
        // empty, so a start at the very first microsecond is stored as 1.
        let nanos = at.saturating_duration_since(self.t0).as_nanos();
        let micros = u64::try_from(nanos.div_ceil(1000))
            .unwrap_or(TIME_MASK)
            .clamp(1, TIME_MASK);
        if let Some(s) = self.slots.get(slot) {
            s.store(tag << TIME_BITS | micros, Ordering::Release);
        }
    }

    /// The last recorded start of a request to `host`, if its slot still holds it.
    pub(crate) fn last(&self, host: &str) -> Option<Instant> {
        let (slot, tag) = Self::slot_and_tag(host);
        let v = self.slots.get(slot)?.load(Ordering::Acquire);
        let micros = v & TIME_MASK;
        (micros != 0 && v >> TIME_BITS == tag).then(|| self.t0 + Duration::from_micros(micros))
    }

    /// When `host` may next be asked under a politeness `delay`, if later than `now`.
    pub(crate) fn wait_until(&self, host: &str, delay: Duration, now: Instant) -> Option<Instant> {
        self.last(host).map(|t| t + delay).filter(|&t| t > now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recent_start_makes_its_host_wait_the_delay() {
        let r = RecentStarts::default();
        let t = Instant::now() + Duration::from_millis(5);
        let delay = Duration::from_millis(10);
        assert_eq!(r.wait_until("http://a.test:80", delay, t), None);
        r.record("http://a.test:80", t);
        let until = r.wait_until("http://a.test:80", delay, t + Duration::from_millis(3));
        let until = until.expect("a wait");
        assert!(until >= t + delay && until <= t + delay + Duration::from_micros(1));
        let after = t + delay + Duration::from_micros(1);
        assert_eq!(r.wait_until("http://a.test:80", delay, after), None);
        // Another host is not held back by it.
        assert_eq!(r.wait_until("http://b.test:80", delay, t), None);
    }
}
