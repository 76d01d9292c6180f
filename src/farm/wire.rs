//! The format of one stream entry: a versioned, checksummed batch of links for one
//! partition, each with the page it was found on, its hop path and, for a sitemap
//! file, the robots.txt permission it carries (its grant), as the engine's routed
//! links carry them.
//!
//! Layout (integers little-endian, `varint` = LEB128 u64, `text` = `len varint`
//! then that many bytes of UTF-8):
//! ```text
//! magic "TRWL" | version u8 | from_node varint | partition varint | count varint
//! count x ( url text | via text | hops text | grants varint | grants x origin text )
//! crc32 u32 of everything before it
//! ```
//! Version 1 had no grant; a version 1 entry (or a checkpoint outbox written by a
//! version 1 build) is refused with [`WireError::Version`], like any other foreign
//! version.
//! Every field is bounds-checked: garbage, a truncated entry, a foreign version or a
//! bad checksum decode to a [`WireError`], never a panic (the caller logs and skips the
//! entry; `fuzz_decode` is the fuzz entry point, replayed by `tests/fuzz_farm.rs`).
#![deny(clippy::indexing_slicing, clippy::expect_used, clippy::panic)]

/// First bytes of every entry.
pub const MAGIC: &[u8; 4] = b"TRWL";

/// The format version this build writes and reads. A node of another version reading
/// our entries skips them with a [`WireError::Version`] (logged, counted in
/// `bad_entries` and acknowledged with its next checkpoint: every node of a farm must
/// run a build of one format version). 2: each link carries its sitemap grant.
pub const VERSION: u8 = 2;

/// Most links in one entry (a sender cuts batches far below this).
pub const MAX_LINKS: u64 = 65_536;

/// Longest URL, via, hop path or origin accepted in an entry, in bytes.
pub const MAX_FIELD_BYTES: u64 = 1 << 16;

/// Most origins in one link's grant; [`Entry::encode`] writes the first this many
/// (the engine keeps at most 16 per sitemap: `sitemap::Grants`).
pub const MAX_GRANT_ORIGINS: usize = 64;

/// One exchanged link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireLink {
    /// The canonical URL.
    pub url: String,
    /// The page (or redirect) it was found on.
    pub via: String,
    /// Hop path from the seed, this link's hop included (`LLR`...).
    pub hops: String,
    /// For a sitemap file: the origins whose robots.txt permission it carries (named
    /// by their robots.txt, or listed by an index that carried theirs; see
    /// `engine/core/sitemaps.rs`), so the owner reads it with the permission one node
    /// would. Empty for other links.
    pub grant: Vec<String>,
}

/// A decoded entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub from_node: u32,
    pub partition: u32,
    pub links: Vec<WireLink>,
}

/// Why an entry does not decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("entry truncated")]
    Truncated,
    #[error("not a trawl farm entry (bad magic)")]
    Magic,
    #[error("entry format version {0}, this build reads {VERSION}")]
    Version(u8),
    #[error("entry checksum mismatch")]
    Checksum,
    #[error("entry field too large")]
    TooLarge,
    #[error("entry text is not UTF-8")]
    Utf8,
    #[error("bytes after the entry's links")]
    Trailing,
}

impl Entry {
    /// Encodes the entry.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(
            16 + self
                .links
                .iter()
                .map(|l| {
                    l.url.len()
                        + l.via.len()
                        + l.hops.len()
                        + l.grant.iter().map(|o| o.len() + 2).sum::<usize>()
                        + 7
                })
                .sum::<usize>(),
        );
        out.extend_from_slice(MAGIC);
        out.push(VERSION);
        put_varint(&mut out, u64::from(self.from_node));
        put_varint(&mut out, u64::from(self.partition));
        put_varint(&mut out, self.links.len() as u64);
        for l in &self.links {
            for s in [&l.url, &l.via, &l.hops] {
                put_text(&mut out, s);
            }
            let grant = l.grant.get(..MAX_GRANT_ORIGINS).unwrap_or(&l.grant);
            put_varint(&mut out, grant.len() as u64);
            for origin in grant {
                put_text(&mut out, origin);
            }
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Decodes an entry.
    ///
    /// # Errors
    /// See [`WireError`]; the magic and version are checked before the checksum, so a
    /// foreign version is reported as such.
    pub fn decode(data: &[u8]) -> Result<Self, WireError> {
        let (magic, rest) = data
            .split_at_checked(MAGIC.len())
            .ok_or(WireError::Truncated)?;
        if magic != MAGIC {
            return Err(WireError::Magic);
        }
        let (&version, _) = rest.split_first().ok_or(WireError::Truncated)?;
        if version != VERSION {
            return Err(WireError::Version(version));
        }
        let body_len = data.len().checked_sub(4).ok_or(WireError::Truncated)?;
        let (body, crc) = data
            .split_at_checked(body_len)
            .ok_or(WireError::Truncated)?;
        let crc: [u8; 4] = crc.try_into().map_err(|_| WireError::Truncated)?;
        if crc32fast::hash(body) != u32::from_le_bytes(crc) {
            return Err(WireError::Checksum);
        }
        let mut r = Reader {
            rest: body.get(MAGIC.len() + 1..).ok_or(WireError::Truncated)?,
        };
        let from_node = u32::try_from(r.varint()?).map_err(|_| WireError::TooLarge)?;
        let partition = u32::try_from(r.varint()?).map_err(|_| WireError::TooLarge)?;
        let count = r.varint()?;
        if count > MAX_LINKS {
            return Err(WireError::TooLarge);
        }
        // Each link takes at least four bytes: no allocation past what the data holds.
        let mut links = Vec::with_capacity((count as usize).min(r.rest.len() / 4));
        for _ in 0..count {
            let url = r.text()?;
            let via = r.text()?;
            let hops = r.text()?;
            let origins = r.varint()?;
            if origins > MAX_GRANT_ORIGINS as u64 {
                return Err(WireError::TooLarge);
            }
            let mut grant = Vec::with_capacity(origins as usize);
            for _ in 0..origins {
                grant.push(r.text()?);
            }
            links.push(WireLink {
                url,
                via,
                hops,
                grant,
            });
        }
        if !r.rest.is_empty() {
            return Err(WireError::Trailing);
        }
        Ok(Self {
            from_node,
            partition,
            links,
        })
    }
}

