//! The referee's rules, one crawl log at a time.

use std::collections::BTreeSet;

use super::politeness::host_name;
use super::*;
use crate::formats::{self, ManifestHeader, Robots4xx, Scheme};

const A: &str = "h000001.synth.test:8080";
const B: &str = "h000002.synth.test:8080";
const UA: &str = "trawl/0.1 (+https://example.org/trawl)";

/// A tiny crawl log builder: each request is 10 ms after the previous on its own
/// host's connection, and lasts 1 ms.
struct Crawl {
    lines: Vec<LogLine>,
}

impl Crawl {
    fn new() -> Self {
        Self { lines: Vec::new() }
    }

    fn req(&mut self, t_ms: u64, conn: u64, host: &str, target: &str, status: u16) -> &mut LogLine {
        self.lines.push(LogLine {
            t_us: t_ms * 1000,
            end_us: t_ms * 1000 + 1000,
            conn,
            local: "127.0.1.2:8080".parse().unwrap(),
            peer: "127.0.0.1:40000".parse().unwrap(),
            scheme: Scheme::Http,
            host: host.to_owned(),
            method: "GET".to_owned(),
            target: target.to_owned(),
            user_agent: Some(UA.to_owned()),
            from: Some("ops@example.org".to_owned()),
            accept: Some("text/html".to_owned()),
            accept_encoding: Some("gzip".to_owned()),
            if_none_match: None,
            if_modified_since: None,
            referer: None,
            status,
            body_bytes: 100,
        });
        self.lines.last_mut().unwrap()
    }

    /// A clean crawl of the manifest below: robots first, one connection per host,
    /// 10 ms between starts on each host, the two hosts interleaved.
    fn clean() -> Self {
        let mut c = Self::new();
        c.req(0, 1, A, "/robots.txt", 200);
        c.req(5, 2, B, "/robots.txt", 404);
        c.req(10, 1, A, "/", 200);
        c.req(15, 2, B, "/", 200);
        c.req(20, 1, A, "/p/1", 301);
        c.req(25, 2, B, "/p/~x", 503);
        c.req(30, 1, A, "/p/2", 200);
        c.req(35, 2, B, "/p/~x", 200); // retry after 503
        c.req(40, 1, A, "/p/1", 304).if_none_match = Some("\"e\"".to_owned()); // revalidation
        c.req(45, 2, B, "/hostile", 0); // unlisted
        c
    }
}

fn manifest() -> Manifest {
    let urls = |list: &[&str]| {
        list.iter()
            .map(|s| (*s).to_owned())
            .collect::<BTreeSet<_>>()
    };
    Manifest {
        header: ManifestHeader {
            seed: 1,
            hosts: 2,
            profile: "default".to_owned(),
            agent: "trawl".to_owned(),
            robots_4xx: Robots4xx::Allow,
            params: Default::default(),
        },
        must: urls(&[
            "http://h000001.synth.test:8080/",
            "http://h000001.synth.test:8080/p/1",
            "http://h000001.synth.test:8080/p/2",
            "http://h000002.synth.test:8080/",
            "http://h000002.synth.test:8080/p/~x",
        ]),
        forbidden: urls(&["http://h000001.synth.test:8080/private/x"]),
        sitemap_only: BTreeSet::new(),
    }
}

fn strict() -> CheckPolicy {
    CheckPolicy {
        agent: "trawl".to_owned(),
        min_gap_us: Some(10_000),
        per_host_connections: Some(1),
        per_ip_connections: Some(2),
        max_retries: 2,
    }
}

fn judge(crawl: &Crawl) -> Report {
    check(&crawl.lines, &manifest(), &strict())
}

/// Assert the report fails for exactly `kind`.
fn fails_for(crawl: &Crawl, kind: ViolationKind) -> Report {
    let report = judge(crawl);
    assert!(!report.passed, "{report}");
    assert_eq!(report.violations, vec![kind], "{report}");
    report
}

