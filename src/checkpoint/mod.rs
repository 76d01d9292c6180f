//! Checkpoint files: a consistent cut of a crawl, replaced atomically.
//!
//! Layout under `OUT/checkpoint/`:
//! ```text
//! CURRENT                  the name of the last complete checkpoint, e.g. "cp-000007"
//! cp-000007/manifest.json  counters, output positions, shard count, time
//! cp-000007/seen.bits      presence-bit snapshot (checksummed, see src/seen/)
//! cp-000007/fingerprints.bits
//! cp-000007/frontier-NNNN.seg  every queued URL of shard NNNN (segment format)
//! cp-000007/tallies-NNNN.bin   shard NNNN's per-host tallies (`tallies.rs`)
//! cp-000007/robots-NNNN.bin    shard NNNN's robots cache (`robots/persist.rs`)
//! cp-000007/...                files other modules write into the cut (a farm's
//!                              settings and outbox, the operator's rules)
//! ```
//! The manifest lists every file the checkpoint holds, with its kind ([`FileKind`],
//! [`list_files`]), so a reader learns them from it rather than from the writers'
//! constants; a manifest of an older build has no list.
//! Steps (each numbered step is durable before the next starts):
//! 1. write everything into `tmp-000007/`, fsync each file;
//! 2. write `manifest.json` last, fsync it, fsync the directory;
//! 3. rename `tmp-000007` to `cp-000007`, fsync `checkpoint/`;
//! 4. write `CURRENT.tmp`, fsync, rename over `CURRENT`, fsync `checkpoint/`;
//! 5. delete older `cp-*` and stray `tmp-*` directories.
//!
//! A crash before step 4 leaves `CURRENT` naming the previous checkpoint, which is
//! untouched; a crash after it leaves the new one whole. A loader never trusts a
//! directory that `CURRENT` does not name.
//!
//! `crate::inspect` reads a checkpoint without changing it and verifies every file of it
//! (what `trawl inspect` prints); see `docs/checkpoints.md`.
//!
//! Every file here comes from disk and may be damaged: no indexing, no panics.

#![deny(clippy::indexing_slicing, clippy::expect_used, clippy::panic)]

pub mod start;
pub mod tallies;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::disk::{self, DiskError};

use serde::{Deserialize, Serialize};

/// Format version of `manifest.json`.
pub const MANIFEST_VERSION: u32 = 1;

/// What a checkpoint records besides its data files.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    pub version: u32,
    pub epoch: u64,
    /// Unix seconds when the cut was taken.
    pub unix_time: u64,
    pub shards: usize,
    pub seeds: Vec<String>,
    pub counters: Counters,
    pub positions: Positions,
    /// URLs in the frontier dump files (queued plus in flight at the cut).
    pub queued_urls: u64,
    /// The settings the crawl ran with (absent in checkpoints of older builds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<RecordedConfig>,
    /// The presence logs of this checkpoint and their committed lengths (absent in
    /// checkpoints of builds that wrote whole `seen.bits` snapshots).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presence: Option<PresenceLogs>,
    /// Every file of the checkpoint but the manifest, with its kind (absent in
    /// checkpoints of older builds: a reader falls back to the names it knows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<CheckpointFile>>,
}

/// File name of the manifest in a checkpoint directory.
pub const MANIFEST_FILE: &str = "manifest.json";

/// More shards than any machine has cores: a manifest claiming more is damaged, and
/// a reader looks for only this many shards' files (so a garbled count cannot make a
/// check run for ever).
pub const MAX_SHARDS: usize = 1 << 16;

/// What a file of a checkpoint holds, as its manifest records it.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum FileKind {
    /// The URL presence log ([`SEEN_LOG`]).
    SeenLog,
    /// The content-fingerprint presence log ([`FINGERPRINTS_LOG`]).
    FingerprintsLog,
    /// A whole presence-bit snapshot of the URLs (`seen.bits`, older builds).
    SeenBits,
    /// A whole presence-bit snapshot of the fingerprints (`fingerprints.bits`).
    FingerprintBits,
    /// One shard's queued URLs (`frontier-NNNN.seg`).
    Frontier,
    /// One shard's line blocks kept by reference (`frontier-NNNN.line`, the list) and
    /// the frontier log files holding them (`frontier-NNNN-line-FFFFFFFF.log`, hard
    /// links; `frontier::kept`).
    FrontierLine,
    FrontierLineBlocks,
    /// One shard's per-host tallies (`tallies-NNNN.bin`, `.tsv` of older builds).
    Tallies,
    /// One shard's robots cache (`robots-NNNN.bin`).
    Robots,
    /// A log file of one shard's robots disk tier, kept with the checkpoint
    /// (`robots-NNNN-tier-NNNNNN.log`, a hard link; the robots file names it).
    RobotsTier,
    /// A farm node's settings and counters.
    FarmSettings,
    /// The links a farm node had not sent at the cut (a CRC-framed record file).
    FarmOutbox,
    /// The operator's blocks and delays (the control API's rules).
    OperatorRules,
}

