//! Prometheus text metrics (`--metrics-addr`): a tiny blocking server thread that
//! answers `GET /metrics` with the crawl's latest [`Stats`] snapshot.
//!
//! Why so small: a crawler that runs for days needs to be scraped, but the endpoint
//! must never become a way to slow the crawl or to expose it. So it binds loopback only
//! unless the operator explicitly allows otherwise, serves one connection at a time with
//! short timeouts, reads at most [`MAX_REQUEST_BYTES`] of a request and closes every
//! connection after one answer. It never touches the shards: the coordinator publishes a
//! snapshot about once a second and a scrape renders that.

use super::Stats;

mod control;
mod history;
mod host;
mod server;
mod status;

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

struct Family<'a> {
    out: &'a mut String,
}

impl Family<'_> {
    fn head(&mut self, name: &str, kind: &str, help: &str) {
        self.out
            .push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n"));
    }

    fn one(&mut self, name: &str, kind: &str, help: &str, v: f64) {
        self.head(name, kind, help);
        self.out.push_str(&format!("{name} {}\n", value(v)));
    }

    fn labelled(&mut self, name: &str, kind: &str, help: &str, key: &str, vs: &[(&str, f64)]) {
        self.head(name, kind, help);
        for (l, v) in vs {
            self.out
                .push_str(&format!("{name}{{{key}=\"{}\"}} {}\n", label(l), value(*v)));
        }
    }
}

