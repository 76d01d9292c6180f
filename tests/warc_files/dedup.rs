//! Identical payloads written as revisit records of the first response, and when not.

use trawl::provenance::{Digest, Truncation};
use trawl::warc::{DedupConfig, WarcWriter};

use crate::reading::{field, members, split, warc_files};
use crate::samples::{
    body, chunk, config, from_wire, plain_capture, two_capture_writer, with_head, CHUNKED_HEAD,
};
use crate::warcio::{warcio_check, warcio_index};

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
    let dir = tempfile::tempdir().unwrap();
    let mut writer = two_capture_writer(dir.path(), &synced);
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
