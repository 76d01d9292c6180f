//! The robots cache's disk tier: where a host's rules go when the RAM LRU needs the
//! room, so that rules are never forgotten for lack of RAM (`docs/robots.md`, "Disk
//! tier"). An inactive host then costs an index entry (at most 32 bytes, [`index`]) and
//! its record on disk; it comes back into RAM, with one positioned read, the next time
//! any of its URLs asks.
//!
//! ```text
//! log file spill-NNNN.log:
//!   header:  b"TRWLRSP\0" | version: u32 LE (1)
//!   record:  varint payload_len | crc32(payload): u32 LE | payload
//!   payload: one host's entry, encoded as in a checkpoint's robots file
//!            (`robots/persist`, version 3), times in milliseconds from this
//!            process's anchor instant plus 2^42
//! ```
//!
//! Writes: an evicted entry is encoded into a write batch, and the batch goes to the
//! current log file with one write once it holds [`SpillConfig::batch_bytes`] (or
//! when [`Spill::flush`] is called). A record in the batch is found there. Files
//! rotate past [`SpillConfig::file_bytes`]; each counts its live records, and one
//! whose records all died (their hosts came back into RAM) is removed once it is no
//! longer the file appended to.
//!
//! Waste: a record dies when its host is read back, but its file stays until all of
//! its records died. So disk bytes are the live records plus, at worst, the rest of
//! every file that still holds one: at most `files x file_bytes` for few live records
//! (2,047 files of 64 MiB at the very worst, a handful in practice, since a breadth
//! crawl reads back hosts in about the order it spilled them). Compacting the oldest
//! file (rewriting its live records into the batch) would bound this to a fixed
//! multiple of the live bytes; it is not done yet.
//!
//! Faults never lose rules silently: a failed write keeps the batch in RAM (retried
//! when another batch's worth has joined it; past [`SpillConfig::max_batch_bytes`]
//! further evictions are dropped, as before this tier, and counted); a failed or
//! damaged read drops that host's record (its robots.txt is fetched again) and is
//! counted. The first error is kept for the caller to report ([`Spill::take_error`]);
//! this module does no logging and its I/O is all behind [`SpillStore`].
//!
//! Checkpoints: the log files are append-only, so a checkpoint writes the batch, makes
//! the files durable and gives each a second name beside the checkpoint's robots file
//! ([`Spill::keep_logs`]: a hard link, or a copy where links fail), with the length
//! written so far; the robots file names them (`persist`, the tier record). A
//! checkpoint costs what was appended since the last one, not the whole tier. A file
//! is never truncated in place (a new one is a new inode), so the checkpoint's name
//! keeps its bytes whatever the tier does next. The crawl's own log files are removed
//! when a crawl starts; a resume reads the checkpoint's. [`Spill::for_each_live`]
//! still hands out every live entry, for a checkpoint whose files could not be kept.

#![deny(clippy::indexing_slicing, clippy::expect_used, clippy::panic)]

mod index;
mod ledger;
mod store;

use std::io::Read;
use std::path::PathBuf;
use std::time::Instant;

use index::{Index, Loc, BATCH_FILE, MAX_FRAME_BYTES};
use ledger::Ledger;

pub use index::MAX_BYTES_PER_HOST;
pub use store::{FileStore, MemCalls, MemStore, SpillStore};

use super::persist::{decode_entry, encode_entry, Clock, StoredEntry, TierFiles};
use super::policy::{RobotsPolicy, RobotsState};
use crate::disk::{write_record, Format, RecordError, RecordReader, MAX_FRAME_HEAD_BYTES};
use crate::routing::HostKey;

/// Largest payload of a spilled record: its frame must fit an index location.
pub const MAX_PAYLOAD_BYTES: usize = MAX_FRAME_BYTES - MAX_FRAME_HEAD_BYTES;

/// The spill log format: magic `TRWLRSP\0`, version 1.
pub const FORMAT: Format = Format::new(*b"TRWLRSP\0", 1, MAX_PAYLOAD_BYTES);

/// The wall-clock milliseconds the anchor instant stands for: any instant within 139
/// years of it is written exactly (to the millisecond).
pub const ANCHOR_MS: u64 = 1 << 42;

/// Faults handed to the caller to report, at most: a disk that keeps failing is then
/// seen in the counters, not in a warning per host.
const MAX_REPORTED_ERRORS: u32 = 8;

