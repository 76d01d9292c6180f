//! Name resolution that never blocks the event loop.
//!
//! Lookups go, in order, to: IP literals (answered at once), static overrides
//! (`--resolve`, `--hosts-file`), a positive/negative cache with TTLs and a size cap, and
//! finally a small pool of resolver threads that call the system resolver
//! (`ToSocketAddrs`, i.e. `getaddrinfo`) and post answers back over a channel, waking
//! the loop through its `mio::Waker`. Concurrent lookups of the same name are coalesced.
//!
//! The system resolver cannot be cancelled, so the *deadline* for a lookup is kept by
//! the fetcher (requests waiting on it fail with `Timeout(Dns)`); a late answer still
//! fills the cache. The job queue is bounded: when every worker is stuck and the queue
//! is full, a lookup fails at once with `DnsFailure::Overloaded`.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TrySendError};

use crate::net::outcome::DnsFailure;

/// Resolver settings.
#[derive(Clone, Debug)]
pub struct DnsConfig {
    /// Resolver threads.
    pub workers: usize,
    /// Lookups queued for the workers at most.
    pub max_queued_lookups: usize,
    /// Cached answers (positive and negative) at most; the oldest go first.
    pub cache_entries: usize,
    /// How long a successful answer is reused (the system resolver does not tell us the
    /// record TTL, so this is a fixed ceiling).
    pub positive_ttl: Duration,
    /// How long a failed lookup is remembered.
    pub negative_ttl: Duration,
    /// Static answers, consulted before anything else.
    pub overrides: Vec<DnsOverride>,
}

impl Default for DnsConfig {
    fn default() -> Self {
        Self {
            workers: 4,
            max_queued_lookups: 4096,
            cache_entries: 65_536,
            positive_ttl: Duration::from_secs(300),
            negative_ttl: Duration::from_secs(30),
            overrides: Vec::new(),
        }
    }
}

/// A static answer: `host:port` resolves to `addrs`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DnsOverride {
    /// Host name, lower-cased.
    pub host: String,
    /// Port the override applies to.
    pub port: u16,
    /// Addresses to use, in order.
    pub addrs: Vec<IpAddr>,
}

/// A malformed `--resolve` value or hosts-file line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverrideParseError {
    /// 1-based line number in a hosts file; 0 for a `--resolve` value.
    pub line: usize,
    /// What is wrong.
    pub detail: &'static str,
}

impl fmt::Display for OverrideParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "bad --resolve value: {}", self.detail)
        } else {
            write!(f, "hosts file line {}: {}", self.line, self.detail)
        }
    }
}

impl std::error::Error for OverrideParseError {}

fn parse_ip(s: &str) -> Option<IpAddr> {
    let s = s
        .strip_prefix('[')
        .and_then(|v| v.strip_suffix(']'))
        .unwrap_or(s);
    s.parse().ok()
}

/// Parses curl's `--resolve` syntax: `host:port:addr[,addr]...`, where an IPv6 address
/// may be written in brackets (`example.org:443:[::1]`).
///
/// # Errors
/// A missing field, a bad port or address.
pub fn parse_resolve(value: &str) -> Result<DnsOverride, OverrideParseError> {
    let err = |detail| OverrideParseError { line: 0, detail };
    let (host, rest) = value
        .split_once(':')
        .ok_or(err("expected host:port:addr"))?;
    let (port, addrs) = rest.split_once(':').ok_or(err("expected host:port:addr"))?;
    if host.is_empty() {
        return Err(err("empty host"));
    }
    let port: u16 = port.parse().map_err(|_| err("bad port"))?;
    let addrs = addrs
        .split(',')
        .map(|a| parse_ip(a.trim()).ok_or(err("bad address")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(DnsOverride {
        host: host.to_ascii_lowercase(),
        port,
        addrs,
    })
}

/// Parses synthweb's hosts file: one `hostname address port [tls_port]` per line,
/// blank lines and `#` comments ignored. Each line yields one override per port.
///
/// # Errors
/// The first malformed line, with its number.
pub fn parse_hosts_file(text: &str) -> Result<Vec<DnsOverride>, OverrideParseError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |detail| OverrideParseError {
            line: i + 1,
            detail,
        };
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (host, addr, ports) = match fields.as_slice() {
            [h, a, p] => (*h, *a, vec![*p]),
            [h, a, p, t] => (*h, *a, vec![*p, *t]),
            _ => return Err(err("expected: hostname address port [tls_port]")),
        };
        let addr = parse_ip(addr).ok_or(err("bad address"))?;
        for p in ports {
            let port: u16 = p.parse().map_err(|_| err("bad port"))?;
            out.push(DnsOverride {
                host: host.to_ascii_lowercase(),
                port,
                addrs: vec![addr],
            });
        }
    }
    Ok(out)
}

/// The answer to a lookup.
pub type DnsAnswer = Result<Arc<[SocketAddr]>, DnsFailure>;

