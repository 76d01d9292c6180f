//! The WARC file writer: compresses each record into its own gzip member, appends it to
//! the current file, and rotates files by size.
//!
//! Files are written as `NAME.warc.gz.open` and renamed to `NAME.warc.gz` once closed,
//! so a reader (or a sync to an archive) that takes only `*.warc.gz` never sees a file
//! in progress. Names: `{prefix}-{YYYYMMDDhhmmss}-{serial:05}-{shard}.warc.gz`, the
//! serial counting up per shard across restarts (it resumes after the highest serial
//! found in the directory).
//!
//! Every file starts with a `warcinfo` record; every other record names it in
//! `WARC-Warcinfo-ID`. A capture's records (request, response, metadata) always land in
//! the same file: rotation happens between captures, so a file may exceed
//! `max_file_bytes` by at most one capture.
//!
//! Writes go through a stage: appended bytes are copied into a buffer of
//! [`STAGE_BYTES`] and written in whole pages of [`PAGE_BYTES`] aligned to the file
//! offset, so the kernel neither zeroes nor splits a page cache page a write touches;
//! the tail stays staged until the next write, [`WarcWriter::sync`], rotation or close.
//! Lengths and positions count bytes appended, staged or not. After `kill -9` the
//! staged bytes (less than [`STAGE_BYTES`] past the last whole page, or past the last
//! sync) are not in the file: `docs/warc.md`, "Positions, checkpoints and repair".
//!
//! Compression can happen elsewhere: [`WarcWriter::compressor`] hands out
//! [`CaptureCompressor`]s for other threads, and [`WarcWriter::append_compressed`] only
//! decides revisits and appends (see [`super::compressed`]).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::capture::{
    warcinfo_record, Capture, CaptureIds, CaptureWritten, RevisitOf, WarcinfoFields,
};
use super::compressed::{assemble, CaptureCompressor, CompressedCapture, MemberPool, WarcinfoSlot};
use super::dedup::{DedupConfig, DedupStats, PayloadIndex};
use super::error::WarcError;
use super::gzip::{Deflater, MemberEncoder};
use super::record::{RecordId, RecordType};
use crate::provenance::date::WarcDate;

/// Suffix of a finished WARC file.
pub const WARC_SUFFIX: &str = ".warc.gz";
/// Suffix added while a file is being written.
pub const OPEN_SUFFIX: &str = ".open";

/// Bytes staged before the writer writes (see the module docs), by default: 16 pages,
/// about 8 captures of a 20 KB page, in one page-aligned write. Small enough to stay in
/// the core's cache between the copy in and the write (a 1 MiB stage measured slower:
/// `benches/warc.rs`, `capture_append`).
pub const STAGE_BYTES: usize = 64 * 1024;

/// The unit the stage is written in: a page of the page cache. Writes start and end on
/// a multiple of it in the file, except the tail flushed by a sync or a close.
pub const PAGE_BYTES: u64 = 4096;

/// Settings of a [`WarcWriter`].
#[derive(Debug, Clone)]
pub struct WarcWriterConfig {
    /// Directory the files go to (created if missing).
    pub dir: PathBuf,
    /// File name prefix.
    pub prefix: String,
    /// Shard (or writer) number, last part of the file name: writers sharing a
    /// directory must have distinct numbers.
    pub shard: u32,
    /// A file is closed and the next one opened once it holds this many bytes.
    pub max_file_bytes: u64,
    /// Deflate implementation of the gzip members.
    pub deflater: Deflater,
    /// gzip level, 0 (store) to [`Deflater::max_level`] (smallest); higher values are
    /// taken as the highest. See `docs/warc.md`, "Compression level and
    /// implementation".
    pub gzip_level: u32,
    /// The `warcinfo` record of every file.
    pub warcinfo: WarcinfoFields,
    /// Revisit records for duplicate payloads: the digest index's memory and the
    /// smallest payload deduplicated ([`DedupConfig::off`] writes every response in
    /// full).
    pub dedup: DedupConfig,
    /// Bytes staged before a write (see the module docs); at least a page.
    pub stage_bytes: usize,
}

impl WarcWriterConfig {
    /// Defaults: prefix `trawl`, 1 GB files (the size the IIPC recommends), igzip
    /// at its default level (chosen by measurement, `docs/warc.md`), duplicate payloads
    /// written as revisits with a 64 MiB digest index.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            prefix: "trawl".to_owned(),
            shard: 0,
            max_file_bytes: 1_000_000_000,
            deflater: Deflater::default(),
            gzip_level: Deflater::default().default_level(),
            warcinfo: WarcinfoFields::default(),
            dedup: DedupConfig::default(),
            stage_bytes: STAGE_BYTES,
        }
    }
}

