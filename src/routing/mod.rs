//! Where a URL goes: its host key, the shard of this node that schedules it, and the
//! farm partition (and so the node) that owns it.
//!
//! A leaf: it imports none of `engine`, `farm` or `checkpoint`, which all route by it
//! (`docs/architecture.md`, "Module dependencies"). Every function is stable across
//! builds and machines (CRC-32 for shards, xxh3 with a fixed seed for partitions),
//! because a checkpoint resumed elsewhere must route the same way.

pub mod partition;

use std::fmt::Write as _;
use url::Url;

pub use partition::{PartitionBy, PartitionError, Partitions, DEFAULT_PARTITIONS};

/// A link received from another node, for a host of this shard. The bus parsed it and
/// chose the shard by its host key ([`shard_of`]), as the core routes its own.
#[derive(Debug, Clone)]
pub struct InboundLink {
    pub url: Url,
    /// Its host key.
    pub host: String,
    /// The page it was found on; `None` for a URL handed to the sending node by
    /// `trawl add`, which arrives as a seed.
    pub via: Option<String>,
    /// Hop path from the seed, its own hop included.
    pub hops: String,
    /// For a sitemap file, the origins whose robots.txt permission it carries; empty
    /// for other links.
    pub grant: Vec<String>,
}

/// The links a node's bus hands one shard at a time.
pub type InboundBatch = Vec<InboundLink>;

/// What the crawl core asks of the farm, if any: whether this node owns a URL's
/// partition, and a count of received links the presence bits already knew. Both
/// answer at once (a table lookup, an atomic add); sending links to their owners is
/// the driver's, from the core's route action, so the core never blocks on it.
pub trait FarmRoutes: Send + Sync {
    /// Whether this node owns `url`'s partition.
    fn owns(&self, url: &str) -> bool;
    /// Counts `n` received links that were already known here.
    fn count_known(&self, n: u64);
}

/// The key of a host: scheme, host and port (RFC 9309 §2.3: one robots.txt per
/// authority and protocol), as the ASCII origin serialization `https://host:port`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostKey(String);

impl HostKey {
    /// The key of `url`'s host; `None` for URLs without a host.
    pub fn of(url: &Url) -> Option<HostKey> {
        let host = url.host_str()?;
        if let "http" | "https" = url.scheme() {
            // The origin serialization, cut from the URL's own text: its host is
            // already serialized (lower case, punycode, `[v6]`) and its port is `None`
            // when it is the scheme's default, exactly what the origin writes, without
            // `Origin`'s `format!` through `Host`'s `Display` (~2,000 instructions a
            // key; every new link pays one).
            let mut key = String::with_capacity(url.scheme().len() + 3 + host.len() + 6);
            key.push_str(url.scheme());
            key.push_str("://");
            key.push_str(host);
            if let Some(port) = url.port() {
                // Writing to a `String` cannot fail.
                let _ = write!(key, ":{port}");
            }
            return Some(HostKey(key));
        }
        Some(HostKey(url.origin().ascii_serialization()))
    }

    /// The origin text, e.g. `http://example.com:8080`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The scheduling key of a URL: `scheme://host:port` (robots.txt scope, RFC 9309 §2.3).
pub fn host_key(url: &Url) -> Option<String> {
    HostKey::of(url).map(|k| k.as_str().to_owned())
}

/// The stable shard of a host key: CRC-32 of its bytes, so a checkpoint routes the
/// same way in every build.
pub fn shard_of(host_key: &str, shards: usize) -> usize {
    (crc32fast::hash(host_key.as_bytes()) as usize) % shards.max(1)
}

/// The presence-bit key that marks a host as discovered (`hosts_known`): a NUL and a
/// word no URL key starts with, then the host key. A host costs one bit-set entry,
/// nothing in RAM.
pub fn host_mark(host_key: &str) -> Vec<u8> {
    let mut key = Vec::with_capacity(host_key.len() + 6);
    key.extend_from_slice(b"\0host ");
    key.extend_from_slice(host_key.as_bytes());
    key
}

/// The partition key of a canonical URL: its origin, `scheme://host[:port]`, cut from
/// the text (canonical URLs are lowercase and carry no default port, so one origin
/// always has one spelling; no URL parse on the hot path).
pub fn partition_key(url: &str) -> &str {
    let Some(start) = url.find("://").map(|i| i + 3) else {
        return url;
    };
    let rest = url.get(start..).unwrap_or("");
    let end = rest.find(['/', '?', '#']).map_or(url.len(), |i| start + i);
    url.get(..end).unwrap_or(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_keys_are_origins() {
        assert_eq!(partition_key("http://a.test/x/y?z"), "http://a.test");
        assert_eq!(partition_key("http://a.test:8080"), "http://a.test:8080");
        assert_eq!(partition_key("https://a.test?q"), "https://a.test");
        assert_eq!(partition_key("http://[::1]:81/p"), "http://[::1]:81");
        assert_eq!(partition_key("nonsense"), "nonsense");
    }

    #[test]
    fn host_keys_are_origin_serializations() {
        for text in [
            "http://a.test/",
            "HTTP://A.Test:80/x",
            "https://a.test:443/",
            "https://a.test:8443/p?q#f",
            "http://127.0.0.31/x",
            "http://0x7f.1/",
            "http://[::1]:81/p",
            "https://[2001:DB8::1]/",
            "http://bücher.example/",
            "http://user:pw@a.test:0/",
            "http://a.test:65535",
            "ftp://a.test/",
            "ws://a.test:80/",
            "foo://a.test/",
        ] {
            let url = Url::parse(text).unwrap();
            assert_eq!(
                HostKey::of(&url).map(|k| k.0),
                Some(url.origin().ascii_serialization()),
                "{text}"
            );
        }
    }

    #[test]
    fn host_keys_and_shards_are_stable() {
        let url = Url::parse("https://Example.COM:443/a?b").unwrap();
        let key = host_key(&url).unwrap();
        assert_eq!(key, "https://example.com");
        // The value a checkpoint written by an earlier build relies on.
        assert_eq!(
            shard_of(&key, 7),
            (crc32fast::hash(key.as_bytes()) as usize) % 7
        );
        assert_eq!(shard_of(&key, 0), 0);
        assert_eq!(host_key(&Url::parse("data:text/plain,x").unwrap()), None);
    }
}
