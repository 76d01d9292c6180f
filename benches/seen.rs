//! Presence bits beside the baselines, in one run: our `SeenSet`, `sbbf-rs` (split-block
//! Bloom filter, via its safe wrapper `sbbf-rs-safe`), `fastbloom` (its lock-free
//! `AtomicBloomFilter`) and a `HashSet<u64>` of 64-bit fingerprints.
//!
//! Three parts, each validating its answer:
//! 1. space: bits per key at 1 % *measured* false positives, found by bisection on the
//!    size for each filter (1e6 keys, 1e6 other keys probed);
//! 2. fill: insert `N` fresh keys (one timed pass, as a crawl does), then probe `N`
//!    other keys; ns/op, measured fp, no false negatives. `N` is
//!    `TRAWL_BENCH_SEEN_CAPACITY` (default 1e7; 1e9 for the big run), the number of
//!    keys inserted `TRAWL_BENCH_SEEN_OPS` (default: the capacity). The HashSet gets
//!    the same memory as our set and so holds fewer keys (it is reported per its own
//!    key count);
//! 3. criterion: batched probes of the filled sets (steady state, no mutation).
//!
//! Run: `cargo bench --bench seen` (add `-- --quick` for a short criterion pass).
#![allow(
    clippy::unwrap_used,
    reason = "benchmark harness; a failure aborts the run"
)]

use std::collections::HashSet;
use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, Throughput};
use fastbloom::AtomicBloomFilter;
use sbbf_rs_safe::Filter as Sbbf;
use trawl::seen::{model, Backing, SeenConfig, SeenSet, Sizing};
use xxhash_rust::xxh3::xxh3_64;

const BATCH: usize = 64;

fn key(i: u64) -> [u8; 8] {
    i.to_le_bytes()
}

fn h64(i: u64) -> u64 {
    xxh3_64(&key(i))
}

/// The structures under test, behind one interface.
enum Subject {
    /// Our set; `true` when memory-backed. The temp dir keeps the file alive for the run.
    Seen(
        SeenSet,
        #[allow(dead_code, reason = "held for its Drop")] tempfile::TempDir,
    ),
    Sbbf(Sbbf),
    Fast(AtomicBloomFilter),
    Hash(HashSet<u64>),
}

impl Subject {
    fn name(&self) -> &'static str {
        match self {
            Subject::Seen(s, _) if s.backing() == Backing::Memory => {
                "trawl SeenSet, memory (batch 64)"
            }
            Subject::Seen(..) => "trawl SeenSet, file-mapped (batch 64)",
            Subject::Sbbf(_) => "sbbf-rs",
            Subject::Fast(_) => "fastbloom AtomicBloomFilter",
            Subject::Hash(_) => "HashSet<u64> fingerprints",
        }
    }

    fn seen_with(blocks: u64, k: u32, capacity: u64, backing: Backing) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = SeenConfig {
            sizing: Some(Sizing { blocks, k }),
            backing,
            ..SeenConfig::new(capacity, 0.5)
        };
        Subject::Seen(
            SeenSet::create_with(dir.path().join("s"), &config).unwrap(),
            dir,
        )
    }

    fn bytes(&self) -> f64 {
        match self {
            Subject::Seen(s, _) => s.stats().file_bytes as f64,
            Subject::Sbbf(f) => f.as_bytes().len() as f64,
            Subject::Fast(f) => f.num_bits() as f64 / 8.0,
            // hashbrown: 8 bytes per bucket + 1 control byte (+16 trailing).
            Subject::Hash(h) => ((h.capacity() as u64 * 8 / 7).next_power_of_two() * 9) as f64,
        }
    }

    /// Inserts keys `lo..hi`; returns how many were reported already present.
    fn insert(&mut self, lo: u64, hi: u64) -> u64 {
        let mut present = 0u64;
        match self {
            Subject::Seen(s, _) => {
                let mut keys = [[0u8; 8]; BATCH];
                let mut out = [false; BATCH];
                let mut i = lo;
                while i < hi {
                    let n = ((hi - i) as usize).min(BATCH);
                    for (j, k) in keys[..n].iter_mut().enumerate() {
                        *k = key(i + j as u64);
                    }
                    s.test_and_set_batch(&keys[..n], &mut out[..n]);
                    present += out[..n].iter().filter(|&&b| b).count() as u64;
                    i += n as u64;
                }
            }
            Subject::Sbbf(f) => (lo..hi).for_each(|i| present += u64::from(f.insert_hash(h64(i)))),
            Subject::Fast(f) => (lo..hi).for_each(|i| present += u64::from(f.insert_hash(h64(i)))),
            Subject::Hash(h) => (lo..hi).for_each(|i| present += u64::from(!h.insert(h64(i)))),
        }
        present
    }

    /// Probes keys `lo..hi`; returns how many were reported present.
    fn probe(&self, lo: u64, hi: u64) -> u64 {
        match self {
            Subject::Seen(s, _) => {
                let mut keys = [[0u8; 8]; BATCH];
                let mut out = [false; BATCH];
                let mut present = 0;
                let mut i = lo;
                while i < hi {
                    let n = ((hi - i) as usize).min(BATCH);
                    for (j, k) in keys[..n].iter_mut().enumerate() {
                        *k = key(i + j as u64);
                    }
                    s.contains_batch(&keys[..n], &mut out[..n]);
                    present += out[..n].iter().filter(|&&b| b).count() as u64;
                    i += n as u64;
                }
                present
            }
            Subject::Sbbf(f) => (lo..hi).filter(|&i| f.contains_hash(h64(i))).count() as u64,
            Subject::Fast(f) => (lo..hi).filter(|&i| f.contains_hash(h64(i))).count() as u64,
            Subject::Hash(h) => (lo..hi).filter(|&i| h.contains(&h64(i))).count() as u64,
        }
    }
}

