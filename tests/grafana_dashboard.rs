//! The Grafana dashboard (`tools/grafana/trawl.json`) queries only metrics that exist:
//! every metric name its PromQL uses, and every label value it selects, is checked
//! against `/metrics` scraped from a real crawl of a loopback site (farm metrics, which
//! only a farm node has, against `render` of stats with farm figures).

// Test helpers outside #[test] functions: a panic is the failure report.
#![allow(clippy::unwrap_used)]

mod support;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use trawl::engine::metrics::render;
use trawl::engine::{Crawler, Stats};

fn dashboard() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/grafana/trawl.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).expect("dashboard is JSON")
}

/// Every PromQL expression of the dashboard: panel targets and template queries.
fn expressions(dash: &Value) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                for (k, v) in map {
                    match (k.as_str(), v) {
                        ("expr" | "definition", Value::String(s)) => out.push(s.clone()),
                        ("query", Value::Object(q)) => {
                            if let Some(Value::String(s)) = q.get("query") {
                                out.push(s.clone());
                            }
                        }
                        _ => walk(v, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(dash, &mut out);
    out
}

/// Whether every `rate(` / `increase(` in `expr` takes a range vector: its argument, up
/// to the matching parenthesis, ends with a `[...]` range selector
/// (`rate(m{...}[$__rate_interval])`, not `rate(m{...,$__rate_interval})`, which
/// Prometheus refuses).
fn range_functions_have_ranges(expr: &str) -> bool {
    let mut rest = expr;
    while let Some(at) = ["rate(", "increase("]
        .iter()
        .filter_map(|f| rest.find(f).map(|i| i + f.len()))
        .min()
    {
        let arg = &rest[at..];
        let mut depth = 1i32;
        let Some(end) = arg.char_indices().find_map(|(i, c)| {
            depth += match c {
                '(' => 1,
                ')' => -1,
                _ => 0,
            };
            (depth == 0).then_some(i)
        }) else {
            return false;
        };
        if !arg[..end].trim_end().ends_with(']') {
            return false;
        }
        rest = &arg[end..];
    }
    true
}

/// Metric names (`trawl_...`) in one expression.
fn metric_names(expr: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let bytes = expr.as_bytes();
    let mut i = 0;
    while let Some(at) = expr.get(i..).and_then(|r| r.find("trawl_")) {
        let start = i + at;
        let before_ok = start == 0 || !is_name_byte(bytes[start - 1]);
        let mut end = start;
        while end < bytes.len() && is_name_byte(bytes[end]) {
            end += 1;
        }
        if before_ok {
            names.insert(expr[start..end].to_owned());
        }
        i = end;
    }
    names
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b':'
}

/// The equality matchers of each selector (`name{k="v",...}`), instance aside, as
/// the series names the exposition would hold: `name{k="v"}`.
fn selected_series(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    for name in metric_names(expr) {
        let open = format!("{name}{{");
        let mut rest = expr;
        while let Some(at) = rest.find(&open) {
            let inner = &rest[at + open.len()..];
            let close = inner.find('}').expect("closed selector");
            for matcher in inner[..close].split(',') {
                if let Some((k, v)) = matcher.split_once('=') {
                    let eq = !k.ends_with('!') && !v.starts_with('~');
                    if eq && k.trim() != "instance" {
                        out.push(format!("{name}{{{}={}}}", k.trim(), v.trim()));
                    }
                }
            }
            rest = &inner[close..];
        }
    }
    out
}

/// Names with a `# TYPE` line, and sample series (`name{labels}`), of an exposition.
fn exposition(text: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut names = BTreeSet::new();
    let mut series = BTreeSet::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            names.insert(rest.split(' ').next().unwrap().to_owned());
        } else if !line.starts_with('#') {
            series.insert(line.rsplit_once(' ').unwrap().0.to_owned());
        }
    }
    (names, series)
}

