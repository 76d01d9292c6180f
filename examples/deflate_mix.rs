//! Prints the speed and size of each WARC deflate implementation and level over a real
//! page mix (`benches/support/html_mix.rs`): the figures behind the default
//! (`docs/warc.md`, "Compression level and implementation").
//!
//! Three tables. **Records**: each page wrapped in a `response` record and compressed
//! into its own gzip member with `MemberEncoder::append_raw`, as the writer does.
//! **Captures**: each page as a whole capture (request, response and metadata records,
//! the page's own links as outlinks) through `CaptureCompressor::compress`, what a shard
//! thread does per page (record building and SHA-1 digests included); sizes from a
//! `WarcWriter` pass. **Small records**: the records under `IGZIP_MIN_BYTES` of that
//! pass (requests, metadata), read back from the WARC file, one member each.
//!
//! MB/s are of the thread's CPU time (not wall time: the machine may be shared), the
//! median over `--rounds` rounds; the cases run interleaved within each round, and
//! "vs libdeflate 1" is the median of the per-round speed ratios. Every member is
//! decoded back and compared once before timing.
//!
//! ```sh
//! python3 tools/realsite/gensite.py /tmp/trawl-gensite 4 1200 31   # once
//! cargo run --release --example deflate_mix -- --rounds 9
//! # or the pages of one site, e.g. cpubench's static20-identity (20 KB pages, 40 links):
//! cargo run --release --example deflate_mix -- --rounds 5 --dir /var/tmp/cpubench-static20
//! ```
//!
//! With `--dir`, `--pages N` (default 300) of its pages, evenly spaced, each at the URL
//! its path names (`DIR/HOST/PATH` is `http://HOST/PATH`).

#[path = "../benches/support/html_mix.rs"]
mod html_mix;

use std::io::Read;
use std::path::{Path, PathBuf};

use trawl::warc::gzip::{Deflater, MemberEncoder, IGZIP_MIN_BYTES};
use trawl::warc::igzip::{HuffmanCodes, Igzip, IgzipLevel};
use trawl::warc::{Capture, DedupConfig, WarcWriter, WarcWriterConfig};

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
    let mut dir: Option<PathBuf> = None;
    let mut per_dir = 300usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next();
        let number = value.as_deref().and_then(|v| v.parse().ok());
        match (arg.as_str(), value, number) {
            ("--rounds", _, Some(n)) if n > 0 => rounds = n,
            ("--pages", _, Some(n)) if n > 0 => per_dir = n,
            ("--dir", Some(d), _) => dir = Some(d.into()),
            _ => {
                eprintln!("usage: deflate_mix [--rounds N] [--dir DIR [--pages N]]");
                std::process::exit(2);
            }
        }
    }
    let sources = match &dir {
        Some(dir) => html_mix::dir_source("dir", dir, per_dir)
            .into_iter()
            .collect(),
        None => html_mix::sources(),
    };
    let mut pages = Vec::new();
    for source in &sources {
        let bytes: usize = source.pages.iter().map(Vec::len).sum();
        println!(
            "source {}: {} pages, {bytes} bytes of HTML",
            source.name,
            source.pages.len()
        );
        for (page, path) in source.pages.iter().zip(&source.paths) {
            let url = dir
                .as_deref()
                .and_then(|dir| url_of(dir, path))
                .unwrap_or_else(|| format!("http://127.0.0.31/section/page-{}.html", pages.len()));
            pages.push((page.as_slice(), url));
        }
    }
    if pages.is_empty() {
        eprintln!("no pages: see benches/support/html_mix.rs, or give --dir");
        std::process::exit(1);
    }
    let records: Vec<Vec<u8>> = pages
        .iter()
        .enumerate()
        .map(|(n, (page, _))| html_mix::response_record(page, n))
        .collect();
    let groups: Vec<(&str, usize)> = sources.iter().map(|s| (s.name, s.pages.len())).collect();
    println!(
        "\nrecords: {} response records, one member each, {rounds} rounds",
        records.len()
    );
    records_table(&records, &groups, &mut encoder_cases(), rounds);
    let (small, captures_bytes) = captures_table(&pages, rounds);
    println!(
        "\nsmall records: {} records under {IGZIP_MIN_BYTES} bytes of the captures, one \
         member each, {rounds} rounds; with igzip's level 0 and other codes",
        small.iter().map(|(_, r)| r.len()).sum::<usize>()
    );
    let groups: Vec<(&str, usize)> = small.iter().map(|(t, r)| (t.as_str(), r.len())).collect();
    let records: Vec<Vec<u8>> = small.iter().flat_map(|(_, r)| r.clone()).collect();
    let mut cases = encoder_cases();
    for codes in [HuffmanCodes::Default, HuffmanCodes::Fixed] {
        cases.push(Case {
            name: format!("igzip 0, {codes:?} codes"),
            compressor: Compressor::Igzip(Igzip::with_codes(IgzipLevel::Zero, codes)),
        });
    }
    let results = records_table(&records, &groups, &mut cases, rounds);
    whole_captures(&cases, &results, captures_bytes, pages.len());
}

