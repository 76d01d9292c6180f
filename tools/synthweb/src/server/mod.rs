//! The synthweb server: hand-written HTTP/1.1 over tokio sockets (hyper cannot produce
//! the hostile behaviours; raw writes can), Host-header virtual hosting over one port on
//! each address of a loopback bind range, optional TLS, a request log, hard limits.

pub mod cache;
pub mod conn;
pub mod dns;
pub mod hostile;
pub mod log;
pub mod tls;

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::{watch, Semaphore};

use crate::config::SiteConfig;
use crate::hosts::{HostRole, HostileKind, HOSTILE_HOSTS};
use crate::site::{Scheme, Site};

/// A range of loopback addresses to listen on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BindRange {
    /// First address.
    pub first: Ipv4Addr,
    /// Number of consecutive addresses.
    pub count: u32,
}

/// Most addresses a bind range may hold (each gets one or two listening sockets).
pub const MAX_BIND_ADDRESSES: u32 = 1_024;

impl BindRange {
    /// `--bind-any`: one listener on the wildcard address `0.0.0.0`, which inside a
    /// network namespace whose only interface is loopback receives every 127.x.y.z
    /// (hosts on their own addresses by [`crate::hosts::spread_addr`]). Refused unless
    /// this process's network namespace has no interface but `lo` (read from
    /// `/proc/self/net/dev`, which shows the caller's namespace): in the machine's own
    /// namespace the wildcard address would also listen on every real network.
    ///
    /// # Errors
    /// [`ServeError::NotIsolated`] when another interface exists or the file cannot be
    /// read.
    pub fn any() -> Result<Self, ServeError> {
        let dev = std::fs::read_to_string("/proc/self/net/dev")
            .map_err(|e| ServeError::NotIsolated(format!("cannot read /proc/self/net/dev: {e}")))?;
        let others: Vec<&str> = dev
            .lines()
            .filter_map(|l| l.split_once(':').map(|(name, _)| name.trim()))
            .filter(|name| *name != "lo")
            .collect();
        if !others.is_empty() {
            return Err(ServeError::NotIsolated(format!(
                "interfaces besides lo: {}",
                others.join(", ")
            )));
        }
        Ok(Self {
            first: Ipv4Addr::UNSPECIFIED,
            count: 1,
        })
    }
}

/// Simulated page times: a delay before each response and a per-connection rate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pace {
    /// Added before every response (time to first byte), per request.
    pub latency: Duration,
    /// Most bytes per second written on one connection; `None` = unpaced.
    pub bytes_per_sec: Option<u64>,
}

impl Pace {
    /// How often a paced connection writes a slice (10 per second: 2,500 paced
    /// connections cost 25,000 timer wake-ups a second).
    pub const TICK: Duration = Duration::from_millis(100);

    /// Whether responses are delayed or paced at all.
    #[must_use]
    pub fn is_on(&self) -> bool {
        !self.latency.is_zero() || self.bytes_per_sec.is_some()
    }

    /// Bytes written per tick: a tenth of the rate, within 64 B ..= 64 KiB.
    #[must_use]
    pub fn slice_bytes(&self) -> usize {
        let rate = self.bytes_per_sec.unwrap_or(u64::MAX);
        (rate / 10).clamp(64, 64 * 1024) as usize
    }
}

/// Errors setting up the server.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A bind range that is not `A.B.C.D` or `A.B.C.D/len`.
    #[error("bad bind range {0:?} (expected e.g. 127.0.1.0/24 or 127.0.0.1)")]
    BadRange(String),
    /// A bind address outside 127.0.0.0/8.
    #[error("refusing to bind {0}: synthweb only binds loopback addresses (127.0.0.0/8)")]
    NotLoopback(Ipv4Addr),
    /// `--bind-any` outside a network namespace of its own.
    #[error("refusing to bind 0.0.0.0 outside a loopback-only network namespace ({0}); run it under `unshare -n`")]
    NotIsolated(String),
    /// Too many addresses.
    #[error("bind range holds {0} addresses; at most {MAX_BIND_ADDRESSES} are allowed")]
    TooManyAddresses(u64),
    /// Binding failed.
    #[error("cannot bind {addr}")]
    Bind {
        /// Address.
        addr: SocketAddr,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
}

