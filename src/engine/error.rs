//! Why a crawl could not start or finish: one variant per kind of failure, each naming
//! the file and the operation where there is one, so the CLI's one-line message says
//! what to look at and a library caller can match on the kind.

use std::io;
use std::path::PathBuf;

use crate::checkpoint::start::StartError;
use crate::checkpoint::CheckpointError;
use crate::crawllog::CrawlLogError;
use crate::frontier::{FrontierError, SegmentError};
use crate::net::FetcherError;
use crate::url::FilterBuildError;
use crate::warc::WarcError;

use super::observe::metrics::MetricsError;

/// Why a crawl could not start or finish.
#[derive(Debug, thiserror::Error)]
pub enum CrawlError {
    /// The configuration is unusable; the message names the setting.
    #[error("{0}")]
    Config(String),
    /// A fresh crawl was asked for in a directory that already holds one.
    #[error(
        "{} already holds a crawl; use --resume to continue it or choose another --out",
        out.display()
    )]
    OutputInUse { out: PathBuf },
    /// A resume found neither a checkpoint nor seeds to start again from.
    #[error(
        "no complete checkpoint in {} and no seeds to start again from",
        root.display()
    )]
    NothingToResume { root: PathBuf },
    /// A file operation of the engine itself failed (`op` says which: `create`,
    /// `empty`, `remove`, `copy`, `write`, `rename`...).
    #[error("cannot {op} {}: {source}", path.display())]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// Writing, reading or committing a checkpoint failed.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// The start file (`OUT/start.json`) could not be written or read.
    #[error(transparent)]
    Start(#[from] StartError),
    /// The presence bits or content fingerprints could not be created, restored or
    /// logged (the error names the file).
    #[error(transparent)]
    Seen(#[from] crate::seen::Error),
    /// The crawl log could not be repaired to the checkpoint's position.
    #[error(transparent)]
    CrawlLog(#[from] CrawlLogError),
    /// A WARC file could not be repaired or recovered.
    #[error(transparent)]
    Warc(#[from] WarcError),
    /// A shard's frontier could not be created or filled.
    #[error(transparent)]
    Frontier(#[from] FrontierError),
    /// A checkpoint's frontier segment could not be read.
    #[error("checkpoint frontier {}: {source}", path.display())]
    FrontierSegment {
        path: PathBuf,
        #[source]
        source: SegmentError,
    },
    /// The URL filter could not be built from the seeds and settings.
    /// The line blocks a checkpoint kept by reference are missing or damaged.
    #[error("checkpoint frontier line: {0}")]
    FrontierLine(#[from] crate::frontier::kept::KeptError),
    #[error(transparent)]
    Filter(#[from] FilterBuildError),
    /// A shard's event loop could not be created.
    #[error(transparent)]
    Fetcher(#[from] FetcherError),
    /// The metrics endpoint could not be served.
    #[error(transparent)]
    Metrics(#[from] MetricsError),
    /// The output thread (crawl log and WARC writer) failed; it reports a message
    /// naming the file.
    #[error("{0}")]
    Output(String),
    /// A shard thread could not be started.
    #[error("cannot start shard thread {index}: {source}")]
    ShardSpawn {
        index: usize,
        #[source]
        source: io::Error,
    },
    /// A shard ended before the coordinator could reach it.
    #[error("a shard stopped")]
    ShardGone,
    /// A shard could not write its part of a checkpoint.
    #[error("a shard could not write its frontier; checkpoint abandoned")]
    ShardCheckpoint,
}

impl CrawlError {
    /// A failed file operation of the engine, naming the operation and the file.
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io { op, path, source }
    }
}
