//! [`SeenSet`]: the memory-mapped, lock-free blocked Bloom filter.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use xxhash_rust::xxh3::Xxh3;

use super::dirty::DirtyBlocks;
use super::error::Error;
use super::hash::{Hasher, Probe};
use super::header::{Header, Purpose, State, HEADER_BYTES};
use super::model::{self, Sizing, BLOCK_BITS, BLOCK_WORDS};
use crate::sys::mmap::MappedWords;

mod checkpoint;
mod open;

use checkpoint::LogState;
pub use checkpoint::{LogRef, LogWrite, PendingLog};

/// How many keys a batched call hashes and prefetches before it applies any of them: a
/// chunk of the batch is hashed with every block (and, for insertions, its dirty mark)
/// prefetched, then applied in order, so that many cache and TLB misses are in flight at
/// once. 32 measured best on a Zen 5 guest with a 240 MB set (`docs/benchmarks.md`,
/// "Presence bits, side by side with 9a14aad"): a ring of 16 probes kept too few misses
/// in flight, 64 queued more than the core tracks.
pub const PREFETCH_DISTANCE: usize = 32;
/// Counter stripes: new-key insertions update the stripe of their block, so threads
/// rarely share a counter cache line.
const STRIPES: usize = 64;
/// Bytes copied per step when snapshotting or checksumming.
const COPY_CHUNK_BYTES: usize = 1 << 20;

/// Where the live bits are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backing {
    /// A shared, writable mapping of the file (default): the set may be larger than RAM
    /// (the kernel pages it to and from its file), at the cost of page faults as the
    /// kernel writes dirty pages back and write-protects them again.
    #[default]
    Mapped,
    /// Anonymous memory (transparent huge pages where the set is dense, see
    /// [`SeenConfig::huge_pages`]); the file is read at open and written at
    /// [`SeenSet::close`] (snapshots work the same). Faster on sets far beyond the cache
    /// (no write-back faults), but must fit in RAM.
    Memory,
}

/// How to build a new set.
#[derive(Debug, Clone, PartialEq)]
pub struct SeenConfig {
    /// Keys the set is designed for; inserting more works, with a rising false-positive
    /// rate, and raises the over-capacity warning.
    pub capacity: u64,
    /// The false-positive rate wanted when `capacity` keys are in.
    pub target_fp: f64,
    /// What the keys are (checked by the typed wrappers when opening).
    pub purpose: Purpose,
    /// `mlock` the bits in RAM after creating/opening. Fails (with an I/O error) if the
    /// process's `RLIMIT_MEMLOCK` is too small.
    pub lock_in_ram: bool,
    /// Explicit size, overriding the one derived from `capacity` and `target_fp`.
    pub sizing: Option<Sizing>,
    /// Where the live bits are kept.
    pub backing: Backing,
    /// Ask for transparent huge pages from creation. Right for a set that will hold
    /// more keys than it has 4 KiB pages (a benchmark, a crawl sized to its URLs): on
    /// 4 KiB pages nearly every access to a set far beyond the cache also misses the
    /// TLB. Off by default, because the first touch of a 2 MiB region makes all of it
    /// resident, so a sparse set's memory would no longer follow its keys. Sets that
    /// are opened or restored decide from their header: huge pages when they already
    /// hold as many keys as they have 4 KiB pages. `Backing::Mapped` asks only when
    /// the bits fit in half the RAM (`docs/seen.md`, "Backing").
    pub huge_pages: bool,
}

impl SeenConfig {
    /// A set for `capacity` keys at `target_fp` false positives when full.
    pub fn new(capacity: u64, target_fp: f64) -> Self {
        Self {
            capacity,
            target_fp,
            purpose: Purpose::Urls,
            lock_in_ram: false,
            sizing: None,
            backing: Backing::Mapped,
            huge_pages: false,
        }
    }

    /// The default for a crawl expected to discover `urls` distinct URLs: large enough
    /// that the whole crawl loses less than half a URL in expectation (about 40-65 bits
    /// per URL for 1e6-1e9 URLs; see `docs/seen.md`). Returns `None` for 0 URLs.
    pub fn lossless(urls: u64) -> Option<Self> {
        let sizing = Sizing::for_loss(urls, 0.5)?;
        let fp = model::false_positive_rate(urls as f64, sizing.blocks, sizing.k);
        Some(Self {
            sizing: Some(sizing),
            ..Self::new(urls, fp.max(f64::MIN_POSITIVE))
        })
    }

