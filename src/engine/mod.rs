//! The crawl engine: shard threads, the coordinator that watches them, checkpoints
//! and the library API (`Crawler::builder()...build()?.run()`).
//!
//! See `docs/architecture.md` for the path of one URL and the checkpoint protocol.

pub mod config;
mod error;
pub mod metrics;
mod monitor;
pub(crate) mod output;
mod shard;
pub mod space;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crossbeam_channel::{bounded, unbounded, Sender};
use serde::Serialize;
use url::Url;

use crate::checkpoint::{self, Counters, Manifest, PresenceLogs};
use crate::crawllog::{LogRecord, Outcome};
use crate::frontier::{Frontier, FrontierConfig, FrontierStats, QueuedUrl, SegmentReader};
use crate::http::ResponseHead;
use crate::net::{FetchLimits, Fetcher, IpSlots};
use crate::seen::{ContentSeen, Purpose, SeenConfig, SeenSet};
use crate::url::UrlFilter;
use crate::warc::{WarcWriterConfig, WarcinfoFields};

pub use config::CrawlConfig;
pub use error::CrawlError;
pub use output::{OutputSummary, Positions};

/// A fetched response, as a [`Handler`] sees it.
#[derive(Debug)]
pub struct Page<'a> {
    pub url: &'a Url,
    pub head: &'a ResponseHead,
    /// The body, content-decoded.
    pub body: &'a [u8],
}

/// Hooks for embedding trawl in a pipeline. Called from shard threads, so they must be
/// cheap and thread-safe; a slow hook slows the crawl.
pub trait Handler: Send + Sync {
    /// A response arrived (any status).
    fn on_response(&self, _page: &Page<'_>) {}
    /// A crawl-log line was decided (fetched, robots, filtered, failed...).
    fn on_outcome(&self, _record: &LogRecord) {}
    /// A newly discovered link passed the filters; return false to drop it.
    fn accept_link(&self, _from: &str, _link: &Url) -> bool {
        true
    }
}

/// Counters of a crawl, as written to `stats.json`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    pub elapsed_secs: f64,
    pub pages: u64,
    pub pages_per_sec: f64,
    pub bytes: u64,
    pub mb_per_sec: f64,
    pub discovered: u64,
    pub duplicates: u64,
    /// Pages whose links passed `max_links_per_page` (crawl log: `links-truncated:N`).
    pub pages_links_truncated: u64,
    /// Pages longer than the link scanner reads (crawl log: `scan-truncated:BYTES`).
    pub pages_scan_truncated: u64,
    /// Pages with link attributes too long to read (crawl log: `long-attributes:N`).
    pub pages_long_attributes: u64,
    /// robots.txt bodies over the 500 KiB parse cap, read up to it (crawl log of the
    /// robots.txt fetch: `robots-truncated:BYTES`, the bytes not parsed).
    pub robots_truncated: u64,
    /// robots.txt bodies with lines over 16,663 bytes, whose tails were not read
    /// (crawl log: `robots-long-lines:N`).
    pub robots_long_lines: u64,
    /// Responses written as WARC `revisit` records (payload seen before).
    pub warc_revisits: u64,
    pub queued: u64,
    pub frontier_ram_urls: u64,
    pub frontier_disk_urls: u64,
    pub frontier_disk_bytes: u64,
    /// Hosts whose robots rules are cached, over all shards.
    pub robots_cache_hosts: u64,
    /// Bytes charged for them (budget: a quarter of `--memory`).
    pub robots_cache_bytes: u64,
    /// robots.txt fetches started; far more than the hosts crawled means the cache is
    /// too small for them (raise `--memory`).
    pub robots_fetches: u64,
    /// Robots entries dropped to stay within the budget.
    pub robots_cache_evictions: u64,
    pub frontier_ram_bytes: u64,
    pub disk_bytes_per_queued_url: f64,
    pub hosts_active: u64,
    pub hosts_parked: u64,
    pub outcomes: std::collections::BTreeMap<String, u64>,
    pub seen_fill_ratio: f64,
    pub seen_expected_fp: f64,
    pub seen_expected_lost_urls: f64,
    pub seen_file_bytes: u64,
    pub checkpoints: u64,
    /// Bytes the last checkpoint wrote (presence-log records, frontier, tallies,
    /// robots, manifest), the sum over this process's checkpoints and the largest.
    pub checkpoint_last_bytes: u64,
    pub checkpoint_total_bytes: u64,
    pub checkpoint_max_bytes: u64,
    /// Of those, the presence bits' (URL and fingerprint logs) in the last checkpoint.
    pub checkpoint_last_presence_bytes: u64,
    /// Wall seconds from the first barrier to the committed `CURRENT`: last, sum, max.
    pub checkpoint_last_secs: f64,
    pub checkpoint_total_secs: f64,
    pub checkpoint_max_secs: f64,
    /// Checkpoints that rewrote the presence logs whole (first one, compactions).
    pub checkpoint_compactions: u64,
    /// Resident memory now (`VmRSS`), of which the presence bits (URL and fingerprint
    /// sets' mappings) and the rest, so memory per URL can be judged without the bits.
    pub rss_bytes: u64,
    pub presence_bits_resident_bytes: u64,
    pub rss_less_presence_bits_bytes: u64,
    /// The kernel's peak (`VmHWM`), bits included.
    pub peak_rss_bytes: u64,
    /// The largest `rss_less_presence_bits_bytes` seen at any stats sample (progress,
    /// checkpoints, end).
    pub peak_rss_less_presence_bits_bytes: u64,
    pub resumed_from: Option<u64>,
    /// `disk` while fetching is paused for lack of space on `--out`, else absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused: Option<String>,
    /// Times fetching paused for disk space, and the seconds spent paused in all.
    pub disk_pauses: u64,
    pub disk_paused_secs: f64,
    /// Free bytes on the `--out` filesystem at the last probe, and the reserve kept
    /// (0 when `--disk-reserve 0` turned the watch off).
    pub disk_free_bytes: u64,
    pub disk_reserve_bytes: u64,
    /// Why the crawl ended: `exhausted`, `budget`, `stopped`.
    pub finish: String,
}

