//! Where the scanner's bytes are, 64 at a time: for each 64-byte block of the page two
//! bit masks (bit `i` for byte `i` of the block), one of `<` and one of the bytes that
//! end or complicate a tag (`>`, `"`, `'`; built only for the blocks where it is asked
//! for, as most text blocks hold no tag with attributes), built with SSE2 on x86_64 (part of its
//! baseline, so no runtime detection is needed) and by a scalar loop elsewhere. The
//! scanner asks for the next `<` or the next stop byte at or after a position; the
//! block it last looked at is cached, so the walk from tag to tag costs a few bit
//! operations instead of a `memchr` call per tag (whose set-up dominated the short hops
//! between tags). `docs/safety.md` lists the `unsafe` below.

#![allow(
    unsafe_code,
    reason = "SSE2 loads of 16 bytes inside a 64-byte array (docs/safety.md)"
)]
#![deny(clippy::indexing_slicing)]

/// The masks of one block.
#[derive(Clone, Copy)]
struct Block {
    /// Offset of the block in the page (a multiple of 64), `usize::MAX` before the
    /// first lookup.
    start: usize,
    lt: u64,
    /// The stop mask, once asked for.
    stop: Option<u64>,
}

/// Which mask a lookup reads.
#[derive(Clone, Copy)]
pub(super) enum Mark {
    /// `<`
    Lt,
    /// `>`, `"` or `'`
    Stop,
}

/// The lookups over one page, with the last block's masks cached.
pub(super) struct Marks<'a> {
    bytes: &'a [u8],
    block: Block,
    simd: bool,
}

impl<'a> Marks<'a> {
    /// Lookups over `bytes`, with SIMD where the target has it.
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Self::with_simd(
            bytes,
            cfg!(all(target_arch = "x86_64", target_feature = "sse2")),
        )
    }

    /// Lookups over `bytes`; `simd: false` forces the scalar masks (tests).
    pub(super) fn with_simd(bytes: &'a [u8], simd: bool) -> Self {
        Marks {
            bytes,
            block: Block {
                start: usize::MAX,
                lt: 0,
                stop: None,
            },
            simd,
        }
    }

    /// Lookups over `bytes` on the same path (SIMD or scalar) as these.
    pub(super) fn over<'b>(&self, bytes: &'b [u8]) -> Marks<'b> {
        Marks::with_simd(bytes, self.simd)
    }

    /// The page.
    pub(super) fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The position of the first byte of kind `mark` at or after `from`.
    #[inline]
    pub(super) fn next(&mut self, mark: Mark, from: usize) -> Option<usize> {
        let mut start = from & !63;
        let mut shift = from & 63;
        while start < self.bytes.len() {
            if self.block.start != start {
                self.block = Block {
                    start,
                    lt: self.mask(start, Mark::Lt),
                    stop: None,
                };
            }
            let mask = match mark {
                Mark::Lt => self.block.lt,
                Mark::Stop => match self.block.stop {
                    Some(stop) => stop,
                    None => {
                        let stop = self.mask(start, Mark::Stop);
                        self.block.stop = Some(stop);
                        stop
                    }
                },
            } >> shift;
            if mask != 0 {
                return Some(start + shift + mask.trailing_zeros() as usize);
            }
            start += 64;
            shift = 0;
        }
        None
    }

    /// The first `byte` (one of the stop bytes) at or after `from`.
    #[inline]
    pub(super) fn next_stop_byte(&mut self, byte: u8, from: usize) -> Option<usize> {
        let mut at = from;
        loop {
            let found = self.next(Mark::Stop, at)?;
            if self.bytes.get(found) == Some(&byte) {
                return Some(found);
            }
            at = found + 1;
        }
    }

    /// The `mark` mask of the block at `start`.
    #[inline(always)]
    fn mask(&self, start: usize, mark: Mark) -> u64 {
        let rest = self.bytes.get(start..).unwrap_or_default();
        match rest.first_chunk::<64>() {
            Some(chunk) => mask(chunk, mark, self.simd),
            None => {
                // The page's last, partial block: zero bytes match nothing.
                let mut chunk = [0u8; 64];
                for (dst, src) in chunk.iter_mut().zip(rest) {
                    *dst = *src;
                }
                mask(&chunk, mark, self.simd)
            }
        }
    }
}

