//! The DNS client: the sockets of the lookups under way and their state, driven by the
//! fetcher's loop (readiness on our tokens, and `handle_timeout` at `next_deadline`).
//!
//! One lookup asks its candidate names (search list) one after the other; for each it
//! sends an A and an AAAA query at once from one fresh UDP socket (bound to port 0 so
//! the kernel picks a random source port; each query a random id) to one server, and
//! waits `try_timeout`. A try that gets no answer is repeated from a new socket to the
//! next server, `attempts` rounds over the servers at most, all within the lookup's
//! deadline. A reply counts only if it comes from the server asked, carries the id of
//! a query still open and repeats its question; a truncated one (TC) is asked again
//! over TCP to the same server.

use std::cmp::Reverse;
use std::collections::hash_map::RandomState;
use std::collections::{BinaryHeap, HashMap};
use std::hash::BuildHasher;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::{Duration, Instant};

use mio::net::{TcpStream, UdpSocket};
use mio::{Interest, Registry, Token};

use super::conf::ResolvConf;
use super::wire::{build_query, parse_answer, Header, QType, Rcode};
use crate::fetch::DnsFailure;

/// Low bits of every resolver token: no connection slot has this index.
const LOW: usize = 0xffff_ffff;
/// A UDP answer is at most 512 bytes without EDNS; servers may still send more.
const UDP_BUF_BYTES: usize = 4096;
/// How long to wait for the other family's answer once one family has addresses.
const OTHER_FAMILY_GRACE: Duration = Duration::from_millis(50);
/// Shortest wait for one try, whatever the configuration says.
const MIN_TRY: Duration = Duration::from_millis(10);

/// The number behind a resolver token, or `None` for any other token.
pub(super) fn token_number(token: Token) -> Option<u32> {
    if token.0 & LOW != LOW {
        return None;
    }
    let n = (token.0 >> 32) as u32;
    (n != u32::MAX).then_some(n) // all ones is the waker
}

fn token_of(n: u32) -> Token {
    Token(((n as usize) << 32) | LOW)
}

/// A finished lookup: addresses (IPv4 first) with the smallest TTL in seconds, or the
/// failure with the negative TTL its SOA gave.
pub(super) type Outcome = Result<(Vec<IpAddr>, u32), (DnsFailure, Option<u32>)>;

/// What [`Client::take_finished`] yields.
pub(super) struct Finished {
    pub id: u64,
    pub result: Outcome,
    /// Some server gave a valid reply during the lookup (so the name is not dead).
    pub answered: bool,
}

/// Counters kept live by the client.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Counters {
    pub queries_sent: u64,
    pub retransmits: u64,
    pub tcp_fallbacks: u64,
    pub ignored_replies: u64,
}

#[derive(Clone, Copy)]
enum Channel {
    Udp,
    Tcp(usize),
}

enum Part {
    Addrs(Vec<IpAddr>, u32),
    NoData(Option<u32>),
    NxDomain(Option<u32>),
    Error(DnsFailure),
}

struct Tcp {
    stream: TcpStream,
    token: u32,
    out: Vec<u8>,
    written: usize,
    inbuf: Vec<u8>,
}

struct Slot {
    qtype: QType,
    id: u16,
    part: Option<Part>,
    tcp: Option<Tcp>,
}

struct Running {
    id: u64,
    candidates: Vec<String>,
    cand: usize,
    deadline: Instant,
    first_server: usize,
    try_no: u32,
    server: SocketAddr,
    try_deadline: Instant,
    udp: Option<(UdpSocket, u32)>,
    slots: [Slot; 2],
    answered: bool,
    malformed: bool,
    failure: Option<(DnsFailure, Option<u32>)>,
}

