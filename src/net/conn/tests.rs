//! The phases one at a time, on real loopback sockets against small scripted servers
//! running in a thread (`std::net::TcpListener` on 127.0.0.1:0). Each test drives one
//! `Conn` through [`advance`] with its own mio `Poll`, the way the loop does, and checks
//! the phase it lands in and what it asks the loop to do. Deadlines are checked with
//! synthetic instants (`Conn::deadline` is a pure function of the phase).

use std::io::{Read as _, Write as _};
use std::net::{Shutdown, TcpListener, TcpStream as StdStream};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token};

use super::*;
use crate::fetch::FetchLimits;
use crate::fetch::FetchRequest;
use crate::fetch::Timings;
use crate::http::{BodyLimitMode, HttpError};
use crate::tls::TlsConfig;

/// How long any test waits for progress before it fails (bounded, never hangs).
pub(super) const PATIENCE: Duration = Duration::from_secs(10);
pub(super) const TOKEN: Token = Token(0);

/// A one-connection scripted server: accepts once and runs `script` on the socket.
pub(super) fn serve<T: Send + 'static>(
    script: impl FnOnce(StdStream) -> T + Send + 'static,
) -> (SocketAddr, JoinHandle<T>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = thread::spawn(move || {
        let (sock, _) = listener.accept().unwrap();
        sock.set_read_timeout(Some(PATIENCE)).unwrap();
        script(sock)
    });
    (addr, handle)
}

/// Reads one request head (up to the empty line) and returns it.
pub(super) fn read_head(sock: &mut impl std::io::Read) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match sock.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// Keeps the server's side open until the client closes (bounded by the read timeout):
/// a peer that closes at once makes a response's connection not reusable (the event
/// carries its FIN), which is right, but not what a keep-alive test wants.
pub(super) fn linger(sock: &mut StdStream) {
    let mut buf = [0u8; 256];
    while matches!(sock.read(&mut buf), Ok(n) if n > 0) {}
}

/// A test CA and a server config for `localhost`, as `tests/support` makes them.
pub(super) fn tls_materials() -> (String, Arc<rustls::ServerConfig>) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, KeyUsagePurpose};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .signed_by(&leaf_key, &issuer)
        .unwrap();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone(), ca_cert.der().clone()], key)
        .unwrap();
    (ca_cert.pem(), Arc::new(config))
}

/// The loop's part, for one connection: a poll, the TLS client and the shared buffers.
pub(super) struct Rig {
    pub(super) poll: Poll,
    events: Events,
    pub(super) tls: TlsClient,
    read_buf: Vec<u8>,
    body_tmp: Vec<u8>,
}

impl Rig {
    pub(super) fn new() -> Self {
        Self {
            poll: Poll::new().unwrap(),
            events: Events::with_capacity(16),
            tls: TlsClient::new(&TlsConfig::default()).unwrap(),
            read_buf: vec![0; 64 * 1024],
            body_tmp: Vec::new(),
        }
    }

    /// A rig whose TLS client trusts only the CA `ca_pem` (see [`tls_materials`]).
    pub(super) fn trusting(ca_pem: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("ca.pem");
        std::fs::write(&ca, ca_pem).unwrap();
        let mut tls = TlsConfig::default();
        tls.ca_files.push(ca);
        let mut rig = Rig::new();
        rig.tls = TlsClient::new(&tls).unwrap();
        rig
    }

    /// Starts a connection to `addr` for `GET {path}`, in `Connecting`, registered.
    pub(super) fn open(
        &mut self,
        addr: SocketAddr,
        path: &str,
        limits: FetchLimits,
        https: bool,
    ) -> Conn {
        let now = Instant::now();
        let scheme = if https { "https" } else { "http" };
        let url = url::Url::parse(&format!("{scheme}://localhost:{}{path}", addr.port())).unwrap();
        let mut req = FetchRequest::get(1, url, "trawl-test".into());
        req.limits = limits;
        let key = PoolKey {
            https,
            host: "localhost".into(),
            port: addr.port(),
            via: 0,
        };
        let job = Job::new(req, key.clone(), now);
        let mut stream = TcpStream::connect(addr).unwrap();
        self.poll
            .registry()
            .register(&mut stream, TOKEN, Interest::WRITABLE)
            .unwrap();
        Conn::connecting(
            stream,
            addr,
            Some(addr),
            exchange(job, now, false),
            None,
            now,
        )
    }