/// Where the output stands: the current file and the offset just after its last
/// complete record, which is what a checkpoint stores and [`super::repair()`] cuts back
/// to.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WarcPosition {
    /// The file's final name (without `.open`).
    pub file_name: String,
    /// Bytes of complete records in it.
    pub offset: u64,
}

impl WarcPosition {
    /// The file on disk in `dir`: the `.open` name while it is written, else the final
    /// one; `None` if neither exists.
    pub fn locate(&self, dir: &Path) -> Option<PathBuf> {
        let open = dir.join(format!("{}{OPEN_SUFFIX}", self.file_name));
        let done = dir.join(&self.file_name);
        [open, done].into_iter().find(|p| p.exists())
    }
}

/// Counters over a writer's life.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriterSummary {
    /// Files opened.
    pub files: u64,
    /// Records written (warcinfo included).
    pub records: u64,
    /// Captures written.
    pub captures: u64,
    /// Compressed bytes written.
    pub bytes: u64,
    /// Uncompressed record bytes (for the compression ratio).
    pub raw_bytes: u64,
    /// Captures refused because a field value could not be written.
    pub rejected: u64,
    /// Captures whose response was written as a `revisit` record.
    pub revisits: u64,
}

#[derive(Debug)]
struct OpenFile {
    file: File,
    name: String,
    open_path: PathBuf,
    final_path: PathBuf,
    /// Bytes appended, staged or not: what positions count.
    len: u64,
    /// Bytes in the file; the `len - written` after them are in the stage.
    written: u64,
    warcinfo_id: RecordId,
}

/// Writes captures to rotating `.warc.gz` files. Synchronous: the engine runs it on its
/// output thread (`src/engine/output.rs`).
#[derive(Debug)]
pub struct WarcWriter {
    config: WarcWriterConfig,
    warcinfo_block: Vec<u8>,
    current: Option<OpenFile>,
    next_serial: u32,
    summary: WriterSummary,
    /// Bytes appended to the current file and not yet written (see the module docs);
    /// empty between files.
    stage: Vec<u8>,
    /// Compresses the captures given to [`WarcWriter::write_capture`].
    compressor: CaptureCompressor,
    /// The member buffers this writer's compressors and captures share.
    pool: MemberPool,
    /// Compresses what the writer makes itself: `warcinfo` and `revisit` records, and
    /// members re-made for another file.
    encoder: MemberEncoder,
    /// The `warcinfo` id the next capture's records should carry (the current file's,
    /// or the next file's once the current one is full), read by compressors.
    warcinfo_slot: WarcinfoSlot,
    /// The id of the next file's `warcinfo` record, drawn ahead so compressors can use
    /// it before the file exists.
    next_warcinfo_id: RecordId,
    /// Payload digests of the responses written, for revisits; `None` when off.
    dedup: Option<PayloadIndex>,
    /// The index's mark at the last [`WarcWriter::sync`] in the current file: entries
    /// after it name records that a resume from that checkpoint cuts off.
    synced_mark: Option<u64>,
}

impl WarcWriter {
    /// A writer for `config`. Creates the directory; opens no file until the first
    /// capture. Serial numbers continue after the highest one of this prefix and shard
    /// already in the directory.
    ///
    /// # Errors
    /// [`WarcError::Dir`] if the directory cannot be created or listed.
    pub fn new(config: WarcWriterConfig) -> Result<Self, WarcError> {
        fs::create_dir_all(&config.dir).map_err(|source| WarcError::Dir {
            op: "create",
            path: config.dir.clone(),
            source,
        })?;
        let next_serial = highest_serial(&config.dir, &config.prefix, config.shard)?
            .map_or(0, |s| s.saturating_add(1));
        let dedup = if config.dedup.enabled() {
            PayloadIndex::new(config.dedup.max_bytes)
        } else {
            None
        };
        let next_warcinfo_id = RecordId::new_v4();
        let warcinfo_slot = WarcinfoSlot::new(next_warcinfo_id);
        let hints = dedup
            .as_ref()
            .map(|index| index.hints(config.dedup.min_payload_bytes));
        let pool = MemberPool::new();
        Ok(Self {
            dedup,
            synced_mark: None,
            warcinfo_block: config.warcinfo.block(),
            compressor: CaptureCompressor::new(
                config.deflater,
                config.gzip_level,
                warcinfo_slot.clone(),
                hints,
                pool.clone(),
            ),
            pool,
            encoder: MemberEncoder::with_deflater(config.deflater, config.gzip_level),
            warcinfo_slot,
            next_warcinfo_id,
            config,
            current: None,
            next_serial,
            summary: WriterSummary::default(),
            stage: Vec::new(),
        })
    }