/// Whole-capture size and small-record CPU per page for each way of compressing the
/// small records: `Igzip 1`'s captures with its small members swapped for the case's
/// (members are independent, so the sizes add up exactly).
fn whole_captures(cases: &[Case], results: &[(usize, f64)], captures_bytes: usize, pages: usize) {
    let find = |name: &str| cases.iter().position(|c| c.name.starts_with(name));
    let (Some(old), Some(new)) = (find("Libdeflate 1"), find("Igzip 1 ")) else {
        return;
    };
    let whole = |k: usize| {
        let small = results.get(k).map_or(0, |r| r.0);
        let igzip = results.get(new).map_or(0, |r| r.0);
        (captures_bytes - igzip + small) as f64
    };
    println!(
        "\nwhole captures by how their small records are compressed (responses by igzip 0); \
         old default: libdeflate 1"
    );
    println!("| small records by | µs a page (CPU) | capture size vs old default |");
    println!("| --- | ---: | ---: |");
    for (k, case) in cases.iter().enumerate() {
        let Some(&(_, time)) = results.get(k) else {
            continue;
        };
        println!(
            "| {} | {:.1} | {:.4} |",
            case.name,
            time / pages as f64 * 1e6,
            whole(k) / whole(old)
        );
    }
}

/// `http://HOST/PATH` for `DIR/HOST/PATH`.
fn url_of(dir: &Path, path: &Path) -> Option<String> {
    let relative = path.strip_prefix(dir).ok()?.to_str()?;
    Some(format!("http://{relative}"))
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

/// One way of compressing a record into a member.
struct Case {
    name: String,
    compressor: Compressor,
}

enum Compressor {
    Encoder(MemberEncoder),
    Igzip(Igzip),
}

impl Case {
    fn compress(&mut self, raw: &[u8], out: &mut Vec<u8>) {
        match &mut self.compressor {
            Compressor::Encoder(e) => e.append_raw(out, raw).map(drop),
            Compressor::Igzip(z) => z.compress(raw, out),
        }
        .unwrap_or_else(|e| panic!("compress: {e}"));
    }
}

/// [`CASES`] as encoders.
fn encoder_cases() -> Vec<Case> {
    CASES
        .iter()
        .map(|&(d, l)| Case {
            name: name(d, l),
            compressor: Compressor::Encoder(MemberEncoder::with_deflater(d, l)),
        })
        .collect()
}

/// Compresses each of `records` into its own member, per case; `groups` name the
/// consecutive runs of records the sizes are also given for. Returns each case's
/// compressed bytes and median CPU seconds.
fn records_table(
    records: &[Vec<u8>],
    groups: &[(&str, usize)],
    cases: &mut [Case],
    rounds: usize,
) -> Vec<(usize, f64)> {
    let total: usize = records.iter().map(Vec::len).sum();
    println!("({total} bytes)");
    // Validate, and the sizes (per group too).
    let mut sizes = Vec::new();
    let mut per_group = Vec::new();
    for case in cases.iter_mut() {
        let mut out = Vec::new();
        let mut start = 0;
        let mut ratios = Vec::new();
        for &(group, len) in groups {
            let end = start + len;
            let (mut raw, mut packed) = (0, 0);
            for record in records.get(start..end).unwrap_or_default() {
                out.clear();
                case.compress(record, &mut out);
                let mut decoded = Vec::new();
                flate2::read::GzDecoder::new(out.as_slice())
                    .read_to_end(&mut decoded)
                    .unwrap_or_else(|e| panic!("decode: {e}"));
                assert!(decoded == *record, "member decodes to its record");
                raw += record.len();
                packed += out.len();
            }
            ratios.push((group, packed, raw));
            start = end;
        }
        sizes.push(ratios.iter().map(|r| r.1).sum::<usize>());
        per_group.push(ratios);
    }
    let mut times = vec![Vec::with_capacity(rounds); cases.len()];
    let mut out = Vec::with_capacity(total);
    for _ in 0..rounds {
        for (k, case) in cases.iter_mut().enumerate() {
            out.clear();
            let start = cpu_time::ThreadTime::now();
            for record in records {
                case.compress(record, &mut out);
            }
            if let Some(t) = times.get_mut(k) {
                t.push(start.elapsed().as_secs_f64());
            }
        }
    }
    let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    print_table(&names, &times, &sizes, total);
    println!("\ncompressed/raw per group:");
    for (name, ratios) in names.iter().zip(&per_group) {
        let mut line = format!("| {name} |");
        for (group, packed, raw) in ratios {
            line += &format!(" {group} {:.4} |", *packed as f64 / *raw as f64);
        }
        println!("{line}");
    }
    sizes
        .into_iter()
        .zip(times)
        .map(|(size, t)| (size, median(t)))
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Returns the records under [`IGZIP_MIN_BYTES`] of `Igzip 1`'s WARC file, serialized,
/// grouped by record type, and that file's size.
fn captures_table(pages: &[(&[u8], String)], rounds: usize) -> (Vec<html_mix::RecordGroup>, usize) {
    let captures: Vec<Capture> = pages
        .iter()
        .map(|(page, url)| html_mix::capture(page, url))
        .collect();
    let outlinks: usize = captures
        .iter()
        .filter_map(|c| c.metadata.as_ref())
        .map(|m| m.outlinks.len())
        .sum();
    let raw_html: usize = pages.iter().map(|(p, _)| p.len()).sum();
    println!(
        "\ncaptures: {} (request, response, metadata records), {raw_html} bytes of HTML, \
         {:.1} outlinks a page, {rounds} rounds; MB/s of HTML",
        captures.len(),
        outlinks as f64 / captures.len() as f64
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
    let names: Vec<String> = CASES.iter().map(|&(d, l)| name(d, l)).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    print_table(&names, &times, &scaled, raw_html);
    let igzip = CASES
        .iter()
        .position(|&c| c == (Deflater::Igzip, 1))
        .unwrap_or(0);
    (
        html_mix::small_records(&dir.path().join(igzip.to_string())),
        sizes.get(igzip).copied().unwrap_or(0),
    )
}

fn print_table(names: &[&str], times: &[Vec<f64>], sizes: &[usize], total: usize) {
    let base_time = times.first().cloned().unwrap_or_default();
    let base_size = sizes.first().copied().unwrap_or(1) as f64;
    println!("| implementation, level | MB/s (CPU) | compressed/raw | speed vs libdeflate 1 | size vs libdeflate 1 |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    for ((name, t), &size) in names.iter().zip(times).zip(sizes) {
        let speedup = median(base_time.iter().zip(t).map(|(b, t)| b / t).collect());
        println!(
            "| {name} | {:.0} | {:.4} | {:.2}x | {:.3} |",
            total as f64 / median(t.clone()) / 1e6,
            size as f64 / total as f64,
            speedup,
            size as f64 / base_size
        );
    }
}
