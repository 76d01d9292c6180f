//! What the cores of every shard share with each other and with the engine: the
//! settings they read, the memory they share (presence bits, fingerprints, sitemap
//! memory, recent starts), the counters they bump and the stopping flag. The core sees
//! this and nothing else of the engine (`docs/architecture.md`, "The crawl core"): the
//! engine's own state (`engine::Shared`: the whole configuration, output figures, flags
//! the coordinator sets, the farm's link) holds one of these and hands the cores an
//! `Arc` of it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::counters::{Counter, CrawlCounters, Outstanding};
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
    /// The routes through proxies and their health, shared with the fetchers; `None`
    /// when every request goes direct.
    pub routes: Option<Arc<dyn crate::fetch::RouteHealth>>,
}

/// What the shards remember together, each part with its own lock-free or briefly
/// locked methods: a URL or host marked by one shard is known to all.
pub(crate) struct CrawlMemory {
    /// The presence bits of URLs (each admitted once for the crawl) and of hosts
    /// (`routing::host_mark`: a host's first URL counts it known).
    pub seen: SeenSet,
    /// Content fingerprints of pages (a duplicate's links are not followed).
    pub fingerprints: ContentSeen,
    /// Sitemap grants (robots.txt permission along index chains) and, in a re-crawl,
    /// `<lastmod>` dates (`sitemaps.rs`).
    pub sitemaps: SitemapMemory,
    /// When each host was last asked, across shards ([`RecentStarts`]).
    pub recent_starts: RecentStarts,
}

/// The cores' shared state. See the module docs. The parts are public where each is a
/// type with methods of its own (no public atomic); the one flag is behind
/// [`CoreShared::stop`] and [`CoreShared::is_stopping`].
pub(crate) struct CoreShared {
    /// Read-only: the core's part of the configuration.
    pub settings: CoreSettings,
    /// Read-only: the fetch caps every request carries.
    pub limits: FetchLimits,
    /// The presence bits, fingerprints, sitemap memory and recent starts.
    pub memory: CrawlMemory,
    /// The crawl's counters (methods only).
    pub counters: CrawlCounters,
    /// URLs admitted and not yet finished (methods only).
    pub outstanding: Outstanding,
    /// The embedding's hooks; the core asks [`Handler::accept_link`].
    pub handler: Option<Arc<dyn Handler>>,
    /// Read-only: the previous crawl's captures, in a re-crawl.
    pub previous: Option<Previous>,
    /// This node's farm, when it is one: which URLs it owns (the engine's side of the
    /// farm is `engine::Shared::farm_link`).
    pub farm_routes: Option<Arc<dyn FarmRoutes>>,
    /// The operator's blocks and raised delays, set through the control API while
    /// the crawl runs (the engine's side is `engine::Shared::operator`).
    pub operator_rules: Arc<OperatorRules>,
    /// Stop taking new work (budget, signal, operator).
    stopping: AtomicBool,
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
            memory: CrawlMemory {
                seen,
                fingerprints,
                sitemaps: SitemapMemory::default(),
                recent_starts: RecentStarts::new(started),
            },
            counters: CrawlCounters::default(),
            outstanding: Outstanding::default(),
            handler,
            previous: None,
            farm_routes: None,
            operator_rules: Arc::default(),
            stopping: AtomicBool::new(false),
        }
    }

    /// The operator's rules the control API changes.
    pub fn with_operator_rules(mut self, rules: Arc<OperatorRules>) -> Self {
        self.operator_rules = rules;
        self
    }

    /// In a re-crawl, the previous crawl's captures.
    pub fn with_previous(mut self, previous: Option<Previous>) -> Self {
        self.previous = previous;
        self
    }

    /// On a farm node, the farm's routing answers.
    pub fn with_farm_routes(mut self, routes: Option<Arc<dyn FarmRoutes>>) -> Self {
        self.farm_routes = routes;
        self
    }

    /// Stop taking new work: set by a core whose budget is spent, or by the
    /// coordinator (a signal, the operator). Never cleared.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::Release);
    }

    /// Whether the crawl takes no new work ([`CoreShared::stop`]).
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }

    /// Whether the crawl's page or byte budget is spent.
    pub fn budget_spent(&self) -> bool {
        let s = &self.settings;
        s.max_pages
            .is_some_and(|m| self.counters.get(Counter::PagesStarted) >= m)
            || s.max_bytes
                .is_some_and(|m| self.counters.get(Counter::Bytes) >= m)
    }
}
