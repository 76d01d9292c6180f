//! gzip members (RFC 1952), one per record, with the compressor state reused from
//! member to member where the implementation allows it.
//!
//! Three deflate implementations, chosen by measurement (`examples/deflate_mix.rs` and
//! `benches/warc.rs`, group `deflate_mix`; figures in `docs/warc.md`, "Compression
//! level and implementation"):
//! - [`Deflater::Igzip`] (the default): ISA-L's igzip for levels 1-3 (its own levels 0,
//!   1 and 3), libdeflate for 0 (stored blocks) and 4-12. Records shorter than
//!   [`IGZIP_MIN_BYTES`] (a capture's `request` and `metadata`) get, at level 1, igzip's
//!   level 0 with Huffman codes fitted to such records and built once per process
//!   ([`HuffmanCodes::SmallRecords`]), at levels 2 and 3 libdeflate's same level. On
//!   real HTML, one member per response record, igzip's level 0 is twice as fast as
//!   libdeflate's level 1 for members 14% larger; its level 1 is 1.5 times as fast for
//!   members 5% larger.
//! - [`Deflater::Libdeflate`]: libdeflate compresses a whole buffer in one call, which
//!   suits us because a record is in memory anyway. Levels 0-12.
//! - [`Deflater::ZlibRs`]: flate2's streaming `DeflateEncoder` over zlib-rs, reset
//!   between members (a fresh `GzEncoder` per member would allocate and zero hundreds of
//!   KB each time). Levels 0-9.
//!
//! igzip and libdeflate write the gzip header and trailer themselves (CRC-32 with
//! carry-less multiply instructions where the CPU has them); the 10-byte header and
//! 8-byte trailer are written here for zlib-rs.

use std::io::{self, Write};

use flate2::write::DeflateEncoder;
use flate2::{Compression, Crc};

use super::igzip::{HuffmanCodes, Igzip, IgzipLevel};
use super::record::Record;

/// Which deflate implementation compresses the members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Deflater {
    /// ISA-L's igzip (C and assembly, whole-buffer) for levels 1-3, which are its levels
    /// 0, 1 and 3; libdeflate for level 0 (stored) and levels 4-12 (libdeflate's 4-12).
    /// Records shorter than [`IGZIP_MIN_BYTES`]: at level 1, igzip's level 0 with codes
    /// fitted to small records; at levels 2 and 3, libdeflate's same level.
    #[default]
    Igzip,
    /// libdeflate (C, whole-buffer); levels 0-12.
    Libdeflate,
    /// zlib-rs through flate2 (streaming); levels 0-9.
    ZlibRs,
}

impl Deflater {
    /// The highest level the implementation takes.
    pub const fn max_level(self) -> u32 {
        match self {
            Self::Igzip | Self::Libdeflate => 12,
            Self::ZlibRs => 9,
        }
    }

    /// The level trawl uses unless told otherwise: 1, the fastest that compresses
    /// (for [`Deflater::Igzip`], igzip's level 0; see `docs/warc.md`).
    pub const fn default_level(self) -> u32 {
        match self {
            Self::Igzip | Self::Libdeflate | Self::ZlibRs => 1,
        }
    }

    /// Checks `level` against the implementation's range.
    ///
    /// # Errors
    /// [`LevelError`] when the level is above [`Deflater::max_level`].
    pub fn check_level(self, level: u32) -> Result<u32, LevelError> {
        if level > self.max_level() {
            return Err(LevelError {
                level,
                max: self.max_level(),
            });
        }
        Ok(level)
    }
}

/// A gzip level out of the implementation's range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("gzip level {level} is out of range: 0 (store) to {max} (smallest)")]
pub struct LevelError {
    /// The level asked for.
    pub level: u32,
    /// The implementation's highest level.
    pub max: u32,
}

