//! The engine's shared state: what every shard thread, the coordinator and the
//! output thread read and publish while a crawl runs (`docs/architecture.md`,
//! "Shared state").

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::checkpoint::Counters;
use crate::crawllog::Outcome;
use crate::frontier::FrontierStats;

use super::core::{self, Counter};
use crate::robots::CacheStats;

use super::observe::board::Board;
use super::observe::stats::{outcome_index, OUTCOMES};
use super::observe::width;
use super::{control, CrawlConfig};

/// State every shard reads: the configuration, the cores' shared state
/// ([`core::CoreShared`]: settings, memory, counters, the stopping flag), and the
/// engine's own flags and figures. The fields left public are read-only settings or
/// typed parts with methods of their own; the engine's atomics and locks are behind
/// methods.
pub(crate) struct Shared {
    /// Read-only: the crawl's whole configuration.
    pub config: CrawlConfig,
    /// What the cores share; each core holds an `Arc` of it and nothing else of this.
    pub core: Arc<core::CoreShared>,
    /// The engine's flags: leave now, pause fetching, a shard failed.
    pub flags: EngineFlags,
    /// Width gauges the shards publish (`width.rs`; methods only).
    pub width: width::WidthGauges,
    /// This node's link to its farm (`docs/farm.md`); `None` outside a farm. The
    /// cores see the same link as `core.farm_routes`.
    pub farm_link: Option<Arc<crate::farm::FarmLink>>,
    /// What the operator set through the control API (`control.rs`); the
    /// cores read its rules through `core.operator_rules`.
    pub operator: Arc<control::Operator>,
    /// The status page's host tables, fed by the output thread (which holds the
    /// other `Arc`; `board.rs`).
    pub board: Arc<Board>,
    /// WARC `revisit` records, counted by the output thread (which holds the other
    /// `Arc`).
    warc_revisits: Arc<AtomicU64>,
    /// Crawl-log lines by outcome (`stats::OUTCOMES`).
    outcomes: [AtomicU64; OUTCOMES.len()],
    /// What each shard published of itself last: requests in flight, frontier and
    /// robots cache figures.
    in_flight: Vec<AtomicU64>,
    frontier_stats: Mutex<Vec<FrontierStats>>,
    robots_stats: Mutex<Vec<CacheStats>>,
    /// Checkpoint sizes and times, for `stats.json`.
    checkpoint_figures: Mutex<CheckpointFigures>,
    /// Largest RSS less presence bits sampled so far.
    peak_rss_less_bits: AtomicU64,
}

/// The engine's flags, each set once by one side and read by the others. The core's
/// own flag (take no new work) is [`core::CoreShared::stop`].
#[derive(Debug, Default)]
pub(crate) struct EngineFlags {
    exit: AtomicBool,
    paused: AtomicBool,
    failed: AtomicBool,
}

impl EngineFlags {
    /// The shards leave their loops now (after the final checkpoint).
    pub fn exit(&self) {
        self.exit.store(true, Ordering::Release);
    }

    /// Whether the shards are to leave their loops ([`EngineFlags::exit`]).
    pub fn is_exiting(&self) -> bool {
        self.exit.load(Ordering::Acquire)
    }

    /// Start no fetch while `paused`: the output filesystem is short of space
    /// (`space::DiskWatch`).
    pub fn set_paused(&self, paused: bool) {
        self.paused.store(paused, Ordering::Release);
    }

    /// Whether fetching is paused for lack of space ([`EngineFlags::set_paused`]).
    pub fn is_paused(&self) -> bool {
        self.paused.load(Ordering::Acquire)
    }

    /// A shard (or the farm's bus) failed: the coordinator ends the crawl.
    pub fn fail(&self) {
        self.failed.store(true, Ordering::Release);
    }

    /// Whether a shard failed ([`EngineFlags::fail`]).
    pub fn has_failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }
}

/// Running checkpoint figures (see the `checkpoint_*` fields of [`Stats`](super::Stats)).
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

impl CheckpointFigures {
    /// Adds a checkpoint of `bytes` (`presence_bytes` of them the presence bits'),
    /// written in `secs`, that compacted the presence logs or not.
    fn record(&mut self, bytes: u64, presence_bytes: u64, secs: f64, compacted: bool) {
        self.last_bytes = bytes;
        self.total_bytes += bytes;
        self.max_bytes = self.max_bytes.max(bytes);
        self.last_presence_bytes = presence_bytes;
        self.last_secs = secs;
        self.total_secs += secs;
        self.max_secs = self.max_secs.max(secs);
        self.compactions += u64::from(compacted);
    }
}

