//! Tests of the re-crawl index: round trips, torn tails, damaged files, the version-1
//! legacy path, positioned reads, and the fuzz corpus's seeds.

use std::fs::OpenOptions;

use super::*;

fn entry(k: u32) -> IndexEntry {
    IndexEntry {
        url: format!("http://h000001.synth.test:8080/p/{k}"),
        status: 200,
        fetched_at_us: 1_764_000_000_000_000 + i64::from(k),
        validators: Validators {
            etag: (k % 2 == 0).then(|| format!("\"{k:016x}\"")),
            last_modified: (k % 3 != 0).then(|| "Tue, 01 Jul 2025 08:00:00 GMT".to_owned()),
        },
        payload_digest: "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ".to_owned(),
        record_id: format!("<urn:uuid:00000000-0000-4000-8000-{k:012}>"),
        warc_file: "trawl-0-00000.warc.gz".to_owned(),
        warc_offset: u64::from(k) * 4_096,
        payload_bytes: 20_000 + u64::from(k),
        hops: Some(["", "L", "LL", "LLM"][k as usize % 4].to_owned()),
        // A seed (hop path "") has no referrer; the others were found on a page.
        via: (k % 4 != 0).then(|| format!("http://h000001.synth.test:8080/p/{}", k / 2)),
    }
}

fn write(path: &Path, n: u32) {
    let mut w = IndexWriter::create(path).unwrap();
    for k in 0..n {
        w.append(&entry(k)).unwrap();
    }
    w.sync().unwrap();
}

/// A version-1 file as the build before wrote it.
fn v1_bytes(n: u32) -> Vec<u8> {
    let mut bytes = legacy::header().to_vec();
    for k in 0..n {
        bytes.extend_from_slice(&legacy::encode(&entry(k)).unwrap());
    }
    bytes
}

fn read_all(path: &Path) -> (Vec<IndexEntry>, Option<Recovered>) {
    let mut r = IndexReader::open(path).unwrap();
    let entries = (&mut r).collect::<Result<Vec<_>, _>>().unwrap();
    (entries, r.recovered())
}

fn read_bytes(bytes: &[u8]) -> Result<Vec<IndexEntry>, IndexError> {
    IndexReader::new(bytes, Path::new("t"))?.collect()
}

#[test]
fn round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(INDEX_FILE);
    write(&path, 1_000);
    let (entries, recovered) = read_all(&path);
    assert_eq!(entries.len(), 1_000);
    assert_eq!(entries[7], entry(7));
    assert_eq!(recovered, None);
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[..12], b"TRAWLRIX\x02\x00\x00\x00");
    // Compact: varints and one-byte string lengths save about 20 bytes a record on
    // version 1, besides the hop path and referrer version 2 also keeps.
    let v1 = v1_bytes(1_000).len();
    let kept: usize = (0..1_000)
        .map(entry)
        .map(|e| 2 + e.hops.map_or(0, |h| h.len()) + e.via.map_or(0, |v| v.len()))
        .sum();
    assert!(
        bytes.len() - kept + 15_000 < v1,
        "{} bytes ({kept} of hop paths and referrers), v1 {v1}",
        bytes.len()
    );
    assert!(IndexWriter::create(&path).is_err(), "never overwrites");
}

#[test]
fn the_latest_entry_of_a_url_wins() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(INDEX_FILE);
    let mut w = IndexWriter::create(&path).unwrap();
    w.append(&entry(1)).unwrap();
    let mut again = entry(1);
    again.status = 304;
    again.fetched_at_us += 1;
    w.append(&entry(2)).unwrap();
    w.append(&again).unwrap();
    w.sync().unwrap();
    let (latest, recovered) = read_latest(&path).unwrap();
    assert_eq!(latest.len(), 2);
    assert_eq!(latest[&entry(1).url], again);
    assert_eq!(recovered, None);
}