    fn resolve(&self) -> Option<Sizing> {
        match self.sizing {
            Some(s) if s.blocks > 0 && s.blocks <= 1 << 40 && (1..=model::MAX_K).contains(&s.k) => {
                Some(s)
            }
            Some(_) => None,
            None => Sizing::for_fp(self.capacity, self.target_fp),
        }
    }
}

/// A point-in-time report on a set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    /// Design capacity (keys).
    pub capacity: u64,
    /// Bits in the bit region.
    pub bits: u64,
    /// Whole file size, header included.
    pub file_bytes: u64,
    /// Bits per key (`k`).
    pub k: u32,
    /// Bits currently set.
    pub set_bits: u64,
    /// `set_bits / bits`.
    pub fill_ratio: f64,
    /// Keys inserted as new (calls that returned `false`).
    pub inserted: u64,
    /// The false-positive rate the model expects right now, at `inserted` keys: the
    /// chance that the next new URL is mistaken for a seen one and lost.
    pub expected_fp: f64,
    /// Expected number of new keys lost so far: the running sum of the false-positive
    /// probability at each arrival of a new key, estimated without bias at every
    /// insertion from the popcount of the block the key landed in (see
    /// `losses_per_insertion` in the source and `docs/seen.md`).
    pub expected_lost: f64,
    /// True once `inserted` exceeds `capacity`.
    pub over_capacity: bool,
}

/// What [`SeenSet::snapshot_to`] did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SnapshotInfo {
    /// Bytes of the snapshot file.
    pub file_bytes: u64,
    /// Wall time of the whole snapshot (copy, checksum, fsync, rename, dir fsync).
    pub duration: Duration,
}

/// Counters for one stripe, alone on a cache line.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Stripe {
    inserted: AtomicU64,
    set_bits: AtomicU64,
    /// f64 bits, updated by compare-exchange.
    lost: AtomicU64,
}

impl Stripe {
    fn add(&self, inserted: u64, set_bits: u64, lost: f64) {
        if inserted == 0 && set_bits == 0 {
            return;
        }
        self.inserted.fetch_add(inserted, Ordering::Relaxed);
        self.set_bits.fetch_add(set_bits, Ordering::Relaxed);
        let mut cur = self.lost.load(Ordering::Relaxed);
        loop {
            let new = (f64::from_bits(cur) + lost).to_bits();
            match self
                .lost
                .compare_exchange_weak(cur, new, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => break,
                Err(actual) => cur = actual,
            }
        }
    }
}

/// Per-chunk tallies, folded into one stripe per chunk.
#[derive(Default)]
struct Tally {
    inserted: u64,
    set_bits: u64,
    lost: f64,
}

/// A fixed-size set of byte-string keys with a small, known false-positive rate and no
/// false negatives, stored in a memory-mapped file and safe to update from every thread
/// at once.
///
/// `test_and_set` is lock-free: each key lives in one 64-byte block, and its bits are
/// set with atomic `fetch_or` on the block's words, so no bit is ever lost to a race.
/// Two threads inserting the *same* new key at the same instant may both be told it was
/// new (a duplicate, never a loss); a key is never reported absent after any call that
/// inserted it has returned.
///
/// The live file is never a checkpoint (the kernel writes mapped pages back whenever it
/// likes); use [`SeenSet::snapshot_to`], and call [`SeenSet::close`] to seal the live
/// file on a clean shutdown.
#[derive(Debug)]
pub struct SeenSet {
    path: PathBuf,
    /// Declared before `file` so it is dropped (unmapped) first: the lock outlives the
    /// mapping.
    map: MappedWords,
    /// Holds the exclusive flock for as long as the mapping lives.
    file: File,
    hasher: Hasher,
    capacity: u64,
    target_fp: f64,
    purpose: Purpose,
    backing: Backing,
    stripes: Box<[Stripe]>,
    /// `g[p] = (p / 512)^k`: chance that a random key of this block is fully set when
    /// the block has `p` bits set.
    block_fp_by_popcount: Box<[f64]>,
    /// `g / (1 − g)` for the same `g`: see [`losses_per_insertion`].
    lost_per_insert_by_popcount: Box<[f64]>,
    warned_over_capacity: AtomicBool,
    /// Blocks changed since the last checkpoint took them.
    dirty: DirtyBlocks,
    /// The checkpoint writer's state (only the coordinator takes it).
    log: Mutex<LogState>,
}

