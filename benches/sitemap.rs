//! Sitemap parser throughput: a 50,000-URL sitemap (about 5 MB, every entry with a
//! `<lastmod>`), plain and gzip-compressed, beside two baselines measured in the same
//! run: counting `<loc>` with memchr over the plain bytes (a floor for any XML reader)
//! and inflating the gzip file without parsing (the floor for the compressed case).
//! Before timing, the parser's answer is checked (50,000 entries, every lastmod parsed,
//! no cut).
//!
//!   cargo bench --bench sitemap

use std::hint::black_box;
use std::io::{Read, Write};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use trawl::sitemap::{parse, Limits};

fn sitemap() -> Vec<u8> {
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for k in 0..50_000 {
        s.push_str(&format!(
            "  <url>\n    <loc>http://h{:06}.synth.test:8080/p/{k}?a=1&amp;b={k}</loc>\n    \
             <lastmod>2025-07-{:02}T08:{:02}:00+00:00</lastmod>\n    \
             <changefreq>weekly</changefreq>\n  </url>\n",
            k % 977,
            k % 28 + 1,
            k % 60
        ));
    }
    s.push_str("</urlset>\n");
    s.into_bytes()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).expect("gzip");
    e.finish().expect("gzip")
}

fn validate(plain: &[u8], gz: &[u8]) {
    for body in [plain, gz] {
        let map = parse(body, 0, &Limits::default()).expect("the bench sitemap parses");
        assert_eq!(map.entries.len(), 50_000);
        assert!(map.cuts.is_empty());
        assert!(map.entries.iter().all(|e| e.lastmod.is_some()));
        assert!(map.entries[7].loc.ends_with("/p/7?a=1&b=7"));
    }
    assert_eq!(memchr::memmem::find_iter(plain, b"<loc>").count(), 50_000);
}

fn bench(c: &mut Criterion) {
    let plain = sitemap();
    let gz = gzip(&plain);
    validate(&plain, &gz);
    let mut g = c.benchmark_group("sitemap_50k");
    g.throughput(Throughput::Bytes(plain.len() as u64));
    g.sample_size(20);
    g.bench_function("baseline_memchr_count_loc", |b| {
        b.iter(|| memchr::memmem::find_iter(black_box(&plain), b"<loc>").count())
    });
    g.bench_function("parse_plain", |b| {
        b.iter(|| parse(black_box(&plain), 0, &Limits::default()).map(|m| m.entries.len()))
    });
    g.bench_function("baseline_inflate_gzip", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(plain.len());
            flate2::read::MultiGzDecoder::new(black_box(&gz[..]))
                .read_to_end(&mut out)
                .map(|_| out.len())
        })
    });
    g.bench_function("parse_gzip", |b| {
        b.iter(|| parse(black_box(&gz), 0, &Limits::default()).map(|m| m.entries.len()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
