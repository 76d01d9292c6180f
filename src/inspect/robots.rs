//! Describing a checkpoint's robots cache: each shard's `robots-NNNN.bin`, and the
//! disk tier's log files it names (`robots-NNNN-tier-NNNNNN.log`, kept with the
//! checkpoint as hard links; `robots::dump`).

use std::path::Path;
use std::time::SystemTime;

use super::{problem, Checkpoint, Problem, RobotsReport, Verification};
use crate::robots::persist::{StoredEntry, TierFiles};

impl Checkpoint {
    /// Reads every `robots-NNNN.bin` through, checksums included. A missing file is a
    /// warning (older builds wrote none; a resume refetches those hosts' robots.txt);
    /// damage is an error, although a resume skips the damaged entries and goes on.
    pub(super) fn robots(&self, v: &mut Verification) -> RobotsReport {
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
            let contents = match crate::robots::dump::read_file(&file) {
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
            let mut tier_entries = Vec::new();
            if let Some(tier) = &contents.tier {
                tier_entries = self.robots_tier(&file, tier, &mut report, v);
                // A host in RAM at the cut is in the file too: that entry wins.
                let in_file: std::collections::HashSet<&crate::routing::HostKey> =
                    contents.entries.iter().map(|e| &e.key).collect();
                tier_entries.retain(|e| !in_file.contains(&e.key));
            }
            for e in tier_entries.iter().chain(&contents.entries) {
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

    /// The disk tier's logs a robots file names: read through up to their recorded
    /// lengths, checksums included. Their hosts are counted (the latest entry of each)
    /// with the file's own; a missing or damaged log is an error (a resume refetches
    /// those hosts' robots.txt).
    fn robots_tier(
        &self,
        file: &Path,
        tier: &TierFiles,
        report: &mut RobotsReport,
        v: &mut Verification,
    ) -> Vec<StoredEntry> {
        let dir = file.parent().unwrap_or(Path::new("."));
        // The latest entry of each host (the logs hold a host again after it came
        // back into RAM and left it again).
        let mut latest: std::collections::HashMap<crate::routing::HostKey, StoredEntry> =
            std::collections::HashMap::new();
        let read = crate::robots::dump::read_tier(dir, tier, |e| {
            latest.insert(e.key.clone(), e);
        });
        report.tier_files += read.files;
        report.tier_bytes += read.bytes;
        report.tier_records += read.entries;
        v.files_checked += read.files;
        v.bytes_checked += read.bytes;
        for (path, d) in read.damage {
            report.damaged += 1;
            v.errors.push(Problem {
                file: path,
                offset: Some(d.offset),
                message: d.message,
            });
        }
        latest.into_values().collect()
    }
}