/// The lookups on the network. See the module docs.
pub(super) struct Client {
    /// Ask AAAA too: only where this machine has an IPv6 address to reach the
    /// answer from (getaddrinfo's AI_ADDRCONFIG), else the second query is waste.
    ask_aaaa: bool,
    conf: ResolvConf,
    try_timeout: Duration,
    tries: u32,
    lookups: HashMap<u64, Running>,
    /// Try deadlines, earliest first; an entry whose lookup has moved on (finished, or
    /// a later try) is stale and skipped. Every entry falls due within one lookup
    /// deadline, so the heap holds at most the tries of that window.
    deadlines: BinaryHeap<Reverse<(Instant, u64)>>,
    tokens: HashMap<u32, (u64, Channel)>,
    next_token: u32,
    rotate_next: usize,
    rand: RandomState,
    rand_counter: u64,
    finished: Vec<Finished>,
    counters: Counters,
    buf: Vec<u8>,
}

/// Tries a lookup makes at least, whatever resolv.conf's `attempts` (rotating over
/// the servers, each waiting the deadline divided by the tries), unless
/// `--dns-max-attempts` says otherwise.
const MIN_TRIES: u32 = 4;

impl Client {
    pub fn new(
        conf: ResolvConf,
        attempt_timeout: Option<Duration>,
        attempts: Option<u32>,
        lookup_timeout: Duration,
        ask_aaaa: bool,
    ) -> Self {
        let servers = conf.nameservers.len().max(1) as u32;
        // At least MIN_TRIES within the lookup deadline: a local caching server
        // drops queries under load, and with glibc's two attempts a dropped query
        // waited half the deadline for its one retry (widebench `dead`: 227 live
        // names of 5,000 timed out so, their hosts given up).
        // `--dns-max-attempts` given is taken as it is.
        let tries = match attempts {
            Some(n) => n.max(1).saturating_mul(servers),
            None => conf.attempts.max(1).saturating_mul(servers).max(MIN_TRIES),
        };
        let try_timeout = attempt_timeout
            .unwrap_or(conf.timeout)
            .min(lookup_timeout / tries)
            .max(MIN_TRY);
        Self {
            conf,
            ask_aaaa,
            try_timeout,
            tries,
            lookups: HashMap::new(),
            deadlines: BinaryHeap::new(),
            tokens: HashMap::new(),
            next_token: 0,
            rotate_next: 0,
            // SipHash under keys the OS seeded: unpredictable ids without a new crate.
            rand: RandomState::new(),
            rand_counter: 0,
            finished: Vec::new(),
            counters: Counters::default(),
            buf: vec![0; UDP_BUF_BYTES],
        }
    }

    /// Lookups under way.
    pub fn len(&self) -> usize {
        self.lookups.len()
    }

    pub fn counters(&self) -> Counters {
        self.counters
    }

    pub fn take_finished(&mut self) -> Vec<Finished> {
        std::mem::take(&mut self.finished)
    }

    /// The part a query type starts with: `None` (to be asked), or no data for an
    /// AAAA query this machine would not use.
    fn unasked(&self, qtype: QType) -> Option<Part> {
        (qtype == QType::Aaaa && !self.ask_aaaa).then_some(Part::NoData(None))
    }

    /// The earliest try deadline (possibly a stale one: an early wake-up, no harm).
    pub fn next_deadline(&self) -> Option<Instant> {
        self.deadlines.peek().map(|Reverse((at, _))| *at)
    }

