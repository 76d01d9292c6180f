//! The revisit index: payload digests of the `response` records already written, so a
//! later response with an identical payload becomes a `revisit` record (WARC 1.1,
//! "Profile: Identical Payload Digest") that refers to the first one.
//!
//! A crawl writes hundreds of millions of records, so the index is bounded in both count
//! and bytes, fixed when it is made:
//!
//! - **Slots**: a set-associative hash table of [`WAYS`]-slot buckets indexed by the
//!   digest's first 8 bytes (SHA-1 output is uniform, so no further hashing). A slot
//!   holds the full 20-byte digest, the original record's id and date, and where its
//!   URI sits in the URI ring. A full bucket overwrites its oldest slot. The table
//!   starts small and doubles (rehashing) until it reaches its share of the budget.
//! - **URIs**: one byte ring. URIs are appended; once the ring is full, new URIs
//!   overwrite the oldest. A slot whose URI has been overwritten is stale and is
//!   treated as absent (and cleared) on lookup.
//!
//! A digest evicted or overwritten means the next identical payload is written in full
//! again, and from then on it is the one revisits refer to: a missed duplicate costs
//! disk, never correctness. The index lives in RAM only; a resumed crawl starts with an
//! empty one (see `docs/warc.md`, "Revisit records").
//!
//! **Hints.** Beside each slot the index keeps a 4-byte tag of its digest in a table
//! shared with the compressing threads ([`RevisitHints`]): a shard that finds its
//! payload's tag there expects a revisit and does not deflate the response (the writer
//! still decides, and compresses it after all on a miss). The tags mirror the slots:
//! written on insert, cleared when a slot is emptied, rewritten when the table grows.

#![deny(clippy::indexing_slicing)]

use std::mem::size_of;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;

use super::record::RecordId;
use crate::provenance::date::WarcDate;
use crate::provenance::digest::Digest;

/// Slots per bucket: a digest can sit in any of them, so a bucket overwrites only when
/// four digests of the same bucket are live.
pub const WAYS: usize = 4;

/// Default memory budget of the index: 64 MiB, about 450,000 digests (and 400,000 URIs
/// of 70 bytes).
pub const DEFAULT_DEDUP_BYTES: usize = 64 << 20;

/// Default smallest payload that is deduplicated: every non-empty payload. An empty body
/// has one digest shared by every empty response; a revisit for it says nothing.
pub const DEFAULT_MIN_PAYLOAD_BYTES: u64 = 1;

/// URIs longer than this are not indexed (their captures are always written in full):
/// one such URI would otherwise take a large share of a small ring.
pub const MAX_INDEXED_URI_BYTES: usize = 4096;

/// Budgets below this (a few buckets and a few URIs) turn the index off.
pub const MIN_DEDUP_BYTES: usize = 16 << 10;

/// Slots a new table starts with, before growing by doubling.
const INITIAL_SLOTS: usize = 1024;

/// How revisit records are decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DedupConfig {
    /// Memory the index may use, slots and URIs together; below [`MIN_DEDUP_BYTES`]
    /// (0 in particular) every response is written in full.
    pub max_bytes: usize,
    /// Payloads shorter than this are always written in full and never indexed (0
    /// counts as 1: empty payloads never are).
    pub min_payload_bytes: u64,
}

impl Default for DedupConfig {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_DEDUP_BYTES,
            min_payload_bytes: DEFAULT_MIN_PAYLOAD_BYTES,
        }
    }
}

impl DedupConfig {
    /// No deduplication: every response written in full.
    pub const fn off() -> Self {
        Self {
            max_bytes: 0,
            min_payload_bytes: DEFAULT_MIN_PAYLOAD_BYTES,
        }
    }

    /// Whether the budget is large enough for an index.
    pub const fn enabled(&self) -> bool {
        self.max_bytes >= MIN_DEDUP_BYTES
    }
}

/// The earlier capture a payload digest was first written by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Original {
    /// The `response` record's id (`WARC-Refers-To`).
    pub record_id: RecordId,
    /// Its `WARC-Target-URI` (`WARC-Refers-To-Target-URI`).
    pub target_uri: String,
    /// Its `WARC-Date` (`WARC-Refers-To-Date`).
    pub date: WarcDate,
}

