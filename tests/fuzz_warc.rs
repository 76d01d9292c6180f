//! Replays the committed fuzz corpus of the `warc_parse` target through the same
//! function the fuzzer calls, so every input that ever mattered stays a regression test.

use std::fs;
use std::path::Path;

#[test]
fn warc_parse_corpus_replays_without_panics() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/warc_parse");
    let mut count = 0;
    for entry in fs::read_dir(&dir).expect("corpus directory") {
        let path = entry.expect("corpus entry").path();
        let data = fs::read(&path).expect("corpus file");
        trawl::warc::fuzz_parse(&data);
        trawl::crawllog::fuzz_parse(&data);
        count += 1;
    }
    assert!(
        count >= 10,
        "corpus of {} holds only {count} files",
        dir.display()
    );
}
