//! The one error type of the seen set: an opaque struct with a [`ErrorKind`], the path
//! it concerns, and the I/O cause (if any) in `source()`.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// What went wrong, for callers that branch on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An I/O operation failed; the `io::Error` is the source.
    Io,
    /// The file does not start with the seen-set magic bytes: not one of our files.
    BadMagic,
    /// The file is a seen set in a format version this build does not read.
    UnsupportedVersion,
    /// The header checksum does not match: the header is damaged.
    HeaderChecksum,
    /// The header is intact but names parameters this build cannot use (block size,
    /// hash algorithm, k, sizes that do not add up).
    BadParameters,
    /// The file is shorter than its header says.
    Truncated,
    /// The file is longer than its header says.
    TrailingBytes,
    /// The bit region's checksum does not match: the bits are damaged.
    BitsChecksum,
    /// The file was open for writing and never sealed (a crash, or a drop without
    /// `close`): its bits may be ahead of anything else on disk, so it is not trusted.
    Unsealed,
    /// Another process (or another `SeenSet` in this one) holds the file's lock.
    Locked,
    /// The file holds a different kind of set (URLs vs content fingerprints).
    WrongPurpose,
    /// `create` was asked for an impossible size (capacity 0, fp not in (0, 1), or more
    /// than 2^40 blocks).
    InvalidSize,
    /// A presence log (incremental checkpoint) is damaged within its committed length:
    /// a record's checksum, kind, length or runs are wrong. The detail names the byte.
    LogDamaged,
}

/// An error from creating, opening, validating or snapshotting a seen set.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    path: PathBuf,
    detail: Option<String>,
    source: Option<io::Error>,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, path: &Path) -> Self {
        Self {
            kind,
            path: path.to_path_buf(),
            detail: None,
            source: None,
        }
    }

    pub(crate) fn io(path: &Path, source: io::Error) -> Self {
        Self {
            kind: ErrorKind::Io,
            path: path.to_path_buf(),
            detail: None,
            source: Some(source),
        }
    }

    pub(crate) fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The file concerned.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            ErrorKind::Io => "i/o error on seen set",
            ErrorKind::BadMagic => "not a seen-set file (bad magic)",
            ErrorKind::UnsupportedVersion => "unsupported seen-set format version",
            ErrorKind::HeaderChecksum => "seen-set header checksum mismatch",
            ErrorKind::BadParameters => "seen-set header has unusable parameters",
            ErrorKind::Truncated => "seen-set file is truncated",
            ErrorKind::TrailingBytes => "seen-set file is longer than its header says",
            ErrorKind::BitsChecksum => "seen-set bit region checksum mismatch",
            ErrorKind::Unsealed => "seen-set file was not closed cleanly",
            ErrorKind::Locked => "seen-set file is locked by another user",
            ErrorKind::WrongPurpose => "seen-set file holds a different kind of set",
            ErrorKind::InvalidSize => "invalid seen-set size",
            ErrorKind::LogDamaged => "presence log is damaged",
        };
        write!(f, "{what}: {}", self.path.display())?;
        if let Some(detail) = &self.detail {
            write!(f, " ({detail})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}
