//! End to end (issue 11, "no silent link loss"): `trawl crawl` with WARC output on
//! against a loopback server whose index page repeats each of its 300 distinct links
//! (once absolute with a fragment, once `../`-relative) and carries one attribute
//! longer than the extractor reads. With `--max-links-per-page 100` the index's
//! crawl-log line says `links-truncated:200` and `long-attributes:1`, stats.json
//! counts the page, exactly the 100 kept links are fetched; with the default cap all
//! 300 are. `--max-links-per-page 0` is refused with a clear message.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod crawl_support;
mod support;

use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;

use crawl_support::{
    annotations, crawl_log, fetched_urls, stats_json as stats, trawl_bin, warcio_check_dir,
};
use support::{read_head, ScriptServer};

/// Distinct links on the index page.
const LINKS: usize = 300;

/// The index: every link twice (duplicates must not count against the cap), a link
/// to a host of dots (rejected, not a cap), and a 200 KB `href` (over the 128 KiB
/// attribute cap, so counted).
fn index_page() -> String {
    let mut html = String::from("<!doctype html><title>index</title>\n");
    for i in 0..LINKS {
        html.push_str(&format!("<a href=\"/docs/p{i}.html#m{i}\">p{i}</a>\n"));
    }
    for i in 0..LINKS {
        html.push_str(&format!("<a href=\"../docs/p{i}.html\">again</a>\n"));
    }
    html.push_str("<a href=\"http://.../\">dots</a>\n");
    html.push_str(&format!("<a href=\"/{}\">long</a>\n", "x".repeat(200_000)));
    html
}

fn serve(mut stream: TcpStream, _: usize) {
    let index = index_page();
    while let Some(head) = read_head(&mut stream) {
        let line = String::from_utf8_lossy(&head);
        let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
        let (status, body) = match path.as_str() {
            "/robots.txt" => ("404 Not Found", String::from("none")),
            "/" => ("200 OK", index.clone()),
            p if p.starts_with("/docs/p") => ("200 OK", format!("<p>{p}</p>")),
            _ => ("404 Not Found", String::from("none")),
        };
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        );
        if stream.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

fn crawl(seed: &str, out: &Path, max_links: Option<&str>) -> std::process::Output {
    let mut cmd = Command::new(trawl_bin());
    cmd.args([
        "crawl",
        "--seed",
        seed,
        "--allow-private-addresses",
        "--from",
        "ops@example.org",
        "--delay-ms",
        "0",
        "--per-host-connections",
        "4",
        "--max-pages",
        "1000",
        "--timeout-ms",
        "10000",
        "--seen-capacity",
        "100000",
        "--progress-secs",
        "0",
        "--checkpoint-secs",
        "0",
        "--out",
    ])
    .arg(out);
    if let Some(n) = max_links {
        cmd.args(["--max-links-per-page", n]);
    }
    cmd.output().expect("run trawl crawl")
}

#[test]
fn capped_page_is_annotated_and_counted() {
    let server = ScriptServer::start(serve);
    let seed = server.url("/").to_string();
    let tmp = tempfile::tempdir().unwrap();

    let out = tmp.path().join("capped");
    let run = crawl(&seed, &out, Some("100"));
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let log = crawl_log(&out);
    let index = log
        .iter()
        .find(|r| r["url"].as_str() == Some(seed.as_str()) && !r["status"].is_null())
        .expect("index page in the crawl log");
    let notes = annotations(index);
    assert!(
        notes.contains(&"links-truncated:200".to_owned()),
        "index annotations: {notes:?}"
    );
    assert!(notes.contains(&"long-attributes:1".to_owned()), "{notes:?}");
    assert!(
        !notes.iter().any(|n| n.starts_with("scan-truncated")),
        "{notes:?}"
    );
    let fetched = fetched_urls(&log);
    let docs = fetched.iter().filter(|u| u.contains("/docs/p")).count();
    assert_eq!(docs, 100, "exactly the kept links are crawled");
    // The kept ones are the first 100 in document order.
    assert!(fetched.contains(&server.url("/docs/p99.html").to_string()));
    assert!(!fetched.contains(&server.url("/docs/p100.html").to_string()));
    let s = stats(&out);
    assert_eq!(s["pages_links_truncated"], 1, "{s}");
    assert_eq!(s["pages_long_attributes"], 1, "{s}");
    assert_eq!(s["pages_scan_truncated"], 0, "{s}");
    warcio_check_dir(&out.join("warc"));

    // The default cap (50,000 distinct) takes the whole page; only the long
    // attribute is reported.
    let out = tmp.path().join("default");
    let run = crawl(&seed, &out, None);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let log = crawl_log(&out);
    let docs = fetched_urls(&log)
        .iter()
        .filter(|u| u.contains("/docs/p"))
        .count();
    assert_eq!(docs, LINKS);
    let index = log
        .iter()
        .find(|r| r["url"].as_str() == Some(seed.as_str()) && !r["status"].is_null())
        .expect("index page in the crawl log");
    assert_eq!(annotations(index), ["long-attributes:1"]);
    let s = stats(&out);
    assert_eq!(s["pages_links_truncated"], 0, "{s}");
    assert_eq!(s["pages_long_attributes"], 1, "{s}");
}

#[test]
fn zero_links_per_page_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let run = crawl("http://127.0.0.1:9/", &tmp.path().join("out"), Some("0"));
    assert!(!run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("--max-links-per-page must be at least 1"),
        "{stderr}"
    );
}
