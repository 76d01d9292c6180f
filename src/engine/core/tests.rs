//! The crawl core with synthetic time and no sockets: every test builds a [`Core`] on
//! a frontier in a temporary directory (its RAM tier only: nothing spills), feeds it
//! made-up instants and fetch outcomes, and checks the actions it answers with.
//!
//! Time is an opaque origin (one `Instant` taken as a base, never compared with the
//! clock again) advanced by hand; the wall clock is a fixed Unix time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use url::Url;

use super::page::{backoff, is_retryable};
use super::{host_key, shard_of, Action, Core, CoreParts, Now, Record, RecordContext};
use crate::crawllog::{LogRecord, Outcome};
use crate::engine::{CrawlConfig, Shared};
use crate::frontier::{Frontier, FrontierConfig, QueuedUrl};
use crate::http::charset_of;
use crate::http::ResponseHead;
use crate::net::{FailReason, FetchLimits, FetchOutcome};
use crate::seen::{Backing, ContentSeen, SeenConfig, SeenSet};
use crate::url::{Scope, UrlFilter};
use crate::warc::WarcDate;

/// 2023-11-14T22:13:20Z, a round Unix time for `Retry-After` dates.
const WALL_SECS: i64 = 1_700_000_000;

struct Harness {
    core: Core,
    shared: Arc<Shared>,
    t0: Now,
    _dir: tempfile::TempDir,
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
    tweak: impl FnOnce(&mut CrawlConfig),
    frontier: impl FnOnce(&mut FrontierConfig),
) -> Harness {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = CrawlConfig::new(dir.path().join("out"));
    config.shards = 1;
    config.warc = false;
    config.delay = secs(1);
    config.concurrency_per_shard = 16;
    tweak(&mut config);
    let seed_urls: Vec<Url> = seeds.iter().map(|s| Url::parse(s).expect("seed")).collect();
    let filter = Arc::new(UrlFilter::new(config.filter.clone(), &seed_urls).expect("filter"));
    let seen_config = SeenConfig {
        backing: Backing::Memory,
        ..SeenConfig::new(100_000, 1e-6)
    };
    let seen = SeenSet::create_with(dir.path().join("seen.bits"), &seen_config).expect("seen");
    let fingerprints =
        ContentSeen::create_backed(dir.path().join("fp.bits"), 10_000, 1e-6, Backing::Memory)
            .expect("fingerprints");
    let shards = config.shards;
    let shared = Arc::new(Shared::new(
        config,
        FetchLimits::default(),
        seen,
        fingerprints,
        None,
        Arc::new(AtomicU64::new(0)),
    ));
    let mut fc = FrontierConfig::new(dir.path().join("frontier"));
    frontier(&mut fc);
    let core = Core::new(CoreParts {
        index: 0,
        shards,
        shared: Arc::clone(&shared),
        frontier: Frontier::new(fc).expect("frontier"),
        filter,
        tallies: Default::default(),
        robots: Vec::new(),
    });
    let t0 = Now {
        at: Instant::now(),
        wall: WarcDate::from_unix_micros(WALL_SECS * 1_000_000),
    };
    let mut h = Harness {
        core,
        shared,
        t0,
        _dir: dir,
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
        self.shared.seen.test_and_set(url.as_str().as_bytes());
        self.shared.outstanding.fetch_add(1, Ordering::AcqRel);
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
        self.shared.outstanding.load(Ordering::Acquire)
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
    let mut o = failure(id, url, FailReason::Reset);
    o.error = None;
    let mut raw = format!("HTTP/1.1 {status} X\r\n");
    for (n, v) in headers {
        raw.push_str(&format!("{n}: {v}\r\n"));
    }
    raw.push_str("\r\n");
    o.head = Some(ResponseHead::parse(raw.as_bytes()).expect("head"));
    o.body = body.into();
    o.body_complete = true;
    o.wire_bytes = body.len() as u64 + 100;
    o.decoded_bytes = body.len() as u64;
    o
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

// --- robots.txt waiting ------------------------------------------------------------

#[test]
fn a_new_host_asks_for_robots_txt_first_and_is_held() {
    let mut h = harness(&[A]);
    let actions = h.schedule(h.t0);
    assert_eq!(
        robots_fetches(&actions),
        vec![(1, "http://a.test/robots.txt".to_owned())]
    );
    assert!(fetches(&actions).is_empty());
    assert!(h.core.frontier.is_held("http://a.test"));
    assert_eq!(h.core.in_flight(), 1);
    // Held: nothing more to do for the host, however often the loop turns.
    assert!(h.schedule(h.at(secs(5))).is_empty());
}

#[test]
fn a_url_waiting_for_robots_never_leaves_the_frontier() {
    let mut h = harness(&[A, "http://a.test/2", "http://a.test/3"]);
    let asked = robots_fetches(&h.schedule(h.t0));
    // The checkpoint sees all three URLs in the frontier, none elsewhere.
    assert_eq!(
        h.checkpointed(),
        vec!["http://a.test/", "http://a.test/2", "http://a.test/3"]
    );
    assert_eq!(h.core.frontier_stats().ram_urls, 3);
    let (id, url) = asked[0].clone();
    h.feed(
        response(id, &url, 200, &[], b"User-agent: *\nAllow: /\n"),
        h.t0,
    );
    // Released: the URLs leave once each, in order, one per politeness delay.
    let start = h.at(secs(1));
    let urls = drain_fetch_urls(&mut h, start, 3);
    assert_eq!(
        urls,
        vec!["http://a.test/", "http://a.test/2", "http://a.test/3"]
    );
    assert_eq!(h.shared.pages_started.load(Ordering::Acquire), 3);
    assert_eq!(h.outstanding(), 0);
}

#[test]
fn many_urls_of_a_held_host_ask_for_robots_once() {
    let mut h = harness_with(
        &[A, "http://a.test/2"],
        |_| {},
        |f| f.max_in_flight_per_host = 4,
    );
    let actions = h.schedule(h.t0);
    assert_eq!(robots_fetches(&actions).len(), 1);
    assert!(fetches(&actions).is_empty());
    assert!(h.schedule(h.t0).is_empty());
}

#[test]
fn robots_answer_releases_the_host_after_its_politeness_delay() {
    let mut h = harness(&[A]);
    let after = h.robots(h.t0, 200, "");
    assert_eq!(records(&after).len(), 1);
    assert!(!h.core.frontier.is_held("http://a.test"));
    assert!(fetches(&h.schedule(h.at(ms(999)))).is_empty());
    assert_eq!(h.one_fetch(h.at(secs(1))).1, A);
}

#[test]
fn robots_fetch_is_recorded_as_a_prerequisite_of_the_page() {
    let mut h = harness(&[A]);
    let after = h.robots(h.t0, 200, "");
    let rec = records(&after)[0];
    assert_eq!(rec.hops(), "P");
    assert_eq!(rec.via(), Some(A));
    assert!(rec.page().is_none());
    assert_eq!(rec.outcome.url.as_str(), "http://a.test/robots.txt");
}

#[test]
fn robots_disallow_logs_the_url_with_the_rule_line() {
    let mut h = harness(&["http://a.test/private/x"]);
    h.robots(h.t0, 200, "User-agent: *\nDisallow: /private\n");
    let actions = h.schedule(h.at(secs(1)));
    assert!(fetches(&actions).is_empty());
    let logged = logs(&actions);
    assert_eq!(logged.len(), 1);
    assert_eq!(logged[0].outcome, Outcome::Robots);
    assert_eq!(logged[0].annotations, vec!["robots:line-2".to_owned()]);
    assert_eq!(h.outstanding(), 0);
}

#[test]
fn robots_404_allows_everything() {
    let mut h = harness(&["http://a.test/private/x"]);
    h.robots(h.t0, 404, "");
    assert_eq!(h.one_fetch(h.at(secs(1))).1, "http://a.test/private/x");
}

#[test]
fn unreachable_robots_keeps_the_urls_waiting_and_retries_robots_later() {
    let mut h = harness(&[A]);
    h.robots(h.t0, 503, "");
    // Disallowed for now (RFC 9309 §2.3.1.4): no page fetch, no log, the URL stays.
    let mut now = h.at(secs(1));
    let mut asked_again = None;
    for _ in 0..4000 {
        let actions = h.schedule(now);
        assert!(fetches(&actions).is_empty(), "{actions:?}");
        assert!(logs(&actions).is_empty(), "{actions:?}");
        if let Some(r) = robots_fetches(&actions).first() {
            asked_again = Some((r.clone(), now));
            break;
        }
        now = now.plus(secs(1));
    }
    let ((id, url), when) = asked_again.expect("robots.txt asked again");
    assert!(when.at > h.at(secs(1)).at, "retried at once");
    assert_eq!(h.checkpointed(), vec![A]);
    h.feed(response(id, &url, 200, &[], b""), when);
    assert_eq!(h.one_fetch(when.plus(secs(1))).1, A);
}

#[test]
fn robots_unreachable_through_every_attempt_logs_the_urls() {
    let mut h = harness_with(
        &[A, "http://a.test/2"],
        |c| c.robots_max_attempts = 2,
        |_| {},
    );
    let mut now = h.t0;
    let mut failures = 0;
    let mut logged = Vec::new();
    for _ in 0..20_000 {
        let actions = h.schedule(now);
        for l in logs(&actions) {
            logged.push((l.url.clone(), l.outcome, l.annotations.clone()));
        }
        if let Some((id, url)) = robots_fetches(&actions).first().cloned() {
            h.feed(failure(id, &url, FailReason::Refused), now);
            failures += 1;
        }
        if logged.len() == 2 {
            break;
        }
        now = now.plus(secs(1));
    }
    assert_eq!(failures, 2);
    assert_eq!(
        logged,
        vec![
            (
                A.to_owned(),
                Outcome::Robots,
                vec!["robots-unreachable".to_owned()]
            ),
            (
                "http://a.test/2".to_owned(),
                Outcome::Robots,
                vec!["robots-unreachable".to_owned()]
            ),
        ]
    );
    assert_eq!(h.outstanding(), 0);
}

#[test]
fn robots_redirect_is_followed_for_the_host_that_asked() {
    let mut h = harness(&["http://a.test/private"]);
    let actions = h.schedule(h.t0);
    let (id, url) = robots_fetches(&actions)[0].clone();
    let hop = h.feed(
        response(
            id,
            &url,
            301,
            &[("Location", "http://b.test/rules.txt")],
            b"",
        ),
        h.t0,
    );
    let next = robots_fetches(&hop);
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].1, "http://b.test/rules.txt");
    assert!(h.core.frontier.is_held("http://a.test"));
    h.feed(
        response(
            next[0].0,
            &next[0].1,
            200,
            &[],
            b"User-agent: *\nDisallow: /private\n",
        ),
        h.t0,
    );
    let decided = h.schedule(h.at(secs(1)));
    assert_eq!(logs(&decided)[0].outcome, Outcome::Robots);
    assert!(fetches(&decided).is_empty());
}

