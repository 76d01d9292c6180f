//! WARC writer throughput: captures of a 20 KB HTML response (request, response,
//! metadata records) written to a `.warc.gz` file at gzip levels 1, 3 and 6 of the
//! default implementation (levels 1 and 3 are igzip's 0 and 3, level 6 is libdeflate's), against
//! same-run baselines: gzip alone (flate2 over zlib-rs) over the same bytes, and SHA-1
//! alone.
//!
//! Validation: after each measured run the file is read back with `warc::scan` (every
//! gzip member decompressed, CRC and record framing checked) and the record count must
//! equal 1 warcinfo + 3 records per capture written.
//!
//! Each case runs twice: group `warc_write_20KB` in wall time (criterion's default) and
//! group `warc_write_20KB_cpu` in CPU time of the benchmark thread
//! (`CLOCK_THREAD_CPUTIME_ID` through the `cpu-time` crate). On a shared machine the
//! CPU-time figures are the stable ones: time spent waiting for a core is not counted.
//!
//! Revisits (`docs/benchmarks.md`, "WARC revisit"): `capture_revisit/gzip6` writes the
//! same capture again and again with deduplication on, so every capture after the first
//! is `request` + `revisit` (head only) + `metadata`; validated by the writer's revisit
//! count and the record count. `revisit_index/*` times the payload-digest index alone
//! (64 MiB): a lookup that misses followed by an insert (every new payload pays this),
//! and a lookup that hits; validated by the index's hit and miss counters. The
//! `capture/*` cases run with deduplication off, so each writes a full response.
//!
//! Deflate choice (`docs/warc.md`, "Compression level and implementation"): group
//! `deflate_mix` compresses real HTML pages (`support/html_mix.rs`: the Debian OpenJDK
//! 17 javadoc, the Debian Python 3.11 docs and the real-site benchmark's generated
//! site, pages of 5-100 KB), each page wrapped in a `response` record and compressed
//! into its own member as the writer does, with zlib-rs, libdeflate and igzip at their
//! fast levels; the same pages brotli-encoded (as servers send them); and the small
//! records (`request`, `metadata`) of the pages' captures.
//! It prints the compressed/raw ratio of each case and validates every member by
//! decoding it back. Skipped (with a message) when none of the sources is there.
//! `examples/deflate_mix.rs` prints the same comparison as one table, faster.
//!
//! The record path without deflate (`capture_build/stored`, `capture_append/stored`):
//! libdeflate level 0 (stored blocks), so what is left is building the records, the
//! member buffers and the writes; see `bench_record_path`.
//!
//! Run: `cargo bench --bench warc`. Figures in `docs/benchmarks.md`, "WARC writer".

#[path = "support/html_mix.rs"]
mod html_mix;

use std::cell::Cell;
use std::io::Write;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use trawl::http::ResponseHead;
use trawl::provenance::{Digest, WarcDate};
use trawl::provenance::{FetchTimings, Hop};
use trawl::warc::gzip::{Deflater, MemberEncoder};
use trawl::warc::{
    dedup::PayloadIndex, scan, Capture, CaptureMetadata, DedupConfig, HttpResponse, Outlink,
    Record, RecordId, RecordType, WarcWriter, WarcWriterConfig,
};

const BODY_BYTES: usize = 20 * 1024;

/// An HTML-like body: tags, links and varied words, compressing about like real pages.
fn html_body(seed: u64) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let words = [
        "crawler",
        "archive",
        "the",
        "of",
        "politeness",
        "frontier",
        "robots",
        "and",
        "record",
        "digest",
        "a",
        "to",
        "web",
        "page",
        "host",
        "link",
        "shard",
        "memory",
    ];
    let mut out = b"<!doctype html><html><head><title>bench</title></head><body>\n".to_vec();
    while out.len() < BODY_BYTES {
        match rng.u8(..10) {
            0 => {
                let n = rng.u32(..100_000);
                writeln!(out, "<a href=\"/p/{n}\">link {n}</a>").unwrap_or_default();
            }
            1 => out.extend_from_slice(b"</p>\n<p>"),
            _ => {
                out.extend_from_slice(words[rng.usize(..words.len())].as_bytes());
                out.push(b' ');
            }
        }
    }
    out.truncate(BODY_BYTES);
    out
}

