//! The loop with routes through proxies (issue 29): which route a request takes, that a
//! resolving proxy is not preceded by a lookup, keep-alive through the proxy, and the
//! `--per-proxy-connections` cap. Fake proxies run in threads on 127.0.0.1:0; the
//! conn-level handshakes are tested in `net/conn/proxy_tests.rs`.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream as StdStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

use super::*;
use crate::net::egress::book::Egress;
use crate::net::egress::rules::{RouteSpec, Routes};

/// What a fake proxy saw.
#[derive(Default)]
struct Seen {
    /// The request lines (absolute form) or SOCKS targets, in order.
    lines: Mutex<Vec<String>>,
    connections: AtomicUsize,
    open: AtomicUsize,
    peak_open: AtomicUsize,
}

/// Reads one request head; `None` at end of stream.
fn read_head(s: &mut StdStream) -> Option<String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match s.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return None,
        }
    }
    Some(String::from_utf8_lossy(&head).into_owned())
}

/// Answers each request on `s` with a small 200 until the client closes.
fn serve_http(s: &mut StdStream, seen: &Seen) {
    while let Some(head) = read_head(s) {
        let line = head.lines().next().unwrap_or_default().to_owned();
        seen.lines.lock().unwrap().push(line);
        // Hold the connection a moment, so concurrent requests overlap.
        thread::sleep(Duration::from_millis(30));
        if s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            .is_err()
        {
            return;
        }
    }
}

/// A fake proxy: `handshake` runs first on each connection (SOCKS), then HTTP.
fn fake_proxy(handshake: fn(&mut StdStream, &Seen) -> bool) -> (SocketAddr, Arc<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Seen::default());
    let shared = Arc::clone(&seen);
    thread::spawn(move || {
        for stream in listener.incoming().take(64) {
            let Ok(mut s) = stream else { return };
            let seen = Arc::clone(&shared);
            thread::spawn(move || {
                seen.connections.fetch_add(1, Ordering::SeqCst);
                let now = seen.open.fetch_add(1, Ordering::SeqCst) + 1;
                seen.peak_open.fetch_max(now, Ordering::SeqCst);
                let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
                if handshake(&mut s, &seen) {
                    serve_http(&mut s, &seen);
                }
                seen.open.fetch_sub(1, Ordering::SeqCst);
            });
        }
    });
    (addr, seen)
}

fn no_handshake(_: &mut StdStream, _: &Seen) -> bool {
    true
}

/// RFC 1928 without authentication; records the target as `name:port` or `ip:port`.
fn socks5_handshake(s: &mut StdStream, seen: &Seen) -> bool {
    let mut greeting = [0u8; 3];
    if s.read_exact(&mut greeting).is_err() || s.write_all(&[5, 0]).is_err() {
        return false;
    }
    let mut req = [0u8; 4];
    if s.read_exact(&mut req).is_err() {
        return false;
    }
    let target = match req[3] {
        1 => {
            let mut a = [0u8; 6];
            if s.read_exact(&mut a).is_err() {
                return false;
            }
            let ip = std::net::Ipv4Addr::new(a[0], a[1], a[2], a[3]);
            format!("{ip}:{}", u16::from_be_bytes([a[4], a[5]]))
        }
        3 => {
            let mut len = [0u8; 1];
            if s.read_exact(&mut len).is_err() {
                return false;
            }
            let mut name = vec![0u8; usize::from(len[0]) + 2];
            if s.read_exact(&mut name).is_err() {
                return false;
            }
            let port = u16::from_be_bytes([name[name.len() - 2], name[name.len() - 1]]);
            name.truncate(name.len() - 2);
            format!("{}:{port}", String::from_utf8_lossy(&name))
        }
        _ => return false,
    };
    seen.lines.lock().unwrap().push(format!("socks {target}"));
    s.write_all(&[5, 0, 0, 1, 127, 0, 0, 1, 0, 80]).is_ok()
}

fn fetcher_via(proxy: &str, per_proxy: u32) -> Fetcher {
    let routes = Routes::build(RouteSpec {
        proxy: Some(proxy),
        ..RouteSpec::default()
    })
    .unwrap();
    let egress = Egress::new(routes, per_proxy).unwrap();
    // `.test` names resolve nowhere: a success proves no lookup was needed (and the
    // resolver's counters say none was made).
    let cfg = FetcherConfig {
        egress: Some(Arc::new(egress)),
        ..FetcherConfig::default()
    };
    Fetcher::new(cfg).unwrap()
}

fn fetch_all(fetcher: &mut Fetcher, urls: &[&str]) -> Vec<FetchOutcome> {
    for (i, u) in urls.iter().enumerate() {
        let url = url::Url::parse(u).unwrap();
        fetcher.submit(FetchRequest::get(i as u64, url, "trawl-test".into()));
    }
    let mut out = Vec::new();
    fetcher
        .run_until_idle(Duration::from_secs(20), |o| out.push(o))
        .unwrap();
    out.sort_by_key(|o| o.id);
    out
}

