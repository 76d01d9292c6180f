//! One shard: an event loop that owns a slice of the hosts (by a stable hash of the
//! host key), their frontier queues, robots rules and politeness clocks, and a
//! [`Fetcher`]. Shards share nothing on the hot path but the presence bits (lock-free)
//! and a few atomic counters; links for another shard's hosts travel in batches over
//! crossbeam channels and wake that shard through its fetcher's `mio::Waker`.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TrySendError};
use url::Url;

use crate::crawllog::{FetchTimings, Hop, HopsPath, LogRecord, Outcome};
use crate::frontier::{Frontier, QueuedUrl};
use crate::html::{ExtractOptions, Links};
use crate::http::RequestHead;
use crate::net::{FailReason, FetchOutcome, FetchRequest, Fetcher};
use crate::robots::{
    Access, HostKey, PageDirectives, Reason, RobotsCache, RobotsResponse, RobotsState, Step,
};
use crate::url::UrlFilter;
use crate::warc::{Capture, CaptureCompressor, HttpResponse, Outlink, WarcDate};

use super::output::{OutputBatch, OutputMsg, OutputRecord, WarcItem};
use super::{CheckpointCut, Control, Shared};

/// A batch of URLs routed to a shard, each with its host key.
pub(crate) type Batch = Vec<(String, QueuedUrl)>;

/// Links routed to other shards are sent in batches of this many.
const BATCH_URLS: usize = 256;

/// Capacity of a shard's inbox, in batches: 16,384 URLs, a few MiB.
pub(crate) const INBOX_BATCHES: usize = 64;

/// Past this many URLs waiting for a full peer inbox, a shard waits (draining its
/// own inbox meanwhile) for the peer to take them, for at most [`OUTBOX_WAIT`]: pages
/// of thousands of links otherwise piled millions of URLs into RAM here while the
/// peer was busy (the wide memory test).
const OUTBOX_MAX_URLS: usize = 4 * BATCH_URLS;

/// The longest a shard waits for a peer's inbox at a time; a peer stopped at a
/// checkpoint barrier does not drain it, so the wait must end.
const OUTBOX_WAIT: Duration = Duration::from_millis(100);

/// Crawl-log annotation of a URL refused because its host resolves to a loopback,
/// private or otherwise special address and `--allow-private-addresses` is off.
pub(crate) const POLICY_PRIVATE: &str = "policy:private-address";

/// Hosts remembered as refused by policy, per shard. Past it the set is emptied: a
/// forgotten host costs one more robots.txt attempt that fails before any connection
/// (the address check follows name resolution), and no URL is lost.
const MAX_REFUSED_HOSTS: usize = 65_536;

/// Refused hosts named on stderr per shard; the rest are in the crawl log only.
const MAX_REFUSAL_WARNINGS: u32 = 10;

/// A shard's inbox waker that skips redundant wakes. Senders call
/// [`InboxWaker::notify`] after each send and the owner calls [`InboxWaker::clear`]
/// before it drains its inbox; a wake is written only when none is on its way since
/// the last drain, so a busy peer is not woken once per batch (each wake is an
/// `eventfd` write and may cut its `epoll_wait` short; issue 11).
///
/// No batch waits unseen: a sender that finds the flag set sent its batch before its
/// swap, which comes after the swap of the sender that set the flag and woke the
/// owner; the owner's next turn clears the flag (an acquire swap) and then drains the
/// inbox, which holds that batch.
pub(crate) struct InboxWaker {
    waker: Arc<mio::Waker>,
    pending: std::sync::atomic::AtomicBool,
}

impl InboxWaker {
    pub fn new(waker: Arc<mio::Waker>) -> Self {
        Self {
            waker,
            pending: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Wakes the owner unless a wake is already on its way. A failed wake leaves the
    /// flag set: the owner's next turn (at most its poll timeout away) clears it and
    /// takes the batch anyway.
    fn notify(&self) {
        if !self.pending.swap(true, Ordering::AcqRel) {
            let _ = self.waker.wake();
        }
    }

    /// Called by the owner just before it drains its inbox.
    fn clear(&self) {
        self.pending.swap(false, Ordering::AcqRel);
    }
}

/// What a fetch in flight is for.
#[derive(Debug)]
enum InFlight {
    Page {
        host: String,
        item: QueuedUrl,
        request: Vec<u8>,
    },
    Robots {
        host: String,
        key: HostKey,
        request: Vec<u8>,
        via: String,
    },
}

/// Per-host counters the shard keeps for budgets and failure parking. Part of the
/// checkpoint (`tallies-NNNN.tsv`), or a resume would hand every host a fresh
/// `--max-pages-per-host` budget.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct HostTally {
    pages: u64,
    consecutive_failures: u32,
    parked: bool,
    /// Recent errors, to warn on a sudden rise (see `monitor::ErrorWindow`).
    errors: super::monitor::ErrorWindow,
}

/// The host tallies of a checkpoint directory, routed to their shards.
pub(crate) fn load_tallies(
    dir: &std::path::Path,
    shards: usize,
) -> std::io::Result<Vec<HashMap<String, HostTally>>> {
    let mut out: Vec<HashMap<String, HostTally>> = (0..shards).map(|_| HashMap::new()).collect();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let is_tally = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("tallies-") && n.ends_with(".tsv"));
        if !is_tally {
            continue;
        }
        for line in std::fs::read_to_string(&path)?.lines() {
            let mut f = line.split('\t');
            let (Some(host), Some(pages), Some(failures), Some(parked)) =
                (f.next(), f.next(), f.next(), f.next())
            else {
                continue;
            };
            let tally = HostTally {
                pages: pages.parse().unwrap_or(0),
                consecutive_failures: failures.parse().unwrap_or(0),
                parked: parked == "1",
                ..HostTally::default()
            };
            if let Some(m) = out.get_mut(shard_of(host, shards)) {
                m.insert(host.to_owned(), tally);
            }
        }
    }
    Ok(out)
}

pub(crate) struct Shard {
    pub index: usize,
    shared: Arc<Shared>,
    frontier: Frontier,
    fetcher: Fetcher,
    robots: RobotsCache,
    filter: Arc<UrlFilter>,
    inbox: Receiver<Batch>,
    peers: Vec<Sender<Batch>>,
    peer_wakers: Vec<Arc<InboxWaker>>,
    outboxes: Vec<Batch>,
    /// Log lines and captures for the output thread, sent once per loop turn (see
    /// `output.rs`). In a `RefCell` because `log` and `record` take `&self`.
    output: std::cell::RefCell<OutputBatch>,
    control: Receiver<Control>,
    in_flight: HashMap<u64, InFlight>,
    robots_waiting: HashMap<String, Vec<QueuedUrl>>,
    /// Answers of the presence bits for one page's links, reused between pages.
    seen_scratch: Vec<bool>,
    tallies: HashMap<String, HostTally>,
    next_id: u64,
    extract: ExtractOptions,
    /// Hosts refused by policy (private addresses): their URLs are logged at once as
    /// `blocked-address`, never fetched or retried. Bounded by [`MAX_REFUSED_HOSTS`].
    refused_hosts: std::collections::HashSet<String>,
    refusal_warnings: u32,
    scope_warned: bool,
    /// Compresses this shard's WARC captures (deflate in parallel across shards; the
    /// output thread only appends). In a `RefCell` because `record` takes `&self`.
    warc: std::cell::RefCell<Option<CaptureCompressor>>,
}

