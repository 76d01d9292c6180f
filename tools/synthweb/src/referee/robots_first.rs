//! robots.txt first: no origin is crawled before its `/robots.txt` was answered.

use std::collections::{HashMap, HashSet};

use crate::formats::{self, LogLine, Manifest};

use super::len_u64;
use super::politeness::END_STAMP_SLACK_US;
use super::report::Report;

/// The request-target that is `/robots.txt` for its origin.
const ROBOTS_TARGET: &str = "/robots.txt";

/// The request-targets that are robots files: `/robots.txt` plus the targets of
/// robots.txt redirects the manifest names in its `robots_files=` header parameter
/// (comma-separated). Fetching these is part of obeying robots: they are never
/// duplicates, never "other paths" for the robots-first rule, and not in M or F.
pub(super) fn robots_files(manifest: &Manifest) -> HashSet<&str> {
    let mut files: HashSet<&str> = manifest
        .header
        .params
        .get(formats::ROBOTS_FILES_PARAM)
        .map(|list| list.split(',').filter(|s| !s.is_empty()).collect())
        .unwrap_or_default();
    files.insert(ROBOTS_TARGET);
    files
}

pub(super) fn check_robots_first(order: &[&LogLine], manifest: &Manifest, report: &mut Report) {
    let robots_files = robots_files(manifest);
    /// Per origin: when its first robots.txt answer completed, and its first other
    /// request started.
    #[derive(Default)]
    struct Origin {
        robots_done_us: Option<u64>,
        first_other: Option<(u64, String)>,
    }
    let mut origins: HashMap<String, Origin> = HashMap::new();
    for line in order {
        if line.host.is_empty() {
            continue; // reported as missing Host; there is no origin to judge.
        }
        let origin = origins.entry(line.origin()).or_default();
        if line.target == ROBOTS_TARGET {
            let done = origin
                .robots_done_us
                .map_or(line.end_us, |d| d.min(line.end_us));
            origin.robots_done_us = Some(done);
        } else if origin.first_other.is_none() && !robots_files.contains(line.target.as_str()) {
            origin.first_other = Some((line.t_us, line.target.clone()));
        }
    }
    report.origins = len_u64(origins.len());
    let mut bad: Vec<String> = origins
        .into_iter()
        .filter_map(|(name, origin)| {
            let (start, target) = origin.first_other?;
            match origin.robots_done_us {
                None => Some(format!("{name}: {target} requested, robots.txt never")),
                // The server stamps a response's end after its last write and its
                // bookkeeping, so a client may have the whole answer (and ask its
                // next URL) before that stamp: the same slack as for overlaps.
                Some(done) if done > start + END_STAMP_SLACK_US => Some(format!(
                    "{name}: {target} requested before robots.txt was answered"
                )),
                Some(_) => None,
            }
        })
        .collect();
    bad.sort();
    for entry in bad {
        report.robots_not_first.push(|| entry);
    }
}
