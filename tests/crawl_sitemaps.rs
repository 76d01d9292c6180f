//! A crawl of synthweb's `sitemaps` profile (issue 14): trawl follows host 0's
//! robots.txt `Sitemap:` line through the index, the nested index and the gzipped
//! sitemap, and host 1's `Sitemap:` line to the storage index on host 0 and its
//! sitemap; it fetches all 34 pages that only the sitemaps list (host 1's 4 thanks to
//! the robots.txt permission passed down the chain), refuses the 5 pages of the
//! cross-host sitemap and host 2's page in the storage sitemap (host 2's robots.txt
//! names neither), and the referee passes, with every sitemap decision in the crawl
//! log. Then re-crawls of that crawl with `--sitemap-lastmod skip` and without, which
//! queue the previous URLs with their referrers (the storage index again with host 1's
//! robots.txt, hence its permission).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod crawl_support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use crawl_support::{annotations, crawl_args, crawl_log, stats_json, synthweb_bin, Synthweb};

/// The test web: 4 hosts (host 1's robots.txt names the storage index on host 0).
const WEB: [&str; 8] = crawl_support::SITEMAPS_WEB;

/// `trawl crawl` of `sw` into `out`, `budget` pages per host, plus `extra` flags.
fn crawl(sw: &Synthweb, out: &std::path::Path, budget: u64, extra: &[&str]) {
    let status = Command::new(crawl_support::trawl_bin())
        .current_dir(&sw.dir)
        .args(crawl_args(out, budget, 0))
        .args(extra)
        .status()
        .unwrap();
    assert!(status.success(), "trawl crawl failed: {status}");
}

#[test]
fn sitemap_only_pages_are_fetched_and_the_cross_host_sitemap_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let budget = 300;
    let budget_flag = budget.to_string();
    let mut sw = Synthweb::start(
        &tmp.path().join("web"),
        &[&WEB[..], &["--manifest-max-pages-per-host", &budget_flag]].concat(),
    );
    let out = tmp.path().join("crawl");
    crawl(&sw, &out, budget, &[]);
    sw.stop();

    let o = Command::new(synthweb_bin())
        .current_dir(&sw.dir)
        .args([
            "check",
            "--log",
            "req.log",
            "--manifest",
            "manifest.txt",
            "--json",
        ])
        .args(["--per-host-connections", "1"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(0), "{report:#}");
    assert_eq!(report["sitemap_only"], 34);
    assert_eq!(report["sitemap_only_fetched"], 34);
    assert_eq!(report["sitemap_requests"], 8, "{report:#}");
    assert_eq!(report["forbidden_fetched"]["count"], 0);

    // The crawl log says what each sitemap gave.
    let log = crawl_log(&out);
    let notes = |suffix: &str| {
        let rec = log
            .iter()
            .find(|r| r["url"].as_str().is_some_and(|u| u.ends_with(suffix)))
            .unwrap_or_else(|| panic!("no crawl-log line for {suffix}"));
        assert_eq!(rec["status"], 200, "{rec}");
        annotations(rec)
    };
    assert!(notes("/sitemap_index.xml").contains(&"sitemap:index:4".to_owned()));
    assert!(notes("/sitemap-nested-index.xml").contains(&"sitemap:index:1".to_owned()));
    assert!(notes("/sitemap-pages-2.xml.gz").contains(&"sitemap:urlset:10".to_owned()));
    assert!(notes("/sitemap-nested.xml").contains(&"sitemap:urlset:5".to_owned()));
    let cross = notes("/sitemap-cross.xml");
    assert!(cross.contains(&"sitemap:urlset:0".to_owned()), "{cross:?}");
    assert!(cross.contains(&"sitemap-refused:5".to_owned()), "{cross:?}");
    // The chain: host 1's robots.txt named the storage index on host 0; the sitemap
    // that index lists may list host 1's pages (4 taken), not host 2's (1 refused).
    assert!(notes("/sitemap-storage-index.xml").contains(&"sitemap:index:1".to_owned()));
    let storage = notes("/sitemap-storage.xml");
    assert!(
        storage.contains(&"sitemap:urlset:4".to_owned()),
        "{storage:?}"
    );
    assert!(
        storage.contains(&"sitemap-refused:1".to_owned()),
        "{storage:?}"
    );
    for k in 0..4 {
        let page = format!("/smb/{k}");
        let rec = log
            .iter()
            .find(|r| r["url"].as_str().is_some_and(|u| u.ends_with(&page)))
            .unwrap_or_else(|| panic!("{page} never fetched"));
        assert_eq!(rec["status"], 200, "{rec}");
        assert_eq!(rec["hops"], "SSS", "{rec}");
        assert!(rec["url"].as_str().unwrap().contains("h000001."), "{rec}");
    }
    let stats = stats_json(&out);
    assert_eq!(stats["sitemaps_read"], 8, "{stats}");
    assert_eq!(stats["sitemaps_cut"], 0, "{stats}");
    assert_eq!(stats["sitemaps_failed"], 0, "{stats}");
    assert_eq!(stats["sitemap_urls_refused"], 6, "{stats}");
    assert_eq!(stats["sitemap_grants_dropped"], 0, "{stats}");
    // Pages found through sitemaps carry hop M.
    let sm = log
        .iter()
        .find(|r| r["url"].as_str().is_some_and(|u| u.ends_with("/sm/29")))
        .unwrap();
    assert!(sm["hops"].as_str().unwrap().ends_with('S'), "{sm}");
}

