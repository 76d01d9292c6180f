//! Tests of the re-crawl index: round trips, torn tails, damaged files.

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
        warc_file: "warc/trawl-0-00000.warc.gz".to_owned(),
        warc_offset: u64::from(k) * 4_096,
        payload_bytes: 20_000 + u64::from(k),
    }
}

fn write(path: &Path, n: u32) {
    let mut w = IndexWriter::create(path).unwrap();
    for k in 0..n {
        w.append(&entry(k)).unwrap();
    }
    w.sync().unwrap();
}

fn read_all(path: &Path) -> (Vec<IndexEntry>, Option<Recovered>) {
    let mut r = IndexReader::open(path).unwrap();
    let entries = (&mut r).collect::<Result<Vec<_>, _>>().unwrap();
    (entries, r.recovered())
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
    // Compact: about a hundred bytes per capture beyond its strings.
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size < 1_000 * 230, "{size} bytes");
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
    }
    let (entries, recovered) = read_all(&path);
    assert_eq!(entries.len(), 9);
    assert!(recovered.is_some());
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
    let cases: Vec<(usize, u8, &str)> = vec![
        (0, b'X', "bad magic"),
        (9, 7, "damaged (checksum mismatch)"),
        (8, 2, "damaged (checksum mismatch)"),
        (HEADER_BYTES + 8 + 20, 0x55, "record at byte 16 is damaged"),
        (HEADER_BYTES + 3, 0x7F, "impossible length"),
        (HEADER_BYTES + first + 8, 0xFF, "record at byte"),
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
    // A newer version is refused by name.
    let mut v2 = good.clone();
    v2[8] = 2;
    let crc = {
        let mut h = crc32fast::Hasher::new();
        h.update(&v2[..12]);
        h.finalize()
    };
    v2[12..16].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&path, &v2).unwrap();
    assert!(matches!(
        IndexReader::open(&path),
        Err(IndexError::UnsupportedVersion(2))
    ));
    std::fs::write(&path, &good[..10]).unwrap();
    assert!(matches!(
        IndexReader::open(&path),
        Err(IndexError::TruncatedHeader)
    ));
}

#[test]
fn fields_are_checked_even_with_a_right_checksum() {
    let mut rec = encode(&entry(2)).unwrap();
    // Set an unknown flag bit and fix the checksum.
    rec[8] |= 0x80;
    let crc = crc32fast::hash(&rec[8..]);
    rec[4..8].copy_from_slice(&crc.to_le_bytes());
    assert!(matches!(
        decode(&rec, 16),
        Err(IndexError::BadRecord {
            reason: "unknown flags",
            ..
        })
    ));
    assert_eq!(decode(&rec[..5], 16).unwrap(), Decoded::Incomplete);
}
