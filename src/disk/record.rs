//! Framed records: `varint payload_len | crc32(payload) u32 LE | payload`, one after
//! the other after a file's header. The length says where the next record starts, the
//! checksum whether this one is intact; a file cut short by a crash ends inside a
//! record, which the reader reports as truncated, with the record's byte offset.

use std::io::{self, Read, Write};

use super::file::read_full;
use super::header::{Format, HeaderError, HEADER_BYTES};
use super::varint::MAX_VARINT_BYTES;

/// The longest frame head: a ten-byte varint and the checksum.
pub const MAX_FRAME_HEAD_BYTES: usize = MAX_VARINT_BYTES + 4;

/// Why a record file could not be read on. Offsets are those of the record's first
/// byte (its length), counted from the start of the file.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// Reading failed (other than at the end of the file).
    #[error("read failed")]
    Io(#[source] io::Error),
    /// The header is not this format's.
    #[error("{0}")]
    Header(HeaderError),
    /// The file ends inside the record at `offset` (a torn write).
    #[error("at byte {offset}: the file ends inside a record (truncated)")]
    Truncated { offset: u64 },
    /// The record at `offset` states a length beyond the format's maximum: the rest of
    /// the file cannot be framed.
    #[error("at byte {offset}: record length is implausible")]
    TooLong { offset: u64 },
    /// The record at `offset` was read whole, but its checksum does not match its
    /// payload. The reader stands after it, so a format whose records stand alone may
    /// skip it and read on.
    #[error("at byte {offset}: record checksum mismatch")]
    Checksum { offset: u64 },
}

impl From<io::Error> for RecordError {
    fn from(e: io::Error) -> Self {
        Self::Io(e)
    }
}

/// Writes `payload` as one framed record; returns the bytes written.
///
/// # Errors
/// Any I/O error.
pub fn write_record(w: &mut impl Write, payload: &[u8]) -> io::Result<u64> {
    let mut head = [0u8; MAX_FRAME_HEAD_BYTES];
    let mut n = 0;
    let mut len = payload.len() as u64;
    loop {
        let low = (len & 0x7f) as u8;
        len >>= 7;
        if let Some(slot) = head.get_mut(n) {
            *slot = if len == 0 { low } else { low | 0x80 };
        }
        n += 1;
        if len == 0 {
            break;
        }
    }
    if let Some(crc) = head.get_mut(n..n + 4) {
        crc.copy_from_slice(&super::crc32(payload).to_le_bytes());
    }
    w.write_all(head.get(..n + 4).unwrap_or_default())?;
    w.write_all(payload)?;
    Ok((n + 4 + payload.len()) as u64)
}

/// Reads the framed records of one file in order.
#[derive(Debug)]
pub struct RecordReader<R> {
    input: R,
    offset: u64,
    max_payload_bytes: usize,
}

impl<R: Read> RecordReader<R> {
    /// Reads and checks the header of `format`, then stands before the first record.
    ///
    /// # Errors
    /// [`RecordError::Header`] (a file shorter than a header is
    /// [`HeaderError::Truncated`]), or an I/O error.
    pub fn open(mut input: R, format: &Format) -> Result<Self, RecordError> {
        let mut header = [0u8; HEADER_BYTES];
        let n = read_full(&mut input, &mut header)?;
        format
            .check(header.get(..n).unwrap_or_default())
            .map_err(RecordError::Header)?;
        Ok(Self::headless(
            input,
            HEADER_BYTES as u64,
            format.max_payload_bytes,
        ))
    }

    /// A reader of records that start right away, at file offset `offset` (for a
    /// caller that read the header itself, and for fuzzing).
    pub fn headless(input: R, offset: u64, max_payload_bytes: usize) -> Self {
        Self {
            input,
            offset,
            max_payload_bytes,
        }
    }

    /// Reads the next record's payload into `payload`; returns its offset, or
    /// `Ok(None)` at a clean end of file (no byte of a next record).
    ///
    /// # Errors
    /// [`RecordError::Truncated`], [`RecordError::TooLong`] (the reader cannot go on),
    /// [`RecordError::Checksum`] (the reader stands after the bad record), or an I/O
    /// error.
    pub fn next_record(&mut self, payload: &mut Vec<u8>) -> Result<Option<u64>, RecordError> {
        let start = self.offset;
        let truncated = RecordError::Truncated { offset: start };
        let too_long = RecordError::TooLong { offset: start };
        // The length varint, byte by byte: stop as soon as its value must exceed the
        // maximum, so garbage never makes the reader wait for, or allocate, more.
        let mut len = 0u64;
        let mut len_bytes = 0usize;
        loop {
            let mut b = [0u8; 1];
            if read_full(&mut self.input, &mut b)? == 0 {
                if len_bytes == 0 {
                    return Ok(None);
                }
                return Err(truncated);
            }
            let [b] = b;
            len |= u64::from(b & 0x7f) << (7 * len_bytes);
            len_bytes += 1;
            if b & 0x80 == 0 {
                break;
            }
            // More bytes follow, so the length is at least 2^(7 * len_bytes).
            if len_bytes >= MAX_VARINT_BYTES - 1
                || 1u64 << (7 * len_bytes) > self.max_payload_bytes as u64
            {
                return Err(too_long);
            }
        }
        let len = match usize::try_from(len) {
            Ok(l) if l <= self.max_payload_bytes => l,
            _ => return Err(too_long),
        };
        let mut crc = [0u8; 4];
        if read_full(&mut self.input, &mut crc)? != crc.len() {
            return Err(truncated);
        }
        payload.resize(len, 0);
        if read_full(&mut self.input, payload)? != len {
            return Err(truncated);
        }
        self.offset += (len_bytes + crc.len() + len) as u64;
        if super::crc32(payload) != u32::from_le_bytes(crc) {
            return Err(RecordError::Checksum { offset: start });
        }
        Ok(Some(start))
    }

    /// File offset of the next record (after the last one read whole).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Whether the input has no byte left (reads one byte if it has).
    ///
    /// # Errors
    /// Any I/O error.
    pub fn is_at_end(&mut self) -> io::Result<bool> {
        let mut b = [0u8; 1];
        Ok(read_full(&mut self.input, &mut b)? == 0)
    }
}
