//! `OUT/start.json`: the seeds and settings a crawl started with, written before the
//! first fetch.
//!
//! A checkpoint holds everything a resume needs, but the first one is only taken
//! `checkpoint_interval` after the start (300 s by default). A crawl killed inside that
//! window used to leave nothing a `--resume` could start again from unless the operator
//! typed every seed and flag again. The start file closes the window: it is written
//! atomically (temporary file, fsync, rename, fsync of the directory) before any fetch,
//! so from the crawl's first moment `trawl crawl --resume OUT` can either continue from
//! the last complete checkpoint or, when there is none, start again from these seeds
//! with these settings.
//!
//! The file is JSON with a format version; a file that does not parse, or has another
//! version, is an error (never a panic), and a missing file is `Ok(None)` (output
//! directories of older builds have none).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::RecordedConfig;

/// Name of the start file in the output directory.
pub const START_FILE: &str = "start.json";

/// Format version of `start.json`.
pub const START_VERSION: u32 = 1;

/// What `start.json` holds.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct StartRecord {
    pub version: u32,
    /// Unix seconds when the crawl (or the last resume that rewrote the file) started.
    pub unix_time: u64,
    /// The seed URLs, as given (the usable ones: the CLI drops lines that are not URLs).
    pub seeds: Vec<String>,
    /// The command-line flags that shaped the crawl, in `--flag=value` form with file
    /// paths made absolute, without the seeds and the output directory; `trawl crawl
    /// --resume` applies them again before its own flags (which win). Empty for crawls
    /// started through the library API, whose settings the embedder passes again.
    #[serde(default)]
    pub args: Vec<String>,
    /// The settings in readable form, for `trawl inspect` and operators.
    pub config: RecordedConfig,
    /// The trawl version that wrote the file.
    #[serde(default)]
    pub trawl_version: String,
}

/// Why the start file could not be written or read.
#[derive(Debug)]
pub enum StartError {
    Io {
        op: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// The file does not parse or has an unknown version.
    Damaged { path: PathBuf, detail: String },
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Io { op, path, .. } => write!(f, "cannot {op} {}", path.display()),
            Self::Damaged { path, detail } => {
                write!(f, "start file {} is damaged: {detail}", path.display())
            }
        }
    }
}

impl std::error::Error for StartError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            Self::Damaged { .. } => None,
        }
    }
}

impl From<crate::disk::DiskError> for StartError {
    fn from(e: crate::disk::DiskError) -> Self {
        Self::Io {
            op: e.op.as_str(),
            path: e.path,
            source: e.source,
        }
    }
}

fn io_err<'p>(op: &'static str, path: &'p Path) -> impl FnOnce(io::Error) -> StartError + 'p {
    move |source| StartError::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}

/// The path of the start file of output directory `out`.
pub fn start_path(out: &Path) -> PathBuf {
    out.join(START_FILE)
}

/// Writes `out/start.json` atomically: `start.json.tmp`, fsync, rename over
/// `start.json`, fsync `out`. A crash at any point leaves either the old file whole or
/// the new one whole.
///
/// # Errors
/// Any I/O error (the crawl must not start without it: a kill before the first
/// checkpoint could not be resumed).
pub fn write(out: &Path, record: &StartRecord) -> Result<(), StartError> {
    let path = start_path(out);
    let json = serde_json::to_vec_pretty(record).map_err(|e| StartError::Damaged {
        path: path.clone(),
        detail: e.to_string(),
    })?;
    crate::disk::replace_atomic(&path, |w| w.write_all(&json))?;
    Ok(())
}

/// Reads `out/start.json`; `Ok(None)` when there is none.
///
/// # Errors
/// An unreadable file, JSON that does not parse, or an unknown version.
pub fn read(out: &Path) -> Result<Option<StartRecord>, StartError> {
    let path = start_path(out);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err("read", &path)(e)),
    };
    let record: StartRecord = serde_json::from_slice(&bytes).map_err(|e| StartError::Damaged {
        path: path.clone(),
        detail: e.to_string(),
    })?;
    if record.version != START_VERSION {
        return Err(StartError::Damaged {
            path,
            detail: format!("version {} (expected {START_VERSION})", record.version),
        });
    }
    Ok(Some(record))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(seeds: &[&str]) -> StartRecord {
        StartRecord {
            version: START_VERSION,
            unix_time: 7,
            seeds: seeds.iter().map(|s| (*s).to_owned()).collect(),
            args: vec!["--delay-ms=5".into(), "--allow-private-addresses".into()],
            config: RecordedConfig {
                shards: 2,
                seen_capacity: 10_000_000,
                ..RecordedConfig::default()
            },
            trawl_version: crate::VERSION.to_owned(),
        }
    }

    #[test]
    fn written_record_reads_back_and_replaces_the_old_one() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read(dir.path()).unwrap().is_none());
        write(dir.path(), &record(&["http://a.test/"])).unwrap();
        write(dir.path(), &record(&["http://b.test/"])).unwrap();
        let back = read(dir.path()).unwrap().unwrap();
        assert_eq!(back, record(&["http://b.test/"]));
        assert!(!dir.path().join("start.json.tmp").exists());
    }

    #[test]
    fn damaged_or_foreign_files_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = start_path(dir.path());
        let mut json = serde_json::to_vec(&record(&["http://a.test/"])).unwrap();
        json.truncate(json.len() / 2);
        fs::write(&path, &json).unwrap();
        assert!(matches!(read(dir.path()), Err(StartError::Damaged { .. })));
        let mut other = record(&["http://a.test/"]);
        other.version = 99;
        fs::write(&path, serde_json::to_vec(&other).unwrap()).unwrap();
        let err = read(dir.path()).unwrap_err();
        assert!(err.to_string().contains("version 99"), "{err}");
    }
}
