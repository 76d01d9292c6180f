//! Per-page cost of each WARC pass over real pages, hot in cache: igzip level 0,
//! libdeflate 1, the SHA-1 pair; and the page path (link extraction, 40 random cache
//! lines touched in 64 MiB as the presence bits do, igzip, digests) page by page against
//! batches of 16 (issue 28 item 3: does deflate gain from running back to back?). `cargo run --release --example page_floor -- DIR [N]`
//! reads up to N (300) `.html` files under DIR.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "a measuring tool over local files it was told to read: a failure ends it"
)]

use trawl::html::Links;
use trawl::provenance::digest::digest_pair;
use trawl::warc::igzip::{Igzip, IgzipLevel};

/// Thread CPU time (not wall time: the machine is shared).
#[derive(Clone, Copy)]
struct Instant(u64);

impl Instant {
    fn now() -> Self {
        Self(trawl::sys::procfs::thread_cpu_ns().unwrap_or(0))
    }

    fn elapsed(self) -> std::time::Duration {
        std::time::Duration::from_nanos(Self::now().0.saturating_sub(self.0))
    }
}

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
    let base = url::Url::parse("http://127.0.0.31/a/b.html").unwrap();
    // A stand-in for the presence bits and the rest of a page's work: 40 random
    // cache lines touched in 64 MiB.
    let mut bits = vec![0u64; 8 << 20];
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut pollute = |bits: &mut [u64]| {
        for _ in 0..40 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let i = (rng as usize) % bits.len();
            bits[i] = bits[i].wrapping_add(1);
        }
    };
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
        // The page path, page by page (as the shard does today) and in batches of 16
        // (scan and the rest for 16 pages, then deflate and digests for the 16).
        let t = Instant::now();
        let mut nlinks = 0;
        for p in &pages {
            nlinks += Links::extract(&base, p, None).links.len();
            pollute(&mut bits);
            out.clear();
            z.compress(p, &mut out).unwrap();
            x ^= digest_pair(&head, p).0.as_bytes()[0];
        }
        let one = t.elapsed().as_secs_f64() * 1e6 / pages.len() as f64;
        let t = Instant::now();
        for batch in pages.chunks(16) {
            for p in batch {
                nlinks += Links::extract(&base, p, None).links.len();
                pollute(&mut bits);
            }
            for p in batch {
                out.clear();
                z.compress(p, &mut out).unwrap();
            }
            for p in batch {
                x ^= digest_pair(&head, p).0.as_bytes()[0];
            }
        }
        let batched = t.elapsed().as_secs_f64() * 1e6 / pages.len() as f64;
        println!("round {round}: page path one by one {one:.1} µs, batched {batched:.1} µs ({nlinks} links)");
        println!(
            "round {round}: igzip0 {igz:.1} µs ({:.0} MB/s, ratio {:.3}); libdeflate1 {lib:.1} µs (ratio {:.3}); sha pair {sha:.1} µs; sha one {sha1:.1} µs [{x}]",
            bytes as f64 / pages.len() as f64 / igz,
            zb as f64 / bytes as f64,
            lb as f64 / bytes as f64
        );
    }
}
