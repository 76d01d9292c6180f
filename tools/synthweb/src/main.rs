//! synthweb: a deterministic synthetic web served on loopback (see docs/synthweb.md).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use synthweb::config::{Profiles, SiteConfig, Span};
use synthweb::server::{self, ServerConfig};

/// A deterministic synthetic web on loopback, for testing and benchmarking crawlers.
///
/// Without a subcommand, serves the web described by the options.
#[derive(Debug, Parser)]
#[command(
    name = "synthweb",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant, reason = "parsed once per process")]
enum Command {
    /// Serve the synthetic web (the same as giving no subcommand).
    Serve(ServeArgs),
    /// Judge a crawl from the server's request log against a manifest.
    Check(synthweb::referee::CheckArgs),
}

/// Options of the server.
#[derive(Debug, Clone, Args)]
struct ServeArgs {
    /// World seed: every byte served is a function of (seed, host, path).
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Number of hosts, named h000000.synth.test, h000001.synth.test, ...
    #[arg(long, default_value_t = 100)]
    hosts: u32,
    /// Profiles, comma separated: default, traps, hostile (or all for both), sitemaps,
    /// sitemap-chain.
    #[arg(long, default_value = "default")]
    profile: String,
    /// Page size range in bytes, MIN-MAX.
    #[arg(long, default_value = "5000-60000")]
    page_size: String,
    /// Fixed page size in bytes (benchmark mode: Content-Length framing, UTF-8, no
    /// link-spelling variety). Overrides --page-size.
    #[arg(long)]
    page_bytes: Option<u32>,
    /// Links per page, MIN-MAX.
    #[arg(long, default_value = "10-80")]
    out_degree: String,
    /// Pages /p/1.. per ordinary host, MIN-MAX.
    #[arg(long, default_value = "20-200")]
    pages_per_host: String,
    /// Wide mode: every ordinary root and /p/k page has exactly N links, all absolute
    /// links to random /p/j pages of random hosts (1..=20000). Grows a crawler's
    /// frontier to tens of millions of URLs from a few thousand pages.
    #[arg(long)]
    fanout: Option<u32>,
    /// Every N-th host root is a seed (host 0 and special hosts always are).
    #[arg(long, default_value_t = 1)]
    seed_stride: u32,
    /// Trap budget the manifest is computed for (hops into a trap).
    #[arg(long, default_value_t = 20)]
    trap_budget: u32,
    /// Loopback addresses to listen on: A.B.C.D or A.B.C.D/len (network and broadcast
    /// addresses skipped for /30 and shorter). Only 127.0.0.0/8 is accepted.
    #[arg(long, default_value = "127.0.0.1")]
    bind_range: String,
    /// Listen on the wildcard address 0.0.0.0 and give host i its own address
    /// 127.1.0.1, 127.1.0.2, ... (.0 and .255 skipped). Only inside a network namespace
    /// whose only interface is loopback (`unshare -n`); refused elsewhere.
    #[arg(long, conflicts_with = "bind_range")]
    bind_any: bool,
    /// With --bind-any: K host names share one address (shared hosting).
    #[arg(long, requires = "bind_any", value_name = "K")]
    hosts_per_address: Option<u32>,
    /// Mesh mode (a wide crawl's web): every page links every page of its host and
    /// --cross-links roots of other hosts; allow-all robots.txt; no content coding.
    /// Needs --page-bytes.
    #[arg(long)]
    mesh: bool,
    /// Mesh mode: cross-host links per page, each to another host's root.
    #[arg(long, default_value_t = 2, requires = "mesh", value_name = "N")]
    cross_links: u32,
    /// Mesh mode: percent of hosts that are HTTPS-only (linked https://; needs --tls).
    #[arg(long, default_value_t = 0, requires = "mesh", value_name = "PCT")]
    https_share: u32,
    /// Mesh mode: percent of cross-host links naming dead hosts dNNNNNN.dead.test.
    #[arg(long, default_value_t = 0, requires = "mesh", value_name = "PCT")]
    dead_share: u32,
    /// Hub mode (issue 26): H hubs of 10 pages, each page linking 100 leaf hosts
    /// (H x 1,000 leaves of 3 pages and a robots.txt each); sets --hosts to H x 1,001.
    #[arg(long, value_name = "H", conflicts_with_all = ["hosts", "mesh", "fanout"])]
    hubs: Option<u32>,
    /// Also answer DNS (UDP) for the web's host names on this loopback address, e.g.
    /// 127.0.0.1:53: A records computed from the name, NXDOMAIN for unknown names.
    #[arg(long, value_name = "ADDR:PORT")]
    dns: Option<std::net::SocketAddr>,
    /// TTL of the DNS answers, in seconds.
    #[arg(long, default_value_t = 300, value_name = "SECS", requires = "dns")]
    dns_ttl_secs: u32,
    /// Time to first byte added to every response, per request (tokio sleep).
    #[arg(long, default_value_t = 0, value_name = "MS")]
    latency_ms: u64,
    /// Per-connection rate cap on responses, bytes per second (paced writes).
    #[arg(long, value_name = "BYTES_PER_SEC")]
    bandwidth: Option<u64>,
    /// HTTP port on every address (0 = ephemeral; the chosen port is reported).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Also serve every host over HTTPS with a CA generated at start-up.
    #[arg(long)]
    tls: bool,
    /// HTTPS port (0 = ephemeral).
    #[arg(long, default_value_t = 0)]
    tls_port: u16,
    /// Write the CA certificate (PEM) here (with --tls).
    #[arg(long)]
    ca_out: Option<PathBuf>,
    /// Write `hostname address port [tls_port]` lines here.
    #[arg(long)]
    hosts_file: Option<PathBuf>,
    /// Write seed URLs here, one per line.
    #[arg(long)]
    seeds: Option<PathBuf>,
    /// Write one JSON line per request here.
    #[arg(long)]
    log: Option<PathBuf>,
    /// Stop after this many requests.
    #[arg(long)]
    max_requests: Option<u64>,
    /// Stop after this many seconds.
    #[arg(long)]
    max_secs: Option<u64>,
    /// Most simultaneous connections (further accepts wait).
    #[arg(long, default_value_t = 10_000)]
    max_connections: usize,
    /// Close connections idle this many seconds.
    #[arg(long, default_value_t = 30)]
    idle_timeout_secs: u64,
    /// Worker threads.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Response cache slots (each holds one representation up to 128 KiB).
    #[arg(long, default_value_t = 1024)]
    cache_slots: usize,
    /// Share of ordinary pages that differ from the base web (generation 0), e.g. `10%`:
    /// 60% of it change, 20% vanish (404/410), 20% are new pages. 0 serves the base web.
    #[arg(long, default_value = "0")]
    change_rate: String,
    /// Which set of changes `--change-rate` draws (each against generation 0).
    #[arg(long, default_value_t = 1)]
    generation: u32,
    /// Write synthweb's own list of changes here (with `--change-rate`), once the ports
    /// are bound; robots verdicts for `--manifest-agent`.
    #[arg(long, value_name = "FILE")]
    changes: Option<PathBuf>,
    /// Write the URLs the sitemaps list with a `<lastmod>` here (profile `sitemaps`),
    /// one `URL SECONDS` line each, once the ports are bound: what a re-crawl with
    /// `--sitemap-lastmod skip` may skip.
    #[arg(long, value_name = "FILE")]
    sitemap_lastmods: Option<PathBuf>,
    #[command(flatten)]
    manifest: synthweb::manifest::ManifestArgs,
}