const OUTCOMES: [Outcome; 11] = [
    Outcome::Fetched,
    Outcome::Robots,
    Outcome::Filtered,
    Outcome::BlockedAddress,
    Outcome::DnsError,
    Outcome::ConnectError,
    Outcome::TlsError,
    Outcome::Timeout,
    Outcome::ProtocolError,
    Outcome::Budget,
    Outcome::HostParked,
];

fn outcome_index(o: Outcome) -> usize {
    OUTCOMES.iter().position(|x| *x == o).unwrap_or(0)
}

fn outcome_name(o: Outcome) -> String {
    serde_json::to_value(o)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// State every shard reads: configuration, presence bits, counters.
pub(crate) struct Shared {
    pub config: CrawlConfig,
    pub limits: FetchLimits,
    pub seen: SeenSet,
    pub fingerprints: ContentSeen,
    pub handler: Option<Arc<dyn Handler>>,
    /// URLs admitted and not yet finished (queued, in a channel, waiting, in flight).
    pub outstanding: AtomicU64,
    pub pages: AtomicU64,
    pub pages_started: AtomicU64,
    pub bytes: AtomicU64,
    pub discovered: AtomicU64,
    pub duplicates: AtomicU64,
    /// Pages a link-extraction cap cut (see `Stats`).
    pub pages_links_truncated: AtomicU64,
    pub pages_scan_truncated: AtomicU64,
    pub pages_long_attributes: AtomicU64,
    /// robots.txt bodies a parse cap cut (see `Stats`).
    pub robots_truncated: AtomicU64,
    pub robots_long_lines: AtomicU64,
    /// Counted by the output thread.
    pub warc_revisits: Arc<AtomicU64>,
    pub hosts_parked: AtomicU64,
    pub outcomes: [AtomicU64; 11],
    /// Stop taking new work (budget, signal).
    pub stopping: AtomicBool,
    /// Leave the loop now.
    pub exit: AtomicBool,
    /// Start no fetch: the output filesystem is short of space (`space::DiskWatch`).
    pub paused: AtomicBool,
    pub fatal: AtomicBool,
    pub frontier_stats: Mutex<Vec<FrontierStats>>,
    /// Each shard's robots cache figures, published with `frontier_stats`.
    pub robots_stats: Mutex<Vec<crate::robots::CacheStats>>,
    pub in_flight: Vec<AtomicU64>,
    /// Checkpoint sizes and times, for `stats.json`.
    pub checkpoint_figures: Mutex<CheckpointFigures>,
    /// Largest RSS less presence bits sampled so far.
    pub peak_rss_less_bits: AtomicU64,
}

/// Running checkpoint figures (see the `checkpoint_*` fields of [`Stats`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CheckpointFigures {
    pub last_bytes: u64,
    pub total_bytes: u64,
    pub max_bytes: u64,
    pub last_presence_bytes: u64,
    pub last_secs: f64,
    pub total_secs: f64,
    pub max_secs: f64,
    pub compactions: u64,
}

impl Shared {
    pub fn budget_spent(&self) -> bool {
        let c = &self.config;
        c.max_pages
            .is_some_and(|m| self.pages_started.load(Ordering::Acquire) >= m)
            || c.max_bytes
                .is_some_and(|m| self.bytes.load(Ordering::Acquire) >= m)
    }

    pub fn count_outcome(&self, o: Outcome) {
        if let Some(c) = self.outcomes.get(outcome_index(o)) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn counters(&self) -> Counters {
        Counters {
            pages: self.pages.load(Ordering::Acquire),
            pages_started: self.pages_started.load(Ordering::Acquire),
            bytes: self.bytes.load(Ordering::Acquire),
            discovered: self.discovered.load(Ordering::Acquire),
            duplicates: self.duplicates.load(Ordering::Acquire),
            warc_revisits: self.warc_revisits.load(Ordering::Acquire),
            pages_links_truncated: self.pages_links_truncated.load(Ordering::Acquire),
            pages_scan_truncated: self.pages_scan_truncated.load(Ordering::Acquire),
            pages_long_attributes: self.pages_long_attributes.load(Ordering::Acquire),
            robots_truncated: self.robots_truncated.load(Ordering::Acquire),
            robots_long_lines: self.robots_long_lines.load(Ordering::Acquire),
        }
    }
}

/// A message from the coordinator to a shard.
pub(crate) enum Control {
    Checkpoint(Arc<CheckpointCut>),
}

/// One checkpoint in progress: the barrier all shards and the coordinator meet at.
pub(crate) struct CheckpointCut {
    pub barrier: Barrier,
    pub dir: PathBuf,
    pub failed: AtomicBool,
}

/// Builds a [`Crawler`].
#[derive(Default)]
pub struct CrawlerBuilder {
    config: Option<CrawlConfig>,
    handler: Option<Arc<dyn Handler>>,
    resume: bool,
    stop: Option<Arc<AtomicBool>>,
}

impl CrawlerBuilder {
    /// Uses this configuration (seeds, output directory, limits...).
    pub fn config(mut self, config: CrawlConfig) -> Self {
        self.config = Some(config);
        self
    }

    /// Calls `handler` for every response, outcome and new link.
    pub fn handler(mut self, handler: Arc<dyn Handler>) -> Self {
        self.handler = Some(handler);
        self
    }

    /// Continues the crawl whose last checkpoint is in the output directory.
    pub fn resume(mut self, resume: bool) -> Self {
        self.resume = resume;
        self
    }

    /// A flag that, once set (e.g. by a SIGINT handler), stops the crawl gracefully:
    /// no new fetches, a final checkpoint, then `run` returns.
    pub fn stop_flag(mut self, flag: Arc<AtomicBool>) -> Self {
        self.stop = Some(flag);
        self
    }