pub(crate) struct ShardParts {
    pub index: usize,
    pub shared: Arc<Shared>,
    pub frontier: Frontier,
    pub fetcher: Fetcher,
    pub filter: Arc<UrlFilter>,
    pub inbox: Receiver<Batch>,
    pub peers: Vec<Sender<Batch>>,
    /// One per shard, this shard's own included (it clears its flag).
    pub peer_wakers: Vec<Arc<InboxWaker>>,
    pub output: Sender<OutputMsg>,
    pub control: Receiver<Control>,
    /// Host tallies restored from a checkpoint (empty on a fresh crawl).
    pub tallies: HashMap<String, HostTally>,
    /// Robots cache entries restored from a checkpoint, least recently used first.
    pub robots: Vec<(HostKey, crate::robots::RobotsPolicy)>,
    /// This shard's WARC compressor (`None` when WARC is off).
    pub warc: Option<CaptureCompressor>,
}

/// The stable shard of a host key: CRC-32 of its bytes, so a checkpoint routes the
/// same way in every build.
pub(crate) fn shard_of(host_key: &str, shards: usize) -> usize {
    (crc32fast::hash(host_key.as_bytes()) as usize) % shards.max(1)
}

/// The scheduling key of a URL: `scheme://host:port` (robots.txt scope, RFC 9309 §2.3).
pub(crate) fn host_key(url: &Url) -> Option<String> {
    HostKey::of(url).map(|k| k.as_str().to_owned())
}

impl Shard {
    pub fn new(p: ShardParts) -> Self {
        let config = &p.shared.config;
        let mut robots = RobotsCache::new(config.robots.clone(), config.robots_cache_bytes);
        // Oldest first, so past the byte budget the most recently used hosts stay.
        for (key, policy) in p.robots {
            robots.restore(key, policy);
        }
        let shards = p.peers.len();
        let extract = ExtractOptions {
            robot_name: config.agent_token.clone(),
            max_links: config.max_links_per_page,
            ..ExtractOptions::default()
        };
        Self {
            index: p.index,
            frontier: p.frontier,
            fetcher: p.fetcher,
            robots,
            filter: p.filter,
            inbox: p.inbox,
            peers: p.peers,
            peer_wakers: p.peer_wakers,
            outboxes: (0..shards).map(|_| Vec::new()).collect(),
            output: std::cell::RefCell::new(OutputBatch::new(p.output)),
            control: p.control,
            in_flight: HashMap::new(),
            robots_waiting: HashMap::new(),
            seen_scratch: Vec::new(),
            tallies: p.tallies,
            next_id: 0,
            extract,
            refused_hosts: std::collections::HashSet::new(),
            refusal_warnings: 0,
            scope_warned: false,
            warc: std::cell::RefCell::new(p.warc),
            shared: p.shared,
        }
    }

    /// Runs until the crawl is finished, a budget is spent and the fetches in flight
    /// ended, or a stop is requested.
    pub fn run(mut self) {
        let mut outcomes = Vec::new();
        let mut next_publish = Instant::now();
        loop {
            while let Ok(ctl) = self.control.try_recv() {
                match ctl {
                    Control::Checkpoint(cut) => self.checkpoint(&cut),
                }
            }
            if self.shared.exit.load(Ordering::Acquire) {
                break;
            }
            self.take_inbox();
            let now = Instant::now();
            // A budget or a stop ends scheduling for good; a disk pause until space
            // returns. Fetches in flight finish either way.
            let scheduling = !self.shared.stopping.load(Ordering::Acquire)
                && !self.shared.paused.load(Ordering::Acquire);
            if scheduling {
                self.schedule(now);
            }
            self.flush_outboxes();
            // Records go out in batches by count and age (`output.rs`); the poll below
            // wakes in time to send an aging batch.
            self.output.borrow_mut().flush_due(now);
            if now >= next_publish {
                self.publish();
                next_publish = now + Duration::from_millis(250);
            }
            let mut timeout = Duration::from_millis(50);
            // A frontier wake-up only matters when a fetch could start; with every slot
            // busy the next event is a completion, and waking for a host that is already
            // ready would spin the loop at zero timeout (seen in tools/crawlbench).
            // Not scheduling (paused, stopping), a ready host would spin it the same way.
            if scheduling && self.in_flight.len() < self.shared.config.concurrency_per_shard {
                if let Some(at) = self.frontier.next_wakeup() {
                    timeout = timeout.min(at.saturating_duration_since(now));
                }
            }
            if let Some(at) = self.output.borrow().deadline() {
                timeout = timeout.min(at.saturating_duration_since(now));
            }
            if self.fetcher.poll(&mut outcomes, Some(timeout)).is_err() {
                // epoll itself failed: nothing can progress on this shard.
                tracing::error!(shard = self.index, "event loop failed");
                self.shared.fatal.store(true, Ordering::Release);
                break;
            }
            for outcome in outcomes.drain(..) {
                self.on_outcome(outcome);
            }
            self.publish_in_flight();
        }
        self.flush_output();
        self.publish();
    }

    /// Sends the records gathered since the last flush to the output thread.
    fn flush_output(&self) {
        self.output.borrow_mut().flush();
    }

    fn publish_in_flight(&self) {
        if let Some(a) = self.shared.in_flight.get(self.index) {
            a.store(self.in_flight.len() as u64, Ordering::Release);
        }
    }

    /// Shares this shard's counters with the coordinator (progress, stats.json).
    fn publish(&mut self) {
        self.publish_in_flight();
        let stats = self.frontier.stats();
        if let Ok(mut all) = self.shared.frontier_stats.lock() {
            if let Some(slot) = all.get_mut(self.index) {
                *slot = stats;
            }
        }
        let robots = self.robots.stats();
        if let Ok(mut all) = self.shared.robots_stats.lock() {
            if let Some(slot) = all.get_mut(self.index) {
                *slot = robots;
            }
        }
    }

    fn take_inbox(&mut self) {
        if let Some(w) = self.peer_wakers.get(self.index) {
            w.clear();
        }
        let now = Instant::now();
        while let Ok(batch) = self.inbox.try_recv() {
            for (host, item) in batch {
                self.push_frontier(&host, item, now);
            }
        }
    }

    fn push_frontier(&mut self, host: &str, item: QueuedUrl, now: Instant) {
        if let Err(e) = self.frontier.push(host, item.clone(), now) {
            // The disk tier failed: keep the URL in the log so it is not silently lost.
            tracing::error!(shard = self.index, error = %e, "frontier push failed");
            let mut rec = LogRecord::new(WarcDate::now(), item.url, Outcome::Budget);
            rec.annotations.push(format!("frontier-error:{e}"));
            self.log(rec);
            self.finish_url();
        }
    }