#[test]
fn clean_log_passes() {
    let report = judge(&Crawl::clean());
    assert!(report.passed, "{report}");
    assert_eq!(report.must_fetched, 5);
    assert_eq!(report.retries, 1);
    assert_eq!(report.revalidations, 1);
    assert_eq!(report.unlisted_requests, 1);
    assert_eq!(report.robots_requests, 2);
    assert_eq!(report.origins, 2);
    assert_eq!(report.max_connections, 1);
    assert_eq!(report.min_gap_us, Some(10_000));
    assert!(report.to_string().starts_with("synthweb referee: PASS"));
}

#[test]
fn clean_log_passes_in_any_line_order() {
    let mut crawl = Crawl::clean();
    crawl.lines.reverse();
    assert!(judge(&crawl).passed);
}

#[test]
fn missed_url_fails() {
    let mut crawl = Crawl::clean();
    crawl.lines.retain(|l| l.target != "/p/2");
    let report = fails_for(&crawl, ViolationKind::Missed);
    assert_eq!(
        report.missed.examples,
        ["http://h000001.synth.test:8080/p/2"]
    );
}

#[test]
fn duplicate_fetch_fails() {
    let mut crawl = Crawl::clean();
    crawl.req(50, 1, A, "/p/2", 200);
    let report = fails_for(&crawl, ViolationKind::Duplicate);
    assert_eq!(
        report.duplicates.examples,
        ["http://h000001.synth.test:8080/p/2"]
    );
}

#[test]
fn refetch_after_success_is_a_duplicate_even_after_a_retry() {
    // 503, retry 200 (fine), then again unconditionally: duplicate.
    let mut crawl = Crawl::clean();
    crawl.req(55, 2, B, "/p/~x", 200);
    fails_for(&crawl, ViolationKind::Duplicate);
}

#[test]
fn alias_of_a_fetched_url_is_a_duplicate_and_non_canonical() {
    let mut crawl = Crawl::clean();
    crawl.req(55, 2, B, "/p/%7ex", 200);
    let report = judge(&crawl);
    assert_eq!(
        report.violations,
        [ViolationKind::Duplicate, ViolationKind::NonCanonicalTarget],
        "{report}"
    );
}

#[test]
fn non_canonical_target_fails_even_without_a_duplicate() {
    let mut crawl = Crawl::clean();
    crawl.lines.retain(|l| l.target != "/p/2");
    crawl.req(30, 1, A, "/p/%32", 200);
    let report = fails_for(&crawl, ViolationKind::NonCanonicalTarget);
    assert_eq!(report.must_fetched, 5);
}

#[test]
fn absolute_form_target_is_non_canonical() {
    let mut crawl = Crawl::clean();
    crawl.req(50, 1, A, "http://h000001.synth.test:8080/p/9", 200);
    fails_for(&crawl, ViolationKind::NonCanonicalTarget);
}

#[test]
fn forbidden_fetch_fails() {
    let mut crawl = Crawl::clean();
    crawl.req(50, 1, A, "/private/x", 200);
    fails_for(&crawl, ViolationKind::ForbiddenFetched);
}

/// The test manifest plus one more M URL on host A.
fn manifest_with(path: &str) -> Manifest {
    let mut m = manifest();
    m.must.insert(format!("http://{A}{path}"));
    m
}

#[test]
fn too_many_retries_fail() {
    let m = manifest_with("/flaky");
    let judge = |crawl: &Crawl| check(&crawl.lines, &m, &strict());
    let fails_for = |crawl: &Crawl, kind| {
        let report = judge(crawl);
        assert_eq!(report.violations, [kind], "{report}");
    };
    let mut crawl = Crawl::clean();
    for (i, t) in [50, 60, 70].into_iter().enumerate() {
        crawl.req(t, 1, A, "/flaky", if i == 2 { 200 } else { 500 });
    }
    // Two retries (after the first two 500s) are within max_retries = 2.
    assert!(judge(&crawl).passed);
    crawl.lines.last_mut().unwrap().status = 500;
    crawl.req(80, 1, A, "/flaky", 500);
    fails_for(&crawl, ViolationKind::ExcessiveRetries);
}

