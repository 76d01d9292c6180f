//! The settings of a crawl as `trawl crawl` spells them: one clap table
//! ([`CrawlArgs`]) that the command line and the Python package (`trawl.Crawl(**options)`)
//! both parse, the checks that turn it into a [`CrawlConfig`], and the resume from
//! `start.json` (the flags a crawl started with, applied again under the new ones).

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, Args, FromArgMatches};

use crate::engine::CrawlConfig;
use crate::robots::Forbidden4xx;
use crate::url::Scope;

/// Flags of `trawl crawl`. Every long flag may also be given in the `--config` TOML
/// file as `flag-name = value` (flags on the command line win).
#[derive(Debug, Args)]
pub struct CrawlArgs {
    /// File of seed URLs, one per line (`#` comments and blank lines skipped).
    #[arg(long, value_name = "FILE")]
    pub seeds: Option<PathBuf>,
    /// A seed URL (repeatable).
    #[arg(long = "seed", value_name = "URL")]
    pub seed: Vec<String>,
    /// A sitemap to read at the start (repeatable; docs/sitemaps.md): trusted for its
    /// own origin, other origins need their robots.txt to name it.
    #[arg(long = "sitemap", value_name = "URL")]
    pub sitemap: Vec<String>,
    /// Re-crawl: the output directory of a previous crawl. Its URLs are the seeds (with
    /// any given), each asked for conditionally with its validators; unchanged pages
    /// become WARC revisit records (docs/recrawl.md).
    #[arg(long, value_name = "PREV_OUT")]
    pub recrawl: Option<PathBuf>,
    /// With --recrawl: a URL whose sitemap `<lastmod>` is not newer than its previous
    /// fetch is fetched `conditional`ly (default) or `skip`ped, its previous links
    /// followed as for a 304 (docs/recrawl.md).
    #[arg(long, value_name = "conditional|skip", default_value = "conditional")]
    pub sitemap_lastmod: String,
    /// Output directory: warc/, crawl.log.jsonl, checkpoint/, stats.json, start.json.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// TOML file with the same settings as the flags (`max-pages = 100`).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Continue the crawl in DIR (or in --out): from its last checkpoint, or from its
    /// seeds when it was stopped before the first one. The seeds and flags it started
    /// with are applied again (from DIR/start.json); flags given now override them.
    #[arg(long, value_name = "DIR", num_args = 0..=1)]
    pub resume: Option<Option<PathBuf>>,
    /// Shard threads, at least 1 (default: number of cores).
    #[arg(long)]
    pub shards: Option<usize>,
    /// Fetches in flight per shard (at least 1). Default: sized from --memory (16 KiB
    /// reserved a connection, an eighth of the budget: 4,096 in all under 512M, at
    /// least 256, at most 65,536), split over the shards and lowered to what the open
    /// files limit allows (docs/frontier.md, "Defaults for width").
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// User-Agent (default: trawl's identification with its URL).
    #[arg(long)]
    pub user_agent: Option<String>,
    /// Operator contact sent as `From` (an e-mail address). Strongly recommended.
    #[arg(long)]
    pub from: Option<String>,
    /// Milliseconds a host rests between two fetches: counted from the end of one
    /// fetch (last byte or failure) to the start of the next request to that host, as
    /// Heritrix counts it; raised by robots.txt Crawl-delay, --delay-factor and
    /// Retry-After.
    #[arg(long, default_value_t = 1000)]
    pub delay_ms: u64,
    /// Adaptive politeness: also wait this many times the host's last response time.
    #[arg(long, default_value_t = 0.0)]
    pub delay_factor: f64,
    /// Connections per host at most.
    #[arg(long, default_value_t = 1)]
    pub per_host_connections: u32,
    /// Open connections (busy or idle) per server IP address at most, all shards
    /// together, so many host names on one server do not hammer it (0: no cap).
    #[arg(long, default_value_t = 8)]
    pub per_ip_connections: u32,
    /// Longest a request waits for a per-IP connection slot, in seconds.
    #[arg(long, default_value_t = 300)]
    pub per_ip_wait_secs: u64,
    /// Cap on robots.txt Crawl-delay, in seconds.
    #[arg(long, default_value_t = 30)]
    pub max_crawl_delay_secs: u64,
    /// Longest `Retry-After` (429/503) honoured, in seconds; longer ones are cut to
    /// this. Tests and the demo lower it so synthweb's error pages do not stall a host.
    #[arg(long, default_value_t = 600)]
    pub max_retry_after_secs: u64,
    /// Stop after this many page fetches.
    #[arg(long)]
    pub max_pages: Option<u64>,
    /// At most this many pages per host.
    #[arg(long)]
    pub max_pages_per_host: Option<u64>,
    /// Stop after this many bytes received.
    #[arg(long)]
    pub max_bytes: Option<u64>,
    /// Most distinct links followed from one page (at least 1); pages with more are
    /// logged `links-truncated:N`.
    #[arg(long, default_value_t = crate::html::ExtractOptions::DEFAULT_MAX_LINKS)]
    pub max_links_per_page: usize,
    /// Most link hops from a seed.
    #[arg(long)]
    pub max_hops: Option<u32>,
    /// Longest URL accepted, in bytes.
    #[arg(long)]
    pub max_url_bytes: Option<usize>,
    /// Most non-empty path segments accepted.
    #[arg(long)]
    pub max_path_depth: Option<usize>,
    /// Refuse URLs with `cgi` in the path or a query.
    #[arg(long)]
    pub reject_dynamic: bool,
    /// Scope: `any`, `seed-hosts` or `seed-domains` (registrable domains of the seeds).
    #[arg(long, default_value = "any")]
    pub scope: String,
    /// Blacklist file: hosts, URL prefixes and `re:` regexes, one per line.
    #[arg(long, value_name = "FILE")]
    pub blacklist: Option<PathBuf>,
    /// RAM budget for the process (presence bits excluded), e.g. 256M, 4G; at least 64M.
    #[arg(long, default_value = "512M")]
    pub memory: String,
    /// URLs the presence bits are sized for (at least 1; below 1024 counts as 1024).
    /// The default, 1e7 at 1e-6, is 46 MiB of bits (why: docs/seen.md, "Sizing and defaults");
    /// size a larger crawl with `trawl plan --urls N`.
    #[arg(long, default_value_t = 10_000_000)]
    pub seen_capacity: u64,
    /// False-positive rate of the presence bits at capacity (above 0, below 1).
    #[arg(long, default_value_t = 1e-6)]
    pub seen_fp: f64,
    /// Where the live presence bits live: `memory` (anonymous huge pages, saved at each
    /// checkpoint; fastest) or `mapped` (a shared mapping of `seen.bits`, for sets
    /// larger than RAM).
    #[arg(long, default_value = "memory", value_parser = ["memory", "mapped"])]
    pub seen_backing: String,
    /// Do not write WARC files (benchmarks).
    #[arg(long)]
    pub no_warc: bool,
    /// Rotate WARC files past this many bytes.
    #[arg(long, default_value_t = 1 << 30)]
    pub warc_max_bytes: u64,
    /// gzip level of the WARC records: 0 stores, 1-3 are ISA-L igzip's levels 0, 1
    /// and 3, 4-12 libdeflate's (12 the smallest); records under 4 KiB use libdeflate
    /// at the same level. The default, 1, keeps WARC output near crawl speed
    /// (docs/warc.md).
    #[arg(long, value_name = "N")]
    pub warc_gzip_level: Option<u32>,
    /// Memory for the index of payload digests that turns duplicate responses into
    /// WARC revisit records, e.g. 64M (0: always write full responses). Default: an
    /// eighth of --memory, at most 64M.
    #[arg(long, value_name = "SIZE")]
    pub warc_dedup_memory: Option<String>,
    /// Keep noindex pages out of the WARC output.
    #[arg(long)]
    pub skip_noindex: bool,
    /// Seconds between checkpoints (0: only at the end and on SIGINT/SIGTERM).
    #[arg(long, default_value_t = 300)]
    pub checkpoint_secs: u64,
    /// Seconds between progress lines (0: none).
    #[arg(long, default_value_t = 5)]
    pub progress_secs: u64,
    /// Read 401/403 on robots.txt as `allow` (RFC 9309) or `disallow` (the book).
    #[arg(long = "robots-4xx", default_value = "allow")]
    pub robots_4xx: String,
    /// Seconds before the first retry of an unreachable robots.txt (doubling after).
    #[arg(long, default_value_t = 60)]
    pub robots_retry_secs: u64,
    /// Give a host up after its robots.txt failed this many times in a row.
    #[arg(long, default_value_t = 3)]
    pub robots_max_attempts: u32,
    /// Name overrides, CA files, deadlines.
    #[command(flatten)]
    pub net: super::netargs::NetArgs,
    /// Allow loopback, private and link-local addresses (tests, the local demo).
    #[arg(long)]
    pub allow_private_addresses: bool,
    /// Serve Prometheus metrics on http://ADDR/metrics (loopback, e.g. 127.0.0.1:9898).
    #[arg(long, value_name = "ADDR")]
    pub metrics_addr: Option<std::net::SocketAddr>,
    /// Allow a non-loopback --metrics-addr (the metrics reveal what is crawled).
    #[arg(long)]
    pub metrics_allow_remote: bool,
    /// Free space kept on the --out filesystem: under it fetching pauses, a checkpoint
    /// is written into the space kept, and the crawl goes on when space returns. A size
    /// (64M, 1G), a percentage of the filesystem (5%), `auto` (the smaller of 1G and 5%)
    /// or 0 (off: a full disk ends the crawl).
    #[arg(long, value_name = "SIZE", default_value = "auto")]
    pub disk_reserve: String,
    #[command(flatten)]
    pub farm: super::farm::FarmArgs,
}