/// Parse a bind range. A prefix of /30 or shorter skips the network and broadcast
/// addresses, so `127.0.1.0/24` means 127.0.1.1 ..= 127.0.1.254 (host `i` on
/// `127.0.1.(1 + i % 254)`).
///
/// # Errors
/// [`ServeError::BadRange`], [`ServeError::NotLoopback`] or
/// [`ServeError::TooManyAddresses`].
pub fn parse_bind_range(text: &str) -> Result<BindRange, ServeError> {
    let bad = || ServeError::BadRange(text.to_owned());
    let (addr, len) = match text.split_once('/') {
        Some((a, l)) => (a, l.parse::<u32>().map_err(|_| bad())?),
        None => (text, 32),
    };
    let addr: Ipv4Addr = addr.trim().parse().map_err(|_| bad())?;
    if len > 32 {
        return Err(bad());
    }
    let size = 1u64 << (32 - len);
    let net = u32::from(addr) & (u32::MAX.checked_shl(32 - len).unwrap_or(0));
    let (first, count) = if len == 32 {
        (u32::from(addr), 1u64)
    } else if len == 31 {
        (net, 2)
    } else {
        (net + 1, size - 2)
    };
    for a in [first, first.wrapping_add(count.saturating_sub(1) as u32)] {
        let ip = Ipv4Addr::from(a);
        if !ip.is_loopback() {
            return Err(ServeError::NotLoopback(ip));
        }
    }
    if !Ipv4Addr::from(net).is_loopback() {
        return Err(ServeError::NotLoopback(Ipv4Addr::from(net)));
    }
    if count > u64::from(MAX_BIND_ADDRESSES) {
        return Err(ServeError::TooManyAddresses(count));
    }
    Ok(BindRange {
        first: Ipv4Addr::from(first),
        count: count as u32,
    })
}

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The web (ports are filled in after binding).
    pub site: SiteConfig,
    /// Addresses to listen on.
    pub bind: BindRange,
    /// HTTP port (0 = ephemeral, the same on every address).
    pub port: u16,
    /// HTTPS port when `site.tls` (0 = ephemeral).
    pub tls_port: u16,
    /// Where to write the CA certificate (PEM).
    pub ca_out: Option<PathBuf>,
    /// `hostname address port [tls_port]` lines.
    pub hosts_file: Option<PathBuf>,
    /// Seed URLs.
    pub seeds_file: Option<PathBuf>,
    /// Request log.
    pub log: Option<PathBuf>,
    /// Stop after this many requests.
    pub max_requests: Option<u64>,
    /// Stop after this many seconds.
    pub max_secs: Option<u64>,
    /// Most simultaneous connections (further accepts wait).
    pub max_connections: usize,
    /// Close a connection idle this long.
    pub idle_timeout: Duration,
    /// Runtime worker threads.
    pub threads: usize,
    /// Response cache slots (each holds one page up to 128 KiB).
    pub cache_slots: usize,
    /// Simulated page times.
    pub pace: Pace,
    /// Serve the web's names over DNS (UDP) on this loopback address (`--dns`).
    pub dns: Option<SocketAddr>,
    /// TTL of the DNS answers, in seconds.
    pub dns_ttl_secs: u32,
}

/// State shared by every connection.
pub struct Shared {
    /// The generator.
    pub site: Site,
    /// Generated responses.
    pub cache: cache::Cache,
    /// Log channel.
    pub log: Option<tokio::sync::mpsc::Sender<log::LogMsg>>,
    /// Requests answered so far.
    pub requests: AtomicU64,
    /// Request limit.
    pub max_requests: Option<u64>,
    /// Set to true to shut down.
    pub shutdown_tx: watch::Sender<bool>,
    /// Observed by connections.
    pub shutdown_rx: watch::Receiver<bool>,
    /// Idle timeout.
    pub idle_timeout: Duration,
    /// Simulated page times.
    pub pace: Pace,
    next_conn: AtomicU64,
}

