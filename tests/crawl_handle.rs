//! `Crawler::handle().add(urls)` (issue 14): a library crawl of a synthweb world on
//! loopback is handed, while it runs, pages no link reaches; they pass the crawl's one
//! admission (the embedder's `Handler::accept_link` is asked about each, with no
//! referrer, and the one it refuses is never fetched), the others are fetched, a bad
//! URL adds nothing, and the drop directory is empty at the end (the batch was
//! deleted once the final checkpoint held its URLs).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod crawl_support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crawl_support::{crawl_log, ADD_WORLD};
use trawl::engine::{AddError, CrawlConfig, Crawler};
use trawl::handler::Handler;
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

#[test]
fn urls_added_through_the_handle_are_fetched() {
    let tmp = tempfile::tempdir().unwrap();
    let mut sw = ADD_WORLD.start_with(&tmp.path().join("web"), &[], false);
    let out = tmp.path().join("crawl");
    let mut config = CrawlConfig::new(&out);
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
