//! The re-crawl inside a running crawl: the previous crawl's captures held for lookup
//! by URL ([`Previous`]), the judgement of each answer against them ([`judge`]), the
//! counts for `stats.json` ([`RecrawlCounters`]), and what the output thread needs to
//! write this crawl's own index entry ([`IndexFacts`]).
//!
//! The engine calls these from the shard driver (request headers are planned by the
//! core's request building, `engine/core/schedule.rs`); the decisions themselves are
//! the pure functions of [`super::plan`].

use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use url::Url;

use super::index::{
    read_entry_at, IndexEntry, IndexError, IndexReader, IndexVersion, IndexWriter, ReadAt,
    Validators, INDEX_FILE,
};
use super::plan::{classify, RecrawlStats, Verdict};
use crate::frontier::QueuedUrl;
use crate::http::ResponseHead;
use crate::provenance::{Digest, WarcDate};
use crate::warc::{RecordId, RevisitOf, RevisitProfile};

/// One URL of the previous crawl in [`Previous`]'s table: the hash of its URL and the
/// offset of its latest record in the index file. 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot {
    hash: u64,
    offset: u64,
}

/// Where [`Previous`] reads its records back from.
#[derive(Debug)]
enum Store {
    /// The index file, read with `pread` by every shard at once.
    File(File),
    /// The bytes of an index (tests, library users).
    Memory(Vec<u8>),
}

impl ReadAt for Store {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        match self {
            Self::File(f) => ReadAt::read_at(f, buf, offset),
            Self::Memory(m) => m.as_slice().read_at(buf, offset),
        }
    }
}

/// A `Read` over a [`Store`] from an offset on (the streaming passes).
struct StoreReader<'a> {
    store: &'a Store,
    pos: u64,
}

impl io::Read for StoreReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.store.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// The hash of a URL in the table (xxh3, 64 bits).
fn url_hash(url: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(url.as_bytes())
}

/// The previous crawl's latest capture of every URL it fetched, shared read-only by
/// the shards: a compact table read once at start from `PREV_OUT/recrawl.idx`.
///
/// Memory: the table is a sorted `Vec` of (64-bit URL hash, record offset), 16 bytes
/// per URL (test `previous_table_takes_16_bytes_per_url`); a lookup binary-searches
/// the hash and reads the record back from the index file with a positioned read
/// (`pread`, no lock: the shards share the file), comparing the URL, so two URLs with
/// the same hash are both found. The entry returned is owned. The table's bytes are
/// counted against `--memory` (`engine/setup.rs`).
#[derive(Debug)]
pub struct Previous {
    store: Store,
    version: IndexVersion,
    table: Vec<Slot>,
    hash: fn(&str) -> u64,
    /// One URL per host of the previous crawl, for the scope (taken once).
    host_urls: Vec<Url>,
    /// A read-back failure was logged (once).
    read_failed: AtomicBool,
    /// Where it was read from (for messages).
    pub path: PathBuf,
    /// [`Previous::warc_dirs`], found once.
    chain: std::sync::OnceLock<Vec<PathBuf>>,
}

impl Previous {
    /// Reads `prev_out/recrawl.idx` into the table (a later entry of a URL supersedes
    /// an earlier one). A torn tail (the previous crawl was killed mid-append) is cut
    /// off with a warning; any other damage refuses the whole file.
    ///
    /// # Errors
    /// Any [`IndexError`], including a missing file (`Io`).
    pub fn load(prev_out: &Path) -> Result<Self, IndexError> {
        let path = prev_out.join(INDEX_FILE);
        let file = File::open(&path).map_err(|source| IndexError::Io {
            path: path.clone(),
            source,
        })?;
        Self::build(Store::File(file), path, url_hash)
    }

    /// From entries in memory (tests, library users): encoded as a version-2 index
    /// and read like one.
    ///
    /// # Errors
    /// [`IndexError::Io`] for an entry too large to encode.
    pub fn from_entries(entries: impl IntoIterator<Item = IndexEntry>) -> Result<Self, IndexError> {
        Self::from_entries_with(entries, url_hash)
    }