/// What the server prints when it is ready (one JSON line on stdout).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Ready {
    /// Always true.
    pub ready: bool,
    /// Process id.
    pub pid: u32,
    /// HTTP port.
    pub http_port: u16,
    /// HTTPS port.
    pub tls_port: Option<u16>,
    /// First listening address.
    pub bind_first: Ipv4Addr,
    /// Number of listening addresses.
    pub bind_count: u32,
    /// Host count.
    pub hosts: u32,
    /// Seed.
    pub seed: u64,
    /// Profiles.
    pub profile: String,
    /// Resident set size after start-up (KiB).
    pub vm_rss_kb: u64,
    /// The name server's address (`--dns`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dns: Option<SocketAddr>,
}

/// What the server prints when it stops.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Done {
    /// Always true.
    pub done: bool,
    /// Requests answered.
    pub requests: u64,
    /// Log lines written.
    pub log_records: u64,
    /// Resident set size at the end (KiB).
    pub vm_rss_kb: u64,
    /// What the name server answered (`--dns`).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub dns: Option<dns::DnsCounts>,
}

/// Resident set size of this process in KiB (Linux), 0 if unknown.
#[must_use]
pub fn vm_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn bind_one(addr: SocketAddr) -> Result<TcpListener, ServeError> {
    let err = |source| ServeError::Bind { addr, source };
    let s = TcpSocket::new_v4().map_err(err)?;
    s.set_reuseaddr(true).map_err(err)?;
    s.bind(addr).map_err(err)?;
    // A wide crawl opens thousands of connections at once.
    s.listen(4096).map_err(err)
}

