//! The acceptance crawls of issue 29 through real proxies (notes §13, tests 1 to 4):
//! `trawl crawl` of one synthweb world (HTTP and HTTPS seeds on 12 hosts, the default
//! profile, nothing random in what is served) directly, through squid, through
//! microsocks as `socks5` and as `socks5h`, and through danted; with wrong and right
//! credentials; through a squid that is killed mid-crawl and started again; and with a
//! rules file that splits the hosts between `direct`, squid and microsocks.
//!
//! Every crawl has a User-Agent of its own, so the crawls run in parallel against one
//! synthweb and its request log still tells them apart; each proxy has its own source
//! address (the harness's egress tagging), so synthweb's log also tells which route
//! served each request, without trusting the proxy's own log (which is checked too).
//! The direct crawl is the reference: it runs once, and every case compares with it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod crawl_support;
mod proxy_support;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::net::Ipv4Addr;
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use proxy_support::{
    assert_same_set, leaks, scheme_less, secrets_of, via, Lab, Run, SquidConfig, WebRequest,
    DANTED_EGRESS, DIRECT_EGRESS, MICROSOCKS_EGRESS, PASSWORD, SQUID_EGRESS, USER, WORLD,
};

/// A wrong password, distinct enough for the leak check.
const WRONG_PASSWORD: &str = "Wr0ngPw5zq";

/// The outer test: everything runs in a namespace of its own.
#[test]
fn proxy_crawl() {
    proxy_support::run_in_namespace("inner_proxy_crawl", false, Duration::from_secs(480));
}

/// The inner test (a no-op outside the namespace): one world, the cases in parallel.
#[test]
fn inner_proxy_crawl() {
    let Some(lab) = Lab::enter(&WORLD) else {
        return;
    };
    proxy_support::run_cases(
        &lab,
        &[
            ("same_crawl_each_route", same_crawl_each_route),
            (
                "bad_credentials_end_the_crawl",
                bad_credentials_end_the_crawl,
            ),
            ("proxy_outage", proxy_outage),
            ("rules_route_each_host", rules_route_each_host),
        ],
    );
}

/// The crawl `name` with `extra` flags, no delay, waited for (at most 240 s).
fn crawl(lab: &Lab, name: &str, extra: &[String]) -> Run {
    lab.named_crawl(name, 0, extra, &[], Duration::from_secs(240))
}

/// The direct crawl every case compares with: run once, by the first case that asks.
fn direct(lab: &Lab) -> &'static Run {
    static DIRECT: OnceLock<Run> = OnceLock::new();
    DIRECT.get_or_init(|| {
        let run = crawl(lab, "direct", &[]);
        run.assert_succeeded();
        // Every manifest URL (synthweb's manifest is of HTTP URLs), in either scheme.
        let fetched: BTreeSet<String> = crawl_support::fetched_urls(&run.crawl.log)
            .iter()
            .map(|u| scheme_less(u))
            .collect();
        let (m, _) = lab.web.manifest();
        let m: BTreeSet<String> = m.iter().map(|u| scheme_less(u)).collect();
        let missed: Vec<_> = m.difference(&fetched).take(5).collect();
        assert!(
            missed.is_empty(),
            "direct: manifest URLs not fetched {missed:?}"
        );
        assert!(
            run.urls().iter().any(|u| u.starts_with("https://")),
            "no HTTPS page fetched"
        );
        assert_eq!(run.peers(lab), [DIRECT_EGRESS].into());
        run
    })
}

/// Asserts that `run` logged the reference's `(url, outcome, status)` set (URLs
/// [`scheme_less`]: see [`Run::outcomes_any_scheme`]), listing the differences.
fn assert_same_outcomes(run: &Run, reference: &Run) {
    assert_same_set(
        &run.outcomes_any_scheme(),
        &reference.outcomes_any_scheme(),
        &format!(
            "{}'s (url, outcome, status) against {}'s",
            run.name, reference.name
        ),
    );
}

