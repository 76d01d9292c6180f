//! Every hostile behaviour, observed from a raw std::net client under a time bound.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failure is a test failure"
)]

mod common;

use std::io::Read;
use std::time::Duration;

use common::{exchange, get, parse, Raw, Server};
use synthweb::hosts::HOSTILE_HOSTS;
use synthweb::HostileKind;

fn hit(srv: &Server, kind: HostileKind, target: &str, limit: Duration, max: usize) -> Raw {
    let (idx, _) = HOSTILE_HOSTS.iter().find(|(_, k)| *k == kind).unwrap();
    let host = format!("h{idx:06}.synth.test");
    exchange(
        srv.http_port,
        &get(&host, srv.http_port, target, ""),
        limit,
        max,
    )
}

fn start() -> Server {
    Server::start(&["--hosts", "30", "--profile", "hostile"])
}

fn head_end(b: &[u8]) -> Option<usize> {
    b.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

#[test]
fn robots_txt_of_hostile_hosts_is_clean() {
    let srv = start();
    let raw = hit(
        &srv,
        HostileKind::NeverAnswer,
        "/robots.txt",
        Duration::from_secs(5),
        1 << 20,
    );
    let p = parse(&raw.bytes);
    assert_eq!(p.status, 200);
    assert_eq!(p.body, b"User-agent: *\nDisallow:\n");
}

#[test]
fn slow_headers_trickle_at_one_byte_per_second() {
    let srv = start();
    let raw = hit(
        &srv,
        HostileKind::SlowHeaders,
        "/",
        Duration::from_millis(2_500),
        1 << 20,
    );
    assert!(raw.timed_out);
    assert!(
        (1..=4).contains(&raw.bytes.len()),
        "{} bytes in 2.5 s",
        raw.bytes.len()
    );
    assert!(b"HTTP".starts_with(&raw.bytes));
}

#[test]
fn endless_body_never_ends() {
    let srv = start();
    let raw = hit(
        &srv,
        HostileKind::EndlessBody,
        "/",
        Duration::from_secs(2),
        4 << 20,
    );
    assert!(raw.error.is_none());
    let h = head_end(&raw.bytes).unwrap();
    assert!(String::from_utf8_lossy(&raw.bytes[..h]).contains("Transfer-Encoding: chunked"));
    assert!(
        raw.bytes.len() > 256 << 10,
        "only {} bytes",
        raw.bytes.len()
    );
    assert!(!raw.bytes.ends_with(b"0\r\n\r\n"));
}

#[test]
fn content_length_lies_both_ways() {
    let srv = start();
    for (kind, longer) in [
        (HostileKind::LengthTooLong, true),
        (HostileKind::LengthTooShort, false),
    ] {
        let raw = hit(&srv, kind, "/", Duration::from_secs(5), 10 << 20);
        assert!(!raw.timed_out);
        let h = head_end(&raw.bytes).unwrap();
        let mut headers = [httparse::EMPTY_HEADER; 16];
        let mut r = httparse::Response::new(&mut headers);
        r.parse(&raw.bytes).unwrap();
        let cl: usize = r
            .headers
            .iter()
            .find(|h| h.name == "Content-Length")
            .map(|h| std::str::from_utf8(h.value).unwrap().parse().unwrap())
            .unwrap();
        let got = raw.bytes.len() - h;
        if longer {
            assert!(cl > got, "{kind:?}: declared {cl}, got {got}");
        } else {
            assert!(cl < got, "{kind:?}: declared {cl}, got {got}");
        }
    }
}

#[test]
fn invalid_chunk_sizes() {
    let srv = start();
    for t in ["/", "/p/1", "/p/2", "/p/3", "/p/4", "/p/5"] {
        let raw = hit(
            &srv,
            HostileKind::BadChunks,
            t,
            Duration::from_secs(5),
            1 << 20,
        );
        let h = head_end(&raw.bytes).unwrap();
        let body = &raw.bytes[h..];
        // First chunk is valid; the second size line is not a valid chunk.
        assert!(body.starts_with(b"10\r\n"));
        let second = &body[4 + 16 + 2..];
        let line_end = second.windows(2).position(|w| w == b"\r\n").unwrap();
        let line = &second[..line_end];
        let valid = match std::str::from_utf8(line)
            .ok()
            .and_then(|s| usize::from_str_radix(s, 16).ok())
        {
            Some(n) => {
                second.len() >= line_end + 2 + n + 2
                    && &second[line_end + 2 + n..line_end + 4 + n] == b"\r\n"
            }
            None => false,
        };
        assert!(
            !valid,
            "chunk line {:?} on {t} is valid",
            String::from_utf8_lossy(line)
        );
    }
}

#[test]
fn huge_header_block_and_many_headers() {
    let srv = start();
    let raw = hit(
        &srv,
        HostileKind::HugeHeaderBlock,
        "/",
        Duration::from_secs(5),
        4 << 20,
    );
    let h = head_end(&raw.bytes).unwrap();
    assert!(h > 1 << 20, "header block of {h} bytes");
    let raw = hit(
        &srv,
        HostileKind::ManyHeaders,
        "/",
        Duration::from_secs(5),
        4 << 20,
    );
    let h = head_end(&raw.bytes).unwrap();
    let lines = raw.bytes[..h].windows(2).filter(|w| w == b"\r\n").count();
    assert!(lines > 10_000, "{lines} header lines");
}

#[test]
fn bare_lf_head_with_a_good_page() {
    let srv = start();
    let raw = hit(
        &srv,
        HostileKind::BareLf,
        "/",
        Duration::from_secs(5),
        4 << 20,
    );
    let end = raw.bytes.windows(2).position(|w| w == b"\n\n").unwrap();
    let head = &raw.bytes[..end];
    assert!(head.starts_with(b"HTTP/1.1 200 OK\n"));
    assert!(!head.contains(&b'\r'));
    let site = common::site_for(30, "hostile", srv.http_port, None);
    assert_eq!(
        &raw.bytes[end + 2..],
        &site.page(synthweb::Scheme::Http, 15, "/").response.body[..]
    );
}

#[test]
fn gzip_bomb_inflates_far_beyond_its_size() {
    let srv = start();
    let raw = hit(
        &srv,
        HostileKind::GzipBomb,
        "/",
        Duration::from_secs(10),
        1 << 20,
    );
    let p = parse(&raw.bytes);
    assert_eq!(p.header("Content-Encoding"), Some("gzip, gzip"));
    assert!(p.body.len() < 64 * 1024, "outer size {}", p.body.len());
    let mut inner = Vec::new();
    flate2::read::GzDecoder::new(&p.body[..])
        .read_to_end(&mut inner)
        .unwrap();
    // The inner member declares 1 GiB (ISIZE trailer) and does inflate past 20 MB.
    let isize = u32::from_le_bytes(inner[inner.len() - 4..].try_into().unwrap());
    assert!(isize > 1_000_000_000);
    let mut d = flate2::read::GzDecoder::new(&inner[..]).take(20 << 20);
    let n = std::io::copy(&mut d, &mut std::io::sink()).unwrap();
    assert_eq!(n, 20 << 20);
    let single = hit(
        &srv,
        HostileKind::GzipBomb,
        "/single/x",
        Duration::from_secs(10),
        16 << 20,
    );
    let p = parse(&single.bytes);
    assert_eq!(p.header("Content-Encoding"), Some("gzip"));
    assert_eq!(p.body, inner);
}

#[test]
fn reset_in_the_middle_of_the_body() {
    let srv = start();
    let raw = hit(
        &srv,
        HostileKind::ResetMidBody,
        "/",
        Duration::from_secs(5),
        4 << 20,
    );
    let h = head_end(&raw.bytes).unwrap();
    let mut headers = [httparse::EMPTY_HEADER; 16];
    let mut r = httparse::Response::new(&mut headers);
    r.parse(&raw.bytes).unwrap();
    let cl: usize = r
        .headers
        .iter()
        .find(|h| h.name == "Content-Length")
        .map(|h| std::str::from_utf8(h.value).unwrap().parse().unwrap())
        .unwrap();
    assert!(raw.bytes.len() - h < cl);
    assert_eq!(raw.error, Some(std::io::ErrorKind::ConnectionReset));
}

#[test]
fn close_before_response_and_never_answer() {
    let srv = start();
    let raw = hit(
        &srv,
        HostileKind::CloseBeforeResponse,
        "/",
        Duration::from_secs(5),
        1 << 20,
    );
    assert!(raw.bytes.is_empty() && !raw.timed_out);
    let raw = hit(
        &srv,
        HostileKind::NeverAnswer,
        "/",
        Duration::from_millis(1_500),
        1 << 20,
    );
    assert!(raw.bytes.is_empty() && raw.timed_out && raw.error.is_none());
}

#[test]
fn http09_reply_and_binary_garbage() {
    let srv = start();
    let raw = hit(
        &srv,
        HostileKind::Http09,
        "/",
        Duration::from_secs(5),
        4 << 20,
    );
    assert!(raw.bytes.starts_with(b"<!DOCTYPE html>"));
    assert!(!raw.timed_out);
    let raw = hit(
        &srv,
        HostileKind::Garbage,
        "/",
        Duration::from_secs(5),
        4 << 20,
    );
    assert_eq!(raw.bytes.len(), 4096);
    assert!(!raw.bytes.starts_with(b"HTTP/"));
    assert!(httparse::Response::new(&mut [httparse::EMPTY_HEADER; 4])
        .parse(&raw.bytes)
        .is_err());
}
