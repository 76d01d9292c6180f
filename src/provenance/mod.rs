//! Where a URL came from and how its fetch went, as both records of a crawl state it:
//! Heritrix's hop codes, the hop path from a seed, the fetch's step timings, why a body
//! was cut ([`Truncation`]), the payload's SHA-1 ([`Digest`]) and the record time
//! ([`WarcDate`]). The crawl log ([`crate::crawllog`]) and the WARC records
//! ([`crate::warc`], which re-exports these types where they were always named) both
//! carry them; they live here so that neither of those modules depends on the other.

// Every file below reads bytes from the network or the disk: no slice indexing and no
// panics (STYLE.md §5). Tests are exempt through clippy.toml.
#![deny(clippy::indexing_slicing, clippy::expect_used, clippy::panic)]

use serde::{Deserialize, Serialize};

pub mod date;
pub mod digest;

pub use date::WarcDate;
pub use digest::Digest;

/// How a URL was reached from the page before it (Heritrix's hop types).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Hop {
    /// A navigational link (`<a href>`).
    #[serde(rename = "L")]
    Link,
    /// An embedded resource (image, script, style sheet, frame).
    #[serde(rename = "E")]
    Embed,
    /// An HTTP redirect (`Location`).
    #[serde(rename = "R")]
    Redirect,
    /// A URL guessed from text (e.g. in JavaScript), not a real link.
    #[serde(rename = "X")]
    Speculative,
    /// A prerequisite fetched before the URL (robots.txt).
    #[serde(rename = "P")]
    Prerequisite,
    /// Inferred by the crawler (e.g. `/favicon.ico`, a parent directory).
    #[serde(rename = "I")]
    Inferred,
    /// A sitemap reference: a `Sitemap:` line of robots.txt, `--sitemap`, or an entry
    /// of a sitemap index or of a sitemap. Code `S`, for sitemap (Heritrix has `S` for
    /// form submissions, which trawl never makes, and `M` for manifests); `M`, which an
    /// earlier build wrote, is read as this hop too.
    #[serde(rename = "S", alias = "M")]
    Manifest,
}

impl Hop {
    /// The one-letter code.
    pub const fn code(self) -> char {
        match self {
            Self::Link => 'L',
            Self::Embed => 'E',
            Self::Redirect => 'R',
            Self::Speculative => 'X',
            Self::Prerequisite => 'P',
            Self::Inferred => 'I',
            Self::Manifest => 'S',
        }
    }

    /// The hop for a code letter.
    pub const fn from_code(code: char) -> Option<Self> {
        Some(match code {
            'L' => Self::Link,
            'E' => Self::Embed,
            'R' => Self::Redirect,
            'X' => Self::Speculative,
            'P' => Self::Prerequisite,
            'I' => Self::Inferred,
            // `M`: the sitemap hop of an earlier build (a WARC metadata record or a
            // checkpoint it wrote).
            'S' | 'M' => Self::Manifest,
            _ => return None,
        })
    }
}

/// A hop path from a seed: one code per hop, empty for a seed itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct HopsPath(String);

impl HopsPath {
    /// The path of a seed.
    pub const fn seed() -> Self {
        Self(String::new())
    }

    /// The path of a URL found on a page with this path.
    pub fn then(&self, hop: Hop) -> Self {
        let mut path = self.0.clone();
        path.push(hop.code());
        Self(path)
    }

    /// Number of hops from the seed.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether this is a seed's path.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The codes as text (`LLE`).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A hop path text with a letter that is not a hop code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("hop path holds {0:?}, which is not a hop code")]
pub struct HopsPathError(pub char);

impl TryFrom<String> for HopsPath {
    type Error = HopsPathError;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        match text.chars().find(|&c| Hop::from_code(c).is_none()) {
            Some(bad) => Err(HopsPathError(bad)),
            None => Ok(Self(text)),
        }
    }
}

impl From<HopsPath> for String {
    fn from(path: HopsPath) -> Self {
        path.0
    }
}

/// How long each step of a fetch took, in milliseconds; `None` for steps that did not
/// happen (no DNS lookup on a cached address, no TLS on `http:`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FetchTimings {
    /// Name resolution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns_ms: Option<u64>,
    /// TCP connect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_ms: Option<u64>,
    /// The proxy handshake (`CONNECT` or SOCKS5), through a proxy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_ms: Option<u64>,
    /// TLS handshake.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_ms: Option<u64>,
    /// From sending the request to the first response byte.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_byte_ms: Option<u64>,
    /// From the start of the fetch to the last byte.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_ms: Option<u64>,
}

/// Why a body was cut short: the `WARC-Truncated` reasons of WARC 1.1, also the crawl
/// log's `truncated` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Truncation {
    /// The body exceeded the configured size cap.
    Length,
    /// The fetch exceeded its time budget.
    Time,
    /// The server closed the connection early.
    Disconnect,
    /// Some other reason.
    Unspecified,
}

impl Truncation {
    /// The `WARC-Truncated` field value.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Length => "length",
            Self::Time => "time",
            Self::Disconnect => "disconnect",
            Self::Unspecified => "unspecified",
        }
    }
}