impl SeenSet {
    /// Inserts `key`; returns `true` if it was (probably) there already, `false` if it
    /// is certainly new. Lock-free; callable from any number of threads.
    pub fn test_and_set(&self, key: &[u8]) -> bool {
        let probe = self.hasher.probe(key);
        let mut tally = Tally::default();
        let present = self.apply(&probe, &mut tally);
        self.fold(probe.block, &tally);
        present
    }

    /// [`SeenSet::test_and_set`] for many keys, in two passes over each chunk of
    /// `PREFETCH_DISTANCE` keys: the first hashes every key and prefetches its block and
    /// its dirty mark, the second applies them, so that many cache misses are in flight
    /// at once (memory-level parallelism, not latency, is the limit on a set far larger
    /// than the cache). `out[i]` gets the answer for
    /// `keys[i]`; keys repeated within the batch are handled in order.
    ///
    /// # Panics
    /// If `out.len() != keys.len()` (a programming error, not an input error).
    pub fn test_and_set_batch<K: AsRef<[u8]>>(&self, keys: &[K], out: &mut [bool]) {
        assert_eq!(
            keys.len(),
            out.len(),
            "test_and_set_batch: keys and out differ in length"
        );
        let mut tally = Tally::default();
        let mut first_block = None;
        self.two_pass::<K, true>(keys, out, |p| {
            first_block.get_or_insert(p.block);
            self.apply(p, &mut tally)
        });
        if let Some(block) = first_block {
            self.fold(block, &tally);
        }
    }

    /// True if `key` is (probably) in the set. Never false for an inserted key.
    pub fn contains(&self, key: &[u8]) -> bool {
        self.check(&self.hasher.probe(key))
    }

    /// [`SeenSet::contains`] for many keys, with the same two-pass prefetching as
    /// [`SeenSet::test_and_set_batch`].
    ///
    /// # Panics
    /// If `out.len() != keys.len()`.
    pub fn contains_batch<K: AsRef<[u8]>>(&self, keys: &[K], out: &mut [bool]) {
        assert_eq!(
            keys.len(),
            out.len(),
            "contains_batch: keys and out differ in length"
        );
        self.two_pass::<K, false>(keys, out, |p| self.check(p));
    }

    /// Runs `f` on the probe of every key in order, a chunk of `PREFETCH_DISTANCE` keys at
    /// a time: hash the chunk and prefetch every block it needs (and every dirty-map word,
    /// when `DIRTY`: an insertion marks its block there, a second miss per key otherwise
    /// paid in line), then apply the chunk. Keys repeated within a chunk are applied in
    /// order, so the second sees the first's bits.
    #[inline]
    fn two_pass<K: AsRef<[u8]>, const DIRTY: bool>(
        &self,
        keys: &[K],
        out: &mut [bool],
        mut f: impl FnMut(&Probe) -> bool,
    ) {
        let mut probes = [Probe::default(); PREFETCH_DISTANCE];
        for (keys, out) in keys
            .chunks(PREFETCH_DISTANCE)
            .zip(out.chunks_mut(PREFETCH_DISTANCE))
        {
            for (p, key) in probes.iter_mut().zip(keys) {
                *p = self.hasher.probe(key.as_ref());
                self.map.prefetch(p.block as usize * BLOCK_WORDS);
                if DIRTY {
                    self.dirty.prefetch(p.block);
                }
            }
            for (o, p) in out.iter_mut().zip(&probes) {
                *o = f(p);
            }
        }
    }

    fn block(&self, block: u64) -> &[AtomicU64] {
        let start = block as usize * BLOCK_WORDS;
        // The hasher keeps block < blocks, so this range is always inside the mapping;
        // an empty slice would make every key "absent" rather than panic.
        self.map
            .words()
            .get(start..start + BLOCK_WORDS)
            .unwrap_or_default()
    }

