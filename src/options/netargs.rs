//! Network flags shared by `trawl fetch` and `trawl crawl`: static name overrides, the
//! resolver's bounds, extra CA files, deadlines, source addresses, and the dangerous
//! TLS switch. One
//! definition, so the two commands spell and apply them the same way.

use std::fs;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use crate::net::{parse_hosts_file, parse_resolve, BindAddrs, Deadlines, FetcherConfig};

/// Flags that shape the fetcher's name resolution, TLS trust and deadlines.
#[derive(Debug, Args)]
pub struct NetArgs {
    /// Static address for host:port, curl syntax `host:port:addr[,addr]` (repeatable).
    #[arg(long, value_name = "HOST:PORT:ADDR")]
    pub resolve: Vec<String>,
    /// Static addresses from a synthweb hosts file (`hostname address port [tls_port]`).
    #[arg(long, value_name = "FILE")]
    pub hosts_file: Option<PathBuf>,
    /// Trust the CA certificates in this PEM file in addition to the webpki roots
    /// (repeatable).
    #[arg(long, value_name = "FILE")]
    pub ca_file: Vec<PathBuf>,
    /// Deadline for a whole exchange, in milliseconds (per-phase deadlines are capped
    /// by it).
    #[arg(long, value_name = "MS")]
    pub timeout_ms: Option<u64>,
    /// Connect deadline in milliseconds.
    #[arg(long, value_name = "MS")]
    pub connect_timeout_ms: Option<u64>,
    /// Deadline for the first response byte, in milliseconds.
    #[arg(long, value_name = "MS")]
    pub first_byte_timeout_ms: Option<u64>,
    /// Longest silence between reads, in milliseconds.
    #[arg(long, value_name = "MS")]
    pub read_idle_timeout_ms: Option<u64>,
    /// Deadline for one name lookup in milliseconds, waiting for a resolver slot and
    /// every retry included (default 5000).
    #[arg(long, value_name = "MS")]
    pub dns_timeout_ms: Option<u64>,
    /// Rounds of queries over all name servers per lookup (default: resolv.conf's
    /// `attempts:`, else 2).
    #[arg(long, value_name = "N")]
    pub dns_max_attempts: Option<u32>,
    /// A name no DNS server answered for fails at once for this many seconds
    /// (default 600).
    #[arg(long, value_name = "SECS")]
    pub dns_dead_secs: Option<u64>,
    /// Timed-out lookups of one name at most over the run; then its lookups fail at
    /// once (default 3).
    #[arg(long, value_name = "N")]
    pub dns_max_tries: Option<u32>,
    /// Lookups on the network at once per fetcher; more wait in order (default 2048;
    /// each holds a socket).
    #[arg(long, value_name = "N")]
    pub dns_max_in_flight: Option<usize>,
    /// Lookups started per second per fetcher at most, in bursts of 32 (default
    /// 4000; each sends one or two queries): a local caching server drops what its socket
    /// buffer cannot hold.
    #[arg(long, value_name = "N")]
    pub dns_max_per_sec: Option<u32>,
    /// Resolver configuration to read instead of /etc/resolv.conf (name servers,
    /// search list, ndots, timeout, attempts).
    #[arg(long, value_name = "FILE")]
    pub resolv_conf: Option<PathBuf>,
    /// Never let an idle connection to a shared address carry a request for
    /// another host name (by default it does when the per-IP cap makes the request
    /// wait); for servers that route a connection by its first request only.
    #[arg(long)]
    pub no_shared_host_connections: bool,
    /// Local address outgoing connections leave from (repeatable; curl's
    /// `--interface`, wget's `--bind-address`). Each host always leaves from the same
    /// one, hosts spread over the addresses of the destination's family; an address
    /// that is not this machine's is refused at start.
    #[arg(long, value_name = "ADDR")]
    pub bind_address: Vec<IpAddr>,
    /// DANGEROUS: accept any TLS certificate (test rigs only).
    #[arg(long = "dangerous-skip-tls-verification")]
    pub dangerous_skip_tls_verification: bool,
    /// Proxies and routes.
    #[command(flatten)]
    pub egress: super::egressargs::EgressArgs,
}

