//! `gzip` (RFC 1952): the member header parsed here (FEXTRA, FNAME, FCOMMENT, FHCRC), the
//! deflate data inflated raw, the CRC-32 and size trailer checked; several members in a
//! row, and trailing padding that does not start a member ignored.

#![deny(clippy::indexing_slicing)]

use flate2::Decompress;

use super::deflate::inflate;
use super::{Budget, DecodeError};

/// gzip: member header, raw deflate data, CRC-32 and size trailer; repeated.
pub(super) struct GzipState {
    phase: GzipPhase,
    z: Decompress,
    crc: crc32fast::Hasher,
    /// Decoded size of the current member, modulo 2^32 (RFC 1952 ISIZE).
    member_size: u32,
    /// Header or trailer bytes collected so far (fixed-size parts).
    buf: [u8; 10],
    buf_len: usize,
    /// Members completed.
    members: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GzipPhase {
    /// The 10-byte fixed header.
    Fixed,
    /// The 2-byte FEXTRA length; `flags` are the header flags still to handle.
    ExtraLen { flags: u8 },
    /// FEXTRA payload bytes to skip.
    Extra { flags: u8, remaining: u16 },
    /// A zero-terminated FNAME.
    Name { flags: u8 },
    /// A zero-terminated FCOMMENT.
    Comment { flags: u8 },
    /// The 2-byte header CRC.
    HeaderCrc,
    /// Deflate data.
    Data,
    /// The 8-byte trailer.
    Trailer,
    /// Between members: another member or trailing padding follows.
    Between,
    /// Trailing bytes that are not a gzip member: ignored.
    Garbage,
}

pub(super) const FHCRC: u8 = 0x02;
const FEXTRA: u8 = 0x04;
const FNAME: u8 = 0x08;
const FCOMMENT: u8 = 0x10;
const FRESERVED: u8 = 0xe0;

impl GzipState {
    pub(super) fn new() -> Self {
        GzipState {
            phase: GzipPhase::Fixed,
            z: Decompress::new(false),
            crc: crc32fast::Hasher::new(),
            member_size: 0,
            buf: [0; 10],
            buf_len: 0,
            members: 0,
        }
    }

    pub(super) fn is_complete(&self) -> bool {
        match self.phase {
            GzipPhase::Between | GzipPhase::Garbage => true,
            // Nothing of a further member arrived.
            GzipPhase::Fixed => self.members > 0 && self.buf_len == 0,
            _ => false,
        }
    }

    /// Collects `n` bytes into `buf`; returns true when complete.
    fn collect(&mut self, input: &mut &[u8], n: usize) -> bool {
        while self.buf_len < n {
            let Some((&b, rest)) = input.split_first() else {
                return false;
            };
            if let Some(slot) = self.buf.get_mut(self.buf_len) {
                *slot = b;
            }
            self.buf_len += 1;
            *input = rest;
        }
        self.buf_len = 0;
        true
    }

    /// Skips a zero-terminated field; returns true when its terminator was seen.
    fn skip_zstring(input: &mut &[u8]) -> bool {
        match memchr::memchr(0, input) {
            Some(i) => {
                *input = input.get(i + 1..).unwrap_or_default();
                true
            }
            None => {
                *input = &[];
                false
            }
        }
    }

    /// The header phase after the fields in `flags` that are already handled.
    fn next_header_phase(flags: u8) -> GzipPhase {
        if flags & FEXTRA != 0 {
            GzipPhase::ExtraLen { flags }
        } else if flags & FNAME != 0 {
            GzipPhase::Name { flags }
        } else if flags & FCOMMENT != 0 {
            GzipPhase::Comment { flags }
        } else if flags & FHCRC != 0 {
            GzipPhase::HeaderCrc
        } else {
            GzipPhase::Data
        }
    }

