//! Name resolution on the fetcher's own event loop: a DNS client of our own, no
//! resolver threads. See `docs/dns.md`.
//!
//! A lookup goes, in order, to: IP literals (answered at once), static overrides
//! (`--resolve`, `--hosts-file`), `/etc/hosts`, the answer cache, the dead-name table
//! (names no server answered for fail at once), and finally the network: UDP queries
//! for A and AAAA at once to the servers of `/etc/resolv.conf`, with retransmission,
//! rotation over the servers, search domains, and TCP when an answer is truncated.
//! Lookups of one name are coalesced; at most `max_in_flight` run at once and the rest
//! wait in a FIFO; each has one deadline covering its queueing and every retry.
//!
//! The wire format is the sans-IO [`wire`]; the files are read by [`conf`]; what is
//! remembered is `cache.rs`; the sockets and their state are `client.rs`.

use std::collections::{HashMap, VecDeque};
use std::fs;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::{Registry, Token};

use crate::fetch::DnsFailure;

mod cache;
mod client;
pub mod conf;
mod overrides;
pub mod wire;

pub use cache::NameAnswer;
use cache::{AnswerCache, DeadNames};
use client::Client;
pub use conf::ResolvConf;
use overrides::parse_ip;
pub use overrides::{parse_hosts_file, parse_resolve, DnsOverride, OverrideParseError};

/// Resolver settings.
#[derive(Clone, Debug)]
pub struct DnsConfig {
    /// The resolver configuration file (servers, search list, options); a missing
    /// file means glibc's defaults (a server on 127.0.0.1).
    pub resolv_conf_path: PathBuf,
    /// The static hosts table read at start (`None`: none).
    pub etc_hosts_path: Option<PathBuf>,
    /// Wait for one answer this long before the next try; `None`: resolv.conf's
    /// `timeout:` (default 5 s). Either way at most the lookup deadline divided by the
    /// number of tries, so every retry fits in the deadline.
    pub attempt_timeout: Option<Duration>,
    /// Rounds over all servers; `None`: resolv.conf's `attempts:` (default 2).
    pub attempts: Option<u32>,
    /// Lookups on the network at once at most; more wait in a FIFO.
    pub max_in_flight: usize,
    /// Lookups waiting in that FIFO at most; beyond, a lookup fails at once with
    /// [`DnsFailure::Overloaded`].
    pub max_queued_lookups: usize,
    /// Names cached (answers, positive and negative) at most; the oldest go first.
    /// The dead-name table has the same cap.
    pub cache_entries: usize,
    /// Shortest time an answer is cached, whatever its TTL says.
    pub min_ttl: Duration,
    /// Longest time an answer is cached, whatever its TTL says.
    pub max_ttl: Duration,
    /// How long a negative answer (no such name, no address) is cached when it carries
    /// no SOA record (RFC 2308); clamped like the TTLs.
    pub negative_ttl: Duration,
    /// A name whose lookup timed out with no server answering fails at once for this
    /// long (`--dns-dead-secs`).
    pub dead_for: Duration,
    /// Timed-out lookups of one name at most over the crawl; then it is dead for good
    /// (`--dns-max-tries`).
    pub max_tries_per_name: u32,
    /// Lookups started per second at most (each sends an A and an AAAA query), with
    /// bursts of [`START_BURST`]; the rest wait in the FIFO. A local caching server
    /// (dnsmasq, unbound) drops queries once its socket buffer overflows, and the
    /// retries of a dropped burst come back as one burst: unpaced, 2,500 lookups at
    /// once lost 76-110 live names of 5,000 in `tools/widebench/run.sh dead`, and
    /// bursts of 256 still lost some.
    pub max_starts_per_sec: u32,
    /// Ask AAAA records as well as A: `None` decides as getaddrinfo's AI_ADDRCONFIG
    /// does, by whether an interface other than loopback has an IPv6 address that is
    /// not link-local (`/proc/net/if_inet6`): without one no IPv6 answer is usable,
    /// and the second query doubles the load on the server (and a dead name's).
    pub ask_aaaa: Option<bool>,
    /// Static answers, consulted before anything else.
    pub overrides: Vec<DnsOverride>,
}

/// Lookups a resolver may start at once before [`DnsConfig::max_starts_per_sec`]
/// paces it.
pub const START_BURST: f64 = 32.0;

