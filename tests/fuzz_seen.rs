//! Replays the committed fuzz corpus of `seen_header` through the same entry point
//! the fuzzer calls (`trawl::seen::fuzz_header`), so `cargo test` keeps it honest.
#![allow(clippy::unwrap_used, reason = "test code")]

#[test]
fn seen_header_corpus_replays_without_panics() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/seen_header");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        trawl::seen::fuzz_header(&data);
        n += 1;
    }
    assert!(n >= 5, "corpus too small: {n} files in {}", dir.display());
}

/// The presence-log reader (`trawl::seen::fuzz_log`) on a real log, every truncation
/// and every flipped record byte: never a panic, and a flip inside a record is never
/// read as good.
#[test]
fn presence_log_damage_never_panics_and_is_detected() {
    use trawl::seen::{LogRef, SeenSet, LOG_HEADER_BYTES};
    let tmp = tempfile::tempdir().unwrap();
    let set = SeenSet::create(tmp.path().join("live"), 20_000, 1e-3).unwrap();
    for i in 0..300u64 {
        set.test_and_set(&i.to_le_bytes());
    }
    let p = set.checkpoint_log(tmp.path(), "a.plog", None, 1).unwrap();
    let first = p.write.committed_bytes;
    p.confirm();
    let dir2 = tmp.path().join("2");
    std::fs::create_dir(&dir2).unwrap();
    for i in 300..340u64 {
        set.test_and_set(&i.to_le_bytes());
    }
    let prev = LogRef {
        path: tmp.path().join("a.plog"),
        committed_bytes: first,
    };
    let p = set.checkpoint_log(&dir2, "a.plog", Some(&prev), 2).unwrap();
    p.confirm();
    let good = std::fs::read(dir2.join("a.plog")).unwrap();
    trawl::seen::fuzz_log(&good);
    for len in 0..good.len() {
        trawl::seen::fuzz_log(&good[..len]);
    }
    let mut rng = fastrand::Rng::with_seed(7);
    for at in (LOG_HEADER_BYTES as usize..good.len()).step_by(3) {
        let mut bad = good.clone();
        bad[at] ^= 1 << rng.u8(0..8);
        trawl::seen::fuzz_log(&bad);
        let path = tmp.path().join("bad.plog");
        std::fs::write(&path, &bad).unwrap();
        let r = LogRef {
            path,
            committed_bytes: good.len() as u64,
        };
        assert!(
            SeenSet::verify_log(&r).is_err(),
            "flip at {at} not detected"
        );
    }
    for _ in 0..500 {
        let mut bad = good.clone();
        let n = rng.usize(1..bad.len());
        bad.truncate(n);
        for _ in 0..rng.usize(1..8) {
            let i = rng.usize(0..bad.len());
            bad[i] = rng.u8(..);
        }
        trawl::seen::fuzz_log(&bad);
    }
}
