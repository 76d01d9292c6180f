//! Reading a checkpoint without changing it: the figures `trawl inspect` prints and a
//! verification of every file, as a library API so an embedder can check a crawl's
//! state before resuming it (or from a monitoring job).
//!
//! The checkpoint's files are the ones its manifest lists, each with its kind
//! ([`crate::checkpoint::FileKind`]); for a manifest of an older build, which lists
//! none, the names the checkpoint module knows and [`OTHER_FILES`] stand in. Only
//! this module (and the writer, which fills the list) names the files a farm and the
//! control API write into a checkpoint; `checkpoint` itself knows neither.
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

use serde::Deserialize;

use crate::checkpoint::{
    current_name, list_files, read_manifest, tallies, CheckpointError, CheckpointFile, FileKind,
    Manifest, FINGERPRINT_BITS, MANIFEST_FILE as MANIFEST, MAX_SHARDS, SEEN_BITS,
};
use crate::frontier::{kept, Record, SegmentError, SegmentReader};
use crate::provenance::WarcDate;
use crate::seen::SeenSet;
use crate::warc::WarcPosition;

mod report;
mod robots;
pub use report::{
    CheckpointEntry, CheckpointEntryKind, Description, FrontierReport, HostCount, LogReport,
    PositionsReport, PresenceReport, Problem, RobotsReport, ShardFrontier, TallyReport,
    Verification,
};

/// The files other modules write into a checkpoint, by name: a farm node's settings
/// and outbox, the operator's rules. The crawl lists them in the manifest under their
/// kind ([`crate::checkpoint::list_files`]); a reader of a checkpoint whose manifest
/// lists no files falls back to these names.
pub const OTHER_FILES: [(&str, FileKind); 3] = [
    (crate::farm::SETTINGS_FILE, FileKind::FarmSettings),
    (crate::farm::OUTBOX_FILE, FileKind::FarmOutbox),
    (crate::control::RULES_FILE, FileKind::OperatorRules),
];

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

    /// The checkpoint's files: the manifest's list, or for a manifest of an older build
    /// (no list) the files of the directory that the known names make out.
    fn files(&self) -> Vec<CheckpointFile> {
        match &self.manifest.files {
            Some(files) => files.clone(),
            None => list_files(&self.dir, self.shards(), &OTHER_FILES).unwrap_or_default(),
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
        let files = self.files();
        let kind_of = |name: &str| files.iter().find(|f| f.name == name).map(|f| f.kind);
        let mut present = HashSet::new();
        for entry in list.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            match kind_of(&name) {
                // In a farm: the links the node had not sent, verified record by record.
                Some(FileKind::FarmOutbox) => {
                    if let Err(e) = crate::farm::outbox_links(&entry.path()) {
                        v.errors.push(problem(&entry.path(), e.to_string()));
                    }
                }
                Some(_) => {}
                None if name == MANIFEST => {}
                None if m.files.is_some() => v.warnings.push(problem(
                    &entry.path(),
                    "not listed in the manifest; a resume ignores it".to_owned(),
                )),
                None => v.warnings.push(problem(
                    &entry.path(),
                    format!(
                        "not part of a checkpoint of {} shard(s); a resume ignores it",
                        m.shards
                    ),
                )),
            }
            present.insert(name);
        }
        // The files no other check reads (those are reported missing where read).
        for f in &files {
            let read_elsewhere = !matches!(
                f.kind,
                FileKind::FarmSettings | FileKind::FarmOutbox | FileKind::OperatorRules
            );
            if !read_elsewhere && !present.contains(&f.name) {
                v.errors.push(problem(
                    &self.dir.join(&f.name),
                    "missing: the manifest lists it".to_owned(),
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
            if self.tallies_file(i).is_none() {
                let tallies = self.dir.join(tallies::file_name(i));
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
            let mut take = |sf: &mut ShardFrontier, rec: Record| {
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
                if shard_hosts.len() < opts.max_hosts_tracked && !shard_hosts.contains(&rec.host) {
                    shard_hosts.insert(rec.host);
                }
            };
            loop {
                match reader.next_record() {
                    Ok(Some(rec)) => take(&mut sf, rec),
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
            // The line's blocks the checkpoint kept by reference (`frontier::kept`).
            let list = self.dir.join(kept::line_file_name(shard));
            match kept::read_refs(&list) {
                Ok(refs) => {
                    v.files_checked += u64::from(!refs.is_empty());
                    let mut buf = Vec::new();
                    for r in &refs {
                        match kept::read_block(&self.dir, r, &mut buf) {
                            Ok(records) => {
                                v.bytes_checked += u64::from(r.len);
                                for rec in records.into_iter().filter(|r| !r.item.url.is_empty()) {
                                    take(&mut sf, rec);
                                }
                            }
                            Err(e) => v
                                .errors
                                .push(problem(&self.dir.join(&r.file), e.to_string())),
                        }
                    }
                }
                Err(e) => v.errors.push(problem(&list, e.to_string())),
            }
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

    /// Shard `shard`'s tallies file: `tallies-NNNN.bin`, or the `.tsv` of an older
    /// build; `None` if there is neither.
    fn tallies_file(&self, shard: usize) -> Option<PathBuf> {
        [tallies::file_name(shard), tallies::legacy_file_name(shard)]
            .into_iter()
            .map(|name| self.dir.join(name))
            .find(|p| p.is_file())
    }

    /// Reads every shard's tallies file through, checksums included.
    fn tallies(&self, v: &mut Verification) -> TallyReport {
        let mut report = TallyReport::default();
        for shard in 0..self.shards() {
            let Some(file) = self.tallies_file(shard) else {
                continue; // reported as missing by check_names
            };
            v.files_checked += 1;
            let rows = match tallies::read_file(&file) {
                Ok((rows, bytes)) => {
                    v.bytes_checked += bytes;
                    rows
                }
                Err(CheckpointError::Damaged { detail, .. }) => {
                    v.errors.push(problem(&file, detail));
                    continue;
                }
                Err(e) => {
                    v.errors.push(problem(&file, e.to_string()));
                    continue;
                }
            };
            for row in rows {
                report.hosts += 1;
                report.pages += row.pages;
                report.parked += u64::from(row.parked);
                report.failing += u64::from(row.consecutive_failures > 0);
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
mod tests;
