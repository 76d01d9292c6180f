//! The crawl core of one shard: every decision a shard makes, with no I/O.
//!
//! The core takes inputs — the time ([`Now`]), URLs routed in from peers
//! ([`Core::push`]), links other farm nodes found ([`Core::on_inbound`]), URLs added
//! while the crawl runs ([`Core::on_added`]), a turn to schedule ([`Core::schedule`]),
//! fetch outcomes of pages and robots.txt ([`Core::on_fetched`]) — and answers with
//! [`Action`]s for the driver
//! (`shard.rs`) to carry out: submit a fetch, write a crawl-log line, record a fetch
//! (log line and WARC capture), send a URL to the shard that owns its host. It owns the
//! shard's frontier, robots cache, host tallies and the fetches in flight, so the
//! driver keeps only the event loop, the fetcher, the channels and the output batch.
//!
//! The core reads no clock (the driver passes [`Now`]), opens no socket, touches no
//! channel and writes no file of its own; its frontier spills to segment files past
//! its RAM budget, which is the frontier's business. Shared counters and the
//! presence bits are lock-free memory in [`CoreShared`]. Tests drive it with synthetic
//! instants (`tests.rs`).
//!
//! - `schedule.rs`: which URL goes next, politeness, the robots.txt gate (a host whose
//!   rules are not known yet is held in the frontier, so its URLs leave it once),
//!   building requests.
//! - `robots.rs`: robots.txt answers, refused hosts.
//! - `page.rs`: page answers: retries and backoff, budgets, failure parking,
//!   redirects, link extraction, link admission (the one admission, [`Core::admit`])
//!   and routing.
//! - `inbound.rs`: links from other farm nodes, through the same admission.
//! - `added.rs`: URLs added while the crawl runs (`trawl add`), through the same
//!   admission.

mod added;
mod counters;
mod error_window;
mod inbound;
mod page;
mod proxy;
mod recent;
mod recrawl;
mod robots;
mod schedule;
mod shared;
mod sitemaps;
pub(crate) use counters::Counter;
pub(crate) use error_window::ErrorWindow;
pub(crate) use recent::RecentStarts;
pub(crate) use shared::{CoreSettings, CoreShared};
pub(crate) use sitemaps::{queue_operator_sitemaps, SitemapMemory};

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::crawllog::{LogRecord, Outcome};
use crate::fetch::{FetchOutcome, FetchRequest};
use crate::frontier::{Frontier, FrontierError, FrontierStats, QueuedUrl};
use crate::html::ExtractOptions;
use crate::provenance::WarcDate;
use crate::provenance::{Hop, HopsPath};
use crate::robots::{CacheStats, RobotsCache, RobotsPolicy};
use crate::routing::HostKey;
use crate::url::UrlFilter;

/// The core's maps and sets keyed by host names and fetch ids, looked up a few times a
/// page: ahash, a fraction of SipHash's cost on such short keys, and like it keyed at
/// random (per process and map), so a crawled site cannot pick names that collide.
pub(super) type FastMap<K, V> = HashMap<K, V, ahash::RandomState>;
/// See [`FastMap`].
pub(super) type FastSet<K> = HashSet<K, ahash::RandomState>;

/// Crawl-log annotation of a URL refused because its host resolves to a loopback,
/// private or otherwise special address and `--allow-private-addresses` is off.
pub(crate) const POLICY_PRIVATE: &str = "policy:private-address";

/// Crawl-log annotation of a URL of a host whose `--max-pages-per-host` is spent.
pub(crate) const BUDGET_PAGES_PER_HOST: &str = "budget:pages-per-host";

/// Crawl-log annotation of a URL of a host whose name did not resolve (its
/// robots.txt line says why).
pub(crate) const DNS_UNRESOLVED: &str = "dns-unresolved";

/// Decisions without a fetch (declined, disallowed, skipped URLs) one scheduling turn
/// makes at most. Each is a crawl-log line in the action buffer: a host whose budget
/// ran out with millions of URLs queued once made one turn hold them all in RAM. The
/// driver comes back at once (the host stays ready), after the output has taken the
/// lines.
pub(crate) const MAX_DECISIONS_PER_TURN: usize = 4096;

/// Hosts remembered as refused by policy, per shard. Past it the set is emptied: a
/// forgotten host costs one more robots.txt attempt that fails before any connection
/// (the address check follows name resolution), and no URL is lost.
const MAX_REFUSED_HOSTS: usize = 65_536;

