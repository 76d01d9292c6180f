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

#[cfg(test)]
mod tests {
    use super::*;

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
