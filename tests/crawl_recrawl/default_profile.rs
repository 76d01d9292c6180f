//! A re-crawl of synthweb's default profile (issue 14): redirects, redirect chains,
//! error pages, 429/503 answers, traps and quirky pages beside the ordinary ones, on
//! loopback, the second server on the first one's port.
//!
//! (a) the unchanged web: of the requests for pages (URLs that answer 2xx or 304), at
//!     least 95% conditional and answered 304, page body bytes at most 5% of the first
//!     crawl's; redirects and error URLs carry no validators and are asked again
//!     unconditionally (the referee counts them apart);
//! (b) `--change-rate 10%`: `stats.json`'s changed, gone and new equal synthweb's own
//!     list of changes, and each listed URL has its verdict in the crawl log.

use std::collections::BTreeMap;
use std::path::Path;

use crate::crawl_support::{annotations, crawl_args, crawl_log, run_trawl, stats_json, Synthweb};

const WORLD: [&str; 2] = ["--hosts", "3"];

fn crawl(dir: &Path, out: &str, extra: &[&str]) {
    let mut args = crawl_args(&dir.join(out), 100_000, 5);
    args.extend(["--scope", "seed-hosts", "--checkpoint-secs", "1"].map(String::from));
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    run_trawl(dir, &args);
}

/// The numbers of a referee report line that starts with `prefix`.
fn figures(report: &str, prefix: &str) -> Vec<u64> {
    let line = report
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} line in the referee's report:\n{report}"));
    line.split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect()
}

#[test]
fn a_recrawl_of_the_default_profile_asks_pages_conditionally_and_counts_the_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut web = Synthweb::start_on(dir, 0, &WORLD, true);
    let port = web.port;
    crawl(dir, "c1", &[]);
    web.stop();
    let (passed, report) = web.check(5, 1);
    assert!(passed, "first crawl:\n{report}");
    let first_bytes = figures(&report, "conditional:")[4];

    // (a) The same web again.
    let mut web = Synthweb::start_on(dir, port, &WORLD, true);
    crawl(dir, "c2", &["--recrawl", "c1"]);
    web.stop();
    let (passed, report) = web.check(5, 1);
    assert!(passed, "unchanged re-crawl:\n{report}");
    let all = figures(&report, "conditional:");
    let pages = figures(&report, "pages:");
    let (conditional, requests, not_modified) = (pages[0], pages[1], pages[2]);
    eprintln!(
        "crawl_recrawl_default (a): {conditional} of {requests} requests for pages conditional, \
         {not_modified} answered 304 ({} of {} requests in all conditional); \
         body bytes {} against {first_bytes}",
        all[0], all[1], all[4]
    );
    assert!(requests > 100, "{report}");
    assert!(conditional * 100 >= requests * 95, "{report}");
    assert!(not_modified * 100 >= requests * 95, "{report}");
    assert!(all[4] * 100 <= first_bytes * 5, "{report}");
    let rc = stats_json(&dir.join("c2"))["recrawl"].clone();
    assert_eq!(rc["not_modified"].as_u64(), Some(not_modified), "{rc}");
    assert_eq!(rc["changed"].as_u64(), Some(0), "{rc}");

    // (b) Generation 1, 10% changed, gone or new, against the first crawl.
    let mut web = Synthweb::start_on(
        dir,
        port,
        &[
            WORLD[0],
            WORLD[1],
            "--change-rate",
            "10%",
            "--changes",
            "changes.txt",
        ],
        true,
    );
    crawl(dir, "c3", &["--recrawl", "c1"]);
    web.stop();
    let (passed, report) = web.check(5, 1);
    assert!(passed, "re-crawl of generation 1:\n{report}");
    let changes = std::fs::read_to_string(dir.join("changes.txt")).unwrap();
    let mut want: BTreeMap<String, &str> = BTreeMap::new();
    for line in changes.lines().skip(1) {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.last() == Some(&"allowed") {
            want.insert(words[1].to_owned(), words[0]);
        }
    }
    let mut verdicts: BTreeMap<String, String> = BTreeMap::new();
    for r in crawl_log(&dir.join("c3")) {
        for a in annotations(&r) {
            if matches!(a.as_str(), "changed" | "gone" | "new") {
                verdicts.insert(r["url"].as_str().unwrap().to_owned(), a);
            }
        }
    }
    for (url, word) in &want {
        assert_eq!(verdicts.get(url).map(String::as_str), Some(*word), "{url}");
    }
    let rc = stats_json(&dir.join("c3"))["recrawl"].clone();
    let count = |w: &str| want.values().filter(|v| **v == w).count() as u64;
    eprintln!(
        "crawl_recrawl_default (b): {rc}; the list: {}",
        changes.lines().next().unwrap()
    );
    assert!(count("changed") > 0 && count("gone") > 0 && count("new") > 0);
    assert_eq!(rc["changed"].as_u64(), Some(count("changed")), "{rc}");
    assert_eq!(rc["gone"].as_u64(), Some(count("gone")), "{rc}");
    assert_eq!(rc["new"].as_u64(), Some(count("new")), "{rc}");
    assert_eq!(verdicts.len(), want.len(), "{verdicts:?}");
}
