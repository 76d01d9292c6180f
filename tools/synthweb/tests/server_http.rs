//! The server over real sockets: framing, codings, conditional requests, redirects,
//! Retry-After, keep-alive and pipelining, virtual hosting, the request log.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failure is a test failure"
)]

mod common;

use std::io::{Read, Write};
use std::time::Duration;

use common::{connect, exchange, get, parse, read_all, site_for, Server};
use synthweb::site::Framing;
use synthweb::Scheme;

const T: Duration = Duration::from_secs(10);

#[test]
fn http_variety_over_the_wire() {
    let mut srv = Server::start(&["--hosts", "30"]);
    let port = srv.http_port;
    let site = site_for(30, "default", port, None);
    let host = site.host_name(0);
    let mut requests = 0;
    let mut fetch = |target: &str, extra: &str| {
        requests += 1;
        let raw = exchange(port, &get(&host, port, target, extra), T, 50 << 20);
        assert!(raw.error.is_none() && !raw.timed_out, "{target}: {raw:?}");
        parse(&raw.bytes)
    };

    // Every framing, body equal to the generator's.
    let mut framings = std::collections::HashMap::new();
    for k in 1..site.page_count(0) {
        let t = format!("/p/{k}");
        let v = site.page(Scheme::Http, 0, &t);
        if v.response.status == 200 {
            framings
                .entry(v.response.framing)
                .or_insert((t, v.response.body));
        }
    }
    assert_eq!(framings.len(), 3, "all three framings occur on host 0");
    for (framing, (t, body)) in &framings {
        let p = fetch(t, "");
        assert_eq!(p.status, 200);
        assert_eq!(&p.body, body, "{framing:?} {t}");
        match framing {
            Framing::ContentLength => assert_eq!(
                p.header("Content-Length"),
                Some(body.len().to_string().as_str())
            ),
            Framing::Chunked => assert_eq!(p.header("Transfer-Encoding"), Some("chunked")),
            Framing::Close => {
                assert!(
                    p.header("Content-Length").is_none() && p.header("Transfer-Encoding").is_none()
                );
                assert_eq!(p.header("Connection"), Some("close"));
            }
        }
    }

    // Content codings decode to the identity body.
    let identity = fetch("/", "").body;
    for enc in ["gzip", "deflate", "br"] {
        let p = fetch("/", &format!("Accept-Encoding: {enc}\r\n"));
        assert_eq!(p.header("Content-Encoding"), Some(enc));
        let mut out = Vec::new();
        match enc {
            "gzip" => flate2::read::GzDecoder::new(&p.body[..])
                .read_to_end(&mut out)
                .unwrap(),
            "deflate" => flate2::read::ZlibDecoder::new(&p.body[..])
                .read_to_end(&mut out)
                .unwrap(),
            _ => brotli::Decompressor::new(&p.body[..], 4096)
                .read_to_end(&mut out)
                .unwrap(),
        };
        assert_eq!(out, identity, "{enc}");
        let tag = p.header("ETag").unwrap().to_owned();
        assert!(tag.ends_with(&format!("-{enc}\"")), "{tag}");
        let again = fetch(
            "/",
            &format!("Accept-Encoding: {enc}\r\nIf-None-Match: {tag}\r\n"),
        );
        assert_eq!(again.status, 304, "{enc}");
        assert!(p.body.len() < identity.len());
    }
    assert!(fetch("/", "Accept-Encoding: gzip;q=0, identity\r\n")
        .header("Content-Encoding")
        .is_none());

    // Conditional requests.
    let p = fetch("/p/2", "");
    let etag = p.header("ETag").unwrap().to_owned();
    let lm = p.header("Last-Modified").unwrap().to_owned();
    let nm = fetch("/p/2", &format!("If-None-Match: {etag}\r\n"));
    assert_eq!(nm.status, 304);
    assert!(nm.body.is_empty() && nm.rest.is_empty());
    assert_eq!(
        fetch("/p/2", &format!("If-Modified-Since: {lm}\r\n")).status,
        304
    );
    assert_eq!(
        fetch(
            "/p/2",
            "If-Modified-Since: Sat, 01 Jan 2000 00:00:00 GMT\r\n"
        )
        .status,
        200
    );
    assert_eq!(fetch("/p/2", "If-None-Match: \"other\"\r\n").status, 200);

    // Redirects, errors, Retry-After.
    let r = fetch("/r/301/3", "");
    assert_eq!(r.status, 301);
    assert_eq!(
        r.header("Location"),
        Some(format!("http://{host}:{port}/p/3").as_str())
    );
    assert_eq!(fetch("/r/307/3", "").header("Location"), Some("/p/3"));
    assert_eq!(fetch("/r/loop/b", "").header("Location"), Some("/r/loop/a"));
    assert_eq!(
        fetch("/r/x/7", "").header("Location"),
        Some(format!("http://h000007.synth.test:{port}/").as_str())
    );
    assert_eq!(fetch("/e/503/0", "").header("Retry-After"), Some("3"));
    let tm = fetch("/e/429/0", "");
    assert_eq!((tm.status, tm.header("Retry-After")), (429, Some("5")));
    assert_eq!(fetch("/e/410/0", "").status, 410);
    assert_eq!(fetch("/e/500/0", "").status, 500);
    assert_eq!(fetch("/soft404/0", "").status, 200);
    assert_eq!(fetch(&"/x".repeat(5_000), "").status, 414);

    // Aliases of a target reach the same page.
    assert_eq!(fetch("/%7eu1/", "").body, fetch("/~u1/", "").body);

    // Virtual hosting: another host, an unknown host, no host.
    let other = exchange(port, &get(&site.host_name(5), port, "/", ""), T, 1 << 20);
    assert_eq!(
        parse(&other.bytes).body,
        site.page(Scheme::Http, 5, "/").response.body
    );
    let unknown = exchange(
        port,
        b"GET / HTTP/1.1\r\nHost: example.org\r\nConnection: close\r\n\r\n",
        T,
        1 << 20,
    );
    assert_eq!(parse(&unknown.bytes).status, 404);
    let nohost = exchange(
        port,
        b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n",
        T,
        1 << 20,
    );
    assert_eq!(parse(&nohost.bytes).status, 400);
    let post = exchange(
        port,
        format!(
            "POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc"
        )
        .as_bytes(),
        T,
        1 << 20,
    );
    assert_eq!(parse(&post.bytes).status, 405);
    let head = exchange(
        port,
        format!("HEAD /p/2 HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").as_bytes(),
        T,
        1 << 20,
    );
    let mut hh = [httparse::EMPTY_HEADER; 32];
    let mut hp = httparse::Response::new(&mut hh);
    let head_len = match hp.parse(&head.bytes).unwrap() {
        httparse::Status::Complete(n) => n,
        httparse::Status::Partial => panic!("partial HEAD response"),
    };
    assert_eq!(hp.code, Some(200));
    assert_eq!(head_len, head.bytes.len(), "HEAD has no body");
    requests += 5;

    // Keep-alive with three pipelined requests in one write.
    let mut s = connect(port);
    let pipe = format!(
        "GET /p/1 HTTP/1.1\r\nHost: {host}\r\n\r\nGET /robots.txt HTTP/1.1\r\nHost: {host}\r\n\r\nGET /p/1 HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    );
    s.write_all(pipe.as_bytes()).unwrap();
    let raw = read_all(&mut s, T, 10 << 20);
    let a = parse(&raw.bytes);
    let b = parse(&a.rest);
    let c = parse(&b.rest);
    assert_eq!((a.status, b.status, c.status), (200, 200, 200));
    assert_eq!(a.body, c.body);
    assert_eq!(b.header("Content-Type"), Some("text/plain; charset=utf-8"));
    assert!(c.rest.is_empty());
    requests += 3;

    // SIGTERM flushes the log: one line per request, with the judged headers.
    let done: serde_json::Value = serde_json::from_str(&srv.stop()).unwrap();
    assert_eq!(done["requests"].as_u64(), Some(requests));
    let log = std::fs::read_to_string(srv.path("log.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len() as u64, requests);
    let first = &lines[0];
    for f in [
        "t_us",
        "end_us",
        "conn",
        "local",
        "peer",
        "scheme",
        "host",
        "method",
        "target",
        "user_agent",
        "from",
        "accept",
        "accept_encoding",
        "if_none_match",
        "if_modified_since",
        "referer",
        "status",
        "body_bytes",
    ] {
        assert!(first.get(f).is_some(), "log field {f}");
    }
    assert!(lines
        .iter()
        .any(|l| l["status"] == 304 && l["if_none_match"] == etag.as_str()));
    assert!(lines
        .iter()
        .any(|l| l["host"] == "example.org" && l["status"] == 404));
    assert!(lines
        .iter()
        .all(|l| l["end_us"].as_u64() >= l["t_us"].as_u64()));
    let pipelined: Vec<_> = lines
        .iter()
        .filter(|l| l["target"] == "/robots.txt")
        .collect();
    assert_eq!(pipelined.len(), 1);
    let conn = &pipelined[0]["conn"];
    assert_eq!(
        lines.iter().filter(|l| &l["conn"] == conn).count(),
        3,
        "pipelined requests share a connection"
    );
}

#[test]
fn bind_range_spreads_hosts_and_max_requests_stops() {
    let mut srv = Server::start(&[
        "--hosts",
        "20",
        "--bind-range",
        "127.0.1.0/29",
        "--max-requests",
        "4",
    ]);
    let port = srv.http_port;
    assert_eq!(srv.ready["bind_count"], 6);
    for h in [0u32, 3, 5, 6] {
        let addr = std::net::Ipv4Addr::new(127, 0, 1, 1 + (h % 6) as u8);
        let mut s = std::net::TcpStream::connect((addr, port)).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        s.write_all(&get(&format!("h{h:06}.synth.test"), port, "/", ""))
            .unwrap();
        let raw = read_all(&mut s, T, 1 << 20);
        assert_eq!(parse(&raw.bytes).status, 200);
    }
    let done: serde_json::Value = serde_json::from_str(&srv.wait_done()).unwrap();
    assert_eq!(done["requests"], 4);
    let log = std::fs::read_to_string(srv.path("log.jsonl")).unwrap();
    let locals: Vec<String> = log
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["local"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(locals.len(), 4);
    assert!(locals[1].starts_with("127.0.1.4:"), "{locals:?}");
}

#[test]
fn connection_cap_makes_further_connections_wait() {
    let srv = Server::start(&["--hosts", "5", "--max-connections", "1"]);
    let port = srv.http_port;
    let host = "h000000.synth.test";
    let mut a = connect(port);
    a.write_all(format!("GET /robots.txt HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes())
        .unwrap();
    let first = read_all(&mut a, Duration::from_millis(800), 1 << 20);
    assert_eq!(parse(&first.bytes).status, 200);
    // The only permit is held by the idle keep-alive connection `a`.
    let mut b = connect(port);
    b.write_all(&get(host, port, "/robots.txt", "")).unwrap();
    let waiting = read_all(&mut b, Duration::from_millis(800), 1 << 20);
    assert!(
        waiting.bytes.is_empty() && waiting.timed_out,
        "second connection served past the cap"
    );
    drop(a);
    let served = read_all(&mut b, Duration::from_secs(5), 1 << 20);
    assert_eq!(parse(&served.bytes).status, 200);
}

#[test]
fn sigint_flushes_the_log() {
    let mut srv = Server::start(&["--hosts", "5"]);
    let port = srv.http_port;
    for t in ["/", "/p/1", "/nowhere"] {
        let raw = exchange(
            port,
            &get("h000001.synth.test", port, t, "From: ops@example.org\r\n"),
            T,
            1 << 20,
        );
        assert!(!raw.bytes.is_empty());
    }
    let _ = std::process::Command::new("kill")
        .arg("-INT")
        .arg(srv.child.id().to_string())
        .status();
    let done: serde_json::Value = serde_json::from_str(&srv.wait_done()).unwrap();
    assert_eq!(done["log_records"], 3);
    let log = std::fs::read_to_string(srv.path("log.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[2]["status"], 404);
    assert!(lines
        .iter()
        .all(|l| l["from"] == "ops@example.org" && l["user_agent"] == "test"));
}

#[test]
fn every_robots_catalogue_entry_over_the_wire() {
    let srv = Server::start(&["--hosts", "17"]);
    let port = srv.http_port;
    let site = site_for(17, "default", port, None);
    let mut entries = std::collections::HashSet::new();
    for h in 0..17 {
        let m = site.robots(Scheme::Http, h);
        entries.insert(m.entry);
        let raw = exchange(
            port,
            &get(&site.host_name(h), port, "/robots.txt", ""),
            T,
            1 << 20,
        );
        let p = parse(&raw.bytes);
        assert_eq!(p.status, m.status, "{:?}", m.entry);
        if m.status == 200 {
            assert_eq!(p.body, m.body, "{:?}", m.entry);
        }
        assert_eq!(p.header("Location"), m.location.as_deref(), "{:?}", m.entry);
        if let Some(loc) = &m.location {
            // Follow the redirect: the target file is served (on host 0 for cross-host).
            let u = url::Url::parse(loc).unwrap();
            let raw = exchange(
                port,
                &get(u.host_str().unwrap(), port, u.path(), ""),
                T,
                1 << 20,
            );
            assert_eq!(parse(&raw.bytes).status, 200);
        }
    }
    assert_eq!(entries.len(), synthweb::robots::CATALOGUE.len());
}
