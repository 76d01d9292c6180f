//! The crawl's figures: the counters the shards keep, folded into [`Stats`] for
//! `stats.json`, the progress line and the metrics endpoint.

use std::fs;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use crate::crawllog::Outcome;
use crate::frontier::FrontierStats;

use crate::engine::core::Counter;
use crate::engine::{CrawlError, Shared};

/// Counters of a crawl, as written to `stats.json`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    pub elapsed_secs: f64,
    pub pages: u64,
    pub pages_per_sec: f64,
    pub bytes: u64,
    pub mb_per_sec: f64,
    pub discovered: u64,
    pub duplicates: u64,
    /// Pages whose links passed `max_links_per_page` (crawl log: `links-truncated:N`).
    pub pages_links_truncated: u64,
    /// Pages longer than the link scanner reads (crawl log: `scan-truncated:BYTES`).
    pub pages_scan_truncated: u64,
    /// Pages with link attributes too long to read (crawl log: `long-attributes:N`).
    pub pages_long_attributes: u64,
    /// robots.txt bodies over the 500 KiB parse cap, read up to it (crawl log of the
    /// robots.txt fetch: `robots-truncated:BYTES`, the bytes not parsed).
    pub robots_truncated: u64,
    /// robots.txt bodies with lines over 16,663 bytes, whose tails were not read
    /// (crawl log: `robots-long-lines:N`).
    pub robots_long_lines: u64,
    /// Sitemap files read (crawl log: `sitemap:KIND:N` on the sitemap's line).
    pub sitemaps_read: u64,
    /// Sitemap files a cap cut (`sitemap-cut:urls:CAP:DROPPED`, `sitemap-cut:bytes:CAP`).
    pub sitemaps_cut: u64,
    /// Sitemap files refused whole (`sitemap-error:WHY`).
    pub sitemaps_failed: u64,
    /// Sitemap entries the host rule refused (`sitemap-refused:N`).
    pub sitemap_urls_refused: u64,
    /// robots.txt grants to sitemaps the grant memory's caps kept out (a warning on
    /// stderr; `docs/sitemaps.md`). Not carried across a resume (nor are the grants).
    pub sitemap_grants_dropped: u64,
    /// Sitemap `<lastmod>` dates a re-crawl could not keep, or URLs that could not
    /// wait a turn for one (their caps; `sitemap-lastmod-cap:N` on a sitemap's line):
    /// those URLs are fetched conditionally. Not carried across a resume (nor are the
    /// dates).
    pub sitemap_lastmods_dropped: u64,
    /// Responses written as WARC `revisit` records (payload seen before).
    pub warc_revisits: u64,
    pub queued: u64,
    pub frontier_ram_urls: u64,
    pub frontier_disk_urls: u64,
    pub frontier_disk_bytes: u64,
    /// Hosts whose robots rules are cached, over all shards.
    pub robots_cache_hosts: u64,
    /// Bytes charged for them (budget: a quarter of `--memory`).
    pub robots_cache_bytes: u64,
    /// robots.txt fetches started; far more than the hosts crawled means the cache is
    /// too small for them (raise `--memory`).
    pub robots_fetches: u64,
    /// Robots entries moved out of RAM to stay within the budget (into the disk
    /// tier; see `robots_spill_dropped` for those not kept).
    pub robots_cache_evictions: u64,
    /// Hosts whose robots rules are in the disk tier (`OUT/robots/shard-NNNN`).
    pub robots_cache_hosts_spilled: u64,
    /// RAM of the disk tier's index and batch (at most 32 bytes a spilled host, plus
    /// the batch), not in `robots_cache_bytes`.
    pub robots_cache_index_bytes: u64,
    /// Bytes of the disk tier's log files.
    pub robots_cache_disk_bytes: u64,
    /// Batches written to the disk tier, hosts read back from it, records read back
    /// damaged or unreadable (their robots.txt fetched again).
    pub robots_spill_writes: u64,
    pub robots_spill_reads: u64,
    pub robots_spill_damaged: u64,
    /// Evicted entries not kept (never fetched, too large, or the disk failing).
    pub robots_spill_dropped: u64,
    /// The most robots.txt fetches started for one host.
    pub robots_fetches_max_per_host: u64,
    /// Fetches started for a host whose rules were fresh (0 unless there is a bug).
    pub robots_hosts_refetched_while_fresh: u64,
    /// Fetches started after a failure, and because the rules expired.
    pub robots_fetch_retries: u64,
    pub robots_fetch_refreshes: u64,
    pub frontier_ram_bytes: u64,
    pub disk_bytes_per_queued_url: f64,
    /// Hosts in the frontiers' active sets (served, held for robots.txt, or resting
    /// their politeness delay); the rest wait in the line (docs/frontier.md).
    pub hosts_active: u64,
    /// Hosts with an entry in a frontier's host table: the active ones, and inactive
    /// ones not forgotten yet.
    pub hosts_in_table: u64,
    /// Hosts discovered (carried across a resume, as their marks in the presence bits are).
    pub hosts_known: u64,
    /// Hosts given up: robots.txt unreachable through its retries, name dead,
    /// refused address, page budget spent (events).
    pub hosts_retired: u64,
    /// URLs (and markers of hosts to come back) waiting in the frontiers' lines for
    /// their host's activation.
    pub line_records: u64,
    /// Hosts that joined an active set so far, and that left one after spending an
    /// activation's budget.
    pub host_activations: u64,
    pub host_rotations: u64,
    /// Hosts sent to the back of the line because their server's address had its share
    /// of the active set (`4 x --per-ip-connections`), and distinct server addresses in
    /// the active sets now (docs/frontier.md, "The active set and the line").
    pub address_rotations: u64,
    pub active_addresses: u64,
    pub hosts_parked: u64,
    /// Requests in flight, ready-but-idle hosts, budget refusals (`width.rs`).
    pub width: super::width::WidthStats,
    pub outcomes: std::collections::BTreeMap<String, u64>,
    pub seen_fill_ratio: f64,
    pub seen_expected_fp: f64,
    pub seen_expected_lost_urls: f64,
    pub seen_file_bytes: u64,
    pub checkpoints: u64,
    /// Bytes the last checkpoint wrote (presence-log records, frontier, tallies,
    /// robots, manifest), the sum over this process's checkpoints and the largest.
    pub checkpoint_last_bytes: u64,
    pub checkpoint_total_bytes: u64,
    pub checkpoint_max_bytes: u64,
    /// Of those, the presence bits' (URL and fingerprint logs) in the last checkpoint.
    pub checkpoint_last_presence_bytes: u64,
    /// Wall seconds from the first barrier to the committed `CURRENT`: last, sum, max.
    pub checkpoint_last_secs: f64,
    pub checkpoint_total_secs: f64,
    pub checkpoint_max_secs: f64,
    /// Checkpoints that rewrote the presence logs whole (first one, compactions).
    pub checkpoint_compactions: u64,
    /// Resident memory now (`VmRSS`), of which the presence bits (URL and fingerprint
    /// sets' mappings) and the rest, so memory per URL can be judged without the bits.
    pub rss_bytes: u64,
    pub presence_bits_resident_bytes: u64,
    pub rss_less_presence_bits_bytes: u64,
    /// The kernel's peak (`VmHWM`), bits included.
    pub peak_rss_bytes: u64,
    /// The largest `rss_less_presence_bits_bytes` seen at any stats sample (progress,
    /// checkpoints, end).
    pub peak_rss_less_presence_bits_bytes: u64,
    /// `--memory`: the RAM budget for everything but the presence bits, the line
    /// `rss_less_presence_bits_bytes` is judged against (a dashboard draws both).
    pub memory_budget_bytes: u64,
    pub resumed_from: Option<u64>,
    /// `disk` while fetching is paused for lack of space on `--out`, else absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused: Option<String>,
    /// Times fetching paused for disk space, and the seconds spent paused in all.
    pub disk_pauses: u64,
    pub disk_paused_secs: f64,
    /// Free bytes on the `--out` filesystem at the last probe, and the reserve kept
    /// (0 when `--disk-reserve 0` turned the watch off).
    pub disk_free_bytes: u64,
    pub disk_reserve_bytes: u64,
    /// Why the crawl ended: `exhausted`, `budget`, `stopped`.
    pub finish: String,
    /// This node's farm figures (`docs/farm.md`), absent outside a farm.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub farm: Option<crate::farm::FarmStats>,
    /// A re-crawl's verdicts (`not_modified`, `unchanged`, `changed`, `gone`, `new`)
    /// and `bytes_saved`; absent when the crawl is not a re-crawl.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recrawl: Option<crate::recrawl::RecrawlStats>,
    /// The operator's pause, blocks and delays, set through the control API
    /// (`docs/control.md`).
    pub operator: crate::engine::OperatorStats,
    /// Each route (`direct` and every proxy): its label, endpoint, where its
    /// credentials came from, connections open and health; absent without proxies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routes: Option<Vec<crate::net::egress::book::RouteStats>>,
}

