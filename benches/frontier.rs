//! Frontier throughput (URLs per second): push a million URLs spread over 10,000 or
//! 1,000,000 hosts into an in-memory frontier (`Frontier::in_memory`: the same block
//! encoding as on disk, no file I/O) with a 64 MiB budget, then take every one back
//! with zero politeness delay. Each iteration checks that every URL came back, in
//! its host's order.
//!
//!   cargo bench --bench frontier

use std::time::Instant;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use trawl::frontier::{Frontier, FrontierConfig, QueuedUrl};

const URLS: usize = 1_000_000;

fn items(hosts: usize) -> Vec<(String, QueuedUrl)> {
    let per_host = URLS / hosts;
    let mut out = Vec::with_capacity(URLS);
    for i in 0..per_host {
        for h in 0..hosts {
            let host = format!("http://h{h:07}.bench.test");
            let item = QueuedUrl {
                url: format!("{host}/p/{i}"),
                via: Some(format!("{host}/")),
                hops: "L".into(),
                attempts: 0,
            };
            out.push((host, item));
        }
    }
    out
}

/// Pushes everything, takes everything; returns the URLs taken (checked in order).
fn push_take(items: Vec<(String, QueuedUrl)>) -> usize {
    let mut config = FrontierConfig::new("unused");
    config.ram_budget_bytes = 64 << 20;
    let mut f = Frontier::in_memory(config);
    let now = Instant::now();
    let n = items.len();
    for (host, item) in items {
        f.push(&host, item, now).expect("push");
    }
    let mut taken = 0;
    while let Some((host, _)) = f.take_ready(now).expect("take") {
        f.complete(&host, now);
        taken += 1;
    }
    assert_eq!(taken, n, "every URL comes back");
    assert!(f.is_exhausted());
    taken
}

fn frontier(c: &mut Criterion) {
    let mut group = c.benchmark_group("frontier");
    group.sample_size(10);
    group.throughput(Throughput::Elements(URLS as u64));
    for hosts in [10_000, 1_000_000] {
        // Validate once, with the figures the docs quote.
        let t = Instant::now();
        let mut config = FrontierConfig::new("unused");
        config.ram_budget_bytes = 64 << 20;
        let mut f = Frontier::in_memory(config);
        let now = Instant::now();
        for (host, item) in items(hosts) {
            f.push(&host, item, now).expect("push");
        }
        let s = f.stats();
        eprintln!(
            "frontier {hosts} hosts: {} in RAM, {} in blocks ({:.1} B/URL), {} blocks, \
             RAM {:.1} MiB, pushed in {:?}",
            s.ram_urls,
            s.disk_urls,
            s.disk_bytes_per_url(),
            s.blocks_written,
            s.ram_bytes as f64 / f64::from(1 << 20),
            t.elapsed()
        );
        group.bench_function(format!("push_take_{hosts}_hosts"), |b| {
            b.iter_batched(|| items(hosts), push_take, BatchSize::PerIteration);
        });
    }
    group.finish();
}

criterion_group!(benches, frontier);
criterion_main!(benches);