#[test]
fn torn_tail_is_reported_and_cut_on_append() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(INDEX_FILE);
    write(&path, 10);
    let full = std::fs::metadata(&path).unwrap().len();
    let last = encode(&entry(9)).unwrap().len() as u64;
    for cut in [1, 5, 8, last - 1] {
        let f = OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(full - cut).unwrap();
        let (entries, recovered) = read_all(&path);
        assert_eq!(entries.len(), 9, "cut {cut}");
        assert_eq!(
            recovered,
            Some(Recovered {
                valid_bytes: full - last,
                torn_bytes: last - cut
            })
        );
        // A zero-filled tail (file grown, data never written) is torn too.
        let f = OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(full).unwrap();
        let (entries, recovered) = read_all(&path);
        assert_eq!(entries.len(), 9, "zero-filled cut {cut}");
        assert_eq!(recovered.map(|r| r.torn_bytes), Some(last));
    }
    // Zeros at a record boundary (no length written at all).
    let f = OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(full - last).unwrap();
    f.set_len(full - last + 100).unwrap();
    let (entries, recovered) = read_all(&path);
    assert_eq!(entries.len(), 9);
    assert_eq!(
        recovered,
        Some(Recovered {
            valid_bytes: full - last,
            torn_bytes: 100
        })
    );
    let (mut w, recovered) = IndexWriter::open_append(&path).unwrap();
    assert_eq!(recovered.map(|r| r.valid_bytes), Some(full - last));
    assert_eq!(w.entries(), 9);
    w.append(&entry(42)).unwrap();
    w.sync().unwrap();
    let (entries, recovered) = read_all(&path);
    assert_eq!(entries.len(), 10);
    assert_eq!(entries[9], entry(42));
    assert_eq!(recovered, None);
}

#[test]
fn damage_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(INDEX_FILE);
    write(&path, 10);
    let good = std::fs::read(&path).unwrap();
    let first = encode(&entry(0)).unwrap().len();
    let h = disk::HEADER_BYTES;
    let cases: Vec<(usize, u8, &str)> = vec![
        (0, b'X', "bad magic"),
        (8, 7, "version 5 is not supported"),
        (h + 20, 0x55, "record at byte 12 is damaged"),
        (h + first + 8, 0xFF, "record at byte"),
    ];
    for (at, xor, message) in cases {
        let mut bad = good.clone();
        bad[at] ^= xor;
        std::fs::write(&path, &bad).unwrap();
        let err = IndexReader::open(&path)
            .and_then(|r| r.collect::<Result<Vec<_>, _>>())
            .unwrap_err();
        assert!(err.to_string().contains(message), "byte {at}: {err}");
        assert!(IndexWriter::open_append(&path).is_err());
    }
    // A length beyond the cap, with records after it.
    let mut bad = good.clone();
    bad[h..h + 4].copy_from_slice(&[0xFF, 0xFF, 0xFF, 0x7F]);
    let err = read_bytes(&bad).unwrap_err();
    assert!(
        err.to_string()
            .contains("record at byte 12 has an impossible length"),
        "{err}"
    );
    // A version-1 header with a wrong checksum.
    let mut v1 = v1_bytes(2);
    v1[13] ^= 1;
    assert!(matches!(read_bytes(&v1), Err(IndexError::HeaderChecksum)));
    let mut v3 = good.clone();
    v3[8] = 3;
    assert!(matches!(
        read_bytes(&v3),
        Err(IndexError::UnsupportedVersion(3))
    ));
    assert!(read_bytes(&v3)
        .unwrap_err()
        .to_string()
        .contains("reads versions 1 and 2"));
    std::fs::write(&path, &good[..10]).unwrap();
    assert!(matches!(
        IndexReader::open(&path),
        Err(IndexError::TruncatedHeader)
    ));
    assert!(matches!(read_bytes(b"GIF89a"), Err(IndexError::BadMagic)));
}

/// Frames a payload (a right checksum) behind a version-2 header.
fn file_of(payload: &[u8]) -> Vec<u8> {
    let mut bytes = FORMAT.header().to_vec();
    disk::write_record(&mut bytes, payload).unwrap();
    bytes
}

fn bad_reason(bytes: &[u8]) -> &'static str {
    match read_bytes(bytes) {
        Err(IndexError::BadRecord { reason, offset: 12 }) => reason,
        other => panic!("{other:?}"),
    }
}

