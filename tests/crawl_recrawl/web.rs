//! The test's web (synthweb's benchmark mode), its referee, and the crawls of it.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::crawl_support::{self, annotations, crawl_log, synthweb_bin, Synthweb};

pub const WORLD: [&str; 8] = [
    "--hosts",
    "4",
    "--pages-per-host",
    "60-100",
    "--out-degree",
    "5-15",
    "--page-bytes",
    "6000",
];

/// A synthweb server of the test's world (`WORLD` and `extra`) in `dir` on `port` (0:
/// any free one; a re-crawl's server takes the first one's, absolute links carry it).
pub fn start_web(dir: &Path, port: u16, extra: &[&str]) -> Synthweb {
    let world: Vec<&str> = WORLD.iter().chain(extra).copied().collect();
    Synthweb::start_on(dir, port, &world, true)
}

/// `synthweb check` of the request log and manifest in `dir`: passed, and its report.
pub fn referee(dir: &Path) -> (bool, String) {
    let out = Command::new(synthweb_bin())
        .current_dir(dir)
        .args(["check", "--log", "req.log", "--manifest", "manifest.txt"])
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The referee's figures: (page requests, conditional, answered 304, body bytes).
pub fn conditional(web: &Synthweb) -> (u64, u64, u64, u64) {
    let (_, text) = referee(&web.dir);
    let line = text
        .lines()
        .find(|l| l.starts_with("conditional:"))
        .unwrap_or_else(|| panic!("no conditional line in the referee's report:\n{text}"));
    // "conditional: C of N page requests conditional, K answered 304; B page body bytes"
    let n: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    let (c, total, k, b) = (n[0], n[1], n[2], n[4]);
    (total, c, k, b)
}

pub fn crawl_args(out: &Path) -> Vec<String> {
    [
        "crawl",
        "--hosts-file",
        "hosts.txt",
        "--allow-private-addresses",
        "--from",
        "ops@example.org",
        "--max-crawl-delay-secs",
        "0",
        "--robots-retry-secs",
        "1",
        "--max-retry-after-secs",
        "1",
        "--timeout-ms",
        "4000",
        "--seen-capacity",
        "100000",
        "--progress-secs",
        "0",
        "--scope",
        "seed-hosts",
        "--checkpoint-secs",
        "1",
        "--out",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .chain([out.display().to_string()])
    .collect()
}

pub fn run(dir: &Path, args: &[String], extra: &[&str]) {
    let all: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .chain(extra.iter().copied())
        .collect();
    crawl_support::run_trawl(dir, &all);
}

/// A first crawl of the base web; returns the server's port and its request figures.
pub fn first_crawl(web_dir: &Path, out: &Path) -> (u16, (u64, u64, u64, u64)) {
    let mut web = start_web(web_dir, 0, &[]);
    run(
        web_dir,
        &crawl_args(out),
        &["--seeds", "seeds.txt", "--delay-ms", "5"],
    );
    web.stop();
    (web.port, conditional(&web))
}

/// Page lines (not robots.txt) of a crawl log, by URL.
pub fn page_lines(out: &Path) -> BTreeMap<String, Vec<serde_json::Value>> {
    let mut by_url: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
    for r in crawl_log(out) {
        if r["hops"].as_str() == Some("P") || r["status"].is_null() {
            continue;
        }
        by_url
            .entry(r["url"].as_str().unwrap().to_owned())
            .or_default()
            .push(r);
    }
    by_url
}

pub fn has(r: &serde_json::Value, note: &str) -> bool {
    annotations(r).iter().any(|a| a == note)
}
