//! ISA-L's igzip, called through its C API (`isal-sys`), one stateless call per gzip
//! member, with the stream and the level buffer kept between members.
//!
//! Why not the `isal-rs` wrapper: it builds a fresh 82 KB `isal_zstream` on the stack
//! for every call (copied twice as it moves), allocates and zeroes the level buffer
//! (276 KiB at igzip's level 1) for every call, and calls `assume_init` on a
//! `hufftables` struct ISA-L never writes (undefined behaviour in safe code). Here the
//! stream is boxed once and `isal_deflate_stateless_init` resets it, and the level
//! buffer is allocated once per encoder (ISA-L initializes the part it uses itself).
//!
//! The whole input is in memory (a serialized record), so the stateless call
//! compresses it in one go; the output buffer gets ISA-L's documented bound (the input
//! as stored blocks plus headers), so it never overflows.

#![allow(
    unsafe_code,
    reason = "ISA-L's C API: the stream init and the stateless deflate call, a zeroed C \
              struct, and the output length ISA-L wrote (docs/safety.md)"
)]

use std::io;

use isal_sys::igzip_lib as sys;

/// igzip's own levels: 0 (fastest, no level buffer), 1 and 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IgzipLevel {
    Zero,
    One,
    Three,
}

impl IgzipLevel {
    fn number(self) -> u32 {
        match self {
            Self::Zero => 0,
            Self::One => 1,
            Self::Three => 3,
        }
    }

    /// ISA-L's suggested level-buffer size for the level (`ISAL_DEF_LVLx_DEFAULT`).
    fn buffer_bytes(self) -> usize {
        match self {
            Self::Zero => sys::ISAL_DEF_LVL0_DEFAULT as usize,
            Self::One => sys::ISAL_DEF_LVL1_DEFAULT as usize,
            Self::Three => sys::ISAL_DEF_LVL3_DEFAULT as usize,
        }
    }
}

/// A reusable igzip compressor for whole gzip members.
pub struct Igzip {
    /// Boxed: 82 KB, and ISA-L keeps pointers into the caller's buffers only for the
    /// duration of a call, so the box never needs to stay pinned between calls.
    stream: Box<sys::isal_zstream>,
    level: IgzipLevel,
    level_buf: Vec<u8>,
}

// SAFETY: the raw pointers inside the stream point into the caller's buffers only
// during `compress` (they are nulled before it returns) or to ISA-L's static default
// Huffman tables; ISA-L keeps no thread-local state, so the compressor may move to
// another thread between calls.
unsafe impl Send for Igzip {}

impl std::fmt::Debug for Igzip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Igzip")
            .field("level", &self.level)
            .finish_non_exhaustive()
    }
}

impl Igzip {
    /// A compressor at `level`.
    pub fn new(level: IgzipLevel) -> Self {
        // SAFETY: `isal_zstream` is a C struct of integers, raw pointers and arrays of
        // them (bindgen's enums are `c_uint` aliases), for which all-zero bytes are a
        // valid value; `isal_deflate_stateless_init` sets every field it reads before
        // each call anyway. Tested by `members_round_trip_at_every_level`.
        let stream: Box<sys::isal_zstream> = unsafe { Box::new(std::mem::zeroed()) };
        Self {
            stream,
            level,
            level_buf: vec![0; level.buffer_bytes()],
        }
    }

    /// The most bytes a member of `len` input bytes can take: the input as stored
    /// blocks (5 bytes a 64 KiB block), the gzip header and trailer, with room to spare.
    pub fn bound(len: usize) -> usize {
        len + len / 4096 + 1024
    }

    /// Appends `raw` to `out` as one complete gzip member.
    ///
    /// # Errors
    /// When ISA-L reports a failure (it does not with the bound given); `out` is then
    /// left as it was.
    pub fn compress(&mut self, raw: &[u8], out: &mut Vec<u8>) -> io::Result<()> {
        let (Ok(avail_in), Ok(level_buf_size)) = (
            u32::try_from(raw.len()),
            u32::try_from(self.level_buf.len()),
        ) else {
            return Err(io::Error::other("igzip: record over 4 GiB"));
        };
        let start = out.len();
        let bound = Self::bound(raw.len());
        out.reserve(bound);
        let spare = out.spare_capacity_mut();
        let avail_out = u32::try_from(spare.len().min(bound)).unwrap_or(u32::MAX);
        let stream = &mut *self.stream;
        // SAFETY: `stream` is a valid, exclusively borrowed `isal_zstream`.
        unsafe { sys::isal_deflate_stateless_init(stream) };
        stream.level = self.level.number();
        stream.level_buf = if self.level_buf.is_empty() {
            std::ptr::null_mut()
        } else {
            self.level_buf.as_mut_ptr()
        };
        stream.level_buf_size = level_buf_size;
        stream.gzip_flag = sys::IGZIP_GZIP as u16;
        stream.flush = sys::NO_FLUSH as u16;
        stream.end_of_stream = 1;
        // ISA-L reads the input through a `*mut` it never writes through.
        stream.next_in = raw.as_ptr().cast_mut();
        stream.avail_in = avail_in;
        stream.next_out = spare.as_mut_ptr().cast::<u8>();
        stream.avail_out = avail_out;
        // SAFETY: `next_in`/`avail_in` describe `raw`, borrowed for this call;
        // `next_out`/`avail_out` describe uninitialized spare capacity of `out` that
        // ISA-L only writes; `level_buf`/`level_buf_size` describe our buffer (or null
        // and 0 at level 0, which needs none). None of these pointers is kept after
        // the call: the next call re-initializes the stream.
        let rc = unsafe { sys::isal_deflate_stateless(stream) };
        let written = stream.total_out as usize;
        stream.next_in = std::ptr::null_mut();
        stream.next_out = std::ptr::null_mut();
        stream.level_buf = std::ptr::null_mut();
        if rc != sys::COMP_OK as i32 || written > avail_out as usize {
            return Err(io::Error::other(format!("igzip: error {rc}")));
        }
        // SAFETY: ISA-L wrote `written` bytes (at most `avail_out`, checked above) at
        // the start of the spare capacity.
        unsafe { out.set_len(start + written) };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    fn gunzip(member: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(member)
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    #[test]
    fn members_round_trip_at_every_level() {
        let text: Vec<u8> = b"<p>a crawler's page of text, <a href=\"/x\">links</a></p>\n"
            .iter()
            .copied()
            .cycle()
            .take(150_000)
            .collect();
        let noise: Vec<u8> = (0..200_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for level in [IgzipLevel::Zero, IgzipLevel::One, IgzipLevel::Three] {
            let mut z = Igzip::new(level);
            for input in [&b""[..], b"x", &text[..100], &text, &noise] {
                // Twice, and after other inputs: the reused state must not leak.
                for _ in 0..2 {
                    let mut out = b"prefix".to_vec();
                    z.compress(input, &mut out).unwrap();
                    assert_eq!(&out[..6], b"prefix");
                    assert!(out.len() - 6 <= Igzip::bound(input.len()));
                    assert_eq!(gunzip(&out[6..]), input, "{level:?} {}", input.len());
                }
            }
            let mut out = Vec::new();
            z.compress(&text, &mut out).unwrap();
            assert!(out.len() < text.len() / 10, "{level:?} compresses");
        }
    }
}
