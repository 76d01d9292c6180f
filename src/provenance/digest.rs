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
        let mut hasher = DigestHasher::new();
        hasher.update(bytes);
        hasher.finish()
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
/// Why not two hashers: SHA-1 is a chain, each 64-byte block waiting on the one before,
/// so one hash keeps the CPU's SHA unit (x86 SHA extensions, picked at run time by the
/// `sha1` crate) waiting on its own latency. Two independent chains fed block by block
/// overlap in the pipeline: 1.7-1.8 times the speed of two passes on this project's
/// machines (`docs/benchmarks.md`, "CPU per page"). The block chain runs `64 - r` bytes
/// into the body behind the payload chain (`r` = the head's length mod 64); its blocks
/// are read from the body where they lie, only the one block that straddles the head
/// and the body is copied.
pub fn digest_pair(prefix: &[u8], body: &[u8]) -> (Digest, Digest) {
    let mut block = Chain::new();
    let mut payload = Chain::new();
    let mut head_blocks = prefix.chunks_exact(BLOCK);
    for b in head_blocks.by_ref() {
        block.compress(b);
    }
    let head_rest = head_blocks.remainder();
    // The block chain's first block after the head's whole blocks: the head's rest and
    // the body's first bytes.
    let straddle = if head_rest.is_empty() {
        0
    } else {
        BLOCK - head_rest.len()
    };
    let mut block_tail = Tail::default();
    let block_body = if straddle > 0 && body.len() >= straddle {
        let mut joined = [0u8; BLOCK];
        let (left, right) = joined.split_at_mut(head_rest.len());
        left.copy_from_slice(head_rest);
        right.copy_from_slice(body.get(..straddle).unwrap_or_default());
        block.compress(&joined);
        body.get(straddle..).unwrap_or_default()
    } else if straddle > 0 {
        // Head rest and the whole body fit in one unfinished block.
        block_tail.push(head_rest);
        block_tail.push(body);
        &[]
    } else {
        body
    };
    let mut block_blocks = block_body.chunks_exact(BLOCK);
    let mut payload_blocks = body.chunks_exact(BLOCK);
    loop {
        match (block_blocks.next(), payload_blocks.next()) {
            (Some(a), Some(p)) => {
                block.compress(a);
                payload.compress(p);
            }
            (Some(a), None) => block.compress(a),
            (None, Some(p)) => payload.compress(p),
            (None, None) => break,
        }
    }
    block_tail.push(block_blocks.remainder());
    let mut payload_tail = Tail::default();
    payload_tail.push(payload_blocks.remainder());
    let total = prefix.len() as u64 + body.len() as u64;
    (
        block.finish(&block_tail, total),
        payload.finish(&payload_tail, body.len() as u64),
    )
}

/// SHA-1 block size in bytes.
const BLOCK: usize = 64;

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

    /// `block` must be 64 bytes (every caller passes `chunks_exact(64)` items or a
    /// 64-byte array); anything else would be a bug here, so it is skipped in release
    /// builds rather than panicking on input.
    fn compress(&mut self, block: &[u8]) {
        debug_assert_eq!(block.len(), BLOCK);
        if block.len() == BLOCK {
            let block = sha1::digest::generic_array::GenericArray::from_slice(block);
            sha1::compress(&mut self.0, std::slice::from_ref(block));
        }
    }

    /// The digest after the last `tail` bytes (fewer than 64) and the padding, for a
    /// message of `total` bytes.
    fn finish(mut self, tail: &Tail, total: u64) -> Digest {
        let mut last = [0u8; 2 * BLOCK];
        let n = tail.len;
        last.get_mut(..n)
            .unwrap_or_default()
            .copy_from_slice(tail.bytes.get(..n).unwrap_or_default());
        if let Some(b) = last.get_mut(n) {
            *b = 0x80;
        }
        let blocks = if n + 1 + 8 <= BLOCK { 1 } else { 2 };
        let end = blocks * BLOCK;
        if let Some(len) = last.get_mut(end - 8..end) {
            len.copy_from_slice(&(total.wrapping_mul(8)).to_be_bytes());
        }
        for b in last.get(..end).unwrap_or_default().chunks_exact(BLOCK) {
            self.compress(b);
        }
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pair equals two plain digests for every split of head and body lengths
    /// around the block size, and for larger bodies.
    #[test]
    fn digest_pair_matches_two_plain_digests() {
        let data: Vec<u8> = (0..5000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
            .collect();
        let mut lengths: Vec<usize> = (0..=200).collect();
        lengths.extend([255, 256, 257, 1000, 1023, 1024, 1025, 2500]);
        for &h in &[0usize, 1, 20, 55, 56, 63, 64, 65, 119, 120, 128, 300] {
            for &b in &lengths {
                let head = &data[..h];
                let body = &data[1000..1000 + b];
                let mut joined = head.to_vec();
                joined.extend_from_slice(body);
                let (block, payload) = digest_pair(head, body);
                assert_eq!(block, Digest::of(&joined), "head {h} body {b}");
                assert_eq!(payload, Digest::of(body), "head {h} body {b}");
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