/// Counters of the index.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct DedupStats {
    /// Digests currently held (stale ones included until looked up or overwritten).
    pub entries: u64,
    /// Slots allocated.
    pub slots: u64,
    /// Bytes allocated: slots plus the URI ring.
    pub bytes: u64,
    /// Lookups that found an original.
    pub hits: u64,
    /// Lookups that found none.
    pub misses: u64,
    /// Digests overwritten in a full bucket.
    pub evictions: u64,
    /// Digests dropped because their URI was overwritten in the ring.
    pub stale: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    digest: [u8; 20],
    id: [u8; 16],
    /// 0: empty (an indexed URI is never empty).
    uri_len: u32,
    /// Absolute ring offset of the URI; also the slot's age (larger is newer).
    uri_at: u64,
    date_micros: i64,
}

impl Slot {
    const fn is_empty(&self) -> bool {
        self.uri_len == 0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placed {
    New,
    Replaced,
    Evicted,
    Full,
}

/// Bytes one slot takes.
pub const SLOT_BYTES: usize = size_of::<Slot>();

/// Bytes one slot's hint tag takes ([`RevisitHints`]), counted in the budget.
pub const HINT_BYTES: usize = size_of::<AtomicU32>();

/// Tags of the index's digests, slot for slot, readable from any thread: a tag found
/// in the digest's bucket says a revisit is likely. Written only by the index; read
/// without locks (relaxed): a tag read while it changes gives a wrong hint, and a
/// wrong hint costs CPU (a compression skipped and then done by the writer, or done
/// for nothing), never a wrong record.
#[derive(Debug)]
struct HintTable {
    /// One tag per slot of the largest table; 0 is empty.
    tags: Box<[AtomicU32]>,
    /// Slots of the index's current table (the bucket count the tags are laid out by).
    slots: AtomicUsize,
}

/// A handle on an index's hint tags, handed to the compressors with the smallest
/// payload the writer deduplicates. Cloning shares the table.
#[derive(Debug, Clone)]
pub(crate) struct RevisitHints {
    table: Arc<HintTable>,
    min_payload_bytes: u64,
}

impl RevisitHints {
    /// Whether a payload of `len` bytes with `digest` is likely to become a revisit:
    /// large enough, and its tag is in its bucket now.
    pub(crate) fn likely_revisit(&self, digest: &Digest, len: u64) -> bool {
        if len < self.min_payload_bytes.max(1) {
            return false;
        }
        let slots = self.table.slots.load(Ordering::Relaxed);
        let tag = tag_of(digest);
        self.table
            .tags
            .get(bucket_range(digest, slots))
            .is_some_and(|bucket| bucket.iter().any(|t| t.load(Ordering::Relaxed) == tag))
    }
}

/// The hint tag of `digest`: 4 bytes the bucket choice does not use, never 0.
fn tag_of(digest: &Digest) -> u32 {
    let [.., a, b, c, d] = *digest.as_bytes();
    u32::from_le_bytes([a, b, c, d]).max(1)
}

/// The bounded digest table; see the module documentation.
#[derive(Debug)]
pub struct PayloadIndex {
    slots: Vec<Slot>,
    max_slots: usize,
    entries: usize,
    ring: Vec<u8>,
    ring_cap: usize,
    /// Bytes ever appended to the ring.
    head: u64,
    stats: DedupStats,
    /// The slots' tags, shared with the compressors.
    hints: Arc<HintTable>,
}

impl PayloadIndex {
    /// An index within `max_bytes`: 3/8 of it for slots, the rest for URIs less the
    /// room the last doubling of the table needs (old and new table side by side, 1.5
    /// times the slots' share) and the hint tags ([`HINT_BYTES`] a slot). `None` when
    /// the budget is below [`MIN_DEDUP_BYTES`].
    pub fn new(max_bytes: usize) -> Option<Self> {
        if max_bytes < MIN_DEDUP_BYTES {
            return None;
        }
        let max_buckets = (max_bytes / 8 * 3 / SLOT_BYTES / WAYS).max(1);
        let max_slots = max_buckets * WAYS;
        let ring_cap = max_bytes
            .saturating_sub(max_slots * SLOT_BYTES / 2 * 3 + max_slots * HINT_BYTES)
            .max(1);
        // Start at max / 2^k (rounded up) so that doubling lands exactly on the maximum
        // after a step from just over half of it.
        let mut start = max_buckets;
        while start * WAYS > INITIAL_SLOTS {
            start = start.div_ceil(2);
        }
        let hints = Arc::new(HintTable {
            tags: (0..max_slots).map(|_| AtomicU32::new(0)).collect(),
            slots: AtomicUsize::new(start * WAYS),
        });
        Some(Self {
            hints,
            slots: vec![Slot::default(); start * WAYS],
            max_slots,
            entries: 0,
            ring: Vec::new(),
            ring_cap,
            head: 0,
            stats: DedupStats::default(),
        })
    }

    /// Slots the table may grow to (the bound on the number of digests held).
    pub fn max_entries(&self) -> usize {
        self.max_slots
    }

    /// Bytes of URIs the ring holds at most.
    pub fn uri_capacity(&self) -> usize {
        self.ring_cap
    }

    /// The hint tags for compressors, with the smallest payload the writer
    /// deduplicates.
    pub(crate) fn hints(&self, min_payload_bytes: u64) -> RevisitHints {
        RevisitHints {
            table: Arc::clone(&self.hints),
            min_payload_bytes,
        }
    }

    /// Counters and current sizes.
    pub fn stats(&self) -> DedupStats {
        DedupStats {
            entries: self.entries as u64,
            slots: self.slots.len() as u64,
            bytes: (self.slots.capacity() * SLOT_BYTES
                + self.hints.tags.len() * HINT_BYTES
                + self.ring.capacity()) as u64,
            ..self.stats
        }
    }

    fn bucket_range(&self, digest: &Digest) -> std::ops::Range<usize> {
        bucket_range(digest, self.slots.len())
    }

    /// A mark of the present: entries inserted from now on are at or after it (see
    /// [`PayloadIndex::forget_since`]).
    pub fn mark(&self) -> u64 {
        self.head
    }

    /// Removes every entry inserted at or after `mark`; returns how many. Used when the
    /// records they name may be cut off by a resume (see `WarcWriter::sync`).
    pub fn forget_since(&mut self, mark: u64) -> usize {
        let mut removed = 0;
        for (slot, tag) in self.slots.iter_mut().zip(self.hints.tags.iter()) {
            if !slot.is_empty() && slot.uri_at >= mark {
                *slot = Slot::default();
                tag.store(0, Ordering::Relaxed);
                removed += 1;
            }
        }
        self.entries = self.entries.saturating_sub(removed);
        removed
    }

    /// The original capture of `digest`, if it is still held.
    pub fn lookup(&mut self, digest: &Digest) -> Option<Original> {
        let range = self.bucket_range(digest);
        let found = self
            .slots
            .get(range.clone())
            .and_then(|bucket| {
                bucket
                    .iter()
                    .position(|s| !s.is_empty() && s.digest == *digest.as_bytes())
            })
            .map(|i| range.start + i);
        let Some(at) = found else {
            self.stats.misses += 1;
            return None;
        };
        let slot = self.slots.get(at).copied().unwrap_or_default();
        match self.read_uri(slot.uri_at, slot.uri_len) {
            Some(target_uri) => {
                self.stats.hits += 1;
                Some(Original {
                    record_id: RecordId::from_uuid(uuid::Uuid::from_bytes(slot.id)),
                    target_uri,
                    date: WarcDate::from_unix_micros(slot.date_micros),
                })
            }
            None => {
                self.set(at, Slot::default());
                self.entries = self.entries.saturating_sub(1);
                self.stats.stale += 1;
                self.stats.misses += 1;
                None
            }
        }
    }

    /// Records that `digest` was written by the `response` record `record_id` for
    /// `target_uri` at `date`. An entry for the same digest is replaced. Returns
    /// `false` when the URI is too long to index (empty or over
    /// [`MAX_INDEXED_URI_BYTES`], or over an eighth of the ring).
    pub fn insert(
        &mut self,
        digest: &Digest,
        record_id: RecordId,
        target_uri: &str,
        date: WarcDate,
    ) -> bool {
        let len = target_uri.len();
        if len == 0 || len > MAX_INDEXED_URI_BYTES || len > self.ring_cap / 8 {
            return false;
        }
        let uri_at = self.head;
        self.ring_write(target_uri.as_bytes());
        let slot = Slot {
            digest: *digest.as_bytes(),
            id: *record_id.uuid().as_bytes(),
            uri_len: u32::try_from(len).unwrap_or(u32::MAX),
            uri_at,
            date_micros: date.unix_micros(),
        };
        loop {
            match self.place(slot, false) {
                Placed::New => self.entries += 1,
                Placed::Replaced | Placed::Evicted => {}
                // A full bucket grows the table while it may grow, so nothing is
                // overwritten before the budget is reached.
                Placed::Full if self.slots.len() < self.max_slots => {
                    self.grow();
                    continue;
                }
                Placed::Full => {
                    self.place(slot, true);
                }
            }
            return true;
        }
    }

    /// Puts `slot` in its bucket: over the same digest, else in an empty way, else (with
    /// `evict`) over the oldest.
    fn place(&mut self, slot: Slot, evict: bool) -> Placed {
        let range = bucket_range(&Digest::from_bytes(slot.digest), self.slots.len());
        let Some(bucket) = self.slots.get(range.clone()) else {
            return Placed::Full;
        };
        let same = bucket
            .iter()
            .position(|s| !s.is_empty() && s.digest == slot.digest);
        let (way, placed) = match (same, bucket.iter().position(Slot::is_empty)) {
            (Some(way), _) => (way, Placed::Replaced),
            (None, Some(way)) => (way, Placed::New),
            (None, None) if !evict => return Placed::Full,
            (None, None) => {
                let oldest = bucket
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, s)| s.uri_at)
                    .map_or(0, |(way, _)| way);
                self.stats.evictions += 1;
                (oldest, Placed::Evicted)
            }
        };
        self.set(range.start + way, slot);
        placed
    }