#[test]
fn robots_refused_by_address_policy_declines_every_url_of_the_host() {
    let mut h = harness(&[A, "http://a.test/2"]);
    let actions = h.schedule(h.t0);
    let (id, url) = robots_fetches(&actions)[0].clone();
    let after = h.feed(failure(id, &url, FailReason::BlockedAddress), h.t0);
    assert_eq!(
        records(&after)[0].annotations,
        vec![super::POLICY_PRIVATE.to_owned()]
    );
    let mut declined = Vec::new();
    let mut now = h.t0;
    for _ in 0..5 {
        let actions = h.schedule(now);
        assert!(fetches(&actions).is_empty());
        assert!(robots_fetches(&actions).is_empty());
        declined.extend(logs(&actions).iter().map(|l| (l.url.clone(), l.outcome)));
        now = now.plus(secs(1));
    }
    assert_eq!(
        declined,
        vec![
            (A.to_owned(), Outcome::BlockedAddress),
            ("http://a.test/2".to_owned(), Outcome::BlockedAddress)
        ]
    );
    assert_eq!(h.outstanding(), 0);
}

#[test]
fn robots_parse_caps_are_annotated_and_counted() {
    let mut h = harness(&[A]);
    let long = format!("User-agent: *\nDisallow: /{}\n", "x".repeat(20_000));
    let after = h.robots(h.t0, 200, &long);
    let notes = &records(&after)[0].annotations;
    assert!(
        notes.iter().any(|n| n.starts_with("robots-long-lines:")),
        "{notes:?}"
    );
    assert_eq!(h.shared.robots_long_lines.load(Ordering::Acquire), 1);
}

