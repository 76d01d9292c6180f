//! Reading a checkpoint without changing it: the figures `trawl inspect` prints and a
//! verification of every file, as a library API so an embedder can check a crawl's
//! state before resuming it (or from a monitoring job).
//!
//! Nothing here writes, locks or maps a file: the presence bits are verified with plain
//! reads ([`SeenSet::verify`]), segments are read sequentially with their checksums, so
//! inspecting the checkpoint of a running crawl is safe (the crawl never modifies a
//! sealed `cp-` directory; it only deletes it once a newer one is current, which shows
//! up here as a missing file).
//!
//! Damage is never an `Err` of [`Checkpoint::describe`]: it is a [`Problem`] in the
//! returned [`Verification`], with the file and, for segments, the byte offset of the
//! first bad record, so one run reports everything that is wrong. Only a path that is
//! not a checkpoint, or a manifest that cannot be read, fails [`Checkpoint::open`].

use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::{current_name, read_manifest, CheckpointError, Counters, Manifest, RecordedConfig};
use crate::frontier::{Record, SegmentError, SegmentReader};
use crate::seen::{SeenSet, Stats as SeenStats};
use crate::warc::{WarcDate, WarcPosition};

/// The file names a checkpoint directory may hold besides the per-shard files.
const MANIFEST: &str = "manifest.json";
const SEEN_BITS: &str = "seen.bits";
const FINGERPRINT_BITS: &str = "fingerprints.bits";
/// More shards than any machine has cores: a manifest claiming more is damaged, and
/// only this many shards' files are looked for (so a garbled count cannot make the
/// check run for ever).
const MAX_SHARDS: usize = 1 << 16;

/// How much work [`Checkpoint::describe`] does.
#[derive(Clone, Debug)]
pub struct DescribeOptions {
    /// How many hosts to list by queued URLs (largest first).
    pub top_hosts: usize,
    /// Count the crawl log's outcomes up to the checkpoint's position (reads the log
    /// once; off for a quick look at a very large crawl).
    pub read_log: bool,
    /// Distinct hosts counted at most. A frontier of billions of URLs may hold tens of
    /// millions of hosts; past this cap new hosts are no longer counted one by one and
    /// [`FrontierReport::hosts_capped`] says so, so inspecting stays within memory.
    pub max_hosts_tracked: usize,
}

impl Default for DescribeOptions {
    fn default() -> Self {
        Self {
            top_hosts: 10,
            read_log: true,
            max_hosts_tracked: 4_000_000,
        }
    }
}