/// Refused hosts named on stderr per shard; the rest are in the crawl log only.
const MAX_REFUSAL_WARNINGS: u32 = 10;

/// The time as the core sees it: a monotonic instant for politeness and retries, and
/// the wall clock for crawl-log dates and `Retry-After` dates. Read by the driver,
/// made up by tests.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Now {
    pub at: Instant,
    pub wall: WarcDate,
}

impl Now {
    /// `d` later on both clocks.
    #[cfg(test)]
    pub fn plus(self, d: Duration) -> Now {
        let micros = i64::try_from(d.as_micros()).unwrap_or(i64::MAX);
        Now {
            at: self.at + d,
            wall: WarcDate::from_unix_micros(self.wall.unix_micros().saturating_add(micros)),
        }
    }

    /// The wall clock of `now` as a `SystemTime` (whole seconds: what HTTP dates
    /// carry).
    fn system_time(self) -> std::time::SystemTime {
        let secs = self.wall.unix_micros().div_euclid(1_000_000);
        match u64::try_from(secs) {
            Ok(s) => std::time::UNIX_EPOCH + std::time::Duration::from_secs(s),
            Err(_) => std::time::UNIX_EPOCH,
        }
    }
}

/// What the core asks the driver to do, in order.
#[derive(Debug)]
pub(crate) enum Action {
    /// Submit a page fetch to the fetcher; its outcome comes back through
    /// [`Core::on_fetched`] under the request's id. Boxed, so that an action is the
    /// size of a link's `Route` (112 bytes, not 416): a page of thousands of links
    /// makes thousands of actions.
    Fetch(Box<FetchRequest>),
    /// Submit a robots.txt fetch (or a hop of its redirects) for a host held waiting.
    FetchRobots(Box<FetchRequest>),
    /// Write a crawl-log line for a decision made without a fetch.
    Log(Box<LogRecord>),
    /// Write the crawl-log line and the WARC capture of a finished fetch.
    Record(Box<Record>),
    /// A re-crawl URL not requested: `--sitemap-lastmod skip` and its sitemap
    /// `<lastmod>` is not newer than the previous fetch (`sitemaps.rs`). The driver
    /// reads the previous capture's links (as for a `304`), writes the crawl-log line
    /// and hands the links to [`Core::on_previous_links`].
    Skip(Box<Skipped>),
    /// Send a newly admitted URL to the shard that owns its host (see
    /// [`Core::route`]).
    Route {
        shard: usize,
        host: String,
        item: QueuedUrl,
    },
    /// Send links whose partition another farm node owns to that node (the driver
    /// hands them to the farm's bus, which may block while its channel is full).
    /// Counted outstanding once while the action waits; the driver ends that count
    /// after the bus has them.
    Farm(Box<ToFarm>),
    /// Write a diagnostic to the process log (the core keeps no logger of its own).
    Note(Note),
}

/// Links for other farm nodes (see [`Action::Farm`]).
#[derive(Debug)]
pub(crate) struct ToFarm {
    pub links: Vec<(String, Hop)>,
    /// The page they were found on (the robots.txt URL for its `Sitemap:` lines).
    pub via: String,
    /// Its hop path.
    pub hops: String,
    /// The robots.txt permission they carry as sitemap files; empty otherwise.
    pub grant: Vec<String>,
}

/// A diagnostic for the process log (see [`Action::Note`]): how loud, and what.
#[derive(Debug)]
pub(crate) struct Note {
    pub level: NoteLevel,
    pub text: String,
}

/// How loud a [`Note`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NoteLevel {
    Debug,
    Warn,
    Error,
}

impl Note {
    pub fn warn(text: String) -> Action {
        Action::Note(Note {
            level: NoteLevel::Warn,
            text,
        })
    }
    pub fn error(text: String) -> Action {
        Action::Note(Note {
            level: NoteLevel::Error,
            text,
        })
    }
    pub fn debug(text: String) -> Action {
        Action::Note(Note {
            level: NoteLevel::Debug,
            text,
        })
    }
}

/// A URL skipped on its sitemap `<lastmod>` (see [`Action::Skip`]).
#[derive(Debug)]
pub(crate) struct Skipped {
    /// The URL as queued (the referrer of the links read back).
    pub item: QueuedUrl,
    /// Its crawl-log line, annotated `skipped` and `lastmod-not-newer`.
    pub log: LogRecord,
    /// The previous crawl's capture of it.
    pub previous: crate::recrawl::IndexEntry,
}

