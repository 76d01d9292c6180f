//! The resolver on the fetcher's loop, against fake DNS servers on loopback: a UDP
//! socket answering from a table (and a TCP listener on the same port for truncated
//! answers), scripted to drop, truncate, fail, or spoof on cue.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers; a failure is a test failure"
)]

mod support;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use trawl::fetch::{DnsFailure, FailReason, FetchOutcome, FetchRequest};
use trawl::net::dns::wire::{Message, TYPE_A, TYPE_AAAA};
use trawl::net::{DnsConfig, Fetcher, FetcherConfig};

/// How the fake server treats one name.
#[derive(Clone, Debug)]
enum Rule {
    /// A and AAAA records with this TTL.
    Addrs(Vec<IpAddr>, u32),
    /// An alias to another name, answered in the same message with its A records.
    Cname(String, Vec<IpAddr>),
    /// NXDOMAIN with an SOA whose minimum is this many seconds.
    NxDomain(u32),
    /// SERVFAIL.
    ServFail,
    /// REFUSED.
    Refused,
    /// Never answers.
    Drop,
    /// Answers A queries with this address, never answers AAAA queries.
    DropAaaa(IpAddr),
    /// Over UDP: an empty answer with TC set; over TCP: the addresses.
    Truncate(Vec<IpAddr>),
    /// First a reply with the wrong id, then one from another port, both claiming
    /// `bad`; then, after a pause, the real answer `good` from the right port.
    Spoof { bad: IpAddr, good: IpAddr },
}

struct FakeDns {
    addr: SocketAddr,
    /// (name, qtype, over tcp) of every query received, in order.
    log: Arc<Mutex<Vec<(String, u16, bool)>>>,
    stop: Arc<AtomicBool>,
}

impl FakeDns {
    fn start(rules: HashMap<String, Rule>) -> Self {
        // A UDP port whose TCP twin is free too (others may hold it).
        let (udp, tcp) = (0..100)
            .find_map(|_| {
                let udp = UdpSocket::bind("127.0.0.1:0").ok()?;
                let tcp = TcpListener::bind(udp.local_addr().ok()?).ok()?;
                Some((udp, tcp))
            })
            .unwrap();
        let addr = udp.local_addr().unwrap();
        udp.set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let rules = Arc::new(rules);
        {
            let (log, stop, rules) = (Arc::clone(&log), Arc::clone(&stop), Arc::clone(&rules));
            std::thread::spawn(move || {
                let spoofer = UdpSocket::bind("127.0.0.1:0").unwrap();
                let mut buf = [0u8; 1500];
                while !stop.load(Ordering::SeqCst) {
                    let Ok((n, from)) = udp.recv_from(&mut buf) else {
                        continue;
                    };
                    let query = buf[..n].to_vec();
                    let Some((name, qtype)) = question(&query) else {
                        continue;
                    };
                    log.lock().unwrap().push((name.clone(), qtype, false));
                    match rules.get(&name) {
                        Some(Rule::Drop) => {}
                        Some(Rule::DropAaaa(_)) if qtype == TYPE_AAAA => {}
                        Some(Rule::DropAaaa(ip)) => {
                            let rule = Rule::Addrs(vec![*ip], 60);
                            udp.send_to(&answer(&query, qtype, &rule, false), from)
                                .unwrap();
                        }
                        Some(Rule::Spoof { bad, good }) => {
                            let mut wrong =
                                answer(&query, qtype, &Rule::Addrs(vec![*bad], 60), false);
                            wrong[0] ^= 0x55;
                            udp.send_to(&wrong, from).unwrap();
                            let forged = answer(&query, qtype, &Rule::Addrs(vec![*bad], 60), false);
                            spoofer.send_to(&forged, from).unwrap();
                            std::thread::sleep(Duration::from_millis(30));
                            let real = answer(&query, qtype, &Rule::Addrs(vec![*good], 60), false);
                            udp.send_to(&real, from).unwrap();
                        }
                        rule => {
                            let rule = rule.cloned().unwrap_or(Rule::NxDomain(60));
                            udp.send_to(&answer(&query, qtype, &rule, false), from)
                                .unwrap();
                        }
                    }
                }
            });
        }
        {
            let (log, rules) = (Arc::clone(&log), Arc::clone(&rules));
            std::thread::spawn(move || {
                for stream in tcp.incoming() {
                    let Ok(mut stream) = stream else { continue };
                    let mut len = [0u8; 2];
                    if stream.read_exact(&mut len).is_err() {
                        continue;
                    }
                    let mut query = vec![0u8; usize::from(u16::from_be_bytes(len))];
                    if stream.read_exact(&mut query).is_err() {
                        continue;
                    }
                    let Some((name, qtype)) = question(&query) else {
                        continue;
                    };
                    log.lock().unwrap().push((name.clone(), qtype, true));
                    let rule = rules.get(&name).cloned().unwrap_or(Rule::NxDomain(60));
                    let msg = answer(&query, qtype, &rule, true);
                    let mut out = (msg.len() as u16).to_be_bytes().to_vec();
                    out.extend_from_slice(&msg);
                    let _ = stream.write_all(&out);
                }
            });
        }
        Self { addr, log, stop }
    }