/// Parses a size like `512M`, `4G`, `1048576`, `64k`.
fn parse_size(s: &str) -> anyhow::Result<u64> {
    let s = s.trim();
    let (num, mult) = match s.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m: u64 = match c.to_ascii_lowercase() {
                'k' => 1 << 10,
                'm' => 1 << 20,
                'g' => 1 << 30,
                't' => 1 << 40,
                _ => bail!("unknown size unit in {s:?}"),
            };
            (s.get(..i).unwrap_or(""), m)
        }
        _ => (s, 1),
    };
    let n: f64 = num
        .trim()
        .parse()
        .with_context(|| format!("bad size {s:?}"))?;
    if !(n.is_finite() && n >= 0.0) {
        bail!("bad size {s:?}");
    }
    Ok((n * mult as f64) as u64)
}

/// The seeds of `--seeds` and `--seed`: the usable ones, and a warning for each one that
/// is not (with its line number), so one typo does not stop a crawl of a thousand seeds
/// but is not dropped without a word either.
#[derive(Debug, Default)]
struct Seeds {
    usable: Vec<String>,
    warnings: Vec<String>,
    /// Seed lines and `--seed` values given (comments and blank lines aside).
    given: usize,
}

impl Seeds {
    /// Checks one seed: an absolute `http` or `https` URL.
    fn check(&mut self, value: &str, place: &str) {
        self.given += 1;
        match crate::url::canonicalize_absolute(value) {
            Ok(_) => self.usable.push(value.to_owned()),
            Err(crate::url::Reject::UnsupportedScheme) => {
                let scheme = value.split(':').next().unwrap_or(value);
                self.warnings.push(format!(
                    "{place}: {value:?} has scheme {scheme:?}; trawl crawls http and https only: skipped"
                ));
            }
            Err(reason) => self.warnings.push(format!(
                "{place}: {value:?} is not an absolute URL ({reason}): skipped"
            )),
        }
    }
}

