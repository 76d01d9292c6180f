//! Everything a crawl is configured with. The CLI (and `trawl.toml`) build this; the
//! library's [`crate::engine::CrawlerBuilder`] exposes it.

use std::path::PathBuf;
use std::time::Duration;

use crate::net::FetcherConfig;
use crate::robots::PolicyConfig;
use crate::seen::Backing;
use crate::url::FilterConfig;

/// Below this `memory_bytes` no crawl fits: 48 MiB of fixed buffers plus the robots
/// caches and the frontiers' minimum of 1 MiB per shard.
pub const MIN_MEMORY_BYTES: u64 = 64 << 20;

/// More shards than this is a typo, not a machine (each is a thread with an event loop).
pub const MAX_SHARDS: usize = 4096;

/// The shortest URL trawl can crawl is `http://a/` (9 bytes); a smaller limit refuses
/// every URL.
pub const MIN_URL_BYTES: usize = 9;

/// A setting out of range; the message names the flag, the value and the limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// A validated crawl configuration.
#[derive(Clone, Debug)]
pub struct CrawlConfig {
    /// Seed URLs (absolute).
    pub seeds: Vec<String>,
    /// Sitemaps the operator names (`--sitemap`), read at the start of a fresh crawl.
    pub sitemaps: Vec<String>,
    /// A re-crawl (`--recrawl PREV_OUT`): the output directory of the previous crawl,
    /// whose `recrawl.idx` gives the seeds and each request's validators
    /// (`docs/recrawl.md`).
    pub recrawl: Option<PathBuf>,
    /// In a re-crawl, what a sitemap `<lastmod>` not newer than the previous fetch
    /// does (`--sitemap-lastmod`): fetch conditionally (default) or skip the URL
    /// (`docs/recrawl.md`). No effect outside a re-crawl.
    pub sitemap_lastmod: crate::recrawl::LastmodPolicy,
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
    /// Time a host rests between two fetches: from the end of one (last byte or
    /// failure) to the start of the next request (`core/schedule.rs` `next_eligible`).
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
    /// Most distinct links taken from one page (at least 1); a page with more is
    /// logged `links-truncated:N` and counted in `Stats::pages_links_truncated`.
    pub max_links_per_page: usize,
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
    /// gzip level of the WARC members, in the deflate implementation's range
    /// (`crate::warc::gzip::Deflater`); checked by the CLI. See `docs/warc.md`.
    pub warc_gzip_level: u32,
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
    /// The command-line flags that shaped this crawl (`--flag=value`, paths absolute,
    /// without seeds and output directory), recorded in `start.json` so that `trawl
    /// crawl --resume OUT` runs with them again. Empty for library users.
    pub start_args: Vec<String>,
    /// Free space kept on the `out_dir` filesystem: under it fetching pauses and a
    /// checkpoint is written into the space kept (`docs/checkpoints.md`, "Disk full").
    pub disk_reserve: super::space::Reserve,
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
            sitemaps: Vec::new(),
            recrawl: None,
            sitemap_lastmod: crate::recrawl::LastmodPolicy::Conditional,
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
            max_links_per_page: crate::html::ExtractOptions::DEFAULT_MAX_LINKS,
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
            warc_gzip_level: crate::warc::gzip::Deflater::default().default_level(),
            warc_dedup_bytes: None,
            skip_noindex: false,
            checkpoint_interval: Duration::from_secs(300),
            progress_interval: Duration::from_secs(5),
            metrics_addr: None,
            metrics_allow_remote: false,
            start_args: Vec::new(),
            disk_reserve: super::space::Reserve::Auto,
        }
    }

    /// Checks that every setting is in range, so that a typo fails at once with the
    /// limit it broke instead of starting a crawl that cannot work (`--memory 10`
    /// meant as 10 GiB, `--seen-fp 1`, zero shards). The messages name the `trawl crawl`
    /// flag of the setting.
    ///
    /// # Errors
    /// The first setting out of range, as a [`ConfigError`].
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |msg: String| Err(ConfigError(msg));
        if self.shards == 0 {
            return bad("--shards 0: at least 1 shard is needed".into());
        }
        if self.shards > MAX_SHARDS {
            return bad(format!(
                "--shards {}: at most {MAX_SHARDS} shards",
                self.shards
            ));
        }
        if self.concurrency_per_shard == 0 {
            return bad("--concurrency 0: at least 1 fetch in flight per shard".into());
        }
        if self.per_host_connections == 0 {
            return bad("--per-host-connections 0: at least 1 connection per host".into());
        }
        if self.memory_bytes < MIN_MEMORY_BYTES {
            return bad(format!(
                "--memory: {} bytes is below the minimum of {}M (fixed buffers alone take \
                 48M; sizes take a unit: 512M, 4G)",
                self.memory_bytes,
                MIN_MEMORY_BYTES >> 20
            ));
        }
        if self.seen_capacity == 0 {
            return bad(
                "--seen-capacity 0: the presence bits need a capacity of at least 1 URL".into(),
            );
        }
        if !(self.seen_fp > 0.0 && self.seen_fp < 1.0) {
            return bad(format!(
                "--seen-fp {}: the false-positive rate must be above 0 and below 1 (e.g. 1e-6)",
                self.seen_fp
            ));
        }
        if !(self.delay_factor.is_finite() && self.delay_factor >= 0.0) {
            return bad(format!(
                "--delay-factor {}: must be a finite number, 0 or more",
                self.delay_factor
            ));
        }
        for (flag, value) in [
            ("--max-pages", self.max_pages),
            ("--max-pages-per-host", self.max_pages_per_host),
            ("--max-bytes", self.max_bytes),
        ] {
            if value == Some(0) {
                return bad(format!(
                    "{flag} 0: a budget of nothing crawls nothing; give at least 1 or leave it out"
                ));
            }
        }
        if self.filter.max_url_bytes < MIN_URL_BYTES {
            return bad(format!(
                "--max-url-bytes {}: at least {MIN_URL_BYTES} (no shorter URL can be crawled)",
                self.filter.max_url_bytes
            ));
        }
        if self.robots_max_attempts == 0 {
            return bad("--robots-max-attempts 0: at least 1 attempt".into());
        }
        if self.robots.retry_initial.is_zero() {
            return bad(
                "--robots-retry-secs 0: at least 1 second between robots.txt attempts".into(),
            );
        }
        if self.fetcher.ip_wait_timeout.is_zero() {
            return bad("--per-ip-wait-secs 0: at least 1 second".into());
        }
        if self.warc && self.warc_max_file_bytes == 0 {
            return bad("--warc-max-bytes 0: WARC files need room for at least one record".into());
        }
        Ok(())
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

    /// RAM each shard's frontier may use: an eighth of the budget left after fixed
    /// costs (fetch buffers, robots caches, writer queues, the WARC revisit index), split
    /// across shards. The rest is headroom for what moves through a shard (pages being
    /// parsed, their links and the core's actions on them, batches between shards,
    /// allocator slack): with half, the wide memory test (`tests/crawl_memory.rs`, 24
    /// million queued URLs) peaked at the 256 MiB budget itself; a quarter held until
    /// the crawl core's per-page action buffers took part of the headroom
    /// (docs/benchmarks.md, "Frontier memory").
    pub fn frontier_ram_bytes_per_shard(&self) -> usize {
        let fixed = (48u64 << 20) + self.warc_dedup_budget();
        let robots = self.robots_cache_bytes as u64 * self.shards as u64;
        let per_conn =
            FETCH_BYTES_PER_SLOT * self.concurrency_per_shard as u64 * self.shards as u64;
        let left = self.memory_bytes.saturating_sub(fixed + robots + per_conn);
        let per_shard = left / 8 / self.shards.max(1) as u64;
        usize::try_from(per_shard.max(1 << 20)).unwrap_or(usize::MAX)
    }
}

