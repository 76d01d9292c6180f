//! Re-crawls end to end (issue 14): `trawl crawl --recrawl PREV_OUT` against synthweb
//! on loopback, the second server on the first one's port (absolute links carry it).
//!
//! (a) an unchanged web: every page request conditional and answered 304, no body
//!     bytes, server-not-modified revisit records that `warcio check` and
//!     `warcio index` accept;
//! (b) `--change-rate 10%`: the `stats.json` counts equal synthweb's `--changes` list,
//!     every changed page fetched in full, every vanished one logged `gone`, every new
//!     one found;
//! (c) a re-crawl killed with SIGKILL and resumed: every URL of the previous crawl has
//!     exactly one answer in the final log and one entry in the new index.
//!
//! The web is synthweb's benchmark mode (`--page-bytes`): pages `/` and `/p/k` only.
//! Its default profile also serves redirects and error pages, which carry no
//! validators and are asked for unconditionally (docs/recrawl.md gives that figure).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod crawl_support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crawl_support::{
    annotations, crawl_log, stats_json, synthweb_bin, trawl_bin, warcio, warcio_check_dir, Synthweb,
};

const WORLD: [&str; 8] = [
    "--hosts",
    "4",
    "--pages-per-host",
    "60-100",
    "--out-degree",
    "5-15",
    "--page-bytes",
    "6000",
];

/// A synthweb server of the test's world (`WORLD` and `extra`) in `dir` on `port` (0:
/// any free one; a re-crawl's server takes the first one's, absolute links carry it).
fn start_web(dir: &Path, port: u16, extra: &[&str]) -> Synthweb {
    let world: Vec<&str> = WORLD.iter().chain(extra).copied().collect();
    Synthweb::start_on(dir, port, &world, true)
}

