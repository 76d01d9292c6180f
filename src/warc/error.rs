//! How writing or repairing WARC files fails ([`WarcError`]): one type for the writer,
//! the compressor (a record that cannot be built) and crash repair, in a module of its
//! own so that each of them names it without naming another.

use std::io;
use std::path::{Path, PathBuf};

/// A WARC writer failure. Every I/O error carries the file it concerns.
#[derive(Debug, thiserror::Error)]
pub enum WarcError {
    /// The output directory could not be created or listed.
    #[error("warc directory {}: cannot {op}", path.display())]
    Dir {
        /// `create` or `list`.
        op: &'static str,
        /// The directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// A file operation failed.
    #[error("warc file {}: cannot {op}", path.display())]
    File {
        /// `create`, `write`, `sync`, `rename`, `read`, `truncate`, `remove`.
        op: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// A record could not be built (a field value with a line break).
    #[error("warc record for {uri} cannot be written")]
    Record {
        /// The capture's URL.
        uri: String,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// A checkpoint offset lies past the end of the file (data the checkpoint counted
    /// on never reached the disk) or not on a record boundary.
    #[error("warc file {}: checkpoint offset {offset} does not fit a file of {len} bytes", path.display())]
    BadCheckpoint {
        /// The file.
        path: PathBuf,
        /// The offset recorded in the checkpoint.
        offset: u64,
        /// The file's length.
        len: u64,
    },
    /// The writer thread has stopped (after an earlier error, or shut down).
    #[error("warc writer thread has stopped")]
    Stopped,
}

impl WarcError {
    pub(crate) fn file<'p>(
        op: &'static str,
        path: &'p Path,
    ) -> impl FnOnce(io::Error) -> Self + 'p {
        move |source| Self::File {
            op,
            path: path.to_path_buf(),
            source,
        }
    }
}