impl FileKind {
    /// The kind of one of the checkpoint's own files (the presence logs and snapshots,
    /// the per-shard files of shards below `shards`), from its name; `None` for any
    /// other name.
    pub fn of_own_file(name: &str, shards: usize) -> Option<Self> {
        let shard = |prefix: &str, suffix: &str| {
            shard_index(name, prefix, suffix).is_some_and(|i| i < shards)
        };
        match name {
            SEEN_LOG => Some(Self::SeenLog),
            FINGERPRINTS_LOG => Some(Self::FingerprintsLog),
            SEEN_BITS => Some(Self::SeenBits),
            FINGERPRINT_BITS => Some(Self::FingerprintBits),
            _ if shard("frontier-", ".seg") => Some(Self::Frontier),
            _ if shard("frontier-", ".line") => Some(Self::FrontierLine),
            _ if kept_shard(name, "frontier-", "-line-").is_some_and(|i| i < shards) => {
                Some(Self::FrontierLineBlocks)
            }
            _ if shard("tallies-", ".bin") || shard("tallies-", ".tsv") => Some(Self::Tallies),
            _ if shard("robots-", ".bin") => Some(Self::Robots),
            _ if kept_shard(name, "robots-", "-tier-").is_some_and(|i| i < shards) => {
                Some(Self::RobotsTier)
            }
            _ => None,
        }
    }
}

/// One file of a checkpoint, as its manifest lists it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct CheckpointFile {
    /// The file's name in the `cp-NNNNNN` directory.
    pub name: String,
    pub kind: FileKind,
}

/// The files of checkpoint directory `dir` (being written, before its manifest), each
/// with its kind: the checkpoint's own ([`FileKind::of_own_file`]) and those `others`
/// name (files other modules wrote into the cut: a farm's, the operator's rules), in
/// name order. A file of neither is left out, so a reader reports it as foreign.
///
/// # Errors
/// The directory cannot be listed.
pub fn list_files(
    dir: &Path,
    shards: usize,
    others: &[(&str, FileKind)],
) -> Result<Vec<CheckpointFile>, CheckpointError> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).map_err(io_err("list", dir))?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = FileKind::of_own_file(&name, shards).or_else(|| {
            others
                .iter()
                .find(|(other, _)| *other == name)
                .map(|(_, kind)| *kind)
        });
        if let Some(kind) = kind {
            files.push(CheckpointFile { name, kind });
        }
    }
    files.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(files)
}

/// `NNNN` of a log file a checkpoint keeps by reference, `{prefix}NNNN{infix}DDDD.log`:
/// a robots disk tier log (`robots-NNNN-tier-SSSSSS.log`, `robots::dump::write_file`)
/// or a frontier log holding line blocks (`frontier-NNNN-line-FFFFFFFF.log`,
/// `frontier::kept`).
pub fn kept_shard(name: &str, prefix: &str, infix: &str) -> Option<usize> {
    let (head, seq) = name.strip_suffix(".log")?.split_once(infix)?;
    if seq.is_empty() || !seq.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    shard_index(head, prefix, "")
}