#[test]
fn fields_are_checked_even_with_a_right_checksum() {
    let good = encode_payload(&entry(2)).unwrap();
    let mut p = good.clone();
    p[0] |= 0x80;
    assert_eq!(bad_reason(&file_of(&p)), "unknown flags");
    // warc_offset (8,192 = two varint bytes) written in three.
    let mut p = good[..11].to_vec();
    p.extend_from_slice(&[0x80, 0xC0, 0x00]);
    p.extend_from_slice(&good[13..]);
    assert_eq!(bad_reason(&file_of(&p)), "bad varint");
    let mut p = good.clone();
    p.push(0);
    assert_eq!(bad_reason(&file_of(&p)), "bytes after the last field");
    let mut e = entry(2);
    e.hops = Some("LQ".to_owned());
    assert_eq!(
        bad_reason(&file_of(&encode_payload(&e).unwrap())),
        "unknown hop code"
    );
    e.hops = None;
    e.url = String::new();
    assert_eq!(
        bad_reason(&file_of(&encode_payload(&e).unwrap())),
        "empty url"
    );
    // The frame's length in a longer form than needed.
    let short = encode_payload(&IndexEntry {
        record_id: String::new(),
        payload_digest: String::new(),
        warc_file: String::new(),
        ..entry(3)
    })
    .unwrap();
    assert!(short.len() < 128);
    let mut bytes = FORMAT.header().to_vec();
    bytes.extend_from_slice(&[short.len() as u8 | 0x80, 0x00]);
    bytes.extend_from_slice(&disk::crc32(&short).to_le_bytes());
    bytes.extend_from_slice(&short);
    assert_eq!(bad_reason(&bytes), "length not in its shortest form");
    assert_eq!(read_bytes(&file_of(&short)).unwrap().len(), 1);
}

/// A version-1 index (the build before) is read: same entries without hop paths,
/// torn tails and damage as before; never appended to.
#[test]
fn version_1_files_are_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(INDEX_FILE);
    let bytes = v1_bytes(10);
    std::fs::write(&path, &bytes).unwrap();
    let (entries, recovered) = read_all(&path);
    assert_eq!(recovered, None);
    assert_eq!(entries.len(), 10);
    assert_eq!(
        entries[5],
        IndexEntry {
            hops: None,
            via: None,
            ..entry(5)
        }
    );
    assert!(
        entry(5).via.is_some(),
        "the referrer is what version 1 drops"
    );
    let mut r = IndexReader::open(&path).unwrap();
    assert_eq!(r.version(), IndexVersion::V1);
    let (at, _) = r.nth(3).map(|_| ()).and(r.next_entry()).unwrap().unwrap();
    let file = File::open(&path).unwrap();
    let again = read_entry_at(&file, IndexVersion::V1, at, &path).unwrap();
    assert_eq!(again.url, entry(4).url);
    let last = legacy::encode(&entry(9)).unwrap().len();
    std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
    let (entries, recovered) = read_all(&path);
    assert_eq!(entries.len(), 9);
    assert_eq!(recovered.map(|r| r.torn_bytes), Some(last as u64 - 3));
    let mut bad = bytes.clone();
    bad[16 + 20] ^= 0x55;
    assert!(read_bytes(&bad)
        .unwrap_err()
        .to_string()
        .contains("record at byte 16 is damaged"));
    assert!(matches!(
        IndexWriter::open_append(&path),
        Err(IndexError::OldVersion(_))
    ));
}

/// The referrer round-trips, with and without one, through the stream and positioned
/// reads; none costs one byte (an empty string), and a damaged referrer field is a
/// clear error.
#[test]
fn referrers_are_kept() {
    let robots = "http://h000001.synth.test:8080/robots.txt";
    let with = IndexEntry {
        hops: Some("S".to_owned()),
        via: Some(robots.to_owned()),
        ..entry(3)
    };
    let without = IndexEntry {
        via: None,
        ..with.clone()
    };
    let mut bytes = FORMAT.header().to_vec();
    let offsets: Vec<u64> = [&with, &without]
        .iter()
        .map(|e| {
            let at = bytes.len() as u64;
            bytes.extend_from_slice(&encode(e).unwrap());
            at
        })
        .collect();
    assert_eq!(read_bytes(&bytes).unwrap(), [with.clone(), without.clone()]);
    for (at, e) in offsets.iter().zip([&with, &without]) {
        let again = read_entry_at(bytes.as_slice(), IndexVersion::V2, *at, Path::new("t"));
        assert_eq!(again.unwrap(), *e);
    }
    let (p_with, p_without) = (
        encode_payload(&with).unwrap(),
        encode_payload(&without).unwrap(),
    );
    assert_eq!(p_with.len(), p_without.len() + robots.len());
    assert_eq!(p_without.last(), Some(&0), "no referrer: an empty field");
    // An empty referrer is written as none (one encoding per entry).
    let empty = IndexEntry {
        via: Some(String::new()),
        ..with.clone()
    };
    assert_eq!(encode_payload(&empty).unwrap(), p_without);
    // The referrer's length past the end, or bytes that are not UTF-8.
    let mut p = p_with.clone();
    let len_at = p.len() - robots.len() - 1;
    p[len_at] += 1;
    assert_eq!(bad_reason(&file_of(&p)), "bad string field");
    let mut p = p_with.clone();
    *p.last_mut().unwrap() = 0xFF;
    assert_eq!(bad_reason(&file_of(&p)), "bad string field");
    // A record without the field (the layout before the referrer) is refused.
    let p = p_without[..p_without.len() - 1].to_vec();
    assert_eq!(bad_reason(&file_of(&p)), "bad string field");
}

