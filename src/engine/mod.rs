//! The crawl engine: shard threads, the coordinator that watches them, checkpoints
//! and the library API (`Crawler::builder()...build()?.run()`).
//!
//! See `docs/architecture.md` for the path of one URL and the checkpoint protocol.

mod adds;
mod board;
pub mod config;
mod control;
mod coordinator;
mod core;
mod error;
mod handle;
mod inbox;
pub mod metrics;
mod monitor;
pub(crate) mod output;
mod recrawl;
mod setup;
mod shard;
pub mod space;
mod stats;
mod width;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::Instant;

use crossbeam_channel::{bounded, unbounded, Sender};
use url::Url;

use crate::checkpoint::Counters;
use crate::crawllog::{LogRecord, Outcome};
use crate::frontier::FrontierStats;
use crate::http::ResponseHead;
use crate::net::{FetchLimits, Fetcher, IpSlots};
use crate::seen::{ContentSeen, SeenSet};

pub use config::CrawlConfig;
pub use control::OperatorStats;
pub use error::CrawlError;
pub use handle::{AddError, CrawlHandle, MAX_ADD_URLS};
pub use output::{OutputSummary, Positions};
pub use stats::Stats;
pub use width::WidthStats;

pub(crate) use core::{host_key, shard_of, ReceivedLink};
pub(crate) use inbox::Received;

