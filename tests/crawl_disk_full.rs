//! Disk full: a crawl into a 40 MiB tmpfs made by the test. Mid-crawl a ballast file
//! takes the free space under `--disk-reserve 8M`; the crawl must pause (stats.json
//! says `paused: disk`, stderr has the warning with the figures, the server sees no new
//! request). Then the ballast goes, and the crawl must resume and end with every
//! manifest M URL fetched (none of F), the referee's checks passed, valid WARC files
//! and a valid final checkpoint.
//!
//! Two ways in: the free space falls just under the reserve (7 of 8 MiB left), and the
//! pause writes the crawl's first checkpoint into the space kept; or it falls far below
//! (2 MiB, less than a checkpoint's presence bits), the pause's checkpoint fails for
//! lack of space, and the previous (periodic) checkpoint must stay current and whole
//! while the crawl waits instead of dying; or it falls to nothing, and the crawl's own
//! writes (WARC, crawl log, checkpoint) meet `ENOSPC` and wait for space.
//!
//! Needs root for `mount -t tmpfs`. Under `CI=true` a mount that fails fails the test;
//! elsewhere the test prints why and skips. The tmpfs is unmounted in every case (a
//! guard's `Drop`), after the crawl child is killed (another guard, dropped first).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod crawl_support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crawl_support::{crawl_args, crawl_log, fetched_urls, trawl_bin, warcio_check_dir, Synthweb};
use trawl::engine::space;

const MIB: u64 = 1 << 20;

/// A tmpfs mounted for the test; unmounted (lazily if still busy) on drop.
struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    /// Mounts a tmpfs of `size_mib` at `dir`, or says why it cannot.
    fn mount(dir: &Path, size_mib: u64) -> Result<Self, String> {
        fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size_mib}m"), "tmpfs"])
            .arg(dir)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "mount -t tmpfs failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(Self {
            dir: dir.to_path_buf(),
        })
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let ok = Command::new("umount")
            .arg(&self.dir)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
        }
    }
}

/// The crawl child, killed if the test ends before it does.
struct Crawl(Child);

