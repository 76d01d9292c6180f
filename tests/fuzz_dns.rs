//! Replays the committed fuzz corpus of the DNS wire format through the entry point the
//! fuzzer calls (`fuzz/fuzz_targets/dns_answer.rs`), so every input that ever found a bug
//! (or covers a path) stays a regression test under `cargo test`.

use std::fs;
use std::path::Path;

/// Replays `fuzz/corpus/dns_answer`, and also `$TRAWL_FUZZ_EXTRA/dns_answer` when that
/// variable is set (a fuzzer's full working corpus, for a one-off check).
#[test]
fn dns_answer_corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/dns_answer");
    let count = replay_dir(&dir);
    assert!(count >= 10, "corpus dns_answer has only {count} files");
    if let Some(extra) = std::env::var_os("TRAWL_FUZZ_EXTRA") {
        replay_dir(&Path::new(&extra).join("dns_answer"));
    }
}

fn replay_dir(dir: &Path) -> usize {
    let mut count = 0;
    for entry in fs::read_dir(dir).expect("corpus directory") {
        let path = entry.expect("directory entry").path();
        let data = fs::read(&path).expect("corpus file");
        // A panic names the file that caused it.
        let result = std::panic::catch_unwind(|| trawl::net::dns::fuzz_answer(&data));
        assert!(result.is_ok(), "{} panicked", path.display());
        count += 1;
    }
    count
}

/// Every byte flip and cut of every corpus file: a cheap, deterministic stand-in for a
/// fuzzing run, so the parser's "no panic on any input" holds under plain `cargo test`.
#[test]
fn mutations_of_the_corpus_never_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/dns_answer");
    for entry in fs::read_dir(dir).expect("corpus directory") {
        let data = fs::read(entry.expect("directory entry").path()).expect("corpus file");
        for i in 0..data.len() {
            trawl::net::dns::fuzz_answer(&data[..i]);
            for flip in [0x01u8, 0x40, 0x80, 0xc0, 0xff] {
                let mut m = data.clone();
                m[i] ^= flip;
                trawl::net::dns::fuzz_answer(&m);
            }
        }
    }
}