    /// Writes one capture's records, opening or rotating the file first if needed.
    ///
    /// # Errors
    /// [`WarcError::File`] on an I/O failure (the partial member is cut off again, so
    /// the file stays valid), [`WarcError::Record`] for an unwritable field value (the
    /// file is untouched).
    pub fn write_capture(&mut self, capture: &Capture) -> Result<CaptureWritten, WarcError> {
        self.write_capture_with_ids(capture, CaptureIds::new_v4())
    }

    /// [`WarcWriter::write_capture`] with given record ids (tests, reproducible output).
    ///
    /// # Errors
    /// As [`WarcWriter::write_capture`].
    pub fn write_capture_with_ids(
        &mut self,
        capture: &Capture,
        ids: CaptureIds,
    ) -> Result<CaptureWritten, WarcError> {
        let compressed = match self.compressor.compress_with_ids(capture, ids) {
            Ok(compressed) => compressed,
            Err(err) => {
                self.summary.rejected += 1;
                return Err(err);
            }
        };
        self.append_compressed(&compressed)
    }

    /// A compressor for another thread, producing captures for
    /// [`WarcWriter::append_compressed`] with this writer's settings and its revisit
    /// index's hints (a likely revisit is not compressed there; see
    /// [`super::compressed`]).
    pub fn compressor(&self) -> CaptureCompressor {
        CaptureCompressor::new(
            self.config.deflater,
            self.config.gzip_level,
            self.warcinfo_slot.clone(),
            self.dedup
                .as_ref()
                .map(|index| index.hints(self.config.dedup.min_payload_bytes)),
            self.pool.clone(),
        )
    }

    /// Counts a capture that a [`CaptureCompressor`] refused (an unwritable field), so
    /// the summary's `rejected` is the same wherever compression ran.
    pub fn count_rejected(&mut self) {
        self.summary.rejected += 1;
    }

    /// Appends a capture compressed elsewhere, opening or rotating the file first if
    /// needed. The revisit decision is made here, in append order: a response whose
    /// payload is already in the index is replaced by a `revisit` record.
    ///
    /// # Errors
    /// [`WarcError::File`] on an I/O failure (the partial capture is cut off again, so
    /// the file stays valid); [`WarcError::Record`] if the capture's members could not
    /// be re-made for this file (the file is untouched).
    pub fn append_compressed(
        &mut self,
        capture: &CompressedCapture,
    ) -> Result<CaptureWritten, WarcError> {
        if self
            .current
            .as_ref()
            .is_some_and(|f| f.len >= self.config.max_file_bytes)
        {
            self.close_current()?;
        }
        if self.current.is_none() {
            self.open_next()?;
        }
        // Revisit candidates: complete 2xx responses with a payload of at least the
        // configured size, unless the caller decided already (`Capture::revisit`).
        let candidate = capture.complete_2xx
            && capture.payload_len >= self.config.dedup.min_payload_bytes.max(1);
        let found = match (&mut self.dedup, candidate) {
            (Some(index), true) => index.lookup(&capture.payload_digest),
            _ => None,
        };
        let revisit = found.map(|original| RevisitOf {
            payload_digest: capture.payload_digest,
            target_uri: original.target_uri,
            date: original.date,
            record_id: Some(original.record_id),
            profile: super::capture::RevisitProfile::IdenticalPayload,
        });
        let Some(file) = self.current.as_mut() else {
            return Err(WarcError::Stopped);
        };
        // The capture's members go into the stage, written once it is full.
        let base = self.stage.len();
        let placed = match assemble(
            capture,
            revisit.as_ref(),
            file.warcinfo_id,
            &mut self.encoder,
            &mut self.stage,
        ) {
            Ok(placed) => placed,
            Err(source) => {
                self.stage.truncate(base);
                self.summary.rejected += 1;
                return Err(WarcError::Record {
                    uri: capture.target_uri.clone(),
                    source,
                });
            }
        };
        let offset = file.len;
        let limit = self.config.stage_bytes.max(PAGE_BYTES as usize);
        append_staged(file, &mut self.stage, base, limit)?;
        let bytes = file.len - offset;
        let response_at = placed
            .iter()
            .find(|(t, _, _)| matches!(t, RecordType::Response | RecordType::Revisit))
            .map_or(0, |(_, at, _)| (*at - base) as u64);
        self.summary.records += placed.len() as u64;
        self.summary.captures += 1;
        self.summary.bytes += bytes;
        self.summary.raw_bytes += placed.iter().map(|(_, _, raw)| raw).sum::<u64>();
        let is_revisit = revisit.is_some() || capture.caller_revisit;
        if is_revisit {
            self.summary.revisits += 1;
        } else if candidate {
            if let Some(index) = &mut self.dedup {
                index.insert(
                    &capture.payload_digest,
                    capture.ids.response,
                    &capture.target_uri,
                    capture.date,
                );
            }
        }
        let written = CaptureWritten {
            response_id: capture.ids.response,
            payload_digest: capture.payload_digest,
            file_name: file.name.clone(),
            offset,
            response_offset: offset + response_at,
            bytes,
            revisit: is_revisit,
        };
        if file.len >= self.config.max_file_bytes {
            // The next capture opens a new file: let compressors stamp its id now.
            self.next_warcinfo_id = RecordId::new_v4();
            self.warcinfo_slot.publish(self.next_warcinfo_id);
        }
        Ok(written)
    }

