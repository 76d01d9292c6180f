//! Misbehaving servers on loopback: every behaviour ends in its documented outcome
//! (docs/fetcher.md, "Outcomes") within its deadline; no panic, no hang.

mod support;

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use trawl::fetch::{FailReason, FetchLimits, FetchOutcome, TimeoutPhase};
use trawl::http::{BodyLimitMode, HttpError};
use trawl::net::Fetcher;

use support::{fast_config, fetch_one, read_head, send, ScriptServer};

const BOUND: Duration = Duration::from_secs(5);

fn run(script: impl Fn(TcpStream, usize) + Send + Sync + 'static) -> FetchOutcome {
    run_with(FetchLimits::default(), script)
}

fn run_with(
    limits: FetchLimits,
    script: impl Fn(TcpStream, usize) + Send + Sync + 'static,
) -> FetchOutcome {
    let server = ScriptServer::start(script);
    let mut fetcher = Fetcher::new(fast_config()).expect("fetcher");
    let o = fetch_one(&mut fetcher, server.url("/"), limits, BOUND);
    assert_eq!(fetcher.in_flight(), 0);
    o
}

fn slow_headers(mut s: TcpStream, _: usize) {
    if read_head(&mut s).is_none() {
        return;
    }
    for b in b"HTTP/1.1 200 OK\r\nX-Drip: "
        .iter()
        .chain(std::iter::repeat(&b'a'))
    {
        if !send(&mut s, &[*b]) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn slow_headers_hit_the_rate_floor() {
    let t = Instant::now();
    let o = run(slow_headers);
    assert_eq!(
        o.error,
        Some(FailReason::Timeout(TimeoutPhase::SlowTransfer)),
        "{o:?}"
    );
    assert!(o.head.is_none());
    assert!(t.elapsed() < Duration::from_secs(3));
}

fn endless_body(mut s: TcpStream, _: usize) {
    if read_head(&mut s).is_none() {
        return;
    }
    send(
        &mut s,
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n",
    );
    let block = [b'x'; 16 * 1024];
    while send(&mut s, &block) {}
}

#[test]
fn endless_body_is_truncated_at_the_cap() {
    let mut limits = FetchLimits::default();
    limits.response.max_body_bytes = 1 << 20;
    limits.response.body_limit_mode = BodyLimitMode::Truncate;
    let o = run_with(limits, endless_body);
    assert!(o.is_ok(), "{o:?}");
    assert!(o.body_truncated);
    assert_eq!(o.body.len(), 1 << 20);
    assert_eq!(o.status(), Some(200));
}

#[test]
fn endless_body_aborts_as_too_large() {
    let mut limits = FetchLimits::default();
    limits.response.max_body_bytes = 1 << 20;
    limits.response.body_limit_mode = BodyLimitMode::Abort;
    let o = run_with(limits, endless_body);
    assert_eq!(o.error, Some(FailReason::TooLarge), "{o:?}");
    assert_eq!(o.status(), Some(200));
}

#[test]
fn content_length_longer_than_body_then_close() {
    let o = run(|mut s, _| {
        if read_head(&mut s).is_some() {
            send(
                &mut s,
                b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nonly ten b",
            );
        }
    });
    assert_eq!(
        o.error,
        Some(FailReason::Protocol(HttpError::IncompleteBody)),
        "{o:?}"
    );
    assert_eq!(o.body, b"only ten b");
}

#[test]
fn content_length_longer_than_body_then_silence() {
    let o = run(|mut s, _| {
        if read_head(&mut s).is_some() {
            send(
                &mut s,
                b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nonly ten b",
            );
            std::thread::sleep(Duration::from_secs(4));
        }
    });
    assert_eq!(
        o.error,
        Some(FailReason::Timeout(TimeoutPhase::ReadIdle)),
        "{o:?}"
    );
}

#[test]
fn content_length_shorter_than_body_keeps_declared_length() {
    let o = run(|mut s, _| {
        if read_head(&mut s).is_some() {
            send(
                &mut s,
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello, and more bytes",
            );
        }
    });
    assert!(o.is_ok(), "{o:?}");
    assert_eq!(o.body, b"hello");
}

#[test]
fn invalid_chunk_size_is_a_protocol_error() {
    let o = run(|mut s, _| {
        if read_head(&mut s).is_some() {
            send(
                &mut s,
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n",
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    assert!(
        matches!(o.error, Some(FailReason::Protocol(HttpError::Chunked(_)))),
        "{o:?}"
    );
}

#[test]
fn huge_header_block_is_refused() {
    let o = run(|mut s, _| {
        if read_head(&mut s).is_some() {
            send(&mut s, b"HTTP/1.1 200 OK\r\n");
            let line = format!("X-Filler: {}\r\n", "f".repeat(1000));
            for _ in 0..1000 {
                if !send(&mut s, line.as_bytes()) {
                    return;
                }
            }
            send(&mut s, b"\r\n");
        }
    });
    assert!(
        matches!(
            o.error,
            Some(FailReason::Protocol(
                HttpError::HeadTooLarge | HttpError::TooManyHeaders
            ))
        ),
        "{o:?}"
    );
}

#[test]
fn reset_mid_body() {
    let o = run(|mut s, _| {
        // Read nothing: closing a socket with unread input makes the kernel send RST.
        std::thread::sleep(Duration::from_millis(100));
        send(
            &mut s,
            b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\npartial",
        );
        std::thread::sleep(Duration::from_millis(100));
        drop(s);
    });
    assert!(
        matches!(
            o.error,
            Some(FailReason::Reset | FailReason::Protocol(HttpError::IncompleteBody))
        ),
        "{o:?}"
    );
}

#[test]
fn close_before_response() {
    let o = run(|mut s, _| {
        let _ = read_head(&mut s);
    });
    assert_eq!(o.error, Some(FailReason::ClosedEarly), "{o:?}");
}

#[test]
fn accept_and_never_answer() {
    let t = Instant::now();
    let o = run(|mut s, _| {
        let _ = read_head(&mut s);
        std::thread::sleep(Duration::from_secs(4));
    });
    assert_eq!(
        o.error,
        Some(FailReason::Timeout(TimeoutPhase::FirstByte)),
        "{o:?}"
    );
    assert!(t.elapsed() < Duration::from_secs(2));
}

#[test]
fn http09_reply_is_not_http() {
    let o = run(|mut s, _| {
        if read_head(&mut s).is_some() {
            send(&mut s, b"<html><body>hello from 1991</body></html>\n");
        }
    });
    assert_eq!(
        o.error,
        Some(FailReason::Protocol(HttpError::NotHttp)),
        "{o:?}"
    );
}

#[test]
fn garbage_reply() {
    let o = run(|mut s, _| {
        if read_head(&mut s).is_some() {
            let mut x: u32 = 0x1234_5678;
            let junk: Vec<u8> = (0..4096)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    x as u8
                })
                .collect();
            send(&mut s, &junk);
        }
    });
    assert!(matches!(o.error, Some(FailReason::Protocol(_))), "{o:?}");
}

fn gzip_bomb() -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..64 {
        enc.write_all(&zeros).expect("gzip");
    }
    enc.finish().expect("gzip")
}

#[test]
fn gzip_bomb_is_too_large() {
    let bomb = gzip_bomb();
    let o = run(move |mut s, _| {
        if read_head(&mut s).is_some() {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
                bomb.len()
            );
            send(&mut s, head.as_bytes());
            send(&mut s, &bomb);
        }
    });
    assert_eq!(o.error, Some(FailReason::TooLarge), "{o:?}");
    assert!(o.decoded_bytes <= FetchLimits::default().decode.max_decoded_bytes);
}

#[test]
fn refused_connection() {
    // Bind then drop to find a port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let mut fetcher = Fetcher::new(fast_config()).expect("fetcher");
    let url = url::Url::parse(&format!("http://127.0.0.1:{port}/")).expect("url");
    let o = fetch_one(&mut fetcher, url, FetchLimits::default(), BOUND);
    assert_eq!(o.error, Some(FailReason::Refused), "{o:?}");
}

#[test]
fn connect_that_never_completes_times_out() {
    // A listener that never accepts: once its accept queue is full the kernel drops
    // further SYNs, so a connect hangs until our deadline.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let mut held = Vec::new();
    let filled = loop {
        match TcpStream::connect_timeout(&addr, Duration::from_millis(100)) {
            Ok(s) => held.push(s),
            Err(_) => break true,
        }
        if held.len() > 4096 {
            break false;
        }
    };
    if !filled {
        eprintln!("skipped: the accept queue never filled");
        return;
    }
    let mut cfg = fast_config();
    cfg.deadlines.connect_timeout = Duration::from_millis(300);
    let mut fetcher = Fetcher::new(cfg).expect("fetcher");
    let url = url::Url::parse(&format!("http://{addr}/")).expect("url");
    let t = Instant::now();
    let o = fetch_one(&mut fetcher, url, FetchLimits::default(), BOUND);
    assert_eq!(
        o.error,
        Some(FailReason::Timeout(TimeoutPhase::Connect)),
        "{o:?}"
    );
    assert!(t.elapsed() < Duration::from_secs(2));
    drop(listener);
}

#[test]
fn identity_body_over_the_decoded_cap_is_too_large() {
    let mut limits = FetchLimits::default();
    limits.decode.max_decoded_bytes = 1000;
    let o = run_with(limits, |mut s, _| {
        if read_head(&mut s).is_some() {
            send(&mut s, b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n");
            send(&mut s, &[b'x'; 5000]);
        }
    });
    assert_eq!(o.error, Some(FailReason::TooLarge), "{o:?}");
}
