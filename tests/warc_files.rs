//! WARC files as written to disk: one gzip member per record, rotation, repair after a
//! torn write, the writer thread, and `warcio check` / `warcio index` over every file
//! these tests write.
//!
//! warcio comes from `.venv/bin/warcio` (made by `.ci/run`: `python3 -m venv .venv &&
//! .venv/bin/pip install warcio`), or the `WARCIO` variable, or `PATH`. Without it the
//! tests fail, unless `TRAWL_SKIP_WARCIO=1` says to skip that check on purpose.

// Test helpers outside `#[test]` functions: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod crawl_support;

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use crawl_support::warcio;
use flate2::bufread::GzDecoder;
use trawl::http::{Method, ResponseHead, ResponseLimits};
use trawl::provenance::{Digest, Truncation, WarcDate};
use trawl::provenance::{FetchTimings, Hop};
use trawl::warc::{
    recover, repair, scan, Capture, CaptureMetadata, DedupConfig, HttpResponse, Outlink, RevisitOf,
    WarcError, WarcWriter, WarcWriterConfig,
};

// ---------------------------------------------------------------------------------
// warcio

/// Runs `warcio check -v` over `files` and asserts it passes and that every record with
/// a digest had it verified.
fn warcio_check(files: &[PathBuf]) {
    let Some(warcio) = warcio() else { return };
    if files.is_empty() {
        return;
    }
    let out = Command::new(&warcio)
        .arg("check")
        .arg("-v")
        .args(files)
        .output()
        .expect("run warcio");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "warcio check failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(!stdout.contains("failed"), "{stdout}");
    assert!(
        !stdout.contains("not checked\n") || stdout.contains("(revisit)"),
        "{stdout}"
    );
    assert!(stdout.contains("digest pass"), "{stdout}");
}

/// `warcio index` output (one JSON line per record), or `None` without warcio.
fn warcio_index(file: &Path) -> Option<Vec<serde_json::Value>> {
    let warcio = warcio()?;
    let out = Command::new(&warcio)
        .arg("index")
        .arg("-f")
        .arg("warc-type,warc-target-uri,offset,length,http:status")
        .arg(file)
        .output()
        .expect("run warcio");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
    )
}

/// The payload warcio (and so pywb) replays for the record at `offset`, after transfer
/// and content decoding; `None` without warcio.
fn warcio_payload(file: &Path, offset: u64) -> Option<Vec<u8>> {
    let warcio = warcio()?;
    let out = Command::new(&warcio)
        .arg("extract")
        .arg("--payload")
        .arg(file)
        .arg(offset.to_string())
        .output()
        .expect("run warcio");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(out.stdout)
}

// ---------------------------------------------------------------------------------
// sample captures

const CHUNKED_HEAD: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n";

fn body(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let words = [
        "<p>", "trawl ", "crawl ", "warc ", "</p>\n", "record ", "a href ",
    ];
    let mut out = Vec::with_capacity(n + 16);
    while out.len() < n {
        out.extend_from_slice(words[rng.usize(..words.len())].as_bytes());
    }
    out.truncate(n);
    out
}

/// The response the fetcher's reader makes of `wire` (a head and its framed body): the
/// parsed head and the payload with the transfer coding removed, as a crawl hands them
/// to the writer.
fn from_wire(wire: &[u8]) -> HttpResponse {
    let run =
        trawl::http::run_responses(wire, &[usize::MAX], Method::Get, ResponseLimits::default())
            .remove(0);
    HttpResponse::new(&run.head.unwrap(), run.body.into())
}

/// A response of head `head` whose payload is `payload` as given (a body cut short, or
/// none at all for a revisit).
fn from_parts(head: &[u8], payload: &[u8]) -> HttpResponse {
    HttpResponse::new(&ResponseHead::parse(head).unwrap(), payload.into())
}

fn with_head(head: &[u8], body: &[u8]) -> Vec<u8> {
    [head, body].concat()
}

