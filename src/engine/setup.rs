//! Crawl start-up: the start file, the discard of a run that died before its first
//! checkpoint, the robots cache of a resumed checkpoint, and the presence-bit sizing.

use std::fs;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::checkpoint;

use super::{shard, CrawlConfig, CrawlError, Shared};

/// Records the seeds and settings in `OUT/start.json` before anything is fetched (see
/// `checkpoint::start`), so a crawl killed before its first checkpoint can be resumed.
/// A resume rewrites it with the seeds and settings it runs with (the recorded flags
/// stay when the resume brings none: library users).
pub(super) fn write_start(
    config: &CrawlConfig,
    previous: Option<&checkpoint::start::StartRecord>,
) -> Result<(), CrawlError> {
    let args = match previous {
        Some(p) if config.start_args.is_empty() => p.args.clone(),
        _ => config.start_args.clone(),
    };
    let record = checkpoint::start::StartRecord {
        version: checkpoint::start::START_VERSION,
        unix_time: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        seeds: config.seeds.clone(),
        args,
        config: checkpoint::RecordedConfig::of(config),
        trawl_version: crate::VERSION.to_owned(),
    };
    checkpoint::start::write(&config.out_dir, &record).map_err(CrawlError::from)
}

/// Empties the crawl log and removes trawl's WARC files: the output of a run that died
/// before its first checkpoint, which a restart from the seeds writes again.
pub(super) fn discard_uncheckpointed_output(log: &Path, warc_dir: &Path) -> Result<(), CrawlError> {
    if log.exists() {
        fs::write(log, b"").map_err(CrawlError::io("empty", log))?;
    }
    let Ok(entries) = fs::read_dir(warc_dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("trawl-") && name.contains(".warc") {
            fs::remove_file(entry.path()).map_err(CrawlError::io("remove", entry.path()))?;
        }
    }
    Ok(())
}

/// The robots cache entries of a checkpoint (`robots-NNNN.bin`), routed to their
/// shards by host key, least recently used first. Never fails: the robots cache is a
/// cache (see `robots::persist::load_dir`).
pub(super) fn load_robots(
    dir: &Path,
    shards: usize,
    config: &crate::robots::PolicyConfig,
) -> Vec<Vec<(crate::robots::HostKey, crate::robots::RobotsPolicy)>> {
    let mut out: Vec<Vec<_>> = (0..shards).map(|_| Vec::new()).collect();
    let loaded =
        crate::robots::persist::load_dir(dir, config, crate::robots::persist::Clock::now());
    tracing::info!(
        hosts = loaded.entries.len(),
        files = loaded.files,
        ignored_files = loaded.ignored_files,
        damaged_records = loaded.damaged,
        "robots cache restored from the checkpoint"
    );
    for (key, policy) in loaded.entries {
        if let Some(v) = out.get_mut(shard::shard_of(key.as_str(), shards)) {
            v.push((key, policy));
        }
    }
    out
}

/// Logs, at crawl start, what the presence bits cost and what they lose at capacity:
/// the two figures `--seen-capacity` and `--seen-fp` trade (`docs/seen.md`).
pub(super) fn log_presence_sizing(shared: &Shared) {
    use crate::seen::model;
    let s = shared.seen.stats();
    let f = shared.fingerprints.stats();
    let blocks = s.bits / model::BLOCK_BITS;
    let fp = model::false_positive_rate(s.capacity as f64, blocks, s.k);
    let lost = model::expected_lost(s.capacity as f64, blocks, s.k);
    let mib = |bits: u64| bits as f64 / 8.0 / f64::from(1u32 << 20);
    let line = format!(
        "presence bits: {:.1} MiB for {} URLs (k {}), fp {fp:.2e} and {lost:.2} URLs lost \
         in expectation at that capacity; content fingerprints {:.1} MiB; resident memory \
         grows with the URLs seen",
        mib(s.bits),
        s.capacity,
        s.k,
        mib(f.bits),
    );
    tracing::info!(
        capacity = s.capacity,
        bits_bytes = s.bits / 8,
        fingerprint_bits_bytes = f.bits / 8,
        k = s.k,
        fp_at_capacity = fp,
        lost_urls_at_capacity = lost,
        "{line}"
    );
    // Logs default to warnings only: say it where the operator looks, beside progress.
    if !shared.config.progress_interval.is_zero() {
        eprintln!("trawl: {line}");
    }
}