/// Asserts that each `response` and `revisit` record of `run` has the
/// `WARC-IP-Address` of its origin when `knows`, and none otherwise.
fn assert_warc_ip_addresses(lab: &Lab, run: &Run, knows: bool) {
    let ips = run.warc_ip_addresses();
    assert!(!ips.is_empty(), "{}: no response records", run.name);
    for (uri, ip) in &ips {
        let host = url::Url::parse(uri).unwrap();
        let origin = lab
            .hosts
            .iter()
            .find(|h| Some(h.name.as_str()) == host.host_str())
            .map(|h| h.addr.to_string());
        let want = if knows { origin } else { None };
        assert_eq!(ip, &want, "{}: WARC-IP-Address of {uri}", run.name);
    }
}

/// The `name:port` authorities of `requests` of one scheme.
fn authorities(requests: &[WebRequest], scheme: &str) -> BTreeSet<String> {
    requests
        .iter()
        .filter(|r| r.scheme == scheme)
        .map(|r| r.host.clone())
        .collect()
}

/// `name:port` as `address:port`, by the lab's hosts.
fn by_address(lab: &Lab, authority: &str) -> String {
    let (name, port) = authority.rsplit_once(':').expect("name:port");
    let host = lab
        .hosts
        .iter()
        .find(|h| h.name == name)
        .unwrap_or_else(|| panic!("{name} is not a lab host"));
    format!("{}:{port}", host.addr)
}