/// What [`Resolver::lookup`] returns.
#[derive(Debug)]
pub enum Lookup {
    /// Answered without waiting (literal, override or cache).
    Ready(DnsAnswer),
    /// Sent to the resolver pool; the answer comes back from [`Resolver::drain`] under
    /// this id.
    Pending(u64),
}

struct Job {
    id: u64,
    host: String,
    port: u16,
}

struct Answer {
    id: u64,
    result: DnsAnswer,
}

struct CacheEntry {
    answer: DnsAnswer,
    expires: Instant,
    seq: u64,
}

/// The resolver owned by one fetcher.
pub struct Resolver {
    config: DnsConfig,
    overrides: HashMap<(String, u16), Arc<[SocketAddr]>>,
    cache: HashMap<(String, u16), CacheEntry>,
    /// Insertion order for FIFO eviction; entries whose seq no longer matches are skipped.
    cache_order: VecDeque<((String, u16), u64)>,
    next_seq: u64,
    pending: HashMap<(String, u16), u64>,
    pending_by_id: HashMap<u64, (String, u16)>,
    jobs: Option<Sender<Job>>,
    answers: Receiver<Answer>,
    answers_tx: Sender<Answer>,
    wake: Arc<dyn Fn() + Send + Sync>,
    workers_started: bool,
}

impl Resolver {
    /// A resolver whose workers call `wake` after posting each answer. Worker threads
    /// start on the first lookup that needs them.
    pub fn new(config: DnsConfig, wake: Arc<dyn Fn() + Send + Sync>) -> Self {
        let mut overrides: HashMap<(String, u16), Arc<[SocketAddr]>> = HashMap::new();
        for o in &config.overrides {
            let addrs: Vec<SocketAddr> = o
                .addrs
                .iter()
                .map(|ip| SocketAddr::new(*ip, o.port))
                .collect();
            overrides.insert((o.host.clone(), o.port), addrs.into());
        }
        let (answers_tx, answers) = crossbeam_channel::unbounded();
        Self {
            config,
            overrides,
            cache: HashMap::new(),
            cache_order: VecDeque::new(),
            next_seq: 0,
            pending: HashMap::new(),
            pending_by_id: HashMap::new(),
            jobs: None,
            answers,
            answers_tx,
            wake,
            workers_started: false,
        }
    }

    fn start_workers(&mut self) {
        self.workers_started = true;
        let (tx, rx) = crossbeam_channel::bounded::<Job>(self.config.max_queued_lookups.max(1));
        for n in 0..self.config.workers.max(1) {
            let rx = rx.clone();
            let answers = self.answers_tx.clone();
            let wake = Arc::clone(&self.wake);
            let spawned = std::thread::Builder::new()
                .name(format!("trawl-dns-{n}"))
                .spawn(move || {
                    while let Ok(job) = rx.recv() {
                        let result = resolve_blocking(&job.host, job.port);
                        if answers.send(Answer { id: job.id, result }).is_err() {
                            break;
                        }
                        wake();
                    }
                });
            if spawned.is_err() {
                // Fewer workers than asked: lookups still proceed on those that started;
                // with none, `lookup` reports Overloaded.
                break;
            }
        }
        self.jobs = Some(tx);
    }

    /// Looks `host:port` up without blocking.
    pub fn lookup(&mut self, host: &str, port: u16, now: Instant) -> Lookup {
        if let Some(ip) = parse_ip(host) {
            return Lookup::Ready(Ok(vec![SocketAddr::new(ip, port)].into()));
        }
        let key = (host.to_ascii_lowercase(), port);
        if let Some(addrs) = self.overrides.get(&key) {
            return Lookup::Ready(Ok(Arc::clone(addrs)));
        }
        if let Some(entry) = self.cache.get(&key) {
            if entry.expires > now {
                return Lookup::Ready(entry.answer.clone());
            }
            self.cache.remove(&key);
        }
        if let Some(id) = self.pending.get(&key) {
            return Lookup::Pending(*id);
        }
        if !self.workers_started {
            self.start_workers();
        }
        let id = self.next_seq;
        self.next_seq += 1;
        let job = Job {
            id,
            host: key.0.clone(),
            port,
        };
        match self.jobs.as_ref().map(|tx| tx.try_send(job)) {
            Some(Ok(())) => {
                self.pending.insert(key.clone(), id);
                self.pending_by_id.insert(id, key);
                Lookup::Pending(id)
            }
            Some(Err(TrySendError::Full(_) | TrySendError::Disconnected(_))) | None => {
                Lookup::Ready(Err(DnsFailure::Overloaded))
            }
        }
    }

    /// Takes every answer the workers have posted, caches it and hands it to `f`.
    pub fn drain(&mut self, now: Instant, mut f: impl FnMut(u64, DnsAnswer)) {
        while let Ok(Answer { id, result }) = self.answers.try_recv() {
            if let Some(key) = self.pending_by_id.remove(&id) {
                self.pending.remove(&key);
                self.insert_cache(key, result.clone(), now);
            }
            f(id, result);
        }
    }