    pub(super) fn push(
        &mut self,
        mut input: &[u8],
        out: &mut Vec<u8>,
        budget: &mut Budget<'_>,
    ) -> Result<(), DecodeError> {
        while !input.is_empty() {
            self.phase = match self.phase {
                GzipPhase::Fixed => {
                    if !self.collect(&mut input, 10) {
                        return Ok(());
                    }
                    let [id1, id2, cm, flags, ..] = self.buf;
                    if id1 != 0x1f || id2 != 0x8b || cm != 8 || flags & FRESERVED != 0 {
                        return Err(DecodeError::Corrupt);
                    }
                    Self::next_header_phase(flags)
                }
                GzipPhase::ExtraLen { flags } => {
                    if !self.collect(&mut input, 2) {
                        return Ok(());
                    }
                    let [lo, hi, ..] = self.buf;
                    GzipPhase::Extra {
                        flags,
                        remaining: u16::from_le_bytes([lo, hi]),
                    }
                }
                GzipPhase::Extra { flags, remaining } => {
                    let skip = usize::from(remaining).min(input.len());
                    input = input.get(skip..).unwrap_or_default();
                    // `skip <= remaining`, a u16.
                    let remaining = remaining - skip as u16;
                    if remaining > 0 {
                        GzipPhase::Extra { flags, remaining }
                    } else {
                        Self::next_header_phase(flags & !FEXTRA)
                    }
                }
                GzipPhase::Name { flags } => {
                    if !Self::skip_zstring(&mut input) {
                        return Ok(());
                    }
                    Self::next_header_phase(flags & !(FEXTRA | FNAME))
                }
                GzipPhase::Comment { flags } => {
                    if !Self::skip_zstring(&mut input) {
                        return Ok(());
                    }
                    Self::next_header_phase(flags & !(FEXTRA | FNAME | FCOMMENT))
                }
                GzipPhase::HeaderCrc => {
                    // The header CRC is optional and rarely sent; it guards only the
                    // header, whose fields we skip, so it is read and not checked.
                    if !self.collect(&mut input, 2) {
                        return Ok(());
                    }
                    GzipPhase::Data
                }
                GzipPhase::Data => {
                    let crc = &mut self.crc;
                    let size = &mut self.member_size;
                    let (used, ended) = inflate(&mut self.z, input, out, budget, |chunk| {
                        crc.update(chunk);
                        // ISIZE is the size modulo 2^32: truncation intended.
                        *size = size.wrapping_add(chunk.len() as u32);
                    })?;
                    input = input.get(used..).unwrap_or_default();
                    if !ended {
                        return Ok(());
                    }
                    GzipPhase::Trailer
                }
                GzipPhase::Trailer => {
                    if !self.collect(&mut input, 8) {
                        return Ok(());
                    }
                    let [c0, c1, c2, c3, s0, s1, s2, s3, ..] = self.buf;
                    let crc = std::mem::take(&mut self.crc).finalize();
                    if u32::from_le_bytes([c0, c1, c2, c3]) != crc
                        || u32::from_le_bytes([s0, s1, s2, s3]) != self.member_size
                    {
                        return Err(DecodeError::Corrupt);
                    }
                    self.members += 1;
                    self.member_size = 0;
                    self.z.reset(false);
                    GzipPhase::Between
                }
                GzipPhase::Between => {
                    // Another member starts with the magic; anything else (zero padding,
                    // junk) ends the body, as in browsers.
                    match input {
                        [0x1f, 0x8b, ..] => GzipPhase::Fixed,
                        [0x1f] => {
                            // Undecided until the next byte; keep it for the header.
                            self.buf = [0x1f, 0, 0, 0, 0, 0, 0, 0, 0, 0];
                            self.buf_len = 1;
                            input = &[];
                            GzipPhase::Fixed
                        }
                        _ => GzipPhase::Garbage,
                    }
                }
                GzipPhase::Garbage => {
                    input = &[];
                    GzipPhase::Garbage
                }
            };
        }
        Ok(())
    }
}
