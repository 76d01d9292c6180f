//! `trawl bench hosts`: the RAM each known host costs, measured as the growth of the
//! process's resident memory while N hosts are added to each structure that keeps
//! per-host state. The frontier twice: N hosts with one URL each waiting in the line
//! (inactive: no entry, their URLs in the line's blocks on disk), then M of them
//! activated (host entry, schedule entry, the URL in RAM: an active host). The
//! robots.txt cache with M hosts' rules in RAM (a typical small file's compiled rules).
//! The resolver's cache is left to `docs/frontier.md` (its entries are the same size
//! whatever the host).
//! Then the robots cache's disk tier: N more hosts through a cache whose RAM holds
//! few of them, so nearly all spill; the RSS growth over N is what an inactive host
//! costs (its index slot, at most 32 bytes, and its share of the write batch). Every
//! spilled host is checked to answer from disk without a fetch. Prints one JSON
//! object.

use std::process::ExitCode;
use std::time::Instant;

use clap::Args;
use trawl::frontier::{Frontier, FrontierConfig, QueuedUrl};
use trawl::robots::{Access, PolicyConfig, RobotsCache, RobotsResponse};
use trawl::routing::HostKey;

use super::count::parse_count;

/// Arguments of `trawl bench hosts`.
#[derive(Debug, Args)]
pub struct HostsBenchArgs {
    /// Hosts to add, e.g. 1e6: known hosts (the frontier's line) and spilled robots
    /// rules.
    #[arg(long, value_parser = parse_count, default_value = "1000000")]
    hosts: u64,
    /// Of those, hosts made active and given rules in RAM (at most --hosts; default the
    /// smaller of --hosts and a million, since these are the RAM-resident kinds).
    #[arg(long, value_parser = parse_count)]
    active_hosts: Option<u64>,
    /// RAM budget of the robots cache in the disk tier's measurement.
    #[arg(long, default_value = "4194304")]
    spill_ram_bytes: usize,
    /// Have the allocator return freed memory at once during the disk tier's
    /// measurement (as `trawl crawl` does under a `--memory` below 512M): the index's
    /// sub-tables free their old allocation each time they double, which otherwise
    /// stays resident for a while and shows in the figure.
    #[arg(long)]
    purge_promptly: bool,
    /// Directory for the frontier's and the robots disk tier's files (default: the
    /// system temp dir).
    #[arg(long)]
    dir: Option<std::path::PathBuf>,
}

/// A robots.txt of the common small kind: one group, two rules, a sitemap.
const ROBOTS: &[u8] = b"User-agent: *\nDisallow: /cgi-bin/\nDisallow: /tmp/\nSitemap: https://example.com/sitemap.xml\n";

fn rss_bytes() -> u64 {
    trawl::sys::procfs::process_memory().map_or(0, |m| m.rss_bytes)
}

/// Fetches `url`'s host's rules into `robots` as the engine would: the poll, the
/// answer (the small file), the parse report taken at once for the crawl log.
fn answer_robots(robots: &mut RobotsCache, url: &url::Url, now: Instant) -> anyhow::Result<()> {
    if robots.poll_fetch(url, now).is_some() {
        let key = HostKey::of(url).ok_or_else(|| anyhow::anyhow!("no host"))?;
        let response = RobotsResponse {
            status: 200,
            headers: &[],
            body: ROBOTS,
        };
        robots.on_response(&key, now, &response);
        robots.take_parse_report(&key);
    }
    Ok(())
}

fn host_name(i: u64) -> String {
    format!("h{i:07}.example.com")
}

/// Runs the measurement.
pub fn run(a: &HostsBenchArgs) -> anyhow::Result<ExitCode> {
    let dir = a
        .dir
        .clone()
        .unwrap_or_else(std::env::temp_dir)
        .join(format!("trawl-bench-hosts-{}", std::process::id()));
    let result = measure(a, &dir);
    let cleanup = std::fs::remove_dir_all(&dir);
    let v = result?;
    // The frontier made the directory; nothing spilled into it is kept.
    cleanup.or_else(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Ok(())
        } else {
            Err(e)
        }
    })?;
    println!("{v}");
    Ok(ExitCode::SUCCESS)
}