/// Capacity an action buffer keeps between turns; a page of thousands of links grows
/// one past it for that page only (the memory test's pages have 5,000).
pub(crate) const RETAINED_ACTIONS: usize = 256;

/// A finished fetch to write out: the driver's `record` turns it into a crawl-log line
/// and, when WARC is on, a capture.
#[derive(Debug)]
pub(crate) struct Record {
    pub outcome: FetchOutcome,
    pub context: RecordContext,
    pub annotations: Vec<String>,
    /// In a re-crawl, the page answer judged against the previous capture
    /// (`recrawl.rs`, counted there): annotated, maybe written as a revisit, and for
    /// a `304` the driver reads the previous capture's links back.
    pub judgement: Option<crate::recrawl::Judgement>,
}

/// What a recorded fetch was for.
#[derive(Debug)]
pub(crate) enum RecordContext {
    /// A page, with the links found on it (canonical URL and hop).
    Page {
        item: QueuedUrl,
        outlinks: Vec<(String, Hop)>,
    },
    /// A robots.txt fetch made on behalf of the URL `via`.
    Robots { via: String },
}

impl Record {
    /// The page the fetched URL was found on.
    pub fn via(&self) -> Option<&str> {
        match &self.context {
            RecordContext::Page { item, .. } => item.via.as_deref(),
            RecordContext::Robots { via } => Some(via),
        }
    }

    /// The hop path of the fetched URL (robots.txt is a prerequisite, `P`).
    pub fn hops(&self) -> &str {
        match &self.context {
            RecordContext::Page { item, .. } => &item.hops,
            RecordContext::Robots { .. } => "P",
        }
    }

    /// The page and its links, for the capture's metadata record.
    pub fn page(&self) -> Option<(&QueuedUrl, &[(String, Hop)])> {
        match &self.context {
            RecordContext::Page { item, outlinks } => Some((item, outlinks)),
            RecordContext::Robots { .. } => None,
        }
    }
}

/// What a fetch in flight is for.
#[derive(Debug)]
enum InFlight {
    Page { host: String, item: QueuedUrl },
    Robots(RobotsFetch),
}

/// A robots.txt redirect hop to the server just asked, due at `at` (its politeness).
#[derive(Debug)]
struct RobotsHop {
    at: Instant,
    host: String,
    key: HostKey,
    next: crate::robots::FetchRequest,
    via: String,
}

/// A robots.txt fetch in flight: for the host `host` (its cache entry `key`, which a
/// redirect to another host does not change), asked for by the URL `via`.
#[derive(Debug)]
struct RobotsFetch {
    host: String,
    key: HostKey,
    via: String,
}

/// Per-host counters the shard keeps for budgets and failure parking. Part of the
/// checkpoint (`checkpoint::tallies`, `tallies-NNNN.bin`), or a resume would hand every host a fresh
/// `--max-pages-per-host` budget.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct HostTally {
    pub(crate) pages: u64,
    pub(crate) consecutive_failures: u32,
    pub(crate) parked: bool,
    /// Recent errors, to warn on a sudden rise (see [`ErrorWindow`]).
    pub(crate) errors: ErrorWindow,
}

use crate::routing::{host_key, shard_of};

/// What a core is built from.
pub(crate) struct CoreParts {
    pub index: usize,
    pub shards: usize,
    pub shared: Arc<CoreShared>,
    pub frontier: Frontier,
    pub filter: Arc<UrlFilter>,
    /// Host tallies restored from a checkpoint (empty on a fresh crawl).
    pub tallies: HashMap<String, HostTally>,
    /// The shard's robots cache ([`robots_cache`]), with what a checkpoint held
    /// ([`restore_robots`]).
    pub robots: RobotsCache,
}

/// Shard `index`'s robots cache, empty: its byte budget, and its disk tier under
/// `OUT/robots/shard-NNNN` when the crawl has an output directory.
pub(crate) fn robots_cache(settings: &CoreSettings, index: usize) -> RobotsCache {
    match &settings.robots_spill_dir {
        Some(dir) => RobotsCache::with_spill_dir(
            settings.robots.clone(),
            settings.robots_cache_bytes,
            &dir.join(format!("shard-{index:04}")),
        ),
        None => RobotsCache::new(settings.robots.clone(), settings.robots_cache_bytes),
    }
}