/// Measured fp of a structure built by `make(bits)` after `n` inserts.
fn measured_fp(make: &dyn Fn(u64) -> Subject, bits: u64, n: u64) -> (f64, f64) {
    let mut s = make(bits);
    s.insert(0, n);
    assert_eq!(s.probe(0, n), n, "{}: false negatives", s.name());
    let fp = s.probe(n, 2 * n) as f64 / n as f64;
    (fp, s.bytes() * 8.0 / n as f64)
}

/// Bisection on the size for 1 % measured fp.
fn bits_per_key_at_one_percent(make: &dyn Fn(u64) -> Subject, n: u64) -> (f64, f64) {
    let (mut lo, mut hi) = (n * 6, n * 14);
    let mut best = measured_fp(make, hi, n);
    assert!(best.0 <= 0.01, "upper bound too small");
    while hi - lo > n / 100 {
        let mid = lo + (hi - lo) / 2;
        let r = measured_fp(make, mid, n);
        if r.0 <= 0.01 {
            hi = mid;
            best = r;
        } else {
            lo = mid;
        }
    }
    (best.1, best.0)
}

fn space() {
    let n = 1_000_000u64;
    println!("## space at 1 % measured fp ({n} keys, {n} other keys probed, bisection on size)");
    println!("| structure | bits/key | measured fp |");
    println!("|---|---|---|");
    let ours = |bits: u64| {
        let blocks = (bits / model::BLOCK_BITS).max(1);
        Subject::seen_with(
            blocks,
            model::best_k(n as f64, blocks).0,
            n,
            Backing::Memory,
        )
    };
    let sbbf = |bits: u64| Subject::Sbbf(Sbbf::new(1, bits as usize));
    let fast = |bits: u64| {
        Subject::Fast(AtomicBloomFilter::with_num_bits(bits as usize).expected_items(n as usize))
    };
    let mut ours_bpk = 0.0;
    for (name, make) in [
        ("trawl SeenSet", &ours as &dyn Fn(u64) -> Subject),
        ("sbbf-rs", &sbbf),
        ("fastbloom", &fast),
    ] {
        let (bpk, fp) = bits_per_key_at_one_percent(make, n);
        println!("| {name} | {bpk:.2} | {:.4} % |", fp * 100.0);
        if name == "trawl SeenSet" {
            ours_bpk = bpk;
        }
    }
    let mut h = Subject::Hash(HashSet::with_capacity(n as usize));
    h.insert(0, n);
    let fp = h.probe(n, 2 * n) as f64 / n as f64;
    println!(
        "| HashSet<u64> | {:.2} | {:.4} % |",
        h.bytes() * 8.0 / n as f64,
        fp * 100.0
    );
    println!("(our set's file includes its 4096-byte header; model for 512-bit blocks: 9.90)");
    assert!(
        ours_bpk <= 10.0,
        "space goal missed: {ours_bpk} bits per key"
    );
}