/// robots.txt rules an active host is allowed in the robots cache's RAM, for sizing the
/// active set: most files parse to a few hundred bytes, a tenth of a wide crawl's to
/// tens of KiB; past the bound, a host's rules leave RAM only when it is inactive.
pub const ACTIVE_HOST_ROBOTS_BYTES: usize = 8 << 10;

impl CrawlConfig {
    /// Hosts a shard's frontier keeps in its active set at most (docs/frontier.md,
    /// "The active set"): as many as the robots cache holds rules for at
    /// [`ACTIVE_HOST_ROBOTS_BYTES`] each, and at least twice the fetch slots, so every
    /// slot has a host to serve while others rest their politeness delay.
    pub fn max_active_hosts_per_shard(&self) -> usize {
        (self.robots_cache_bytes / ACTIVE_HOST_ROBOTS_BYTES)
            .max(2 * self.concurrency_per_shard)
            .max(256)
    }

    /// Active hosts of one server address a shard keeps at most (docs/frontier.md,
    /// "The active set"): four times the connections the address may take
    /// (`--per-ip-connections`), so its connections stay busy while its hosts rest
    /// their politeness delay, and the rest of the active set serves other servers.
    /// Unbounded without a per-address cap.
    pub fn max_active_hosts_per_address(&self) -> u32 {
        match self.per_ip_connections {
            0 => u32::MAX,
            n => n.saturating_mul(ACTIVE_HOSTS_PER_ADDRESS_CONNECTION).max(8),
        }
    }
}