    fn from_entries_with(
        entries: impl IntoIterator<Item = IndexEntry>,
        hash: fn(&str) -> u64,
    ) -> Result<Self, IndexError> {
        let mut bytes = super::index::FORMAT.header().to_vec();
        for e in entries {
            let record = super::index::encode(&e).map_err(|source| IndexError::Io {
                path: PathBuf::new(),
                source,
            })?;
            bytes.extend_from_slice(&record);
        }
        Self::build(Store::Memory(bytes), PathBuf::new(), hash)
    }

    /// Streams the index once: one slot per record, sorted by hash; then, where hashes
    /// repeat (the same URL written twice, or two URLs with one hash), the URLs are
    /// read back and only the latest record of each kept.
    fn build(store: Store, path: PathBuf, hash: fn(&str) -> u64) -> Result<Self, IndexError> {
        let mut reader = IndexReader::new(
            StoreReader {
                store: &store,
                pos: 0,
            },
            &path,
        )?;
        let version = reader.version();
        let mut table = Vec::new();
        let mut hosts: BTreeMap<String, Url> = BTreeMap::new();
        while let Some(next) = reader.next_entry() {
            let (offset, entry) = next?;
            table.push(Slot {
                hash: hash(&entry.url),
                offset,
            });
            if let Ok(url) = Url::parse(&entry.url) {
                if let Some(host) = url.host_str() {
                    if !hosts.contains_key(host) {
                        hosts.insert(host.to_owned(), url);
                    }
                }
            }
        }
        if let Some(r) = reader.recovered() {
            tracing::warn!(path = %path.display(), valid_bytes = r.valid_bytes, torn_bytes = r.torn_bytes,
                "re-crawl index ends in a torn record (the crawl that wrote it was killed): ignored");
        }
        drop(reader);
        table.sort_unstable_by_key(|s| (s.hash, s.offset));
        let table = latest_only(table, |offset| {
            read_entry_at(&store, version, offset, &path).map(|e| e.url)
        })?;
        Ok(Self {
            store,
            version,
            table,
            hash,
            host_urls: hosts.into_values().collect(),
            read_failed: AtomicBool::new(false),
            path,
            chain: std::sync::OnceLock::new(),
        })
    }

    /// The previous capture of `url` (canonical form), if any: read back from the
    /// index. A read that fails (the file changed under the crawl) is logged once and
    /// the URL treated as new.
    pub fn get(&self, url: &str) -> Option<IndexEntry> {
        let h = (self.hash)(url);
        let start = self.table.partition_point(|s| s.hash < h);
        let run = self.table.get(start..)?.iter().take_while(|s| s.hash == h);
        for slot in run {
            match self.read(slot.offset) {
                Ok(entry) if entry.url == url => return Some(entry),
                Ok(_) => {}
                Err(e) => {
                    if !self.read_failed.swap(true, Ordering::Relaxed) {
                        tracing::warn!(path = %self.path.display(), error = %e,
                            "re-crawl index: a record cannot be read back; its URL is fetched as new");
                    }
                    return None;
                }
            }
        }
        None
    }

    fn read(&self, offset: u64) -> Result<IndexEntry, IndexError> {
        read_entry_at(&self.store, self.version, offset, &self.path)
    }