fn chunk(payload: &[u8], size: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for piece in payload.chunks(size) {
        out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        out.extend_from_slice(piece);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

/// A mix of capture shapes: plain, chunked, gzip content coding, truncated, revisit,
/// with and without request and metadata records.
fn sample_capture(i: u64) -> Capture {
    let uri = format!("http://host{}.example/page/{i}?q=a%20b", i % 3);
    let payload = body(200 + (i as usize * 397) % 5000, i);
    let mut capture = Capture {
        target_uri: uri.clone(),
        date: WarcDate::now(),
        ip: Some(if i % 2 == 0 {
            "127.0.0.1".parse().unwrap()
        } else {
            "::1".parse().unwrap()
        }),
        request: format!(
            "GET /page/{i} HTTP/1.1\r\nHost: host.example\r\nUser-Agent: trawl/test\r\n\r\n"
        )
        .as_bytes()
        .into(),
        response: HttpResponse::default(),
        truncated: None,
        revisit: None,
        metadata: Some(CaptureMetadata {
            via: Some("http://host0.example/".into()),
            hops_path: "LL".into(),
            outlinks_unknown: false,
            outlinks: vec![
                Outlink {
                    url: format!("{uri}/next"),
                    hop: Hop::Link,
                },
                Outlink {
                    url: "http://host1.example/logo.png".into(),
                    hop: Hop::Embed,
                },
            ],
            timings: FetchTimings {
                total_ms: Some(i),
                ..FetchTimings::default()
            },
        }),
    };
    match i % 6 {
        0 | 1 => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n",
                payload.len()
            );
            capture.response = from_wire(&with_head(head.as_bytes(), &payload));
        }
        2 => {
            capture.response = from_wire(&with_head(CHUNKED_HEAD, &chunk(&payload, 1000)));
        }
        3 => {
            capture.response = from_wire(&with_head(CHUNKED_HEAD, &chunk(&payload, 333)));
            capture.metadata = None;
        }
        4 => {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            std::io::Write::write_all(&mut gz, &payload).unwrap();
            let encoded = gz.finish().unwrap();
            let head = format!(
                "HTTP/1.1 404 Not Found\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
                encoded.len() + 100
            );
            capture.response = from_parts(head.as_bytes(), &encoded);
            capture.truncated = Some(Truncation::Disconnect);
            capture.request = Default::default();
        }
        _ => {
            capture.response = from_parts(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\n",
                b"",
            );
            capture.revisit = Some(RevisitOf {
                payload_digest: Digest::of(b"hello"),
                target_uri: "http://host0.example/first".into(),
                date: WarcDate::from_unix_micros(1_700_000_000_000_000),
                record_id: None,
                profile: trawl::warc::RevisitProfile::IdenticalPayload,
            });
        }
    }
    capture
}

/// The de-chunked payload of a sample capture.
fn http_payload(capture: &Capture) -> Vec<u8> {
    capture.response.payload.to_vec()
}

fn config(dir: &Path) -> WarcWriterConfig {
    let mut config = WarcWriterConfig::new(dir);
    config.warcinfo.from = Some("ops@example.org".into());
    config.gzip_level = 1;
    config
}

fn warc_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().unwrap().ends_with(".warc.gz"))
        .collect();
    files.sort();
    files
}

/// Decompresses the members of a file one by one: (offset, record bytes) per member.
fn members(path: &Path) -> Vec<(u64, Vec<u8>)> {
    let data = fs::read(path).unwrap();
    let mut rest: &[u8] = &data;
    let mut out = Vec::new();
    while !rest.is_empty() {
        let offset = (data.len() - rest.len()) as u64;
        let mut record = Vec::new();
        // A `&[u8]` is a `BufRead` that the decoder advances past exactly one member.
        GzDecoder::new(&mut rest).read_to_end(&mut record).unwrap();
        out.push((offset, record));
    }
    out
}

/// (header text, block) of one serialized record, checking its framing.
fn split(record: &[u8]) -> (String, Vec<u8>) {
    let end = record.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let header = String::from_utf8(record[..end].to_vec()).unwrap();
    let len: usize = field(&header, "Content-Length").unwrap().parse().unwrap();
    assert_eq!(
        record.len(),
        end + len + 4,
        "one record per member: {header}"
    );
    assert!(record.ends_with(b"\r\n\r\n"));
    (header, record[end..end + len].to_vec())
}

fn field<'h>(header: &'h str, name: &str) -> Option<&'h str> {
    header
        .lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(": ")))
}

/// Where gzip members written by flate2 start: its fixed 10-byte header (no mtime, no
/// name). A naive reference for the scanner's boundaries.
/// Offsets of the gzip members of a whole file, found by decoding them one after the
/// other (scanning for the gzip magic would also match gzip bodies, which are stored
/// uncompressed since content-coded bodies are kept at level 0).
fn member_starts(data: &[u8]) -> Vec<u64> {
    let mut starts = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        starts.push((data.len() - rest.len()) as u64);
        let mut sink = Vec::new();
        GzDecoder::new(&mut rest).read_to_end(&mut sink).unwrap();
    }
    starts
}

