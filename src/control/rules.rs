//! The operator's rules for the rest of a crawl: blocked hosts, blocked URL prefixes
//! and raised host delays. Kept in every checkpoint (`operator.json`) so a resumed
//! crawl keeps them. Sans-IO; bounded ([`MAX_RULES`]).

#![deny(clippy::indexing_slicing)]

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::error::ApiError;

/// Most rules of each kind (hosts, prefixes, delays) a crawl keeps.
pub const MAX_RULES: usize = 10_000;
/// Longest host name or prefix accepted, in bytes.
const MAX_RULE_BYTES: usize = 2048;

/// What a `block` refuses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Block {
    /// Every URL of a host: `example.com` (any port) or `example.com:8080`.
    Host(String),
    /// Every URL starting with this text (an absolute http(s) URL, canonicalized).
    Prefix(String),
}

impl Block {
    /// A host block.
    ///
    /// # Errors
    /// Not a host name (see [`normalize_host`]).
    pub fn host(h: &str) -> Result<Self, String> {
        normalize_host(h).map(Self::Host)
    }

    /// A prefix block; the prefix is canonicalized like a URL (lowercase scheme and
    /// host, no default port) so it matches the canonical URLs of the frontier.
    ///
    /// # Errors
    /// Not an absolute http(s) URL.
    pub fn prefix(p: &str) -> Result<Self, String> {
        let p = p.trim();
        if p.len() > MAX_RULE_BYTES {
            return Err(format!("prefix over {MAX_RULE_BYTES} bytes"));
        }
        crate::add::check_url(p).map_err(|r| format!("{r}: {p:?}"))?;
        let canonical = crate::url::canonicalize_absolute(p)
            .map_err(|e| format!("not a URL prefix ({e}): {p:?}"))?;
        // Canonicalization adds `/` to a bare origin; a prefix given with a path keeps
        // exactly its path (no added slash at its end).
        let mut c: String = canonical.into();
        if !p.ends_with('/') && c.ends_with('/') && url_has_path(p) {
            c.pop();
        }
        Ok(Self::Prefix(c))
    }
}

fn url_has_path(p: &str) -> bool {
    p.split_once("://")
        .is_some_and(|(_, rest)| rest.contains('/'))
}

/// A host as an operator names it, lowercased: a name or an IP literal, with an
/// optional `:port`; no scheme, path or spaces.
///
/// # Errors
/// Empty, too long, or holding a character a host cannot.
pub fn normalize_host(h: &str) -> Result<String, String> {
    let h = h.trim().to_ascii_lowercase();
    let h = h
        .strip_prefix("http://")
        .or_else(|| h.strip_prefix("https://"))
        .unwrap_or(&h)
        .trim_end_matches('/')
        .to_owned();
    let valid = !h.is_empty()
        && h.len() <= MAX_RULE_BYTES
        && h.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._:[]".contains(&b));
    if valid {
        Ok(h)
    } else {
        Err(format!("not a host name: {h:?}"))
    }
}

/// The authority (`host[:port]`) of a host key `scheme://host[:port]`.
fn authority(host_key: &str) -> &str {
    host_key
        .split_once("://")
        .map_or(host_key, |(_, rest)| rest)
}

/// The host name of an authority, without its port.
fn name_of(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority
            .find(']')
            .and_then(|i| authority.get(..=i))
            .unwrap_or(authority);
    }
    authority.rsplit_once(':').map_or(authority, |(n, _)| n)
}

/// Whether an operator's host (`name` or `name:port`) names `host_key`.
fn names(rule: &str, host_key: &str) -> bool {
    let a = authority(host_key);
    rule == a || rule == name_of(a)
}

/// The operator's rules (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rules {
    #[serde(default)]
    pub blocked_hosts: BTreeSet<String>,
    #[serde(default)]
    pub blocked_prefixes: BTreeSet<String>,
    /// Host (as the operator named it) to its least delay between requests.
    #[serde(default)]
    pub delays_ms: BTreeMap<String, u64>,
}

impl Rules {
    pub fn is_empty(&self) -> bool {
        self.blocked_hosts.is_empty()
            && self.blocked_prefixes.is_empty()
            && self.delays_ms.is_empty()
    }

    /// Whether the URL `url` of host `host_key` (`scheme://host[:port]`) is blocked.
    pub fn is_blocked(&self, host_key: &str, url: &str) -> bool {
        self.blocked_hosts.iter().any(|h| names(h, host_key))
            || self
                .blocked_prefixes
                .iter()
                .any(|p| url.starts_with(p.as_str()))
    }