/// `synthweb check` of the request log and manifest in `dir`: passed, and its report.
fn referee(dir: &Path) -> (bool, String) {
    let out = Command::new(synthweb_bin())
        .current_dir(dir)
        .args(["check", "--log", "req.log", "--manifest", "manifest.txt"])
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The referee's figures: (page requests, conditional, answered 304, body bytes).
fn conditional(web: &Synthweb) -> (u64, u64, u64, u64) {
    let (_, text) = referee(&web.dir);
    let line = text
        .lines()
        .find(|l| l.starts_with("conditional:"))
        .unwrap_or_else(|| panic!("no conditional line in the referee's report:\n{text}"));
    // "conditional: C of N page requests conditional, K answered 304; B page body bytes"
    let n: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    let (c, total, k, b) = (n[0], n[1], n[2], n[4]);
    (total, c, k, b)
}

fn crawl_args(out: &Path) -> Vec<String> {
    [
        "crawl",
        "--hosts-file",
        "hosts.txt",
        "--allow-private-addresses",
        "--from",
        "ops@example.org",
        "--max-crawl-delay-secs",
        "0",
        "--robots-retry-secs",
        "1",
        "--max-retry-after-secs",
        "1",
        "--timeout-ms",
        "4000",
        "--seen-capacity",
        "100000",
        "--progress-secs",
        "0",
        "--scope",
        "seed-hosts",
        "--checkpoint-secs",
        "1",
        "--out",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .chain([out.display().to_string()])
    .collect()
}

fn run(dir: &Path, args: &[String], extra: &[&str]) {
    let all: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .chain(extra.iter().copied())
        .collect();
    crawl_support::run_trawl(dir, &all);
}

/// A first crawl of the base web; returns the server's port and its request figures.
fn first_crawl(web_dir: &Path, out: &Path) -> (u16, (u64, u64, u64, u64)) {
    let mut web = start_web(web_dir, 0, &[]);
    run(
        web_dir,
        &crawl_args(out),
        &["--seeds", "seeds.txt", "--delay-ms", "5"],
    );
    web.stop();
    (web.port, conditional(&web))
}

/// Page lines (not robots.txt) of a crawl log, by URL.
fn page_lines(out: &Path) -> BTreeMap<String, Vec<serde_json::Value>> {
    let mut by_url: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
    for r in crawl_log(out) {
        if r["hops"].as_str() == Some("P") || r["status"].is_null() {
            continue;
        }
        by_url
            .entry(r["url"].as_str().unwrap().to_owned())
            .or_default()
            .push(r);
    }
    by_url
}

fn has(r: &serde_json::Value, note: &str) -> bool {
    annotations(r).iter().any(|a| a == note)
}

#[test]
fn an_unchanged_web_is_answered_304_and_written_as_revisits() {
    let tmp = tempfile::tempdir().unwrap();
    let web_dir = tmp.path().join("web");
    let (first, second) = (tmp.path().join("c1"), tmp.path().join("c2"));
    let (port, (pages1, _, _, bytes1)) = first_crawl(&web_dir, &first);
    assert!(pages1 > 200, "{pages1} page requests");
    let prev = trawl::recrawl::read_latest(&first.join("recrawl.idx"))
        .unwrap()
        .0;
    assert_eq!(
        prev.len() as u64,
        pages1,
        "one index entry per page fetched"
    );

    let mut web = start_web(&web_dir, port, &[]);
    run(
        &web_dir,
        &crawl_args(&second),
        &["--recrawl", first.to_str().unwrap(), "--delay-ms", "5"],
    );
    web.stop();
    let (pages, conditional, not_modified, bytes) = conditional(&web);
    eprintln!(
        "crawl_recrawl (a): {conditional} of {pages} page requests conditional, \
         {not_modified} answered 304; body bytes {bytes} against {bytes1} ({:.2}%)",
        bytes as f64 * 100.0 / bytes1 as f64
    );
    assert!(conditional * 100 >= pages * 95, "{conditional} of {pages}");
    assert!(
        not_modified * 100 >= pages * 95,
        "{not_modified} of {pages}"
    );
    assert!(bytes * 100 <= bytes1 * 5, "{bytes} of {bytes1} body bytes");

    let stats = stats_json(&second);
    let rc = &stats["recrawl"];
    assert_eq!(rc["not_modified"].as_u64(), Some(not_modified), "{rc}");
    let saved: u64 = prev.values().map(|e| e.payload_bytes).sum();
    assert_eq!(rc["bytes_saved"].as_u64(), Some(saved), "{rc}");
    for (url, lines) in page_lines(&second) {
        assert_eq!(lines.len(), 1, "{url}");
        assert!(has(&lines[0], "not-modified"), "{url}: {}", lines[0]);
    }

    // The WARC files: warcio reads every record, and its index lists the revisits
    // with the server-not-modified profile, each referring to the first crawl's
    // capture of its URL at that capture's date.
    warcio_check_dir(&second.join("warc"));
    if let Some(warcio) = warcio() {
        let files: Vec<PathBuf> = std::fs::read_dir(second.join("warc"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        let o = Command::new(warcio)
            .args([
                "index",
                "-f",
                "warc-type,warc-target-uri,warc-profile,warc-refers-to-target-uri,warc-refers-to-date,warc-refers-to",
            ])
            .args(&files)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mut revisits = 0;
        for line in String::from_utf8_lossy(&o.stdout).lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            if v["warc-type"] != "revisit" {
                continue;
            }
            revisits += 1;
            let url = v["warc-target-uri"].as_str().unwrap();
            let earlier = &prev[url];
            assert_eq!(
                v["warc-profile"],
                "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
            );
            assert_eq!(v["warc-refers-to-target-uri"], url);
            assert_eq!(v["warc-refers-to"], earlier.record_id.as_str());
            assert_eq!(
                v["warc-refers-to-date"],
                trawl::provenance::WarcDate::from_unix_micros(earlier.fetched_at_us).to_string()
            );
        }
        assert_eq!(revisits, not_modified);
    }
}

#[test]
fn a_changed_web_is_counted_as_synthweb_lists_it() {
    let tmp = tempfile::tempdir().unwrap();
    let web_dir = tmp.path().join("web");
    let (first, second) = (tmp.path().join("c1"), tmp.path().join("c2"));
    let (port, _) = first_crawl(&web_dir, &first);

    let mut web = start_web(
        &web_dir,
        port,
        &["--change-rate", "10%", "--changes", "changes.txt"],
    );
    run(
        &web_dir,
        &crawl_args(&second),
        &["--recrawl", first.to_str().unwrap(), "--delay-ms", "5"],
    );
    web.stop();

    let text = std::fs::read_to_string(web_dir.join("changes.txt")).unwrap();
    let mut want: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(' ').collect();
        if f.last() == Some(&"allowed") {
            want.entry(f[0]).or_default().insert(f[1].to_owned());
        }
    }
    let lines = page_lines(&second);
    let with = |note: &str| -> BTreeSet<String> {
        lines
            .iter()
            .filter(|(_, l)| l.iter().any(|r| has(r, note)))
            .map(|(u, _)| u.clone())
            .collect()
    };
    for kind in ["changed", "gone", "new"] {
        assert_eq!(
            with(kind),
            want.get(kind).cloned().unwrap_or_default(),
            "{kind}"
        );
    }
    assert!(!want["new"].is_empty() && !want["gone"].is_empty());
    // Changed and new pages in full: a 200 with a response record in the WARC.
    for url in want["changed"].iter().chain(&want["new"]) {
        let r = &lines[url][0];
        assert_eq!(r["status"], 200, "{r}");
        assert!(r["warc"].is_object(), "{r}");
    }
    let rc = &stats_json(&second)["recrawl"];
    for kind in ["changed", "gone", "new"] {
        assert_eq!(
            rc[kind].as_u64(),
            Some(want[kind].len() as u64),
            "{kind}: {rc}"
        );
    }
    let (pages, _, not_modified, _) = conditional(&web);
    assert_eq!(rc["not_modified"].as_u64(), Some(not_modified), "{rc}");
    eprintln!(
        "crawl_recrawl (b): {pages} page requests, {not_modified} answered 304; {rc}; \
         synthweb: {}",
        text.lines().next().unwrap_or("")
    );
    warcio_check_dir(&second.join("warc"));
}

#[test]
fn a_recrawl_killed_with_sigkill_resumes_and_loses_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let web_dir = tmp.path().join("web");
    let (first, second) = (tmp.path().join("c1"), tmp.path().join("c2"));
    let (port, _) = first_crawl(&web_dir, &first);
    let prev = trawl::recrawl::read_latest(&first.join("recrawl.idx"))
        .unwrap()
        .0;

    let mut web = start_web(&web_dir, port, &[]);
    // 40 ms between requests to a host: about 3.5 s for the re-crawl, killed at 1.8 s
    // (checkpoints every second).
    let mut args = crawl_args(&second);
    args.extend(
        ["--recrawl", first.to_str().unwrap(), "--delay-ms", "40"]
            .iter()
            .map(|s| (*s).to_owned()),
    );
    let mut child = Command::new(trawl_bin())
        .current_dir(&web_dir)
        .args(&args)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1800));
    assert!(child.try_wait().unwrap().is_none(), "ended before the kill");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let killed_at = page_lines(&second).len();
    assert!(
        killed_at > 0 && killed_at < prev.len(),
        "{killed_at} of {} pages when killed",
        prev.len()
    );
    run(&web_dir, &args, &["--resume"]);
    web.stop();

    // Every previous URL answered exactly once in the final log, 304.
    let lines = page_lines(&second);
    let urls: BTreeSet<&String> = lines.keys().collect();
    let want: BTreeSet<&String> = prev.keys().collect();
    assert_eq!(urls, want);
    for (url, l) in &lines {
        assert_eq!(l.len(), 1, "{url}: {l:?}");
        assert!(has(&l[0], "not-modified"), "{url}");
    }
    // The new index holds every URL (the resumed run appended after the torn tail).
    let now = trawl::recrawl::read_latest(&second.join("recrawl.idx"))
        .unwrap()
        .0;
    assert_eq!(
        now.keys().collect::<BTreeSet<_>>(),
        want,
        "the new index lacks URLs"
    );
    let stats = stats_json(&second);
    assert!(stats["resumed_from"].as_u64().is_some(), "{stats}");
    assert_eq!(
        stats["recrawl"]["not_modified"].as_u64(),
        Some(prev.len() as u64),
        "{}",
        stats["recrawl"]
    );
    warcio_check_dir(&second.join("warc"));
    eprintln!(
        "crawl_recrawl (c): killed after {killed_at} of {} pages, resumed, all answered once",
        prev.len()
    );
}

