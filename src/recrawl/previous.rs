//! The re-crawl inside a running crawl: the previous crawl's captures held for lookup
//! by URL ([`Previous`]), the judgement of each answer against them ([`judge`]), the
//! counts for `stats.json` ([`RecrawlCounters`]), and what the output thread needs to
//! write this crawl's own index entry ([`IndexFacts`]).
//!
//! The engine calls these from the shard driver (request headers are planned by the
//! core's request building, `engine/core/schedule.rs`); the decisions themselves are
//! the pure functions of [`super::plan`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::index::{read_latest, IndexEntry, IndexError, IndexWriter, Validators, INDEX_FILE};
use super::plan::{classify, RecrawlStats, Verdict};
use crate::http::ResponseHead;
use crate::warc::{Digest, RecordId, RevisitOf, RevisitProfile, WarcDate};

/// The previous crawl's latest capture of every URL it fetched, read once at start
/// from `PREV_OUT/recrawl.idx` and shared read-only by the shards.
///
/// Memory: one `IndexEntry` per URL plus its key: the struct is 176 bytes, the key a
/// second copy of the URL, seven heap strings and the hash table's slack; measured at
/// about 700 bytes per synthweb URL (`memory::previous_memory_per_url`), 70 MB per
/// 100,000 URLs. A
/// re-crawl of more URLs than `--memory` allows for this is not supported yet (the
/// index could be streamed into a sorted on-disk table instead).
#[derive(Debug, Default)]
pub struct Previous {
    entries: HashMap<String, IndexEntry>,
    /// Where it was read from (for messages).
    pub path: PathBuf,
}

impl Previous {
    /// Reads `prev_out/recrawl.idx` (the latest entry per URL). A torn tail (the
    /// previous crawl was killed mid-append) is cut off with a warning; any other
    /// damage refuses the whole file.
    ///
    /// # Errors
    /// Any [`IndexError`], including a missing file (`Io`).
    pub fn load(prev_out: &Path) -> Result<Self, IndexError> {
        let path = prev_out.join(INDEX_FILE);
        let (entries, recovered) = read_latest(&path)?;
        if let Some(r) = recovered {
            tracing::warn!(path = %path.display(), valid_bytes = r.valid_bytes, torn_bytes = r.torn_bytes,
                "re-crawl index ends in a torn record (the crawl that wrote it was killed): ignored");
        }
        Ok(Self { entries, path })
    }

    /// From entries already in memory (tests, library users).
    pub fn from_entries(entries: impl IntoIterator<Item = IndexEntry>) -> Self {
        Self {
            entries: entries.into_iter().map(|e| (e.url.clone(), e)).collect(),
            path: PathBuf::new(),
        }
    }

    /// The previous capture of `url` (canonical form), if any.
    pub fn get(&self, url: &str) -> Option<&IndexEntry> {
        self.entries.get(url)
    }

    /// The URLs the previous crawl fetched: the seeds of the re-crawl, sorted so
    /// the seeding order does not depend on the hash table.
    pub fn urls(&self) -> Vec<&str> {
        let mut urls: Vec<&str> = self.entries.keys().map(String::as_str).collect();
        urls.sort_unstable();
        urls
    }

    /// The previous crawl's WARC directory (where its captures' outlinks are read back).
    pub fn warc_dir(&self) -> PathBuf {
        self.path
            .parent()
            .map_or_else(|| PathBuf::from("warc"), |d| d.join("warc"))
    }

    /// URLs held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the previous crawl fetched nothing.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The re-crawl verdict of one page answer and what the capture needs for it.
#[derive(Debug, Clone)]
pub struct Judgement {
    /// What the answer means against the previous capture.
    pub verdict: Verdict,
    /// The revisit the capture is written as (a 304, or a 2xx with the previous
    /// payload digest), referring to the earlier capture.
    pub revisit: Option<RevisitOf>,
}

impl Judgement {
    /// The crawl-log annotation (`not-modified`, `unchanged`, `changed`, `gone`,
    /// `new`), `None` for answers a re-crawl does not count.
    pub fn annotation(&self) -> Option<&'static str> {
        Some(match self.verdict {
            Verdict::NotModified => "not-modified",
            Verdict::Unchanged => "unchanged",
            Verdict::Changed => "changed",
            Verdict::Gone => "gone",
            Verdict::New => "new",
            Verdict::Other => return None,
        })
    }
}

