//! gzip members (RFC 1952), one per record, with a deflate state reused from member
//! to member.
//!
//! `flate2::write::GzEncoder` allocates and zeroes a fresh compressor (hundreds of KB)
//! for every member; with three records per capture that allocation, its page faults
//! and its memset cost more than compressing a 20 KB page at level 1. Here one
//! `DeflateEncoder` is reset between members (RFC 1951 streams are independent after a
//! reset), and the 10-byte header and 8-byte trailer are written by hand.

use std::io::{self, Write};

use flate2::write::DeflateEncoder;
use flate2::{Compression, Crc};

use super::record::Record;

/// Compresses records into gzip members, reusing its deflate state.
pub struct MemberEncoder {
    deflate: DeflateEncoder<Vec<u8>>,
    level: Compression,
}

impl std::fmt::Debug for MemberEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemberEncoder")
            .field("level", &self.level.level())
            .finish_non_exhaustive()
    }
}

impl MemberEncoder {
    /// An encoder at gzip `level` (0-9; higher values are taken as 9).
    pub fn new(level: u32) -> Self {
        let level = Compression::new(level.min(9));
        Self {
            deflate: DeflateEncoder::new(Vec::with_capacity(64 * 1024), level),
            level,
        }
    }

    /// Appends `record` to `out` as one complete gzip member; returns the record's
    /// uncompressed size.
    ///
    /// # Errors
    /// Only if compression itself fails (it does not on valid input); `out` may then
    /// hold a partial member, which the caller discards.
    pub fn append(&mut self, out: &mut Vec<u8>, record: &Record<'_>) -> io::Result<u64> {
        // Header: magic, CM=8 (deflate), FLG=0, MTIME=0, XFL (2 = best, 4 = fast,
        // as zlib sets it), OS=255 (unknown), as flate2's GzEncoder writes it.
        let xfl = match self.level.level() {
            9 => 2,
            0 | 1 => 4,
            _ => 0,
        };
        out.extend_from_slice(&[0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, xfl, 0xff]);
        let mut sink = CrcWriter {
            inner: &mut self.deflate,
            crc: Crc::new(),
        };
        record.write_to(&mut sink)?;
        let crc = sink.crc;
        // `reset` finishes the deflate stream and hands back the finished bytes.
        let mut deflated = self.deflate.reset(Vec::new())?;
        out.extend_from_slice(&deflated);
        deflated.clear();
        *self.deflate.get_mut() = deflated;
        out.extend_from_slice(&crc.sum().to_le_bytes());
        out.extend_from_slice(&crc.amount().to_le_bytes());
        Ok(u64::from(crc.amount()))
    }
}

/// Passes bytes on and keeps the CRC-32 and length (mod 2^32) of what went through.
struct CrcWriter<'w, W: Write> {
    inner: &'w mut W,
    crc: Crc,
}

impl<W: Write> Write for CrcWriter<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(buf.get(..n).unwrap_or_default());
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;
    use crate::warc::{RecordId, RecordType, WarcDate};

    #[test]
    fn members_decode_independently_and_match_flate2() {
        let body: Vec<u8> = (0..50_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        for level in [0, 1, 6, 9] {
            let mut encoder = MemberEncoder::new(level);
            let mut out = Vec::new();
            let mut expected = Vec::new();
            let mut starts = Vec::new();
            for i in 0..3u128 {
                let record = Record::new(
                    RecordType::Resource,
                    RecordId::from_uuid(uuid::Uuid::from_u128(i)),
                    WarcDate::from_unix_micros(0),
                )
                .block_part(&body[..(i as usize + 1) * 1000]);
                starts.push(out.len());
                let raw = encoder.append(&mut out, &record).unwrap();
                assert_eq!(raw, record.to_bytes().len() as u64);
                expected.push(record.to_bytes());
            }
            // Each member alone decodes to its record (with CRC and size checked).
            let mut rest: &[u8] = &out;
            for (i, record) in expected.iter().enumerate() {
                assert_eq!(out.len() - rest.len(), starts[i]);
                let mut decoded = Vec::new();
                flate2::bufread::GzDecoder::new(&mut rest)
                    .read_to_end(&mut decoded)
                    .unwrap();
                assert_eq!(&decoded, record, "level {level} member {i}");
            }
            assert!(rest.is_empty());
            // Same header bytes as flate2's own encoder.
            let mut reference = flate2::write::GzEncoder::new(Vec::new(), Compression::new(level));
            reference.write_all(b"x").unwrap();
            let reference = reference.finish().unwrap();
            assert_eq!(out[..10], reference[..10], "level {level}");
        }
    }
}