/// `NNNN` of `PREFIXNNNNSUFFIX`.
pub fn shard_index(name: &str, prefix: &str, suffix: &str) -> Option<usize> {
    let digits = name.strip_prefix(prefix)?.strip_suffix(suffix)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// File name of the URL presence log in a checkpoint directory.
pub const SEEN_LOG: &str = "seen.plog";
/// File name of the content-fingerprint presence log.
pub const FINGERPRINTS_LOG: &str = "fingerprints.plog";
/// File name of a whole URL presence-bit snapshot (builds before the presence logs).
pub const SEEN_BITS: &str = "seen.bits";
/// File name of a whole fingerprint presence-bit snapshot (builds before the logs).
pub const FINGERPRINT_BITS: &str = "fingerprints.bits";

/// The presence logs a checkpoint holds (`docs/checkpoints.md`): each file is read up
/// to its committed length, bytes past it belong to no committed checkpoint.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct PresenceLogs {
    /// Committed length of `seen.plog`.
    pub seen_bytes: u64,
    /// Committed length of `fingerprints.plog`.
    pub fingerprints_bytes: u64,
}

impl PresenceLogs {
    /// The URL log of checkpoint directory `dir`.
    pub fn seen(&self, dir: &Path) -> crate::seen::LogRef {
        crate::seen::LogRef {
            path: dir.join(SEEN_LOG),
            committed_bytes: self.seen_bytes,
        }
    }

    /// The fingerprint log of checkpoint directory `dir`.
    pub fn fingerprints(&self, dir: &Path) -> crate::seen::LogRef {
        crate::seen::LogRef {
            path: dir.join(FINGERPRINTS_LOG),
            committed_bytes: self.fingerprints_bytes,
        }
    }
}

/// The crawl settings a checkpoint was taken with, for `trawl inspect` and for an
/// operator comparing a resume's flags with the original run's. Informational: a
/// resume takes its settings from its own flags.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RecordedConfig {
    pub shards: usize,
    pub concurrency_per_shard: usize,
    pub user_agent: String,
    pub from: Option<String>,
    pub delay_ms: u64,
    pub delay_factor: f64,
    pub per_host_connections: u32,
    pub max_pages: Option<u64>,
    pub max_pages_per_host: Option<u64>,
    pub max_bytes: Option<u64>,
    pub max_hops: u32,
    pub max_url_bytes: usize,
    pub max_path_depth: usize,
    /// `Any`, `SeedHosts` or `SeedDomains`.
    pub scope: String,
    pub memory_bytes: u64,
    pub seen_capacity: u64,
    pub seen_fp: f64,
    pub warc: bool,
    pub checkpoint_secs: u64,
    pub allow_private_addresses: bool,
    /// `--disk-reserve` as given (`auto`, `0` or a size); absent in checkpoints of
    /// older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_reserve: Option<String>,
}

/// Where the outputs stood at a checkpoint (the output thread reports it at the cut).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct Positions {
    /// Bytes of `crawl.log.jsonl` that are complete.
    pub crawl_log_bytes: u64,
    /// The open WARC file and the offset after its last complete record.
    pub warc: Option<(String, u64)>,
    /// Bytes of the re-crawl index (`recrawl.idx`) that are complete; absent without
    /// WARC output and in checkpoints of older builds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recrawl_index_bytes: Option<u64>,
}

/// Crawl counters carried across a resume.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Counters {
    pub pages: u64,
    pub pages_started: u64,
    pub bytes: u64,
    pub discovered: u64,
    pub duplicates: u64,
    /// WARC `revisit` records written (absent in checkpoints of older versions).
    #[serde(default)]
    pub warc_revisits: u64,
    /// Pages and robots.txt files a cap cut (`Stats` fields of the same names), so a
    /// resume goes on counting them; 0 in checkpoints of older versions.
    #[serde(default)]
    pub pages_links_truncated: u64,
    #[serde(default)]
    pub pages_scan_truncated: u64,
    #[serde(default)]
    pub pages_long_attributes: u64,
    #[serde(default)]
    pub robots_truncated: u64,
    #[serde(default)]
    pub robots_long_lines: u64,
    /// Sitemaps read, cut by a cap, refused whole, and entries the host rule refused
    /// (`Stats` fields of the same names; 0 in older checkpoints).
    #[serde(default)]
    pub sitemaps_read: u64,
    #[serde(default)]
    pub sitemaps_cut: u64,
    #[serde(default)]
    pub sitemaps_failed: u64,
    #[serde(default)]
    pub sitemap_urls_refused: u64,
    /// Hosts discovered (their mark is in the presence bits, which a resume keeps) and
    /// hosts given up (`Stats` fields of the same names; 0 in older checkpoints).
    #[serde(default)]
    pub hosts_known: u64,
    #[serde(default)]
    pub hosts_retired: u64,
    /// Re-crawl verdicts and bytes saved (`stats.json` `recrawl`; zero in older
    /// checkpoints and in crawls that are not re-crawls).
    #[serde(default)]
    pub recrawl: crate::recrawl::RecrawlStats,
}

