//! The crawl engine: shard threads, the coordinator that watches them, checkpoints
//! and the library API (`Crawler::builder()...build()?.run()`).
//!
//! See `docs/architecture.md` for the path of one URL and the checkpoint protocol.

pub mod config;
mod coordinator;
mod error;
pub mod metrics;
mod monitor;
pub(crate) mod output;
mod setup;
mod shard;
pub mod space;
mod stats;

use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, unbounded, Sender};
use url::Url;

use crate::checkpoint::{self, Counters, PresenceLogs};
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
pub use stats::Stats;

pub(crate) use shard::{host_key, shard_of, Batch};

use coordinator::{absorb_checkpoint_failure, nonzero, on_disk_change, take_checkpoint};
use setup::{discard_uncheckpointed_output, load_robots, log_presence_sizing, write_start};
use stats::{outcome_index, stats, write_stats};

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
    /// This node's link to its farm (issue 13); `None` outside a farm.
    pub farm: Option<crate::farm::FarmLink>,
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
    farm: Option<crate::farm::FarmConfig>,
}

impl CrawlerBuilder {
    /// Crawls as one node of a farm sharing the crawl over Redis (`docs/farm.md`).
    pub fn farm(mut self, farm: crate::farm::FarmConfig) -> Self {
        self.farm = Some(farm);
        self
    }

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
        if let Some(f) = &self.farm {
            f.validate().map_err(CrawlError::Config)?;
        }
        Ok(Crawler {
            farm: self.farm,
            config,
            handler: self.handler,
            resume: self.resume,
            stop: self.stop.unwrap_or_default(),
        })
    }
}

/// A configured crawl, ready to [`Crawler::run`].
pub struct Crawler {
    farm: Option<crate::farm::FarmConfig>,
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
        farm,
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

    let (farm, farm_ends) = match farm {
        Some(f) => {
            let (link, mut ends) = crate::farm::FarmLink::new(f).map_err(CrawlError::Config)?;
            if let Some((dir, _)) = &resumed {
                link.check_resume(dir, &mut ends)
                    .map_err(CrawlError::Config)?;
            }
            (Some(link), Some(ends))
        }
        None => (None, None),
    };
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
        farm,
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
                // Farm: every node is given the same seeds and keeps its own.
                if shared.farm.as_ref().is_some_and(|f| !f.owns(url.as_str())) {
                    continue;
                }
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
    // Farm: the bus thread, which delivers received links like a peer shard.
    let farm_bus = match farm_ends {
        Some(ends) => Some(crate::farm::start_bus(
            ends,
            &shared,
            &filter,
            inbox_txs.clone(),
            wakers.clone(),
            output.tx.clone(),
        )?),
        None => None,
    };
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
        let locally_idle = shared.outstanding.load(Ordering::Acquire) == 0 && in_flight == 0;
        // Farm: done when the whole farm is; the bus may ask for a checkpoint.
        let farm_tick = shared.farm.as_ref().map(|f| f.tick(locally_idle));
        if let Some(msg) = farm_tick.as_ref().and_then(|t| t.fatal.clone()) {
            tracing::error!("{msg}");
            finish = "error";
            break;
        }
        if locally_idle && farm_tick.as_ref().is_none_or(|t| t.finished) {
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
        let periodic = (!config.checkpoint_interval.is_zero() && now >= next_checkpoint)
            || farm_tick.as_ref().is_some_and(|t| t.checkpoint);
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
    if let (Some(f), Some(bus)) = (&shared.farm, farm_bus) {
        f.finish();
        let _ = bus.join();
    }
    output.finish().map_err(CrawlError::Output)?;
    cp?;
    let mut s = stats(&shared, started, checkpoints, resumed_epoch, finish);
    disk.fill(&mut s, Instant::now());
    monitor.finish(&s);
    write_stats(&out, &s)?;
    Ok(s)
}
