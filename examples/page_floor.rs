//! Per-page cost of each WARC pass over real pages, hot in cache: igzip level 0,
//! libdeflate 1, the SHA-1 pair. `cargo run --release --example page_floor -- DIR [N]`
//! reads up to N (300) `.html` files under DIR.
#![allow(
    clippy::unwrap_used,
    reason = "measurement harness; a failure aborts the run"
)]
use std::time::Instant;

use trawl::provenance::digest::digest_pair;
use trawl::warc::igzip::{Igzip, IgzipLevel};

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().expect("usage: page_floor DIR [N]");
    let n: usize = args.next().and_then(|v| v.parse().ok()).unwrap_or(300);
    let mut pages = Vec::new();
    let mut stack = vec![std::path::PathBuf::from(dir)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if pages.len() < n && p.extension().is_some_and(|x| x == "html") {
                pages.push(std::fs::read(&p).unwrap());
            }
        }
    }
    let bytes: usize = pages.iter().map(Vec::len).sum();
    println!("{} pages, mean {} bytes", pages.len(), bytes / pages.len());
    let mut z = Igzip::new(IgzipLevel::Zero);
    let mut ld = libdeflater::Compressor::new(libdeflater::CompressionLvl::new(1).unwrap());
    let mut out = Vec::with_capacity(1 << 20);
    for round in 0..3 {
        let t = Instant::now();
        let mut zb = 0;
        for p in &pages {
            out.clear();
            z.compress(p, &mut out).unwrap();
            zb += out.len();
        }
        let igz = t.elapsed().as_secs_f64() * 1e6 / pages.len() as f64;
        let t = Instant::now();
        let mut lb = 0;
        for p in &pages {
            out.clear();
            out.resize(ld.gzip_compress_bound(p.len()), 0);
            lb += ld.gzip_compress(p, &mut out).unwrap();
        }
        let lib = t.elapsed().as_secs_f64() * 1e6 / pages.len() as f64;
        let t = Instant::now();
        let head = [b'h'; 300];
        let mut x = 0u8;
        for p in &pages {
            let (a, _b) = digest_pair(&head, p);
            x ^= a.as_bytes()[0];
        }
        let sha = t.elapsed().as_secs_f64() * 1e6 / pages.len() as f64;
        let t = Instant::now();
        for p in &pages {
            let a = trawl::provenance::digest::Digest::of(p);
            x ^= a.as_bytes()[0];
        }
        let sha1 = t.elapsed().as_secs_f64() * 1e6 / pages.len() as f64;
        println!(
            "round {round}: igzip0 {igz:.1} µs ({:.0} MB/s, ratio {:.3}); libdeflate1 {lib:.1} µs (ratio {:.3}); sha pair {sha:.1} µs; sha one {sha1:.1} µs [{x}]",
            bytes as f64 / pages.len() as f64 / igz,
            zb as f64 / bytes as f64,
            lb as f64 / bytes as f64
        );
    }
}