    /// Writes slot `at` and its hint tag.
    fn set(&mut self, at: usize, slot: Slot) {
        let tag = if slot.is_empty() {
            0
        } else {
            tag_of(&Digest::from_bytes(slot.digest))
        };
        if let Some(s) = self.slots.get_mut(at) {
            *s = slot;
        }
        if let Some(t) = self.hints.tags.get(at) {
            t.store(tag, Ordering::Relaxed);
        }
    }

    /// Doubles the table (up to its maximum) and rehashes: each bucket splits over two
    /// new ones, so every entry finds a free way (the last step, to the maximum, may
    /// merge a few and overwrite).
    fn grow(&mut self) {
        let new_len = (self.slots.len() * 2).min(self.max_slots);
        let old = std::mem::replace(&mut self.slots, vec![Slot::default(); new_len]);
        // The tags are laid out anew; readers see no hint until each is placed again.
        for tag in self.hints.tags.iter().take(new_len) {
            tag.store(0, Ordering::Relaxed);
        }
        self.hints.slots.store(new_len, Ordering::Relaxed);
        self.entries = 0;
        for slot in old.into_iter().filter(|s| !s.is_empty()) {
            if self.place(slot, true) == Placed::New {
                self.entries += 1;
            }
        }
    }

    fn ring_write(&mut self, mut bytes: &[u8]) {
        let cap = self.ring_cap;
        let total = bytes.len() as u64;
        let mut pos = (self.head % cap as u64) as usize;
        while !bytes.is_empty() {
            let n = bytes.len().min(cap - pos);
            let (part, rest) = bytes.split_at(n);
            if pos == self.ring.len() {
                // Still filling: grow towards the cap without overshooting it.
                if self.ring.capacity() < pos + n {
                    let want = (self.ring.capacity() * 2).max(pos + n).max(4096).min(cap);
                    self.ring.reserve_exact(want - self.ring.len());
                }
                self.ring.extend_from_slice(part);
            } else if let Some(dst) = self.ring.get_mut(pos..pos + n) {
                dst.copy_from_slice(part);
            }
            bytes = rest;
            pos = (pos + n) % cap;
        }
        self.head += total;
    }