    /// The current file and offset after its last complete record; `None` before the
    /// first capture and after [`WarcWriter::close`]. Not yet durable, nor even in the
    /// file (it may be staged): see [`WarcWriter::sync`].
    pub fn position(&self) -> Option<WarcPosition> {
        self.current.as_ref().map(|f| WarcPosition {
            file_name: f.name.clone(),
            offset: f.len,
        })
    }

    /// Writes the stage and makes everything appended so far durable (fsync), and
    /// returns the position, for a checkpoint. Responses written after it stay revisit originals only within
    /// their file: once the file is rotated, a revisit in the next file must not refer
    /// to records that a resume from this checkpoint would cut off.
    ///
    /// # Errors
    /// [`WarcError::File`] if the write or the fsync fails (what failed to be written
    /// stays staged, the file is cut back to what was written before).
    pub fn sync(&mut self) -> Result<Option<WarcPosition>, WarcError> {
        if let Some(file) = self.current.as_mut() {
            write_stage(file, &mut self.stage, true)?;
            file.file
                .sync_data()
                .map_err(WarcError::file("sync", &file.open_path))?;
            self.synced_mark = self.dedup.as_ref().map(PayloadIndex::mark);
        }
        Ok(self.position())
    }

    /// The revisit index's counters (`None` when deduplication is off).
    pub fn dedup_stats(&self) -> Option<DedupStats> {
        self.dedup.as_ref().map(PayloadIndex::stats)
    }

    /// Counters so far.
    pub fn summary(&self) -> WriterSummary {
        self.summary
    }

    /// Closes the current file (write the stage, fsync, rename to its final name, fsync
    /// the directory).
    ///
    /// # Errors
    /// [`WarcError::File`] on a failed write, fsync or rename.
    pub fn close(mut self) -> Result<WriterSummary, WarcError> {
        self.close_current()?;
        Ok(self.summary)
    }

