//! [`SeenSet`]: the memory-mapped, lock-free blocked Bloom filter.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use xxhash_rust::xxh3::Xxh3;

use super::dirty::DirtyBlocks;
use super::error::{Error, ErrorKind};
use super::hash::{Hasher, Probe, DEFAULT_SEED};
use super::header::{Header, HeaderError, Purpose, State, HEADER_BYTES};
use super::log::{self as plog, LogSummary, RecordCounters, RecordKind, LOG_HEADER_BYTES};
use super::mapped::{self, MappedWords};
use super::model::{self, Sizing, BLOCK_BITS, BLOCK_BYTES, BLOCK_WORDS};

/// How many keys ahead of the one being applied the batched calls hash and prefetch:
/// about the number of line-fill buffers of a core (10-20), so the misses in flight
/// cover memory latency without prefetches stalling on full buffers.
pub const PREFETCH_DISTANCE: usize = 16;
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
    /// Anonymous memory with transparent huge pages; the file is read at open and
    /// written at [`SeenSet::close`] (snapshots work the same). Faster on sets far beyond
    /// the cache (no write-back faults, fewer TLB misses), but must fit in RAM.
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
    /// Memory backing only: huge pages asked for yet (see [`SeenSet::maybe_huge`]).
    huge_pages: AtomicBool,
    /// The checkpoint writer's state (only the coordinator takes it).
    log: Mutex<LogState>,
}

/// What the presence-log writer remembers between checkpoints.
#[derive(Debug)]
struct LogState {
    /// One bit per block: the block has had a bit set (so a compaction writes it).
    nonzero: Vec<u64>,
    /// Bytes of the current log's header and full record: the size a compaction wrote.
    base_bytes: u64,
}

/// A presence log as a checkpoint refers to it: the file and its committed length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRef {
    pub path: PathBuf,
    pub committed_bytes: u64,
}

/// What [`SeenSet::checkpoint_log`] wrote.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogWrite {
    /// The log's committed length after this checkpoint (goes into the manifest).
    pub committed_bytes: u64,
    /// Bytes written by this checkpoint (header and records).
    pub written_bytes: u64,
    /// Blocks written.
    pub blocks: u64,
    /// True if this checkpoint started a new log with one full record.
    pub compacted: bool,
    /// Wall time of the write, fsync included.
    pub duration: Duration,
}

/// A checkpoint's log write that is on disk but not yet part of a committed
/// checkpoint. [`PendingLog::confirm`] once the checkpoint is committed; dropping it
/// unconfirmed marks its blocks dirty again, so the next checkpoint writes them.
#[derive(Debug)]
pub struct PendingLog<'a> {
    set: &'a SeenSet,
    taken: Vec<u64>,
    new_base_bytes: Option<u64>,
    confirmed: bool,
    /// What was written.
    pub write: LogWrite,
}

impl PendingLog<'_> {
    /// The checkpoint that holds this write is committed: its blocks are clean.
    pub fn confirm(mut self) {
        self.confirmed = true;
        if let Some(b) = self.new_base_bytes {
            if let Ok(mut st) = self.set.log.lock() {
                st.base_bytes = b;
            }
        }
    }
}

impl Drop for PendingLog<'_> {
    fn drop(&mut self) {
        if !self.confirmed {
            self.set.dirty.remark(&self.taken);
        }
    }
}

/// A delta is written while the deltas since the last full record stay under the
/// full record's size (and this floor): past it, a checkpoint compacts. Each block is
/// then written at most about three times over a crawl (`docs/seen.md`).
const COMPACT_FLOOR_BYTES: u64 = 4 << 20;

impl SeenSet {
    /// Creates a new set at `path` for `capacity` keys at `fp` false positives when
    /// full. Fails if the file exists.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidSize`] for impossible sizes; I/O errors otherwise.
    pub fn create(path: impl AsRef<Path>, capacity: u64, fp: f64) -> Result<Self, Error> {
        Self::create_with(path, &SeenConfig::new(capacity, fp))
    }

