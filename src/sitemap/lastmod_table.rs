//! The `<lastmod>` a re-crawl read for each URL (`--sitemap-lastmod skip`): a compact
//! map of URL hash → seconds, so the request for the URL can be planned with it
//! (`crate::recrawl::plan`). A URL listed twice keeps the newest date (a skip needs
//! every listing to say "not newer").
//!
//! Bounded: at most `max_urls` dates (16 bytes each plus the table's slack) and as many
//! URLs that waited a turn (8 bytes each); past it a date is not kept
//! ([`LastModTable::record`] says so, the caller counts it) or a URL does not wait, and
//! the URL is fetched conditionally, as without the flag. The hash is 64-bit SipHash with
//! fixed keys: two URLs of one crawl collide with odds of about n²/2⁶⁵ (10⁻⁸ at a
//! million URLs), and a collision can only skip a URL the previous crawl fetched.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use super::LastMod;

/// URL hash → newest `<lastmod>` seen for it, and the URLs that waited a turn for
/// one ([`LastModTable::wait_once`]). See the module docs.
#[derive(Debug)]
pub struct LastModTable {
    map: HashMap<u64, i64>,
    waited: HashSet<u64>,
    max_urls: usize,
    dropped: u64,
}

impl LastModTable {
    /// URLs remembered by default: 524,288 (about 10 MiB of table at most).
    pub const DEFAULT_MAX_URLS: usize = 1 << 19;

    /// An empty map holding at most `max_urls` URLs.
    #[must_use]
    pub fn new(max_urls: usize) -> Self {
        Self {
            map: HashMap::new(),
            waited: HashSet::new(),
            max_urls,
            dropped: 0,
        }
    }

    /// Records `lastmod` for `url`; false when the cap kept it out (counted).
    pub fn record(&mut self, url: &str, lastmod: LastMod) -> bool {
        let key = key(url);
        if let Some(secs) = self.map.get_mut(&key) {
            *secs = (*secs).max(lastmod.until);
            return true;
        }
        if self.map.len() >= self.max_urls {
            self.dropped += 1;
            return false;
        }
        self.map.insert(key, lastmod.until);
        true
    }

    /// The newest `<lastmod>` recorded for `url`.
    #[must_use]
    pub fn get(&self, url: &str) -> Option<LastMod> {
        self.map
            .get(&key(url))
            .map(|&until| LastMod { secs: until, until })
    }

    /// True the first time it is asked for `url` (and while fewer than `max_urls`
    /// URLs have waited): the caller lets the URL wait one turn, so a sitemap behind
    /// it in its host's queue is read first. False after (it never waits twice) or past
    /// the cap (it is then fetched conditionally at once).
    pub fn wait_once(&mut self, url: &str) -> bool {
        let key = key(url);
        if self.waited.contains(&key) {
            return false;
        }
        if self.waited.len() >= self.max_urls {
            self.dropped += 1;
            return false;
        }
        self.waited.insert(key)
    }

    /// URLs remembered.
    #[must_use]
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when no URL is remembered.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Dates not kept and waits refused because of the caps, so far: URLs that may
    /// be asked for where they could have been skipped.
    #[must_use]
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

impl Default for LastModTable {
    fn default() -> Self {
        Self::new(Self::DEFAULT_MAX_URLS)
    }
}

fn key(url: &str) -> u64 {
    // `DefaultHasher::new()` has fixed keys: the same URL hashes alike in every shard.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    url.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_wins_and_the_cap_counts() {
        let mut m = LastModTable::new(2);
        assert!(m.record(
            "http://a/1",
            LastMod {
                secs: 10,
                until: 10
            }
        ));
        assert!(m.record("http://a/1", LastMod { secs: 5, until: 5 }));
        assert_eq!(
            m.get("http://a/1"),
            Some(LastMod {
                secs: 10,
                until: 10
            })
        );
        assert!(m.record(
            "http://a/1",
            LastMod {
                secs: 20,
                until: 20
            }
        ));
        assert_eq!(
            m.get("http://a/1"),
            Some(LastMod {
                secs: 20,
                until: 20
            })
        );
        assert!(m.record("http://a/2", LastMod { secs: 1, until: 1 }));
        assert!(!m.record("http://a/3", LastMod { secs: 1, until: 1 }));
        assert_eq!((m.len(), m.dropped()), (2, 1));
        assert_eq!(m.get("http://a/3"), None);
        // A URL already held is updated even at the cap.
        assert!(m.record("http://a/2", LastMod { secs: 2, until: 2 }));
    }

    #[test]
    fn a_url_waits_once_and_the_waits_are_capped() {
        let mut m = LastModTable::new(2);
        assert!(m.wait_once("http://a/1"));
        assert!(!m.wait_once("http://a/1"));
        assert!(m.wait_once("http://a/2"));
        assert!(!m.wait_once("http://a/3"));
        assert!(!m.wait_once("http://a/1"));
        assert_eq!(m.dropped(), 1);
    }
}