/// Judges a page answer (`status`, `payload` without transfer coding) against the
/// previous capture `prev`. The payload digest is computed only for a 2xx with a
/// previous capture (the one case it decides).
pub fn judge(prev: Option<&IndexEntry>, status: u16, payload: Option<&[u8]>) -> Judgement {
    let digest = match (prev, status) {
        (Some(_), 200..=299) => payload.map(Digest::of),
        _ => None,
    };
    let text = digest.map(|d| d.to_string());
    let verdict = classify(prev, status, text.as_deref());
    let revisit = prev.and_then(|p| {
        let profile = match verdict {
            Verdict::NotModified => RevisitProfile::ServerNotModified,
            Verdict::Unchanged => RevisitProfile::IdenticalPayload,
            _ => return None,
        };
        // The digest of the payload referred to; a 304 whose earlier digest is not
        // readable gets the digest of its own (empty) payload.
        let payload_digest = p
            .payload_digest
            .parse::<Digest>()
            .ok()
            .or(digest)
            .unwrap_or_else(|| Digest::of(&[]));
        Some(RevisitOf {
            payload_digest,
            target_uri: p.url.clone(),
            date: WarcDate::from_unix_micros(p.fetched_at_us),
            record_id: p.record_id.parse::<RecordId>().ok(),
            profile,
        })
    });
    Judgement { verdict, revisit }
}

/// The re-crawl counts, shared by the shards (lock-free) and carried across a resume
/// by the checkpoint's counters.
#[derive(Debug, Default)]
pub struct RecrawlCounters {
    not_modified: AtomicU64,
    unchanged: AtomicU64,
    changed: AtomicU64,
    gone: AtomicU64,
    new: AtomicU64,
    skipped: AtomicU64,
    bytes_saved: AtomicU64,
}

impl RecrawlCounters {
    /// Counts one verdict (see [`RecrawlStats::record`]).
    pub fn record(&self, prev: Option<&IndexEntry>, verdict: Verdict) {
        let mut one = RecrawlStats::default();
        one.record(prev, verdict);
        self.add(&one);
    }

    fn add(&self, s: &RecrawlStats) {
        for (c, v) in self.fields().into_iter().zip(s.values()) {
            if v > 0 {
                c.fetch_add(v, Ordering::Relaxed);
            }
        }
    }

    /// The counts now.
    pub fn snapshot(&self) -> RecrawlStats {
        let [a, b, c, d, e, f, g] = self.fields().map(|c| c.load(Ordering::Acquire));
        RecrawlStats {
            not_modified: a,
            unchanged: b,
            changed: c,
            gone: d,
            new: e,
            skipped: f,
            bytes_saved: g,
        }
    }

    /// Sets the counts (a resume restores the checkpoint's).
    pub fn restore(&self, s: &RecrawlStats) {
        for (c, v) in self.fields().into_iter().zip(s.values()) {
            c.store(v, Ordering::Release);
        }
    }

    fn fields(&self) -> [&AtomicU64; 7] {
        [
            &self.not_modified,
            &self.unchanged,
            &self.changed,
            &self.gone,
            &self.new,
            &self.skipped,
            &self.bytes_saved,
        ]
    }
}

impl RecrawlStats {
    fn values(&self) -> [u64; 7] {
        [
            self.not_modified,
            self.unchanged,
            self.changed,
            self.gone,
            self.new,
            self.skipped,
            self.bytes_saved,
        ]
    }
}