/// Records shorter than this are small records under [`Deflater::Igzip`]: at level 1,
/// compressed by igzip's level 0 with codes fitted to them
/// ([`HuffmanCodes::SmallRecords`]), at levels 2 and 3 by libdeflate. On the `request`
/// and `metadata` records of a capture (0.3-3 KB) igzip's default codes write members
/// 33% larger than libdeflate's level 1 (their block header alone is 110 bytes), the
/// fitted codes 9% larger for a quarter of the CPU time: libdeflate builds a Huffman
/// code for every member (`docs/warc.md`).
pub const IGZIP_MIN_BYTES: usize = 4096;

enum Backend {
    /// igzip, stateless: each member is compressed in one call, the stream reset and
    /// the level buffer kept ([`Igzip`]); records under [`IGZIP_MIN_BYTES`] go to
    /// `small`.
    Igzip {
        igzip: Igzip,
        small: Small,
        /// The record serialized, reused between members.
        scratch: Vec<u8>,
    },
    ZlibRs(DeflateEncoder<Vec<u8>>),
    Libdeflate {
        compressor: libdeflater::Compressor,
        /// The record serialized, reused between members.
        scratch: Vec<u8>,
    },
}

/// Compresses records into gzip members, reusing its compressor state.
pub struct MemberEncoder {
    backend: Backend,
    deflater: Deflater,
    level: u32,
}

impl Clone for MemberEncoder {
    /// The same implementation and level, with a fresh compressor state.
    fn clone(&self) -> Self {
        Self::with_deflater(self.deflater(), self.level)
    }
}

impl std::fmt::Debug for MemberEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemberEncoder")
            .field("deflater", &self.deflater())
            .field("level", &self.level)
            .finish_non_exhaustive()
    }
}

impl MemberEncoder {
    /// A zlib-rs encoder at gzip `level` (0-9; higher values are taken as 9).
    pub fn new(level: u32) -> Self {
        Self::with_deflater(Deflater::ZlibRs, level)
    }

    /// An encoder of `deflater` at `level` (above the implementation's range, its
    /// highest level; [`Deflater::check_level`] is for input from users).
    pub fn with_deflater(deflater: Deflater, level: u32) -> Self {
        let level = level.min(deflater.max_level());
        let igzip_level = match level {
            1 => Some(IgzipLevel::Zero),
            2 => Some(IgzipLevel::One),
            3 => Some(IgzipLevel::Three),
            _ => None,
        };
        let libdeflate = || {
            let lvl = libdeflater::CompressionLvl::new(level as i32)
                .unwrap_or_else(|_| libdeflater::CompressionLvl::fastest());
            libdeflater::Compressor::new(lvl)
        };
        let backend = match (deflater, igzip_level) {
            (Deflater::Igzip, Some(level)) => Backend::Igzip {
                igzip: Igzip::new(level),
                small: match level {
                    IgzipLevel::Zero => Small::Igzip(Igzip::with_codes(
                        IgzipLevel::Zero,
                        HuffmanCodes::SmallRecords,
                    )),
                    IgzipLevel::One | IgzipLevel::Three => Small::Libdeflate(libdeflate()),
                },
                scratch: Vec::with_capacity(64 * 1024),
            },
            (Deflater::ZlibRs, _) => Backend::ZlibRs(DeflateEncoder::new(
                Vec::with_capacity(64 * 1024),
                Compression::new(level),
            )),
            (Deflater::Libdeflate | Deflater::Igzip, _) => Backend::Libdeflate {
                compressor: libdeflate(),
                scratch: Vec::with_capacity(64 * 1024),
            },
        };
        Self {
            backend,
            deflater,
            level,
        }
    }

    /// The implementation asked for (for [`Deflater::Igzip`] at levels 0 and 4-12,
    /// libdeflate does the work).
    pub fn deflater(&self) -> Deflater {
        self.deflater
    }

    /// The level in use.
    pub fn level(&self) -> u32 {
        self.level
    }

