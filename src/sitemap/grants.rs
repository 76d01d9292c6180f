//! The robots.txt permission along a chain of sitemap indexes (sitemaps.org
//! cross-submission): for each sitemap, the origins whose robots.txt named it or an
//! index above it. [`admit`](super::admit) is the rule; this is the memory a crawl
//! keeps to feed it, since the fetches of one chain (robots.txt → index → sitemap) are
//! independent queued URLs, possibly on different hosts and shards.
//!
//! Typical case: `www.example.com/robots.txt` names an index on a storage host; the
//! index lists sitemaps on the storage host; those list `www.example.com` pages. The
//! index is granted `http://www.example.com`; each sitemap it lists inherits that
//! grant, so the `www` pages pass the host rule.
//!
//! Bounded: at most `max_sitemaps` sitemaps and `max_origins` origins per sitemap; a
//! grant past either cap is not recorded and [`Granted::Full`] says so (the caller
//! logs and counts it). Sans-IO: no clock, no file.

use std::collections::HashMap;

/// What [`Grants::grant`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Granted {
    /// At least one origin was added, before the sitemap was read: the read will use
    /// it.
    Added,
    /// Every origin was already granted: nothing changed.
    Known,
    /// At least one origin was added to a sitemap already read: its entries were
    /// judged without it, so it must be read again (once; the grant is marked unread).
    AfterRead,
    /// The sitemap or an origin could not be recorded (a cap): the permission is not
    /// widened.
    Full,
}

/// One sitemap's grant.
#[derive(Debug, Default)]
struct Grant {
    origins: Vec<Box<str>>,
    read: bool,
}

/// Sitemap URL → origins whose robots.txt permission it carries. See the module docs.
#[derive(Debug)]
pub struct Grants {
    map: HashMap<Box<str>, Grant>,
    max_sitemaps: usize,
    max_origins: usize,
    dropped: u64,
}

impl Grants {
    /// Sitemaps remembered by default: far more than a crawl reads in practice (each
    /// costs its URL and origins, some hundreds of bytes).
    pub const DEFAULT_MAX_SITEMAPS: usize = 65_536;
    /// Origins per sitemap by default (how many robots.txt files name one sitemap or
    /// the indexes above it).
    pub const DEFAULT_MAX_ORIGINS: usize = 16;

    /// An empty memory with these caps.
    #[must_use]
    pub fn new(max_sitemaps: usize, max_origins: usize) -> Self {
        Self {
            map: HashMap::new(),
            max_sitemaps,
            max_origins,
            dropped: 0,
        }
    }

    /// Adds `origins` to `sitemap`'s grant (a union: several robots.txt files may name
    /// one sitemap, several indexes list one child).
    pub fn grant(&mut self, sitemap: &str, origins: &[String]) -> Granted {
        let full = self.map.len() >= self.max_sitemaps;
        let entry = match self.map.get_mut(sitemap) {
            Some(e) => e,
            None if full => {
                self.dropped += 1;
                return Granted::Full;
            }
            None => self.map.entry(sitemap.into()).or_default(),
        };
        let mut added = false;
        let mut refused = false;
        for o in origins {
            if entry.origins.iter().any(|x| **x == **o) {
                continue;
            }
            if entry.origins.len() >= self.max_origins {
                refused = true;
                continue;
            }
            entry.origins.push(o.as_str().into());
            added = true;
        }
        if refused {
            self.dropped += 1;
        }
        match (added, entry.read, refused) {
            (true, true, _) => {
                entry.read = false;
                Granted::AfterRead
            }
            (true, false, _) => Granted::Added,
            (false, _, true) => Granted::Full,
            (false, _, false) => Granted::Known,
        }
    }

    /// The origins granted to `sitemap`, marking it read (a later grant then asks for
    /// a second read); `None` when nothing is known of it (never granted, or the cap
    /// kept it out).
    pub fn read(&mut self, sitemap: &str) -> Option<Vec<String>> {
        let entry = self.map.get_mut(sitemap)?;
        entry.read = true;
        Some(entry.origins.iter().map(|o| o.to_string()).collect())
    }

    /// The origins granted to `sitemap`, without marking it read (the grant of an
    /// index, looked up for a child whose own grant is unknown).
    #[must_use]
    pub fn origins(&self, sitemap: &str) -> Option<Vec<String>> {
        let entry = self.map.get(sitemap)?;
        Some(entry.origins.iter().map(|o| o.to_string()).collect())
    }

    /// Sitemaps remembered.
    #[must_use]
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when no sitemap is remembered.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Grants not recorded because of a cap, so far.
    #[must_use]
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

impl Default for Grants {
    fn default() -> Self {
        Self::new(Self::DEFAULT_MAX_SITEMAPS, Self::DEFAULT_MAX_ORIGINS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(s: &str) -> Vec<String> {
        vec![s.to_owned()]
    }

    #[test]
    fn grants_are_a_union_and_a_late_one_asks_for_a_second_read() {
        let mut g = Grants::default();
        let s = "http://storage.test/index.xml";
        assert_eq!(g.grant(s, &o("http://www.a.test")), Granted::Added);
        assert_eq!(g.grant(s, &o("http://www.a.test")), Granted::Known);
        assert_eq!(g.grant(s, &o("http://b.test")), Granted::Added);
        assert_eq!(
            g.read(s),
            Some(vec![
                "http://www.a.test".to_owned(),
                "http://b.test".to_owned()
            ])
        );
        // Named again by a robots.txt already counted: nothing to do.
        assert_eq!(g.grant(s, &o("http://b.test")), Granted::Known);
        // A new origin after the read: read it again, once.
        assert_eq!(g.grant(s, &o("http://c.test")), Granted::AfterRead);
        assert_eq!(g.grant(s, &o("http://d.test")), Granted::Added);
        assert_eq!(g.read(s).map(|v| v.len()), Some(4));
        // Looking a grant up marks nothing read: a new origin is an ordinary grant.
        assert_eq!(g.origins(s).map(|v| v.len()), Some(4));
        assert_eq!(g.grant(s, &o("http://e.test")), Granted::AfterRead);
        assert_eq!(g.origins(s).map(|v| v.len()), Some(5));
        assert_eq!(g.grant(s, &o("http://f.test")), Granted::Added);
        assert_eq!(g.read("http://other.test/s.xml"), None);
        assert_eq!(g.dropped(), 0);
    }

    #[test]
    fn caps_refuse_and_count() {
        let mut g = Grants::new(2, 2);
        assert_eq!(g.grant("s1", &o("a")), Granted::Added);
        assert_eq!(g.grant("s2", &o("a")), Granted::Added);
        assert_eq!(g.grant("s3", &o("a")), Granted::Full);
        assert_eq!(g.len(), 2);
        assert_eq!(
            g.grant("s1", &["b".to_owned(), "c".to_owned()]),
            Granted::Added
        );
        assert_eq!(g.grant("s1", &o("d")), Granted::Full);
        assert_eq!(g.read("s1"), Some(vec!["a".to_owned(), "b".to_owned()]));
        assert_eq!(g.dropped(), 3);
        assert_eq!(g.read("s3"), None);
    }
}
