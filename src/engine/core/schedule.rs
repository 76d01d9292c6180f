//! Which URL goes next: the frontier's ready hosts, the per-URL checks (policy,
//! parking, budgets, robots.txt), and the requests the driver submits.
//!
//! A host whose robots.txt answer is not known is held in the frontier
//! ([`Gate::Hold`]) while its robots.txt is fetched: its URLs stay queued, in order,
//! and leave the frontier once, when the answer is in (`robots.rs` releases the
//! host).

use crate::fetch::RouteState;
use std::time::{Duration, Instant};

use url::Url;

use crate::crawllog::{LogRecord, Outcome};
use crate::fetch::FetchRequest;
use crate::frontier::{Gate, QueuedUrl};
use crate::http::RequestHead;
use crate::robots::{Access, Reason, RobotsCache, RobotsState};
use crate::routing::HostKey;

use super::recent::Asker;
use super::sitemaps::LastmodTurn;
use super::Counter;
use super::{
    hops_path, secs, Action, Core, CoreSettings, CoreShared, FastMap, FastSet, HostTally, InFlight,
    Note, Now, MAX_DECISIONS_PER_TURN, POLICY_PRIVATE,
};

/// The note of a URL that does not parse: a verdict on the URL, not its host.
const INVALID_URL: &str = "filter:invalid-url";

/// URLs of a given-up host declined with its front URL, at most (one frontier call).
const DECLINE_BATCH: usize = 1024;

/// The verdict on a URL taken from the frontier.
#[derive(Debug)]
enum Verdict {
    /// Fetch it.
    Fetch(Url),
    /// Log it with this outcome and annotation; no fetch.
    Decline(Outcome, &'static str),
    /// robots.txt disallows it (at this line of the file, when known).
    Disallowed(Option<u32>),
}

impl Core {
    /// Starts fetches while slots are free and hosts are ready at `now`. A spent
    /// crawl budget sets `stopping` instead.
    pub fn schedule(&mut self, now: Now, out: &mut Vec<Action>) {
        self.shared.memory.sitemaps.take_notes(out);
        self.send_due_robots_hops(now, out);
        self.queue_rereads(now, out);
        self.forget_left_hosts();
        let cap = self.shared.settings.concurrency_per_shard;
        let mut decisions = 0;
        while self.busy() < cap {
            // A host whose queue is given up drains over several turns: the driver
            // runs fetches and their answers between them.
            if decisions >= MAX_DECISIONS_PER_TURN {
                return;
            }
            if self.shared.budget_spent() {
                self.shared.stop();
                return;
            }
            let excused = self.waiting_unconnected.min(cap);
            let Self {
                frontier,
                robots,
                tallies,
                refused_hosts,
                unresolved_hosts,
                robots_fetching,
                in_flight,
                next_id,
                shared,
                ..
            } = self;
            let mut gate = GateCtx {
                excused,
                robots,
                tallies,
                refused_hosts,
                unresolved_hosts,
                robots_fetching,
                in_flight,
                next_id,
                shared,
                out,
            };
            let taken = frontier.take_ready_with(now.at, |host, item| gate.decide(host, item, now));
            let (host, item, verdict) = match taken {
                Ok(Some(next)) => next,
                Ok(None) => return,
                Err(e) => {
                    out.push(Note::error(format!(
                        "shard {}: frontier read failed: {e}",
                        self.index
                    )));
                    return;
                }
            };
            let room = MAX_DECISIONS_PER_TURN - decisions;
            decisions += self.start(host, item, verdict, room, now, out);
        }
    }

    /// Drops the tallies of hosts that left the active set served to the end when
    /// they hold nothing worth keeping (no failure run, not parked, no page budget to
    /// count against): a wide crawl finishes millions of hosts, and a tally with its
    /// name costs about 130 bytes of RAM a host. A host that comes back starts a fresh
    /// tally, which is what it would hold anyway.
    fn forget_left_hosts(&mut self) {
        let left = self.frontier.take_left();
        if self.shared.settings.max_pages_per_host.is_some() {
            return;
        }
        for name in left {
            if self
                .tallies
                .get(&*name)
                .is_some_and(|t| !t.parked && t.consecutive_failures == 0)
            {
                self.tallies.remove(&*name);
            }
        }
        if self.tallies.capacity() > 4 * self.tallies.len().max(1024) {
            self.tallies.shrink_to_fit();
        }
    }