    fn schedule(&mut self, now: Instant) {
        let cap = self.shared.config.concurrency_per_shard;
        while self.in_flight.len() < cap {
            if self.shared.budget_spent() {
                self.shared.stopping.store(true, Ordering::Release);
                return;
            }
            let (host, item) = match self.frontier.take_ready(now) {
                Ok(Some(next)) => next,
                Ok(None) => return,
                Err(e) => {
                    tracing::error!(shard = self.index, error = %e, "frontier read failed");
                    return;
                }
            };
            self.start(host, item, now);
        }
    }

    fn start(&mut self, host: String, item: QueuedUrl, now: Instant) {
        let Ok(url) = Url::parse(&item.url) else {
            self.log_decision(&item, Outcome::Filtered, "filter:invalid-url");
            self.frontier.complete(&host, now);
            self.finish_url();
            return;
        };
        if self.refused_hosts.contains(&host) {
            self.log_decision(&item, Outcome::BlockedAddress, POLICY_PRIVATE);
            self.frontier.complete(&host, now);
            self.finish_url();
            return;
        }
        let tally = self.tallies.get(&host).copied().unwrap_or_default();
        if tally.parked {
            self.log_decision(&item, Outcome::HostParked, "host-parked");
            self.frontier.complete(&host, now);
            self.finish_url();
            return;
        }
        if let Some(max) = self.shared.config.max_pages_per_host {
            if tally.pages >= max {
                self.log_decision(&item, Outcome::Budget, "budget:pages-per-host");
                self.frontier.complete(&host, now);
                self.finish_url();
                return;
            }
        }
        let decision = match self.robots.check(&url, now) {
            Access::Decided(d) => {
                Some((d.allowed, matches!(d.reason, Reason::Unreachable), d.line()))
            }
            Access::Pending => None,
        };
        match decision {
            Some((true, _, _)) => self.fetch_page(host, item, url),
            Some((false, true, _)) if self.robots_given_up(&url) => {
                // robots.txt stayed unreachable through every retry: the host is
                // treated as disallowed for this crawl (RFC 9309 §2.3.1.4), and its
                // URLs are logged, not kept forever.
                self.log_decision(&item, Outcome::Robots, "robots-unreachable");
                self.frontier.complete(&host, now);
                self.finish_url();
            }
            Some((false, true, _)) => {
                // robots.txt is unreachable: RFC 9309 §2.3.1.4 says disallow all for
                // now, so the URL waits (it is not dropped) and robots.txt is retried.
                if self.robots_in_flight(&host) {
                    self.robots_waiting.entry(host).or_default().push(item);
                } else if let Some(req) = self.robots.poll_fetch(&url, now) {
                    self.fetch_robots(&host, req, item.url.clone());
                    self.robots_waiting.entry(host).or_default().push(item);
                } else {
                    let retry = HostKey::of(&url)
                        .and_then(|k| self.robots.get(&k).and_then(|p| p.poll_timeout()))
                        .unwrap_or(now + Duration::from_secs(60));
                    self.frontier.requeue_front(&host, item);
                    self.frontier
                        .complete(&host, retry.max(now + Duration::from_secs(1)));
                }
            }
            Some((false, false, line)) => {
                let mut rec = LogRecord::new(WarcDate::now(), item.url.clone(), Outcome::Robots);
                rec.hops = hops_path(&item.hops);
                rec.via = item.via.clone();
                rec.annotations.push(match line {
                    Some(l) => format!("robots:line-{l}"),
                    None => "robots".to_owned(),
                });
                self.log(rec);
                self.frontier.complete(&host, now);
                self.finish_url();
            }
            None => {
                if let Some(req) = self.robots.poll_fetch(&url, now) {
                    self.fetch_robots(&host, req, item.url.clone());
                    self.robots_waiting.entry(host).or_default().push(item);
                } else if self.robots_in_flight(&host) {
                    self.robots_waiting.entry(host).or_default().push(item);
                } else {
                    // Nothing to wait for (e.g. the rules were evicted mid-way): try
                    // again shortly rather than strand the URL.
                    self.frontier.requeue_front(&host, item);
                    self.frontier.complete(&host, now + Duration::from_secs(1));
                }
            }
        }
    }

    /// True once robots.txt of `url`'s host failed `robots_max_attempts` times in a row.
    fn robots_given_up(&self, url: &Url) -> bool {
        let Some(key) = HostKey::of(url) else {
            return true;
        };
        let failures = match self.robots.get(&key).map(|p| p.state()) {
            Some(RobotsState::Unreachable(u)) => u.failures,
            _ => return false,
        };
        failures >= self.shared.config.robots_max_attempts
    }

    fn robots_in_flight(&self, host: &str) -> bool {
        self.in_flight
            .values()
            .any(|f| matches!(f, InFlight::Robots { host: h, .. } if h == host))
    }

    fn request_head(&self, url: Url) -> RequestHead {
        let config = &self.shared.config;
        let mut head = RequestHead::get(url, config.user_agent.clone());
        head.from.clone_from(&config.from);
        head
    }

    fn fetch_page(&mut self, host: String, item: QueuedUrl, url: Url) {
        let mut head = self.request_head(url);
        head.referer.clone_from(&item.via);
        let mut request = Vec::new();
        crate::http::write_request(&head, &mut request);
        let id = self.next_id();
        let mut req = FetchRequest {
            id,
            head,
            limits: self.shared.limits,
            addr: None,
        };
        req.limits.record_raw_bytes = if self.shared.config.warc {
            usize::MAX >> 1
        } else {
            0
        };
        self.shared.pages_started.fetch_add(1, Ordering::AcqRel);
        self.tallies.entry(host.clone()).or_default().pages += 1;
        self.in_flight.insert(
            id,
            InFlight::Page {
                host,
                item,
                request,
            },
        );
        self.fetcher.submit(req);
        self.publish_in_flight();
    }

    fn fetch_robots(&mut self, host: &str, req: crate::robots::FetchRequest, via: String) {
        let key = match HostKey::of(&req.url) {
            Some(k) => k,
            None => return,
        };
        self.fetch_robots_for(host, key, req, via);
    }