    fn check(&self, probe: &Probe) -> bool {
        let words = self.block(probe.block);
        !words.is_empty()
            && words
                .iter()
                .zip(probe.masks)
                .all(|(w, m)| m == 0 || u64::from_le(w.load(Ordering::Relaxed)) & m == m)
    }

    /// Sets the probe's bits; returns whether they were all set before. Bits are stored
    /// little-endian in the file (hence `to_le`/`from_le`, no-ops on x86 and arm64).
    /// Relaxed ordering suffices: bits only ever go from 0 to 1, each `fetch_or` is
    /// atomic on its word, and no other memory is published through these bits.
    #[inline]
    fn apply(&self, probe: &Probe, tally: &mut Tally) -> bool {
        let words = self.block(probe.block);
        let mut current = [0u64; BLOCK_WORDS];
        for (c, w) in current.iter_mut().zip(words) {
            *c = u64::from_le(w.load(Ordering::Relaxed));
        }
        let mut present = true;
        let mut flipped = 0u32;
        for ((w, m), c) in words.iter().zip(probe.masks).zip(current) {
            if c & m != m {
                let old = u64::from_le(w.fetch_or(m.to_le(), Ordering::Relaxed));
                if old & m != m {
                    present = false;
                    flipped += (m & !old).count_ones();
                }
            }
        }
        if !present {
            self.dirty.mark(probe.block);
            let popcount: u32 = current.iter().map(|c| c.count_ones()).sum();
            tally.inserted += 1;
            tally.set_bits += u64::from(flipped);
            tally.lost += self
                .lost_per_insert_by_popcount
                .get(popcount as usize)
                .copied()
                .unwrap_or(0.0);
        }
        present
    }

    fn fold(&self, block: u64, tally: &Tally) {
        if tally.inserted == 0 {
            return;
        }
        let Some(stripe) = self.stripes.get(block as usize % STRIPES) else {
            return;
        };
        let before = stripe.inserted.load(Ordering::Relaxed);
        stripe.add(tally.inserted, tally.set_bits, tally.lost);
        // Check the capacity only when a stripe crosses a multiple of 4096 insertions, so
        // the 64-stripe sum is rare.
        if (before >> 12) != ((before + tally.inserted) >> 12)
            && !self.warned_over_capacity.load(Ordering::Relaxed)
            && self.inserted() > self.capacity
            && !self.warned_over_capacity.swap(true, Ordering::Relaxed)
        {
            tracing::warn!(
                path = %self.path.display(),
                capacity = self.capacity,
                inserted = self.inserted(),
                "seen set is past its design capacity; false positives (lost URLs) now rise quickly"
            );
        }
    }

    fn inserted(&self) -> u64 {
        self.stripes
            .iter()
            .map(|s| s.inserted.load(Ordering::Relaxed))
            .sum()
    }

    /// Current counters and the model's figures.
    pub fn stats(&self) -> Stats {
        stats_from(&self.header_now(State::Open, 0))
    }

    /// What the set's false-positive rate is right now, exactly (for a random new key
    /// under the layout's model): the mean over all blocks of `(popcount / 512)^k`.
    /// Scans the whole bit region; meant for benchmarks and tests, not the hot path.
    pub fn scan_fp_rate(&self) -> f64 {
        let mut sum = 0.0;
        for block in self.map.words().chunks(BLOCK_WORDS) {
            let pc: u32 = block
                .iter()
                .map(|w| w.load(Ordering::Relaxed).count_ones())
                .sum();
            sum += self
                .block_fp_by_popcount
                .get(pc as usize)
                .copied()
                .unwrap_or(1.0);
        }
        sum / self.hasher.blocks as f64
    }

    /// The path of the live file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the live bits are kept.
    pub fn backing(&self) -> Backing {
        self.backing
    }

    /// What the keys are.
    pub fn purpose(&self) -> Purpose {
        self.purpose
    }

