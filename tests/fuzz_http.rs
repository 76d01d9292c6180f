//! Replays the committed fuzz corpora of the HTTP layer through the same entry points
//! the fuzzers call, so every input that ever found a bug (or covers a path) stays a
//! regression test under `cargo test`.

mod fuzz_support;

use std::fs;
use std::path::Path;

/// Replays `fuzz/corpus/<target>`, and also `$TRAWL_FUZZ_EXTRA/<target>` when that
/// variable is set (a fuzzer's full working corpus, for a one-off check).
fn replay(target: &str, run: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let count = replay_dir(&dir, run);
    assert!(count >= 10, "corpus {target} has only {count} files");
    if let Some(extra) = std::env::var_os("TRAWL_FUZZ_EXTRA") {
        replay_dir(&Path::new(&extra).join(target), run);
    }
}

fn replay_dir(dir: &Path, run: fn(&[u8])) -> usize {
    let mut count = 0;
    for entry in fs::read_dir(dir).expect("corpus directory") {
        let path = entry.expect("directory entry").path();
        let data = fs::read(&path).expect("corpus file");
        // A panic names the file that caused it.
        let result = std::panic::catch_unwind(|| run(&data));
        assert!(result.is_ok(), "{} panicked", path.display());
        count += 1;
    }
    count
}

#[test]
fn http_response_corpus() {
    replay("http_response", trawl::http::fuzz_response);
}

#[test]
fn http_chunked_corpus() {
    replay("http_chunked", trawl::http::fuzz_chunked);
}

#[test]
fn http_request_corpus() {
    fuzz_support::replay("http_request", 20, trawl::http::fuzz_request);
}

/// A bounded, seeded mutation run over the request corpus on every `cargo test`.
#[test]
fn http_request_mutations() {
    fuzz_support::mutate("http_request", 22, 5_000, trawl::http::fuzz_request);
}