    /// Appends `record` to `out` as one complete gzip member; returns the record's
    /// uncompressed size.
    ///
    /// # Errors
    /// Only if compression itself fails (it does not on valid input); `out` may then
    /// hold a partial member, which the caller discards.
    pub fn append(&mut self, out: &mut Vec<u8>, record: &Record<'_>) -> io::Result<u64> {
        match &mut self.backend {
            Backend::Igzip {
                igzip,
                small,
                scratch,
            } => {
                scratch.clear();
                record.write_to(scratch)?;
                igzip_or_small(igzip, small, scratch, out)?;
                Ok(scratch.len() as u64)
            }
            Backend::Libdeflate {
                compressor,
                scratch,
            } => {
                scratch.clear();
                record.write_to(scratch)?;
                compress_whole(compressor, scratch, out)?;
                Ok(scratch.len() as u64)
            }
            Backend::ZlibRs(deflate) => append_zlib(deflate, self.level, out, record),
        }
    }

    /// Appends `raw` (a serialized record) to `out` as one gzip member; returns its
    /// length.
    ///
    /// # Errors
    /// As [`MemberEncoder::append`].
    pub fn append_raw(&mut self, out: &mut Vec<u8>, raw: &[u8]) -> io::Result<u64> {
        match &mut self.backend {
            Backend::Igzip { igzip, small, .. } => igzip_or_small(igzip, small, raw, out)?,
            Backend::Libdeflate { compressor, .. } => compress_whole(compressor, raw, out)?,
            Backend::ZlibRs(deflate) => {
                write_zlib_member(deflate, self.level, out, |sink| sink.write_all(raw))?;
            }
        }
        Ok(raw.len() as u64)
    }
}

/// Appends `raw` to `out` as one gzip member by libdeflate. The bound is zero-filled
/// first (libdeflate takes an initialized slice): measured on 20 KB records, that costs
/// as much as compressing into a reused scratch and copying out, and less at level 0.
fn compress_whole(
    compressor: &mut libdeflater::Compressor,
    raw: &[u8],
    out: &mut Vec<u8>,
) -> io::Result<()> {
    let start = out.len();
    out.resize(start + compressor.gzip_compress_bound(raw.len()), 0);
    let written = out
        .get_mut(start..)
        .map(|dest| compressor.gzip_compress(raw, dest));
    match written {
        Some(Ok(n)) => {
            out.truncate(start + n);
            Ok(())
        }
        _ => {
            out.truncate(start);
            Err(io::Error::other("libdeflate: output buffer too small"))
        }
    }
}

/// How [`Backend::Igzip`] compresses records under [`IGZIP_MIN_BYTES`].
enum Small {
    /// Level 1 (igzip's 0): igzip's level 0 with Huffman codes made once for such
    /// records ([`HuffmanCodes::SmallRecords`]), so no call builds a Huffman code.
    Igzip(Igzip),
    /// Levels 2 and 3: libdeflate at the same level.
    Libdeflate(libdeflater::Compressor),
}

fn igzip_or_small(
    igzip: &mut Igzip,
    small: &mut Small,
    raw: &[u8],
    out: &mut Vec<u8>,
) -> io::Result<()> {
    match small {
        _ if raw.len() >= IGZIP_MIN_BYTES => igzip.compress(raw, out),
        Small::Igzip(small) => small.compress(raw, out),
        Small::Libdeflate(compressor) => compress_whole(compressor, raw, out),
    }
}

fn append_zlib(
    deflate: &mut DeflateEncoder<Vec<u8>>,
    level: u32,
    out: &mut Vec<u8>,
    record: &Record<'_>,
) -> io::Result<u64> {
    write_zlib_member(deflate, level, out, |sink| record.write_to(sink))
}

