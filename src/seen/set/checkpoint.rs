//! Checkpoints of a [`SeenSet`]: whole snapshots ([`SeenSet::snapshot_to`]) and the
//! presence log ([`SeenSet::checkpoint_log`]: a full record, then deltas of the blocks
//! changed since), with its reader and verifier. The bit operations stay in the parent.

use super::{
    stats_from, sync_parent_dir, temp_path, Backing, SeenSet, SnapshotInfo, Stats, COPY_CHUNK_BYTES,
};
use crate::seen::error::{Error, ErrorKind};
use crate::seen::header::{Header, Purpose, State, HEADER_BYTES};
use crate::seen::log::{self as plog, LogSummary, RecordCounters, RecordKind, LOG_HEADER_BYTES};
use crate::seen::model::{BLOCK_BITS, BLOCK_BYTES, BLOCK_WORDS};
use std::fs::OpenOptions;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use xxhash_rust::xxh3::Xxh3;

/// What the presence-log writer remembers between checkpoints.
#[derive(Debug)]
pub(super) struct LogState {
    /// One bit per block: the block has had a bit set (so a compaction writes it).
    pub(super) nonzero: Vec<u64>,
    /// Bytes of the current log's header and full record: the size a compaction wrote.
    pub(super) base_bytes: u64,
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
    pub(super) fn append_delta(
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

    pub(super) fn copy_block(&self, block: u64, out: &mut [u8; BLOCK_BYTES as usize]) {
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
        let dense = super::open::is_dense(&header);
        let set = Self::create_from_header(live, &header, false, backing, dense)?;
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
