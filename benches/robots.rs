//! robots.txt benchmarks: parse throughput and `allowed()` cost per URL on a realistic
//! 200-rule file with wildcards (`benches/data/robots_200.txt`), beside the
//! `texting_robots` and `robotstxt` crates doing the same work. Before timing, the
//! answers are validated (see [`validate`]), so the figures compare equal work.
//!
//!   cargo bench --bench robots

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use trawl::robots::pattern::{naive_matches, normalize, Side};
use trawl::robots::{match_target, Mode, RobotsTxt, RuleKind, Rules};

const ROBOTS: &str = include_str!("data/robots_200.txt");
const URLS: &str = include_str!("data/robots_urls.txt");
const AGENT: &str = "trawl";

fn urls() -> Vec<&'static str> {
    URLS.lines().filter(|l| !l.is_empty()).collect()
}

/// Whether `robotstxt`, given a file holding only `rule`, decides `url` differently
/// from the plain reading of that one rule (the naive backtracking matcher).
fn robotstxt_misreads(rule: &trawl::robots::Rule, url: &str) -> bool {
    let pattern = String::from_utf8_lossy(rule.pattern()).into_owned();
    // An allow rule is probed against a blanket `disallow: /`, so its match shows.
    let file = match rule.kind() {
        RuleKind::Allow => format!("user-agent: *\ndisallow: /\nallow: {pattern}\n"),
        RuleKind::Disallow => format!("user-agent: *\ndisallow: {pattern}\n"),
    };
    let target = normalize(match_target(url).as_bytes(), Side::Target).into_owned();
    let matches = naive_matches(rule.pattern(), &target);
    let want_allowed = match rule.kind() {
        RuleKind::Allow => matches,
        RuleKind::Disallow => !matches,
    };
    robotstxt::DefaultMatcher::default().one_agent_allowed_by_robots(&file, AGENT, url)
        != want_allowed
}

/// Checks the answers before timing anything: trawl, `texting_robots` and a naive
/// evaluation (every rule through the backtracking matcher, longest wins, allow on a
/// tie) must agree on every URL; `robotstxt` must agree too, except on URLs where it
/// provably misreads a single rule on its own (its `*` matcher drops candidate
/// positions: `/*/feed/` does not match `/en/x/feed/a` for it). The URL set must mix
/// both verdicts. Panics (failing the benchmark) otherwise. Returns the number of
/// URLs on which `robotstxt` is wrong.
fn validate() -> usize {
    let ours = Rules::parse(ROBOTS.as_bytes(), AGENT, Mode::Rfc9309);
    let texting =
        texting_robots::Robot::new(AGENT, ROBOTS.as_bytes()).expect("texting_robots parses");
    let mut disallowed = 0;
    let mut robotstxt_wrong = 0;
    let urls = urls();
    for url in &urls {
        let a = ours.allowed(url);
        let b = texting.allowed(url);
        assert_eq!(
            a, b,
            "verdicts differ for {url}: trawl {a}, texting_robots {b}"
        );
        let target = normalize(match_target(url).as_bytes(), Side::Target).into_owned();
        let best = ours
            .rules()
            .iter()
            .filter(|r| naive_matches(r.pattern(), &target))
            .map(|r| (r.pattern().len(), r.kind() == RuleKind::Allow))
            .max();
        assert_eq!(
            a,
            best.is_none_or(|(_, allow)| allow),
            "naive reference differs for {url}"
        );
        let c =
            robotstxt::DefaultMatcher::default().one_agent_allowed_by_robots(ROBOTS, AGENT, url);
        if c != a {
            assert!(
                ours.rules().iter().any(|r| robotstxt_misreads(r, url)),
                "robotstxt differs for {url} ({c}) without misreading any single rule"
            );
            robotstxt_wrong += 1;
        }
        disallowed += usize::from(!a);
    }
    assert!(
        disallowed > urls.len() / 10 && disallowed < urls.len() * 9 / 10,
        "{disallowed} of {} disallowed",
        urls.len()
    );
    assert_eq!(ours.rules().len(), 200, "the * group has 200 rules");
    assert_eq!(ours.crawl_delay(), Some(std::time::Duration::from_secs(2)));
    eprintln!(
        "validated {} URLs: {disallowed} disallowed; trawl = texting_robots = naive on all; \
         robotstxt wrong on {robotstxt_wrong} (single-rule misreads)",
        urls.len()
    );
    robotstxt_wrong
}

fn parse(c: &mut Criterion) {
    let _robotstxt_wrong = validate();
    let mut group = c.benchmark_group("robots_parse");
    group.throughput(Throughput::Bytes(ROBOTS.len() as u64));
    group.bench_function("trawl", |b| {
        b.iter(|| RobotsTxt::parse(black_box(ROBOTS.as_bytes()), Mode::Rfc9309).rules_for(AGENT))
    });
    group.bench_function("texting_robots", |b| {
        b.iter(|| texting_robots::Robot::new(AGENT, black_box(ROBOTS.as_bytes())).expect("parses"))
    });
    // robotstxt has no parse-only API: it parses while matching one URL.
    group.bench_function("robotstxt_parse_and_match_one", |b| {
        b.iter(|| {
            robotstxt::DefaultMatcher::default().one_agent_allowed_by_robots(
                black_box(ROBOTS),
                AGENT,
                "/",
            )
        })
    });
    group.finish();
}

fn allowed(c: &mut Criterion) {
    let urls = urls();
    let ours = Rules::parse(ROBOTS.as_bytes(), AGENT, Mode::Rfc9309);
    let texting =
        texting_robots::Robot::new(AGENT, ROBOTS.as_bytes()).expect("texting_robots parses");
    let mut group = c.benchmark_group("robots_allowed");
    group.throughput(Throughput::Elements(urls.len() as u64));
    group.bench_function("trawl", |b| {
        b.iter(|| urls.iter().filter(|u| ours.allowed(black_box(u))).count())
    });
    group.bench_function("texting_robots", |b| {
        b.iter(|| {
            urls.iter()
                .filter(|u| texting.allowed(black_box(u)))
                .count()
        })
    });
    // robotstxt re-parses the file for every URL: that is its API.
    group.sample_size(10);
    group.bench_function("robotstxt", |b| {
        b.iter(|| {
            urls.iter()
                .filter(|u| {
                    robotstxt::DefaultMatcher::default().one_agent_allowed_by_robots(
                        ROBOTS,
                        AGENT,
                        black_box(u),
                    )
                })
                .count()
        })
    });
    group.finish();
}

criterion_group!(benches, parse, allowed);
criterion_main!(benches);