/// One node on the `sitemap-chain` web fetches all 20 sitemap-only pages: each
/// `/orphan` through a gzipped sitemap on another host (the `.gz` passes the extension
/// filter on a sitemap hop, and the robots.txt that named it permits the naming
/// host's URLs), each `/orphan-deep` through an index on one host, named by two
/// robots.txt, and a gzipped sitemap on a third (both permissions passed down the
/// chain). The farm must do the
/// same (`tests/farm/sitemaps.rs::a_farm_follows_sitemap_chains_across_nodes`).
#[test]
fn one_node_follows_sitemap_chains_across_hosts() {
    let tmp = tempfile::tempdir().unwrap();
    let mut sw = Synthweb::start(&tmp.path().join("web"), &crawl_support::CHAIN_WEB);
    let out = tmp.path().join("crawl");
    crawl(&sw, &out, 300, &[]);
    sw.stop();
    let o = Command::new(synthweb_bin())
        .current_dir(&sw.dir)
        .args(["check", "--log", "req.log", "--manifest", "manifest.txt"])
        .args(["--json", "--per-host-connections", "1"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(0), "{report:#}");
    assert_eq!(report["sitemap_only"], 20, "{report:#}");
    assert_eq!(report["sitemap_only_fetched"], 20, "{report:#}");
    // 30 files; an index read before its second robots.txt permission arrived is read
    // again with both.
    assert!(
        report["sitemap_requests"].as_u64() >= Some(30),
        "{report:#}"
    );
    assert_eq!(report["forbidden_fetched"]["count"], 0, "{report:#}");
    let log = crawl_log(&out);
    let refused = crawl_support::chain_refusals(&log);
    assert!(refused.is_empty(), "{refused:#?}");
    for (suffix, hops) in [("/orphan", "SS"), ("/orphan-deep", "SSS")] {
        let found: Vec<&serde_json::Value> = log
            .iter()
            .filter(|r| r["url"].as_str().is_some_and(|u| u.ends_with(suffix)))
            .collect();
        assert_eq!(found.len(), 10, "{suffix}: {found:#?}");
        for r in found {
            assert_eq!(r["status"], 200, "{r}");
            assert_eq!(r["hops"], hops, "{r}");
        }
    }
    let stats = stats_json(&out);
    assert!(stats["sitemaps_read"].as_u64() >= Some(30), "{stats}");
}

/// `--sitemap URL`: the 60,000-URL sitemap is cut at 50,000 with a crawl-log
/// annotation, and the gzip bomb posing as a sitemap is stopped at 50 MB.
#[test]
fn operator_sitemaps_over_the_caps_are_cut_and_logged() {
    let tmp = tempfile::tempdir().unwrap();
    let budget = 60;
    let sw = Synthweb::start_with(
        &tmp.path().join("web"),
        &[&["--hosts", "3"][..], &WEB[2..]].concat(),
        false,
    );
    let origin = format!("http://h000000.synth.test:{}", sw.port);
    let out = tmp.path().join("crawl");
    let status = Command::new(crawl_support::trawl_bin())
        .current_dir(&sw.dir)
        .args(crawl_args(&out, budget, 0))
        .args(["--sitemap", &format!("{origin}/sitemap-big.xml")])
        .args(["--sitemap", &format!("{origin}/sitemap-bomb.xml.gz")])
        .status()
        .unwrap();
    assert!(status.success(), "trawl crawl failed: {status}");
    let log = crawl_log(&out);
    let notes = |suffix: &str| {
        let rec = log
            .iter()
            .find(|r| r["url"].as_str().is_some_and(|u| u.ends_with(suffix)))
            .unwrap_or_else(|| panic!("no crawl-log line for {suffix}"));
        assert_eq!(rec["status"], 200, "{rec}");
        assert_eq!(rec["hops"], "S", "{rec}");
        annotations(rec)
    };
    let big = notes("/sitemap-big.xml");
    assert!(
        big.contains(&"sitemap-cut:urls:50000:10000".to_owned()),
        "{big:?}"
    );
    assert!(big.contains(&"sitemap:urlset:50000".to_owned()), "{big:?}");
    let bomb = notes("/sitemap-bomb.xml.gz");
    assert!(
        bomb.contains(&"sitemap-cut:bytes:52428800".to_owned()),
        "{bomb:?}"
    );
    assert!(bomb.contains(&"sitemap:urlset:0".to_owned()), "{bomb:?}");
    let stats = stats_json(&out);
    // The two named here, plus whatever of robots.txt's index the budget allowed.
    assert!(stats["sitemaps_read"].as_u64().unwrap() >= 2, "{stats}");
    assert_eq!(stats["sitemaps_cut"], 2, "{stats}");
    // The 50,000th URL was taken, the 50,001st never appears.
    assert!(log
        .iter()
        .any(|r| r["url"].as_str().is_some_and(|u| u.ends_with("/big/49999"))));
    assert!(!log
        .iter()
        .any(|r| r["url"].as_str().is_some_and(|u| u.ends_with("/big/50000"))));
}

/// Re-crawls of a `--profile sitemaps` crawl (the web unchanged, the server the
/// same). With `--sitemap-lastmod skip` every URL that synthweb's sitemaps list with a
/// `<lastmod>` (all before the first crawl: checked) and that the first crawl fetched
/// with a 2xx is skipped: no request, a `skipped` line with the previous links, the
/// count in `stats.json`. The sitemap files are asked for in full (their dates must be
/// read); host 1's undated pages are fetched conditionally. The default re-crawl
/// skips nothing and asks for the same pages conditionally (304).
#[test]
fn a_recrawl_skips_what_the_sitemap_lastmod_says_is_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let budget = 300;
    let mut sw = Synthweb::start(
        &tmp.path().join("web"),
        &[&WEB[..], &["--sitemap-lastmods", "lastmods.txt"]].concat(),
    );
    let (first, skip, default) = (
        tmp.path().join("c1"),
        tmp.path().join("c2"),
        tmp.path().join("c3"),
    );
    crawl(&sw, &first, budget, &[]);
    let prev = first.to_str().unwrap();
    crawl(
        &sw,
        &skip,
        budget,
        &["--recrawl", prev, "--sitemap-lastmod", "skip"],
    );
    crawl(&sw, &default, budget, &["--recrawl", prev]);
    // A skip re-crawl of the skip re-crawl: the URLs skipped in c2 are in its index
    // (their entries kept), and their links are found in c1's WARC files through
    // c2's record of the crawl it re-crawled.
    let again = tmp.path().join("c4");
    crawl(
        &sw,
        &again,
        budget,
        &[
            "--recrawl",
            skip.to_str().unwrap(),
            "--sitemap-lastmod",
            "skip",
        ],
    );
    sw.stop();

    // synthweb's list: URL and lastmod, each before the first crawl began.
    let text = std::fs::read_to_string(sw.path("lastmods.txt")).unwrap();
    let started = std::fs::read_to_string(first.join("start.json")).unwrap();
    let started: serde_json::Value = serde_json::from_str(&started).unwrap();
    let started = started["unix_time"].as_i64().unwrap();
    let mut listed = std::collections::BTreeSet::new();
    for line in text.lines().skip(1) {
        let (url, secs) = line.split_once(' ').unwrap();
        assert!(secs.parse::<i64>().unwrap() < started, "{line}");
        listed.insert(url.to_owned());
    }
    assert!(listed.len() > 30, "{}", listed.len());
    let ok = |r: &serde_json::Value| {
        r["status"]
            .as_u64()
            .is_some_and(|s| (200..300).contains(&s))
    };
    let first_ok: std::collections::BTreeSet<String> = crawl_log(&first)
        .iter()
        .filter(|r| ok(r))
        .map(|r| r["url"].as_str().unwrap().to_owned())
        .collect();
    let want: std::collections::BTreeSet<String> =
        listed.intersection(&first_ok).cloned().collect();
    // All 30 sitemap-only pages of host 0 among them.
    assert_eq!(want.iter().filter(|u| u.contains("/sm/")).count(), 30);

    let log = crawl_log(&skip);
    let has = |r: &serde_json::Value, a: &str| annotations(r).iter().any(|x| x == a);
    let skipped: Vec<&serde_json::Value> = log
        .iter()
        .filter(|r| has(r, "skipped") && has(r, "lastmod-not-newer"))
        .collect();
    let got: std::collections::BTreeSet<String> = skipped
        .iter()
        .map(|r| r["url"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(got.len(), skipped.len(), "a URL skipped twice");
    assert_eq!(got, want);
    for r in &skipped {
        assert!(r["status"].is_null(), "{r}");
        // The previous capture's links were read back, as for a 304.
        assert!(
            annotations(r)
                .iter()
                .any(|a| a.starts_with("previous-links:")),
            "{r}"
        );
    }
    let requested = crawl_support::fetched_urls(&log);
    assert!(want.is_disjoint(&requested));
    let stats = stats_json(&skip);
    assert_eq!(
        stats["recrawl"]["skipped"].as_u64(),
        Some(want.len() as u64),
        "{stats}"
    );
    assert_eq!(stats["sitemap_lastmods_dropped"], 0, "{stats}");
    // Sitemap files in full (200), host 1's undated pages conditionally (304).
    let line = |log: &[serde_json::Value], suffix: &str| {
        log.iter()
            .find(|r| r["url"].as_str().is_some_and(|u| u.ends_with(suffix)))
            .cloned()
            .unwrap_or_else(|| panic!("no line for {suffix}"))
    };
    assert_eq!(line(&log, "/sitemap-pages.xml")["status"], 200);
    assert_eq!(line(&log, "/smb/0")["status"], 304);

    // The default: nothing skipped, the same pages asked for conditionally.
    let log = crawl_log(&default);
    assert!(!log.iter().any(|r| has(r, "skipped")));
    for url in &want {
        let r = line(&log, url);
        assert_eq!(r["status"], 304, "{r}");
        assert!(has(&r, "not-modified"), "{r}");
    }
    assert_eq!(line(&log, "/sitemap-pages.xml")["status"], 304);
    let stats = stats_json(&default);
    assert_eq!(stats["recrawl"]["skipped"], 0, "{stats}");

    // c4: the same URLs skipped again, with the same links as in c2.
    let links = |log: &[serde_json::Value]| -> std::collections::BTreeMap<String, String> {
        log.iter()
            .filter(|r| has(r, "skipped"))
            .map(|r| {
                let n = annotations(r)
                    .into_iter()
                    .find(|a| a.starts_with("previous-links"))
                    .unwrap_or_default();
                (r["url"].as_str().unwrap().to_owned(), n)
            })
            .collect()
    };
    let (in_c2, in_c4) = (links(&crawl_log(&skip)), links(&crawl_log(&again)));
    assert_eq!(
        in_c4
            .keys()
            .cloned()
            .collect::<std::collections::BTreeSet<_>>(),
        want
    );
    assert_eq!(in_c4, in_c2);
    assert!(
        in_c4.values().all(|n| n.starts_with("previous-links:")),
        "{in_c4:?}"
    );

    // Referrers: every previous URL is queued with the referrer it had in c1, kept in
    // the re-crawl index, so its line names it in every re-crawl (c4's came through
    // c2's index).
    let with_via = same_referrers(&first, &skip);
    same_referrers(&first, &default);
    same_referrers(&first, &again);
    // The storage chain in the re-crawls that read the sitemap files in full (skip
    // mode): the storage index is queued with host 1's robots.txt as its referrer, so it
    // starts with that robots.txt's permission, as in c1 (not only its own origin's,
    // as an operator's `--sitemap`): the storage sitemap is read once, takes host 1's 4
    // pages and refuses only host 2's, and no re-read waits for host 1's robots.txt.
    let refused = stats_json(&first)["sitemap_urls_refused"].clone();
    for out in [&first, &skip, &again] {
        let log = crawl_log(out);
        let lines = |suffix: &str| -> Vec<&serde_json::Value> {
            log.iter()
                .filter(|r| r["url"].as_str().is_some_and(|u| u.ends_with(suffix)))
                .collect()
        };
        let index = lines("/sitemap-storage-index.xml");
        assert_eq!(index.len(), 1, "{index:?}");
        let via = index[0]["via"].as_str().unwrap_or_default();
        assert!(
            via.contains("h000001.") && via.ends_with("/robots.txt"),
            "{}",
            index[0]
        );
        let storage = lines("/sitemap-storage.xml");
        assert_eq!(storage.len(), 1, "read once: {storage:?}");
        assert_eq!(storage[0]["status"], 200, "{}", storage[0]);
        let notes = annotations(storage[0]);
        for note in ["sitemap:urlset:4", "sitemap-refused:1"] {
            assert!(
                notes.contains(&note.to_owned()),
                "{}: {notes:?}",
                out.display()
            );
        }
        for k in 0..4 {
            let page = lines(&format!("/smb/{k}"));
            assert!(!page.is_empty(), "/smb/{k} not in {}", out.display());
            assert_eq!(page[0]["hops"], "SSS", "{}", page[0]);
        }
        assert_eq!(
            stats_json(out)["sitemap_urls_refused"],
            refused,
            "{}",
            out.display()
        );
    }
    eprintln!(
        "crawl_sitemaps: {with_via} previous URLs re-queued with their c1 referrer; the \
         storage sitemap read once in each skip re-crawl (4 taken, 1 refused)"
    );
    eprintln!(
        "crawl_sitemaps: {} URLs listed with a lastmod, {} fetched 2xx before; skip mode \
         skipped {} ({} URLs answered), default mode answered {}",
        listed.len(),
        want.len(),
        got.len(),
        requested.len(),
        crawl_support::fetched_urls(&log).len()
    );
}

/// Checks that each previous URL's first line in the re-crawl `again` names the
/// referrer the first crawl `first` gave it (its index entry's, and its first answered
/// line's in `first`'s log), and that `again`'s own index keeps it. Returns how many
/// of the URLs checked have a referrer.
fn same_referrers(first: &Path, again: &Path) -> usize {
    let index1 = trawl::recrawl::read_latest(&first.join("recrawl.idx"))
        .unwrap()
        .0;
    let mut via1: BTreeMap<String, serde_json::Value> = BTreeMap::new();
    for r in crawl_log(first) {
        if !r["status"].is_null() && r["hops"] != "P" {
            let url = r["url"].as_str().unwrap().to_owned();
            via1.entry(url).or_insert_with(|| r["via"].clone());
        }
    }
    let (mut checked, mut with_via) = (0, 0);
    let mut seen = BTreeSet::new();
    for r in crawl_log(again) {
        let url = r["url"].as_str().unwrap();
        if r["hops"] == "P" || !seen.insert(url.to_owned()) {
            continue;
        }
        let Some(e) = index1.get(url) else { continue };
        assert_eq!(
            r["via"].as_str(),
            e.via.as_deref(),
            "{}: {r}",
            again.display()
        );
        assert_eq!(r["via"], via1[url], "{}: {r}", again.display());
        checked += 1;
        with_via += usize::from(e.via.is_some());
    }
    assert_eq!(checked, index1.len(), "{}", again.display());
    assert!(with_via * 2 > checked, "{with_via} of {checked}");
    let index2 = trawl::recrawl::read_latest(&again.join("recrawl.idx"))
        .unwrap()
        .0;
    for (url, e) in &index1 {
        assert_eq!(index2[url].via, e.via, "{}: {url}", again.display());
    }
    with_via
}
