//! The error of a file operation: which operation, on which file, and the I/O cause.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// A file operation, named in [`DiskError`]'s message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Create,
    Open,
    Read,
    Write,
    Fsync,
    Rename,
}

impl Op {
    /// The verb, as error messages say it (`cannot fsync ...`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::Open => "open",
            Self::Read => "read",
            Self::Write => "write",
            Self::Fsync => "fsync",
            Self::Rename => "rename",
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A file operation that failed: `cannot fsync out/checkpoint` with the `io::Error` as
/// its source.
#[derive(Debug, thiserror::Error)]
#[error("cannot {op} {}", path.display())]
pub struct DiskError {
    pub op: Op,
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

impl DiskError {
    /// A closure for `map_err` that names `op` and `path`.
    pub fn at(op: Op, path: &std::path::Path) -> impl FnOnce(io::Error) -> Self + '_ {
        move |source| Self {
            op,
            path: path.to_path_buf(),
            source,
        }
    }
}

impl From<DiskError> for io::Error {
    /// Keeps the `io::Error`'s kind and puts the operation and file in its message.
    fn from(e: DiskError) -> Self {
        io::Error::new(e.source.kind(), format!("{e}: {}", e.source))
    }
}