    /// Starts what `verdict` says for `item`; returns the decisions made without a
    /// fetch (URLs declined or disallowed: crawl-log lines), at most `room` (at least
    /// one).
    fn start(
        &mut self,
        host: String,
        item: QueuedUrl,
        verdict: Verdict,
        room: usize,
        now: Now,
        out: &mut Vec<Action>,
    ) -> usize {
        match verdict {
            Verdict::Fetch(url) => match super::sitemaps::lastmod_turn(&self.shared, &item, &url) {
                LastmodTurn::Fetch => self.fetch_page(host, item, url, out),
                LastmodTurn::Skip(previous) => self.skip_page(&host, item, *previous, now, out),
                LastmodTurn::Wait => {
                    // Behind its host's queue, the host free again at once.
                    self.push(&host, item, now, out);
                    self.frontier.complete(&host, now.at);
                }
            },
            Verdict::Decline(outcome, note) => {
                out.push(Self::log_decision(&item, outcome, note, now));
                self.finish_url();
                let mut declined = 1;
                // An operator's block (control API) is decided URL by URL: a prefix
                // blocks some of a host's URLs only.
                if note != INVALID_URL && note != crate::control::BLOCKED_NOTE {
                    // A verdict on the host (parked, refused, budget spent, robots.txt
                    // given up): the rest of its queue goes the same way, a bounded
                    // batch a turn, read from the frontier in bounded memory.
                    let batch = DECLINE_BATCH.min(room.saturating_sub(1));
                    declined += self.decline_queue(&host, outcome, note, batch, now, out);
                }
                self.frontier.complete(&host, now.at);
                return declined;
            }
            Verdict::Disallowed(line) => {
                let mut rec = LogRecord::new(now.wall, item.url, Outcome::Robots);
                rec.hops = hops_path(&item.hops);
                rec.via = item.via;
                rec.annotations.push(match line {
                    Some(l) => format!("robots:line-{l}"),
                    None => "robots".to_owned(),
                });
                out.push(Action::Log(Box::new(rec)));
                self.frontier.complete(&host, now.at);
                self.finish_url();
                return 1;
            }
        }
        0
    }

    /// Logs and removes up to `max_urls` (at most [`DECLINE_BATCH`]) more of `host`'s
    /// queued URLs with the verdict its front URL got; returns how many.
    fn decline_queue(
        &mut self,
        host: &str,
        outcome: Outcome,
        note: &'static str,
        max_urls: usize,
        now: Now,
        out: &mut Vec<Action>,
    ) -> usize {
        if max_urls == 0 {
            return 0;
        }
        let mut n = 0;
        let dropped = self.frontier.drop_host(host, max_urls, |item| {
            out.push(Self::log_decision(item, outcome, note, now));
            n += 1;
        });
        if let Err(e) = dropped {
            out.push(Note::error(format!(
                "shard {}: frontier read failed: {e}",
                self.index
            )));
        }
        for _ in 0..n {
            self.finish_url();
        }
        n
    }

    fn fetch_page(&mut self, host: String, item: QueuedUrl, url: Url, out: &mut Vec<Action>) {
        let mut head = request_head(&self.shared.settings, url);
        head.referer.clone_from(&item.via);
        if !super::sitemaps::unconditional(&self.shared, &item, &head.url) {
            super::recrawl::condition(self.shared.previous.as_ref(), &item.url, &mut head);
        }
        let id = self.next_id();
        let mut req = FetchRequest {
            id,
            head,
            limits: self.shared.limits,
            addr: None,
        };
        req.limits.keep_payload = self.shared.settings.warc;
        if super::sitemaps::may_be_sitemap(&item, &req.head.url) {
            super::sitemaps::widen_limits(&mut req.limits);
        }
        self.shared.counters.bump(Counter::PagesStarted);
        let tally = self.tallies.entry(host.clone()).or_default();
        tally.pages += 1;
        if Some(tally.pages) == self.shared.settings.max_pages_per_host {
            self.shared.counters.bump(Counter::HostsRetired);
        }
        self.in_flight.insert(id, InFlight::Page { host, item });
        out.push(Action::Fetch(Box::new(req)));
    }