    fn open_next(&mut self) -> Result<(), WarcError> {
        let date = WarcDate::now();
        let name = file_name(
            &self.config.prefix,
            date,
            self.next_serial,
            self.config.shard,
        );
        let final_path = self.config.dir.join(&name);
        let open_path = self.config.dir.join(format!("{name}{OPEN_SUFFIX}"));
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&open_path)
            .map_err(WarcError::file("create", &open_path))?;
        self.next_serial = self.next_serial.saturating_add(1);
        // Drawn ahead and already published (see `next_warcinfo_id`).
        let warcinfo_id = self.next_warcinfo_id;
        let record =
            warcinfo_record(warcinfo_id, date, &name, &self.warcinfo_block).map_err(|err| {
                WarcError::Record {
                    uri: name.clone(),
                    source: io::Error::new(io::ErrorKind::InvalidInput, err),
                }
            })?;
        // The stage is empty between files: the warcinfo record starts it.
        self.stage.clear();
        let raw = match self.encoder.append(&mut self.stage, &record) {
            Ok(raw) => raw,
            Err(e) => {
                // Nothing of the file is written: remove it and reuse its serial.
                self.stage.clear();
                drop(file);
                let _ = fs::remove_file(&open_path);
                self.next_serial = self.next_serial.saturating_sub(1);
                return Err(WarcError::file("write", &open_path)(e));
            }
        };
        let len = self.stage.len() as u64;
        self.summary.files += 1;
        self.summary.records += 1;
        self.summary.bytes += len;
        self.summary.raw_bytes += raw;
        self.current = Some(OpenFile {
            file,
            name,
            open_path,
            final_path,
            len,
            written: 0,
            warcinfo_id,
        });
        Ok(())
    }

    fn close_current(&mut self) -> Result<(), WarcError> {
        // A failed write keeps the file open with its stage, for a retry.
        if let Some(file) = self.current.as_mut() {
            write_stage(file, &mut self.stage, true)?;
        }
        let Some(file) = self.current.take() else {
            return Ok(());
        };
        // A resume cuts the file of its checkpoint back to the synced offset and keeps
        // later files whole. A revisit in a later file must not refer to a response in
        // the part that may be cut, so those responses leave the index when their
        // file closes (their payloads are written in full once more, at most).
        if let (Some(mark), Some(index)) = (self.synced_mark.take(), self.dedup.as_mut()) {
            index.forget_since(mark);
        }
        file.file
            .sync_all()
            .map_err(WarcError::file("sync", &file.open_path))?;
        drop(file.file);
        fs::rename(&file.open_path, &file.final_path)
            .map_err(WarcError::file("rename", &file.open_path))?;
        sync_dir(&self.config.dir)
    }
}

impl Drop for WarcWriter {
    /// Best effort: a writer dropped without [`WarcWriter::close`] still renames its
    /// file, so a panic elsewhere does not leave `.open` files behind. Errors are lost
    /// here; [`super::recover`] would repair the file on the next start anyway.
    fn drop(&mut self) {
        let _ = self.close_current();
    }
}

/// Counts the bytes appended to the stage after `base` (one capture's members) as the
/// file's and writes the stage's whole pages once it holds `limit` bytes. If that
/// write fails, the capture leaves the stage again: the error is the capture's, and
/// what was appended before it stays staged for the next write.
fn append_staged(
    file: &mut OpenFile,
    stage: &mut Vec<u8>,
    base: usize,
    limit: usize,
) -> Result<(), WarcError> {
    if stage.len() >= limit {
        if let Err(e) = write_stage(file, stage, false) {
            stage.truncate(base);
            return Err(e);
        }
    }
    file.len = file.written + stage.len() as u64;
    Ok(())
}

/// Writes the stage's whole pages (its every byte when `all`), aligned to the file
/// offset, and keeps the rest staged. On failure cuts the file back to what was
/// written before, so no partial member stays behind, and moves the write position
/// back there too: the file is not opened for appending, so a later write would
/// otherwise land past the end and leave a hole of zeros (a short write before `ENOSPC`
/// did that: tests/crawl_disk_full.rs). The stage is kept whole then.
fn write_stage(file: &mut OpenFile, stage: &mut Vec<u8>, all: bool) -> Result<(), WarcError> {
    let end = file.written + stage.len() as u64;
    let upto = if all { end } else { end - end % PAGE_BYTES };
    // At most the stage's length (`upto <= end`), so the cast and the range hold.
    let n = usize::try_from(upto.saturating_sub(file.written)).unwrap_or(stage.len());
    let Some(pages) = stage.get(..n).filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    if let Err(source) = file.file.write_all(pages) {
        let _ = file.file.set_len(file.written);
        let _ = io::Seek::seek(&mut file.file, io::SeekFrom::Start(file.written));
        return Err(WarcError::File {
            op: "write",
            path: file.open_path.clone(),
            source,
        });
    }
    file.written = upto;
    stage.drain(..n);
    // A capture larger than the stage grew it: give the memory back.
    if stage.capacity() > 2 * STAGE_BYTES.max(stage.len()) {
        stage.shrink_to(STAGE_BYTES);
    }
    Ok(())
}

/// `{prefix}-{YYYYMMDDhhmmss}-{serial:05}-{shard}.warc.gz`
pub fn file_name(prefix: &str, date: WarcDate, serial: u32, shard: u32) -> String {
    format!(
        "{prefix}-{}-{serial:05}-{shard}{WARC_SUFFIX}",
        date.compact()
    )
}