/// Test 1: direct, squid, microsocks as `socks5` and `socks5h`, and danted (`socks5h`)
/// give the same `(url, outcome, status)` set; synthweb saw each proxied crawl from
/// its proxy's address only; each proxy's log shows every origin the crawl reached;
/// `WARC-IP-Address` is there when trawl connected to the origin's address itself.
fn same_crawl_each_route(lab: &Lab) {
    let squid = lab.squid("routes", SquidConfig::default());
    let socks = lab.microsocks("routes", false);
    let dante = lab.danted("routes");
    // trawl's own DNS is dead for the crawls whose proxy resolves.
    let dead = lab.dead_resolv_conf().display().to_string();
    let dead_dns = |mut flags: Vec<String>| {
        flags.extend(["--resolv-conf".to_owned(), dead.clone()]);
        flags
    };
    let specs: Vec<(&str, Vec<String>)> = vec![
        ("squid", dead_dns(via(&squid.url()))),
        ("socks5", via(&socks.url("socks5"))),
        ("socks5h", dead_dns(via(&socks.url("socks5h")))),
        ("danted", dead_dns(via(&dante.url("socks5h")))),
    ];
    let (reference, runs) = std::thread::scope(|s| {
        let reference = s.spawn(|| direct(lab));
        let runs: Vec<Run> = specs
            .iter()
            .map(|(name, flags)| s.spawn(move || crawl(lab, name, flags)))
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().expect("crawl"))
            .collect();
        (reference.join().expect("direct crawl"), runs)
    });
    let by_name = |n: &str| runs.iter().find(|r| r.name == n).unwrap();

    // The direct crawl: every response record has its origin's address.
    assert_warc_ip_addresses(lab, reference, true);
    assert_eq!(reference.routes().keys().collect::<Vec<_>>(), ["-"]);

    for run in &runs {
        run.assert_succeeded();
        assert_same_outcomes(run, reference);
        let egress = match run.name.as_str() {
            "squid" => SQUID_EGRESS,
            "danted" => DANTED_EGRESS,
            _ => MICROSOCKS_EGRESS,
        };
        assert_eq!(
            run.peers(lab),
            [egress].into(),
            "{}: synthweb saw requests from elsewhere",
            run.name
        );
        // WARC-IP-Address where trawl knew the origin's address (socks5), not where
        // the proxy resolved the name.
        assert_warc_ip_addresses(lab, run, run.name == "socks5");
        // The crawl log names the route, by the proxy's URL.
        let label = match run.name.as_str() {
            "squid" => squid.url(),
            "danted" => dante.url("socks5h"),
            scheme => socks.url(scheme),
        };
        assert_eq!(
            run.routes(),
            [(label, run.crawl.log.len())].into(),
            "{}: the crawl log's route field",
            run.name
        );
    }

    // Each proxy's own log: every origin the crawl reached went through it.
    let squid_run = by_name("squid");
    let requests = squid_run.requests(lab);
    let log = squid.access_log();
    let gets: BTreeSet<String> = log
        .iter()
        .filter(|l| l.method == "GET")
        .map(|l| l.url.clone())
        .collect();
    let http: BTreeSet<String> = requests
        .iter()
        .filter(|r| r.scheme == "http")
        .map(WebRequest::url)
        .collect();
    assert_same_set(
        &gets,
        &http,
        "squid's GETs against synthweb's HTTP requests",
    );
    // One for one: squid relayed each GET once, and synthweb saw nothing else.
    assert_eq!(
        log.iter().filter(|l| l.method == "GET").count(),
        requests.iter().filter(|r| r.scheme == "http").count(),
        "squid's GETs against synthweb's HTTP requests, counted"
    );
    let connects: BTreeSet<String> = log
        .iter()
        .filter(|l| l.method == "CONNECT")
        .map(|l| l.url.clone())
        .collect();
    assert_same_set(
        &connects,
        &authorities(&requests, "https"),
        "squid's CONNECTs against synthweb's HTTPS hosts",
    );
    // Each request squid took was relayed. The harness's readiness probe (a connect
    // without a request, `wait_port`) is logged `NONE_NONE/000 -
    // error:transaction-end-before-headers`; trawl made no such connection.
    let refused: Vec<_> = log
        .iter()
        .filter(|l| l.method != "-" && !matches!(l.code.as_str(), "TCP_MISS" | "TCP_TUNNEL"))
        .take(10)
        .collect();
    assert!(refused.is_empty(), "squid did not relay: {refused:?}");
    let unused = log.iter().filter(|l| l.method == "-").count();
    assert_eq!(unused, 1, "connections to squid without a request");
    eprintln!(
        "squid: {} GETs, {} CONNECTs",
        log.iter().filter(|l| l.method == "GET").count(),
        connects.len()
    );

    // microsocks: one log line per connection, the address for socks5, the name for
    // socks5h.
    let connected: Vec<String> = socks.connected();
    for (name, resolve) in [("socks5", true), ("socks5h", false)] {
        let requests = by_name(name).requests(lab);
        let want: BTreeSet<String> = requests
            .iter()
            .map(|r| {
                if resolve {
                    by_address(lab, &r.host)
                } else {
                    r.host.clone()
                }
            })
            .collect();
        let got: BTreeSet<String> = connected
            .iter()
            .filter(|t| want.contains(*t))
            .cloned()
            .collect();
        assert_same_set(&got, &want, &format!("{name}: microsocks' connections"));
    }
    // Nothing else went through it.
    let names: BTreeSet<String> = ["socks5", "socks5h"]
        .iter()
        .flat_map(|n| by_name(n).requests(lab))
        .flat_map(|r| [r.host.clone(), by_address(lab, &r.host)])
        .collect();
    assert!(
        connected.iter().all(|t| names.contains(t)),
        "microsocks connected elsewhere:\n{}",
        socks.log()
    );

    // danted: a `tcp/connect` line per connection, `-> EGRESS TARGET`.
    let dante_log = dante.log();
    let targets: BTreeSet<String> = dante_log
        .lines()
        .filter(|l| l.contains("tcp/connect ["))
        .filter_map(|l| l.split(" -> ").nth(1))
        .filter_map(|rest| rest.split_whitespace().nth(1))
        .map(str::to_owned)
        .collect();
    let want: BTreeSet<String> = by_name("danted")
        .requests(lab)
        .iter()
        .map(|r| {
            let (addr, port) = by_address(lab, &r.host)
                .rsplit_once(':')
                .map(|(a, p)| (a.to_owned(), p.to_owned()))
                .unwrap();
            format!("{addr}.{port}")
        })
        .collect();
    assert_same_set(&targets, &want, "danted's connections");
}