/// The `mark` mask of one block.
#[inline]
fn mask(chunk: &[u8; 64], mark: Mark, simd: bool) -> u64 {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if simd {
        return mask_sse2(chunk, mark);
    }
    let _ = simd;
    mask_scalar(chunk, mark)
}

/// The mask by a plain loop (targets without SSE2, and the tests' reference).
fn mask_scalar(chunk: &[u8; 64], mark: Mark) -> u64 {
    let mut out = 0;
    for (i, &b) in chunk.iter().enumerate() {
        let hit = match mark {
            Mark::Lt => b == b'<',
            Mark::Stop => matches!(b, b'>' | b'"' | b'\''),
        };
        out |= u64::from(hit) << i;
    }
    out
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline]
fn mask_sse2(chunk: &[u8; 64], mark: Mark) -> u64 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    let mut out = 0;
    // SAFETY: SSE2 is enabled at compile time (the cfg above; it is part of the
    // x86_64 baseline), so every intrinsic here exists on the running CPU. Each
    // unaligned load reads the 16 bytes `chunk[16 * k..16 * k + 16]` for k < 4, inside
    // the 64-byte array borrowed for the whole call (`_mm_loadu_si128` has no
    // alignment requirement).
    unsafe {
        let lt = _mm_set1_epi8(b'<' as i8);
        let gt = _mm_set1_epi8(b'>' as i8);
        let dquote = _mm_set1_epi8(b'"' as i8);
        let squote = _mm_set1_epi8(b'\'' as i8);
        let base = chunk.as_ptr();
        for k in 0..4 {
            let v = _mm_loadu_si128(base.add(16 * k).cast::<__m128i>());
            let hits = match mark {
                Mark::Lt => _mm_cmpeq_epi8(v, lt),
                Mark::Stop => _mm_or_si128(
                    _mm_cmpeq_epi8(v, gt),
                    _mm_or_si128(_mm_cmpeq_epi8(v, dquote), _mm_cmpeq_epi8(v, squote)),
                ),
            };
            // movemask sets only the low 16 bits.
            out |= u64::from(_mm_movemask_epi8(hits) as u16) << (16 * k);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small xorshift generator: tests need no seed file and no crate.
    fn bytes(seed: u64, len: usize, alphabet: &[u8]) -> Vec<u8> {
        let mut x = seed | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                alphabet
                    .get((x % alphabet.len() as u64) as usize)
                    .copied()
                    .unwrap_or(0)
            })
            .collect()
    }

    #[test]
    fn simd_and_scalar_masks_agree() {
        let every: Vec<u8> = (0..=255).collect();
        for seed in 0..500 {
            let alphabet: &[u8] = if seed % 2 == 0 { b"<>\"'a =/" } else { &every };
            let block = bytes(seed, 64, alphabet);
            let chunk: [u8; 64] = block.try_into().expect("64 bytes");
            for mark in [Mark::Lt, Mark::Stop] {
                let want = mask_scalar(&chunk, mark);
                assert_eq!(mask(&chunk, mark, true), want, "seed {seed}");
            }
        }
    }

    #[test]
    fn lookups_match_a_linear_search_on_both_paths() {
        for seed in 0..200 {
            let page = bytes(seed, (seed as usize * 7) % 300, b"<>\"'abc");
            for simd in [true, false] {
                let mut marks = Marks::with_simd(&page, simd);
                for from in 0..=page.len() + 70 {
                    let tail = page.get(from..).unwrap_or_default();
                    let lt = tail.iter().position(|&b| b == b'<').map(|n| from + n);
                    let stop = tail
                        .iter()
                        .position(|&b| matches!(b, b'>' | b'"' | b'\''))
                        .map(|n| from + n);
                    let quote = tail.iter().position(|&b| b == b'\'').map(|n| from + n);
                    assert_eq!(marks.next(Mark::Lt, from), lt, "seed {seed} from {from}");
                    assert_eq!(
                        marks.next(Mark::Stop, from),
                        stop,
                        "seed {seed} from {from}"
                    );
                    assert_eq!(marks.next_stop_byte(b'\'', from), quote);
                }
            }
        }
    }
}
