//! What a reader reports on bad input: the file kind, the 1-based line, the fault.

use std::fmt;
use std::io;

/// Which file a [`FormatError`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// Request log.
    Log,
    /// Hosts file.
    Hosts,
    /// Seeds file.
    Seeds,
    /// Manifest.
    Manifest,
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FileKind::Log => "request log",
            FileKind::Hosts => "hosts file",
            FileKind::Seeds => "seeds file",
            FileKind::Manifest => "manifest",
        })
    }
}

/// Why a synthweb file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// Reading failed.
    #[error("{file}: read failed")]
    Io {
        /// The file being read.
        file: FileKind,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A request-log line is not a valid record.
    #[error("request log line {line}: invalid record")]
    Json {
        /// 1-based line number.
        line: u64,
        /// What serde_json found.
        #[source]
        source: serde_json::Error,
    },
    /// A line of a text format is malformed.
    #[error("{file} line {line}: {reason}")]
    Syntax {
        /// The file being read.
        file: FileKind,
        /// 1-based line number.
        line: u64,
        /// What is wrong.
        reason: &'static str,
    },
    /// A line is longer than [`MAX_LINE_BYTES`](super::MAX_LINE_BYTES) or not UTF-8.
    #[error("{file} line {line}: line too long or not UTF-8")]
    BadLine {
        /// The file being read.
        file: FileKind,
        /// 1-based line number.
        line: u64,
    },
}
