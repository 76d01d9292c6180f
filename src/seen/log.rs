//! The presence log: how checkpoints store a set's bits in proportion to the keys in
//! it, not to its capacity (`docs/seen.md`, "Incremental checkpoints").
//!
//! ```text
//! preamble   16 bytes: "TRWLPLOG", version u32 LE, reserved u32
//! header     the 4 KiB seen-set header (parameters, seed, k, blocks; state sealed,
//!            counters zero), with its own checksum
//! record*    one per checkpoint epoch:
//!   0  "PLOGEPCH"
//!   8  kind u32 (1 full: every non-zero block; 2 delta: blocks changed since the
//!      previous record), reserved u32
//!  16  epoch u64, inserted u64, set_bits u64, expected_lost f64 (bits), all LE
//!  48  runs u64, payload bytes u64
//!  64  runs: first block u64, block count u64, then count x 64 bytes of bits
//!   .  xxh3-64 of the record from its magic to the end of its payload
//! ```
//!
//! The first record is full, later ones deltas; replaying them in order rebuilds the
//! bits. A checkpoint's manifest records the log's committed length: bytes past it are
//! a torn or abandoned append, ignored by readers and cut off by the next append. The
//! same file (hard-linked from one checkpoint directory into the next) grows until a
//! checkpoint compacts it into a new file holding one full record.
//!
//! The preamble starts with the common file header of `crate::disk`.

#![deny(clippy::indexing_slicing)]

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::Duration;

use xxhash_rust::xxh3::Xxh3;

use super::error::{Error, ErrorKind};
use super::header::{Header, HeaderError, Purpose, HEADER_BYTES};
use super::model::BLOCK_BYTES;
use crate::disk::{u64_at, Format, HeaderError as FileHeaderError};

/// First bytes of a presence log.
pub const LOG_MAGIC: [u8; 8] = *b"TRWLPLOG";
/// Format version of the presence log.
pub const LOG_VERSION: u32 = 1;
/// Bytes before the first record: preamble and header.
pub const LOG_HEADER_BYTES: u64 = PREAMBLE_BYTES as u64 + HEADER_BYTES;
/// Magic and version (the records are the log's own, not `crate::disk` frames).
const FORMAT: Format = Format::new(LOG_MAGIC, LOG_VERSION, 0);
/// The preamble: the file header and a reserved u32.
const PREAMBLE_BYTES: usize = crate::disk::HEADER_BYTES + 4;
const RECORD_MAGIC: [u8; 8] = *b"PLOGEPCH";
const RECORD_HEAD_BYTES: u64 = 64;
const RUN_HEAD_BYTES: u64 = 16;
const RECORD_TRAILER_BYTES: u64 = 8;
/// Environment variable (tests only): milliseconds to sleep in the middle of writing
/// a record, after half of it is on disk, so a test can `kill -9` the crawler inside a
/// checkpoint write (`tests/checkpoint_incremental.rs`). Unset or unparsable: no pause.
pub const PAUSE_ENV: &str = "TRAWL_TEST_CHECKPOINT_PAUSE_MS";

/// What a record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    /// Every non-zero block of the set.
    Full,
    /// The blocks that changed since the previous record.
    Delta,
}

/// The counters a record carries: the set's figures at its cut.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RecordCounters {
    pub epoch: u64,
    pub inserted: u64,
    pub set_bits: u64,
    pub expected_lost: f64,
}

/// What a verified log up to its committed length holds.
#[derive(Debug, Clone, PartialEq)]
pub struct LogSummary {
    pub header: Header,
    /// Records read (the first full, the rest deltas).
    pub records: u64,
    /// Blocks carried by all records (a block changed in several epochs counts each
    /// time).
    pub blocks_written: u64,
    /// Bytes of preamble, header and the full record: what a compaction rewrote.
    pub base_bytes: u64,
    /// The committed length that was read.
    pub committed_bytes: u64,
    /// Counters of the last record.
    pub last: RecordCounters,
}