impl Shared {
    /// Counters at zero, no flag set, figures for `config.shards` shards. The farm
    /// link, if any, is the one `core` was given.
    pub fn new(
        config: CrawlConfig,
        core: core::CoreShared,
        farm_link: Option<Arc<crate::farm::FarmLink>>,
        operator: Arc<control::Operator>,
        board: Arc<Board>,
        warc_revisits: Arc<AtomicU64>,
    ) -> Self {
        let n = config.shards;
        Self {
            core: Arc::new(core),
            flags: EngineFlags::default(),
            width: width::WidthGauges::new(n),
            farm_link,
            operator,
            board,
            warc_revisits,
            outcomes: Default::default(),
            in_flight: (0..n).map(|_| AtomicU64::new(0)).collect(),
            frontier_stats: Mutex::new(vec![FrontierStats::default(); n]),
            robots_stats: Mutex::new(vec![CacheStats::default(); n]),
            checkpoint_figures: Mutex::new(CheckpointFigures::default()),
            peak_rss_less_bits: AtomicU64::new(0),
            config,
        }
    }

    /// A crawl's shared state from its parts, as tests of the driver build it: not a
    /// re-crawl, not a farm node.
    #[cfg(test)]
    pub fn from_parts(
        config: CrawlConfig,
        limits: crate::fetch::FetchLimits,
        seen: crate::seen::SeenSet,
        fingerprints: crate::seen::ContentSeen,
        handler: Option<Arc<dyn crate::handler::Handler>>,
        warc_revisits: Arc<AtomicU64>,
    ) -> Self {
        let operator = Arc::new(control::Operator::new(&config.out_dir, config.delay));
        let core = core::CoreShared::new(
            core::CoreSettings::from(&config),
            limits,
            seen,
            fingerprints,
            handler,
            std::time::Instant::now(),
        )
        .with_operator_rules(Arc::clone(&operator.rules));
        Self::new(config, core, None, operator, Arc::default(), warc_revisits)
    }

