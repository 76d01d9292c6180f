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
//! - [`gzip`]: one gzip member per record, reusing the deflate state;
//! - [`writer`]: gzip members appended to size-rotated files, positions for checkpoints;
//! - [`repair`]: cutting a torn last record after a crash;
//! - [`thread`]: the writer on its own thread behind a bounded channel.
//!
//! The file format, digest choices and recovery are described in `docs/warc.md`.

pub mod capture;
pub mod date;
pub mod digest;
pub mod gzip;
pub mod http;
pub mod record;
pub mod repair;
pub mod thread;
pub mod writer;

pub use capture::{
    Capture, CaptureIds, CaptureMetadata, CaptureWritten, HttpResponse, Outlink, RevisitOf,
    TransferCodingStorage, WarcinfoFields,
};
pub use date::WarcDate;
pub use digest::Digest;
pub use record::{Record, RecordId, RecordType, Truncation};
pub use repair::{recover, repair, scan, RecoveredFile, RepairReport, ScanReport};
pub use thread::{TrySubmitError, WarcSender, WarcWriterThread};
pub use writer::{WarcError, WarcPosition, WarcWriter, WarcWriterConfig, WriterSummary};