/// Bytes a record of `runs` will take.
pub(crate) fn record_bytes(runs: &[(u64, u64)]) -> u64 {
    RECORD_HEAD_BYTES
        + runs
            .iter()
            .map(|(_, n)| RUN_HEAD_BYTES + n * BLOCK_BYTES)
            .sum::<u64>()
        + RECORD_TRAILER_BYTES
}

/// Coalesces ascending block indices into `(first, count)` runs.
pub(crate) fn runs_of(blocks: impl IntoIterator<Item = u64>) -> Vec<(u64, u64)> {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for b in blocks {
        match runs.last_mut() {
            Some((start, n)) if *start + *n == b => *n += 1,
            _ => runs.push((b, 1)),
        }
    }
    runs
}

/// Writes the preamble and header of a new log.
pub(crate) fn write_log_header(w: &mut impl Write, header: &Header) -> io::Result<()> {
    w.write_all(&FORMAT.header())?;
    w.write_all(&[0u8; PREAMBLE_BYTES - crate::disk::HEADER_BYTES])?;
    w.write_all(&header.encode())
}

/// Writes one record of `runs`, taking each block's bytes from `block_bytes`. Honours
/// [`PAUSE_ENV`] halfway through.
pub(crate) fn write_record(
    file: &File,
    offset: u64,
    kind: RecordKind,
    counters: RecordCounters,
    runs: &[(u64, u64)],
    mut block_bytes: impl FnMut(u64, &mut [u8; BLOCK_BYTES as usize]),
) -> io::Result<u64> {
    let mut f = file;
    f.seek(SeekFrom::Start(offset))?;
    let mut w = BufWriter::with_capacity(1 << 20, f);
    let mut hasher = Xxh3::new();
    let mut put = |w: &mut BufWriter<&File>, bytes: &[u8]| -> io::Result<()> {
        hasher.update(bytes);
        w.write_all(bytes)
    };
    let payload = record_bytes(runs) - RECORD_HEAD_BYTES - RECORD_TRAILER_BYTES;
    let kind_code: u32 = match kind {
        RecordKind::Full => 1,
        RecordKind::Delta => 2,
    };
    let mut head = Vec::with_capacity(RECORD_HEAD_BYTES as usize);
    head.extend_from_slice(&RECORD_MAGIC);
    head.extend_from_slice(&kind_code.to_le_bytes());
    head.extend_from_slice(&[0; 4]);
    for field in [
        counters.epoch,
        counters.inserted,
        counters.set_bits,
        counters.expected_lost.to_bits(),
        runs.len() as u64,
        payload,
    ] {
        head.extend_from_slice(&field.to_le_bytes());
    }
    debug_assert_eq!(head.len() as u64, RECORD_HEAD_BYTES);
    put(&mut w, &head)?;
    let pause = pause_ms();
    let mut block = [0u8; BLOCK_BYTES as usize];
    for (i, &(start, n)) in runs.iter().enumerate() {
        if i == runs.len() / 2 {
            if let Some(ms) = pause {
                w.flush()?;
                std::thread::sleep(Duration::from_millis(ms));
            }
        }
        put(&mut w, &start.to_le_bytes())?;
        put(&mut w, &n.to_le_bytes())?;
        for b in start..start + n {
            block_bytes(b, &mut block);
            put(&mut w, &block)?;
        }
    }
    let sum = hasher.digest();
    w.write_all(&sum.to_le_bytes())?;
    w.flush()?;
    Ok(record_bytes(runs))
}

fn pause_ms() -> Option<u64> {
    std::env::var(PAUSE_ENV).ok()?.trim().parse().ok()
}