// ---------------------------------------------------------------------------------
// tests

#[test]
fn one_gzip_member_per_record_and_warcio_accepts_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = WarcWriter::new(config(dir.path())).unwrap();
    let mut written = Vec::new();
    for i in 0..24 {
        written.push(writer.write_capture(&sample_capture(i)).unwrap());
    }
    let position = writer.position().unwrap();
    let summary = writer.close().unwrap();
    assert_eq!(summary.captures, 24);
    assert_eq!(summary.files, 1);
    let files = warc_files(dir.path());
    assert_eq!(files.len(), 1);
    let name = files[0].file_name().unwrap().to_str().unwrap().to_owned();
    assert_eq!(position.file_name, name);
    assert_eq!(position.offset, fs::metadata(&files[0]).unwrap().len());
    assert!(
        name.starts_with("trawl-") && name.ends_with("-00000-0.warc.gz"),
        "{name}"
    );

    let members = members(&files[0]);
    assert_eq!(members.len() as u64, summary.records);
    let (info_header, info_block) = split(&members[0].1);
    assert_eq!(field(&info_header, "WARC-Type"), Some("warcinfo"));
    assert_eq!(field(&info_header, "WARC-Filename"), Some(name.as_str()));
    assert!(String::from_utf8(info_block)
        .unwrap()
        .contains("http-header-from: ops@example.org\r\n"));
    let info_id = field(&info_header, "WARC-Record-ID").unwrap().to_owned();

    let mut types = Vec::new();
    for (offset, record) in &members[1..] {
        let (header, block) = split(record);
        assert!(header.starts_with("WARC/1.1\r\nWARC-Type: "));
        assert_eq!(field(&header, "WARC-Warcinfo-ID"), Some(info_id.as_str()));
        assert_eq!(
            field(&header, "WARC-Block-Digest").unwrap(),
            Digest::of(&block).to_string()
        );
        let kind = field(&header, "WARC-Type").unwrap().to_owned();
        if kind == "response" || kind == "revisit" {
            let w = written
                .iter()
                .find(|w| {
                    Some(w.response_id.to_string().as_str()) == field(&header, "WARC-Record-ID")
                })
                .unwrap();
            assert!(w.offset <= *offset && *offset < w.offset + w.bytes);
            assert_eq!(w.response_offset, *offset);
            assert_eq!(
                field(&header, "WARC-Payload-Digest").unwrap(),
                w.payload_digest.to_string()
            );
        }
        if kind == "response" {
            // The stored payload (after the HTTP head) is what the digest covers.
            let head_end = block.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
            assert_eq!(
                field(&header, "WARC-Payload-Digest").unwrap(),
                Digest::of(&block[head_end..]).to_string()
            );
        }
        types.push(kind);
    }
    for kind in ["request", "response", "metadata", "revisit"] {
        assert!(types.iter().any(|t| t == kind), "no {kind} in {types:?}");
    }
    warcio_check(&files);
    // Chunked captures (stored de-chunked) replay their payload through warcio.
    for i in [2u64, 3, 8, 9] {
        let capture = sample_capture(i);
        let expected = http_payload(&capture);
        if let Some(replayed) = warcio_payload(&files[0], written[i as usize].response_offset) {
            assert_eq!(replayed, expected, "capture {i}");
        }
    }
    if let Some(index) = warcio_index(&files[0]) {
        assert_eq!(index.len(), members.len());
        for (entry, (offset, _)) in index.iter().zip(&members) {
            assert_eq!(entry["offset"].as_str().unwrap(), offset.to_string());
        }
        let responses = index
            .iter()
            .filter(|e| e["warc-type"] == "response")
            .count();
        assert_eq!(responses, 20);
        assert!(index.iter().any(|e| e["http:status"] == "404"));
    }
}

