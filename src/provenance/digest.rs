//! SHA-1 digests in the form WARC readers expect: `sha1:` followed by the 20-byte hash
//! in RFC 4648 base32, upper case, padding-free (a 20-byte hash is 32 base32 digits, so
//! there is never padding). This is what Heritrix, wget and warcio write, and what the
//! CDX indexes of the Wayback Machine and pywb carry, so deduplication across tools works.

use std::fmt;
use std::str::FromStr;

use data_encoding::BASE32;
use sha1::{Digest as _, Sha1};

/// The label WARC puts before a SHA-1 value (`WARC-Block-Digest: sha1:...`).
pub const SHA1_LABEL: &str = "sha1";

/// A SHA-1 digest of a WARC block or payload.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest([u8; 20]);

impl Digest {
    /// The digest of `bytes` in one call.
    pub fn of(bytes: &[u8]) -> Self {
        Self::of_with(Backend::detect(), bytes)
    }

    /// [`Digest::of`] on the given compression backend: the whole blocks in one call,
    /// then the padded tail.
    fn of_with(backend: Backend, bytes: &[u8]) -> Self {
        let (whole, rest) = split_whole(bytes);
        let mut tail = Tail::default();
        tail.push(rest);
        let mut last = [0u8; 2 * BLOCK];
        let last = tail.pad(bytes.len() as u64, &mut last);
        let mut chain = Chain::new();
        backend.compress_one(&mut chain, whole);
        backend.compress_one(&mut chain, last);
        chain.digest()
    }

    /// Wraps a raw 20-byte SHA-1 value.
    pub const fn from_bytes(bytes: [u8; 20]) -> Self {
        Self(bytes)
    }

    /// The raw 20 bytes.
    pub const fn as_bytes(&self) -> &[u8; 20] {
        &self.0
    }

    /// The 32 base32 digits without the `sha1:` label.
    pub fn to_base32(&self) -> String {
        BASE32.encode(&self.0)
    }
}

impl fmt::Display for Digest {
    /// `sha1:` + base32, the exact text of a `WARC-*-Digest` field value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SHA1_LABEL}:{}", self.to_base32())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Why a digest text could not be read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DigestParseError {
    /// The text is not `sha1:<value>` (other algorithms are not ours to verify).
    #[error("digest is not labelled sha1")]
    NotSha1,
    /// The value is not 32 base32 digits encoding 20 bytes.
    #[error("digest value is not 32 base32 digits")]
    BadValue,
}

impl FromStr for Digest {
    type Err = DigestParseError;

    /// Reads `sha1:BASE32` (label case-insensitive, as warcio accepts it).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (label, value) = text.split_once(':').ok_or(DigestParseError::NotSha1)?;
        if !label.eq_ignore_ascii_case(SHA1_LABEL) {
            return Err(DigestParseError::NotSha1);
        }
        let bytes = BASE32
            .decode(value.as_bytes())
            .map_err(|_| DigestParseError::BadValue)?;
        let array: [u8; 20] = bytes.try_into().map_err(|_| DigestParseError::BadValue)?;
        Ok(Self(array))
    }
}

impl serde::Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Digest {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// An incremental SHA-1, so a block made of several parts (HTTP head, then body) is
/// hashed without first being copied into one buffer.
#[derive(Clone, Default)]
pub struct DigestHasher(Sha1);

impl DigestHasher {
    /// A hasher that has seen no bytes.
    pub fn new() -> Self {
        Self(Sha1::new())
    }