    /// Every record of the index in file order (the order the previous crawl fetched
    /// in), streamed, superseded ones included (a caller that queues URLs drops
    /// repeats by the presence bits).
    ///
    /// # Errors
    /// Any [`IndexError`] of the header; the iterator yields the errors of records
    /// (checked at load: only if the file changed since).
    pub fn entries(
        &self,
    ) -> Result<impl Iterator<Item = Result<IndexEntry, IndexError>> + '_, IndexError> {
        IndexReader::new(
            StoreReader {
                store: &self.store,
                pos: 0,
            },
            &self.path,
        )
    }

    /// The latest entry of every URL, streamed in file order (each at the place of
    /// its latest record): what a re-crawl queues, with the hop path and referrer of
    /// that latest capture. Older records of a URL are passed over by their offset
    /// (the table holds the latest one's), with no read-back.
    ///
    /// # Errors
    /// The index cannot be read again (it changed since it was loaded).
    pub fn latest_entries(
        &self,
    ) -> Result<impl Iterator<Item = Result<IndexEntry, IndexError>> + '_, IndexError> {
        let mut reader = IndexReader::new(
            StoreReader {
                store: &self.store,
                pos: 0,
            },
            &self.path,
        )?;
        Ok(std::iter::from_fn(move || loop {
            match reader.next_entry()? {
                Ok((offset, entry)) if self.is_latest(&entry.url, offset) => {
                    return Some(Ok(entry))
                }
                Ok(_) => {}
                Err(e) => return Some(Err(e)),
            }
        }))
    }

    /// Whether the record at `offset` is the one the table keeps for `url`.
    fn is_latest(&self, url: &str, offset: u64) -> bool {
        let h = (self.hash)(url);
        let start = self.table.partition_point(|s| s.hash < h);
        self.table
            .get(start..)
            .unwrap_or_default()
            .iter()
            .take_while(|s| s.hash == h)
            .any(|s| s.offset == offset)
    }

    /// One URL per host of the previous crawl (taken: the scope is built once).
    pub fn take_host_urls(&mut self) -> Vec<Url> {
        std::mem::take(&mut self.host_urls)
    }

    /// The index layout read (a version-1 index has no hop paths).
    pub fn version(&self) -> IndexVersion {
        self.version
    }

    /// Bytes the table takes in memory (what `--memory` is charged).
    pub fn table_bytes(&self) -> u64 {
        (self.table.capacity() * std::mem::size_of::<Slot>()) as u64
    }

    /// The previous crawl's WARC directory (where its captures' outlinks are read back).
    pub fn warc_dir(&self) -> PathBuf {
        self.path
            .parent()
            .map_or_else(|| PathBuf::from("warc"), |d| d.join("warc"))
    }

    /// The WARC directories where the previous crawl's entries may point: its own,
    /// then those of the crawls it re-crawled in turn ([`PREVIOUS_FILE`], at most
    /// [`MAX_CHAIN`] crawls back). An entry a re-crawl kept without fetching the URL
    /// (a lastmod skip) names a file of an earlier crawl; WARC file names carry their
    /// creation time, so the first directory holding the name is the right one.
    pub fn warc_dirs(&self) -> &[PathBuf] {
        self.chain.get_or_init(|| self.find_warc_dirs())
    }

    fn find_warc_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = vec![self.warc_dir()];
        let mut out = self.path.parent().map(Path::to_path_buf);
        while let Some(dir) = out.take() {
            if dirs.len() > MAX_CHAIN {
                break;
            }
            let Some(earlier) = read_previous_out(&dir) else {
                break;
            };
            let warc = earlier.join("warc");
            if dirs.contains(&warc) {
                break;
            }
            dirs.push(warc);
            out = Some(earlier);
        }
        dirs
    }

    /// URLs held.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// True when the previous crawl fetched nothing.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}

/// Keeps, of `table` (sorted by hash, then offset), the latest slot of every URL: a
/// run of one hash is the common case and kept as is; a longer run has its URLs read
/// back (`url_at`) and keeps the last offset of each. Compacts in place.
fn latest_only(
    mut table: Vec<Slot>,
    url_at: impl Fn(u64) -> Result<String, IndexError>,
) -> Result<Vec<Slot>, IndexError> {
    let n = table.len();
    let (mut read, mut write) = (0, 0);
    while let Some(&first) = table.get(read) {
        let run = table
            .get(read..)
            .unwrap_or_default()
            .iter()
            .take_while(|s| s.hash == first.hash)
            .count();
        let mut keep: Vec<(String, u64)> = Vec::new();
        if run > 1 {
            for slot in table.get(read..read + run).unwrap_or_default() {
                let url = url_at(slot.offset)?;
                match keep.iter_mut().find(|(u, _)| *u == url) {
                    Some(k) => k.1 = slot.offset,
                    None => keep.push((url, slot.offset)),
                }
            }
        } else {
            keep.push((String::new(), first.offset));
        }
        keep.sort_unstable_by_key(|k| k.1);
        for (_, offset) in keep {
            if let Some(w) = table.get_mut(write) {
                *w = Slot {
                    hash: first.hash,
                    offset,
                };
            }
            write += 1;
        }
        read += run;
    }
    debug_assert!(write <= n);
    table.truncate(write);
    table.shrink_to_fit();
    Ok(table)
}

