//! Prometheus text metrics (`--metrics-addr`): a tiny blocking server thread that
//! answers `GET /metrics` with the crawl's latest [`Stats`] snapshot.
//!
//! Why so small: a crawler that runs for days needs to be scraped, but the endpoint
//! must never become a way to slow the crawl or to expose it. So it binds loopback only
//! unless the operator explicitly allows otherwise, serves one connection at a time with
//! short timeouts, reads at most [`MAX_REQUEST_BYTES`] of a request and closes every
//! connection after one answer. It never touches the shards: the coordinator publishes a
//! snapshot about once a second and a scrape renders that.

use std::fmt::Write as _;

use super::stats::Stats;

mod control;
mod history;
mod host;
mod server;
mod status;

pub(crate) use server::Console;
pub use server::{MetricsError, MetricsServer, IO_TIMEOUT, MAX_REQUEST_BYTES};

/// A Prometheus sample value: Go-style `NaN` / `+Inf` / `-Inf` for the odd floats.
fn value(v: f64) -> String {
    if v.is_nan() {
        "NaN".to_owned()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.to_owned()
    } else {
        format!("{v}")
    }
}

/// Escapes a label value (backslash, double quote, newline).
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Whether a family only grows (a Prometheus `counter`) or goes up and down (`gauge`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Counter,
    Gauge,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        }
    }
}

/// Reads one sample's value from a snapshot.
type Figure = fn(&Stats) -> f64;

