//! A crawl killed with SIGKILL before its first checkpoint is not stranded: the seeds
//! and flags it started with are in `OUT/start.json` from the first moment, so `trawl
//! crawl --resume OUT` (no other flag, from another directory) starts it again from
//! its seeds and runs it to full coverage of a synthweb world.

#![allow(clippy::unwrap_used)]

mod crawl_support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crawl_support::{
    assert_covers_manifest, crawl_args, crawl_log, decided_twice, fetched_urls, spawn_trawl,
    stats_json, trawl_bin, wait_exit, warcio_check_dir, World,
};

#[test]
fn kill_9_before_the_first_checkpoint_then_resume_dir_covers_the_world() {
    let tmp = tempfile::tempdir().unwrap();
    let world = World {
        hosts: 6,
        profile: Some("default"),
        pages_per_host: "15-25",
        out_degree: Some("4-10"),
        budget: None,
    };
    let mut sw = world.start(&tmp.path().join("web"), &[]);
    let out = tmp.path().join("crawl");
    // A checkpoint interval of an hour: the kill lands before the first one.
    let mut args = crawl_args(&out, 1000, 100);
    args.extend(["--checkpoint-secs".to_owned(), "3600".to_owned()]);
    let mut child = spawn_trawl(&sw, &args);
    // Kill once the crawl is under way: a few pages logged.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the crawl ended before it could be killed: the world is too small"
        );
        if crawl_log(&out).len() >= 5 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the crawl logged nothing in 60 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(
        !out.join("checkpoint/CURRENT").exists(),
        "a checkpoint completed before the kill"
    );
    assert!(out.join("start.json").is_file(), "no start.json");
    let before = crawl_log(&out).len();

    // `--resume DIR` alone, from another directory: seeds and flags from start.json.
    let mut resume = Command::new(trawl_bin())
        .current_dir(tmp.path())
        .arg("crawl")
        .arg("--resume")
        .arg(&out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_exit(&mut resume, Duration::from_secs(120), "the resumed crawl");
    let mut err = String::new();
    std::io::Read::read_to_string(&mut resume.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "resume failed: {status}\n{err}");
    assert!(err.contains("starting again from the seeds"), "{err}");
    sw.stop();

    let stats = stats_json(&out);
    assert_eq!(stats["finish"], "exhausted", "{stats}");
    let log = crawl_log(&out);
    let fetched = fetched_urls(&log);
    assert_covers_manifest(
        &sw,
        &fetched,
        &format!("{before} log lines before the kill"),
    );
    // The killed run's output was discarded: every page is decided once (robots.txt
    // may take several lines: redirect hops, 5xx retries).
    let twice = decided_twice(&log);
    assert!(twice.is_empty(), "decided twice: {twice:?}");
    warcio_check_dir(&out.join("warc"));
}