#[test]
fn a_damaged_previous_index_stops_the_crawl_with_exit_2() {
    use trawl::recrawl::{IndexEntry, IndexWriter, Validators};
    let tmp = tempfile::tempdir().unwrap();
    let prev = tmp.path().join("c1");
    std::fs::create_dir_all(&prev).unwrap();
    let path = prev.join("recrawl.idx");
    let mut w = IndexWriter::create(&path).unwrap();
    for i in 0..3 {
        w.append(&IndexEntry {
            url: format!("http://127.0.0.1:9/p/{i}"),
            status: 200,
            fetched_at_us: 1,
            validators: Validators::default(),
            payload_digest: String::new(),
            record_id: String::new(),
            warc_file: "x.warc.gz".to_owned(),
            warc_offset: 0,
            payload_bytes: 10,
            hops: Some(String::new()),
            via: None,
        })
        .unwrap();
    }
    w.sync().unwrap();
    drop(w);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[40] ^= 0xff; // inside the first record, with records after it
    std::fs::write(&path, &bytes).unwrap();
    let out = tmp.path().join("c2");
    let o = Command::new(trawl_bin())
        .args(["crawl", "--allow-private-addresses", "--recrawl"])
        .arg(&prev)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("re-crawl index") && err.contains("damaged"),
        "{err}"
    );
    assert!(
        !out.exists(),
        "nothing is written for a crawl that cannot start"
    );
}

