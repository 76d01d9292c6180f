//! Deterministic hashing and a tiny PRNG: every byte synthweb serves is a pure function of
//! `(seed, host, path)`, so the generator needs no per-host state and no files. These are
//! not cryptographic; they only need to be fast, stable across runs and well mixed.

/// SplitMix64 finaliser: a bijective 64-bit mix with good avalanche.
#[must_use]
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Hash a byte string under a key, eight bytes per step (ETags hash whole bodies, so
/// this must run at memory speed, not a byte at a time).
#[must_use]
pub fn hash_bytes(key: u64, bytes: &[u8]) -> u64 {
    let mut h = mix64(key) ^ (bytes.len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h ^ u64::from_le_bytes(w))
            .wrapping_mul(0xBF58_476D_1CE4_E5B9)
            .rotate_left(31);
    }
    let mut tail = [0u8; 8];
    let rest = chunks.remainder();
    tail[..rest.len()].copy_from_slice(rest);
    h = (h ^ u64::from_le_bytes(tail) ^ 0xFF).wrapping_mul(0x94D0_49BB_1331_11EB);
    mix64(h)
}

/// Combine several words into one hash (order matters).
#[must_use]
pub fn hash_words(words: &[u64]) -> u64 {
    let mut h = 0x2545_F491_4F6C_DD1D_u64;
    for &w in words {
        h = mix64(h ^ w);
    }
    h
}

/// SplitMix64 generator seeded from a hash: cheap to create per page.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator whose stream is fully determined by `state`.
    #[must_use]
    pub fn new(state: u64) -> Self {
        Self(state)
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (returns 0 when `n == 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        // Multiply-shift reduction: bias is negligible for our n.
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..=hi` (returns `lo` when `hi <= lo`).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        let i = self.below(items.len() as u64) as usize;
        items.get(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_deterministic_and_in_range() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        for _ in 0..1000 {
            let x = a.range(10, 80);
            assert_eq!(x, b.range(10, 80));
            assert!((10..=80).contains(&x));
        }
        assert_ne!(hash_bytes(1, b"/p/1"), hash_bytes(2, b"/p/1"));
        assert_ne!(hash_bytes(1, b"/p/1"), hash_bytes(1, b"/p/2"));
    }
}