    fn ctx(&mut self) -> Ctx<'_> {
        Ctx {
            tls: &self.tls,
            read_buf: &mut self.read_buf,
            body_tmp: &mut self.body_tmp,
        }
    }

    /// Runs one step as the loop would on `ready`, re-registering on a new interest.
    pub(super) fn step(&mut self, conn: &mut Conn, ready: Readiness) -> After {
        let after = advance(conn, &mut self.ctx(), ready, Instant::now());
        if matches!(after, After::Wait) {
            let want = conn.interest();
            if want != conn.registered {
                self.poll
                    .registry()
                    .reregister(&mut conn.stream, TOKEN, want)
                    .unwrap();
                conn.registered = want;
            }
        }
        after
    }

    /// Polls and steps until the connection stops waiting or `stop` holds.
    pub(super) fn drive_until(&mut self, conn: &mut Conn, stop: impl Fn(&Conn) -> bool) -> After {
        let end = Instant::now() + PATIENCE;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "no progress within {PATIENCE:?}");
            self.poll.poll(&mut self.events, Some(left)).unwrap();
            let ready: Vec<Readiness> = self
                .events
                .iter()
                .map(|ev| Readiness {
                    readable: ev.is_readable(),
                    writable: ev.is_writable(),
                    error: ev.is_error(),
                    read_closed: ev.is_read_closed(),
                })
                .collect();
            for r in ready {
                let after = self.step(conn, r);
                if !matches!(after, After::Wait) || stop(conn) {
                    return after;
                }
            }
        }
    }

    pub(super) fn drive(&mut self, conn: &mut Conn) -> After {
        self.drive_until(conn, |_| false)
    }

    /// Puts a finished connection back to `Idle` and starts a second request on it, as
    /// the loop does for a pooled connection (written at once, no readiness needed).
    fn reuse(&mut self, conn: &mut Conn, path: &str) -> After {
        let now = Instant::now();
        let url = url::Url::parse(&format!("http://localhost:{}{path}", conn.peer.port())).unwrap();
        let job = Job::new(
            FetchRequest::get(2, url, "trawl-test".into()),
            conn.key.clone(),
            now,
        );
        conn.phase = Phase::Sending(Sending {
            ex: exchange(job, now, true),
            since: now,
            written: 0,
        });
        self.step(conn, Readiness::ALL)
    }
}

pub(super) fn exchange(job: Job, now: Instant, reused: bool) -> Exchange {
    Exchange {
        job: Box::new(job),
        started: now,
        timings: Timings::default(),
        reused,
        tls_resumed: false,
    }
}

pub(super) fn finished(after: After) -> (FetchOutcome, bool) {
    match after {
        After::Finished { outcome, reusable } => (outcome, reusable),
        After::Failed { reason, .. } => panic!("expected a response, got {reason:?}"),
        After::Wait => panic!("expected a response, still waiting"),
        After::IdleClosed => panic!("expected a response, got idle close"),
    }
}

/// (reason, retryable, next_addr, a response reader was kept)
pub(super) fn failure(after: After) -> (FailReason, bool, bool, bool) {
    match after {
        After::Failed {
            reason,
            retryable,
            next_addr,
            reading,
            ..
        } => (reason, retryable, next_addr, reading.is_some()),
        After::Finished { outcome, .. } => panic!("expected a failure, got {:?}", outcome.status()),
        After::Wait => panic!("expected a failure, still waiting"),
        After::IdleClosed => panic!("expected a failure, got idle close"),
    }
}