fn load_seeds(args: &CrawlArgs) -> anyhow::Result<Seeds> {
    let mut seeds = Seeds::default();
    if let Some(path) = &args.seeds {
        let text =
            fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            seeds.check(line, &format!("{}:{}", path.display(), i + 1));
        }
    }
    for value in &args.seed {
        seeds.check(value.trim(), "--seed");
    }
    Ok(seeds)
}

/// Builds the validated configuration from the flags.
pub fn config_from(args: &CrawlArgs) -> anyhow::Result<CrawlConfig> {
    let mut c = CrawlConfig::new(output_dir(args)?);
    let seeds = load_seeds(args)?;
    for w in &seeds.warnings {
        eprintln!("trawl: warning: {w}");
    }
    if seeds.usable.is_empty() && args.resume.is_none() && args.recrawl.is_none() {
        match &args.seeds {
            _ if seeds.given > 0 => bail!(
                "no usable seed URL: none of the {} seeds given is an absolute http or https \
                 URL (see the warnings above)",
                seeds.given
            ),
            Some(path) => bail!(
                "no seed URL in {}: it holds only comments and blank lines",
                path.display()
            ),
            None => bail!("no seeds: give --seeds FILE or --seed URL"),
        }
    }
    c.seeds = seeds.usable;
    c.recrawl.clone_from(&args.recrawl);
    c.sitemap_lastmod = match args.sitemap_lastmod.as_str() {
        "conditional" => crate::recrawl::LastmodPolicy::Conditional,
        "skip" => crate::recrawl::LastmodPolicy::Skip,
        other => bail!("--sitemap-lastmod must be conditional or skip, not {other:?}"),
    };
    if c.recrawl.is_none() && c.sitemap_lastmod == crate::recrawl::LastmodPolicy::Skip {
        eprintln!("trawl: warning: --sitemap-lastmod skip has no effect without --recrawl");
    }
    for s in &args.sitemap {
        match url::Url::parse(s.trim()) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => c.sitemaps.push(u.to_string()),
            _ => bail!("--sitemap {s:?} is not an absolute http or https URL"),
        }
    }
    if let Some(s) = args.shards {
        c.shards = s;
    }
    if let Some(ua) = &args.user_agent {
        c.user_agent.clone_from(ua);
    }
    c.from.clone_from(&args.from);
    c.delay = Duration::from_millis(args.delay_ms);
    c.delay_factor = args.delay_factor;
    c.per_host_connections = args.per_host_connections;
    c.per_ip_connections = args.per_ip_connections;
    c.fetcher.ip_wait_timeout = Duration::from_secs(args.per_ip_wait_secs);
    c.robots.crawl_delay_cap = Duration::from_secs(args.max_crawl_delay_secs);
    c.max_retry_after = Duration::from_secs(args.max_retry_after_secs);
    c.robots.forbidden = match args.robots_4xx.as_str() {
        "allow" => Forbidden4xx::Allow,
        "disallow" => Forbidden4xx::Disallow,
        other => bail!("--robots-4xx must be allow or disallow, not {other:?}"),
    };
    c.robots.retry_initial = Duration::from_secs(args.robots_retry_secs);
    c.robots_max_attempts = args.robots_max_attempts;
    c.max_pages = args.max_pages;
    c.max_pages_per_host = args.max_pages_per_host;
    c.max_bytes = args.max_bytes;
    if args.max_links_per_page == 0 {
        bail!("--max-links-per-page must be at least 1 (0 would follow no link)");
    }
    c.max_links_per_page = args.max_links_per_page;
    if let Some(h) = args.max_hops {
        c.filter.max_hops = h;
    }
    if let Some(n) = args.max_url_bytes {
        c.filter.max_url_bytes = n;
    }
    if let Some(n) = args.max_path_depth {
        c.filter.max_path_depth = n;
    }
    c.filter.reject_dynamic = args.reject_dynamic;
    c.filter.scope = match args.scope.as_str() {
        "any" => Scope::Any,
        "seed-hosts" => Scope::SeedHosts,
        "seed-domains" => Scope::SeedDomains,
        other => bail!("--scope must be any, seed-hosts or seed-domains, not {other:?}"),
    };
    if let Some(path) = &args.blacklist {
        let text =
            fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        c.filter.blacklist = crate::url::Blacklist::parse(&text)?;
    }
    c.memory_bytes = parse_size(&args.memory).context("--memory")?;
    if c.memory_bytes < 512 << 20 {
        // A budget tighter than the default: freed memory goes back to the OS at once
        // (CPU for a lower, steadier peak; `purge_freed_memory_promptly`).
        crate::sys::alloc::purge_freed_memory_promptly();
    }
    // A quarter of the budget for robots rules, split across shards (16..512 MiB each):
    // a breadth-first crawl cycles through every host of a shard, which is the worst
    // case for an LRU, so a cache smaller than the shard's hosts' rules refetches
    // robots.txt on nearly every visit (see docs/architecture.md, "State and memory").
    let shards = c.shards.max(1) as u64;
    c.robots_cache_bytes =
        usize::try_from((c.memory_bytes / 4 / shards).clamp(16 << 20, 512 << 20))
            .unwrap_or(16 << 20);
    c.concurrency_per_shard = match args.concurrency {
        Some(n) => n,
        None => c.default_concurrency_per_shard(),
    };
    // 0 stays 0 so validation names it; small capacities are rounded up (sizing only).
    c.seen_capacity = match args.seen_capacity {
        0 => 0,
        n => n.max(1024),
    };
    c.seen_fp = args.seen_fp;
    c.seen_backing = match args.seen_backing.as_str() {
        "mapped" => crate::seen::Backing::Mapped,
        _ => crate::seen::Backing::Memory,
    };
    c.warc = !args.no_warc;
    c.warc_max_file_bytes = args.warc_max_bytes;
    if let Some(level) = args.warc_gzip_level {
        c.warc_gzip_level = crate::warc::gzip::Deflater::default()
            .check_level(level)
            .context("--warc-gzip-level")?;
    }
    c.warc_dedup_bytes = args
        .warc_dedup_memory
        .as_deref()
        .map(parse_size)
        .transpose()?;
    c.skip_noindex = args.skip_noindex;
    c.checkpoint_interval = Duration::from_secs(args.checkpoint_secs);
    c.progress_interval = Duration::from_secs(args.progress_secs);
    args.net.apply(&mut c.fetcher)?;
    super::limits::fit_concurrency_to_open_files(&mut c);
    c.fetcher.allow_private_addresses = args.allow_private_addresses;
    (c.metrics_addr, c.metrics_allow_remote) = (args.metrics_addr, args.metrics_allow_remote);
    c.disk_reserve = args.disk_reserve.parse()?;
    c.validate()?;
    Ok(c)
}