#[test]
fn rotates_by_size_and_continues_serials() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.max_file_bytes = 8 * 1024;
    cfg.shard = 3;
    let mut writer = WarcWriter::new(cfg.clone()).unwrap();
    let mut written = Vec::new();
    for i in 0..40 {
        written.push(writer.write_capture(&sample_capture(i)).unwrap());
    }
    let summary = writer.close().unwrap();
    let files = warc_files(dir.path());
    assert!(files.len() >= 3, "{files:?}");
    assert_eq!(summary.files, files.len() as u64);
    assert!(fs::read_dir(dir.path()).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_str()
        .unwrap()
        .ends_with(".open")));
    for (serial, file) in files.iter().enumerate() {
        let name = file.file_name().unwrap().to_str().unwrap();
        assert!(name.ends_with(&format!("-{serial:05}-3.warc.gz")), "{name}");
        let members = members(file);
        let (header, _) = split(&members[0].1);
        assert_eq!(field(&header, "WARC-Type"), Some("warcinfo"));
        assert_eq!(field(&header, "WARC-Filename"), Some(name));
        // A file is cut only between captures, once past the limit: every file but the
        // last ends within one capture of the limit.
        let len = fs::metadata(file).unwrap().len();
        let last_capture = written.iter().rfind(|w| w.file_name == name).unwrap();
        assert_eq!(last_capture.offset + last_capture.bytes, len);
        assert!(last_capture.offset < cfg.max_file_bytes, "{name}: {len}");
    }
    // Each capture's records are together in one file: the response, and the request
    // and metadata pointing at it with WARC-Concurrent-To.
    for w in &written {
        let id = w.response_id.to_string();
        let file = dir.path().join(&w.file_name);
        let in_capture: Vec<_> = members(&file)
            .into_iter()
            .filter(|(offset, _)| (w.offset..w.offset + w.bytes).contains(offset))
            .map(|(_, record)| split(&record).0)
            .collect();
        assert!(!in_capture.is_empty());
        for header in &in_capture {
            let is_response = field(header, "WARC-Record-ID") == Some(id.as_str());
            let points_to_it = field(header, "WARC-Concurrent-To") == Some(id.as_str());
            assert!(is_response || points_to_it, "{header}");
        }
        assert_eq!(
            in_capture
                .iter()
                .filter(|h| field(h, "WARC-Record-ID") == Some(id.as_str()))
                .count(),
            1
        );
    }
    warcio_check(&files);

    // A new writer on the same directory continues the serial numbers.
    let mut writer = WarcWriter::new(cfg).unwrap();
    let next = writer.write_capture(&sample_capture(1)).unwrap();
    writer.close().unwrap();
    assert!(
        next.file_name
            .ends_with(&format!("-{:05}-3.warc.gz", files.len())),
        "{}",
        next.file_name
    );
}

#[test]
fn scan_and_repair_cut_a_torn_last_record_at_random_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = WarcWriter::new(config(dir.path())).unwrap();
    for i in 0..12 {
        writer.write_capture(&sample_capture(i)).unwrap();
    }
    writer.close().unwrap();
    let original = warc_files(dir.path()).remove(0);
    let data = fs::read(&original).unwrap();
    let mut boundaries = member_starts(&data);
    let full = scan(&original).unwrap();
    assert_eq!(full.valid_len, data.len() as u64);
    assert_eq!(full.records, boundaries.len() as u64);
    assert!(!full.is_torn());
    boundaries.push(data.len() as u64);

    let torn_dir = dir.path().join("torn");
    fs::create_dir(&torn_dir).unwrap();
    let mut rng = fastrand::Rng::with_seed(7);
    let last_start = boundaries[boundaries.len() - 2];
    let mut repaired = Vec::new();
    for case in 0..40u64 {
        // Most cuts inside the last member, the rest anywhere.
        let cut = if case < 25 {
            rng.u64(last_start + 1..data.len() as u64)
        } else {
            rng.u64(1..data.len() as u64)
        };
        let path = torn_dir.join(format!("cut-{case}.warc.gz"));
        fs::write(&path, &data[..cut as usize]).unwrap();
        let expected = *boundaries.iter().filter(|&&b| b <= cut).max().unwrap();
        let report = scan(&path).unwrap();
        assert_eq!(report.valid_len, expected, "cut at {cut}");
        assert_eq!(report.is_torn(), expected < cut);
        let fixed = repair(&path, None).unwrap();
        assert_eq!(fixed.new_len, expected);
        assert_eq!(fs::metadata(&path).unwrap().len(), expected);
        // What remains is whole records only.
        for (_, record) in members(&path) {
            split(&record);
        }
        assert!(!scan(&path).unwrap().is_torn());
        if expected > 0 {
            repaired.push(path);
        }
    }
    // Garbage after the last member (not gzip at all) is cut too.
    let path = torn_dir.join("garbage.warc.gz");
    let mut garbage = data.clone();
    garbage.extend_from_slice(b"this is not gzip");
    fs::write(&path, &garbage).unwrap();
    assert_eq!(repair(&path, None).unwrap().new_len, data.len() as u64);
    repaired.push(path);
    warcio_check(&repaired);
}