/// Settings of the tier, each a cap with its unit.
#[derive(Clone, Copy, Debug)]
pub struct SpillConfig {
    /// A batch is written once it holds this much.
    pub batch_bytes: usize,
    /// Log files rotate past about this (clamped to 64 KiB..64 MiB: index offsets
    /// have 27 bits).
    pub file_bytes: u64,
    /// A batch that cannot be written grows to this; past it, evicted entries are
    /// dropped (clamped to at most 32 MiB).
    pub max_batch_bytes: usize,
    /// Bits of the key hash used (all but tests: a small mask forces collisions).
    pub hash_mask: u64,
}

impl Default for SpillConfig {
    fn default() -> Self {
        SpillConfig {
            batch_bytes: 256 << 10,
            file_bytes: 64 << 20,
            max_batch_bytes: 4 << 20,
            hash_mask: u64::MAX,
        }
    }
}

/// A fault of the tier, for the caller to log (the first one since the last
/// [`Spill::take_error`]; the rest are counted in [`SpillStats`]).
#[derive(Debug, thiserror::Error)]
pub enum SpillError {
    /// A batch could not be written: it stays in RAM and is written later.
    #[error("cannot write robots spill log {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A record could not be read: its host's robots.txt is fetched again.
    #[error("cannot read robots spill log {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A record read back is damaged: its host's robots.txt is fetched again.
    #[error("damaged record in robots spill log {} at byte {offset}: {what}", path.display())]
    Damaged {
        path: PathBuf,
        offset: u64,
        what: String,
    },
    /// A dead log file could not be removed (it is forgotten anyway).
    #[error("cannot remove robots spill log {}", path.display())]
    Remove {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Every log file id is held by a file with a live record.
    #[error("robots spill: all {} log file ids in use", index::MAX_FILES)]
    NoFileId,
}

/// Figures of the tier.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpillStats {
    /// Hosts whose rules are in the tier (on disk or in the batch).
    pub hosts: u64,
    /// RAM of the index (its table as allocated).
    pub index_bytes: u64,
    /// RAM of the write batch.
    pub batch_bytes: u64,
    /// Bytes of the log files (live and dead records).
    pub disk_bytes: u64,
    /// Log files.
    pub files: u64,
    /// Batches written.
    pub writes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Hosts read back into RAM.
    pub reads: u64,
    /// Records read back damaged (their hosts refetched).
    pub damaged: u64,
    /// Reads that failed (their hosts refetched).
    pub read_errors: u64,
    /// Batch writes that failed (the batch kept).
    pub write_errors: u64,
    /// Evicted entries not kept: nothing worth keeping (never fetched), too large for
    /// a record, or the batch full while writes fail.
    pub dropped: u64,
    /// Hosts that lost their record to another host with the same key hash.
    pub collisions: u64,
}

/// What became of an entry given to [`Spill::put`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Put {
    /// In the tier (in the batch for now).
    Spilled,
    /// Not kept (see [`SpillStats::dropped`]).
    Dropped,
}

/// What [`Spill::for_each_live`] went through.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanStats {
    /// Live entries handed out.
    pub entries: u64,
    /// Damaged records or unreadable files met (their hosts are not handed out).
    pub damaged: u64,
}

/// Whether an entry must stay in RAM: a fetch is in flight for it, and its answer
/// must find it there.
pub fn is_pinned(policy: &RobotsPolicy) -> bool {
    matches!(policy.state(), RobotsState::Fetching(_))
}

/// An instant of a storable state, to anchor the tier's clock on.
fn instant_of(state: &RobotsState) -> Option<Instant> {
    match state {
        RobotsState::Ready(r) => Some(r.fresh_until),
        RobotsState::Unreachable(u) => Some(u.since),
        RobotsState::NeedsFetch | RobotsState::Fetching(_) => None,
    }
}

/// Why a record could not be read back.
enum Fault {
    Io(std::io::Error),
    Damaged(String),
}

/// The disk tier: an index in RAM, a write batch, and log files behind a store.
#[derive(Debug)]
pub struct Spill {
    store: Box<dyn SpillStore>,
    config: SpillConfig,
    index: Index,
    ledger: Ledger,
    batch: Vec<u8>,
    /// The batch's records: key hash and offset in the batch.
    batch_records: Vec<(u64, u32)>,
    /// The batch is written when it reaches this (pushed on after a failed write).
    flush_at: usize,
    hasher: ahash::RandomState,
    /// The instant written as [`ANCHOR_MS`]; set by the first entry spilled.
    anchor: Option<Instant>,
    stats: SpillStats,
    error: Option<SpillError>,
    /// Errors handed out so far.
    reported: u32,
    scratch: Vec<u8>,
    read_buf: Vec<u8>,
}