fn capture(body: &[u8]) -> Capture {
    Capture {
        target_uri: "http://bench.example/some/page?id=12345".into(),
        date: WarcDate::now(),
        ip: Some(std::net::IpAddr::from([127, 0, 0, 1])),
        request: b"GET /some/page?id=12345 HTTP/1.1\r\nHost: bench.example\r\n\
                   User-Agent: trawl/0.1 (+https://github.com/trawl-crawler/trawl)\r\n\
                   Accept: */*\r\nAccept-Encoding: gzip\r\n\r\n"
            .into(),
        response: HttpResponse::new(
            &ResponseHead::parse(
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\
                     Content-Length: {}\r\nServer: synthweb\r\n\r\n",
                    body.len()
                )
                .as_bytes(),
            )
            .expect("a valid head"),
            body.into(),
        ),
        truncated: None,
        revisit: None,
        metadata: Some(CaptureMetadata {
            via: Some("http://bench.example/".into()),
            hops_path: "LL".into(),
            outlinks_unknown: false,
            outlinks: (0..20)
                .map(|i| Outlink {
                    url: format!("http://bench.example/p/{i}"),
                    hop: Hop::Link,
                })
                .collect(),
            timings: FetchTimings {
                total_ms: Some(3),
                ..FetchTimings::default()
            },
        }),
    }
}

/// CPU time of the calling thread, in nanoseconds.
struct ThreadCpu;

impl Measurement for ThreadCpu {
    type Intermediate = cpu_time::ThreadTime;
    type Value = u64;

    fn start(&self) -> cpu_time::ThreadTime {
        cpu_time::ThreadTime::now()
    }
    fn end(&self, start: cpu_time::ThreadTime) -> u64 {
        u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, value: &u64) -> f64 {
        *value as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        // Nanoseconds, like wall time: reuse its formatter.
        WallTime.formatter()
    }
}

fn bench_wall(c: &mut Criterion) {
    bench_writer(c, "warc_write_20KB");
}

fn bench_cpu(c: &mut Criterion<ThreadCpu>) {
    bench_writer(c, "warc_write_20KB_cpu");
}

fn bench_writer<M: Measurement>(c: &mut Criterion<M>, group_name: &str) {
    let body = html_body(1);
    let capture = capture(&body);
    let mut group = c.benchmark_group(group_name);
    group.throughput(Throughput::Bytes(BODY_BYTES as u64));
    group.sample_size(30);
    for level in [1u32, 3, 6] {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let mut config = WarcWriterConfig::new(dir.path());
        config.gzip_level = level;
        config.max_file_bytes = u64::MAX;
        // The same capture over and over: without this, all but the first would be
        // revisits (measured separately below).
        config.dedup = DedupConfig::off();
        let mut writer = WarcWriter::new(config).unwrap_or_else(|e| panic!("writer: {e}"));
        let count = Cell::new(0u64);
        group.bench_function(BenchmarkId::new("capture", format!("gzip{level}")), |b| {
            b.iter(|| {
                let written = writer
                    .write_capture(&capture)
                    .unwrap_or_else(|e| panic!("write: {e}"));
                count.set(count.get() + 1);
                written.bytes
            });
        });
        let summary = writer.close().unwrap_or_else(|e| panic!("close: {e}"));
        if count.get() == 0 {
            continue; // Left out by a filter on the command line.
        }
        // Validate: every record is read back whole.
        let report = scan_only_file(dir.path());
        assert!(!report.is_torn());
        assert_eq!(report.records, 1 + 3 * count.get());
        assert_eq!(report.valid_len, summary.bytes);
        eprintln!(
            "gzip level {level}: {} captures, {:.3} compressed/raw bytes",
            count.get(),
            summary.bytes as f64 / summary.raw_bytes as f64
        );
    }

    bench_record_path(&mut group, &capture);
    bench_revisits(&mut group, &capture);

    // Baselines over the same bytes: the response record's content through gzip
    // alone (no WARC formatting, no digest, no file), and SHA-1 alone.
    let mut raw = capture.response.head.to_vec();
    raw.extend_from_slice(&body);
    for level in [1u32, 3, 6] {
        group.bench_function(BenchmarkId::new("gzip_only", format!("gzip{level}")), |b| {
            b.iter(|| {
                let mut gz = flate2::write::GzEncoder::new(
                    Vec::with_capacity(BODY_BYTES),
                    flate2::Compression::new(level),
                );
                gz.write_all(&raw).unwrap_or_default();
                gz.finish().map(|v| v.len()).unwrap_or_default()
            });
        });
    }
    group.bench_function("sha1_only", |b| b.iter(|| Digest::of(&raw)));
    group.finish();
}

