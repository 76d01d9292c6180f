//! The exposition pinned: every family's name, type and labels, the layout, and one
//! figure a sample.

use std::collections::BTreeMap;

use super::*;

/// A snapshot with every figure the exposition reads set, each to its own value.
fn every_figure() -> Stats {
    let mut s = Stats {
        bytes: 2,
        checkpoint_last_bytes: 3,
        checkpoint_last_secs: 4.5,
        checkpoint_total_bytes: 5,
        checkpoint_total_secs: 6.5,
        checkpoints: 7,
        discovered: 8,
        disk_free_bytes: 9,
        disk_paused_secs: 10.5,
        disk_pauses: 11,
        disk_reserve_bytes: 12,
        duplicates: 13,
        elapsed_secs: 14.5,
        frontier_disk_bytes: 15,
        frontier_disk_urls: 16,
        frontier_ram_bytes: 17,
        frontier_ram_urls: 18,
        host_activations: 19,
        host_rotations: 20,
        address_rotations: 1001,
        active_addresses: 1002,
        hosts_active: 21,
        hosts_in_table: 22,
        hosts_known: 23,
        hosts_parked: 24,
        hosts_retired: 25,
        line_records: 26,
        memory_budget_bytes: 27,
        pages: 28,
        pages_links_truncated: 29,
        pages_long_attributes: 30,
        pages_scan_truncated: 31,
        presence_bits_resident_bytes: 32,
        queued: 33,
        robots_cache_bytes: 34,
        robots_cache_evictions: 35,
        robots_cache_hosts: 36,
        robots_cache_hosts_spilled: 37,
        robots_cache_index_bytes: 38,
        robots_fetch_refreshes: 39,
        robots_fetch_retries: 40,
        robots_fetches: 41,
        robots_fetches_max_per_host: 42,
        robots_hosts_refetched_while_fresh: 43,
        robots_long_lines: 44,
        robots_truncated: 45,
        rss_less_presence_bits_bytes: 46,
        seen_expected_fp: 47.5,
        seen_file_bytes: 48,
        seen_fill_ratio: 49.5,
        sitemap_urls_refused: 50,
        sitemaps_cut: 51,
        sitemaps_failed: 52,
        sitemaps_read: 53,
        warc_revisits: 54,
        paused: Some("disk".to_owned()),
        width: crate::engine::WidthStats {
            hosts_ready_idle: 55,
            requests_in_flight: 56,
            requests_in_flight_peak: 57,
            requests_waiting_for_address: 58,
            requests_waiting_for_dns: 59,
            urls_refused_budget: 60,
            dns: crate::engine::observe::width::DnsFigures {
                cache_hits: 61,
                dead_names: 62,
                failed_dead: 63,
                failed_local: 64,
                failed_no_name: 65,
                failed_server: 66,
                failed_timeout: 67,
                in_flight: 68,
                queries_sent: 69,
                queued: 70,
                retransmits: 71,
                succeeded: 72,
                tcp_fallbacks: 73,
                ..Default::default()
            },
            ..Default::default()
        },
        ..Stats::default()
    };
    s.outcomes.insert("fetched".to_owned(), 990);
    s.outcomes.insert("connect-error".to_owned(), 10);
    s
}

