//! robots.txt benchmarks: parse throughput and `allowed()` cost per URL on a realistic
//! 200-rule file with wildcards (`benches/data/robots_200.txt`), beside the
//! `texting_robots` and `robotstxt` crates doing the same work. Before timing, the
//! three must agree on the verdict of every benchmark URL (and `allowed` must see a
//! mix of both verdicts), so the figures compare equal answers.
//!
//!   cargo bench --bench robots

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use trawl::robots::{Mode, RobotsTxt, Rules};

const ROBOTS: &str = include_str!("data/robots_200.txt");
const URLS: &str = include_str!("data/robots_urls.txt");
const AGENT: &str = "trawl";

fn urls() -> Vec<&'static str> {
    URLS.lines().filter(|l| !l.is_empty()).collect()
}

/// Checks that the three implementations agree, and that the URL set exercises both
/// verdicts. Panics (failing the benchmark) otherwise.
fn validate() {
    let ours = Rules::parse(ROBOTS.as_bytes(), AGENT, Mode::Rfc9309);
    let texting =
        texting_robots::Robot::new(AGENT, ROBOTS.as_bytes()).expect("texting_robots parses");
    let mut disallowed = 0;
    let urls = urls();
    for url in &urls {
        let a = ours.allowed(url);
        let b = texting.allowed(url);
        let c =
            robotstxt::DefaultMatcher::default().one_agent_allowed_by_robots(ROBOTS, AGENT, url);
        assert!(
            a == b && b == c,
            "verdicts differ for {url}: trawl {a}, texting_robots {b}, robotstxt {c}"
        );
        disallowed += usize::from(!a);
    }
    assert!(
        disallowed > urls.len() / 10 && disallowed < urls.len() * 9 / 10,
        "{disallowed} of {} disallowed",
        urls.len()
    );
    assert_eq!(ours.rules().len(), 200, "the * group has 200 rules");
    assert_eq!(ours.crawl_delay(), Some(std::time::Duration::from_secs(2)));
}

fn parse(c: &mut Criterion) {
    validate();
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
