//! The report types of [`Checkpoint::describe`](super::Checkpoint::describe): what
//! `trawl inspect` prints (as text or JSON), kept apart from the reading code that
//! fills them in so the shape of the report reads in one place.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::checkpoint::{Counters, RecordedConfig};
use crate::seen::Stats as SeenStats;

/// One entry of the `checkpoint/` directory.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct CheckpointEntry {
    pub name: String,
    pub kind: CheckpointEntryKind,
    /// The epoch in the name, when it has one.
    pub epoch: Option<u64>,
}

/// What an entry of `checkpoint/` is.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum CheckpointEntryKind {
    /// The directory `CURRENT` names.
    Current,
    /// A sealed `cp-` directory that is not current: an older one whose deletion
    /// (step 5) was cut short, or a newer one sealed just before a crash at step 4.
    /// Never used by a resume.
    Sealed,
    /// A `tmp-` directory: a checkpoint being written, or cut short by a crash.
    Unfinished,
    /// `CURRENT.tmp`: a pointer being replaced.
    PointerTmp,
    /// Anything else (not written by trawl).
    Other,
}

/// Everything `trawl inspect` reports about a checkpoint.
#[derive(Debug, Clone, Serialize)]
pub struct Description {
    /// The `checkpoint/` directory.
    pub root: PathBuf,
    /// The inspected `cp-` directory.
    pub dir: PathBuf,
    pub name: String,
    /// Whether `CURRENT` names this checkpoint (what `--resume` would use).
    pub is_current: bool,
    pub epoch: u64,
    pub unix_time: u64,
    /// `unix_time` as a UTC date.
    pub taken_at: String,
    /// Seconds between the cut and now (0 if the clock says the cut is in the future).
    pub age_secs: u64,
    /// Every entry of the `checkpoint/` directory, sorted by name.
    pub entries: Vec<CheckpointEntry>,
    pub shards: usize,
    pub seeds: usize,
    /// The first seeds (at most 5).
    pub seed_sample: Vec<String>,
    /// The crawl settings, when the build that wrote the checkpoint recorded them.
    pub config: Option<RecordedConfig>,
    pub counters: Counters,
    /// URLs the manifest says the frontier dumps hold.
    pub queued_urls: u64,
    pub frontier: FrontierReport,
    pub tallies: TallyReport,
    /// The robots cache files (`robots-NNNN.bin`).
    pub robots: RobotsReport,
    pub seen: Option<PresenceReport>,
    pub fingerprints: Option<PresenceReport>,
    pub positions: PositionsReport,
    /// Outcomes in the crawl log up to the checkpoint's position (when read).
    pub log: Option<LogReport>,
    pub verification: Verification,
}

/// The frontier dumps: what the crawl had queued at the cut.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FrontierReport {
    pub shards: Vec<ShardFrontier>,
    /// URLs read from all segments (up to the first damaged record of each).
    pub urls: u64,
    /// Bytes of all segment files.
    pub bytes: u64,
    /// `bytes / urls` (0 when empty).
    pub bytes_per_url: f64,
    /// Distinct hosts with queued URLs (a lower bound if `hosts_capped`).
    pub hosts: u64,
    pub hosts_capped: bool,
    /// Seeds still queued (no hops).
    pub seeds_queued: u64,
    /// URLs queued after failed attempts (retries pending).
    pub retrying: u64,
    /// The deepest hop count queued.
    pub max_hops: u64,
    /// Hosts with the most queued URLs, largest first.
    pub top_hosts: Vec<HostCount>,
}

/// One shard's frontier dump.
#[derive(Debug, Clone, Serialize)]
pub struct ShardFrontier {
    pub shard: usize,
    pub file: PathBuf,
    pub urls: u64,
    pub bytes: u64,
    /// Distinct hosts in this file (a lower bound if the host cap was hit).
    pub hosts: u64,
    /// Whether every record was read and checked.
    pub complete: bool,
}

/// A host and its queued URLs.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct HostCount {
    pub host: String,
    pub urls: u64,
}

/// The per-host tallies (`tallies-NNNN.tsv`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct TallyReport {
    pub hosts: u64,
    /// Pages fetched, summed over hosts (in-flight pages excluded).
    pub pages: u64,
    /// Hosts parked after repeated failures.
    pub parked: u64,
    /// Hosts whose last fetches failed.
    pub failing: u64,
}

