//! Replays the committed fuzz corpora of the proxy parsers (`trawl::net::egress`)
//! through the entry points the fuzzers call (`fuzz/fuzz_targets/proxy_*.rs`,
//! `socks5_reply.rs`), so every input that ever found a bug (or covers a path) stays a
//! regression test under `cargo test`.

use std::fs;
use std::path::Path;

use trawl::net::egress;

/// A fuzz entry point.
type Entry = fn(&[u8]);

/// Each target: its corpus directory under `fuzz/corpus/` and its entry point.
const TARGETS: &[(&str, Entry)] = &[
    ("proxy_url", egress::fuzz_url),
    ("proxy_rules", egress::fuzz_rules),
    ("proxy_connect_reply", egress::fuzz_connect_reply),
    ("socks5_reply", egress::fuzz_socks5_reply),
    ("proxy_status", egress::fuzz_status),
];

/// Replays every corpus, and also `$TRAWL_FUZZ_EXTRA/<target>` when that variable is set
/// (a fuzzer's full working corpus, for a one-off check).
#[test]
fn corpora_replay() {
    for &(name, entry) in TARGETS {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fuzz/corpus")
            .join(name);
        let count = replay_dir(&dir, entry);
        assert!(count >= 10, "corpus {name} has only {count} files");
        if let Some(extra) = std::env::var_os("TRAWL_FUZZ_EXTRA") {
            let extra = Path::new(&extra).join(name);
            if extra.is_dir() {
                replay_dir(&extra, entry);
            }
        }
    }
}

fn replay_dir(dir: &Path, entry: Entry) -> usize {
    let mut count = 0;
    for file in fs::read_dir(dir).expect("corpus directory") {
        let path = file.expect("directory entry").path();
        let data = fs::read(&path).expect("corpus file");
        // A panic names the file that caused it.
        let result = std::panic::catch_unwind(|| entry(&data));
        assert!(result.is_ok(), "{} panicked", path.display());
        count += 1;
    }
    count
}

/// Every byte flip and cut of every corpus file: a cheap, deterministic stand-in for a
/// fuzzing run, so "no panic on any input" holds under plain `cargo test`.
#[test]
fn mutations_of_the_corpora_never_panic() {
    for &(name, entry) in TARGETS {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fuzz/corpus")
            .join(name);
        for file in fs::read_dir(dir).expect("corpus directory") {
            let data = fs::read(file.expect("directory entry").path()).expect("corpus file");
            for i in 0..data.len() {
                entry(&data[..i]);
                for flip in [0x01u8, 0x20, 0x40, 0x80, 0xff] {
                    let mut m = data.clone();
                    m[i] ^= flip;
                    entry(&m);
                }
            }
        }
    }
}