impl Spill {
    /// An empty tier over `store`.
    pub fn new(store: Box<dyn SpillStore>, config: SpillConfig) -> Spill {
        let config = SpillConfig {
            batch_bytes: config.batch_bytes.max(1),
            file_bytes: config.file_bytes.clamp(64 << 10, 64 << 20),
            max_batch_bytes: config.max_batch_bytes.clamp(config.batch_bytes, 32 << 20),
            hash_mask: config.hash_mask,
        };
        Spill {
            store,
            config,
            index: Index::default(),
            ledger: Ledger::new(config.file_bytes),
            batch: Vec::new(),
            batch_records: Vec::new(),
            flush_at: config.batch_bytes,
            hasher: ahash::RandomState::new(),
            anchor: None,
            stats: SpillStats::default(),
            error: None,
            reported: 0,
            scratch: Vec::new(),
            read_buf: Vec::new(),
        }
    }

    /// An empty tier with log files in memory.
    pub fn in_memory() -> Spill {
        Spill::new(Box::new(MemStore::new()), SpillConfig::default())
    }

    /// Hosts in the tier.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether no host is in the tier.
    pub fn is_empty(&self) -> bool {
        self.index.len() == 0
    }

    /// RAM of the index.
    pub fn index_bytes(&self) -> usize {
        self.index.bytes()
    }

    /// RAM of the index and the write batch: what the tier costs besides the LRU.
    pub fn ram_bytes(&self) -> usize {
        self.index.bytes() + self.batch.capacity() + self.batch_records.capacity() * 16
    }

    /// The figures so far.
    pub fn stats(&self) -> SpillStats {
        SpillStats {
            hosts: self.index.len() as u64,
            index_bytes: self.index.bytes() as u64,
            batch_bytes: self.batch.len() as u64,
            disk_bytes: self.ledger.bytes(),
            files: self.ledger.files() as u64,
            ..self.stats
        }
    }

    /// The first fault since the last call, for the caller to log once.
    pub fn take_error(&mut self) -> Option<SpillError> {
        self.error.take()
    }

    /// Keeps `e` for the caller unless one is waiting, or [`MAX_REPORTED_ERRORS`]
    /// were handed out already (a failing disk is then in the counters only).
    fn note(&mut self, e: SpillError) {
        if self.error.is_none() && self.reported < MAX_REPORTED_ERRORS {
            self.reported += 1;
            self.error = Some(e);
        }
    }

    /// Where `key`'s record lies in the files (file id, offset); `None` while it is in
    /// the write batch or not spilled. Tests damage it there.
    #[cfg(test)]
    pub(crate) fn record_at(&self, key: &HostKey) -> Option<(u16, u64)> {
        let loc = self.index.get(self.hash(key))?;
        (loc.file != index::BATCH_FILE).then(|| (loc.file, u64::from(loc.offset)))
    }

    fn hash(&self, key: &HostKey) -> u64 {
        self.hasher.hash_one(key.as_str()) & self.config.hash_mask
    }

    fn clock(&self) -> Option<Clock> {
        Some(Clock {
            now: self.anchor?,
            wall_ms: ANCHOR_MS,
        })
    }

    /// Takes an evicted entry into the tier. The caller keeps [`is_pinned`] entries
    /// in RAM; any other state not worth keeping (never fetched) is dropped.
    pub fn put(&mut self, key: &HostKey, policy: &RobotsPolicy) -> Put {
        if self.anchor.is_none() {
            self.anchor = instant_of(policy.state());
        }
        let entry = self
            .clock()
            .and_then(|clock| StoredEntry::of(key, policy, clock));
        let Some(entry) = entry else {
            self.stats.dropped += 1;
            return Put::Dropped;
        };
        self.scratch.clear();
        encode_entry(&entry, &mut self.scratch);
        if self.scratch.len() > MAX_PAYLOAD_BYTES || self.batch.len() >= self.config.max_batch_bytes
        {
            self.stats.dropped += 1;
            return Put::Dropped;
        }
        let offset = self.batch.len();
        let frame = write_record(&mut self.batch, &self.scratch).map_or(0, |n| n as usize);
        let Some(loc) = Loc::new(BATCH_FILE, offset as u64, frame) else {
            self.batch.truncate(offset);
            self.stats.dropped += 1;
            return Put::Dropped;
        };
        let hash = self.hash(key);
        if let Some(old) = self.index.insert(hash, loc) {
            self.stats.collisions += 1;
            self.release(old);
        }
        self.batch_records.push((hash, loc.offset));
        if self.batch.len() >= self.flush_at {
            if let Err(e) = self.flush() {
                // Kept for the caller and counted; the batch stays.
                self.note(e);
            }
        }
        Put::Spilled
    }