    /// Fetches a robots.txt (or a hop of its redirects) on behalf of `key`: a redirect
    /// may lead to another host (`/robots.txt` -> `http://other/robots-cross.txt`), but
    /// the answer is the rules of the host that asked (RFC 9309 §2.3.1.2), so the cache
    /// entry to feed stays `key`, never the redirect target's.
    fn fetch_robots_for(
        &mut self,
        host: &str,
        key: HostKey,
        req: crate::robots::FetchRequest,
        via: String,
    ) {
        let mut head = self.request_head(req.url);
        head.if_none_match = req.if_none_match;
        head.if_modified_since = req.if_modified_since;
        head.accept = "text/plain,*/*;q=0.5".to_owned();
        let mut request = Vec::new();
        crate::http::write_request(&head, &mut request);
        let id = self.next_id();
        let mut fetch = FetchRequest {
            id,
            head,
            limits: self.shared.limits,
            addr: None,
        };
        fetch.limits.record_raw_bytes = if self.shared.config.warc { 1 << 20 } else { 0 };
        self.in_flight.insert(
            id,
            InFlight::Robots {
                host: host.to_owned(),
                key,
                request,
                via,
            },
        );
        self.fetcher.submit(fetch);
        self.publish_in_flight();
    }

    fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn on_outcome(&mut self, outcome: FetchOutcome) {
        match self.in_flight.remove(&outcome.id) {
            Some(InFlight::Page {
                host,
                item,
                request,
            }) => self.on_page(host, item, request, outcome),
            Some(InFlight::Robots {
                host,
                key,
                request,
                via,
            }) => {
                self.on_robots(host, key, request, via, outcome);
            }
            None => {}
        }
    }

    /// The politeness instant after a fetch of `host` that took `elapsed`.
    fn next_eligible(
        &self,
        url: &Url,
        elapsed: Duration,
        retry_after: Option<Duration>,
        backoff: Option<Duration>,
    ) -> Instant {
        let config = &self.shared.config;
        let mut delay = config.delay;
        if let Some(cd) = self.robots.crawl_delay(url) {
            delay = delay.max(cd);
        }
        if config.delay_factor > 0.0 {
            delay = delay.max(elapsed.mul_f64(config.delay_factor));
        }
        if let Some(ra) = retry_after {
            delay = delay.max(ra.min(config.max_retry_after));
        }
        // Failure backoff is the engine's own choice, not the server's request, so the
        // Retry-After cap does not shorten it.
        if let Some(b) = backoff {
            delay = delay.max(b);
        }
        Instant::now() + delay
    }

    fn on_robots(
        &mut self,
        host: String,
        key: HostKey,
        request: Vec<u8>,
        via: String,
        o: FetchOutcome,
    ) {
        let now = Instant::now();
        // A redirect of robots.txt to another host that is refused is that host's
        // business: this host's rules are then unreachable, as for any failed hop.
        let own = HostKey::of(&o.url).is_some_and(|k| k.as_str() == host);
        if own && matches!(o.error, Some(FailReason::BlockedAddress)) {
            // Refused by policy, not by the network: final, so no robots.txt retry
            // schedule and no URL of the host left waiting for one.
            self.robots.on_network_error(&key, now);
            self.record(
                &o,
                &request,
                Some(&via),
                "P",
                None,
                &[POLICY_PRIVATE.to_owned()],
            );
            self.refuse_host(&host, &o, now);
            return;
        }
        let step = match (&o.error, &o.head) {
            (None, Some(head)) => {
                let headers: Vec<(&str, &[u8])> = head
                    .headers
                    .iter()
                    .map(|(n, v)| (n.as_str(), v.as_slice()))
                    .collect();
                let resp = RobotsResponse {
                    status: head.status,
                    headers: &headers,
                    body: &o.body,
                };
                self.robots.on_response(&key, now, &resp)
            }
            _ => self.robots.on_network_error(&key, now),
        };
        let annotations = match self.robots.take_parse_report(&key) {
            Some(report) => self.robots_caps(&report, o.body.len()),
            None => Vec::new(),
        };
        self.record(&o, &request, Some(&via), "P", None, &annotations);
        if let Some(Step::Fetch(next)) = step {
            self.fetch_robots_for(&host, key, next, via);
            return;
        }
        let retry_after = o.head.as_ref().and_then(retry_after);
        let at = self.next_eligible(&o.url, o.timings.response_time(), retry_after, None);
        self.release_waiting(&host, at);
    }

    /// The crawl-log annotations of a parsed robots.txt that a parse cap cut (issue 11:
    /// no silent limits), counted in the stats: `robots-truncated:BYTES` (the bytes past
    /// the size cap, not parsed), `robots-long-lines:N` (lines whose tail past 16,663
    /// bytes was not read); `robots-ignored-lines:N` (lines of no field the parser
    /// knows) is logged only, as no cap is involved.
    fn robots_caps(&self, report: &crate::robots::ParseReport, body_bytes: usize) -> Vec<String> {
        let mut annotations = Vec::new();
        if report.truncated {
            let unread = body_bytes.saturating_sub(report.bytes_parsed);
            annotations.push(format!("robots-truncated:{unread}"));
            self.shared.robots_truncated.fetch_add(1, Ordering::AcqRel);
        }
        if report.long_lines > 0 {
            annotations.push(format!("robots-long-lines:{}", report.long_lines));
            self.shared.robots_long_lines.fetch_add(1, Ordering::AcqRel);
        }
        if report.ignored_lines > 0 {
            annotations.push(format!("robots-ignored-lines:{}", report.ignored_lines));
        }
        annotations
    }

    /// Marks `host` as refused by policy (its address is private or loopback and
    /// `--allow-private-addresses` is off): the URLs that waited for its robots.txt are
    /// logged now, the ones still queued as they come up in [`Shard::start`], each
    /// once, none fetched.
    fn refuse_host(&mut self, host: &str, o: &FetchOutcome, now: Instant) {
        if self.refused_hosts.len() >= MAX_REFUSED_HOSTS {
            self.refused_hosts.clear();
        }
        if self.refused_hosts.insert(host.to_owned()) {
            self.refusal_warnings += 1;
            if self.refusal_warnings <= MAX_REFUSAL_WARNINGS {
                let addr = o
                    .peer
                    .map_or_else(|| "?".to_owned(), |p| p.ip().to_string());
                tracing::warn!(
                    "{host} resolves to a loopback, private or special address ({addr}): its \
                     URLs are refused, not fetched (crawl log: blocked-address, {POLICY_PRIVATE}); \
                     give --allow-private-addresses to crawl it"
                );
            } else if self.refusal_warnings == MAX_REFUSAL_WARNINGS + 1 {
                tracing::warn!("more hosts refused for private addresses: see the crawl log ({POLICY_PRIVATE})");
            }
        }
        if let Some(items) = self.robots_waiting.remove(host) {
            for item in items {
                self.log_decision(&item, Outcome::BlockedAddress, POLICY_PRIVATE);
                self.frontier.complete(host, now);
                self.finish_url();
            }
        }
    }

    /// Puts URLs that waited for robots.txt back at the front of their host's queue and
    /// ends their in-flight turn with politeness `at`.
    fn release_waiting(&mut self, host: &str, at: Instant) {
        if let Some(items) = self.robots_waiting.remove(host) {
            for item in items.into_iter().rev() {
                self.frontier.requeue_front(host, item);
                self.frontier.complete(host, at);
            }
        }
    }