/// The links of pages answered 304 come from the previous crawl's metadata records:
/// after a first crawl cut at 15 pages per host, the re-crawl (no cap) reaches the
/// rest of the web through the unchanged pages' links, and the referee finds nothing
/// missing.
#[test]
fn links_of_unchanged_pages_come_from_the_previous_crawl() {
    let tmp = tempfile::tempdir().unwrap();
    let web_dir = tmp.path().join("web");
    let (first, second) = (tmp.path().join("c1"), tmp.path().join("c2"));
    let mut web = start_web(&web_dir, 0, &[]);
    run(
        &web_dir,
        &crawl_args(&first),
        &[
            "--seeds",
            "seeds.txt",
            "--delay-ms",
            "5",
            "--max-pages-per-host",
            "15",
        ],
    );
    web.stop();
    let port = web.port;
    let prev = trawl::recrawl::read_latest(&first.join("recrawl.idx"))
        .unwrap()
        .0;
    assert!(prev.len() <= 60, "{} pages in the cut crawl", prev.len());

    let mut web = start_web(&web_dir, port, &[]);
    run(
        &web_dir,
        &crawl_args(&second),
        &["--recrawl", first.to_str().unwrap(), "--delay-ms", "5"],
    );
    web.stop();
    let (passed, report) = referee(&web_dir);
    assert!(passed, "referee:\n{report}");
    let lines = page_lines(&second);
    let not_modified: BTreeSet<&String> = lines
        .iter()
        .filter(|(_, l)| has(&l[0], "not-modified"))
        .map(|(u, _)| u)
        .collect();
    assert_eq!(not_modified.len(), prev.len());
    for url in &not_modified {
        let notes = annotations(&lines[*url][0]);
        assert!(
            notes.iter().any(|a| a.starts_with("previous-links:")),
            "{url}: {notes:?}"
        );
    }
    // New pages reached from an unchanged page's links: their referrer was a 304.
    let via_304 = lines
        .values()
        .filter(|l| has(&l[0], "new"))
        .filter(|l| {
            l[0]["via"]
                .as_str()
                .is_some_and(|v| not_modified.contains(&v.to_owned()))
        })
        .count();
    let new = stats_json(&second)["recrawl"]["new"].as_u64().unwrap();
    eprintln!(
        "crawl_recrawl (links): {} pages before, {new} new, {via_304} of them linked from 304 pages",
        prev.len()
    );
    assert!(via_304 > 0 && new as usize + prev.len() == lines.len());
}

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