/// Reads the serial number from a name made by [`file_name`] (with or without `.open`)
/// if prefix and shard match.
pub fn parse_serial(name: &str, prefix: &str, shard: u32) -> Option<u32> {
    let name = name.strip_suffix(OPEN_SUFFIX).unwrap_or(name);
    let stem = name.strip_suffix(WARC_SUFFIX)?;
    let rest = stem.strip_prefix(prefix)?.strip_prefix('-')?;
    let mut parts = rest.split('-');
    let (date, serial, shard_text) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || date.len() != 14 || !date.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    (shard_text == shard.to_string()).then_some(())?;
    serial.parse().ok()
}

fn highest_serial(dir: &Path, prefix: &str, shard: u32) -> Result<Option<u32>, WarcError> {
    let list_err = |source| WarcError::Dir {
        op: "list",
        path: dir.to_path_buf(),
        source,
    };
    let mut highest = None;
    for entry in fs::read_dir(dir).map_err(list_err)? {
        let entry = entry.map_err(list_err)?;
        if let Some(serial) = entry
            .file_name()
            .to_str()
            .and_then(|name| parse_serial(name, prefix, shard))
        {
            highest = highest.max(Some(serial));
        }
    }
    Ok(highest)
}

/// fsync a directory so a rename or a new file in it is durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), WarcError> {
    crate::disk::sync_dir(dir).map_err(|e| WarcError::file("sync", dir)(e.source))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open_file(file: File, path: &Path) -> OpenFile {
        OpenFile {
            file,
            name: "t.warc.gz".to_owned(),
            open_path: path.to_path_buf(),
            final_path: path.to_path_buf(),
            len: 0,
            written: 0,
            warcinfo_id: RecordId::new_v4(),
        }
    }

    /// Captures of odd sizes reach the file in whole pages only; lengths count what was
    /// appended; a sync writes the tail and the next write keeps to page boundaries.
    #[test]
    fn the_stage_is_written_in_whole_pages_aligned_to_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        let mut file = open_file(File::create(&path).unwrap(), &path);
        let mut stage = Vec::new();
        let mut expect = Vec::new();
        let mut synced = 0;
        let on_disk = |path: &Path| fs::metadata(path).unwrap().len();
        for i in 0..700u32 {
            let capture: Vec<u8> = (0..7001 + i).map(|b| (b ^ i) as u8).collect();
            let base = stage.len();
            stage.extend_from_slice(&capture);
            expect.extend_from_slice(&capture);
            append_staged(&mut file, &mut stage, base, STAGE_BYTES).unwrap();
            assert_eq!(file.len, expect.len() as u64);
            assert_eq!(on_disk(&path), file.written);
            assert!(file.written % PAGE_BYTES == 0 || file.written == synced);
            assert!(stage.len() < STAGE_BYTES);
            if i == 400 {
                write_stage(&mut file, &mut stage, true).unwrap();
                assert!(stage.is_empty());
                assert_eq!(on_disk(&path), file.len);
                synced = file.len;
                assert_ne!(synced % PAGE_BYTES, 0, "the test wants an odd tail");
            }
        }
        assert!(
            on_disk(&path) > 2 * STAGE_BYTES as u64,
            "pages were written"
        );
        write_stage(&mut file, &mut stage, true).unwrap();
        assert_eq!(fs::read(&path).unwrap(), expect);
    }

    /// A write that fails (`/dev/full`: `ENOSPC`) takes the capture out of the stage
    /// again and keeps what was appended before it.
    #[test]
    fn a_failed_write_gives_back_the_capture_and_keeps_the_rest_staged() {
        let path = Path::new("/dev/full");
        let Ok(full) = OpenOptions::new().write(true).open(path) else {
            return;
        };
        let mut file = open_file(full, path);
        let mut stage = vec![1u8; STAGE_BYTES - 10];
        append_staged(&mut file, &mut stage, 0, STAGE_BYTES).unwrap();
        assert_eq!(file.len, (STAGE_BYTES - 10) as u64);
        stage.extend_from_slice(&[2u8; 5000]);
        let err = append_staged(&mut file, &mut stage, STAGE_BYTES - 10, STAGE_BYTES).unwrap_err();
        assert!(matches!(err, WarcError::File { op: "write", .. }), "{err}");
        assert_eq!(stage, vec![1u8; STAGE_BYTES - 10]);
        assert_eq!((file.len, file.written), ((STAGE_BYTES - 10) as u64, 0));
        assert!(write_stage(&mut file, &mut stage, true).is_err());
        assert_eq!(stage.len(), STAGE_BYTES - 10, "kept for a retry");
    }
}