/// The record path without deflate's cost (libdeflate level 0: stored blocks, a copy
/// and a CRC): `capture_build/stored` builds and compresses a capture's records as a
/// shard does (record heads, metadata block, member buffer) and drops the result as the
/// writer thread does; `capture_append/stored` appends one compressed capture to a file
/// again and again as the writer thread does (members copied in, file writes), with
/// stages of 64 KiB, 256 KiB and 1 MiB (`WarcWriterConfig::stage_bytes`).
/// Validated by the record count read back.
fn bench_record_path<M: Measurement>(
    group: &mut criterion::BenchmarkGroup<'_, M>,
    capture: &Capture,
) {
    for stage_kib in [64, 256, 1024] {
        record_path_case(group, capture, stage_kib);
    }
}

fn record_path_case<M: Measurement>(
    group: &mut criterion::BenchmarkGroup<'_, M>,
    capture: &Capture,
    stage_kib: usize,
) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let mut config = WarcWriterConfig::new(dir.path());
    config.deflater = Deflater::Libdeflate;
    config.gzip_level = 0;
    config.max_file_bytes = u64::MAX;
    config.dedup = DedupConfig::off();
    config.stage_bytes = stage_kib * 1024;
    let mut writer = WarcWriter::new(config).unwrap_or_else(|e| panic!("writer: {e}"));
    let mut compressor = writer.compressor();
    if stage_kib == 1024 {
        group.bench_function(BenchmarkId::new("capture_build", "stored"), |b| {
            b.iter(|| {
                compressor
                    .compress(capture)
                    .map(|c| c.compressed_bytes())
                    .unwrap_or_else(|e| panic!("compress: {e}"))
            });
        });
    }
    let compressed = compressor
        .compress(capture)
        .unwrap_or_else(|e| panic!("compress: {e}"));
    let count = Cell::new(0u64);
    let name = format!("stored_stage{stage_kib}k");
    group.bench_function(BenchmarkId::new("capture_append", name), |b| {
        b.iter(|| {
            count.set(count.get() + 1);
            writer
                .append_compressed(&compressed)
                .unwrap_or_else(|e| panic!("append: {e}"))
                .bytes
        });
    });
    writer.close().unwrap_or_else(|e| panic!("close: {e}"));
    if count.get() > 0 {
        assert_eq!(scan_only_file(dir.path()).records, 1 + 3 * count.get());
    }
}

/// Scans the one WARC file a benchmark wrote in `dir`.
fn scan_only_file(dir: &std::path::Path) -> trawl::warc::ScanReport {
    let file = std::fs::read_dir(dir)
        .ok()
        .and_then(|mut d| d.next())
        .and_then(Result::ok)
        .map(|e| e.path())
        .unwrap_or_else(|| panic!("no warc file written"));
    scan(&file).unwrap_or_else(|e| panic!("scan: {e}"))
}