    /// Feeds more bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The digest of everything fed so far.
    pub fn finish(self) -> Digest {
        Digest(self.0.finalize().into())
    }
}

/// The SHA-1 digests of `prefix` followed by `body` and of `body` alone, reading `body`
/// once: a WARC `response` record's block digest (HTTP head and body) and its payload
/// digest (the body).
///
/// Why not two hashers: SHA-1 is a chain, each 64-byte block waiting on the one before.
/// With the x86 SHA extensions the two chains run in one loop, a block of each per
/// iteration (module `shani`), so the SHA unit works on one chain while the other waits
/// on its latency, and the states stay in registers for the whole run of blocks instead
/// of being loaded and stored around every block: 1.6 times one chain on this project's
/// Xeon (Sapphire Rapids), where two passes, or the chains fed block by block one call
/// each, cost 2 times. The block chain runs `64 - r` bytes into the body behind the
/// payload chain (`r` = the head's length mod 64); its blocks are read from the body
/// where they lie, only the one block that straddles the head and the body is copied.
pub fn digest_pair(prefix: &[u8], body: &[u8]) -> (Digest, Digest) {
    digest_pair_with(Backend::detect(), prefix, body)
}

/// [`digest_pair`] on the given compression backend (the tests force the portable one).
fn digest_pair_with(backend: Backend, prefix: &[u8], body: &[u8]) -> (Digest, Digest) {
    let (head_blocks, head_rest) = split_whole(prefix);
    // The block chain's first block after the head's whole blocks: the head's rest and
    // the body's first bytes.
    let straddle = if head_rest.is_empty() {
        0
    } else {
        BLOCK - head_rest.len()
    };
    let mut joined = [0u8; BLOCK];
    let mut block_tail = Tail::default();
    let (joined_len, block_body) = if straddle > 0 && body.len() >= straddle {
        let (left, right) = joined.split_at_mut(head_rest.len());
        left.copy_from_slice(head_rest);
        right.copy_from_slice(body.get(..straddle).unwrap_or_default());
        (BLOCK, body.get(straddle..).unwrap_or_default())
    } else if straddle > 0 {
        // Head rest and the whole body fit in one unfinished block.
        block_tail.push(head_rest);
        block_tail.push(body);
        (0, &[][..])
    } else {
        (0, body)
    };
    let (block_whole, block_rest) = split_whole(block_body);
    block_tail.push(block_rest);
    let (payload_whole, payload_rest) = split_whole(body);
    let mut payload_tail = Tail::default();
    payload_tail.push(payload_rest);
    let total = prefix.len() as u64 + body.len() as u64;
    let mut block_last = [0u8; 2 * BLOCK];
    let block_last = block_tail.pad(total, &mut block_last);
    let mut payload_last = [0u8; 2 * BLOCK];
    let payload_last = payload_tail.pad(body.len() as u64, &mut payload_last);
    let mut block = Chain::new();
    let mut payload = Chain::new();
    compress_streams(
        backend,
        &mut block,
        &[
            head_blocks,
            joined.get(..joined_len).unwrap_or_default(),
            block_whole,
            block_last,
        ],
        &mut payload,
        &[payload_whole, payload_last],
    );
    (block.digest(), payload.digest())
}

/// `bytes` split into its whole 64-byte blocks and the rest (fewer than 64 bytes).
fn split_whole(bytes: &[u8]) -> (&[u8], &[u8]) {
    bytes.split_at(bytes.len() - bytes.len() % BLOCK)
}

/// SHA-1 block size in bytes.
const BLOCK: usize = 64;

/// The SHA-1 compression code in use: the x86 SHA extensions, two chains interleaved
/// and many blocks per call ([`shani`]), when the CPU has them; else the `sha1`
/// crate's, one block per call.
#[derive(Clone, Copy)]
enum Backend {
    #[cfg(target_arch = "x86_64")]
    ShaNi(shani::Token),
    Portable,
}

impl Backend {
    /// The fastest backend this CPU runs (std caches the CPUID answers, so this costs a
    /// few loads).
    fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        if let Some(token) = shani::Token::detect() {
            return Self::ShaNi(token);
        }
        Self::Portable
    }
}