impl NetArgs {
    /// Applies the flags to a fetcher configuration.
    ///
    /// # Errors
    /// A malformed `--resolve`, an unreadable or malformed hosts file, a deadline of
    /// 0 ms, a DNS count of 0, or a `--bind-address` that cannot be bound here.
    pub fn apply(&self, cfg: &mut FetcherConfig) -> anyhow::Result<()> {
        for (flag, ms) in [
            ("--timeout-ms", self.timeout_ms),
            ("--connect-timeout-ms", self.connect_timeout_ms),
            ("--first-byte-timeout-ms", self.first_byte_timeout_ms),
            ("--read-idle-timeout-ms", self.read_idle_timeout_ms),
            ("--dns-timeout-ms", self.dns_timeout_ms),
        ] {
            if ms == Some(0) {
                anyhow::bail!("{flag} 0: a deadline of 0 ms fails every fetch; give at least 1");
            }
        }
        for (flag, n) in [
            ("--dns-max-attempts", self.dns_max_attempts.map(u64::from)),
            ("--dns-max-tries", self.dns_max_tries.map(u64::from)),
            (
                "--dns-max-in-flight",
                self.dns_max_in_flight.map(|n| n as u64),
            ),
            ("--dns-max-per-sec", self.dns_max_per_sec.map(u64::from)),
        ] {
            if n == Some(0) {
                anyhow::bail!("{flag} 0: no lookup could be made; give at least 1");
            }
        }
        let dns = &mut cfg.dns;
        if let Some(n) = self.dns_max_attempts {
            dns.attempts = Some(n);
        }
        if let Some(secs) = self.dns_dead_secs {
            dns.dead_for = Duration::from_secs(secs);
        }
        if let Some(n) = self.dns_max_tries {
            dns.max_tries_per_name = n;
        }
        if let Some(n) = self.dns_max_in_flight {
            dns.max_in_flight = n;
        }
        if let Some(n) = self.dns_max_per_sec {
            dns.max_starts_per_sec = n;
        }
        cfg.share_idle_across_hosts = !self.no_shared_host_connections;
        cfg.bind =
            BindAddrs::new(&self.bind_address).map_err(|e| {
                match std::error::Error::source(&e) {
                    Some(cause) => anyhow::anyhow!("--bind-address {e}: {cause}"),
                    None => anyhow::anyhow!("--bind-address {e}"),
                }
            })?;
        if let Some(path) = &self.resolv_conf {
            if !path.is_file() {
                anyhow::bail!("--resolv-conf {}: not a readable file", path.display());
            }
            dns.resolv_conf_path.clone_from(path);
        }
        for r in &self.resolve {
            cfg.dns.overrides.push(parse_resolve(r)?);
        }
        if let Some(path) = &self.hosts_file {
            let text = fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            cfg.dns.overrides.extend(parse_hosts_file(&text)?);
        }
        cfg.tls.ca_files.clone_from(&self.ca_file);
        cfg.tls
            .dangerous()
            .set_skip_verification(self.dangerous_skip_tls_verification);
        if let Some(ms) = self.timeout_ms {
            cfg.deadlines = Deadlines::all(Duration::from_millis(ms));
        }
        let d = &mut cfg.deadlines;
        if let Some(ms) = self.connect_timeout_ms {
            d.connect_timeout = Duration::from_millis(ms);
        }
        if let Some(ms) = self.first_byte_timeout_ms {
            d.first_byte_timeout = Duration::from_millis(ms);
        }
        if let Some(ms) = self.read_idle_timeout_ms {
            d.read_idle_timeout = Duration::from_millis(ms);
        }
        if let Some(ms) = self.dns_timeout_ms {
            d.dns_timeout = Duration::from_millis(ms);
        }
        self.egress.apply(cfg)
    }
}