/// Every family in exposition order, with its type and the labels of its samples
/// (`every_figure`'s two outcomes): dashboards and alerts hold on to these, so a
/// change here is a change of the interface (docs/monitoring.md).
const PINNED: &[(&str, &str, &[&str])] = &[
    ("trawl_pages_total", "counter", &[]),
    ("trawl_bytes_total", "counter", &[]),
    ("trawl_discovered_urls_total", "counter", &[]),
    ("trawl_duplicate_pages_total", "counter", &[]),
    (
        "trawl_pages_truncated_total",
        "counter",
        &[
            "cap=\"links\"",
            "cap=\"scan_bytes\"",
            "cap=\"attribute_bytes\"",
        ],
    ),
    (
        "trawl_robots_truncated_total",
        "counter",
        &["cap=\"size\"", "cap=\"line\""],
    ),
    ("trawl_robots_fetches_total", "counter", &[]),
    ("trawl_robots_cache_hosts", "gauge", &[]),
    ("trawl_robots_cache_bytes", "gauge", &[]),
    ("trawl_robots_cache_evictions_total", "counter", &[]),
    ("trawl_robots_cache_hosts_spilled", "gauge", &[]),
    ("trawl_robots_cache_index_bytes", "gauge", &[]),
    ("trawl_robots_fetches_max_per_host", "gauge", &[]),
    (
        "trawl_robots_refetches_total",
        "counter",
        &["why=\"refresh\"", "why=\"retry\"", "why=\"fresh\""],
    ),
    (
        "trawl_sitemaps_total",
        "counter",
        &["result=\"read\"", "result=\"cut\"", "result=\"failed\""],
    ),
    ("trawl_sitemap_urls_refused_total", "counter", &[]),
    ("trawl_warc_revisit_records_total", "counter", &[]),
    ("trawl_queued_urls", "gauge", &[]),
    (
        "trawl_frontier_urls",
        "gauge",
        &["where=\"ram\"", "where=\"disk\""],
    ),
    (
        "trawl_frontier_bytes",
        "gauge",
        &["where=\"ram\"", "where=\"disk\""],
    ),
    ("trawl_hosts_active", "gauge", &[]),
    ("trawl_hosts_known", "gauge", &[]),
    ("trawl_hosts_in_table", "gauge", &[]),
    ("trawl_line_records", "gauge", &[]),
    ("trawl_hosts_retired_total", "counter", &[]),
    ("trawl_host_activations_total", "counter", &[]),
    ("trawl_host_rotations_total", "counter", &[]),
    ("trawl_host_address_rotations_total", "counter", &[]),
    ("trawl_active_addresses", "gauge", &[]),
    ("trawl_requests_in_flight", "gauge", &[]),
    ("trawl_requests_in_flight_peak", "gauge", &[]),
    ("trawl_requests_waiting_for_address", "gauge", &[]),
    ("trawl_requests_waiting_for_dns", "gauge", &[]),
    ("trawl_hosts_ready_idle", "gauge", &[]),
    ("trawl_urls_refused_budget_total", "counter", &[]),
    (
        "trawl_dns_lookups",
        "gauge",
        &["state=\"in_flight\"", "state=\"queued\""],
    ),
    (
        "trawl_dns_lookups_total",
        "counter",
        &[
            "result=\"cache_hit\"",
            "result=\"succeeded\"",
            "result=\"no_name\"",
            "result=\"timeout\"",
            "result=\"dead\"",
            "result=\"server_error\"",
            "result=\"local_limit\"",
        ],
    ),
    ("trawl_dns_dead_names", "gauge", &[]),
    (
        "trawl_dns_queries_total",
        "counter",
        &["kind=\"sent\"", "kind=\"retransmit\"", "kind=\"tcp\""],
    ),
    ("trawl_hosts_parked_total", "counter", &[]),
    (
        "trawl_outcomes_total",
        "counter",
        &["outcome=\"connect-error\"", "outcome=\"fetched\""],
    ),
    ("trawl_seen_fill_ratio", "gauge", &[]),
    ("trawl_seen_false_positive_rate", "gauge", &[]),
    ("trawl_seen_file_bytes", "gauge", &[]),
    ("trawl_checkpoints_total", "counter", &[]),
    ("trawl_paused", "gauge", &[]),
    ("trawl_disk_pauses_total", "counter", &[]),
    ("trawl_disk_paused_seconds_total", "counter", &[]),
    (
        "trawl_disk_bytes",
        "gauge",
        &["kind=\"free\"", "kind=\"reserve\""],
    ),
    ("trawl_checkpoint_written_bytes_total", "counter", &[]),
    ("trawl_checkpoint_last_bytes", "gauge", &[]),
    ("trawl_checkpoint_seconds_total", "counter", &[]),
    ("trawl_checkpoint_last_seconds", "gauge", &[]),
    (
        "trawl_resident_bytes",
        "gauge",
        &["part=\"presence_bits\"", "part=\"rest\""],
    ),
    ("trawl_memory_budget_bytes", "gauge", &[]),
    ("trawl_elapsed_seconds", "gauge", &[]),
];

/// The families of an exposition: name, type and the labels of each sample.
fn families(text: &str) -> Vec<(String, String, Vec<String>)> {
    let mut out: Vec<(String, String, Vec<String>)> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("TYPE kind");
            out.push((name.to_owned(), kind.to_owned(), Vec::new()));
        } else if !line.starts_with('#') {
            let (series, _) = line.rsplit_once(' ').expect("sample value");
            let family = out.last_mut().expect("sample after its TYPE");
            assert!(series.starts_with(family.0.as_str()), "{line}");
            if let Some(labels) = series.split_once('{').map(|(_, l)| l) {
                family.2.push(labels.trim_end_matches('}').to_owned());
            }
        }
    }
    out
}

#[test]
fn every_family_name_type_and_label_set_is_pinned() {
    let want: Vec<(String, String, Vec<String>)> = PINNED
        .iter()
        .map(|(n, k, ls)| {
            let labels = ls.iter().map(|l| (*l).to_owned()).collect();
            ((*n).to_owned(), (*k).to_owned(), labels)
        })
        .collect();
    assert_eq!(families(&render(&every_figure())), want);
    let table: Vec<(&str, &str)> = FAMILIES.iter().map(|f| (f.name, f.kind.name())).collect();
    let pinned: Vec<(&str, &str)> = PINNED.iter().map(|(n, k, _)| (*n, *k)).collect();
    assert_eq!(table, pinned);
}

#[test]
fn every_sample_reads_its_own_figure() {
    let text = render(&every_figure());
    let mut values = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (series, v) = line.rsplit_once(' ').expect("sample value");
        if series.starts_with("trawl_outcomes_total") || series == "trawl_paused" {
            continue;
        }
        if let Some(other) = values.insert(v.to_owned(), series.to_owned()) {
            panic!("{series} and {other} read the same figure ({v})");
        }
    }
    assert!(
        !values.contains_key("0"),
        "a figure every_figure does not set"
    );
    assert!(text.contains("\ntrawl_paused 1\n"));
}

#[test]
fn a_family_is_help_type_then_samples() {
    let mut out = String::new();
    FAMILIES[0].write(&every_figure(), &mut out);
    assert_eq!(
        out,
        "# HELP trawl_pages_total Pages fetched (responses of any status).\n\
         # TYPE trawl_pages_total counter\n\
         trawl_pages_total 28\n"
    );
    let empty = render(&Stats::default());
    assert!(empty.contains("# TYPE trawl_outcomes_total counter\n# HELP trawl_seen_fill_ratio"));
}

#[test]
fn odd_floats_and_labels_are_escaped() {
    assert_eq!(value(f64::NAN), "NaN");
    assert_eq!(value(f64::INFINITY), "+Inf");
    assert_eq!(value(1.5), "1.5");
    assert_eq!(label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}