#[test]
fn repair_to_a_checkpoint_offset_and_recover_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("warc");
    let mut writer = WarcWriter::new(config(&out)).unwrap();
    for i in 0..5 {
        writer.write_capture(&sample_capture(i)).unwrap();
    }
    let checkpoint = writer.sync().unwrap().unwrap();
    for i in 5..9 {
        writer.write_capture(&sample_capture(i)).unwrap();
    }
    // "kill -9": copy the .open file as it is now, torn in its last member.
    let open = checkpoint.locate(&out).unwrap();
    assert!(open.to_str().unwrap().ends_with(".warc.gz.open"));
    let mut crashed = fs::read(&open).unwrap();
    let complete_len = crashed.len();
    crashed.truncate(complete_len - 17);
    writer.close().unwrap();
    let crash_dir = dir.path().join("crash");
    fs::create_dir(&crash_dir).unwrap();
    let crashed_path = crash_dir.join(format!("{}.open", checkpoint.file_name));
    fs::write(&crashed_path, &crashed).unwrap();

    // Bad checkpoints are refused.
    let beyond = repair(&crashed_path, Some(crashed.len() as u64 + 1));
    assert!(
        matches!(beyond, Err(WarcError::BadCheckpoint { .. })),
        "{beyond:?}"
    );
    let inside = repair(&crashed_path, Some(checkpoint.offset - 5));
    assert!(
        matches!(inside, Err(WarcError::BadCheckpoint { .. })),
        "{inside:?}"
    );

    assert_eq!(recover(&dir.path().join("never-written")).unwrap(), vec![]);
    // recover() scans, cuts the torn tail and renames.
    let warcinfo_only = crash_dir.join("trawl-20260101000000-00007-0.warc.gz.open");
    fs::write(&warcinfo_only, &crashed[..20]).unwrap();
    let recovered = recover(&crash_dir).unwrap();
    assert_eq!(recovered.len(), 2);
    let kept = recovered.iter().find_map(|r| r.path.clone()).unwrap();
    assert_eq!(kept, crash_dir.join(&checkpoint.file_name));
    assert!(
        !warcinfo_only.exists(),
        "a file without a whole record is removed"
    );
    let report = recovered.iter().find(|r| r.path.is_some()).unwrap().repair;
    assert!(report.new_len < crashed.len() as u64);
    assert!(report.new_len >= checkpoint.offset);
    warcio_check(std::slice::from_ref(&kept));

    // Cutting back to the checkpoint drops the records written after it.
    let at_checkpoint = repair(&kept, Some(checkpoint.offset)).unwrap();
    assert_eq!(at_checkpoint.new_len, checkpoint.offset);
    assert_eq!(scan(&kept).unwrap().valid_len, checkpoint.offset);
    // warcinfo, then captures 0-2 (request, response, metadata), 3 (no metadata) and
    // 4 (no request).
    assert_eq!(scan(&kept).unwrap().records, 1 + 3 + 3 + 3 + 2 + 2);
    warcio_check(&[kept]);
}

/// The engine's output path (`src/engine/output.rs`): shards compress captures with
/// the writer's [`WarcWriter::compressor`] on their own threads, the output thread
/// appends them. The offsets it reports (for the crawl log) and the position it syncs
/// (for a checkpoint) must name the members actually in the file.
#[test]
fn compressed_captures_report_their_offsets_and_positions() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = WarcWriter::new(config(dir.path())).unwrap();
    let mut compressor = writer.compressor();
    // Compressed on another thread, as a shard does.
    let compressed = std::thread::spawn(move || {
        [0, 1, 2, 4]
            .map(|i| compressor.compress(&sample_capture(i)).unwrap())
            .to_vec()
    })
    .join()
    .unwrap();
    let written: Vec<_> = compressed
        .iter()
        .map(|c| writer.append_compressed(c).unwrap())
        .collect();
    let position = writer.sync().unwrap().unwrap();
    let open = position.locate(dir.path()).unwrap();
    assert_eq!(fs::metadata(&open).unwrap().len(), position.offset);
    let offsets: Vec<u64> = members(&open).iter().map(|(at, _)| *at).collect();
    for w in &written {
        assert_eq!(w.file_name, position.file_name);
        assert!(offsets.contains(&w.offset), "{} not a member", w.offset);
        assert!(offsets.contains(&w.response_offset));
        assert!(w.response_offset >= w.offset);
    }
    // The first capture follows the warcinfo record.
    assert_eq!(written[0].offset, offsets[1]);
    // warcinfo, captures 0-2 with three records each, capture 4 without a request.
    assert_eq!(scan(&open).unwrap().records, 1 + 3 + 3 + 3 + 2);
    let summary = writer.close().unwrap();
    assert_eq!(summary.captures, 4);
    warcio_check(&warc_files(dir.path()));
}