// --- politeness ----------------------------------------------------------------------

#[test]
fn politeness_delay_spaces_fetches_of_one_host() {
    let mut h = harness(&[A, "http://a.test/2"]);
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    // One fetch per host at a time: the second waits for the first.
    assert!(fetches(&h.schedule(t1)).is_empty());
    let done = t1.plus(ms(300));
    h.feed(html(id, &url, "<p>x</p>"), done);
    assert!(fetches(&h.schedule(done.plus(ms(999)))).is_empty());
    assert_eq!(h.one_fetch(done.plus(secs(1))).1, "http://a.test/2");
}

#[test]
fn robots_crawl_delay_lengthens_the_politeness_delay() {
    let mut h = harness(&[A, "http://a.test/2"]);
    h.robots(h.t0, 200, "User-agent: *\nCrawl-delay: 5\n");
    let t1 = h.at(secs(5));
    let (id, url) = h.one_fetch(t1);
    h.feed(html(id, &url, ""), t1);
    assert!(fetches(&h.schedule(t1.plus(secs(4)))).is_empty());
    assert_eq!(fetches(&h.schedule(t1.plus(secs(5)))).len(), 1);
}

#[test]
fn adaptive_delay_scales_with_the_response_time() {
    let mut h = harness_with(
        &[A, "http://a.test/2"],
        |c| {
            c.delay = Duration::ZERO;
            c.delay_factor = 2.0;
        },
        |_| {},
    );
    h.robots(h.t0, 200, "");
    let (id, url) = h.one_fetch(h.t0);
    let mut o = html(id, &url, "");
    o.timings.total = secs(3);
    h.feed(o, h.t0);
    assert!(fetches(&h.schedule(h.at(ms(5999)))).is_empty());
    assert_eq!(fetches(&h.schedule(h.at(secs(6)))).len(), 1);
}

