//! On-disk records: the pieces every trawl file format is built from, in one place so
//! each format reads, checks and replaces its files the same way.
//!
//! - [`Format`]: a file header of 8 magic bytes and a format version (u32 LE), checked
//!   before anything else is read, so a file of another kind or another version is a
//!   clear error, never decoded as garbage;
//! - [`put_varint`] / [`take_varint`]: LEB128 integers, with truncation and overflow as
//!   errors;
//! - [`write_record`] / [`RecordReader`]: records framed as
//!   `varint payload_len | crc32(payload) u32 LE | payload`, so a torn tail or a flipped
//!   byte is found, with its byte offset;
//! - [`crc32`]: the checksum of those records (CRC-32, IEEE);
//! - [`read_full`], [`sync_dir`], [`replace_atomic`]: the I/O steps of a durable write
//!   (write a temporary file, fsync it, rename it over the old one, fsync the
//!   directory); [`keep_as`]: an append-only log given a checkpoint's second name (a
//!   hard link, or a copy), as the robots disk tier and the frontier's line are kept.
//!
//! Users: frontier segments (`frontier/segment.rs`), robots dumps
//! (`robots/persist.rs`), presence-bit headers and logs (`seen/header.rs`,
//! `seen/log.rs`), checkpoint tallies (`checkpoint/tallies.rs`), the checkpoint's
//! `CURRENT` pointer and `start.json` (`checkpoint/`), and the WARC writer's directory
//! fsync. The formats themselves are in `docs/checkpoints.md` and `docs/seen.md`.
//!
//! Everything here reads bytes that may be damaged: no panics, no indexing.

#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

mod error;
mod file;
mod header;
mod record;
mod varint;

pub use error::{DiskError, Op};
pub use file::{
    keep_as, read_full, replace_atomic, sync_dir, sync_parent, temp_path, write_synced,
};
pub use header::{u32_at, u64_at, Format, HeaderError, HEADER_BYTES};
pub use record::{write_record, RecordError, RecordReader, MAX_FRAME_HEAD_BYTES};
pub use varint::{put_bytes, put_varint, take_bytes, take_varint, VarintError, MAX_VARINT_BYTES};

/// The CRC-32 (IEEE) of `bytes`: the checksum of every framed record.
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// Fuzz entry point (`fuzz/fuzz_targets/disk_records.rs`; `cargo test` replays the
/// corpus in `tests/fuzz_disk.rs`): reads `data` as varints, as a file header and as a
/// run of framed records. Must never panic; every varint that decodes re-encodes to
/// the same value in no more bytes, and every record that reads has a payload whose
/// checksum matches, within the input.
pub fn fuzz_records(data: &[u8]) {
    let mut input = data;
    while !input.is_empty() {
        let before = input.len();
        match take_varint(&mut input) {
            Ok(v) => {
                let used = before - input.len();
                let mut again = Vec::new();
                put_varint(&mut again, v);
                assert!(again.len() <= used, "varint re-encodes longer");
                assert_eq!(
                    take_varint(&mut again.as_slice()),
                    Ok(v),
                    "varint round trip"
                );
            }
            Err(_) => {
                assert_eq!(input.len(), before, "a failed varint consumed input");
                input = input.get(1..).unwrap_or_default();
            }
        }
    }
    const FUZZ: Format = Format::new(*b"TRWLFUZZ", 1, 1 << 16);
    let _ = FUZZ.check(data);
    let mut reader = RecordReader::headless(data, 0, FUZZ.max_payload_bytes);
    let mut payload = Vec::new();
    loop {
        match reader.next_record(&mut payload) {
            Ok(Some(at)) => {
                assert!(at < reader.offset(), "record offsets advance");
                assert!(reader.offset() <= data.len() as u64, "read past the input");
                assert!(payload.len() <= FUZZ.max_payload_bytes);
            }
            Ok(None) => break,
            Err(RecordError::Checksum { .. }) => continue,
            Err(_) => break,
        }
    }
}

#[cfg(test)]
mod tests;