#[test]
fn retry_after_no_response_429_and_408_is_allowed() {
    let m = manifest_with("/x");
    let judge = |crawl: &Crawl| check(&crawl.lines, &m, &strict());
    let fails_for = |crawl: &Crawl, kind| {
        let report = judge(crawl);
        assert_eq!(report.violations, [kind], "{report}");
    };
    for status in [0, 408, 429, 502] {
        let mut crawl = Crawl::clean();
        crawl.req(50, 1, A, "/x", status);
        crawl.req(60, 1, A, "/x", 200);
        assert!(judge(&crawl).passed, "status {status}");
    }
    let mut crawl = Crawl::clean();
    crawl.req(50, 1, A, "/x", 404);
    crawl.req(60, 1, A, "/x", 200);
    fails_for(&crawl, ViolationKind::Duplicate);
}

#[test]
fn robots_missing_fails() {
    let mut crawl = Crawl::clean();
    crawl
        .lines
        .retain(|l| !(l.host == B && l.target == "/robots.txt"));
    let report = fails_for(&crawl, ViolationKind::RobotsNotFirst);
    assert_eq!(report.robots_not_first.count, 1);
    assert!(report.robots_not_first.examples[0].contains("never"));
}

#[test]
fn robots_after_other_path_fails() {
    let mut crawl = Crawl::clean();
    crawl.lines[0].t_us = 50_000; // A's robots.txt now after A's "/" at 10 ms
    crawl.lines[0].end_us = 51_000;
    fails_for(&crawl, ViolationKind::RobotsNotFirst);
}

#[test]
fn request_while_robots_still_in_flight_fails() {
    let mut crawl = Crawl::clean();
    // Answered 6 ms after "/" started at 10 ms: past the end-stamp slack.
    crawl.lines[0].end_us = 16_000;
    fails_for(&crawl, ViolationKind::RobotsNotFirst);
}

#[test]
fn a_robots_end_stamp_a_little_after_the_next_request_is_stamp_jitter() {
    // The server stamped robots.txt's end 2.4 ms after "/" arrived (crawl_e2e on a
    // loaded machine: the crawler had the whole answer before asking "/").
    let mut crawl = Crawl::clean();
    crawl.lines[0].end_us = 12_400;
    assert!(judge(&crawl).passed);
}

#[test]
fn robots_is_per_origin_scheme_and_port() {
    // Same host name on another port: a new origin that needs its own robots.txt.
    let mut crawl = Crawl::clean();
    crawl.req(50, 3, "h000001.synth.test:8443", "/elsewhere", 200);
    fails_for(&crawl, ViolationKind::RobotsNotFirst);
    let mut crawl = Crawl::clean();
    crawl.req(50, 3, A, "/other-scheme", 200).scheme = Scheme::Https;
    fails_for(&crawl, ViolationKind::RobotsNotFirst);
}

#[test]
fn robots_redirect_targets_are_robots_files() {
    let mut m = manifest();
    m.header
        .params
        .insert("robots_files".to_owned(), "/robots-cross.txt".to_owned());
    let mut crawl = Crawl::clean();
    // Two hosts' robots.txt redirect to A's /robots-cross.txt: fetched twice, and on
    // a third origin before that origin's own robots.txt.
    crawl.req(50, 1, A, "/robots-cross.txt", 200);
    crawl.req(60, 1, A, "/robots-cross.txt", 200);
    crawl.req(60, 3, "h000001.synth.test:8443", "/robots-cross.txt", 200);
    let report = check(&crawl.lines, &m, &CheckPolicy::new("trawl"));
    assert!(report.passed, "{report}");
    assert_eq!(report.robots_requests, 5);
    // Without the header parameter they are ordinary paths, requested before the
    // third origin's robots.txt.
    let report = check(&crawl.lines, &manifest(), &CheckPolicy::new("trawl"));
    assert_eq!(
        report.violations,
        [ViolationKind::RobotsNotFirst],
        "{report}"
    );
    assert_eq!(report.unlisted_repeats, 1);
}

#[test]
fn repeats_of_unlisted_urls_are_counted_not_judged() {
    // A hostile host's page cut short (status 200 logged) and retried.
    let mut crawl = Crawl::clean();
    crawl.req(55, 2, B, "/hostile", 200);
    let report = judge(&crawl);
    assert!(report.passed, "{report}");
    assert_eq!(report.unlisted_repeats, 1);
    assert_eq!(report.duplicates.count, 0);
}

