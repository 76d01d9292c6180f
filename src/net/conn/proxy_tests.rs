//! The proxy phases (issue 29), in the style of `tests.rs`: fake proxies in a thread
//! on 127.0.0.1:0, one `Conn` driven through [`advance`] with its own poll. A route is
//! set the way the fetcher will set it: `PoolKey::via` on the job, `Conn::via` on the
//! connection opened for it.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream as StdStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::Interest;

use super::tests::{
    deadlines, exchange, failure, finished, linger, read_head, serve, tls_materials, Rig, PATIENCE,
    TOKEN,
};
use super::*;
use crate::fetch::{DnsFailure, FetchRequest, ProxyFailKind, ProxyFailure};
use crate::net::egress::url::ProxyUrl;
use crate::net::egress::via::Via;

/// `Proxy-Authorization` for `u:pw`.
const BASIC: &str = "Proxy-Authorization: Basic dTpwdw==\r\n";

/// A connection to the proxy at `proxy` for `GET {scheme}://{host}:{port}{path}`
/// through the route `proxy_url`, in `Connecting`, registered. `origin` is the
/// origin's address where trawl would know it.
fn open_via(
    rig: &mut Rig,
    proxy: SocketAddr,
    proxy_url: &str,
    origin: Option<SocketAddr>,
    target: &str,
) -> Conn {
    let now = Instant::now();
    let url = url::Url::parse(target).unwrap();
    let https = url.scheme() == "https";
    let key = PoolKey {
        https,
        host: url.host_str().unwrap().into(),
        port: url.port_or_known_default().unwrap(),
        via: 1,
    };
    let job = Job::new(
        FetchRequest::get(1, url, "trawl-test".into()),
        key.clone(),
        now,
    );
    let mut stream = TcpStream::connect(proxy).unwrap();
    rig.poll
        .registry()
        .register(&mut stream, TOKEN, Interest::WRITABLE)
        .unwrap();
    let mut conn = Conn::connecting(stream, proxy, origin, exchange(job, now, false), None, now);
    let route = ProxyUrl::parse(proxy_url, "test").unwrap();
    conn.via = Some(Arc::new(Via::new(1, &route)));
    conn
}

/// A proxy reason's kind, or a panic naming what came instead.
fn proxy_kind(reason: &FailReason) -> ProxyFailKind {
    match reason {
        FailReason::Proxy(ProxyFailure { kind, .. }) => *kind,
        other => panic!("expected a proxy failure, got {other:?}"),
    }
}

/// Reads exactly `n` bytes.
fn read_n(sock: &mut StdStream, n: usize) -> Vec<u8> {
    let mut buf = vec![0; n];
    sock.read_exact(&mut buf).unwrap();
    buf
}

#[test]
fn a_connect_tunnel_carries_tls_checked_against_the_origins_name() {
    let (ca_pem, server_config) = tls_materials();
    let (proxy, server) = serve(move |mut s| {
        let connect = read_head(&mut s);
        // Answer only after the client has settled in the tunneling phase.
        std::thread::sleep(Duration::from_millis(100));
        s.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .unwrap();
        let tls = rustls::ServerConnection::new(server_config).unwrap();
        let mut tls = rustls::StreamOwned::new(tls, s);
        let request = read_head(&mut tls);
        tls.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\ntunnel")
            .unwrap();
        tls.flush().unwrap();
        let mut rest = [0u8; 64];
        while matches!(tls.read(&mut rest), Ok(n) if n > 0) {}
        (connect, request)
    });
    let mut rig = Rig::trusting(&ca_pem);
    let mut conn = open_via(
        &mut rig,
        proxy,
        "http://u:pw@127.0.0.1:3128",
        None,
        "https://localhost:8443/t",
    );
    let after = rig.drive_until(&mut conn, |c| matches!(c.phase, Phase::Tunneling(_)));
    assert!(matches!(after, After::Wait) && matches!(conn.phase, Phase::Tunneling(_)));
    let (outcome, reusable) = finished(rig.drive(&mut conn));
    assert_eq!(
        (outcome.status(), &outcome.body[..]),
        (Some(200), &b"tunnel"[..])
    );
    assert!(reusable && outcome.timings.proxy.is_some() && outcome.timings.tls.is_some());
    assert!(!String::from_utf8_lossy(&outcome.request).contains("Proxy-Authorization"));
    drop(conn);
    let (connect, request) = server.join().unwrap();
    assert_eq!(
        connect,
        format!("CONNECT localhost:8443 HTTP/1.1\r\nHost: localhost:8443\r\n{BASIC}\r\n")
    );
    assert!(request.starts_with("GET /t HTTP/1.1\r\n"), "{request}");
    assert!(!request.contains("Proxy-Authorization"), "{request}");
}