/// The re-crawl verdict of one page answer and what the capture needs for it.
#[derive(Debug, Clone)]
pub struct Judgement {
    /// What the answer means against the previous capture.
    pub verdict: Verdict,
    /// The revisit the capture is written as (a 304, or a 2xx with the previous
    /// payload digest), referring to the earlier capture.
    pub revisit: Option<RevisitOf>,
    /// The previous crawl's entry of the URL (read once per answer: the links of a
    /// 304 and this crawl's index entry come from it too).
    pub previous: Option<IndexEntry>,
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
/// previous capture `previous`, which the judgement keeps. The payload digest is
/// computed only for a 2xx with a previous capture (the one case it decides).
pub fn judge(previous: Option<IndexEntry>, status: u16, payload: Option<&[u8]>) -> Judgement {
    let prev = previous.as_ref();
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
    Judgement {
        verdict,
        revisit,
        previous,
    }
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
        hops: String,
        via: Option<String>,
    },
    /// A re-crawl revisit (304, or the previous payload again): the entry keeps the
    /// earlier capture's record id, date and digest (what the next re-crawl's revisit
    /// refers to: the capture that holds the payload), with the validators of this
    /// answer where it sent any and this crawl's hop path and referrer; its WARC file
    /// and offset
    /// become those of the revisit record written now, which its `metadata` record
    /// (the links carried forward) follows.
    CarryForward(IndexEntry),
    /// A URL this crawl did not fetch (skipped on its sitemap `<lastmod>`): the
    /// previous entry kept whole, with this crawl's hop path and referrer, so the next
    /// re-crawl has
    /// the URL, its validators and its date. Its WARC file is the earlier crawl's:
    /// [`Previous::warc_dirs`] follows the chain of previous crawls to find it.
    Unfetched(IndexEntry),
}

impl IndexFacts {
    /// The facts of this crawl's index entry for a fetched answer `o` to `item` (see
    /// [`IndexFacts::of`]; the previous capture is the judgement's); `None` without a
    /// response head or after a failure.
    pub fn of_outcome(
        o: &crate::fetch::FetchOutcome,
        item: &QueuedUrl,
        date: WarcDate,
        judgement: Option<&Judgement>,
    ) -> Option<Self> {
        let head = o.head.as_ref()?;
        if o.error.is_some() {
            return None;
        }
        let prev = judgement.and_then(|j| j.previous.as_ref());
        let payload_bytes = o.payload.as_ref().map_or(0, |p| p.len() as u64);
        Some(Self::of(
            o.url.as_str(),
            item,
            head,
            date,
            payload_bytes,
            prev,
            judgement,
        ))
    }