    /// The URI at absolute offset `at`, unless the ring has since overwritten it.
    fn read_uri(&self, at: u64, len: u32) -> Option<String> {
        let len = len as usize;
        let cap = self.ring_cap as u64;
        if at + len as u64 > self.head || self.head - at > cap {
            return None;
        }
        let start = (at % cap) as usize;
        let mut out = Vec::with_capacity(len);
        let first = len.min(self.ring_cap - start);
        out.extend_from_slice(self.ring.get(start..start + first)?);
        out.extend_from_slice(self.ring.get(..len - first)?);
        String::from_utf8(out).ok()
    }
}

/// The slots of `digest`'s bucket. The bucket is the digest's first 8 bytes scaled to
/// the bucket count (`key * buckets / 2^64`, Lemire's multiply-shift), which needs no
/// power of two and splits bucket `b` into `2b` and `2b + 1` when the count doubles.
fn bucket_range(digest: &Digest, slots: usize) -> std::ops::Range<usize> {
    let [a, b, c, d, e, f, g, h, ..] = *digest.as_bytes();
    let key = u64::from_le_bytes([a, b, c, d, e, f, g, h]);
    let buckets = (slots / WAYS).max(1) as u128;
    let start = ((u128::from(key) * buckets) >> 64) as usize * WAYS;
    start..start + WAYS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(i: u64) -> Digest {
        Digest::of(&i.to_le_bytes())
    }

    fn id(i: u64) -> RecordId {
        RecordId::from_uuid(uuid::Uuid::from_u128(u128::from(i) + 1))
    }

    #[test]
    fn finds_what_it_stored() {
        let mut index = PayloadIndex::new(1 << 20).unwrap();
        let date = WarcDate::from_unix_micros(1_700_000_000_123_456);
        assert!(index.insert(&digest(1), id(1), "http://a.example/x", date));
        let found = index.lookup(&digest(1)).unwrap();
        assert_eq!(found.record_id, id(1));
        assert_eq!(found.target_uri, "http://a.example/x");
        assert_eq!(found.date, date);
        assert!(index.lookup(&digest(2)).is_none());
        let stats = index.stats();
        assert_eq!((stats.hits, stats.misses, stats.entries), (1, 1, 1));
    }

    #[test]
    fn same_digest_replaces_and_empty_or_long_uris_are_not_indexed() {
        let mut index = PayloadIndex::new(1 << 20).unwrap();
        let date = WarcDate::from_unix_micros(0);
        index.insert(&digest(1), id(1), "http://a/1", date);
        index.insert(&digest(1), id(2), "http://a/2", date);
        assert_eq!(index.stats().entries, 1);
        assert_eq!(index.lookup(&digest(1)).unwrap().record_id, id(2));
        assert!(!index.insert(&digest(3), id(3), "", date));
        let long = format!("http://a/{}", "x".repeat(MAX_INDEXED_URI_BYTES));
        assert!(!index.insert(&digest(3), id(3), &long, date));
        assert!(index.lookup(&digest(3)).is_none());
    }

    #[test]
    fn small_budgets_turn_it_off() {
        assert!(PayloadIndex::new(0).is_none());
        assert!(PayloadIndex::new(MIN_DEDUP_BYTES - 1).is_none());
        assert!(!DedupConfig::off().enabled());
        assert_eq!(SLOT_BYTES, 56, "docs/warc.md gives this size");
        assert!(DedupConfig::default().enabled());
        let index = PayloadIndex::new(MIN_DEDUP_BYTES).unwrap();
        assert!(index.max_entries() >= WAYS);
        assert!(
            index.max_entries() * (SLOT_BYTES * 3 / 2 + HINT_BYTES) + index.uri_capacity()
                <= MIN_DEDUP_BYTES
        );
    }

    /// Many more digests than fit: the count and the bytes stay within the budget, the
    /// newest digests are found, the URIs found are the right ones.
    #[test]
    fn stays_bounded_and_keeps_recent_entries() {
        let budget = 256 << 10;
        let mut index = PayloadIndex::new(budget).unwrap();
        let date = WarcDate::from_unix_micros(0);
        let n = 50_000u64;
        for i in 0..n {
            index.insert(
                &digest(i),
                id(i),
                &format!("http://h{i}.example/p/{i}"),
                date,
            );
            assert!(index.stats().entries as usize <= index.max_entries());
        }
        let stats = index.stats();
        assert!(stats.bytes as usize <= budget, "{stats:?}");
        assert!(stats.evictions > 0 || stats.stale > 0 || index.head > budget as u64);
        let mut recent_hits = 0;
        for i in n - 200..n {
            if let Some(found) = index.lookup(&digest(i)) {
                assert_eq!(found.record_id, id(i));
                assert_eq!(found.target_uri, format!("http://h{i}.example/p/{i}"));
                recent_hits += 1;
            }
        }
        assert!(recent_hits >= 190, "{recent_hits} of the 200 newest found");
        let mut old_hits = 0;
        for i in 0..200 {
            if let Some(found) = index.lookup(&digest(i)) {
                assert_eq!(found.target_uri, format!("http://h{i}.example/p/{i}"));
                old_hits += 1;
            }
        }
        assert_eq!(old_hits, 0, "the oldest URIs were overwritten");
    }

    #[test]
    fn ring_wraps_uris_across_its_end() {
        let mut index = PayloadIndex::new(MIN_DEDUP_BYTES).unwrap();
        let cap = index.uri_capacity();
        let date = WarcDate::from_unix_micros(0);
        // Fill up to a few bytes before the end, then write a URI that straddles it.
        let mut i = 0u64;
        while index.head as usize + 40 < cap {
            index.insert(&digest(i), id(i), "http://pad.example/", date);
            i += 1;
        }
        let uri = "http://straddle.example/across/the/end/of/the/ring";
        index.insert(&digest(999_999), id(7), uri, date);
        assert!(index.head as usize > cap);
        assert_eq!(index.lookup(&digest(999_999)).unwrap().target_uri, uri);
        assert_eq!(index.ring.len(), cap);
    }

    #[test]
    fn forget_since_drops_only_later_entries() {
        let mut index = PayloadIndex::new(1 << 20).unwrap();
        let date = WarcDate::from_unix_micros(0);
        for i in 0..10 {
            index.insert(&digest(i), id(i), &format!("http://a/{i}"), date);
        }
        let mark = index.mark();
        for i in 10..15 {
            index.insert(&digest(i), id(i), &format!("http://a/{i}"), date);
        }
        assert_eq!(index.forget_since(mark), 5);
        assert_eq!(index.stats().entries, 10);
        assert!((0..10).all(|i| index.lookup(&digest(i)).is_some()));
        assert!((10..15).all(|i| index.lookup(&digest(i)).is_none()));
    }

    #[test]
    fn growth_keeps_every_entry() {
        let mut index = PayloadIndex::new(8 << 20).unwrap();
        let date = WarcDate::from_unix_micros(0);
        for i in 0..5_000 {
            index.insert(&digest(i), id(i), &format!("http://a/{i}"), date);
        }
        assert!(index.stats().slots > INITIAL_SLOTS as u64);
        let found = (0..5_000)
            .filter(|i| index.lookup(&digest(*i)).is_some())
            .count();
        // A full bucket grows the table instead of overwriting, while it may grow.
        assert_eq!(found, 5_000);
        assert_eq!(index.stats().evictions, 0);
    }

    /// The hint tags follow the slots: present after an insert and through growth,
    /// gone after `forget_since`, an eviction, or a stale lookup; a payload under the
    /// minimum is never hinted.
    #[test]
    fn hints_mirror_the_slots() {
        let mut index = PayloadIndex::new(MIN_DEDUP_BYTES).unwrap();
        let hints = index.hints(10);
        let date = WarcDate::from_unix_micros(0);
        assert!(!hints.likely_revisit(&digest(1), 100));
        index.insert(&digest(1), id(1), "http://a/1", date);
        assert!(hints.likely_revisit(&digest(1), 100));
        assert!(!hints.likely_revisit(&digest(1), 9), "under the minimum");
        assert!(!hints.likely_revisit(&digest(2), 100));
        let mark = index.mark();
        index.insert(&digest(2), id(2), "http://a/2", date);
        assert!(hints.likely_revisit(&digest(2), 100));
        index.forget_since(mark);
        assert!(!hints.likely_revisit(&digest(2), 100), "forgotten");
        assert!(hints.likely_revisit(&digest(1), 100));

        // Many more digests than fit: every live entry is hinted, through the
        // doublings and the evictions; the evicted ones are not.
        let n = 5_000u64;
        for i in 3..n {
            index.insert(&digest(i), id(i), &format!("http://a/{i}"), date);
        }
        assert!(index.stats().evictions > 0);
        let live: Vec<u64> = (1..n)
            .filter(|i| {
                let range = index.bucket_range(&digest(*i));
                index.slots[range]
                    .iter()
                    .any(|s| !s.is_empty() && s.digest == *digest(*i).as_bytes())
            })
            .collect();
        assert!(live.len() < n as usize - 1);
        let hinted = (1..n)
            .filter(|i| hints.likely_revisit(&digest(*i), 100))
            .count();
        assert!(live.iter().all(|i| hints.likely_revisit(&digest(*i), 100)));
        // Tags are 4 bytes of the digest: an evicted digest is hinted only when an
        // entry of its bucket shares them (2^-32 per way).
        assert_eq!(hinted, live.len());
        // A stale entry (its URI overwritten in the ring) loses its tag on lookup.
        let stale = live
            .iter()
            .copied()
            .find(|i| index.lookup(&digest(*i)).is_none());
        if let Some(i) = stale {
            assert!(!hints.likely_revisit(&digest(i), 100));
        }
        assert!(index.stats().bytes as usize <= MIN_DEDUP_BYTES);
    }
}
