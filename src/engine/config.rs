//! Everything a crawl is configured with. The CLI (and `trawl.toml`) build this; the
//! library's [`crate::engine::CrawlerBuilder`] exposes it.

use std::path::PathBuf;
use std::time::Duration;

use crate::net::FetcherConfig;
use crate::robots::PolicyConfig;
use crate::seen::Backing;
use crate::url::FilterConfig;

/// A validated crawl configuration.
#[derive(Clone, Debug)]
pub struct CrawlConfig {
    /// Seed URLs (absolute).
    pub seeds: Vec<String>,
    /// Output directory: `warc/`, `crawl.log.jsonl`, `checkpoint/`, `stats.json`,
    /// `frontier/`, `seen.bits`.
    pub out_dir: PathBuf,
    /// Shard threads (each with its own event loop and slice of hosts).
    pub shards: usize,
    /// Fetches in flight per shard at most.
    pub concurrency_per_shard: usize,
    /// `User-Agent` header.
    pub user_agent: String,
    /// Product token matched against robots.txt groups and `<meta name>`.
    pub agent_token: String,
    /// `From` header (operator contact).
    pub from: Option<String>,
    /// Minimum time between request starts to one host.
    pub delay: Duration,
    /// Connections (fetches in flight) per host at most.
    pub per_host_connections: u32,
    /// Open connections (connecting, busy or idle) per server IP address at most, over
    /// all shards together; 0 = no cap. Many host names on one server share it.
    pub per_ip_connections: u32,
    /// Retry-After is honoured up to this.
    pub max_retry_after: Duration,
    /// Adaptive politeness: wait this many times the host's last response time (0 =
    /// off), like Heritrix's delay factor; never less than `delay`.
    pub delay_factor: f64,
    /// Stop after this many fetches of pages (robots.txt not counted).
    pub max_pages: Option<u64>,
    /// At most this many pages per host.
    pub max_pages_per_host: Option<u64>,
    /// Stop after this many bytes received.
    pub max_bytes: Option<u64>,
    /// Redirect chains longer than this are cut.
    pub max_redirects: u32,
    /// Retries of a URL after a network failure, 429 or 503.
    pub max_retries: u8,
    /// After this many consecutive failures a host is parked (its URLs are logged
    /// as `host-parked` and dropped).
    pub host_failures_to_park: u32,
    /// URL filters (length, traps, scope, extensions, blacklist, hops).
    pub filter: FilterConfig,
    /// Robots policy (agent, 4xx reading, cache lifetimes, crawl-delay cap).
    pub robots: PolicyConfig,
    /// A host whose robots.txt failed (429, 5xx, network) this many times in a row is
    /// given up: its URLs are logged as `robots` (`robots-unreachable`).
    pub robots_max_attempts: u32,
    /// Bytes of robots rules cached per shard.
    pub robots_cache_bytes: usize,
    /// Fetcher settings (deadlines, DNS overrides, TLS, caps).
    pub fetcher: FetcherConfig,
    /// RAM budget for the whole process, excluding the presence bits.
    pub memory_bytes: u64,
    /// Presence-bit capacity (URLs) and false-positive rate at capacity. Default 1e7
    /// URLs at 1e-6: 46 MiB of bits (plus 11 MiB of content fingerprints), about one
    /// URL lost in expectation at capacity; why not larger is in `docs/seen.md`,
    /// "Sizing and defaults". The crawl logs both figures at start.
    pub seen_capacity: u64,
    pub seen_fp: f64,
    /// Where the live presence bits are kept. [`Backing::Memory`] (default): anonymous
    /// huge-page memory, written to the checkpoint at each checkpoint; a crash loses
    /// nothing the checkpoint does not already hold, and no page of the live file is
    /// faulted in or written back during the crawl. [`Backing::Mapped`]: a shared
    /// mapping of `seen.bits`, for sets larger than RAM, at the cost of a page fault
    /// and a write-back per first touch of each 4 KiB page.
    pub seen_backing: Backing,
    /// Write WARC files.
    pub warc: bool,
    /// Rotate WARC files past this size.
    pub warc_max_file_bytes: u64,
    /// Memory for the WARC revisit index (payload digests already written); `None`:
    /// an eighth of `memory_bytes`, at most 64 MiB; `Some(0)`: no revisit records.
    pub warc_dedup_bytes: Option<u64>,
    /// Keep noindex pages out of the WARC (they are still logged).
    pub skip_noindex: bool,
    /// Checkpoint period (0 = only at the end and on signals).
    pub checkpoint_interval: Duration,
    /// Print a progress line this often (0 = never).
    pub progress_interval: Duration,
    /// Serve Prometheus metrics here.
    pub metrics_addr: Option<std::net::SocketAddr>,
    /// Let `metrics_addr` be a non-loopback address (off: loopback only).
    pub metrics_allow_remote: bool,
}