/// Sitemap files of the previous crawl are queued as sitemaps again (hop `S`), so a
/// changed sitemap is read as one: against synthweb's sitemap profile with changes, the
/// re-crawl reads the changed sitemap files and still fetches every sitemap-only page.
#[test]
fn sitemaps_are_read_again_in_a_recrawl() {
    let tmp = tempfile::tempdir().unwrap();
    let web_dir = tmp.path().join("web");
    let (first, second) = (tmp.path().join("c1"), tmp.path().join("c2"));
    let mut web = start_web(&web_dir, 0, &["--profile", "sitemaps"]);
    run(
        &web_dir,
        &crawl_args(&first),
        &["--seeds", "seeds.txt", "--delay-ms", "5"],
    );
    web.stop();
    let port = web.port;
    let mut web = start_web(
        &web_dir,
        port,
        &[
            "--profile",
            "sitemaps",
            "--change-rate",
            "10%",
            "--changes",
            "changes.txt",
        ],
    );
    run(
        &web_dir,
        &crawl_args(&second),
        &["--recrawl", first.to_str().unwrap(), "--delay-ms", "5"],
    );
    web.stop();
    let (passed, report) = referee(&web_dir);
    assert!(passed, "referee:\n{report}");
    assert!(
        report.contains("34 of 34 sitemap-only URLs fetched"),
        "{report}"
    );
    let lines = page_lines(&second);
    let index = lines
        .iter()
        .find(|(u, _)| u.ends_with("/sitemap_index.xml"))
        .map(|(_, l)| &l[0])
        .expect("the sitemap index was fetched");
    assert_eq!(index["hops"], "S", "{index}");
    let read = lines
        .values()
        .filter(|l| annotations(&l[0]).iter().any(|a| a.starts_with("sitemap:")))
        .count();
    assert!(read > 0, "no sitemap was read as one");
    // Sitemap files are judged but not counted: the page verdicts equal synthweb's
    // list of changed pages.
    let text = std::fs::read_to_string(web_dir.join("changes.txt")).unwrap();
    let header = text.lines().next().unwrap();
    let rc = stats_json(&second)["recrawl"].clone();
    for word in ["changed", "gone", "new"] {
        let listed = text
            .lines()
            .filter(|l| l.starts_with(&format!("{word} ")) && l.ends_with(" allowed"))
            .count() as u64;
        assert_eq!(
            rc[word].as_u64(),
            Some(listed),
            "{word}: {rc} against {header}"
        );
    }
}

