//! `hyperload`: a baseline HTTP/1.1 load client built on hyper 1.x and tokio, for
//! comparing trawl's hand-written fetcher against a mainstream async client.
//!
//! It opens N keep-alive connections (one tokio task per connection, hyper's
//! `client::conn::http1` API, so pooling cannot hide connection counts), sends GET
//! requests over them until a request count or a duration is reached, reads every body
//! fully, and prints one JSON object: requests, errors, bytes, seconds, rps, and CPU time
//! from `getrusage(RUSAGE_SELF)` (user, system, microseconds per request).
//!
//! Loopback only: the target address must be a loopback address (`--connect` or the
//! URL's host); the URL's host still goes into the `Host` header, so synthweb's virtual
//! hosts work with `--connect 127.0.0.1:PORT`.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Parser;
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;

/// Command-line arguments.
#[derive(Debug, Parser)]
#[command(name = "hyperload", version, about)]
struct Args {
    /// Concurrent keep-alive connections.
    #[arg(short = 'c', long, default_value_t = 64)]
    connections: usize,
    /// Total requests to send (over all connections); 0 means no count limit.
    #[arg(short = 'n', long, default_value_t = 10_000)]
    requests: u64,
    /// Stop after this many seconds even if requests remain; 0 means no time limit.
    #[arg(short = 'd', long, default_value_t = 60.0)]
    duration_secs: f64,
    /// Tokio worker threads (default: available parallelism).
    #[arg(short = 't', long)]
    threads: Option<usize>,
    /// Connect to this loopback address instead of resolving the URL's host.
    #[arg(long)]
    connect: Option<SocketAddr>,
    /// A file with one URL per line, fetched round-robin (all on one host:port).
    #[arg(long)]
    urls: Option<std::path::PathBuf>,
    /// Extra request header `Name: value` (repeatable), e.g. `Accept-Encoding: gzip`.
    #[arg(short = 'H', long = "header")]
    headers: Vec<String>,
    /// URLs to fetch round-robin (all on one host:port).
    url: Vec<String>,
}

/// One request to send: target and Host value.
struct Target {
    path_and_query: String,
    host: String,
}

/// Counters shared by the connection tasks.
#[derive(Default)]
struct Counters {
    /// Next request number to claim.
    next: AtomicU64,
    completed: AtomicU64,
    errors: AtomicU64,
    bytes: AtomicU64,
    connects: AtomicU64,
    non_2xx: AtomicU64,
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hyperload: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run() -> anyhow::Result<()> {
    let args = Args::parse();
    if args.connections == 0 {
        bail!("--connections must be at least 1");
    }
    if args.requests == 0 && args.duration_secs <= 0.0 {
        bail!("need a request count or a duration");
    }
    let mut urls = args.url.clone();
    if let Some(file) = &args.urls {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        urls.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(str::to_owned),
        );
    }
    if urls.is_empty() {
        bail!("no URL given");
    }
    let mut targets = Vec::with_capacity(urls.len());
    let mut addr = args.connect;
    for u in &urls {
        let url = url::Url::parse(u).with_context(|| format!("bad URL {u}"))?;
        if url.scheme() != "http" {
            bail!("only http:// URLs are supported: {u}");
        }
        let host = url.host_str().context("URL without host")?.to_owned();
        let port = url.port_or_known_default().unwrap_or(80);
        if addr.is_none() {
            let resolved = (host.trim_start_matches('[').trim_end_matches(']'), port)
                .to_socket_addrs()
                .with_context(|| format!("resolving {host}"))?
                .next()
                .context("no address")?;
            addr = Some(resolved);
        }
        let host_header = match url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host,
        };
        let mut path_and_query = url.path().to_owned();
        if let Some(q) = url.query() {
            path_and_query.push('?');
            path_and_query.push_str(q);
        }
        targets.push(Target {
            path_and_query,
            host: host_header,
        });
    }
    let addr = addr.context("no address")?;
    if !is_loopback(addr.ip()) {
        bail!("{addr} is not a loopback address: hyperload only loads loopback servers");
    }
    let mut extra = Vec::new();
    for h in &args.headers {
        let (name, value) = h
            .split_once(':')
            .with_context(|| format!("bad header {h}"))?;
        extra.push((
            hyper::header::HeaderName::from_bytes(name.trim().as_bytes())?,
            hyper::header::HeaderValue::from_str(value.trim())?,
        ));
    }

    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    if let Some(t) = args.threads {
        builder.worker_threads(t.max(1));
    }
    let runtime = builder.build()?;

    let counters = Arc::new(Counters::default());
    let targets = Arc::new(targets);
    let extra = Arc::new(extra);
    let limit = if args.requests == 0 {
        u64::MAX
    } else {
        args.requests
    };
    let deadline = (args.duration_secs > 0.0).then(|| Duration::from_secs_f64(args.duration_secs));

    let cpu_before = cpu_times();
    let start = Instant::now();
    runtime.block_on(async {
        let deadline = deadline.map(|d| tokio::time::Instant::now() + d);
        let mut tasks = Vec::with_capacity(args.connections);
        for _ in 0..args.connections {
            let counters = Arc::clone(&counters);
            let targets = Arc::clone(&targets);
            let extra = Arc::clone(&extra);
            tasks.push(tokio::spawn(connection_task(
                addr, counters, targets, extra, limit, deadline,
            )));
        }
        for t in tasks {
            // A panicked task is an error of this tool, reported as such.
            if let Err(e) = t.await {
                eprintln!("hyperload: task failed: {e}");
            }
        }
    });
    let seconds = start.elapsed().as_secs_f64();
    let cpu_after = cpu_times();
    drop(runtime);

    let requests = counters.completed.load(Ordering::Relaxed);
    let user = cpu_after.0 - cpu_before.0;
    let sys = cpu_after.1 - cpu_before.1;
    let rps = if seconds > 0.0 {
        requests as f64 / seconds
    } else {
        0.0
    };
    let us_per_request = if requests > 0 {
        (user + sys) * 1e6 / requests as f64
    } else {
        0.0
    };
    println!(
        "{{\"client\":\"hyper\",\"connections\":{},\"connects\":{},\"requests\":{},\"errors\":{},\"non_2xx\":{},\"bytes\":{},\"seconds\":{:.6},\"rps\":{:.1},\"cpu_user_s\":{:.6},\"cpu_sys_s\":{:.6},\"cpu_us_per_request\":{:.3}}}",
        args.connections,
        counters.connects.load(Ordering::Relaxed),
        requests,
        counters.errors.load(Ordering::Relaxed),
        counters.non_2xx.load(Ordering::Relaxed),
        counters.bytes.load(Ordering::Relaxed),
        seconds,
        rps,
        user,
        sys,
        us_per_request
    );
    Ok(())
}