#[test]
fn concurrency_cap_bounds_the_fetches_in_flight() {
    let seeds: Vec<String> = (0..6).map(|i| format!("http://h{i}.test/")).collect();
    let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
    let mut h = harness_with(&seeds, |c| c.concurrency_per_shard = 4, |_| {});
    let actions = h.schedule(h.t0);
    assert_eq!(robots_fetches(&actions).len(), 4);
    assert_eq!(h.core.in_flight(), 4);
    assert!(h.schedule(h.t0).is_empty());
}

#[test]
fn hosts_take_turns_breadth_first() {
    let mut h = harness(&[A, "http://a.test/2", "http://b.test/", "http://b.test/2"]);
    let actions = h.schedule(h.t0);
    for (id, url) in robots_fetches(&actions) {
        h.feed(response(id, &url, 200, &[], b""), h.t0);
    }
    let now = h.at(secs(1));
    let first = fetches(&h.schedule(now));
    let hosts: Vec<&str> = first.iter().map(|(_, u)| &u[..13]).collect();
    assert_eq!(first.len(), 2, "one fetch per host: {first:?}");
    assert!(hosts.contains(&"http://a.test") && hosts.contains(&"http://b.test"));
}

// --- retries and backoff ------------------------------------------------------------

#[test]
fn a_transient_failure_is_retried_after_a_backoff() {
    let mut h = harness(&[A]);
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    let after = h.feed(failure(id, &url, FailReason::Reset), t1);
    let rec = records(&after)[0];
    assert_eq!(rec.annotations, vec!["retry:1".to_owned()]);
    // The started count gives the retry back; the URL is still outstanding.
    assert_eq!(h.shared.pages_started.load(Ordering::Acquire), 0);
    assert_eq!(h.outstanding(), 1);
    assert_eq!(h.checkpointed(), vec![A]);
    // One failure: 4 s of backoff, longer than the 1 s delay.
    assert!(fetches(&h.schedule(t1.plus(ms(3999)))).is_empty());
    let (_, again) = h.one_fetch(t1.plus(secs(4)));
    assert_eq!(again, A);
}

#[test]
fn retries_end_after_max_retries_with_the_failure_logged() {
    let mut h = harness_with(&[A], |c| c.max_retries = 2, |_| {});
    h.robots(h.t0, 200, "");
    let mut now = h.at(secs(1));
    let mut notes = Vec::new();
    for _ in 0..3 {
        let (id, url) = h.one_fetch(now);
        let after = h.feed(
            failure(
                id,
                &url,
                FailReason::Timeout(crate::net::TimeoutPhase::Total),
            ),
            now,
        );
        notes.push(records(&after)[0].annotations.clone());
        now = now.plus(secs(600));
    }
    assert_eq!(
        notes,
        vec![
            vec!["retry:1".to_owned()],
            vec!["retry:2".to_owned()],
            vec![]
        ]
    );
    assert_eq!(h.outstanding(), 0);
    assert!(h.schedule(now).is_empty());
}

#[test]
fn permanent_failures_are_not_retried() {
    let mut h = harness(&[A]);
    h.robots(h.t0, 200, "");
    let (id, url) = h.one_fetch(h.at(secs(1)));
    let after = h.feed(
        failure(id, &url, FailReason::Tls("bad cert".into())),
        h.at(secs(1)),
    );
    assert!(records(&after)[0].annotations.is_empty());
    assert_eq!(h.outstanding(), 0);
}

#[test]
fn status_503_with_retry_after_seconds_delays_the_host() {
    let mut h = harness(&[A]);
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    let after = h.feed(response(id, &url, 503, &[("Retry-After", "30")], b""), t1);
    assert_eq!(records(&after)[0].annotations, vec!["retry:1".to_owned()]);
    assert!(fetches(&h.schedule(t1.plus(ms(29_999)))).is_empty());
    assert_eq!(fetches(&h.schedule(t1.plus(secs(30)))).len(), 1);
}