/// Reads a log up to its committed length, verifying every record, and hands each run
/// of blocks to `apply` (first block, bytes of `count` blocks) as it is read. A run is
/// handed over before its record's checksum is checked: on an error the caller must
/// discard what it built.
///
/// # Errors
/// [`ErrorKind::Truncated`] if the file is shorter than `committed`;
/// [`ErrorKind::LogDamaged`] (with the byte offset) for a bad preamble or record, a
/// checksum mismatch, a record that crosses the committed length, or runs outside the
/// set; the header kinds of [`super::SeenSet::open`] for a damaged header; I/O errors.
pub(crate) fn read_log(
    path: &Path,
    committed: u64,
    apply: impl FnMut(u64, &[u8]),
) -> Result<LogSummary, Error> {
    let io = |e| Error::io(path, e);
    let file = File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    if len < committed {
        return Err(Error::new(ErrorKind::Truncated, path)
            .with_detail(format!("{len} of {committed} committed bytes")));
    }
    read_log_from(
        BufReader::with_capacity(1 << 20, file.take(committed)),
        committed,
        path,
        apply,
    )
}

/// [`read_log`] over any reader holding at least `committed` bytes (sans-IO core, and
/// the fuzz entry point's).
pub(crate) fn read_log_from(
    mut r: impl Read,
    committed: u64,
    path: &Path,
    mut apply: impl FnMut(u64, &[u8]),
) -> Result<LogSummary, Error> {
    let io = |e: io::Error| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            Error::new(ErrorKind::Truncated, path).with_detail("the log ends early")
        } else {
            Error::io(path, e)
        }
    };
    let damaged = |at: u64, what: &str| {
        Error::new(ErrorKind::LogDamaged, path).with_detail(format!("at byte {at}: {what}"))
    };
    if committed < LOG_HEADER_BYTES {
        return Err(damaged(0, "committed length shorter than the log header"));
    }
    let header = header_from(&mut r, path)?;
    let mut at = LOG_HEADER_BYTES;
    let mut summary = LogSummary {
        header,
        records: 0,
        blocks_written: 0,
        base_bytes: LOG_HEADER_BYTES,
        committed_bytes: committed,
        last: RecordCounters::default(),
    };
    let mut data = vec![0u8; 64 << 10];
    while at < committed {
        if committed - at < RECORD_HEAD_BYTES + RECORD_TRAILER_BYTES {
            return Err(damaged(at, "the committed length ends inside a record"));
        }
        let mut head = [0u8; RECORD_HEAD_BYTES as usize];
        r.read_exact(&mut head).map_err(io)?;
        let field = |o: usize| u64_at(&head, o).unwrap_or(0);
        if head.get(..8) != Some(&RECORD_MAGIC[..]) {
            return Err(damaged(at, "no record starts here"));
        }
        let kind = match field(8) & 0xffff_ffff {
            1 => RecordKind::Full,
            2 => RecordKind::Delta,
            _ => return Err(damaged(at, "unknown record kind")),
        };
        if (kind == RecordKind::Full) != (summary.records == 0) {
            return Err(damaged(
                at,
                "the first record must be full and only the first",
            ));
        }
        let counters = RecordCounters {
            epoch: field(16),
            inserted: field(24),
            set_bits: field(32),
            expected_lost: f64::from_bits(field(40)),
        };
        let runs = field(48);
        let payload = field(56);
        let end = at
            .checked_add(RECORD_HEAD_BYTES + RECORD_TRAILER_BYTES)
            .and_then(|x| x.checked_add(payload));
        if end.is_none_or(|e| e > committed) {
            return Err(damaged(at, "the committed length ends inside a record"));
        }
        let mut hasher = Xxh3::new();
        hasher.update(&head);
        let mut left = payload;
        let mut next_block = 0u64;
        for _ in 0..runs {
            let mut rh = [0u8; RUN_HEAD_BYTES as usize];
            if left < RUN_HEAD_BYTES {
                return Err(damaged(at, "runs overrun the record"));
            }
            r.read_exact(&mut rh).map_err(io)?;
            hasher.update(&rh);
            left -= RUN_HEAD_BYTES;
            let start = u64_at(&rh, 0).unwrap_or(0);
            let n = u64_at(&rh, 8).unwrap_or(0);
            let bytes = n.checked_mul(BLOCK_BYTES);
            if n == 0
                || start < next_block
                || start.checked_add(n).is_none_or(|e| e > header.blocks)
                || bytes.is_none_or(|b| b > left)
            {
                return Err(damaged(
                    at,
                    "a run is empty, out of order or outside the set",
                ));
            }
            let mut block = start;
            let mut remaining = bytes.unwrap_or(0);
            left -= remaining;
            while remaining > 0 {
                let step = remaining.min(data.len() as u64) as usize;
                let chunk = data.get_mut(..step).unwrap_or_default();
                r.read_exact(chunk).map_err(io)?;
                hasher.update(chunk);
                apply(block, chunk);
                block += step as u64 / BLOCK_BYTES;
                remaining -= step as u64;
            }
            summary.blocks_written += n;
            next_block = start + n;
        }
        if left != 0 {
            return Err(damaged(at, "payload length does not match its runs"));
        }
        let mut sum = [0u8; 8];
        r.read_exact(&mut sum).map_err(io)?;
        if u64::from_le_bytes(sum) != hasher.digest() {
            return Err(damaged(at, "record checksum mismatch"));
        }
        if !counters.expected_lost.is_finite() || counters.expected_lost < 0.0 {
            return Err(damaged(at, "record counters out of range"));
        }
        at = end.unwrap_or(committed);
        summary.records += 1;
        summary.last = counters;
        if kind == RecordKind::Full {
            summary.base_bytes = at;
        }
    }
    if summary.records == 0 {
        return Err(damaged(at, "no record within the committed length"));
    }
    Ok(summary)
}