/// Active hosts per connection an address may take (see
/// [`CrawlConfig::max_active_hosts_per_address`]).
pub const ACTIVE_HOSTS_PER_ADDRESS_CONNECTION: u32 = 4;

/// Bytes of `--memory` reserved for each fetch slot (`--concurrency` x shards). The
/// fetcher's read buffer is one per loop; what a connection keeps is its `Conn`, a
/// boxed rustls session for HTTPS and the exchange's body buffers, which leave with
/// the outcome. Measured (`tests/fetch_memory.rs`, docs/fetcher.md "Memory"): 2.1 KiB
/// an idle HTTP connection, 8.4 KiB an idle TLS 1.3 one. 16 KiB covers a TLS session
/// and a few KB of a slow page in flight, which is what most slots hold at width (a
/// server drip-feeding pages of a few KB); the bodies of large pages in flight come
/// out of the headroom the budget keeps (three quarters of what is left). Until issue
/// 19 it was 64 KiB: 2 shards x 2,500 slots reserved 312 MiB of a 512 MiB budget for
/// buffers that were never allocated, and the frontier fell to its 1 MiB minimum.
pub const FETCH_BYTES_PER_SLOT: u64 = 16 << 10;

/// Fetch slots `--memory` affords when `--concurrency` is not given: an eighth of the
/// budget at [`FETCH_BYTES_PER_SLOT`] each, at least 256 and at most 65,536 in all.
const AUTO_SLOTS_MIN: u64 = 256;
const AUTO_SLOTS_MAX: u64 = 65_536;

impl CrawlConfig {
    /// The default `--concurrency` (per shard): sized from `--memory`. Under
    /// politeness a wide crawl's speed is the number of hosts busy at once, and a
    /// waiting connection costs kilobytes, so the default follows the budget rather
    /// than a fixed 256 a shard: 4,096 slots in all under 512M (2,048 a shard on two
    /// cores), 65,536 under 8G. A slot is taken only by a host that is ready, so the
    /// fetches in flight follow demand up to this cap: a sixteenth of the budget (2,048
    /// slots under 512M) left 1,000-3,500 ready hosts idle at a million hosts
    /// (docs/benchmarks.md, "The hub web") and the 5,000-host web at 1.41x its floor.
    pub fn default_concurrency_per_shard(&self) -> usize {
        let slots =
            (self.memory_bytes / 8 / FETCH_BYTES_PER_SLOT).clamp(AUTO_SLOTS_MIN, AUTO_SLOTS_MAX);
        let per_shard = slots / self.shards.max(1) as u64;
        usize::try_from(per_shard.max(16)).unwrap_or(16)
    }
}

/// The record is the checkpoint's type; building it from a config is the engine's job,
/// so that `checkpoint` imports nothing from `engine`.
impl crate::checkpoint::RecordedConfig {
    /// The settings of `c` worth recording.
    pub fn of(c: &CrawlConfig) -> Self {
        Self {
            shards: c.shards,
            concurrency_per_shard: c.concurrency_per_shard,
            user_agent: c.user_agent.clone(),
            from: c.from.clone(),
            delay_ms: u64::try_from(c.delay.as_millis()).unwrap_or(u64::MAX),
            delay_factor: c.delay_factor,
            per_host_connections: c.per_host_connections,
            max_pages: c.max_pages,
            max_pages_per_host: c.max_pages_per_host,
            max_bytes: c.max_bytes,
            max_hops: c.filter.max_hops,
            max_url_bytes: c.filter.max_url_bytes,
            max_path_depth: c.filter.max_path_depth,
            scope: format!("{:?}", c.filter.scope),
            memory_bytes: c.memory_bytes,
            seen_capacity: c.seen_capacity,
            seen_fp: c.seen_fp,
            warc: c.warc,
            checkpoint_secs: c.checkpoint_interval.as_secs(),
            allow_private_addresses: c.fetcher.allow_private_addresses,
            disk_reserve: Some(c.disk_reserve.to_string()),
        }
    }
}