/// A host's rules from a checkpoint go back into its shard's cache (restored oldest
/// first, so past the byte budget the most recently used stay in RAM), with the
/// sitemap grants they carry.
pub(crate) fn restore_robots(
    shared: &CoreShared,
    cache: &mut RobotsCache,
    key: HostKey,
    policy: RobotsPolicy,
) {
    sitemaps::regrant(shared, &policy);
    cache.restore(key, policy);
}

/// The decisions of one shard. See the module docs.
pub(crate) struct Core {
    index: usize,
    shards: usize,
    shared: Arc<CoreShared>,
    frontier: Frontier,
    robots: RobotsCache,
    filter: Arc<UrlFilter>,
    extract: ExtractOptions,
    in_flight: FastMap<u64, InFlight>,
    /// Hosts whose robots.txt fetch is in flight; their queues are held in the
    /// frontier until it ends.
    robots_fetching: FastSet<String>,
    /// robots.txt redirect hops to the server just asked, waiting out its politeness
    /// delay (`robots.rs`): due instant, then what `robots_request` needs. Their hosts
    /// stay in `robots_fetching` (held); a checkpoint needs none of this, as a resume
    /// asks for robots.txt again.
    robots_hops: Vec<RobotsHop>,
    tallies: FastMap<String, HostTally>,
    /// Hosts refused by policy (private addresses): their URLs are logged at once as
    /// `blocked-address`, never fetched or retried. Bounded by [`MAX_REFUSED_HOSTS`].
    refused_hosts: FastSet<String>,
    /// Hosts whose name did not resolve when their robots.txt was asked (no such
    /// name, no address, or no answer in time), until when: their URLs are logged
    /// `dns-error` at once instead of waiting (`robots.rs` `unresolve_host`). Bounded
    /// by [`MAX_REFUSED_HOSTS`] like the refused hosts.
    unresolved_hosts: FastMap<String, Instant>,
    refusal_warnings: u32,
    scope_warned: bool,
    next_id: u64,
    /// Answers of the presence bits for one page's links, reused between pages.
    seen_scratch: Vec<bool>,
    /// The actions on one page's links, reused between pages.
    link_actions: Vec<Action>,
    /// Sitemaps to queue again (host key, URL): a grant reached them after they were
    /// read (`sitemaps.rs`). Counted outstanding, and checkpointed, while here.
    sitemap_rereads: Vec<(String, QueuedUrl)>,
    /// Fetches in flight that hold no connection yet (the driver tells, before each
    /// turn): waiting for their name to resolve or for a connection slot of their
    /// server's address. They hold no `--concurrency` slot, up to `--concurrency` of
    /// them (see [`Core::busy`]).
    waiting_unconnected: usize,
    /// robots.txt fetches started ahead of their host's turn (see
    /// `schedule.rs` `look_ahead`).
    robots_look_aheads: u64,
}

impl Core {
    pub fn new(p: CoreParts) -> Self {
        let config = &p.shared.settings;
        let robots = p.robots;
        let extract = ExtractOptions {
            robot_name: config.agent_token.clone(),
            max_links: config.max_links_per_page,
            ..ExtractOptions::default()
        };
        Self {
            index: p.index,
            shards: p.shards.max(1),
            frontier: p.frontier,
            robots,
            filter: p.filter,
            extract,
            in_flight: FastMap::default(),
            robots_fetching: FastSet::default(),
            robots_hops: Vec::new(),
            tallies: p.tallies.into_iter().collect(),
            refused_hosts: FastSet::default(),
            unresolved_hosts: FastMap::default(),
            refusal_warnings: 0,
            scope_warned: false,
            next_id: 0,
            seen_scratch: Vec::new(),
            link_actions: Vec::new(),
            sitemap_rereads: Vec::new(),
            waiting_unconnected: 0,
            robots_look_aheads: 0,
            shared: p.shared,
        }
    }

