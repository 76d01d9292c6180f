//! `Crawler::handle().add(urls)` (issue 14): a library crawl of a synthweb world on
//! loopback is handed, while it runs, pages no link reaches; they pass the crawl's one
//! admission (the embedder's `Handler::accept_link` is asked about each, with no
//! referrer, and the one it refuses is never fetched), the others are fetched, a bad
//! URL adds nothing, and the drop directory is empty at the end (the batch was
//! deleted once the final checkpoint held its URLs).
//!
//! The handle's controls (issue 30): a crawl paused before it starts fetches nothing
//! until resumed, a checkpoint asked for commits, live stats run, a stop ends the
//! crawl `stopped`; pages carry their links, address and time, and the batch link
//! hook is asked once per page.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod crawl_support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crawl_support::{crawl_log, Synthweb, ADD_WORLD};
use trawl::engine::{AddError, CrawlConfig, Crawler};
use trawl::handler::{Handler, Page};
use url::Url;

/// Records the URLs `accept_link` is asked about with no referrer (added ones), and
/// refuses `refuse`.
struct Gate {
    refuse: String,
    asked_unreferred: Mutex<Vec<String>>,
}

impl Handler for Gate {
    fn accept_link(&self, from: &str, link: &Url) -> bool {
        if from.is_empty() {
            self.asked_unreferred
                .lock()
                .unwrap()
                .push(link.as_str().to_owned());
        }
        link.as_str() != self.refuse
    }
}