/// Test 2: wrong credentials to squid (`--proxy-user-file`) and to microsocks
/// (`--proxy-user-env`): every URL is logged `proxy-auth`, nothing reaches synthweb,
/// the crawl ends on its own within 30 s, and no trace of the password is left in
/// its directory or output. The right password through squid crawls as directly.
fn bad_credentials_end_the_crawl(lab: &Lab) {
    // Two squids: squid 5.7 keeps one credentials record per user name, and a request
    // with the wrong password can pass on the strength of a concurrent request with
    // the right one (seen: robots.txt relayed to synthweb for the wrong password).
    let auth = SquidConfig {
        auth: true,
        ..SquidConfig::default()
    };
    let squid = lab.squid("authwrong", auth);
    let good_squid = lab.squid("authgood", auth);
    let socks = lab.microsocks("auth", true);
    let creds = lab.subdir("credentials");
    let wrong_file = creds.join("wrong");
    let good_file = creds.join("good");
    fs::write(&wrong_file, format!("{USER}:{WRONG_PASSWORD}\n")).unwrap();
    fs::write(&good_file, format!("{USER}:{PASSWORD}\n")).unwrap();
    let user_file = |p: &Path| vec!["--proxy-user-file".to_owned(), p.display().to_string()];
    let socks_url = format!("socks5h://127.0.0.1:{}", socks.port);
    let wrong_pair = format!("{USER}:{WRONG_PASSWORD}");
    let limit = Duration::from_secs(30);
    let (squid_wrong, socks_wrong, squid_good) = std::thread::scope(|s| {
        let a = s.spawn(|| {
            let mut flags = via(&squid.url());
            flags.extend(user_file(&wrong_file));
            lab.named_crawl("squid-wrong", 0, &flags, &[], limit)
        });
        let b = s.spawn(|| {
            let mut flags = via(&socks_url);
            flags.extend(["--proxy-user-env".to_owned(), "PXA_SOCKS_USER".to_owned()]);
            lab.named_crawl(
                "socks-wrong",
                0,
                &flags,
                &[("PXA_SOCKS_USER", &wrong_pair)],
                limit,
            )
        });
        let c = s.spawn(|| {
            let mut flags = via(&good_squid.url());
            flags.extend(user_file(&good_file));
            crawl(lab, "squid-good", &flags)
        });
        (
            a.join().expect("squid-wrong"),
            b.join().expect("socks-wrong"),
            c.join().expect("squid-good"),
        )
    });
    let seeds = lab.seed_urls();
    for run in [&squid_wrong, &socks_wrong] {
        run.assert_succeeded();
        assert!(run.crawl.elapsed < limit, "{}", run.name);
        let not_auth: Vec<_> = run
            .crawl
            .outcomes()
            .into_iter()
            .filter(|(_, o, _)| o != "proxy-auth")
            .take(10)
            .collect();
        assert!(not_auth.is_empty(), "{}: {not_auth:?}", run.name);
        let missing: Vec<_> = seeds.difference(&run.urls()).take(5).cloned().collect();
        assert!(
            missing.is_empty(),
            "{}: seeds not logged {missing:?}",
            run.name
        );
        assert!(
            run.requests(lab).is_empty(),
            "{}: reached synthweb",
            run.name
        );
        assert_no_leak(run, &secrets_of(USER, WRONG_PASSWORD));
    }
    let log = squid.access_log();
    let relayed: Vec<_> = log
        .iter()
        .filter(|l| l.method != "-" && (l.code.as_str(), l.status) != ("TCP_DENIED", 407))
        .take(10)
        .collect();
    assert!(
        relayed.is_empty() && log.iter().any(|l| l.code == "TCP_DENIED"),
        "squid did not deny every request: {relayed:?}"
    );
    assert!(
        socks.connected().is_empty(),
        "microsocks connected for a rejected client:\n{}",
        socks.log()
    );

    squid_good.assert_succeeded();
    assert_same_outcomes(&squid_good, direct(lab));
    assert_eq!(squid_good.peers(lab), [SQUID_EGRESS].into());
    assert!(
        good_squid
            .access_log()
            .iter()
            .any(|l| l.user == USER && l.status == 200),
        "squid logged no authenticated request"
    );
    assert_no_leak(&squid_good, &secrets_of(USER, PASSWORD));
    eprintln!(
        "bad credentials: squid {:.1} s, microsocks {:.1} s",
        squid_wrong.crawl.elapsed.as_secs_f64(),
        socks_wrong.crawl.elapsed.as_secs_f64()
    );
}