/// How a family's samples are read from a snapshot.
enum Read {
    /// One unlabelled sample.
    One(Figure),
    /// One sample a value of the label (the key), in this order.
    By(&'static str, &'static [(&'static str, Figure)]),
    /// One sample a crawl-log outcome seen so far (`outcome` label).
    Outcomes,
}

/// One metric family of the exposition: a row of [`FAMILIES`].
struct Family {
    name: &'static str,
    kind: Kind,
    help: &'static str,
    read: Read,
}

/// A family of one unlabelled sample.
const fn one(name: &'static str, kind: Kind, help: &'static str, figure: Figure) -> Family {
    Family {
        name,
        kind,
        help,
        read: Read::One(figure),
    }
}

/// A family of one sample a value of the label `key`.
const fn by(
    name: &'static str,
    kind: Kind,
    help: &'static str,
    key: &'static str,
    series: &'static [(&'static str, Figure)],
) -> Family {
    Family {
        name,
        kind,
        help,
        read: Read::By(key, series),
    }
}

use Kind::{Counter, Gauge};

/// Every family `/metrics` serves (but the farm's, `crate::farm::report`), in the
/// order they are written. Names, types, help and label sets are what dashboards and
/// alerts hold on to: `docs/monitoring.md` documents them, tests pin them.
const FAMILIES: &[Family] = &[
    one(
        "trawl_pages_total",
        Counter,
        "Pages fetched (responses of any status).",
        |s| s.pages as f64,
    ),
    one(
        "trawl_bytes_total",
        Counter,
        "Bytes received on the wire.",
        |s| s.bytes as f64,
    ),
    one(
        "trawl_discovered_urls_total",
        Counter,
        "URLs admitted to the frontier (seeds and new links).",
        |s| s.discovered as f64,
    ),
    one(
        "trawl_duplicate_pages_total",
        Counter,
        "Pages whose content fingerprint was seen before.",
        |s| s.duplicates as f64,
    ),
    by(
        "trawl_pages_truncated_total",
        Counter,
        "Pages whose links a link-extraction cap cut, by cap (crawl-log annotations \
         links-truncated, scan-truncated, long-attributes).",
        "cap",
        &[
            ("links", |s| s.pages_links_truncated as f64),
            ("scan_bytes", |s| s.pages_scan_truncated as f64),
            ("attribute_bytes", |s| s.pages_long_attributes as f64),
        ],
    ),
    by(
        "trawl_robots_truncated_total",
        Counter,
        "robots.txt bodies a parse cap cut, by cap (crawl-log annotations \
         robots-truncated, robots-long-lines).",
        "cap",
        &[
            ("size", |s| s.robots_truncated as f64),
            ("line", |s| s.robots_long_lines as f64),
        ],
    ),
    one(
        "trawl_robots_fetches_total",
        Counter,
        "robots.txt fetches started (far more than the hosts crawled: the cache is too \
         small for them, raise --memory).",
        |s| s.robots_fetches as f64,
    ),
    one(
        "trawl_robots_cache_hosts",
        Gauge,
        "Hosts whose robots.txt rules are cached, all shards.",
        |s| s.robots_cache_hosts as f64,
    ),
    one(
        "trawl_robots_cache_bytes",
        Gauge,
        "Bytes charged for cached robots.txt rules (budget: a quarter of --memory).",
        |s| s.robots_cache_bytes as f64,
    ),
    one(
        "trawl_robots_cache_evictions_total",
        Counter,
        "Cached robots.txt rules moved out of RAM to stay within the budget (to the disk \
         tier: they are not dropped).",
        |s| s.robots_cache_evictions as f64,
    ),
    one(
        "trawl_robots_cache_hosts_spilled",
        Gauge,
        "Hosts whose robots.txt rules are in the cache's disk tier, all shards.",
        |s| s.robots_cache_hosts_spilled as f64,
    ),
    one(
        "trawl_robots_cache_index_bytes",
        Gauge,
        "RAM of the disk tier's index and write batch (about 26 bytes a spilled host).",
        |s| s.robots_cache_index_bytes as f64,
    ),
    one(
        "trawl_robots_fetches_max_per_host",
        Gauge,
        "The most robots.txt fetches any one host has had (a redirect chain is one).",
        |s| s.robots_fetches_max_per_host as f64,
    ),
    by(
        "trawl_robots_refetches_total",
        Counter,
        "robots.txt fetches after a host's first, by why: its rules had expired \
         (refresh), its last fetch failed (retry), or its rules were still fresh (fresh: \
         should stay 0).",
        "why",
        &[
            ("refresh", |s| s.robots_fetch_refreshes as f64),
            ("retry", |s| s.robots_fetch_retries as f64),
            ("fresh", |s| s.robots_hosts_refetched_while_fresh as f64),
        ],
    ),
    by(
        "trawl_sitemaps_total",
        Counter,
        "Sitemap files read, cut by a protocol cap (50,000 URLs or 50 MB), or refused as \
         malformed (crawl-log annotations sitemap:, sitemap-cut:, sitemap-error:).",
        "result",
        &[
            ("read", |s| s.sitemaps_read as f64),
            ("cut", |s| s.sitemaps_cut as f64),
            ("failed", |s| s.sitemaps_failed as f64),
        ],
    ),
    one(
        "trawl_sitemap_urls_refused_total",
        Counter,
        "Sitemap entries refused by the sitemaps.org host rule or as unusable URLs \
         (crawl-log annotation sitemap-refused).",
        |s| s.sitemap_urls_refused as f64,
    ),
    one(
        "trawl_warc_revisit_records_total",
        Counter,
        "Responses written as WARC revisit records (payload identical to an earlier one).",
        |s| s.warc_revisits as f64,
    ),
    one(
        "trawl_queued_urls",
        Gauge,
        "URLs admitted and not yet finished.",
        |s| s.queued as f64,
    ),
    by(
        "trawl_frontier_urls",
        Gauge,
        "Queued URLs by where the frontier holds them.",
        "where",
        &[
            ("ram", |s| s.frontier_ram_urls as f64),
            ("disk", |s| s.frontier_disk_urls as f64),
        ],
    ),
    by(
        "trawl_frontier_bytes",
        Gauge,
        "Frontier size by where it is held.",
        "where",
        &[
            ("ram", |s| s.frontier_ram_bytes as f64),
            ("disk", |s| s.frontier_disk_bytes as f64),
        ],
    ),
    one(
        "trawl_hosts_active",
        Gauge,
        "Hosts in the frontiers' active sets.",
        |s| s.hosts_active as f64,
    ),
    one(
        "trawl_hosts_known",
        Gauge,
        "Hosts discovered (carried across a resume).",
        |s| s.hosts_known as f64,
    ),
    one(
        "trawl_hosts_in_table",
        Gauge,
        "Hosts with an entry in a frontier's host table (active, or inactive not forgotten yet).",
        |s| s.hosts_in_table as f64,
    ),
    one(
        "trawl_line_records",
        Gauge,
        "URLs and markers waiting in the frontiers' lines for their host's activation.",
        |s| s.line_records as f64,
    ),
    one(
        "trawl_hosts_retired_total",
        Counter,
        "Hosts given up: robots.txt unreachable, name dead, refused address, page budget spent.",
        |s| s.hosts_retired as f64,
    ),
    one(
        "trawl_host_activations_total",
        Counter,
        "Hosts that joined an active set.",
        |s| s.host_activations as f64,
    ),
    one(
        "trawl_host_rotations_total",
        Counter,
        "Hosts sent to the back of the line after spending an activation's budget.",
        |s| s.host_rotations as f64,
    ),
    one(
        "trawl_host_address_rotations_total",
        Counter,
        "Hosts sent to the back of the line because their server address had its share of \
         the active set.",
        |s| s.address_rotations as f64,
    ),
    one(
        "trawl_active_addresses",
        Gauge,
        "Distinct server addresses in the frontiers' active sets.",
        |s| s.active_addresses as f64,
    ),
    one(
        "trawl_requests_in_flight",
        Gauge,
        "Fetches running (pages and robots.txt), all shards.",
        |s| s.width.requests_in_flight as f64,
    ),
    one(
        "trawl_requests_in_flight_peak",
        Gauge,
        "The most fetches running at once sampled so far.",
        |s| s.width.requests_in_flight_peak as f64,
    ),
    one(
        "trawl_requests_waiting_for_address",
        Gauge,
        "Requests waiting for a connection slot of their server's address \
         (--per-ip-connections); they hold no --concurrency slot.",
        |s| s.width.requests_waiting_for_address as f64,
    ),
    one(
        "trawl_requests_waiting_for_dns",
        Gauge,
        "Requests waiting for their host's name to resolve; they hold no --concurrency slot.",
        |s| s.width.requests_waiting_for_dns as f64,
    ),
    one(
        "trawl_hosts_ready_idle",
        Gauge,
        "Hosts ready (politeness passed, URLs queued) with no request running.",
        |s| s.width.hosts_ready_idle as f64,
    ),
    one(
        "trawl_urls_refused_budget_total",
        Counter,
        "URLs refused at admission because their host's --max-pages-per-host was spent.",
        |s| s.width.urls_refused_budget as f64,
    ),
    by(
        "trawl_dns_lookups",
        Gauge,
        "DNS lookups on the network now, and waiting for a network slot.",
        "state",
        &[
            ("in_flight", |s| s.width.dns.in_flight as f64),
            ("queued", |s| s.width.dns.queued as f64),
        ],
    ),
    by(
        "trawl_dns_lookups_total",
        Counter,
        "DNS lookups by result (docs/dns.md).",
        "result",
        &[
            ("cache_hit", |s| s.width.dns.cache_hits as f64),
            ("succeeded", |s| s.width.dns.succeeded as f64),
            ("no_name", |s| s.width.dns.failed_no_name as f64),
            ("timeout", |s| s.width.dns.failed_timeout as f64),
            ("dead", |s| s.width.dns.failed_dead as f64),
            ("server_error", |s| s.width.dns.failed_server as f64),
            ("local_limit", |s| s.width.dns.failed_local as f64),
        ],
    ),
    one(
        "trawl_dns_dead_names",
        Gauge,
        "Names remembered as dead (no server answered them).",
        |s| s.width.dns.dead_names as f64,
    ),
    by(
        "trawl_dns_queries_total",
        Counter,
        "DNS queries sent, tries after the first, TCP fallbacks.",
        "kind",
        &[
            ("sent", |s| s.width.dns.queries_sent as f64),
            ("retransmit", |s| s.width.dns.retransmits as f64),
            ("tcp", |s| s.width.dns.tcp_fallbacks as f64),
        ],
    ),
    one(
        "trawl_hosts_parked_total",
        Counter,
        "Hosts parked because they kept failing.",
        |s| s.hosts_parked as f64,
    ),
    Family {
        name: "trawl_outcomes_total",
        kind: Counter,
        help: "Crawl-log decisions by outcome.",
        read: Read::Outcomes,
    },
    one(
        "trawl_seen_fill_ratio",
        Gauge,
        "Fraction of presence bits set.",
        |s| s.seen_fill_ratio,
    ),
    one(
        "trawl_seen_false_positive_rate",
        Gauge,
        "Expected false-positive rate of the presence bits now.",
        |s| s.seen_expected_fp,
    ),
    one(
        "trawl_seen_file_bytes",
        Gauge,
        "Size of the presence-bit file (not counted in the memory budget).",
        |s| s.seen_file_bytes as f64,
    ),
    one(
        "trawl_checkpoints_total",
        Counter,
        "Checkpoints written by this process.",
        |s| s.checkpoints as f64,
    ),
    one(
        "trawl_paused",
        Gauge,
        "1 while fetching is paused for lack of disk space on the output, else 0.",
        |s| f64::from(u8::from(s.paused.is_some())),
    ),
    one(
        "trawl_disk_pauses_total",
        Counter,
        "Times fetching paused for disk space.",
        |s| s.disk_pauses as f64,
    ),
    one(
        "trawl_disk_paused_seconds_total",
        Counter,
        "Seconds spent paused for disk space.",
        |s| s.disk_paused_secs,
    ),
    by(
        "trawl_disk_bytes",
        Gauge,
        "Free space on the output filesystem and the reserve kept.",
        "kind",
        &[
            ("free", |s| s.disk_free_bytes as f64),
            ("reserve", |s| s.disk_reserve_bytes as f64),
        ],
    ),
    one(
        "trawl_checkpoint_written_bytes_total",
        Counter,
        "Bytes written by this process's checkpoints (presence-log records and the other files).",
        |s| s.checkpoint_total_bytes as f64,
    ),
    one(
        "trawl_checkpoint_last_bytes",
        Gauge,
        "Bytes the last checkpoint wrote.",
        |s| s.checkpoint_last_bytes as f64,
    ),
    one(
        "trawl_checkpoint_seconds_total",
        Counter,
        "Wall seconds spent taking checkpoints.",
        |s| s.checkpoint_total_secs,
    ),
    one(
        "trawl_checkpoint_last_seconds",
        Gauge,
        "Wall seconds the last checkpoint took.",
        |s| s.checkpoint_last_secs,
    ),
    by(
        "trawl_resident_bytes",
        Gauge,
        "Resident memory now, split into the presence bits and everything else.",
        "part",
        &[
            ("presence_bits", |s| s.presence_bits_resident_bytes as f64),
            ("rest", |s| s.rss_less_presence_bits_bytes as f64),
        ],
    ),
    one(
        "trawl_memory_budget_bytes",
        Gauge,
        "The RAM budget (--memory) for everything but the presence bits: compare with \
         trawl_resident_bytes{part=\"rest\"}.",
        |s| s.memory_budget_bytes as f64,
    ),
    one(
        "trawl_elapsed_seconds",
        Gauge,
        "Seconds since this process started crawling.",
        |s| s.elapsed_secs,
    ),
];

impl Family {
    /// Appends the family's `# HELP` and `# TYPE` lines and its samples from `s`.
    fn write(&self, s: &Stats, out: &mut String) {
        let name = self.name;
        let _ = write!(
            out,
            "# HELP {name} {}\n# TYPE {name} {}\n",
            self.help,
            self.kind.name()
        );
        match &self.read {
            Read::One(figure) => {
                let _ = writeln!(out, "{name} {}", value(figure(s)));
            }
            Read::By(key, series) => {
                for (l, figure) in *series {
                    sample(out, name, key, l, figure(s));
                }
            }
            Read::Outcomes => {
                for (l, n) in &s.outcomes {
                    sample(out, name, "outcome", l, *n as f64);
                }
            }
        }
    }
}

/// Appends one labelled sample.
fn sample(out: &mut String, name: &str, key: &str, l: &str, v: f64) {
    let _ = writeln!(out, "{name}{{{key}=\"{}\"}} {}", label(l), value(v));
}

/// Renders `s` in the Prometheus text exposition format (version 0.0.4).
pub fn render(s: &Stats) -> String {
    let mut out = String::with_capacity(4096);
    for family in FAMILIES {
        family.write(s, &mut out);
    }
    if let Some(farm) = &s.farm {
        out.push_str(&crate::farm::report::prometheus(farm));
    }
    out
}

#[cfg(test)]
mod tests {
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
}
