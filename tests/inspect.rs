//! `trawl inspect` against real checkpoints: a crawl of a synthweb world stopped with
//! SIGTERM (graceful: final checkpoint, `stats.json`) and one killed with SIGKILL; the
//! figures are checked against `stats.json` and the crawl log, then segments, presence
//! bits, tallies and the manifest are damaged on copies and every damage must give a
//! non-zero exit naming the file, never a panic; a resume from damaged tallies is
//! refused with an error naming the file.

#![allow(clippy::unwrap_used)]

mod crawl_support;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crawl_support::{
    crawl_args, crawl_log, signal, spawn_trawl, stats_json, trawl_bin, Synthweb, World,
};

fn inspect(args: &[&str], dir: &Path) -> Output {
    Command::new(trawl_bin())
        .arg("inspect")
        .arg(dir)
        .args(args)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn inspect_json(dir: &Path) -> serde_json::Value {
    let o = inspect(&["--json"], dir);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Copies a directory tree (files and directories only).
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        let dst = to.join(e.file_name());
        if p.is_dir() {
            copy_tree(&p, &dst);
        } else {
            fs::copy(&p, &dst).unwrap();
        }
    }
}

/// Starts a crawl, lets it run `run_for` and take its first checkpoint, then sends
/// `sig`; returns the exit status.
fn crawl_and_stop(sw: &Synthweb, out: &Path, run_for: Duration, sig: &str) -> Option<i32> {
    let mut args = crawl_args(out, 200, 200);
    args.extend(["--checkpoint-secs", "1", "--shards", "2"].map(str::to_owned));
    let mut child = spawn_trawl(sw, &args);
    std::thread::sleep(run_for);
    // A kill must come after the first checkpoint (before it there is nothing to
    // inspect, which is tested separately): wait for CURRENT on a slow machine.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !out.join("checkpoint/CURRENT").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "the crawl finished before it was stopped: the world is too small for the test"
    );
    signal(child.id(), sig);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s.code();
        }
        assert!(Instant::now() < deadline, "trawl did not stop after {sig}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn inspect_reports_stopped_and_killed_crawls_and_detects_damage() {
    let tmp = tempfile::tempdir().unwrap();
    let world = World {
        hosts: 12,
        profile: Some("default"),
        pages_per_host: "30-40",
        out_degree: Some("5-15"),
        budget: Some(200),
    };
    let sw = world.start(&tmp.path().join("web"), &[]);

    // 1. Graceful stop: the final checkpoint matches stats.json and the crawl log.
    let out = tmp.path().join("stopped");
    let code = crawl_and_stop(&sw, &out, Duration::from_millis(2500), "TERM");
    assert_eq!(code, Some(0), "SIGTERM must stop the crawl with exit 0");
    let stats = stats_json(&out);
    assert_eq!(stats["finish"], "stopped", "{stats}");
    let d = inspect_json(&out);
    assert_eq!(d["verification"]["ok"], true, "{d}");
    assert_eq!(d["is_current"], true);
    let queued = stats["queued"].as_u64().unwrap();
    assert!(queued > 0, "nothing queued at the stop: {stats}");
    assert_eq!(d["frontier"]["urls"].as_u64(), Some(queued), "{d}");
    assert_eq!(d["queued_urls"].as_u64(), Some(queued));
    let shard_sum: u64 = d["frontier"]["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["urls"].as_u64().unwrap())
        .sum();
    assert_eq!(shard_sum, queued);
    assert_eq!(d["frontier"]["shards"].as_array().unwrap().len(), 2);
    for key in ["pages", "bytes", "discovered", "duplicates"] {
        assert_eq!(d["counters"][key], stats[key], "{key}: {d} vs {stats}");
    }
    assert_eq!(d["config"]["delay_ms"], 200);
    assert_eq!(d["config"]["shards"], 2);
    assert_eq!(d["config"]["max_pages_per_host"], 200);
    // The log's outcomes up to the checkpoint: the whole log after a graceful stop.
    let log = crawl_log(&out);
    let log_bytes = fs::metadata(out.join("crawl.log.jsonl")).unwrap().len();
    assert_eq!(d["positions"]["crawl_log_bytes"].as_u64(), Some(log_bytes));
    assert_eq!(d["log"]["lines"].as_u64(), Some(log.len() as u64));
    let mut outcomes: BTreeMap<String, u64> = BTreeMap::new();
    for r in &log {
        *outcomes
            .entry(r["outcome"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    let reported: BTreeMap<String, u64> =
        serde_json::from_value(d["log"]["outcomes"].clone()).unwrap();
    assert_eq!(reported, outcomes);
    // Hosts: top hosts sum to at most the total, and the frontier's hosts are real.
    let hosts = d["frontier"]["hosts"].as_u64().unwrap();
    assert!(hosts >= 1, "{d}");
    let top = d["frontier"]["top_hosts"].as_array().unwrap();
    assert!(!top.is_empty() && top.len() <= 10);
    let top_sum: u64 = top.iter().map(|h| h["urls"].as_u64().unwrap()).sum();
    assert!(top_sum <= queued);
    // Presence bits: every discovered URL was inserted.
    let seen = &d["seen"];
    assert!(
        seen["inserted"].as_u64().unwrap() >= stats["discovered"].as_u64().unwrap(),
        "{seen} vs {stats}"
    );
    assert!(seen["fill_ratio"].as_f64().unwrap() > 0.0);
    assert!(seen["expected_fp"].as_f64().unwrap() >= 0.0);
    // The WARC position names a file that exists.
    assert!(d["positions"]["warc_path"].is_string(), "{d}");

    // Human output and --urls.
    let o = inspect(&["--top", "3"], &out);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let human = String::from_utf8_lossy(&o.stdout).into_owned();
    for needle in [
        "(current)",
        "frontier ",
        "top hosts",
        "seen bits",
        "positions",
        "verify       OK",
    ] {
        assert!(human.contains(needle), "{needle:?} missing in:\n{human}");
    }
    assert!(human.contains(&format!("{queued} URLs")), "{human}");
    let o = inspect(&["--urls"], &out);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let listing = String::from_utf8(o.stdout).unwrap();
    assert_eq!(listing.lines().count() as u64, queued);
    for line in listing.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 4, "{line}");
        assert!(f[0].starts_with("http://") && f[0].contains(f[1].trim_start_matches("http://")));
    }
    // The checkpoint directory and the cp- directory give the same answer.
    let via_root = inspect_json(&out.join("checkpoint"));
    assert_eq!(via_root["frontier"]["urls"], d["frontier"]["urls"]);
    let name = d["name"].as_str().unwrap().to_owned();
    let via_cp = inspect_json(&out.join("checkpoint").join(&name));
    assert_eq!(via_cp["frontier"]["urls"], d["frontier"]["urls"]);

    // 2. kill -9: the CURRENT checkpoint is complete and verifies.
    let killed = tmp.path().join("killed");
    let code = crawl_and_stop(&sw, &killed, Duration::from_millis(2500), "KILL");
    assert_eq!(code, None, "SIGKILL leaves no exit code");
    let k = inspect_json(&killed);
    assert_eq!(k["verification"]["ok"], true, "{k}");
    assert!(k["epoch"].as_u64().unwrap() >= 1);
    assert_eq!(k["frontier"]["urls"], k["queued_urls"]);
    let log_now = fs::metadata(killed.join("crawl.log.jsonl")).unwrap().len();
    assert!(k["positions"]["crawl_log_bytes"].as_u64().unwrap() <= log_now);
    let lines_before = k["log"]["lines"].as_u64().unwrap() as usize;
    assert!(lines_before <= crawl_log(&killed).len());
    assert!(k["counters"]["pages"].as_u64().unwrap() > 0, "{k}");

    // 3. Damage, on copies of the stopped crawl's checkpoint.
    let cp_dir = out.join("checkpoint").join(&name);
    let seg = (0..2)
        .map(|i| cp_dir.join(format!("frontier-{i:04}.seg")))
        .max_by_key(|p| fs::metadata(p).unwrap().len())
        .unwrap();
    let seg_name = seg.file_name().unwrap().to_string_lossy().into_owned();
    let damaged = |label: &str, damage: &dyn Fn(&Path)| -> Output {
        let copy = tmp.path().join(label);
        copy_tree(&out, &copy);
        damage(&copy.join("checkpoint").join(&name));
        inspect(&[], &copy)
    };
    // A flipped byte in the middle of a segment.
    let o = damaged("flip", &|cp| {
        let p = cp.join(&seg_name);
        let mut b = fs::read(&p).unwrap();
        let mid = b.len() / 2;
        b[mid] ^= 0x55;
        fs::write(&p, b).unwrap();
    });
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("FAILED") && t.contains(&seg_name) && t.contains("at byte"),
        "{t}"
    );
    assert!(!t.contains("panicked"), "{t}");
    // The same in JSON, with the offset.
    let copy = tmp.path().join("flip");
    let o = inspect(&["--json"], &copy);
    assert_eq!(o.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let err = &j["verification"]["errors"][0];
    assert!(err["file"].as_str().unwrap().ends_with(&seg_name), "{j}");
    assert!(err["offset"].as_u64().unwrap() >= 12);
    // A truncated segment.
    let o = damaged("trunc", &|cp| {
        let p = cp.join(&seg_name);
        let b = fs::read(&p).unwrap();
        fs::write(&p, &b[..b.len() - 3]).unwrap();
    });
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains(&seg_name) && t.contains("truncated"), "{t}");
    // A flipped presence bit in the last record of the presence log.
    let o = damaged("bits", &|cp| {
        let p = cp.join("seen.plog");
        let mut b = fs::read(&p).unwrap();
        let last = b.len() - 20;
        b[last] ^= 1;
        fs::write(&p, b).unwrap();
    });
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("seen.plog") && t.contains("presence log is damaged") && t.contains("at byte"),
        "{t}"
    );
    // A flipped byte in a tallies file: inspect names it, and a resume from it stops
    // with an error naming it (the tallies are state, like the frontier), before any
    // fetch.
    let o = damaged("tallies", &|cp| {
        let p = cp.join("tallies-0001.bin");
        let mut b = fs::read(&p).unwrap();
        let last = b.len() - 2;
        b[last] ^= 0x10;
        fs::write(&p, b).unwrap();
    });
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("tallies-0001.bin") && t.contains("checksum mismatch"),
        "{t}"
    );
    let resume = Command::new(trawl_bin())
        .current_dir(&sw.dir)
        .args(["crawl", "--resume"])
        .arg(tmp.path().join("tallies"))
        .output()
        .unwrap();
    let t = text(&resume);
    assert!(!resume.status.success(), "{t}");
    assert!(
        t.contains("tallies-0001.bin") && t.contains("damaged") && !t.contains("panicked"),
        "{t}"
    );
    assert_eq!(
        crawl_log(&tmp.path().join("tallies")).len(),
        log.len(),
        "the refused resume fetched"
    );
    // A garbled manifest: a clear error, exit 2.
    let o = damaged("manifest", &|cp| {
        fs::write(cp.join("manifest.json"), b"{\"version\": 1, \"epo").unwrap();
    });
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("manifest") && t.contains("damaged"), "{t}");
    assert!(!t.contains("panicked"), "{t}");
    // A crawl killed before its first checkpoint: checkpoint/ without CURRENT.
    let early = tmp.path().join("early");
    fs::create_dir_all(early.join("checkpoint/tmp-000001")).unwrap();
    fs::write(early.join("crawl.log.jsonl"), b"").unwrap();
    let o = inspect(&[], &early);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("no complete checkpoint"), "{t}");
    // Not a checkpoint at all.
    let o = inspect(&[], &sw.dir);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("not a crawl output or checkpoint directory"),
        "{t}"
    );
    assert!(!t.contains("panicked"), "{t}");
}
