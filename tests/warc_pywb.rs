//! Replay in pywb (`docs/warc.md`, "Replay in pywb"): a WARC with a `response`, a
//! `revisit` of the same URL and a `revisit` of another URL with the same payload
//! (url-agnostic: pywb finds the payload through `WARC-Refers-To-Target-URI` and
//! `WARC-Refers-To-Date`), each replayed byte for byte by pywb's `id_` mode.
//!
//! pywb comes from `PYWB_BIN` (the directory of `wb-manager` and `wayback`),
//! `/opt/pywb/bin`, or `PATH` (install: `python3 -m venv /opt/pywb &&
//! /opt/pywb/bin/pip install pywb==2.10.0 warcio==1.8.1`). Without it the test says so
//! and passes, except under `CI=true`, where it fails.

// Test helpers outside `#[test]` functions: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use trawl::http::{Method, ResponseHead, ResponseLimits};
use trawl::provenance::WarcDate;
use trawl::warc::{Capture, HttpResponse, WarcWriter, WarcWriterConfig};

/// The directory holding `wb-manager` and `wayback`, or `None` (test skipped) unless
/// `CI=true`.
fn pywb_bin() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("PYWB_BIN").map(PathBuf::from),
        Some(PathBuf::from("/opt/pywb/bin")),
    ];
    let found = candidates
        .into_iter()
        .flatten()
        .find(|dir| dir.join("wb-manager").is_file() && dir.join("wayback").is_file())
        .or_else(|| {
            let out = Command::new("which").arg("wayback").output().ok()?;
            let path = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
            path.parent()
                .map(Path::to_path_buf)
                .filter(|dir| dir.join("wb-manager").is_file())
        });
    if found.is_none() {
        let help = "pywb not found: `python3 -m venv /opt/pywb && /opt/pywb/bin/pip install \
                    pywb==2.10.0 warcio==1.8.1`, or set PYWB_BIN to the directory of \
                    `wb-manager` and `wayback`";
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{help}");
        eprintln!("skipped: {help}");
    }
    found
}

fn capture(uri: &str, date: WarcDate, body: &[u8]) -> Capture {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let host = uri.split('/').nth(2).unwrap();
    Capture {
        target_uri: uri.to_owned(),
        date,
        ip: Some([127, 0, 0, 1].into()),
        request: format!("GET / HTTP/1.1\r\nHost: {host}\r\n\r\n")
            .as_bytes()
            .into(),
        response: HttpResponse::new(&ResponseHead::parse(head.as_bytes()).unwrap(), body.into()),
        truncated: None,
        revisit: None,
        metadata: None,
    }
}

/// Stops the server when the test ends, however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// GET `path` from the server on `port` (HTTP/1.0, so the body ends with the
/// connection): status and body with any transfer coding removed.
fn get(port: u16, path: &str) -> std::io::Result<(u16, Vec<u8>)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        stream,
        "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n"
    )?;
    let mut wire = Vec::new();
    stream.read_to_end(&mut wire)?;
    let run =
        trawl::http::run_responses(&wire, &[usize::MAX], Method::Get, ResponseLimits::default())
            .into_iter()
            .next()
            .ok_or_else(|| std::io::Error::other("no response"))?;
    let head = run
        .head
        .ok_or_else(|| std::io::Error::other("no response head"))?;
    Ok((head.status, run.body))
}

#[test]
fn pywb_replays_responses_and_revisits_byte_for_byte() {
    let Some(bin) = pywb_bin() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let warcs = tmp.path().join("warc");
    let body: Vec<u8> = (0..400)
        .flat_map(|i| format!("<p>line {i} of the page</p>\n").into_bytes())
        .collect();
    let other = b"<p>another page</p>\n".repeat(50);
    let t0 = 1_704_067_200_000_000; // 2024-01-01T00:00:00Z
    let hour = 3_600_000_000;
    let captures = [
        capture(
            "http://a.example/page",
            WarcDate::from_unix_micros(t0),
            &body,
        ),
        capture(
            "http://a.example/other",
            WarcDate::from_unix_micros(t0 + 1),
            &other,
        ),
        // The same URL again: a revisit of itself.
        capture(
            "http://a.example/page",
            WarcDate::from_unix_micros(t0 + hour),
            &body,
        ),
        // Another URL with the same payload: a url-agnostic revisit.
        capture(
            "http://b.example/copy",
            WarcDate::from_unix_micros(t0 + 2 * hour),
            &body,
        ),
    ];
    let mut writer = WarcWriter::new(WarcWriterConfig::new(&warcs)).unwrap();
    // As the crawl does: compressed apart (with the revisit hints), appended in order.
    let mut compressor = writer.compressor();
    let written: Vec<_> = captures
        .iter()
        .map(|c| {
            let compressed = compressor.compress(c).unwrap();
            writer.append_compressed(&compressed).unwrap()
        })
        .collect();
    assert_eq!(
        written.iter().map(|w| w.revisit).collect::<Vec<_>>(),
        [false, false, true, true]
    );
    writer.close().unwrap();
    let file = warcs.join(&written[0].file_name);

    let root = tmp.path().join("pywb");
    std::fs::create_dir_all(&root).unwrap();
    for args in [&["init", "c"][..], &["add", "c", file.to_str().unwrap()]] {
        let out = Command::new(bin.join("wb-manager"))
            .args(args)
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "wb-manager {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _server = Server(
        Command::new(bin.join("wayback"))
            .args(["-b", "127.0.0.1", "-p", &port.to_string()])
            .current_dir(&root)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while get(port, "/c/").is_err() {
        assert!(
            Instant::now() < deadline,
            "wayback did not start on port {port}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    for (c, expected) in captures.iter().zip([&body, &other, &body, &body]) {
        let path = format!("/c/{}id_/{}", c.date.compact(), c.target_uri);
        let (status, replayed) = get(port, &path).unwrap();
        assert_eq!(status, 200, "{path}");
        assert!(
            replayed == *expected,
            "{path}: replayed {} bytes",
            replayed.len()
        );
    }
}