/// Drives one request for `target` through the route `proxy_url` to a fake proxy that
/// runs `script` (then keeps its side open until the client closes), and hands what the
/// connection asked of the loop, with the connection, to `check`: what `check` and
/// `script` returned.
fn through<T: Send + 'static, R>(
    proxy_url: &str,
    origin: Option<SocketAddr>,
    target: &str,
    script: impl FnOnce(&mut StdStream) -> T + Send + 'static,
    check: impl FnOnce(After, &Conn) -> R,
) -> (R, T) {
    let (proxy, server) = serve(move |mut s| {
        let t = script(&mut s);
        linger(&mut s);
        t
    });
    let mut rig = Rig::new();
    let mut conn = open_via(&mut rig, proxy, proxy_url, origin, target);
    let after = rig.drive(&mut conn);
    let r = check(after, &conn);
    drop(conn);
    (r, server.join().unwrap())
}

/// A proxy that reads one request head and answers `reply` in one write.
fn answers(reply: &'static [u8]) -> impl FnOnce(&mut StdStream) + Send + 'static {
    move |s| {
        read_head(s);
        s.write_all(reply).unwrap();
    }
}

/// Runs one `CONNECT` against a proxy answering `reply`: the failure, retryable,
/// next address.
fn connect_failure(reply: &'static [u8]) -> (FailReason, bool, bool) {
    let url = "http://127.0.0.1:3128";
    through(url, None, "https://a.test/", answers(reply), |after, _| {
        let (reason, retryable, next_addr, _) = failure(after);
        (reason, retryable, next_addr)
    })
    .0
}

/// Runs a SOCKS5 handshake against a proxy whose exchange is `script`: the failure
/// (never retried, never sent to another address).
fn socks_failure(
    proxy_url: &str,
    script: impl FnOnce(&mut StdStream) + Send + 'static,
) -> FailReason {
    let origin = Some("10.0.0.1:80".parse().unwrap());
    through(proxy_url, origin, "http://c.test/", script, |after, _| {
        let (reason, retryable, next_addr, _) = failure(after);
        assert!(!retryable && !next_addr);
        reason
    })
    .0
}

/// Fetches `http://d.test/` through an HTTP proxy answering `reply`, then reads the
/// answer as the fetcher does ([`proxied_answer`]).
fn absolute_answer(reply: &'static [u8]) -> FetchOutcome {
    let url = "http://127.0.0.1:3128";
    through(
        url,
        None,
        "http://d.test/",
        answers(reply),
        |after, conn| {
            let (mut outcome, _) = finished(after);
            proxied_answer(&mut outcome, conn);
            outcome
        },
    )
    .0
}

#[test]
fn a_407_to_connect_is_proxy_auth_and_not_retried() {
    let (reason, retryable, next_addr) = connect_failure(
        b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\nContent-Length: 0\r\n\r\n",
    );
    assert_eq!(proxy_kind(&reason), ProxyFailKind::Auth);
    assert!(!retryable && !next_addr);
}

#[test]
fn bytes_after_a_2xx_connect_reply_are_proxy_protocol() {
    let (reason, _, _) = connect_failure(b"HTTP/1.1 200 OK\r\n\r\nHELLO");
    assert_eq!(proxy_kind(&reason), ProxyFailKind::Protocol);
    let (reason, _, _) = connect_failure(b"SSH-2.0-OpenSSH\r\n\r\n");
    assert_eq!(proxy_kind(&reason), ProxyFailKind::Protocol);
}

#[test]
fn a_connect_refusal_is_the_proxys_unless_it_names_the_destination() {
    let (reason, _, _) = connect_failure(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(proxy_kind(&reason), ProxyFailKind::Error);
    let (reason, _, _) = connect_failure(
        b"HTTP/1.1 502 Bad Gateway\r\nProxy-Status: squid; error=dns_error; rcode=\"NXDOMAIN\"\r\nContent-Length: 0\r\n\r\n",
    );
    assert_eq!(reason, FailReason::Dns(DnsFailure::NoSuchName));
    let (reason, _, _) = connect_failure(
        b"HTTP/1.1 503 Service Unavailable\r\nX-Squid-Error: ERR_CONNECT_FAIL 111\r\nContent-Length: 0\r\n\r\n",
    );
    assert_eq!(reason, FailReason::Refused);
}

#[test]
fn a_proxy_closing_mid_handshake_is_proxy_unreachable() {
    // CONNECT: the request is read, then the proxy hangs up.
    let hang_up = |s: &mut StdStream| {
        read_head(s);
        s.shutdown(std::net::Shutdown::Both).unwrap();
    };
    let url = "http://127.0.0.1:3128";
    let (reason, retryable, next_addr) = through(url, None, "https://a.test/", hang_up, |a, _| {
        let (reason, retryable, next_addr, _) = failure(a);
        (reason, retryable, next_addr)
    })
    .0;
    assert_eq!(proxy_kind(&reason), ProxyFailKind::Unreachable);
    assert!(!retryable && !next_addr);
    // SOCKS5: the greeting is read, then the proxy hangs up.
    let reason = socks_failure("socks5h://127.0.0.1:1080", |s| {
        read_n(s, 3);
        s.shutdown(std::net::Shutdown::Both).unwrap();
    });
    assert_eq!(proxy_kind(&reason), ProxyFailKind::Unreachable);
}

#[test]
fn a_refused_connect_to_the_proxy_is_proxy_unreachable_not_the_next_address() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = listener.local_addr().unwrap();
    drop(listener);
    let mut rig = Rig::new();
    let mut conn = open_via(
        &mut rig,
        dead,
        "http://127.0.0.1:3128",
        None,
        "http://a.test/",
    );
    let (reason, _, next_addr, _) = failure(rig.drive(&mut conn));
    assert_eq!(proxy_kind(&reason), ProxyFailKind::Unreachable);
    assert!(!next_addr);
}

/// A SOCKS5 proxy that accepts without authentication, checks the connect request,
/// succeeds, then plays the origin: returns the request bytes and the HTTP head.
fn socks_origin(expect_request: Vec<u8>) -> impl FnOnce(&mut StdStream) -> String + Send {
    move |s| {
        assert_eq!(read_n(s, 3), [5, 1, 0]);
        s.write_all(&[5, 0]).unwrap();
        assert_eq!(read_n(s, expect_request.len()), expect_request);
        s.write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0]).unwrap();
        let head = read_head(s);
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nsocks")
            .unwrap();
        head
    }
}