#[test]
fn a_plain_exchange_goes_connect_send_head_body_and_stays_reusable() {
    let (addr, server) = serve(|mut s| {
        let head = read_head(&mut s);
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
            .unwrap();
        linger(&mut s);
        head
    });
    let mut rig = Rig::new();
    let mut conn = rig.open(addr, "/a", FetchLimits::default(), false);
    assert_eq!(
        conn.interest(),
        Interest::WRITABLE,
        "connecting waits to be writable"
    );
    // The connect completes; the request goes out in the same step.
    let after = rig.drive_until(&mut conn, |c| matches!(c.phase, Phase::ReadingHead(_)));
    assert!(matches!(after, After::Wait));
    assert!(matches!(conn.phase, Phase::ReadingHead(_)));
    assert_eq!(conn.interest(), Interest::READABLE);
    let (outcome, reusable) = finished(rig.drive(&mut conn));
    assert!(reusable, "HTTP/1.1 with a Content-Length may be reused");
    assert_eq!(outcome.status(), Some(200));
    assert_eq!(outcome.body, b"hello");
    assert_eq!(outcome.wire_bytes, 43);
    assert!(outcome.timings.connect.is_some() && outcome.timings.first_byte.is_some());
    assert!(!outcome.reused_connection);
    drop(conn);
    let head = server.join().unwrap();
    assert!(head.starts_with("GET /a HTTP/1.1\r\n"), "{head}");
}

#[test]
fn keep_alive_reuse_sends_the_next_request_on_the_same_socket() {
    let (addr, server) = serve(|mut s| {
        let mut paths = Vec::new();
        for body in ["one", "two"] {
            let head = read_head(&mut s);
            paths.push(head.lines().next().unwrap_or_default().to_string());
            let resp = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            s.write_all(resp.as_bytes()).unwrap();
        }
        linger(&mut s);
        paths
    });
    let mut rig = Rig::new();
    let mut conn = rig.open(addr, "/1", FetchLimits::default(), false);
    let (first, reusable) = finished(rig.drive(&mut conn));
    assert!(reusable);
    assert_eq!(first.body, b"one");
    conn.phase = Phase::Idle(Idle {
        since: Instant::now(),
    });
    // Written at once from Idle: straight to ReadingHead, no writable event needed.
    assert!(matches!(rig.reuse(&mut conn, "/2"), After::Wait));
    assert!(matches!(conn.phase, Phase::ReadingHead(_)));
    let (second, reusable) = finished(rig.drive(&mut conn));
    assert!(reusable);
    assert_eq!(second.body, b"two");
    assert!(second.reused_connection);
    assert!(
        second.timings.connect.is_none(),
        "no connect on a reused connection"
    );
    drop(conn);
    assert_eq!(
        server.join().unwrap(),
        ["GET /1 HTTP/1.1", "GET /2 HTTP/1.1"]
    );
}

#[test]
fn a_server_closing_mid_head_is_an_incomplete_head_not_retried() {
    let (addr, server) = serve(|mut s| {
        read_head(&mut s);
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Le").unwrap();
    });
    let mut rig = Rig::new();
    let mut conn = rig.open(addr, "/", FetchLimits::default(), false);
    let (reason, retryable, _, kept) = failure(rig.drive(&mut conn));
    server.join().unwrap();
    assert!(
        matches!(reason, FailReason::Protocol(HttpError::IncompleteHead)),
        "{reason:?}"
    );
    assert!(
        !retryable,
        "bytes arrived: the server answered, a retry could repeat it"
    );
    assert!(kept, "the partial response travels with the failure");
}