#[test]
fn overlapping_connections_fail() {
    let mut crawl = Crawl::clean();
    // A second connection to A whose request [60, 80) ms overlaps "/p/5" at 70 ms
    // by more than the end-stamp slack (5 ms).
    crawl.req(50, 1, A, "/p/3", 200);
    crawl.req(60, 7, A, "/p/4", 200).end_us = 80_000;
    crawl.req(70, 1, A, "/p/5", 200);
    let report = fails_for(&crawl, ViolationKind::TooManyConnections);
    assert_eq!(report.max_connections, 2);
    assert_eq!(
        report.max_connections_host.as_deref(),
        Some("h000001.synth.test")
    );
}

#[test]
fn connections_to_one_address_over_the_limit_fail() {
    // Hosts A and B on one address, one connection each (per-host fine), plus a
    // third host C on the same address: three at once at 60 ms over a limit of 2.
    const C: &str = "h000003.synth.test:8080";
    let mut crawl = Crawl::clean();
    crawl.req(50, 1, A, "/p/3", 200).end_us = 70_000;
    crawl.req(55, 2, B, "/p/4", 200).end_us = 70_000;
    crawl.req(58, 3, C, "/robots.txt", 404).end_us = 61_000;
    let report = fails_for(&crawl, ViolationKind::TooManyIpConnections);
    assert_eq!(report.max_ip_connections, 3);
    assert_eq!(report.max_ip_connections_addr.as_deref(), Some("127.0.1.2"));
    assert_eq!(
        report.over_ip_connection_limit.examples,
        ["127.0.1.2: 3 connections"]
    );
    assert!(report
        .to_string()
        .contains("addresses over the connection limit: 1"));
}

#[test]
fn connections_on_different_addresses_do_not_add_up() {
    const C: &str = "h000003.synth.test:8080";
    let mut crawl = Crawl::clean();
    crawl.req(50, 1, A, "/p/3", 200).end_us = 70_000;
    crawl.req(55, 2, B, "/p/4", 200).end_us = 70_000;
    // Same port, another address; IPv4-mapped IPv6 counts as its IPv4 address.
    crawl.req(58, 3, C, "/robots.txt", 404).local = "127.0.1.3:8080".parse().unwrap();
    crawl.req(70, 4, C, "/", 200).local = "[::ffff:127.0.1.3]:8080".parse().unwrap();
    let report = judge(&crawl);
    assert!(report.passed, "{report}");
    assert_eq!(report.addresses, 2);
    assert_eq!(report.max_ip_connections, 2);
    // Without a limit it is reported, not judged.
    let mut crawl = Crawl::clean();
    crawl.req(50, 1, A, "/p/3", 200).end_us = 70_000;
    crawl.req(55, 2, B, "/p/4", 200).end_us = 70_000;
    crawl.req(58, 3, C, "/robots.txt", 404).end_us = 61_000;
    let mut lax = strict();
    lax.per_ip_connections = None;
    let report = check(&crawl.lines, &manifest(), &lax);
    assert!(report.passed, "{report}");
    assert_eq!(report.max_ip_connections, 3);
}

#[test]
fn overlaps_within_the_end_stamp_slack_are_not_counted() {
    let mut crawl = Crawl::clean();
    // The server stamped the end 0.4 ms after the next request on a new connection
    // started: the stamp race, not two connections at work.
    crawl.req(50, 7, A, "/p/3", 200).end_us = 60_400;
    crawl.req(60, 8, A, "/p/4", 200);
    let report = judge(&crawl);
    assert!(report.passed, "{report}");
    assert_eq!(report.max_connections, 1);
}

#[test]
fn back_to_back_connections_do_not_overlap() {
    let mut crawl = Crawl::clean();
    crawl.req(50, 7, A, "/p/3", 200).end_us = 60_000;
    crawl.req(60, 8, A, "/p/4", 200);
    let report = judge(&crawl);
    assert!(report.passed, "{report}");
    assert_eq!(report.max_connections, 1);
}

#[test]
fn pipelined_requests_on_one_connection_count_once() {
    let mut crawl = Crawl::clean();
    crawl.req(50, 1, A, "/p/3", 200).end_us = 75_000;
    crawl.req(60, 1, A, "/p/4", 200).end_us = 75_000;
    assert_eq!(judge(&crawl).max_connections, 1);
}