/// The part of the configuration the crawl core reads (`core::CoreSettings`).
impl From<&CrawlConfig> for super::core::CoreSettings {
    fn from(c: &CrawlConfig) -> Self {
        Self {
            concurrency_per_shard: c.concurrency_per_shard,
            user_agent: c.user_agent.clone(),
            agent_token: c.agent_token.clone(),
            from: c.from.clone(),
            delay: c.delay,
            delay_factor: c.delay_factor,
            max_retry_after: c.max_retry_after,
            max_pages: c.max_pages,
            max_bytes: c.max_bytes,
            max_pages_per_host: c.max_pages_per_host,
            max_links_per_page: c.max_links_per_page,
            max_redirects: c.max_redirects,
            max_retries: c.max_retries,
            host_failures_to_park: c.host_failures_to_park,
            scope: format!("{:?}", c.filter.scope),
            robots: c.robots.clone(),
            robots_max_attempts: c.robots_max_attempts,
            robots_cache_bytes: c.robots_cache_bytes,
            robots_spill_dir: Some(c.out_dir.join("robots")),
            warc: c.warc,
            sitemap_lastmod: c.sitemap_lastmod,
            dns_dead_for: c.fetcher.dns.dead_for,
            dns_negative_ttl: c.fetcher.dns.negative_ttl,
            routes: c
                .fetcher
                .egress
                .clone()
                .map(|e| -> std::sync::Arc<dyn crate::fetch::RouteHealth> { e }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default concurrency follows the budget, within its bounds, split over the
    /// shards; the reservation it makes leaves the frontier most of the budget.
    #[test]
    fn default_concurrency_follows_memory() {
        let mut c = CrawlConfig::new("/tmp/x");
        c.shards = 2;
        c.memory_bytes = 512 << 20;
        assert_eq!(c.default_concurrency_per_shard(), 2048);
        c.memory_bytes = 32 << 20;
        assert_eq!(
            c.default_concurrency_per_shard(),
            128,
            "256 in all at least"
        );
        c.memory_bytes = 1 << 40;
        assert_eq!(
            c.default_concurrency_per_shard(),
            32_768,
            "65,536 in all at most"
        );
        // 2 shards x 2,500 slots under 512M: the frontier keeps tens of MiB, where
        // 64 KiB a slot left it its 1 MiB minimum.
        c.memory_bytes = 512 << 20;
        c.robots_cache_bytes = 64 << 20;
        c.concurrency_per_shard = 2500;
        assert!(c.frontier_ram_bytes_per_shard() > 8 << 20);
    }

    /// Each setting out of range fails with its flag named; the defaults pass.
    #[test]
    fn validate_names_the_flag_and_the_limit() {
        assert_eq!(CrawlConfig::new("/tmp/x").validate(), Ok(()));
        type Change = fn(&mut CrawlConfig);
        let cases: [(Change, &str); 12] = [
            (|c| c.shards = 0, "--shards 0"),
            (|c| c.shards = MAX_SHARDS + 1, "at most 4096"),
            (|c| c.concurrency_per_shard = 0, "--concurrency 0"),
            (|c| c.per_host_connections = 0, "--per-host-connections 0"),
            (|c| c.memory_bytes = 10, "minimum of 64M"),
            (|c| c.seen_capacity = 0, "--seen-capacity 0"),
            (|c| c.seen_fp = 1.0, "--seen-fp 1"),
            (|c| c.seen_fp = f64::NAN, "--seen-fp NaN"),
            (|c| c.delay_factor = -0.5, "--delay-factor -0.5"),
            (|c| c.max_bytes = Some(0), "--max-bytes 0"),
            (|c| c.robots_max_attempts = 0, "--robots-max-attempts 0"),
            (|c| c.warc_max_file_bytes = 0, "--warc-max-bytes 0"),
        ];
        for (change, expected) in cases {
            let mut c = CrawlConfig::new("/tmp/x");
            change(&mut c);
            let err = c.validate().unwrap_err().to_string();
            assert!(err.contains(expected), "{expected:?} not in {err:?}");
        }
        let mut edge = CrawlConfig::new("/tmp/x");
        edge.memory_bytes = MIN_MEMORY_BYTES;
        edge.seen_fp = 0.5;
        edge.filter.max_url_bytes = MIN_URL_BYTES;
        assert_eq!(edge.validate(), Ok(()));
    }
}