#[test]
fn a_reused_connection_closed_before_any_byte_is_retryable() {
    let (addr, server) = serve(|mut s| {
        read_head(&mut s);
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            .unwrap();
        read_head(&mut s); // the second request arrives, then the server closes
    });
    let mut rig = Rig::new();
    let mut conn = rig.open(addr, "/", FetchLimits::default(), false);
    let (_, reusable) = finished(rig.drive(&mut conn));
    assert!(reusable);
    assert!(matches!(rig.reuse(&mut conn, "/again"), After::Wait));
    server.join().unwrap();
    let (reason, retryable, next_addr, _) = failure(rig.drive(&mut conn));
    assert!(matches!(reason, FailReason::ClosedEarly), "{reason:?}");
    assert!(
        retryable,
        "a reused connection that got no byte may be retried"
    );
    assert!(!next_addr);
}

#[test]
fn a_chunked_body_split_across_reads_is_reassembled() {
    let (addr, server) = serve(|mut s| {
        read_head(&mut s);
        // The head arrives in two pieces (the reader carries the partial head), the
        // chunks in more.
        for part in [
            &b"HTTP/1.1 200 OK\r\nTransfer-Enc"[..],
            b"oding: chunked\r\n\r\n5\r\nhel",
            b"lo\r\n6\r\n world\r\n",
            b"0\r\n\r\n",
        ] {
            s.write_all(part).unwrap();
            s.flush().unwrap();
            thread::sleep(Duration::from_millis(20));
        }
        linger(&mut s);
    });
    let mut rig = Rig::new();
    let mut conn = rig.open(addr, "/", FetchLimits::default(), false);
    let after = rig.drive_until(&mut conn, |c| matches!(c.phase, Phase::ReadingBody(_)));
    assert!(matches!(after, After::Wait));
    assert!(
        matches!(conn.phase, Phase::ReadingBody(_)),
        "the head is in: the body has its own phase"
    );
    let (outcome, reusable) = finished(rig.drive(&mut conn));
    assert_eq!(outcome.body, b"hello world");
    assert!(
        reusable,
        "a complete chunked body leaves the connection reusable"
    );
    drop(conn);
    server.join().unwrap();
}

fn capped(mode: BodyLimitMode) -> FetchLimits {
    let mut limits = FetchLimits::default();
    limits.response.max_body_bytes = 100;
    limits.response.body_limit_mode = mode;
    limits
}

fn big_body_server() -> (SocketAddr, JoinHandle<()>) {
    serve(|mut s| {
        read_head(&mut s);
        let body = vec![b'x'; 10_000];
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 10000\r\n\r\n");
        let _ = s.write_all(&body);
    })
}

#[test]
fn a_body_over_the_cap_is_truncated_and_marked_and_the_connection_not_reused() {
    let (addr, server) = big_body_server();
    let mut rig = Rig::new();
    let mut conn = rig.open(addr, "/", capped(BodyLimitMode::Truncate), false);
    let (outcome, reusable) = finished(rig.drive(&mut conn));
    assert_eq!(outcome.body.len(), 100);
    assert!(outcome.body_truncated);
    assert!(!reusable, "the rest of the body is still on the wire");
    server.join().unwrap();
}

#[test]
fn a_body_over_the_cap_fails_as_too_large_when_told_to_abort() {
    let (addr, server) = big_body_server();
    let mut rig = Rig::new();
    let mut conn = rig.open(addr, "/", capped(BodyLimitMode::Abort), false);
    let (reason, retryable, _, kept) = failure(rig.drive(&mut conn));
    assert!(matches!(reason, FailReason::TooLarge), "{reason:?}");
    assert!(!retryable);
    assert!(kept, "the head travels with the failure");
    server.join().unwrap();
}

#[test]
fn connect_refused_lets_the_loop_try_the_next_address() {
    let addr = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    }; // closed again: nobody listens there now
    let mut rig = Rig::new();
    let mut conn = rig.open(addr, "/", FetchLimits::default(), false);
    let (reason, retryable, next_addr, kept) = failure(rig.drive(&mut conn));
    assert!(matches!(reason, FailReason::Refused), "{reason:?}");
    assert!(
        next_addr,
        "a connect failure may move on to another address"
    );
    assert!(!retryable && !kept);
}