#[test]
fn dashboard_is_well_formed() {
    let dash = dashboard();
    assert_eq!(dash["uid"], "trawl-crawl");
    let vars: Vec<&str> = dash["templating"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(vars, ["datasource", "instance"]);
    assert_eq!(dash["templating"]["list"][0]["type"], "datasource");
    assert_eq!(dash["templating"]["list"][0]["query"], "prometheus");
    let mut ids = BTreeSet::new();
    let mut titles = Vec::new();
    for panel in dash["panels"].as_array().unwrap() {
        assert!(ids.insert(panel["id"].as_u64().unwrap()), "duplicate id");
        let title = panel["title"].as_str().unwrap();
        if panel["type"] == "row" {
            continue;
        }
        titles.push(title.to_owned().to_lowercase());
        assert!(
            !panel["description"].as_str().unwrap_or_default().is_empty(),
            "{title}: no description"
        );
        assert_eq!(panel["datasource"]["uid"], "${datasource}", "{title}");
        let targets = panel["targets"].as_array().unwrap();
        assert!(!targets.is_empty(), "{title}: no query");
        let mut refs = BTreeSet::new();
        for t in targets {
            assert_eq!(t["datasource"]["uid"], "${datasource}", "{title}");
            assert!(
                refs.insert(t["refId"].as_str().unwrap()),
                "{title}: refId twice"
            );
            let expr = t["expr"].as_str().unwrap();
            assert!(!metric_names(expr).is_empty(), "{title}: {expr}");
            assert!(expr.contains("instance=~\"$instance\""), "{title}: {expr}");
            let depth = expr.chars().try_fold(0i32, |d, c| {
                let d = match c {
                    '(' | '{' | '[' => d + 1,
                    ')' | '}' | ']' => d - 1,
                    _ => d,
                };
                (d >= 0).then_some(d)
            });
            assert_eq!(depth, Some(0), "{title}: unbalanced {expr}");
            assert!(
                range_functions_have_ranges(expr),
                "{title}: a rate() or increase() without a range selector: {expr}"
            );
        }
    }
    // The panels issue 22 names.
    for want in [
        "pages per second",
        "bytes per second",
        "requests in flight",
        "queued urls (ram and disk)",
        "hosts active / ready but idle",
        "outcomes by kind",
        "memory: rss against the budget",
        "disk: free against the reserve",
        "dns lookups by result",
        "robots.txt fetches and cache",
        "farm links sent / received",
    ] {
        assert!(titles.iter().any(|t| t == want), "no panel {want:?}");
    }
}

#[test]
fn range_selectors_are_checked() {
    assert!(range_functions_have_ranges(
        "sum by (x) (rate(trawl_a{instance=~\"$instance\"}[$__rate_interval]))"
    ));
    assert!(!range_functions_have_ranges(
        "rate(trawl_a{instance=~\"$instance\",$__rate_interval})"
    ));
    assert!(!range_functions_have_ranges(
        "increase(trawl_a[5m]) + rate(trawl_b{x=\"y\"})"
    ));
}

#[test]
fn selector_parsing_finds_names_and_labels() {
    let e = r#"sum by (x) (rate(trawl_a_total{instance=~"$instance",where="ram",k!="v"}[5m])) + trawl_b"#;
    assert_eq!(
        metric_names(e).into_iter().collect::<Vec<_>>(),
        ["trawl_a_total", "trawl_b"]
    );
    assert_eq!(selected_series(e), [r#"trawl_a_total{where="ram"}"#]);
}

/// `/p/k` links `/p/(k+1)` up to `PAGES`, each answer slow enough that the crawl
/// outlives a stats snapshot (published once a second).
const PAGES: usize = 15;

fn site() -> support::ScriptServer {
    support::slow_chain_site(PAGES)
}

/// Scrapes `/metrics` during a real crawl; returns the last scrape that saw a page.
fn scrape_a_crawl() -> String {
    let site = site();
    let dir = tempfile::tempdir().unwrap();
    let (c, metrics) = support::metrics_crawl_config(dir.path(), site.url("/").to_string());
    let done = Arc::new(AtomicBool::new(false));
    let d2 = Arc::clone(&done);
    let scraper = std::thread::spawn(move || {
        let mut seen = None;
        let until = Instant::now() + Duration::from_secs(60);
        while !d2.load(Ordering::Acquire) && Instant::now() < until {
            if let Ok(mut s) = TcpStream::connect_timeout(&metrics, Duration::from_secs(1)) {
                let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                let req = format!("GET /metrics HTTP/1.1\r\nHost: {metrics}\r\n\r\n");
                let _ = s.write_all(req.as_bytes());
                let mut raw = String::new();
                if s.read_to_string(&mut raw).is_ok() && raw.starts_with("HTTP/1.1 200") {
                    if let Some((_, body)) = raw.split_once("\r\n\r\n") {
                        let pages = body
                            .lines()
                            .find_map(|l| l.strip_prefix("trawl_pages_total "))
                            .and_then(|v| v.parse::<f64>().ok())
                            .unwrap_or(0.0);
                        if pages >= 1.0 {
                            seen = Some(body.to_owned());
                        }
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        seen
    });
    let stats = Crawler::builder().config(c).build().unwrap().run().unwrap();
    done.store(true, Ordering::Release);
    assert!(stats.pages >= PAGES as u64, "crawl fetched {}", stats.pages);
    scraper
        .join()
        .unwrap()
        .expect("no scrape during the crawl saw a fetched page")
}

#[test]
fn every_metric_the_dashboard_queries_exists() {
    let exprs = expressions(&dashboard());
    assert!(exprs.len() >= 40, "only {} expressions", exprs.len());
    let (crawl_names, crawl_series) = exposition(&scrape_a_crawl());
    let farm = Stats {
        farm: Some(trawl::farm::FarmStats::default()),
        ..Stats::default()
    };
    let (farm_names, farm_series) = exposition(&render(&farm));
    let mut checked = BTreeSet::new();
    for expr in &exprs {
        for name in metric_names(expr) {
            let found = crawl_names.contains(&name)
                || (name.starts_with("trawl_farm_") && farm_names.contains(&name));
            assert!(found, "{name} (in {expr}) is not served on /metrics");
            checked.insert(name);
        }
        for series in selected_series(expr) {
            assert!(
                crawl_series.contains(&series) || farm_series.contains(&series),
                "{series} (in {expr}) is not served on /metrics"
            );
        }
    }
    // The crawl served the outcome the dashboard stacks, and the budget line.
    assert!(crawl_series.contains("trawl_outcomes_total{outcome=\"fetched\"}"));
    assert!(crawl_series.contains("trawl_memory_budget_bytes"));
    assert!(
        checked.len() >= 40,
        "only {} metrics checked",
        checked.len()
    );
}