    /// Starts lookup `id` of `name` (lower-case), to end by `deadline`.
    ///
    /// # Errors
    /// `Unavailable` when no socket can be opened.
    pub fn start(
        &mut self,
        id: u64,
        name: &str,
        deadline: Instant,
        now: Instant,
        registry: &Registry,
    ) -> Result<(), DnsFailure> {
        let servers = self.conf.nameservers.len();
        let first_server = if self.conf.rotate && servers > 0 {
            self.rotate_next = (self.rotate_next + 1) % servers;
            self.rotate_next
        } else {
            0
        };
        let server = *self
            .conf
            .nameservers
            .get(first_server)
            .ok_or(DnsFailure::Unavailable)?;
        let mut r = Running {
            id,
            candidates: self.conf.candidates(name),
            cand: 0,
            deadline,
            first_server,
            try_no: 0,
            server,
            try_deadline: deadline,
            udp: None,
            slots: [QType::A, QType::Aaaa].map(|qtype| Slot {
                qtype,
                id: 0,
                part: self.unasked(qtype),
                tcp: None,
            }),
            answered: false,
            malformed: false,
            failure: None,
        };
        if let Err(e) = self.send_try(id, &mut r, now, registry) {
            self.release(&mut r, registry);
            return Err(e);
        }
        self.lookups.insert(id, r);
        Ok(())
    }

    /// Readiness on one of our sockets.
    pub fn on_ready(&mut self, token: Token, now: Instant, registry: &Registry) {
        let Some(n) = token_number(token) else {
            return;
        };
        let Some(&(id, channel)) = self.tokens.get(&n) else {
            return; // stale: its socket is gone
        };
        let Some(mut r) = self.lookups.remove(&id) else {
            return;
        };
        match channel {
            Channel::Udp => self.read_udp(&mut r, registry),
            Channel::Tcp(i) => self.drive_tcp(&mut r, i, registry),
        }
        self.progress(id, r, now, registry);
    }

    /// Tries whose wait ended: the next try, or the end of the lookup.
    pub fn handle_timeout(&mut self, now: Instant, registry: &Registry) {
        while let Some(&Reverse((at, id))) = self.deadlines.peek() {
            if at > now {
                break;
            }
            self.deadlines.pop();
            if self.lookups.get(&id).is_none_or(|r| r.try_deadline != at) {
                continue; // stale
            }
            let Some(mut r) = self.lookups.remove(&id) else {
                continue;
            };
            if r.slots
                .iter()
                .any(|s| matches!(s.part, Some(Part::Addrs(..))))
            {
                // One family answered, the other never did: use what came.
                self.finish(id, r, registry);
                continue;
            }
            if now >= r.deadline || r.try_no + 1 >= self.tries {
                let kind = if r.malformed && !r.answered {
                    DnsFailure::Malformed
                } else {
                    DnsFailure::TimedOut
                };
                self.release(&mut r, registry);
                self.finished.push(Finished {
                    id,
                    result: Err((kind, None)),
                    answered: r.answered,
                });
                continue;
            }
            r.try_no += 1;
            self.counters.retransmits += 1;
            self.send_or_finish(id, r, now, registry);
        }
    }

    /// Sends the next try of a running lookup, or ends it with the reason no try
    /// could be sent.
    fn send_or_finish(&mut self, id: u64, mut r: Running, now: Instant, registry: &Registry) {
        match self.send_try(id, &mut r, now, registry) {
            Ok(()) => {
                self.lookups.insert(id, r);
            }
            Err(e) => {
                self.release(&mut r, registry);
                self.finished.push(Finished {
                    id,
                    result: Err((e, None)),
                    answered: r.answered,
                });
            }
        }
    }

