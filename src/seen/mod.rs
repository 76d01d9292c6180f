//! Presence bits: the crawl's URL-seen set, and the content-fingerprint set.
//!
//! A [`SeenSet`] remembers billions of keys in fixed memory at the price of a small,
//! known false-positive rate (a new URL mistaken for a seen one is never crawled). It is
//! a blocked Bloom filter in a memory-mapped file: every key touches one 64-byte block,
//! so a test-and-set costs one cache miss, and bits are set with atomic word operations
//! so every shard thread can use it at once without locks. The set reports what the
//! price has been so far ([`Stats::expected_lost`]) and can be snapshotted atomically
//! for checkpoints.
//!
//! Layout, hashing, the false-positive model, sizing defaults and the snapshot
//! consistency model are in `docs/seen.md`; why the mapping is sound in `docs/safety.md`.

mod dirty;
mod error;
mod fingerprints;
mod hash;
mod header;
mod log;
pub mod model;
mod set;

pub use error::{Error, ErrorKind};
pub use fingerprints::ContentSeen;
pub use hash::{DEFAULT_SEED, HASH_ALGORITHM_XXH3_128};
pub use header::{Purpose, FORMAT_VERSION, HEADER_BYTES, MAGIC};
pub use log::{LogSummary, RecordCounters, LOG_HEADER_BYTES, LOG_MAGIC, LOG_VERSION, PAUSE_ENV};
pub use model::Sizing;
pub use set::{Backing, LogRef, LogWrite, PendingLog, SeenConfig, SeenSet, SnapshotInfo, Stats};

/// Fuzz entry point: decodes `data` as a seen-set header. Must never panic; a header
/// that decodes must re-encode to bytes that decode to the same header.
pub fn fuzz_header(data: &[u8]) {
    if let Ok(h) = header::Header::decode(data) {
        let again = header::Header::decode(&h.encode());
        assert_eq!(again, Ok(h), "header round trip");
    }
}

/// Fuzz entry point: reads `data` as a presence log committed to its whole length.
/// Must never panic; a log that reads must report runs only inside the set.
pub fn fuzz_log(data: &[u8]) {
    let mut blocks = 0u64;
    let path = std::path::Path::new("fuzz.plog");
    if let Ok(s) = log::read_log_from(data, data.len() as u64, path, |_, b| {
        blocks += b.len() as u64 / model::BLOCK_BYTES;
    }) {
        assert_eq!(blocks, s.blocks_written, "runs handed over vs counted");
        assert!(s.base_bytes <= s.committed_bytes);
    }
}