impl Default for DnsConfig {
    fn default() -> Self {
        Self {
            resolv_conf_path: PathBuf::from("/etc/resolv.conf"),
            etc_hosts_path: Some(PathBuf::from("/etc/hosts")),
            attempt_timeout: None,
            attempts: None,
            max_in_flight: 2048,
            max_queued_lookups: 65_536,
            cache_entries: 65_536,
            min_ttl: Duration::from_secs(30),
            max_ttl: Duration::from_secs(3600),
            negative_ttl: Duration::from_secs(60),
            dead_for: Duration::from_secs(600),
            max_tries_per_name: 3,
            max_starts_per_sec: 4_000,
            ask_aaaa: None,
            overrides: Vec::new(),
        }
    }
}

/// The resolver's counters (gauges say "now", the rest count since start).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DnsStats {
    /// Lookups asked of the resolver, by any path.
    pub lookups: u64,
    /// Answered from an IP literal, an override or `/etc/hosts`.
    pub static_answers: u64,
    /// Answered from the cache (positive or negative).
    pub cache_hits: u64,
    /// Joined a lookup of the same name already under way.
    pub coalesced: u64,
    /// Lookups that went to the network (queued or sent).
    pub started: u64,
    /// Gauge: lookups on the network now.
    pub in_flight: u64,
    /// Gauge: lookups waiting for an in-flight slot now.
    pub queued: u64,
    /// Network lookups that found addresses.
    pub succeeded: u64,
    /// Network lookups that ended in NXDOMAIN.
    pub no_such_name: u64,
    /// Network lookups that ended in NODATA.
    pub no_address: u64,
    /// Network lookups that timed out (no answer before the deadline or last retry).
    pub timed_out: u64,
    /// Lookups failed at once because the name is dead.
    pub dead_fast_fails: u64,
    /// Network lookups that ended in SERVFAIL or another error code.
    pub server_failure: u64,
    /// Network lookups that ended in REFUSED.
    pub refused: u64,
    /// Network lookups that got only malformed answers.
    pub malformed: u64,
    /// Lookups refused because the FIFO was full.
    pub overloaded: u64,
    /// Lookups that could not be sent (no socket).
    pub unavailable: u64,
    /// Gauge: names in the dead-name table (dead now or on probation).
    pub dead_names: u64,
    /// UDP queries sent (A and AAAA count one each).
    pub queries_sent: u64,
    /// Tries after the first (a new socket to the next server).
    pub retransmits: u64,
    /// Queries repeated over TCP after a truncated UDP answer.
    pub tcp_fallbacks: u64,
    /// Datagrams ignored: wrong source, unknown id, wrong question, malformed.
    pub ignored_replies: u64,
}

/// What [`Resolver::lookup`] returns.
#[derive(Debug)]
pub enum Lookup {
    /// Answered without waiting (literal, override, hosts, cache, dead name).
    Ready(Result<Arc<[SocketAddr]>, DnsFailure>),
    /// Under way: the answer comes out of [`Resolver::drain`] under this id.
    Pending(u64),
}

/// The name's addresses with `port`.
pub fn with_port(ips: &[IpAddr], port: u16) -> Arc<[SocketAddr]> {
    ips.iter().map(|ip| SocketAddr::new(*ip, port)).collect()
}

/// Whether `token` belongs to the resolver (its sockets' tokens have all-ones low
/// bits, which no connection slot has; the waker's token is all ones).
pub fn is_resolver_token(token: Token) -> bool {
    client::token_number(token).is_some()
}

/// The resolver owned by one fetcher: cache, dead names, FIFO, and the DNS client.
pub struct Resolver {
    config: DnsConfig,
    overrides: HashMap<(String, u16), Arc<[SocketAddr]>>,
    hosts: HashMap<String, Arc<[IpAddr]>>,
    cache: AnswerCache,
    dead: DeadNames,
    client: Client,
    lookup_timeout: Duration,
    by_name: HashMap<String, u64>,
    names: HashMap<u64, String>,
    queue: VecDeque<(u64, Instant)>,
    next_id: u64,
    answers: Vec<(u64, NameAnswer)>,
    stats: DnsStats,
    /// Lookups that may start now (token bucket, see `max_starts_per_sec`), as of
    /// `pace_at`.
    pace_tokens: f64,
    pace_at: Option<Instant>,
}

