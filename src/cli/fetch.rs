//! `trawl fetch`: fetch many URLs in parallel over one event loop, one JSON line each.

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;
use serde::Serialize;

use trawl::fetch::{FetchLimits, FetchOutcome, FetchRequest};
use trawl::http::{BodyLimitMode, Method, RequestHead};
use trawl::net::{Fetcher, FetcherConfig};

/// Raw flags of `trawl fetch`.
#[derive(Debug, Args)]
pub struct FetchArgs {
    /// URLs to fetch.
    pub urls: Vec<String>,
    /// Read URLs from FILE, one per line (blank lines and `#` comments skipped).
    #[arg(long = "urls", value_name = "FILE")]
    pub urls_file: Option<PathBuf>,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 16)]
    pub concurrency: usize,
    /// Name overrides, CA files, deadlines.
    #[command(flatten)]
    pub net: trawl::options::netargs::NetArgs,
    /// Write each decoded body to DIR/<index>.body (index = position in the input).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// User-Agent header (default: trawl's robot identification).
    #[arg(long)]
    pub user_agent: Option<String>,
    /// Cap on body bytes from the wire; longer bodies are truncated and marked.
    #[arg(long, default_value_t = 16 << 20)]
    pub max_body_bytes: u64,
    /// Send HEAD instead of GET.
    #[arg(long)]
    pub head: bool,
    /// Open connections per server IP address at most (0: no cap, the default: the
    /// bare fetcher goes where it is told, like `--concurrency`).
    #[arg(long, default_value_t = 0)]
    pub per_ip_connections: u32,
}

/// One output line.
#[derive(Serialize)]
struct Line<'a> {
    url: &'a str,
    status: Option<u16>,
    outcome: &'a str,
    bytes: u64,
    decoded_bytes: u64,
    ms: u64,
    error: Option<String>,
    truncated: bool,
    peer: Option<String>,
    reused: bool,
    /// The route taken (present when proxies are configured).
    #[serde(skip_serializing_if = "Option::is_none")]
    route: Option<&'a str>,
}

/// Runs `trawl fetch`.
///
/// # Errors
/// Bad flags, unreadable input files, or an event loop that cannot start. Individual
/// fetch failures are JSON lines, not errors.
pub fn run(args: FetchArgs) -> anyhow::Result<ExitCode> {
    let mut urls = args.urls.clone();
    if let Some(path) = &args.urls_file {
        let text =
            fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        urls.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(String::from),
        );
    }
    let mut cfg = FetcherConfig::default();
    args.net.apply(&mut cfg)?;
    let concurrency = args.concurrency.max(1);
    cfg.max_connections = cfg.max_connections.max(concurrency);
    if args.per_ip_connections > 0 {
        cfg.ip_slots = Some(trawl::net::IpSlots::new(args.per_ip_connections));
    }
    if let Some(dir) = &args.out {
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut limits = FetchLimits::default();
    limits.response.max_body_bytes = args.max_body_bytes;
    limits.response.body_limit_mode = BodyLimitMode::Truncate;
    let user_agent = args
        .user_agent
        .clone()
        .unwrap_or_else(trawl::default_user_agent);

    let egress = cfg.egress.clone();
    let mut fetcher = Fetcher::new(cfg)?;
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut next = 0usize;
    let mut outcomes = Vec::new();
    loop {
        while fetcher.in_flight() < concurrency && next < urls.len() {
            let index = next;
            next += 1;
            let raw = urls.get(index).map(String::as_str).unwrap_or_default();
            match url::Url::parse(raw) {
                Ok(url) => {
                    let mut head = RequestHead::get(url, user_agent.clone());
                    if args.head {
                        head.method = Method::Head;
                    }
                    fetcher.submit(FetchRequest {
                        id: index as u64,
                        head,
                        limits,
                        addr: None,
                    });
                }
                Err(e) => write_line(
                    &mut out,
                    &Line {
                        url: raw,
                        status: None,
                        outcome: "invalid_url",
                        bytes: 0,
                        decoded_bytes: 0,
                        ms: 0,
                        error: Some(format!("invalid url: {e}")),
                        truncated: false,
                        peer: None,
                        reused: false,
                        route: None,
                    },
                )?,
            }
        }
        if fetcher.in_flight() == 0 && next >= urls.len() {
            break;
        }
        fetcher.poll(&mut outcomes, None)?;
        for o in outcomes.drain(..) {
            if let Some(dir) = &args.out {
                let path = dir.join(format!("{:06}.body", o.id));
                fs::write(&path, &o.body)
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
            report(&mut out, &urls, &o, egress.as_deref())?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn report(
    out: &mut impl Write,
    urls: &[String],
    o: &FetchOutcome,
    egress: Option<&trawl::net::egress::book::Egress>,
) -> anyhow::Result<()> {
    let url = urls
        .get(o.id as usize)
        .map(String::as_str)
        .unwrap_or(o.url.as_str());
    write_line(
        out,
        &Line {
            url,
            status: o.status(),
            outcome: o.error.as_ref().map_or("ok", |e| e.kind()),
            bytes: o.wire_bytes,
            decoded_bytes: o.decoded_bytes,
            ms: u64::try_from(o.timings.total.as_millis()).unwrap_or(u64::MAX),
            error: o.error.as_ref().map(ToString::to_string),
            truncated: o.body_truncated,
            peer: o.peer.map(|p| p.to_string()),
            reused: o.reused_connection,
            route: egress.map(|e| {
                let id = e.pick(
                    o.url.scheme() == "https",
                    o.url.host_str().unwrap_or_default(),
                );
                e.routes().route(id).label.as_str()
            }),
        },
    )
}

fn write_line(out: &mut impl Write, line: &Line<'_>) -> anyhow::Result<()> {
    serde_json::to_writer(&mut *out, line)?;
    out.write_all(b"\n")?;
    Ok(())
}