/// Positioned reads give back what the stream gave, for short records (one read) and
/// long ones (two), from a file and from memory.
#[test]
fn entries_read_back_at_their_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(INDEX_FILE);
    let mut w = IndexWriter::create(&path).unwrap();
    let mut long = entry(7);
    long.url = format!("http://a.test/{}", "x".repeat(2_000));
    for e in [entry(1), long.clone(), entry(2)] {
        w.append(&e).unwrap();
    }
    w.sync().unwrap();
    let mut r = IndexReader::open(&path).unwrap();
    let file = File::open(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let mut n = 0;
    while let Some(next) = r.next_entry() {
        let (at, e) = next.unwrap();
        assert_eq!(
            read_entry_at(&file, IndexVersion::V2, at, &path).unwrap(),
            e
        );
        assert_eq!(
            read_entry_at(bytes.as_slice(), IndexVersion::V2, at, &path).unwrap(),
            e
        );
        n += 1;
    }
    assert_eq!(n, 3);
    assert!(read_entry_at(&file, IndexVersion::V2, 13, &path).is_err());
    assert!(read_entry_at(&file, IndexVersion::V2, 1 << 40, &path).is_err());
}

/// The seeds of the fuzz corpus (`fuzz/corpus/recrawl_index/`, named by the first 16
/// hex digits of their SHA-1): valid, torn, zero-filled, damaged, other-version files
/// of both versions. The committed corpus must hold every one (write them with
/// `TRAWL_WRITE_CORPUS=1 cargo test --lib corpus_holds`).
#[test]
fn corpus_holds_the_current_seeds() {
    use sha1::Digest as _;
    let mut v2 = FORMAT.header().to_vec();
    for k in 0..4 {
        v2.extend_from_slice(&encode(&entry(k)).unwrap());
    }
    let mut long = entry(9);
    long.url = format!("http://a.test/{}", "y".repeat(700));
    long.validators.etag = None;
    let mut with_long = v2.clone();
    with_long.extend_from_slice(&encode(&long).unwrap());
    let mut seeds: Vec<Vec<u8>> = vec![
        v2.clone(),
        with_long,
        v2[..v2.len() - 7].to_vec(),
        v2[..12].to_vec(),
        v2[..9].to_vec(),
        [v2.as_slice(), &[0u8; 40]].concat(),
        v1_bytes(3),
    ];
    let mut flipped = v2.clone();
    flipped[30] ^= 0x10;
    seeds.push(flipped);
    let mut zero_len = v2.clone();
    zero_len.splice(12..12, [0u8, 0, 0, 0, 0]);
    seeds.push(zero_len);
    let mut v9 = v2.clone();
    v9[8] = 9;
    seeds.push(v9);
    let mut dup = v2.clone();
    dup.extend_from_slice(
        &encode(&IndexEntry {
            status: 304,
            ..entry(1)
        })
        .unwrap(),
    );
    seeds.push(dup);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/recrawl_index");
    let write = std::env::var_os("TRAWL_WRITE_CORPUS").is_some();
    for seed in &seeds {
        fuzz_read(seed);
        let digest = sha1::Sha1::digest(seed);
        let name: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        let path = dir.join(name);
        if write {
            std::fs::write(&path, seed).unwrap();
        }
        assert!(
            std::fs::read(&path).ok().as_ref() == Some(seed),
            "{} missing",
            path.display()
        );
    }
}