impl Resolver {
    /// Reads `resolv_conf_path` and `etc_hosts_path` (a missing or unreadable file
    /// counts as empty, as for glibc). `lookup_timeout` bounds a lookup from the moment
    /// it is asked, queueing and retries included.
    pub fn new(config: DnsConfig, lookup_timeout: Duration) -> Self {
        let conf_text = fs::read_to_string(&config.resolv_conf_path).unwrap_or_default();
        let conf = ResolvConf::parse(&conf_text);
        let mut overrides: HashMap<(String, u16), Arc<[SocketAddr]>> = HashMap::new();
        for o in &config.overrides {
            overrides.insert((o.host.clone(), o.port), with_port(&o.addrs, o.port));
        }
        let mut hosts: HashMap<String, Vec<IpAddr>> = HashMap::new();
        if let Some(path) = &config.etc_hosts_path {
            let text = fs::read_to_string(path).unwrap_or_default();
            for (name, ip) in conf::parse_etc_hosts(&text) {
                let list = hosts.entry(name).or_default();
                if !list.contains(&ip) {
                    list.push(ip);
                }
            }
        }
        let hosts = hosts
            .into_iter()
            .map(|(name, mut ips)| {
                ips.sort_by_key(IpAddr::is_ipv6);
                (name, ips.into())
            })
            .collect();
        let ask_aaaa = config.ask_aaaa.unwrap_or_else(|| {
            conf::has_global_ipv6(&fs::read_to_string("/proc/net/if_inet6").unwrap_or_default())
        });
        let client = Client::new(
            conf,
            config.attempt_timeout,
            config.attempts,
            lookup_timeout,
            ask_aaaa,
        );
        Self {
            cache: AnswerCache::new(config.cache_entries),
            dead: DeadNames::new(
                config.cache_entries,
                config.dead_for,
                config.max_tries_per_name,
            ),
            overrides,
            hosts,
            client,
            lookup_timeout,
            by_name: HashMap::new(),
            names: HashMap::new(),
            queue: VecDeque::new(),
            next_id: 0,
            answers: Vec::new(),
            stats: DnsStats::default(),
            pace_tokens: START_BURST,
            pace_at: None,
            config,
        }
    }

    /// Counters since creation.
    pub fn stats(&self) -> DnsStats {
        let mut s = self.stats;
        s.in_flight = self.client.len() as u64;
        s.queued = self.queue.len() as u64;
        s.dead_names = self.dead.len() as u64;
        let c = self.client.counters();
        s.queries_sent = c.queries_sent;
        s.retransmits = c.retransmits;
        s.tcp_fallbacks = c.tcp_fallbacks;
        s.ignored_replies = c.ignored_replies;
        s
    }

    /// Looks `host:port` up without blocking. `registry` registers the sockets of a
    /// lookup that goes to the network.
    pub fn lookup(&mut self, host: &str, port: u16, now: Instant, registry: &Registry) -> Lookup {
        self.stats.lookups += 1;
        if let Some(ip) = parse_ip(host) {
            self.stats.static_answers += 1;
            return Lookup::Ready(Ok(with_port(&[ip], port)));
        }
        let name = host.to_ascii_lowercase();
        if let Some(addrs) = self.overrides.get(&(name.clone(), port)) {
            self.stats.static_answers += 1;
            return Lookup::Ready(Ok(Arc::clone(addrs)));
        }
        if let Some(ips) = self.hosts.get(name.trim_end_matches('.')) {
            self.stats.static_answers += 1;
            return Lookup::Ready(Ok(with_port(ips, port)));
        }
        if let Some(answer) = self.cache.get(&name, now) {
            self.stats.cache_hits += 1;
            return Lookup::Ready(answer.map(|ips| with_port(&ips, port)));
        }
        if let Some(id) = self.by_name.get(&name) {
            self.stats.coalesced += 1;
            return Lookup::Pending(*id);
        }
        if self.dead.is_dead(&name, now) {
            self.stats.dead_fast_fails += 1;
            return Lookup::Ready(Err(DnsFailure::Dead));
        }
        if self.client.len() >= self.config.max_in_flight.max(1)
            && self.queue.len() >= self.config.max_queued_lookups
        {
            self.stats.overloaded += 1;
            return Lookup::Ready(Err(DnsFailure::Overloaded));
        }
        let id = self.next_id;
        self.next_id += 1;
        self.stats.started += 1;
        self.by_name.insert(name.clone(), id);
        self.names.insert(id, name);
        let deadline = now + self.lookup_timeout;
        self.queue.push_back((id, deadline));
        self.start_queued(now, registry);
        Lookup::Pending(id)
    }