    /// Takes `key`'s entry out of the tier (its record dies): `None` if it is not
    /// there, or if its record could not be read back (counted and kept for
    /// [`Spill::take_error`]; the host is then as if never fetched).
    pub fn take(&mut self, key: &HostKey) -> Option<RobotsPolicy> {
        if self.index.len() == 0 {
            return None;
        }
        let hash = self.hash(key);
        let loc = self.index.get(hash)?;
        let clock = self.clock()?;
        match self.read_record(loc) {
            Ok(entry) if entry.key == *key => {
                self.index.remove(hash);
                self.release(loc);
                self.stats.reads += 1;
                Some(entry.into_policy_exact(clock).1)
            }
            // Another host with the same hash holds the slot: this one is not here.
            Ok(_) => None,
            Err(fault) => {
                self.index.remove(hash);
                self.release(loc);
                let path = self.path_of(loc.file);
                match fault {
                    Fault::Io(source) => {
                        self.stats.read_errors += 1;
                        self.note(SpillError::Read { path, source });
                    }
                    Fault::Damaged(what) => {
                        self.stats.damaged += 1;
                        self.note(SpillError::Damaged {
                            path,
                            offset: u64::from(loc.offset),
                            what,
                        });
                    }
                }
                None
            }
        }
    }

    fn path_of(&self, file: u16) -> PathBuf {
        if file == BATCH_FILE {
            PathBuf::from("(write batch)")
        } else {
            self.store.path(file)
        }
    }

    /// Reads the record at `loc`: one positioned read of its rounded length.
    fn read_record(&mut self, loc: Loc) -> Result<StoredEntry, Fault> {
        let want = loc.read_bytes as usize;
        self.read_buf.clear();
        if loc.file == BATCH_FILE {
            let start = loc.offset as usize;
            let bytes = self.batch.get(start..).unwrap_or_default();
            self.read_buf
                .extend_from_slice(bytes.get(..want).unwrap_or(bytes));
        } else {
            self.read_buf.resize(want, 0);
            let n = self
                .store
                .read_at(loc.file, u64::from(loc.offset), &mut self.read_buf)
                .map_err(Fault::Io)?;
            self.read_buf.truncate(n);
        }
        let mut reader = RecordReader::headless(&self.read_buf[..], 0, MAX_PAYLOAD_BYTES);
        let mut payload = std::mem::take(&mut self.scratch);
        let result = match reader.next_record(&mut payload) {
            Ok(Some(_)) => decode_entry(&payload).map_err(|e| Fault::Damaged(e.to_string())),
            Ok(None) => Err(Fault::Damaged("no record there".to_owned())),
            Err(RecordError::Io(e)) => Err(Fault::Io(e)),
            Err(e) => Err(Fault::Damaged(e.to_string())),
        };
        self.scratch = payload;
        result
    }

    /// A record at `loc` died: its file's count goes down, and a dead file goes.
    fn release(&mut self, loc: Loc) {
        if loc.file == BATCH_FILE || !self.ledger.release(loc.file) {
            return;
        }
        if let Err(source) = self.store.remove(loc.file) {
            let path = self.store.path(loc.file);
            self.note(SpillError::Remove { path, source });
        }
    }

    /// Writes the batch to the current log file with one write (rotating first if
    /// it is full). Records whose hosts left the tier meanwhile are written too (dead
    /// on arrival); a batch with no live record is just dropped.
    ///
    /// # Errors
    /// The file could not be created or written: the batch stays in RAM, to be
    /// written with a later flush (counted in [`SpillStats::write_errors`]).
    pub fn flush(&mut self) -> Result<(), SpillError> {
        match self.try_flush() {
            Ok(()) => {
                self.flush_at = self.config.batch_bytes;
                Ok(())
            }
            Err(e) => {
                self.stats.write_errors += 1;
                self.flush_at = self.batch.len() + self.config.batch_bytes;
                Err(e)
            }
        }
    }

    fn is_in_batch(&self, hash: u64, offset: u32) -> bool {
        self.index
            .get(hash)
            .is_some_and(|l| l.file == BATCH_FILE && l.offset == offset)
    }

