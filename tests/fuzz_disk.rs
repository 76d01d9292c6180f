//! Replays the committed fuzz corpus of `disk_records` through the same entry points
//! the fuzzer calls (`trawl::disk::fuzz_records`, `trawl::checkpoint::tallies::fuzz_row`),
//! then damages real record files (every truncation, flipped bytes) through them, so
//! `cargo test` keeps the on-disk readers honest.
#![allow(clippy::unwrap_used, reason = "test code")]

use trawl::checkpoint::tallies::{self, TallyRow};

#[test]
fn disk_records_corpus_replays_without_panics() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/disk_records");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        trawl::disk::fuzz_records(&data);
        tallies::fuzz_row(&data);
        n += 1;
    }
    assert!(n >= 15, "corpus too small: {n} files in {}", dir.display());
}

/// A real tallies file, cut at every length and with bytes flipped: the fuzz entry
/// point never panics, and the file reader reports each one as damage naming the
/// file, never as rows that were not written.
#[test]
fn damaged_tallies_files_never_panic_and_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join(tallies::file_name(3));
    let rows: Vec<TallyRow> = (0..20u32)
        .map(|i| TallyRow {
            host: format!("http://h{i:06}.synth.test:8080"),
            pages: u64::from(i) * 17,
            consecutive_failures: i % 3,
            parked: i % 4 == 0,
        })
        .collect();
    tallies::write_file(&path, rows.clone()).unwrap();
    let good = std::fs::read(&path).unwrap();
    assert_eq!(tallies::read_file(&path).unwrap().0, rows);
    trawl::disk::fuzz_records(&good);
    for len in 0..good.len() {
        trawl::disk::fuzz_records(&good[..len]);
        std::fs::write(&path, &good[..len]).unwrap();
        let e = tallies::read_file(&path).unwrap_err();
        assert!(
            e.to_string().contains("tallies-0003.bin"),
            "cut at {len}: {e}"
        );
    }
    let mut rng = fastrand::Rng::with_seed(11);
    for _ in 0..500 {
        let mut bad = good.clone();
        for _ in 0..rng.usize(1..4) {
            let i = rng.usize(0..bad.len());
            bad[i] ^= 1 << rng.u8(0..8);
        }
        trawl::disk::fuzz_records(&bad);
        std::fs::write(&path, &bad).unwrap();
        match tallies::read_file(&path) {
            Err(e) => assert!(e.to_string().contains("is damaged"), "{e}"),
            Ok((got, _)) => panic!("damage went unnoticed: {} rows", got.len()),
        }
    }
}