/// Claims request numbers and sends them over one keep-alive connection, reconnecting
/// after a failure (at most a bounded number of times in a row).
async fn connection_task(
    addr: SocketAddr,
    counters: Arc<Counters>,
    targets: Arc<Vec<Target>>,
    extra: Arc<Vec<(hyper::header::HeaderName, hyper::header::HeaderValue)>>,
    limit: u64,
    deadline: Option<tokio::time::Instant>,
) {
    const MAX_CONSECUTIVE_FAILURES: u32 = 5;
    let mut failures = 0u32;
    'connect: loop {
        if failures >= MAX_CONSECUTIVE_FAILURES || past(deadline) {
            return;
        }
        let stream = match tokio::net::TcpStream::connect(addr).await {
            Ok(s) => s,
            Err(_) => {
                counters.errors.fetch_add(1, Ordering::Relaxed);
                failures += 1;
                continue;
            }
        };
        // Plain request/response traffic: disable Nagle as wrk and trawl do.
        let _ = stream.set_nodelay(true);
        counters.connects.fetch_add(1, Ordering::Relaxed);
        let (mut sender, conn) =
            match hyper::client::conn::http1::handshake(TokioIo::new(stream)).await {
                Ok(pair) => pair,
                Err(_) => {
                    counters.errors.fetch_add(1, Ordering::Relaxed);
                    failures += 1;
                    continue;
                }
            };
        let driver = tokio::spawn(conn);
        loop {
            if past(deadline) {
                break 'connect;
            }
            let n = counters.next.fetch_add(1, Ordering::Relaxed);
            if n >= limit {
                break 'connect;
            }
            let Some(target) = targets.get((n % targets.len() as u64) as usize) else {
                break 'connect;
            };
            let mut request = hyper::Request::get(target.path_and_query.as_str())
                .header(hyper::header::HOST, target.host.as_str());
            for (name, value) in extra.iter() {
                request = request.header(name, value);
            }
            let Ok(request) = request.body(Empty::<Bytes>::new()) else {
                counters.errors.fetch_add(1, Ordering::Relaxed);
                break 'connect;
            };
            let outcome = async {
                sender.ready().await?;
                let response = sender.send_request(request).await?;
                let status = response.status();
                let body = response.into_body().collect().await?.to_bytes();
                Ok::<_, hyper::Error>((status, body.len()))
            };
            let outcome = match deadline {
                Some(d) => match tokio::time::timeout_at(d, outcome).await {
                    Ok(r) => r,
                    Err(_) => break 'connect,
                },
                None => outcome.await,
            };
            match outcome {
                Ok((status, len)) => {
                    failures = 0;
                    counters.completed.fetch_add(1, Ordering::Relaxed);
                    counters.bytes.fetch_add(len as u64, Ordering::Relaxed);
                    if !status.is_success() {
                        counters.non_2xx.fetch_add(1, Ordering::Relaxed);
                    }
                }
                Err(_) => {
                    counters.errors.fetch_add(1, Ordering::Relaxed);
                    failures += 1;
                    driver.abort();
                    continue 'connect;
                }
            }
        }
    }
}

fn past(deadline: Option<tokio::time::Instant>) -> bool {
    deadline.is_some_and(|d| tokio::time::Instant::now() >= d)
}

fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// (user, system) CPU seconds of this process so far, from `getrusage(RUSAGE_SELF)`.
// The only unsafe code in this tool: one FFI call to read the process's CPU times.
#[allow(unsafe_code)]
fn cpu_times() -> (f64, f64) {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a full `rusage` through the pointer, which points to a
    // properly sized and aligned, zero-initialized `rusage` owned by this frame.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    if rc != 0 {
        return (0.0, 0.0);
    }
    // SAFETY: the struct was zero-initialized (a valid `rusage`) and getrusage succeeded.
    let usage = unsafe { usage.assume_init() };
    let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}
