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