    /// A URL not requested because its sitemap `<lastmod>` is not newer than the
    /// previous fetch (`--sitemap-lastmod skip`): no request and no politeness wait;
    /// a crawl-log line (outcome `filtered`, annotated `skipped` and
    /// `lastmod-not-newer`), counted in `stats.json` `recrawl.skipped`; the driver
    /// admits the previous capture's links as for a `304`.
    fn skip_page(
        &mut self,
        host: &str,
        item: QueuedUrl,
        previous: crate::recrawl::IndexEntry,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        let mut log = LogRecord::new(now.wall, item.url.clone(), Outcome::Filtered);
        log.hops = hops_path(&item.hops);
        log.via.clone_from(&item.via);
        log.annotations
            .extend(["skipped".to_owned(), "lastmod-not-newer".to_owned()]);
        self.shared.counters.bump(Counter::LastmodSkipped);
        self.frontier.complete(host, now.at);
        out.push(Action::Skip(Box::new(super::Skipped {
            item,
            log,
            previous,
        })));
        self.finish_url();
    }

    /// The politeness instant after a fetch of `url`'s host that took `elapsed`:
    /// the configured delay, robots.txt crawl-delay, adaptive delay, `Retry-After`
    /// (capped) and failure backoff, whichever is longest.
    pub(super) fn next_eligible(
        &mut self,
        url: &Url,
        elapsed: Duration,
        retry_after: Option<Duration>,
        backoff: Option<Duration>,
        now: Now,
    ) -> Instant {
        let config = &self.shared.settings;
        let mut delay = config.delay;
        let key = super::host_key(url);
        if let Some(cd) = self.robots.crawl_delay(url) {
            delay = delay.max(cd);
            if let Some(k) = &key {
                self.shared.operator_rules.note_crawl_delay(k, cd);
            }
        }
        // A delay for the host that an operator raised through the control API.
        if let Some(d) = key
            .as_deref()
            .and_then(|k| self.shared.operator_rules.delay_of(k))
        {
            delay = delay.max(d);
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
        now.at + delay
    }
}

impl Core {
    /// Robots.txt fetches in flight past which no look-ahead starts: an eighth of
    /// `--concurrency` (at least 4), over the cap, so a crawl with every slot busy
    /// still learns the rules of the hosts it discovers.
    fn look_ahead_cap(&self) -> usize {
        (self.shared.settings.concurrency_per_shard / 8).max(4)
    }

    /// Whether a URL pushed for `host` may start its robots.txt at once: the host is
    /// in the frontier's active set (a host of the line asks for its robots.txt as the
    /// first request of its activation), every slot is busy (with a free one the next
    /// turn asks for it anyway), the host's rules are not being fetched, and the
    /// look-ahead has room.
    pub(super) fn wants_look_ahead(&self, host: &str) -> bool {
        !self.has_free_slot()
            && self.frontier.is_active(host)
            && self.robots_fetching.len() < self.look_ahead_cap()
            && !self.robots_fetching.contains(host)
            && !self.refused_hosts.contains(host)
            && !self.unresolved_hosts.contains_key(host)
    }