/// A checkpoint opened for reading.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    root: PathBuf,
    out_dir: Option<PathBuf>,
    name: String,
    dir: PathBuf,
    is_current: bool,
    manifest: Manifest,
}

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
    fn new(file: PathBuf, s: &SeenStats) -> Self {
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

impl Checkpoint {
    /// Opens the checkpoint `CURRENT` names. `path` may be a crawl output directory
    /// (holding `checkpoint/`), the `checkpoint/` directory itself, or one `cp-NNNNNN`
    /// directory (then that one is opened, current or not).
    ///
    /// # Errors
    /// [`CheckpointError::NotACheckpoint`] for a path that is none of these,
    /// [`CheckpointError::NoCheckpoint`] when no checkpoint is complete yet,
    /// [`CheckpointError::BadManifest`] or an I/O error for an unreadable manifest.
    pub fn open(path: &Path) -> Result<Self, CheckpointError> {
        if !path.is_dir() {
            return Err(CheckpointError::NotACheckpoint(path.to_path_buf()));
        }
        if path.join(MANIFEST).is_file() {
            return Self::open_dir(path);
        }
        let root = if path.join("CURRENT").exists() {
            path.to_path_buf()
        } else if path.join("checkpoint").is_dir() {
            path.join("checkpoint")
        } else if path.file_name().is_some_and(|n| n == "checkpoint") {
            // A `checkpoint/` directory with no CURRENT yet: a crawl killed before its
            // first checkpoint.
            path.to_path_buf()
        } else {
            return Err(CheckpointError::NotACheckpoint(path.to_path_buf()));
        };
        Self::open_current(&root)
    }

    /// Opens the checkpoint that `root/CURRENT` names (`root` is a `checkpoint/`
    /// directory).
    ///
    /// # Errors
    /// As [`Checkpoint::open`].
    pub fn open_current(root: &Path) -> Result<Self, CheckpointError> {
        let name = current_name(root)?;
        let dir = root.join(&name);
        let manifest = read_manifest(&dir)?;
        Ok(Self {
            root: root.to_path_buf(),
            out_dir: out_dir_of(root),
            name,
            dir,
            is_current: true,
            manifest,
        })
    }

    /// Opens one `cp-NNNNNN` directory.
    fn open_dir(dir: &Path) -> Result<Self, CheckpointError> {
        let manifest = read_manifest(dir)?;
        let root = dir.parent().unwrap_or(Path::new(".")).to_path_buf();
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let is_current = current_name(&root).is_ok_and(|c| c == name);
        Ok(Self {
            out_dir: out_dir_of(&root),
            root,
            name,
            dir: dir.to_path_buf(),
            is_current,
            manifest,
        })
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The `cp-NNNNNN` directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The crawl output directory, when the checkpoint lies in one (`OUT/checkpoint/`).
    pub fn out_dir(&self) -> Option<&Path> {
        self.out_dir.as_deref()
    }

    /// Whether `CURRENT` names this checkpoint.
    pub fn is_current(&self) -> bool {
        self.is_current
    }

    /// Reads and verifies the whole checkpoint. See [`Checkpoint::describe_with`].
    pub fn describe(&self, opts: &DescribeOptions) -> Description {
        self.describe_with(opts, &mut |_, _| {})
    }

    /// Reads and verifies the whole checkpoint, calling `visit(shard, record)` for
    /// every queued URL in shard order (the frontier is read once, sequentially). Damage
    /// is reported in [`Description::verification`], never as a panic or an `Err`.
    pub fn describe_with(
        &self,
        opts: &DescribeOptions,
        visit: &mut dyn FnMut(usize, &Record),
    ) -> Description {
        let m = &self.manifest;
        let mut v = Verification::default();
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let entries = self.entries(&mut v);
        self.check_names(&mut v);
        let frontier = self.frontier(opts, &mut v, visit);
        if frontier.urls != m.queued_urls {
            v.errors.push(Problem {
                file: self.dir.join(MANIFEST),
                offset: None,
                message: format!(
                    "the manifest records {} queued URLs, the frontier segments hold {}",
                    m.queued_urls, frontier.urls
                ),
            });
        }
        let tallies = self.tallies(&mut v);
        let robots = self.robots(&mut v);
        let (seen, fingerprints) = match m.presence {
            Some(p) => (
                self.presence_log(&p.seen(&self.dir), &mut v),
                self.presence_log(&p.fingerprints(&self.dir), &mut v),
            ),
            None => (
                self.presence(SEEN_BITS, &mut v),
                self.presence(FINGERPRINT_BITS, &mut v),
            ),
        };
        let positions = self.positions(&mut v);
        let log = if opts.read_log {
            self.read_log(&mut v)
        } else {
            None
        };
        v.ok = v.errors.is_empty();
        Description {
            root: self.root.clone(),
            dir: self.dir.clone(),
            name: self.name.clone(),
            is_current: self.is_current,
            epoch: m.epoch,
            unix_time: m.unix_time,
            taken_at: format_unix(m.unix_time),
            age_secs: now.saturating_sub(m.unix_time),
            entries,
            shards: m.shards,
            seeds: m.seeds.len(),
            seed_sample: m.seeds.iter().take(5).cloned().collect(),
            config: m.config.clone(),
            counters: m.counters,
            queued_urls: m.queued_urls,
            frontier,
            tallies,
            robots,
            seen,
            fingerprints,
            positions,
            log,
            verification: v,
        }
    }

    /// The shards whose files are read: the manifest's count, within reason.
    fn shards(&self) -> usize {
        self.manifest.shards.min(MAX_SHARDS)
    }

    /// The entries of `checkpoint/`.
    fn entries(&self, v: &mut Verification) -> Vec<CheckpointEntry> {
        let current = current_name(&self.root).ok();
        let mut out = Vec::new();
        let list = match fs::read_dir(&self.root) {
            Ok(l) => l,
            Err(e) => {
                v.warnings
                    .push(problem(&self.root, format!("cannot list: {e}")));
                return out;
            }
        };
        for entry in list.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let epoch = name
                .strip_prefix("cp-")
                .or_else(|| name.strip_prefix("tmp-"))
                .and_then(|e| e.parse().ok());
            let kind = if current.as_deref() == Some(name.as_str()) {
                CheckpointEntryKind::Current
            } else if name.starts_with("cp-") {
                CheckpointEntryKind::Sealed
            } else if name.starts_with("tmp-") {
                CheckpointEntryKind::Unfinished
            } else if name == "CURRENT.tmp" {
                CheckpointEntryKind::PointerTmp
            } else if name == "CURRENT" {
                continue;
            } else {
                CheckpointEntryKind::Other
            };
            out.push(CheckpointEntry { name, kind, epoch });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// The manifest against the directory's name and the files present.
    fn check_names(&self, v: &mut Verification) {
        let m = &self.manifest;
        if self.name != format!("cp-{:06}", m.epoch) {
            v.errors.push(problem(
                &self.dir.join(MANIFEST),
                format!(
                    "the manifest's epoch {} does not match the directory name {}",
                    m.epoch, self.name
                ),
            ));
        }
        if m.shards == 0 {
            v.errors.push(problem(
                &self.dir.join(MANIFEST),
                "the manifest records 0 shards".to_owned(),
            ));
        }
        let Ok(list) = fs::read_dir(&self.dir) else {
            v.errors
                .push(problem(&self.dir, "cannot list the directory".to_owned()));
            return;
        };
        for entry in list.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let known = name == MANIFEST
                || name == SEEN_BITS
                || name == FINGERPRINT_BITS
                || name == super::SEEN_LOG
                || name == super::FINGERPRINTS_LOG
                || shard_index(&name, "frontier-", ".seg").is_some_and(|i| i < m.shards)
                || shard_index(&name, "tallies-", ".tsv").is_some_and(|i| i < m.shards)
                || shard_index(&name, "robots-", ".bin").is_some_and(|i| i < m.shards);
            if !known {
                v.warnings.push(problem(
                    &entry.path(),
                    format!(
                        "not part of a checkpoint of {} shard(s); a resume ignores it",
                        m.shards
                    ),
                ));
            }
        }
        if m.shards > MAX_SHARDS {
            v.errors.push(problem(
                &self.dir.join(MANIFEST),
                format!(
                    "the manifest records {} shards (at most {MAX_SHARDS} are plausible)",
                    m.shards
                ),
            ));
        }
        for i in 0..self.shards() {
            let tallies = self.dir.join(format!("tallies-{i:04}.tsv"));
            if !tallies.is_file() {
                v.errors.push(problem(&tallies, "missing".to_owned()));
            }
        }
    }

    /// Reads every frontier segment through, checksums included.
    fn frontier(
        &self,
        opts: &DescribeOptions,
        v: &mut Verification,
        visit: &mut dyn FnMut(usize, &Record),
    ) -> FrontierReport {
        let mut report = FrontierReport::default();
        let mut hosts: HashMap<String, u64> = HashMap::new();
        for shard in 0..self.shards() {
            let file = self.dir.join(format!("frontier-{shard:04}.seg"));
            let bytes = fs::metadata(&file).map_or(0, |m| m.len());
            let mut sf = ShardFrontier {
                shard,
                file: file.clone(),
                urls: 0,
                bytes,
                hosts: 0,
                complete: false,
            };
            let mut reader = match SegmentReader::open(&file) {
                Ok(r) => r,
                Err(e) => {
                    v.errors.push(segment_problem(&file, &e, None));
                    report.shards.push(sf);
                    continue;
                }
            };
            v.files_checked += 1;
            let mut shard_hosts: HashSet<String> = HashSet::new();
            loop {
                match reader.next_record() {
                    Ok(Some(rec)) => {
                        sf.urls += 1;
                        visit(shard, &rec);
                        let hops = rec.item.hops.len() as u64;
                        report.max_hops = report.max_hops.max(hops);
                        report.seeds_queued += u64::from(hops == 0);
                        report.retrying += u64::from(rec.item.attempts > 0);
                        count_host(
                            &mut hosts,
                            &rec.host,
                            opts.max_hosts_tracked,
                            &mut report.hosts_capped,
                        );
                        if shard_hosts.len() < opts.max_hosts_tracked
                            && !shard_hosts.contains(&rec.host)
                        {
                            shard_hosts.insert(rec.host);
                        }
                    }
                    Ok(None) => {
                        sf.complete = true;
                        break;
                    }
                    Err(e) => {
                        v.errors
                            .push(segment_problem(&file, &e, Some(reader.offset())));
                        break;
                    }
                }
            }
            v.bytes_checked += if sf.complete { bytes } else { reader.offset() };
            sf.hosts = shard_hosts.len() as u64;
            report.urls += sf.urls;
            report.bytes += sf.bytes;
            report.shards.push(sf);
        }
        report.hosts = hosts.len() as u64;
        report.bytes_per_url = if report.urls == 0 {
            0.0
        } else {
            report.bytes as f64 / report.urls as f64
        };
        let mut top: Vec<HostCount> = hosts
            .into_iter()
            .map(|(host, urls)| HostCount { host, urls })
            .collect();
        top.sort_by(|a, b| b.urls.cmp(&a.urls).then_with(|| a.host.cmp(&b.host)));
        top.truncate(opts.top_hosts);
        report.top_hosts = top;
        report
    }

    /// Parses every `tallies-NNNN.tsv`.
    fn tallies(&self, v: &mut Verification) -> TallyReport {
        let mut report = TallyReport::default();
        for shard in 0..self.shards() {
            let file = self.dir.join(format!("tallies-{shard:04}.tsv"));
            let Ok(f) = File::open(&file) else {
                continue; // reported as missing by check_names
            };
            v.files_checked += 1;
            for (n, line) in BufReader::new(f).lines().enumerate() {
                let line = match line {
                    Ok(l) => l,
                    Err(e) => {
                        v.errors
                            .push(problem(&file, format!("unreadable at line {}: {e}", n + 1)));
                        break;
                    }
                };
                v.bytes_checked += line.len() as u64 + 1;
                let fields: Vec<&str> = line.split('\t').collect();
                let parsed = match fields.as_slice() {
                    [host, pages, failures, parked] if !host.is_empty() => pages
                        .parse::<u64>()
                        .ok()
                        .zip(failures.parse::<u32>().ok())
                        .filter(|_| matches!(*parked, "0" | "1"))
                        .map(|(p, f)| (p, f, *parked == "1")),
                    _ => None,
                };
                let Some((pages, failures, parked)) = parsed else {
                    v.errors.push(problem(
                        &file,
                        format!(
                            "line {} is not `host<TAB>pages<TAB>failures<TAB>parked`",
                            n + 1
                        ),
                    ));
                    continue;
                };
                report.hosts += 1;
                report.pages += pages;
                report.parked += u64::from(parked);
                report.failing += u64::from(failures > 0);
            }
        }
        report
    }

    /// Reads every `robots-NNNN.bin` through, checksums included. A missing file is a
    /// warning (older builds wrote none; a resume refetches those hosts' robots.txt);
    /// damage is an error, although a resume skips the damaged entries and goes on.
    fn robots(&self, v: &mut Verification) -> RobotsReport {
        use crate::robots::persist::{self, StoredState};
        use crate::robots::HostRules;
        let now_ms = persist::unix_ms(SystemTime::now());
        let mut report = RobotsReport::default();
        for shard in 0..self.shards() {
            let file = self.dir.join(format!("robots-{shard:04}.bin"));
            if !file.is_file() {
                v.warnings.push(problem(
                    &file,
                    "missing: a resume fetches robots.txt again for this shard's hosts".to_owned(),
                ));
                continue;
            }
            let contents = match persist::read_file(&file) {
                Ok(c) => c,
                Err(e) => {
                    v.errors.push(problem(&file, format!("unreadable: {e}")));
                    continue;
                }
            };
            v.files_checked += 1;
            v.bytes_checked += contents.bytes;
            report.files += 1;
            report.bytes += contents.bytes;
            for d in &contents.damage {
                v.errors.push(Problem {
                    file: file.clone(),
                    offset: Some(d.offset),
                    message: d.message.clone(),
                });
            }
            let found = contents.entries.len() as u64;
            report.damaged += contents
                .written
                .map_or(u64::from(!contents.damage.is_empty()), |w| {
                    w.saturating_sub(found)
                });
            for e in &contents.entries {
                report.hosts += 1;
                let ready = match &e.state {
                    StoredState::Ready(r) => {
                        report.ready += 1;
                        report.expired += u64::from(r.fresh_until_ms <= now_ms);
                        r
                    }
                    StoredState::Unreachable { .. } => {
                        report.unreachable += 1;
                        continue;
                    }
                };
                match &ready.rules {
                    HostRules::Parsed(rules) => {
                        report.parsed += 1;
                        report.rules += rules.rules().len() as u64;
                    }
                    HostRules::AllowAll => report.allow_all += 1,
                    HostRules::DisallowAll => report.disallow_all += 1,
                }
                report.with_validators += u64::from(
                    ready.validators.etag.is_some() || ready.validators.last_modified.is_some(),
                );
            }
        }
        report
    }

    /// Verifies one presence-bit snapshot (header and bit-region checksums).
    fn presence(&self, name: &str, v: &mut Verification) -> Option<PresenceReport> {
        let file = self.dir.join(name);
        match SeenSet::verify(&file) {
            Ok(stats) => {
                v.files_checked += 1;
                v.bytes_checked += stats.file_bytes;
                Some(PresenceReport::new(file, &stats))
            }
            Err(e) => {
                v.errors.push(problem(&file, e.to_string()));
                None
            }
        }
    }

    /// Verifies one presence log up to the committed length the manifest records
    /// (every record's checksum and runs); bytes past it are an append that no
    /// committed checkpoint owns, reported only as a figure.
    fn presence_log(
        &self,
        log: &crate::seen::LogRef,
        v: &mut Verification,
    ) -> Option<PresenceReport> {
        match SeenSet::verify_log(log) {
            Ok((stats, summary)) => {
                v.files_checked += 1;
                v.bytes_checked += log.committed_bytes;
                let mut r = PresenceReport::new(log.path.clone(), &stats);
                r.log_records = Some(summary.records);
                r.log_base_bytes = Some(summary.base_bytes);
                Some(r)
            }
            Err(e) => {
                v.errors.push(problem(&log.path, e.to_string()));
                None
            }
        }
    }

    /// The recorded output positions against the output files present.
    fn positions(&self, v: &mut Verification) -> PositionsReport {
        let p = &self.manifest.positions;
        let mut r = PositionsReport {
            crawl_log_bytes: p.crawl_log_bytes,
            ..PositionsReport::default()
        };
        if let Some((file, offset)) = &p.warc {
            r.warc_file = Some(file.clone());
            r.warc_offset = Some(*offset);
        }
        let Some(out) = &self.out_dir else {
            return r;
        };
        let log = out.join("crawl.log.jsonl");
        match fs::metadata(&log) {
            Ok(meta) => {
                r.crawl_log_file_bytes = Some(meta.len());
                if meta.len() < p.crawl_log_bytes {
                    v.warnings.push(problem(
                        &log,
                        format!(
                            "holds {} bytes, less than the {} the checkpoint recorded",
                            meta.len(),
                            p.crawl_log_bytes
                        ),
                    ));
                }
            }
            Err(_) if p.crawl_log_bytes > 0 => {
                v.warnings.push(problem(&log, "missing".to_owned()));
            }
            Err(_) => {}
        }
        if let Some((file, offset)) = &p.warc {
            let warc_dir = out.join("warc");
            let pos = WarcPosition {
                file_name: file.clone(),
                offset: *offset,
            };
            match pos.locate(&warc_dir) {
                Some(path) => {
                    let len = fs::metadata(&path).map_or(0, |m| m.len());
                    if len < *offset {
                        v.warnings.push(problem(
                            &path,
                            format!(
                                "holds {len} bytes, less than the {offset} the checkpoint recorded"
                            ),
                        ));
                    }
                    r.warc_path = Some(path);
                    r.warc_file_bytes = Some(len);
                }
                None => v
                    .warnings
                    .push(problem(&warc_dir.join(file), "missing".to_owned())),
            }
        }
        r
    }

    /// Counts the crawl log's outcomes up to the recorded position.
    fn read_log(&self, v: &mut Verification) -> Option<LogReport> {
        #[derive(Deserialize)]
        struct Line {
            outcome: String,
            #[serde(default)]
            status: Option<u16>,
        }
        let out = self.out_dir.as_ref()?;
        let path = out.join("crawl.log.jsonl");
        let file = File::open(&path).ok()?;
        let mut report = LogReport::default();
        let mut input = BufReader::new(file.take(self.manifest.positions.crawl_log_bytes));
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match input.read_until(b'\n', &mut buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    v.warnings.push(problem(&path, format!("unreadable: {e}")));
                    break;
                }
            }
            report.lines += 1;
            match serde_json::from_slice::<Line>(&buf) {
                Ok(l) => {
                    *report.outcomes.entry(l.outcome).or_default() += 1;
                    report.with_status += u64::from(l.status.is_some());
                }
                Err(_) => report.unreadable += 1,
            }
        }
        if report.unreadable > 0 {
            v.warnings.push(problem(
                &path,
                format!(
                    "{} of {} lines before the checkpoint's position do not parse",
                    report.unreadable, report.lines
                ),
            ));
        }
        Some(report)
    }
}