    /// Validates the configuration.
    ///
    /// # Errors
    /// No configuration, no seeds (and not resuming), or a setting out of range
    /// ([`CrawlConfig::validate`]).
    pub fn build(self) -> Result<Crawler, CrawlError> {
        let config = self
            .config
            .ok_or_else(|| CrawlError::Config("no crawl configuration given".to_owned()))?;
        config
            .validate()
            .map_err(|e| CrawlError::Config(e.to_string()))?;
        if config.seeds.is_empty() && !self.resume {
            return Err(CrawlError::Config("no seed URLs".to_owned()));
        }
        if config.max_links_per_page == 0 {
            return Err(CrawlError::Config(
                "max_links_per_page must be at least 1".to_owned(),
            ));
        }
        Ok(Crawler {
            config,
            handler: self.handler,
            resume: self.resume,
            stop: self.stop.unwrap_or_default(),
        })
    }
}

/// A configured crawl, ready to [`Crawler::run`].
pub struct Crawler {
    config: CrawlConfig,
    handler: Option<Arc<dyn Handler>>,
    resume: bool,
    stop: Arc<AtomicBool>,
}

impl Crawler {
    /// Starts building a crawl.
    pub fn builder() -> CrawlerBuilder {
        CrawlerBuilder::default()
    }

