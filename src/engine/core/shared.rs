//! What the cores of every shard share with each other and with the engine: the
//! settings they read, the presence bits, and the counters they bump. The core sees
//! this and nothing else of the engine (`docs/architecture.md`, "The crawl core"): the
//! engine's own state (`engine::Shared`: the whole configuration, output figures, flags
//! the coordinator sets, the farm's link) holds one of these and hands the cores an
//! `Arc` of it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::{RecentStarts, SitemapMemory};
use crate::control::OperatorRules;
use crate::fetch::FetchLimits;
use crate::handler::Handler;
use crate::recrawl::{LastmodPolicy, Previous};
use crate::robots::PolicyConfig;
use crate::routing::FarmRoutes;
use crate::seen::{ContentSeen, SeenSet};

/// The part of the crawl's configuration the core reads, copied out of it by the
/// engine (`engine/config.rs`, `CoreSettings::from`).
#[derive(Clone, Debug)]
pub(crate) struct CoreSettings {
    /// Requests in flight per shard at most.
    pub concurrency_per_shard: usize,
    /// The `User-Agent` of every request.
    pub user_agent: String,
    /// The product token robots.txt groups and meta tags are matched against.
    pub agent_token: String,
    /// The `From` header, if any.
    pub from: Option<String>,
    /// Politeness: from the end of a host's fetch to its next request.
    pub delay: Duration,
    /// Adaptive politeness: a multiple of the last response time, if above `delay`.
    pub delay_factor: f64,
    /// A `Retry-After` is honoured up to this.
    pub max_retry_after: Duration,
    /// `--max-pages`, `--max-bytes`: the crawl's budget.
    pub max_pages: Option<u64>,
    pub max_bytes: Option<u64>,
    /// `--max-pages-per-host`.
    pub max_pages_per_host: Option<u64>,
    /// Links extracted from one page at most.
    pub max_links_per_page: usize,
    /// Redirect hops followed in a chain at most.
    pub max_redirects: u32,
    /// Retries of a failed page.
    pub max_retries: u8,
    /// Consecutive failures that park a host.
    pub host_failures_to_park: u32,
    /// The URL filter's scope, as the crawl log's warning names it.
    pub scope: String,
    /// robots.txt parsing and caching policy.
    pub robots: PolicyConfig,
    /// Failed robots.txt fetches before its host's URLs are given up.
    pub robots_max_attempts: u32,
    /// Bytes the robots cache may use.
    pub robots_cache_bytes: usize,
    /// Where the robots cache's disk tier keeps its log files (`OUT/robots`; one
    /// `shard-NNNN` directory per shard); `None` keeps them in memory (tests).
    pub robots_spill_dir: Option<std::path::PathBuf>,
    /// WARC output is on: keep each payload as it came off the wire.
    pub warc: bool,
    /// In a re-crawl, what a sitemap `<lastmod>` older than the previous capture does.
    pub sitemap_lastmod: LastmodPolicy,
    /// How long a host stays unresolved after its name found no server that answered.
    pub dns_dead_for: Duration,
    /// How long after a negative answer (no such name, no address, a server error).
    pub dns_negative_ttl: Duration,
}

/// The cores' shared state. See the module docs.
pub(crate) struct CoreShared {
    pub settings: CoreSettings,
    pub limits: FetchLimits,
    pub seen: SeenSet,
    pub fingerprints: ContentSeen,
    /// The embedding's hooks; the core asks [`Handler::accept_link`].
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
    /// Sitemap counters (`sitemaps.rs`; `Stats` fields `sitemaps_read`,
    /// `sitemaps_cut`, `sitemaps_failed`, `sitemap_urls_refused`, in that order).
    pub sitemaps: [AtomicU64; 4],
    pub hosts_parked: AtomicU64,
    /// Hosts discovered (each host's first URL marks it in the presence bits); not
    /// carried across a resume.
    pub hosts_known: AtomicU64,
    /// Hosts given up (robots.txt unreachable through its retries, name dead, refused
    /// address, page budget spent): events, a host given up twice counts twice.
    pub hosts_retired: AtomicU64,
    /// URLs refused when admitted because their host's `--max-pages-per-host` was
    /// spent (logged `budget:pages-per-host`, never queued).
    pub urls_refused_budget: AtomicU64,
    /// Stop taking new work (budget, signal, operator).
    pub stopping: AtomicBool,
    /// The previous crawl's captures, in a re-crawl.
    pub previous: Option<Previous>,
    /// Re-crawl verdicts counted so far (`recrawl.rs`).
    pub recrawl: crate::recrawl::RecrawlCounters,
    /// Sitemap grants (robots.txt permission along index chains) and, in a re-crawl,
    /// `<lastmod>` dates, for all shards (`sitemaps.rs`).
    pub sitemap_memory: SitemapMemory,
    /// When each host was last asked, across shards ([`RecentStarts`]).
    pub recent_starts: RecentStarts,
    /// This node's farm, when it is one: which URLs it owns.
    pub farm: Option<Arc<dyn FarmRoutes>>,
    /// The operator's blocks and raised delays, set through the control
    /// API while the crawl runs.
    pub operator: Arc<OperatorRules>,
}

impl CoreShared {
    /// Counters at zero, no flag set, not a re-crawl, not a farm node. `started` is
    /// the crawl's epoch for [`RecentStarts`].
    pub fn new(
        settings: CoreSettings,
        limits: FetchLimits,
        seen: SeenSet,
        fingerprints: ContentSeen,
        handler: Option<Arc<dyn Handler>>,
        started: std::time::Instant,
    ) -> Self {
        Self {
            settings,
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
            hosts_parked: AtomicU64::new(0),
            hosts_known: AtomicU64::new(0),
            hosts_retired: AtomicU64::new(0),
            urls_refused_budget: AtomicU64::new(0),
            stopping: AtomicBool::new(false),
            previous: None,
            recrawl: crate::recrawl::RecrawlCounters::default(),
            sitemap_memory: SitemapMemory::default(),
            recent_starts: RecentStarts::new(started),
            farm: None,
            operator: Arc::default(),
        }
    }

    /// The operator's rules the control API changes.
    pub fn with_operator(mut self, operator: Arc<OperatorRules>) -> Self {
        self.operator = operator;
        self
    }

    /// In a re-crawl, the previous crawl's captures.
    pub fn with_previous(mut self, previous: Option<Previous>) -> Self {
        self.previous = previous;
        self
    }

    /// On a farm node, the farm's routing answers.
    pub fn with_farm(mut self, farm: Option<Arc<dyn FarmRoutes>>) -> Self {
        self.farm = farm;
        self
    }

    /// Whether the crawl's page or byte budget is spent.
    pub fn budget_spent(&self) -> bool {
        let s = &self.settings;
        s.max_pages
            .is_some_and(|m| self.pages_started.load(Ordering::Acquire) >= m)
            || s.max_bytes
                .is_some_and(|m| self.bytes.load(Ordering::Acquire) >= m)
    }
}