#[test]
fn socks5_sends_the_address_trawl_resolved_and_socks5h_the_name() {
    let origin = Some("10.1.2.3:8080".parse().unwrap());
    let v4 = socks_origin(vec![5, 1, 0, 1, 10, 1, 2, 3, 0x1f, 0x90]);
    let target = "http://a.test:8080/s";
    let (outcome, head) = through("socks5://127.0.0.1:1080", origin, target, v4, |a, _| {
        finished(a).0
    });
    let got = (outcome.status(), &outcome.body[..]);
    assert_eq!(got, (Some(200), &b"socks"[..]));
    assert!(outcome.timings.proxy.is_some());
    assert!(head.starts_with("GET /s HTTP/1.1\r\n"), "{head}");

    let mut name = vec![5, 1, 0, 3, 6];
    name.extend_from_slice(b"a.test");
    name.extend_from_slice(&8080u16.to_be_bytes());
    let target = "http://a.test:8080/h";
    let script = socks_origin(name);
    let (outcome, head) = through(
        "socks5h://127.0.0.1:1080",
        origin,
        target,
        script,
        |a, _| finished(a).0,
    );
    assert_eq!(outcome.status(), Some(200));
    assert!(head.starts_with("GET /h HTTP/1.1\r\n"), "{head}");
}

