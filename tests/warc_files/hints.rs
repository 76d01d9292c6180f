//! Revisit hints (`docs/warc.md`, "Where compression runs"): a compressor that finds
//! its payload's tag in the writer's index ships the response uncompressed, and the
//! writer writes a revisit or, when the index no longer holds the digest, the response
//! in full. Hints save CPU only: the records written are the same with and without.

use trawl::provenance::WarcDate;
use trawl::warc::dedup::MIN_DEDUP_BYTES;
use trawl::warc::{Capture, CaptureIds, DedupConfig, RecordId, WarcWriter};

use crate::reading::{field, members, split, warc_files};
use crate::samples::{body, config, plain_capture, two_capture_writer};
use crate::warcio::{warcio_check, warcio_payload};

/// Capture `i` of payload `seed`, with a fixed date.
fn capture(i: u64, seed: u64) -> Capture {
    let mut c = plain_capture(
        &format!("http://h{}.example/p/{i}", i % 3),
        "200 OK",
        &body(2500, seed),
    );
    c.date = WarcDate::from_unix_micros(1_700_000_000_000_000 + i as i64);
    c
}

fn ids(i: u64) -> CaptureIds {
    let id = |k: u64| RecordId::from_uuid(uuid::Uuid::from_u128(u128::from(i * 3 + k + 1)));
    CaptureIds {
        request: id(0),
        response: id(1),
        metadata: id(2),
    }
}

/// What must be the same with hints and without: per record its type, id, URI, the
/// digests and references it names, and its block.
fn records_of(dir: &std::path::Path) -> Vec<Vec<String>> {
    let names = [
        "WARC-Type",
        "WARC-Record-ID",
        "WARC-Target-URI",
        "WARC-Block-Digest",
        "WARC-Payload-Digest",
        "WARC-Refers-To",
        "WARC-Refers-To-Target-URI",
        "WARC-Refers-To-Date",
        "Content-Length",
    ];
    let files = warc_files(dir);
    warcio_check(&files);
    files
        .iter()
        .flat_map(|f| members(f))
        .map(|(_, record)| split(&record))
        .filter(|(header, _)| field(header, "WARC-Type") != Some("warcinfo"))
        .map(|(header, block)| {
            let mut out: Vec<String> = names
                .iter()
                .map(|n| field(&header, n).unwrap_or("").to_owned())
                .collect();
            out.push(String::from_utf8_lossy(&block).into_owned());
            out
        })
        .collect()
}

