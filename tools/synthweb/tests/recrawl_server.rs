//! The real server with `--change-rate`, `--changes FILE` and `--profile sitemaps`:
//! conditional requests over a socket get 304 for unchanged pages and 200 for changed
//! ones, and the changes file is written before the ready line.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "test helpers: a failure is a test failure"
)]

mod common;

use std::time::Duration;

use common::{exchange, get, parse, Server};

const LIMIT: Duration = Duration::from_secs(10);

#[test]
fn second_run_answers_304_to_unchanged_pages_and_lists_its_changes() {
    let mut first = Server::start(&["--hosts", "4", "--port", "0"]);
    let port = first.http_port;
    let host = "h000001.synth.test";
    let mut etags = Vec::new();
    for k in 1..20 {
        let r = parse(
            &exchange(
                port,
                &get(host, port, &format!("/p/{k}"), ""),
                LIMIT,
                1 << 20,
            )
            .bytes,
        );
        assert_eq!(r.status, 200);
        etags.push(r.header("ETag").unwrap().to_owned());
    }
    first.stop();

    let dir = tempfile::tempdir().unwrap();
    let changes = dir.path().join("changes.txt");
    // The same port: absolute links carry it, so another port is another web.
    let port_arg = port.to_string();
    let mut second = Server::start(&[
        "--hosts",
        "4",
        "--port",
        &port_arg,
        "--change-rate",
        "30%",
        "--changes",
        changes.to_str().unwrap(),
    ]);
    assert_eq!(second.http_port, port);
    let list = std::fs::read_to_string(&changes).unwrap();
    assert!(list.starts_with("# synthweb changes v1 seed=42 generation=1 change_rate_bp=3000"));
    let (mut not_modified, mut full, mut gone) = (0, 0, 0);
    for (i, etag) in etags.iter().enumerate() {
        let path = format!("/p/{}", i + 1);
        let url = format!("http://{host}:{port}{path}");
        let req = get(host, port, &path, &format!("If-None-Match: {etag}\r\n"));
        let r = parse(&exchange(port, &req, LIMIT, 1 << 20).bytes);
        let listed = list
            .lines()
            .find(|l| l.split(' ').nth(1) == Some(url.as_str()))
            .map(|l| l.split(' ').next().unwrap().to_owned());
        match (r.status, listed.as_deref()) {
            (304, None) => not_modified += 1,
            (200, Some("changed")) => {
                full += 1;
                assert_ne!(r.header("ETag"), Some(etag.as_str()));
            }
            (404 | 410, Some("gone")) => gone += 1,
            other => panic!("{path}: {other:?}"),
        }
    }
    assert!(
        not_modified > 0 && full + gone > 0,
        "{not_modified} {full} {gone}"
    );
    second.stop();
}

#[test]
fn sitemaps_profile_serves_the_sitemaps() {
    let mut s = Server::start(&["--hosts", "4", "--port", "0", "--profile", "sitemaps"]);
    let port = s.http_port;
    let host = "h000000.synth.test";
    let r = parse(&exchange(port, &get(host, port, "/robots.txt", ""), LIMIT, 1 << 20).bytes);
    let robots = String::from_utf8(r.body).unwrap();
    assert!(robots.contains(&format!("Sitemap: http://{host}:{port}/sitemap_index.xml")));
    let r = parse(
        &exchange(
            port,
            &get(host, port, "/sitemap-pages-2.xml.gz", ""),
            LIMIT,
            1 << 20,
        )
        .bytes,
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.header("Content-Type"), Some("application/gzip"));
    assert_eq!(r.header("Content-Encoding"), None);
    assert!(r.body.starts_with(&[0x1F, 0x8B]));
    s.stop();
}