#[test]
fn socks5_with_a_password_authenticates_then_connects() {
    let script = |s: &mut StdStream| {
        assert_eq!(read_n(s, 4), [5, 2, 0, 2]);
        s.write_all(&[5, 2]).unwrap();
        assert_eq!(read_n(s, 6), [1, 1, b'u', 2, b'p', b'w']);
        s.write_all(&[1, 0]).unwrap();
        assert_eq!(read_n(s, 4), [5, 1, 0, 3]);
        let len = read_n(s, 1)[0];
        let name = read_n(s, usize::from(len) + 2);
        s.write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0]).unwrap();
        read_head(s);
        s.write_all(b"HTTP/1.1 204 No Content\r\n\r\n").unwrap();
        name
    };
    let url = "socks5h://u:pw@127.0.0.1:1080";
    let (status, name) = through(url, None, "http://b.test/", script, |after, _| {
        finished(after).0.status()
    });
    assert_eq!(status, Some(204));
    assert_eq!(name, b"b.test\x00\x50");
}

#[test]
fn each_socks5_reply_code_is_the_proxys_or_the_origins_failure() {
    for rep in 1u8..=9 {
        let reason = socks_failure("socks5://127.0.0.1:1080", move |s| {
            read_n(s, 3);
            s.write_all(&[5, 0]).unwrap();
            read_n(s, 10);
            s.write_all(&[5, rep, 0, 1, 0, 0, 0, 0, 0, 0]).unwrap();
        });
        match rep {
            2 | 7 | 8 => assert_eq!(proxy_kind(&reason), ProxyFailKind::Error, "{rep}"),
            1 | 3 | 4 => assert!(
                matches!(reason, FailReason::Connect(_)),
                "{rep}: {reason:?}"
            ),
            5 => assert_eq!(reason, FailReason::Refused),
            6 => assert_eq!(reason, FailReason::Timeout(TimeoutPhase::Connect)),
            _ => assert_eq!(proxy_kind(&reason), ProxyFailKind::Protocol, "{rep}"),
        }
    }
}

#[test]
fn a_socks5_refusal_of_our_password_is_proxy_auth() {
    // No acceptable method after we offered a password.
    let reason = socks_failure("socks5://u:pw@127.0.0.1:1080", |s| {
        read_n(s, 4);
        s.write_all(&[5, 0xff]).unwrap();
    });
    assert_eq!(proxy_kind(&reason), ProxyFailKind::Auth);
    // RFC 1929 status 1.
    let reason = socks_failure("socks5://u:pw@127.0.0.1:1080", |s| {
        read_n(s, 4);
        s.write_all(&[5, 2]).unwrap();
        read_n(s, 6);
        s.write_all(&[1, 1]).unwrap();
    });
    assert_eq!(proxy_kind(&reason), ProxyFailKind::Auth);
    // Bytes after the connect reply: the server spoke before the request.
    let reason = socks_failure("socks5://127.0.0.1:1080", |s| {
        read_n(s, 3);
        s.write_all(&[5, 0]).unwrap();
        read_n(s, 10);
        s.write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0, b'H']).unwrap();
    });
    assert_eq!(proxy_kind(&reason), ProxyFailKind::Protocol);
}

#[test]
fn plain_http_through_an_http_proxy_goes_in_absolute_form_with_the_credentials_on_the_wire_only() {
    let script = |s: &mut StdStream| {
        let head = read_head(s);
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            .unwrap();
        head
    };
    let url = "http://u:pw@127.0.0.1:3128";
    let target = "http://a.test:8080/x?y=1";
    let ((outcome, reusable, absolute), head) = through(url, None, target, script, |a, conn| {
        let (outcome, reusable) = finished(a);
        (outcome, reusable, conn.absolute)
    });
    assert_eq!(
        (outcome.status(), reusable, absolute),
        (Some(200), true, true)
    );
    let wire = String::from_utf8(outcome.request.to_vec()).unwrap();
    assert!(!wire.contains("Proxy-Authorization"), "{wire}");
    let (line, rest) = wire.split_once("\r\n").unwrap();
    let (method, target) = line.split_once(' ').unwrap();
    let expected = format!("{method} http://a.test:8080{target}\r\n{BASIC}{rest}");
    assert!(expected.starts_with("GET http://a.test:8080/x?y=1 HTTP/1.1\r\n"));
    assert_eq!(head, expected);
}