/// `OUT` when `root` is `OUT/checkpoint` and `OUT` holds crawl output.
fn out_dir_of(root: &Path) -> Option<PathBuf> {
    if root.file_name() != Some(std::ffi::OsStr::new("checkpoint")) {
        return None;
    }
    let out = root.parent()?;
    let out = if out.as_os_str().is_empty() {
        Path::new(".")
    } else {
        out
    };
    (out.join("crawl.log.jsonl").exists() || out.join("warc").is_dir()).then(|| out.to_path_buf())
}

/// `NNNN` of `PREFIXNNNNSUFFIX`.
fn shard_index(name: &str, prefix: &str, suffix: &str) -> Option<usize> {
    let digits = name.strip_prefix(prefix)?.strip_suffix(suffix)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn count_host(hosts: &mut HashMap<String, u64>, host: &str, cap: usize, capped: &mut bool) {
    if let Some(n) = hosts.get_mut(host) {
        *n += 1;
    } else if hosts.len() < cap {
        hosts.insert(host.to_owned(), 1);
    } else {
        *capped = true;
    }
}

fn problem(file: &Path, message: String) -> Problem {
    Problem {
        file: file.to_path_buf(),
        offset: None,
        message,
    }
}

fn segment_problem(file: &Path, e: &SegmentError, at: Option<u64>) -> Problem {
    let offset = match e {
        SegmentError::Corrupt { offset } | SegmentError::Truncated { offset } => Some(*offset),
        SegmentError::BadHeader => Some(0),
        _ => at,
    };
    let message = match e {
        SegmentError::Io(io) if io.kind() == std::io::ErrorKind::NotFound => "missing".to_owned(),
        SegmentError::Corrupt { .. } => {
            "record checksum or length mismatch: the segment is damaged from here on".to_owned()
        }
        SegmentError::Truncated { .. } => "the file ends inside a record (truncated)".to_owned(),
        other => other.to_string(),
    };
    Problem {
        file: file.to_path_buf(),
        offset,
        message,
    }
}

/// `YYYY-MM-DDThh:mm:ssZ`.
fn format_unix(secs: u64) -> String {
    let micros = i64::try_from(secs).unwrap_or(i64::MAX / 1_000_000) * 1_000_000;
    let s = WarcDate::from_unix_micros(micros).to_string();
    // Drop the microseconds WARC dates carry: a checkpoint records whole seconds.
    match s.split_once('.') {
        Some((head, _)) => format!("{head}Z"),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{commit, prepare, Counters, MANIFEST_VERSION};
    use super::*;
    use crate::checkpoint::Positions;
    use crate::frontier::{QueuedUrl, SegmentWriter};

    /// A checkpoint of `shards` shards with `urls[i]` URLs on shard i, written the way
    /// the engine writes one.
    /// A robots file with two hosts: one with parsed rules, one unreachable.
    fn write_robots(path: &Path, shard: usize) {
        use crate::robots::persist::{write_file, Clock};
        use crate::robots::{HostKey, PolicyConfig, RobotsCache, RobotsResponse};
        let now = std::time::Instant::now();
        let mut cache = RobotsCache::new(PolicyConfig::new("trawl"), 1 << 20);
        for (host, status, body) in [
            (
                format!("r{shard}.test"),
                200,
                &b"user-agent: *\ndisallow: /x\nallow: /x/y$\n"[..],
            ),
            (format!("down{shard}.test"), 503, &b""[..]),
        ] {
            let url = url::Url::parse(&format!("http://{host}/")).unwrap();
            cache.poll_fetch(&url, now).unwrap();
            let r = RobotsResponse {
                status,
                headers: &[],
                body,
            };
            cache
                .on_response(&HostKey::of(&url).unwrap(), now, &r)
                .unwrap();
        }
        write_file(path, &cache, Clock::now()).unwrap();
    }

    fn write_checkpoint(root: &Path, epoch: u64, urls: &[u64]) -> PathBuf {
        let tmp = prepare(root, epoch).unwrap();
        let mut total = 0;
        for (i, n) in urls.iter().enumerate() {
            let mut w = SegmentWriter::create(&tmp.join(format!("frontier-{i:04}.seg"))).unwrap();
            for j in 0..*n {
                let host = format!("h{}.test", j % 3);
                let item = QueuedUrl {
                    url: format!("http://{host}/{i}/{j}"),
                    via: Some(format!("http://{host}/")),
                    hops: "L".repeat((j % 4) as usize),
                    attempts: u8::from(j == 1),
                };
                w.append(&host, &item).unwrap();
            }
            w.sync().unwrap();
            total += n;
            fs::write(
                tmp.join(format!("tallies-{i:04}.tsv")),
                format!("h{i}.test\t5\t0\t0\nbad{i}.test\t1\t9\t1\n"),
            )
            .unwrap();
            write_robots(&tmp.join(format!("robots-{i:04}.bin")), i);
        }
        let seen = SeenSet::create(root.join("live-seen"), 10_000, 1e-3).unwrap();
        for j in 0..100u32 {
            seen.test_and_set(&j.to_le_bytes());
        }
        seen.snapshot_to(tmp.join(SEEN_BITS)).unwrap();
        let fps = SeenSet::create(root.join("live-fp"), 1_000, 1e-3).unwrap();
        fps.snapshot_to(tmp.join(FINGERPRINT_BITS)).unwrap();
        drop((seen, fps));
        let _ = fs::remove_file(root.join("live-seen"));
        let _ = fs::remove_file(root.join("live-fp"));
        let manifest = Manifest {
            version: MANIFEST_VERSION,
            epoch,
            unix_time: 1_763_820_000,
            shards: urls.len(),
            seeds: vec!["http://h0.test/".into()],
            counters: Counters {
                pages: 7,
                ..Counters::default()
            },
            positions: Positions::default(),
            queued_urls: total,
            config: None,
            presence: None,
        };
        commit(root, &tmp, &manifest).unwrap()
    }

    #[test]
    fn a_sound_checkpoint_is_described_and_verified() {
        let out = tempfile::tempdir().unwrap();
        let root = out.path().join("checkpoint");
        write_checkpoint(&root, 3, &[10, 4]);
        fs::write(out.path().join("crawl.log.jsonl"), b"").unwrap();
        let cp = Checkpoint::open(out.path()).unwrap();
        assert!(cp.is_current());
        assert_eq!(cp.out_dir(), Some(out.path()));
        let d = cp.describe(&DescribeOptions::default());
        assert!(d.verification.ok, "{:?}", d.verification);
        assert_eq!(d.name, "cp-000003");
        assert_eq!(d.taken_at, "2025-11-22T14:00:00Z");
        assert_eq!(d.frontier.urls, 14);
        assert_eq!(d.frontier.shards[0].urls, 10);
        assert_eq!(d.frontier.shards[1].urls, 4);
        assert_eq!(d.frontier.hosts, 3);
        assert_eq!(
            d.frontier.top_hosts[0],
            HostCount {
                host: "h0.test".into(),
                urls: 4 + 2
            }
        );
        assert_eq!(d.frontier.seeds_queued, 3 + 1);
        assert_eq!(d.frontier.retrying, 2);
        assert_eq!(d.frontier.max_hops, 3);
        assert_eq!(d.tallies.hosts, 4);
        assert_eq!(d.tallies.pages, 12);
        assert_eq!(d.tallies.parked, 2);
        assert_eq!(d.robots.files, 2);
        assert_eq!(d.robots.hosts, 4);
        assert_eq!(d.robots.ready, 2);
        assert_eq!(d.robots.parsed, 2);
        assert_eq!(d.robots.rules, 4);
        assert_eq!(d.robots.unreachable, 2);
        assert_eq!(d.robots.expired, 0);
        assert_eq!(d.robots.damaged, 0);
        assert!(
            d.verification.warnings.is_empty(),
            "{:?}",
            d.verification.warnings
        );
        let seen = d.seen.unwrap();
        assert_eq!(seen.inserted, 100);
        assert!(seen.fill_ratio > 0.0 && seen.expected_fp > 0.0);
        // The same answer from the checkpoint/ and cp- directories.
        let via_root = Checkpoint::open(&root)
            .unwrap()
            .describe(&DescribeOptions::default());
        assert_eq!(via_root.frontier.urls, 14);
        let via_dir = Checkpoint::open(&root.join("cp-000003")).unwrap();
        assert!(via_dir.is_current());
    }

    #[test]
    fn every_flipped_segment_byte_past_the_header_is_reported_with_its_file() {
        let out = tempfile::tempdir().unwrap();
        let root = out.path().join("checkpoint");
        let dir = write_checkpoint(&root, 1, &[3]);
        let seg = dir.join("frontier-0000.seg");
        let good = fs::read(&seg).unwrap();
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0x40;
            fs::write(&seg, &bad).unwrap();
            let d = Checkpoint::open(&root)
                .unwrap()
                .describe(&DescribeOptions::default());
            assert!(!d.verification.ok, "flip at byte {i} not detected");
            assert!(
                d.verification.errors.iter().any(|p| p.file == seg),
                "flip at {i}: {:?}",
                d.verification.errors
            );
        }
        // A torn tail: truncated, with the offset of the torn record.
        fs::write(&seg, &good[..good.len() - 2]).unwrap();
        let d = Checkpoint::open(&root)
            .unwrap()
            .describe(&DescribeOptions::default());
        let p = d
            .verification
            .errors
            .iter()
            .find(|p| p.file == seg)
            .unwrap();
        assert!(p.message.contains("truncated"), "{p}");
        assert!(p.offset.is_some_and(|o| o >= 12), "{p}");
    }

    #[test]
    fn damaged_robots_files_are_errors_and_missing_ones_warnings() {
        let out = tempfile::tempdir().unwrap();
        let root = out.path().join("checkpoint");
        let dir = write_checkpoint(&root, 1, &[3, 3]);
        let file = dir.join("robots-0001.bin");
        let mut bytes = fs::read(&file).unwrap();
        let at = bytes.len() - 20; // inside the last entry
        bytes[at] ^= 0x40;
        fs::write(&file, &bytes).unwrap();
        fs::remove_file(dir.join("robots-0000.bin")).unwrap();
        let d = Checkpoint::open(&dir)
            .unwrap()
            .describe(&DescribeOptions::default());
        assert!(!d.verification.ok);
        assert!(d
            .verification
            .errors
            .iter()
            .any(|e| e.file == file && e.offset.is_some() && e.message.contains("checksum")));
        assert!(d
            .verification
            .warnings
            .iter()
            .any(|w| w.file.ends_with("robots-0000.bin") && w.message.contains("missing")));
        assert_eq!(d.robots.files, 1);
        assert_eq!(d.robots.hosts, 1);
        assert_eq!(d.robots.damaged, 1);
        // Truncated: an error too.
        fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
        let d = Checkpoint::open(&dir)
            .unwrap()
            .describe(&DescribeOptions::default());
        assert!(d
            .verification
            .errors
            .iter()
            .any(|e| e.file == file && e.message.contains("truncated")));
    }

    #[test]
    fn missing_files_and_count_mismatches_are_errors() {
        let out = tempfile::tempdir().unwrap();
        let root = out.path().join("checkpoint");
        let dir = write_checkpoint(&root, 1, &[2, 2]);
        fs::remove_file(dir.join("frontier-0001.seg")).unwrap();
        fs::remove_file(dir.join(FINGERPRINT_BITS)).unwrap();
        fs::write(dir.join("tallies-0000.tsv"), b"only-a-host\n").unwrap();
        fs::write(dir.join("frontier-0009.seg"), b"stray").unwrap();
        let d = Checkpoint::open(&root)
            .unwrap()
            .describe(&DescribeOptions::default());
        let errs: Vec<String> = d
            .verification
            .errors
            .iter()
            .map(|p| p.to_string())
            .collect();
        assert!(!d.verification.ok);
        assert!(
            errs.iter()
                .any(|e| e.contains("frontier-0001.seg") && e.contains("missing")),
            "{errs:?}"
        );
        assert!(
            errs.iter().any(|e| e.contains(FINGERPRINT_BITS)),
            "{errs:?}"
        );
        assert!(
            errs.iter()
                .any(|e| e.contains("tallies-0000.tsv") && e.contains("line 1")),
            "{errs:?}"
        );
        assert!(
            errs.iter()
                .any(|e| e.contains("records 4 queued URLs") && e.contains("hold 2")),
            "{errs:?}"
        );
        assert!(d
            .verification
            .warnings
            .iter()
            .any(|p| p.file.ends_with("frontier-0009.seg")));
    }

    #[test]
    fn an_implausible_shard_count_is_an_error_not_a_long_loop() {
        let out = tempfile::tempdir().unwrap();
        let root = out.path().join("checkpoint");
        let dir = write_checkpoint(&root, 1, &[1]);
        let path = dir.join(MANIFEST);
        let mut m: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        m["shards"] = serde_json::json!(u64::MAX);
        fs::write(&path, serde_json::to_vec(&m).unwrap()).unwrap();
        let d = Checkpoint::open(&root)
            .unwrap()
            .describe(&DescribeOptions::default());
        assert!(!d.verification.ok);
        assert!(d
            .verification
            .errors
            .iter()
            .any(|p| p.message.contains("plausible")));
        assert_eq!(d.frontier.shards.len(), MAX_SHARDS);
    }

    #[test]
    fn flipped_presence_bits_are_errors() {
        let out = tempfile::tempdir().unwrap();
        let root = out.path().join("checkpoint");
        let dir = write_checkpoint(&root, 1, &[1]);
        let path = dir.join(SEEN_BITS);
        let mut bytes = fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        fs::write(&path, &bytes).unwrap();
        let d = Checkpoint::open(&root)
            .unwrap()
            .describe(&DescribeOptions::default());
        assert!(d.seen.is_none());
        assert!(d.verification.errors.iter().any(|p| p.file == path));
    }

    #[test]
    fn not_a_checkpoint_and_garbled_manifests_are_typed_errors() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            Checkpoint::open(dir.path()),
            Err(CheckpointError::NotACheckpoint(_))
        ));
        assert!(matches!(
            Checkpoint::open(&dir.path().join("absent")),
            Err(CheckpointError::NotACheckpoint(_))
        ));
        let root = dir.path().join("checkpoint");
        fs::create_dir(&root).unwrap();
        assert!(matches!(
            Checkpoint::open(dir.path()),
            Err(CheckpointError::NoCheckpoint(_))
        ));
        let cp = write_checkpoint(&root, 2, &[1]);
        fs::write(cp.join(MANIFEST), b"{\"version\": 1, \"epoch\": ").unwrap();
        assert!(matches!(
            Checkpoint::open(dir.path()),
            Err(CheckpointError::BadManifest { .. })
        ));
        fs::write(cp.join(MANIFEST), [0xff, 0xfe, 0x00]).unwrap();
        assert!(matches!(
            Checkpoint::open(&cp),
            Err(CheckpointError::BadManifest { .. })
        ));
    }

    #[test]
    fn stray_directories_are_listed_by_kind() {
        let out = tempfile::tempdir().unwrap();
        let root = out.path().join("checkpoint");
        write_checkpoint(&root, 4, &[1]);
        fs::create_dir(root.join("tmp-000005")).unwrap();
        let d = Checkpoint::open(&root)
            .unwrap()
            .describe(&DescribeOptions::default());
        let kinds: Vec<_> = d
            .entries
            .iter()
            .map(|e| (e.name.as_str(), e.kind))
            .collect();
        assert_eq!(
            kinds,
            [
                ("cp-000004", CheckpointEntryKind::Current),
                ("tmp-000005", CheckpointEntryKind::Unfinished)
            ]
        );
    }
}