/// Bind `port` on every address (an ephemeral port is chosen on the first address and
/// reused on the others; retried if another process holds it somewhere).
fn bind_all(range: BindRange, port: u16) -> Result<(u16, Vec<TcpListener>), ServeError> {
    let mut last_err = None;
    for _ in 0..20 {
        let first = SocketAddr::from((range.first, port));
        let l0 = bind_one(first)?;
        let actual = l0
            .local_addr()
            .map_err(|source| ServeError::Bind {
                addr: first,
                source,
            })?
            .port();
        let mut all = vec![l0];
        let mut ok = true;
        for i in 1..range.count {
            let ip = Ipv4Addr::from(u32::from(range.first) + i);
            match bind_one(SocketAddr::from((ip, actual))) {
                Ok(l) => all.push(l),
                Err(e) if port == 0 => {
                    last_err = Some(e);
                    ok = false;
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        if ok {
            return Ok((actual, all));
        }
    }
    Err(last_err.unwrap_or(ServeError::BadRange("no port".to_owned())))
}

fn write_files(site: &Site, cfg: &ServerConfig) -> anyhow::Result<()> {
    if let Some(path) = &cfg.hosts_file {
        let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
        for i in 0..site.host_count() {
            let name = site.host_name(i);
            let addr = site.host_addr(i);
            match cfg.site.tls_port.filter(|_| cfg.site.tls) {
                Some(tp) => writeln!(w, "{name} {addr} {} {tp}", cfg.site.http_port)?,
                None => writeln!(w, "{name} {addr} {}", cfg.site.http_port)?,
            }
        }
        w.flush()?;
    }
    if let Some(path) = &cfg.seeds_file {
        let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
        for s in site.seeds() {
            writeln!(w, "{s}")?;
        }
        w.flush()?;
    }
    Ok(())
}

fn hostile_name(site: &Site, kind: HostileKind) -> Option<String> {
    HOSTILE_HOSTS
        .iter()
        .find(|(i, k)| *k == kind && site.role(*i) == HostRole::Hostile(kind))
        .map(|(i, _)| site.host_name(*i))
}

/// Run the server until a signal or a limit stops it. `ready` receives the ready report
/// once every socket is bound and the files are written.
///
/// # Errors
/// Bind failures, invalid config, file errors.
pub fn run(mut cfg: ServerConfig, ready: impl FnOnce(&Ready)) -> anyhow::Result<Done> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cfg.threads.max(1))
        .enable_all()
        .thread_name("synthweb")
        .build()?;
    let result = rt.block_on(async move {
        let (http_port, http_listeners) = bind_all(cfg.bind, cfg.port)?;
        cfg.site.http_port = http_port;
        cfg.site.bind_base = cfg.bind.first;
        cfg.site.bind_count = cfg.bind.count;
        let mut tls_listeners = Vec::new();
        if cfg.site.tls {
            let (tp, ls) = bind_all(cfg.bind, cfg.tls_port)?;
            cfg.site.tls_port = Some(tp);
            tls_listeners = ls;
        } else {
            cfg.site.tls_port = None;
        }
        let site = Site::new(cfg.site.clone())?;
        let tls = if cfg.site.tls {
            let m = tls::generate(
                hostile_name(&site, HostileKind::TlsHandshakeFailure),
                hostile_name(&site, HostileKind::TlsExpiredCert),
            )?;
            if let Some(p) = &cfg.ca_out {
                std::fs::write(p, &m.ca_pem)?;
            }
            Some(tokio_rustls::TlsAcceptor::from(m.config))
        } else {
            None
        };
        write_files(&site, &cfg)?;
        let dns_server = match cfg.dns {
            Some(addr) => Some(dns::start(site.clone(), addr, cfg.dns_ttl_secs)?),
            None => None,
        };
        let (log_tx, log_thread) = match &cfg.log {
            Some(p) => {
                let (tx, h) = log::start(p)?;
                (Some(tx), Some(h))
            }
            None => (None, None),
        };
        let (shutdown_tx, shutdown_rx) = watch::channel(false);
        let shared = Arc::new(Shared {
            cache: cache::Cache::new(cfg.cache_slots, 128 * 1024),
            site,
            log: log_tx.clone(),
            requests: AtomicU64::new(0),
            max_requests: cfg.max_requests,
            shutdown_tx,
            shutdown_rx,
            idle_timeout: cfg.idle_timeout,
            pace: cfg.pace,
            next_conn: AtomicU64::new(0),
        });
        if cfg.site.profiles.hostile {
            // Build the gzip bombs off the accept path (about 0.2 s of CPU, once).
            tokio::task::spawn_blocking(|| {
                let _ = crate::bomb::double();
            });
        }
        let conns = Arc::new(Semaphore::new(cfg.max_connections.max(1)));
        for l in http_listeners {
            tokio::spawn(accept_loop(shared.clone(), conns.clone(), l, None));
        }
        for l in tls_listeners {
            tokio::spawn(accept_loop(shared.clone(), conns.clone(), l, tls.clone()));
        }
        // The stop signals are caught from here on, before the ready report: a
        // SIGINT sent right after it must find the handler in place (tokio installs
        // one when its stream is made, not when the future is first polled), or the
        // default action would end the process without the `done` report.
        let signals = StopSignals::install();
        ready(&Ready {
            ready: true,
            pid: std::process::id(),
            http_port,
            tls_port: cfg.site.tls_port,
            bind_first: cfg.bind.first,
            bind_count: cfg.bind.count,
            hosts: cfg.site.hosts,
            seed: cfg.site.seed,
            profile: cfg.site.profiles.name(),
            vm_rss_kb: vm_rss_kb(),
            dns: dns_server.as_ref().map(|d| d.addr),
        });
        wait_for_stop(&shared, cfg.max_secs, signals).await;
        let dns_counts = dns_server.map(dns::DnsServer::stop);
        let _ = shared.shutdown_tx.send(true);
        // Let connections log their last requests (bounded wait).
        let max = cfg.max_connections.max(1);
        for _ in 0..200 {
            if conns.available_permits() == max {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let mut log_records = 0;
        if let (Some(tx), Some(h)) = (log_tx, log_thread) {
            let _ = tx.send(log::LogMsg::Shutdown).await;
            drop(tx);
            log_records = tokio::task::spawn_blocking(move || h.join())
                .await
                .ok()
                .and_then(|j| j.ok())
                .and_then(Result::ok)
                .unwrap_or(0);
        }
        Ok::<Done, anyhow::Error>(Done {
            done: true,
            requests: shared.requests.load(Ordering::Relaxed),
            log_records,
            vm_rss_kb: vm_rss_kb(),
            dns: dns_counts,
        })
    });
    rt.shutdown_timeout(Duration::from_millis(200));
    result
}

/// SIGINT and SIGTERM, caught (see [`run`]); `None` where a stream could not be made.
struct StopSignals {
    #[cfg(unix)]
    interrupt: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    terminate: Option<tokio::signal::unix::Signal>,
}

impl StopSignals {
    fn install() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Self {
                interrupt: signal(SignalKind::interrupt()).ok(),
                terminate: signal(SignalKind::terminate()).ok(),
            }
        }
        #[cfg(not(unix))]
        Self {}
    }
}

#[cfg(unix)]
async fn next_signal(s: &mut Option<tokio::signal::unix::Signal>) {
    match s {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending::<()>().await,
    }
}

async fn wait_for_stop(shared: &Shared, max_secs: Option<u64>, mut signals: StopSignals) {
    let mut rx = shared.shutdown_rx.clone();
    let limit = async {
        match max_secs {
            Some(s) => tokio::time::sleep(Duration::from_secs(s)).await,
            None => std::future::pending::<()>().await,
        }
    };
    #[cfg(unix)]
    {
        tokio::select! {
            () = next_signal(&mut signals.interrupt) => {}
            () = next_signal(&mut signals.terminate) => {}
            () = limit => {}
            _ = rx.wait_for(|v| *v) => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = &mut signals;
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            () = limit => {}
            _ = rx.wait_for(|v| *v) => {}
        }
    }
}

async fn accept_loop(
    shared: Arc<Shared>,
    conns: Arc<Semaphore>,
    listener: TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
) {
    let mut shutdown = shared.shutdown_rx.clone();
    let scheme = if tls.is_some() {
        Scheme::Https
    } else {
        Scheme::Http
    };
    loop {
        let permit = tokio::select! {
            p = conns.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => break },
            _ = shutdown.changed() => break,
        };
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = shutdown.changed() => break,
        };
        let Ok((tcp, peer)) = accepted else {
            // Out of descriptors or similar: back off briefly.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let _ = tcp.set_nodelay(true);
        let local = tcp.local_addr().unwrap_or(peer);
        let info = conn::ConnInfo {
            id: shared.next_conn.fetch_add(1, Ordering::Relaxed),
            local,
            peer,
            scheme,
        };
        let shared = shared.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            match tls {
                None => conn::serve(shared, tcp, info).await,
                Some(acceptor) => {
                    let hs =
                        tokio::time::timeout(Duration::from_secs(10), acceptor.accept(tcp)).await;
                    if let Ok(Ok(stream)) = hs {
                        conn::serve(shared, stream, info).await;
                    }
                }
            }
            drop(permit);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_ranges() {
        let r = parse_bind_range("127.0.1.0/24").unwrap();
        assert_eq!(r.first, Ipv4Addr::new(127, 0, 1, 1));
        assert_eq!(r.count, 254);
        assert_eq!(parse_bind_range("127.0.0.1").unwrap().count, 1);
        assert!(matches!(
            parse_bind_range("10.0.0.1"),
            Err(ServeError::NotLoopback(_))
        ));
        assert!(matches!(
            parse_bind_range("0.0.0.0"),
            Err(ServeError::NotLoopback(_))
        ));
        assert!(matches!(
            parse_bind_range("0.0.0.0/0"),
            Err(ServeError::NotLoopback(_))
        ));
        assert!(matches!(
            parse_bind_range("127.0.0.0/8"),
            Err(ServeError::TooManyAddresses(_))
        ));
        assert!(parse_bind_range("nonsense").is_err());
    }
}