/// The same captures through two writers in lockstep, one with hints and one
/// without, compressed a few at a time ahead of the appends (so some hints are not
/// there yet), with syncs and rotations (so some entries are forgotten after their
/// hint was read): the same records, and the hints skipped some deflates.
#[test]
fn hints_on_and_off_write_the_same_records() {
    let (on_dir, off_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut writers = [on_dir.path(), off_dir.path()].map(|dir| {
        let mut config = config(dir);
        config.max_file_bytes = 12_000;
        WarcWriter::new(config).unwrap()
    });
    let mut on = writers[0].compressor();
    let mut off = writers[1].compressor().without_hints();
    let n = 60u64;
    let mut hinted = 0;
    for window in (0..n).collect::<Vec<_>>().chunks(3) {
        let mut batch = Vec::new();
        for &i in window {
            let c = capture(i, i % 14);
            let a = on.compress_with_ids(&c, ids(i)).unwrap();
            let b = off.compress_with_ids(&c, ids(i)).unwrap();
            if a.compressed_bytes() < b.compressed_bytes() {
                hinted += 1;
            }
            batch.push((i, a, b));
        }
        for (i, a, b) in &batch {
            let wa = writers[0].append_compressed(a).unwrap();
            let wb = writers[1].append_compressed(b).unwrap();
            assert_eq!(wa.revisit, wb.revisit, "capture {i}");
            assert_eq!(wa.payload_digest, wb.payload_digest);
            if i % 4 == 0 {
                for w in &mut writers {
                    w.sync().unwrap();
                }
            }
        }
    }
    let [w_on, w_off] = writers;
    let (s_on, s_off) = (w_on.close().unwrap(), w_off.close().unwrap());
    assert_eq!(s_on.revisits, s_off.revisits);
    assert_eq!(s_on.raw_bytes, s_off.raw_bytes);
    assert!(s_on.files > 3, "rotations: {s_on:?}");
    assert!(s_on.revisits > 10, "{s_on:?}");
    assert!(hinted > 10, "only {hinted} hinted");
    assert_eq!(records_of(on_dir.path()), records_of(off_dir.path()));
}

/// Hinted, then forgotten before the append (the original was written after the last
/// sync in a file the writer rotated away from): the response is written in full, by
/// the writer, and reads back whole; a hinted duplicate of a synced original becomes a
/// revisit in the next file.
#[test]
fn a_hint_forgotten_at_a_rotation_gives_a_whole_response() {
    let synced = body(2000, 1);
    let unsynced = body(2000, 2);
    let dir = tempfile::tempdir().unwrap();
    let mut writer = two_capture_writer(dir.path(), &synced);
    let first = writer
        .write_capture(&plain_capture("http://a.example/s", "200 OK", &synced))
        .unwrap();
    writer.sync().unwrap();
    writer
        .write_capture(&plain_capture("http://a.example/u", "200 OK", &unsynced))
        .unwrap();
    // Both hinted now: shipped without the response member.
    let mut compressor = writer.compressor();
    let mut plain = writer.compressor().without_hints();
    let forgotten = plain_capture("http://b.example/u", "200 OK", &unsynced);
    let kept = plain_capture("http://b.example/s", "200 OK", &synced);
    let forgotten_c = compressor.compress(&forgotten).unwrap();
    let kept_c = compressor.compress(&kept).unwrap();
    for (c, hinted) in [(&forgotten, &forgotten_c), (&kept, &kept_c)] {
        let full = plain.compress(c).unwrap();
        assert!(hinted.compressed_bytes() + 500 < full.compressed_bytes());
    }
    // The rotation forgets `a.example/u` (after the sync): a miss, written in full.
    let full = writer.append_compressed(&forgotten_c).unwrap();
    assert_ne!(full.file_name, first.file_name);
    assert!(!full.revisit);
    let revisit = writer.append_compressed(&kept_c).unwrap();
    assert!(revisit.revisit);
    writer.close().unwrap();
    let files = warc_files(dir.path());
    warcio_check(&files);
    let file = files
        .iter()
        .find(|f| f.file_name().unwrap().to_string_lossy() == full.file_name)
        .unwrap();
    let (_, record) = members(file)
        .into_iter()
        .find(|(offset, _)| *offset == full.response_offset)
        .unwrap();
    let (header, block) = split(&record);
    assert_eq!(field(&header, "WARC-Type"), Some("response"));
    assert_eq!(
        field(&header, "WARC-Payload-Digest").unwrap(),
        full.payload_digest.to_string()
    );
    assert!(block.ends_with(&unsynced));
    if let Some(payload) = warcio_payload(file, full.response_offset) {
        assert_eq!(payload, unsynced);
    }
}

/// Hinted, then evicted (a tiny index overrun by other payloads) before the append:
/// written in full.
#[test]
fn a_hint_evicted_before_the_append_gives_a_whole_response() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path());
    config.dedup = DedupConfig {
        max_bytes: MIN_DEDUP_BYTES,
        min_payload_bytes: 1,
    };
    let mut writer = WarcWriter::new(config).unwrap();
    let page = body(3000, 7);
    writer
        .write_capture(&plain_capture("http://a.example/first", "200 OK", &page))
        .unwrap();
    let mut compressor = writer.compressor();
    let copy = compressor
        .compress(&plain_capture("http://a.example/copy", "200 OK", &page))
        .unwrap();
    let full_size = writer
        .compressor()
        .without_hints()
        .compress(&plain_capture("http://a.example/copy", "200 OK", &page))
        .unwrap()
        .compressed_bytes();
    assert!(copy.compressed_bytes() + 500 < full_size, "hinted");
    for i in 0..600 {
        writer
            .write_capture(&plain_capture(
                &format!("http://z.example/{i}"),
                "200 OK",
                &body(64, 1000 + i),
            ))
            .unwrap();
    }
    let written = writer.append_compressed(&copy).unwrap();
    assert!(!written.revisit, "the original left the index");
    writer.close().unwrap();
    let files = warc_files(dir.path());
    warcio_check(&files);
    let (_, record) = members(&files[0])
        .into_iter()
        .find(|(offset, _)| *offset == written.response_offset)
        .unwrap();
    let (header, block) = split(&record);
    assert_eq!(field(&header, "WARC-Type"), Some("response"));
    assert!(block.ends_with(&page));
}