/// Why a checkpoint could not be written or read.
#[derive(Debug)]
pub enum CheckpointError {
    Io {
        op: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// `CURRENT` is missing, empty or names something that is not a checkpoint.
    NoCheckpoint(PathBuf),
    /// `manifest.json` does not parse or has an unknown version.
    BadManifest { path: PathBuf, detail: String },
    /// The path is neither a crawl output directory, a `checkpoint/` directory nor a
    /// `cp-NNNNNN` directory.
    NotACheckpoint(PathBuf),
    /// A data file of a checkpoint (tallies) is damaged: the detail says where and how.
    Damaged { path: PathBuf, detail: String },
}

impl std::fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Io { op, path, .. } => write!(f, "cannot {op} {}", path.display()),
            Self::NoCheckpoint(p) => write!(f, "no complete checkpoint in {}", p.display()),
            Self::NotACheckpoint(p) => write!(
                f,
                "{} is not a crawl output or checkpoint directory (no CURRENT, checkpoint/ or manifest.json)",
                p.display()
            ),
            Self::BadManifest { path, detail } => {
                write!(
                    f,
                    "checkpoint manifest {} is damaged: {detail}",
                    path.display()
                )
            }
            Self::Damaged { path, detail } => {
                write!(f, "checkpoint file {} is damaged: {detail}", path.display())
            }
        }
    }
}

impl std::error::Error for CheckpointError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<DiskError> for CheckpointError {
    fn from(e: DiskError) -> Self {
        Self::Io {
            op: e.op.as_str(),
            path: e.path,
            source: e.source,
        }
    }
}

fn io_err<'p>(op: &'static str, path: &'p Path) -> impl FnOnce(io::Error) -> CheckpointError + 'p {
    move |source| CheckpointError::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}

/// The directory for a checkpoint being written: `checkpoint/tmp-EPOCH`, emptied.
pub fn prepare(root: &Path, epoch: u64) -> Result<PathBuf, CheckpointError> {
    fs::create_dir_all(root).map_err(io_err("create", root))?;
    let tmp = root.join(format!("tmp-{epoch:06}"));
    if tmp.exists() {
        fs::remove_dir_all(&tmp).map_err(io_err("remove", &tmp))?;
    }
    fs::create_dir_all(&tmp).map_err(io_err("create", &tmp))?;
    Ok(tmp)
}

/// Steps 2 to 5 of the module docs: seals `tmp` with its manifest and makes it current.
pub fn commit(root: &Path, tmp: &Path, manifest: &Manifest) -> Result<PathBuf, CheckpointError> {
    let manifest_path = tmp.join(MANIFEST_FILE);
    let json = serde_json::to_vec_pretty(manifest).map_err(|e| CheckpointError::BadManifest {
        path: manifest_path.clone(),
        detail: e.to_string(),
    })?;
    disk::write_synced(&manifest_path, &json)?;
    disk::sync_dir(tmp)?;
    let name = format!("cp-{:06}", manifest.epoch);
    let done = root.join(&name);
    if done.exists() {
        fs::remove_dir_all(&done).map_err(io_err("remove", &done))?;
    }
    fs::rename(tmp, &done).map_err(io_err("rename", tmp))?;
    disk::sync_dir(root)?;
    // `CURRENT.tmp`, fsync, rename over `CURRENT`, fsync `root`.
    disk::replace_atomic(&root.join("CURRENT"), |w| {
        io::Write::write_all(w, name.as_bytes())
    })?;
    if let Ok(entries) = fs::read_dir(root) {
        for entry in entries.flatten() {
            let n = entry.file_name().to_string_lossy().into_owned();
            if (n.starts_with("cp-") && n != name) || n.starts_with("tmp-") {
                let _ = fs::remove_dir_all(entry.path());
            }
        }
    }
    Ok(done)
}

/// The checkpoint `CURRENT` names, with its manifest.
pub fn load_current(root: &Path) -> Result<(PathBuf, Manifest), CheckpointError> {
    let name = current_name(root)?;
    let dir = root.join(name);
    let manifest = read_manifest(&dir)?;
    Ok((dir, manifest))
}

