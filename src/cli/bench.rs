//! `trawl bench <target>`: benchmarks that print one JSON object.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use clap::{Args, Subcommand};
use trawl::seen::{Backing, SeenConfig, SeenSet, Sizing, Stats};

use super::count::{parse_count, parse_probability};

/// Run a benchmark and print its result as one JSON object.
#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    target: BenchTarget,
}

#[derive(Debug, Subcommand)]
enum BenchTarget {
    /// The presence-bit set: insert M distinct keys, probe M other keys.
    Seen(SeenBenchArgs),
    /// The RAM each known host costs: frontier entry with one queued URL, robots.txt
    /// rules, politeness state (docs/frontier.md, "Memory per host").
    Hosts(super::bench_hosts::HostsBenchArgs),
}

/// Arguments of `trawl bench seen`.
#[derive(Debug, Args)]
pub struct SeenBenchArgs {
    /// Design capacity of the set (keys), e.g. 1e9.
    #[arg(long, value_parser = parse_count)]
    capacity: u64,
    /// Target false-positive rate at capacity.
    #[arg(long, default_value = "0.01", value_parser = parse_probability)]
    fp: f64,
    /// Distinct keys to insert (and, separately, other keys to probe).
    #[arg(long, value_parser = parse_count)]
    ops: u64,
    /// Threads inserting (and probing) at once, each on its own slice of the keys.
    #[arg(long, default_value_t = 1)]
    threads: u32,
    /// Keys per batched call; 1 uses the single-key calls.
    #[arg(long, default_value_t = 64)]
    batch: usize,
    /// Also snapshot the filled set, close it and reopen the snapshot, timing each.
    #[arg(long)]
    snapshot: bool,
    /// Keep the live bits in anonymous memory (huge pages) instead of the shared file
    /// mapping; the file is written at close.
    #[arg(long)]
    memory: bool,
    /// Directory for the set's files (default: the system temp dir). Removed afterwards.
    #[arg(long)]
    dir: Option<PathBuf>,
}

/// Runs `trawl bench ...`.
pub fn run(args: BenchArgs) -> anyhow::Result<ExitCode> {
    match args.target {
        BenchTarget::Seen(a) => bench_seen(&a),
        BenchTarget::Hosts(a) => super::bench_hosts::run(&a),
    }
}

fn key(i: u64) -> [u8; 8] {
    i.to_le_bytes()
}

/// CPU time this thread has run, in nanoseconds (Linux `schedstat`; 0 elsewhere).
///
/// On a shared machine the wall clock mostly measures the other jobs; the CPU time a
/// thread actually got is the per-core cost.
fn thread_cpu_ns() -> u64 {
    trawl::sys::procfs::thread_cpu_ns().unwrap_or(0)
}

/// Wall and CPU time of a parallel phase, and the sum of its results.
struct Phase {
    wall_ns: f64,
    cpu_ns: f64,
    total: u64,
}

/// Runs `f(lo, hi)` on `threads` threads over contiguous slices of `start..start+len`.
fn parallel(threads: u32, start: u64, len: u64, f: impl Fn(u64, u64) -> u64 + Sync) -> Phase {
    let t = u64::from(threads.max(1));
    let began = Instant::now();
    let (total, cpu) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..t)
            .map(|i| {
                let lo = start + len * i / t;
                let hi = start + len * (i + 1) / t;
                let f = &f;
                s.spawn(move || {
                    let c = thread_cpu_ns();
                    let r = f(lo, hi);
                    (r, thread_cpu_ns().saturating_sub(c))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or((0, 0)))
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    });
    Phase {
        wall_ns: began.elapsed().as_nanos() as f64,
        cpu_ns: cpu as f64,
        total,
    }
}

/// Inserts keys `lo..hi`; returns how many were reported present (lost: all distinct).
fn insert_range(set: &SeenSet, lo: u64, hi: u64, batch: usize) -> u64 {
    let mut present = 0;
    if batch <= 1 {
        for i in lo..hi {
            present += u64::from(set.test_and_set(&key(i)));
        }
        return present;
    }
    let mut keys = vec![[0u8; 8]; batch];
    let mut out = vec![false; batch];
    let mut i = lo;
    while i < hi {
        let n = ((hi - i) as usize).min(batch);
        let (keys, out) = (&mut keys[..n], &mut out[..n]);
        for (j, k) in keys.iter_mut().enumerate() {
            *k = key(i + j as u64);
        }
        set.test_and_set_batch(keys, out);
        present += out.iter().filter(|&&b| b).count() as u64;
        i += n as u64;
    }
    present
}

/// Probes keys `lo..hi`; returns how many were reported present.
fn probe_range(set: &SeenSet, lo: u64, hi: u64, batch: usize) -> u64 {
    if batch <= 1 {
        return (lo..hi).filter(|&i| set.contains(&key(i))).count() as u64;
    }
    let mut keys = vec![[0u8; 8]; batch];
    let mut out = vec![false; batch];
    let mut present = 0;
    let mut i = lo;
    while i < hi {
        let n = ((hi - i) as usize).min(batch);
        let (keys, out) = (&mut keys[..n], &mut out[..n]);
        for (j, k) in keys.iter_mut().enumerate() {
            *k = key(i + j as u64);
        }
        set.contains_batch(keys, out);
        present += out.iter().filter(|&&b| b).count() as u64;
        i += n as u64;
    }
    present
}