#[test]
fn connections_count_per_host_across_ports_and_schemes() {
    let mut crawl = Crawl::clean();
    crawl.req(50, 1, A, "/p/3", 200).end_us = 80_000;
    crawl
        .req(60, 9, "h000001.synth.test:8443", "/robots.txt", 200)
        .scheme = Scheme::Https;
    fails_for(&crawl, ViolationKind::TooManyConnections);
}

#[test]
fn short_gap_fails_robots_included() {
    let mut crawl = Crawl::clean();
    crawl.lines[0].t_us = 9_000; // robots.txt at 9 ms, then "/" at 10 ms on A
    crawl.lines[0].end_us = 9_500;
    let report = fails_for(&crawl, ViolationKind::DelayTooShort);
    assert_eq!(report.min_gap_us, Some(1_000));
    assert_eq!(report.min_gap_host.as_deref(), Some("h000001.synth.test"));
}

#[test]
fn without_limits_politeness_is_reported_not_judged() {
    let mut crawl = Crawl::clean();
    crawl.req(50, 1, A, "/p/3", 200).end_us = 80_000;
    crawl.req(50, 9, A, "/p/4", 200);
    let report = check(&crawl.lines, &manifest(), &CheckPolicy::new("trawl"));
    assert!(report.passed, "{report}");
    assert_eq!(report.max_connections, 2);
    assert_eq!(report.min_gap_us, Some(0));
}

#[test]
fn missing_user_agent_fails() {
    let mut crawl = Crawl::clean();
    crawl.lines[3].user_agent = None;
    fails_for(&crawl, ViolationKind::MissingUserAgent);
    crawl.lines[3].user_agent = Some("  ".to_owned());
    fails_for(&crawl, ViolationKind::MissingUserAgent);
}

#[test]
fn user_agent_must_name_the_agent() {
    let mut crawl = Crawl::clean();
    crawl.lines[3].user_agent = Some("Mozilla/5.0 trawlerbot/1".to_owned());
    let report = fails_for(&crawl, ViolationKind::UserAgentWithoutAgent);
    assert_eq!(
        report.user_agent_without_agent.examples,
        ["Mozilla/5.0 trawlerbot/1"]
    );
    assert!(names_agent("Mozilla/5.0 (compatible; Trawl/0.1)", "trawl"));
    assert!(names_agent("trawl", "trawl"));
    assert!(!names_agent("xtrawl/1", "trawl"));
    assert!(!names_agent("trawl_x/1", "trawl"));
    assert!(!names_agent("tra", "trawl"));
}

#[test]
fn missing_from_fails() {
    let mut crawl = Crawl::clean();
    crawl.lines[5].from = None;
    fails_for(&crawl, ViolationKind::MissingFrom);
}

#[test]
fn missing_host_fails() {
    let mut crawl = Crawl::clean();
    crawl.req(50, 5, "", "/", 400);
    fails_for(&crawl, ViolationKind::MissingHost);
}

#[test]
fn canonical_target_decodes_unreserved_and_upper_cases_the_rest() {
    for (input, expected) in [
        ("/", "/"),
        ("/%7Euser/%7efoo", "/~user/~foo"),
        ("/a%2fb%2Fc", "/a%2Fb%2Fc"),
        ("/%41%5a%30%2D%2e%5F", "/AZ0-._"),
        ("/x?q=%3d%26", "/x?q=%3D%26"),
        ("/%zz/%4", "/%zz/%4"),
        ("/%", "/%"),
        ("/é%c3%a9", "/%C3%A9%C3%A9"),
        ("/a\u{7f}b", "/a%7Fb"),
    ] {
        assert_eq!(canonical_target(input), expected, "{input}");
    }
}

#[test]
fn host_name_strips_the_port() {
    assert_eq!(host_name("h1.synth.test:8080"), "h1.synth.test");
    assert_eq!(host_name("h1.synth.test"), "h1.synth.test");
    assert_eq!(host_name("[::1]:8080"), "[::1]");
    assert_eq!(host_name("[::1]"), "[::1]");
}