/// The leak check (notes §7) over the crawl's directory, stdout and stderr.
fn assert_no_leak(run: &Run, secrets: &[String]) {
    let refs: Vec<&str> = secrets.iter().map(String::as_str).collect();
    let stdout = run.out.with_extension("stdout");
    let stderr = run.out.with_extension("stderr");
    let hits = leaks(&[&run.out, &stdout, &stderr], &refs);
    assert!(
        hits.is_empty(),
        "{}: the password leaked: {hits:?}",
        run.name
    );
}

/// Test 3: squid killed (SIGKILL) 5 s into a crawl through it, and started again on
/// its port 20 s later. The crawl pauses the route and goes on once squid is back: the
/// same URLs as the direct crawl, none given up (`host-parked`), some retried
/// (`proxy-down:retry`), and none left `proxy-unreachable`.
fn proxy_outage(lab: &Lab) {
    const DELAY_MS: u64 = 300;
    let squid = lab.squid("outage", SquidConfig::default());
    let name = "outage";
    let started = Instant::now();
    let (mut child, out) = lab.start_named(name, DELAY_MS, &via(&squid.url()), &[]);
    std::thread::sleep(Duration::from_secs(5));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the crawl ended within 5 s"
    );
    squid.kill();
    let killed = started.elapsed();
    std::thread::sleep(Duration::from_secs(20));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the crawl ended while squid was down"
    );
    squid.restart();
    let restarted = started.elapsed();
    let crawl = lab.wait_crawl(&mut child, &out, Duration::from_secs(300));
    let run = Run {
        name: name.to_owned(),
        out,
        crawl,
    };
    eprintln!(
        "outage: squid killed at {:.1} s, back at {:.1} s, the crawl took {:.1} s, {} lines",
        killed.as_secs_f64(),
        restarted.as_secs_f64(),
        started.elapsed().as_secs_f64(),
        run.crawl.log.len()
    );
    run.assert_succeeded();
    assert!(
        started.elapsed() > Duration::from_secs(40),
        "the crawl was short"
    );
    let reference = direct(lab);
    assert_same_set(
        &run.urls_any_scheme(),
        &reference.urls_any_scheme(),
        "outage: URLs against direct",
    );
    let parked: Vec<_> = run
        .crawl
        .log
        .iter()
        .filter(|r| r["outcome"] == "host-parked")
        .filter_map(|r| r["url"].as_str())
        .take(10)
        .collect();
    assert!(parked.is_empty(), "outage: hosts given up: {parked:?}");
    // The lines of fetches that failed on squid being down, by outcome.
    let mut retried: BTreeMap<String, usize> = BTreeMap::new();
    for r in &run.crawl.log {
        if crawl_support::annotations(r)
            .iter()
            .any(|a| a == "proxy-down:retry")
        {
            *retried
                .entry(r["outcome"].as_str().unwrap_or_default().to_owned())
                .or_default() += 1;
        }
    }
    assert!(!retried.is_empty(), "outage: no proxy-down:retry line");
    let on_proxy: Vec<_> = run
        .finals_any_scheme()
        .into_iter()
        .filter(|(_, o, _)| o.starts_with("proxy-"))
        .take(10)
        .collect();
    assert!(
        on_proxy.is_empty(),
        "outage: URLs ended on the proxy: {on_proxy:?}"
    );
    // Each URL ends as it does directly.
    assert_same_set(
        &run.finals_any_scheme(),
        &reference.finals_any_scheme(),
        "outage: each URL's last (url, outcome, status) against direct",
    );
    assert_eq!(run.peers(lab), [SQUID_EGRESS].into());
    eprintln!("outage: proxy-down:retry lines by outcome {retried:?}");
}