    fn try_flush(&mut self) -> Result<(), SpillError> {
        let live = self
            .batch_records
            .iter()
            .filter(|&&(h, off)| self.is_in_batch(h, off))
            .count();
        if live == 0 {
            self.batch.clear();
            self.batch_records.clear();
            return Ok(());
        }
        let target = self
            .ledger
            .target(self.batch.len())
            .ok_or(SpillError::NoFileId)?;
        if let Some(dead) = target.dead {
            if let Err(source) = self.store.remove(dead) {
                let path = self.store.path(dead);
                self.note(SpillError::Remove { path, source });
            }
        }
        let file = target.file;
        let write_error = |store: &dyn SpillStore| {
            let path = store.path(file);
            move |source| SpillError::Write { path, source }
        };
        if target.new {
            self.store.create(file).map_err(write_error(&*self.store))?;
            self.ledger.opened(file);
        }
        let base = self.ledger.end_of(file);
        self.store
            .write_at(file, base, &self.batch)
            .map_err(write_error(&*self.store))?;
        let mut moved = 0u64;
        for &(hash, off) in &self.batch_records {
            let Some(from) = self.index.get(hash) else {
                continue;
            };
            if from.file != BATCH_FILE || from.offset != off {
                continue;
            }
            let to = Loc {
                file,
                offset: u32::try_from(base + u64::from(off)).unwrap_or(u32::MAX),
                read_bytes: from.read_bytes,
            };
            if self.index.relocate(hash, from, to) {
                moved += 1;
            }
        }
        self.ledger.appended(file, self.batch.len(), moved);
        self.stats.writes += 1;
        self.stats.write_bytes += self.batch.len() as u64;
        self.batch.clear();
        self.batch_records.clear();
        Ok(())
    }

    /// For a checkpoint: writes the batch, then makes every log file durable and gives
    /// it a second name in `dir`, `{prefix}-{n:06}.log` (`n` its opening number, so
    /// the names sort oldest first), and returns what the robots file records of them.
    /// `None` when the tier holds nothing.
    ///
    /// # Errors
    /// The batch could not be written, or a file could not be kept: the caller then
    /// writes the tier's entries into the robots file instead.
    pub fn keep_logs(
        &mut self,
        dir: &std::path::Path,
        prefix: &str,
        clock: Clock,
    ) -> Result<Option<TierFiles>, SpillError> {
        let Some(anchor) = self.anchor else {
            return Ok(None);
        };
        if self.index.len() == 0 {
            return Ok(None);
        }
        self.flush()?;
        let mut files = Vec::new();
        for (id, seq, len) in self.ledger.files_in_order() {
            let name = format!("{prefix}-{seq:06}.log");
            let to = dir.join(&name);
            self.store
                .keep_as(id, len, &to)
                .map_err(|source| SpillError::Write { path: to, source })?;
            files.push((name, len));
        }
        Ok(Some(TierFiles {
            anchor_wall_ms: clock.to_wall(anchor),
            files,
        }))
    }

    /// Hands every live entry of the tier to `f`, file by file then the batch,
    /// reading each file through once (bounded memory): for a checkpoint.
    /// Damaged records and unreadable files are skipped and counted.
    pub fn for_each_live(&self, mut f: impl FnMut(HostKey, RobotsPolicy)) -> ScanStats {
        let mut stats = ScanStats::default();
        let Some(clock) = self.clock() else {
            return stats;
        };
        let mut payload = Vec::new();
        for (file, len) in self.ledger.file_list() {
            let opened = self
                .store
                .scan(file)
                .map_err(RecordError::Io)
                .and_then(|r| RecordReader::open(r.take(len), &FORMAT));
            match opened {
                Ok(mut r) => {
                    self.scan_records(file, &mut r, clock, &mut payload, &mut stats, &mut f)
                }
                Err(_) => stats.damaged += 1,
            }
        }
        let mut r = RecordReader::headless(&self.batch[..], 0, MAX_PAYLOAD_BYTES);
        self.scan_records(BATCH_FILE, &mut r, clock, &mut payload, &mut stats, &mut f);
        stats
    }

    /// The live records of one file (or the batch), read through in order: a record
    /// is live if the index points at its offset for its host.
    fn scan_records<R: Read>(
        &self,
        file: u16,
        reader: &mut RecordReader<R>,
        clock: Clock,
        payload: &mut Vec<u8>,
        stats: &mut ScanStats,
        f: &mut impl FnMut(HostKey, RobotsPolicy),
    ) {
        loop {
            match reader.next_record(payload) {
                Ok(Some(offset)) => {
                    let Ok(entry) = decode_entry(payload) else {
                        stats.damaged += 1;
                        continue;
                    };
                    let live = self
                        .index
                        .get(self.hash(&entry.key))
                        .is_some_and(|l| l.file == file && u64::from(l.offset) == offset);
                    if live {
                        let (key, policy) = entry.into_policy_exact(clock);
                        stats.entries += 1;
                        f(key, policy);
                    }
                }
                Ok(None) => break,
                Err(RecordError::Checksum { .. }) => stats.damaged += 1,
                Err(_) => {
                    stats.damaged += 1;
                    break;
                }
            }
        }
    }
}
