//! The false-positive model of the blocked Bloom filter, and sizing from it.
//!
//! Layout (see `docs/seen.md`): `m` bits split into blocks of [`BLOCK_BITS`] = 512 bits
//! (one 64-byte cache line). A key picks one block uniformly, then `k` bit positions in
//! it, uniformly and independently (with replacement). With `n` keys in `B` blocks the
//! load of a block is Poisson with mean `λ = n / B`, and a new key is a false positive
//! when all its `k` positions are set in its block. So
//!
//! ```text
//! fp(n) = Σ_i Pois(i; λ) · (1 − (1 − 1/512)^(k·i))^k
//! ```
//!
//! the classic Bloom formula for a 512-bit filter with `i` keys, averaged over the block
//! loads. Everything here is plain arithmetic on `f64`, no I/O.

/// Bits in one block: one 64-byte cache line.
pub const BLOCK_BITS: u64 = 512;
/// Bytes in one block.
pub const BLOCK_BYTES: u64 = BLOCK_BITS / 8;
/// 64-bit words in one block.
pub const BLOCK_WORDS: usize = 8;
/// The largest number of bits per key the layout supports (the hash stream yields 7
/// positions per 64-bit word; 32 positions need 5 words).
pub const MAX_K: u32 = 32;

/// `ln(n!)`: exact sum below 32, Stirling's series (error < 1e-12) above.
fn ln_factorial(n: u64) -> f64 {
    if n < 32 {
        return (2..=n).map(|i| (i as f64).ln()).sum();
    }
    let x = n as f64 + 1.0;
    // ln Γ(x) by Stirling: (x − ½) ln x − x + ½ ln 2π + 1/(12x) − 1/(360x³).
    (x - 0.5) * x.ln() - x + 0.5 * (2.0 * std::f64::consts::PI).ln() + 1.0 / (12.0 * x)
        - 1.0 / (360.0 * x * x * x)
}

/// The Poisson(λ) distribution as `(i, p)` pairs covering all but ~1e-15 of its mass,
/// computed in log space so that large loads (λ in the hundreds) do not underflow.
fn poisson_terms(lambda: f64) -> impl Iterator<Item = (u64, f64)> {
    let sd = lambda.sqrt();
    let lo = (lambda - 12.0 * sd - 10.0).max(0.0) as u64;
    let hi = (lambda + 12.0 * sd + 20.0).ceil() as u64;
    let ln_lambda = if lambda > 0.0 {
        lambda.ln()
    } else {
        f64::NEG_INFINITY
    };
    (lo..=hi).map(move |i| {
        let p = if lambda == 0.0 {
            if i == 0 {
                1.0
            } else {
                0.0
            }
        } else {
            (-lambda + i as f64 * ln_lambda - ln_factorial(i)).exp()
        };
        (i, p)
    })
}

/// The classic Bloom false-positive probability of one 512-bit block that holds
/// `keys` keys of `k` bits each.
pub fn block_fp(keys: u64, k: u32) -> f64 {
    let zero = (1.0 - 1.0 / BLOCK_BITS as f64).powf(k as f64 * keys as f64);
    (1.0 - zero).powi(k as i32)
}

/// Expected false-positive rate of a set of `blocks` blocks holding `keys` keys with
/// `k` bits per key: the Poisson-weighted sum of [`block_fp`].
pub fn false_positive_rate(keys: f64, blocks: u64, k: u32) -> f64 {
    if blocks == 0 {
        return 1.0;
    }
    let lambda = keys.max(0.0) / blocks as f64;
    poisson_terms(lambda)
        .map(|(i, p)| p * block_fp(i, k))
        .sum::<f64>()
        .min(1.0)
}

/// The `k` in `1..=MAX_K` that minimises the false-positive rate at `keys` keys, and
/// that rate.
pub fn best_k(keys: f64, blocks: u64) -> (u32, f64) {
    let mut best = (1, false_positive_rate(keys, blocks, 1));
    for k in 2..=MAX_K {
        let fp = false_positive_rate(keys, blocks, k);
        if fp < best.1 {
            best = (k, fp);
        } else if fp > best.1 * 1.5 {
            break; // fp(k) is unimodal; far past the minimum already
        }
    }
    best
}

/// Expected number of new keys lost (mistaken for seen) while `keys` distinct keys are
/// inserted into an empty set: `Σ_{j<keys} fp(j)`, by the trapezoid rule over 256
/// panels (fp is smooth and increasing in j).
pub fn expected_lost(keys: f64, blocks: u64, k: u32) -> f64 {
    if keys <= 0.0 {
        return 0.0;
    }
    const PANELS: u32 = 256;
    let h = keys / PANELS as f64;
    let mut sum =
        0.5 * (false_positive_rate(0.0, blocks, k) + false_positive_rate(keys, blocks, k));
    for s in 1..PANELS {
        sum += false_positive_rate(s as f64 * h, blocks, k);
    }
    sum * h
}

/// A chosen size: number of blocks and bits per key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sizing {
    /// Number of 512-bit blocks.
    pub blocks: u64,
    /// Bits set (and tested) per key.
    pub k: u32,
}

impl Sizing {
    /// Total bits.
    pub fn bits(&self) -> u64 {
        self.blocks * BLOCK_BITS
    }

    /// Bytes of the bit region.
    pub fn bit_bytes(&self) -> u64 {
        self.blocks * BLOCK_BYTES
    }

    /// The smallest set whose model false-positive rate with `capacity` keys is at most
    /// `target_fp`, with the best `k` for it. `None` if the parameters are out of range
    /// (capacity 0, fp not in (0, 1)) or the target needs more than 2^40 blocks.
    pub fn for_fp(capacity: u64, target_fp: f64) -> Option<Self> {
        if capacity == 0 || !(target_fp > 0.0 && target_fp < 1.0) {
            return None;
        }
        let ok = |blocks: u64| best_k(capacity as f64, blocks).1 <= target_fp;
        let blocks = smallest_blocks(start_blocks(capacity), ok)?;
        Some(Self {
            blocks,
            k: best_k(capacity as f64, blocks).0,
        })
    }