/// The output directory: `--out DIR`, `--resume DIR`, or both when they agree.
///
/// # Errors
/// Neither given, `--resume` without a value and no `--out`, or two different
/// directories.
fn output_dir(args: &CrawlArgs) -> anyhow::Result<PathBuf> {
    match (&args.out, &args.resume) {
        (Some(out), Some(Some(dir))) => {
            if same_path(out, dir) {
                Ok(out.clone())
            } else {
                bail!(
                    "--out {} and --resume {} name different directories; give the crawl's \
                     directory once (--resume DIR)",
                    out.display(),
                    dir.display()
                )
            }
        }
        (Some(out), _) => Ok(out.clone()),
        (None, Some(Some(dir))) => Ok(dir.clone()),
        (None, Some(None)) => bail!("--resume needs the crawl's directory: --resume DIR"),
        (None, None) => bail!("no output directory: give --out DIR (or --resume DIR)"),
    }
}

fn same_path(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (std::path::absolute(a), std::path::absolute(b)) {
        (Ok(a), Ok(b)) => {
            a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
        }
        _ => a == b,
    }
}

/// Flags that are not settings: where the seeds and the output are, how they were
/// given. They are never recorded in `start.json`.
const NOT_RECORDED: [&str; 5] = ["seeds", "seed", "out", "config", "resume"];

