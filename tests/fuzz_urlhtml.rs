//! Replays the committed fuzz corpora of the link extractor and the canonicalizer
//! through the same entry points the cargo-fuzz targets call.

use std::fs;
use std::path::Path;

fn replay(target: &str, entry: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut count = 0;
    for entry_path in fs::read_dir(&dir).expect("corpus directory") {
        let path = entry_path.expect("dir entry").path();
        let data = fs::read(&path).expect("corpus file");
        entry(&data);
        count += 1;
    }
    assert!(count >= 20, "{target}: only {count} corpus files");
}

#[test]
fn html_links_corpus() {
    replay("html_links", trawl::html::fuzz_extract);
}

#[test]
fn url_canon_corpus() {
    replay("url_canon", trawl::url::fuzz_canonicalize);
}