    /// Look-ahead for a newly discovered host (`docs/frontier.md`, "Scheduling at width:
    /// what the core adds"): its robots.txt (and with it the name's resolution) starts
    /// before the host's turn, so its first page can follow as soon as politeness allows
    /// instead of after a robots.txt fetch started late. The host's URLs stay queued; its
    /// turn finds the rules known, or holds the host until they are (the fetch is in
    /// `robots_fetching`).
    pub(super) fn look_ahead(&mut self, host: &str, url: &str, now: Now, out: &mut Vec<Action>) {
        let Ok(url) = Url::parse(url) else { return };
        let Some(key) = HostKey::of(&url) else { return };
        if self.robots.get(&key).is_some() {
            return;
        }
        let delay = self.shared.settings.delay;
        if self
            .shared
            .memory
            .recent_starts
            .reserve(host, Asker::Owner, delay, now.at)
            .is_err()
        {
            return;
        }
        let Some(req) = self.robots.poll_fetch(&url, now.at) else {
            return;
        };
        let Some(key) = HostKey::of(&req.url) else {
            return;
        };
        let id = self.next_id();
        let action = robots_request(
            &self.shared,
            &mut self.in_flight,
            id,
            host,
            key,
            req,
            url.to_string(),
        );
        self.robots_fetching.insert(host.to_owned());
        self.robots_look_aheads += 1;
        out.push(action);
    }
}

/// The parts of the core the frontier's gate reads and writes while the frontier is
/// borrowed.
struct GateCtx<'a> {
    /// Fetches in flight that hold no slot (see [`Core::busy`]).
    excused: usize,
    robots: &'a mut RobotsCache,
    tallies: &'a FastMap<String, HostTally>,
    refused_hosts: &'a FastSet<String>,
    unresolved_hosts: &'a mut FastMap<String, Instant>,
    robots_fetching: &'a mut FastSet<String>,
    in_flight: &'a mut FastMap<u64, InFlight>,
    next_id: &'a mut u64,
    shared: &'a CoreShared,
    out: &'a mut Vec<Action>,
}

impl GateCtx<'_> {
    /// The decision on the front URL of `host`: a verdict to take it with, or the
    /// host held (its robots.txt is being fetched) or deferred (robots.txt retried
    /// later).
    fn decide(&mut self, host: &str, item: &QueuedUrl, now: Now) -> Gate<Verdict> {
        // A robots.txt fetch this pass made for a host held before took the last free
        // slot: this host keeps its turn, so no more than `concurrency_per_shard`
        // fetches run, robots.txt included.
        if self.in_flight.len().saturating_sub(self.excused)
            >= self.shared.settings.concurrency_per_shard
        {
            return Gate::Stop;
        }
        let Ok(url) = Url::parse(&item.url) else {
            return Gate::Take(Verdict::Decline(Outcome::Filtered, INVALID_URL));
        };
        if self.shared.operator_rules.is_blocked(host, &item.url) {
            return Gate::Take(Verdict::Decline(
                Outcome::Filtered,
                crate::control::BLOCKED_NOTE,
            ));
        }
        if let Some(routes) = &self.shared.settings.routes {
            match routes.state(host, now.at) {
                RouteState::Up => {}
                // A proxy that is down pauses its hosts: no fetch, no log line, no
                // failure counted; they go again when it is tried again.
                RouteState::Paused(until) => return Gate::Defer(until),
                RouteState::GaveUp => {
                    return Gate::Take(Verdict::Decline(
                        Outcome::ProxyUnreachable,
                        super::proxy::PROXY_GAVE_UP,
                    ))
                }
                RouteState::AuthFailed => {
                    return Gate::Take(Verdict::Decline(
                        Outcome::ProxyAuth,
                        super::proxy::PROXY_AUTH,
                    ))
                }
            }
        }
        if self.refused_hosts.contains(host) {
            return Gate::Take(Verdict::Decline(Outcome::BlockedAddress, POLICY_PRIVATE));
        }
        if let Some(&until) = self.unresolved_hosts.get(host) {
            if now.at < until {
                return Gate::Take(Verdict::Decline(Outcome::DnsError, super::DNS_UNRESOLVED));
            }
            // Its time is up: the name is asked again with the next robots.txt fetch
            // (the resolver decides how often a dead name is tried in all).
            self.unresolved_hosts.remove(host);
        }
        let tally = self.tallies.get(host).copied().unwrap_or_default();
        if tally.parked {
            return Gate::Take(Verdict::Decline(Outcome::HostParked, "host-parked"));
        }
        if let Some(max) = self.shared.settings.max_pages_per_host {
            if tally.pages >= max {
                return Gate::Take(Verdict::Decline(
                    Outcome::Budget,
                    super::BUDGET_PAGES_PER_HOST,
                ));
            }
        }
        let decision = match self.robots.check(&url, now.at) {
            Access::Decided(d) => {
                Some((d.allowed, matches!(d.reason, Reason::Unreachable), d.line()))
            }
            Access::Pending => None,
        };
        match decision {
            Some((true, _, _)) => match self.reserve_start(host, now) {
                Ok(()) => Gate::Take(Verdict::Fetch(url)),
                Err(at) => Gate::Defer(at),
            },
            Some((false, true, _)) if self.robots_given_up(&url) => {
                // robots.txt stayed unreachable through every retry: the host is
                // treated as disallowed for this crawl (RFC 9309 §2.3.1.4), and its
                // URLs are logged, not kept forever.
                self.shared.counters.bump(Counter::HostsRetired);
                Gate::Take(Verdict::Decline(Outcome::Robots, "robots-unreachable"))
            }
            Some((false, true, _)) => {
                // robots.txt is unreachable: RFC 9309 §2.3.1.4 says disallow all for
                // now, so the host's URLs wait (none is dropped) and robots.txt is
                // retried.
                if self.robots_fetching.contains(host) {
                    Gate::Hold
                } else if let Err(at) = self.reserve_start(host, now) {
                    Gate::Defer(at)
                } else if self.fetch_robots(host, &url, item, now) {
                    Gate::Hold
                } else {
                    let retry = HostKey::of(&url)
                        .and_then(|k| self.robots.get(&k).and_then(|p| p.poll_timeout()))
                        .unwrap_or(now.at + secs(60));
                    Gate::Defer(retry.max(now.at + secs(1)))
                }
            }
            Some((false, false, line)) => Gate::Take(Verdict::Disallowed(line)),
            None => {
                if self.robots_fetching.contains(host) {
                    Gate::Hold
                } else if let Err(at) = self.reserve_start(host, now) {
                    Gate::Defer(at)
                } else if self.fetch_robots(host, &url, item, now) {
                    Gate::Hold
                } else {
                    // Nothing to wait for (e.g. the rules were evicted mid-way): try
                    // again shortly rather than strand the host.
                    Gate::Defer(now.at + secs(1))
                }
            }
        }
    }

