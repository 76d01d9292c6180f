//! Reading one index record back by its offset, with positioned reads (`pread`), so
//! every shard shares one open file without a lock ([`read_entry_at`]).

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use super::*;

/// Something an entry can be read from at an offset, by several threads at once: the
/// index file (`pread`), or its bytes in memory.
pub trait ReadAt {
    /// Reads into `buf` from `offset`; returns the bytes read (0 at the end).
    ///
    /// # Errors
    /// Any I/O error.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
}

impl ReadAt for File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        FileExt::read_at(self, buf, offset)
    }
}

impl ReadAt for [u8] {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let from = usize::try_from(offset).unwrap_or(usize::MAX);
        let src = self.get(from..).unwrap_or_default();
        let n = src.len().min(buf.len());
        if let (Some(dst), Some(src)) = (buf.get_mut(..n), src.get(..n)) {
            dst.copy_from_slice(src);
        }
        Ok(n)
    }
}

/// Reads until `buf` is full or the source ends (retrying `Interrupted`).
fn read_full_at(src: &(impl ReadAt + ?Sized), buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut filled = 0;
    while let Some(rest) = buf.get_mut(filled..).filter(|r| !r.is_empty()) {
        match src.read_at(rest, offset + filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// The entry whose record starts at `offset` of an index in layout `version`, read
/// with positioned reads (one for a typical record), so threads share one open file.
///
/// # Errors
/// [`IndexError::Io`] (`path` names the file), or the record errors of the reader
/// (the file changed since it was checked).
pub fn read_entry_at(
    src: &(impl ReadAt + ?Sized),
    version: IndexVersion,
    offset: u64,
    path: &Path,
) -> Result<IndexEntry, IndexError> {
    let io_err = |source| IndexError::Io {
        path: path.to_owned(),
        source,
    };
    let short = IndexError::BadRecord {
        offset,
        reason: "the record ends past the end of the file",
    };
    let mut first = [0u8; READ_AT_BYTES];
    let n = read_full_at(src, &mut first, offset).map_err(io_err)?;
    let got = first.get(..n).unwrap_or_default();
    // (payload length, frame head bytes, checksum)
    let (len, head, crc) = match version {
        IndexVersion::V2 => {
            let mut rest = got;
            let len =
                disk::take_varint(&mut rest).map_err(|_| IndexError::RecordLength { offset })?;
            let varint = got.len() - rest.len();
            let crc = disk::u32_at(got, varint).ok_or(short)?;
            (len, varint + 4, crc)
        }
        IndexVersion::V1 => {
            let head: [u8; legacy::FRAME_HEAD_BYTES] = got
                .get(..legacy::FRAME_HEAD_BYTES)
                .and_then(|h| h.try_into().ok())
                .ok_or(short)?;
            let (len, crc) = legacy::frame_head(head);
            (u64::from(len), legacy::FRAME_HEAD_BYTES, crc)
        }
    };
    let len = usize::try_from(len)
        .ok()
        .filter(|l| *l <= MAX_RECORD_BYTES)
        .ok_or(IndexError::RecordLength { offset })?;
    let whole;
    let payload = match got.get(head..head + len) {
        Some(p) => p,
        None => {
            let mut buf = vec![0u8; len];
            let m = read_full_at(src, &mut buf, offset + head as u64).map_err(io_err)?;
            if m != len {
                return Err(IndexError::BadRecord {
                    offset,
                    reason: "the record ends past the end of the file",
                });
            }
            whole = buf;
            &whole
        }
    };
    if disk::crc32(payload) != crc {
        return Err(IndexError::RecordChecksum { offset });
    }
    match version {
        IndexVersion::V2 => decode_payload(payload, offset),
        IndexVersion::V1 => legacy::decode(payload, offset),
    }
}