    /// The smallest set that loses at most `max_lost` URLs in expectation while `urls`
    /// distinct URLs are inserted: the "lossless" default.
    pub fn for_loss(urls: u64, max_lost: f64) -> Option<Self> {
        if urls == 0 || max_lost.is_nan() || max_lost <= 0.0 {
            return None;
        }
        let keys = urls as f64;
        // For a given size the k that minimises loss is close to the k that minimises
        // fp at full load; search a small neighbourhood around it.
        let eval = |blocks: u64| -> (u32, f64) {
            let k0 = best_k(keys, blocks).0;
            let lo = k0.saturating_sub(2).max(1);
            let hi = (k0 + 2).min(MAX_K);
            (lo..=hi)
                .map(|k| (k, expected_lost(keys, blocks, k)))
                .fold((k0, f64::INFINITY), |a, b| if b.1 < a.1 { b } else { a })
        };
        let blocks = smallest_blocks(start_blocks(urls), |b| eval(b).1 <= max_lost)?;
        Some(Self {
            blocks,
            k: eval(blocks).0,
        })
    }
}

/// Where the size search starts: one bit per key, a size far too small for any useful
/// rate. Starting lower would evaluate block loads in the millions (slow sums).
fn start_blocks(keys: u64) -> u64 {
    (keys / BLOCK_BITS).max(1)
}

/// Smallest `blocks` in `start..=2^40` with `ok(blocks)`, assuming `ok` is monotone and
/// false at `start` (or `start` is 1).
fn smallest_blocks(start: u64, ok: impl Fn(u64) -> bool) -> Option<u64> {
    const MAX_BLOCKS: u64 = 1 << 40;
    let mut hi = start.clamp(1, MAX_BLOCKS);
    if ok(hi) {
        // Too generous a start (tiny sets): search from 1.
        hi = 1;
    }
    while !ok(hi) {
        if hi >= MAX_BLOCKS {
            return None;
        }
        hi = (hi * 2).min(MAX_BLOCKS);
    }
    let mut lo = hi / 2; // !ok(lo) unless hi == 1
    if hi == 1 {
        return Some(1);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ln_factorial_matches_direct_sum_across_the_switch() {
        for n in [0u64, 1, 5, 31, 32, 33, 100, 1000] {
            let direct: f64 = (2..=n).map(|i| (i as f64).ln()).sum();
            assert!(
                (ln_factorial(n) - direct).abs() < 1e-9 * direct.max(1.0),
                "n={n}"
            );
        }
    }

    #[test]
    fn poisson_terms_sum_to_one_even_for_large_loads() {
        for lambda in [0.0, 0.3, 5.0, 51.2, 600.0, 5000.0] {
            let total: f64 = poisson_terms(lambda).map(|(_, p)| p).sum();
            assert!((total - 1.0).abs() < 1e-9, "lambda={lambda} total={total}");
        }
    }

    /// The figures the issue quotes: a 512-bit blocked Bloom filter needs 9.90 bits per
    /// key for 1 %, with k = 6.
    #[test]
    fn one_percent_needs_9_9_bits_per_key() {
        let capacity = 10_000_000u64;
        let s = Sizing::for_fp(capacity, 0.01).unwrap();
        let bpk = s.bits() as f64 / capacity as f64;
        assert!((9.85..9.95).contains(&bpk), "bits per key {bpk}");
        assert_eq!(s.k, 6);
        assert!(false_positive_rate(capacity as f64, s.blocks, s.k) <= 0.01);
        assert!(false_positive_rate(capacity as f64, s.blocks - 1, s.k) > 0.01);
    }

    #[test]
    fn fp_grows_with_keys_and_drops_with_blocks() {
        let a = false_positive_rate(1e6, 20_000, 6);
        let b = false_positive_rate(2e6, 20_000, 6);
        let c = false_positive_rate(1e6, 40_000, 6);
        assert!(b > a && a > c);
        assert_eq!(false_positive_rate(0.0, 10, 6), 0.0);
    }

    #[test]
    fn expected_lost_integrates_fp() {
        // Tiny set: loss by direct summation vs. the trapezoid rule.
        let (blocks, k, n) = (4u64, 4u32, 2000u64);
        let direct: f64 = (0..n)
            .map(|j| false_positive_rate(j as f64, blocks, k))
            .sum();
        let approx = expected_lost(n as f64, blocks, k);
        assert!(
            (direct - approx).abs() / direct < 0.01,
            "{direct} vs {approx}"
        );
    }

    #[test]
    fn loss_sizing_meets_its_bound() {
        let s = Sizing::for_loss(1_000_000, 0.5).unwrap();
        assert!(expected_lost(1e6, s.blocks, s.k) <= 0.5);
        assert!(s.k <= MAX_K);
        let smaller = Sizing {
            blocks: s.blocks * 9 / 10,
            k: s.k,
        };
        assert!(expected_lost(1e6, smaller.blocks, smaller.k) > 0.5);
    }

    #[test]
    fn bad_parameters_are_refused() {
        assert_eq!(Sizing::for_fp(0, 0.01), None);
        assert_eq!(Sizing::for_fp(10, 0.0), None);
        assert_eq!(Sizing::for_fp(10, 1.0), None);
        assert_eq!(Sizing::for_fp(10, f64::NAN), None);
        assert_eq!(Sizing::for_loss(0, 1.0), None);
        assert_eq!(Sizing::for_loss(10, -1.0), None);
    }
}