    fn on_page(&mut self, host: String, item: QueuedUrl, request: Vec<u8>, o: FetchOutcome) {
        let now = Instant::now();
        self.shared.bytes.fetch_add(o.wire_bytes, Ordering::AcqRel);
        if matches!(o.error, Some(FailReason::BlockedAddress)) {
            // The rules came from before (a checkpoint, or the name now resolves
            // elsewhere): the page is refused by policy, once, with no backoff.
            self.frontier.complete(&host, now);
            let note = [POLICY_PRIVATE.to_owned()];
            self.record(
                &o,
                &request,
                item.via.as_deref(),
                &item.hops,
                Some((&item, &[])),
                &note,
            );
            self.refuse_host(&host, &o, now);
            self.finish_url();
            return;
        }
        let retry_after = o.head.as_ref().and_then(retry_after);
        let status = o.status();
        let retryable = match (&o.error, status) {
            (Some(r), _) => is_retryable(r),
            (None, Some(429 | 503)) => true,
            _ => false,
        };
        let tally = self.tallies.entry(host.clone()).or_default();
        if o.error.is_some() {
            tally.consecutive_failures += 1;
        } else {
            tally.consecutive_failures = 0;
        }
        let failures = tally.consecutive_failures;
        let error = o.error.is_some() || status.is_some_and(|s| s >= 500);
        if let Some(errors) = tally.errors.record(error) {
            tracing::warn!(host = %host, errors, of = super::monitor::ErrorWindow::WIDTH, "errors rising on host");
        }
        if failures >= self.shared.config.host_failures_to_park && !tally.parked {
            tally.parked = true;
            tracing::warn!(host = %host, failures, "host keeps failing: parked");
            self.shared.hosts_parked.fetch_add(1, Ordering::AcqRel);
        }
        let parked = tally.parked;
        // Back off exponentially on a failing host, on top of politeness: 4 s, 8 s, ...
        // The first step is long enough that a server trickling a response we gave up
        // on (it learns of the close only at its next write or two) has seen the old
        // connection end before the next one starts, so the per-host connection cap
        // holds from the server's side too.
        let backoff = (failures > 0).then(|| Duration::from_secs(2u64 << failures.min(8)));
        let at = self.next_eligible(&o.url, o.timings.response_time(), retry_after, backoff);
        if retryable && item.attempts < self.shared.config.max_retries && !parked {
            let mut again = item.clone();
            again.attempts += 1;
            self.record(
                &o,
                &request,
                item.via.as_deref(),
                &item.hops,
                Some((&item, &[])),
                &[format!("retry:{}", again.attempts)],
            );
            self.frontier.requeue_front(&host, again);
            self.frontier.complete(&host, at);
            self.shared.pages_started.fetch_sub(1, Ordering::AcqRel);
            return;
        }
        self.frontier.complete(&host, at);
        let mut annotations = Vec::new();
        // Canonical URL strings: a link becomes a `Url` only once it is new (below).
        let mut outlinks: Vec<(String, Hop)> = Vec::new();
        if o.error.is_none() {
            self.shared.pages.fetch_add(1, Ordering::AcqRel);
            if let (Some(code), Some(head)) = (status, o.head.as_ref()) {
                if (300..400).contains(&code) {
                    if let Some(loc) = head
                        .header("location")
                        .and_then(|v| std::str::from_utf8(v).ok())
                    {
                        match crate::url::canonicalize(&o.url, loc.trim()) {
                            Ok(target) => outlinks.push((target.into(), Hop::Redirect)),
                            Err(r) => annotations.push(format!("bad-location:{}", r.code())),
                        }
                    }
                } else if (200..300).contains(&code) && is_html(head) {
                    self.links_of(&o, head, &mut outlinks, &mut annotations);
                }
            }
        }
        self.record(
            &o,
            &request,
            item.via.as_deref(),
            &item.hops,
            Some((&item, &outlinks)),
            &annotations,
        );
        let redirects = item.hops.chars().rev().take_while(|&c| c == 'R').count() as u32;
        let chain_full = redirects >= self.shared.config.max_redirects;
        outlinks.retain(|(link, hop)| {
            if *hop == Hop::Redirect && chain_full {
                let mut rec = LogRecord::new(WarcDate::now(), link.as_str(), Outcome::Filtered);
                rec.via = Some(item.url.clone());
                rec.annotations.push("filter:redirect-chain".to_owned());
                self.log(rec);
                return false;
            }
            true
        });
        // Farm (issue 13): links another node owns leave untested; the owner tests them.
        if let Some(farm) = &self.shared.farm {
            farm.route(&mut outlinks, &item.url, &item.hops);
        }
        // One pipelined pass over the presence bits for the whole page: the block of
        // each link is prefetched a few links ahead, so the cache misses of a page's
        // links overlap instead of being paid one after another.
        let mut seen = std::mem::take(&mut self.seen_scratch);
        seen.clear();
        seen.resize(outlinks.len(), false);
        {
            let keys: Vec<&[u8]> = outlinks
                .iter()
                .map(|(u, _)| u.as_str().as_bytes())
                .collect();
            self.shared.seen.test_and_set_batch(&keys, &mut seen);
        }
        for ((link, hop), known) in outlinks.into_iter().zip(seen.iter()) {
            if *known {
                continue;
            }
            let Ok(url) = Url::parse(&link) else {
                // Unreachable: a canonical URL parses to itself. Said, not silent.
                tracing::warn!(url = %link, "canonical link does not parse: dropped");
                continue;
            };
            let mut hops = String::with_capacity(item.hops.len() + 1);
            hops.push_str(&item.hops);
            hops.push(hop.code());
            self.admit(url, &item.url, hops, now);
        }
        self.seen_scratch = seen;
        self.finish_url();
    }

    /// Applies X-Robots-Tag, meta robots and content fingerprints, then extracts links.
    fn links_of(
        &mut self,
        o: &FetchOutcome,
        head: &crate::http::ResponseHead,
        outlinks: &mut Vec<(String, Hop)>,
        annotations: &mut Vec<String>,
    ) {
        let agent = &self.shared.config.agent_token;
        let header_dirs = PageDirectives::from_x_robots_tag(
            head.headers_named("x-robots-tag")
                .filter_map(|v| std::str::from_utf8(v).ok()),
            agent,
        );
        let charset = head
            .header("content-type")
            .and_then(|v| std::str::from_utf8(v).ok())
            .and_then(charset_of);
        let page = Links::extract_keys(&o.url, &o.body, charset, &self.extract);
        let meta = PageDirectives {
            index: page.robots.index,
            follow: page.robots.follow,
            archive: page.robots.archive,
        };
        let dirs = header_dirs.restrict(meta);
        if !dirs.index {
            annotations.push("noindex".to_owned());
        }
        if !dirs.follow {
            annotations.push("nofollow".to_owned());
            return;
        }
        let digest = crate::html::fingerprint::page_fingerprint(o.url.path().as_bytes(), &o.body);
        if self.shared.fingerprints.test_and_set(digest) {
            annotations.push("duplicate".to_owned());
            self.shared.duplicates.fetch_add(1, Ordering::AcqRel);
            return;
        }
        // Every extraction cap that dropped something says so (issue 11).
        let caps = [
            (
                "links-truncated",
                page.links_dropped,
                &self.shared.pages_links_truncated,
            ),
            (
                "scan-truncated",
                page.unscanned_bytes,
                &self.shared.pages_scan_truncated,
            ),
            (
                "long-attributes",
                page.long_attributes,
                &self.shared.pages_long_attributes,
            ),
        ];
        for (name, dropped, pages) in caps {
            if dropped > 0 {
                annotations.push(format!("{name}:{dropped}"));
                pages.fetch_add(1, Ordering::AcqRel);
            }
        }
        for link in page.links {
            if link.nofollow {
                continue;
            }
            if let Ok(url) = link.url {
                let hop = match link.tag {
                    crate::html::Tag::A | crate::html::Tag::Area => Hop::Link,
                    crate::html::Tag::Meta => Hop::Redirect,
                    _ => Hop::Embed,
                };
                outlinks.push((url, hop));
            }
        }
    }