struct Reader<'a> {
    rest: &'a [u8],
}

impl Reader<'_> {
    fn varint(&mut self) -> Result<u64, WireError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = self.rest.split_first().ok_or(WireError::Truncated)?;
            self.rest = rest;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(WireError::TooLarge)
    }

    fn text(&mut self) -> Result<String, WireError> {
        let len = self.varint()?;
        if len > MAX_FIELD_BYTES {
            return Err(WireError::TooLarge);
        }
        let (s, rest) = self
            .rest
            .split_at_checked(len as usize)
            .ok_or(WireError::Truncated)?;
        self.rest = rest;
        String::from_utf8(s.to_vec()).map_err(|_| WireError::Utf8)
    }
}

fn put_text(out: &mut Vec<u8>, s: &str) {
    put_varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// Fuzz entry point: decodes `data` as a stream entry. Must never panic; an entry
/// that decodes must re-encode to the same bytes.
pub fn fuzz_decode(data: &[u8]) {
    if let Ok(e) = Entry::decode(data) {
        assert_eq!(e.encode(), data, "entry round trip");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Entry {
        Entry {
            from_node: 2,
            partition: 1023,
            links: vec![
                WireLink {
                    url: "http://a.test/x?y=1".into(),
                    via: "http://b.test/".into(),
                    hops: "LLR".into(),
                    grant: Vec::new(),
                },
                WireLink {
                    url: "http://a.test/é".into(),
                    via: String::new(),
                    hops: String::new(),
                    grant: Vec::new(),
                },
                WireLink {
                    url: "http://c.test/sitemap.xml.gz".into(),
                    via: "http://d.test/robots.txt".into(),
                    hops: "S".into(),
                    grant: vec!["http://d.test".into(), "https://e.test:8443".into()],
                },
            ],
        }
    }

    #[test]
    fn entries_round_trip() {
        let e = sample();
        assert_eq!(Entry::decode(&e.encode()), Ok(e));
        let empty = Entry {
            from_node: 0,
            partition: 0,
            links: Vec::new(),
        };
        assert_eq!(Entry::decode(&empty.encode()), Ok(empty));
    }

    #[test]
    fn damage_is_a_typed_error() {
        let good = sample().encode();
        for len in 0..good.len() {
            assert!(Entry::decode(&good[..len]).is_err(), "truncated at {len}");
        }
        for at in 0..good.len() {
            let mut bad = good.clone();
            bad[at] ^= 0x10;
            assert!(Entry::decode(&bad).is_err(), "flip at {at}");
        }
        assert_eq!(Entry::decode(b"hello world"), Err(WireError::Magic));
        let mut foreign = good.clone();
        foreign[4] = 9;
        assert_eq!(Entry::decode(&foreign), Err(WireError::Version(9)));
    }

    #[test]
    fn a_version_1_entry_is_refused_by_its_version() {
        // What a build before grants wrote: one link, no grant count.
        let mut v1 = MAGIC.to_vec();
        v1.push(1);
        v1.extend_from_slice(&[0, 5, 1]);
        for s in ["http://a.test/", "http://b.test/", "L"] {
            put_text(&mut v1, s);
        }
        let crc = crc32fast::hash(&v1);
        v1.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(Entry::decode(&v1), Err(WireError::Version(1)));
        assert_eq!(
            WireError::Version(1).to_string(),
            "entry format version 1, this build reads 2"
        );
    }

    #[test]
    fn grants_are_capped_on_both_sides() {
        let mut e = sample();
        e.links[2].grant = (0..100).map(|i| format!("http://o{i}.test")).collect();
        let back = Entry::decode(&e.encode()).unwrap();
        assert_eq!(back.links[2].grant.len(), MAX_GRANT_ORIGINS);
        assert_eq!(
            back.links[2].grant[..],
            e.links[2].grant[..MAX_GRANT_ORIGINS]
        );
        // A count over the cap is refused before anything is allocated for it.
        let mut body = MAGIC.to_vec();
        body.push(VERSION);
        body.extend_from_slice(&[0, 0, 1, 0, 0, 0]);
        put_varint(&mut body, MAX_GRANT_ORIGINS as u64 + 1);
        let crc = crc32fast::hash(&body);
        body.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(Entry::decode(&body), Err(WireError::TooLarge));
    }

    #[test]
    fn huge_counts_do_not_allocate() {
        let mut body = MAGIC.to_vec();
        body.push(VERSION);
        body.extend_from_slice(&[0, 0, 0xff, 0xff, 0x03]); // 65535 links claimed
        let crc = crc32fast::hash(&body);
        body.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(Entry::decode(&body), Err(WireError::Truncated));
    }
}
