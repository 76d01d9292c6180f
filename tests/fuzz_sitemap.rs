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

/// A bounded, seeded mutation run over the corpus (byte flips, truncations, splices):
/// a little of what the fuzzer does, on every `cargo test`.
#[test]
fn seeded_mutations_never_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/sitemap");
    let mut seeds: Vec<Vec<u8>> = Vec::new();
    for entry in fs::read_dir(&dir).expect("corpus directory") {
        let path = entry.expect("entry").path();
        let data = fs::read(&path).expect("read corpus file");
        if data.len() < 64 * 1024 {
            seeds.push(data);
        }
    }
    let mut rng = fastrand::Rng::with_seed(14);
    for _ in 0..600 {
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
        trawl::sitemap::fuzz_parse(&data);
    }
}
