//! Keep-alive pools, idle-close detection, retry on a stale reused connection, framing
//! end to end, DNS through the resolver pool, IPv6.

mod support;

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use trawl::fetch::{FetchLimits, FetchOutcome, FetchRequest};
use trawl::http::Method;
use trawl::net::{Fetcher, FetcherConfig};

use support::{fast_config, fetch_one, read_head, send, ScriptServer};

const BOUND: Duration = Duration::from_secs(5);

/// Serves keep-alive responses until the client closes: body = request target.
fn keep_alive_server(mut s: TcpStream, _: usize) {
    while let Some(head) = read_head(&mut s) {
        let text = String::from_utf8_lossy(&head);
        let target = text.split(' ').nth(1).unwrap_or("/").to_owned();
        let resp = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{target}",
            target.len()
        );
        if !send(&mut s, resp.as_bytes()) {
            return;
        }
    }
}

/// Runs `urls` through `fetcher` keeping `concurrency` in flight.
fn fetch_all(
    fetcher: &mut Fetcher,
    urls: &[url::Url],
    concurrency: usize,
    bound: Duration,
) -> Vec<FetchOutcome> {
    let start = Instant::now();
    let mut next = 0;
    let mut done = Vec::new();
    let mut out = Vec::new();
    while done.len() < urls.len() {
        assert!(start.elapsed() < bound, "not finished within {bound:?}");
        while fetcher.in_flight() < concurrency && next < urls.len() {
            fetcher.submit(FetchRequest::get(
                next as u64,
                urls[next].clone(),
                "trawl-test/1".into(),
            ));
            next += 1;
        }
        fetcher
            .poll(&mut out, Some(Duration::from_millis(100)))
            .expect("poll");
        done.append(&mut out);
    }
    done
}

#[test]
fn thousand_requests_at_concurrency_four_reuse_a_handful_of_connections() {
    let server = ScriptServer::start(keep_alive_server);
    let mut fetcher = Fetcher::new(fast_config()).expect("fetcher");
    let urls: Vec<url::Url> = (0..1000).map(|i| server.url(&format!("/p/{i}"))).collect();
    let outcomes = fetch_all(&mut fetcher, &urls, 4, Duration::from_secs(30));
    for o in &outcomes {
        assert!(o.is_ok(), "{o:?}");
        assert_eq!(o.body, format!("/p/{}", o.id).as_bytes());
    }
    let stats = fetcher.stats();
    eprintln!("accepts {} stats {stats:?}", server.accepts());
    assert!(
        server.accepts() <= 8,
        "opened {} connections",
        server.accepts()
    );
    assert!(stats.reused_exchanges >= 990, "{stats:?}");
    assert_eq!(fetcher.open_connections(), fetcher.idle_connections());
}