    /// Runs the crawl to the end: the frontier is exhausted, a budget is spent, or the
    /// stop flag was set. Writes a final checkpoint and `stats.json`.
    ///
    /// # Errors
    /// Setting up the output directory, presence bits, writers or event loops failed,
    /// or a resume found no usable checkpoint.
    pub fn run(self) -> Result<Stats, CrawlError> {
        run(self)
    }
}

fn run(crawler: Crawler) -> Result<Stats, CrawlError> {
    let Crawler {
        mut config,
        handler,
        resume,
        stop,
    } = crawler;
    let out = config.out_dir.clone();
    fs::create_dir_all(&out).map_err(CrawlError::io("create", &out))?;
    let cp_root = out.join("checkpoint");
    let log_path = out.join("crawl.log.jsonl");
    let warc_dir = out.join("warc");
    let started_with = if resume {
        checkpoint::start::read(&out)?
    } else {
        None
    };
    if config.seeds.is_empty() {
        // The seeds of a resume come from the start file when not given again: they
        // set the scope, and a crawl killed before its first checkpoint restarts from
        // them.
        if let Some(start) = &started_with {
            config.seeds.clone_from(&start.seeds);
        }
    }
    let resumed = if resume {
        match checkpoint::load_current(&cp_root) {
            Ok(found) => Some(found),
            Err(checkpoint::CheckpointError::NoCheckpoint(_)) => {
                // Killed before its first checkpoint: nothing of that run is covered by
                // a cut, so it starts again from the seeds, and its output (the log and
                // WARC records of fetches that will be redone) is discarded, just as a
                // resume cuts both back to the checkpoint's positions.
                if config.seeds.is_empty() {
                    return Err(CrawlError::NothingToResume { root: cp_root });
                }
                tracing::warn!(out = %out.display(), "no checkpoint to resume: starting again from the seeds");
                discard_uncheckpointed_output(&log_path, &warc_dir)?;
                None
            }
            Err(e) => return Err(e.into()),
        }
    } else {
        let log_used = fs::metadata(&log_path).is_ok_and(|m| m.len() > 0);
        let started = checkpoint::start::start_path(&out).exists();
        if cp_root.join("CURRENT").exists() || log_used || started {
            return Err(CrawlError::OutputInUse { out });
        }
        None
    };
    write_start(&config, started_with.as_ref())?;

    // Presence bits and content fingerprints.
    let seen_path = out.join("seen.bits");
    let fp_path = out.join("fingerprints.bits");
    let (seen, fingerprints) = match &resumed {
        Some((dir, m)) if m.presence.is_some() => {
            let logs = m.presence.unwrap_or(PresenceLogs {
                seen_bytes: 0,
                fingerprints_bytes: 0,
            });
            let seen = SeenSet::restore_log(
                &logs.seen(dir),
                &seen_path,
                config.seen_backing,
                Some(Purpose::Urls),
            )?;
            let fps =
                ContentSeen::restore_log(&logs.fingerprints(dir), &fp_path, config.seen_backing)?;
            (seen, fps)
        }
        Some((dir, _)) => {
            let seen =
                SeenSet::restore_backed(dir.join("seen.bits"), &seen_path, config.seen_backing)?;
            let from = dir.join("fingerprints.bits");
            fs::copy(&from, &fp_path).map_err(CrawlError::io("copy", from))?;
            (
                seen,
                ContentSeen::open_backed(&fp_path, config.seen_backing)?,
            )
        }
        None => {
            let _ = fs::remove_file(&seen_path);
            let _ = fs::remove_file(&fp_path);
            let seen_config = SeenConfig {
                backing: config.seen_backing,
                ..SeenConfig::new(config.seen_capacity, config.seen_fp)
            };
            let seen = SeenSet::create_with(&seen_path, &seen_config)?;
            let fps = ContentSeen::create_backed(
                &fp_path,
                config.seen_capacity / 4 + 1024,
                config.seen_fp,
                config.seen_backing,
            )?;
            (seen, fps)
        }
    };

    // Outputs, repaired to the checkpoint's positions on resume.
    if let Some((_, m)) = &resumed {
        crate::crawllog::repair(&log_path, Some(m.positions.crawl_log_bytes))?;
        if let Some((file, offset)) = &m.positions.warc {
            let p = warc_dir.join(file);
            if p.exists() {
                crate::warc::repair(&p, Some(*offset))?;
            }
        }
        if warc_dir.exists() {
            crate::warc::recover(&warc_dir)?;
        }
    }
    let warc_cfg = if config.warc {
        fs::create_dir_all(&warc_dir).map_err(CrawlError::io("create", &warc_dir))?;
        let mut c = WarcWriterConfig::new(&warc_dir);
        c.max_file_bytes = config.warc_max_file_bytes;
        c.gzip_level = config.warc_gzip_level;
        c.dedup.max_bytes = usize::try_from(config.warc_dedup_budget()).unwrap_or(usize::MAX);
        c.warcinfo = WarcinfoFields {
            software: format!("trawl/{}", crate::VERSION),
            robots: "obey (RFC 9309)".to_owned(),
            operator: config.from.clone(),
            user_agent: Some(config.user_agent.clone()),
            ..c.warcinfo
        };
        Some(c)
    } else {
        None
    };
    let output =
        output::OutputThread::spawn(log_path, warc_cfg, 4096).map_err(CrawlError::Output)?;

    // URL filter scope from the seeds.
    let seed_urls: Vec<Url> = config
        .seeds
        .iter()
        .filter_map(|s| crate::url::canonicalize_absolute(s).ok())
        .collect();
    let filter = Arc::new(UrlFilter::new(config.filter.clone(), &seed_urls)?);

    let n = config.shards;
    let mut limits = FetchLimits::default();
    limits.response.max_body_bytes = limits.response.max_body_bytes.min(8 << 20);
    let shared = Arc::new(Shared {
        limits,
        seen,
        fingerprints,
        handler,
        outstanding: AtomicU64::new(0),
        pages: AtomicU64::new(0),
        pages_started: AtomicU64::new(0),
        bytes: AtomicU64::new(0),
        discovered: AtomicU64::new(0),
        duplicates: AtomicU64::new(0),
        pages_links_truncated: AtomicU64::new(0),
        pages_scan_truncated: AtomicU64::new(0),
        pages_long_attributes: AtomicU64::new(0),
        robots_truncated: AtomicU64::new(0),
        robots_long_lines: AtomicU64::new(0),
        warc_revisits: Arc::clone(&output.revisits),
        hosts_parked: AtomicU64::new(0),
        outcomes: Default::default(),
        stopping: AtomicBool::new(false),
        exit: AtomicBool::new(false),
        paused: AtomicBool::new(false),
        fatal: AtomicBool::new(false),
        frontier_stats: Mutex::new(vec![FrontierStats::default(); n]),
        robots_stats: Mutex::new(vec![crate::robots::CacheStats::default(); n]),
        in_flight: (0..n).map(|_| AtomicU64::new(0)).collect(),
        checkpoint_figures: Mutex::new(CheckpointFigures::default()),
        peak_rss_less_bits: AtomicU64::new(0),
        config,
    });
    log_presence_sizing(&shared);
    let config = &shared.config;
    let mut monitor = monitor::Monitor::new(config, Instant::now())?;

    // Frontiers, filled from the seeds or the checkpoint.
    let frontier_root = out.join("frontier");
    let _ = fs::remove_dir_all(&frontier_root);
    let mut frontiers = Vec::with_capacity(n);
    for i in 0..n {
        let mut fc = FrontierConfig::new(frontier_root.join(format!("shard-{i:04}")));
        fc.ram_budget_bytes = config.frontier_ram_bytes_per_shard();
        fc.max_in_flight_per_host = config.per_host_connections.max(1);
        frontiers.push(Frontier::new(fc)?);
    }
    let now = Instant::now();
    let mut resumed_epoch = None;
    let mut epoch = 0;
    let mut tallies: Vec<_> = (0..n).map(|_| Default::default()).collect();
    let mut robots: Vec<Vec<_>> = (0..n).map(|_| Vec::new()).collect();
    match &resumed {
        Some((dir, m)) => {
            let c = m.counters;
            shared.pages.store(c.pages, Ordering::Release);
            shared
                .pages_started
                .store(c.pages_started, Ordering::Release);
            shared.bytes.store(c.bytes, Ordering::Release);
            shared.discovered.store(c.discovered, Ordering::Release);
            shared.duplicates.store(c.duplicates, Ordering::Release);
            shared
                .warc_revisits
                .store(c.warc_revisits, Ordering::Release);
            for (counter, value) in [
                (&shared.pages_links_truncated, c.pages_links_truncated),
                (&shared.pages_scan_truncated, c.pages_scan_truncated),
                (&shared.pages_long_attributes, c.pages_long_attributes),
                (&shared.robots_truncated, c.robots_truncated),
                (&shared.robots_long_lines, c.robots_long_lines),
            ] {
                counter.store(value, Ordering::Release);
            }
            resumed_epoch = Some(m.epoch);
            epoch = m.epoch;
            tallies = shard::load_tallies(dir, n)
                .map_err(CrawlError::io("read the host tallies in", dir))?;
            robots = load_robots(dir, n, &config.robots);
            for file in checkpoint::frontier_files(dir)? {
                let segment = |source| CrawlError::FrontierSegment {
                    path: file.clone(),
                    source,
                };
                let mut r = SegmentReader::open(&file).map_err(segment)?;
                while let Some(rec) = r.next_record().map_err(segment)? {
                    let s = shard::shard_of(&rec.host, n);
                    if let Some(f) = frontiers.get_mut(s) {
                        f.push(&rec.host, rec.item, now)?;
                        shared.outstanding.fetch_add(1, Ordering::AcqRel);
                    }
                }
            }
        }
        None => {
            for url in &seed_urls {
                if shared.seen.test_and_set(url.as_str().as_bytes()) {
                    continue;
                }
                let Some(key) = shard::host_key(url) else {
                    continue;
                };
                let s = shard::shard_of(&key, n);
                if let Some(f) = frontiers.get_mut(s) {
                    f.push(&key, QueuedUrl::seed(url.as_str()), now)?;
                    shared.outstanding.fetch_add(1, Ordering::AcqRel);
                    shared.discovered.fetch_add(1, Ordering::AcqRel);
                }
            }
        }
    }

    // Event loops and channels.
    let mut fetchers = Vec::with_capacity(n);
    // One per-IP table for all shards: hosts are sharded by name, servers are not.
    let ip_slots = (config.per_ip_connections > 0).then(|| IpSlots::new(config.per_ip_connections));
    for _ in 0..n {
        let mut fc = config.fetcher.clone();
        fc.ip_slots.clone_from(&ip_slots);
        fc.max_connections = fc
            .max_connections
            .min(config.concurrency_per_shard * 2 + 16);
        fetchers.push(Fetcher::new(fc)?);
    }
    let wakers: Vec<Arc<mio::Waker>> = fetchers.iter().map(Fetcher::waker).collect();
    let inbox_wakers: Vec<Arc<shard::InboxWaker>> = wakers
        .iter()
        .map(|w| Arc::new(shard::InboxWaker::new(Arc::clone(w))))
        .collect();
    let (inbox_txs, inbox_rxs): (Vec<_>, Vec<_>) =
        (0..n).map(|_| bounded(shard::INBOX_BATCHES)).unzip();
    let (control_txs, control_rxs): (Vec<Sender<Control>>, Vec<_>) =
        (0..n).map(|_| unbounded()).unzip();
    let mut handles = Vec::with_capacity(n);
    for (i, ((((frontier, fetcher), (inbox, control)), tallies), robots)) in frontiers
        .into_iter()
        .zip(fetchers)
        .zip(inbox_rxs.into_iter().zip(control_rxs))
        .zip(tallies)
        .zip(robots)
        .enumerate()
    {
        let parts = shard::ShardParts {
            index: i,
            shared: Arc::clone(&shared),
            frontier,
            fetcher,
            filter: Arc::clone(&filter),
            inbox,
            peers: inbox_txs.clone(),
            peer_wakers: inbox_wakers.clone(),
            output: output.tx.clone(),
            control,
            tallies,
            robots,
            warc: output.warc_compressor.clone(),
        };
        let handle = std::thread::Builder::new()
            .name(format!("trawl-shard-{i}"))
            .spawn(move || shard::Shard::new(parts).run())
            .map_err(|source| CrawlError::ShardSpawn { index: i, source })?;
        handles.push(handle);
    }
    drop(inbox_txs);

    // The coordinator: progress, checkpoints, termination.
    let started = Instant::now();
    let mut next_checkpoint = started + nonzero(config.checkpoint_interval);
    let mut checkpoints = 0u64;
    let mut disk = space::DiskWatch::new(config.disk_reserve, started);
    if !disk.is_enabled() {
        // `--disk-reserve 0`: a write that meets ENOSPC fails at once, as it always did.
        output.stall.give_up();
    }
    disk.set_checkpoint_bytes(
        shared.seen.stats().file_bytes + shared.fingerprints.stats().file_bytes,
    );
    // A checkpoint the disk watch asks for: at a pause, once the fetches in flight have
    // ended (or at the instant held, when they take longer than a fetch may), and right
    // after a resume when one failed for lack of space. Letting them end first keeps a
    // checkpoint that the output holds up (it waits for space) from stalling them past
    // their deadlines, which would make them fail and be retried on a new connection
    // while the server still serves the old one.
    let mut disk_checkpoint: Option<Instant> = None;
    let mut disk_checkpoint_failed = false;
    let drain_limit = config.fetcher.deadlines.total_timeout + Duration::from_secs(1);
    // The committed checkpoint the next one appends its presence logs to.
    let mut last_cp: Option<(PathBuf, PresenceLogs)> = resumed
        .as_ref()
        .and_then(|(dir, m)| m.presence.map(|p| (dir.clone(), p)));
    let finish;
    loop {
        std::thread::sleep(Duration::from_millis(20));
        let now = Instant::now();
        if stop.load(Ordering::Acquire) && !shared.stopping.load(Ordering::Acquire) {
            shared.stopping.store(true, Ordering::Release);
        }
        if stop.load(Ordering::Acquire) && output.stall.is_waiting() {
            // Stopped while the disk is full: the output cannot be made durable, so it
            // gives up and the final checkpoint fails; the previous one stays current.
            output.stall.give_up();
        }
        let in_flight: u64 = shared
            .in_flight
            .iter()
            .map(|a| a.load(Ordering::Acquire))
            .sum();
        if shared.fatal.load(Ordering::Acquire) {
            finish = "error";
            break;
        }
        if shared.outstanding.load(Ordering::Acquire) == 0 && in_flight == 0 {
            finish = "exhausted";
            break;
        }
        if shared.stopping.load(Ordering::Acquire) && in_flight == 0 {
            finish = if stop.load(Ordering::Acquire) {
                "stopped"
            } else {
                "budget"
            };
            break;
        }
        if disk.is_due(now) {
            match space::probe(&out) {
                Ok(measured) => {
                    if let Some(change) = disk.observe(measured, output.stall.is_waiting(), now) {
                        match change {
                            space::Change::Paused { .. } => {
                                disk_checkpoint = Some(now + drain_limit);
                            }
                            space::Change::Resumed { .. } if disk_checkpoint_failed => {
                                disk_checkpoint = Some(now);
                            }
                            space::Change::Resumed { .. } => {}
                        }
                        on_disk_change(&shared, &out, &change);
                        let mut s = stats(&shared, started, checkpoints, resumed_epoch, "running");
                        disk.fill(&mut s, now);
                        if let Err(e) = write_stats(&out, &s) {
                            tracing::warn!(error = %e, "cannot write stats.json");
                        }
                    }
                }
                Err(e) => tracing::debug!(error = %e, "cannot measure free space on the output"),
            }
        }
        let periodic = !config.checkpoint_interval.is_zero() && now >= next_checkpoint;
        let disk_due = disk_checkpoint.is_some_and(|at| in_flight == 0 || now >= at);
        // No checkpoint while the output thread waits for space: the shards may be
        // blocked sending to it and would not reach the checkpoint's barriers.
        if (disk_due || (periodic && !disk.is_paused())) && !output.stall.is_waiting() {
            disk_checkpoint = None;
            epoch += 1;
            // Whether the disk was the trouble, should this checkpoint fail: it is one the
            // pause asked for, or a write waited for space while it ran (the coordinator
            // is blocked meanwhile, so space may be back by the time it fails).
            let (paused, stalls) = (disk.is_paused(), output.stall.stalls());
            match take_checkpoint(
                &shared,
                &control_txs,
                &wakers,
                &output.tx,
                &cp_root,
                epoch,
                last_cp.as_ref(),
            ) {
                Ok(cp) => {
                    last_cp = Some(cp);
                    checkpoints += 1;
                    disk_checkpoint_failed = false;
                    if let Ok(name) = checkpoint::current_name(&cp_root) {
                        disk.set_checkpoint_bytes(space::dir_bytes(&cp_root.join(name)));
                    }
                    let mut s = stats(&shared, started, checkpoints, resumed_epoch, "running");
                    disk.fill(&mut s, Instant::now());
                    match write_stats(&out, &s) {
                        Err(e) if disk.is_paused() => {
                            tracing::warn!(error = %e, "cannot write stats.json");
                        }
                        r => r?,
                    }
                }
                Err(e) => {
                    let disk_trouble = paused || output.stall.stalls() != stalls;
                    absorb_checkpoint_failure(e, disk_trouble, &shared, &out, &cp_root, &mut disk)?;
                    disk_checkpoint_failed = true;
                }
            }
            next_checkpoint = Instant::now() + config.checkpoint_interval;
        }
        if monitor.due(now) {
            let mut s = stats(&shared, started, checkpoints, resumed_epoch, "running");
            disk.fill(&mut s, now);
            monitor.update(&s, now);
        }
    }
    // Final checkpoint while the shards still hold their frontiers.
    epoch += 1;
    let cp = take_checkpoint(
        &shared,
        &control_txs,
        &wakers,
        &output.tx,
        &cp_root,
        epoch,
        last_cp.as_ref(),
    );
    checkpoints += u64::from(cp.is_ok());
    shared.exit.store(true, Ordering::Release);
    for w in &wakers {
        let _ = w.wake();
    }
    for h in handles {
        let _ = h.join();
    }
    drop(control_txs);
    output.finish().map_err(CrawlError::Output)?;
    cp?;
    let mut s = stats(&shared, started, checkpoints, resumed_epoch, finish);
    disk.fill(&mut s, Instant::now());
    monitor.finish(&s);
    write_stats(&out, &s)?;
    Ok(s)
}

/// Records the seeds and settings in `OUT/start.json` before anything is fetched (see
/// `checkpoint::start`), so a crawl killed before its first checkpoint can be resumed.
/// A resume rewrites it with the seeds and settings it runs with (the recorded flags
/// stay when the resume brings none: library users).
fn write_start(
    config: &CrawlConfig,
    previous: Option<&checkpoint::start::StartRecord>,
) -> Result<(), CrawlError> {
    let args = match previous {
        Some(p) if config.start_args.is_empty() => p.args.clone(),
        _ => config.start_args.clone(),
    };
    let record = checkpoint::start::StartRecord {
        version: checkpoint::start::START_VERSION,
        unix_time: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        seeds: config.seeds.clone(),
        args,
        config: checkpoint::RecordedConfig::of(config),
        trawl_version: crate::VERSION.to_owned(),
    };
    checkpoint::start::write(&config.out_dir, &record).map_err(CrawlError::from)
}

/// Acts on a pause or resume of the disk watch: the flag the shards read, and a log
/// line saying why, with the figures.
fn on_disk_change(shared: &Shared, out: &Path, change: &space::Change) {
    let mib = |b: u64| b as f64 / f64::from(1 << 20);
    match *change {
        space::Change::Paused {
            free_bytes,
            reserve_bytes,
            cause,
        } => {
            shared.paused.store(true, Ordering::Release);
            let (why, then) = match cause {
                space::Cause::LowSpace => {
                    ("under the reserve", "writing a checkpoint into the reserve")
                }
                space::Cause::WriteFailed => (
                    "a write failed for lack of space",
                    "a checkpoint follows once the output is written",
                ),
            };
            tracing::warn!(
                out = %out.display(),
                free_bytes,
                reserve_bytes,
                "paused: disk: {:.1} MiB free on the output filesystem, reserve {:.1} MiB ({why}); \
                 no new fetches until space returns; {then}",
                mib(free_bytes),
                mib(reserve_bytes),
            );
        }
        space::Change::Resumed {
            free_bytes,
            reserve_bytes,
            paused_for,
        } => {
            shared.paused.store(false, Ordering::Release);
            // A warning like the pause, so the default log level shows both.
            tracing::warn!(
                out = %out.display(),
                free_bytes,
                reserve_bytes,
                paused_secs = paused_for.as_secs_f64(),
                "resumed: disk: {:.1} MiB free again (reserve {:.1} MiB) after {:.1} s paused",
                mib(free_bytes),
                mib(reserve_bytes),
                paused_for.as_secs_f64(),
            );
        }
    }
}

/// A checkpoint failed. If the disk was the trouble (`disk_trouble`: see the caller) or
/// the output filesystem is now short of space (under the reserve, measured before the
/// attempt's files are removed: an `ENOSPC` leaves it nearly full), the failure is
/// taken as lack of space: the attempt's files go, the previous checkpoint stays
/// current and whole, and the crawl pauses (it is owed a checkpoint when it resumes).
/// Any other failure, or any with the watch off, ends the crawl as before.
fn absorb_checkpoint_failure(
    e: CrawlError,
    disk_trouble: bool,
    shared: &Shared,
    out: &Path,
    cp_root: &Path,
    disk: &mut space::DiskWatch,
) -> Result<(), CrawlError> {
    let measured = space::probe(out);
    let short = disk.is_enabled()
        && (disk_trouble
            || measured
                .as_ref()
                .is_ok_and(|s| s.free_bytes < disk.reserve_bytes(*s)));
    if !short {
        tracing::error!(error = %e, space = ?measured, "checkpoint failed, not for lack of space");
        return Err(e);
    }
    let removed = space::discard_unfinished_checkpoints(cp_root);
    let after = space::probe(out).unwrap_or_default();
    tracing::warn!(
        error = %e,
        free_bytes = after.free_bytes,
        removed = removed.entries,
        removed_bytes = removed.bytes,
        "checkpoint failed for lack of space; the previous checkpoint stays current"
    );
    if let Some(change) = disk.checkpoint_failed(removed.bytes, after, Instant::now()) {
        on_disk_change(shared, out, &change);
    }
    Ok(())
}

/// Empties the crawl log and removes trawl's WARC files: the output of a run that died
/// before its first checkpoint, which a restart from the seeds writes again.
fn discard_uncheckpointed_output(log: &Path, warc_dir: &Path) -> Result<(), CrawlError> {
    if log.exists() {
        fs::write(log, b"").map_err(CrawlError::io("empty", log))?;
    }
    let Ok(entries) = fs::read_dir(warc_dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("trawl-") && name.contains(".warc") {
            fs::remove_file(entry.path()).map_err(CrawlError::io("remove", entry.path()))?;
        }
    }
    Ok(())
}

/// The robots cache entries of a checkpoint (`robots-NNNN.bin`), routed to their
/// shards by host key, least recently used first. Never fails: the robots cache is a
/// cache (see `robots::persist::load_dir`).
fn load_robots(
    dir: &Path,
    shards: usize,
    config: &crate::robots::PolicyConfig,
) -> Vec<Vec<(crate::robots::HostKey, crate::robots::RobotsPolicy)>> {
    let mut out: Vec<Vec<_>> = (0..shards).map(|_| Vec::new()).collect();
    let loaded =
        crate::robots::persist::load_dir(dir, config, crate::robots::persist::Clock::now());
    tracing::info!(
        hosts = loaded.entries.len(),
        files = loaded.files,
        ignored_files = loaded.ignored_files,
        damaged_records = loaded.damaged,
        "robots cache restored from the checkpoint"
    );
    for (key, policy) in loaded.entries {
        if let Some(v) = out.get_mut(shard::shard_of(key.as_str(), shards)) {
            v.push((key, policy));
        }
    }
    out
}

fn nonzero(d: Duration) -> Duration {
    if d.is_zero() {
        Duration::from_secs(365 * 24 * 3600)
    } else {
        d
    }
}

/// Logs, at crawl start, what the presence bits cost and what they lose at capacity:
/// the two figures `--seen-capacity` and `--seen-fp` trade (`docs/seen.md`).
fn log_presence_sizing(shared: &Shared) {
    use crate::seen::model;
    let s = shared.seen.stats();
    let f = shared.fingerprints.stats();
    let blocks = s.bits / model::BLOCK_BITS;
    let fp = model::false_positive_rate(s.capacity as f64, blocks, s.k);
    let lost = model::expected_lost(s.capacity as f64, blocks, s.k);
    let mib = |bits: u64| bits as f64 / 8.0 / f64::from(1u32 << 20);
    let line = format!(
        "presence bits: {:.1} MiB for {} URLs (k {}), fp {fp:.2e} and {lost:.2} URLs lost \
         in expectation at that capacity; content fingerprints {:.1} MiB; resident memory \
         grows with the URLs seen",
        mib(s.bits),
        s.capacity,
        s.k,
        mib(f.bits),
    );
    tracing::info!(
        capacity = s.capacity,
        bits_bytes = s.bits / 8,
        fingerprint_bits_bytes = f.bits / 8,
        k = s.k,
        fp_at_capacity = fp,
        lost_urls_at_capacity = lost,
        "{line}"
    );
    // Logs default to warnings only: say it where the operator looks, beside progress.
    if !shared.config.progress_interval.is_zero() {
        eprintln!("trawl: {line}");
    }
}

/// The coordinator's side of the checkpoint protocol (see `docs/architecture.md`).
/// `prev` is the last committed checkpoint of this run (or the one resumed from),
/// whose presence logs this one appends to; returns this one's.
fn take_checkpoint(
    shared: &Shared,
    controls: &[Sender<Control>],
    wakers: &[Arc<mio::Waker>],
    output: &Sender<output::OutputMsg>,
    root: &Path,
    epoch: u64,
    prev: Option<&(PathBuf, PresenceLogs)>,
) -> Result<(PathBuf, PresenceLogs), CrawlError> {
    let begun = Instant::now();
    let dir = checkpoint::prepare(root, epoch)?;
    let cut = Arc::new(CheckpointCut {
        barrier: Barrier::new(controls.len() + 1),
        dir: dir.clone(),
        failed: AtomicBool::new(false),
    });
    for (tx, w) in controls.iter().zip(wakers) {
        tx.send(Control::Checkpoint(Arc::clone(&cut)))
            .map_err(|_| CrawlError::ShardGone)?;
        let _ = w.wake();
    }
    cut.barrier.wait(); // 1: every shard flushed its links to peers and stopped
    cut.barrier.wait(); // 2: every inbox drained; no URL is in a channel
    let seen = shared
        .seen
        .checkpoint_log(
            &dir,
            checkpoint::SEEN_LOG,
            prev.map(|(d, p)| p.seen(d)).as_ref(),
            epoch,
        )
        .map_err(CrawlError::from);
    let fps = shared
        .fingerprints
        .checkpoint_log(
            &dir,
            checkpoint::FINGERPRINTS_LOG,
            prev.map(|(d, p)| p.fingerprints(d)).as_ref(),
            epoch,
        )
        .map_err(CrawlError::from);
    let (reply_tx, reply_rx) = bounded(1);
    let positions = output
        .send(output::OutputMsg::Sync(reply_tx))
        .ok()
        .and_then(|()| reply_rx.recv().ok())
        .unwrap_or_else(|| Err("output thread gone".to_owned()));
    let counters = shared.counters();
    let queued = shared.outstanding.load(Ordering::Acquire);
    cut.barrier.wait(); // 3: every shard dumped its frontier
    cut.barrier.wait(); // 4: shards go on
    let seen = seen?;
    let fps = fps?;
    let positions = positions.map_err(CrawlError::Output)?;
    if cut.failed.load(Ordering::Acquire) {
        return Err(CrawlError::ShardCheckpoint);
    }
    let manifest = Manifest {
        version: checkpoint::MANIFEST_VERSION,
        epoch,
        unix_time: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        shards: controls.len(),
        seeds: shared.config.seeds.clone(),
        counters,
        positions,
        queued_urls: queued,
        config: Some(checkpoint::RecordedConfig::of(&shared.config)),
        presence: Some(PresenceLogs {
            seen_bytes: seen.write.committed_bytes,
            fingerprints_bytes: fps.write.committed_bytes,
        }),
    };
    let presence = manifest.presence.unwrap_or(PresenceLogs {
        seen_bytes: 0,
        fingerprints_bytes: 0,
    });
    let done = checkpoint::commit(root, &dir, &manifest)?;
    let presence_bytes = seen.write.written_bytes + fps.write.written_bytes;
    let compacted = seen.write.compacted || fps.write.compacted;
    seen.confirm();
    fps.confirm();
    // The other files are new in every checkpoint; the logs are counted by what was
    // appended, not by their length.
    let other_bytes: u64 = fs::read_dir(&done)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| !e.file_name().to_string_lossy().ends_with(".plog"))
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0);
    let bytes = presence_bytes + other_bytes;
    let secs = begun.elapsed().as_secs_f64();
    if let Ok(mut f) = shared.checkpoint_figures.lock() {
        f.last_bytes = bytes;
        f.total_bytes += bytes;
        f.max_bytes = f.max_bytes.max(bytes);
        f.last_presence_bytes = presence_bytes;
        f.last_secs = secs;
        f.total_secs += secs;
        f.max_secs = f.max_secs.max(secs);
        f.compactions += u64::from(compacted);
    }
    tracing::debug!(
        epoch,
        bytes,
        presence_bytes,
        compacted,
        secs,
        "checkpoint committed"
    );
    Ok((done, presence))
}