#[test]
fn retry_after_as_an_http_date_counts_from_the_wall_clock() {
    let mut h = harness(&[A]);
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    // WALL_SECS + 1 s is 22:13:21; two minutes later:
    let date = "Tue, 14 Nov 2023 22:15:21 GMT";
    h.feed(response(id, &url, 429, &[("Retry-After", date)], b""), t1);
    assert!(fetches(&h.schedule(t1.plus(ms(119_999)))).is_empty());
    assert_eq!(fetches(&h.schedule(t1.plus(secs(120)))).len(), 1);
}

#[test]
fn retry_after_is_capped() {
    let mut h = harness_with(&[A], |c| c.max_retry_after = secs(60), |_| {});
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    h.feed(
        response(id, &url, 429, &[("Retry-After", "86400")], b""),
        t1,
    );
    assert_eq!(fetches(&h.schedule(t1.plus(secs(60)))).len(), 1);
}

#[test]
fn backoff_doubles_per_failure_up_to_a_cap() {
    assert_eq!(backoff(0), None);
    assert_eq!(backoff(1), Some(secs(4)));
    assert_eq!(backoff(2), Some(secs(8)));
    assert_eq!(backoff(3), Some(secs(16)));
    assert_eq!(backoff(8), Some(secs(512)));
    assert_eq!(backoff(30), Some(secs(512)));
}

#[test]
fn retryable_failures_are_transient_ones() {
    assert!(is_retryable(&FailReason::Reset));
    assert!(is_retryable(&FailReason::Refused));
    assert!(!is_retryable(&FailReason::BlockedAddress));
    assert!(!is_retryable(&FailReason::Tls("x".into())));
}

// --- budgets and parking --------------------------------------------------------------

#[test]
fn pages_per_host_budget_logs_the_rest() {
    let mut h = harness_with(
        &[A, "http://a.test/2"],
        |c| c.max_pages_per_host = Some(1),
        |_| {},
    );
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    h.feed(html(id, &url, ""), t1);
    let actions = h.schedule(t1.plus(secs(1)));
    assert!(fetches(&actions).is_empty());
    let logged = logs(&actions);
    assert_eq!(logged[0].outcome, Outcome::Budget);
    assert_eq!(
        logged[0].annotations,
        vec!["budget:pages-per-host".to_owned()]
    );
    assert_eq!(h.outstanding(), 0);
}

#[test]
fn a_host_failing_again_and_again_is_parked() {
    let mut h = harness_with(
        &[A, "http://a.test/2", "http://a.test/3"],
        |c| {
            c.max_retries = 0;
            c.host_failures_to_park = 2;
        },
        |_| {},
    );
    h.robots(h.t0, 200, "");
    let mut now = h.at(secs(1));
    for _ in 0..2 {
        let (id, url) = h.one_fetch(now);
        h.feed(failure(id, &url, FailReason::Refused), now);
        now = now.plus(secs(600));
    }
    assert!(h.core.tallies()["http://a.test"].parked);
    assert_eq!(h.shared.hosts_parked.load(Ordering::Acquire), 1);
    let actions = h.schedule(now);
    assert!(fetches(&actions).is_empty());
    assert_eq!(logs(&actions)[0].outcome, Outcome::HostParked);
    assert_eq!(h.outstanding(), 0);
}

#[test]
fn a_success_resets_the_failure_run() {
    let mut h = harness_with(
        &[A, "http://a.test/2", "http://a.test/3"],
        |c| c.max_retries = 0,
        |_| {},
    );
    h.robots(h.t0, 200, "");
    let mut now = h.at(secs(1));
    let (id, url) = h.one_fetch(now);
    h.feed(failure(id, &url, FailReason::Refused), now);
    assert_eq!(h.core.tallies()["http://a.test"].consecutive_failures, 1);
    now = now.plus(secs(600));
    let (id, url) = h.one_fetch(now);
    h.feed(html(id, &url, ""), now);
    assert_eq!(h.core.tallies()["http://a.test"].consecutive_failures, 0);
    assert_eq!(h.core.tallies()["http://a.test"].pages, 2);
}

#[test]
fn a_spent_crawl_budget_stops_scheduling() {
    let mut h = harness_with(&[A, "http://b.test/"], |c| c.max_pages = Some(1), |_| {});
    let actions = h.schedule(h.t0);
    for (id, url) in robots_fetches(&actions) {
        h.feed(response(id, &url, 200, &[], b""), h.t0);
    }
    let now = h.at(secs(1));
    let actions = h.schedule(now);
    assert_eq!(fetches(&actions).len(), 1);
    assert!(h.shared.stopping.load(Ordering::Acquire));
}