    /// Readiness on one of the resolver's sockets.
    pub fn on_ready(&mut self, token: Token, now: Instant, registry: &Registry) {
        self.client.on_ready(token, now, registry);
        self.collect(now, registry);
    }

    /// The earliest instant [`Resolver::handle_timeout`] has work.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let queued = self.queue.front().map(|(_, at)| *at);
        // A paced start is due before the front's deadline.
        let queued = match (queued, self.next_paced_start()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match (self.client.next_deadline(), queued) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Retransmits, moves to the next server, fails lookups whose deadline passed.
    pub fn handle_timeout(&mut self, now: Instant, registry: &Registry) {
        while let Some(&(id, deadline)) = self.queue.front() {
            if deadline > now {
                break;
            }
            self.queue.pop_front();
            // It never reached a server: not evidence about the name at all, so it is
            // this resolver's overload (the crawl asks again), not a timed-out name
            // (which the crawl would log as unresolved). Seen at width: 3,000 dead
            // names held every slot and 110 live names timed out in the queue.
            self.finish(id, Err((DnsFailure::Overloaded, None)), false, now);
        }
        self.client.handle_timeout(now, registry);
        self.collect(now, registry);
    }

    /// Whether answers wait to be drained.
    pub fn has_answers(&self) -> bool {
        !self.answers.is_empty()
    }

    /// Hands every finished lookup to `f` (id, addresses without port).
    pub fn drain(&mut self, mut f: impl FnMut(u64, NameAnswer)) {
        for (id, answer) in self.answers.drain(..) {
            f(id, answer);
        }
    }

    /// Cached names (for tests and stats).
    pub fn cache_len(&self) -> usize {
        self.cache.len()
    }

    fn collect(&mut self, now: Instant, registry: &Registry) {
        for done in self.client.take_finished() {
            let dead = matches!(done.result, Err((DnsFailure::TimedOut, _))) && !done.answered;
            self.finish(done.id, done.result, dead, now);
        }
        self.start_queued(now, registry);
    }

    /// Records a finished lookup: stats, cache, dead names, and the answer to drain.
    fn finish(
        &mut self,
        id: u64,
        result: client::Outcome,
        timed_out_unanswered: bool,
        now: Instant,
    ) {
        let Some(name) = self.names.remove(&id) else {
            return;
        };
        self.by_name.remove(&name);
        let clamp = |secs: u32| {
            Duration::from_secs(u64::from(secs))
                .max(self.config.min_ttl)
                .min(self.config.max_ttl)
        };
        let answer: NameAnswer = match result {
            Ok((ips, ttl_secs)) => {
                self.stats.succeeded += 1;
                self.dead.answered(&name);
                let ips: Arc<[IpAddr]> = ips.into();
                self.cache
                    .insert(&name, Ok(Arc::clone(&ips)), clamp(ttl_secs), now);
                Ok(ips)
            }
            Err((e, negative_ttl_secs)) => {
                let counter = match e {
                    DnsFailure::NoSuchName => &mut self.stats.no_such_name,
                    DnsFailure::NoAddress => &mut self.stats.no_address,
                    DnsFailure::TimedOut => &mut self.stats.timed_out,
                    DnsFailure::Dead => &mut self.stats.dead_fast_fails,
                    DnsFailure::ServerFailure => &mut self.stats.server_failure,
                    DnsFailure::Refused => &mut self.stats.refused,
                    DnsFailure::Malformed => &mut self.stats.malformed,
                    DnsFailure::Overloaded => &mut self.stats.overloaded,
                    DnsFailure::Unavailable => &mut self.stats.unavailable,
                };
                *counter += 1;
                if matches!(e, DnsFailure::NoSuchName | DnsFailure::NoAddress) {
                    self.dead.answered(&name);
                    let ttl = negative_ttl_secs.map_or(self.config.negative_ttl, clamp);
                    self.cache.insert(&name, Err(e.clone()), ttl, now);
                }
                if timed_out_unanswered {
                    self.dead.timed_out(&name, now);
                }
                Err(e)
            }
        };
        self.answers.push((id, answer));
    }

    /// Refills the start tokens for the time since the last refill.
    fn refill_pace(&mut self, now: Instant) {
        let rate = f64::from(self.config.max_starts_per_sec.max(1));
        if let Some(at) = self.pace_at {
            let secs = now.saturating_duration_since(at).as_secs_f64();
            self.pace_tokens = (self.pace_tokens + secs * rate).min(START_BURST);
        }
        self.pace_at = Some(now);
    }

    /// When the next queued lookup may start for the pace, if one waits for it.
    fn next_paced_start(&self) -> Option<Instant> {
        if self.queue.is_empty()
            || self.pace_tokens >= 1.0
            || self.client.len() >= self.config.max_in_flight.max(1)
        {
            return None;
        }
        let rate = f64::from(self.config.max_starts_per_sec.max(1));
        let wait = Duration::from_secs_f64((1.0 - self.pace_tokens) / rate);
        self.pace_at.map(|at| at + wait)
    }

    fn start_queued(&mut self, now: Instant, registry: &Registry) {
        self.refill_pace(now);
        while self.client.len() < self.config.max_in_flight.max(1) {
            if self.pace_tokens < 1.0 {
                break;
            }
            let Some((id, deadline)) = self.queue.pop_front() else {
                break;
            };
            self.pace_tokens -= 1.0;
            let Some(name) = self.names.get(&id) else {
                continue;
            };
            // The wait in the FIFO had its own deadline; on the network the lookup gets
            // its whole time, or a lookup sent just before its deadline would time out
            // after one short try and its name be taken for dead (widebench 100k:
            // 54,000 URLs of live hosts logged dns-error so).
            let _ = deadline;
            let deadline = now + self.lookup_timeout;
            if let Err(e) = self.client.start(id, name, deadline, now, registry) {
                self.finish(id, Err((e, None)), false, now);
            }
        }
    }
}

/// Fuzz entry point for the DNS answer parser. Never panics unless the parser is wrong.
///
/// The input is a whole message. It is parsed as a message; if it has a question, it
/// is parsed as the answer to that question for A and for AAAA, and the addresses must
/// be of the asked family and no more than the answer records. The input read as a name
/// is also encoded as a query, which must parse back to the same question.
pub fn fuzz_answer(data: &[u8]) {
    use wire::{build_query, parse_answer, Message, QType, MAX_RECORDS};
    if let Ok(m) = Message::parse(data) {
        assert!(m.answers.len() + m.authority.len() <= MAX_RECORDS);
        if let Some(Ok(name)) = m.question.as_ref().map(|q| std::str::from_utf8(&q.0)) {
            for qtype in [QType::A, QType::Aaaa] {
                if let Ok(a) = parse_answer(data, name, qtype) {
                    assert!(a.addrs.len() <= m.answers.len());
                    assert!(a
                        .addrs
                        .iter()
                        .all(|ip| ip.is_ipv6() == (qtype == QType::Aaaa)));
                    assert_eq!(a.addrs.is_empty(), a.ttl_secs.is_none());
                }
            }
        }
    }
    if let Ok(name) = std::str::from_utf8(data) {
        let mut query = Vec::new();
        if build_query(0x1234, name, QType::Aaaa, &mut query).is_ok() {
            let m = Message::parse(&query);
            assert!(matches!(&m, Ok(m) if m.header.id == 0x1234), "{m:?}");
            if let Ok(m) = m {
                let asked = name.trim_end_matches('.').as_bytes();
                let got = m.question.map(|q| q.0).unwrap_or_default();
                assert!(got.eq_ignore_ascii_case(asked) || name == ".", "{name:?}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolver(hosts: &str, overrides: &[&str]) -> (Resolver, mio::Poll, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let hosts_path = dir.path().join("hosts");
        fs::write(&hosts_path, hosts).unwrap();
        // A server nobody runs: nothing here may reach it.
        fs::write(dir.path().join("resolv.conf"), "nameserver 127.0.0.1#9\n").unwrap();
        let cfg = DnsConfig {
            resolv_conf_path: dir.path().join("resolv.conf"),
            etc_hosts_path: Some(hosts_path),
            overrides: overrides
                .iter()
                .map(|o| parse_resolve(o).unwrap())
                .collect(),
            ask_aaaa: Some(true),
            ..DnsConfig::default()
        };
        let poll = mio::Poll::new().unwrap();
        (Resolver::new(cfg, Duration::from_secs(1)), poll, dir)
    }

    fn ready(l: Lookup) -> Vec<SocketAddr> {
        match l {
            Lookup::Ready(Ok(a)) => a.to_vec(),
            other => panic!("expected an address at once, got {other:?}"),
        }
    }

    #[test]
    fn lookups_start_at_the_paced_rate_after_a_burst() {
        let (mut r, poll, _dir) = resolver("", &[]);
        r.config.max_starts_per_sec = 1000;
        let reg = poll.registry();
        let now = Instant::now();
        let n = START_BURST as usize + 100;
        for i in 0..n {
            assert!(matches!(
                r.lookup(&format!("h{i}.test"), 80, now, reg),
                Lookup::Pending(_)
            ));
        }
        let s = r.stats();
        assert_eq!((s.in_flight, s.queued), (START_BURST as u64, 100));
        // The next start is due a millisecond later (1,000 a second).
        let due = r.poll_timeout().expect("a paced start is due");
        assert!(due <= now + Duration::from_millis(1), "{due:?}");
        for ms in (5..=50).step_by(5) {
            r.handle_timeout(now + Duration::from_millis(ms), reg);
        }
        let s = r.stats();
        assert_eq!(s.queued, 50, "50 more started in 50 ms");
        // A late turn starts a burst's worth, no more.
        r.handle_timeout(now + Duration::from_millis(500), reg);
        assert_eq!(r.stats().queued, 50 - START_BURST as u64);
    }

    #[test]
    fn literals_then_overrides_then_etc_hosts_without_a_query() {
        let (mut r, poll, _dir) = resolver(
            "::1 both.test\n127.0.0.5 both.test\n127.0.0.7 over.test\n",
            &["over.test:8080:127.0.0.9"],
        );
        let (now, reg) = (Instant::now(), poll.registry());
        assert_eq!(
            ready(r.lookup("[::1]", 80, now, reg)),
            vec!["[::1]:80".parse().unwrap()]
        );
        assert_eq!(
            ready(r.lookup("Over.test", 8080, now, reg)),
            vec!["127.0.0.9:8080".parse().unwrap()],
            "the override for its port wins over /etc/hosts"
        );
        assert_eq!(
            ready(r.lookup("over.test", 80, now, reg)),
            vec!["127.0.0.7:80".parse().unwrap()],
            "another port: /etc/hosts"
        );
        assert_eq!(
            ready(r.lookup("both.test", 443, now, reg)),
            vec![
                "127.0.0.5:443".parse().unwrap(),
                "[::1]:443".parse().unwrap()
            ],
            "IPv4 first"
        );
        let s = r.stats();
        assert_eq!(
            (s.lookups, s.static_answers, s.started, s.queries_sent),
            (4, 4, 0, 0)
        );
    }

    #[test]
    fn lookups_of_one_name_are_coalesced_and_the_fifo_is_bounded() {
        let (mut r, poll, _dir) = resolver("", &[]);
        r.config.max_in_flight = 1;
        r.config.max_queued_lookups = 1;
        let (now, reg) = (Instant::now(), poll.registry());
        let Lookup::Pending(a) = r.lookup("a.test", 80, now, reg) else {
            panic!("expected pending");
        };
        assert!(matches!(r.lookup("A.test", 443, now, reg), Lookup::Pending(id) if id == a));
        assert!(matches!(
            r.lookup("b.test", 80, now, reg),
            Lookup::Pending(_)
        ));
        assert!(matches!(
            r.lookup("c.test", 80, now, reg),
            Lookup::Ready(Err(DnsFailure::Overloaded))
        ));
        let s = r.stats();
        assert_eq!(
            (s.in_flight, s.queued, s.coalesced, s.overloaded),
            (1, 1, 1, 1)
        );
        // The deadline (1 s) passes: the one sent times out; the queued one was never
        // sent, so it fails as this resolver's overload and only a.test counts
        // towards dead names.
        r.handle_timeout(now + Duration::from_secs(2), reg);
        let mut got = Vec::new();
        r.drain(|id, answer| got.push((id, answer)));
        got.sort_by_key(|(id, _)| *id);
        assert_eq!(
            got,
            [
                (0, Err(DnsFailure::TimedOut)),
                (1, Err(DnsFailure::Overloaded))
            ]
        );
        assert_eq!(r.stats().dead_names, 1);
        assert!(matches!(
            r.lookup("a.test", 80, now + Duration::from_secs(2), reg),
            Lookup::Ready(Err(DnsFailure::Dead))
        ));
    }
}
