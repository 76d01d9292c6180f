//! Memory budget: `trawl crawl --memory 256M` on a synthweb world whose frontier grows
//! far faster than it is crawled (thousands of hosts, 60-80 links a page, a page
//! budget), with the trawl child's peak RSS (`VmHWM` from `/proc/PID/status`, sampled;
//! the kernel keeps the high-water mark, so sampling only decides when we read it)
//! less the presence-bit files (mapped, sized separately, reported apart) under the
//! budget. Prints the frontier figures from `stats.json`: URLs queued in RAM and on
//! disk, disk bytes per queued URL.
//!
//! Bounded to 30 s of crawling (debug build, stopped with SIGTERM at the bound): it
//! reaches tens of thousands of queued URLs, not the tens of millions; that is a
//! longer run of the same command with a release build (see docs/architecture.md).

#![allow(clippy::unwrap_used)]

mod crawl_support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crawl_support::{crawl_args, trawl_bin, Synthweb};

const BUDGET: u64 = 256 << 20;

fn vm_hwm_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[test]
fn frontier_spills_and_rss_stays_under_the_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let _sw_guard;
    let sw = Synthweb::start_with(
        &tmp.path().join("web"),
        &[
            "--hosts",
            "5000",
            "--profile",
            "default",
            "--out-degree",
            "60-80",
            "--page-size",
            "5000-8000",
            "--seed-stride",
            "5",
        ],
        false,
    );
    let out = tmp.path().join("crawl");
    let mut args = crawl_args(&out, 2000, 0);
    args.extend(
        [
            "--memory",
            "256M",
            "--max-pages",
            "6000",
            "--no-warc",
            "--seen-capacity",
            "5000000",
            "--seen-fp",
            "0.001",
        ]
        .iter()
        .map(|s| (*s).to_owned()),
    );
    let mut child = Command::new(trawl_bin())
        .current_dir(&sw.dir)
        .args(&args)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut hwm = 0;
    let status = loop {
        if let Some(h) = vm_hwm_bytes(pid) {
            hwm = hwm.max(h);
        }
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            // Past the time bound: stop it gracefully (checkpoint, stats) and judge what
            // it reached.
            crawl_support::signal(pid, "TERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    _sw_guard = sw;
    assert!(status.success(), "trawl crawl failed: {status}");

    let bits: u64 = ["seen.bits", "fingerprints.bits"]
        .iter()
        .map(|f| std::fs::metadata(out.join(f)).map_or(0, |m| m.len()))
        .sum();
    let stats: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("stats.json")).unwrap()).unwrap();
    let queued = stats["queued"].as_u64().unwrap();
    eprintln!(
        "crawl_memory: pages {} discovered {} queued {queued} (ram {} disk {}), frontier disk \
         {} bytes = {:.1} bytes per queued URL on disk; VmHWM {:.1} MiB, presence bits {:.1} \
         MiB, HWM less bits {:.1} MiB of a {} MiB budget",
        stats["pages"],
        stats["discovered"],
        stats["frontier_ram_urls"],
        stats["frontier_disk_urls"],
        stats["frontier_disk_bytes"],
        stats["disk_bytes_per_queued_url"].as_f64().unwrap_or(0.0),
        hwm as f64 / 1048576.0,
        bits as f64 / 1048576.0,
        hwm.saturating_sub(bits) as f64 / 1048576.0,
        BUDGET >> 20
    );
    assert!(hwm > 0, "could not read VmHWM of the crawler");
    assert!(
        queued > 5_000,
        "the frontier did not grow ({queued} queued): the test measures nothing"
    );
    assert!(
        stats["frontier_disk_urls"].as_u64().unwrap() > 0,
        "nothing spilled to disk: {stats}"
    );
    assert!(
        hwm.saturating_sub(bits) < BUDGET,
        "peak RSS {hwm} less presence bits {bits} is over the {BUDGET} budget"
    );
}
