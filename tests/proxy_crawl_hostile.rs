//! The hostile-server crawl through squid (issue 29 acceptance: "the hostile-server
//! tests also pass through squid, with no hang"): `trawl crawl` of synthweb's hostile
//! world (HTTP and HTTPS seeds on 24 hosts, 8 to 23 each misbehaving in one way), once
//! directly and once through squid, in parallel. Both end within a bound and every URL
//! they log has an outcome; the ordinary hosts (0 to 7) end alike both ways; synthweb
//! sees the proxied crawl only from squid's address. What each hostile host comes to
//! through squid, beside directly, is printed (squid 5.7 turns some misbehaviour into
//! its own answers: docs/network.md, "What the real servers send").

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod crawl_support;
mod proxy_support;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use proxy_support::{
    assert_same_set, scheme_less, via, Lab, Run, SquidConfig, HOSTILE_KINDS, HOSTILE_WORLD,
    SQUID_EGRESS,
};

/// The longest either crawl may take (each takes about 25 s alone on an idle machine).
const BOUND: Duration = Duration::from_secs(180);

#[test]
fn proxy_crawl_hostile() {
    proxy_support::run_in_namespace("inner_proxy_crawl_hostile", false, Duration::from_secs(300));
}

#[test]
fn inner_proxy_crawl_hostile() {
    let Some(lab) = Lab::enter(&HOSTILE_WORLD) else {
        return;
    };
    proxy_support::run_cases(&lab, &[("hostile_through_squid", hostile_through_squid)]);
}

/// The index of the lab host `url` is on.
fn host_of(lab: &Lab, url: &str) -> usize {
    let host = url::Url::parse(url).unwrap();
    lab.hosts
        .iter()
        .position(|h| Some(h.name.as_str()) == host.host_str())
        .unwrap_or_else(|| panic!("{url} is on no lab host"))
}

/// `(url, outcome, status)` of every crawl-log line of `run` on the hosts `hosts`,
/// the URL [`scheme_less`] (see [`Run::outcomes_any_scheme`]).
fn outcomes_on(
    lab: &Lab,
    run: &Run,
    hosts: std::ops::Range<usize>,
) -> BTreeSet<(String, String, u64)> {
    run.crawl
        .outcomes()
        .into_iter()
        .filter(|(u, _, _)| hosts.contains(&host_of(lab, u)))
        .map(|(u, o, s)| (scheme_less(&u), o, s))
        .collect()
}

/// What `run` logged on host `i`, per scheme: `outcome status ×count`, most frequent
/// first.
fn summary(lab: &Lab, run: &Run, i: usize, scheme: &str) -> String {
    let mut n: BTreeMap<String, usize> = BTreeMap::new();
    for r in &run.crawl.log {
        let url = r["url"].as_str().unwrap();
        if host_of(lab, url) != i || !url.starts_with(&format!("{scheme}://")) {
            continue;
        }
        let status = r["status"]
            .as_u64()
            .map_or_else(String::new, |s| format!(" {s}"));
        *n.entry(format!("{}{status}", r["outcome"].as_str().unwrap()))
            .or_default() += 1;
    }
    let mut v: Vec<(String, usize)> = n.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v.iter()
        .map(|(k, c)| format!("{k} x{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn hostile_through_squid(lab: &Lab) {
    let squid = lab.squid("hostile", SquidConfig::default());
    let (direct, proxied) = std::thread::scope(|s| {
        let d = s.spawn(|| lab.named_crawl("direct", 0, &[], &[], BOUND));
        let p = s.spawn(|| lab.named_crawl("squid", 0, &via(&squid.url()), &[], BOUND));
        (d.join().expect("direct"), p.join().expect("squid"))
    });
    let seeds = lab.seed_urls();
    for run in [&direct, &proxied] {
        run.assert_succeeded();
        let logged = run.urls();
        let missing: Vec<_> = seeds.difference(&logged).take(5).collect();
        assert!(
            missing.is_empty(),
            "{}: seeds not logged {missing:?}",
            run.name
        );
        let bare: Vec<_> = run
            .crawl
            .log
            .iter()
            .filter(|r| r["outcome"].as_str().is_none_or(str::is_empty))
            .take(5)
            .collect();
        assert!(
            bare.is_empty(),
            "{}: lines without an outcome {bare:?}",
            run.name
        );
        let stats = crawl_support::stats_json(&run.out);
        assert_eq!(stats["finish"], "exhausted", "{}: {stats}", run.name);
    }
    assert_eq!(proxied.peers(lab), [SQUID_EGRESS].into());
    // The ordinary hosts: the same both ways.
    assert_same_set(
        &outcomes_on(lab, &proxied, 0..8),
        &outcomes_on(lab, &direct, 0..8),
        "hosts 0 to 7 through squid against directly",
    );
    let mut table = Vec::new();
    for (k, what) in HOSTILE_KINDS.iter().enumerate() {
        let i = 8 + k;
        for scheme in ["http", "https"] {
            table.push(format!(
                "host {i:>2} {scheme:<5} {what:<54}\n    direct: {}\n    squid:  {}",
                summary(lab, &direct, i, scheme),
                summary(lab, &proxied, i, scheme)
            ));
        }
    }
    eprintln!(
        "hostile hosts, what the crawl log says (direct {:.1} s, squid {:.1} s):\n{}",
        direct.crawl.elapsed.as_secs_f64(),
        proxied.crawl.elapsed.as_secs_f64(),
        table.join("\n")
    );
}