/// Feeds chain `a` the concatenation of `a_parts` and chain `b` that of `b_parts`,
/// every part a whole number of 64-byte blocks, pairing a block of `a` with one of `b`
/// as long as both have blocks (a few calls for a whole record: a call per change of
/// part on either side).
fn compress_streams(
    backend: Backend,
    a: &mut Chain,
    a_parts: &[&[u8]],
    b: &mut Chain,
    b_parts: &[&[u8]],
) {
    let mut a_parts = a_parts.iter().copied().filter(|p| !p.is_empty());
    let mut b_parts = b_parts.iter().copied().filter(|p| !p.is_empty());
    let mut a_now = a_parts.next();
    let mut b_now = b_parts.next();
    loop {
        match (a_now, b_now) {
            (Some(x), Some(y)) => {
                let n = x.len().min(y.len());
                let (x_pair, x_rest) = x.split_at(n);
                let (y_pair, y_rest) = y.split_at(n);
                backend.compress_two(a, x_pair, b, y_pair);
                a_now = Some(x_rest)
                    .filter(|r| !r.is_empty())
                    .or_else(|| a_parts.next());
                b_now = Some(y_rest)
                    .filter(|r| !r.is_empty())
                    .or_else(|| b_parts.next());
            }
            (Some(x), None) => {
                backend.compress_one(a, x);
                a_now = a_parts.next();
            }
            (None, Some(y)) => {
                backend.compress_one(b, y);
                b_now = b_parts.next();
            }
            (None, None) => break,
        }
    }
}

impl Backend {
    /// Feeds `chain` the whole 64-byte blocks of `blocks` (a length that is not a
    /// multiple of 64 is a bug of the caller here; the partial block is skipped).
    fn compress_one(self, chain: &mut Chain, blocks: &[u8]) {
        debug_assert_eq!(blocks.len() % BLOCK, 0);
        match self {
            #[cfg(target_arch = "x86_64")]
            Self::ShaNi(token) => shani::compress_one(token, &mut chain.0, blocks),
            Self::Portable => {
                for block in blocks.chunks_exact(BLOCK) {
                    let block = sha1::digest::generic_array::GenericArray::from_slice(block);
                    sha1::compress(&mut chain.0, std::slice::from_ref(block));
                }
            }
        }
    }

    /// Feeds `a` the blocks of `a_blocks` and `b` those of `b_blocks`, the same number
    /// of whole blocks on both sides, the two chains interleaved where the CPU allows.
    fn compress_two(self, a: &mut Chain, a_blocks: &[u8], b: &mut Chain, b_blocks: &[u8]) {
        debug_assert_eq!(a_blocks.len(), b_blocks.len());
        match self {
            #[cfg(target_arch = "x86_64")]
            Self::ShaNi(token) => {
                shani::compress_two(token, &mut a.0, a_blocks, &mut b.0, b_blocks)
            }
            Self::Portable => {
                self.compress_one(a, a_blocks);
                self.compress_one(b, b_blocks);
            }
        }
    }
}

/// One SHA-1 chain state over whole blocks.
struct Chain([u32; 5]);

impl Chain {
    fn new() -> Self {
        Self([
            0x6745_2301,
            0xEFCD_AB89,
            0x98BA_DCFE,
            0x1032_5476,
            0xC3D2_E1F0,
        ])
    }

    /// The digest of the chain's message, once its padded last block(s) are in.
    fn digest(&self) -> Digest {
        let mut out = [0u8; 20];
        for (dst, word) in out.chunks_exact_mut(4).zip(self.0) {
            dst.copy_from_slice(&word.to_be_bytes());
        }
        Digest(out)
    }
}

/// The bytes of a chain's last, unfinished block (fewer than 64).
struct Tail {
    bytes: [u8; BLOCK],
    len: usize,
}

impl Default for Tail {
    fn default() -> Self {
        Self {
            bytes: [0; BLOCK],
            len: 0,
        }
    }
}

impl Tail {
    fn push(&mut self, more: &[u8]) {
        let end = (self.len + more.len()).min(BLOCK);
        let take = end - self.len;
        if let Some(dst) = self.bytes.get_mut(self.len..end) {
            dst.copy_from_slice(more.get(..take).unwrap_or_default());
        }
        self.len = end;
    }

    /// The tail with SHA-1's padding for a message of `total` bytes, written into
    /// `out`: one block, or two when the tail leaves no room for the marker and the
    /// length.
    fn pad<'a>(&self, total: u64, out: &'a mut [u8; 2 * BLOCK]) -> &'a [u8] {
        let n = self.len;
        out.get_mut(..n)
            .unwrap_or_default()
            .copy_from_slice(self.bytes.get(..n).unwrap_or_default());
        if let Some(b) = out.get_mut(n) {
            *b = 0x80;
        }
        let blocks = if n + 1 + 8 <= BLOCK { 1 } else { 2 };
        let end = blocks * BLOCK;
        if let Some(len) = out.get_mut(end - 8..end) {
            len.copy_from_slice(&(total.wrapping_mul(8)).to_be_bytes());
        }
        out.get(..end).unwrap_or_default()
    }
}