/// The robots cache files (`robots-NNNN.bin`): what a resume restores instead of
/// fetching robots.txt again.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RobotsReport {
    /// Files present (a checkpoint of an older build has none).
    pub files: u64,
    pub bytes: u64,
    /// Hosts whose entry verified.
    pub hosts: u64,
    /// Hosts with usable rules (`Ready`), of which `expired` need revalidation now.
    pub ready: u64,
    pub expired: u64,
    /// Hosts whose robots.txt was failing (429, 5xx, network), backed off.
    pub unreachable: u64,
    /// Ready hosts by kind of rules: a parsed robots.txt, allow-all (4xx), disallow-all.
    pub parsed: u64,
    pub allow_all: u64,
    pub disallow_all: u64,
    /// Rules held over all parsed robots.txt files.
    pub rules: u64,
    /// Ready hosts with an `ETag` or `Last-Modified` for a conditional refetch.
    pub with_validators: u64,
    /// Entries lost to damage (their robots.txt would be refetched).
    pub damaged: u64,
    /// The disk tier's log files the robots files name (hard links kept with the
    /// checkpoint), the bytes recorded of them, and the records read there (a host
    /// may have more than one; `hosts` counts its latest once).
    pub tier_files: u64,
    pub tier_bytes: u64,
    pub tier_records: u64,
}

/// A presence-bit snapshot (`seen.bits` or `fingerprints.bits`).
#[derive(Debug, Clone, Serialize)]
pub struct PresenceReport {
    pub file: PathBuf,
    pub file_bytes: u64,
    pub bits: u64,
    pub k: u32,
    /// Design capacity (keys).
    pub capacity: u64,
    /// Keys inserted as new.
    pub inserted: u64,
    pub set_bits: u64,
    pub fill_ratio: f64,
    /// The chance that the next new key is mistaken for a seen one.
    pub expected_fp: f64,
    /// Expected keys lost to false positives so far.
    pub expected_lost: f64,
    pub over_capacity: bool,
    /// For a presence log (`*.plog`): records up to the committed length (one full,
    /// then deltas), and bytes of the full record with the header.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_records: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_base_bytes: Option<u64>,
}

impl PresenceReport {
    pub(super) fn new(file: PathBuf, s: &SeenStats) -> Self {
        Self {
            file,
            file_bytes: s.file_bytes,
            bits: s.bits,
            k: s.k,
            capacity: s.capacity,
            inserted: s.inserted,
            set_bits: s.set_bits,
            fill_ratio: s.fill_ratio,
            expected_fp: s.expected_fp,
            expected_lost: s.expected_lost,
            over_capacity: s.over_capacity,
            log_records: None,
            log_base_bytes: None,
        }
    }
}

/// The output positions the checkpoint recorded, and what is on disk now.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PositionsReport {
    pub crawl_log_bytes: u64,
    /// The crawl log's current size (when the output directory is known).
    pub crawl_log_file_bytes: Option<u64>,
    /// The open WARC file's final name and the offset after its last complete record.
    pub warc_file: Option<String>,
    pub warc_offset: Option<u64>,
    /// The WARC file as found on disk (`.open` while written, else the final name).
    pub warc_path: Option<PathBuf>,
    pub warc_file_bytes: Option<u64>,
}

/// The crawl log up to the checkpoint's position.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LogReport {
    pub lines: u64,
    /// Lines by outcome (`fetched`, `robots`, `filtered`...).
    pub outcomes: std::collections::BTreeMap<String, u64>,
    /// Lines with an HTTP status.
    pub with_status: u64,
    /// Lines that did not parse as crawl-log records.
    pub unreadable: u64,
}

/// One thing wrong with a checkpoint.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Problem {
    pub file: PathBuf,
    /// Byte offset of the damage, when known (segment records).
    pub offset: Option<u64>,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(o) = self.offset {
            write!(f, " at byte {o}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// The integrity check: every segment record's checksum, the presence bits' checksums,
/// the tallies' syntax, the manifest against the files present.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Verification {
    /// No errors (warnings allowed).
    pub ok: bool,
    /// Damage: a resume from this checkpoint would fail or lose state.
    pub errors: Vec<Problem>,
    /// Oddities that do not stop a resume (stray files, output shorter than recorded).
    pub warnings: Vec<Problem>,
    pub files_checked: u64,
    pub bytes_checked: u64,
}
