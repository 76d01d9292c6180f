//! Re-crawls of an unchanged web: answered 304, written as revisits, and the links of
//! the unchanged pages taken from the previous crawl, across two re-crawls too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

use crate::crawl_support::{annotations, crawl_log, stats_json, warcio, warcio_check_dir};
use crate::web::{conditional, crawl_args, first_crawl, has, page_lines, referee, run, start_web};

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
