//! A server that ignores validators: an identical payload becomes an
//! identical-payload-digest revisit.

use std::path::PathBuf;
use std::time::Duration;

use crate::crawl_support::{self, stats_json, warcio_check_dir};
use crate::web::{crawl_args, has, page_lines, run};

/// A loopback server that ignores validators: `/` is always the same 200 page (with an
/// ETag, which it does not honour), `/robots.txt` a 404. Serves until `stop` is set
/// (bounded: at most 200 connections).
fn stubborn_server(
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> (u16, std::thread::JoinHandle<()>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        let mut served = 0;
        while served < 200 && !stop.load(std::sync::atomic::Ordering::Acquire) {
            let Ok((mut s, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            };
            served += 1;
            s.set_nonblocking(false).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            let mut req = Vec::new();
            let mut buf = [0u8; 1024];
            while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => req.extend_from_slice(&buf[..n]),
                }
            }
            let body: &[u8] = if req.starts_with(b"GET /robots.txt") {
                b""
            } else {
                b"<html><body><p>The same page every time, never a 304.</p></body></html>"
            };
            let status = if body.is_empty() {
                "404 Not Found"
            } else {
                "200 OK"
            };
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nETag: \"same\"\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = s.write_all(head.as_bytes());
            let _ = s.write_all(body);
        }
    });
    (port, handle)
}

/// A 200 whose payload digest equals the previous capture's is written as an
/// identical-payload-digest revisit referring to it, and logged `unchanged`.
#[test]
fn an_identical_payload_becomes_an_identical_payload_revisit() {
    let tmp = tempfile::tempdir().unwrap();
    let (first, second) = (tmp.path().join("c1"), tmp.path().join("c2"));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (port, server) = stubborn_server(std::sync::Arc::clone(&stop));
    let seed = format!("http://127.0.0.1:{port}/");
    // crawl_args names a hosts file (synthweb's); an empty one maps nothing.
    std::fs::write(tmp.path().join("hosts.txt"), b"").unwrap();
    run(
        tmp.path(),
        &crawl_args(&first),
        &["--seed", &seed, "--delay-ms", "0"],
    );
    run(
        tmp.path(),
        &crawl_args(&second),
        &["--recrawl", first.to_str().unwrap(), "--delay-ms", "0"],
    );
    stop.store(true, std::sync::atomic::Ordering::Release);
    server.join().unwrap();

    let lines = page_lines(&second);
    let line = &lines[&seed][0];
    assert_eq!(line["status"], 200);
    assert!(has(line, "unchanged"), "{line}");
    assert_eq!(stats_json(&second)["recrawl"]["unchanged"], 1);
    let prev = trawl::recrawl::read_latest(&first.join("recrawl.idx"))
        .unwrap()
        .0;
    let earlier = &prev[&seed];
    let files: Vec<PathBuf> = std::fs::read_dir(second.join("warc"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    let records = crawl_support::read_warc_records(&files);
    let revisit = records
        .iter()
        .find(|r| {
            r.fields
                .iter()
                .any(|(k, v)| k == "WARC-Type" && v == "revisit")
        })
        .expect("a revisit record");
    let field = |name: &str| {
        revisit
            .fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(
        field("WARC-Profile"),
        Some("http://netpreserve.org/warc/1.1/revisit/identical-payload-digest")
    );
    assert_eq!(field("WARC-Refers-To"), Some(earlier.record_id.as_str()));
    assert_eq!(
        field("WARC-Payload-Digest"),
        Some(earlier.payload_digest.as_str())
    );
    assert_eq!(field("WARC-Truncated"), Some("length"));
    warcio_check_dir(&second.join("warc"));
}