    /// Queues a URL of one of this shard's hosts (a seed, a peer's link, a URL a peer
    /// could not take). A frontier that cannot take it logs it, so it is not lost
    /// silently.
    pub fn push(&mut self, host: &str, item: QueuedUrl, now: Now, out: &mut Vec<Action>) {
        if self.host_budget_spent(host) {
            // Refused at admission: queueing it would only spill it to disk and drain
            // it later (a trap host past its budget once drained 1.9 million URLs).
            self.shared.counters.bump(Counter::UrlsRefusedBudget);
            out.push(Self::log_decision(
                &item,
                Outcome::Budget,
                BUDGET_PAGES_PER_HOST,
                now,
            ));
            self.finish_url();
            return;
        }
        let url = self.wants_look_ahead(host).then(|| item.url.clone());
        let unseen_host = !self.frontier.has_entry(host);
        if let Err(e) = self.frontier.push(host, item.clone(), now.at) {
            // The disk tier failed: keep the URL in the log so it is not silently lost.
            out.push(Note::error(format!(
                "shard {}: frontier push failed: {e}",
                self.index
            )));
            let mut rec = LogRecord::new(now.wall, item.url, Outcome::Budget);
            rec.annotations.push(format!("frontier-error:{e}"));
            out.push(Action::Log(Box::new(rec)));
            self.finish_url();
            return;
        }
        if unseen_host
            && !self
                .shared
                .memory
                .seen
                .test_and_set(&crate::routing::host_mark(host))
        {
            self.shared.counters.bump(Counter::HostsKnown);
        }
        if let Some(url) = url {
            self.look_ahead(host, &url, now, out);
        }
    }

    /// The outcome of a fetch this core asked for; outcomes of unknown ids are
    /// ignored.
    pub fn on_fetched(&mut self, o: FetchOutcome, now: Now, out: &mut Vec<Action>) {
        match self.in_flight.remove(&o.id) {
            Some(InFlight::Page { host, item }) => self.on_page(host, item, o, now, out),
            Some(InFlight::Robots(fetch)) => self.on_robots(fetch, o, now, out),
            None => {}
        }
    }

    /// Fetches in flight (pages and robots.txt).
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// The driver tells how many fetches in flight hold no connection yet.
    pub fn set_waiting_unconnected(&mut self, n: usize) {
        self.waiting_unconnected = n;
    }

    /// Fetches that hold a `--concurrency` slot: those in flight, less those with no
    /// connection yet, waiting for their name or for a slot of their server's address
    /// (a dead name holds its request for the whole DNS deadline, and many names on
    /// one shared host must not keep every other host waiting), of which at most
    /// `--concurrency` are excused, so submissions stay bounded at twice the setting.
    pub fn busy(&self) -> usize {
        busy_slots(
            self.in_flight.len(),
            self.waiting_unconnected,
            self.shared.settings.concurrency_per_shard,
        )
    }

    /// Whether a fetch slot is free.
    pub fn has_free_slot(&self) -> bool {
        self.busy() < self.shared.settings.concurrency_per_shard
    }