    /// The decision for a URL the presence bits just reported as new (the caller sets
    /// its bit): filters, the handler's hook, then routing to the owning shard.
    fn admit(&mut self, url: Url, via: &str, hops: String, now: Instant) {
        if let Err(reason) = self.filter.check(&url, hops.len() as u32) {
            if matches!(reason, crate::url::Reject::OutOfScope) && !self.scope_warned {
                self.scope_warned = true;
                tracing::warn!(
                    scope = ?self.shared.config.filter.scope,
                    "links outside the crawl scope are logged as filtered (filter:out_of_scope) \
                     and not followed; --scope any follows them"
                );
            }
            let mut rec = LogRecord::new(WarcDate::now(), url.as_str(), Outcome::Filtered);
            rec.via = Some(via.to_owned());
            rec.hops = hops_path(&hops);
            rec.annotations.push(format!("filter:{}", reason.code()));
            self.log(rec);
            return;
        }
        if let Some(handler) = &self.shared.handler {
            if !handler.accept_link(via, &url) {
                return;
            }
        }
        let Some(key) = host_key(&url) else { return };
        let item = QueuedUrl {
            url: url.into(),
            via: Some(via.to_owned()),
            hops,
            attempts: 0,
        };
        self.shared.outstanding.fetch_add(1, Ordering::AcqRel);
        self.shared.discovered.fetch_add(1, Ordering::AcqRel);
        let target = shard_of(&key, self.peers.len());
        if target == self.index {
            self.push_frontier(&key, item, now);
        } else if let Some(out) = self.outboxes.get_mut(target) {
            out.push((key, item));
            if out.len() >= BATCH_URLS {
                self.flush_outbox(target);
            }
        }
    }

    fn flush_outboxes(&mut self) {
        for target in 0..self.outboxes.len() {
            self.flush_outbox(target);
        }
    }

    fn flush_outbox(&mut self, target: usize) {
        let Some(out) = self.outboxes.get_mut(target) else {
            return;
        };
        if out.is_empty() {
            return;
        }
        let batch = std::mem::take(out);
        let Some(tx) = self.peers.get(target) else {
            return;
        };
        match tx.try_send(batch) {
            Ok(()) => {
                if let Some(w) = self.peer_wakers.get(target) {
                    w.notify();
                }
            }
            // The peer's inbox is full: keep the batch and retry on the next turn
            // (back-pressure without blocking this loop or losing a URL).
            Err(TrySendError::Full(batch)) => {
                let over = batch.len() >= OUTBOX_MAX_URLS;
                if let Some(out) = self.outboxes.get_mut(target) {
                    *out = batch;
                }
                if over {
                    self.wait_for_peer(target);
                }
            }
            Err(TrySendError::Disconnected(batch)) => {
                // The peer stopped (crawl ending): keep the URLs in our own frontier so
                // the final checkpoint holds them.
                let now = Instant::now();
                for (host, item) in batch {
                    self.push_frontier(&host, item, now);
                }
            }
        }
    }