    /// Adds a block; false if it was already there.
    ///
    /// # Errors
    /// `409` when [`MAX_RULES`] blocks of its kind are kept.
    pub fn block(&mut self, b: Block) -> Result<bool, ApiError> {
        let (set, what) = match b {
            Block::Host(h) => (&mut self.blocked_hosts, h),
            Block::Prefix(p) => (&mut self.blocked_prefixes, p),
        };
        if set.contains(&what) {
            return Ok(false);
        }
        if set.len() >= MAX_RULES {
            return Err(full());
        }
        Ok(set.insert(what))
    }

    /// The operator's delay for `host_key`, if one names it (the longest if several).
    pub fn delay_of(&self, host_key: &str) -> Option<Duration> {
        self.delays_ms
            .iter()
            .filter(|(h, _)| names(h, host_key))
            .map(|(_, ms)| Duration::from_millis(*ms))
            .max()
    }

    /// Sets `host`'s delay to `delay_ms`: it may be raised, never set below the
    /// crawl's `--delay-ms` (`floor_ms`) nor the host's robots.txt `Crawl-delay`
    /// when known (`robots_ms`).
    ///
    /// # Errors
    /// `422` under a floor (the message says which and by how much), `409` full.
    pub fn set_delay(
        &mut self,
        host: &str,
        delay_ms: u64,
        floor_ms: u64,
        robots_ms: Option<u64>,
    ) -> Result<(), ApiError> {
        if delay_ms < floor_ms {
            return Err(ApiError::new(
                422,
                "delay-below-floor",
                format!(
                    "{delay_ms} ms is below the crawl's --delay-ms ({floor_ms} ms); \
                     a host delay can only be raised"
                ),
            ));
        }
        if let Some(r) = robots_ms.filter(|r| delay_ms < *r) {
            return Err(ApiError::new(
                422,
                "delay-below-robots",
                format!(
                    "{delay_ms} ms is below {host}'s robots.txt Crawl-delay ({r} ms); \
                     a host delay can only be raised"
                ),
            ));
        }
        if !self.delays_ms.contains_key(host) && self.delays_ms.len() >= MAX_RULES {
            return Err(full());
        }
        self.delays_ms.insert(host.to_owned(), delay_ms);
        Ok(())
    }
}

fn full() -> ApiError {
    ApiError::new(
        409,
        "too-many-rules",
        format!("{MAX_RULES} rules of this kind already"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_prefixes_block_what_they_name() {
        let mut r = Rules::default();
        assert!(r.block(Block::host("Example.COM").unwrap()).unwrap());
        assert!(!r.block(Block::host("example.com").unwrap()).unwrap());
        assert!(r.is_blocked("http://example.com", "http://example.com/a"));
        assert!(r.is_blocked("https://example.com:8443", "https://example.com:8443/"));
        assert!(!r.is_blocked("http://www.example.com", "http://www.example.com/"));
        r.block(Block::host("127.0.0.1:8081").unwrap()).unwrap();
        assert!(r.is_blocked("http://127.0.0.1:8081", "http://127.0.0.1:8081/x"));
        assert!(!r.is_blocked("http://127.0.0.1:8082", "http://127.0.0.1:8082/x"));
        r.block(Block::prefix("HTTP://Other.test/private").unwrap())
            .unwrap();
        assert!(r.is_blocked("http://other.test", "http://other.test/private/1"));
        assert!(r.is_blocked("http://other.test", "http://other.test/private"));
        assert!(!r.is_blocked("http://other.test", "http://other.test/public"));
        assert_eq!(
            Block::prefix("http://a.test").unwrap(),
            Block::Prefix("http://a.test/".to_owned())
        );
        assert!(Block::host("a b").is_err());
        assert!(Block::host("http://a.test/").is_ok());
        assert!(Block::prefix("/relative").is_err());
    }

    #[test]
    fn delays_only_rise() {
        let mut r = Rules::default();
        let e = r.set_delay("a.test", 100, 500, None).unwrap_err();
        assert_eq!((e.status, e.code), (422, "delay-below-floor"));
        let e = r.set_delay("a.test", 1000, 500, Some(2000)).unwrap_err();
        assert_eq!((e.status, e.code), (422, "delay-below-robots"));
        assert!(e.message.contains("Crawl-delay"));
        r.set_delay("a.test", 3000, 500, Some(2000)).unwrap();
        assert_eq!(
            r.delay_of("http://a.test:8080"),
            Some(Duration::from_millis(3000))
        );
        assert_eq!(r.delay_of("http://b.test"), None);
        let json = serde_json::to_string(&r).unwrap();
        let back: Rules = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
        let old: Rules = serde_json::from_str("{}").unwrap();
        assert!(old.is_empty());
    }

    #[test]
    fn rules_are_bounded() {
        let mut r = Rules::default();
        for i in 0..MAX_RULES {
            r.block(Block::Host(format!("h{i}"))).unwrap();
        }
        let e = r.block(Block::Host("one-more".to_owned())).unwrap_err();
        assert_eq!(e.status, 409);
    }
}
