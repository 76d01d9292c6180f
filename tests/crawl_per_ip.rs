//! End to end: the per-IP connection cap. synthweb serves 60 host names on six loopback
//! addresses (`--bind-range 127.0.3.0/29`, ten hosts each); trawl crawls them with two
//! shards (so the hosts of one address live in both shards), two connections per host,
//! no delay and high concurrency, under `--per-ip-connections 3`. The referee then
//! checks the server's request log with `--per-ip-connections 3` (passes) and, as a
//! negative control, with a limit of 1 (fails: the connections to one address really
//! were concurrent, so the pass is not vacuous).
//!
//! Needs `cargo test --workspace` (synthweb built); no WARC output (not under test).

#![allow(clippy::unwrap_used)]

mod crawl_support;

use std::process::Command;

use crawl_support::{crawl_args, crawl_log, fetched_urls, synthweb_bin, Synthweb};

/// `synthweb check` with per-host and per-IP limits; (passed, report text).
fn referee(sw: &Synthweb, per_host: u32, per_ip: u32) -> (bool, String) {
    let out = Command::new(synthweb_bin())
        .current_dir(&sw.dir)
        .args(["check", "--log", "req.log", "--manifest", "manifest.txt"])
        .args(["--delay-ms", "0"])
        .args(["--per-host-connections", &per_host.to_string()])
        .args(["--per-ip-connections", &per_ip.to_string()])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// The "at most N simultaneous connections on one" figure of the report.
fn max_per_address(report: &str) -> u32 {
    report
        .lines()
        .find_map(|l| l.strip_prefix("server addresses: "))
        .and_then(|l| l.split("at most ").nth(1))
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no per-address figure in:\n{report}"))
}

#[test]
fn per_ip_cap_holds_across_shards() {
    let tmp = tempfile::tempdir().unwrap();
    let budget = 60;
    let mut sw = Synthweb::start(
        &tmp.path().join("web"),
        &[
            "--hosts",
            "60",
            "--bind-range",
            "127.0.3.0/29",
            "--profile",
            "default",
            "--pages-per-host",
            "4-8",
            "--page-size",
            "20000-80000",
            "--out-degree",
            "5-10",
            "--seed-stride",
            "1",
            "--manifest-max-pages-per-host",
            &budget.to_string(),
        ],
    );
    let hosts = std::fs::read_to_string(sw.path("hosts.txt")).unwrap();
    let addresses: std::collections::BTreeSet<&str> = hosts
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(addresses.len(), 6, "{addresses:?}");

    let out = tmp.path().join("crawl");
    let mut args = crawl_args(&out, budget, 0);
    args.extend(
        [
            "--shards",
            "2",
            "--concurrency",
            "128",
            "--per-host-connections",
            "2",
            "--per-ip-connections",
            "3",
            "--no-warc",
        ]
        .map(str::to_owned),
    );
    let status = Command::new(crawl_support::trawl_bin())
        .current_dir(&sw.dir)
        .args(&args)
        .status()
        .unwrap();
    assert!(status.success(), "trawl crawl failed: {status}");
    sw.stop();

    let (passed, report) = referee(&sw, 2, 3);
    if !passed {
        let kept = tmp.keep();
        panic!(
            "referee failed at --per-ip-connections 3 (files kept in {}):\n{}",
            kept.display(),
            report.chars().take(6000).collect::<String>()
        );
    }
    let max = max_per_address(&report);
    eprintln!("most simultaneous connections on one address: {max}");
    assert!(max <= 3, "{report}");

    // Negative control: a stricter limit fails, so connections really overlapped.
    let (strict_passed, strict) = referee(&sw, 2, 1);
    if strict_passed || !strict.contains("addresses over the connection limit") {
        let kept = tmp.keep();
        panic!(
            "referee did not fail at --per-ip-connections 1 (files kept in {}):\n{strict}",
            kept.display()
        );
    }

    // Nothing waited out its per-IP slot: every M URL is in the crawl log.
    let (m, _) = sw.manifest();
    let log = crawl_log(&out);
    let fetched = fetched_urls(&log);
    let missed: Vec<_> = m.difference(&fetched).take(5).collect();
    assert!(missed.is_empty(), "M URLs not fetched: {missed:?}");
}
