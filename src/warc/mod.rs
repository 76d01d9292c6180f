//! WARC/1.1 output: the records a crawl leaves behind, in `.warc.gz` files with one
//! gzip member per record, the layout every web-archive reader (warcio, pywb, the
//! Wayback Machine, Heritrix tools) expects and can seek into by offset.
//!
//! Layers, bottom up:
//! - [`digest`], [`date`], [`record`]: sans-IO building blocks (SHA-1 in base32,
//!   `WARC-Date`, one record's exact bytes);
//! - [`http`]: the bits of HTTP/1.1 needed to store a chunked response;
//! - [`capture`]: one fetch ([`Capture`]) becomes `request`, `response` or `revisit`,
//!   and `metadata` records;
//! - [`dedup`]: the bounded index of payload digests already written, which turns a
//!   duplicate payload into a `revisit` record;
//! - [`gzip`]: one gzip member per record, reusing the deflate state;
//! - [`compressed`]: captures compressed on the shard threads, so the writer only
//!   appends;
//! - [`writer`]: gzip members appended to size-rotated files, positions for checkpoints;
//! - [`mod@repair`]: cutting a torn last record after a crash.
//!
//! The crawl engine runs the writer on its output thread (`src/engine/output.rs`).
//!
//! The file format, digest choices and recovery are described in `docs/warc.md`.

// Every file below reads bytes from the network or the disk: no slice indexing and no
// panics (STYLE.md §5, issue 12). Tests are exempt through clippy.toml.
#![deny(clippy::indexing_slicing, clippy::expect_used, clippy::panic)]

pub mod capture;
pub mod compressed;
pub mod date;
pub mod dedup;
pub mod digest;
pub mod gzip;
pub mod http;
pub mod record;
pub mod repair;
pub mod writer;

pub use capture::{
    Capture, CaptureIds, CaptureMetadata, CaptureWritten, HttpResponse, Outlink, RevisitOf,
    TransferCodingStorage, WarcinfoFields,
};
pub use compressed::{CaptureCompressor, CompressedCapture, WarcinfoSlot};
pub use date::WarcDate;
pub use dedup::{DedupConfig, DedupStats};
pub use digest::Digest;
pub use record::{Record, RecordId, RecordType, Truncation};
pub use repair::{recover, repair, scan, scan_reader, RecoveredFile, RepairReport, ScanReport};
pub use writer::{WarcError, WarcPosition, WarcWriter, WarcWriterConfig, WriterSummary};

/// Fuzz entry point (`fuzz/fuzz_targets/warc_parse.rs`, replayed over the committed
/// corpus by `tests/fuzz_warc.rs`): runs every parser of this module that reads bytes
/// from the network or the disk over `data` and checks their invariants. Must never
/// panic.
pub fn fuzz_parse(data: &[u8]) {
    // Network side: a response head and a chunked body.
    let _ = http::is_chunked(data);
    if let Some(code) = http::status_code(data) {
        assert!((100..=999).contains(&code));
    }
    let renamed = http::rename_transfer_encoding(data);
    assert!(!http::has_transfer_encoding(&renamed));
    assert!(renamed.len() >= data.len());
    let decoded = http::dechunk(data, 1 << 20);
    assert!(decoded.payload.len() <= data.len());
    let capped = http::dechunk(data, 7);
    assert!(capped.payload.len() <= 7);
    assert!(decoded.payload.starts_with(&capped.payload));

    // Disk side: a damaged `.warc.gz`, and the texts read back from checkpoints.
    // (Crawl-log lines are read by the crawl log's own `fuzz_parse`, which the same
    // fuzz target calls.)
    if let Ok((valid, records)) = repair::scan_reader(data) {
        assert!(valid <= data.len() as u64);
        assert!(records <= valid);
        if let Some(prefix) = data.get(..valid as usize) {
            assert_eq!(repair::scan_reader(prefix).ok(), Some((valid, records)));
        }
    }
    let mut check = repair::RecordCheck::default();
    let _ = std::io::Write::write_all(&mut check, data);
    let _ = check.is_complete();
    let text = String::from_utf8_lossy(data);
    if let Ok(date) = text.parse::<WarcDate>() {
        assert_eq!(date.to_string().parse::<WarcDate>(), Ok(date));
    }
    if let Ok(digest) = text.parse::<Digest>() {
        assert_eq!(digest.to_string().parse::<Digest>(), Ok(digest));
    }
}