    /// Back-pressure on a full peer inbox (see [`OUTBOX_MAX_URLS`]): retries the send
    /// while draining our own inbox (so two shards waiting on each other both make
    /// room), for at most [`OUTBOX_WAIT`].
    fn wait_for_peer(&mut self, target: usize) {
        let until = Instant::now() + OUTBOX_WAIT;
        while Instant::now() < until {
            self.take_inbox();
            let Some(tx) = self.peers.get(target) else {
                return;
            };
            let Some(out) = self.outboxes.get_mut(target) else {
                return;
            };
            match tx.try_send(std::mem::take(out)) {
                Ok(()) => {
                    if let Some(w) = self.peer_wakers.get(target) {
                        w.notify();
                    }
                    return;
                }
                Err(TrySendError::Full(batch)) => {
                    *out = batch;
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(TrySendError::Disconnected(batch)) => {
                    let now = Instant::now();
                    for (host, item) in batch {
                        self.push_frontier(&host, item, now);
                    }
                    return;
                }
            }
        }
    }

    fn finish_url(&self) {
        self.shared.outstanding.fetch_sub(1, Ordering::AcqRel);
    }

    fn log(&self, rec: LogRecord) {
        if let Some(h) = &self.shared.handler {
            h.on_outcome(&rec);
        }
        self.shared.count_outcome(rec.outcome);
        self.output
            .borrow_mut()
            .push(OutputRecord::Log(Box::new(rec)));
    }

    fn log_decision(&self, item: &QueuedUrl, outcome: Outcome, note: &str) {
        let mut rec = LogRecord::new(WarcDate::now(), item.url.clone(), outcome);
        rec.hops = hops_path(&item.hops);
        rec.via = item.via.clone();
        rec.annotations.push(note.to_owned());
        self.log(rec);
    }

    /// Writes the crawl-log line (and the WARC capture) of a finished fetch.
    fn record(
        &self,
        o: &FetchOutcome,
        request: &[u8],
        via: Option<&str>,
        hops: &str,
        page: Option<(&QueuedUrl, &[(String, Hop)])>,
        annotations: &[String],
    ) {
        let outcome = match &o.error {
            None => Outcome::Fetched,
            Some(r) => outcome_of(r),
        };
        let mut rec = LogRecord::new(WarcDate::now(), o.url.as_str(), outcome);
        rec.status = o.status();
        rec.bytes = o.wire_bytes;
        rec.hops = hops_path(hops);
        rec.via = via.map(str::to_owned);
        rec.timings = timings_of(o);
        rec.media_type = o.head.as_ref().and_then(media_type);
        rec.annotations.extend_from_slice(annotations);
        if let Some(r) = &o.error {
            rec.annotations.push(format!("error:{r}"));
        }
        if o.body_truncated {
            rec.truncated = Some(crate::warc::Truncation::Length);
        }
        let skip = self.shared.config.skip_noindex && annotations.iter().any(|a| a == "noindex");
        let capture = if self.shared.config.warc && o.head.is_some() && !skip {
            let (head, body) = split_raw(&o.raw);
            Some(Capture {
                target_uri: o.url.to_string(),
                date: WarcDate::now(),
                ip: o.peer.map(|p| p.ip()),
                request: request.to_vec(),
                response: HttpResponse {
                    head: head.to_vec(),
                    wire_body: body.to_vec(),
                    payload: None,
                },
                truncated: if o.raw_truncated || o.body_truncated {
                    Some(crate::warc::Truncation::Length)
                } else {
                    None
                },
                revisit: None,
                metadata: page.map(|(it, links)| crate::warc::CaptureMetadata {
                    via: it.via.clone(),
                    hops_path: it.hops.clone(),
                    outlinks: links
                        .iter()
                        .map(|(url, hop)| Outlink {
                            url: url.to_string(),
                            hop: *hop,
                        })
                        .collect(),
                    timings: timings_of(o),
                }),
            })
        } else {
            None
        };
        if let Some(h) = &self.shared.handler {
            if let (Some(head), None) = (o.head.as_ref(), &o.error) {
                h.on_response(&super::Page {
                    url: &o.url,
                    head,
                    body: &o.body,
                });
            }
            h.on_outcome(&rec);
        }
        let capture = capture.and_then(|capture| {
            let mut warc = self.warc.borrow_mut();
            let result = warc.as_mut()?.compress(&capture);
            Some(match result {
                Ok(compressed) => WarcItem::Compressed(Box::new(compressed)),
                Err(e) => {
                    rec.annotations.push(format!("warc-error:{e}"));
                    WarcItem::Refused
                }
            })
        });
        self.shared.count_outcome(rec.outcome);
        self.output.borrow_mut().push(OutputRecord::Fetched {
            log: Box::new(rec),
            capture,
        });
    }

    /// The checkpoint protocol (see `docs/architecture.md`): stop, flush links to
    /// peers, wait; drain the inbox, wait; dump the frontier (with the URLs in flight,
    /// which will be fetched again after a resume), wait; go on.
    fn checkpoint(&mut self, cut: &Arc<CheckpointCut>) {
        self.flush_outboxes();
        // A full peer inbox could keep a batch here; the barrier below would then lose
        // it, so push it into our own frontier instead (the host is routed by key on
        // resume, so ownership does not matter for the dump).
        let now = Instant::now();
        for target in 0..self.outboxes.len() {
            let batch = self
                .outboxes
                .get_mut(target)
                .map(std::mem::take)
                .unwrap_or_default();
            for (host, item) in batch {
                self.push_frontier(&host, item, now);
            }
        }
        // Every record made before the cut reaches the channel before the coordinator
        // asks the output thread for its positions (after barrier 2).
        self.flush_output();
        cut.barrier.wait();
        self.take_inbox();
        self.flush_output();
        cut.barrier.wait();
        let path = cut.dir.join(format!("frontier-{:04}.seg", self.index));
        let result = self.dump_frontier(&path);
        if let Err(e) = result {
            tracing::error!(shard = self.index, error = %e, "checkpoint frontier dump failed");
            cut.failed.store(true, Ordering::Release);
        }
        let path = cut.dir.join(format!("tallies-{:04}.tsv", self.index));
        if let Err(e) = self.dump_tallies(&path) {
            tracing::error!(shard = self.index, error = %e, "checkpoint tally dump failed");
            cut.failed.store(true, Ordering::Release);
        }
        // The robots cache is a cache: failing to write it costs refetches after a
        // resume, not correctness, so it does not fail the cut (the partial file goes).
        let path = cut.dir.join(format!("robots-{:04}.bin", self.index));
        let clock = crate::robots::persist::Clock::now();
        if let Err(e) = crate::robots::persist::write_file(&path, &self.robots, clock) {
            tracing::warn!(shard = self.index, error = %e, "checkpoint robots dump failed; a resume refetches robots.txt");
            let _ = std::fs::remove_file(&path);
        }
        cut.barrier.wait();
        cut.barrier.wait();
    }

    /// Writes the host tallies (`host pages failures parked`, tab-separated). Pages in
    /// flight are dumped as queued URLs, so they are taken off their host's count: the
    /// resumed crawl counts them again when it fetches them.
    fn dump_tallies(&self, path: &std::path::Path) -> std::io::Result<()> {
        use std::io::Write;
        let mut in_flight: HashMap<&str, u64> = HashMap::new();
        for f in self.in_flight.values() {
            if let InFlight::Page { host, .. } = f {
                *in_flight.entry(host.as_str()).or_default() += 1;
            }
        }
        let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
        for (host, t) in &self.tallies {
            let pages = t
                .pages
                .saturating_sub(in_flight.get(host.as_str()).copied().unwrap_or(0));
            writeln!(
                w,
                "{host}\t{pages}\t{}\t{}",
                t.consecutive_failures,
                u8::from(t.parked)
            )?;
        }
        let file = w
            .into_inner()
            .map_err(std::io::IntoInnerError::into_error)?;
        file.sync_all()
    }

    fn dump_frontier(
        &mut self,
        path: &std::path::Path,
    ) -> Result<u64, crate::frontier::SegmentError> {
        let mut w = crate::frontier::SegmentWriter::create(path)?;
        let mut err = None;
        let mut write = |host: &str, item: &QueuedUrl| {
            if err.is_none() {
                if let Err(e) = w.append(host, item) {
                    err = Some(e);
                }
            }
        };
        for f in self.in_flight.values() {
            if let InFlight::Page { host, item, .. } = f {
                write(host, item);
            }
        }
        for (host, items) in &self.robots_waiting {
            for item in items {
                write(host, item);
            }
        }
        for (target, batch) in self.outboxes.iter().enumerate() {
            let _ = target;
            for (host, item) in batch {
                write(host, item);
            }
        }
        if let Err(e) = self.frontier.for_each_queued(&mut write) {
            tracing::error!(error = %e, "frontier listing failed");
            return Err(crate::frontier::SegmentError::Io(std::io::Error::other(
                e.to_string(),
            )));
        }
        if let Some(e) = err {
            return Err(e);
        }
        let n = w.records();
        w.sync()?;
        Ok(n)
    }
}

fn hops_path(hops: &str) -> HopsPath {
    HopsPath::try_from(hops.to_owned()).unwrap_or_default()
}

fn is_retryable(r: &FailReason) -> bool {
    matches!(
        r,
        FailReason::Refused
            | FailReason::Connect(_)
            | FailReason::Reset
            | FailReason::ClosedEarly
            | FailReason::Timeout(_)
            | FailReason::Io(_)
            | FailReason::Overloaded
    )
}

fn outcome_of(r: &FailReason) -> Outcome {
    match r {
        FailReason::Dns(_) => Outcome::DnsError,
        FailReason::Refused | FailReason::Connect(_) => Outcome::ConnectError,
        FailReason::Tls(_) => Outcome::TlsError,
        FailReason::Timeout(_) => Outcome::Timeout,
        FailReason::BlockedAddress => Outcome::BlockedAddress,
        FailReason::InvalidUrl(_) => Outcome::Filtered,
        _ => Outcome::ProtocolError,
    }
}

fn timings_of(o: &FetchOutcome) -> FetchTimings {
    let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    FetchTimings {
        dns_ms: o.timings.dns.map(ms),
        connect_ms: o.timings.connect.map(ms),
        tls_ms: o.timings.tls.map(ms),
        first_byte_ms: o.timings.first_byte.map(ms),
        total_ms: Some(ms(o.timings.total)),
    }
}

fn media_type(head: &crate::http::ResponseHead) -> Option<String> {
    let v = head.header("content-type")?;
    let v = std::str::from_utf8(v).ok()?;
    let mt = v.split(';').next()?.trim().to_ascii_lowercase();
    (!mt.is_empty()).then_some(mt)
}

fn is_html(head: &crate::http::ResponseHead) -> bool {
    match media_type(head) {
        Some(mt) => mt == "text/html" || mt == "application/xhtml+xml",
        // No Content-Type: sniffing is out of scope; treat as HTML as browsers often do.
        None => true,
    }
}

fn charset_of(content_type: &str) -> Option<&'static encoding_rs::Encoding> {
    let lower = content_type.to_ascii_lowercase();
    let at = lower.find("charset=")?;
    let rest = lower.get(at + 8..)?;
    let value = rest
        .split(';')
        .next()?
        .trim()
        .trim_matches('"')
        .trim_matches('\'');
    encoding_rs::Encoding::for_label(value.as_bytes())
}

