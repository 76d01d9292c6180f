//! The on-disk header of a seen-set file: fixed little-endian fields in the first
//! 4096 bytes, followed by the page-aligned bit region.
//!
//! ```text
//! off  size  field
//!   0     8  magic "TRWLSEEN"
//!   8     4  format version (1)
//!  12     4  header bytes (4096): where the bit region starts
//!  16     4  state: 1 open for writing (bits not trusted), 2 sealed
//!  20     4  purpose: 1 URLs, 2 content fingerprints
//!  24     4  block bits (512)
//!  28     4  hash algorithm id (1 = xxh3-128, see hash.rs)
//!  32     8  hash seed
//!  40     4  k, bits per key
//!  44     4  reserved (0)
//!  48     8  block count
//!  56     8  bit count (= block count × 512)
//!  64     8  design capacity (item estimate)
//!  72     8  target false-positive rate (f64 bits)
//!  80     8  inserted keys (new-key insertions counted so far)
//!  88     8  set bits
//!  96     8  expected URLs lost so far (f64 bits)
//! 104     8  xxh3-64 of the bit region (meaningful when sealed)
//! 112     8  xxh3-64 of bytes 0..112 (the header checksum)
//! 120  3976  zero
//! ```
//!
//! Decoding is a pure function over bytes, so damaged input is tested without files.
//! The first 12 bytes are the common file header of `crate::disk` (magic, version).

#![deny(clippy::indexing_slicing)]

use xxhash_rust::xxh3::xxh3_64;

use super::hash::HASH_ALGORITHM_XXH3_128;
use super::model::{BLOCK_BITS, MAX_K};
use crate::disk::{Format, HeaderError as FileHeaderError};

/// File magic.
pub const MAGIC: [u8; 8] = *b"TRWLSEEN";
/// The format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// Header size; the bit region starts here (page aligned, so the mapping is too).
pub const HEADER_BYTES: u64 = 4096;
const CHECKSUMMED: usize = 112;
/// Magic and version as a `crate::disk` format (the file holds no framed records).
const FORMAT: Format = Format::new(MAGIC, FORMAT_VERSION, 0);

/// Whether the bits on disk can be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Mapped for writing right now, or was when the process died: bits not trusted.
    Open,
    /// Written completely and checksummed (a snapshot, or a cleanly closed set).
    Sealed,
}

/// What the keys of a set are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Canonical URLs (the crawl's seen set).
    Urls,
    /// 128-bit content fingerprints of fetched pages.
    ContentFingerprints,
}

/// All header fields, decoded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Header {
    pub state: State,
    pub purpose: Purpose,
    pub seed: u64,
    pub k: u32,
    pub blocks: u64,
    pub capacity: u64,
    pub target_fp: f64,
    pub inserted: u64,
    pub set_bits: u64,
    pub expected_lost: f64,
    pub bits_checksum: u64,
}

/// Why a header did not decode; mapped to `ErrorKind` by the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderError {
    Truncated,
    BadMagic,
    UnsupportedVersion(u32),
    Checksum,
    BadParameters(&'static str),
}

/// The u32 LE at `off`; 0 past the end (`decode` checks the length first).
fn u32_at(b: &[u8], off: usize) -> u32 {
    crate::disk::u32_at(b, off).unwrap_or(0)
}

/// The u64 LE at `off`; 0 past the end.
fn u64_at(b: &[u8], off: usize) -> u64 {
    crate::disk::u64_at(b, off).unwrap_or(0)
}

impl Header {
    /// Bytes of the bit region.
    pub fn bit_bytes(&self) -> u64 {
        self.blocks * (BLOCK_BITS / 8)
    }

    /// Total file length.
    pub fn file_bytes(&self) -> u64 {
        HEADER_BYTES + self.bit_bytes()
    }

