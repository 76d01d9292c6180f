//! `examples/pipeline.rs` against a synthweb world on loopback: the example's own
//! `run_pipeline` (the file is included as a module, so this is the code
//! `cargo run --example pipeline` runs) crawls through the library API with a
//! [`trawl::Handler`], and its index must hold one row per HTML page the crawl
//! log shows fetched with a 2xx status, with titles, and no URL its link rule refused.

#![allow(clippy::unwrap_used)]

mod crawl_support;

#[allow(
    dead_code,
    reason = "main and some summary fields are for the example binary"
)]
#[path = "../examples/pipeline.rs"]
mod pipeline;

use std::collections::BTreeSet;

use crawl_support::{crawl_log, World};

#[test]
fn the_pipeline_example_indexes_every_html_page_it_crawls() {
    let tmp = tempfile::tempdir().unwrap();
    let world = World {
        hosts: 4,
        profile: Some("default"),
        pages_per_host: "10-20",
        out_degree: Some("3-8"),
        budget: None,
    };
    let mut sw = world.start(&tmp.path().join("web"), &[]);
    let out = tmp.path().join("pipe");
    let args: Vec<String> = [
        "--seeds",
        &sw.path("seeds.txt").display().to_string(),
        "--hosts-file",
        &sw.path("hosts.txt").display().to_string(),
        "--out",
        &out.display().to_string(),
        "--allow-private-addresses",
        "--same-host",
        "--delay-ms",
        "0",
        "--from",
        "ops@example.org",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let opts = pipeline::Options::parse(&args).unwrap();
    let summary = pipeline::run_pipeline(&opts).unwrap();
    sw.stop();

    let stats = &summary.stats;
    assert_eq!(stats.finish, "exhausted", "{stats:?}");
    assert!(stats.pages > 0);

    // The index: a header and one row per 2xx HTML page, as the crawl log has them.
    let index = std::fs::read_to_string(&summary.index).unwrap();
    let mut lines = index.lines();
    assert_eq!(lines.next(), Some("url\tstatus\tbytes\twords\ttitle"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len() as u64, summary.rows);
    assert!(rows.len() >= 4, "only {} rows:\n{index}", rows.len());
    let log = crawl_log(&out);
    let html_2xx: BTreeSet<String> = log
        .iter()
        .filter(|r| {
            r["status"]
                .as_u64()
                .is_some_and(|s| (200..300).contains(&s))
        })
        .filter(|r| r["media_type"].as_str() == Some("text/html"))
        .map(|r| r["url"].as_str().unwrap().to_owned())
        .collect();
    let indexed: BTreeSet<String> = rows.iter().map(|r| r[0].to_owned()).collect();
    assert_eq!(indexed, html_2xx, "index vs crawl log");
    for r in &rows {
        assert_eq!(r.len(), 5, "{r:?}");
        assert!(r[1].starts_with('2'), "{r:?}");
        assert!(r[2].parse::<u64>().unwrap() > 0, "{r:?}");
        assert!(r[3].parse::<u64>().is_ok(), "{r:?}");
    }
    assert!(
        rows.iter().filter(|r| !r[4].is_empty()).count() * 2 >= rows.len(),
        "most synthweb pages have a <title>:\n{index}"
    );

    // on_outcome saw every log line; the link rule refused query URLs (synthweb links
    // some), so none was fetched, and no link left its page's host.
    let seen: u64 = summary.outcomes.iter().map(|(_, n)| n).sum();
    assert_eq!(seen, log.len() as u64);
    assert!(summary.links_rejected > 0, "synthweb pages link query URLs");
    for r in &log {
        let url = r["url"].as_str().unwrap();
        assert!(
            !url.contains('?'),
            "a query URL got through the rule: {url}"
        );
        if let Some(via) = r["via"].as_str() {
            let host = |u: &str| url::Url::parse(u).unwrap().host_str().map(str::to_owned);
            assert_eq!(host(url), host(via), "{url} via {via} left its host");
        }
    }
}
