//! The crawl core with synthetic time and no sockets: every test builds a [`Core`] on
//! an in-memory frontier (`Frontier::in_memory`: blocks in RAM, no files), feeds it
//! made-up instants and fetch outcomes, and checks the actions it answers with.
//!
//! Time is an opaque origin (one `Instant` taken as a base, never compared with the
//! clock again) advanced by hand; the wall clock is a fixed Unix time.

use std::sync::Arc;
use std::time::{Duration, Instant};

use url::Url;

use super::page::{backoff, is_retryable};
use super::{
    host_key, shard_of, Action, Core, CoreParts, CoreSettings, CoreShared, Counter, Now, Record,
    RecordContext,
};
use crate::crawllog::{LogRecord, Outcome};
use crate::fetch::{FailReason, FetchLimits, FetchOutcome};
use crate::frontier::{Frontier, FrontierConfig, QueuedUrl};
use crate::http::charset_of;
use crate::provenance::WarcDate;
use crate::seen::{Backing, ContentSeen, SeenConfig, SeenSet};
use crate::url::{FilterConfig, Scope, UrlFilter};

/// 2023-11-14T22:13:20Z, a round Unix time for `Retry-After` dates.
const WALL_SECS: i64 = 1_700_000_000;

struct Harness {
    core: Core,
    shared: Arc<CoreShared>,
    /// The URL filter's settings the core was built with.
    filter: FilterConfig,
    t0: Now,
}

/// What a test may change before its core is built: the core's settings (reached
/// through `Deref`, so `c.delay = ...` reads as on the crawl's configuration), the
/// number of shards, the URL filter's settings.
struct TestConfig {
    settings: CoreSettings,
    shards: usize,
    filter: FilterConfig,
    /// A re-crawl: its previous crawl's captures are given to `harness_of`.
    recrawl: Option<String>,
    /// A farm node: what it owns.
    farm: Option<Arc<dyn crate::routing::FarmRoutes>>,
    /// The embedder's hooks.
    handler: Option<Arc<dyn crate::handler::Handler>>,
}

impl std::ops::Deref for TestConfig {
    type Target = CoreSettings;
    fn deref(&self) -> &CoreSettings {
        &self.settings
    }
}

impl std::ops::DerefMut for TestConfig {
    fn deref_mut(&mut self) -> &mut CoreSettings {
        &mut self.settings
    }
}

