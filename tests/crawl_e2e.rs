//! End to end: trawl crawls a small synthweb world with the `default`, `traps` and
//! `hostile` profiles together, and synthweb's referee judges the server's request log:
//! every manifest URL fetched, nothing forbidden, robots.txt first, politeness held,
//! identification present. `warcio check` then reads every WARC file written.
//!
//! The world is small (24 hosts, 5-10 pages each, per-host budget 60) and politeness
//! delay 0, so the test takes about 40 s, most of it the hostile hosts' timeouts and
//! the failure backoff; needs `cargo test --workspace` (synthweb built) and warcio.

#![allow(clippy::unwrap_used)]

mod crawl_support;

use std::process::Command;

use crawl_support::{crawl_args, crawl_log, fetched_urls, warcio_check_dir, Synthweb};

#[test]
fn referee_passes_on_default_traps_and_hostile() {
    let tmp = tempfile::tempdir().unwrap();
    let budget = 60;
    let mut sw = Synthweb::start(
        &tmp.path().join("web"),
        &[
            "--hosts",
            "24",
            "--profile",
            "default,traps,hostile",
            "--pages-per-host",
            "5-10",
            "--out-degree",
            "5-10",
            "--seed-stride",
            "4",
            "--manifest-max-pages-per-host",
            &budget.to_string(),
        ],
    );
    let out = tmp.path().join("crawl");
    let status = Command::new(crawl_support::trawl_bin())
        .current_dir(&sw.dir)
        .args(crawl_args(&out, budget, 0))
        .status()
        .unwrap();
    assert!(status.success(), "trawl crawl failed: {status}");
    sw.stop();

    let (passed, report) = sw.check(0, 1);
    if !passed {
        drop(sw);
        let kept = tmp.keep();
        panic!(
            "referee failed (files kept in {}):\n{}",
            kept.display(),
            report.chars().take(6000).collect::<String>()
        );
    }

    // The crawl log agrees with the manifest too.
    let (m, f) = sw.manifest();
    let fetched = fetched_urls(&crawl_log(&out));
    let missed: Vec<_> = m.difference(&fetched).take(5).collect();
    assert!(
        missed.is_empty(),
        "M URLs the log does not show fetched: {missed:?}"
    );
    let forbidden: Vec<_> = f.intersection(&fetched).take(5).collect();
    assert!(forbidden.is_empty(), "F URLs fetched: {forbidden:?}");

    let stats: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["finish"], "exhausted", "{stats}");
    warcio_check_dir(&out.join("warc"));
}