/// Flags whose value is a file: recorded as absolute paths, so a resume from another
/// working directory reads the same files.
const PATH_FLAGS: [&str; 6] = [
    "blacklist",
    "hosts_file",
    "ca_file",
    "resolv_conf",
    "proxy_rules",
    "proxy_user_file",
];

/// The settings flags given on the command line (after `--config` expansion), as
/// `--flag=value` arguments for `start.json` (see `checkpoint::start`).
fn recordable_args(matches: &ArgMatches) -> Vec<String> {
    let cmd = CrawlArgs::augment_args(clap::Command::new("crawl"));
    let mut out = Vec::new();
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        let Some(long) = arg.get_long() else { continue };
        if NOT_RECORDED.contains(&id) || matches.value_source(id) != Some(ValueSource::CommandLine)
        {
            continue;
        }
        if matches!(arg.get_action(), ArgAction::SetTrue) {
            if matches.get_flag(id) {
                out.push(format!("--{long}"));
            }
            continue;
        }
        for raw in matches.get_raw(id).into_iter().flatten() {
            let mut value = raw.to_string_lossy().into_owned();
            if PATH_FLAGS.contains(&id) {
                if let Ok(abs) = std::path::absolute(&value) {
                    value = abs.display().to_string();
                }
            }
            if id == "proxy" {
                // Credentials are used, never recorded (docs/network.md): where they
                // came from is, so a resume without them says so.
                let (url, had_credentials) = super::egressargs::recordable_proxy(&value);
                value = url;
                if had_credentials {
                    out.push(format!(
                        "--proxy-credentials={}",
                        super::egressargs::URL_NOT_RECORDED
                    ));
                }
            }
            out.push(format!("--{long}={value}"));
        }
    }
    out
}

