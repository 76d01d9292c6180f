//! Replays the committed fuzz corpus of the `sitemap` target through the same entry
//! point the fuzzer calls, so every input that once found a bug stays fixed.

use std::fs;
use std::path::Path;

#[test]
fn replay_sitemap_corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/sitemap");
    let mut count = 0;
    for entry in fs::read_dir(&dir).expect("corpus directory") {
        let path = entry.expect("entry").path();
        if path.is_file() {
            let data = fs::read(&path).expect("read corpus file");
            trawl::sitemap::fuzz_parse(&data);
            count += 1;
        }
    }
    assert!(count >= 20, "corpus has only {count} files");
}