    /// Reserves a request start to `host` (a page, or its robots.txt): another host's
    /// robots.txt redirect may have asked it less than a politeness delay ago
    /// (`RecentStarts`); then `Err` with when it may go.
    fn reserve_start(&self, host: &str, now: Now) -> Result<(), Instant> {
        let delay = self.shared.settings.delay;
        self.shared
            .memory
            .recent_starts
            .reserve(host, Asker::Owner, delay, now.at)
    }

    /// Asks for `url`'s host's robots.txt if a fetch is due; true if one was asked.
    fn fetch_robots(&mut self, host: &str, url: &Url, item: &QueuedUrl, now: Now) -> bool {
        let Some(req) = self.robots.poll_fetch(url, now.at) else {
            return false;
        };
        let Some(key) = HostKey::of(&req.url) else {
            return false;
        };
        *self.next_id += 1;
        let action = robots_request(
            self.shared,
            self.in_flight,
            *self.next_id,
            host,
            key,
            req,
            item.url.clone(),
        );
        self.robots_fetching.insert(host.to_owned());
        self.out.push(action);
        true
    }

    /// True once robots.txt of `url`'s host failed `robots_max_attempts` times in a row.
    fn robots_given_up(&mut self, url: &Url) -> bool {
        let Some(key) = HostKey::of(url) else {
            return true;
        };
        let failures = match self.robots.get(&key).map(|p| p.state()) {
            Some(RobotsState::Unreachable(u)) => u.failures,
            _ => return false,
        };
        failures >= self.shared.settings.robots_max_attempts
    }
}

/// The request head every fetch starts from: our user agent and `From`.
fn request_head(config: &CoreSettings, url: Url) -> RequestHead {
    let mut head = RequestHead::get(url, config.user_agent.clone());
    head.from.clone_from(&config.from);
    head
}

/// A robots.txt fetch (or a hop of its redirects) on behalf of `key`: a redirect may
/// lead to another host (`/robots.txt` -> `http://other/robots-cross.txt`), but the
/// answer is the rules of the host that asked (RFC 9309 §2.3.1.2), so the cache entry
/// to feed stays `key`, never the redirect target's.
pub(super) fn robots_request(
    shared: &CoreShared,
    in_flight: &mut FastMap<u64, InFlight>,
    id: u64,
    host: &str,
    key: HostKey,
    req: crate::robots::FetchRequest,
    via: String,
) -> Action {
    let mut head = request_head(&shared.settings, req.url);
    head.if_none_match = req.if_none_match;
    head.if_modified_since = req.if_modified_since;
    head.accept = "text/plain,*/*;q=0.5".to_owned();
    let mut fetch = FetchRequest {
        id,
        head,
        limits: shared.limits,
        addr: None,
    };
    fetch.limits.keep_payload = shared.settings.warc;
    in_flight.insert(
        id,
        InFlight::Robots(super::RobotsFetch {
            host: host.to_owned(),
            key,
            via,
        }),
    );
    Action::FetchRobots(Box::new(fetch))
}