// --- redirects ---------------------------------------------------------------------

#[test]
fn a_redirect_queues_its_target_with_hop_r() {
    let mut h = harness(&[A]);
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    let after = h.feed(response(id, &url, 301, &[("Location", "/moved")], b""), t1);
    match &records(&after)[0].context {
        RecordContext::Page { outlinks, .. } => {
            assert_eq!(outlinks.len(), 1);
            assert_eq!(outlinks[0].0, "http://a.test/moved");
        }
        other => panic!("not a page record: {other:?}"),
    }
    let mut queued = Vec::new();
    h.core
        .for_each_checkpointed(|_, item| queued.push(item.clone()))
        .expect("listing");
    assert_eq!(queued.len(), 1);
    assert_eq!(queued[0].url, "http://a.test/moved");
    assert_eq!(queued[0].hops, "R");
    assert_eq!(queued[0].via.as_deref(), Some(A));
    assert_eq!(h.outstanding(), 1);
}

#[test]
fn a_redirect_chain_past_the_limit_is_filtered() {
    let mut h = harness_with(&[], |c| c.max_redirects = 2, |_| {});
    h.shared.outstanding.fetch_add(1, Ordering::AcqRel);
    let mut out = Vec::new();
    let item = QueuedUrl {
        url: "http://a.test/r2".to_owned(),
        via: Some("http://a.test/r1".to_owned()),
        hops: "RR".to_owned(),
        attempts: 0,
    };
    h.core.push("http://a.test", item, h.t0, &mut out);
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    let after = h.feed(response(id, &url, 302, &[("Location", "/r3")], b""), t1);
    let logged = logs(&after);
    assert_eq!(logged.len(), 1);
    assert_eq!(logged[0].url, "http://a.test/r3");
    assert_eq!(logged[0].outcome, Outcome::Filtered);
    assert_eq!(
        logged[0].annotations,
        vec!["filter:redirect-chain".to_owned()]
    );
    assert!(h.checkpointed().is_empty());
}

#[test]
fn an_unusable_location_is_annotated() {
    let mut h = harness(&[A]);
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    let after = h.feed(
        response(id, &url, 301, &[("Location", "http://[::1")], b""),
        t1,
    );
    let notes = &records(&after)[0].annotations;
    assert_eq!(notes.len(), 1);
    assert!(notes[0].starts_with("bad-location:"), "{notes:?}");
}

// --- links ----------------------------------------------------------------------------