/// A crawl of the server's web into `out`: its seeds and hosts, loopback allowed.
fn config_of(sw: &Synthweb, out: &std::path::Path) -> CrawlConfig {
    let mut config = CrawlConfig::new(out);
    config.seeds = std::fs::read_to_string(sw.path("seeds.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect();
    let hosts = std::fs::read_to_string(sw.path("hosts.txt")).unwrap();
    config
        .fetcher
        .dns
        .overrides
        .extend(trawl::net::parse_hosts_file(&hosts).unwrap());
    config.fetcher.allow_private_addresses = true;
    config
}

#[test]
fn urls_added_through_the_handle_are_fetched() {
    let tmp = tempfile::tempdir().unwrap();
    let mut sw = ADD_WORLD.start_with(&tmp.path().join("web"), &[], false);
    let out = tmp.path().join("crawl");
    let mut config = config_of(&sw, &out);
    config.delay = Duration::from_millis(60);
    config.seen_capacity = 100_000;
    config.progress_interval = Duration::ZERO;
    config.from = Some("ops@example.org".to_owned());
    let url = |path: String| format!("http://h000001.synth.test:{}{path}", sw.port);
    let hidden: Vec<String> = (0..3)
        .map(|k| url(format!("/hidden/comment/{k}")))
        .collect();
    let gate = Arc::new(Gate {
        refuse: hidden[2].clone(),
        asked_unreferred: Mutex::new(Vec::new()),
    });
    let crawler = Crawler::builder()
        .config(config)
        .handler(gate.clone())
        .build()
        .unwrap();
    let handle = crawler.handle();

    let crawl = std::thread::spawn(move || crawler.run());
    let deadline = Instant::now() + Duration::from_secs(20);
    while !out.join("start.json").is_file() {
        assert!(Instant::now() < deadline, "the crawl did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let bad = handle.add(["http://h000001.synth.test/x", "not a url"]);
    assert!(
        matches!(bad, Err(AddError::BadUrl { index: 1, .. })),
        "{bad:?}"
    );
    assert_eq!(handle.add(&hidden).unwrap(), 3);
    let stats = crawl.join().unwrap().unwrap();
    sw.stop();
    assert_eq!(stats.finish, "exhausted");

    let log = crawl_log(&out);
    // The hook was asked about each added URL, as about a link; the seeds are not
    // asked (they are not admitted, they start the crawl).
    let mut asked = gate.asked_unreferred.lock().unwrap().clone();
    asked.sort();
    assert_eq!(asked, hidden);
    for u in &hidden[..2] {
        assert!(
            log.iter()
                .any(|r| r["url"].as_str() == Some(u.as_str()) && r["status"] == 200),
            "{u} not fetched"
        );
    }
    assert!(
        !log.iter().any(|r| r["url"].as_str() == Some(&hidden[2])),
        "the URL the handler refused was fetched"
    );
    assert!(
        !log.iter()
            .any(|r| r["url"] == "http://h000001.synth.test/x"),
        "a URL of a refused add was fetched"
    );
    let left: Vec<_> = std::fs::read_dir(out.join("add")).unwrap().collect();
    assert!(left.is_empty(), "batch files left: {left:?}");
}

/// Counts pages (checking their fields) and batch hook calls.
#[derive(Default)]
struct Counting {
    pages: AtomicU64,
    pages_with_links: AtomicU64,
    batches: AtomicU64,
    links_asked: AtomicU64,
}

impl Handler for Counting {
    fn on_response(&self, page: &Page<'_>) {
        self.pages.fetch_add(1, Ordering::Relaxed);
        assert_eq!(page.ip, Some("127.0.0.1".parse().unwrap()));
        let age = std::time::SystemTime::now()
            .duration_since(page.fetched_at)
            .unwrap();
        assert!(age < Duration::from_secs(60), "{age:?}");
        if !page.links.is_empty() {
            self.pages_with_links.fetch_add(1, Ordering::Relaxed);
            assert!(page.links.iter().all(|l| l.starts_with("http")));
        }
    }

    fn accept_links(&self, from: &str, links: &[Url], keep: &mut [bool]) {
        assert!(!from.is_empty());
        assert_eq!(links.len(), keep.len());
        assert!(keep.iter().all(|k| *k));
        self.batches.fetch_add(1, Ordering::Relaxed);
        self.links_asked
            .fetch_add(links.len() as u64, Ordering::Relaxed);
    }
}

#[test]
fn the_handle_pauses_checkpoints_reports_and_stops() {
    let tmp = tempfile::tempdir().unwrap();
    let mut sw = ADD_WORLD.start_with(&tmp.path().join("web"), &[], false);
    let out = tmp.path().join("crawl");
    let mut config = config_of(&sw, &out);
    config.delay = Duration::from_millis(200);
    config.seen_capacity = 100_000;
    config.progress_interval = Duration::ZERO;
    config.checkpoint_interval = Duration::ZERO;
    let counting = Arc::new(Counting::default());
    let crawler = Crawler::builder()
        .config(config)
        .handler(counting.clone())
        .build()
        .unwrap();
    let handle = crawler.handle();
    assert!(handle.stats().is_none(), "stats before the start");
    handle.pause();
    assert!(handle.is_paused());
    let crawl = std::thread::spawn(move || crawler.run());
    let deadline = Instant::now() + Duration::from_secs(20);
    while !out.join("start.json").is_file() {
        assert!(Instant::now() < deadline, "the crawl did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    let paused = handle.stats().expect("live stats");
    assert_eq!(paused.finish, "running");
    assert_eq!(paused.pages, 0, "fetched while paused");
    assert_eq!(counting.pages.load(Ordering::Relaxed), 0);
    handle.resume();
    while handle.stats().unwrap().pages < 3 {
        assert!(Instant::now() < deadline, "no pages after resume");
        std::thread::sleep(Duration::from_millis(20));
    }
    let epoch = handle.checkpoint().expect("a committed checkpoint");
    assert!(epoch >= 1);
    handle.stop();
    let stats = crawl.join().unwrap().unwrap();
    sw.stop();
    assert_eq!(stats.finish, "stopped");
    assert_eq!(handle.stats().unwrap().pages, stats.pages);
    let fetched = crawl_log(&out)
        .iter()
        .filter(|r| r["outcome"] == "fetched")
        .count() as u64;
    assert_eq!(counting.pages.load(Ordering::Relaxed), fetched);
    // One batch call per page whose links had new ones, never one per link.
    let batches = counting.batches.load(Ordering::Relaxed);
    assert!(batches >= 1);
    assert!(batches <= counting.pages_with_links.load(Ordering::Relaxed));
    assert!(counting.links_asked.load(Ordering::Relaxed) >= batches);
}
