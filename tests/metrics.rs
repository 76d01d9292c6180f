//! The Prometheus endpoint (`--metrics-addr`): the server alone with fake stats, and a
//! scrape during a short crawl of a loopback site.

// Test helpers outside #[test] functions: a panic is the failure report.
#![allow(clippy::unwrap_used)]

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use trawl::engine::metrics::{render, MetricsServer};
use trawl::engine::{CrawlConfig, Crawler, Stats};

/// Sends `request` and returns (status line, headers, body).
fn http(addr: SocketAddr, request: &[u8]) -> (String, String, String) {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8(raw).expect("utf-8 answer");
    let (head, body) = text.split_once("\r\n\r\n").expect("complete head");
    let (status, headers) = head.split_once("\r\n").unwrap_or((head, ""));
    (status.to_owned(), headers.to_owned(), body.to_owned())
}

/// A request for `path` as Prometheus or curl sends it (`Host: ip:port`).
fn get(addr: SocketAddr, method: &str, path: &str) -> Vec<u8> {
    format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: */*\r\n\r\n").into_bytes()
}

fn scrape(addr: SocketAddr) -> String {
    let (status, headers, body) = http(addr, &get(addr, "GET", "/metrics"));
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(headers.contains("Content-Type: text/plain; version=0.0.4"));
    assert!(headers.contains(&format!("Content-Length: {}", body.len())));
    body
}

fn is_metric_name(n: &str) -> bool {
    let mut chars = n.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

/// Checks the text exposition format (0.0.4) line by line and returns the samples,
/// keyed by name with labels (`name{k="v"}`).
fn parse_exposition(text: &str) -> BTreeMap<String, f64> {
    assert!(text.ends_with('\n'), "exposition must end with a newline");
    let mut typed: BTreeMap<String, String> = BTreeMap::new();
    let mut helped = BTreeSet::new();
    let mut samples = BTreeMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').expect("HELP text");
            assert!(is_metric_name(name) && !help.is_empty(), "{line}");
            assert!(helped.insert(name.to_owned()), "HELP twice: {line}");
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("TYPE kind");
            assert!(is_metric_name(name), "{line}");
            assert!(["counter", "gauge"].contains(&kind), "{line}");
            if kind == "counter" {
                assert!(name.ends_with("_total"), "counter without _total: {line}");
            }
            assert!(
                typed.insert(name.to_owned(), kind.to_owned()).is_none(),
                "TYPE twice: {line}"
            );
            continue;
        }
        assert!(!line.starts_with('#'), "stray comment {line}");
        let (series, value) = line.rsplit_once(' ').expect("sample value");
        let name = series.split('{').next().unwrap();
        assert!(is_metric_name(name), "{line}");
        assert!(typed.contains_key(name), "sample before its TYPE: {line}");
        if let Some(labels) = series.strip_prefix(name) {
            if !labels.is_empty() {
                let inner = labels
                    .strip_prefix('{')
                    .and_then(|l| l.strip_suffix('}'))
                    .expect("braced labels");
                for pair in inner.split(',') {
                    let (k, v) = pair.split_once('=').expect("label pair");
                    assert!(is_metric_name(k), "{line}");
                    assert!(
                        v.starts_with('"') && v.ends_with('"') && v.len() >= 2,
                        "{line}"
                    );
                }
            }
        }
        let v: f64 = match value {
            "NaN" => f64::NAN,
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            v => v.parse().unwrap_or_else(|_| panic!("bad value in {line}")),
        };
        assert!(
            samples.insert(series.to_owned(), v).is_none(),
            "duplicate series {line}"
        );
    }
    for name in typed.keys() {
        assert!(helped.contains(name), "{name} has no HELP");
    }
    samples
}

fn fake_stats() -> Stats {
    let mut s = Stats {
        elapsed_secs: 12.5,
        pages: 1000,
        bytes: 20_480_000,
        discovered: 5000,
        queued: 4000,
        frontier_ram_urls: 3000,
        frontier_disk_urls: 1000,
        frontier_disk_bytes: 60_000,
        hosts_active: 77,
        hosts_parked: 2,
        seen_fill_ratio: 0.01,
        seen_expected_fp: 1e-9,
        ..Stats::default()
    };
    s.outcomes.insert("fetched".to_owned(), 990);
    s.outcomes.insert("connect-error".to_owned(), 10);
    s
}

#[test]
fn fake_stats_render_in_the_text_format() {
    let samples = parse_exposition(&render(&fake_stats()));
    assert_eq!(samples["trawl_pages_total"], 1000.0);
    assert_eq!(samples["trawl_bytes_total"], 20_480_000.0);
    assert_eq!(samples["trawl_frontier_urls{where=\"disk\"}"], 1000.0);
    assert_eq!(
        samples["trawl_outcomes_total{outcome=\"connect-error\"}"],
        10.0
    );
    assert_eq!(samples["trawl_hosts_parked_total"], 2.0);
    assert_eq!(samples["trawl_seen_false_positive_rate"], 1e-9);
}

#[test]
fn server_answers_metrics_and_refuses_the_rest() {
    let server = MetricsServer::start("127.0.0.1:0".parse().unwrap(), false).unwrap();
    let addr = server.local_addr();
    // Before the first snapshot: zeros, still well formed.
    assert_eq!(parse_exposition(&scrape(addr))["trawl_pages_total"], 0.0);
    server.publish(&fake_stats());
    assert_eq!(parse_exposition(&scrape(addr))["trawl_pages_total"], 1000.0);

    let (status, _, _) = http(addr, &get(addr, "GET", "/nothing"));
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    let (status, headers, _) = http(addr, &get(addr, "POST", "/metrics"));
    assert_eq!(status, "HTTP/1.1 405 Method Not Allowed");
    assert!(headers.contains("Allow: GET, HEAD"));
    let (status, _, body) = http(addr, b"HEAD /metrics HTTP/1.0\r\n\r\n");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(body.is_empty());
    let (status, _, body) = http(addr, b"garbage\r\n\r\n");
    assert_eq!(status, "HTTP/1.1 400 Bad Request");
    assert_eq!(body, "bad request: malformed request line\n");
    let mut big = b"GET /metrics HTTP/1.1\r\nX: ".to_vec();
    big.resize(20_000, b'a');
    let (status, _, _) = http(addr, &big);
    assert_eq!(status, "HTTP/1.1 431 Request Header Fields Too Large");

    // The status page and the JSON it polls.
    let (status, headers, body) = http(addr, &get(addr, "GET", "/"));
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(headers.contains("Content-Type: text/html; charset=utf-8"));
    assert!(headers.contains("Content-Security-Policy: default-src 'none'"));
    assert!(body.starts_with("<!doctype html>") && body.contains("/api/status"));
    let (status, headers, body) = http(addr, &get(addr, "GET", "/api/status"));
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(headers.contains("Content-Type: application/json"));
    let json: serde_json::Value = serde_json::from_str(&body).expect("JSON status");
    assert_eq!(json["pages"], 1000);
    assert_eq!(json["outcomes"]["connect-error"], 10);
    let (status, _, body) = http(addr, &get(addr, "GET", "/api/history"));
    assert_eq!(status, "HTTP/1.1 200 OK");
    let history: serde_json::Value = serde_json::from_str(&body).expect("JSON history");
    let last = history
        .as_array()
        .unwrap()
        .last()
        .expect("one sample per publish");
    assert_eq!(last["pages"], 1000.0);
    assert_eq!(last["frontier_disk_urls"], 1000.0);

    // Host must name this listener (DNS rebinding): by its address, or as localhost on
    // loopback; HTTP/1.1 without Host is a bad request.
    let port = addr.port();
    let (status, _, body) = http(
        addr,
        format!("GET /metrics HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n").as_bytes(),
    );
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(body.contains("trawl_pages_total 1000"));
    let (status, _, body) = http(
        addr,
        format!("GET /metrics HTTP/1.1\r\nHost: rebound.example:{port}\r\n\r\n").as_bytes(),
    );
    assert_eq!(status, "HTTP/1.1 421 Misdirected Request");
    assert!(
        body.contains(&format!("{addr} or localhost:{port}")),
        "{body}"
    );
    assert!(!body.contains("trawl_"));
    let (status, _, body) = http(addr, b"GET /metrics HTTP/1.1\r\n\r\n");
    assert_eq!(status, "HTTP/1.1 400 Bad Request");
    assert!(body.contains("missing host"), "{body}");

    // A client that connects and says nothing holds the (single) slot only until the
    // read timeout; the next scrape is then served.
    let _silent = TcpStream::connect(addr).unwrap();
    assert!(scrape(addr).contains("trawl_pages_total 1000"));
    server.stop();
}

#[test]
fn non_loopback_needs_explicit_permission() {
    let err = MetricsServer::start("0.0.0.0:0".parse().unwrap(), false)
        .err()
        .expect("refused");
    assert!(err.to_string().contains("not loopback"));
    let dir = tempfile::tempdir().unwrap();
    let mut c = CrawlConfig::new(dir.path());
    c.seeds = vec!["http://127.0.0.1:9/".to_owned()];
    c.metrics_addr = Some("0.0.0.0:0".parse().unwrap());
    assert!(Crawler::builder().config(c).build().unwrap().run().is_err());
}

/// A loopback site: `/p/k` links `/p/(k+1)` up to `PAGES` (within the default hop
/// limit), each answer slow enough (the snapshot is published once a second) so
/// the crawl lasts long enough to be scraped.
const PAGES: usize = 15;

fn site() -> support::ScriptServer {
    support::slow_chain_site(PAGES)
}

#[test]
fn metrics_are_scraped_during_a_crawl() {
    let site = site();
    let dir = tempfile::tempdir().unwrap();
    let (mut c, metrics) = support::metrics_crawl_config(dir.path(), site.url("/").to_string());
    c.checkpoint_interval = Duration::ZERO;

    let done = Arc::new(AtomicBool::new(false));
    let d2 = Arc::clone(&done);
    let scraper = std::thread::spawn(move || {
        let mut best = 0.0f64;
        let until = Instant::now() + Duration::from_secs(60);
        while !d2.load(Ordering::Acquire) && Instant::now() < until {
            if let Ok(mut s) = TcpStream::connect_timeout(&metrics, Duration::from_secs(1)) {
                let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                let _ = s.write_all(&get(metrics, "GET", "/metrics"));
                let mut raw = String::new();
                if s.read_to_string(&mut raw).is_ok() {
                    if let Some((_, body)) = raw.split_once("\r\n\r\n") {
                        let samples = parse_exposition(body);
                        best = best.max(samples["trawl_pages_total"]);
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        best
    });
    let stats = Crawler::builder().config(c).build().unwrap().run().unwrap();
    done.store(true, Ordering::Release);
    let best = scraper.join().unwrap();
    assert!(
        stats.pages >= PAGES as u64,
        "/ and /p/1.. fetched: {}",
        stats.pages
    );
    assert!(best >= 1.0, "no scrape saw a fetched page (best {best})");
    assert!(best <= stats.pages as f64);
    // The endpoint is gone with the crawl.
    assert!(TcpStream::connect_timeout(&metrics, Duration::from_millis(500)).is_err());
}