fn retry_after(head: &crate::http::ResponseHead) -> Option<Duration> {
    let v = std::str::from_utf8(head.header("retry-after")?)
        .ok()?
        .trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = crate::robots::parse_http_date(v)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs();
    u64::try_from(when)
        .ok()?
        .checked_sub(now)
        .map(Duration::from_secs)
}

/// Splits raw response bytes at the end of the head (CRLF CRLF or bare LF LF).
fn split_raw(raw: &[u8]) -> (&[u8], &[u8]) {
    let crlf = memchr::memmem::find(raw, b"\r\n\r\n").map(|i| i + 4);
    let lf = memchr::memmem::find(raw, b"\n\n").map(|i| i + 2);
    let end = match (crlf, lf) {
        (Some(a), Some(b)) => a.min(b),
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => raw.len(),
    };
    raw.split_at(end.min(raw.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Waker events seen by `poll` within `wait`.
    fn wakes(poll: &mut mio::Poll, wait: Duration) -> usize {
        let mut events = mio::Events::with_capacity(8);
        poll.poll(&mut events, Some(wait)).expect("poll");
        events.iter().count()
    }

    #[test]
    fn inbox_waker_wakes_once_per_drain_and_again_after_it() {
        let mut poll = mio::Poll::new().expect("poll");
        let waker = Arc::new(mio::Waker::new(poll.registry(), mio::Token(0)).expect("waker"));
        let w = InboxWaker::new(waker);
        // Two sends before the owner drains: one wake.
        w.notify();
        w.notify();
        assert_eq!(wakes(&mut poll, Duration::from_millis(200)), 1);
        assert_eq!(wakes(&mut poll, Duration::from_millis(20)), 0);
        // The owner drains (clears); the next send wakes it again.
        w.clear();
        w.notify();
        assert_eq!(wakes(&mut poll, Duration::from_millis(200)), 1);
    }

    #[test]
    fn inbox_waker_never_leaves_a_sent_batch_unseen_across_threads() {
        // A sender thread sends 2,000 batches, notifying after each; the owner drains
        // like `take_inbox` (clear, then drain) after each wake. Every batch must be
        // taken, with at most as many wakes as sends.
        let mut poll = mio::Poll::new().expect("poll");
        let waker = Arc::new(mio::Waker::new(poll.registry(), mio::Token(0)).expect("waker"));
        let w = Arc::new(InboxWaker::new(waker));
        let (tx, rx) = crossbeam_channel::unbounded::<u32>();
        let sender = {
            let w = Arc::clone(&w);
            std::thread::spawn(move || {
                for i in 0..2000u32 {
                    tx.send(i).expect("send");
                    w.notify();
                    if i % 64 == 0 {
                        std::thread::yield_now();
                    }
                }
            })
        };
        let mut taken = 0u32;
        let mut polls = 0u32;
        let mut timeouts = 0u32;
        let deadline = Instant::now() + Duration::from_secs(20);
        while taken < 2000 && Instant::now() < deadline {
            // The loop polls only while batches are still to come, and the sender
            // sends them within milliseconds: a poll that sees no wake for 2 s means
            // a batch was sent and its wake lost.
            if wakes(&mut poll, Duration::from_secs(2)) == 0 {
                timeouts += 1;
            }
            polls += 1;
            w.clear();
            while rx.try_recv().is_ok() {
                taken += 1;
            }
        }
        sender.join().expect("sender");
        assert_eq!(taken, 2000);
        assert_eq!(timeouts, 0, "a wake was lost");
        assert!(polls <= 2000, "{polls} polls");
    }

    #[test]
    fn shard_routing_is_stable_and_in_range() {
        for n in 1..8 {
            let a = shard_of("http://h000001.synth.test:8080", n);
            assert!(a < n);
            assert_eq!(a, shard_of("http://h000001.synth.test:8080", n));
        }
        // CRC-32 of the key: a fixed value, so checkpoints route the same forever.
        assert_eq!(
            shard_of("http://a.test:80", 1 << 20),
            (crc32fast::hash(b"http://a.test:80") as usize) % (1 << 20)
        );
    }

    #[test]
    fn raw_split_finds_the_end_of_the_head() {
        let (h, b) = split_raw(b"HTTP/1.1 200 OK\r\nA: b\r\n\r\nbody");
        assert_eq!(h, b"HTTP/1.1 200 OK\r\nA: b\r\n\r\n");
        assert_eq!(b, b"body");
        let (h, b) = split_raw(b"HTTP/1.1 200 OK\nA: b\n\nbody");
        assert_eq!(h.len(), 22);
        assert_eq!(b, b"body");
    }

    #[test]
    fn charset_comes_from_the_content_type_parameter() {
        assert_eq!(
            charset_of("text/html; charset=ISO-8859-1"),
            Some(encoding_rs::WINDOWS_1252)
        );
        assert_eq!(
            charset_of("text/html;charset=\"utf-8\""),
            Some(encoding_rs::UTF_8)
        );
        assert_eq!(charset_of("text/html"), None);
    }

    #[test]
    fn retryable_failures_are_transient_ones() {
        assert!(is_retryable(&FailReason::Reset));
        assert!(!is_retryable(&FailReason::BlockedAddress));
        assert!(!is_retryable(&FailReason::Tls("x".into())));
    }
}
