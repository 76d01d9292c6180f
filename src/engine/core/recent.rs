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
//! A request reserves its start ([`RecentStarts::reserve`]) with one compare-and-swap,
//! so two shards cannot both see the host free and both go: the second sees the
//! first's start and waits. A reservation is made at the instant of its shard's turn,
//! and the request leaves when the driver carries the turn's actions out: on a loaded
//! machine that can be milliseconds later (the referee saw an owner's robots.txt 1.5 ms
//! after a hop that had waited its 10 ms from the owner's *reservation*, 11.5 ms before
//! the owner's request left). So a wait against another party's start adds
//! [`SEND_SLACK`] to the delay; it concerns only hops and the owner after a hop, a few
//! requests a host at most. The owner's own requests yield only to a hop's start
//! (its frontier paces the rest, and `--per-host-connections` may let them overlap).
//!
//! Fixed size, lock-free: 4,096 slots of one `AtomicU64` each: a 15-bit tag of the
//! host, one bit saying a hop made the start, and the start in microseconds since the
//! crawl began, rounded up (48 bits: 8.9 years). Two hosts on one slot overwrite each
//! other's entry: a start may then be forgotten (the check falls back to the
//! frontier's own pace) and, with the same tag (1 in 32,768), a host may wait once for
//! another's start. Sans-IO: the caller gives the instant.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const SLOTS: usize = 4096;
const TIME_BITS: u32 = 48;
const TIME_MASK: u64 = (1 << TIME_BITS) - 1;
const HOP_BIT: u64 = 1 << TIME_BITS;

/// How much later than its reserved instant a request may leave (the rest of its
/// shard's turn, a descheduled thread): added to the delay a hop and an owner after a
/// hop wait for each other.
pub(crate) const SEND_SLACK: Duration = Duration::from_millis(50);

/// Who asks for a start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asker {
    /// The shard that owns the host: yields only to a hop's recent start.
    Owner,
    /// Another host's robots.txt redirect: yields to any recent start.
    Hop,
}

/// The last request start of each host (by slot). See the module docs.
#[derive(Debug)]
pub(crate) struct RecentStarts {
    t0: Instant,
    /// Host names to slots and tags: ahash, keyed at random like the core's maps.
    hasher: ahash::RandomState,
    slots: Box<[AtomicU64]>,
}

impl RecentStarts {
    /// No host asked yet; `t0` is the crawl's epoch (times are kept relative to it).
    pub fn new(t0: Instant) -> Self {
        Self {
            t0,
            hasher: ahash::RandomState::new(),
            slots: (0..SLOTS).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    fn slot_and_tag(&self, host: &str) -> (usize, u64) {
        let v = self.hasher.hash_one(host);
        (v as usize % SLOTS, v >> 49)
    }

    /// Microseconds since `t0`, rounded up so a wait never ends early; never 0 (empty).
    fn micros(&self, at: Instant) -> u64 {
        let nanos = at.saturating_duration_since(self.t0).as_nanos();
        u64::try_from(nanos.div_ceil(1000))
            .unwrap_or(TIME_MASK)
            .clamp(1, TIME_MASK)
    }

    fn pack(&self, tag: u64, asker: Asker, at: Instant) -> u64 {
        let hop = if asker == Asker::Hop { HOP_BIT } else { 0 };
        tag << (TIME_BITS + 1) | hop | self.micros(at)
    }

    /// Reserves a request start to `host` at `now` for `asker`, unless a start it must
    /// yield to is less than `delay` old: then `Err` with when it may go. One
    /// compare-and-swap decides between shards asking at once.
    pub(crate) fn reserve(
        &self,
        host: &str,
        asker: Asker,
        delay: Duration,
        now: Instant,
    ) -> Result<(), Instant> {
        let (slot, tag) = self.slot_and_tag(host);
        let Some(s) = self.slots.get(slot) else {
            return Ok(());
        };
        let new = self.pack(tag, asker, now);
        let mut v = s.load(Ordering::Acquire);
        loop {
            let micros = v & TIME_MASK;
            let same_host = micros != 0 && v >> (TIME_BITS + 1) == tag;
            let yields = asker == Asker::Hop || v & HOP_BIT != 0;
            if same_host && yields {
                let until = self.t0 + Duration::from_micros(micros) + delay + SEND_SLACK;
                if until > now {
                    return Err(until);
                }
            }
            match s.compare_exchange(v, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Ok(()),
                Err(current) => v = current,
            }
        }
    }

    /// Records a start as the owner's, unconditionally (tests set the scene with it).
    #[cfg(test)]
    pub(crate) fn record(&self, host: &str, at: Instant) {
        let (slot, tag) = self.slot_and_tag(host);
        if let Some(s) = self.slots.get(slot) {
            s.store(self.pack(tag, Asker::Owner, at), Ordering::Release);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hop_waits_for_any_recent_start_and_the_owner_only_for_a_hop() {
        let epoch = Instant::now();
        let r = RecentStarts::new(epoch);
        let t = epoch + Duration::from_millis(5);
        let delay = Duration::from_millis(10);
        let a = "http://a.test:80";
        // The owner asks: reserved. A hop right after waits the delay and the slack.
        assert_eq!(r.reserve(a, Asker::Owner, delay, t), Ok(()));
        let wait = r.reserve(a, Asker::Hop, delay, t + Duration::from_millis(3));
        let until = wait.expect_err("the hop waits");
        let gap = delay + SEND_SLACK;
        assert!(until >= t + gap && until <= t + gap + Duration::from_micros(1));
        // Even past the delay alone: the owner's request may leave later than its
        // reservation.
        assert!(r
            .reserve(a, Asker::Hop, delay, t + delay + Duration::from_millis(1))
            .is_err());
        // The owner's next request is its frontier's business: not held here.
        assert_eq!(
            r.reserve(a, Asker::Owner, delay, t + Duration::from_millis(4)),
            Ok(())
        );
        // Once the delay and the slack have passed, the hop goes, and the owner then
        // waits for it.
        let later = t + gap + Duration::from_millis(10);
        assert_eq!(r.reserve(a, Asker::Hop, delay, later), Ok(()));
        assert!(r
            .reserve(a, Asker::Owner, delay, later + Duration::from_millis(1))
            .is_err());
        assert_eq!(
            r.reserve(
                a,
                Asker::Owner,
                delay,
                later + gap + Duration::from_millis(1)
            ),
            Ok(())
        );
        // Another host is not held back.
        assert_eq!(
            r.reserve("http://b.test:80", Asker::Hop, delay, later),
            Ok(())
        );
    }
}
