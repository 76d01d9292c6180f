//! Stable hashing of keys to a block and `k` bit positions.
//!
//! These bits persist in checkpoints that must load next year on another machine, so
//! the mapping from key bytes to bits is part of the file format (hash algorithm id 1):
//!
//! 1. `(lo, hi) = xxh3_128(key, seed)` (XXH3 is specified byte-for-byte and gives the
//!    same answer on every platform; `xxhash-rust` implements it without SIMD-dependent
//!    differences in output).
//! 2. block = `(lo × blocks) >> 64` (Lemire's multiply-shift range reduction over the
//!    full 64 bits, so there is no modulo bias worth measuring).
//! 3. positions: 9-bit fields taken from a stream of 64-bit words, 7 per word, starting
//!    with `w0 = hi` and continuing with `w(i+1) = fmix64(w(i) + 0x9E3779B97F4A7C15)`
//!    (the SplitMix64 finaliser). Bit `p` of a block is bit `p % 64` of the block's
//!    little-endian word `p / 64`.
//!
//! Never change any of this without a new algorithm id in the header. In-memory maps
//! elsewhere in trawl use a fast non-persistent hash (ahash); never use one here.

use xxhash_rust::xxh3::xxh3_128_with_seed;

use super::model::BLOCK_WORDS;

/// Hash algorithm id written in the header for the scheme above.
pub const HASH_ALGORITHM_XXH3_128: u32 = 1;
/// The default seed: fixed, so that two sets built from the same keys have the same bits.
pub const DEFAULT_SEED: u64 = 0x7472_6177_6C5F_7365; // "trawl_se"

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// The SplitMix64 / MurmurHash3 64-bit finaliser: a bijection with full avalanche.
#[inline]
fn fmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Where one key lives: its block and the bits it owns there, as eight little-endian
/// word masks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Probe {
    /// Block index in `0..blocks`.
    pub block: u64,
    /// Bit masks for the block's 8 words (logical, little-endian bit numbering).
    pub masks: [u64; BLOCK_WORDS],
}

/// The hashing parameters of one set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hasher {
    pub(crate) seed: u64,
    pub(crate) blocks: u64,
    pub(crate) k: u32,
}

impl Hasher {
    /// Maps `key` to its block and bits.
    #[inline]
    pub fn probe(&self, key: &[u8]) -> Probe {
        let h = xxh3_128_with_seed(key, self.seed);
        let lo = h as u64;
        let hi = (h >> 64) as u64;
        let block = ((u128::from(lo) * u128::from(self.blocks)) >> 64) as u64;
        let mut masks = [0u64; BLOCK_WORDS];
        let mut stream = hi; // w(i), kept whole to derive w(i+1)
        let mut word = hi; // w(i), consumed 9 bits at a time
        let mut left_in_word = 7;
        for _ in 0..self.k {
            if left_in_word == 0 {
                stream = fmix64(stream.wrapping_add(GOLDEN));
                word = stream;
                left_in_word = 7;
            }
            let pos = (word & 511) as usize;
            word >>= 9;
            left_in_word -= 1;
            // pos < 512, so pos / 64 < 8 = BLOCK_WORDS.
            if let Some(m) = masks.get_mut(pos / 64) {
                *m |= 1u64 << (pos % 64);
            }
        }
        Probe { block, masks }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOLDEN_PROBE: (u64, [u64; 8]) = (
        395_352,
        [
            1 << 47,
            0,
            1 << 5,
            (1 << 23) | (1 << 9),
            0,
            1 << 1,
            1 << 39,
            0,
        ],
    );

    fn hasher(blocks: u64, k: u32) -> Hasher {
        Hasher {
            seed: DEFAULT_SEED,
            blocks,
            k,
        }
    }

    /// Golden values: if this test fails, the persisted format changed and every
    /// existing checkpoint would silently read wrong. Bump the algorithm id instead.
    #[test]
    fn hashing_is_stable() {
        let p = hasher(1_000_003, 6).probe(b"https://example.com/");
        let h = xxh3_128_with_seed(b"https://example.com/", DEFAULT_SEED);
        // Independent restatement of the scheme for k = 6 (all from the first word).
        let block = ((u128::from(h as u64) * 1_000_003u128) >> 64) as u64;
        let mut masks = [0u64; 8];
        let hi = (h >> 64) as u64;
        for i in 0..6 {
            let pos = (hi >> (9 * i)) & 511;
            masks[(pos / 64) as usize] |= 1 << (pos % 64);
        }
        assert_eq!(p, Probe { block, masks });
        // XXH3-128 itself against the reference test vector (empty input, seed 0).
        assert_eq!(
            xxh3_128_with_seed(b"", 0),
            0x99aa_06d3_0147_98d8_6001_c324_468d_497f_u128
        );
        // And our own output, pinned (regression guard for the whole pipeline).
        assert_eq!((p.block, p.masks), GOLDEN_PROBE);
    }

    #[test]
    fn probe_sets_at_most_k_bits_in_range() {
        for k in [1u32, 6, 7, 8, 14, 15, 32] {
            for i in 0u32..200 {
                let p = hasher(97, k).probe(&i.to_le_bytes());
                assert!(p.block < 97);
                let bits: u32 = p.masks.iter().map(|m| m.count_ones()).sum();
                assert!(bits >= 1 && bits <= k, "k={k} bits={bits}");
            }
        }
    }

    #[test]
    fn blocks_are_used_evenly() {
        let h = hasher(16, 6);
        let mut counts = [0u32; 16];
        for i in 0u32..16_000 {
            counts[h.probe(&i.to_le_bytes()).block as usize] += 1;
        }
        // Each bucket expects 1000 (sd ≈ 31); 6 sd is a failure that will not flake.
        assert!(
            counts.iter().all(|&c| (810..1190).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn the_stream_continues_past_seven_positions() {
        // Positions 8..=14 come from the second stream word; they must differ from key to
        // key (a constant second word would put every key's later bits in one place).
        let (h7, h14) = (hasher(1, 7), hasher(1, 14));
        let extras: std::collections::HashSet<[u64; 8]> = (0u32..200)
            .map(|i| {
                let (a, b) = (h7.probe(&i.to_le_bytes()), h14.probe(&i.to_le_bytes()));
                let mut extra = [0u64; 8];
                for ((e, bm), am) in extra.iter_mut().zip(b.masks).zip(a.masks) {
                    *e = bm & !am;
                }
                extra
            })
            .collect();
        assert!(extras.len() > 190, "only {} distinct", extras.len());
        // And with k = 32 a key sets close to 32 distinct bits (≈ 31 expected).
        let h32 = hasher(1, 32);
        let total: u32 = (0u32..1000)
            .map(|i| {
                h32.probe(&i.to_le_bytes())
                    .masks
                    .iter()
                    .map(|m| m.count_ones())
                    .sum::<u32>()
            })
            .sum();
        assert!(
            total > 30_000,
            "mean bits per key {}",
            total as f64 / 1000.0
        );
    }
}
