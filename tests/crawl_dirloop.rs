//! End to end: a directory that lists itself (synthweb's `/ls/` trap: an Apache-style
//! listing linking `sub/`, `alt/` and `index.html` relative to itself, the same at
//! every level) costs trawl at most 20 fetches, while every page of the ordinary hosts
//! is still fetched and synthweb's referee passes.
//!
//! The URL filters alone (a segment at most 3 times, no run repeated 3 times) would
//! let 134 URLs of the loop through (67 listings, 67 `index.html`); the duplicate-content
//! rule, with the page's own directory abstracted from its fingerprint
//! (`html::fingerprint::page_fingerprint`), stops it one level below `/ls/`: 7 fetches.
//! With the byte-exact fingerprint this test fails (35 fetches, cut only by the per-host
//! budget of 40). Needs the synthweb binary (`cargo build -p synthweb`); about 5 s.

#![allow(clippy::unwrap_used)]

mod crawl_support;

use crawl_support::{crawl, crawl_log, fetched_urls, World};

#[test]
fn self_listing_directory_loop_costs_at_most_20_fetches() {
    let tmp = tempfile::tempdir().unwrap();
    let budget = 40;
    let world = World {
        hosts: 12,
        profile: Some("default,traps"),
        pages_per_host: "5-10",
        out_degree: Some("3-6"),
        budget: Some(budget),
    };
    let mut sw = world.start(&tmp.path().join("web"), &[]);
    let out = tmp.path().join("crawl");
    crawl(&sw, &out, budget, 0, &[]);
    sw.stop();

    let (passed, report) = sw.check(0, 1);
    assert!(
        passed,
        "referee failed:\n{}",
        report.chars().take(4000).collect::<String>()
    );

    let log = crawl_log(&out);
    let fetched = fetched_urls(&log);
    let loop_prefix = "http://h000002.synth.test:";
    let in_loop: Vec<&String> = fetched
        .iter()
        .filter(|u| u.starts_with(loop_prefix) && u.contains("/ls/"))
        .collect();
    let requests_in_loop = log
        .iter()
        .filter(|r| r.get("status").is_some_and(|s| !s.is_null()))
        .filter_map(|r| r["url"].as_str())
        .filter(|u| u.starts_with(loop_prefix) && u.contains("/ls/"))
        .count();
    assert!(in_loop.len() >= 4, "the loop was not entered: {in_loop:?}");
    assert!(
        requests_in_loop <= 20,
        "the loop cost {requests_in_loop} fetches: {in_loop:?}"
    );
    // The deeper listings were recognized as copies of the first level.
    let duplicates: Vec<&str> = log
        .iter()
        .filter(|r| {
            r["url"].as_str().is_some_and(|u| u.contains("/ls/sub/"))
                && r["annotations"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|x| x == "duplicate"))
        })
        .filter_map(|r| r["url"].as_str())
        .collect();
    assert!(
        duplicates.iter().any(|u| u.ends_with("/ls/sub/sub/")),
        "{duplicates:?}"
    );

    // Every page the manifest requires is fetched: the ordinary hosts' pages and the
    // other traps are unaffected.
    let (m, f) = sw.manifest();
    let missed: Vec<_> = m.difference(&fetched).take(5).collect();
    assert!(missed.is_empty(), "M URLs not fetched: {missed:?}");
    assert!(f.intersection(&fetched).next().is_none());
    // Hosts 1-7 are the traps; 0 and 8-11 are ordinary.
    let host_index = |u: &str| -> Option<u32> {
        let name = u.split("://").nth(1)?.split('.').next()?;
        name.strip_prefix('h')?.parse().ok()
    };
    let ordinary = m
        .iter()
        .filter(|u| host_index(u).is_some_and(|i| i == 0 || i >= 8))
        .count();
    assert!(ordinary > 20, "only {ordinary} ordinary pages in M");
    eprintln!(
        "loop: {requests_in_loop} fetches ({} URLs); all {} M URLs fetched, {ordinary} \
         of them on ordinary hosts",
        in_loop.len(),
        m.len()
    );
}