    /// Counts a crawl-log line of outcome `o`.
    pub fn count_outcome(&self, o: Outcome) {
        if let Some(c) = self.outcomes.get(outcome_index(o)) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Crawl-log lines of outcome `o` so far.
    pub fn outcome_count(&self, o: Outcome) -> u64 {
        self.outcomes
            .get(outcome_index(o))
            .map_or(0, |c| c.load(Ordering::Acquire))
    }

    /// Shard `index` publishes its requests in flight.
    pub fn publish_in_flight(&self, index: usize, in_flight: u64) {
        if let Some(a) = self.in_flight.get(index) {
            a.store(in_flight, Ordering::Release);
        }
    }

    /// Requests in flight over all shards, as they last published them.
    pub fn in_flight(&self) -> u64 {
        self.in_flight
            .iter()
            .map(|a| a.load(Ordering::Acquire))
            .sum()
    }

    /// Shard `index` publishes its frontier's and robots cache's figures.
    pub fn publish_caches(&self, index: usize, frontier: FrontierStats, robots: CacheStats) {
        put(&self.frontier_stats, index, frontier);
        put(&self.robots_stats, index, robots);
    }

    /// Each shard's frontier figures, as published.
    pub fn frontier_stats(&self) -> Vec<FrontierStats> {
        self.frontier_stats
            .lock()
            .map(|v| v.clone())
            .unwrap_or_default()
    }

    /// Each shard's robots cache figures, as published.
    pub fn robots_stats(&self) -> Vec<CacheStats> {
        self.robots_stats
            .lock()
            .map(|v| v.clone())
            .unwrap_or_default()
    }

    /// Adds a committed checkpoint to the figures (see [`CheckpointFigures::record`]).
    pub fn record_checkpoint(&self, bytes: u64, presence_bytes: u64, secs: f64, compacted: bool) {
        if let Ok(mut f) = self.checkpoint_figures.lock() {
            f.record(bytes, presence_bytes, secs, compacted);
        }
    }

    /// The checkpoint figures so far.
    pub fn checkpoint_figures(&self) -> CheckpointFigures {
        self.checkpoint_figures
            .lock()
            .map(|f| *f)
            .unwrap_or_default()
    }

    /// Folds a sample of RSS less presence bits into the peak; returns the peak.
    pub fn peak_rss_less_bits(&self, sample: u64) -> u64 {
        self.peak_rss_less_bits
            .fetch_max(sample, Ordering::AcqRel)
            .max(sample)
    }

    /// The counters a checkpoint carries, as they are now.
    pub(super) fn counters(&self) -> Counters {
        let mut c = Counters {
            warc_revisits: self.warc_revisits.load(Ordering::Acquire),
            // URLs skipped on their sitemap `<lastmod>` are counted by the core; a
            // resume restores the checkpoint's count into the verdicts'.
            recrawl: self.core.counters.recrawl(),
            ..Counters::default()
        };
        for (counter, field) in CHECKPOINTED {
            *field(&mut c) = self.core.counters.get(counter);
        }
        c
    }

    /// Sets the counters to a checkpoint's, before any shard starts (a resume).
    pub(super) fn restore_counters(&self, c: &Counters) {
        let mut c = *c;
        self.warc_revisits.store(c.warc_revisits, Ordering::Release);
        for (counter, field) in CHECKPOINTED {
            self.core.counters.restore(counter, *field(&mut c));
        }
        self.core.counters.restore_recrawl(&c.recrawl);
    }
}

/// Sets slot `index` of a per-shard list (what a shard publishes of itself).
fn put<T>(all: &Mutex<Vec<T>>, index: usize, value: T) {
    if let Ok(mut all) = all.lock() {
        if let Some(slot) = all.get_mut(index) {
            *slot = value;
        }
    }
}

/// One field of a checkpoint's [`Counters`].
type CountersField = fn(&mut Counters) -> &mut u64;

/// The crawl counters a checkpoint carries, each with its field of [`Counters`]: one
/// list for both ways (a checkpoint reads them, a resume restores them). Hosts parked
/// and the URLs refused on a host's budget are not carried.
const CHECKPOINTED: [(Counter, CountersField); 16] = [
    (Counter::Pages, |c| &mut c.pages),
    (Counter::PagesStarted, |c| &mut c.pages_started),
    (Counter::Bytes, |c| &mut c.bytes),
    (Counter::Discovered, |c| &mut c.discovered),
    (Counter::Duplicates, |c| &mut c.duplicates),
    (Counter::PagesLinksTruncated, |c| {
        &mut c.pages_links_truncated
    }),
    (Counter::PagesScanTruncated, |c| &mut c.pages_scan_truncated),
    (Counter::PagesLongAttributes, |c| {
        &mut c.pages_long_attributes
    }),
    (Counter::RobotsTruncated, |c| &mut c.robots_truncated),
    (Counter::RobotsLongLines, |c| &mut c.robots_long_lines),
    (Counter::SitemapsRead, |c| &mut c.sitemaps_read),
    (Counter::SitemapsCut, |c| &mut c.sitemaps_cut),
    (Counter::SitemapsFailed, |c| &mut c.sitemaps_failed),
    (Counter::SitemapUrlsRefused, |c| &mut c.sitemap_urls_refused),
    (Counter::HostsKnown, |c| &mut c.hosts_known),
    (Counter::HostsRetired, |c| &mut c.hosts_retired),
];

impl crate::farm::CrawlGauges for Shared {
    fn outstanding(&self) -> &AtomicU64 {
        self.core.outstanding.atomic()
    }
    fn pages(&self) -> u64 {
        self.core.counters.get(Counter::Pages)
    }
    fn fail(&self) {
        self.flags.fail();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU64;
    use std::sync::Arc;

    use super::*;
    use crate::engine::CrawlConfig;
    use crate::fetch::FetchLimits;
    use crate::seen::{Backing, ContentSeen, SeenConfig, SeenSet};

    fn shared(dir: &std::path::Path) -> Shared {
        let seen_config = SeenConfig {
            backing: Backing::Memory,
            ..SeenConfig::new(1_000, 1e-6)
        };
        Shared::from_parts(
            CrawlConfig::new(dir.join("out")),
            FetchLimits::default(),
            SeenSet::create_with(dir.join("seen.bits"), &seen_config).expect("seen"),
            ContentSeen::create_backed(dir.join("fp.bits"), 1_000, 1e-6, Backing::Memory)
                .expect("fingerprints"),
            None,
            Arc::new(AtomicU64::new(0)),
        )
    }

    /// Every checkpointed counter comes back on a resume, hosts known and retired
    /// among them (a resumed crawl once said 0 hosts known of a million).
    #[test]
    fn a_checkpoints_counters_come_back_on_a_resume() {
        let dir = tempfile::tempdir().expect("tempdir");
        let before = shared(dir.path());
        for (i, (counter, _)) in CHECKPOINTED.iter().enumerate() {
            before.core.counters.add(*counter, 1000 + i as u64);
        }
        let saved = before.counters();
        assert_eq!((saved.hosts_known, saved.hosts_retired), (1014, 1015));
        let json = serde_json::to_string(&saved).expect("json");
        let other = tempfile::tempdir().expect("tempdir");
        let after = shared(other.path());
        after.restore_counters(&serde_json::from_str(&json).expect("parse"));
        for (i, (counter, _)) in CHECKPOINTED.iter().enumerate() {
            assert_eq!(
                after.core.counters.get(*counter),
                1000 + i as u64,
                "{counter:?}"
            );
        }
    }
}