/// SHA-1 compression with the x86 SHA extensions (SHA-NI), one chain or two chains
/// interleaved, a whole run of blocks per call with the states kept in registers.
///
/// Why our own and not only the `sha1` crate's (which uses the same instructions for
/// one chain): a call of it compresses one chain, so the two digests of a record would
/// run one after the other, each waiting on its own latency; here the instructions of
/// both chains are issued in the same loop body so each fills the other's wait. The
/// round code is the sequence of Intel's SHA extensions paper (and the `sha1` crate),
/// written once over an array of lanes.
///
/// Why the pair still costs 1.6 chains and not 1.2: on Sapphire Rapids (measured with
/// chains of each instruction) SHA1RNDS4 has about 4 cycles of latency but issues only
/// once per 3 cycles, and SHA1MSG2 (16 per block) once per 4-5 cycles, so one chain
/// (10-14 µs for the 320 blocks of 20 KB, about 110 cycles a block) already keeps the
/// SHA unit mostly busy and a second can only fill the rest. Computing the message schedule with AVX-512VL rotates instead of
/// SHA1MSG2 gained about 10% more on the pair in a scratch test, within this machine's
/// noise; not done (`_mm_rol_epi32` needs Rust 1.89, past the crate's `rust-version`).
#[cfg(target_arch = "x86_64")]
#[allow(
    unsafe_code,
    reason = "x86 SHA extension intrinsics in functions compiled for them, called only \
              after run-time detection; unaligned 16-byte loads from 64-byte blocks \
              (docs/safety.md)"
)]
mod shani {
    use std::arch::x86_64::{
        __m128i, _mm_add_epi32, _mm_extract_epi32, _mm_loadu_si128, _mm_set_epi32, _mm_set_epi64x,
        _mm_setzero_si128, _mm_sha1msg1_epu32, _mm_sha1msg2_epu32, _mm_sha1nexte_epu32,
        _mm_sha1rnds4_epu32, _mm_shuffle_epi8, _mm_xor_si128,
    };

    use super::BLOCK;

    /// Proof that this CPU has the SHA extensions, SSSE3 and SSE4.1: only
    /// [`Token::detect`] makes one.
    #[derive(Clone, Copy)]
    pub(super) struct Token(());

    impl Token {
        pub(super) fn detect() -> Option<Self> {
            let present = std::arch::is_x86_feature_detected!("sha")
                && std::arch::is_x86_feature_detected!("sse4.1")
                && std::arch::is_x86_feature_detected!("ssse3");
            present.then_some(Self(()))
        }
    }

    /// Feeds `state` the whole 64-byte blocks of `blocks`.
    pub(super) fn compress_one(_: Token, state: &mut [u32; 5], blocks: &[u8]) {
        // SAFETY: the token proves the CPU has the features `lanes` is compiled for.
        unsafe { lanes([state], [blocks]) }
    }

    /// Feeds `a` and `b` their blocks, a block of each per round of the loop; both
    /// sides must hold the same number of whole blocks (extra blocks of the longer one
    /// are not compressed).
    pub(super) fn compress_two(
        _: Token,
        a: &mut [u32; 5],
        a_blocks: &[u8],
        b: &mut [u32; 5],
        b_blocks: &[u8],
    ) {
        // SAFETY: the token proves the CPU has the features `lanes` is compiled for.
        unsafe { lanes([a, b], [a_blocks, b_blocks]) }
    }

    /// One chain's registers: its state (`abcd`, `e`), the working state of the block
    /// (`h0`, `h1`) and the last 20 message words (`w0`..`w4`, four each).
    #[derive(Clone, Copy)]
    struct Lane {
        abcd: __m128i,
        e: __m128i,
        h0: __m128i,
        h1: __m128i,
        w0: __m128i,
        w1: __m128i,
        w2: __m128i,
        w3: __m128i,
        w4: __m128i,
    }