    /// Creates a new set from a full [`SeenConfig`].
    ///
    /// The file is created sparse (`set_len`), so even a multi-gigabyte set is created
    /// instantly and takes disk blocks only where bits get set.
    ///
    /// # Errors
    /// As [`SeenSet::create`].
    pub fn create_with(path: impl AsRef<Path>, config: &SeenConfig) -> Result<Self, Error> {
        let path = path.as_ref();
        let sizing = config.resolve().ok_or_else(|| {
            Error::new(ErrorKind::InvalidSize, path).with_detail(format!(
                "capacity {} fp {}",
                config.capacity, config.target_fp
            ))
        })?;
        let header = Header {
            state: State::Open,
            purpose: config.purpose,
            seed: DEFAULT_SEED,
            k: sizing.k,
            blocks: sizing.blocks,
            capacity: config.capacity,
            target_fp: config.target_fp,
            inserted: 0,
            set_bits: 0,
            expected_lost: 0.0,
            bits_checksum: 0,
        };
        Self::create_from_header(path, &header, config.lock_in_ram, config.backing)
    }

    /// Creates an empty, open set file with `header`'s parameters (and seed).
    fn create_from_header(
        path: &Path,
        header: &Header,
        lock_in_ram: bool,
        backing: Backing,
    ) -> Result<Self, Error> {
        let header = Header {
            state: State::Open,
            inserted: 0,
            set_bits: 0,
            expected_lost: 0.0,
            bits_checksum: 0,
            ..*header
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        lock(&file, path)?;
        let io = |e| Error::io(path, e);
        file.set_len(header.file_bytes()).map_err(io)?;
        file.write_all_at(&header.encode(), 0).map_err(io)?;
        file.sync_all().map_err(io)?;
        sync_parent_dir(path).map_err(io)?;
        Self::map(path, file, &header, lock_in_ram, backing)
    }

    /// Opens a sealed set (a snapshot, or a set closed with [`SeenSet::close`]) for
    /// reading and writing. The whole file is validated first: header magic, version,
    /// checksum and parameters, exact length, and the checksum of the bit region. The
    /// file is then marked open (unsealed) on disk before any bit can change, so a crash
    /// from here on leaves a file that `open` refuses.
    ///
    /// Opening a snapshot in place makes that snapshot the live file; to resume from a
    /// checkpoint while keeping it, use [`SeenSet::restore`].
    ///
    /// # Errors
    /// [`ErrorKind::Locked`] if the file is in use; [`ErrorKind::Unsealed`] for a live
    /// file that was never closed; the validation kinds for damage; I/O errors.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        Self::open_with(path, None, false, Backing::Mapped)
    }

    /// [`SeenSet::open`] with a choice of [`Backing`] and of `mlock`.
    ///
    /// # Errors
    /// As [`SeenSet::open`].
    pub fn open_backed(
        path: impl AsRef<Path>,
        backing: Backing,
        lock_in_ram: bool,
    ) -> Result<Self, Error> {
        Self::open_with(path, None, lock_in_ram, backing)
    }

    pub(crate) fn open_with(
        path: impl AsRef<Path>,
        purpose: Option<Purpose>,
        lock_in_ram: bool,
        backing: Backing,
    ) -> Result<Self, Error> {
        let path = path.as_ref();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        lock(&file, path)?;
        let mut header = validate_file(&file, path)?;
        if let Some(p) = purpose {
            if p != header.purpose {
                return Err(Error::new(ErrorKind::WrongPurpose, path));
            }
        }
        header.state = State::Open;
        let io = |e| Error::io(path, e);
        file.write_all_at(&header.encode(), 0).map_err(io)?;
        file.sync_all().map_err(io)?;
        let set = Self::map(path, file, &header, lock_in_ram, backing)?;
        if backing == Backing::Memory {
            set.load_bits().map_err(io)?;
        }
        // Counters carried over from the file.
        if let Some(s) = set.stripes.first() {
            s.add(header.inserted, header.set_bits, header.expected_lost);
        }
        set.maybe_huge();
        Ok(set)
    }