    /// Encodes into a full 4096-byte header block.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = vec![0u8; HEADER_BYTES as usize];
        let mut put = |off: usize, bytes: &[u8]| {
            if let Some(dst) = b.get_mut(off..off + bytes.len()) {
                dst.copy_from_slice(bytes);
            }
        };
        put(0, &FORMAT.header());
        put(12, &(HEADER_BYTES as u32).to_le_bytes());
        put(
            16,
            &(match self.state {
                State::Open => 1u32,
                State::Sealed => 2,
            })
            .to_le_bytes(),
        );
        put(
            20,
            &(match self.purpose {
                Purpose::Urls => 1u32,
                Purpose::ContentFingerprints => 2,
            })
            .to_le_bytes(),
        );
        put(24, &(BLOCK_BITS as u32).to_le_bytes());
        put(28, &HASH_ALGORITHM_XXH3_128.to_le_bytes());
        put(32, &self.seed.to_le_bytes());
        put(40, &self.k.to_le_bytes());
        put(48, &self.blocks.to_le_bytes());
        put(56, &(self.blocks * BLOCK_BITS).to_le_bytes());
        put(64, &self.capacity.to_le_bytes());
        put(72, &self.target_fp.to_bits().to_le_bytes());
        put(80, &self.inserted.to_le_bytes());
        put(88, &self.set_bits.to_le_bytes());
        put(96, &self.expected_lost.to_bits().to_le_bytes());
        put(104, &self.bits_checksum.to_le_bytes());
        let sum = xxh3_64(b.get(..CHECKSUMMED).unwrap_or_default());
        if let Some(dst) = b.get_mut(CHECKSUMMED..CHECKSUMMED + 8) {
            dst.copy_from_slice(&sum.to_le_bytes());
        }
        b
    }

    /// Decodes and validates a header. Checks, in order: length, magic, version,
    /// checksum, then that the parameters are ones this build can use.
    pub fn decode(b: &[u8]) -> Result<Self, HeaderError> {
        if b.len() < CHECKSUMMED + 8 {
            return Err(HeaderError::Truncated);
        }
        match FORMAT.check(b) {
            Ok(()) => {}
            Err(FileHeaderError::Truncated) => return Err(HeaderError::Truncated),
            Err(FileHeaderError::BadMagic) => return Err(HeaderError::BadMagic),
            Err(FileHeaderError::UnsupportedVersion { found, .. }) => {
                return Err(HeaderError::UnsupportedVersion(found))
            }
        }
        if xxh3_64(b.get(..CHECKSUMMED).unwrap_or_default()) != u64_at(b, CHECKSUMMED) {
            return Err(HeaderError::Checksum);
        }
        if u64::from(u32_at(b, 12)) != HEADER_BYTES {
            return Err(HeaderError::BadParameters("header size"));
        }
        let state = match u32_at(b, 16) {
            1 => State::Open,
            2 => State::Sealed,
            _ => return Err(HeaderError::BadParameters("state")),
        };
        let purpose = match u32_at(b, 20) {
            1 => Purpose::Urls,
            2 => Purpose::ContentFingerprints,
            _ => return Err(HeaderError::BadParameters("purpose")),
        };
        if u64::from(u32_at(b, 24)) != BLOCK_BITS {
            return Err(HeaderError::BadParameters("block size"));
        }
        if u32_at(b, 28) != HASH_ALGORITHM_XXH3_128 {
            return Err(HeaderError::BadParameters("hash algorithm"));
        }
        let k = u32_at(b, 40);
        if k == 0 || k > MAX_K {
            return Err(HeaderError::BadParameters("bits per key"));
        }
        let blocks = u64_at(b, 48);
        if blocks == 0 || blocks > 1 << 40 || u64_at(b, 56) != blocks * BLOCK_BITS {
            return Err(HeaderError::BadParameters("block count"));
        }
        let target_fp = f64::from_bits(u64_at(b, 72));
        let expected_lost = f64::from_bits(u64_at(b, 96));
        if !target_fp.is_finite() || !expected_lost.is_finite() || expected_lost < 0.0 {
            return Err(HeaderError::BadParameters("counters"));
        }
        Ok(Self {
            state,
            purpose,
            seed: u64_at(b, 32),
            k,
            blocks,
            capacity: u64_at(b, 64),
            target_fp,
            inserted: u64_at(b, 80),
            set_bits: u64_at(b, 88),
            expected_lost,
            bits_checksum: u64_at(b, 104),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Header {
        Header {
            state: State::Sealed,
            purpose: Purpose::Urls,
            seed: 42,
            k: 6,
            blocks: 1000,
            capacity: 50_000,
            target_fp: 0.01,
            inserted: 123,
            set_bits: 700,
            expected_lost: 0.25,
            bits_checksum: 0xdead_beef,
        }
    }

    #[test]
    fn round_trips() {
        let h = sample();
        let bytes = h.encode();
        assert_eq!(bytes.len(), 4096);
        assert_eq!(Header::decode(&bytes), Ok(h));
        assert_eq!(h.file_bytes(), 4096 + 64_000);
    }

    #[test]
    fn every_checksummed_byte_flip_is_detected() {
        let bytes = sample().encode();
        for i in 0..CHECKSUMMED + 8 {
            let mut damaged = bytes.clone();
            damaged[i] ^= 0x10;
            assert!(
                Header::decode(&damaged).is_err(),
                "flip at {i} not detected"
            );
        }
    }

    #[test]
    fn errors_come_in_the_documented_order() {
        let bytes = sample().encode();
        assert_eq!(Header::decode(&bytes[..100]), Err(HeaderError::Truncated));
        let mut m = bytes.clone();
        m[0] = b'X';
        assert_eq!(Header::decode(&m), Err(HeaderError::BadMagic));
        let mut v = bytes.clone();
        v[8] = 9;
        assert_eq!(Header::decode(&v), Err(HeaderError::UnsupportedVersion(9)));
        let mut c = bytes.clone();
        c[50] ^= 1;
        assert_eq!(Header::decode(&c), Err(HeaderError::Checksum));
    }

    #[test]
    fn unusable_parameters_are_refused_even_with_a_valid_checksum() {
        let mut h = sample();
        h.k = 0;
        assert_eq!(
            Header::decode(&h.encode()),
            Err(HeaderError::BadParameters("bits per key"))
        );
        let mut h = sample();
        h.blocks = 0;
        assert_eq!(
            Header::decode(&h.encode()),
            Err(HeaderError::BadParameters("block count"))
        );
        let mut h = sample();
        h.expected_lost = f64::NAN;
        assert_eq!(
            Header::decode(&h.encode()),
            Err(HeaderError::BadParameters("counters"))
        );
    }
}
