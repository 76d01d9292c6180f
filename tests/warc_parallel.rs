//! WARC records compressed on the shard threads (issue 11): a crawl with several shards
//! writes every record exactly once, each fetch's `request`, `response` (or `revisit`)
//! and `metadata` together and in that order, every record names its own file's
//! `warcinfo`, and the crawl log points at the response records. Also the writer's
//! side alone: captures compressed before a rotation get the new file's `warcinfo` id.

// Test helpers outside `#[test]` functions: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod crawl_support;

use std::collections::{HashMap, HashSet};

use crawl_support::{crawl, crawl_log, read_warc_records, warc_files, warcio_check_dir, World};
use trawl::http::ResponseHead;
use trawl::provenance::{Digest, WarcDate};
use trawl::warc::{
    Capture, CaptureMetadata, DedupConfig, HttpResponse, WarcWriter, WarcWriterConfig,
};

use crawl_support::WarcRecord as Rec;

impl Rec {
    /// A header field's value, `""` when absent.
    fn get(&self, name: &str) -> &str {
        self.field(name).unwrap_or("")
    }
}

/// Checks what must hold of any set of files trawl wrote; returns the number of
/// captures (response or revisit records).
fn check_layout(records: &[Rec]) -> usize {
    let mut ids = HashSet::new();
    let mut warcinfo_of_file = HashMap::new();
    let mut captures = 0;
    for (i, r) in records.iter().enumerate() {
        assert!(
            ids.insert(r.get("WARC-Record-ID")),
            "record {} written twice",
            r.get("WARC-Record-ID")
        );
        assert_eq!(r.get("WARC-Block-Digest"), Digest::of(&r.block).to_string());
        match r.get("WARC-Type") {
            "warcinfo" => {
                assert_eq!(r.offset, 0, "warcinfo first in its file");
                warcinfo_of_file.insert(r.file, r.get("WARC-Record-ID"));
                continue;
            }
            "request" => {
                // The request's response follows at once, in the same file.
                let next = &records[i + 1];
                assert!(matches!(next.get("WARC-Type"), "response" | "revisit"));
                assert_eq!(next.file, r.file);
                assert_eq!(r.get("WARC-Concurrent-To"), next.get("WARC-Record-ID"));
                assert_eq!(next.get("WARC-Target-URI"), r.get("WARC-Target-URI"));
            }
            "response" | "revisit" => {
                captures += 1;
                let prev = &records[i - 1];
                assert_eq!(prev.get("WARC-Type"), "request", "request before response");
                assert_eq!(prev.get("WARC-Concurrent-To"), r.get("WARC-Record-ID"));
            }
            "metadata" => {
                let prev = &records[i - 1];
                assert!(matches!(prev.get("WARC-Type"), "response" | "revisit"));
                assert_eq!(prev.file, r.file);
                assert_eq!(r.get("WARC-Concurrent-To"), prev.get("WARC-Record-ID"));
            }
            other => panic!("unexpected record type {other}"),
        }
        assert_eq!(
            Some(&r.get("WARC-Warcinfo-ID")),
            warcinfo_of_file.get(&r.file),
            "{} names another file's warcinfo",
            r.get("WARC-Target-URI")
        );
    }
    captures
}