/// Test 4: a rules file sends hosts 0-3 `direct`, 4-7 to squid and 8-11 to
/// microsocks (`socks5`). synthweb, squid's access log and microsocks' log agree.
fn rules_route_each_host(lab: &Lab) {
    let squid = lab.squid("rules", SquidConfig::default());
    let socks = lab.microsocks("rules", false);
    let mut rules = format!(
        "# hosts 0-3 direct, 4-7 squid, 8-11 microsocks\nsquid={}\nsocks={}\n",
        squid.url(),
        socks.url("socks5")
    );
    let route_of = |i: usize| match i {
        0..=3 => "direct",
        4..=7 => "squid",
        _ => "socks",
    };
    for (i, h) in lab.hosts.iter().enumerate() {
        rules.push_str(&format!("{} {}\n", h.name, route_of(i)));
    }
    let file = lab.dir.join("rules.txt");
    fs::write(&file, rules).unwrap();
    let run = crawl(
        lab,
        "rules",
        &["--proxy-rules".to_owned(), file.display().to_string()],
    );
    run.assert_succeeded();
    assert_same_outcomes(&run, direct(lab));
    let egress = |route: &str| match route {
        "direct" => DIRECT_EGRESS,
        "squid" => SQUID_EGRESS,
        _ => MICROSOCKS_EGRESS,
    };
    let requests = run.requests(lab);
    let mut peers: BTreeMap<String, BTreeSet<Ipv4Addr>> = BTreeMap::new();
    for r in &requests {
        let name = r.host.rsplit_once(':').unwrap().0.to_owned();
        peers.entry(name).or_default().insert(r.peer);
    }
    for (i, h) in lab.hosts.iter().enumerate() {
        assert_eq!(
            peers.get(&h.name),
            Some(&[egress(route_of(i))].into()),
            "host {i} ({}) routed {}",
            h.name,
            route_of(i)
        );
    }
    // squid saw hosts 4-7 only, and all of them.
    let host_of = |authority_or_url: &str| {
        lab.hosts
            .iter()
            .position(|h| authority_or_url.contains(&format!("{}:", h.name)))
    };
    let squid_hosts: BTreeSet<usize> = squid
        .access_log()
        .iter()
        .filter(|l| l.method != "-")
        .map(|l| host_of(&l.url).unwrap_or(usize::MAX))
        .collect();
    assert_eq!(squid_hosts, (4..=7).collect(), "squid's hosts");
    // microsocks saw hosts 8-11 only (by address: socks5), and all of them.
    let socks_hosts: BTreeSet<usize> = socks
        .connected()
        .iter()
        .map(|t| {
            let ip = t.rsplit_once(':').unwrap().0;
            lab.hosts
                .iter()
                .position(|h| h.addr.to_string() == ip)
                .unwrap_or(usize::MAX)
        })
        .collect();
    assert_eq!(socks_hosts, (8..=11).collect(), "microsocks' hosts");
    // The crawl log names each line's route, by its name in the rules file.
    let mut routes: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
    for r in &run.crawl.log {
        let i = host_of(r["url"].as_str().unwrap()).unwrap();
        routes
            .entry(i)
            .or_default()
            .insert(r["route"].as_str().unwrap_or("-").to_owned());
    }
    let want: BTreeMap<usize, BTreeSet<String>> = (0..lab.hosts.len())
        .map(|i| (i, [route_of(i).to_owned()].into()))
        .collect();
    assert_eq!(routes, want, "the crawl log's routes by host");
}