fn stats(
    shared: &Shared,
    started: Instant,
    checkpoints: u64,
    resumed: Option<u64>,
    finish: &str,
) -> Stats {
    let elapsed = started.elapsed().as_secs_f64().max(1e-9);
    let c = shared.counters();
    let fs = shared
        .frontier_stats
        .lock()
        .map(|v| v.clone())
        .unwrap_or_default();
    let sum = |f: fn(&FrontierStats) -> u64| fs.iter().map(f).sum::<u64>();
    let seen = shared.seen.stats();
    let rs = shared
        .robots_stats
        .lock()
        .map(|v| v.clone())
        .unwrap_or_default();
    let robots_sum = |f: fn(&crate::robots::CacheStats) -> u64| rs.iter().map(f).sum::<u64>();
    let disk_urls = sum(|s| s.disk_urls);
    let disk_bytes = sum(|s| s.disk_bytes);
    let cf = shared
        .checkpoint_figures
        .lock()
        .map(|f| *f)
        .unwrap_or_default();
    let memory = memory_split(shared);
    Stats {
        elapsed_secs: elapsed,
        pages: c.pages,
        pages_per_sec: c.pages as f64 / elapsed,
        bytes: c.bytes,
        mb_per_sec: c.bytes as f64 / elapsed / 1e6,
        discovered: c.discovered,
        duplicates: c.duplicates,
        pages_links_truncated: c.pages_links_truncated,
        pages_scan_truncated: c.pages_scan_truncated,
        pages_long_attributes: c.pages_long_attributes,
        robots_truncated: c.robots_truncated,
        robots_long_lines: c.robots_long_lines,
        warc_revisits: c.warc_revisits,
        queued: shared.outstanding.load(Ordering::Acquire),
        frontier_ram_urls: sum(|s| s.ram_urls),
        frontier_disk_urls: disk_urls,
        frontier_disk_bytes: disk_bytes,
        robots_cache_hosts: robots_sum(|r| r.hosts),
        robots_cache_bytes: robots_sum(|r| r.bytes),
        robots_fetches: robots_sum(|r| r.fetches),
        robots_cache_evictions: robots_sum(|r| r.evictions),
        frontier_ram_bytes: sum(|s| s.ram_bytes),
        disk_bytes_per_queued_url: if disk_urls == 0 {
            0.0
        } else {
            disk_bytes as f64 / disk_urls as f64
        },
        hosts_active: sum(|s| s.hosts),
        hosts_parked: shared.hosts_parked.load(Ordering::Acquire),
        outcomes: OUTCOMES
            .iter()
            .zip(&shared.outcomes)
            .map(|(o, c)| (outcome_name(*o), c.load(Ordering::Acquire)))
            .filter(|(_, c)| *c > 0)
            .collect(),
        seen_fill_ratio: seen.fill_ratio,
        seen_expected_fp: seen.expected_fp,
        seen_expected_lost_urls: seen.expected_lost,
        seen_file_bytes: seen.file_bytes,
        checkpoints,
        checkpoint_last_bytes: cf.last_bytes,
        checkpoint_total_bytes: cf.total_bytes,
        checkpoint_max_bytes: cf.max_bytes,
        checkpoint_last_presence_bytes: cf.last_presence_bytes,
        checkpoint_last_secs: cf.last_secs,
        checkpoint_total_secs: cf.total_secs,
        checkpoint_max_secs: cf.max_secs,
        checkpoint_compactions: cf.compactions,
        rss_bytes: memory.rss,
        presence_bits_resident_bytes: memory.bits,
        rss_less_presence_bits_bytes: memory.rss.saturating_sub(memory.bits),
        peak_rss_bytes: memory.peak,
        peak_rss_less_presence_bits_bytes: memory.peak_less_bits,
        resumed_from: resumed,
        finish: finish.to_owned(),
        // The coordinator's disk watch fills these (`space::DiskWatch::fill`).
        ..Stats::default()
    }
}