    /// When the schedule next has a host ready (see [`Frontier::next_wakeup_at`]).
    pub fn next_wakeup(&mut self, now: Now) -> Option<Instant> {
        let hop = self.robots_hops.iter().map(|h| h.at).min();
        match (self.frontier.next_wakeup_at(now.at), hop) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Hosts ready at `now` (politeness passed, URLs queued, not held) with no fetch
    /// running: after a scheduling turn, the hosts the slots or the gate left idle.
    pub fn hosts_ready_idle(&mut self, now: Now) -> u64 {
        self.frontier.hosts_ready_at(now.at)
    }

    /// robots.txt fetches started ahead of their host's turn so far.
    pub fn robots_look_aheads(&self) -> u64 {
        self.robots_look_aheads
    }

    /// URLs queued for `host` (the status page's host tables).
    pub fn queued_of(&self, host: &str) -> Option<u64> {
        self.frontier.queued_of(host)
    }

    pub fn frontier_stats(&self) -> FrontierStats {
        self.frontier.stats()
    }

    pub fn robots_stats(&self) -> CacheStats {
        self.robots.stats()
    }

    /// The robots cache, to checkpoint it (its disk tier's batch is written then).
    pub fn robots_mut(&mut self) -> &mut RobotsCache {
        &mut self.robots
    }

    /// The robots cache, for tests that look inside it.
    #[cfg(test)]
    pub fn robots(&self) -> &RobotsCache {
        &self.robots
    }

    /// The host tallies, for the checkpoint's tally dump.
    pub fn tallies(&self) -> &FastMap<String, HostTally> {
        &self.tallies
    }

    /// Pages in flight per host: a checkpoint dumps them as queued URLs, so they are
    /// taken off their host's count in the tally dump.
    pub fn pages_in_flight_by_host(&self) -> HashMap<&str, u64> {
        let mut n: HashMap<&str, u64> = HashMap::new();
        for f in self.in_flight.values() {
            if let InFlight::Page { host, .. } = f {
                *n.entry(host.as_str()).or_default() += 1;
            }
        }
        n
    }

    /// Every URL a checkpoint must keep: the pages in flight (fetched again after a
    /// resume), the sitemaps waiting to be read again, then the frontier (held hosts'
    /// URLs included: they never left it).
    ///
    /// Every URL inline, the line's blocks too: the tests' view of a checkpoint
    /// ([`Core::checkpoint_queued`] keeps the line's blocks by reference).
    ///
    /// # Errors
    /// The frontier could not list its disk tier.
    #[cfg(test)]
    pub fn for_each_checkpointed(
        &mut self,
        mut f: impl FnMut(&str, &QueuedUrl),
    ) -> Result<(), FrontierError> {
        self.for_each_out_of_frontier(&mut f);
        self.frontier.for_each_queued(f)
    }

    /// The URLs a checkpoint lists besides the frontier's: pages in flight (fetched
    /// again after a resume) and sitemaps waiting to be read again.
    fn for_each_out_of_frontier(&self, f: &mut impl FnMut(&str, &QueuedUrl)) {
        for fl in self.in_flight.values() {
            if let InFlight::Page { host, item, .. } = fl {
                f(host, item);
            }
        }
        for (host, item) in &self.sitemap_rereads {
            f(host, item);
        }
    }

    /// For a checkpoint: [`Core::for_each_checkpointed`], except the URLs of the
    /// frontier's line on disk, whose log files are kept in `dir` by reference
    /// (`frontier/kept.rs`); returns the line's blocks in order.
    ///
    /// # Errors
    /// As [`Frontier::for_each_queued`], or a log file could not be kept.
    pub fn checkpoint_queued(
        &mut self,
        dir: &std::path::Path,
        prefix: &str,
        mut f: impl FnMut(&str, &QueuedUrl),
    ) -> Result<Vec<crate::frontier::kept::LineRef>, FrontierError> {
        self.for_each_out_of_frontier(&mut f);
        self.frontier.for_each_queued_but_line_blocks(f)?;
        self.frontier.keep_line_blocks(dir, prefix)
    }

    /// True once `host` has started `--max-pages-per-host` pages (in flight ones
    /// count): its further URLs are refused, queued ones dropped.
    fn host_budget_spent(&self, host: &str) -> bool {
        self.shared
            .settings
            .max_pages_per_host
            .is_some_and(|max| self.tallies.get(host).is_some_and(|t| t.pages >= max))
    }

    fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// One URL fewer outstanding: it was fetched or decided for good.
    fn finish_url(&self) {
        self.shared.outstanding.sub(1);
    }

    /// A crawl-log line for a URL decided without a fetch.
    fn log_decision(item: &QueuedUrl, outcome: Outcome, note: &str, now: Now) -> Action {
        let mut rec = LogRecord::new(now.wall, item.url.clone(), outcome);
        rec.hops = hops_path(&item.hops);
        rec.via = item.via.clone();
        rec.annotations.push(note.to_owned());
        Action::Log(Box::new(rec))
    }
}

/// See [`Core::busy`].
fn busy_slots(in_flight: usize, unconnected: usize, concurrency: usize) -> usize {
    in_flight.saturating_sub(unconnected.min(concurrency))
}

/// The parsed response head of an outcome. The core reads an outcome's head and body
/// through these two only, so a change of the fetcher's outcome shape lands here.
fn head_of(o: &FetchOutcome) -> Option<&crate::http::ResponseHead> {
    o.head.as_ref()
}

/// The body of an outcome, content-decoded: what links and robots.txt rules are read
/// from.
fn body_of(o: &FetchOutcome) -> &[u8] {
    &o.body
}

/// A hop path from its letters; a malformed one reads as a seed's.
pub(crate) fn hops_path(hops: &str) -> HopsPath {
    HopsPath::try_from(hops.to_owned()).unwrap_or_default()
}

/// Seconds as a [`Duration`], for the backoff and retry steps below.
const fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[cfg(test)]
mod tests;
