//! Network flags shared by `trawl fetch` and `trawl crawl`: static name overrides,
//! extra CA files, deadlines, and the dangerous TLS switch. One definition, so the two
//! commands spell and apply them the same way.

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use trawl::net::{parse_hosts_file, parse_resolve, Deadlines, FetcherConfig};

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
    /// DANGEROUS: accept any TLS certificate (test rigs only).
    #[arg(long = "dangerous-skip-tls-verification")]
    pub dangerous_skip_tls_verification: bool,
}

impl NetArgs {
    /// Applies the flags to a fetcher configuration.
    ///
    /// # Errors
    /// A malformed `--resolve`, an unreadable or malformed hosts file, or a deadline
    /// of 0 ms.
    pub fn apply(&self, cfg: &mut FetcherConfig) -> anyhow::Result<()> {
        for (flag, ms) in [
            ("--timeout-ms", self.timeout_ms),
            ("--connect-timeout-ms", self.connect_timeout_ms),
            ("--first-byte-timeout-ms", self.first_byte_timeout_ms),
            ("--read-idle-timeout-ms", self.read_idle_timeout_ms),
        ] {
            if ms == Some(0) {
                anyhow::bail!("{flag} 0: a deadline of 0 ms fails every fetch; give at least 1");
            }
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
        Ok(())
    }
}