/// Resident memory figures of this process (see the `rss_*` fields of [`Stats`]).
struct MemorySplit {
    rss: u64,
    bits: u64,
    peak: u64,
    peak_less_bits: u64,
}

/// Reads `VmRSS`/`VmHWM` and the presence bits' resident bytes, and folds the
/// difference into the sampled peak. Zeros where `/proc` is unavailable.
fn memory_split(shared: &Shared) -> MemorySplit {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |v| v * 1024)
    };
    let rss = kb("VmRSS:");
    let bits = shared.seen.resident_bytes().unwrap_or(0)
        + shared.fingerprints.resident_bytes().unwrap_or(0);
    let less = rss.saturating_sub(bits);
    let peak_less_bits = shared
        .peak_rss_less_bits
        .fetch_max(less, Ordering::AcqRel)
        .max(less);
    MemorySplit {
        rss,
        bits,
        peak: kb("VmHWM:"),
        peak_less_bits,
    }
}

fn write_stats(out: &Path, s: &Stats) -> Result<(), CrawlError> {
    let path = out.join("stats.json");
    let tmp = out.join("stats.json.tmp");
    let json =
        serde_json::to_vec_pretty(s).map_err(|e| CrawlError::io("serialize", &path)(e.into()))?;
    fs::write(&tmp, json).map_err(CrawlError::io("write", &tmp))?;
    fs::rename(&tmp, &path).map_err(CrawlError::io("rename into place", &path))?;
    Ok(())
}
