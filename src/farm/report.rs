//! The farm's part of the progress line and of the Prometheus exposition.

use std::fmt::Write;

use super::node::FarmStats;

/// ` farm sent N recv N (known N) batches N/N rtt N wait Xs unacked N spill N` for
/// the progress line.
pub fn progress(f: &FarmStats) -> String {
    let mut s = format!(
        " | farm node {}/{} sent {} recv {} (known {}) batches {}/{} redis {} calls {:.1}s unacked {}",
        f.node,
        f.nodes,
        f.links_sent,
        f.links_received,
        f.links_known,
        f.batches_sent,
        f.batches_received,
        f.redis_round_trips,
        f.redis_wait_secs,
        f.unacked_entries,
    );
    if f.spilled_urls > 0 {
        let _ = write!(s, " waiting {}", f.spilled_urls);
    }
    if f.redis_errors > 0 {
        let _ = write!(s, " redis-errors {}", f.redis_errors);
    }
    if f.bad_entries > 0 {
        let _ = write!(s, " bad-entries {}", f.bad_entries);
    }
    if f.finished {
        s.push_str(" finished");
    }
    s
}

/// Prometheus text lines for the farm figures.
pub fn prometheus(f: &FarmStats) -> String {
    let mut out = String::new();
    let mut one = |name: &str, kind: &str, help: &str, v: f64| {
        let _ = write!(
            out,
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}\n"
        );
    };
    let (c, g) = ("counter", "gauge");
    let figures: [(&str, &str, &str, f64); 12] = [
        (
            "trawl_farm_links_sent_total",
            c,
            "Links sent to other nodes' partition streams.",
            f.links_sent as f64,
        ),
        (
            "trawl_farm_links_received_total",
            c,
            "Links read from this node's partition streams.",
            f.links_received as f64,
        ),
        (
            "trawl_farm_links_known_total",
            c,
            "Received links the presence bits already knew.",
            f.links_known as f64,
        ),
        (
            "trawl_farm_batches_sent_total",
            c,
            "Stream entries written (batches of links).",
            f.batches_sent as f64,
        ),
        (
            "trawl_farm_batches_received_total",
            c,
            "Stream entries read.",
            f.batches_received as f64,
        ),
        (
            "trawl_farm_redis_round_trips_total",
            c,
            "Redis calls (a pipeline counts once).",
            f.redis_round_trips as f64,
        ),
        (
            "trawl_farm_redis_wait_seconds_total",
            c,
            "Seconds the bus thread waited on Redis.",
            f.redis_wait_secs,
        ),
        (
            "trawl_farm_unacked_entries",
            g,
            "Received entries waiting for a checkpoint before they are acknowledged.",
            f.unacked_entries as f64,
        ),
        (
            "trawl_farm_waiting_links",
            g,
            "Outgoing links not yet sent (Redis unreachable or an owner's stream full).",
            f.spilled_urls as f64,
        ),
        (
            "trawl_farm_spill_bytes",
            g,
            "Bytes of outgoing links in the spill file.",
            f.spill_disk_bytes as f64,
        ),
        (
            "trawl_farm_bad_entries_total",
            c,
            "Stream entries skipped as unreadable (garbage, another format version).",
            f.bad_entries as f64,
        ),
        (
            "trawl_farm_redis_errors_total",
            c,
            "Redis calls that failed.",
            f.redis_errors as f64,
        ),
    ];
    for (name, kind, help, v) in figures {
        one(name, kind, help, v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_and_prometheus_show_the_figures() {
        let f = FarmStats {
            node: 1,
            nodes: 3,
            links_sent: 120,
            links_received: 80,
            redis_round_trips: 17,
            spilled_urls: 5,
            ..FarmStats::default()
        };
        let p = progress(&f);
        assert!(p.contains("farm node 1/3 sent 120 recv 80"), "{p}");
        assert!(p.contains("redis 17 calls"), "{p}");
        assert!(p.contains("waiting 5"), "{p}");
        let m = prometheus(&f);
        assert!(m.contains("\ntrawl_farm_links_sent_total 120\n"), "{m}");
        assert!(m.contains("# TYPE trawl_farm_unacked_entries gauge"), "{m}");
        assert_eq!(m.matches("# TYPE").count(), 12);
    }
}
