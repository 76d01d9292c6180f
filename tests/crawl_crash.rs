//! Crash and resume: one crawl of a synthweb world is killed with SIGKILL at 10 random
//! moments (1.2-2.5 s into each run, checkpoints every second) and resumed each time with
//! `--resume` on the same output directory; then it runs to the end. The DESIGN.md
//! invariant: every URL discovered before the last checkpoint is fetched or still
//! queued, so the final crawl log (repaired to the checkpoint at each resume) shows every
//! manifest M URL fetched, none of F (per-host budgets are checkpointed too), each page
//! decided once (no line of a fetch that was redone survives), and the WARC files pass `warcio check`.
//!
//! The random offsets come from a seed printed at the start (`CRASH_SEED=n` repeats a
//! run). Work redone (requests the server saw beyond one per URL) is printed.

#![allow(clippy::unwrap_used)]

mod crawl_support;

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crawl_support::{crawl_args, crawl_log, fetched_urls, trawl_bin, warcio_check_dir, Synthweb};

const KILLS: usize = 10;

#[test]
fn kill_9_at_random_moments_loses_nothing() {
    let seed = std::env::var("CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("crawl_crash: CRASH_SEED={seed}");
    let mut rng = fastrand::Rng::with_seed(seed);

    let tmp = tempfile::tempdir().unwrap();
    let budget = 200;
    // The trapped hosts take budget x delay = 30 s of crawling, longer than the ten
    // runs' 12-25 s together, so every kill lands mid-crawl however fast the engine is.
    let delay_ms = 150;
    let mut sw = Synthweb::start(
        &tmp.path().join("web"),
        &[
            "--hosts",
            "16",
            "--profile",
            "default,traps",
            "--pages-per-host",
            "20-40",
            "--out-degree",
            "5-15",
            "--manifest-max-pages-per-host",
            &budget.to_string(),
        ],
    );
    let out = tmp.path().join("crawl");
    let mut args = crawl_args(&out, budget, delay_ms);
    args.extend(["--checkpoint-secs".to_owned(), "1".to_owned()]);

    let mut kills = 0;
    let mut finished_early = false;
    for run in 0..KILLS {
        let mut cmd = Command::new(trawl_bin());
        cmd.current_dir(&sw.dir).args(&args).stderr(Stdio::null());
        if run > 0 {
            cmd.arg("--resume");
        }
        let mut child = cmd.spawn().unwrap();
        let offset = Duration::from_millis(rng.u64(1200..=2500));
        std::thread::sleep(offset);
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "run {run} failed: {status}");
            finished_early = true;
            break;
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        kills += 1;
    }
    assert!(
        !finished_early && kills == KILLS,
        "the crawl ended after {kills} kills: the world is too small for the test"
    );

    // The last run goes to the end.
    let mut child = Command::new(trawl_bin())
        .current_dir(&sw.dir)
        .args(&args)
        .arg("--resume")
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the final run did not finish in 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "final run failed: {status}");
    sw.stop();

    let (m, f) = sw.manifest();
    let log = crawl_log(&out);
    let fetched = fetched_urls(&log);
    let missed: Vec<_> = m.difference(&fetched).collect();
    assert!(
        missed.is_empty(),
        "{} of {} M URLs lost after {kills} kills (seed {seed}), e.g. {:?}",
        missed.len(),
        m.len(),
        missed.iter().take(5).collect::<Vec<_>>()
    );
    let forbidden: Vec<_> = f.intersection(&fetched).take(5).collect();
    assert!(forbidden.is_empty(), "F URLs fetched: {forbidden:?}");

    // Each URL decided once in the repaired log (retry lines aside).
    let mut decided: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &log {
        let retry = r["annotations"].as_array().is_some_and(|a| {
            a.iter()
                .any(|x| x.as_str().is_some_and(|s| s.starts_with("retry:")))
        });
        // robots.txt (hops `P`) may be fetched again after a resume: a fetch in flight
        // or settled after the last checkpoint, and failing robots.txt, are retried
        // (the cache restored from the checkpoint covers the rest: docs/robots.md).
        let robots = r["hops"].as_str().is_some_and(|h| h.ends_with('P'));
        if !retry && !robots {
            *decided.entry(r["url"].as_str().unwrap()).or_default() += 1;
        }
    }
    let twice: Vec<_> = decided.iter().filter(|(_, n)| **n > 1).take(5).collect();
    assert!(
        twice.is_empty(),
        "URLs decided twice in the repaired log: {twice:?}"
    );

    let stats: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["finish"], "exhausted", "{stats}");
    assert!(stats["resumed_from"].as_u64().is_some(), "{stats}");

    // Work redone, as the server saw it: requests beyond the first for each target.
    let req_log = std::fs::read_to_string(sw.path("req.log")).unwrap();
    let mut targets = std::collections::BTreeSet::new();
    let mut requests = 0usize;
    for line in req_log.lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        requests += 1;
        targets.insert(format!("{}{}", r["host"], r["target"]));
    }
    eprintln!(
        "crawl_crash: {kills} kills, {} M URLs, {requests} server requests, {} repeated \
         (work redone after kills, robots.txt refetches and retries)",
        m.len(),
        requests - targets.len()
    );
    warcio_check_dir(&out.join("warc"));
}