    /// Validates a seen-set file without opening it for writing: the same checks as
    /// [`SeenSet::open`], reading the file with plain reads, no lock, no mapping. Returns
    /// the statistics stored in it.
    ///
    /// # Errors
    /// As [`SeenSet::open`], minus `Locked`.
    pub fn verify(path: impl AsRef<Path>) -> Result<Stats, Error> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let h = validate_file(&file, path)?;
        Ok(stats_from(&h))
    }

    /// Copies the snapshot at `snapshot` to `live` (write, fsync, rename, fsync dir) and
    /// opens the copy, leaving the snapshot untouched for the next recovery.
    ///
    /// # Errors
    /// As [`SeenSet::verify`] on the snapshot, or I/O errors.
    pub fn restore(snapshot: impl AsRef<Path>, live: impl AsRef<Path>) -> Result<Self, Error> {
        Self::restore_backed(snapshot, live, Backing::default())
    }

    /// [`SeenSet::restore`] with a choice of [`Backing`].
    ///
    /// # Errors
    /// As [`SeenSet::restore`].
    pub fn restore_backed(
        snapshot: impl AsRef<Path>,
        live: impl AsRef<Path>,
        backing: Backing,
    ) -> Result<Self, Error> {
        let (snapshot, live) = (snapshot.as_ref(), live.as_ref());
        Self::verify(snapshot)?;
        let tmp = temp_path(live);
        let io = |e| Error::io(live, e);
        std::fs::copy(snapshot, &tmp).map_err(io)?;
        File::open(&tmp).and_then(|f| f.sync_all()).map_err(io)?;
        std::fs::rename(&tmp, live).map_err(io)?;
        sync_parent_dir(live).map_err(io)?;
        Self::open_backed(live, backing, false)
    }

    fn map(
        path: &Path,
        file: File,
        header: &Header,
        lock_in_ram: bool,
        backing: Backing,
    ) -> Result<Self, Error> {
        let io = |e| Error::io(path, e);
        let len = usize::try_from(header.bit_bytes()).map_err(|_| {
            Error::new(ErrorKind::InvalidSize, path).with_detail("larger than the address space")
        })?;
        let map = match backing {
            Backing::Mapped => MappedWords::map(&file, HEADER_BYTES, len),
            Backing::Memory => MappedWords::anon(len),
        }
        .map_err(io)?;
        map.advise_random().map_err(io)?;
        if lock_in_ram {
            map.lock_in_ram().map_err(io)?;
        }
        let k = header.k;
        let block_fp_by_popcount = (0..=BLOCK_BITS)
            .map(|p| (p as f64 / BLOCK_BITS as f64).powi(k as i32))
            .collect();
        let lost_per_insert_by_popcount = (0..=BLOCK_BITS)
            .map(|p| losses_per_insertion((p as f64 / BLOCK_BITS as f64).powi(k as i32)))
            .collect();
        Ok(Self {
            path: path.to_path_buf(),
            file,
            map,
            hasher: Hasher {
                seed: header.seed,
                blocks: header.blocks,
                k,
            },
            capacity: header.capacity,
            target_fp: header.target_fp,
            purpose: header.purpose,
            backing,
            stripes: (0..STRIPES).map(|_| Stripe::default()).collect(),
            block_fp_by_popcount,
            lost_per_insert_by_popcount,
            warned_over_capacity: AtomicBool::new(false),
            dirty: DirtyBlocks::new(header.blocks).map_err(io)?,
            huge_pages: AtomicBool::new(backing != Backing::Memory),
            log: Mutex::new(LogState {
                nonzero: vec![0u64; usize::try_from(header.blocks.div_ceil(64)).unwrap_or(0)],
                base_bytes: 0,
            }),
        })
    }

    /// Reads the file's bit region into memory-backed words (before the set is shared).
    fn load_bits(&self) -> io::Result<()> {
        let mut buf = vec![0u8; COPY_CHUNK_BYTES];
        let mut offset = HEADER_BYTES;
        for words in self.map.words().chunks(COPY_CHUNK_BYTES / 8) {
            let bytes = buf.get_mut(..words.len() * 8).unwrap_or_default();
            self.file.read_exact_at(bytes, offset)?;
            for (src, w) in bytes.chunks_exact(8).zip(words) {
                let mut le = [0u8; 8];
                le.copy_from_slice(src);
                w.store(u64::from_le_bytes(le).to_le(), Ordering::Relaxed);
            }
            offset += bytes.len() as u64;
        }
        Ok(())
    }

    /// Inserts `key`; returns `true` if it was (probably) there already, `false` if it
    /// is certainly new. Lock-free; callable from any number of threads.
    pub fn test_and_set(&self, key: &[u8]) -> bool {
        let probe = self.hasher.probe(key);
        let mut tally = Tally::default();
        let present = self.apply(&probe, &mut tally);
        self.fold(probe.block, &tally);
        present
    }

    /// [`SeenSet::test_and_set`] for many keys, software-pipelined: each key is hashed
    /// and its block prefetched [`PREFETCH_DISTANCE`] keys before it is applied, so that
    /// many cache misses are in flight at once (memory-level parallelism, not latency,
    /// is the limit on a set far larger than the cache). `out[i]` gets the answer for
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
        self.pipelined(keys, out, |p| {
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

    /// [`SeenSet::contains`] for many keys, with the same pipelined prefetching as
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
        self.pipelined(keys, out, |p| self.check(p));
    }

    /// Runs `f` on the probe of every key in order, `PREFETCH_DISTANCE` keys behind the
    /// hashing and prefetching, through a small ring of probes.
    #[inline]
    fn pipelined<K: AsRef<[u8]>>(
        &self,
        keys: &[K],
        out: &mut [bool],
        mut f: impl FnMut(&Probe) -> bool,
    ) {
        let mut ring = [Probe::default(); PREFETCH_DISTANCE];
        for i in 0..keys.len() + PREFETCH_DISTANCE {
            let Some(slot) = ring.get_mut(i % PREFETCH_DISTANCE) else {
                continue; // unreachable: i % D < D
            };
            if let Some(done) = i.checked_sub(PREFETCH_DISTANCE) {
                if let Some(o) = out.get_mut(done) {
                    *o = f(slot);
                }
            }
            if let Some(key) = keys.get(i) {
                *slot = self.hasher.probe(key.as_ref());
                self.map.prefetch(slot.block as usize * BLOCK_WORDS);
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
        let crossed = (before >> 12) != ((before + tally.inserted) >> 12);
        if crossed {
            self.maybe_huge();
        }
        if crossed
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

    /// Asks for huge pages once the set holds as many keys as it has 4 KiB pages
    /// (64 blocks each): by then about 63 % of its pages are resident anyway, and TLB
    /// misses start to matter. Before that, 4 KiB pages keep a sparse set's memory and
    /// the kernel's work in proportion to the keys: asked for at creation, every first
    /// touch of a 2 MiB region zeroes (and on a busy host first compacts) 2 MiB, so a
    /// 600 MB set becomes resident after a few thousand keys (`docs/seen.md`).
    fn maybe_huge(&self) {
        if self.huge_pages.load(Ordering::Relaxed) || self.inserted() < self.hasher.blocks / 64 {
            return;
        }
        if !self.huge_pages.swap(true, Ordering::Relaxed) {
            if let Err(e) = self.map.advise_huge() {
                tracing::debug!(error = %e, "madvise(MADV_HUGEPAGE) refused; staying on 4 KiB pages");
            }
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

    /// Writes a complete, checksummed copy of the set to `path`, atomically: the bits go
    /// to a temporary file beside it, which is fsynced, renamed over `path`, and the
    /// directory fsynced. A crash at any moment leaves either the old file at `path` or
    /// the new one, both whole.
    ///
    /// Consistency (see `docs/seen.md`): inserts may continue during the copy. Bits only
    /// ever go from 0 to 1 and each word is copied atomically, so the snapshot holds every
    /// bit that was set when the call began and only bits that were set by the time it
    /// returned. For a checkpoint, take the frontier's cut *after* this returns (or pause
    /// inserts around it): then every bit in the snapshot belongs to a URL the
    /// checkpointed frontier already knows.
    ///
    /// # Errors
    /// I/O errors; the previous file at `path` is then untouched.
    pub fn snapshot_to(&self, path: impl AsRef<Path>) -> Result<SnapshotInfo, Error> {
        let started = Instant::now();
        let path = path.as_ref();
        let tmp = temp_path(path);
        let io = |e| Error::io(path, e);
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(io)?;
        let total = HEADER_BYTES + self.hasher.blocks * (BLOCK_BITS / 8);
        file.set_len(total).map_err(io)?;
        let mut hasher = Xxh3::new();
        let mut buf = vec![0u8; COPY_CHUNK_BYTES];
        let mut offset = HEADER_BYTES;
        for words in self.map.words().chunks(COPY_CHUNK_BYTES / 8) {
            let bytes = buf.get_mut(..words.len() * 8).unwrap_or_default();
            let mut any = 0u64;
            for (dst, w) in bytes.chunks_exact_mut(8).zip(words) {
                let v = w.load(Ordering::Relaxed);
                any |= v;
                // In memory the word is the file's little-endian bytes read natively.
                dst.copy_from_slice(&u64::from_le(v).to_le_bytes());
            }
            hasher.update(bytes);
            if any != 0 {
                file.write_all_at(bytes, offset).map_err(io)?; // zero chunks stay holes
            }
            offset += bytes.len() as u64;
        }
        let header = self.header_now(State::Sealed, hasher.digest());
        file.write_all_at(&header.encode(), 0).map_err(io)?;
        file.sync_all().map_err(io)?;
        drop(file);
        std::fs::rename(&tmp, path).map_err(io)?;
        sync_parent_dir(path).map_err(io)?;
        Ok(SnapshotInfo {
            file_bytes: total,
            duration: started.elapsed(),
        })
    }

    /// Writes this checkpoint's presence log as `dir/name`: the blocks changed since
    /// the previous checkpoint, appended to the previous checkpoint's log `prev`
    /// (hard-linked into `dir`, cut back to its committed length first), or, for the
    /// first checkpoint, when `prev` is unusable, or when the deltas have outgrown the
    /// full record, a new log with one full record of every non-zero block (a
    /// compaction). The file is fsynced before this returns; the caller fsyncs `dir`.
    ///
    /// Cost is in proportion to the blocks written, never to the set's capacity: the
    /// changed blocks come from the dirty map, the non-zero ones from a bitmap kept
    /// here, and no untouched page of the bits is read.
    ///
    /// Consistency is that of [`SeenSet::snapshot_to`]: a block changed while this runs
    /// is written now or marked for the next checkpoint. The previous checkpoint's log
    /// stays valid throughout: only bytes past its committed length are ever cut or
    /// written, so a crash at any instant leaves it loadable.
    ///
    /// # Errors
    /// I/O errors; the taken blocks are then marked dirty again.
    pub fn checkpoint_log(
        &self,
        dir: &Path,
        name: &str,
        prev: Option<&LogRef>,
        epoch: u64,
    ) -> Result<PendingLog<'_>, Error> {
        let started = Instant::now();
        let target = dir.join(name);
        let io = |e| Error::io(&target, e);
        let mut pending = PendingLog {
            set: self,
            taken: self.dirty.take(),
            new_base_bytes: None,
            confirmed: false,
            write: LogWrite {
                committed_bytes: 0,
                written_bytes: 0,
                blocks: 0,
                compacted: false,
                duration: Duration::ZERO,
            },
        };
        let mut st = self
            .log
            .lock()
            .map_err(|_| Error::new(ErrorKind::Io, &target).with_detail("log state poisoned"))?;
        for &b in &pending.taken {
            if let Some(w) = st.nonzero.get_mut((b / 64) as usize) {
                *w |= 1 << (b % 64);
            }
        }
        let delta_runs = plog::runs_of(pending.taken.iter().copied());
        let delta_bytes = plog::record_bytes(&delta_runs);
        let h = self.header_now(State::Sealed, 0);
        let counters = RecordCounters {
            epoch,
            inserted: h.inserted,
            set_bits: h.set_bits,
            expected_lost: h.expected_lost,
        };
        let _ = std::fs::remove_file(&target);
        let appended = match prev {
            Some(p) if st.base_bytes >= LOG_HEADER_BYTES => {
                let deltas_after = (p.committed_bytes + delta_bytes).saturating_sub(st.base_bytes);
                if deltas_after > st.base_bytes.max(COMPACT_FLOOR_BYTES) {
                    None
                } else {
                    self.append_delta(p, &target, &delta_runs, counters)
                        .map_err(|e| {
                            tracing::warn!(log = %p.path.display(), error = %e,
                                "cannot append to the previous presence log; writing a full one");
                        })
                        .ok()
                }
            }
            _ => None,
        };
        let (committed, written, blocks, compacted) = match appended {
            Some(committed) => (committed, delta_bytes, pending.taken.len() as u64, false),
            None => {
                let _ = std::fs::remove_file(&target);
                let runs = plog::runs_of(nonzero_blocks(&st.nonzero));
                let file = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create_new(true)
                    .open(&target)
                    .map_err(io)?;
                let mut head = Vec::with_capacity(LOG_HEADER_BYTES as usize);
                let params = Header {
                    inserted: 0,
                    set_bits: 0,
                    expected_lost: 0.0,
                    ..self.header_now(State::Sealed, 0)
                };
                plog::write_log_header(&mut head, &params).map_err(io)?;
                file.write_all_at(&head, 0).map_err(io)?;
                let n = plog::write_record(
                    &file,
                    LOG_HEADER_BYTES,
                    RecordKind::Full,
                    counters,
                    &runs,
                    |b, out| self.copy_block(b, out),
                )
                .map_err(io)?;
                file.sync_all().map_err(io)?;
                let committed = LOG_HEADER_BYTES + n;
                pending.new_base_bytes = Some(committed);
                let blocks = runs.iter().map(|r| r.1).sum();
                (committed, committed, blocks, true)
            }
        };
        drop(st);
        pending.write = LogWrite {
            committed_bytes: committed,
            written_bytes: written,
            blocks,
            compacted,
            duration: started.elapsed(),
        };
        Ok(pending)
    }

    /// Links `prev` to `target`, cuts it to its committed length and appends a delta
    /// record; returns the new committed length.
    fn append_delta(
        &self,
        prev: &LogRef,
        target: &Path,
        runs: &[(u64, u64)],
        counters: RecordCounters,
    ) -> io::Result<u64> {
        std::fs::hard_link(&prev.path, target)?;
        let file = OpenOptions::new().read(true).write(true).open(target)?;
        let len = file.metadata()?.len();
        if len < prev.committed_bytes {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("log is {len} bytes, {} committed", prev.committed_bytes),
            ));
        }
        // Bytes past the committed length are a torn or abandoned append.
        file.set_len(prev.committed_bytes)?;
        let n = plog::write_record(
            &file,
            prev.committed_bytes,
            RecordKind::Delta,
            counters,
            runs,
            |b, out| self.copy_block(b, out),
        )?;
        file.sync_all()?;
        Ok(prev.committed_bytes + n)
    }

    fn copy_block(&self, block: u64, out: &mut [u8; BLOCK_BYTES as usize]) {
        let words = self.block(block);
        for (dst, w) in out.chunks_exact_mut(8).zip(words) {
            dst.copy_from_slice(&u64::from_le(w.load(Ordering::Relaxed)).to_le_bytes());
        }
    }

    /// Rebuilds a set from a presence log up to its committed length into a new live
    /// file `live` (replaced if it exists), leaving the log untouched. Reads only the
    /// log: the live file is created sparse and only the logged blocks are written, so
    /// a resume costs time in proportion to the keys, not the capacity.
    ///
    /// # Errors
    /// As [`SeenSet::verify_log`], plus [`ErrorKind::WrongPurpose`] and I/O errors on
    /// the live file.
    pub fn restore_log(
        log: &LogRef,
        live: impl AsRef<Path>,
        backing: Backing,
        purpose: Option<Purpose>,
    ) -> Result<Self, Error> {
        let live = live.as_ref();
        // Header first, so a wrong or damaged log fails before the live file goes.
        let header = plog::read_header(&log.path)?;
        plog::check_purpose(&header, purpose, &log.path)?;
        match std::fs::remove_file(live) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(live, e)),
        }
        let set = Self::create_from_header(live, &header, false, backing)?;
        let words = set.map.words();
        let mut st = set
            .log
            .lock()
            .map_err(|_| Error::new(ErrorKind::Io, live).with_detail("log state poisoned"))?;
        let summary = plog::read_log(&log.path, log.committed_bytes, |first, bytes| {
            for (i, chunk) in bytes.chunks_exact(BLOCK_BYTES as usize).enumerate() {
                let block = first + i as u64;
                let start = block as usize * BLOCK_WORDS;
                if let Some(dst) = words.get(start..start + BLOCK_WORDS) {
                    for (w, src) in dst.iter().zip(chunk.chunks_exact(8)) {
                        let mut le = [0u8; 8];
                        le.copy_from_slice(src);
                        w.store(u64::from_le_bytes(le).to_le(), Ordering::Relaxed);
                    }
                }
                if let Some(w) = st.nonzero.get_mut((block / 64) as usize) {
                    *w |= 1 << (block % 64);
                }
            }
        })?;
        st.base_bytes = summary.base_bytes;
        drop(st);
        if summary.header.blocks != header.blocks {
            return Err(Error::new(ErrorKind::BadParameters, &log.path));
        }
        if let Some(s) = set.stripes.first() {
            s.add(
                summary.last.inserted,
                summary.last.set_bits,
                summary.last.expected_lost,
            );
        }
        set.maybe_huge();
        Ok(set)
    }

    /// Verifies a presence log up to its committed length without building a set:
    /// preamble, header, every record's checksum and runs. Reads the log once.
    ///
    /// # Errors
    /// [`ErrorKind::Truncated`] if the file is shorter than the committed length,
    /// [`ErrorKind::LogDamaged`] (naming the byte) for a damaged record, the header
    /// kinds of [`SeenSet::verify`], I/O errors.
    pub fn verify_log(log: &LogRef) -> Result<(Stats, LogSummary), Error> {
        let summary = plog::read_log(&log.path, log.committed_bytes, |_, _| {})?;
        let h = Header {
            inserted: summary.last.inserted,
            set_bits: summary.last.set_bits,
            expected_lost: summary.last.expected_lost,
            ..summary.header
        };
        let mut stats = stats_from(&h);
        stats.file_bytes = log.committed_bytes;
        Ok((stats, summary))
    }

    /// Bytes of the live bits resident in this process's memory now (the mapping's
    /// `Rss` in `/proc/self/smaps`), so memory figures can be given with and without
    /// the bits. `None` where that file is not available.
    pub fn resident_bytes(&self) -> Option<u64> {
        self.map.resident_bytes()
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

fn lock(file: &File, path: &Path) -> Result<(), Error> {
    match mapped::lock_exclusive(file) {
        Ok(true) => Ok(()),
        Ok(false) => Err(Error::new(ErrorKind::Locked, path)),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// Reads and checks header, length and bit checksum of an (unlocked or locked) file.
fn validate_file(file: &File, path: &Path) -> Result<Header, Error> {
    let io = |e| Error::io(path, e);
    let len = file.metadata().map_err(io)?.len();
    let mut head = vec![0u8; HEADER_BYTES.min(len) as usize];
    file.read_exact_at(&mut head, 0).map_err(io)?;
    let header = Header::decode(&head).map_err(|e| match e {
        HeaderError::Truncated => {
            Error::new(ErrorKind::Truncated, path).with_detail(format!("{len} bytes"))
        }
        HeaderError::BadMagic => Error::new(ErrorKind::BadMagic, path),
        HeaderError::UnsupportedVersion(v) => {
            Error::new(ErrorKind::UnsupportedVersion, path).with_detail(format!("version {v}"))
        }
        HeaderError::Checksum => Error::new(ErrorKind::HeaderChecksum, path),
        HeaderError::BadParameters(what) => {
            Error::new(ErrorKind::BadParameters, path).with_detail(what)
        }
    })?;
    let want = header.file_bytes();
    if len < want {
        return Err(
            Error::new(ErrorKind::Truncated, path).with_detail(format!("{len} of {want} bytes"))
        );
    }
    if len > want {
        return Err(
            Error::new(ErrorKind::TrailingBytes, path).with_detail(format!("{len} > {want} bytes"))
        );
    }
    if header.state != State::Sealed {
        return Err(Error::new(ErrorKind::Unsealed, path));
    }
    let mut hasher = Xxh3::new();
    let mut buf = vec![0u8; COPY_CHUNK_BYTES];
    let mut offset = HEADER_BYTES;
    while offset < want {
        let n = (want - offset).min(COPY_CHUNK_BYTES as u64) as usize;
        let chunk = buf.get_mut(..n).unwrap_or_default();
        file.read_exact_at(chunk, offset).map_err(io)?;
        hasher.update(chunk);
        offset += n as u64;
    }
    if hasher.digest() != header.bits_checksum {
        return Err(Error::new(ErrorKind::BitsChecksum, path));
    }
    Ok(header)
}

/// The blocks whose bit is set in `bitmap`, ascending; skips zero words.
fn nonzero_blocks(bitmap: &[u64]) -> impl Iterator<Item = u64> + '_ {
    bitmap
        .iter()
        .enumerate()
        .filter(|(_, w)| **w != 0)
        .flat_map(|(i, &w)| {
            let mut bits = w;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = bits.trailing_zeros();
                bits &= bits - 1;
                Some(i as u64 * 64 + u64::from(b))
            })
        })
}

fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp"))
}

fn sync_parent_dir(path: &Path) -> io::Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    File::open(parent)?.sync_all()
}