    /// Forgets a pending lookup whose deadline passed; a late answer will still be
    /// cached but a new lookup of the name may be queued meanwhile.
    pub fn abandon(&mut self, id: u64) {
        if let Some(key) = self.pending_by_id.remove(&id) {
            self.pending.remove(&key);
        }
    }

    /// Cached answers (for tests and stats).
    pub fn cache_len(&self) -> usize {
        self.cache.len()
    }

    fn insert_cache(&mut self, key: (String, u16), answer: DnsAnswer, now: Instant) {
        let cap = self.config.cache_entries;
        if cap == 0 {
            return;
        }
        let ttl = if answer.is_ok() {
            self.config.positive_ttl
        } else {
            self.config.negative_ttl
        };
        let seq = self.next_seq;
        self.next_seq += 1;
        self.cache_order.push_back((key.clone(), seq));
        self.cache.insert(
            key,
            CacheEntry {
                answer,
                expires: now + ttl,
                seq,
            },
        );
        while self.cache.len() > cap || self.cache_order.len() > cap.saturating_mul(2) {
            let Some((old, old_seq)) = self.cache_order.pop_front() else {
                break;
            };
            if self.cache.get(&old).is_some_and(|e| e.seq == old_seq) {
                self.cache.remove(&old);
            }
        }
    }
}

fn resolve_blocking(host: &str, port: u16) -> DnsAnswer {
    match (host, port).to_socket_addrs() {
        Ok(iter) => {
            let mut addrs: Vec<SocketAddr> = iter.collect();
            addrs.dedup();
            if addrs.is_empty() {
                Err(DnsFailure::NoAddress)
            } else {
                Ok(addrs.into())
            }
        }
        Err(e) => Err(DnsFailure::Lookup(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_syntax() {
        let o = parse_resolve("Example.org:8443:127.0.0.2,[::1]").unwrap();
        assert_eq!(o.host, "example.org");
        assert_eq!(o.port, 8443);
        assert_eq!(o.addrs.len(), 2);
        assert!(o.addrs[1].is_ipv6());
        assert!(parse_resolve("example.org:80").is_err());
        assert!(parse_resolve("example.org:x:127.0.0.1").is_err());
        assert!(parse_resolve("example.org:80:nope").is_err());
    }

    #[test]
    fn hosts_file_with_tls_column() {
        let text =
            "# comment\nh000042.synth.test 127.0.1.43 8080\n\nh1.synth.test 127.0.1.2 8080 8443\n";
        let o = parse_hosts_file(text).unwrap();
        assert_eq!(o.len(), 3);
        assert_eq!(o[2].port, 8443);
        assert_eq!(o[2].addrs[0], "127.0.1.2".parse::<IpAddr>().unwrap());
        let bad = parse_hosts_file("a b\n").unwrap_err();
        assert_eq!(bad.line, 1);
    }

    #[test]
    fn literal_override_and_pool_lookup() {
        let mut cfg = DnsConfig::default();
        cfg.overrides
            .push(parse_resolve("synth.test:80:127.0.0.9").unwrap());
        let mut r = Resolver::new(cfg, Arc::new(|| {}));
        let now = Instant::now();
        match r.lookup("127.0.0.1", 80, now) {
            Lookup::Ready(Ok(a)) => assert_eq!(a[0].port(), 80),
            other => panic!("{other:?}"),
        }
        match r.lookup("SYNTH.test", 80, now) {
            Lookup::Ready(Ok(a)) => assert_eq!(a[0].ip().to_string(), "127.0.0.9"),
            other => panic!("{other:?}"),
        }
        let Lookup::Pending(id) = r.lookup("localhost", 80, now) else {
            panic!("expected pending");
        };
        // Coalesced.
        assert!(matches!(r.lookup("localhost", 80, now), Lookup::Pending(i) if i == id));
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut got = None;
        while got.is_none() && Instant::now() < deadline {
            r.drain(Instant::now(), |i, a| got = Some((i, a)));
            std::thread::sleep(Duration::from_millis(5));
        }
        let (i, answer) = got.unwrap();
        assert_eq!(i, id);
        assert!(answer.is_ok(), "{answer:?}");
        assert_eq!(r.cache_len(), 1);
        assert!(matches!(
            r.lookup("localhost", 80, Instant::now()),
            Lookup::Ready(Ok(_))
        ));
    }

    #[test]
    fn cache_is_capped() {
        let cfg = DnsConfig {
            cache_entries: 2,
            ..DnsConfig::default()
        };
        let mut r = Resolver::new(cfg, Arc::new(|| {}));
        let now = Instant::now();
        for i in 0..10u16 {
            r.insert_cache((format!("h{i}"), 80), Err(DnsFailure::NoAddress), now);
        }
        assert_eq!(r.cache_len(), 2);
    }
}