#[test]
fn an_http_proxy_gets_absolute_form_without_a_lookup_and_keeps_the_connection_alive() {
    let (addr, seen) = fake_proxy(no_handshake);
    let mut f = fetcher_via(&format!("http://{addr}"), 256);
    let out = fetch_all(&mut f, &["http://a.test/one", "http://a.test:8080/two"]);
    assert_eq!(out.len(), 2);
    for o in &out {
        assert_eq!(o.status(), Some(200), "{:?}", o.error);
        assert_eq!(o.peer, None, "trawl did not connect to the origin");
    }
    let out = fetch_all(&mut f, &["http://a.test/three"]);
    assert_eq!(out[0].status(), Some(200), "{:?}", out[0].error);
    let mut lines = seen.lines.lock().unwrap().clone();
    lines.sort();
    assert_eq!(
        lines,
        [
            "GET http://a.test/one HTTP/1.1",
            "GET http://a.test/three HTTP/1.1",
            "GET http://a.test:8080/two HTTP/1.1"
        ]
    );
    assert_eq!(f.dns_stats().lookups, 0, "the proxy resolves the names");
    assert_eq!(
        seen.connections.load(Ordering::SeqCst),
        2,
        "one connection per origin, the second request to a.test:80 reused it"
    );
}

#[test]
fn socks5h_sends_the_name_and_socks5_the_address_trawl_was_given() {
    let (addr, seen) = fake_proxy(socks5_handshake);
    let mut f = fetcher_via(&format!("socks5h://{addr}"), 256);
    let out = fetch_all(&mut f, &["http://b.test/"]);
    assert_eq!(out[0].status(), Some(200), "{:?}", out[0].error);
    assert_eq!(out[0].peer, None);

    let mut f = fetcher_via(&format!("socks5://{addr}"), 256);
    let origin = SocketAddr::from(([127, 0, 0, 7], 80));
    let url = url::Url::parse("http://c.test/").unwrap();
    let mut req = FetchRequest::get(1, url, "trawl-test".into());
    req.addr = Some(origin);
    f.submit(req);
    let mut out = Vec::new();
    f.run_until_idle(Duration::from_secs(20), |o| out.push(o))
        .unwrap();
    assert_eq!(out[0].status(), Some(200), "{:?}", out[0].error);
    assert_eq!(out[0].peer, Some(origin), "socks5: trawl knows the origin");
    let lines = seen.lines.lock().unwrap().clone();
    assert_eq!(
        lines,
        [
            "socks b.test:80",
            "GET / HTTP/1.1",
            "socks 127.0.0.7:80",
            "GET / HTTP/1.1"
        ]
    );
}

#[test]
fn the_per_proxy_cap_holds_and_every_request_is_served() {
    let (addr, seen) = fake_proxy(no_handshake);
    let mut f = fetcher_via(&format!("http://{addr}"), 2);
    let egress = f.cfg.egress.clone().unwrap();
    let via = egress.pick(false, "h0.test");
    for i in 0..8u64 {
        let url = url::Url::parse(&format!("http://h{i}.test/")).unwrap();
        f.submit(FetchRequest::get(i, url, "trawl-test".into()));
    }
    // The server sees a closed connection a moment after the client closed it, so the
    // cap is read where it is kept: the process-wide count, after every turn.
    let (mut out, mut done) = (Vec::new(), Vec::new());
    let end = Instant::now() + Duration::from_secs(20);
    while f.in_flight() > 0 && Instant::now() < end {
        f.poll(&mut out, Some(Duration::from_millis(50))).unwrap();
        assert!(egress.open(via) <= 2, "{} open", egress.open(via));
        assert!(f.open_connections() <= 2);
        done.append(&mut out);
    }
    assert_eq!(done.len(), 8);
    for o in &done {
        assert_eq!(o.status(), Some(200), "{}: {:?}", o.url, o.error);
    }
    assert_eq!(seen.lines.lock().unwrap().len(), 8);
}

#[test]
fn a_direct_request_next_to_proxied_ones_never_touches_the_proxy() {
    let (addr, seen) = fake_proxy(no_handshake);
    let origin = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = origin.local_addr().unwrap().port();
    thread::spawn(move || {
        if let Ok((mut s, _)) = origin.accept() {
            serve_http(&mut s, &Seen::default());
        }
    });
    let mut f = fetcher_via(&format!("http://{addr}"), 256);
    // curl's NO_PROXY semantics come with `--proxy`: here through the rules instead.
    let routes = Routes::build(RouteSpec {
        proxy: Some(&format!("http://{addr}")),
        noproxy: Some("127.0.0.1"),
        ..RouteSpec::default()
    })
    .unwrap();
    f.cfg.egress = Some(Arc::new(Egress::new(routes, 256).unwrap()));
    let direct = format!("http://127.0.0.1:{port}/d");
    let out = fetch_all(&mut f, &[&direct, "http://p.test/p"]);
    assert_eq!(out[0].status(), Some(200), "{:?}", out[0].error);
    assert_eq!(out[0].peer.map(|p| p.port()), Some(port));
    assert_eq!(out[1].status(), Some(200), "{:?}", out[1].error);
    let lines = seen.lines.lock().unwrap().clone();
    assert_eq!(lines, ["GET http://p.test/p HTTP/1.1"]);
}

#[test]
fn through_a_resolving_proxy_private_literals_and_localhost_are_still_refused() {
    let (addr, seen) = fake_proxy(no_handshake);
    let mut f = fetcher_via(&format!("http://{addr}"), 256);
    f.cfg.allow_private_addresses = false;
    let out = fetch_all(
        &mut f,
        &[
            "http://10.1.2.3/",
            "http://[::1]/",
            "http://localhost/",
            "http://a.localhost./",
            "http://public.test/",
        ],
    );
    for o in &out[..4] {
        assert!(
            matches!(o.error, Some(FailReason::BlockedAddress)),
            "{}: {:?}",
            o.url,
            o.error
        );
    }
    assert_eq!(out[4].status(), Some(200), "{:?}", out[4].error);
    let lines = seen.lines.lock().unwrap().clone();
    assert_eq!(lines, ["GET http://public.test/ HTTP/1.1"]);
}
