//! Configuration of a [`crate::net::Fetcher`]: every cap and deadline in one place, each
//! with its unit in its name (STYLE.md §4).

use std::sync::Arc;
use std::time::Duration;

use crate::net::bind::BindAddrs;
use crate::net::dns::DnsConfig;
use crate::net::egress::book::Egress;
use crate::net::per_ip::IpSlots;
use crate::tls::TlsConfig;

/// Per-phase deadlines and the minimum transfer rate (see `docs/fetcher.md`).
#[derive(Clone, Copy, Debug)]
pub struct Deadlines {
    /// Name resolution, from the lookup being asked to the answer: queueing for an
    /// in-flight slot and every retry included (`--dns-timeout-ms`).
    pub dns_timeout: Duration,
    /// TCP connect: SYN sent to the connection being writable.
    pub connect_timeout: Duration,
    /// TLS handshake.
    pub tls_timeout: Duration,
    /// A proxy taking our `CONNECT` request or SOCKS5 messages, and answering them
    /// (issue 29): past it, `Timeout(Proxy)` until our connect request is out, then
    /// `Timeout(Connect)`, the proxy still dialling the origin.
    pub proxy_timeout: Duration,
    /// From starting to send the request to the first response byte.
    pub first_byte_timeout: Duration,
    /// Longest silence between two reads while the response is arriving.
    pub read_idle_timeout: Duration,
    /// The whole exchange, from the request leaving the queue to the last byte.
    pub total_timeout: Duration,
    /// A response slower than this many bytes per second over a `rate_window` is cut off
    /// (defends against one-byte-per-second drips that never trip `read_idle_timeout`).
    /// Zero disables the check.
    pub min_rate_bytes_per_sec: u64,
    /// The window over which `min_rate_bytes_per_sec` is measured.
    pub rate_window: Duration,
}

impl Default for Deadlines {
    fn default() -> Self {
        Self {
            dns_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(10),
            tls_timeout: Duration::from_secs(10),
            proxy_timeout: Duration::from_secs(10),
            first_byte_timeout: Duration::from_secs(30),
            read_idle_timeout: Duration::from_secs(20),
            total_timeout: Duration::from_secs(120),
            min_rate_bytes_per_sec: 256,
            rate_window: Duration::from_secs(10),
        }
    }
}

impl Deadlines {
    /// Every deadline set to `total` (and the per-phase ones no longer than it); what
    /// `--timeout-ms` sets.
    pub fn all(total: Duration) -> Self {
        let d = Self::default();
        Self {
            dns_timeout: d.dns_timeout.min(total),
            connect_timeout: d.connect_timeout.min(total),
            tls_timeout: d.tls_timeout.min(total),
            proxy_timeout: d.proxy_timeout.min(total),
            first_byte_timeout: d.first_byte_timeout.min(total),
            read_idle_timeout: d.read_idle_timeout.min(total),
            total_timeout: total,
            min_rate_bytes_per_sec: d.min_rate_bytes_per_sec,
            rate_window: d.rate_window.min(total),
        }
    }
}

/// Keep-alive pool limits.
#[derive(Clone, Copy, Debug)]
pub struct PoolConfig {
    /// Idle connections kept per (scheme, host, port).
    pub max_idle_per_host: usize,
    /// Idle connections kept over all hosts; the oldest idle one is closed beyond it.
    pub max_idle_total: usize,
    /// An idle connection unused this long is closed.
    pub idle_timeout: Duration,
    /// A connection serves at most this many requests, then is closed.
    pub max_requests_per_connection: u32,
}

impl Default for PoolConfig {
    fn default() -> Self {
        Self {
            max_idle_per_host: 8,
            max_idle_total: 4096,
            idle_timeout: Duration::from_secs(30),
            max_requests_per_connection: 10_000,
        }
    }
}

/// Everything a [`crate::net::Fetcher`] needs.
#[derive(Clone, Debug)]
pub struct FetcherConfig {
    /// Open connections (connecting, busy or idle) at most; requests beyond wait.
    pub max_connections: usize,
    /// Requests waiting for a connection slot or DNS at most; more are refused with
    /// [`crate::fetch::FailReason::Overloaded`].
    pub max_queued_requests: usize,
    /// Deadlines for every phase.
    pub deadlines: Deadlines,
    /// Keep-alive pool limits.
    pub pool: PoolConfig,
    /// Resolver: servers and search list, retries, caches, static overrides.
    pub dns: DnsConfig,
    /// TLS trust and session cache.
    pub tls: TlsConfig,
    /// Size of the loop's single read buffer, shared by all connections.
    pub read_buffer_bytes: usize,
    /// mio events handled per poll.
    pub events_capacity: usize,
    /// Decoded body bytes of the fetches one poll finishes, about: once the fetches
    /// finished in a poll hold this much, the connections still ready wait for the
    /// next poll (first in line there), their bytes left in the kernel's socket
    /// buffers. A caller busy with the pages of its last poll otherwise found hundreds
    /// of responses waiting at its next one and got them all decoded at once (the
    /// memory test: 215 pages of 280 KB, 54 MiB, in one poll of one shard).
    pub max_done_bytes: usize,
    /// Connect to loopback, private, link-local... addresses too. On by default for
    /// the bare fetcher (`trawl fetch` goes where it is told); the crawl engine turns
    /// it off unless `--allow-private-addresses` is given, so links found on the web
    /// cannot steer the crawler into internal networks. See
    /// [`crate::net::is_blocked_address`].
    pub allow_private_addresses: bool,
    /// The per-IP connection cap, shared by every fetcher given the same table (the
    /// crawl engine gives one table to all its shards, so the cap holds for the whole
    /// process). `None`: no per-IP cap. See `docs/fetcher.md`, "Per-IP cap".
    pub ip_slots: Option<Arc<IpSlots>>,
    /// Longest a request waits for a per-IP slot; then it fails with
    /// [`crate::fetch::TimeoutPhase::Queue`]. The wait does not count against the
    /// connect or total deadlines, which start when the connection is opened.
    pub ip_wait_timeout: Duration,
    /// Let an idle connection carry a request for another host name on the same
    /// address when the per-IP cap makes that request wait (shared hosting; HTTPS only
    /// when the certificate covers the name; see `docs/fetcher.md`). On by default; off for servers that route a connection by
    /// its first request only (`--no-shared-host-connections`).
    pub share_idle_across_hosts: bool,
    /// The routes through proxies (`--proxy`, `--proxy-rules`, the environment), shared
    /// by every fetcher of the process with the per-proxy connection counts. `None`:
    /// every request goes direct, and the direct path pays nothing for proxies.
    pub egress: Option<Arc<Egress>>,
    /// Source addresses outgoing connections leave from (`--bind-address`), each host
    /// always from the same one; empty (the default): the system chooses. See
    /// `docs/network.md`.
    pub bind: BindAddrs,
}

impl Default for FetcherConfig {
    fn default() -> Self {
        Self {
            max_connections: 8192,
            max_queued_requests: 1 << 20,
            deadlines: Deadlines::default(),
            pool: PoolConfig::default(),
            dns: DnsConfig::default(),
            tls: TlsConfig::default(),
            read_buffer_bytes: 64 << 10,
            events_capacity: 1024,
            max_done_bytes: 4 << 20,
            allow_private_addresses: true,
            ip_slots: None,
            ip_wait_timeout: Duration::from_secs(300),
            share_idle_across_hosts: true,
            egress: None,
            bind: BindAddrs::default(),
        }
    }
}