/// An I/O error on the output path is reported, not swallowed: the directory vanishes
/// under the writer, and the first append cannot create its file.
#[test]
fn append_reports_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("gone");
    let mut writer = WarcWriter::new(config(&out)).unwrap();
    let compressed = writer.compressor().compress(&sample_capture(0)).unwrap();
    fs::remove_dir(&out).unwrap();
    let err = writer.append_compressed(&compressed).unwrap_err();
    assert!(
        matches!(err, WarcError::File { op: "create", .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("cannot create"), "{err}");
}

/// Child mode of the crash test: write captures until killed (at most 20 s).
const CRASH_CHILD_ENV: &str = "TRAWL_WARC_CRASH_CHILD";

#[test]
fn killed_writer_leaves_files_that_recover_makes_valid() {
    if let Some(dir) = std::env::var_os(CRASH_CHILD_ENV) {
        let mut cfg = config(Path::new(&dir));
        cfg.max_file_bytes = 32 * 1024;
        let mut writer = WarcWriter::new(cfg).unwrap();
        let start = std::time::Instant::now();
        let mut i = 0;
        while start.elapsed() < std::time::Duration::from_secs(20) {
            writer.write_capture(&sample_capture(i)).unwrap();
            i += 1;
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut rng = fastrand::Rng::with_seed(11);
    let mut recovered_open_files = 0;
    for _round in 0..4 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "killed_writer_leaves_files_that_recover_makes_valid",
                "--exact",
                "--test-threads=1",
            ])
            .env(CRASH_CHILD_ENV, dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Wait until the child is writing (a loaded machine may take a while to start
        // it), then kill it at a random moment.
        let before = fs::read_dir(dir.path()).unwrap().count();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
        while fs::read_dir(dir.path()).unwrap().count() <= before
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        std::thread::sleep(std::time::Duration::from_millis(rng.u64(50..400)));
        child.kill().unwrap(); // SIGKILL: no destructor, no rename, no flush
        child.wait().unwrap();
        let recovered = recover(dir.path()).unwrap();
        recovered_open_files += recovered.len();
        for file in &recovered {
            if let Some(path) = &file.path {
                assert!(!scan(path).unwrap().is_torn());
            }
        }
    }
    // A kill that lands between closing one rotated file and opening the next leaves
    // no `.open` file, so not every round has one to recover; most do.
    assert!(
        recovered_open_files >= 1,
        "no kill left an .open file to recover"
    );
    let files = warc_files(dir.path());
    assert!(files.len() >= 4, "{files:?}");
    for file in &files {
        let report = scan(file).unwrap();
        assert!(!report.is_torn(), "{file:?}");
        assert!(report.records >= 1);
    }
    // Serial numbers never collide across restarts.
    let mut serials: Vec<_> = files
        .iter()
        .map(|f| {
            let name = f.file_name().unwrap().to_str().unwrap();
            trawl::warc::writer::parse_serial(name, "trawl", 0).unwrap()
        })
        .collect();
    let count = serials.len();
    serials.dedup();
    assert_eq!(serials.len(), count);
    warcio_check(&files);
}

/// A plain capture of `payload` at `uri` with the given status, request included.
fn plain_capture(uri: &str, status: &str, payload: &[u8]) -> Capture {
    Capture {
        target_uri: uri.to_owned(),
        date: WarcDate::now(),
        ip: Some("127.0.0.1".parse().unwrap()),
        request: format!("GET {uri} HTTP/1.1\r\nHost: a.example\r\n\r\n")
            .as_bytes()
            .into(),
        response: from_wire(&with_head(
            format!(
                "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n",
                payload.len()
            )
            .as_bytes(),
            payload,
        )),
        truncated: None,
        revisit: None,
        metadata: None,
    }
}

/// Identical payloads under several URLs: the first is a `response`, the others
/// `revisit` records (WARC 1.1 identical-payload-digest profile) that point at it, with
/// the head only as block. Non-2xx, truncated and empty responses are never revisits;
/// a chunked duplicate of a plain original is one (same payload once de-chunked).
#[test]
fn duplicate_payloads_become_revisits_of_the_first_response() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = WarcWriter::new(config(dir.path())).unwrap();
    let page = body(3000, 42);
    let other = body(3000, 43);
    let mut captures = vec![
        plain_capture("http://a.example/first", "200 OK", &page),
        plain_capture("http://a.example/copy1", "200 OK", &page),
        plain_capture(
            "http://b.example/copy2",
            "203 Non-Authoritative Information",
            &page,
        ),
        plain_capture("http://a.example/missing", "404 Not Found", &page),
        plain_capture("http://a.example/other", "200 OK", &other),
        plain_capture("http://a.example/empty1", "200 OK", b""),
        plain_capture("http://a.example/empty2", "200 OK", b""),
    ];
    let mut cut = plain_capture("http://a.example/cut", "200 OK", &page);
    cut.truncated = Some(Truncation::Length);
    captures.push(cut);
    let mut chunked = plain_capture("http://c.example/chunked", "200 OK", &page);
    chunked.response = from_wire(&with_head(CHUNKED_HEAD, &chunk(&page, 700)));
    captures.push(chunked);
    let expect_revisit = [false, true, true, false, false, false, false, false, true];

    let written: Vec<_> = captures
        .iter()
        .map(|c| writer.write_capture(c).unwrap())
        .collect();
    let dedup = writer.dedup_stats().unwrap();
    assert_eq!(dedup.hits, 3);
    let summary = writer.close().unwrap();
    assert_eq!(summary.revisits, 3);
    for (w, expected) in written.iter().zip(expect_revisit) {
        assert_eq!(w.revisit, expected, "{w:?}");
    }
    let original = &written[0];

    let files = warc_files(dir.path());
    let members = members(&files[0]);
    let mut revisits = 0;
    for (offset, record) in &members {
        let (header, block) = split(record);
        assert_eq!(
            field(&header, "WARC-Block-Digest").unwrap(),
            Digest::of(&block).to_string()
        );
        if field(&header, "WARC-Type") != Some("revisit") {
            continue;
        }
        revisits += 1;
        let (i, w) = written
            .iter()
            .enumerate()
            .find(|(_, w)| w.response_offset == *offset)
            .unwrap();
        let capture = &captures[i];
        assert_eq!(
            field(&header, "WARC-Profile"),
            Some("http://netpreserve.org/warc/1.1/revisit/identical-payload-digest")
        );
        assert_eq!(
            field(&header, "WARC-Refers-To"),
            Some(original.response_id.to_string().as_str())
        );
        assert_eq!(
            field(&header, "WARC-Refers-To-Target-URI"),
            Some("http://a.example/first")
        );
        assert_eq!(
            field(&header, "WARC-Refers-To-Date"),
            Some(captures[0].date.to_string().as_str())
        );
        assert_eq!(
            field(&header, "WARC-Payload-Digest"),
            Some(Digest::of(&page).to_string().as_str())
        );
        assert_eq!(w.payload_digest, original.payload_digest);
        assert_eq!(field(&header, "WARC-Truncated"), Some("length"));
        assert_eq!(
            field(&header, "Content-Type"),
            Some("application/http;msgtype=response")
        );
        assert_eq!(
            field(&header, "WARC-Target-URI"),
            Some(capture.target_uri.as_str())
        );
        assert_eq!(field(&header, "WARC-IP-Address"), Some("127.0.0.1"));
        assert_eq!(
            field(&header, "WARC-Date"),
            Some(capture.date.to_string().as_str())
        );
        // The block is the response head only, as stored (Transfer-Encoding renamed).
        let head = capture.response.stored_head();
        assert_eq!(block, *head);
        assert_eq!(
            field(&header, "Content-Length"),
            Some(head.len().to_string().as_str())
        );
        // WARC-Concurrent-To names the capture's request record, which names it back.
        let concurrent = field(&header, "WARC-Concurrent-To").unwrap();
        let id = field(&header, "WARC-Record-ID").unwrap();
        let request = members
            .iter()
            .map(|(_, r)| split(r).0)
            .find(|h| field(h, "WARC-Record-ID") == Some(concurrent))
            .unwrap();
        assert_eq!(field(&request, "WARC-Type"), Some("request"));
        assert_eq!(field(&request, "WARC-Concurrent-To"), Some(id));
    }
    assert_eq!(revisits, 3);
    warcio_check(&files);
    if let Some(index) = warcio_index(&files[0]) {
        let kinds: Vec<_> = index
            .iter()
            .filter(|e| e["warc-type"] == "revisit")
            .collect();
        assert_eq!(kinds.len(), 3);
        assert!(kinds
            .iter()
            .all(|e| e["http:status"].as_str().unwrap().starts_with("20")));
    }
}

/// With deduplication off every response is written in full.
#[test]
fn dedup_off_writes_every_response_in_full() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path());
    config.dedup = DedupConfig::off();
    let mut writer = WarcWriter::new(config).unwrap();
    let page = body(1000, 7);
    for i in 0..4 {
        let w = writer
            .write_capture(&plain_capture(
                &format!("http://a.example/{i}"),
                "200 OK",
                &page,
            ))
            .unwrap();
        assert!(!w.revisit);
    }
    assert!(writer.dedup_stats().is_none());
    assert_eq!(writer.close().unwrap().revisits, 0);
}