pub(crate) const OUTCOMES: [Outcome; 14] = [
    Outcome::Fetched,
    Outcome::Robots,
    Outcome::Filtered,
    Outcome::BlockedAddress,
    Outcome::DnsError,
    Outcome::ConnectError,
    Outcome::TlsError,
    Outcome::Timeout,
    Outcome::ProtocolError,
    Outcome::Budget,
    Outcome::HostParked,
    Outcome::ProxyUnreachable,
    Outcome::ProxyAuth,
    Outcome::ProxyError,
];

pub(crate) fn outcome_index(o: Outcome) -> usize {
    OUTCOMES.iter().position(|x| *x == o).unwrap_or(0)
}

pub(crate) fn outcome_name(o: Outcome) -> String {
    outcome_str(o).to_owned()
}

/// The crawl log's name of `o` (`"fetched"`, `"robots"`, ...), serialized once per
/// process: the status board asks for it at every logged line.
pub(crate) fn outcome_str(o: Outcome) -> &'static str {
    static NAMES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let serialized = |o: &Outcome| {
        serde_json::to_value(o)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    };
    let names = NAMES.get_or_init(|| OUTCOMES.iter().map(serialized).collect());
    names.get(outcome_index(o)).map_or("", String::as_str)
}

pub(crate) fn stats(
    shared: &Shared,
    started: Instant,
    checkpoints: u64,
    resumed: Option<u64>,
    finish: &str,
) -> Stats {
    let elapsed = started.elapsed().as_secs_f64().max(1e-9);
    let c = shared.counters();
    let fs = shared.frontier_stats();
    let sum = |f: fn(&FrontierStats) -> u64| fs.iter().map(f).sum::<u64>();
    let seen = shared.core.memory.seen.stats();
    let rs = shared.robots_stats();
    let robots_sum = |f: fn(&crate::robots::CacheStats) -> u64| rs.iter().map(f).sum::<u64>();
    let disk_urls = sum(|s| s.disk_urls);
    let disk_bytes = sum(|s| s.disk_bytes);
    let cf = shared.checkpoint_figures();
    let memory = memory_split(shared);
    Stats {
        farm: shared
            .farm_link
            .as_deref()
            .map(crate::farm::FarmLink::stats),
        elapsed_secs: elapsed,
        pages: c.pages,
        pages_per_sec: c.pages as f64 / elapsed,
        bytes: c.bytes,
        mb_per_sec: c.bytes as f64 / elapsed / 1e6,
        discovered: c.discovered,
        duplicates: c.duplicates,
        pages_links_truncated: c.pages_links_truncated,
        pages_scan_truncated: c.pages_scan_truncated,
        pages_long_attributes: c.pages_long_attributes,
        robots_truncated: c.robots_truncated,
        robots_long_lines: c.robots_long_lines,
        sitemaps_read: c.sitemaps_read,
        sitemaps_cut: c.sitemaps_cut,
        sitemaps_failed: c.sitemaps_failed,
        sitemap_urls_refused: c.sitemap_urls_refused,
        sitemap_grants_dropped: shared.core.memory.sitemaps.dropped().0,
        sitemap_lastmods_dropped: shared.core.memory.sitemaps.dropped().1,
        warc_revisits: c.warc_revisits,
        queued: shared.core.outstanding.get(),
        frontier_ram_urls: sum(|s| s.ram_urls),
        frontier_disk_urls: disk_urls,
        frontier_disk_bytes: disk_bytes,
        robots_cache_hosts: robots_sum(|r| r.hosts),
        robots_cache_bytes: robots_sum(|r| r.bytes),
        robots_fetches: robots_sum(|r| r.fetches),
        robots_cache_evictions: robots_sum(|r| r.evictions),
        robots_cache_hosts_spilled: robots_sum(|r| r.hosts_spilled),
        robots_cache_index_bytes: robots_sum(|r| r.index_bytes + r.spill_batch_bytes),
        robots_cache_disk_bytes: robots_sum(|r| r.disk_bytes),
        robots_spill_writes: robots_sum(|r| r.spill_writes),
        robots_spill_reads: robots_sum(|r| r.spill_reads),
        robots_spill_damaged: robots_sum(|r| r.spill_damaged),
        robots_spill_dropped: robots_sum(|r| r.spill_dropped),
        robots_fetches_max_per_host: rs.iter().map(|r| r.max_fetches_per_host).max().unwrap_or(0),
        robots_hosts_refetched_while_fresh: robots_sum(|r| r.hosts_refetched_while_fresh),
        robots_fetch_retries: robots_sum(|r| r.fetch_retries),
        robots_fetch_refreshes: robots_sum(|r| r.fetch_refreshes),
        frontier_ram_bytes: sum(|s| s.ram_bytes),
        disk_bytes_per_queued_url: if disk_urls == 0 {
            0.0
        } else {
            disk_bytes as f64 / disk_urls as f64
        },
        hosts_active: sum(|s| s.hosts_active),
        hosts_in_table: sum(|s| s.hosts),
        hosts_known: shared.core.counters.get(Counter::HostsKnown),
        hosts_retired: shared.core.counters.get(Counter::HostsRetired),
        line_records: sum(|s| s.line_records),
        host_activations: sum(|s| s.activations),
        host_rotations: sum(|s| s.rotations),
        address_rotations: sum(|s| s.address_rotations),
        active_addresses: sum(|s| s.active_addresses),
        hosts_parked: shared.core.counters.get(Counter::HostsParked),
        width: shared.width.stats(
            shared.in_flight(),
            shared.core.counters.get(Counter::UrlsRefusedBudget),
        ),
        outcomes: OUTCOMES
            .iter()
            .map(|o| (outcome_name(*o), shared.outcome_count(*o)))
            .filter(|(_, c)| *c > 0)
            .collect(),
        seen_fill_ratio: seen.fill_ratio,
        seen_expected_fp: seen.expected_fp,
        seen_expected_lost_urls: seen.expected_lost,
        seen_file_bytes: seen.file_bytes,
        checkpoints,
        checkpoint_last_bytes: cf.last_bytes,
        checkpoint_total_bytes: cf.total_bytes,
        checkpoint_max_bytes: cf.max_bytes,
        checkpoint_last_presence_bytes: cf.last_presence_bytes,
        checkpoint_last_secs: cf.last_secs,
        checkpoint_total_secs: cf.total_secs,
        checkpoint_max_secs: cf.max_secs,
        checkpoint_compactions: cf.compactions,
        rss_bytes: memory.rss,
        presence_bits_resident_bytes: memory.bits,
        rss_less_presence_bits_bytes: memory.rss.saturating_sub(memory.bits),
        peak_rss_bytes: memory.peak,
        peak_rss_less_presence_bits_bytes: memory.peak_less_bits,
        memory_budget_bytes: shared.config.memory_bytes,
        resumed_from: resumed,
        finish: finish.to_owned(),
        recrawl: shared.core.previous.as_ref().map(|_| c.recrawl),
        operator: shared.operator.stats(),
        routes: shared
            .config
            .fetcher
            .egress
            .as_deref()
            .map(|e| e.route_stats(Instant::now())),
        // The coordinator's disk watch fills these (`space::DiskWatch::fill`).
        ..Stats::default()
    }
}