#[test]
fn a_proxys_own_error_answer_in_absolute_form_is_its_failure_and_an_unmarked_one_the_origins() {
    let o = absolute_answer(
        b"HTTP/1.1 503 Service Unavailable\r\nX-Squid-Error: ERR_DNS_FAIL 0\r\nContent-Length: 0\r\n\r\n",
    );
    assert_eq!(o.error, Some(FailReason::Dns(DnsFailure::NoSuchName)));
    let o = absolute_answer(
        b"HTTP/1.1 502 Bad Gateway\r\nProxy-Status: p; error=proxy_internal_error\r\nContent-Length: 0\r\n\r\n",
    );
    assert_eq!(
        o.error.as_ref().map(proxy_kind),
        Some(ProxyFailKind::Error),
        "{:?}",
        o.error
    );
    let o =
        absolute_answer(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(o.error.as_ref().map(proxy_kind), Some(ProxyFailKind::Auth));
    let o = absolute_answer(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n");
    assert_eq!((o.status(), o.error), (Some(503), None));
}

#[test]
fn a_proxy_handshake_is_the_proxys_until_it_has_our_request_then_the_origins() {
    let (proxy, _server) = serve(|mut s| linger(&mut s));
    let mut rig = Rig::new();
    let mut conn = open_via(
        &mut rig,
        proxy,
        "http://127.0.0.1:3128",
        None,
        "https://a.test/",
    );
    let d = deadlines();
    let t0 = Instant::now();
    let Phase::Connecting(Connecting { ex, .. }) = conn.phase.take() else {
        panic!("a new connection is connecting");
    };
    let mut client = ConnectClient::new("a.test", 443, None).unwrap();
    conn.phase = Phase::Tunneling(Tunneling {
        ex,
        since: t0,
        client: ConnectClient::new("a.test", 443, None).unwrap(),
    });
    assert_eq!(conn.interest(), Interest::WRITABLE);
    assert_eq!(
        conn.deadline(&d, PATIENCE),
        Some((t0 + d.proxy_timeout, Deadline::Fail(TimeoutPhase::Proxy)))
    );
    client.wrote(client.pending().len());
    let Phase::Tunneling(Tunneling { ex, .. }) = conn.phase.take() else {
        panic!("tunneling");
    };
    conn.phase = Phase::Tunneling(Tunneling {
        ex,
        since: t0,
        client,
    });
    assert_eq!(conn.interest(), Interest::READABLE);
    assert_eq!(
        conn.deadline(&d, PATIENCE),
        Some((t0 + d.proxy_timeout, Deadline::Fail(TimeoutPhase::Connect)))
    );
    // SOCKS5: the method reply is the proxy's own answer; only the connect reply waits
    // for the origin.
    let Phase::Tunneling(Tunneling { ex, .. }) = conn.phase.take() else {
        panic!("tunneling");
    };
    let mut socks = crate::net::egress::socks5::Socks5Client::new(
        crate::net::egress::socks5::Target::Name("a.test", 443),
        None,
    )
    .unwrap();
    socks.wrote(socks.pending().len());
    conn.phase = Phase::Socksing(Socksing {
        ex,
        since: t0,
        client: Box::new(socks),
    });
    assert_eq!(conn.interest(), Interest::READABLE);
    assert_eq!(
        conn.deadline(&d, PATIENCE),
        Some((t0 + d.proxy_timeout, Deadline::Fail(TimeoutPhase::Proxy)))
    );
    // The total deadline still wins when it is nearer.
    let tight = Deadlines {
        total_timeout: Duration::from_secs(1),
        ..d
    };
    assert!(matches!(
        conn.deadline(&tight, PATIENCE),
        Some((_, Deadline::Fail(TimeoutPhase::Total)))
    ));
}

#[test]
fn the_proxy_phases_do_not_make_a_phase_larger() {
    // A phase moves on every transition: the direct path must not pay for the new
    // variants (the largest phase is still a reading one).
    use std::mem::size_of;
    assert!(size_of::<Tunneling>() <= size_of::<ReadingBody>());
    assert!(size_of::<Socksing>() <= size_of::<ReadingBody>());
}
