//! CPU saved by revisit hints (`docs/warc.md`, "Where compression runs"): captures of
//! real pages, 20% of them duplicates of an earlier payload, through a
//! `CaptureCompressor` (the shard's work) and `WarcWriter::append_compressed` (the
//! output thread's), with the writer's hints and without. Prints thread-CPU µs per
//! capture on each side; checks that both runs wrote the same number of revisits and
//! records of the same raw size.
//!
//! `cargo run --release --example revisit_hints -- DIR [N]`: up to N (500) `.html`
//! files under DIR (a site from `tools/realsite/gensite.py`, e.g.
//! `/var/tmp/cpubench-static20`), as 200 responses with a request and a metadata
//! record. Captures are compressed 8 at a time before being appended, as captures in
//! flight on several shards are; a duplicate's original is 8 to 200 captures earlier.

use std::path::PathBuf;

use trawl::http::ResponseHead;
use trawl::provenance::WarcDate;
use trawl::warc::{
    Capture, CaptureCompressor, CaptureMetadata, HttpResponse, WarcWriter, WarcWriterConfig,
    WriterSummary,
};

const IN_FLIGHT: usize = 8;

fn pages(dir: PathBuf, n: usize) -> Vec<Vec<u8>> {
    let mut pages = Vec::new();
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for p in entries.flatten().map(|e| e.path()) {
            if p.is_dir() {
                stack.push(p);
            } else if pages.len() < n && p.extension().is_some_and(|x| x == "html") {
                pages.extend(std::fs::read(&p).ok());
            }
        }
    }
    pages
}

fn capture(i: usize, body: &[u8]) -> Option<Capture> {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    Some(Capture {
        target_uri: format!("http://127.0.0.1/p/{i}.html"),
        date: WarcDate::from_unix_micros(1_700_000_000_000_000 + i as i64),
        ip: Some([127, 0, 0, 1].into()),
        request: format!("GET /p/{i}.html HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            .as_bytes()
            .into(),
        response: HttpResponse::new(&ResponseHead::parse(head.as_bytes()).ok()?, body.into()),
        truncated: None,
        revisit: None,
        metadata: Some(CaptureMetadata::default()),
    })
}

/// (shard µs, writer µs) of CPU per capture, and the writer's summary.
fn run(captures: &[Capture], hints: bool) -> Option<(f64, f64, WriterSummary)> {
    let dir = tempfile::tempdir().ok()?;
    let mut writer = WarcWriter::new(WarcWriterConfig::new(dir.path())).ok()?;
    let mut compressor: CaptureCompressor = if hints {
        writer.compressor()
    } else {
        writer.compressor().without_hints()
    };
    let (mut shard, mut output) = (0u128, 0u128);
    for window in captures.chunks(IN_FLIGHT) {
        let t = cpu_time::ThreadTime::now();
        let compressed: Vec<_> = window
            .iter()
            .filter_map(|c| compressor.compress(c).ok())
            .collect();
        shard += t.elapsed().as_nanos();
        let t = cpu_time::ThreadTime::now();
        for c in &compressed {
            writer.append_compressed(c).ok()?;
        }
        output += t.elapsed().as_nanos();
    }
    let summary = writer.close().ok()?;
    let per = |ns: u128| ns as f64 / 1e3 / captures.len() as f64;
    Some((per(shard), per(output), summary))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: revisit_hints DIR [N]");
        std::process::exit(2);
    };
    let n: usize = args.next().and_then(|v| v.parse().ok()).unwrap_or(500);
    let pages = pages(PathBuf::from(dir), n);
    if pages.is_empty() {
        eprintln!("no .html files");
        std::process::exit(2);
    }
    // Every fifth capture repeats the payload of one 8 to 200 captures earlier.
    let mut rng = fastrand::Rng::with_seed(28);
    let mut bodies: Vec<&[u8]> = Vec::new();
    let mut next = 0;
    for i in 0..pages.len() * 5 / 4 {
        if i % 5 == 4 && i >= 8 {
            let back = rng.usize(IN_FLIGHT..=200.min(i));
            bodies.push(bodies[i - back]);
        } else {
            bodies.push(&pages[next % pages.len()]);
            next += 1;
        }
    }
    let captures: Vec<_> = bodies
        .iter()
        .enumerate()
        .filter_map(|(i, b)| capture(i, b))
        .collect();
    let mean = bodies.iter().map(|b| b.len()).sum::<usize>() / bodies.len();
    println!(
        "{} captures ({} distinct pages, mean {mean} bytes), {IN_FLIGHT} in flight",
        captures.len(),
        pages.len()
    );
    println!("round hints  shard_us writer_us total_us revisits raw_bytes");
    let mut totals = [Vec::new(), Vec::new()];
    let mut summaries = Vec::new();
    for round in 0..5 {
        for hints in [false, true] {
            let Some((shard, output, s)) = run(&captures, hints) else {
                eprintln!("run failed");
                std::process::exit(1);
            };
            println!(
                "{round:5} {:5} {shard:9.1} {output:9.1} {:8.1} {:8} {:9}",
                if hints { "on" } else { "off" },
                shard + output,
                s.revisits,
                s.raw_bytes,
            );
            totals[usize::from(hints)].push(shard + output);
            summaries.push((s.revisits, s.raw_bytes));
        }
    }
    summaries.dedup();
    if summaries.len() != 1 {
        eprintln!("runs wrote different records: {summaries:?}");
        std::process::exit(1);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    let (off, on) = (median(&mut totals[0]), median(&mut totals[1]));
    let revisits = summaries.first().map_or(0, |s| s.0);
    println!(
        "median µs/capture: off {off:.1}, on {on:.1}, saved {:.1} ({:.1} per revisit)",
        off - on,
        (off - on) * captures.len() as f64 / revisits.max(1) as f64
    );
}
