//! The files synthweb writes and the referee reads: request log, hosts file, seeds file
//! and manifest (the contract is `SYNTHWEB-FORMATS.md`, restated in `docs/synthweb.md`).
//!
//! Every format has a reader that returns a typed [`FormatError`] carrying the 1-based
//! line number on bad input (never a panic), and a writer that produces exactly what the
//! reader accepts, so `read(write(x)) == x` for every value the writer takes.

mod error;
mod hosts_file;
mod line_reader;
mod log;
mod manifest_file;
mod seeds_file;

pub use error::{FileKind, FormatError};
pub use hosts_file::{read_hosts, write_hosts, HostEntry};
pub use log::{read_log, write_log_line, LogLine, LogReader, Scheme};
pub use manifest_file::{
    read_manifest, write_manifest, Manifest, ManifestHeader, Robots4xx, Tag, ROBOTS_FILES_PARAM,
    SITEMAP_FILES_PARAM,
};
pub use seeds_file::{read_seeds, write_seeds};

/// Longest line any reader accepts, in bytes. A request log line holds a request target
/// and a handful of headers; a hostile client can send long ones, so the server is
/// expected to cap what it logs well below this (the referee refuses longer lines rather
/// than buffering without bound).
pub const MAX_LINE_BYTES: usize = 1 << 20;

#[cfg(test)]
mod tests;
