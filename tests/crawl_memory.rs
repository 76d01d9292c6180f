//! Memory budget: `trawl crawl --memory 256M` on a synthweb world whose frontier grows
//! far faster than it is crawled (synthweb's wide mode: `--fanout N` absolute links per
//! page to random pages of 500 hosts of a million pages each, so every fetched page
//! adds about N new URLs; more hosts currently make trawl refetch robots.txt instead
//! of pages under a 256 MiB budget, see docs/benchmarks.md "Frontier memory"),
//! with the trawl child's peak RSS less the presence bits (the mapped `seen.bits` and
//! `fingerprints.bits`, sized separately and reported apart) under the budget.
//!
//! Two runs of the same measurement:
//! - `frontier_spills_and_rss_stays_under_the_budget` (in `make test`): the binaries
//!   of the test build (debug), a few million queued URLs.
//! - `tens_of_millions_queued_under_256m` (`#[ignore]`; `make memtest`, which builds
//!   release binaries and runs it with `--release`): tens of millions of queued URLs,
//!   the acceptance point. Figures in docs/benchmarks.md ("Frontier memory").
//!
//! RSS is read from `/proc/PID/smaps` every 50 ms: the total `Rss` of every mapping
//! less the `Rss` of the presence-bit mappings *in the same snapshot* (so the bits
//! mapped in later are not subtracted from an earlier peak), maximised over the run.
//! The kernel's `VmHWM` (true peak, not sampled) less the largest presence-bit RSS
//! seen is printed and asserted too; the two bracket the peak.

#![allow(clippy::unwrap_used)]

mod crawl_support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crawl_support::{crawl_args, stats_json, trawl_bin, Synthweb};

const BUDGET: u64 = 256 << 20;

/// One memory run: the world, the crawl's budget and the bar it must reach.
struct Run {
    /// Links per page (synthweb `--fanout`).
    fanout: u32,
    /// Page budget (`--max-pages`); about `fanout` URLs are discovered per page.
    max_pages: u64,
    /// Presence-bit capacity (URLs).
    seen_capacity: u64,
    /// Wall-clock bound: past it the crawl is stopped with SIGTERM (graceful).
    time_bound: Duration,
    /// The test fails unless at least this many URLs were queued at the end.
    min_queued: u64,
}

#[derive(Debug, Default, Clone, Copy)]
struct Sample {
    /// Rss of every mapping.
    total: u64,
    /// Rss of `seen.bits` and `fingerprints.bits`.
    bits: u64,
}

/// One `/proc/PID/smaps` snapshot.
fn smaps_sample(pid: u32) -> Option<Sample> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps")).ok()?;
    let mut s = Sample::default();
    let mut in_bits = false;
    for line in text.lines() {
        if let Some(kb) = line.strip_prefix("Rss:") {
            let kb: u64 = kb.trim().trim_end_matches("kB").trim().parse().ok()?;
            s.total += kb * 1024;
            if in_bits {
                s.bits += kb * 1024;
            }
        } else if line
            .split_whitespace()
            .next()
            .is_some_and(|f| f.contains('-') && !f.ends_with(':'))
        {
            // A mapping header: `start-end perms offset dev inode [path]`.
            in_bits = line.ends_with("/seen.bits") || line.ends_with("/fingerprints.bits");
        }
    }
    Some(s)
}

fn vm_hwm_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn mib(b: u64) -> f64 {
    b as f64 / 1_048_576.0
}