#[test]
fn an_idle_connection_closed_by_the_server_leaves_the_pool() {
    let (addr, server) = serve(|mut s| {
        read_head(&mut s);
        s.write_all(b"HTTP/1.1 204 No Content\r\n\r\n").unwrap();
        thread::sleep(Duration::from_millis(50));
        s.shutdown(Shutdown::Both).unwrap();
    });
    let mut rig = Rig::new();
    let mut conn = rig.open(addr, "/", FetchLimits::default(), false);
    let (outcome, reusable) = finished(rig.drive(&mut conn));
    assert_eq!(outcome.status(), Some(204));
    assert!(reusable);
    conn.phase = Phase::Idle(Idle {
        since: Instant::now(),
    });
    // Nothing ready: an idle connection just waits.
    assert!(matches!(
        rig.step(&mut conn, Readiness::default()),
        After::Wait
    ));
    assert_eq!(conn.interest(), Interest::READABLE);
    assert!(matches!(rig.drive(&mut conn), After::IdleClosed));
    server.join().unwrap();
}

#[test]
fn a_plain_http_server_on_an_https_connection_is_a_tls_failure() {
    let (addr, server) = serve(|mut s| {
        let mut hello = [0u8; 16];
        let _ = s.read(&mut hello); // the ClientHello
                                    // Answer only after the client has settled in the handshake phase.
        thread::sleep(Duration::from_millis(100));
        let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        hello[0]
    });
    let mut rig = Rig::new();
    let mut conn = rig.open(addr, "/", FetchLimits::default(), true);
    let after = rig.drive_until(&mut conn, |c| matches!(c.phase, Phase::Handshaking(_)));
    assert!(
        matches!(after, After::Wait) && matches!(conn.phase, Phase::Handshaking(_)),
        "an https connection goes from connecting to the handshake"
    );
    let (reason, _, next_addr, _) = failure(rig.drive(&mut conn));
    assert!(matches!(reason, FailReason::Tls(_)), "{reason:?}");
    assert!(!next_addr);
    assert_eq!(
        server.join().unwrap(),
        0x16,
        "a TLS handshake record was sent"
    );
}

/// Deadlines for the synthetic-time tests: every one distinct, so the winner is clear.
pub(super) fn deadlines() -> Deadlines {
    Deadlines {
        dns_timeout: Duration::from_secs(1),
        connect_timeout: Duration::from_secs(2),
        tls_timeout: Duration::from_secs(3),
        proxy_timeout: Duration::from_secs(6),
        first_byte_timeout: Duration::from_secs(4),
        read_idle_timeout: Duration::from_secs(5),
        total_timeout: Duration::from_secs(60),
        min_rate_bytes_per_sec: 0,
        rate_window: Duration::from_secs(7),
    }
}

/// A connection to a server that sends a head and 3 of the 10 body bytes, then stalls
/// (until the test drops the returned sender).
fn stalled_mid_body(rig: &mut Rig) -> (Conn, std::sync::mpsc::Sender<()>) {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let (addr, _server) = serve(move |mut s| {
        read_head(&mut s);
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
            .unwrap();
        let _ = rx.recv_timeout(PATIENCE);
    });
    let mut conn = rig.open(addr, "/", FetchLimits::default(), false);
    let after = rig.drive_until(&mut conn, |c| match &c.phase {
        Phase::ReadingBody(ReadingBody { r, .. }) => r.rx.body.len() == 3,
        _ => false,
    });
    assert!(matches!(after, After::Wait));
    (conn, tx)
}

