//! Prints the speed and size of each WARC deflate implementation and level over a real
//! page mix (`benches/support/html_mix.rs`): the figures behind the default
//! (`docs/warc.md`, "Compression level and implementation").
//!
//! Two tables. **Records**: each page wrapped in a `response` record and compressed
//! into its own gzip member with `MemberEncoder::append_raw`, as the writer does.
//! **Captures**: each page as a whole capture (request, response and metadata records
//! with 20 outlinks) through `CaptureCompressor::compress`, what a shard thread does per
//! page (record building and SHA-1 digests included); sizes from a `WarcWriter` pass.
//!
//! MB/s are of the thread's CPU time (not wall time: the machine may be shared), the
//! median over `--rounds` rounds; the cases run interleaved within each round, and
//! "vs libdeflate 1" is the median of the per-round speed ratios. Every member is
//! decoded back and compared once before timing.
//!
//! ```sh
//! python3 tools/realsite/gensite.py /tmp/trawl-gensite 4 1200 31   # once
//! cargo run --release --example deflate_mix -- --rounds 9
//! ```

#[path = "../benches/support/html_mix.rs"]
mod html_mix;

use std::io::Read;

use trawl::http::ResponseHead;
use trawl::provenance::WarcDate;
use trawl::provenance::{FetchTimings, Hop};
use trawl::warc::gzip::{Deflater, MemberEncoder};
use trawl::warc::{
    Capture, CaptureMetadata, DedupConfig, HttpResponse, Outlink, WarcWriter, WarcWriterConfig,
};

/// The cases, the first being the reference.
const CASES: [(Deflater, u32); 8] = [
    (Deflater::Libdeflate, 1),
    (Deflater::Libdeflate, 2),
    (Deflater::ZlibRs, 1),
    (Deflater::ZlibRs, 2),
    (Deflater::Igzip, 1),
    (Deflater::Igzip, 2),
    (Deflater::Igzip, 3),
    (Deflater::Igzip, 0),
];

fn main() {
    let mut rounds = 9usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next().and_then(|v| v.parse().ok())) {
            ("--rounds", Some(n)) if n > 0 => rounds = n,
            _ => {
                eprintln!("usage: deflate_mix [--rounds N]");
                std::process::exit(2);
            }
        }
    }
    let sources = html_mix::sources();
    let mut pages = Vec::new();
    for source in &sources {
        let bytes: usize = source.pages.iter().map(Vec::len).sum();
        println!(
            "source {}: {} pages, {bytes} bytes of HTML",
            source.name,
            source.pages.len()
        );
        pages.extend(source.pages.iter().map(Vec::as_slice));
    }
    if pages.is_empty() {
        eprintln!("no pages: see benches/support/html_mix.rs");
        std::process::exit(1);
    }
    let records: Vec<Vec<u8>> = pages
        .iter()
        .enumerate()
        .map(|(n, page)| html_mix::response_record(page, n))
        .collect();
    records_table(&records, &sources, rounds);
    captures_table(&pages, rounds);
}

fn name(deflater: Deflater, level: u32) -> String {
    let detail = match (deflater, level) {
        (Deflater::Igzip, 0) => " (libdeflate 0, stored)".to_owned(),
        (Deflater::Igzip, 1) => " (igzip 0)".to_owned(),
        (Deflater::Igzip, 2) => " (igzip 1)".to_owned(),
        (Deflater::Igzip, 3) => " (igzip 3)".to_owned(),
        (Deflater::Igzip, l) => format!(" (libdeflate {l})"),
        _ => String::new(),
    };
    format!("{deflater:?} {level}{detail}")
}

fn records_table(records: &[Vec<u8>], sources: &[html_mix::Source], rounds: usize) {
    let total: usize = records.iter().map(Vec::len).sum();
    println!(
        "\nrecords: {} response records, {total} bytes, one member each, {rounds} rounds",
        records.len()
    );
    let mut encoders: Vec<MemberEncoder> = CASES
        .iter()
        .map(|&(d, l)| MemberEncoder::with_deflater(d, l))
        .collect();
    // Validate, and the sizes (per source too).
    let mut sizes = Vec::new();
    let mut per_source = Vec::new();
    for encoder in &mut encoders {
        let mut out = Vec::new();
        let mut start = 0;
        let mut ratios = Vec::new();
        for source in sources {
            let end = start + source.pages.len();
            let (mut raw, mut packed) = (0, 0);
            for record in records.get(start..end).unwrap_or_default() {
                out.clear();
                encoder
                    .append_raw(&mut out, record)
                    .unwrap_or_else(|e| panic!("compress: {e}"));
                let mut decoded = Vec::new();
                flate2::read::GzDecoder::new(out.as_slice())
                    .read_to_end(&mut decoded)
                    .unwrap_or_else(|e| panic!("decode: {e}"));
                assert!(decoded == *record, "member decodes to its record");
                raw += record.len();
                packed += out.len();
            }
            ratios.push((source.name, packed, raw));
            start = end;
        }
        sizes.push(ratios.iter().map(|r| r.1).sum::<usize>());
        per_source.push(ratios);
    }
    let mut times = vec![Vec::with_capacity(rounds); CASES.len()];
    let mut out = Vec::with_capacity(total);
    for _ in 0..rounds {
        for (k, encoder) in encoders.iter_mut().enumerate() {
            out.clear();
            let start = cpu_time::ThreadTime::now();
            for record in records {
                encoder
                    .append_raw(&mut out, record)
                    .unwrap_or_else(|e| panic!("compress: {e}"));
            }
            if let Some(t) = times.get_mut(k) {
                t.push(start.elapsed().as_secs_f64());
            }
        }
    }
    print_table(&times, &sizes, total);
    println!("\ncompressed/raw per source:");
    for (k, ratios) in per_source.iter().enumerate() {
        let mut line = format!(
            "| {} |",
            CASES.get(k).map_or_else(String::new, |&(d, l)| name(d, l))
        );
        for (source, packed, raw) in ratios {
            line += &format!(" {source} {:.4} |", *packed as f64 / *raw as f64);
        }
        println!("{line}");
    }
}