/// Three crawls of an unchanged web (c1; c2 `--recrawl c1`; c3 `--recrawl c2`): in c3
/// every page is a 304 whose links are c1's, read from c2's revisit and its metadata
/// record (the page was not fetched in full since c1), every URL keeps c1's hop path
/// and referrer, and c3's index still refers to c1's captures.
#[test]
fn links_and_hop_paths_survive_two_recrawls_of_an_unchanged_web() {
    let tmp = tempfile::tempdir().unwrap();
    let web_dir = tmp.path().join("web");
    let crawls = [
        tmp.path().join("c1"),
        tmp.path().join("c2"),
        tmp.path().join("c3"),
    ];
    let (port, _) = first_crawl(&web_dir, &crawls[0]);
    for pair in crawls.windows(2) {
        let mut web = start_web(&web_dir, port, &[]);
        run(
            &web_dir,
            &crawl_args(&pair[1]),
            &["--recrawl", pair[0].to_str().unwrap(), "--delay-ms", "5"],
        );
        web.stop();
    }
    let index1 = trawl::recrawl::read_latest(&crawls[0].join("recrawl.idx"))
        .unwrap()
        .0;
    let index3 = trawl::recrawl::read_latest(&crawls[2].join("recrawl.idx"))
        .unwrap()
        .0;
    // c1's links per page, from its own metadata records.
    let links1: BTreeMap<&String, usize> = index1
        .iter()
        .map(|(url, e)| {
            let (links, _) =
                trawl::recrawl::outlinks::read_outlinks(&[crawls[0].join("warc")], e, usize::MAX)
                    .unwrap();
            (url, links.len())
        })
        .collect();
    let (lines1, lines2, lines3) = (
        page_lines(&crawls[0]),
        page_lines(&crawls[1]),
        page_lines(&crawls[2]),
    );
    assert_eq!(
        lines3.keys().collect::<BTreeSet<_>>(),
        lines1.keys().collect::<BTreeSet<_>>()
    );
    let (mut linked, mut with_via) = (0, 0);
    for (url, l) in &lines3 {
        assert_eq!(l.len(), 1, "{url}");
        let r = &l[0];
        assert!(has(r, "not-modified"), "{url}: {r}");
        let n = links1[url];
        assert!(
            has(r, &format!("previous-links:{n}")),
            "{url}: {r}, c1 had {n}"
        );
        linked += usize::from(n > 0);
        assert_eq!(r["hops"], lines1[url][0]["hops"], "{url}: hop path");
        assert_eq!(
            lines2[url][0]["hops"], lines1[url][0]["hops"],
            "{url}: c2 hop path"
        );
        // The referrer, kept in the index: the same in every crawl's line and entry.
        assert_eq!(r["via"], lines1[url][0]["via"], "{url}: referrer");
        assert_eq!(lines2[url][0]["via"], lines1[url][0]["via"], "{url}: c2");
        assert_eq!(
            index1[url].via.as_deref(),
            lines1[url][0]["via"].as_str(),
            "{url}"
        );
        with_via += usize::from(index1[url].via.is_some());
        // c3's entry: c1's capture (what revisits refer to), c3's revisit record.
        let (e1, e3) = (&index1[url], &index3[url]);
        assert_eq!(
            (&e3.record_id, e3.fetched_at_us, &e3.payload_digest),
            (&e1.record_id, e1.fetched_at_us, &e1.payload_digest),
            "{url}"
        );
        assert!(crawls[2].join("warc").join(&e3.warc_file).exists(), "{url}");
        assert_eq!((&e3.hops, &e3.via), (&e1.hops, &e1.via), "{url}");
    }
    assert!(
        with_via * 2 > lines3.len(),
        "{with_via} of {}",
        lines3.len()
    );
    let index_bytes = std::fs::metadata(crawls[0].join("recrawl.idx"))
        .unwrap()
        .len();
    // What the referrers cost: a length byte and the URL each (the frames' own length
    // varints stay two bytes: records of 128 to 16,383 bytes either way).
    let via_bytes: usize = index1
        .values()
        .map(|e| 1 + e.via.as_ref().map_or(0, String::len))
        .sum();
    for out in &crawls[1..] {
        for r in crawl_log(out) {
            assert!(!has(&r, "previous-links-error"), "{r}");
        }
    }
    let stats = stats_json(&crawls[2]);
    assert_eq!(
        stats["recrawl"]["not_modified"].as_u64(),
        Some(lines1.len() as u64),
        "{}",
        stats["recrawl"]
    );
    warcio_check_dir(&crawls[2].join("warc"));
    eprintln!(
        "crawl_recrawl (three crawls): {} pages, all 304 in c3, {linked} with links \
         ({} links in all) read from c2's revisits; hop paths and referrers ({with_via} \
         with one) as in c1; c1's index {index_bytes} bytes, {:.1} bytes per URL, \
         {via_bytes} of them referrers ({:.1} per URL without)",
        lines3.len(),
        links1.values().sum::<usize>(),
        index_bytes as f64 / index1.len() as f64,
        (index_bytes as f64 - via_bytes as f64) / index1.len() as f64
    );
}