#[test]
fn conditional_requests_and_304s_are_counted() {
    let mut crawl = Crawl::clean();
    // The clean crawl already revalidates /p/1 once (answered 304).
    let before = judge(&crawl);
    assert_eq!((before.conditional_requests, before.not_modified), (1, 1));
    // A re-crawl: the same URL again, conditionally, answered 304 (a revalidation,
    // not a duplicate), and another answered 200 in full.
    crawl.req(60, 1, A, "/p/1", 304).if_none_match = Some("\"e\"".to_owned());
    crawl.req(70, 1, A, "/p/2", 200).if_modified_since =
        Some("Sat, 01 Jan 2022 00:00:00 GMT".to_owned());
    let report = judge(&crawl);
    assert!(report.passed, "{report}");
    assert_eq!(report.conditional_requests, 3);
    assert_eq!(report.not_modified, 2);
    assert_eq!(report.revalidations, before.revalidations + 2);
    assert_eq!(report.page_requests, before.page_requests + 2);
    assert!(report.to_string().contains(&format!(
        "conditional: 3 of {} page requests conditional, 2 answered 304",
        report.page_requests
    )));
}

#[test]
fn requests_for_pages_leave_redirects_and_errors_apart() {
    let mut crawl = Crawl::clean();
    let before = judge(&crawl);
    // A re-crawl: a page answered 304 after a conditional request, a redirect and
    // an error URL asked again unconditionally (they carried no validators).
    crawl.req(60, 1, A, "/p/1", 304).if_none_match = Some("\"e\"".to_owned());
    crawl.req(61, 1, A, "/r/301/1", 301);
    crawl.req(62, 1, A, "/missing", 404);
    let report = judge(&crawl);
    assert_eq!(report.page_requests, before.page_requests + 3);
    assert_eq!(report.requests_for_pages, before.requests_for_pages + 1);
    assert_eq!(
        report.conditional_for_pages,
        before.conditional_for_pages + 1
    );
    assert_eq!(
        report.not_modified_for_pages,
        before.not_modified_for_pages + 1
    );
    assert!(report.to_string().contains(&format!(
        "pages: {} of {} requests for pages conditional",
        report.conditional_for_pages, report.requests_for_pages
    )));
}

#[test]
fn sitemap_only_urls_must_be_fetched() {
    let mut m = manifest();
    m.sitemap_only
        .insert("http://h000001.synth.test:8080/sm/0".to_owned());
    m.header.params.insert(
        formats::SITEMAP_FILES_PARAM.to_owned(),
        "/sitemap_index.xml,/sitemap-pages.xml".to_owned(),
    );
    let mut crawl = Crawl::clean();
    let report = check(&crawl.lines, &m, &strict());
    assert_eq!(
        report.violations,
        [ViolationKind::SitemapMissed],
        "{report}"
    );
    assert_eq!(
        report.sitemap_missed.examples,
        ["http://h000001.synth.test:8080/sm/0"]
    );
    crawl.req(50, 1, A, "/sitemap_index.xml", 200);
    crawl.req(60, 1, A, "/sitemap-pages.xml", 200);
    crawl.req(70, 1, A, "/sm/0", 200);
    let report = check(&crawl.lines, &m, &strict());
    assert!(report.passed, "{report}");
    assert_eq!(report.sitemap_requests, 2);
    assert_eq!((report.sitemap_only, report.sitemap_only_fetched), (1, 1));
    assert!(report
        .to_string()
        .contains("sitemaps: 2 requests for sitemap files; 1 of 1 sitemap-only URLs fetched"));
    // Fetched twice without excuse: a duplicate like any M URL.
    crawl.req(80, 1, A, "/sm/0", 200);
    let report = check(&crawl.lines, &m, &strict());
    assert_eq!(report.violations, [ViolationKind::Duplicate], "{report}");
}

#[test]
fn json_report_names_the_violations() {
    let mut crawl = Crawl::clean();
    crawl.req(50, 1, A, "/private/x", 200);
    let json = serde_json::to_value(judge(&crawl)).unwrap();
    assert_eq!(json["passed"], false);
    assert_eq!(json["violations"], serde_json::json!(["forbidden_fetched"]));
    assert_eq!(json["forbidden_fetched"]["count"], 1);
}
