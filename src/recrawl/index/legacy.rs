//! Version 1 of the re-crawl index, read so that a re-crawl can start from a crawl made
//! by the build before version 2 (never written any more, except by tests and the fuzz
//! check, which re-encode what they read).
//!
//! ```text
//! header  16 bytes: magic "TRAWLRIX" | version u32 (1) | crc32 of the 12 bytes before
//! record  len u32 | crc32 u32 of the payload | payload (len bytes, at most 64 KiB)
//! payload flags u8 (bit 0: ETag present, bit 1: Last-Modified present)
//!         fetched_at_us i64 | status u16 | warc_offset u64 | payload_bytes u64
//!         url, etag, last_modified, payload_digest, record_id, warc_file:
//!             each u16 length + UTF-8 bytes (absent validators have length 0)
//! ```
//!
//! A version-1 entry has no hop path (`hops` is `None`) and no referrer (`via` is
//! `None`), and the WARC location of a carried-forward entry is the earlier capture's,
//! in an earlier crawl's directory.

use std::io::{self, Read};

use super::{Fields, FrameError, IndexEntry, IndexError, INDEX_MAGIC, MAX_RECORD_BYTES};
use crate::disk::read_full;

/// The format version of this layout.
pub const VERSION: u32 = 1;
/// Header bytes of a version-1 file.
pub const HEADER_BYTES: usize = 16;
/// Fixed payload bytes before the strings.
const FIXED_PAYLOAD_BYTES: usize = 1 + 8 + 2 + 8 + 8;
/// Frame head: length and checksum.
pub const FRAME_HEAD_BYTES: usize = 8;
/// The shortest payload: fixed fields and six empty string lengths.
const MIN_PAYLOAD_BYTES: usize = FIXED_PAYLOAD_BYTES + 12;

/// The header bytes of a version-1 index.
pub fn header() -> [u8; HEADER_BYTES] {
    let mut h = [0u8; HEADER_BYTES];
    let (magic, rest) = h.split_at_mut(8);
    magic.copy_from_slice(INDEX_MAGIC);
    let (version, crc) = rest.split_at_mut(4);
    version.copy_from_slice(&VERSION.to_le_bytes());
    crc.copy_from_slice(&header_crc(VERSION).to_le_bytes());
    h
}

fn header_crc(version: u32) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(INDEX_MAGIC);
    hasher.update(&version.to_le_bytes());
    hasher.finalize()
}

/// Checks the header checksum of a version-1 file (magic and version already checked),
/// given its last four bytes.
///
/// # Errors
/// [`IndexError::HeaderChecksum`].
pub fn check_header_crc(crc: [u8; 4]) -> Result<(), IndexError> {
    if u32::from_le_bytes(crc) == header_crc(VERSION) {
        Ok(())
    } else {
        Err(IndexError::HeaderChecksum)
    }
}

/// Reads the next frame's payload into `payload`; returns the frame's bytes, or
/// `None` at a clean end of file.
pub(super) fn next_frame(
    input: &mut impl Read,
    payload: &mut Vec<u8>,
) -> Result<Option<u64>, FrameError> {
    let mut head = [0u8; FRAME_HEAD_BYTES];
    match read_full(input, &mut head).map_err(FrameError::Io)? {
        0 => return Ok(None),
        FRAME_HEAD_BYTES => {}
        _ => return Err(FrameError::Truncated),
    }
    let (len, crc) = frame_head(head);
    let len = usize::try_from(len).map_err(|_| FrameError::TooLong)?;
    if !(MIN_PAYLOAD_BYTES..=MAX_RECORD_BYTES).contains(&len) {
        return Err(FrameError::TooLong);
    }
    payload.resize(len, 0);
    if read_full(input, payload).map_err(FrameError::Io)? != len {
        return Err(FrameError::Truncated);
    }
    if crate::disk::crc32(payload) != crc {
        return Err(FrameError::Checksum);
    }
    Ok(Some((FRAME_HEAD_BYTES + len) as u64))
}

/// Length and checksum of a frame head.
pub(super) fn frame_head(head: [u8; FRAME_HEAD_BYTES]) -> (u32, u32) {
    let [a, b, c, d, e, f, g, h] = head;
    (
        u32::from_le_bytes([a, b, c, d]),
        u32::from_le_bytes([e, f, g, h]),
    )
}

/// Encodes one entry as a version-1 frame (its hop path and referrer are not kept).
///
/// # Errors
/// [`io::ErrorKind::InvalidInput`] when a string is longer than 65,535 bytes or the
/// record longer than the maximum.
pub fn encode(entry: &IndexEntry) -> io::Result<Vec<u8>> {
    let mut p = Vec::with_capacity(64 + entry.url.len() + entry.warc_file.len());
    p.push(entry.flags());
    p.extend_from_slice(&entry.fetched_at_us.to_le_bytes());
    p.extend_from_slice(&entry.status.to_le_bytes());
    p.extend_from_slice(&entry.warc_offset.to_le_bytes());
    p.extend_from_slice(&entry.payload_bytes.to_le_bytes());
    for s in entry.strings() {
        let len = u16::try_from(s.len()).map_err(|_| {
            io::Error::new(io::ErrorKind::InvalidInput, "index field over 65535 bytes")
        })?;
        p.extend_from_slice(&len.to_le_bytes());
        p.extend_from_slice(s.as_bytes());
    }
    let len = u32::try_from(p.len())
        .ok()
        .filter(|l| *l as usize <= MAX_RECORD_BYTES)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "index record too large"))?;
    let mut out = Vec::with_capacity(FRAME_HEAD_BYTES + p.len());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&crate::disk::crc32(&p).to_le_bytes());
    out.extend_from_slice(&p);
    Ok(out)
}

/// Decodes a version-1 payload (its checksum already checked); `offset` names the
/// record in errors.
///
/// # Errors
/// [`IndexError::BadRecord`].
pub(super) fn decode(payload: &[u8], offset: u64) -> Result<IndexEntry, IndexError> {
    let bad = |reason| IndexError::BadRecord { offset, reason };
    let mut r = Cursor {
        buf: payload,
        at: 0,
    };
    let flags = r.u8().ok_or(bad("short fixed fields"))?;
    if flags & !0b11 != 0 {
        return Err(bad("unknown flags"));
    }
    let fetched_at_us = r.i64().ok_or(bad("short fixed fields"))?;
    let status = r.u16().ok_or(bad("short fixed fields"))?;
    let warc_offset = r.u64().ok_or(bad("short fixed fields"))?;
    let payload_bytes = r.u64().ok_or(bad("short fixed fields"))?;
    let mut strings = [""; 6];
    for s in &mut strings {
        *s = r.string().ok_or(bad("string field runs past the record"))?;
    }
    if r.at != payload.len() {
        return Err(bad("bytes after the last field"));
    }
    Fields {
        flags,
        status,
        fetched_at_us,
        warc_offset,
        payload_bytes,
        strings,
    }
    .entry(offset)
}

struct Cursor<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.buf.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1)?.first().copied()
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn string(&mut self) -> Option<&'a str> {
        let n = self.u16()? as usize;
        std::str::from_utf8(self.take(n)?).ok()
    }
}