fn run(label: &str, r: &Run) {
    let tmp = tempfile::tempdir().unwrap();
    let sw = Synthweb::start_with(
        &tmp.path().join("web"),
        &[
            "--hosts",
            "500",
            "--bind-range",
            "127.0.1.0/24",
            "--profile",
            "default",
            "--fanout",
            &r.fanout.to_string(),
            "--page-bytes",
            "1024",
            "--pages-per-host",
            "1000000",
            "--seed-stride",
            "1000",
            "--threads",
            "1",
        ],
        false,
    );
    let out = tmp.path().join("crawl");
    let mut args = crawl_args(&out, 1_000_000, 0);
    args.extend(
        [
            "--memory",
            "256M",
            // The presence bits are sized apart from the budget; mapped from their files
            // they show up in smaps under `seen.bits`/`fingerprints.bits` and are
            // subtracted exactly. With the default anonymous backing they would be
            // counted inside the figure (conservative, but no longer what it says).
            "--seen-backing",
            "mapped",
            "--max-pages",
            &r.max_pages.to_string(),
            "--no-warc",
            "--seen-capacity",
            &r.seen_capacity.to_string(),
            "--seen-fp",
            "0.001",
            "--checkpoint-secs",
            "0",
        ]
        .iter()
        .map(|s| (*s).to_owned()),
    );
    let started = Instant::now();
    let mut child = Command::new(trawl_bin())
        .current_dir(&sw.dir)
        .args(&args)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let deadline = started + r.time_bound;
    let (mut hwm, mut peak, mut bits_max) = (0, Sample::default(), 0);
    let mut signalled = false;
    let status = loop {
        if let Some(h) = vm_hwm_bytes(pid) {
            hwm = hwm.max(h);
        }
        if let Some(s) = smaps_sample(pid) {
            if s.total.saturating_sub(s.bits) > peak.total.saturating_sub(peak.bits) {
                peak = s;
            }
            bits_max = bits_max.max(s.bits);
        }
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if !signalled && Instant::now() > deadline {
            // Past the time bound: stop it gracefully (checkpoint, stats) and judge what
            // it reached.
            crawl_support::signal(pid, "TERM");
            signalled = true;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let wall = started.elapsed();
    drop(sw);
    assert!(status.success(), "trawl crawl failed: {status}");

    let bits_files: u64 = ["seen.bits", "fingerprints.bits"]
        .iter()
        .map(|f| std::fs::metadata(out.join(f)).map_or(0, |m| m.len()))
        .sum();
    let stats: serde_json::Value = stats_json(&out);
    let queued = stats["queued"].as_u64().unwrap();
    let disk_urls = stats["frontier_disk_urls"].as_u64().unwrap();
    let peak_less_bits = peak.total.saturating_sub(peak.bits);
    let hwm_less_bits = hwm.saturating_sub(bits_max);
    eprintln!(
        "{label}: {:.0} s, pages {} discovered {} robots-declined {} queued {queued} (ram {} disk {disk_urls}), \
         frontier disk {} bytes = {:.1} bytes per URL on disk; peak RSS less presence bits \
         {:.1} MiB (sampled; presence bits {:.1} MiB of it, files {:.1} MiB), VmHWM {:.1} MiB \
         less final presence-bit RSS {:.1} MiB = {:.1} MiB; budget {} MiB; stopped by \
         {}",
        wall.as_secs_f64(),
        stats["pages"],
        stats["discovered"],
        stats["outcomes"]["robots"],
        stats["frontier_ram_urls"],
        stats["frontier_disk_bytes"],
        stats["disk_bytes_per_queued_url"].as_f64().unwrap_or(0.0),
        mib(peak_less_bits),
        mib(peak.bits),
        mib(bits_files),
        mib(hwm),
        mib(bits_max),
        mib(hwm_less_bits),
        BUDGET >> 20,
        if signalled {
            "the time bound"
        } else {
            "--max-pages"
        },
    );
    assert!(
        hwm > 0 && peak.total > 0,
        "could not read the crawler's RSS"
    );
    assert!(
        queued >= r.min_queued,
        "the frontier reached {queued} queued URLs, short of {}",
        r.min_queued
    );
    assert!(disk_urls > 0, "nothing spilled to disk: {stats}");
    assert!(
        peak_less_bits < BUDGET,
        "peak RSS less presence bits {peak_less_bits} is over the {BUDGET} budget"
    );
    assert!(
        hwm_less_bits < BUDGET,
        "VmHWM {hwm} less presence bits {bits_max} is over the {BUDGET} budget"
    );
}

/// The CI-sized run (debug binaries in `make test`): millions of queued URLs.
#[test]
fn frontier_spills_and_rss_stays_under_the_budget() {
    run(
        "crawl_memory (test build)",
        &Run {
            fanout: 2_000,
            max_pages: 1_000,
            seen_capacity: 4_000_000,
            time_bound: Duration::from_secs(90),
            min_queued: 1_000_000,
        },
    );
}

/// The acceptance run (release binaries, `make memtest`): tens of millions of queued
/// URLs under `--memory 256M`.
///
/// 6,000 pages discover about 29 million URLs. Not all of them stay queued: synthweb's
/// robots.txt catalogue disallows some paths, and the shards decline those URLs as they
/// reach them while the crawl waits on the one-thread server. How many are declined by
/// the end follows the shards' speed, not the world: 1.5 to 4.2 million of 24 million
/// in five runs at 5,000 pages (2026-12-06). A faster page path declined more and left
/// 19.9 million queued, under the bar, so the run takes 6,000 pages for a margin.
#[test]
#[ignore = "minutes with release binaries: run by `make memtest`, which .ci/run calls"]
fn tens_of_millions_queued_under_256m() {
    run(
        "crawl_memory (acceptance)",
        &Run {
            fanout: 5_000,
            max_pages: 6_000,
            seen_capacity: 40_000_000,
            time_bound: Duration::from_secs(900),
            min_queued: 20_000_000,
        },
    );
}
