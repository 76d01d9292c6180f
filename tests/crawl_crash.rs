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

use std::time::Duration;

use crawl_support::{
    assert_covers_manifest, crash_seed, crawl_args, crawl_log, decided_twice, fetched_urls,
    spawn_trawl, stats_json, wait_exit, warcio_check_dir, World,
};

const KILLS: usize = 10;

#[test]
fn kill_9_at_random_moments_loses_nothing() {
    let seed = crash_seed("crawl_crash");
    let mut rng = fastrand::Rng::with_seed(seed);

    let tmp = tempfile::tempdir().unwrap();
    let budget = 200;
    // The trapped hosts take budget x delay = 30 s of crawling, longer than the ten
    // runs' 12-25 s together, so every kill lands mid-crawl however fast the engine is.
    let delay_ms = 150;
    let world = World {
        hosts: 16,
        profile: Some("default,traps"),
        pages_per_host: "20-40",
        out_degree: Some("5-15"),
        budget: Some(budget),
    };
    let mut sw = world.start(&tmp.path().join("web"), &[]);
    let out = tmp.path().join("crawl");
    let mut args = crawl_args(&out, budget, delay_ms);
    args.extend(["--checkpoint-secs".to_owned(), "1".to_owned()]);
    let resumed = [&args[..], &["--resume".to_owned()]].concat();

    let mut kills = 0;
    let mut finished_early = false;
    for run in 0..KILLS {
        let mut child = spawn_trawl(&sw, if run > 0 { &resumed } else { &args });
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
    let mut child = spawn_trawl(&sw, &resumed);
    let status = wait_exit(&mut child, Duration::from_secs(120), "the final run");
    assert!(status.success(), "final run failed: {status}");
    sw.stop();

    let log = crawl_log(&out);
    let fetched = fetched_urls(&log);
    assert_covers_manifest(&sw, &fetched, &format!("after {kills} kills, seed {seed}"));

    // Each URL decided once in the repaired log (retry lines aside). robots.txt (hops
    // `P`) may be fetched again after a resume: a fetch in flight or settled after the
    // last checkpoint, and failing robots.txt, are retried (the cache restored from the
    // checkpoint covers the rest: docs/robots.md).
    let twice = decided_twice(&log);
    assert!(
        twice.is_empty(),
        "URLs decided twice in the repaired log: {twice:?}"
    );

    let stats = stats_json(&out);
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
        sw.manifest().0.len(),
        requests - targets.len()
    );
    warcio_check_dir(&out.join("warc"));
}