#[test]
fn crawl_with_four_shards_writes_each_record_once_and_captures_together() {
    let tmp = tempfile::tempdir().unwrap();
    let budget = 100;
    let world = World {
        hosts: 16,
        profile: None,
        pages_per_host: "10-30",
        out_degree: Some("3-8"),
        budget: Some(budget),
    };
    let sw = world.start(&tmp.path().join("web"), &[]);
    let out = tmp.path().join("crawl");
    // Small files: rotations happen while other shards' captures are in flight, which
    // exercises re-stamping their warcinfo ids.
    crawl(
        &sw,
        &out,
        budget,
        0,
        &["--shards", "4", "--warc-max-bytes", "60000"],
    );
    drop(sw);

    let files = warc_files(&out.join("warc"));
    assert!(files.len() > 3, "rotation expected, got {files:?}");
    let records = read_warc_records(&files);
    let captures = check_layout(&records);

    // Every fetch the log points at has its response record there, and each response
    // record is pointed at by exactly one log line.
    let log = crawl_log(&out);
    let by_place: HashMap<(String, u64), &Rec> = records
        .iter()
        .filter(|r| matches!(r.get("WARC-Type"), "response" | "revisit"))
        .map(|r| {
            let name = files[r.file].file_name().unwrap().to_string_lossy();
            ((name.into_owned(), r.offset), r)
        })
        .collect();
    let mut pointed = HashSet::new();
    for line in &log {
        let Some(warc) = line.get("warc").filter(|w| !w.is_null()) else {
            continue;
        };
        let place = (
            warc["file"].as_str().unwrap().to_owned(),
            warc["offset"].as_u64().unwrap(),
        );
        let r = by_place
            .get(&place)
            .unwrap_or_else(|| panic!("log points at no response record: {place:?}"));
        assert_eq!(r.get("WARC-Target-URI"), line["url"].as_str().unwrap());
        assert!(pointed.insert(place), "two log lines point at one record");
    }
    assert_eq!(pointed.len(), captures, "every capture is in the log once");
    assert!(captures > 100, "only {captures} captures");
    warcio_check_dir(&out.join("warc"));
}

fn capture(i: u32, body: &[u8]) -> Capture {
    Capture {
        target_uri: format!("http://a.test/{i}"),
        date: WarcDate::from_unix_micros(1_700_000_000_000_000 + i64::from(i)),
        ip: Some([127, 0, 0, 1].into()),
        request: format!("GET /{i} HTTP/1.1\r\nHost: a.test\r\n\r\n")
            .as_bytes()
            .into(),
        response: HttpResponse::new(
            &ResponseHead::parse(
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                )
                .as_bytes(),
            )
            .unwrap(),
            body.into(),
        ),
        truncated: None,
        revisit: None,
        metadata: Some(CaptureMetadata::default()),
    }
}

#[test]
fn captures_compressed_before_a_rotation_name_the_new_files_warcinfo() {
    let tmp = tempfile::tempdir().unwrap();
    let mut config = WarcWriterConfig::new(tmp.path());
    config.max_file_bytes = 1;
    config.dedup = DedupConfig::default();
    let mut writer = WarcWriter::new(config).unwrap();
    let mut compressor = writer.compressor();
    // All compressed before any is appended: all carry the first file's id.
    let bodies: Vec<Vec<u8>> = (0..4u32)
        .map(|i| format!("<p>page {}</p>", i % 3).repeat(50).into_bytes())
        .collect();
    let compressed: Vec<_> = (0..4u32)
        .map(|i| {
            compressor
                .compress(&capture(i, &bodies[i as usize]))
                .unwrap()
        })
        .collect();
    let written: Vec<_> = compressed
        .iter()
        .map(|c| writer.append_compressed(c).unwrap())
        .collect();
    let summary = writer.close().unwrap();
    assert_eq!(summary.files, 4, "one capture per file");
    // The fourth body equals the first: a revisit, built by the writer.
    assert!(written[3].revisit);
    assert_eq!(summary.revisits, 1);
    let files = warc_files(tmp.path());
    let records = read_warc_records(&files);
    assert_eq!(records.len(), 4 * 4);
    assert_eq!(check_layout(&records), 4);
    let revisit = &records[14];
    assert_eq!(revisit.get("WARC-Type"), "revisit");
    assert_eq!(revisit.get("WARC-Refers-To-Target-URI"), "http://a.test/0");
    assert!(revisit.block.ends_with(b"\r\n\r\n"));
    for (w, file) in written.iter().zip(&files) {
        assert_eq!(
            w.file_name,
            file.file_name().unwrap().to_string_lossy(),
            "written in order, one file each"
        );
    }
}
