//! Re-crawls of a changed web: the counts as synthweb lists the changes, and changed
//! sitemaps read again.

use std::collections::{BTreeMap, BTreeSet};

use crate::crawl_support::{annotations, stats_json, warcio_check_dir};
use crate::web::{conditional, crawl_args, first_crawl, has, page_lines, referee, run, start_web};

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