impl Drop for Crawl {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

fn stats(out: &Path) -> Option<serde_json::Value> {
    serde_json::from_slice(&fs::read(out.join("stats.json")).ok()?).ok()
}

/// Polls `cond` every 50 ms for at most `limit`; false on timeout.
fn wait_for(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    cond()
}

fn requests(sw: &Synthweb) -> usize {
    fs::read_to_string(sw.path("req.log"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

fn inspect(out: &Path) -> serde_json::Value {
    let o = Command::new(trawl_bin())
        .args(["inspect", "--json", "--no-log"])
        .arg(out)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "inspect: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Writes `bytes` of zeros (real pages on tmpfs, not a hole) into `path`.
fn ballast(path: &Path, bytes: u64) {
    use std::io::Write;
    let mut f = fs::File::create(path).unwrap();
    let chunk = vec![0u8; MIB as usize];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(MIB);
        f.write_all(&chunk[..n as usize]).unwrap();
        left -= n;
    }
    f.sync_all().unwrap();
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    /// Free space falls just under the reserve: the pause's checkpoint fits.
    UnderReserve,
    /// Free space falls far under it (16 KiB left, no WARC): the pause's checkpoint
    /// fails for lack of space.
    FarUnder,
    /// No space at all: the crawl's own writes fail with ENOSPC.
    Full,
}

#[test]
fn a_crawl_pauses_under_the_disk_reserve_and_resumes_when_space_returns() {
    run(Way::UnderReserve);
}

#[test]
fn a_checkpoint_without_space_keeps_the_previous_one_and_the_crawl_waits() {
    run(Way::FarUnder);
}

#[test]
fn writes_that_meet_enospc_wait_for_space() {
    run(Way::Full);
}

fn run(way: Way) {
    let started = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let mnt = tmp.path().join("fs");
    let _fs = match Tmpfs::mount(&mnt, 40) {
        Ok(fs) => fs,
        Err(why) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("CI=true and no tmpfs for the disk-full test: {why}")
        }
        Err(why) => {
            eprintln!("crawl_disk_full: skipped: {why} (needs root)");
            return;
        }
    };

    // 16 hosts of 15-30 pages (about 40 requests each with the special pages), 150 ms
    // apart per host: about 8 s of crawling, so the ballast lands mid-crawl.
    let delay_ms = 150;
    let mut sw = Synthweb::start(
        &tmp.path().join("web"),
        &[
            "--hosts",
            "16",
            "--pages-per-host",
            "15-30",
            "--out-degree",
            "5-15",
        ],
    );
    let out = mnt.join("crawl");
    let mut args = crawl_args(&out, 2000, delay_ms);
    // Periodic checkpoints: never before the pause (the one found then is the pause's
    // own), or every 2 s (there is one to keep when the pause's fails).
    let checkpoint_secs = if way == Way::UnderReserve {
        "3600"
    } else {
        "2"
    };
    args.extend(["--checkpoint-secs", checkpoint_secs, "--disk-reserve", "8M"].map(str::to_owned));
    if way == Way::FarUnder {
        args.push("--no-warc".to_owned());
    }
    let stderr_path = tmp.path().join("crawl.stderr");
    let mut crawl = Crawl(
        Command::new(trawl_bin())
            .current_dir(&sw.dir)
            .args(&args)
            .env("NO_COLOR", "1")
            .stdout(Stdio::null())
            .stderr(fs::File::create(&stderr_path).unwrap())
            .spawn()
            .unwrap(),
    );
    let stderr = || fs::read_to_string(&stderr_path).unwrap_or_default();

    assert!(
        wait_for(Duration::from_secs(20), || crawl_log(&out).len() >= 40),
        "the crawl did not get going: {}",
        stderr()
    );
    let current = || fs::read_to_string(out.join("checkpoint/CURRENT")).ok();
    let before_pause = match way {
        Way::UnderReserve => {
            assert_eq!(current(), None, "a checkpoint before the pause");
            None
        }
        Way::FarUnder | Way::Full => {
            // Fill just after a periodic checkpoint replaced the one before (so none is
            // half written and no old one is about to be deleted, which would give back
            // a checkpoint's worth of space), well before the next.
            assert!(
                wait_for(Duration::from_secs(10), || current().is_some()),
                "no periodic checkpoint"
            );
            let first = current();
            assert!(
                wait_for(Duration::from_secs(10), || current() != first),
                "no second periodic checkpoint"
            );
            std::thread::sleep(Duration::from_millis(300));
            current()
        }
    };

    // Fill the tmpfs under the 8 MiB reserve.
    let free = space::probe(&mnt).unwrap().free_bytes;
    eprintln!(
        "crawl_disk_full ({way:?}): {:.1} MiB of 40 used by the crawl before the ballast",
        (40 * MIB - free) as f64 / MIB as f64
    );
    let ballast_path = mnt.join("ballast");
    let left = match way {
        Way::UnderReserve => 7 * MIB,
        // Incremental checkpoints write only what changed (a few hundred KiB here), so
        // "far under" must leave less than that for the pause's checkpoint to fail.
        // The crawl runs without WARC in this case, so the few log lines of the fetches
        // in flight fit and only the checkpoint's new files meet the full disk.
        Way::FarUnder => 16 * 1024,
        Way::Full => 2 * MIB,
    };
    ballast(&ballast_path, free.saturating_sub(left));
    if way == Way::Full {
        // Take the rest too, to the last page: the crawl's writes now meet ENOSPC.
        use std::io::Write;
        let mut f = fs::OpenOptions::new()
            .append(true)
            .open(&ballast_path)
            .unwrap();
        let page = [0u8; 4096];
        while f.write_all(&page).is_ok() {}
        assert_eq!(space::probe(&mnt).unwrap().free_bytes, 0);
    }
    let filled_at = Instant::now();
    // With no space at all stats.json cannot be written: the log says it.
    assert!(
        wait_for(Duration::from_secs(10), || if way == Way::Full {
            stderr().contains("paused: disk: ")
        } else {
            stats(&out).is_some_and(|s| s["paused"] == "disk")
        }),
        "no pause in stats.json: {:?}\n{}",
        stats(&out),
        stderr()
    );
    eprintln!(
        "crawl_disk_full ({way:?}): paused {:.2} s after the ballast",
        filled_at.elapsed().as_secs_f64()
    );
    let log = stderr();
    assert!(
        log.contains("paused: disk: ")
            && log.contains(" MiB free on the output filesystem")
            && log.contains("reserve 8.0 MiB"),
        "no pause warning with the figures:\n{log}"
    );
    match way {
        // The pause's checkpoint, into the reserve; it verifies.
        Way::UnderReserve => {
            assert!(
                wait_for(Duration::from_secs(10), || current().is_some()),
                "no checkpoint at the pause:\n{}",
                stderr()
            );
        }
        // The pause's checkpoint fails; the previous one stays current.
        Way::FarUnder => {
            assert!(
                wait_for(Duration::from_secs(10), || stderr()
                    .contains("checkpoint failed for lack of space")),
                "the pause's checkpoint did not fail:\n{}",
                stderr()
            );
            assert_eq!(current(), before_pause);
        }
        // Writes meet ENOSPC: the output waits or the checkpoint fails, and the
        // previous checkpoint stays current.
        Way::Full => {
            assert!(
                wait_for(Duration::from_secs(10), || {
                    let log = stderr();
                    log.contains("no space left for the crawl output: waiting for space")
                        || log.contains("checkpoint failed for lack of space")
                }),
                "no write met ENOSPC:\n{}",
                stderr()
            );
            assert_eq!(current(), before_pause);
        }
    }
    let d = inspect(&out);
    assert!(d["queued_urls"].as_u64().unwrap() > 0, "{d}");
    // Fetches in flight end (in 4 s at most, the fetch deadline); after that the server
    // sees nothing while the crawl is paused.
    std::thread::sleep(Duration::from_millis(1500));
    let before = requests(&sw);
    std::thread::sleep(Duration::from_millis(2000));
    let after = requests(&sw);
    if way != Way::Full {
        let paused = stats(&out).unwrap();
        assert_eq!(paused["paused"], "disk", "{paused}");
    }
    assert_eq!(before, after, "requests while paused: {before} -> {after}");
    assert!(crawl.0.try_wait().unwrap().is_none(), "the crawl exited");

    // Space returns; the crawl goes on to the end.
    fs::remove_file(&ballast_path).unwrap();
    let deadline = Instant::now() + Duration::from_secs(40);
    let status = loop {
        if let Some(s) = crawl.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "the crawl did not finish:\n{}",
            stderr()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let log = stderr();
    assert!(status.success(), "crawl failed ({status}):\n{log}");
    assert!(log.contains("resumed: disk"), "no resume line:\n{log}");
    sw.stop();

    let s = stats(&out).unwrap();
    assert_eq!(s["finish"], "exhausted", "{s}");
    assert!(s.get("paused").is_none(), "{s}");
    assert_eq!(s["disk_pauses"], 1, "{s}");
    assert!(s["disk_paused_secs"].as_f64().unwrap() >= 3.0, "{s}");
    assert_eq!(s["disk_reserve_bytes"], 8 * MIB, "{s}");

    let (m, f) = sw.manifest();
    let fetched = fetched_urls(&crawl_log(&out));
    let missed: Vec<_> = m.difference(&fetched).take(5).collect();
    assert!(missed.is_empty(), "M URLs never fetched: {missed:?}");
    let forbidden: Vec<_> = f.intersection(&fetched).take(5).collect();
    assert!(forbidden.is_empty(), "F URLs fetched: {forbidden:?}");
    // The referee with no delay check (as in crawl_e2e: the engine's gaps after a
    // robots.txt fetch are a known matter of their own); it still counts duplicates,
    // so a page fetched twice across the pause fails here.
    let (ok, report) = sw.check(0, 1);
    assert!(ok, "referee:\n{report}");
    let d = inspect(&out);
    assert_eq!(d["queued_urls"], 0, "{d}");
    if way != Way::FarUnder {
        warcio_check_dir(&out.join("warc"));
    }
    eprintln!(
        "crawl_disk_full ({way:?}): {} M URLs fetched, paused {:.1} s, test took {:.1} s",
        m.len(),
        s["disk_paused_secs"].as_f64().unwrap(),
        started.elapsed().as_secs_f64()
    );
}