#[test]
fn idle_connection_closed_by_server_is_noticed() {
    let server = ScriptServer::start(|mut s, _| {
        if read_head(&mut s).is_some() {
            send(&mut s, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
            std::thread::sleep(Duration::from_millis(100));
        }
        // Dropping the stream sends FIN while the client holds it idle.
    });
    let mut fetcher = Fetcher::new(fast_config()).expect("fetcher");
    let o = fetch_one(
        &mut fetcher,
        server.url("/a"),
        FetchLimits::default(),
        BOUND,
    );
    assert!(o.is_ok(), "{o:?}");
    assert_eq!(fetcher.idle_connections(), 1);
    let start = Instant::now();
    let mut out = Vec::new();
    while fetcher.idle_connections() > 0 && start.elapsed() < BOUND {
        fetcher
            .poll(&mut out, Some(Duration::from_millis(50)))
            .expect("poll");
    }
    assert_eq!(fetcher.idle_connections(), 0);
    assert_eq!(fetcher.open_connections(), 0);
    assert_eq!(fetcher.stats().idle_closed_by_peer, 1);
}

#[test]
fn reused_connection_failing_before_response_is_retried_once() {
    // Each connection answers its first request, then reads the second and closes
    // without a byte: the client must retry that request on a fresh connection.
    let server = ScriptServer::start(|mut s, _| {
        if read_head(&mut s).is_some() {
            send(&mut s, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        }
        let _ = read_head(&mut s);
    });
    let mut fetcher = Fetcher::new(fast_config()).expect("fetcher");
    let first = fetch_one(
        &mut fetcher,
        server.url("/1"),
        FetchLimits::default(),
        BOUND,
    );
    assert!(first.is_ok(), "{first:?}");
    let second = fetch_one(
        &mut fetcher,
        server.url("/2"),
        FetchLimits::default(),
        BOUND,
    );
    assert!(second.is_ok(), "{second:?}");
    assert_eq!(second.retries, 1);
    assert!(!second.reused_connection);
    assert_eq!(server.accepts(), 2);
    assert_eq!(fetcher.stats().retries, 1);
}

#[test]
fn framing_chunked_gzip_head_304_and_interim() {
    let gz = {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(b"hello gzip world").expect("gz");
        e.finish().expect("gz")
    };
    let server = ScriptServer::start(move |mut s, _| {
        while let Some(head) = read_head(&mut s) {
            let text = String::from_utf8_lossy(&head).into_owned();
            let target = text.split(' ').nth(1).unwrap_or("/").to_owned();
            let ok = match target.as_str() {
                "/chunked" => send(
                    &mut s,
                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: x\r\n\r\n",
                ),
                "/gzip" => {
                    let h = format!(
                        "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
                        gz.len()
                    );
                    send(&mut s, h.as_bytes()) && send(&mut s, &gz)
                }
                "/head" => send(&mut s, b"HTTP/1.1 200 OK\r\nContent-Length: 12345\r\n\r\n"),
                "/304" => send(&mut s, b"HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n"),
                "/interim" => send(
                    &mut s,
                    b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nyes",
                ),
                _ => {
                    send(&mut s, b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil close");
                    return;
                }
            };
            if !ok {
                return;
            }
        }
    });
    let mut fetcher = Fetcher::new(fast_config()).expect("fetcher");
    let get =
        |f: &mut Fetcher, path: &str| fetch_one(f, server.url(path), FetchLimits::default(), BOUND);
    let o = get(&mut fetcher, "/chunked");
    assert_eq!(o.body, b"hello world", "{o:?}");
    let o = get(&mut fetcher, "/gzip");
    assert_eq!(o.body, b"hello gzip world", "{o:?}");
    assert!(o.reused_connection);
    let mut req = FetchRequest::get(9, server.url("/head"), "t".into());
    req.head.method = Method::Head;
    fetcher.submit(req);
    let mut got = Vec::new();
    fetcher
        .run_until_idle(BOUND, |o| got.push(o))
        .expect("poll");
    assert!(got[0].is_ok() && got[0].body.is_empty(), "{:?}", got[0]);
    let o = get(&mut fetcher, "/304");
    assert_eq!(o.status(), Some(304));
    assert!(o.body.is_empty());
    let o = get(&mut fetcher, "/interim");
    assert_eq!(
        (o.status(), o.body.as_slice()),
        (Some(200), &b"yes"[..]),
        "{o:?}"
    );
    let o = get(&mut fetcher, "/close");
    assert_eq!(o.body, b"until close", "{o:?}");
    assert_eq!(server.accepts(), 1, "one keep-alive connection served all");
    assert_eq!(
        fetcher.open_connections(),
        0,
        "close-delimited response closed it"
    );
}

/// The outcome carries the exchange as typed values: the request bytes as sent, the
/// head with its bytes as received, and the payload (an identity body: the body's own
/// buffer, not a copy).
#[test]
fn request_head_and_payload_come_back_typed() {
    let server = ScriptServer::start(keep_alive_server);
    let mut fetcher = Fetcher::new(fast_config()).expect("fetcher");
    let o = fetch_one(
        &mut fetcher,
        server.url("/raw"),
        FetchLimits::default(),
        BOUND,
    );
    assert!(o.request.starts_with(b"GET /raw HTTP/1.1\r\n"), "{o:?}");
    assert!(o.request.ends_with(b"\r\n\r\n"), "{o:?}");
    let head = o.head.as_ref().expect("head");
    assert_eq!(head.raw, b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n");
    assert_eq!(o.body, b"/raw");
    let payload = o.payload.as_ref().expect("identity payload");
    assert!(payload.is_shared_with(&o.body));
    assert!(o.body_complete && !o.body_truncated);
    assert_eq!(o.wire_bytes, (head.raw.len() + payload.len()) as u64);
}

#[test]
fn names_resolve_through_pool_overrides_and_submitter() {
    let server = ScriptServer::start(keep_alive_server);
    let port = server.addr.port();
    let mut cfg = fast_config();
    cfg.dns
        .overrides
        .push(trawl::net::parse_resolve(&format!("synth.test:{port}:127.0.0.1")).expect("resolve"));
    let mut fetcher = Fetcher::new(cfg).expect("fetcher");
    let submitter = fetcher.submitter();
    let u1 = url::Url::parse(&format!("http://localhost:{port}/via-resolver")).expect("url");
    let u2 = url::Url::parse(&format!("http://synth.test:{port}/via-override")).expect("url");
    let handle = std::thread::spawn(move || {
        submitter
            .submit(FetchRequest::get(1, u1, "t".into()))
            .expect("submit");
        submitter
            .submit(FetchRequest::get(2, u2, "t".into()))
            .expect("submit");
    });
    handle.join().expect("thread");
    let mut got = Vec::new();
    let start = Instant::now();
    let mut out = Vec::new();
    while got.len() < 2 && start.elapsed() < BOUND {
        fetcher
            .poll(&mut out, Some(Duration::from_millis(100)))
            .expect("poll");
        got.append(&mut out);
    }
    got.sort_by_key(|o| o.id);
    assert_eq!(got.len(), 2);
    assert!(got.iter().all(FetchOutcome::is_ok), "{got:?}");
    assert_eq!(got[0].body, b"/via-resolver");
    assert_eq!(got[1].body, b"/via-override");
}

#[test]
fn ipv6_loopback() {
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        eprintln!("skipped: ::1 is not available on this machine");
        return;
    }
    let server = ScriptServer::start_on("[::1]:0", keep_alive_server);
    let mut fetcher = Fetcher::new(FetcherConfig::default()).expect("fetcher");
    let url = url::Url::parse(&format!("http://[::1]:{}/six", server.addr.port())).expect("url");
    let o = fetch_one(&mut fetcher, url, FetchLimits::default(), BOUND);
    assert!(o.is_ok(), "{o:?}");
    assert!(o.peer.is_some_and(|p| p.is_ipv6()));
    assert_eq!(o.body, b"/six");
}