/// CPU time of this thread in ns (Linux schedstat): on a shared machine, the wall clock
/// mostly measures the other jobs.
fn thread_cpu_ns() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .next()
                .and_then(|v| v.parse::<f64>().ok())
        })
        .unwrap_or(0.0)
}

/// Times `f` by wall clock and by this thread's CPU time, in ns.
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64, f64) {
    let (t, c) = (Instant::now(), thread_cpu_ns());
    let r = f();
    (r, t.elapsed().as_nanos() as f64, thread_cpu_ns() - c)
}

fn fill(capacity: u64, ops: u64) -> Vec<Subject> {
    let sizing = Sizing::for_fp(capacity, 0.01).unwrap();
    let bytes = sizing.bit_bytes();
    let hash_keys = {
        // Largest key count whose HashSet fits in the same bytes (9 bytes per bucket,
        // power-of-two buckets, 7/8 max load).
        let buckets = (bytes / 9).next_power_of_two() / 2;
        buckets * 7 / 8
    };
    println!("\n## fill and probe: capacity {capacity} ({} MiB per filter), {ops} fresh inserts then {ops} probes", bytes >> 20);
    println!("CPU ns/op is the thread's own CPU time (schedstat); wall ns/op includes time the shared machine gave to others.");
    println!("| structure | keys | bits/key at capacity | insert CPU ns/op | probe CPU ns/op | insert wall ns/op | probe wall ns/op | measured fp | insert CPU ratio to ours | probe CPU ratio to ours |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut subjects = vec![
        Subject::seen_with(sizing.blocks, sizing.k, capacity, Backing::Memory),
        Subject::Sbbf(Sbbf::new(1, bytes as usize * 8)),
        Subject::Fast(
            AtomicBloomFilter::with_num_bits(bytes as usize * 8).expected_items(capacity as usize),
        ),
        Subject::Hash(HashSet::with_capacity(hash_keys as usize)),
        Subject::seen_with(sizing.blocks, sizing.k, capacity, Backing::Mapped),
    ];
    let mut ours = (0.0, 0.0);
    for s in &mut subjects {
        let (n, keys_at_capacity) = match s {
            Subject::Hash(_) => (hash_keys.min(ops), hash_keys),
            // The file-mapped set pays kernel write-back faults; a tenth of the ops keeps
            // the run bounded on a loaded machine.
            Subject::Seen(x, _) if x.backing() == Backing::Mapped => ((ops / 10).max(1), capacity),
            _ => (ops, capacity),
        };
        let (_, insert_wall, insert_cpu) = timed(|| s.insert(0, n));
        let (hits, probe_wall, probe_cpu) = timed(|| s.probe(n, 2 * n));
        // Validate: a sample of inserted keys must be present.
        let step = (n / 1000).max(1);
        for i in (0..n).step_by(step as usize) {
            assert_eq!(s.probe(i, i + 1), 1, "{}: false negative", s.name());
        }
        let per = |x: f64| x / n as f64;
        if ours.0 == 0.0 {
            ours = (per(insert_cpu), per(probe_cpu));
        }
        println!(
            "| {} | {n} | {:.2} | {:.1} | {:.1} | {:.1} | {:.1} | {:.4} % | {:.2} | {:.2} |",
            s.name(),
            s.bytes() * 8.0 / keys_at_capacity as f64,
            per(insert_cpu),
            per(probe_cpu),
            per(insert_wall),
            per(probe_wall),
            hits as f64 / n as f64 * 100.0,
            per(insert_cpu) / ours.0,
            per(probe_cpu) / ours.1,
        );
    }
    subjects
}

fn main() {
    let capacity = std::env::var("TRAWL_BENCH_SEEN_CAPACITY")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .map_or(10_000_000, |x| x as u64);
    if std::env::var_os("TRAWL_BENCH_SEEN_SKIP_SPACE").is_none() {
        space();
    }
    let ops = std::env::var("TRAWL_BENCH_SEEN_OPS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .map_or(capacity, |x| (x as u64).min(capacity));
    let subjects = fill(capacity, ops);
    let mut c = Criterion::default().configure_from_args().sample_size(10);
    let mut group = c.benchmark_group(format!("seen/probe_64/cap_{capacity}"));
    group.throughput(Throughput::Elements(BATCH as u64));
    for s in &subjects {
        let mut next = 10 * capacity;
        group.bench_function(s.name(), |b| {
            b.iter(|| {
                next += BATCH as u64;
                black_box(s.probe(next, next + BATCH as u64))
            })
        });
    }
    group.finish();
    c.final_summary();
}