/// Renders `s` in the Prometheus text exposition format (version 0.0.4).
pub fn render(s: &Stats) -> String {
    let mut out = String::with_capacity(4096);
    let mut f = Family { out: &mut out };
    let c = "counter";
    let g = "gauge";
    f.one(
        "trawl_pages_total",
        c,
        "Pages fetched (responses of any status).",
        s.pages as f64,
    );
    f.one(
        "trawl_bytes_total",
        c,
        "Bytes received on the wire.",
        s.bytes as f64,
    );
    f.one(
        "trawl_discovered_urls_total",
        c,
        "URLs admitted to the frontier (seeds and new links).",
        s.discovered as f64,
    );
    f.one(
        "trawl_duplicate_pages_total",
        c,
        "Pages whose content fingerprint was seen before.",
        s.duplicates as f64,
    );
    f.labelled(
        "trawl_pages_truncated_total",
        c,
        "Pages whose links a link-extraction cap cut, by cap (crawl-log annotations \
         links-truncated, scan-truncated, long-attributes).",
        "cap",
        &[
            ("links", s.pages_links_truncated as f64),
            ("scan_bytes", s.pages_scan_truncated as f64),
            ("attribute_bytes", s.pages_long_attributes as f64),
        ],
    );
    f.labelled(
        "trawl_robots_truncated_total",
        c,
        "robots.txt bodies a parse cap cut, by cap (crawl-log annotations \
         robots-truncated, robots-long-lines).",
        "cap",
        &[
            ("size", s.robots_truncated as f64),
            ("line", s.robots_long_lines as f64),
        ],
    );
    f.one(
        "trawl_robots_fetches_total",
        c,
        "robots.txt fetches started (far more than the hosts crawled: the cache is too \
         small for them, raise --memory).",
        s.robots_fetches as f64,
    );
    f.one(
        "trawl_robots_cache_hosts",
        g,
        "Hosts whose robots.txt rules are cached, all shards.",
        s.robots_cache_hosts as f64,
    );
    f.one(
        "trawl_robots_cache_bytes",
        g,
        "Bytes charged for cached robots.txt rules (budget: a quarter of --memory).",
        s.robots_cache_bytes as f64,
    );
    f.one(
        "trawl_robots_cache_evictions_total",
        c,
        "Cached robots.txt rules moved out of RAM to stay within the budget (to the disk \
         tier: they are not dropped).",
        s.robots_cache_evictions as f64,
    );
    f.one(
        "trawl_robots_cache_hosts_spilled",
        g,
        "Hosts whose robots.txt rules are in the cache's disk tier, all shards.",
        s.robots_cache_hosts_spilled as f64,
    );
    f.one(
        "trawl_robots_cache_index_bytes",
        g,
        "RAM of the disk tier's index and write batch (about 26 bytes a spilled host).",
        s.robots_cache_index_bytes as f64,
    );
    f.one(
        "trawl_robots_fetches_max_per_host",
        g,
        "The most robots.txt fetches any one host has had (a redirect chain is one).",
        s.robots_fetches_max_per_host as f64,
    );
    f.labelled(
        "trawl_robots_refetches_total",
        c,
        "robots.txt fetches after a host's first, by why: its rules had expired \
         (refresh), its last fetch failed (retry), or its rules were still fresh (fresh: \
         should stay 0).",
        "why",
        &[
            ("refresh", s.robots_fetch_refreshes as f64),
            ("retry", s.robots_fetch_retries as f64),
            ("fresh", s.robots_hosts_refetched_while_fresh as f64),
        ],
    );
    f.labelled(
        "trawl_sitemaps_total",
        c,
        "Sitemap files read, cut by a protocol cap (50,000 URLs or 50 MB), or refused as \
         malformed (crawl-log annotations sitemap:, sitemap-cut:, sitemap-error:).",
        "result",
        &[
            ("read", s.sitemaps_read as f64),
            ("cut", s.sitemaps_cut as f64),
            ("failed", s.sitemaps_failed as f64),
        ],
    );
    f.one(
        "trawl_sitemap_urls_refused_total",
        c,
        "Sitemap entries refused by the sitemaps.org host rule or as unusable URLs \
         (crawl-log annotation sitemap-refused).",
        s.sitemap_urls_refused as f64,
    );
    f.one(
        "trawl_warc_revisit_records_total",
        c,
        "Responses written as WARC revisit records (payload identical to an earlier one).",
        s.warc_revisits as f64,
    );
    f.one(
        "trawl_queued_urls",
        g,
        "URLs admitted and not yet finished.",
        s.queued as f64,
    );
    f.labelled(
        "trawl_frontier_urls",
        g,
        "Queued URLs by where the frontier holds them.",
        "where",
        &[
            ("ram", s.frontier_ram_urls as f64),
            ("disk", s.frontier_disk_urls as f64),
        ],
    );
    f.labelled(
        "trawl_frontier_bytes",
        g,
        "Frontier size by where it is held.",
        "where",
        &[
            ("ram", s.frontier_ram_bytes as f64),
            ("disk", s.frontier_disk_bytes as f64),
        ],
    );
    f.one(
        "trawl_hosts_active",
        g,
        "Hosts in the frontiers' active sets.",
        s.hosts_active as f64,
    );
    f.one(
        "trawl_hosts_known",
        g,
        "Hosts discovered (carried across a resume).",
        s.hosts_known as f64,
    );
    f.one(
        "trawl_hosts_in_table",
        g,
        "Hosts with an entry in a frontier's host table (active, or inactive not forgotten yet).",
        s.hosts_in_table as f64,
    );
    f.one(
        "trawl_line_records",
        g,
        "URLs and markers waiting in the frontiers' lines for their host's activation.",
        s.line_records as f64,
    );
    f.one(
        "trawl_hosts_retired_total",
        c,
        "Hosts given up: robots.txt unreachable, name dead, refused address, page budget spent.",
        s.hosts_retired as f64,
    );
    f.one(
        "trawl_host_activations_total",
        c,
        "Hosts that joined an active set.",
        s.host_activations as f64,
    );
    f.one(
        "trawl_host_rotations_total",
        c,
        "Hosts sent to the back of the line after spending an activation's budget.",
        s.host_rotations as f64,
    );
    f.one(
        "trawl_requests_in_flight",
        g,
        "Fetches running (pages and robots.txt), all shards.",
        s.width.requests_in_flight as f64,
    );
    f.one(
        "trawl_requests_in_flight_peak",
        g,
        "The most fetches running at once sampled so far.",
        s.width.requests_in_flight_peak as f64,
    );
    f.one(
        "trawl_requests_waiting_for_address",
        g,
        "Requests waiting for a connection slot of their server's address \
         (--per-ip-connections); they hold no --concurrency slot.",
        s.width.requests_waiting_for_address as f64,
    );
    f.one(
        "trawl_requests_waiting_for_dns",
        g,
        "Requests waiting for their host's name to resolve; they hold no --concurrency slot.",
        s.width.requests_waiting_for_dns as f64,
    );
    f.one(
        "trawl_hosts_ready_idle",
        g,
        "Hosts ready (politeness passed, URLs queued) with no request running.",
        s.width.hosts_ready_idle as f64,
    );
    f.one(
        "trawl_urls_refused_budget_total",
        c,
        "URLs refused at admission because their host's --max-pages-per-host was spent.",
        s.width.urls_refused_budget as f64,
    );
    let d = &s.width.dns;
    f.labelled(
        "trawl_dns_lookups",
        g,
        "DNS lookups on the network now, and waiting for a network slot.",
        "state",
        &[
            ("in_flight", d.in_flight as f64),
            ("queued", d.queued as f64),
        ],
    );
    f.labelled(
        "trawl_dns_lookups_total",
        c,
        "DNS lookups by result (docs/dns.md).",
        "result",
        &[
            ("cache_hit", d.cache_hits as f64),
            ("succeeded", d.succeeded as f64),
            ("no_name", d.failed_no_name as f64),
            ("timeout", d.failed_timeout as f64),
            ("dead", d.failed_dead as f64),
            ("server_error", d.failed_server as f64),
            ("local_limit", d.failed_local as f64),
        ],
    );
    f.one(
        "trawl_dns_dead_names",
        g,
        "Names remembered as dead (no server answered them).",
        d.dead_names as f64,
    );
    f.labelled(
        "trawl_dns_queries_total",
        c,
        "DNS queries sent, tries after the first, TCP fallbacks.",
        "kind",
        &[
            ("sent", d.queries_sent as f64),
            ("retransmit", d.retransmits as f64),
            ("tcp", d.tcp_fallbacks as f64),
        ],
    );
    f.one(
        "trawl_hosts_parked_total",
        c,
        "Hosts parked because they kept failing.",
        s.hosts_parked as f64,
    );
    let outcomes: Vec<(&str, f64)> = s
        .outcomes
        .iter()
        .map(|(k, v)| (k.as_str(), *v as f64))
        .collect();
    f.labelled(
        "trawl_outcomes_total",
        c,
        "Crawl-log decisions by outcome.",
        "outcome",
        &outcomes,
    );
    f.one(
        "trawl_seen_fill_ratio",
        g,
        "Fraction of presence bits set.",
        s.seen_fill_ratio,
    );
    f.one(
        "trawl_seen_false_positive_rate",
        g,
        "Expected false-positive rate of the presence bits now.",
        s.seen_expected_fp,
    );
    f.one(
        "trawl_seen_file_bytes",
        g,
        "Size of the presence-bit file (not counted in the memory budget).",
        s.seen_file_bytes as f64,
    );
    f.one(
        "trawl_checkpoints_total",
        c,
        "Checkpoints written by this process.",
        s.checkpoints as f64,
    );
    f.one(
        "trawl_paused",
        g,
        "1 while fetching is paused for lack of disk space on the output, else 0.",
        f64::from(u8::from(s.paused.is_some())),
    );
    f.one(
        "trawl_disk_pauses_total",
        c,
        "Times fetching paused for disk space.",
        s.disk_pauses as f64,
    );
    f.one(
        "trawl_disk_paused_seconds_total",
        c,
        "Seconds spent paused for disk space.",
        s.disk_paused_secs,
    );
    f.labelled(
        "trawl_disk_bytes",
        g,
        "Free space on the output filesystem and the reserve kept.",
        "kind",
        &[
            ("free", s.disk_free_bytes as f64),
            ("reserve", s.disk_reserve_bytes as f64),
        ],
    );
    f.one(
        "trawl_checkpoint_written_bytes_total",
        c,
        "Bytes written by this process's checkpoints (presence-log records and the other files).",
        s.checkpoint_total_bytes as f64,
    );
    f.one(
        "trawl_checkpoint_last_bytes",
        g,
        "Bytes the last checkpoint wrote.",
        s.checkpoint_last_bytes as f64,
    );
    f.one(
        "trawl_checkpoint_seconds_total",
        c,
        "Wall seconds spent taking checkpoints.",
        s.checkpoint_total_secs,
    );
    f.one(
        "trawl_checkpoint_last_seconds",
        g,
        "Wall seconds the last checkpoint took.",
        s.checkpoint_last_secs,
    );
    f.labelled(
        "trawl_resident_bytes",
        g,
        "Resident memory now, split into the presence bits and everything else.",
        "part",
        &[
            ("presence_bits", s.presence_bits_resident_bytes as f64),
            ("rest", s.rss_less_presence_bits_bytes as f64),
        ],
    );
    f.one(
        "trawl_memory_budget_bytes",
        g,
        "The RAM budget (--memory) for everything but the presence bits: compare with \
         trawl_resident_bytes{part=\"rest\"}.",
        s.memory_budget_bytes as f64,
    );
    f.one(
        "trawl_elapsed_seconds",
        g,
        "Seconds since this process started crawling.",
        s.elapsed_secs,
    );
    if let Some(farm) = &s.farm {
        out.push_str(&crate::farm::report::prometheus(farm));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_floats_and_labels_are_escaped() {
        assert_eq!(value(f64::NAN), "NaN");
        assert_eq!(value(f64::INFINITY), "+Inf");
        assert_eq!(value(1.5), "1.5");
        assert_eq!(label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