fn write_zlib_member(
    deflate: &mut DeflateEncoder<Vec<u8>>,
    level: u32,
    out: &mut Vec<u8>,
    write: impl FnOnce(&mut CrcWriter<'_, DeflateEncoder<Vec<u8>>>) -> io::Result<()>,
) -> io::Result<u64> {
    // Header: magic, CM=8 (deflate), FLG=0, MTIME=0, XFL (2 = best, 4 = fast,
    // as zlib sets it), OS=255 (unknown), as flate2's GzEncoder writes it.
    let xfl = match level {
        9 => 2,
        0 | 1 => 4,
        _ => 0,
    };
    out.extend_from_slice(&[0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, xfl, 0xff]);
    let mut sink = CrcWriter {
        inner: deflate,
        crc: Crc::new(),
    };
    write(&mut sink)?;
    let crc = sink.crc;
    // `reset` finishes the deflate stream and hands back the finished bytes.
    let mut deflated = deflate.reset(Vec::new())?;
    out.extend_from_slice(&deflated);
    deflated.clear();
    *deflate.get_mut() = deflated;
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&crc.amount().to_le_bytes());
    Ok(u64::from(crc.amount()))
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
    use crate::provenance::WarcDate;
    use crate::warc::{RecordId, RecordType};

    #[test]
    fn members_decode_independently_and_match_flate2() {
        let body: Vec<u8> = (0..50_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let cases = [0, 1, 6, 9]
            .map(|l| (Deflater::ZlibRs, l))
            .into_iter()
            .chain([0, 1, 6, 12].map(|l| (Deflater::Libdeflate, l)))
            .chain((0..=12).map(|l| (Deflater::Igzip, l)));
        for (deflater, level) in cases {
            let mut encoder = MemberEncoder::with_deflater(deflater, level);
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
                assert_eq!(&decoded, record, "{deflater:?} {level} member {i}");
            }
            assert!(rest.is_empty());
            if deflater != Deflater::ZlibRs {
                continue;
            }
            // Same header bytes as flate2's own encoder.
            let mut reference = flate2::write::GzEncoder::new(Vec::new(), Compression::new(level));
            reference.write_all(b"x").unwrap();
            let reference = reference.finish().unwrap();
            assert_eq!(out[..10], reference[..10], "level {level}");
        }
    }

    #[test]
    fn levels_out_of_range_are_refused() {
        assert_eq!(Deflater::ZlibRs.check_level(9), Ok(9));
        assert_eq!(Deflater::Libdeflate.check_level(12), Ok(12));
        let err = Deflater::ZlibRs.check_level(10).unwrap_err();
        assert_eq!(
            err.to_string(),
            "gzip level 10 is out of range: 0 (store) to 9 (smallest)"
        );
        assert!(Deflater::Libdeflate.check_level(13).is_err());
    }

    #[test]
    fn append_raw_decodes_like_append() {
        let record = Record::new(
            RecordType::Resource,
            RecordId::from_uuid(uuid::Uuid::from_u128(7)),
            WarcDate::from_unix_micros(0),
        )
        .block_part(b"<html>hello</html>");
        for deflater in [Deflater::ZlibRs, Deflater::Libdeflate, Deflater::Igzip] {
            let mut encoder = MemberEncoder::with_deflater(deflater, 1);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            encoder.append(&mut a, &record).unwrap();
            encoder.append_raw(&mut b, &record.to_bytes()).unwrap();
            // Streamed in parts or whole, zlib may cut its blocks differently: compare
            // what the members decode to.
            for member in [a, b] {
                let mut decoded = Vec::new();
                flate2::read::GzDecoder::new(member.as_slice())
                    .read_to_end(&mut decoded)
                    .unwrap();
                assert_eq!(decoded, record.to_bytes(), "{deflater:?}");
            }
        }
    }

    /// Every level of every implementation, over input deflate cannot shrink (stored
    /// blocks past the 64 KiB block size), text, and nothing: each member decodes to its
    /// input with CRC-32 and size checked, and alone.
    #[test]
    fn every_level_round_trips_incompressible_text_and_empty_input() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let noise: Vec<u8> = (0..200_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let text = b"<li><a href=\"/wiki/Page\">Page</a></li>\n".repeat(3000);
        let inputs: [&[u8]; 3] = [&noise, &text, b""];
        for deflater in [Deflater::Igzip, Deflater::Libdeflate, Deflater::ZlibRs] {
            for level in 0..=deflater.max_level() {
                let mut encoder = MemberEncoder::with_deflater(deflater, level);
                for input in inputs {
                    let mut out = vec![0xaa];
                    assert_eq!(
                        encoder.append_raw(&mut out, input).unwrap(),
                        input.len() as u64
                    );
                    assert_eq!(out[..3], [0xaa, 0x1f, 0x8b], "{deflater:?} {level}");
                    let mut decoded = Vec::new();
                    flate2::read::GzDecoder::new(&out[1..])
                        .read_to_end(&mut decoded)
                        .unwrap();
                    assert_eq!(decoded, input, "{deflater:?} {level} {}", input.len());
                    if input.len() == noise.len() && deflater != Deflater::ZlibRs {
                        // At most the stored size plus framing (zlib-rs does not fall
                        // back to stored blocks: 5% larger at level 1).
                        let grown = out.len() as f64 / input.len() as f64;
                        assert!(grown < 1.001, "{deflater:?} {level}: {grown}");
                    }
                    if input.len() == text.len() && level > 0 {
                        assert!(out.len() < input.len() / 10, "{deflater:?} {level}");
                    }
                }
            }
        }
    }

    #[test]
    fn igzip_levels_map_onto_igzip_and_libdeflate() {
        let text = b"<p>the crawler fetched the page and wrote the record</p>\n".repeat(500);
        let size = |deflater, level| {
            let mut out = Vec::new();
            MemberEncoder::with_deflater(deflater, level)
                .append_raw(&mut out, &text)
                .unwrap();
            out
        };
        // 0 and 4-12 are libdeflate's own levels, byte for byte.
        for level in [0, 4, 6, 12] {
            assert_eq!(
                size(Deflater::Igzip, level),
                size(Deflater::Libdeflate, level),
                "level {level}"
            );
        }
        // Under IGZIP_MIN_BYTES, level 1 is igzip's level 0 with the small-record codes,
        // every other level libdeflate's; at IGZIP_MIN_BYTES, level 1 is igzip's level 0
        // with its default codes.
        let short = &text[..IGZIP_MIN_BYTES - 1];
        let igzip_zero = |codes, raw: &[u8]| {
            let mut out = Vec::new();
            Igzip::with_codes(IgzipLevel::Zero, codes)
                .compress(raw, &mut out)
                .unwrap();
            out
        };
        for level in 0..=12 {
            let mut a = Vec::new();
            let mut b = Vec::new();
            MemberEncoder::with_deflater(Deflater::Igzip, level)
                .append_raw(&mut a, short)
                .unwrap();
            MemberEncoder::with_deflater(Deflater::Libdeflate, level)
                .append_raw(&mut b, short)
                .unwrap();
            if level == 1 {
                assert_ne!(a, b);
                assert_eq!(a, igzip_zero(HuffmanCodes::SmallRecords, short));
            } else {
                assert_eq!(a, b, "level {level}");
            }
        }
        let long = &text[..IGZIP_MIN_BYTES];
        let mut a = Vec::new();
        MemberEncoder::with_deflater(Deflater::Igzip, 1)
            .append_raw(&mut a, long)
            .unwrap();
        assert_eq!(a, igzip_zero(HuffmanCodes::Default, long));
        assert_ne!(a, igzip_zero(HuffmanCodes::SmallRecords, long));
        // 1-3 are igzip's: other bytes than libdeflate's at the same level.
        for level in 1..=3 {
            assert_ne!(
                size(Deflater::Igzip, level),
                size(Deflater::Libdeflate, level),
                "level {level}"
            );
        }
        let encoder = MemberEncoder::with_deflater(Deflater::Igzip, 99);
        assert_eq!((encoder.deflater(), encoder.level()), (Deflater::Igzip, 12));
        assert_eq!(Deflater::default(), Deflater::Igzip);
        assert_eq!(Deflater::default().default_level(), 1);
    }
}
