//! Sitemap-only pages crawled by a farm: the links a sitemap yields are routed to their
//! owner node and admitted there as a shard's own.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use crate::checks::{check_nodes_with, check_ownership, referee};
use crate::crawl_support::{self, crawl_args, crawl_log, Synthweb};
use crate::nodes::{node_args_budget, node_dirs, spawn_node, tails, wait_all};
use crate::redis::{redis_available, Redis};
use crate::NODES;

/// Each crawl-log line's URL, outcome and status, as one comparable string.
fn outcomes(log: &[serde_json::Value]) -> BTreeSet<String> {
    log.iter()
        .map(|l| format!("{} {} {}", l["url"], l["outcome"], l["status"]))
        .collect()
}

/// A 3-node farm on standalone Redis crawling the synthweb `web` (budget 300 pages a
/// host, no delay) to its end; returns what must outlive the checks (the temporary
/// directory, Redis), each node's output directory and the referee's report.
fn farm_on_web(web: &[&str]) -> (tempfile::TempDir, Redis, Vec<PathBuf>, serde_json::Value) {
    farm_on_web_after(web, |_, _| {})
}

/// [`farm_on_web`], after `before` has run against the same server (given it and the
/// temporary directory), so that a one-node crawl and the farm see the same web.
fn farm_on_web_after(
    web: &[&str],
    before: impl FnOnce(&Synthweb, &Path),
) -> (tempfile::TempDir, Redis, Vec<PathBuf>, serde_json::Value) {
    let tmp = tempfile::tempdir().unwrap();
    let redis = Redis::standalone(&tmp.path().join("redis"), false);
    let url = redis.url();
    let mut sw = Synthweb::start(&tmp.path().join("web"), web);
    before(&sw, tmp.path());
    let (outs, logs) = node_dirs(tmp.path());
    let mut children: Vec<Child> = (0..NODES)
        .map(|i| {
            let args = node_args_budget(&outs[i as usize], &url, i, 300, 0, &[]);
            spawn_node(&sw, &args, &logs[i as usize], false)
        })
        .collect();
    wait_all(&mut children, Duration::from_secs(120), &logs, &url);
    sw.stop();
    let report = referee(&sw, 0);
    (tmp, redis, outs, report)
}

/// Synthweb's `sitemaps` profile crawled by a farm: the sitemap-only pages (34, behind
/// robots.txt `Sitemap:` lines, indexes, a gzipped sitemap and a sitemap on another
/// host that host 1's robots.txt names) are all fetched, as one node fetches them
/// (`tests/crawl_sitemaps.rs`), and nothing forbidden is. A link routed to its owner
/// node passes the same admission as a shard's own (the sitemap exemption from the
/// refused extensions, the robots.txt grant carried down the chain). One node crawls
/// the same server first: the farm's crawl logs hold the same URLs with the same
/// outcomes and statuses as its (issue 21).
#[test]
fn a_farm_fetches_the_sitemap_only_pages_one_node_fetches() {
    let what = "farm sitemaps";
    if !redis_available(what) {
        return;
    }
    // One node first, on the same server: the farm must fetch what it fetches.
    let mut one_node = BTreeSet::new();
    let (_tmp, _redis, outs, r) = farm_on_web_after(
        &[
            &crawl_support::SITEMAPS_WEB[..],
            &["--manifest-max-pages-per-host", "300"],
        ]
        .concat(),
        |sw, tmp| {
            let out = tmp.join("one-node");
            let mut args = crawl_args(&out, 300, 0);
            args.extend(["--shards".to_owned(), "1".to_owned()]);
            let log = tmp.join("one-node.log");
            let mut child = spawn_node(sw, &args, &log, false);
            let deadline = Instant::now() + Duration::from_secs(120);
            loop {
                if let Some(status) = child.try_wait().unwrap() {
                    assert!(status.success(), "{what}: one node: {}", tails(&[log]));
                    break;
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    panic!("{what}: one node did not finish: {}", tails(&[log]));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            one_node = outcomes(&crawl_log(&out));
        },
    );
    // The same URLs, with the same outcomes and statuses (which node fetched a URL,
    // by which link and when differ, and are not compared).
    let farm: BTreeSet<String> = outs.iter().flat_map(|o| outcomes(&crawl_log(o))).collect();
    let missing: Vec<&String> = one_node.difference(&farm).collect();
    let extra: Vec<&String> = farm.difference(&one_node).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{what}: the farm's (url, outcome, status) differ from one node's: \
         only one node: {missing:#?}\nonly the farm: {extra:#?}"
    );
    assert!(one_node.len() > 34, "{what}: {one_node:#?}");
    let refused: Vec<String> = outs
        .iter()
        .flat_map(|o| crawl_log(o))
        .filter(|l| {
            l["annotations"].as_array().is_some_and(|a| {
                a.iter()
                    .any(|n| n.as_str().is_some_and(|n| n.starts_with("filter:")))
            })
        })
        .map(|l| format!("{} {}", l["url"], l["annotations"]))
        .collect();
    assert_eq!(
        r["sitemap_only_fetched"], r["sitemap_only"],
        "{what}: sitemap-only pages missed; refused by a filter: {refused:#?}\n{r:#}"
    );
    assert_eq!(r["sitemap_only"], 34, "{r:#}");
    assert_eq!(r["forbidden_fetched"]["count"], 0, "{r:#}");
    // 4 hosts over 3 nodes: a node may own none.
    check_nodes_with(&outs, what, 0, false);
}

/// Synthweb's `sitemap-chain` web (10 hosts, `crawl_support::CHAIN_WEB`) crawled by a
/// farm: each host's robots.txt names a gzipped sitemap on the next host listing its
/// `/orphan`, and an index on the next host (named by the robots.txt of the host after
/// too) whose gzipped sitemap on the host after lists its `/orphan-deep`. The hosts
/// are spread over the nodes, so a sitemap URL found in one node's robots.txt is read
/// by another node, and the index's child by a third: the routed link must pass the
/// owner's admission as a shard's own does (a `….xml.gz` on a sitemap hop is not a
/// refused binary), and the robots.txt permissions must travel with it. One node
/// fetches all 20 sitemap-only pages (`tests/crawl_sitemaps.rs`); so must the farm.
#[test]
fn a_farm_follows_sitemap_chains_across_nodes() {
    let what = "farm sitemap chain";
    if !redis_available(what) {
        return;
    }
    let (_tmp, _redis, outs, r) = farm_on_web(&crawl_support::CHAIN_WEB);
    let mut refused = Vec::new();
    for (i, out) in outs.iter().enumerate() {
        for bad in crawl_support::chain_refusals(&crawl_log(out)) {
            refused.push(format!("node {i}: {bad}"));
        }
    }
    eprintln!(
        "{what}: {} of {} sitemap-only pages",
        r["sitemap_only_fetched"], r["sitemap_only"]
    );
    assert_eq!(r["sitemap_only"], 20, "{r:#}");
    assert_eq!(
        r["sitemap_only_fetched"], r["sitemap_only"],
        "{what}: sitemap-only pages missed: {}; refused: {refused:#?}",
        r["sitemap_missed"]
    );
    assert!(refused.is_empty(), "{what}: {refused:#?}");
    assert_eq!(r["forbidden_fetched"]["count"], 0, "{r:#}");
    assert_eq!(r["missed"]["count"], 0, "{r:#}");
    // 10 hosts over 3 nodes: a node owns none about once in 20 runs.
    let sums = check_nodes_with(&outs, what, 0, false);
    eprintln!("{what}: {sums:?}");
    check_ownership(&outs, what);
}