impl CrawlConfig {
    /// Defaults that identify trawl and are polite: one connection per host, one
    /// second between requests, robots.txt obeyed, private addresses refused.
    pub fn new(out_dir: impl Into<PathBuf>) -> Self {
        let fetcher = FetcherConfig {
            allow_private_addresses: false,
            ..FetcherConfig::default()
        };
        let shards = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self {
            seeds: Vec::new(),
            out_dir: out_dir.into(),
            shards,
            concurrency_per_shard: 512,
            user_agent: crate::default_user_agent(),
            agent_token: "trawl".to_owned(),
            from: None,
            delay: Duration::from_millis(1000),
            per_host_connections: 1,
            per_ip_connections: 8,
            max_retry_after: Duration::from_secs(600),
            delay_factor: 0.0,
            max_pages: None,
            max_pages_per_host: None,
            max_bytes: None,
            max_redirects: 10,
            max_retries: 2,
            host_failures_to_park: 8,
            filter: FilterConfig::default(),
            robots: PolicyConfig::new("trawl"),
            robots_max_attempts: 3,
            robots_cache_bytes: 16 << 20,
            fetcher,
            memory_bytes: 512 << 20,
            seen_capacity: 10_000_000,
            seen_fp: 1e-6,
            seen_backing: Backing::Memory,
            warc: true,
            warc_max_file_bytes: 1 << 30,
            warc_dedup_bytes: None,
            skip_noindex: false,
            checkpoint_interval: Duration::from_secs(300),
            progress_interval: Duration::from_secs(5),
            metrics_addr: None,
            metrics_allow_remote: false,
        }
    }

    /// Bytes the WARC revisit index may use (0 when WARC output or deduplication is
    /// off). Part of `memory_bytes`.
    pub fn warc_dedup_budget(&self) -> u64 {
        if !self.warc {
            return 0;
        }
        self.warc_dedup_bytes.unwrap_or_else(|| {
            (self.memory_bytes / 8).min(crate::warc::dedup::DEFAULT_DEDUP_BYTES as u64)
        })
    }

    /// RAM each shard's frontier may use: a quarter of the budget left after fixed
    /// costs (fetch buffers, robots caches, writer queues, the WARC revisit index), split
    /// across shards. The rest is headroom for what moves through a shard (pages being parsed, their
    /// links, batches between shards, allocator slack): with half, the wide memory
    /// test (`tests/crawl_memory.rs`, 24 million queued URLs) peaked at the 256 MiB
    /// budget itself; with a quarter it stays under (docs/benchmarks.md).
    pub fn frontier_ram_bytes_per_shard(&self) -> usize {
        let fixed = (48u64 << 20) + self.warc_dedup_budget();
        let robots = self.robots_cache_bytes as u64 * self.shards as u64;
        let per_conn = 64 * 1024 * self.concurrency_per_shard as u64 * self.shards as u64;
        let left = self.memory_bytes.saturating_sub(fixed + robots + per_conn);
        let per_shard = left / 4 / self.shards.max(1) as u64;
        usize::try_from(per_shard.max(1 << 20)).unwrap_or(usize::MAX)
    }
}
