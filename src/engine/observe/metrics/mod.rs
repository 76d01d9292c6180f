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
mod tests;