impl ServeArgs {
    /// Raw flags to a validated server config.
    fn to_config(&self) -> anyhow::Result<ServerConfig> {
        let bind = if self.bind_any {
            server::BindRange::any()?
        } else {
            server::parse_bind_range(&self.bind_range)?
        };
        if self.latency_ms > 60_000 || self.bandwidth == Some(0) {
            anyhow::bail!("--latency-ms must be at most 60000 and --bandwidth at least 1");
        }
        let (page_bytes, fixed_size) = match self.page_bytes {
            Some(n) => (Span { min: n, max: n }, true),
            None => (Span::parse(&self.page_size)?, false),
        };
        let site = SiteConfig {
            seed: self.seed,
            hosts: match self.hubs {
                Some(h) => h
                    .checked_mul(synthweb::site::hub::HOSTS_PER_HUB)
                    .ok_or_else(|| anyhow::anyhow!("--hubs too large"))?,
                None => self.hosts,
            },
            profiles: Profiles::parse(&self.profile)?,
            page_bytes,
            fixed_size,
            out_degree: Span::parse(&self.out_degree)?,
            pages_per_host: Span::parse(&self.pages_per_host)?,
            tls: self.tls,
            trap_budget: self.trap_budget,
            http_port: 1,
            tls_port: self.tls.then_some(1),
            bind_base: bind.first,
            bind_count: bind.count,
            seed_stride: self.seed_stride,
            fanout: self.fanout,
            change_rate_bp: synthweb::config::parse_rate_bp(&self.change_rate)?,
            generation: self.generation,
            mesh: self.mesh.then_some(synthweb::config::Mesh {
                cross_links: self.cross_links,
                https_percent: self.https_share,
                dead_percent: self.dead_share,
            }),
            hosts_per_address: self.bind_any.then_some(self.hosts_per_address.unwrap_or(1)),
            hubs: self.hubs,
        };
        if site.hubs.is_some() && self.manifest.manifest.is_some() {
            anyhow::bail!("hub mode has no manifest (its pages are listed in docs/synthweb.md)");
        }
        site.validate()?;
        Ok(ServerConfig {
            site,
            bind,
            port: self.port,
            tls_port: self.tls_port,
            ca_out: self.ca_out.clone(),
            hosts_file: self.hosts_file.clone(),
            seeds_file: self.seeds.clone(),
            log: self.log.clone(),
            max_requests: self.max_requests,
            max_secs: self.max_secs,
            max_connections: self.max_connections,
            idle_timeout: Duration::from_secs(self.idle_timeout_secs),
            threads: self.threads,
            cache_slots: self.cache_slots,
            pace: server::Pace {
                latency: Duration::from_millis(self.latency_ms),
                bytes_per_sec: self.bandwidth,
            },
            dns: self.dns,
            dns_ttl_secs: self.dns_ttl_secs,
        })
    }
}