#[test]
fn silence_mid_body_is_a_read_idle_deadline_from_the_last_read() {
    let mut rig = Rig::new();
    let (mut conn, _stall) = stalled_mid_body(&mut rig);
    let d = deadlines();
    let t0 = Instant::now();
    let last = t0 + Duration::from_secs(100);
    if let Phase::ReadingBody(ReadingBody { r, .. }) = &mut conn.phase {
        r.ex.started = t0;
        r.rx.sent_at = t0;
        r.rx.first_byte_at = Some(t0 + Duration::from_secs(1));
        r.rx.last_read = t0 + Duration::from_secs(30);
    }
    assert_eq!(
        conn.deadline(&d, Duration::ZERO),
        Some((
            t0 + Duration::from_secs(35),
            Deadline::Fail(TimeoutPhase::ReadIdle)
        ))
    );
    // The whole-exchange deadline wins when it comes first.
    if let Phase::ReadingBody(ReadingBody { r, .. }) = &mut conn.phase {
        r.rx.last_read = last;
    }
    assert_eq!(
        conn.deadline(&d, Duration::ZERO),
        Some((
            t0 + Duration::from_secs(60),
            Deadline::Fail(TimeoutPhase::Total)
        ))
    );
    // A rate check comes due at the end of its window, before the idle deadline.
    let mut with_rate = d;
    with_rate.min_rate_bytes_per_sec = 1000;
    if let Phase::ReadingBody(ReadingBody { r, .. }) = &mut conn.phase {
        r.rx.last_read = t0 + Duration::from_secs(30);
        r.rx.rate_window_start = t0 + Duration::from_secs(20);
    }
    assert_eq!(
        conn.deadline(&with_rate, Duration::ZERO),
        Some((t0 + Duration::from_secs(27), Deadline::RateCheck))
    );
    // The loop fails it on the deadline: what was received goes with the failure.
    let (reason, retryable, _, kept) =
        failure(conn.fail(FailReason::Timeout(TimeoutPhase::ReadIdle)));
    assert!(matches!(
        reason,
        FailReason::Timeout(TimeoutPhase::ReadIdle)
    ));
    assert!(!retryable && kept);
    assert!(matches!(conn.phase, Phase::Gone));
}

#[test]
fn before_the_first_byte_the_deadline_is_first_byte_then_each_phase_its_own() {
    let mut rig = Rig::new();
    let (addr, _server) = serve(|mut s| {
        read_head(&mut s);
        thread::sleep(Duration::from_millis(200)); // never answers in time
    });
    let d = deadlines();
    let mut conn = rig.open(addr, "/", FetchLimits::default(), false);
    let t0 = Instant::now();
    if let Phase::Connecting(p) = &mut conn.phase {
        p.since = t0;
        p.ex.started = t0;
    }
    assert_eq!(
        conn.deadline(&d, Duration::ZERO),
        Some((
            t0 + Duration::from_secs(2),
            Deadline::Fail(TimeoutPhase::Connect)
        ))
    );
    rig.drive_until(&mut conn, |c| matches!(c.phase, Phase::ReadingHead(_)));
    if let Phase::ReadingHead(ReadingHead { r }) = &mut conn.phase {
        assert!(r.rx.first_byte_at.is_none());
        r.ex.started = t0;
        r.rx.sent_at = t0 + Duration::from_secs(1);
    }
    assert_eq!(
        conn.deadline(&d, Duration::ZERO),
        Some((
            t0 + Duration::from_secs(5),
            Deadline::Fail(TimeoutPhase::FirstByte)
        ))
    );
    conn.phase = Phase::Idle(Idle { since: t0 });
    assert_eq!(
        conn.deadline(&d, Duration::from_secs(90)),
        Some((t0 + Duration::from_secs(90), Deadline::IdleExpired))
    );
}

#[test]
fn an_absurd_timeout_saturates_instead_of_overflowing() {
    let t0 = Instant::now();
    let far = after(t0, Duration::MAX);
    assert!(far > t0 + Duration::from_secs(365 * 24 * 3600));
}