fn bench_seen(a: &SeenBenchArgs) -> anyhow::Result<ExitCode> {
    if a.ops == 0 || a.threads == 0 {
        anyhow::bail!("--ops and --threads must be at least 1");
    }
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = a
        .dir
        .clone()
        .unwrap_or_else(std::env::temp_dir)
        .join(format!("trawl-bench-seen-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let result = bench_seen_in(a, &dir);
    let cleanup = std::fs::remove_dir_all(&dir);
    let v = result?;
    cleanup?;
    println!("{v}");
    Ok(ExitCode::SUCCESS)
}

fn bench_seen_in(a: &SeenBenchArgs, dir: &std::path::Path) -> anyhow::Result<serde_json::Value> {
    let t0 = Instant::now();
    let backing = if a.memory {
        Backing::Memory
    } else {
        Backing::Mapped
    };
    // A run that fills the set past one key per 4 KiB page asks for huge pages from the
    // start, as a crawl sized to its URLs should (`SeenConfig::huge_pages`).
    let huge_pages = Sizing::for_fp(a.capacity, a.fp).is_some_and(|s| a.ops >= s.blocks / 64);
    let config = SeenConfig {
        backing,
        huge_pages,
        ..SeenConfig::new(a.capacity, a.fp)
    };
    let set = SeenSet::create_with(dir.join("live"), &config)?;
    let create_ms = t0.elapsed().as_secs_f64() * 1e3;

    let insert = parallel(a.threads, 0, a.ops, |lo, hi| {
        insert_range(&set, lo, hi, a.batch)
    });
    let probe = parallel(a.threads, a.ops, a.ops, |lo, hi| {
        probe_range(&set, lo, hi, a.batch)
    });
    let (insert_ns, observed_lost) = (insert.wall_ns, insert.total);
    let (probe_ns, probe_hits) = (probe.wall_ns, probe.total);
    let ops = a.ops as f64;

    // Validate: no false negatives on a sample of the inserted keys.
    let step = (a.ops / 100_000).max(1);
    let missing = (0..a.ops)
        .step_by(step as usize)
        .filter(|&i| !set.contains(&key(i)))
        .count();
    if missing > 0 {
        anyhow::bail!("{missing} inserted keys reported absent: false negatives");
    }
    let stats: Stats = set.stats();
    let scanned_fp = set.scan_fp_rate();
    let mut v = serde_json::json!({
        "capacity": a.capacity,
        "target_fp": a.fp,
        "ops": a.ops,
        "threads": a.threads,
        "batch": a.batch,
        "backing": if a.memory { "memory" } else { "mapped" },
        "huge_pages": huge_pages,
        "k": stats.k,
        "bits": stats.bits,
        "file_bytes": stats.file_bytes,
        "bits_per_key": stats.file_bytes as f64 * 8.0 / a.capacity as f64,
        "theoretical_fp": stats.expected_fp,
        "scanned_fp": scanned_fp,
        "measured_fp": probe_hits as f64 / a.ops as f64,
        "fill_ratio": stats.fill_ratio,
        "inserted": stats.inserted,
        "expected_lost": stats.expected_lost,
        "observed_lost": observed_lost,
        "create_ms": create_ms,
        "insert_ns_per_op": insert_ns / a.ops as f64,
        "probe_ns_per_op": probe_ns / a.ops as f64,
        "insert_mops_per_s": ops / insert_ns * 1e3,
        "probe_mops_per_s": ops / probe_ns * 1e3,
        // Per-core cost: CPU time the worker threads got, per op (0 if unavailable).
        "insert_cpu_ns_per_op": insert.cpu_ns / ops,
        "probe_cpu_ns_per_op": probe.cpu_ns / ops,
        "insert_mops_per_core_s": if insert.cpu_ns > 0.0 { ops / insert.cpu_ns * 1e3 } else { 0.0 },
    });
    if a.snapshot {
        let snap = dir.join("snapshot");
        let info = set.snapshot_to(&snap)?;
        let t = Instant::now();
        set.close()?;
        let close_ms = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let reopened = SeenSet::open(&snap)?;
        let reopen_ms = t.elapsed().as_secs_f64() * 1e3;
        if reopened.stats().inserted != stats.inserted || !reopened.contains(&key(0)) {
            anyhow::bail!("reopened snapshot differs from the set");
        }
        let secs = info.duration.as_secs_f64();
        let gb = info.file_bytes as f64 / 1e9;
        if let Some(obj) = v.as_object_mut() {
            obj.insert("snapshot_ms".into(), (secs * 1e3).into());
            obj.insert("snapshot_s_per_gb".into(), (secs / gb).into());
            obj.insert("close_ms".into(), close_ms.into());
            obj.insert("reopen_ms".into(), reopen_ms.into());
        }
    }
    if let Some(obj) = v.as_object_mut() {
        obj.insert(
            "peak_rss_bytes".into(),
            trawl::sys::procfs::process_memory()
                .map(|m| m.peak_rss_bytes)
                .into(),
        );
    }
    Ok(v)
}