/// What the output thread needs, besides the written capture's id, digest and
/// location, to append this crawl's index entry for a page.
#[derive(Debug, Clone)]
pub enum IndexFacts {
    /// A capture written in full (or a revisit the WARC writer chose within this
    /// crawl): the entry describes it.
    Capture {
        url: String,
        status: u16,
        fetched_at_us: i64,
        validators: Validators,
        payload_bytes: u64,
    },
    /// A re-crawl revisit (304, or the previous payload again): the entry is the
    /// earlier capture's, carried forward with the validators of this answer where it
    /// sent any, so the next re-crawl refers to the capture that holds the payload
    /// (its file is then the earlier crawl's, named relative to that crawl's output).
    CarryForward(IndexEntry),
}

impl IndexFacts {
    /// The facts of a page answer with head `head`: carried forward for a re-crawl
    /// revisit, else the capture's own.
    pub fn of(
        url: &str,
        head: &ResponseHead,
        date: WarcDate,
        payload_bytes: u64,
        prev: Option<&IndexEntry>,
        judgement: Option<&Judgement>,
    ) -> Self {
        let validators = Validators {
            etag: header_text(head, "etag"),
            last_modified: header_text(head, "last-modified"),
        };
        if let (
            Some(p),
            Some(Judgement {
                revisit: Some(_), ..
            }),
        ) = (prev, judgement)
        {
            let mut entry = p.clone();
            if validators.etag.is_some() || validators.last_modified.is_some() {
                entry.validators = validators;
            }
            return Self::CarryForward(entry);
        }
        Self::Capture {
            url: url.to_owned(),
            status: head.status,
            fetched_at_us: date.unix_micros(),
            validators,
            payload_bytes,
        }
    }

    /// The entry once the capture is written (`record_id`, `payload_digest`,
    /// `warc_file`, `warc_offset` of the response or revisit record).
    pub fn entry(
        self,
        record_id: String,
        payload_digest: String,
        warc_file: String,
        warc_offset: u64,
    ) -> IndexEntry {
        match self {
            Self::CarryForward(entry) => entry,
            Self::Capture {
                url,
                status,
                fetched_at_us,
                validators,
                payload_bytes,
            } => IndexEntry {
                url,
                status,
                fetched_at_us,
                validators,
                payload_digest,
                record_id,
                warc_file,
                warc_offset,
                payload_bytes,
            },
        }
    }
}

/// A header's value as text (validators are ASCII; anything else is not kept).
fn header_text(head: &ResponseHead, name: &str) -> Option<String> {
    let v = head.header(name)?;
    let s = std::str::from_utf8(v).ok()?.trim();
    (!s.is_empty() && s.len() <= 1024).then(|| s.to_owned())
}

