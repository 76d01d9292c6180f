//! Repair after a crash: cut a torn last record off a WARC file so that it stays valid.
//!
//! The writer appends whole gzip members, one record each, so after `kill -9` a file
//! holds complete members followed by at most one torn one. [`scan`] finds the end of
//! the last complete member by reading the records with [`super::reader::Records`] (a
//! member is complete when its gzip trailer checks, CRC-32 and length, and it holds
//! exactly one WARC record whose `Content-Length` matches). [`repair`] truncates to that boundary,
//! or to a checkpoint's offset when one is known. [`recover`] does this for every
//! `.open` file of a directory and gives them their final names.

#![deny(clippy::indexing_slicing)]

use std::fs::{self, OpenOptions};
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use super::error::WarcError;
use super::reader::{Framing, ReadError, Records};
use super::writer::{sync_dir, OPEN_SUFFIX};

/// What [`scan`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanReport {
    /// Length of the file.
    pub file_len: u64,
    /// End of the last complete record: the length to keep.
    pub valid_len: u64,
    /// Complete records before `valid_len`.
    pub records: u64,
}

impl ScanReport {
    /// Whether the file ends in a torn or damaged member.
    pub fn is_torn(&self) -> bool {
        self.valid_len < self.file_len
    }
}

/// What [`repair`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RepairReport {
    /// The file's length before.
    pub old_len: u64,
    /// Its length now.
    pub new_len: u64,
    /// Complete records kept, when the file was scanned.
    pub records: Option<u64>,
}

/// Finds the end of the last complete record of a `.warc.gz` file (gzip member per
/// record), reading it once from the start.
///
/// # Errors
/// [`WarcError::File`] if the file cannot be opened or read; damaged content is not an
/// error, it ends the valid part.
pub fn scan(path: &Path) -> Result<ScanReport, WarcError> {
    let file = fs::File::open(path).map_err(WarcError::file("read", path))?;
    let file_len = file
        .metadata()
        .map_err(WarcError::file("read", path))?
        .len();
    let (valid_len, records) = scan_reader(BufReader::with_capacity(256 * 1024, file))
        .map_err(WarcError::file("read", path))?;
    Ok(ScanReport {
        file_len,
        valid_len,
        records,
    })
}

/// [`scan`] over any reader: returns (valid length, complete records).
///
/// # Errors
/// Only errors of the reader itself when it is asked for more bytes at a member
/// boundary; damaged or cut-off content ends the valid part instead.
pub fn scan_reader(reader: impl BufRead) -> io::Result<(u64, u64)> {
    let mut records = Records::new(reader, Framing::GzipMembers);
    // Only the heads and the lengths matter here.
    records.set_max_block_bytes(0);
    let mut valid_len = 0;
    let mut count = 0;
    for record in records {
        match record {
            Ok(record) => {
                valid_len = record.end;
                count += 1;
            }
            Err(ReadError::Io(e)) => return Err(e),
            Err(ReadError::Damaged { .. }) => break,
        }
    }
    Ok((valid_len, count))
}

/// Cuts `path` back to its valid part: to `valid_len` when a checkpoint gives it (the
/// offset must lie within the file, at the start of a member or at its end), else to
/// the end of the last complete record found by [`scan`]. The file is fsynced after.
///
/// # Errors
/// [`WarcError::BadCheckpoint`] when `valid_len` is past the end of the file or not at
/// a member start; [`WarcError::File`] on I/O failure.
pub fn repair(path: &Path, valid_len: Option<u64>) -> Result<RepairReport, WarcError> {
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(WarcError::file("read", path))?;
    let old_len = file
        .metadata()
        .map_err(WarcError::file("read", path))?
        .len();
    let (new_len, records) = match valid_len {
        Some(offset) => {
            let bad = || WarcError::BadCheckpoint {
                path: path.to_path_buf(),
                offset,
                len: old_len,
            };
            if offset > old_len {
                return Err(bad());
            }
            // What follows a record boundary is the start of the next member, so its
            // first bytes (as many as reached the disk) are gzip's magic and method.
            let mut head = [0u8; 3];
            io::Seek::seek(&mut file, io::SeekFrom::Start(offset))
                .map_err(WarcError::file("read", path))?;
            let n = read_up_to(&mut file, &mut head).map_err(WarcError::file("read", path))?;
            if head.get(..n) != [0x1f, 0x8b, 0x08].get(..n) {
                return Err(bad());
            }
            (offset, None)
        }
        None => {
            let report = scan(path)?;
            (report.valid_len, Some(report.records))
        }
    };
    if new_len < old_len {
        file.set_len(new_len)
            .map_err(WarcError::file("truncate", path))?;
        file.sync_all().map_err(WarcError::file("sync", path))?;
    }
    Ok(RepairReport {
        old_len,
        new_len,
        records,
    })
}

/// One `.open` file found by [`recover`] and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveredFile {
    /// Where it is now: the final name, or `None` when it held no complete record and
    /// was removed.
    pub path: Option<PathBuf>,
    /// The repair done.
    pub repair: RepairReport,
}

/// Repairs every `*.warc.gz.open` file in `dir` (left by a crash) by scanning, then
/// renames it to its final name, or removes it when not even its `warcinfo` record is
/// complete. Finished `*.warc.gz` files were fsynced before their rename and are left
/// alone. Call it before starting a writer on the directory.
///
/// Records written after the last checkpoint are kept: the resumed crawl fetches those
/// URLs again, so they may appear twice (at-least-once output, as usual for web
/// archives). To drop them instead, call [`repair`] with the checkpoint's offset on
/// the checkpoint's file first.
///
/// A missing directory is not an error: nothing to recover.
///
/// # Errors
/// [`WarcError::Dir`] if the directory cannot be listed; [`WarcError::File`] on a
/// failed repair, rename or removal.
pub fn recover(dir: &Path) -> Result<Vec<RecoveredFile>, WarcError> {
    let list_err = |source| WarcError::Dir {
        op: "list",
        path: dir.to_path_buf(),
        source,
    };
    let entries = match fs::read_dir(dir) {
        // No directory yet: nothing was ever written, nothing to recover.
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        other => other.map_err(list_err)?,
    };
    let mut open_files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(list_err)?;
        let name = entry.file_name();
        if let Some(name) = name.to_str() {
            if name.ends_with(OPEN_SUFFIX) {
                open_files.push(entry.path());
            }
        }
    }
    open_files.sort();
    let mut recovered = Vec::with_capacity(open_files.len());
    for open_path in open_files {
        let repair = repair(&open_path, None)?;
        let path = if repair.records.unwrap_or(0) == 0 {
            fs::remove_file(&open_path).map_err(WarcError::file("remove", &open_path))?;
            None
        } else {
            let final_path = open_path.with_extension("");
            fs::rename(&open_path, &final_path).map_err(WarcError::file("rename", &open_path))?;
            Some(final_path)
        };
        recovered.push(RecoveredFile { path, repair });
    }
    if !recovered.is_empty() {
        sync_dir(dir)?;
    }
    Ok(recovered)
}

fn read_up_to(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while let Some(rest) = buf.get_mut(filled..) {
        if rest.is_empty() {
            break;
        }
        match reader.read(rest) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}