use coordinator::Coordinator;
use setup::Prepared;
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
    /// Sitemap counters (`core/sitemaps.rs`; `Stats` fields `sitemaps_read`,
    /// `sitemaps_cut`, `sitemaps_failed`, `sitemap_urls_refused`, in that order).
    pub sitemaps: [AtomicU64; 4],
    /// Counted by the output thread.
    pub warc_revisits: Arc<AtomicU64>,
    pub hosts_parked: AtomicU64,
    /// URLs refused when admitted because their host's `--max-pages-per-host` was
    /// spent (logged `budget:pages-per-host`, never queued).
    pub urls_refused_budget: AtomicU64,
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
    /// Width gauges the shards publish (`width.rs`).
    pub width: width::WidthGauges,
    /// Checkpoint sizes and times, for `stats.json`.
    pub checkpoint_figures: Mutex<CheckpointFigures>,
    /// Largest RSS less presence bits sampled so far.
    pub peak_rss_less_bits: AtomicU64,
    /// This node's link to its farm (issue 13); `None` outside a farm.
    pub farm: Option<crate::farm::FarmLink>,
    /// The previous crawl's captures, in a re-crawl (`recrawl.rs`).
    pub previous: Option<crate::recrawl::Previous>,
    /// Re-crawl verdicts counted so far.
    pub recrawl: crate::recrawl::RecrawlCounters,
    /// Sitemap grants (robots.txt permission along index chains) and, in a re-crawl,
    /// `<lastmod>` dates, for all shards (`core/sitemaps.rs`).
    pub sitemap_memory: core::SitemapMemory,
    /// When each host was last asked, across shards (`core::RecentStarts`): a
    /// robots.txt redirect hop to another host and that host's own shard reserve
    /// their starts there.
    pub recent_starts: core::RecentStarts,
    /// What the operator set through the control API (issue 22, `control.rs`).
    pub operator: Arc<control::Operator>,
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
    /// Counters at zero, no flag set, figures for `config.shards` shards.
    pub fn new(
        config: CrawlConfig,
        limits: FetchLimits,
        seen: SeenSet,
        fingerprints: ContentSeen,
        handler: Option<Arc<dyn Handler>>,
        warc_revisits: Arc<AtomicU64>,
    ) -> Self {
        let n = config.shards;
        Self {
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
            sitemaps: Default::default(),
            warc_revisits,
            hosts_parked: AtomicU64::new(0),
            urls_refused_budget: AtomicU64::new(0),
            outcomes: Default::default(),
            stopping: AtomicBool::new(false),
            exit: AtomicBool::new(false),
            paused: AtomicBool::new(false),
            fatal: AtomicBool::new(false),
            frontier_stats: Mutex::new(vec![FrontierStats::default(); n]),
            robots_stats: Mutex::new(vec![crate::robots::CacheStats::default(); n]),
            in_flight: (0..n).map(|_| AtomicU64::new(0)).collect(),
            width: width::WidthGauges::new(n),
            checkpoint_figures: Mutex::new(CheckpointFigures::default()),
            peak_rss_less_bits: AtomicU64::new(0),
            farm: None,
            previous: None,
            recrawl: crate::recrawl::RecrawlCounters::default(),
            sitemap_memory: core::SitemapMemory::default(),
            recent_starts: core::RecentStarts::default(),
            operator: Arc::new(control::Operator::new(&config.out_dir, config.delay)),
            config,
        }
    }

    /// The operator's state (issue 22), made before the output thread that feeds its
    /// board.
    pub fn with_operator(mut self, operator: Arc<control::Operator>) -> Self {
        self.operator = operator;
        self
    }

    /// In a re-crawl, the previous crawl's captures.
    pub fn with_previous(mut self, previous: Option<crate::recrawl::Previous>) -> Self {
        self.previous = previous;
        self
    }

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
            sitemaps_read: self.sitemaps[0].load(Ordering::Acquire),
            sitemaps_cut: self.sitemaps[1].load(Ordering::Acquire),
            sitemaps_failed: self.sitemaps[2].load(Ordering::Acquire),
            sitemap_urls_refused: self.sitemaps[3].load(Ordering::Acquire),
            recrawl: {
                // URLs skipped on their sitemap `<lastmod>` are counted by the core;
                // a resume restores the checkpoint's count into `recrawl`.
                let mut r = self.recrawl.snapshot();
                r.skipped += self.sitemap_memory.skipped.load(Ordering::Acquire);
                r
            },
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
        if config.seeds.is_empty() && !self.resume && config.recrawl.is_none() {
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

    /// A handle for adding URLs while [`Crawler::run`] runs (on another thread):
    /// see [`CrawlHandle::add`].
    pub fn handle(&self) -> CrawlHandle {
        CrawlHandle::new(self.config.out_dir.clone())
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

/// A crawl from start to end: [`setup::prepare`], [`start_shards`], the
/// [`Coordinator`] until the crawl ends, then [`finish`].
fn run(crawler: Crawler) -> Result<Stats, CrawlError> {
    let Crawler {
        farm,
        config,
        handler,
        resume,
        stop,
    } = crawler;
    let mut prepared = setup::prepare(config, handler, resume, farm)?;
    let monitor = monitor::Monitor::new(
        &prepared.shared.config,
        Arc::clone(&prepared.shared.operator),
        Instant::now(),
    )?;
    let (shards, adds) = start_shards(&mut prepared)?;
    let mut coordinator = Coordinator::new(
        &prepared,
        &shards.controls,
        &shards.wakers,
        &stop,
        monitor,
        adds,
    );
    let ending = coordinator.run()?;
    // The final checkpoint while the shards still hold their frontiers.
    let cp = coordinator.final_checkpoint();
    let report = coordinator.into_report();
    finish(cp, report, ending, shards, prepared)
}

/// The running shard threads and the means to reach them.
struct Shards {
    handles: Vec<std::thread::JoinHandle<()>>,
    /// The farm's bus thread (issue 13), which delivers received links like a peer
    /// shard; `None` outside a farm.
    farm_bus: Option<std::thread::JoinHandle<()>>,
    controls: Vec<Sender<Control>>,
    wakers: Vec<Arc<mio::Waker>>,
}

/// Starts one thread per shard: its fetcher (event loop), its inbox from the other
/// shards, its control channel from the coordinator, and its frontier, tallies and
/// robots cache from [`setup::prepare`]. Also opens the drop directory of `trawl add`
/// (`adds.rs`), which sends added URLs to the shards' inboxes.
fn start_shards(p: &mut Prepared) -> Result<(Shards, adds::Adds), CrawlError> {
    let config = &p.shared.config;
    let n = config.shards;
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
    let inbox_wakers: Vec<Arc<inbox::InboxWaker>> = wakers
        .iter()
        .map(|w| Arc::new(inbox::InboxWaker::new(Arc::clone(w))))
        .collect();
    let (inbox_txs, inbox_rxs): (Vec<_>, Vec<_>) =
        (0..n).map(|_| bounded(inbox::INBOX_BATCHES)).unzip();
    // Links from other farm nodes (unused outside a farm).
    let (received_txs, received_rxs): (Vec<Sender<Received>>, Vec<_>) =
        (0..n).map(|_| bounded(inbox::INBOX_BATCHES)).unzip();
    let (controls, control_rxs): (Vec<Sender<Control>>, Vec<_>) =
        (0..n).map(|_| unbounded()).unzip();
    // The frontiers, tallies and robots entries move into the shards; `p` keeps the
    // rest for the coordinator.
    let mut per_shard = std::mem::take(&mut p.frontiers)
        .into_iter()
        .zip(std::mem::take(&mut p.tallies))
        .zip(std::mem::take(&mut p.robots));
    let mut handles = Vec::with_capacity(n);
    for (i, ((fetcher, (inbox, control)), received)) in fetchers
        .into_iter()
        .zip(inbox_rxs.into_iter().zip(control_rxs))
        .zip(received_rxs)
        .enumerate()
    {
        let Some(((frontier, tallies), robots)) = per_shard.next() else {
            break;
        };
        let parts = shard::ShardParts {
            index: i,
            shared: Arc::clone(&p.shared),
            frontier,
            fetcher,
            filter: Arc::clone(&p.filter),
            inbox,
            received,
            peers: inbox_txs.clone(),
            peer_wakers: inbox_wakers.clone(),
            output: p.output.tx.clone(),
            control,
            tallies,
            robots,
            warc: p.output.warc_compressor.clone(),
        };
        let handle = std::thread::Builder::new()
            .name(format!("trawl-shard-{i}"))
            .spawn(move || shard::Shard::new(parts).run())
            .map_err(|source| CrawlError::ShardSpawn { index: i, source })?;
        handles.push(handle);
    }
    let farm_bus = match p.farm_ends.take() {
        Some(ends) => Some(crate::farm::start_bus(
            ends,
            &p.shared,
            received_txs,
            wakers.clone(),
        )?),
        None => None,
    };
    let adds = adds::Adds::open(
        &p.out,
        p.resumed_epoch.unwrap_or(0),
        inbox_txs,
        wakers.clone(),
    )?;
    Ok((
        Shards {
            handles,
            farm_bus,
            controls,
            wakers,
        },
        adds,
    ))
}

/// Ends a crawl after its final checkpoint (`cp`, taken while the shards still held
/// their frontiers): the shards stop, the output is flushed and closed, and
/// `stats.json` is written with how the crawl ended (`ending`).
fn finish(
    cp: Result<(), CrawlError>,
    report: coordinator::Report,
    ending: &'static str,
    shards: Shards,
    prepared: Prepared,
) -> Result<Stats, CrawlError> {
    let shared = Arc::clone(&prepared.shared);
    shared.exit.store(true, Ordering::Release);
    for w in &shards.wakers {
        let _ = w.wake();
    }
    for h in shards.handles {
        let _ = h.join();
    }
    drop(shards.controls);
    if let (Some(f), Some(bus)) = (&shared.farm, shards.farm_bus) {
        f.finish();
        let _ = bus.join();
    }
    prepared.output.finish().map_err(CrawlError::Output)?;
    cp?;
    let mut s = stats(
        &shared,
        report.started,
        report.checkpoints,
        prepared.resumed_epoch,
        ending,
    );
    report.disk.fill(&mut s, Instant::now());
    report.monitor.finish(&s);
    write_stats(&prepared.out, &s)?;
    Ok(s)
}