/// Parses the flags of `trawl crawl` (without the subcommand name) the way the binary
/// does: a flag given twice keeps its last value.
fn parse_crawl_flags(flags: &[String]) -> Result<(CrawlArgs, ArgMatches), clap::Error> {
    let matches = command().try_get_matches_from(flags)?;
    let args = CrawlArgs::from_arg_matches(&matches)?;
    Ok((args, matches))
}

/// The flags after `crawl` in the (config-expanded) command line.
pub fn crawl_flags(argv: &[String]) -> &[String] {
    let at = argv
        .iter()
        .position(|a| a == "crawl")
        .map_or(argv.len(), |i| i + 1);
    argv.get(at..).unwrap_or(&[])
}

/// The arguments of this run: on a resume of a crawl with a start file, its recorded
/// flags first and this command line's after (so they win), and the recorded seeds
/// instead of any given again; otherwise this command line. Returns the parsed flags
/// and the flags to record.
fn effective_args(args: CrawlArgs, flags: &[String]) -> anyhow::Result<(CrawlArgs, Vec<String>)> {
    let resuming = args.resume.is_some();
    let start = if resuming {
        let dir = output_dir(&args)?;
        if !dir.is_dir() {
            bail!("--resume {}: no such directory", dir.display());
        }
        crate::checkpoint::start::read(&dir)?
    } else {
        None
    };
    let Some(start) = start else {
        let (_, matches) = parse_crawl_flags(flags).map_err(|e| anyhow::anyhow!("{e}"))?;
        return Ok((args, recordable_args(&matches)));
    };
    let mut merged = start.args.clone();
    merged.extend(flags.iter().cloned());
    let (mut merged_args, matches) = parse_crawl_flags(&merged).map_err(|e| {
        anyhow::anyhow!("the flags recorded in start.json with this command line: {e}")
    })?;
    if merged_args.seeds.is_some() || !merged_args.seed.is_empty() {
        // The same seeds again (a resume typed like the first run) need no warning.
        let again = load_seeds(&merged_args)
            .map(|s| s.usable)
            .unwrap_or_default();
        if again != start.seeds {
            eprintln!(
                "trawl: warning: seeds given with --resume are not used: the crawl goes on from \
             the {} seeds it started with (start.json)",
                start.seeds.len()
            );
        }
        merged_args.seeds = None;
        merged_args.seed.clear();
    }
    Ok((merged_args, recordable_args(&matches)))
}

/// A crawl ready to build: its configuration (the recorded flags in
/// `start_args`), whether it resumes, and its farm settings.
#[derive(Debug)]
pub struct CrawlPlan {
    pub config: CrawlConfig,
    /// Continue the crawl in the output directory (`--resume`).
    pub resume: bool,
    /// `--farm*`: crawl as one node of a farm.
    pub farm: Option<crate::farm::FarmConfig>,
}