impl TestConfig {
    /// One shard, one second between fetches of a host, 16 fetches at a time, no
    /// WARC, robots.txt obeyed.
    fn new() -> Self {
        Self {
            settings: CoreSettings {
                concurrency_per_shard: 16,
                user_agent: "trawl-test/1.0 (+https://example.invalid/bot)".to_owned(),
                agent_token: "trawl".to_owned(),
                from: None,
                delay: secs(1),
                delay_factor: 0.0,
                max_retry_after: secs(600),
                max_pages: None,
                max_bytes: None,
                max_pages_per_host: None,
                max_links_per_page: crate::html::ExtractOptions::DEFAULT_MAX_LINKS,
                max_redirects: 10,
                max_retries: 2,
                host_failures_to_park: 8,
                scope: String::new(),
                robots: crate::robots::PolicyConfig::new("trawl"),
                robots_max_attempts: 3,
                robots_cache_bytes: 16 << 20,
                robots_spill_dir: None,
                warc: false,
                sitemap_lastmod: crate::recrawl::LastmodPolicy::Conditional,
                dns_dead_for: secs(600),
                dns_negative_ttl: secs(60),
                routes: None,
            },
            shards: 1,
            filter: FilterConfig::default(),
            recrawl: None,
            farm: None,
            handler: None,
        }
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// A core of shard 0 (of `config.shards`) for `seeds`: one second between fetches of
/// a host, 16 fetches at a time, no WARC, robots.txt obeyed.
fn harness_with(
    seeds: &[&str],
    tweak: impl FnOnce(&mut TestConfig),
    frontier: impl FnOnce(&mut FrontierConfig),
) -> Harness {
    harness_of(seeds, tweak, frontier, None)
}

/// [`harness_with`], in a re-crawl of `previous` when given.
fn harness_of(
    seeds: &[&str],
    tweak: impl FnOnce(&mut TestConfig),
    frontier: impl FnOnce(&mut FrontierConfig),
    previous: Option<crate::recrawl::Previous>,
) -> Harness {
    let mut config = TestConfig::new();
    tweak(&mut config);
    config.settings.scope = format!("{:?}", config.filter.scope);
    let seed_urls: Vec<Url> = seeds.iter().map(|s| Url::parse(s).expect("seed")).collect();
    let filter = Arc::new(UrlFilter::new(config.filter.clone(), &seed_urls).expect("filter"));
    let seen_config = SeenConfig {
        backing: Backing::Memory,
        ..SeenConfig::new(100_000, 1e-6)
    };
    let seen = SeenSet::anonymous(&seen_config).expect("seen");
    let fingerprints = ContentSeen::anonymous(10_000, 1e-6).expect("fingerprints");
    let shards = config.shards;
    let t0 = Now {
        at: Instant::now(),
        wall: WarcDate::from_unix_micros(WALL_SECS * 1_000_000),
    };
    let shared = Arc::new(
        CoreShared::new(
            config.settings,
            FetchLimits::default(),
            seen,
            fingerprints,
            config.handler.take(),
            t0.at,
        )
        .with_previous(previous)
        .with_farm_routes(config.farm.take()),
    );
    let mut fc = FrontierConfig::new(std::path::PathBuf::from("frontier-in-memory"));
    frontier(&mut fc);
    let core = Core::new(CoreParts {
        index: 0,
        shards,
        shared: Arc::clone(&shared),
        frontier: Frontier::in_memory(fc),
        filter,
        tallies: Default::default(),
        robots: super::robots_cache(&shared.settings, 0),
    });
    let mut h = Harness {
        core,
        shared,
        filter: config.filter,
        t0,
    };
    for s in seeds {
        h.seed(s);
    }
    h
}

fn harness(seeds: &[&str]) -> Harness {
    harness_with(seeds, |_| {}, |_| {})
}

impl Harness {
    fn at(&self, d: Duration) -> Now {
        self.t0.plus(d)
    }

    /// Queues a URL as the engine queues a seed: presence bit set, counted outstanding.
    fn seed(&mut self, url: &str) {
        let url = Url::parse(url).expect("url");
        let key = host_key(&url).expect("host");
        self.shared
            .memory
            .seen
            .test_and_set(url.as_str().as_bytes());
        self.shared.outstanding.add(1);
        let mut out = Vec::new();
        self.core
            .push(&key, QueuedUrl::seed(url.as_str()), self.t0, &mut out);
        assert!(out.is_empty(), "{out:?}");
    }

    fn schedule(&mut self, now: Now) -> Vec<Action> {
        let mut out = Vec::new();
        self.core.schedule(now, &mut out);
        out
    }

    fn feed(&mut self, o: FetchOutcome, now: Now) -> Vec<Action> {
        let mut out = Vec::new();
        self.core.on_fetched(o, now, &mut out);
        out
    }

    /// Schedules at `now`, expects one robots.txt fetch and answers it.
    fn robots(&mut self, now: Now, status: u16, body: &str) -> Vec<Action> {
        let actions = self.schedule(now);
        let asked = robots_fetches(&actions);
        assert_eq!(asked.len(), 1, "{actions:?}");
        let (id, url) = asked[0].clone();
        self.feed(response(id, &url, status, &[], body.as_bytes()), now)
    }

    /// Schedules at `now` and expects exactly one page fetch: its id and URL.
    fn one_fetch(&mut self, now: Now) -> (u64, String) {
        let actions = self.schedule(now);
        let f = fetches(&actions);
        assert_eq!(f.len(), 1, "{actions:?}");
        f[0].clone()
    }

    fn outstanding(&self) -> u64 {
        self.shared.outstanding.get()
    }

    fn checkpointed(&mut self) -> Vec<String> {
        let mut urls = Vec::new();
        self.core
            .for_each_checkpointed(|_, item| urls.push(item.url.clone()))
            .expect("listing");
        urls
    }
}

fn response(
    id: u64,
    url: &str,
    status: u16,
    headers: &[(&str, &str)],
    body: &[u8],
) -> FetchOutcome {
    FetchOutcome::answered(id, url, status, headers, body)
}

fn html(id: u64, url: &str, body: &str) -> FetchOutcome {
    response(
        id,
        url,
        200,
        &[("Content-Type", "text/html; charset=utf-8")],
        body.as_bytes(),
    )
}

fn failure(id: u64, url: &str, reason: FailReason) -> FetchOutcome {
    FetchOutcome::failed(
        id,
        Url::parse(url).expect("url"),
        crate::http::SharedBytes::default(),
        reason,
    )
}

fn fetches(actions: &[Action]) -> Vec<(u64, String)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Fetch(r) => Some((r.id, r.head.url.to_string())),
            _ => None,
        })
        .collect()
}

fn robots_fetches(actions: &[Action]) -> Vec<(u64, String)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::FetchRobots(r) => Some((r.id, r.head.url.to_string())),
            _ => None,
        })
        .collect()
}

fn logs(actions: &[Action]) -> Vec<&LogRecord> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Log(r) => Some(&**r),
            _ => None,
        })
        .collect()
}

fn records(actions: &[Action]) -> Vec<&Record> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Record(r) => Some(&**r),
            _ => None,
        })
        .collect()
}

fn routes(actions: &[Action]) -> Vec<(usize, &str, &QueuedUrl)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Route { shard, host, item } => Some((*shard, host.as_str(), item)),
            _ => None,
        })
        .collect()
}

/// The URLs a page answer queued in this shard, in order: what the next fetches take.
fn drain_fetch_urls(h: &mut Harness, mut now: Now, n: usize) -> Vec<String> {
    let mut urls = Vec::new();
    for _ in 0..n {
        let (id, url) = h.one_fetch(now);
        h.feed(html(id, &url, "<p>leaf</p>"), now);
        urls.push(url);
        now = now.plus(secs(1));
    }
    urls
}

const A: &str = "http://a.test/";

mod added;
mod checkpoints;
mod inbound;
mod pages;
mod politeness;
mod robots;
mod sitemap_answers;
mod sitemaps;
