//! `--latency-ms` and `--bandwidth` over a real socket: the delay before the first
//! byte and the rate of the body are what the flags say (wide tolerances: the machine
//! is shared; every exchange is bounded in time).
#![allow(clippy::unwrap_used, reason = "tests")]

mod common;

use std::io::Write;
use std::time::{Duration, Instant};

use common::{connect, get, parse, read_all, Server};

/// Time to the first response byte and to the end of the response.
fn timed_get(port: u16, target: &str) -> (Duration, Duration, Vec<u8>) {
    let mut s = connect(port);
    s.set_read_timeout(Some(Duration::from_millis(5))).unwrap();
    let start = Instant::now();
    s.write_all(&get("h000001.synth.test", port, target, ""))
        .unwrap();
    let mut first = None;
    let mut bytes = Vec::new();
    let mut buf = [0u8; 4096];
    while start.elapsed() < Duration::from_secs(20) {
        match std::io::Read::read(&mut s, &mut buf) {
            Ok(0) => break,
            Ok(n) => {
                first.get_or_insert(start.elapsed());
                bytes.extend_from_slice(&buf[..n]);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => panic!("read: {e}"),
        }
    }
    (first.unwrap(), start.elapsed(), bytes)
}

#[test]
fn latency_delays_the_first_byte_of_every_response() {
    let server = Server::start(&[
        "--hosts",
        "4",
        "--page-bytes",
        "4096",
        "--latency-ms",
        "400",
    ]);
    for target in ["/", "/p/1", "/robots.txt"] {
        let (first, _, bytes) = timed_get(server.http_port, target);
        assert!(
            first >= Duration::from_millis(390) && first < Duration::from_millis(2_500),
            "{target}: first byte after {first:?}"
        );
        // Host 1's robots.txt is the catalogue's 404: delayed like any answer.
        assert!(matches!(parse(&bytes).status, 200 | 404), "{target}");
    }
    // Per request, not per connection: two pipelined requests take two delays.
    let mut s = connect(server.http_port);
    let port = server.http_port;
    let two = format!(
        "GET /p/1 HTTP/1.1\r\nHost: h000001.synth.test:{port}\r\n\r\nGET /p/2 HTTP/1.1\r\nHost: h000001.synth.test:{port}\r\nConnection: close\r\n\r\n"
    );
    let start = Instant::now();
    s.write_all(two.as_bytes()).unwrap();
    let raw = read_all(&mut s, Duration::from_secs(10), 1 << 20);
    assert!(!raw.timed_out);
    assert!(
        start.elapsed() >= Duration::from_millis(790),
        "two pipelined requests in {:?}",
        start.elapsed()
    );
    let one = parse(&raw.bytes);
    assert_eq!(parse(&one.rest).status, 200);
}

#[test]
fn bandwidth_paces_the_body() {
    // 16 KiB at 8 KiB/s: about 2 s; unpaced it is well under 100 ms.
    let server = Server::start(&[
        "--hosts",
        "4",
        "--page-bytes",
        "16384",
        "--bandwidth",
        "8192",
    ]);
    let (first, total, bytes) = timed_get(server.http_port, "/p/1");
    let r = parse(&bytes);
    assert_eq!((r.status, r.body.len()), (200, 16_384));
    let rate = bytes.len() as f64 / total.as_secs_f64();
    assert!(
        (5_000.0..=9_500.0).contains(&rate),
        "{} bytes in {total:?}: {rate:.0} B/s",
        bytes.len()
    );
    assert!(
        first < Duration::from_millis(900),
        "first byte after {first:?}"
    );

    // The cap is per connection: two connections at once each get the full rate.
    let port = server.http_port;
    let start = Instant::now();
    let both: Vec<_> = (0..2)
        .map(|_| std::thread::spawn(move || timed_get(port, "/p/2").1))
        .collect();
    for t in both {
        let t = t.join().unwrap();
        assert!(t < Duration::from_millis(3_500), "one of two took {t:?}");
    }
    assert!(start.elapsed() < Duration::from_millis(4_000));
}

#[test]
fn latency_and_bandwidth_make_an_8_kb_page_take_about_a_second() {
    let server = Server::start(&[
        "--hosts",
        "4",
        "--page-bytes",
        "8192",
        "--latency-ms",
        "500",
        "--bandwidth",
        "16384",
    ]);
    let (first, total, bytes) = timed_get(server.http_port, "/p/1");
    assert_eq!(parse(&bytes).body.len(), 8_192);
    assert!(first >= Duration::from_millis(490), "first byte {first:?}");
    assert!(
        total >= Duration::from_millis(950) && total < Duration::from_millis(3_000),
        "page in {total:?}"
    );
}
