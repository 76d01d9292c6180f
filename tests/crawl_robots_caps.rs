//! End to end (issue 11, "no silent limits"), robots.txt side: `trawl crawl` against
//! two loopback servers. One serves a robots.txt with a 20,000-byte line (past the
//! 16,663 bytes Google and trawl read) and a line of an unknown field; the other a
//! robots.txt of 600 KB (past the 500 KiB parse cap) whose `disallow` comes first.
//! The robots.txt fetches' crawl-log lines carry `robots-long-lines:1` /
//! `robots-ignored-lines:1` and `robots-truncated:BYTES`, stats.json counts one of
//! each, the rules read before the caps are obeyed, and a `--resume` of the finished
//! crawl starts from the checkpoint's counts instead of 0 (as do the page
//! truncation counters, and the manifest records `--disk-reserve`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod crawl_support;
mod support;

use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;

use crawl_support::{annotations, crawl_log, fetched_urls, stats_json as stats, trawl_bin};
use support::{read_head, ScriptServer};

/// Bytes of the long robots.txt line's path.
const LONG_LINE_BYTES: usize = 20_000;
/// Size of the oversized robots.txt (the parse cap is 500 KiB = 512,000 bytes).
const BIG_ROBOTS_BYTES: usize = 600_000;

fn long_line_robots() -> String {
    format!(
        "user-agent: *\ndisallow: /private\nclean-param: ref\ndisallow: /{}\n",
        "x".repeat(LONG_LINE_BYTES)
    )
}

fn big_robots() -> String {
    let mut body = String::from("user-agent: *\ndisallow: /blocked\n");
    while body.len() < BIG_ROBOTS_BYTES {
        body.push_str("# padding padding padding padding padding padding padding\n");
    }
    body
}

/// A site: `/` links to `/private.html`, `/blocked.html` and `/open.html`, each a
/// leaf; robots.txt is `robots`. `name` makes the pages of the two sites differ (the
/// same content twice would be a duplicate whose links are not followed).
fn site(mut stream: TcpStream, name: &str, robots: &str) {
    while let Some(head) = read_head(&mut stream) {
        let line = String::from_utf8_lossy(&head);
        let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
        let (status, kind, body) = match path.as_str() {
            "/robots.txt" => ("200 OK", "text/plain", robots.to_owned()),
            "/" => (
                "200 OK",
                "text/html",
                format!(
                    "<h1>{name}</h1><a href=/private.html>p</a><a href=/blocked.html>b</a>\
                     <a href=/open.html>o</a>"
                ),
            ),
            "/private.html" | "/blocked.html" | "/open.html" => {
                ("200 OK", "text/html", format!("<p>{name} {path}</p>"))
            }
            _ => ("404 Not Found", "text/plain", String::from("none")),
        };
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        if stream.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

fn crawl(seeds: &[&str], out: &Path, resume: bool) -> std::process::Output {
    let mut cmd = Command::new(trawl_bin());
    cmd.arg("crawl");
    for seed in seeds {
        cmd.args(["--seed", seed]);
    }
    cmd.args([
        "--allow-private-addresses",
        "--from",
        "ops@example.org",
        "--delay-ms",
        "0",
        "--max-pages",
        "100",
        "--timeout-ms",
        "10000",
        "--seen-capacity",
        "100000",
        "--progress-secs",
        "0",
        "--checkpoint-secs",
        "0",
        "--disk-reserve",
        "0",
        "--out",
    ])
    .arg(out);
    if resume {
        cmd.arg("--resume");
    }
    cmd.output().expect("run trawl crawl")
}

fn annotations_of(log: &[serde_json::Value], url: &str) -> Vec<String> {
    let record = log
        .iter()
        .find(|r| r["url"].as_str() == Some(url) && !r["status"].is_null())
        .unwrap_or_else(|| panic!("{url} fetched in the crawl log"));
    annotations(record)
}

#[test]
fn robots_txt_caps_are_logged_counted_and_kept_across_resume() {
    let long = ScriptServer::start(|s, _| site(s, "long", &long_line_robots()));
    let big = ScriptServer::start(|s, _| site(s, "big", &big_robots()));
    let long_seed = long.url("/").to_string();
    let big_seed = big.url("/").to_string();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");

    let run = crawl(&[&long_seed, &big_seed], &out, false);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let log = crawl_log(&out);
    let notes = annotations_of(&log, long.url("/robots.txt").as_str());
    assert!(
        notes.contains(&"robots-long-lines:1".to_owned()),
        "long-line robots.txt: {notes:?}"
    );
    assert!(
        notes.contains(&"robots-ignored-lines:1".to_owned()),
        "{notes:?}"
    );
    assert!(
        !notes.iter().any(|n| n.starts_with("robots-truncated")),
        "{notes:?}"
    );
    let notes = annotations_of(&log, big.url("/robots.txt").as_str());
    let unread: usize = notes
        .iter()
        .find_map(|n| n.strip_prefix("robots-truncated:"))
        .unwrap_or_else(|| panic!("big robots.txt: {notes:?}"))
        .parse()
        .unwrap();
    // Everything past 512,000 bytes, and the cut line before it, went unread.
    let body = big_robots().len();
    assert!(
        unread >= body - 512_000 && unread < body - 512_000 + 100,
        "{unread} of {body}"
    );
    assert!(
        !notes.iter().any(|n| n.starts_with("robots-long-lines")),
        "{notes:?}"
    );

    // The rules before the caps are obeyed.
    let fetched = fetched_urls(&log);
    assert!(fetched.contains(long.url("/open.html").as_str()));
    assert!(!fetched.contains(long.url("/private.html").as_str()));
    assert!(
        fetched.contains(big.url("/open.html").as_str()),
        "{fetched:?}"
    );
    assert!(!fetched.contains(big.url("/blocked.html").as_str()));

    let s = stats(&out);
    assert_eq!(s["robots_truncated"], 1, "{s}");
    assert_eq!(s["robots_long_lines"], 1, "{s}");

    // The final checkpoint carries the counters and the recorded --disk-reserve.
    let current = std::fs::read_to_string(out.join("checkpoint/CURRENT")).unwrap();
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(
            out.join("checkpoint")
                .join(current.trim())
                .join("manifest.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(manifest["counters"]["robots_truncated"], 1, "{manifest}");
    assert_eq!(manifest["counters"]["robots_long_lines"], 1, "{manifest}");
    assert_eq!(manifest["config"]["disk_reserve"], "0", "{manifest}");

    // A resume of the finished crawl fetches nothing more and counts on from there.
    let run = crawl(&[], &out, true);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let s = stats(&out);
    assert!(!s["resumed_from"].is_null(), "{s}");
    assert_eq!(s["robots_truncated"], 1, "after --resume: {s}");
    assert_eq!(s["robots_long_lines"], 1, "after --resume: {s}");
}