fn serve(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    let cfg = args.to_config()?;
    let site_cfg = cfg.site.clone();
    let done = server::run(cfg, |ready| {
        // The manifest needs the bound ports; it is written before the ready line.
        if let Err(e) = args
            .manifest
            .write(site_cfg.clone(), ready.http_port, ready.tls_port)
        {
            eprintln!("synthweb: {:#}", anyhow::Error::from(e));
            std::process::exit(2);
        }
        if let Err(e) = write_changes(args, site_cfg.clone(), ready.http_port, ready.tls_port) {
            eprintln!("synthweb: cannot write the changes file: {e:#}");
            std::process::exit(2);
        }
        if let Err(e) = write_lastmods(args, site_cfg.clone(), ready.http_port, ready.tls_port) {
            eprintln!("synthweb: cannot write the sitemap lastmods file: {e:#}");
            std::process::exit(2);
        }
        let mut out = std::io::stdout().lock();
        let _ = serde_json::to_writer(&mut out, ready);
        let _ = writeln!(out);
        let _ = out.flush();
    })?;
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, &done)?;
    writeln!(out)?;
    Ok(ExitCode::SUCCESS)
}

/// `--changes FILE`: the list of changes for the bound ports, written to a temporary
/// file renamed into place.
fn write_changes(
    args: &ServeArgs,
    mut site: SiteConfig,
    http_port: u16,
    tls_port: Option<u16>,
) -> anyhow::Result<()> {
    let Some(path) = &args.changes else {
        return Ok(());
    };
    site.http_port = http_port;
    site.tls_port = tls_port;
    let site = synthweb::Site::new(site)?;
    let policy = args.manifest.policy()?;
    replace_file(path, |out| {
        synthweb::changes::write_changes(out, &site, &policy)?;
        Ok(())
    })
}

/// Writes `path` through `write` into a temporary file, synced and renamed into place:
/// a reader sees the whole file or none.
fn replace_file(
    path: &std::path::Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut tmp = path.to_path_buf().into_os_string();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
    write(&mut out)?;
    out.into_inner()
        .map_err(std::io::IntoInnerError::into_error)?
        .sync_all()?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

/// `--sitemap-lastmods FILE`: `URL SECONDS` lines for the bound ports (see
/// `synthweb::sitemaps::listed_lastmods`), written to a temporary file renamed into
/// place.
fn write_lastmods(
    args: &ServeArgs,
    mut site: SiteConfig,
    http_port: u16,
    tls_port: Option<u16>,
) -> anyhow::Result<()> {
    let Some(path) = &args.sitemap_lastmods else {
        return Ok(());
    };
    if !site.profiles.sitemaps {
        anyhow::bail!("--sitemap-lastmods needs --profile sitemaps");
    }
    site.http_port = http_port;
    site.tls_port = tls_port;
    let site = synthweb::Site::new(site)?;
    replace_file(path, |out| {
        writeln!(out, "# synthweb sitemap lastmods v1")?;
        for (url, secs) in synthweb::sitemaps::listed_lastmods(&site) {
            writeln!(out, "{url} {secs}")?;
        }
        Ok(())
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Some(Command::Serve(a)) => serve(a),
        Some(Command::Check(a)) => synthweb::referee::run(a).map_err(anyhow::Error::from),
        None => serve(&cli.serve),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("synthweb: {e:#}");
            ExitCode::from(2)
        }
    }
}