/// A capture whose payload was written before (gzip 6, deduplication on), and the
/// payload-digest index alone.
fn bench_revisits<M: Measurement>(group: &mut criterion::BenchmarkGroup<'_, M>, capture: &Capture) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let mut config = WarcWriterConfig::new(dir.path());
    config.max_file_bytes = u64::MAX;
    let mut writer = WarcWriter::new(config).unwrap_or_else(|e| panic!("writer: {e}"));
    let count = Cell::new(0u64);
    group.bench_function(BenchmarkId::new("capture_revisit", "gzip6"), |b| {
        b.iter(|| {
            let written = writer
                .write_capture(capture)
                .unwrap_or_else(|e| panic!("write: {e}"));
            count.set(count.get() + 1);
            written.bytes
        });
    });
    let summary = writer.close().unwrap_or_else(|e| panic!("close: {e}"));
    if count.get() > 0 {
        assert_eq!(
            summary.revisits,
            count.get() - 1,
            "all but the first are revisits"
        );
        assert_eq!(summary.records, 1 + 3 * count.get());
        eprintln!(
            "revisits: {} captures, {:.0} compressed bytes per capture",
            count.get(),
            summary.bytes as f64 / count.get() as f64
        );
    }

    // The index alone: fresh digests (a miss, then the insert every new payload pays),
    // and a digest that is there.
    let mut index = PayloadIndex::new(64 << 20).unwrap_or_else(|| panic!("index"));
    let uri = "http://bench.example/some/path/of/usual/length?id=1234567";
    let date = WarcDate::now();
    let id = RecordId::new_v4();
    let next = Cell::new(0u64);
    let fresh = || {
        let n = next.get();
        next.set(n + 1);
        // Spread the counter over the 20 bytes as SHA-1 would (splitmix64).
        let mut bytes = [0u8; 20];
        let mut x = n;
        for chunk in bytes.chunks_mut(8) {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            chunk.copy_from_slice(&z.to_le_bytes()[..chunk.len()]);
        }
        Digest::from_bytes(bytes)
    };
    group.bench_function(BenchmarkId::new("revisit_index", "miss_then_insert"), |b| {
        b.iter(|| {
            let digest = fresh();
            let found = index.lookup(&digest).is_some();
            index.insert(&digest, id, uri, date);
            found
        });
    });
    let stats = index.stats();
    assert_eq!(stats.hits, 0);
    assert_eq!(stats.misses, next.get());
    assert!(stats.bytes <= 64 << 20);
    let known = fresh();
    index.insert(&known, id, uri, date);
    let before = index.stats().hits;
    let lookups = Cell::new(0u64);
    group.bench_function(BenchmarkId::new("revisit_index", "hit"), |b| {
        b.iter(|| {
            lookups.set(lookups.get() + 1);
            index.lookup(&known).map(|o| o.date)
        });
    });
    assert_eq!(index.stats().hits - before, lookups.get());
    eprintln!("index after {} inserts: {:?}", next.get(), index.stats());
}

fn bench_deflate_wall(c: &mut Criterion) {
    bench_deflate(c, "deflate_mix");
}

fn bench_deflate_cpu(c: &mut Criterion<ThreadCpu>) {
    bench_deflate(c, "deflate_mix_cpu");
}

