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

use crawl_support::{crawl, crawl_log, fetched_urls, stats_json, warcio_check_dir, World};

#[test]
fn referee_passes_on_default_traps_and_hostile() {
    let tmp = tempfile::tempdir().unwrap();
    let budget = 60;
    let world = World {
        hosts: 24,
        profile: Some("default,traps,hostile"),
        pages_per_host: "5-10",
        out_degree: Some("5-10"),
        budget: Some(budget),
    };
    let mut sw = world.start(&tmp.path().join("web"), &["--seed-stride", "4"]);
    let out = tmp.path().join("crawl");
    crawl(&sw, &out, budget, 0, &[]);
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

    let stats: serde_json::Value = stats_json(&out);
    assert_eq!(stats["finish"], "exhausted", "{stats}");
    warcio_check_dir(&out.join("warc"));
}