    /// Sends the open queries of the current candidate from a fresh socket to the
    /// server whose turn it is.
    fn send_try(
        &mut self,
        id: u64,
        r: &mut Running,
        now: Instant,
        registry: &Registry,
    ) -> Result<(), DnsFailure> {
        self.release(r, registry);
        let servers = &self.conf.nameservers;
        let index = (r.first_server + r.try_no as usize) % servers.len().max(1);
        r.server = *servers.get(index).ok_or(DnsFailure::Unavailable)?;
        let bind = match r.server {
            SocketAddr::V4(_) => SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0),
            SocketAddr::V6(_) => SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), 0),
        };
        let mut socket = UdpSocket::bind(bind).map_err(|_| DnsFailure::Unavailable)?;
        let n = self.new_token();
        registry
            .register(&mut socket, token_of(n), Interest::READABLE)
            .map_err(|_| DnsFailure::Unavailable)?;
        self.tokens.insert(n, (id, Channel::Udp));
        let name = r.candidates.get(r.cand).map_or("", String::as_str);
        let mut query = Vec::with_capacity(64);
        for i in 0..r.slots.len() {
            let qid = self.random_id();
            let Some(slot) = r.slots.get_mut(i) else {
                continue;
            };
            if slot.part.is_some() {
                continue;
            }
            slot.id = qid;
            if build_query(qid, name, slot.qtype, &mut query).is_err() {
                // Not a name DNS can carry (an empty or over-long label).
                slot.part = Some(Part::NxDomain(None));
                continue;
            }
            // A failed send (unreachable network...) is a try without answer.
            if socket.send_to(&query, r.server).is_ok() {
                self.counters.queries_sent += 1;
            }
        }
        r.udp = Some((socket, n));
        r.try_deadline = (now + self.try_timeout).min(r.deadline);
        self.deadlines.push(Reverse((r.try_deadline, id)));
        Ok(())
    }

    fn read_udp(&mut self, r: &mut Running, registry: &Registry) {
        loop {
            let Some((socket, _)) = r.udp.as_ref() else {
                return;
            };
            let mut buf = std::mem::take(&mut self.buf);
            let received = socket.recv_from(&mut buf);
            match received {
                Ok((len, src)) => {
                    if let Some(msg) = buf.get(..len) {
                        self.accept(r, msg, src, None, registry);
                    }
                    self.buf = buf;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => self.buf = buf,
                Err(_) => {
                    // WouldBlock: drained. Anything else (an ICMP error): wait for the
                    // try's deadline, which moves on to the next server.
                    self.buf = buf;
                    return;
                }
            }
        }
    }

    /// A reply arrived (on UDP from `src`, or on the TCP stream of slot `tcp`).
    fn accept(
        &mut self,
        r: &mut Running,
        msg: &[u8],
        src: SocketAddr,
        tcp: Option<usize>,
        registry: &Registry,
    ) {
        let same_server = src.ip().to_canonical() == r.server.ip().to_canonical()
            && src.port() == r.server.port();
        let Ok(header) = Header::parse(msg) else {
            self.counters.ignored_replies += 1;
            return;
        };
        let Some(i) = r.slots.iter().position(|s| {
            s.part.is_none() && s.id == header.id && (tcp.is_none() || s.tcp.is_some())
        }) else {
            self.counters.ignored_replies += 1;
            return;
        };
        if !same_server || tcp.is_some_and(|t| t != i) {
            self.counters.ignored_replies += 1;
            return;
        }
        let name = r.candidates.get(r.cand).map_or("", String::as_str);
        let Some(qtype) = r.slots.get(i).map(|s| s.qtype) else {
            return;
        };
        let answer = match parse_answer(msg, name, qtype) {
            Ok(a) => a,
            Err(_) => {
                self.counters.ignored_replies += 1;
                r.malformed = true;
                return;
            }
        };
        // A server answered (even if only to say "ask over TCP"): the name is not dead.
        r.answered = true;
        if answer.truncated && tcp.is_none() {
            self.start_tcp(r, i, registry);
            return;
        }
        let part = match answer.rcode {
            Rcode::NoError if !answer.addrs.is_empty() => {
                Part::Addrs(answer.addrs, answer.ttl_secs.unwrap_or(0))
            }
            Rcode::NoError => Part::NoData(answer.negative_ttl_secs),
            Rcode::NameError => Part::NxDomain(answer.negative_ttl_secs),
            Rcode::Refused => Part::Error(DnsFailure::Refused),
            _ => Part::Error(DnsFailure::ServerFailure),
        };
        if let Some(slot) = r.slots.get_mut(i) {
            slot.part = Some(part);
            if let Some(t) = slot.tcp.take() {
                self.drop_tcp(t, registry);
            }
        }
    }

    fn start_tcp(&mut self, r: &mut Running, i: usize, registry: &Registry) {
        let name = r.candidates.get(r.cand).map_or("", String::as_str);
        let Some(slot) = r.slots.get_mut(i) else {
            return;
        };
        if slot.tcp.is_some() {
            return;
        }
        let mut query = Vec::new();
        if build_query(slot.id, name, slot.qtype, &mut query).is_err() {
            return;
        }
        let Ok(len) = u16::try_from(query.len()) else {
            return;
        };
        let Ok(mut stream) = TcpStream::connect(r.server) else {
            return; // the try's deadline moves on
        };
        let n = self.new_token();
        if registry
            .register(
                &mut stream,
                token_of(n),
                Interest::READABLE | Interest::WRITABLE,
            )
            .is_err()
        {
            return;
        }
        self.counters.tcp_fallbacks += 1;
        self.tokens.insert(n, (r.id, Channel::Tcp(i)));
        let mut out = len.to_be_bytes().to_vec();
        out.extend_from_slice(&query);
        slot.tcp = Some(Tcp {
            stream,
            token: n,
            out,
            written: 0,
            inbuf: Vec::new(),
        });
    }

    fn drive_tcp(&mut self, r: &mut Running, i: usize, registry: &Registry) {
        let Some(t) = r.slots.get_mut(i).and_then(|s| s.tcp.as_mut()) else {
            return;
        };
        let mut failed = false;
        while t.written < t.out.len() {
            let Some(rest) = t.out.get(t.written..) else {
                break;
            };
            match t.stream.write(rest) {
                Ok(0) => {
                    failed = true;
                    break;
                }
                Ok(n) => t.written += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if e.kind() == io::ErrorKind::WouldBlock
                        || e.kind() == io::ErrorKind::NotConnected =>
                {
                    break
                }
                Err(_) => {
                    failed = true;
                    break;
                }
            }
        }
        let mut chunk = [0u8; 4096];
        while !failed {
            match t.stream.read(&mut chunk) {
                Ok(0) => {
                    failed = true;
                }
                Ok(n) => {
                    t.inbuf
                        .extend_from_slice(chunk.get(..n).unwrap_or_default());
                    if t.inbuf.len() > 2 + usize::from(u16::MAX) {
                        failed = true;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if e.kind() == io::ErrorKind::WouldBlock
                        || e.kind() == io::ErrorKind::NotConnected =>
                {
                    break
                }
                Err(_) => failed = true,
            }
        }
        let complete = match t.inbuf.as_slice() {
            [hi, lo, rest @ ..] => {
                let len = usize::from(u16::from_be_bytes([*hi, *lo]));
                rest.get(..len).map(<[u8]>::to_vec)
            }
            _ => None,
        };
        if let Some(msg) = complete {
            let server = r.server;
            self.accept(r, &msg, server, Some(i), registry);
            failed = true; // done with the stream either way
        }
        if failed {
            if let Some(t) = r.slots.get_mut(i).and_then(|s| s.tcp.take()) {
                self.drop_tcp(t, registry);
            }
        }
    }

    /// After a reply: finish the candidate when both families are settled.
    fn progress(&mut self, id: u64, mut r: Running, now: Instant, registry: &Registry) {
        let settled = r.slots.iter().all(|s| s.part.is_some())
            || r.slots
                .iter()
                .any(|s| matches!(s.part, Some(Part::NxDomain(_))));
        if !settled {
            // One family has addresses: wait for the other only a moment (RFC 8305's
            // resolution delay), so a server that drops AAAA queries costs 50 ms, not
            // a whole try.
            let has_addrs = r
                .slots
                .iter()
                .any(|s| matches!(s.part, Some(Part::Addrs(..))));
            let grace = now + OTHER_FAMILY_GRACE;
            if has_addrs && r.try_deadline > grace {
                r.try_deadline = grace;
                self.deadlines.push(Reverse((grace, id)));
            }
            self.lookups.insert(id, r);
            return;
        }
        if r.slots
            .iter()
            .any(|s| matches!(s.part, Some(Part::Addrs(..))))
        {
            return self.finish(id, r, registry);
        }
        let mut failure = (DnsFailure::NoAddress, None::<u32>);
        for s in &r.slots {
            match &s.part {
                Some(Part::NxDomain(ttl)) => failure = (DnsFailure::NoSuchName, *ttl),
                Some(Part::Error(e)) if failure.0 != DnsFailure::NoSuchName => {
                    failure = (e.clone(), None);
                }
                Some(Part::NoData(ttl)) if failure.0 == DnsFailure::NoAddress => {
                    failure.1 = match (failure.1, ttl) {
                        (Some(a), Some(b)) => Some(a.min(*b)),
                        (a, b) => a.or(*b),
                    };
                }
                _ => {}
            }
        }
        // As glibc reports it: NODATA on any candidate beats a server failure, which
        // beats NXDOMAIN.
        let rank = |e: &DnsFailure| match e {
            DnsFailure::NoAddress => 3,
            DnsFailure::ServerFailure | DnsFailure::Refused => 2,
            _ => 1,
        };
        if r.failure
            .as_ref()
            .is_none_or(|(e, _)| rank(&failure.0) >= rank(e))
        {
            r.failure = Some(failure);
        }
        if r.cand + 1 < r.candidates.len() {
            r.cand += 1;
            r.try_no = 0;
            for s in &mut r.slots {
                s.part = self.unasked(s.qtype);
                if let Some(t) = s.tcp.take() {
                    self.drop_tcp(t, registry);
                }
            }
            return self.send_or_finish(id, r, now, registry);
        }
        self.finish(id, r, registry);
    }

    /// Ends a lookup with what its slots hold (addresses) or its recorded failure.
    fn finish(&mut self, id: u64, mut r: Running, registry: &Registry) {
        self.release(&mut r, registry);
        let mut v4 = Vec::new();
        let mut v6 = Vec::new();
        let mut ttl: Option<u32> = None;
        for s in &r.slots {
            if let Some(Part::Addrs(ips, t)) = &s.part {
                for ip in ips {
                    if ip.is_ipv4() {
                        v4.push(*ip);
                    } else {
                        v6.push(*ip);
                    }
                }
                ttl = Some(ttl.map_or(*t, |x| x.min(*t)));
            }
        }
        v4.extend(v6);
        let result = match ttl {
            Some(ttl) if !v4.is_empty() => Ok((v4, ttl)),
            _ => Err(r.failure.take().unwrap_or((DnsFailure::NoAddress, None))),
        };
        self.finished.push(Finished {
            id,
            result,
            answered: r.answered,
        });
    }

    /// Closes a lookup's sockets (deregistered, tokens forgotten).
    fn release(&mut self, r: &mut Running, registry: &Registry) {
        if let Some((mut socket, n)) = r.udp.take() {
            let _ = registry.deregister(&mut socket);
            self.tokens.remove(&n);
        }
        for s in &mut r.slots {
            if let Some(t) = s.tcp.take() {
                self.drop_tcp(t, registry);
            }
        }
    }

    fn drop_tcp(&mut self, mut t: Tcp, registry: &Registry) {
        let _ = registry.deregister(&mut t.stream);
        self.tokens.remove(&t.token);
    }

    fn new_token(&mut self) -> u32 {
        loop {
            let n = self.next_token;
            self.next_token = self.next_token.wrapping_add(1);
            if n != u32::MAX && !self.tokens.contains_key(&n) {
                return n;
            }
        }
    }

    fn random_id(&mut self) -> u16 {
        self.rand_counter += 1;
        self.rand.hash_one(self.rand_counter) as u16
    }
}
