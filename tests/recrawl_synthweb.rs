//! The re-crawl's building blocks end to end against synthweb on loopback, without the
//! engine (not yet wired, `docs/recrawl.md`): a first pass records every page in a
//! re-crawl index; a second pass plans each request from the index alone
//! (`read_latest` + `plan`), classifies the answers and counts them (`RecrawlStats`).
//! Against the unchanged web every request is conditional and answered 304, with no
//! body bytes; against `--change-rate 10%` the counts equal synthweb's own list of
//! changes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod crawl_support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use trawl::provenance::Digest;
use trawl::recrawl::{
    classify, plan, read_latest, IndexEntry, IndexWriter, LastmodPolicy, Plan, RecrawlStats,
    Validators, Verdict, INDEX_FILE,
};

const HOSTS: u32 = 3;

struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(port: u16, extra: &[&str]) -> Self {
        let mut child = Command::new(crawl_support::synthweb_bin())
            .args(["--hosts", &HOSTS.to_string(), "--port", &port.to_string()])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let ready: serde_json::Value = serde_json::from_str(&line).unwrap();
        let port = u16::try_from(ready["http_port"].as_u64().unwrap()).unwrap();
        Self { child, port }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Answer {
    status: u16,
    etag: Option<String>,
    last_modified: Option<String>,
    body: Vec<u8>,
}

/// One HTTP/1.0 GET (the server closes; never chunked), with conditional headers.
fn get(port: u16, host: &str, path: &str, plan: &Plan) -> Answer {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut req = format!(
        "GET {path} HTTP/1.0\r\nHost: {host}:{port}\r\nUser-Agent: trawl-test\r\n\
         From: test@example.org\r\n"
    );
    if let Plan::Fetch {
        if_none_match,
        if_modified_since,
    } = plan
    {
        if let Some(v) = if_none_match {
            req.push_str(&format!("If-None-Match: {v}\r\n"));
        }
        if let Some(v) = if_modified_since {
            req.push_str(&format!("If-Modified-Since: {v}\r\n"));
        }
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.take(16 << 20).read_to_end(&mut raw).unwrap();
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let header = |name: &str| {
        head.lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim().to_owned())
    };
    Answer {
        status: head[9..12].parse().unwrap(),
        etag: header("ETag"),
        last_modified: header("Last-Modified"),
        body: raw[end..].to_vec(),
    }
}

fn host(i: u32) -> String {
    format!("h{i:06}.synth.test")
}

/// The first crawl: `/`, then `/p/1..` until 404, on every host; one index entry per
/// answer.
fn first_pass(port: u16, index: &Path) -> (u64, u64) {
    let mut w = IndexWriter::create(index).unwrap();
    let (mut pages, mut body_bytes) = (0, 0);
    let unconditional = plan(None, None, LastmodPolicy::Conditional);
    for i in 0..HOSTS {
        let h = host(i);
        let mut k = 0;
        loop {
            let path = if k == 0 {
                "/".to_owned()
            } else {
                format!("/p/{k}")
            };
            let a = get(port, &h, &path, &unconditional);
            if a.status != 200 {
                assert_eq!(a.status, 404);
                break;
            }
            pages += 1;
            body_bytes += a.body.len() as u64;
            w.append(&IndexEntry {
                url: format!("http://{h}:{port}{path}"),
                status: a.status,
                fetched_at_us: 1_764_000_000_000_000,
                validators: Validators {
                    etag: a.etag,
                    last_modified: a.last_modified,
                },
                payload_digest: Digest::of(&a.body).to_string(),
                record_id: format!("<urn:uuid:{i}-{k}>"),
                warc_file: "first.warc.gz".to_owned(),
                warc_offset: 0,
                payload_bytes: a.body.len() as u64,
                hops: Some(String::new()),
                via: None,
            })
            .unwrap();
            k += 1;
        }
    }
    w.sync().unwrap();
    (pages, body_bytes)
}

/// The re-crawl: every URL of the index, planned from its entry; then the new pages
/// (`/new/k`, which a crawl finds through the changed root). Body bytes are those of
/// the index's URLs (the probes for new pages end on a 404 page).
fn second_pass(port: u16, index: &Path) -> (RecrawlStats, u64, u64, u64) {
    let (latest, recovered) = read_latest(index).unwrap();
    assert_eq!(recovered, None);
    let mut stats = RecrawlStats::default();
    let (mut conditional, mut requests, mut body_bytes) = (0, 0, 0);
    let sorted: BTreeMap<_, _> = latest.into_iter().collect();
    for (url, prev) in &sorted {
        let p = plan(Some(prev), None, LastmodPolicy::Conditional);
        if let Plan::Fetch {
            if_none_match: Some(_),
            ..
        } = &p
        {
            conditional += 1;
        }
        let rest = url.strip_prefix("http://").unwrap();
        let (authority, path) = rest.split_at(rest.find('/').unwrap());
        let h = authority.split(':').next().unwrap();
        let a = get(port, h, path, &p);
        requests += 1;
        body_bytes += a.body.len() as u64;
        let digest = (a.status == 200).then(|| Digest::of(&a.body).to_string());
        let verdict = classify(Some(prev), a.status, digest.as_deref());
        stats.record(Some(prev), verdict);
    }
    for i in 0..HOSTS {
        for k in 0.. {
            let a = get(
                port,
                &host(i),
                &format!("/new/{k}"),
                &plan(None, None, LastmodPolicy::Conditional),
            );
            requests += 1;
            if a.status != 200 {
                break;
            }
            let digest = Digest::of(&a.body).to_string();
            let verdict = classify(None, a.status, Some(&digest));
            assert_eq!(verdict, Verdict::New);
            stats.record(None, verdict);
        }
    }
    (stats, conditional, requests, body_bytes)
}

#[test]
fn recrawl_of_unchanged_and_changed_synthweb() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join(INDEX_FILE);
    let first = Server::start(0, &[]);
    let port = first.port;
    let (pages, first_bytes) = first_pass(port, &index);
    assert!(pages > 100, "{pages} pages");
    drop(first);

    // Unchanged web (same port: absolute links carry it): all 304, no body.
    let same = Server::start(port, &[]);
    let (stats, conditional, _, bytes) = second_pass(same.port, &index);
    drop(same);
    assert_eq!(conditional, pages, "every request conditional");
    assert_eq!(stats.not_modified, pages, "{stats:?}");
    assert_eq!((stats.changed, stats.gone, stats.new), (0, 0, 0));
    assert!(
        bytes * 20 <= first_bytes,
        "{bytes} of {first_bytes} body bytes"
    );
    assert_eq!(bytes, 0);
    assert!(stats.bytes_saved == first_bytes, "{stats:?}");

    // 10% changes: the counts equal synthweb's own list.
    let changes = dir.path().join("changes.txt");
    let changed_web = Server::start(
        port,
        &[
            "--change-rate",
            "10%",
            "--changes",
            changes.to_str().unwrap(),
        ],
    );
    let (stats, _, _, _) = second_pass(changed_web.port, &index);
    drop(changed_web);
    let list = std::fs::read_to_string(&changes).unwrap();
    let count = |word: &str| {
        list.lines()
            .filter(|l| l.starts_with(&format!("{word} ")) && l.ends_with(" allowed"))
            .count() as u64
    };
    assert!(
        count("changed") > 0 && count("gone") > 0 && count("new") > 0,
        "{list}"
    );
    assert_eq!(stats.changed, count("changed"), "{stats:?}\n{list}");
    assert_eq!(stats.gone, count("gone"), "{stats:?}\n{list}");
    assert_eq!(stats.new, count("new"), "{stats:?}\n{list}");
    assert_eq!(
        stats.not_modified,
        pages - count("changed") - count("gone"),
        "{stats:?}"
    );
    assert_eq!(stats.unchanged, 0);
    eprintln!(
        "recrawl_synthweb: {pages} pages, {first_bytes} body bytes first; 10% changes: {stats:?}"
    );
}
