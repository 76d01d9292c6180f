//! A crawl killed with SIGKILL before its first checkpoint is not stranded: the seeds
//! and flags it started with are in `OUT/start.json` from the first moment, so `trawl
//! crawl --resume OUT` (no other flag, from another directory) starts it again from
//! its seeds and runs it to full coverage of a synthweb world.

#![allow(clippy::unwrap_used)]

mod crawl_support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crawl_support::{crawl_args, crawl_log, fetched_urls, trawl_bin, warcio_check_dir, Synthweb};

#[test]
fn kill_9_before_the_first_checkpoint_then_resume_dir_covers_the_world() {
    let tmp = tempfile::tempdir().unwrap();
    let mut sw = Synthweb::start(
        &tmp.path().join("web"),
        &[
            "--hosts",
            "6",
            "--profile",
            "default",
            "--pages-per-host",
            "15-25",
            "--out-degree",
            "4-10",
        ],
    );
    let out = tmp.path().join("crawl");
    // A checkpoint interval of an hour: the kill lands before the first one.
    let mut args = crawl_args(&out, 1000, 100);
    args.extend(["--checkpoint-secs".to_owned(), "3600".to_owned()]);
    let mut child = Command::new(trawl_bin())
        .current_dir(&sw.dir)
        .args(&args)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
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
    let resume = Command::new(trawl_bin())
        .current_dir(tmp.path())
        .arg("crawl")
        .arg("--resume")
        .arg(&out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut resume = resume;
    let status = loop {
        if let Some(s) = resume.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = resume.kill();
            panic!("the resumed crawl did not finish in 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut resume.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "resume failed: {status}\n{err}");
    assert!(err.contains("starting again from the seeds"), "{err}");
    sw.stop();

    let stats: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["finish"], "exhausted", "{stats}");
    let (m, f) = sw.manifest();
    let log = crawl_log(&out);
    let fetched = fetched_urls(&log);
    let missed: Vec<_> = m.difference(&fetched).collect();
    assert!(
        missed.is_empty(),
        "{} of {} M URLs not fetched ({before} log lines before the kill), e.g. {:?}",
        missed.len(),
        m.len(),
        missed.iter().take(5).collect::<Vec<_>>()
    );
    let forbidden: Vec<_> = f.intersection(&fetched).take(5).collect();
    assert!(forbidden.is_empty(), "F URLs fetched: {forbidden:?}");
    // The killed run's output was discarded: every page is decided once.
    let mut pages = std::collections::BTreeMap::new();
    for r in &log {
        let retry = r["annotations"].as_array().is_some_and(|a| {
            a.iter()
                .any(|x| x.as_str().is_some_and(|s| s.starts_with("retry:")))
        });
        // robots.txt may take several lines (redirect hops, 5xx retries).
        let robots = r["hops"].as_str().is_some_and(|h| h.ends_with('P'));
        if !retry && !robots {
            *pages
                .entry(r["url"].as_str().unwrap().to_owned())
                .or_insert(0) += 1;
        }
    }
    let twice: Vec<_> = pages.iter().filter(|(_, n)| **n > 1).take(5).collect();
    assert!(twice.is_empty(), "decided twice: {twice:?}");
    warcio_check_dir(&out.join("warc"));
}
