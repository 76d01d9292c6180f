//! WARC/1.1 output: the records a crawl leaves behind, in `.warc.gz` files with one
//! gzip member per record, the layout every web-archive reader (warcio, pywb, the
//! Wayback Machine, Heritrix tools) expects and can seek into by offset.
//!
//! Layers, bottom up:
//! - [`record`]: one record's exact bytes, sans-IO; its digests (SHA-1 in base32),
//!   `WARC-Date` and truncation are shared with the crawl log and live in
//!   [`crate::provenance`] (`provenance::digest`, `provenance::date`);
//! - [`capture`]: one fetch ([`Capture`], built from the fetcher's typed values by
//!   [`Capture::from_outcome`]) becomes `request`, `response` or `revisit`, and
//!   `metadata` records; the response head and payload arrive parsed and de-chunked,
//!   so nothing here reads HTTP;
//! - [`dedup`]: the bounded index of payload digests already written, which turns a
//!   duplicate payload into a `revisit` record;
//! - [`gzip`]: one gzip member per record, reusing the deflate state;
//! - [`compressed`]: captures compressed on the shard threads, so the writer only
//!   appends;
//! - [`writer`]: gzip members appended to size-rotated files, positions for checkpoints;
//! - [`reader`]: the one WARC reader, sans-IO at its core: a record head from bytes,
//!   one record pushed in pieces, the records of a file (gzip members or plain);
//! - [`mod@repair`]: cutting a torn last record after a crash (with [`reader`]).
//!
//! The crawl engine runs the writer on its output thread (`src/engine/output.rs`).
//!
//! The file format, digest choices and recovery are described in `docs/warc.md`.

// Every file below reads bytes from the network or the disk: no slice indexing and no
// panics (STYLE.md §5). Tests are exempt through clippy.toml.
#![deny(clippy::indexing_slicing, clippy::expect_used, clippy::panic)]

pub mod capture;
pub mod compressed;
pub mod dedup;
mod error;
pub mod gzip;
pub mod igzip;
pub mod reader;
pub mod record;
pub mod repair;
pub mod writer;

pub use capture::{
    Capture, CaptureIds, CaptureMetadata, CaptureWritten, HttpResponse, Outlink, RevisitOf,
    RevisitProfile, WarcinfoFields, OUTLINKS_UNKNOWN, RENAMED_TRANSFER_ENCODING,
};
pub use compressed::{CaptureCompressor, CompressedCapture, WarcinfoSlot};
pub use dedup::{DedupConfig, DedupStats};
pub use error::WarcError;
pub use reader::{Framing, ReadError, RecordHead, Records};
pub use record::{Record, RecordId, RecordType};
pub use repair::{recover, repair, scan, scan_reader, RecoveredFile, RepairReport, ScanReport};
pub use writer::{WarcPosition, WarcWriter, WarcWriterConfig, WriterSummary};

/// Fuzz entry point (`fuzz/fuzz_targets/warc_parse.rs`, replayed over the committed
/// corpus by `tests/fuzz_warc.rs`): runs every parser of this module that reads bytes
/// from the network or the disk over `data` and checks their invariants. Must never
/// panic.
pub fn fuzz_parse(data: &[u8]) {
    // Network side: a response head, as the fetcher's reader parses it, stored with its
    // `Transfer-Encoding` fields renamed. The stored head must parse to the same fields
    // but for those names, and hold no `Transfer-Encoding` field any more.
    if let Ok(head) = crate::http::ResponseHead::parse(data) {
        let response = HttpResponse::new(&head, data.into());
        let stored = response.stored_head();
        let renamed = response.transfer_encoding_names.len();
        let grown = RENAMED_TRANSFER_ENCODING.len() - "transfer-encoding".len();
        assert_eq!(stored.len(), data.len() + renamed * grown);
        if let Ok(again) = crate::http::ResponseHead::parse(&stored) {
            assert!(again.header("transfer-encoding").is_none());
            assert_eq!(again.headers.len(), head.headers.len());
            assert_eq!(again.status, head.status);
        }
    }

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
    let mut check = reader::RecordSink::new(0);
    check.push(data);
    let _ = check.is_complete();
    let text = String::from_utf8_lossy(data);
    if let Ok(date) = text.parse::<crate::provenance::WarcDate>() {
        assert_eq!(
            date.to_string().parse::<crate::provenance::WarcDate>(),
            Ok(date)
        );
    }
    if let Ok(digest) = text.parse::<crate::provenance::Digest>() {
        assert_eq!(
            digest.to_string().parse::<crate::provenance::Digest>(),
            Ok(digest)
        );
    }
}