    /// Four rounds in every lane: `h1` = four rounds of function `i` from `h0`, with
    /// the message words `w` and the E derived from the old `h1`.
    macro_rules! rounds4 {
        ($lanes:ident; $h0:ident, $h1:ident, $w:ident, $i:literal) => {
            for x in $lanes.iter_mut() {
                x.$h1 = _mm_sha1rnds4_epu32(x.$h0, _mm_sha1nexte_epu32(x.$h1, x.$w), $i);
            }
        };
    }

    /// In every lane, the next four message words `w4` from the previous sixteen, then
    /// four rounds.
    macro_rules! schedule_rounds4 {
        ($lanes:ident; $h0:ident, $h1:ident, $w0:ident, $w1:ident, $w2:ident, $w3:ident, $w4:ident, $i:literal) => {
            for x in $lanes.iter_mut() {
                x.$w4 = _mm_sha1msg2_epu32(
                    _mm_xor_si128(_mm_sha1msg1_epu32(x.$w0, x.$w1), x.$w2),
                    x.$w3,
                );
            }
            rounds4!($lanes; $h0, $h1, $w4, $i);
        };
    }

    /// Compresses `N` chains side by side, as many blocks as the shortest `data` holds,
    /// the instructions of the `N` chains interleaved round by round. Each state is
    /// loaded once and stored once.
    ///
    /// # Safety
    ///
    /// The CPU must have the SHA extensions, SSSE3 and SSE4.1 (a [`Token`] exists).
    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    unsafe fn lanes<const N: usize>(states: [&mut [u32; 5]; N], data: [&[u8]; N]) {
        let blocks = data.iter().map(|d| d.len() / BLOCK).min().unwrap_or(0);
        // Byte order: a block's big-endian words, W0 in the top lane.
        let mask = _mm_set_epi64x(0x0001_0203_0405_0607, 0x0809_0A0B_0C0D_0E0F);
        let mut lanes = states.each_ref().map(|&&mut [a, b, c, d, e]| {
            let zero = _mm_setzero_si128();
            Lane {
                abcd: _mm_set_epi32(a as i32, b as i32, c as i32, d as i32),
                e: _mm_set_epi32(e as i32, 0, 0, 0),
                h0: zero,
                h1: zero,
                w0: zero,
                w1: zero,
                w2: zero,
                w3: zero,
                w4: zero,
            }
        });
        for i in 0..blocks {
            for (x, d) in lanes.iter_mut().zip(data) {
                // SAFETY: `i < blocks <= d.len() / 64`, so the 64 bytes from `i * 64`
                // lie inside `d`; `loadu` needs no alignment.
                let p = d.as_ptr().add(i * BLOCK).cast::<__m128i>();
                x.w0 = _mm_shuffle_epi8(_mm_loadu_si128(p), mask);
                x.w1 = _mm_shuffle_epi8(_mm_loadu_si128(p.add(1)), mask);
                x.w2 = _mm_shuffle_epi8(_mm_loadu_si128(p.add(2)), mask);
                x.w3 = _mm_shuffle_epi8(_mm_loadu_si128(p.add(3)), mask);
                x.h0 = x.abcd;
                x.h1 = _mm_sha1rnds4_epu32(x.h0, _mm_add_epi32(x.e, x.w0), 0);
            }
            // Rounds 0..20 (the first four above)
            rounds4!(lanes; h1, h0, w1, 0);
            rounds4!(lanes; h0, h1, w2, 0);
            rounds4!(lanes; h1, h0, w3, 0);
            schedule_rounds4!(lanes; h0, h1, w0, w1, w2, w3, w4, 0);
            // Rounds 20..40
            schedule_rounds4!(lanes; h1, h0, w1, w2, w3, w4, w0, 1);
            schedule_rounds4!(lanes; h0, h1, w2, w3, w4, w0, w1, 1);
            schedule_rounds4!(lanes; h1, h0, w3, w4, w0, w1, w2, 1);
            schedule_rounds4!(lanes; h0, h1, w4, w0, w1, w2, w3, 1);
            schedule_rounds4!(lanes; h1, h0, w0, w1, w2, w3, w4, 1);
            // Rounds 40..60
            schedule_rounds4!(lanes; h0, h1, w1, w2, w3, w4, w0, 2);
            schedule_rounds4!(lanes; h1, h0, w2, w3, w4, w0, w1, 2);
            schedule_rounds4!(lanes; h0, h1, w3, w4, w0, w1, w2, 2);
            schedule_rounds4!(lanes; h1, h0, w4, w0, w1, w2, w3, 2);
            schedule_rounds4!(lanes; h0, h1, w0, w1, w2, w3, w4, 2);
            // Rounds 60..80
            schedule_rounds4!(lanes; h1, h0, w1, w2, w3, w4, w0, 3);
            schedule_rounds4!(lanes; h0, h1, w2, w3, w4, w0, w1, 3);
            schedule_rounds4!(lanes; h1, h0, w3, w4, w0, w1, w2, 3);
            schedule_rounds4!(lanes; h0, h1, w4, w0, w1, w2, w3, 3);
            schedule_rounds4!(lanes; h1, h0, w0, w1, w2, w3, w4, 3);
            for x in lanes.iter_mut() {
                x.abcd = _mm_add_epi32(x.abcd, x.h0);
                x.e = _mm_sha1nexte_epu32(x.h1, x.e);
            }
        }
        for (s, x) in states.into_iter().zip(lanes) {
            *s = [
                _mm_extract_epi32(x.abcd, 3) as u32,
                _mm_extract_epi32(x.abcd, 2) as u32,
                _mm_extract_epi32(x.abcd, 1) as u32,
                _mm_extract_epi32(x.abcd, 0) as u32,
                _mm_extract_epi32(x.e, 3) as u32,
            ];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `sha1` crate's digest of `bytes`, the reference.
    fn reference(bytes: &[u8]) -> Digest {
        Digest(Sha1::digest(bytes).into())
    }

    /// Every backend this machine runs: the portable one, and SHA-NI when present.
    fn backends() -> Vec<(&'static str, Backend)> {
        let mut all = vec![("portable", Backend::Portable)];
        let detected = Backend::detect();
        if !matches!(detected, Backend::Portable) {
            all.push(("sha-ni", detected));
        }
        all
    }

    fn pseudo_random(len: usize, seed: u32) -> Vec<u8> {
        (0..len as u32)
            .map(|i| (i.wrapping_add(seed).wrapping_mul(2_654_435_761) >> 11) as u8)
            .collect()
    }

    /// The pair equals two plain digests for every split of head and body lengths
    /// around the block size, and for larger bodies, on every backend.
    #[test]
    fn digest_pair_matches_two_plain_digests() {
        let data = pseudo_random(5000, 0);
        let mut lengths: Vec<usize> = (0..=200).collect();
        lengths.extend([255, 256, 257, 1000, 1023, 1024, 1025, 2500]);
        for (name, backend) in backends() {
            for &h in &[0usize, 1, 20, 55, 56, 63, 64, 65, 119, 120, 128, 300] {
                for &b in &lengths {
                    let head = &data[..h];
                    let body = &data[1000..1000 + b];
                    let mut joined = head.to_vec();
                    joined.extend_from_slice(body);
                    let (block, payload) = digest_pair_with(backend, head, body);
                    assert_eq!(block, reference(&joined), "{name} head {h} body {b}");
                    assert_eq!(payload, reference(body), "{name} head {h} body {b}");
                }
            }
        }
    }

    /// Every message of 0..300 bytes cut at every point into head and body, on every
    /// backend: both digests of the pair and the one-shot digest of the body equal the
    /// `sha1` crate's.
    #[test]
    fn every_split_of_short_messages_matches_the_sha1_crate() {
        let data = pseudo_random(300, 7);
        for (name, backend) in backends() {
            for n in 0..300 {
                let message = &data[..n];
                let whole = reference(message);
                assert_eq!(Digest::of_with(backend, message), whole, "{name} {n}");
                for h in 0..=n {
                    let (head, body) = message.split_at(h);
                    let (block, payload) = digest_pair_with(backend, head, body);
                    assert_eq!(block, whole, "{name} head {h} body {}", n - h);
                    assert_eq!(payload, reference(body), "{name} head {h} body {}", n - h);
                }
            }
        }
    }

    /// Long messages (pages and past them, uneven lengths) on every backend.
    #[test]
    fn long_messages_match_the_sha1_crate() {
        let data = pseudo_random(300_000, 3);
        for (name, backend) in backends() {
            for &(h, b) in &[(0, 20_480), (300, 20_531), (4_100, 95_000), (63, 299_000)] {
                let body = &data[h..h + b];
                let (block, payload) = digest_pair_with(backend, &data[..h], body);
                assert_eq!(block, reference(&data[..h + b]), "{name} head {h} body {b}");
                assert_eq!(payload, reference(body), "{name} head {h} body {b}");
                assert_eq!(
                    Digest::of_with(backend, body),
                    reference(body),
                    "{name} {b}"
                );
            }
        }
    }

    /// The SHA-NI path is the one that runs where the CPU has it, so the tests above
    /// exercise it on such machines.
    #[test]
    fn detect_picks_sha_ni_when_the_cpu_has_it() {
        #[cfg(target_arch = "x86_64")]
        {
            let has = std::arch::is_x86_feature_detected!("sha")
                && std::arch::is_x86_feature_detected!("sse4.1")
                && std::arch::is_x86_feature_detected!("ssse3");
            assert_eq!(matches!(Backend::detect(), Backend::ShaNi(_)), has);
        }
    }

    proptest::proptest! {
        /// Random heads and bodies (lengths and bytes) on every backend.
        #[test]
        fn random_heads_and_bodies_match_the_sha1_crate(
            head in proptest::collection::vec(proptest::num::u8::ANY, 0..700),
            body in proptest::collection::vec(proptest::num::u8::ANY, 0..3000),
        ) {
            let mut joined = head.clone();
            joined.extend_from_slice(&body);
            for (name, backend) in backends() {
                let (block, payload) = digest_pair_with(backend, &head, &body);
                proptest::prop_assert_eq!(block, reference(&joined), "{}", name);
                proptest::prop_assert_eq!(payload, reference(&body), "{}", name);
            }
        }
    }

    /// Known values: the FIPS 180 SHA-1 test vectors, encoded in base32 by Python
    /// (`base64.b32encode(hashlib.sha1(s).digest())`), the reference warcio checks with.
    #[test]
    fn known_sha1_base32_values() {
        let table: &[(&[u8], &str)] = &[
            (b"", "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"),
            (b"abc", "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5"),
            (
                b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "sha1:QSMD4RA4HPJG5OVOJKQ7SUJJ4XSUM4HR",
            ),
        ];
        for (input, expected) in table {
            assert_eq!(Digest::of(input).to_string(), *expected, "input {input:?}");
        }
    }

    #[test]
    fn incremental_equals_one_shot() {
        let mut hasher = DigestHasher::new();
        hasher.update(b"HTTP/1.1 200 OK\r\n\r\n");
        hasher.update(b"hello");
        assert_eq!(hasher.finish(), Digest::of(b"HTTP/1.1 200 OK\r\n\r\nhello"));
    }

    #[test]
    fn parse_round_trips_and_rejects_garbage() {
        let digest = Digest::of(b"payload");
        let parsed: Digest = digest.to_string().parse().unwrap();
        assert_eq!(parsed, digest);
        let lower = digest.to_string().replacen("sha1", "SHA1", 1);
        assert_eq!(lower.parse::<Digest>().unwrap(), digest);
        assert_eq!("md5:abc".parse::<Digest>(), Err(DigestParseError::NotSha1));
        assert_eq!("nocolon".parse::<Digest>(), Err(DigestParseError::NotSha1));
        assert_eq!(
            "sha1:AAAA".parse::<Digest>(),
            Err(DigestParseError::BadValue)
        );
        assert_eq!("sha1:!!".parse::<Digest>(), Err(DigestParseError::BadValue));
    }
}