/// Reads and checks the preamble and header of the log at `path`.
///
/// # Errors
/// I/O errors, [`ErrorKind::BadMagic`], [`ErrorKind::UnsupportedVersion`] and the
/// header kinds.
pub(crate) fn read_header(path: &Path) -> Result<Header, Error> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    header_from(&mut BufReader::new(file), path)
}

fn header_from(r: &mut impl Read, path: &Path) -> Result<Header, Error> {
    let io = |e: io::Error| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            Error::new(ErrorKind::Truncated, path).with_detail("presence log header")
        } else {
            Error::io(path, e)
        }
    };
    let mut pre = [0u8; PREAMBLE_BYTES];
    r.read_exact(&mut pre).map_err(io)?;
    match FORMAT.check(&pre) {
        Ok(()) => {}
        Err(FileHeaderError::Truncated) => {
            return Err(Error::new(ErrorKind::Truncated, path).with_detail("presence log header"))
        }
        Err(FileHeaderError::BadMagic) => {
            return Err(Error::new(ErrorKind::BadMagic, path).with_detail("not a presence log"))
        }
        Err(FileHeaderError::UnsupportedVersion { found, .. }) => {
            return Err(Error::new(ErrorKind::UnsupportedVersion, path)
                .with_detail(format!("presence log version {found}")))
        }
    }
    let mut hb = vec![0u8; HEADER_BYTES as usize];
    r.read_exact(&mut hb).map_err(io)?;
    Header::decode(&hb).map_err(|e| header_error(e, path))
}

fn header_error(e: HeaderError, path: &Path) -> Error {
    match e {
        HeaderError::Truncated => Error::new(ErrorKind::Truncated, path),
        HeaderError::BadMagic => Error::new(ErrorKind::BadMagic, path),
        HeaderError::UnsupportedVersion(v) => {
            Error::new(ErrorKind::UnsupportedVersion, path).with_detail(format!("version {v}"))
        }
        HeaderError::Checksum => Error::new(ErrorKind::HeaderChecksum, path),
        HeaderError::BadParameters(what) => {
            Error::new(ErrorKind::BadParameters, path).with_detail(what)
        }
    }
}

/// Checks the purpose recorded in a log's header.
pub(crate) fn check_purpose(h: &Header, want: Option<Purpose>, path: &Path) -> Result<(), Error> {
    match want {
        Some(p) if p != h.purpose => Err(Error::new(ErrorKind::WrongPurpose, path)),
        _ => Ok(()),
    }
}