    /// Queries for `name` of type `qtype` received so far (UDP and TCP).
    fn asked(&self, name: &str, qtype: u16) -> usize {
        let log = self.log.lock().unwrap();
        log.iter()
            .filter(|(n, t, _)| n == name && *t == qtype)
            .count()
    }

    fn log(&self) -> Vec<(String, u16, bool)> {
        self.log.lock().unwrap().clone()
    }
}

impl Drop for FakeDns {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn question(query: &[u8]) -> Option<(String, u16)> {
    let m = Message::parse(query).ok()?;
    let (name, qtype, _) = m.question?;
    Some((String::from_utf8(name).ok()?, qtype))
}

fn push_rr(out: &mut Vec<u8>, owner: &[u8], rtype: u16, ttl: u32, data: &[u8]) {
    out.extend_from_slice(owner);
    out.extend_from_slice(&rtype.to_be_bytes());
    out.extend_from_slice(&1u16.to_be_bytes());
    out.extend_from_slice(&ttl.to_be_bytes());
    out.extend_from_slice(&(data.len() as u16).to_be_bytes());
    out.extend_from_slice(data);
}

fn encode(name: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for label in name.split('.') {
        out.push(label.len() as u8);
        out.extend_from_slice(label.as_bytes());
    }
    out.push(0);
    out
}

fn ip_data(ip: &IpAddr) -> Vec<u8> {
    match ip {
        IpAddr::V4(v4) => v4.octets().to_vec(),
        IpAddr::V6(v6) => v6.octets().to_vec(),
    }
}

/// Builds the reply to `query` (its header and question copied; answers compressed
/// against the question name at offset 12).
fn answer(query: &[u8], qtype: u16, rule: &Rule, tcp: bool) -> Vec<u8> {
    let end_of_question = {
        let mut p = 12;
        while query[p] != 0 {
            p += 1 + usize::from(query[p]);
        }
        p + 5
    };
    let mut out = query[..end_of_question].to_vec();
    let mut flags: u16 = 0x8180; // QR, RD, RA
    let mut answers = 0u16;
    let mut authority = 0u16;
    let mut body = Vec::new();
    let wanted = |ip: &&IpAddr| (qtype == TYPE_A) == ip.is_ipv4();
    match rule {
        Rule::Addrs(ips, ttl) => {
            for ip in ips.iter().filter(wanted) {
                push_rr(&mut body, &[0xc0, 12], qtype, *ttl, &ip_data(ip));
                answers += 1;
            }
        }
        Rule::Cname(target, ips) => {
            let target_wire = encode(target);
            push_rr(&mut body, &[0xc0, 12], 5, 300, &target_wire);
            answers += 1;
            for ip in ips.iter().filter(wanted) {
                push_rr(&mut body, &target_wire, qtype, 300, &ip_data(ip));
                answers += 1;
            }
        }
        Rule::NxDomain(minimum) => {
            flags |= 3;
            let mut soa = encode("ns.test");
            soa.extend_from_slice(&encode("admin.test"));
            for v in [1u32, 3600, 600, 86400, *minimum] {
                soa.extend_from_slice(&v.to_be_bytes());
            }
            push_rr(&mut body, &encode("test"), 6, 3600, &soa);
            authority += 1;
        }
        Rule::ServFail => flags |= 2,
        Rule::Refused => flags |= 5,
        Rule::Truncate(ips) if tcp => {
            for ip in ips.iter().filter(wanted) {
                push_rr(&mut body, &[0xc0, 12], qtype, 60, &ip_data(ip));
                answers += 1;
            }
        }
        Rule::Truncate(_) => flags |= 0x0200,
        Rule::Drop | Rule::DropAaaa(_) | Rule::Spoof { .. } => {}
    }
    out[2..4].copy_from_slice(&flags.to_be_bytes());
    out[6..8].copy_from_slice(&answers.to_be_bytes());
    out[8..10].copy_from_slice(&authority.to_be_bytes());
    out[10..12].copy_from_slice(&0u16.to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// A resolv.conf naming `servers` (with their ports), in a temp dir kept alive by the
/// returned guard.
fn resolv_conf(servers: &[SocketAddr], extra: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("resolv.conf");
    let mut text = String::new();
    for s in servers {
        text.push_str(&format!("nameserver {}#{}\n", s.ip(), s.port()));
    }
    text.push_str(extra);
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn config(
    conf: &std::path::Path,
    dns_timeout: Duration,
    attempt: Duration,
    attempts: u32,
) -> FetcherConfig {
    let mut cfg = support::fast_config();
    cfg.deadlines.dns_timeout = dns_timeout;
    cfg.dns = DnsConfig {
        resolv_conf_path: conf.to_path_buf(),
        etc_hosts_path: None,
        attempt_timeout: Some(attempt),
        attempts: Some(attempts),
        min_ttl: Duration::ZERO,
        // Both families asked whatever this machine's interfaces (the fake server
        // answers AAAA too).
        ask_aaaa: Some(true),
        ..DnsConfig::default()
    };
    cfg
}

/// A port on 127.0.0.1 where nobody listens: a fetch there ends `Refused` right
/// after DNS, which proves the name resolved without needing a web server.
fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

fn fetch(fetcher: &mut Fetcher, url: &str) -> FetchOutcome {
    let url = url::Url::parse(url).unwrap();
    support::fetch_one(fetcher, url, Default::default(), Duration::from_secs(5))
}

fn v4(s: &str) -> IpAddr {
    s.parse().unwrap()
}

#[test]
fn a_name_resolves_through_our_own_server_on_the_loop() {
    let web = support::ScriptServer::start(|mut s, _| {
        if support::read_head(&mut s).is_some() {
            support::send(&mut s, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        }
    });
    let dns = FakeDns::start(HashMap::from([(
        "www.site.test".to_owned(),
        Rule::Addrs(vec![v4("127.0.0.1"), v4("::1")], 60),
    )]));
    let (_dir, conf) = resolv_conf(&[dns.addr], "");
    let mut f = Fetcher::new(config(
        &conf,
        Duration::from_secs(2),
        Duration::from_millis(500),
        2,
    ))
    .unwrap();
    let o = fetch(
        &mut f,
        &format!("http://WWW.site.test:{}/", web.addr.port()),
    );
    assert!(o.is_ok(), "{:?}", o.error);
    assert_eq!(o.peer, Some(web.addr), "IPv4 first");
    assert_eq!(
        (
            dns.asked("www.site.test", TYPE_A),
            dns.asked("www.site.test", TYPE_AAAA)
        ),
        (1, 1)
    );
    let s = f.dns_stats();
    assert_eq!(
        (s.started, s.succeeded, s.in_flight, s.queued),
        (1, 1, 0, 0)
    );
    assert_eq!(s.queries_sent, 2);
}

#[test]
fn replies_with_a_wrong_id_or_from_a_wrong_port_are_ignored() {
    let dns = FakeDns::start(HashMap::from([(
        "spoof.test".to_owned(),
        Rule::Spoof {
            bad: v4("127.0.0.66"),
            good: v4("127.0.0.1"),
        },
    )]));
    let (_dir, conf) = resolv_conf(&[dns.addr], "");
    let mut f = Fetcher::new(config(
        &conf,
        Duration::from_secs(2),
        Duration::from_secs(1),
        1,
    ))
    .unwrap();
    let port = closed_port();
    let o = fetch(&mut f, &format!("http://spoof.test:{port}/"));
    // Refused by 127.0.0.1 (nothing listens): the forged 127.0.0.66 was not used.
    assert!(
        matches!(o.error, Some(FailReason::Refused)),
        "{:?}",
        o.error
    );
    let s = f.dns_stats();
    assert!(s.ignored_replies >= 2, "{s:?}");
    assert_eq!((s.succeeded, s.retransmits), (1, 0));
}

#[test]
fn a_truncated_answer_is_asked_again_over_tcp() {
    let dns = FakeDns::start(HashMap::from([(
        "big.test".to_owned(),
        Rule::Truncate(vec![v4("127.0.0.1")]),
    )]));
    let (_dir, conf) = resolv_conf(&[dns.addr], "");
    let mut f = Fetcher::new(config(
        &conf,
        Duration::from_secs(2),
        Duration::from_secs(1),
        1,
    ))
    .unwrap();
    let o = fetch(&mut f, &format!("http://big.test:{}/", closed_port()));
    assert!(
        matches!(o.error, Some(FailReason::Refused)),
        "{:?}",
        o.error
    );
    assert!(
        dns.log().contains(&("big.test".to_owned(), TYPE_A, true)),
        "{:?}",
        dns.log()
    );
    assert_eq!(f.dns_stats().tcp_fallbacks, 2, "A and AAAA both truncated");
}

#[test]
fn cname_chains_search_domains_and_the_trailing_dot() {
    let dns = FakeDns::start(HashMap::from([
        (
            "alias.test".to_owned(),
            Rule::Cname("real.test".to_owned(), vec![v4("127.0.0.1")]),
        ),
        (
            "intranet.corp.test".to_owned(),
            Rule::Addrs(vec![v4("127.0.0.1")], 60),
        ),
    ]));
    let (_dir, conf) = resolv_conf(&[dns.addr], "search corp.test\noptions ndots:1\n");
    let mut f = Fetcher::new(config(
        &conf,
        Duration::from_secs(2),
        Duration::from_secs(1),
        1,
    ))
    .unwrap();
    let port = closed_port();
    let o = fetch(&mut f, &format!("http://alias.test:{port}/"));
    assert!(
        matches!(o.error, Some(FailReason::Refused)),
        "{:?}",
        o.error
    );
    // One dot, ndots 1: the name itself first; it answered, so no search.
    assert_eq!(dns.asked("alias.test.corp.test", TYPE_A), 0);
    // No dot: the search list first, and it answers.
    let o = fetch(&mut f, &format!("http://intranet:{port}/"));
    assert!(
        matches!(o.error, Some(FailReason::Refused)),
        "{:?}",
        o.error
    );
    assert_eq!(dns.log().iter().filter(|q| q.0 == "intranet").count(), 0);
    // A trailing dot: absolute, never searched.
    let o = fetch(&mut f, &format!("http://nowhere.:{port}/"));
    assert!(
        matches!(o.error, Some(FailReason::Dns(DnsFailure::NoSuchName))),
        "{:?}",
        o.error
    );
    assert_eq!(dns.asked("nowhere.corp.test", TYPE_A), 0);
    assert_eq!(dns.asked("nowhere", TYPE_A), 1);
}

#[test]
fn a_server_that_drops_aaaa_queries_costs_a_moment_not_a_try() {
    let dns = FakeDns::start(HashMap::from([(
        "v4.test".to_owned(),
        Rule::DropAaaa(v4("127.0.0.1")),
    )]));
    let (_dir, conf) = resolv_conf(&[dns.addr], "");
    let mut f = Fetcher::new(config(
        &conf,
        Duration::from_secs(4),
        Duration::from_secs(2),
        2,
    ))
    .unwrap();
    let start = Instant::now();
    let o = fetch(&mut f, &format!("http://v4.test:{}/", closed_port()));
    assert!(
        matches!(o.error, Some(FailReason::Refused)),
        "{:?}",
        o.error
    );
    assert!(
        start.elapsed() < Duration::from_millis(1000),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(
        (
            dns.asked("v4.test", TYPE_A),
            dns.asked("v4.test", TYPE_AAAA)
        ),
        (1, 1)
    );
    assert_eq!(f.dns_stats().retransmits, 0);
}

#[test]
fn failure_kinds_are_told_apart() {
    let dns = FakeDns::start(HashMap::from([
        ("fail.test".to_owned(), Rule::ServFail),
        ("refuse.test".to_owned(), Rule::Refused),
        ("v6only.test".to_owned(), Rule::Addrs(vec![v4("::1")], 60)),
        ("dead.test".to_owned(), Rule::Drop),
    ]));
    let (_dir, conf) = resolv_conf(&[dns.addr], "");
    let mut f = Fetcher::new(config(
        &conf,
        Duration::from_secs(2),
        Duration::from_millis(100),
        1,
    ))
    .unwrap();
    let port = closed_port();
    let kind = |f: &mut Fetcher, host: &str| fetch(f, &format!("http://{host}:{port}/")).error;
    assert_eq!(
        kind(&mut f, "fail.test"),
        Some(FailReason::Dns(DnsFailure::ServerFailure))
    );
    assert_eq!(
        kind(&mut f, "refuse.test"),
        Some(FailReason::Dns(DnsFailure::Refused))
    );
    assert_eq!(
        kind(&mut f, "nx.test"),
        Some(FailReason::Dns(DnsFailure::NoSuchName))
    );
    assert_eq!(
        kind(&mut f, "dead.test"),
        Some(FailReason::Dns(DnsFailure::TimedOut))
    );
    assert_eq!(
        kind(&mut f, "dead.test"),
        Some(FailReason::Dns(DnsFailure::Dead))
    );
    // AAAA only: resolves (to ::1, refused there).
    assert_eq!(kind(&mut f, "v6only.test"), Some(FailReason::Refused));
    let s = f.dns_stats();
    assert_eq!(
        (
            s.server_failure,
            s.refused,
            s.no_such_name,
            s.timed_out,
            s.dead_fast_fails
        ),
        (1, 1, 1, 1, 1)
    );
    assert_eq!(s.dead_names, 1);
}

#[test]
fn answers_are_cached_for_their_ttl_and_negative_ones_for_the_soa_minimum() {
    let dns = FakeDns::start(HashMap::from([
        (
            "short.test".to_owned(),
            Rule::Addrs(vec![v4("127.0.0.1")], 1),
        ),
        (
            "long.test".to_owned(),
            Rule::Addrs(vec![v4("127.0.0.1")], 3600),
        ),
        ("gone.test".to_owned(), Rule::NxDomain(1)),
    ]));
    let (_dir, conf) = resolv_conf(&[dns.addr], "");
    let mut f = Fetcher::new(config(
        &conf,
        Duration::from_secs(2),
        Duration::from_secs(1),
        1,
    ))
    .unwrap();
    let port = closed_port();
    for _ in 0..3 {
        for host in ["short.test", "long.test", "gone.test"] {
            fetch(&mut f, &format!("http://{host}:{port}/"));
        }
    }
    assert_eq!(
        [
            dns.asked("short.test", TYPE_A),
            dns.asked("long.test", TYPE_A),
            dns.asked("gone.test", TYPE_A)
        ],
        [1, 1, 1]
    );
    assert_eq!(f.dns_stats().cache_hits, 6);
    std::thread::sleep(Duration::from_millis(1100));
    for host in ["short.test", "long.test", "gone.test"] {
        fetch(&mut f, &format!("http://{host}:{port}/"));
    }
    assert_eq!(
        [
            dns.asked("short.test", TYPE_A),
            dns.asked("long.test", TYPE_A),
            dns.asked("gone.test", TYPE_A)
        ],
        [2, 1, 2],
        "1 s TTL and 1 s SOA minimum expired; 3600 s did not"
    );
}

#[test]
fn a_dead_name_is_tried_three_times_in_all() {
    let dns = FakeDns::start(HashMap::from([("dead.test".to_owned(), Rule::Drop)]));
    let (_dir, conf) = resolv_conf(&[dns.addr], "");
    let mut cfg = config(&conf, Duration::from_secs(2), Duration::from_millis(50), 2);
    cfg.dns.dead_for = Duration::ZERO; // no rest between tries: only the count limits
    let mut f = Fetcher::new(cfg).unwrap();
    let url = format!("http://dead.test:{}/", closed_port());
    for _ in 0..3 {
        let o = fetch(&mut f, &url);
        assert_eq!(o.error, Some(FailReason::Dns(DnsFailure::TimedOut)));
    }
    let start = Instant::now();
    for _ in 0..5 {
        let o = fetch(&mut f, &url);
        assert_eq!(o.error, Some(FailReason::Dns(DnsFailure::Dead)));
    }
    assert!(
        start.elapsed() < Duration::from_millis(50),
        "failed at once"
    );
    assert_eq!(
        dns.asked("dead.test", TYPE_A),
        3 * 2,
        "three lookups of two tries each"
    );
    let s = f.dns_stats();
    assert_eq!((s.timed_out, s.dead_fast_fails, s.retransmits), (3, 5, 3));
}

#[test]
fn dead_names_do_not_delay_live_ones() {
    let mut rules = HashMap::new();
    for i in 0..500 {
        rules.insert(
            format!("live{i}.test"),
            Rule::Addrs(vec![v4("127.0.0.1")], 60),
        );
    }
    for i in 0..50 {
        rules.insert(format!("dead{i}.test"), Rule::Drop);
    }
    // Two servers with the same table: a dead name is tried on both, twice.
    let a = FakeDns::start(rules.clone());
    let b = FakeDns::start(rules);
    let (_dir, conf) = resolv_conf(&[a.addr, b.addr], "");
    let attempt = Duration::from_millis(250);
    let mut f = Fetcher::new(config(&conf, Duration::from_secs(3), attempt, 2)).unwrap();
    let port = closed_port();
    let mut id_is_dead = HashMap::new();
    let mut live = 0;
    let start = Instant::now();
    for i in 0..550u64 {
        // Dead names first in every group of eleven.
        let host = if i % 11 == 0 {
            format!("dead{}.test", i / 11)
        } else {
            live += 1;
            format!("live{}.test", live - 1)
        };
        id_is_dead.insert(i, host.starts_with("dead"));
        let url = url::Url::parse(&format!("http://{host}:{port}/")).unwrap();
        f.submit(FetchRequest::get(i, url, "trawl-test".into()));
    }
    let mut last_live = Duration::ZERO;
    let mut first_dead = None;
    let mut outcomes = 0;
    f.run_until_idle(Duration::from_secs(10), |o| {
        outcomes += 1;
        if id_is_dead[&o.id] {
            assert_eq!(
                o.error,
                Some(FailReason::Dns(DnsFailure::TimedOut)),
                "{}",
                o.url
            );
            first_dead.get_or_insert(start.elapsed());
        } else {
            assert_eq!(o.error, Some(FailReason::Refused), "{}", o.url);
            last_live = start.elapsed();
        }
    })
    .unwrap();
    assert_eq!(outcomes, 550);
    let first_dead = first_dead.unwrap();
    // Four tries of 250 ms each before a dead name gives up.
    assert!(
        first_dead >= attempt * 4 - Duration::from_millis(20),
        "{first_dead:?}"
    );
    // Within one try, or two when the test server's socket dropped a datagram of the
    // 1,100-query burst (its receive buffer is the kernel default); far before the dead
    // names' four tries.
    assert!(
        last_live < attempt * 2,
        "live names: {last_live:?}, {:?}",
        f.dns_stats()
    );
    assert!(last_live < first_dead);
    for i in 0..50 {
        let name = format!("dead{i}.test");
        let asked = a.asked(&name, TYPE_A) + b.asked(&name, TYPE_A);
        assert!(asked <= 2 * 2, "{name} asked {asked} times");
        assert!(
            a.asked(&name, TYPE_A) >= 1 && b.asked(&name, TYPE_A) >= 1,
            "both servers tried"
        );
    }
    let s = f.dns_stats();
    assert_eq!((s.succeeded, s.timed_out, s.dead_names), (500, 50, 50));
}

#[test]
fn lookups_beyond_the_in_flight_cap_wait_in_order_and_the_deadline_covers_the_wait() {
    let mut rules = HashMap::new();
    for i in 0..4 {
        rules.insert(format!("dead{i}.test"), Rule::Drop);
    }
    rules.insert(
        "live.test".to_owned(),
        Rule::Addrs(vec![v4("127.0.0.1")], 60),
    );
    let dns = FakeDns::start(rules);
    let (_dir, conf) = resolv_conf(&[dns.addr], "");
    let mut cfg = config(
        &conf,
        Duration::from_millis(400),
        Duration::from_millis(300),
        1,
    );
    cfg.dns.max_in_flight = 4;
    let mut f = Fetcher::new(cfg).unwrap();
    let port = closed_port();
    for i in 0..4u64 {
        let url = url::Url::parse(&format!("http://dead{i}.test:{port}/")).unwrap();
        f.submit(FetchRequest::get(i, url, "t".into()));
    }
    let url = url::Url::parse(&format!("http://live.test:{port}/")).unwrap();
    f.submit(FetchRequest::get(9, url, "t".into()));
    assert_eq!((f.dns_stats().in_flight, f.dns_stats().queued), (4, 1));
    let mut live = None;
    let start = Instant::now();
    f.run_until_idle(Duration::from_secs(5), |o| {
        if o.id == 9 {
            live = Some((o.error, start.elapsed()));
        }
    })
    .unwrap();
    // The dead four hold the slots for 300 ms; then live.test runs and answers.
    let (error, at) = live.unwrap();
    assert_eq!(error, Some(FailReason::Refused));
    assert!(at >= Duration::from_millis(290), "{at:?}");
    assert_eq!(dns.asked("live.test", TYPE_A), 1);
}

#[test]
fn trawl_fetch_dns_flags() {
    let dns = FakeDns::start(HashMap::from([
        (
            "live.test".to_owned(),
            Rule::Addrs(vec![v4("127.0.0.1")], 60),
        ),
        ("dead.test".to_owned(), Rule::Drop),
    ]));
    let (_dir, conf) = resolv_conf(&[dns.addr], "options timeout:1 attempts:5\n");
    let port = closed_port();
    let start = Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_trawl"))
        .arg("fetch")
        .arg("--resolv-conf")
        .arg(&conf)
        .args(["--dns-timeout-ms", "300", "--dns-max-attempts", "1"])
        .arg(format!("http://live.test:{port}/"))
        .arg(format!("http://dead.test:{port}/"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = |host: &str| {
        text.lines()
            .find(|l| l.contains(host))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(
        line("live.test").contains("\"outcome\":\"refused\""),
        "{text}"
    );
    assert!(line("dead.test").contains("dns: timed out"), "{text}");
    // --dns-max-attempts 1 beat resolv.conf's attempts:5; the 300 ms deadline its 1 s.
    assert_eq!(dns.asked("dead.test", TYPE_A), 1);
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_trawl"))
        .args(["fetch", "--dns-max-in-flight", "0", "http://x.test/"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
}