impl CrawlPlan {
    /// The plan of `trawl crawl` parsed as `args` from `flags` (the flags after
    /// `crawl`, `--config` expanded): on a resume of a crawl with a start file, its
    /// recorded flags first and these after (so they win), and the recorded seeds.
    ///
    /// # Errors
    /// Bad flags, unreadable files, no seeds, or settings out of range.
    pub fn new(args: CrawlArgs, flags: &[String]) -> anyhow::Result<Self> {
        let (args, start_args) = effective_args(args, flags)?;
        let mut config = config_from(&args)?;
        config.start_args = start_args;
        Ok(Self {
            config,
            resume: args.resume.is_some(),
            farm: args.farm.config()?,
        })
    }

    /// The plan of the flags after `crawl` (no program or subcommand name), as the
    /// command line parses them.
    ///
    /// # Errors
    /// As [`CrawlPlan::new`]; a flag clap refuses.
    pub fn from_flags(flags: &[String]) -> anyhow::Result<Self> {
        let (args, _) = parse_crawl_flags(flags).map_err(|e| anyhow::anyhow!("{e}"))?;
        Self::new(args, flags)
    }

    /// A crawler for this plan: the configuration, the resume and the farm settings;
    /// the caller adds its handler and stop flag.
    pub fn builder(self) -> crate::engine::CrawlerBuilder {
        let mut builder = crate::engine::Crawler::builder()
            .config(self.config)
            .resume(self.resume);
        if let Some(farm) = self.farm {
            builder = builder.farm(farm);
        }
        builder
    }
}

/// The clap command of [`CrawlArgs`] alone (no binary name): what
/// [`CrawlPlan::from_flags`] parses, and the table the Python package checks its
/// keyword names against.
pub fn command() -> clap::Command {
    CrawlArgs::augment_args(
        clap::Command::new("crawl")
            .no_binary_name(true)
            .args_override_self(true),
    )
}

/// Expands `--config FILE` of `trawl crawl` into flags placed before the command-line
/// flags (which therefore win: the crawl command accepts a flag given twice, last one
/// wins). Keys are long flag names; booleans become bare flags when true, arrays repeat.
///
/// # Errors
/// An unreadable or malformed TOML file.
pub fn expand_config(args: Vec<String>) -> anyhow::Result<Vec<String>> {
    let Some(crawl_at) = args.iter().position(|a| a == "crawl") else {
        return Ok(args);
    };
    let Some(i) = args.iter().position(|a| a == "--config") else {
        return Ok(args);
    };
    let Some(path) = args.get(i + 1) else {
        return Ok(args);
    };
    let text = fs::read_to_string(path).with_context(|| format!("cannot read {path}"))?;
    let table: toml::Table = text
        .parse()
        .with_context(|| format!("{path} is not valid TOML"))?;
    let mut extra = Vec::new();
    for (key, value) in table {
        let flag = format!("--{}", key.replace('_', "-"));
        let mut push = |v: &toml::Value| -> anyhow::Result<()> {
            match v {
                toml::Value::Boolean(true) => extra.push(flag.clone()),
                toml::Value::Boolean(false) => {}
                toml::Value::String(s) => extra.extend([flag.clone(), s.clone()]),
                toml::Value::Integer(n) => extra.extend([flag.clone(), n.to_string()]),
                toml::Value::Float(f) => extra.extend([flag.clone(), f.to_string()]),
                _ => bail!("{path}: unsupported value for {key}"),
            }
            Ok(())
        };
        match &value {
            toml::Value::Array(items) => {
                for v in items {
                    push(v)?;
                }
            }
            v => push(v)?,
        }
    }
    let mut out: Vec<String> = args.iter().take(crawl_at + 1).cloned().collect();
    out.extend(extra);
    out.extend(args.iter().skip(crawl_at + 1).cloned());
    Ok(out)
}

#[cfg(test)]
mod tests;