/// The directory name `root/CURRENT` holds, checked to be a `cp-` name inside `root`.
pub fn current_name(root: &Path) -> Result<String, CheckpointError> {
    let current = root.join("CURRENT");
    let name = fs::read_to_string(&current)
        .map_err(|_| CheckpointError::NoCheckpoint(root.to_path_buf()))?;
    let name = name.trim();
    if name.is_empty() || name.contains(['/', '\\']) || !name.starts_with("cp-") {
        return Err(CheckpointError::NoCheckpoint(root.to_path_buf()));
    }
    Ok(name.to_owned())
}

/// Reads and checks `dir/manifest.json`.
///
/// # Errors
/// I/O errors, or [`CheckpointError::BadManifest`] for JSON that does not parse or an
/// unknown version.
pub fn read_manifest(dir: &Path) -> Result<Manifest, CheckpointError> {
    let manifest_path = dir.join(MANIFEST_FILE);
    let bytes = fs::read(&manifest_path).map_err(io_err("read", &manifest_path))?;
    let manifest: Manifest =
        serde_json::from_slice(&bytes).map_err(|e| CheckpointError::BadManifest {
            path: manifest_path.clone(),
            detail: e.to_string(),
        })?;
    if manifest.version != MANIFEST_VERSION {
        return Err(CheckpointError::BadManifest {
            path: manifest_path,
            detail: format!("version {} (expected {MANIFEST_VERSION})", manifest.version),
        });
    }
    Ok(manifest)
}

/// The frontier dump files of a checkpoint directory, in shard order.
pub fn frontier_files(dir: &Path) -> Result<Vec<PathBuf>, CheckpointError> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(io_err("list", dir))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("frontier-") && n.ends_with(".seg"))
        })
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(epoch: u64) -> Manifest {
        Manifest {
            version: MANIFEST_VERSION,
            epoch,
            unix_time: 1,
            shards: 2,
            seeds: vec!["http://a.test/".into()],
            counters: Counters {
                pages: epoch,
                ..Counters::default()
            },
            positions: Positions::default(),
            queued_urls: 0,
            config: None,
            presence: None,
            files: None,
        }
    }

    #[test]
    fn commit_makes_the_new_checkpoint_current_and_removes_the_old() {
        let root = tempfile::tempdir().unwrap();
        let tmp = prepare(root.path(), 1).unwrap();
        commit(root.path(), &tmp, &manifest(1)).unwrap();
        let tmp = prepare(root.path(), 2).unwrap();
        fs::write(tmp.join("frontier-0000.seg"), b"x").unwrap();
        commit(root.path(), &tmp, &manifest(2)).unwrap();
        let (dir, m) = load_current(root.path()).unwrap();
        assert_eq!(m.epoch, 2);
        assert_eq!(frontier_files(&dir).unwrap().len(), 1);
        assert!(!root.path().join("cp-000001").exists());
    }

    #[test]
    fn an_unfinished_checkpoint_leaves_the_previous_one_current() {
        let root = tempfile::tempdir().unwrap();
        let tmp = prepare(root.path(), 1).unwrap();
        commit(root.path(), &tmp, &manifest(1)).unwrap();
        // A crash after step 1 of epoch 2: tmp-000002 exists with partial files.
        let tmp = prepare(root.path(), 2).unwrap();
        fs::write(tmp.join("frontier-0000.seg"), b"partial").unwrap();
        let (_, m) = load_current(root.path()).unwrap();
        assert_eq!(m.epoch, 1);
    }

    #[test]
    fn damaged_manifest_and_missing_current_are_errors() {
        let root = tempfile::tempdir().unwrap();
        assert!(matches!(
            load_current(root.path()),
            Err(CheckpointError::NoCheckpoint(_))
        ));
        let tmp = prepare(root.path(), 1).unwrap();
        commit(root.path(), &tmp, &manifest(1)).unwrap();
        fs::write(root.path().join("cp-000001/manifest.json"), b"{not json").unwrap();
        assert!(matches!(
            load_current(root.path()),
            Err(CheckpointError::BadManifest { .. })
        ));
        fs::write(root.path().join("CURRENT"), b"../etc").unwrap();
        assert!(matches!(
            load_current(root.path()),
            Err(CheckpointError::NoCheckpoint(_))
        ));
    }
}
