//! Crawl start-up ([`prepare`]): the output directory and start file, the discard of
//! a run that died before its first checkpoint, presence bits, the output thread, the
//! shared state, and the frontiers, tallies and robots caches filled from the seeds or
//! the checkpoint resumed.

mod previous;

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use url::Url;

use crate::checkpoint::{self, Manifest, PresenceLogs};
use crate::fetch::FetchLimits;
use crate::frontier::{Frontier, FrontierConfig, QueuedUrl, SegmentReader};
use crate::robots::RobotsCache;
use crate::seen::{ContentSeen, Purpose, SeenConfig, SeenSet};
use crate::url::UrlFilter;
use crate::warc::{WarcWriterConfig, WarcinfoFields};

use super::core::Counter;
use super::core::{CoreSettings, CoreShared};
use super::output::OutputThread;
use super::shard::{self, HostTally};
use super::{CrawlConfig, CrawlError, Handler, Shared};

/// Records the seeds and settings in `OUT/start.json` before anything is fetched (see
/// `checkpoint::start`), so a crawl killed before its first checkpoint can be resumed.
/// A resume rewrites it with the seeds and settings it runs with (the recorded flags
/// stay when the resume brings none: library users).
fn write_start(
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
fn discard_uncheckpointed_output(log: &Path, warc_dir: &Path) -> Result<(), CrawlError> {
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

/// The robots cache entries of a checkpoint (`robots-NNNN.bin`), each put into the
/// cache of the shard that owns its host as it is read, least recently used first.
/// Never fails: the robots cache is a cache (see `robots::dump::load_dir_into`).
fn load_robots(dir: &Path, shared: &super::core::CoreShared, caches: &mut [RobotsCache]) {
    let shards = caches.len();
    let loaded = crate::robots::dump::load_dir_into(
        dir,
        &shared.settings.robots,
        crate::robots::persist::Clock::now(),
        |key, policy| {
            let shard = crate::routing::shard_of(key.as_str(), shards);
            if let Some(cache) = caches.get_mut(shard) {
                super::core::restore_robots(shared, cache, key, policy);
            }
        },
    );
    tracing::info!(
        hosts = loaded.entries,
        files = loaded.files,
        ignored_files = loaded.ignored_files,
        damaged_records = loaded.damaged,
        "robots cache restored from the checkpoint"
    );
}

/// Logs, at crawl start, what the presence bits cost and what they lose at capacity:
/// the two figures `--seen-capacity` and `--seen-fp` trade (`docs/seen.md`).
fn log_presence_sizing(shared: &Shared) {
    use crate::seen::model;
    let s = shared.core.memory.seen.stats();
    let f = shared.core.memory.fingerprints.stats();
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

/// Everything a crawl starts from: the shared state, the output thread, and each
/// shard's frontier, tallies and robots cache, filled from the seeds or a checkpoint.
pub(super) struct Prepared {
    pub out: PathBuf,
    pub cp_root: PathBuf,
    pub shared: Arc<Shared>,
    pub output: OutputThread,
    pub filter: Arc<UrlFilter>,
    pub frontiers: Vec<Frontier>,
    pub tallies: Vec<HashMap<String, HostTally>>,
    pub robots: Vec<RobotsCache>,
    /// The epoch resumed from, if any (`stats.json`).
    pub resumed_epoch: Option<u64>,
    /// The last checkpoint's epoch (0 on a fresh crawl).
    pub epoch: u64,
    /// The committed checkpoint the next one appends its presence logs to.
    pub last_cp: Option<(PathBuf, PresenceLogs)>,
    /// The farm bus's ends, taken when the bus starts; `None` outside a farm.
    pub farm_ends: Option<crate::farm::BusEnds>,
}

/// The checkpoint a resume starts from: its directory and manifest.
type Resumed = Option<(PathBuf, Manifest)>;

/// Sets a crawl up: the output directory (refused if another crawl used it, unless
/// resuming), the start file, presence bits, output thread, URL filter, shared state,
/// and the frontiers filled from the seeds or the checkpoint resumed.
pub(super) fn prepare(
    mut config: CrawlConfig,
    handler: Option<Arc<dyn Handler>>,
    resume: bool,
    farm: Option<crate::farm::FarmConfig>,
    operator: Arc<super::control::Operator>,
) -> Result<Prepared, CrawlError> {
    let out = config.out_dir.clone();
    let cp_root = out.join("checkpoint");
    // A re-crawl's previous index first: a damaged one leaves no output behind.
    let mut previous = previous::load(&config)?;
    let resumed = open_run(&mut config, resume)?;
    previous::record_previous(&config)?;
    let (seen, fingerprints) = open_presence(&config, resumed.as_ref())?;
    // The status page's board follows what the output writes. (What an operator sets
    // through the control API, `operator`, is the builder's: a `CrawlHandle` reaches
    // it before the run starts.)
    let board = Arc::default();
    let output = open_output(&config, resumed.as_ref(), Arc::clone(&board))?;
    // URL filter scope from the seeds.
    let seed_urls: Vec<Url> = config
        .seeds
        .iter()
        .filter_map(|s| crate::url::canonicalize_absolute(s).ok())
        .collect();
    // A re-crawl's hosts join the scope, not the seeds: their URLs are queued with
    // their hop paths and referrers by `queue_previous`.
    let mut scope_urls = seed_urls.clone();
    previous::add_scope(previous.as_mut(), &mut scope_urls);
    let filter = Arc::new(UrlFilter::new(config.filter.clone(), &scope_urls)?);
    let mut limits = FetchLimits::default();
    limits.response.max_body_bytes = limits.response.max_body_bytes.min(8 << 20);
    // Farm: this node's link, and on a resume the links its checkpoint still owed
    // other nodes (`farm-outbox.bin`), sent again when the bus starts.
    let (farm_link, farm_ends) = match farm {
        Some(mut f) => {
            f.egress = crate::net::egress::book::fingerprint(
                config.fetcher.egress.as_deref(),
                config.fetcher.bind.iter().count(),
            );
            let (link, mut ends) = crate::farm::FarmLink::new(f).map_err(CrawlError::Config)?;
            if let Some((dir, _)) = &resumed {
                link.check_resume(dir, &mut ends)
                    .map_err(CrawlError::Config)?;
            }
            (Some(Arc::new(link)), Some(ends))
        }
        None => (None, None),
    };
    let core = CoreShared::new(
        CoreSettings::from(&config),
        limits,
        seen,
        fingerprints,
        handler,
        std::time::Instant::now(),
    )
    .with_previous(previous)
    .with_farm_routes(
        farm_link
            .clone()
            .map(|l| l as Arc<dyn crate::routing::FarmRoutes>),
    )
    .with_operator_rules(Arc::clone(&operator.rules));
    let shared = Arc::new(Shared::new(
        config,
        core,
        farm_link,
        operator,
        board,
        Arc::clone(&output.revisits),
    ));
    log_presence_sizing(&shared);
    let mut frontiers = new_frontiers(&shared.config, previous_table_bytes(&shared))?;
    let n = shared.config.shards;
    let mut prepared = Prepared {
        out,
        cp_root,
        shared: Arc::clone(&shared),
        output,
        filter,
        frontiers: Vec::new(),
        tallies: (0..n).map(|_| HashMap::new()).collect(),
        robots: (0..n)
            .map(|i| super::core::robots_cache(&shared.core.settings, i))
            .collect(),
        resumed_epoch: None,
        epoch: 0,
        last_cp: None,
        farm_ends,
    };
    match &resumed {
        Some((dir, m)) => {
            shared.restore_counters(&m.counters);
            shared
                .operator
                .restore_rules(dir)
                .map_err(CrawlError::Config)?;
            prepared.resumed_epoch = Some(m.epoch);
            prepared.epoch = m.epoch;
            prepared.last_cp = m.presence.map(|p| (dir.clone(), p));
            prepared.tallies = shard::load_tallies(dir, n)?;
            load_robots(dir, &shared.core, &mut prepared.robots);
            refill_frontiers(&shared, dir, &mut frontiers)?;
        }
        None => {
            super::core::queue_operator_sitemaps(
                &shared.config.sitemaps,
                &shared.core,
                &mut frontiers,
                Instant::now(),
            )?;
            seed_frontiers(&shared, &seed_urls, &mut frontiers)?;
            previous::queue_previous(&shared, &mut frontiers)?;
        }
    }
    prepared.frontiers = frontiers;
    Ok(prepared)
}

/// Prepares the output directory and finds the checkpoint to resume: a fresh crawl
/// refuses a directory another crawl used; a resume takes its seeds from the start
/// file when none are given, and one killed before its first checkpoint starts again
/// from the seeds with its output discarded. Writes the start file.
fn open_run(config: &mut CrawlConfig, resume: bool) -> Result<Resumed, CrawlError> {
    let out = config.out_dir.clone();
    fs::create_dir_all(&out).map_err(CrawlError::io("create", &out))?;
    let cp_root = out.join("checkpoint");
    let log_path = out.join("crawl.log.jsonl");
    let warc_dir = out.join("warc");
    let started_with = if resume {
        checkpoint::start::read(&out)?
    } else {
        None
    };
    if config.seeds.is_empty() {
        // The seeds of a resume come from the start file when not given again: they
        // set the scope, and a crawl killed before its first checkpoint restarts from
        // them.
        if let Some(start) = &started_with {
            config.seeds.clone_from(&start.seeds);
        }
    }
    let resumed = if resume {
        match checkpoint::load_current(&cp_root) {
            Ok(found) => Some(found),
            Err(checkpoint::CheckpointError::NoCheckpoint(_)) => {
                // Killed before its first checkpoint: nothing of that run is covered by
                // a cut, so it starts again from the seeds, and its output (the log and
                // WARC records of fetches that will be redone) is discarded, just as a
                // resume cuts both back to the checkpoint's positions.
                if config.seeds.is_empty() {
                    return Err(CrawlError::NothingToResume { root: cp_root });
                }
                tracing::warn!(out = %out.display(), "no checkpoint to resume: starting again from the seeds");
                discard_uncheckpointed_output(&log_path, &warc_dir)?;
                None
            }
            Err(e) => return Err(e.into()),
        }
    } else {
        let log_used = fs::metadata(&log_path).is_ok_and(|m| m.len() > 0);
        let started = checkpoint::start::start_path(&out).exists();
        if cp_root.join("CURRENT").exists() || log_used || started {
            return Err(CrawlError::OutputInUse { out });
        }
        None
    };
    write_start(config, started_with.as_ref())?;
    Ok(resumed)
}

/// The presence bits and content fingerprints: new, or restored from the checkpoint
/// (its presence logs, or the whole bit files of an older checkpoint).
fn open_presence(
    config: &CrawlConfig,
    resumed: Option<&(PathBuf, Manifest)>,
) -> Result<(SeenSet, ContentSeen), CrawlError> {
    let out = &config.out_dir;
    let seen_path = out.join("seen.bits");
    let fp_path = out.join("fingerprints.bits");
    Ok(match resumed {
        Some((dir, m)) if m.presence.is_some() => {
            let logs = m.presence.unwrap_or(PresenceLogs {
                seen_bytes: 0,
                fingerprints_bytes: 0,
            });
            let seen = SeenSet::restore_log(
                &logs.seen(dir),
                &seen_path,
                config.seen_backing,
                Some(Purpose::Urls),
            )?;
            let fps =
                ContentSeen::restore_log(&logs.fingerprints(dir), &fp_path, config.seen_backing)?;
            (seen, fps)
        }
        Some((dir, _)) => {
            let seen =
                SeenSet::restore_backed(dir.join("seen.bits"), &seen_path, config.seen_backing)?;
            let from = dir.join("fingerprints.bits");
            fs::copy(&from, &fp_path).map_err(CrawlError::io("copy", from))?;
            (
                seen,
                ContentSeen::open_backed(&fp_path, config.seen_backing)?,
            )
        }
        None => {
            let _ = fs::remove_file(&seen_path);
            let _ = fs::remove_file(&fp_path);
            let seen_config = SeenConfig {
                backing: config.seen_backing,
                ..SeenConfig::new(config.seen_capacity, config.seen_fp)
            };
            let seen = SeenSet::create_with(&seen_path, &seen_config)?;
            let fps = ContentSeen::create_backed(
                &fp_path,
                config.seen_capacity / 4 + 1024,
                config.seen_fp,
                config.seen_backing,
            )?;
            (seen, fps)
        }
    })
}

/// The output thread (crawl log and WARC writer), its files first repaired to the
/// checkpoint's positions on a resume.
fn open_output(
    config: &CrawlConfig,
    resumed: Option<&(PathBuf, Manifest)>,
    board: Arc<super::observe::board::Board>,
) -> Result<OutputThread, CrawlError> {
    let log_path = config.out_dir.join("crawl.log.jsonl");
    let warc_dir = config.out_dir.join("warc");
    if let Some((_, m)) = resumed {
        crate::crawllog::repair(&log_path, Some(m.positions.crawl_log_bytes))?;
        if let Some((file, offset)) = &m.positions.warc {
            let p = warc_dir.join(file);
            if p.exists() {
                crate::warc::repair(&p, Some(*offset))?;
            }
        }
        if warc_dir.exists() {
            crate::warc::recover(&warc_dir)?;
        }
    }
    let warc_cfg = if config.warc {
        fs::create_dir_all(&warc_dir).map_err(CrawlError::io("create", &warc_dir))?;
        let mut c = WarcWriterConfig::new(&warc_dir);
        c.max_file_bytes = config.warc_max_file_bytes;
        c.gzip_level = config.warc_gzip_level;
        c.dedup.max_bytes = usize::try_from(config.warc_dedup_budget()).unwrap_or(usize::MAX);
        c.warcinfo = WarcinfoFields {
            software: format!("trawl/{}", crate::VERSION),
            robots: "obey (RFC 9309)".to_owned(),
            operator: config.from.clone(),
            user_agent: Some(config.user_agent.clone()),
            ..c.warcinfo
        };
        Some(c)
    } else {
        None
    };
    let index = previous::open_index(config, resumed.map(|(_, m)| &m.positions))?;
    OutputThread::spawn(log_path, warc_cfg, index, 4096, board).map_err(CrawlError::Output)
}

/// Bytes of a re-crawl's table of previous URLs (`recrawl::Previous`), logged: a fixed
/// cost charged to `--memory` like the fetch buffers ([`new_frontiers`]).
fn previous_table_bytes(shared: &Shared) -> u64 {
    let Some(previous) = &shared.core.previous else {
        return 0;
    };
    let bytes = previous.table_bytes();
    let line = format!(
        "re-crawl: table of {} previous URLs takes {:.1} MiB ({:.1} bytes per URL), \
         counted against --memory",
        previous.len(),
        bytes as f64 / f64::from(1u32 << 20),
        bytes as f64 / previous.len().max(1) as f64,
    );
    tracing::info!(urls = previous.len(), table_bytes = bytes, "{line}");
    if !shared.config.progress_interval.is_zero() {
        eprintln!("trawl: {line}");
    }
    bytes
}

/// RAM each shard's frontier may use: `CrawlConfig::frontier_ram_bytes_per_shard`
/// with `reserved_bytes` (a re-crawl's table) counted among the fixed costs: the
/// frontiers share an eighth of what fixed costs leave, so that share shrinks by an
/// eighth of the table (never below the 1 MiB floor; a table beyond the budget is
/// warned about).
fn frontier_ram_bytes_per_shard(config: &CrawlConfig, reserved_bytes: u64) -> usize {
    let share = config.frontier_ram_bytes_per_shard();
    let less = reserved_bytes / 8 / config.shards.max(1) as u64;
    let less = usize::try_from(less).unwrap_or(usize::MAX);
    if less > 0 && share.saturating_sub(less) < 1 << 20 {
        tracing::warn!(
            reserved_bytes,
            memory_bytes = config.memory_bytes,
            "re-crawl: the previous crawl's table leaves the frontiers their 1 MiB floor: \
             raise --memory"
        );
    }
    share.saturating_sub(less).max(1 << 20)
}

/// One empty frontier per shard, in `OUT/frontier/shard-NNNN` (a previous run's
/// segments are removed: a resume refills from the checkpoint). `reserved_bytes` of
/// the budget are taken already ([`frontier_ram_bytes_per_shard`]).
fn new_frontiers(config: &CrawlConfig, reserved_bytes: u64) -> Result<Vec<Frontier>, CrawlError> {
    let frontier_root = config.out_dir.join("frontier");
    let _ = fs::remove_dir_all(&frontier_root);
    let mut frontiers = Vec::with_capacity(config.shards);
    for i in 0..config.shards {
        let mut fc = FrontierConfig::new(frontier_root.join(format!("shard-{i:04}")));
        fc.ram_budget_bytes = frontier_ram_bytes_per_shard(config, reserved_bytes);
        fc.max_in_flight_per_host = config.per_host_connections.max(1);
        fc.max_active_hosts = config.max_active_hosts_per_shard();
        fc.max_active_per_address = config.max_active_hosts_per_address();
        frontiers.push(Frontier::new(fc)?);
    }
    Ok(frontiers)
}

/// Queues the checkpoint's URLs (`frontier-NNNN.seg`) in the frontiers of the shards
/// that own their hosts now.
fn refill_frontiers(
    shared: &Shared,
    dir: &Path,
    frontiers: &mut [Frontier],
) -> Result<(), CrawlError> {
    let now = Instant::now();
    let n = frontiers.len();
    for file in checkpoint::frontier_files(dir)? {
        let segment = |source| CrawlError::FrontierSegment {
            path: file.clone(),
            source,
        };
        let mut r = SegmentReader::open(&file).map_err(segment)?;
        while let Some(rec) = r.next_record().map_err(segment)? {
            let s = crate::routing::shard_of(&rec.host, n);
            if let Some(f) = frontiers.get_mut(s) {
                f.push(&rec.host, rec.item, now)?;
                shared.core.outstanding.add(1);
            }
        }
    }
    // The line's blocks the checkpoint kept by reference, in line order (markers left
    // out: the line is rebuilt).
    let mut buf = Vec::new();
    for refs in crate::frontier::kept::line_lists(dir)? {
        for r in &refs {
            let records = crate::frontier::kept::read_block(dir, r, &mut buf)?;
            for rec in records.into_iter().filter(|r| !r.item.url.is_empty()) {
                let s = crate::routing::shard_of(&rec.host, n);
                if let Some(f) = frontiers.get_mut(s) {
                    f.push(&rec.host, rec.item, now)?;
                    shared.core.outstanding.add(1);
                }
            }
        }
    }
    Ok(())
}

/// Queues the seeds (each once, by the presence bits) in the frontiers of the shards
/// that own their hosts.
fn seed_frontiers(
    shared: &Shared,
    seed_urls: &[Url],
    frontiers: &mut [Frontier],
) -> Result<(), CrawlError> {
    let now = Instant::now();
    let n = frontiers.len();
    for url in seed_urls {
        // Farm: every node is given the same seeds and keeps its own.
        if shared
            .farm_link
            .as_ref()
            .is_some_and(|f| !f.owns(url.as_str()))
        {
            continue;
        }
        if shared
            .core
            .memory
            .seen
            .test_and_set(url.as_str().as_bytes())
        {
            continue;
        }
        let Some(key) = crate::routing::host_key(url) else {
            continue;
        };
        let s = crate::routing::shard_of(&key, n);
        if let Some(f) = frontiers.get_mut(s) {
            f.push(&key, QueuedUrl::seed(url.as_str()), now)?;
            shared.core.outstanding.add(1);
            shared.core.counters.bump(Counter::Discovered);
            if !shared
                .core
                .memory
                .seen
                .test_and_set(&crate::routing::host_mark(&key))
            {
                shared.core.counters.bump(Counter::HostsKnown);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A re-crawl's table is a fixed cost: the frontiers' share (an eighth of what
    /// fixed costs leave) shrinks by an eighth of it, split across shards, never below
    /// the 1 MiB floor.
    #[test]
    fn the_previous_table_is_charged_to_the_frontier_budget() {
        let mut c = CrawlConfig::new("/nonexistent");
        c.memory_bytes = 1 << 30;
        c.shards = 2;
        let share = c.frontier_ram_bytes_per_shard();
        assert_eq!(frontier_ram_bytes_per_shard(&c, 0), share);
        let table = 160u64 << 20; // 10 million URLs at 16 bytes
        assert_eq!(frontier_ram_bytes_per_shard(&c, table), share - (10 << 20));
        assert_eq!(frontier_ram_bytes_per_shard(&c, 1 << 40), 1 << 20);
    }
}