#[test]
fn links_are_admitted_once_through_the_presence_bits() {
    let mut h = harness(&[A, "http://a.test/2"]);
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    // `/` is a seed (known); `/x` is new; `/x` again on the page is a repeat.
    h.feed(
        html(
            id,
            &url,
            r#"<a href="/">home</a><a href="/x">x</a><a href="/x">x</a>"#,
        ),
        t1,
    );
    assert_eq!(h.checkpointed(), vec!["http://a.test/2", "http://a.test/x"]);
    assert_eq!(h.shared.discovered.load(Ordering::Acquire), 1);
    let (id, url) = h.one_fetch(t1.plus(secs(1)));
    h.feed(
        html(id, &url, r#"<a href="/x">x</a><a href="/y">y</a>"#),
        t1.plus(secs(1)),
    );
    assert_eq!(h.checkpointed(), vec!["http://a.test/x", "http://a.test/y"]);
}

#[test]
fn links_out_of_scope_are_logged_as_filtered() {
    let mut h = harness_with(&[A], |c| c.filter.scope = Scope::SeedHosts, |_| {});
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    let after = h.feed(
        html(id, &url, r#"<a href="http://elsewhere.test/">e</a>"#),
        t1,
    );
    let logged = logs(&after);
    assert_eq!(logged.len(), 1);
    assert_eq!(logged[0].outcome, Outcome::Filtered);
    assert_eq!(
        logged[0].annotations,
        vec!["filter:out_of_scope".to_owned()]
    );
    assert_eq!(logged[0].via.as_deref(), Some(A));
    // The page's own record comes first in the log.
    assert!(matches!(after.first(), Some(Action::Record(_))));
}

#[test]
fn links_of_another_shards_hosts_are_routed_there() {
    // Find a host that belongs to shard 1 of 2 (shard 0 is this core).
    let other = (0..100)
        .map(|i| format!("http://o{i}.test"))
        .find(|k| shard_of(k, 2) == 1)
        .expect("a host of shard 1");
    let own = (0..100)
        .map(|i| format!("http://s{i}.test"))
        .find(|k| shard_of(k, 2) == 0)
        .expect("a host of shard 0");
    let seed = format!("{own}/");
    let mut h = harness_with(&[&seed], |c| c.shards = 2, |_| {});
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    let page = format!(r#"<a href="{other}/p">p</a>"#);
    let after = h.feed(html(id, &url, &page), t1);
    let routed = routes(&after);
    assert_eq!(routed.len(), 1);
    assert_eq!(routed[0].0, 1);
    assert_eq!(routed[0].1, other);
    assert_eq!(routed[0].2.hops, "L");
    assert!(h.checkpointed().is_empty());
}

#[test]
fn a_nofollow_page_admits_no_links() {
    let mut h = harness(&[A]);
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    let body = r#"<meta name="robots" content="nofollow"><a href="/x">x</a>"#;
    let after = h.feed(html(id, &url, body), t1);
    assert_eq!(records(&after)[0].annotations, vec!["nofollow".to_owned()]);
    assert!(h.checkpointed().is_empty());
}

#[test]
fn a_page_seen_before_is_a_duplicate_and_not_followed() {
    let mut h = harness(&[A, "http://b.test/"]);
    let actions = h.schedule(h.t0);
    for (id, url) in robots_fetches(&actions) {
        h.feed(response(id, &url, 200, &[], b""), h.t0);
    }
    let t1 = h.at(secs(1));
    let page = r#"<a href="/x">x</a>"#;
    let got = fetches(&h.schedule(t1));
    assert_eq!(got.len(), 2);
    let first = h.feed(html(got[0].0, &got[0].1, page), t1);
    let second = h.feed(html(got[1].0, &got[1].1, page), t1);
    assert!(records(&first)[0].annotations.is_empty());
    assert_eq!(
        records(&second)[0].annotations,
        vec!["duplicate".to_owned()]
    );
    assert_eq!(h.shared.duplicates.load(Ordering::Acquire), 1);
    assert_eq!(h.checkpointed().len(), 1);
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

// --- checkpoints and odd inputs -------------------------------------------------------

#[test]
fn a_checkpoint_keeps_pages_in_flight_and_takes_them_off_the_tallies() {
    let mut h = harness(&[A, "http://a.test/2"]);
    h.robots(h.t0, 200, "");
    let (_, url) = h.one_fetch(h.at(secs(1)));
    assert_eq!(url, A);
    // In flight first, then the frontier.
    assert_eq!(h.checkpointed(), vec![A, "http://a.test/2"]);
    assert_eq!(h.core.tallies()["http://a.test"].pages, 1);
    assert_eq!(
        h.core.pages_in_flight_by_host().get("http://a.test"),
        Some(&1)
    );
}

#[test]
fn a_checkpoint_while_robots_is_fetched_keeps_every_url_once() {
    let mut h = harness(&[A, "http://a.test/2", "http://b.test/"]);
    h.schedule(h.t0);
    let mut urls = h.checkpointed();
    urls.sort();
    assert_eq!(urls, vec![A, "http://a.test/2", "http://b.test/"]);
}

#[test]
fn an_unparsable_queued_url_is_logged_as_filtered() {
    let mut h = harness(&[]);
    h.shared.outstanding.fetch_add(1, Ordering::AcqRel);
    let mut out = Vec::new();
    h.core.push(
        "http://a.test",
        QueuedUrl::seed("not a url"),
        h.t0,
        &mut out,
    );
    let actions = h.schedule(h.t0);
    let logged = logs(&actions);
    assert_eq!(logged[0].outcome, Outcome::Filtered);
    assert_eq!(logged[0].annotations, vec!["filter:invalid-url".to_owned()]);
    assert_eq!(h.outstanding(), 0);
}

#[test]
fn an_outcome_of_an_unknown_fetch_is_ignored() {
    let mut h = harness(&[A]);
    assert!(h.feed(html(99, A, ""), h.t0).is_empty());
    assert_eq!(h.outstanding(), 1);
}

#[test]
fn a_blocked_page_refuses_its_host_without_backoff() {
    let mut h = harness(&[A, "http://a.test/2"]);
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    let after = h.feed(failure(id, &url, FailReason::BlockedAddress), t1);
    assert_eq!(
        records(&after)[0].annotations,
        vec![super::POLICY_PRIVATE.to_owned()]
    );
    let actions = h.schedule(t1);
    assert_eq!(logs(&actions)[0].outcome, Outcome::BlockedAddress);
    assert_eq!(h.outstanding(), 0);
}

#[test]
fn page_requests_carry_the_referer_and_robots_requests_ask_for_text() {
    let mut h = harness_with(&[A], |c| c.from = Some("ops@example.org".into()), |_| {});
    let actions = h.schedule(h.t0);
    match actions.first() {
        Some(Action::FetchRobots(r)) => {
            assert_eq!(r.head.accept, "text/plain,*/*;q=0.5");
            assert_eq!(r.head.from.as_deref(), Some("ops@example.org"));
        }
        other => panic!("{other:?}"),
    }
    let (id, url) = robots_fetches(&actions)[0].clone();
    h.feed(response(id, &url, 200, &[], b""), h.t0);
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    h.feed(html(id, &url, r#"<a href="/x">x</a>"#), t1);
    match h.schedule(t1.plus(secs(1))).first() {
        Some(Action::Fetch(r)) => assert_eq!(r.head.referer.as_deref(), Some(A)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_wakeup_is_the_next_politeness_instant_and_none_while_held() {
    let mut h = harness(&[A, "http://a.test/2"]);
    let asked = robots_fetches(&h.schedule(h.t0));
    // Held for robots.txt: nothing to wake up for.
    assert_eq!(h.core.next_wakeup(h.t0), None);
    let (id, url) = asked[0].clone();
    h.feed(response(id, &url, 200, &[], b""), h.t0);
    assert_eq!(h.core.next_wakeup(h.t0), Some(h.at(secs(1)).at));
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    // One fetch of the host at a time: no wake-up while it runs.
    assert_eq!(h.core.next_wakeup(t1), None);
    let done = t1.plus(ms(250));
    h.feed(html(id, &url, ""), done);
    assert_eq!(h.core.next_wakeup(done), Some(done.plus(secs(1)).at));
}

#[test]
fn urls_from_peers_are_scheduled_like_seeds() {
    let mut h = harness(&[]);
    h.shared.outstanding.fetch_add(1, Ordering::AcqRel);
    let item = QueuedUrl {
        url: "http://b.test/from-peer".to_owned(),
        via: Some(A.to_owned()),
        hops: "L".to_owned(),
        attempts: 0,
    };
    let mut out = Vec::new();
    h.core.push("http://b.test", item, h.t0, &mut out);
    assert!(out.is_empty());
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let actions = h.schedule(t1);
    match actions.as_slice() {
        [Action::Fetch(r)] => {
            assert_eq!(r.head.url.as_str(), "http://b.test/from-peer");
            assert_eq!(r.head.referer.as_deref(), Some(A));
        }
        other => panic!("{other:?}"),
    }
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
fn a_robots_fetch_that_takes_the_last_slot_ends_the_pass() {
    let mut h = harness_with(
        &[A, "http://b.test/"],
        |c| c.concurrency_per_shard = 2,
        |_| {},
    );
    let first = robots_fetches(&h.schedule(h.t0));
    assert_eq!(first.len(), 2);
    // c.test is new; b.test's rules arrive, so one slot is free again.
    h.seed("http://c.test/");
    let b = first
        .iter()
        .find(|(_, u)| u.starts_with("http://b.test"))
        .cloned()
        .expect("b's robots.txt");
    h.feed(response(b.0, &b.1, 200, &[], b""), h.t0);
    assert_eq!(h.core.in_flight(), 1);
    // c.test's turn comes first (queued earlier than b.test's release): its robots.txt
    // takes the last slot, and b.test's page waits for the next pass.
    let actions = h.schedule(h.at(secs(1)));
    assert_eq!(
        robots_fetches(&actions)
            .into_iter()
            .map(|(_, u)| u)
            .collect::<Vec<_>>(),
        vec!["http://c.test/robots.txt".to_owned()]
    );
    assert!(fetches(&actions).is_empty());
    assert_eq!(h.core.in_flight(), 2);
}

#[test]
fn expired_robots_rules_are_revalidated_while_the_host_waits() {
    let mut h = harness(&[A, "http://a.test/2"]);
    let asked = robots_fetches(&h.schedule(h.t0));
    let (id, url) = asked[0].clone();
    h.feed(response(id, &url, 200, &[("ETag", "\"v1\"")], b""), h.t0);
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    h.feed(html(id, &url, ""), t1);
    // A day and more later the rules have expired: the host waits again, and the
    // robots.txt request is conditional.
    let later = h.at(secs(25 * 3600));
    let actions = h.schedule(later);
    assert!(fetches(&actions).is_empty());
    let refresh = match actions.as_slice() {
        [Action::FetchRobots(r)] => r,
        other => panic!("{other:?}"),
    };
    assert_eq!(refresh.head.if_none_match.as_deref(), Some("\"v1\""));
    assert!(h.core.frontier.is_held("http://a.test"));
    let (id, url) = (refresh.id, refresh.head.url.to_string());
    h.feed(response(id, &url, 304, &[], b""), later);
    assert_eq!(h.one_fetch(later.plus(secs(1))).1, "http://a.test/2");
}