    /// The facts of a page answer with head `head` to `queued` (whose hop path and
    /// referrer the entry keeps): carried forward for a re-crawl revisit, else the
    /// capture's own.
    pub fn of(
        url: &str,
        queued: &QueuedUrl,
        head: &ResponseHead,
        date: WarcDate,
        payload_bytes: u64,
        prev: Option<&IndexEntry>,
        judgement: Option<&Judgement>,
    ) -> Self {
        let (hops, via) = (queued.hops.as_str(), queued.via.as_deref());
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
            entry.hops = Some(hops.to_owned());
            entry.via = referrer(via);
            return Self::CarryForward(entry);
        }
        Self::Capture {
            url: url.to_owned(),
            status: head.status,
            fetched_at_us: date.unix_micros(),
            validators,
            payload_bytes,
            hops: hops.to_owned(),
            via: referrer(via),
        }
    }

    /// The entry of a URL skipped on its sitemap `<lastmod>` (no request): `previous`,
    /// with the hop path and referrer `queued` has in this crawl.
    pub fn unfetched(previous: IndexEntry, queued: &QueuedUrl) -> Self {
        Self::Unfetched(IndexEntry {
            hops: Some(queued.hops.clone()),
            via: referrer(queued.via.as_deref()),
            ..previous
        })
    }

    /// The entry of a URL nothing was written for, if it has one
    /// ([`IndexFacts::Unfetched`]).
    pub fn without_capture(self) -> Option<IndexEntry> {
        match self {
            Self::Unfetched(entry) => Some(entry),
            Self::Capture { .. } | Self::CarryForward(_) => None,
        }
    }

    /// The entry once the capture is written (`record_id`, `payload_digest`,
    /// `warc_file`, `warc_offset` of the response or revisit record): a carried
    /// forward entry takes only the file and offset.
    pub fn entry(
        self,
        record_id: String,
        payload_digest: String,
        warc_file: String,
        warc_offset: u64,
    ) -> IndexEntry {
        match self {
            Self::CarryForward(entry) => IndexEntry {
                warc_file,
                warc_offset,
                ..entry
            },
            // Nothing was written for it: the earlier location stands.
            Self::Unfetched(entry) => entry,
            Self::Capture {
                url,
                status,
                fetched_at_us,
                validators,
                payload_bytes,
                hops,
                via,
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
                hops: Some(hops),
                via,
            },
        }
    }
}

/// The referrer an entry keeps: `None` for none (an empty one would read back as
/// none: one encoding per entry).
fn referrer(via: Option<&str>) -> Option<String> {
    via.filter(|v| !v.is_empty()).map(str::to_owned)
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
pub fn open_index(
    out: &Path,
    resumed: bool,
    checkpointed_bytes: Option<u64>,
) -> Result<IndexWriter, IndexError> {
    let path = out.join(INDEX_FILE);
    if resumed && path.exists() {
        if let Some(len) = checkpointed_bytes {
            cut_to(&path, len)?;
        }
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

/// Cuts the index at `path` back to `len` bytes (the checkpoint's length) when it is
/// longer: the entries after it describe captures the resume cut off the WARC files.
fn cut_to(path: &Path, len: u64) -> Result<(), IndexError> {
    let io_err = |source| IndexError::Io {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(io_err)?;
    if file.metadata().map_err(io_err)?.len() > len {
        file.set_len(len).map_err(io_err)?;
        file.sync_all().map_err(io_err)?;
        tracing::info!(path = %path.display(), len, "re-crawl index cut back to the checkpoint");
    }
    Ok(())
}

/// File in a re-crawl's output directory naming (absolute path, one line) the output
/// directory of the crawl it re-crawled: how [`Previous::warc_dirs`] walks back.
pub const PREVIOUS_FILE: &str = "recrawl.prev";

/// Most crawls [`Previous::warc_dirs`] walks back.
pub const MAX_CHAIN: usize = 16;

/// Records, in a re-crawl's output directory `out`, which crawl it re-crawled
/// (`prev_out` made absolute).
///
/// # Errors
/// The file cannot be written.
pub fn write_previous_out(out: &Path, prev_out: &Path) -> Result<(), crate::disk::DiskError> {
    let abs = std::fs::canonicalize(prev_out).unwrap_or_else(|_| prev_out.to_path_buf());
    let mut text = abs.to_string_lossy().into_owned();
    text.push('\n');
    crate::disk::replace_atomic(&out.join(PREVIOUS_FILE), |w| {
        std::io::Write::write_all(w, text.as_bytes())
    })
}

/// The crawl `out` re-crawled, if it was a re-crawl that recorded it.
fn read_previous_out(out: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(out.join(PREVIOUS_FILE)).ok()?;
    let line = text.lines().next()?.trim();
    (!line.is_empty()).then(|| PathBuf::from(line))
}

#[cfg(test)]
mod tests;