/// Resident memory figures of this process (see the `rss_*` fields of [`Stats`]).
pub(crate) struct MemorySplit {
    rss: u64,
    bits: u64,
    peak: u64,
    peak_less_bits: u64,
}

/// Reads `VmRSS`/`VmHWM` and the presence bits' resident bytes, and folds the
/// difference into the sampled peak. Zeros where `/proc` is unavailable.
pub(crate) fn memory_split(shared: &Shared) -> MemorySplit {
    let status = crate::sys::procfs::process_memory();
    let rss = status.map_or(0, |m| m.rss_bytes);
    let memory = &shared.core.memory;
    let bits = crate::sys::procfs::mappings_rss_bytes(&[
        memory.seen.mapping_address(),
        memory.fingerprints.mapping_address(),
    ])
    .unwrap_or(0);
    let less = rss.saturating_sub(bits);
    let peak_less_bits = shared.peak_rss_less_bits(less);
    MemorySplit {
        rss,
        bits,
        peak: status.map_or(0, |m| m.peak_rss_bytes),
        peak_less_bits,
    }
}

pub(crate) fn write_stats(out: &Path, s: &Stats) -> Result<(), CrawlError> {
    let path = out.join("stats.json");
    let tmp = out.join("stats.json.tmp");
    let json =
        serde_json::to_vec_pretty(s).map_err(|e| CrawlError::io("serialize", &path)(e.into()))?;
    fs::write(&tmp, json).map_err(CrawlError::io("write", &tmp))?;
    fs::rename(&tmp, &path).map_err(CrawlError::io("rename into place", &path))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every crawl-log outcome has its own count: one missing from [`OUTCOMES`] would
    /// be counted as `fetched` (`outcome_index`'s fallback). The match makes a new
    /// variant fail to compile here until it is listed.
    #[test]
    fn every_outcome_is_counted_under_its_own_name() {
        let listed = |o: Outcome| match o {
            Outcome::Fetched
            | Outcome::Robots
            | Outcome::Filtered
            | Outcome::BlockedAddress
            | Outcome::DnsError
            | Outcome::ConnectError
            | Outcome::TlsError
            | Outcome::Timeout
            | Outcome::ProtocolError
            | Outcome::Budget
            | Outcome::HostParked
            | Outcome::ProxyUnreachable
            | Outcome::ProxyAuth
            | Outcome::ProxyError => OUTCOMES.contains(&o),
        };
        for o in OUTCOMES {
            assert!(listed(o));
            assert_eq!(OUTCOMES[outcome_index(o)], o);
            let serialized = serde_json::to_value(o).unwrap();
            assert_eq!(outcome_str(o), serialized.as_str().unwrap());
        }
        for o in [
            Outcome::ProxyUnreachable,
            Outcome::ProxyAuth,
            Outcome::ProxyError,
        ] {
            assert!(listed(o), "{o:?}");
            assert_ne!(outcome_index(o), 0, "{o:?} would count as fetched");
        }
    }
}