fn captures_table(pages: &[&[u8]], rounds: usize) {
    let captures: Vec<Capture> = pages
        .iter()
        .enumerate()
        .map(|(n, page)| capture(page, n))
        .collect();
    let raw_html: usize = pages.iter().map(|p| p.len()).sum();
    println!(
        "\ncaptures: {} (request, response, metadata records), {raw_html} bytes of HTML, \
         {rounds} rounds; MB/s of HTML",
        captures.len()
    );
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let mut compressors = Vec::new();
    let mut sizes = Vec::new();
    let mut raw_total = 0;
    for (k, &(deflater, level)) in CASES.iter().enumerate() {
        let mut config = WarcWriterConfig::new(dir.path().join(k.to_string()));
        config.deflater = deflater;
        config.gzip_level = level;
        config.max_file_bytes = u64::MAX;
        config.dedup = DedupConfig::off();
        let mut writer = WarcWriter::new(config).unwrap_or_else(|e| panic!("writer: {e}"));
        compressors.push(writer.compressor());
        for capture in &captures {
            writer
                .write_capture(capture)
                .unwrap_or_else(|e| panic!("write: {e}"));
        }
        let summary = writer.close().unwrap_or_else(|e| panic!("close: {e}"));
        assert_eq!(summary.records, 1 + 3 * captures.len() as u64);
        raw_total = summary.raw_bytes as usize;
        sizes.push(summary.bytes as usize);
    }
    println!("({raw_total} bytes of records, warcinfo included)");
    let mut times = vec![Vec::with_capacity(rounds); CASES.len()];
    for _ in 0..rounds {
        for (k, compressor) in compressors.iter_mut().enumerate() {
            let start = cpu_time::ThreadTime::now();
            let mut bytes = 0;
            for capture in &captures {
                bytes += compressor
                    .compress(capture)
                    .unwrap_or_else(|e| panic!("compress: {e}"))
                    .compressed_bytes();
            }
            assert!(bytes > 0);
            if let Some(t) = times.get_mut(k) {
                t.push(start.elapsed().as_secs_f64());
            }
        }
    }
    // Sizes over the records' bytes; speed over the HTML's.
    let scaled: Vec<usize> = sizes
        .iter()
        .map(|s| (*s as f64 * raw_html as f64 / raw_total as f64) as usize)
        .collect();
    print_table(&times, &scaled, raw_html);
}

fn print_table(times: &[Vec<f64>], sizes: &[usize], total: usize) {
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let base_time = times.first().cloned().unwrap_or_default();
    let base_size = sizes.first().copied().unwrap_or(1) as f64;
    println!("| implementation, level | MB/s (CPU) | compressed/raw | speed vs libdeflate 1 | size vs libdeflate 1 |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    for (k, &(deflater, level)) in CASES.iter().enumerate() {
        let (Some(t), Some(&size)) = (times.get(k), sizes.get(k)) else {
            continue;
        };
        let speedup = median(base_time.iter().zip(t).map(|(b, t)| b / t).collect());
        println!(
            "| {} | {:.0} | {:.4} | {:.2}x | {:.3} |",
            name(deflater, level),
            total as f64 / median(t.clone()) / 1e6,
            size as f64 / total as f64,
            speedup,
            size as f64 / base_size
        );
    }
}

fn capture(body: &[u8], n: usize) -> Capture {
    let head = format!(
        "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/html; charset=utf-8\r\n\
         Content-Length: {}\r\nLast-Modified: Fri, 27 Nov 2026 18:00:00 GMT\r\n\r\n",
        body.len()
    );
    Capture {
        target_uri: format!("http://127.0.0.31/section/page-{n}.html"),
        date: WarcDate::from_unix_micros(1_796_000_000_000_000),
        ip: Some(std::net::IpAddr::from([127, 0, 0, 31])),
        request: format!(
            "GET /section/page-{n}.html HTTP/1.1\r\nHost: 127.0.0.31\r\n\
             User-Agent: trawl/0.1 (+https://github.com/trawl-crawler/trawl)\r\n\
             From: bench@example.org\r\nAccept: */*\r\nAccept-Encoding: gzip, deflate, br\r\n\r\n"
        )
        .into_bytes()
        .into(),
        response: HttpResponse::new(
            &ResponseHead::parse(head.as_bytes()).unwrap_or_else(|e| panic!("head: {e}")),
            body.to_vec().into(),
        ),
        truncated: None,
        revisit: None,
        metadata: Some(CaptureMetadata {
            via: Some("http://127.0.0.31/section/".into()),
            hops_path: "LL".into(),
            outlinks_unknown: false,
            outlinks: (0..20)
                .map(|i| Outlink {
                    url: format!("http://127.0.0.31/section/page-{}.html", n * 7 + i),
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
