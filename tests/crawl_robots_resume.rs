//! The robots cache survives a resume: a synthweb crawl (checkpoints every second) is
//! stopped with SIGTERM, resumed, killed with SIGKILL, and resumed to the end. Every
//! host whose robots.txt had been fetched (and settled: 2xx or 4xx) before a
//! checkpoint the next run resumed from is asked for robots.txt exactly once in the
//! whole test, as synthweb's request log shows; the crawl still fetches every manifest
//! M URL and none of F, and each checkpoint verifies with `trawl inspect`, robots files
//! included.

#![allow(clippy::unwrap_used)]

mod crawl_support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crawl_support::{crawl_args, crawl_log, fetched_urls, signal, stats_json, trawl_bin, Synthweb};

/// Hosts (`http://host:port`) whose robots.txt got a settled answer in the part of the
/// crawl log the current checkpoint covers.
fn robots_settled_before_checkpoint(out: &Path) -> BTreeSet<String> {
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(
            out.join("checkpoint")
                .join(
                    std::fs::read_to_string(out.join("checkpoint/CURRENT"))
                        .unwrap()
                        .trim(),
                )
                .join("manifest.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let upto = manifest["positions"]["crawl_log_bytes"].as_u64().unwrap() as usize;
    let log = std::fs::read(out.join("crawl.log.jsonl")).unwrap();
    let mut hosts = BTreeSet::new();
    for line in String::from_utf8_lossy(&log[..upto.min(log.len())]).lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        let Some(url) = r["url"].as_str().and_then(|u| url::Url::parse(u).ok()) else {
            continue;
        };
        let status = r["status"].as_u64().unwrap_or(0);
        let settled =
            (200..300).contains(&status) || ((400..500).contains(&status) && status != 429);
        if url.path() == "/robots.txt" && settled {
            hosts.insert(url.origin().ascii_serialization());
        }
    }
    hosts
}

fn inspect_ok(out: &Path) -> serde_json::Value {
    let o = Command::new(trawl_bin())
        .args(["inspect", "--json", "--no-log"])
        .arg(out)
        .output()
        .unwrap();
    let d: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        o.status.success(),
        "inspect: {}",
        serde_json::to_string_pretty(&d["verification"]).unwrap()
    );
    d
}

#[test]
fn a_resumed_crawl_does_not_refetch_robots_txt() {
    let tmp = tempfile::tempdir().unwrap();
    let budget = 1000;
    let delay_ms = 250;
    let mut sw = Synthweb::start(
        &tmp.path().join("web"),
        &[
            "--hosts",
            "10",
            "--profile",
            "default",
            "--pages-per-host",
            "25-35",
            "--out-degree",
            "4-10",
            "--manifest-max-pages-per-host",
            &budget.to_string(),
        ],
    );
    let out = tmp.path().join("crawl");
    let mut args = crawl_args(&out, budget, delay_ms);
    args.extend(["--checkpoint-secs".to_owned(), "1".to_owned()]);
    let spawn = |resume: bool| {
        let mut cmd = Command::new(trawl_bin());
        cmd.current_dir(&sw.dir).args(&args).stderr(Stdio::null());
        if resume {
            cmd.arg("--resume");
        }
        cmd.spawn().unwrap()
    };
    let wait = |child: &mut std::process::Child, secs: u64| {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(s) = child.try_wait().unwrap() {
                return s;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("trawl did not finish in {secs} s");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    };

    // Run 1: SIGTERM (graceful: a final checkpoint).
    let mut child = spawn(false);
    std::thread::sleep(Duration::from_millis(2500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the world is too small"
    );
    signal(child.id(), "TERM");
    assert!(wait(&mut child, 30).success());
    let mut known = robots_settled_before_checkpoint(&out);
    assert!(!known.is_empty(), "no robots.txt fetched in 2.5 s");
    let d = inspect_ok(&out);
    assert!(
        d["robots"]["hosts"].as_u64().unwrap() >= known.len() as u64,
        "{}",
        d["robots"]
    );

    // Run 2: resumed, then SIGKILL after a few checkpoints.
    let mut child = spawn(true);
    std::thread::sleep(Duration::from_millis(2500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the world is too small"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    known.extend(robots_settled_before_checkpoint(&out));
    inspect_ok(&out);

    // Run 3: resumed to the end.
    let mut child = spawn(true);
    assert!(wait(&mut child, 120).success());
    sw.stop();

    let mut robots_requests: BTreeMap<String, usize> = BTreeMap::new();
    for line in std::fs::read_to_string(sw.path("req.log")).unwrap().lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        if r["target"] == "/robots.txt" {
            let host = r["host"].as_str().unwrap().to_owned();
            *robots_requests.entry(host).or_default() += 1;
        }
    }
    let origin_host = |o: &str| o.trim_start_matches("http://").to_owned();
    let refetched: Vec<_> = known
        .iter()
        .map(|o| origin_host(o))
        .filter_map(|h| {
            // The request log's host is the Host header (host:port).
            let n = robots_requests.get(&h).copied().unwrap_or(0);
            (n != 1).then_some((h, n))
        })
        .collect();
    assert!(
        refetched.is_empty(),
        "robots.txt requested again after a resume (host, requests): {refetched:?}; all: {robots_requests:?}"
    );
    eprintln!(
        "crawl_robots_resume: {} hosts' robots.txt known before a checkpoint, none refetched; {} robots.txt requests in all: {robots_requests:?}",
        known.len(),
        robots_requests.values().sum::<usize>()
    );

    let (m, f) = sw.manifest();
    let fetched = fetched_urls(&crawl_log(&out));
    let missed: Vec<_> = m.difference(&fetched).take(5).collect();
    assert!(missed.is_empty(), "M URLs not fetched: {missed:?}");
    let forbidden: Vec<_> = f.intersection(&fetched).take(5).collect();
    assert!(forbidden.is_empty(), "F URLs fetched: {forbidden:?}");
    let stats: serde_json::Value = stats_json(&out);
    assert_eq!(stats["finish"], "exhausted", "{stats}");
}
