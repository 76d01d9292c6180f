//! The engine's shared state: what every shard thread, the coordinator and the
//! output thread read and publish while a crawl runs (`docs/architecture.md`,
//! "Shared state").

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::checkpoint::Counters;
use crate::crawllog::Outcome;
use crate::frontier::FrontierStats;

use super::core::{self, Counter};
use super::stats::outcome_index;
use super::{control, width, CrawlConfig};

/// State every shard reads: the configuration, the cores' shared state (presence bits,
/// counters: [`core::CoreShared`], which this dereferences to), and the engine's own
/// figures and flags.
pub(crate) struct Shared {
    pub config: CrawlConfig,
    /// What the cores share; each core holds an `Arc` of it and nothing else of this.
    pub core: Arc<core::CoreShared>,
    /// Counted by the output thread.
    pub warc_revisits: Arc<AtomicU64>,
    pub outcomes: [AtomicU64; 11],
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
    /// This node's link to its farm (`docs/farm.md`); `None` outside a farm. The
    /// cores see the same link as `core.farm_routes`.
    pub farm_link: Option<Arc<crate::farm::FarmLink>>,
    /// What the operator set through the control API (`control.rs`); the
    /// cores read its rules through `core.operator_rules`.
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
    /// Counters at zero, no flag set, figures for `config.shards` shards. The farm
    /// link, if any, is the one `core` was given.
    pub fn new(
        config: CrawlConfig,
        core: core::CoreShared,
        farm_link: Option<Arc<crate::farm::FarmLink>>,
        operator: Arc<control::Operator>,
        warc_revisits: Arc<AtomicU64>,
    ) -> Self {
        let n = config.shards;
        Self {
            core: Arc::new(core),
            warc_revisits,
            outcomes: Default::default(),
            exit: AtomicBool::new(false),
            paused: AtomicBool::new(false),
            fatal: AtomicBool::new(false),
            frontier_stats: Mutex::new(vec![FrontierStats::default(); n]),
            robots_stats: Mutex::new(vec![crate::robots::CacheStats::default(); n]),
            in_flight: (0..n).map(|_| AtomicU64::new(0)).collect(),
            width: width::WidthGauges::new(n),
            checkpoint_figures: Mutex::new(CheckpointFigures::default()),
            peak_rss_less_bits: AtomicU64::new(0),
            farm_link,
            operator,
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
        Self::new(config, core, None, operator, warc_revisits)
    }

    pub fn count_outcome(&self, o: Outcome) {
        if let Some(c) = self.outcomes.get(outcome_index(o)) {
            c.fetch_add(1, Ordering::Relaxed);
        }
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

/// One field of a checkpoint's [`Counters`].
type CountersField = fn(&mut Counters) -> &mut u64;

/// The crawl counters a checkpoint carries, each with its field of [`Counters`]: one
/// list for both ways (a checkpoint reads them, a resume restores them). Hosts known,
/// retired and parked and the URLs refused on a host's budget are not carried.
const CHECKPOINTED: [(Counter, CountersField); 14] = [
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
];

impl crate::farm::CrawlGauges for Shared {
    fn outstanding(&self) -> &AtomicU64 {
        self.core.outstanding.atomic()
    }
    fn pages(&self) -> u64 {
        self.core.counters.get(Counter::Pages)
    }
    fn fail(&self) {
        self.fatal.store(true, Ordering::Release);
    }
}