    fn header_now(&self, state: State, bits_checksum: u64) -> Header {
        let sum = |f: fn(&Stripe) -> u64| self.stripes.iter().map(f).sum::<u64>();
        Header {
            state,
            purpose: self.purpose,
            seed: self.hasher.seed,
            k: self.hasher.k,
            blocks: self.hasher.blocks,
            capacity: self.capacity,
            target_fp: self.target_fp,
            inserted: sum(|s| s.inserted.load(Ordering::Relaxed)),
            set_bits: sum(|s| s.set_bits.load(Ordering::Relaxed)),
            expected_lost: self
                .stripes
                .iter()
                .map(|s| f64::from_bits(s.lost.load(Ordering::Relaxed)))
                .sum(),
            bits_checksum,
        }
    }

    /// Bytes of the live bits resident in this process's memory now (the mapping's
    /// `Rss` in `/proc/self/smaps`), so memory figures can be given with and without
    /// the bits. `None` where that file is not available.
    pub fn resident_bytes(&self) -> Option<u64> {
        self.map.resident_bytes()
    }

    /// Where the bits' mapping starts, for [`crate::sys::procfs::mappings_rss_bytes`].
    pub(crate) fn mapping_address(&self) -> usize {
        self.map.address()
    }

    /// Seals the live file on a clean shutdown: writes back the mapped pages, records the
    /// counters and the bits' checksum, marks the file sealed and fsyncs it, so a later
    /// [`SeenSet::open`] accepts it. Dropping a set without `close` leaves the file
    /// unsealed, as after a crash.
    ///
    /// # Errors
    /// I/O errors; the file then stays unsealed.
    pub fn close(self) -> Result<(), Error> {
        let io = |e| Error::io(&self.path, e);
        if self.backing == Backing::Mapped {
            self.map.flush().map_err(io)?;
        }
        let mut hasher = Xxh3::new();
        let mut buf = vec![0u8; COPY_CHUNK_BYTES];
        let mut offset = HEADER_BYTES;
        for words in self.map.words().chunks(COPY_CHUNK_BYTES / 8) {
            let bytes = buf.get_mut(..words.len() * 8).unwrap_or_default();
            for (dst, w) in bytes.chunks_exact_mut(8).zip(words) {
                dst.copy_from_slice(&u64::from_le(w.load(Ordering::Relaxed)).to_le_bytes());
            }
            hasher.update(bytes);
            if self.backing == Backing::Memory {
                self.file.write_all_at(bytes, offset).map_err(io)?;
            }
            offset += bytes.len() as u64;
        }
        let header = self.header_now(State::Sealed, hasher.digest());
        self.file.write_all_at(&header.encode(), 0).map_err(io)?;
        self.file.sync_all().map_err(io)?;
        Ok(())
    }
}

/// Expected new keys lost since the previous insertion, sampled at an insertion whose
/// block has false-positive probability `g`.
///
/// New keys arrive; each is lost with the set's current rate `f` and inserted otherwise,
/// so between two insertions `f / (1 − f)` keys are lost on average. The inserted key's
/// block is not uniform: blocks are chosen uniformly but the key is only inserted (and
/// so sampled) with probability `1 − g_b`. Hence `E[g/(1−g) | inserted] = Σ g_b / Σ (1−g_b)
/// = f / (1 − f)`: summing `g/(1−g)` at every insertion is an unbiased running estimate
/// of the keys lost so far, at the cost of one table lookup on the popcount of a block
/// the insertion has in cache anyway.
fn losses_per_insertion(g: f64) -> f64 {
    // A full block (g = 1) never takes an insertion, so its entry is never used.
    if g >= 1.0 {
        0.0
    } else {
        g / (1.0 - g)
    }
}

fn stats_from(h: &Header) -> Stats {
    let bits = h.blocks * BLOCK_BITS;
    Stats {
        capacity: h.capacity,
        bits,
        file_bytes: h.file_bytes(),
        k: h.k,
        set_bits: h.set_bits,
        fill_ratio: h.set_bits as f64 / bits as f64,
        inserted: h.inserted,
        expected_fp: model::false_positive_rate(h.inserted as f64, h.blocks, h.k),
        expected_lost: h.expected_lost,
        over_capacity: h.inserted > h.capacity,
    }
}

fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp"))
}

/// Fsyncs the directory of `path` (a rename into it is then durable).
fn sync_parent_dir(path: &Path) -> io::Result<()> {
    crate::disk::sync_parent(path).map_err(io::Error::from)
}
