//! The two SHA-1 digests of a WARC `response` record (block: HTTP head and body;
//! payload: the body): two passes with the `sha1` crate (`DigestHasher`) against
//! `trawl::provenance::digest::digest_pair`, which feeds both chains block by block in one
//! pass, and one chain alone (`Digest::of`), the pair's yardstick. Body sizes of the
//! crawl benchmark's pages (5, 20 and 95 KB: synthetic static web and static20, javadoc
//! and the Python docs' largest).
//!
//! Run: `cargo bench --bench digest` (add `-- --quick` for a short pass).
#![allow(
    clippy::unwrap_used,
    reason = "benchmark harness; a failure aborts the run"
)]

use std::hint::black_box;

use criterion::{Criterion, Throughput};
use trawl::provenance::digest::{digest_pair, Digest, DigestHasher};

fn bench(c: &mut Criterion) {
    let head = b"HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/html\r\nContent-Length: 20480\r\nLast-Modified: Sat, 28 Nov 2026 06:00:00 GMT\r\nConnection: keep-alive\r\n\r\n";
    let data: Vec<u8> = (0..100_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
        .collect();
    let mut group = c.benchmark_group("response_digests");
    for kb in [5usize, 20, 95] {
        let body = &data[..kb * 1024];
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function(format!("two_passes_{kb}k"), |b| {
            b.iter(|| {
                let mut block = DigestHasher::new();
                block.update(black_box(head));
                block.update(black_box(body));
                let mut payload = DigestHasher::new();
                payload.update(black_box(body));
                (block.finish(), payload.finish())
            });
        });
        group.bench_function(format!("digest_pair_{kb}k"), |b| {
            b.iter(|| digest_pair(black_box(head), black_box(body)));
        });
        // One chain, the yardstick of the pair (issue 28's goal: the pair within 1.2x).
        group.bench_function(format!("one_chain_{kb}k"), |b| {
            b.iter(|| Digest::of(black_box(body)));
        });
    }
    group.finish();
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
}