#[test]
fn the_rate_check_fails_a_drip_and_restarts_the_window_of_a_fast_enough_body() {
    let t0 = Instant::now();
    let reader = crate::http::ResponseReader::new(
        crate::http::Method::Get,
        crate::http::ResponseLimits::default(),
    );
    let mut rx = ResponseProgress::new(reader, t0);
    rx.rate_window_start = t0;
    // 256 B/s over a 10 s window needs 2,560 bytes: 2,560 pass, the window restarts.
    rx.rate_window_bytes = 2_560;
    let t10 = t0 + Duration::from_secs(10);
    assert!(rx.rate_window_passed(256, t10));
    assert_eq!(rx.rate_window_start, t10);
    assert_eq!(rx.rate_window_bytes, 0);
    // One byte a second for the next 10 s is a drip.
    rx.rate_window_bytes = 10;
    let t20 = t10 + Duration::from_secs(10);
    assert!(!rx.rate_window_passed(256, t20));
    assert_eq!(
        rx.rate_window_start, t10,
        "a failed window is not restarted"
    );
    // A zero minimum never fails (the check is off).
    assert!(rx.rate_window_passed(0, t20));
}

// --- The outcome as typed values: the response parsed once, by the fetcher ---

/// Reads the request head as raw bytes, writes `response` and lingers; returns the
/// request bytes.
fn answer(response: Vec<u8>) -> (SocketAddr, JoinHandle<Vec<u8>>) {
    serve(move |mut s| {
        let request = read_head(&mut s).into_bytes();
        s.write_all(&response).unwrap();
        linger(&mut s);
        request
    })
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(data).unwrap();
    gz.finish().unwrap()
}

fn keep_payload() -> FetchLimits {
    FetchLimits {
        keep_payload: true,
        ..FetchLimits::default()
    }
}

#[test]
fn the_outcome_holds_the_request_as_sent_and_the_head_as_received() {
    let response = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\nhello";
    let (addr, server) = answer(response.to_vec());
    let mut rig = Rig::new();
    let mut conn = rig.open(addr, "/typed", FetchLimits::default(), false);
    let (outcome, _) = finished(rig.drive(&mut conn));
    drop(conn);
    let sent = server.join().unwrap();
    // The bytes the server read are the outcome's request: serialized once, shared.
    assert_eq!(outcome.request, sent);
    let head = outcome.head.as_ref().unwrap();
    assert_eq!(head.raw, &response[..response.len() - 5]);
    assert_eq!(head.media_type().as_deref(), Some("text/html"));
    // Identity coding: the payload is the body, one buffer.
    let payload = outcome.payload.as_ref().unwrap();
    assert!(payload.is_shared_with(&outcome.body));
    assert_eq!(outcome.body, b"hello");
    assert!(outcome.body_complete && !outcome.body_truncated);
    assert_eq!(outcome.wire_bytes, response.len() as u64);
}

#[test]
fn a_chunked_payload_comes_without_its_framing() {
    let response =
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
    let (addr, server) = answer(response.to_vec());
    let mut rig = Rig::new();
    let mut conn = rig.open(addr, "/", keep_payload(), false);
    let (outcome, reusable) = finished(rig.drive(&mut conn));
    drop(conn);
    server.join().unwrap();
    assert!(reusable);
    assert_eq!(outcome.payload.as_ref().unwrap(), b"hello world");
    assert_eq!(outcome.body, b"hello world");
    let head = outcome.head.as_ref().unwrap();
    assert_eq!(head.field_name_ranges("transfer-encoding").count(), 1);
    assert_eq!(outcome.wire_bytes, response.len() as u64);
}

#[test]
fn a_content_coded_payload_is_kept_only_when_asked_and_decoded_into_the_body() {
    let text = b"<p>hello gzip</p>".repeat(50);
    let coded = gzip(&text);
    let mut response = format!(
        "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
        coded.len()
    )
    .into_bytes();
    response.extend_from_slice(&coded);
    for keep in [true, false] {
        let (addr, server) = answer(response.clone());
        let mut rig = Rig::new();
        let limits = FetchLimits {
            keep_payload: keep,
            ..FetchLimits::default()
        };
        let mut conn = rig.open(addr, "/", limits, false);
        let (outcome, _) = finished(rig.drive(&mut conn));
        drop(conn);
        server.join().unwrap();
        assert_eq!(outcome.body, text, "keep {keep}");
        assert_eq!(outcome.decoded_bytes, text.len() as u64);
        match &outcome.payload {
            Some(payload) => {
                assert!(keep);
                assert_eq!(*payload, coded);
                assert!(!payload.is_shared_with(&outcome.body));
            }
            None => assert!(!keep, "the coded payload is kept when asked"),
        }
        assert!(outcome.body_complete);
    }
}