fn bench_deflate<M: Measurement>(c: &mut Criterion<M>, group_name: &str) {
    let pages: Vec<Vec<u8>> = html_mix::sources()
        .into_iter()
        .flat_map(|source| source.pages)
        .collect();
    if pages.is_empty() {
        eprintln!("{group_name}: no pages (benches/support/html_mix.rs), skipped");
        return;
    }
    let id = RecordId::new_v4();
    let date = WarcDate::now();
    let records: Vec<Vec<u8>> = pages
        .iter()
        .enumerate()
        .map(|(n, page)| html_mix::response_record(page, n))
        .collect();
    // The same pages with a content coding, as servers send them to a crawler that
    // accepts it: brotli quality 5, window 22 (a usual on-the-fly setting).
    let encoded: Vec<Vec<u8>> = pages
        .iter()
        .map(|page| {
            let mut out = Vec::new();
            {
                let mut w = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
                w.write_all(page).unwrap_or_default();
            }
            Record::new(RecordType::Resource, id, date)
                .block_part(&out)
                .to_bytes()
        })
        .collect();
    let mut group = c.benchmark_group(group_name);
    group.sample_size(10);
    let html_cases = [
        (Deflater::ZlibRs, 1),
        (Deflater::ZlibRs, 2),
        (Deflater::Libdeflate, 1),
        (Deflater::Libdeflate, 2),
        (Deflater::Igzip, 1),
        (Deflater::Igzip, 2),
        (Deflater::Igzip, 3),
    ];
    let br_cases = [
        (Deflater::Libdeflate, 0),
        (Deflater::Libdeflate, 1),
        (Deflater::Igzip, 1),
    ];
    // Small records: the request (~0.7 KB) and metadata (1-3 KB of outlinks) records of
    // every page's capture, as the writer serializes them: per-call costs dominate there.
    let small = small_records(&pages);
    let small_cases = [
        (Deflater::ZlibRs, 1),
        (Deflater::Libdeflate, 1),
        (Deflater::Igzip, 1),
    ];
    let sets = [
        ("html", &records, &html_cases[..]),
        ("br", &encoded, &br_cases[..]),
        ("small", &small, &small_cases[..]),
    ];
    for (set, records, cases) in sets {
        let total: usize = records.iter().map(Vec::len).sum();
        group.throughput(Throughput::Bytes(total as u64));
        for &(deflater, level) in cases {
            deflate_case(&mut group, group_name, set, records, deflater, level);
        }
    }
    group.finish();
}

/// The records under `IGZIP_MIN_BYTES` of the pages' captures (each page at a made-up
/// URL, with its own links as outlinks), written by a `WarcWriter` and read back.
fn small_records(pages: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let mut config = WarcWriterConfig::new(dir.path());
    config.max_file_bytes = u64::MAX;
    config.dedup = DedupConfig::off();
    let mut writer = WarcWriter::new(config).unwrap_or_else(|e| panic!("writer: {e}"));
    for (n, page) in pages.iter().enumerate() {
        let url = format!("http://127.0.0.31/section/page-{n}.html");
        writer
            .write_capture(&html_mix::capture(page, &url))
            .unwrap_or_else(|e| panic!("write: {e}"));
    }
    writer.close().unwrap_or_else(|e| panic!("close: {e}"));
    html_mix::small_records(dir.path())
        .into_iter()
        .flat_map(|(_, records)| records)
        .collect()
}

fn deflate_case<M: Measurement>(
    group: &mut criterion::BenchmarkGroup<'_, M>,
    group_name: &str,
    set: &str,
    records: &[Vec<u8>],
    deflater: Deflater,
    level: u32,
) {
    let total: usize = records.iter().map(Vec::len).sum();
    {
        let mut encoder = MemberEncoder::with_deflater(deflater, level);
        let mut out = Vec::with_capacity(total);
        // Validate once: every member decodes to its record; print the ratio.
        let mut compressed = 0;
        for record in records {
            out.clear();
            encoder
                .append_raw(&mut out, record)
                .unwrap_or_else(|e| panic!("compress: {e}"));
            let mut decoded = Vec::new();
            std::io::Read::read_to_end(
                &mut flate2::read::GzDecoder::new(out.as_slice()),
                &mut decoded,
            )
            .unwrap_or_else(|e| panic!("decode: {e}"));
            assert_eq!(&decoded, record);
            compressed += out.len();
        }
        let name = format!("{set}/{deflater:?}{level}").to_lowercase();
        eprintln!(
            "{group_name} {name}: {} pages, {total} bytes, compressed/raw {:.4}",
            records.len(),
            compressed as f64 / total as f64
        );
        group.bench_function(BenchmarkId::new("members", &name), |b| {
            b.iter(|| {
                out.clear();
                for record in records {
                    encoder.append_raw(&mut out, record).unwrap_or_default();
                }
                out.len()
            });
        });
    }
}

criterion_group!(wall, bench_wall, bench_deflate_wall);
criterion_group! {
    name = cpu;
    config = Criterion::default().with_measurement(ThreadCpu);
    targets = bench_cpu, bench_deflate_cpu
}
criterion_main!(wall, cpu);