/// Payloads under the configured minimum are written in full.
#[test]
fn small_payloads_are_not_deduplicated() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path());
    config.dedup.min_payload_bytes = 100;
    let mut writer = WarcWriter::new(config).unwrap();
    for (i, size) in [99usize, 99, 100, 100].into_iter().enumerate() {
        let page = vec![b'x'; size];
        let w = writer
            .write_capture(&plain_capture(
                &format!("http://a.example/{i}"),
                "200 OK",
                &page,
            ))
            .unwrap();
        assert_eq!(w.revisit, i == 3, "capture {i} of {size} bytes");
    }
}

/// A resume cuts the checkpoint's file back to the synced offset and keeps later files:
/// a revisit in a later file refers only to responses written before the last sync
/// (or in a later file itself), never to the part of a file that a resume may cut.
#[test]
fn revisits_across_a_rotation_refer_only_to_synced_responses() {
    let synced = body(2000, 1);
    let unsynced = body(2000, 2);
    // Files that hold two captures: the size of a file with one, plus some slack for
    // the random record ids (which compress a little differently).
    let scratch = tempfile::tempdir().unwrap();
    let mut probe = WarcWriter::new(config(scratch.path())).unwrap();
    probe
        .write_capture(&plain_capture("http://a.example/s", "200 OK", &synced))
        .unwrap();
    let one = probe.position().unwrap().offset;
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path());
    config.max_file_bytes = one + 100;
    let mut writer = WarcWriter::new(config).unwrap();
    let first = writer
        .write_capture(&plain_capture("http://a.example/s", "200 OK", &synced))
        .unwrap();
    writer.sync().unwrap();
    // Same file as the sync (rotation happens before the next capture).
    let cut = plain_capture("http://a.example/u", "200 OK", &unsynced);
    let mut same_file = writer.write_capture(&cut).unwrap();
    assert_eq!(same_file.file_name, first.file_name);
    // A later file: the synced original is referred to, the unsynced one is not.
    let again = writer
        .write_capture(&plain_capture("http://b.example/s", "200 OK", &synced))
        .unwrap();
    assert_ne!(again.file_name, first.file_name);
    assert!(again.revisit);
    let full = writer
        .write_capture(&plain_capture("http://b.example/u", "200 OK", &unsynced))
        .unwrap();
    assert!(!full.revisit, "refers into a part a resume may cut");
    assert_eq!(full.file_name, again.file_name);
    // From then on the later file's response is the original, in the next file too
    // (no sync in between: nothing of that file can be cut).
    same_file = writer
        .write_capture(&plain_capture("http://c.example/u", "200 OK", &unsynced))
        .unwrap();
    assert_ne!(same_file.file_name, full.file_name);
    assert!(same_file.revisit);
    writer.close().unwrap();
    let files = warc_files(dir.path());
    assert_eq!(files.len(), 3);
    warcio_check(&files);
}