fn measure(a: &HostsBenchArgs, dir: &std::path::Path) -> anyhow::Result<serde_json::Value> {
    let n = a.hosts.max(1);
    let t0 = Instant::now();
    let base = rss_bytes();
    let mut config = FrontierConfig::new(dir.join("frontier"));
    // Room for every host's URL in RAM: the figure is a host's RAM cost, not spilling.
    config.ram_budget_bytes = usize::MAX / 2;
    config.max_active_hosts = usize::MAX;
    let mut frontier = Frontier::new(config)?;
    let now = Instant::now();
    for i in 0..n {
        let name = host_name(i);
        let key = format!("http://{name}");
        let url = format!("http://{name}/");
        frontier.push(&key, QueuedUrl::seed(url), now)?;
    }
    let after_line = rss_bytes();
    let line = frontier.stats();
    // Activation: each host's turn takes its URL; it goes back to the host's head, so
    // an active host holds its entry, its schedule state and one URL in RAM.
    let m = a.active_hosts.unwrap_or(1_000_000).clamp(1, n);
    for _ in 0..m {
        let Some((host, item)) = frontier.take_ready(now)? else {
            anyhow::bail!("the line ran dry before {m} activations");
        };
        frontier.requeue_front(&host, item, now);
    }
    let after_frontier = rss_bytes();
    let mut robots = RobotsCache::new(PolicyConfig::new("trawl"), usize::MAX / 2);
    for i in 0..m {
        let url = url::Url::parse(&format!("http://{}/", host_name(i)))?;
        answer_robots(&mut robots, &url, now)?;
    }
    let after_robots = rss_bytes();
    let spill = measure_spill(a, n, dir, now)?;
    let stats = frontier.stats();
    let per = |bytes: u64| bytes as f64 / n as f64;
    let per_active = |bytes: u64| bytes as f64 / m as f64;
    let v = serde_json::json!({
        "bench": "hosts",
        "hosts": n,
        "active_hosts": m,
        "frontier_inactive_bytes_per_host": per(after_line.saturating_sub(base)),
        "frontier_inactive_charged_bytes_per_host": per(line.ram_bytes),
        "frontier_line_disk_bytes_per_host": per(line.disk_bytes),
        "frontier_active_hosts": stats.hosts_active,
        "frontier_ram_urls": stats.ram_urls,
        "frontier_active_bytes_per_host": per_active(after_frontier.saturating_sub(after_line)),
        "frontier_active_charged_bytes_per_host":
            per_active(stats.ram_bytes.saturating_sub(line.ram_bytes)),
        "robots_bytes_per_host": per_active(after_robots.saturating_sub(after_frontier)),
        "robots_charged_bytes_per_host": per_active(robots.bytes() as u64),
        "robots_spilled_hosts": spill.spilled,
        "robots_spill_bytes_per_host": per(spill.rss_growth),
        "robots_spill_index_bytes_per_host": spill.index_bytes as f64 / spill.spilled.max(1) as f64,
        "robots_spill_disk_bytes_per_host": spill.disk_bytes as f64 / spill.spilled.max(1) as f64,
        "robots_spill_writes": spill.writes,
        "robots_spill_secs": spill.spill_secs,
        "robots_spill_reads": spill.reads,
        "robots_spill_collisions": spill.collisions,
        "robots_spill_read_secs": spill.read_secs,
        "rss_bytes": spill.rss_after,
        "secs": t0.elapsed().as_secs_f64(),
    });
    Ok(v)
}

/// What the disk tier's measurement found.
struct SpillFigures {
    spilled: u64,
    /// Hosts whose rules were lost to an index collision (fetched again).
    collisions: u64,
    rss_growth: u64,
    rss_after: u64,
    index_bytes: u64,
    disk_bytes: u64,
    writes: u64,
    reads: u64,
    spill_secs: f64,
    read_secs: f64,
}

/// N hosts through a robots cache of `--spill-ram-bytes` with its disk tier in
/// `dir/robots`: RSS growth while they spill, then every host checked to answer from
/// disk (and nothing fetched twice).
fn measure_spill(
    a: &HostsBenchArgs,
    n: u64,
    dir: &std::path::Path,
    now: Instant,
) -> anyhow::Result<SpillFigures> {
    let url_of = |i: u64| url::Url::parse(&format!("http://s{i:07}.example.org/cgi-bin/x"));
    if a.purge_promptly {
        trawl::sys::alloc::purge_freed_memory_promptly();
    }
    let before = rss_bytes();
    let t = Instant::now();
    let mut robots = RobotsCache::with_spill_dir(
        PolicyConfig::new("trawl"),
        a.spill_ram_bytes,
        &dir.join("robots"),
    );
    for i in 0..n {
        answer_robots(&mut robots, &url_of(i)?, now)?;
    }
    robots.flush()?;
    let spill_secs = t.elapsed().as_secs_f64();
    let rss_after = rss_bytes();
    let spilled = robots.stats();
    // The answer checked: every host's rules come back from disk, and none is due.
    // Two hosts whose 44-bit hashes agree share an index slot, and the one that lost
    // it is fetched again (counted as a collision: about n²/2⁴⁵, 3 at ten million).
    let t = Instant::now();
    let mut lost = 0u64;
    for i in 0..n {
        let url = url_of(i)?;
        match robots.check(&url, now) {
            Access::Decided(d) if !d.allowed => {}
            Access::Pending => {
                lost += 1;
                continue;
            }
            other => anyhow::bail!("host {i}: {other:?} after the spill, not its rules"),
        }
        if robots.poll_fetch(&url, now).is_some() {
            anyhow::bail!("host {i}: fetched again after the spill");
        }
    }
    let read_secs = t.elapsed().as_secs_f64();
    let s = robots.stats();
    if let Some(e) = robots.take_spill_error() {
        anyhow::bail!("robots disk tier: {e}");
    }
    anyhow::ensure!(
        lost <= s.index_collisions,
        "{lost} hosts lost their rules, {} index collisions",
        s.index_collisions
    );
    anyhow::ensure!(s.fetches == n, "{} fetches for {n} hosts", s.fetches);
    anyhow::ensure!(s.spill_damaged == 0 && s.spill_dropped == 0, "{s:?}");
    Ok(SpillFigures {
        spilled: spilled.hosts_spilled,
        collisions: lost,
        rss_growth: rss_after.saturating_sub(before),
        rss_after,
        index_bytes: spilled.index_bytes,
        disk_bytes: spilled.disk_bytes,
        writes: spilled.spill_writes,
        reads: s.spill_reads,
        spill_secs,
        read_secs,
    })
}
