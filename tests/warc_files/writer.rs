//! The writer's files: one gzip member per record that warcio accepts, rotation by
//! size, the offsets and positions the output thread reports, and I/O errors.

use std::fs;

use trawl::provenance::Digest;
use trawl::warc::{scan, WarcError, WarcWriter};

use crate::reading::{field, members, split, warc_files};
use crate::samples::{config, http_payload, sample_capture};
use crate::warcio::{warcio_check, warcio_index, warcio_payload};

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