/// Opens this crawl's index for writing: a fresh crawl starts a new file (replacing
/// what a run killed before its first checkpoint left), a resumed one appends after
/// its last complete record (a torn tail is cut).
///
/// # Errors
/// Any [`IndexError`]: a damaged index of a resumed crawl is not appended to.
pub fn open_index(out: &Path, resumed: bool) -> Result<IndexWriter, IndexError> {
    let path = out.join(INDEX_FILE);
    if resumed && path.exists() {
        let (writer, recovered) = IndexWriter::open_append(&path)?;
        if let Some(r) = recovered {
            tracing::warn!(path = %path.display(), torn_bytes = r.torn_bytes,
                "re-crawl index: torn tail cut on resume");
        }
        return Ok(writer);
    }
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => return Err(IndexError::Io { path, source }),
    }
    IndexWriter::create(&path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prev(status: u16, body: &[u8]) -> IndexEntry {
        IndexEntry {
            url: "http://a.test/p/1".to_owned(),
            status,
            fetched_at_us: 1_751_328_000_500_000,
            validators: Validators {
                etag: Some("\"e1\"".to_owned()),
                last_modified: None,
            },
            payload_digest: Digest::of(body).to_string(),
            record_id: RecordId::new_v4().to_string(),
            warc_file: "x.warc.gz".to_owned(),
            warc_offset: 7,
            payload_bytes: body.len() as u64,
        }
    }

    #[test]
    fn judgements_and_their_revisits() {
        let p = prev(200, b"hello");
        let j = judge(Some(&p), 304, Some(b""));
        assert_eq!(j.verdict, Verdict::NotModified);
        assert_eq!(j.annotation(), Some("not-modified"));
        let r = j.revisit.expect("a 304 is a revisit");
        assert_eq!(r.profile, RevisitProfile::ServerNotModified);
        assert_eq!(r.payload_digest, Digest::of(b"hello"));
        assert_eq!(
            r.record_id.map(|id| id.to_string()),
            Some(p.record_id.clone())
        );
        assert_eq!(r.date.unix_micros(), p.fetched_at_us);
        let j = judge(Some(&p), 200, Some(b"hello"));
        assert_eq!(j.verdict, Verdict::Unchanged);
        assert_eq!(
            j.revisit.map(|r| r.profile),
            Some(RevisitProfile::IdenticalPayload)
        );
        let j = judge(Some(&p), 200, Some(b"hello!"));
        assert_eq!((j.verdict, j.revisit.is_none()), (Verdict::Changed, true));
        assert_eq!(judge(Some(&p), 410, None).annotation(), Some("gone"));
        assert_eq!(judge(None, 200, Some(b"x")).annotation(), Some("new"));
        assert_eq!(judge(None, 404, None).annotation(), None);
    }

    #[test]
    fn counters_add_snapshot_and_restore() {
        let c = RecrawlCounters::default();
        let p = prev(200, b"hello");
        c.record(Some(&p), Verdict::NotModified);
        c.record(Some(&p), Verdict::NotModified);
        c.record(Some(&p), Verdict::Gone);
        c.record(None, Verdict::New);
        let s = c.snapshot();
        assert_eq!(
            (s.not_modified, s.gone, s.new, s.bytes_saved),
            (2, 1, 1, 10)
        );
        let d = RecrawlCounters::default();
        d.restore(&s);
        assert_eq!(d.snapshot(), s);
    }

    #[test]
    fn previous_urls_are_sorted_and_looked_up() {
        let mut a = prev(200, b"a");
        a.url = "http://b.test/".to_owned();
        let prev = Previous::from_entries([a, prev(200, b"b")]);
        assert_eq!(prev.urls(), ["http://a.test/p/1", "http://b.test/"]);
        assert_eq!(prev.get("http://b.test/").map(|e| e.status), Some(200));
        assert!(prev.get("http://c.test/").is_none());
    }
}

/// Measures the memory a [`Previous`] takes per URL (`cargo test --lib
/// previous_memory -- --ignored --nocapture`; the figure is in docs/recrawl.md).
#[cfg(test)]
mod memory {
    use super::*;

    fn rss_bytes() -> u64 {
        let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
        let pages: u64 = statm
            .split_whitespace()
            .nth(1)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        pages * 4096
    }

    #[test]
    #[ignore = "a measurement, not a check"]
    fn previous_memory_per_url() {
        const N: usize = 200_000;
        let before = rss_bytes();
        let entries = (0..N).map(|i| IndexEntry {
            url: format!("http://h{:06}.synth.test:40123/p/{i}", i % 1000),
            status: 200,
            fetched_at_us: 1_764_000_000_000_000 + i as i64,
            validators: Validators {
                etag: Some(format!("\"{i:016x}-br\"")),
                last_modified: Some("Fri, 21 Feb 2020 14:22:46 GMT".to_owned()),
            },
            payload_digest: "sha1:3DNNVLSLRQXZMT24WPIPEESIW24CFHAZ".to_owned(),
            record_id: RecordId::new_v4().to_string(),
            warc_file: "trawl-20261125180451-00000-0.warc.gz".to_owned(),
            warc_offset: i as u64 * 1000,
            payload_bytes: 6000,
        });
        let previous = Previous::from_entries(entries);
        let after = rss_bytes();
        eprintln!(
            "Previous: {} URLs, {} bytes per URL (IndexEntry {} bytes)",
            previous.len(),
            (after - before) / N as u64,
            std::mem::size_of::<IndexEntry>()
        );
        assert_eq!(previous.len(), N);
    }
}
