//! The I/O steps of durable writes: reading a buffer full, fsyncing a directory,
//! replacing a file atomically, and keeping an append-only file under a second name.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use super::error::{DiskError, Op};

/// Reads until `buf` is full or the input ends; returns the bytes read (retrying
/// `Interrupted`). Unlike `read_exact`, a short read is a count, not an error, so a
/// record reader can tell a clean end of file (0) from a torn record (some).
///
/// # Errors
/// Any I/O error other than `Interrupted`.
pub fn read_full(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while let Some(rest) = buf.get_mut(filled..).filter(|r| !r.is_empty()) {
        match input.read(rest) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Fsyncs directory `dir`, so that a file created, renamed or removed in it survives a
/// crash (fsyncing the file itself does not make its directory entry durable).
///
/// # Errors
/// [`Op::Open`] or [`Op::Fsync`] of `dir`.
pub fn sync_dir(dir: &Path) -> Result<(), DiskError> {
    let d = File::open(dir).map_err(DiskError::at(Op::Open, dir))?;
    d.sync_all().map_err(DiskError::at(Op::Fsync, dir))
}

/// Fsyncs the directory holding `path` (`.` for a bare file name).
///
/// # Errors
/// As [`sync_dir`].
pub fn sync_parent(path: &Path) -> Result<(), DiskError> {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => sync_dir(p),
        _ => sync_dir(Path::new(".")),
    }
}

/// The temporary file [`replace_atomic`] writes before renaming it over `path`:
/// `NAME.tmp` beside it.
pub fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

/// Creates (or truncates) `path`, writes `bytes` and fsyncs it: a file inside a
/// directory that is made durable as a whole later (a checkpoint's `tmp-` directory).
///
/// # Errors
/// [`Op::Create`], [`Op::Write`] or [`Op::Fsync`] of `path`.
pub fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), DiskError> {
    let mut f = File::create(path).map_err(DiskError::at(Op::Create, path))?;
    f.write_all(bytes).map_err(DiskError::at(Op::Write, path))?;
    f.sync_all().map_err(DiskError::at(Op::Fsync, path))
}

/// Replaces `path` atomically with what `write` writes: into [`temp_path`] first,
/// fsynced, renamed over `path`, then the directory fsynced. A crash at any instant
/// leaves either the old file whole or the new one whole (and perhaps the temporary
/// file, which the next replace overwrites).
///
/// # Errors
/// The failed step, naming the file it concerns: [`Op::Create`], [`Op::Write`] or
/// [`Op::Fsync`] of the temporary file, [`Op::Rename`] of it, or the directory's
/// fsync. After an error the old file is untouched.
pub fn replace_atomic(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> Result<(), DiskError> {
    let tmp = temp_path(path);
    let file = File::create(&tmp).map_err(DiskError::at(Op::Create, &tmp))?;
    let mut w = BufWriter::new(file);
    write(&mut w).map_err(DiskError::at(Op::Write, &tmp))?;
    let file = w
        .into_inner()
        .map_err(|e| DiskError::at(Op::Write, &tmp)(e.into_error()))?;
    file.sync_all().map_err(DiskError::at(Op::Fsync, &tmp))?;
    drop(file);
    std::fs::rename(&tmp, path).map_err(DiskError::at(Op::Rename, &tmp))?;
    sync_parent(path)
}

/// Makes the first `len` bytes of the append-only file `from` durable and gives them a
/// second name, `to` (a checkpoint's): a hard link where the file system allows one
/// (appends after it do not matter to a reader that stops at `len`), else a copy of
/// those bytes, fsynced. Whatever was at `to` is replaced. The caller must never
/// truncate or rewrite `from` in place afterwards: a new file must be a new inode.
///
/// # Errors
/// I/O errors.
pub fn keep_as(from: &Path, len: u64, to: &Path) -> std::io::Result<()> {
    use std::io::Read as _;
    std::fs::File::open(from)?.sync_data()?;
    match std::fs::remove_file(to) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    if std::fs::hard_link(from, to).is_ok() {
        return Ok(());
    }
    let mut out = std::fs::File::create(to)?;
    std::io::copy(&mut std::fs::File::open(from)?.take(len), &mut out)?;
    out.sync_all()
}
