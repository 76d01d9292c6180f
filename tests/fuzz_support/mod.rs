//! Corpus replay shared by the `fuzz_*` tests: every committed input goes through the
//! fuzz entry point, then a bounded, seeded mutation run (byte flips, truncations,
//! splices) does a little of what the fuzzer does, on every `cargo test`.

use std::fs;
use std::path::{Path, PathBuf};

fn corpus_files(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    fs::read_dir(&dir)
        .expect("corpus directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_file())
        .collect()
}

/// Feeds every file of `fuzz/corpus/TARGET` to `entry`; at least `min_files` exist.
pub fn replay(target: &str, min_files: usize, entry: impl Fn(&[u8])) {
    let files = corpus_files(target);
    for path in &files {
        entry(&fs::read(path).expect("read corpus file"));
    }
    assert!(
        files.len() >= min_files,
        "corpus {target} has only {} files",
        files.len()
    );
}

/// `rounds` seeded mutations of the corpus files under 64 KiB, each fed to `entry`.
pub fn mutate(target: &str, seed: u64, rounds: usize, entry: impl Fn(&[u8])) {
    let seeds: Vec<Vec<u8>> = corpus_files(target)
        .iter()
        .map(|p| fs::read(p).expect("read corpus file"))
        .filter(|d| d.len() < 64 * 1024)
        .collect();
    assert!(!seeds.is_empty(), "corpus {target} has no small file");
    let mut rng = fastrand::Rng::with_seed(seed);
    for _ in 0..rounds {
        let mut data = seeds[rng.usize(..seeds.len())].clone();
        for _ in 0..rng.usize(1..4) {
            if data.is_empty() {
                break;
            }
            let at = rng.usize(..data.len());
            match rng.u8(..3) {
                0 => data[at] ^= 1 << rng.u8(..8),
                1 => data.truncate(at),
                _ => {
                    let other = &seeds[rng.usize(..seeds.len())];
                    let from = rng.usize(..=other.len());
                    data.splice(at..at, other[from..].iter().copied().take(64));
                }
            }
        }
        entry(&data);
    }
}