#[test]
fn a_body_broken_off_keeps_its_head_and_what_came_and_is_not_complete() {
    let (addr, server) = serve(|mut s| {
        read_head(&mut s);
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhel")
            .unwrap();
        s.flush().unwrap();
        let _ = s.shutdown(Shutdown::Both);
    });
    let mut rig = Rig::new();
    let mut conn = rig.open(addr, "/", keep_payload(), false);
    let after = rig.drive(&mut conn);
    server.join().unwrap();
    let After::Failed {
        ex,
        reading,
        reason,
        ..
    } = after
    else {
        panic!("expected a failure");
    };
    assert_eq!(reason, FailReason::Protocol(HttpError::IncompleteBody));
    let outcome = build_outcome(
        ex,
        reading.map(|r| *r),
        Some(addr),
        Some(reason),
        Instant::now(),
    );
    assert_eq!(outcome.status(), Some(200));
    assert_eq!(outcome.payload.as_ref().unwrap(), b"hel");
    assert!(!outcome.body_complete && !outcome.body_truncated);
}

#[test]
fn a_truncated_body_is_marked_and_not_complete() {
    let (addr, server) = big_body_server();
    let mut rig = Rig::new();
    let mut conn = rig.open(addr, "/", capped(BodyLimitMode::Truncate), false);
    let (outcome, _) = finished(rig.drive(&mut conn));
    drop(conn);
    server.join().unwrap();
    assert!(outcome.body_truncated && !outcome.body_complete);
    assert!(outcome.payload.unwrap().is_shared_with(&outcome.body));
}

/// A TLS response that arrives in pieces (records of 1,000 bytes 5 ms apart, then one
/// write larger than rustls reads from the socket at once) is read whole: a short
/// socket read ends the read loop without a final `EAGAIN` read, and the next piece's
/// readiness resumes it; full reads go on reading.
#[test]
fn a_tls_response_arriving_in_pieces_is_read_whole() {
    let (ca_pem, server_config) = tls_materials();
    let body: Vec<u8> = (0..60_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let sent = body.clone();
    let (addr, server) = serve(move |s| {
        let tls = rustls::ServerConnection::new(server_config).unwrap();
        let mut tls = rustls::StreamOwned::new(tls, s);
        let request = read_head(&mut tls);
        let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", sent.len());
        tls.write_all(head.as_bytes()).unwrap();
        tls.flush().unwrap();
        let (pieces, rest) = sent.split_at(20_000);
        for piece in pieces.chunks(1_000) {
            thread::sleep(Duration::from_millis(5));
            tls.write_all(piece).unwrap();
            tls.flush().unwrap();
        }
        tls.write_all(rest).unwrap();
        tls.flush().unwrap();
        let mut buf = [0u8; 256];
        while matches!(tls.read(&mut buf), Ok(n) if n > 0) {}
        request
    });
    let mut rig = Rig::trusting(&ca_pem);
    let mut conn = rig.open(addr, "/pieces", FetchLimits::default(), true);
    let (outcome, reusable) = finished(rig.drive(&mut conn));
    assert_eq!(outcome.status(), Some(200));
    assert_eq!(outcome.body.len(), body.len());
    assert!(outcome.body == body, "the body differs from what was sent");
    assert!(reusable && outcome.timings.tls.is_some());
    drop(conn);
    let request = server.join().unwrap();
    assert!(request.starts_with("GET /pieces HTTP/1.1\r\n"), "{request}");
}
