//! The crawl's width, as an operator watches it: requests in flight (now and the peak
//! sampled), requests waiting for a per-address connection slot, hosts ready with no
//! request, URLs refused at admission by a spent host budget, and name resolution.
//!
//! Politeness makes a wide crawl's speed come only from the hosts busy at once, so a
//! host with its turn come and no request running ("ready but idle") while fetch slots
//! are free is the scheduler's fault, and the first figure to look at.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use serde::Serialize;

/// One shard's gauges, published by its driver with its frontier figures.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ShardWidth {
    /// Requests submitted to the fetcher that wait for a per-address connection slot
    /// (`--per-ip-connections`); they hold no `--concurrency` slot.
    pub waiting_for_address: u64,
    /// Requests submitted that wait for their name to resolve; they hold no
    /// `--concurrency` slot either.
    pub waiting_for_dns: u64,
    /// Hosts whose politeness instant has passed, with URLs queued and no fetch
    /// running, after the shard's last scheduling turn.
    pub hosts_ready_idle: u64,
    /// robots.txt fetches started ahead of their host's turn, so far.
    pub robots_look_aheads: u64,
    /// The shard's resolver.
    pub dns: crate::net::DnsStats,
}

/// What the shards publish for [`WidthStats`].
pub(crate) struct WidthGauges {
    shards: Mutex<Vec<ShardWidth>>,
    /// Largest sum of requests in flight the coordinator sampled (every 20 ms).
    in_flight_peak: AtomicU64,
}

impl WidthGauges {
    pub fn new(shards: usize) -> Self {
        Self {
            shards: Mutex::new(vec![ShardWidth::default(); shards]),
            in_flight_peak: AtomicU64::new(0),
        }
    }

    /// Shard `index` publishes its gauges.
    pub fn publish(&self, index: usize, figures: ShardWidth) {
        if let Ok(mut all) = self.shards.lock() {
            if let Some(slot) = all.get_mut(index) {
                *slot = figures;
            }
        }
    }

    /// The coordinator's sample of the requests in flight over all shards.
    pub fn sample_in_flight(&self, in_flight: u64) {
        self.in_flight_peak.fetch_max(in_flight, Ordering::AcqRel);
    }

    /// The figures over all shards.
    pub fn stats(&self, in_flight: u64, urls_refused_budget: u64) -> WidthStats {
        let all = self.shards.lock().map(|v| v.clone()).unwrap_or_default();
        WidthStats {
            requests_in_flight: in_flight,
            requests_in_flight_peak: self.in_flight_peak.load(Ordering::Acquire).max(in_flight),
            requests_waiting_for_address: all.iter().map(|s| s.waiting_for_address).sum(),
            requests_waiting_for_dns: all.iter().map(|s| s.waiting_for_dns).sum(),
            hosts_ready_idle: all.iter().map(|s| s.hosts_ready_idle).sum(),
            robots_look_aheads: all.iter().map(|s| s.robots_look_aheads).sum(),
            urls_refused_budget,
            dns: DnsFigures::sum(all.iter().map(|s| &s.dns)),
        }
    }
}

/// The width figures of `stats.json` (`width`), the progress line and Prometheus.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct WidthStats {
    /// Fetches running (pages and robots.txt), all shards.
    pub requests_in_flight: u64,
    /// The most fetches running at once that the coordinator sampled.
    pub requests_in_flight_peak: u64,
    /// Requests waiting for a connection slot of their server's address.
    pub requests_waiting_for_address: u64,
    /// Requests waiting for their host's name to resolve.
    pub requests_waiting_for_dns: u64,
    /// Hosts ready (politeness passed, URLs queued) with no request running.
    pub hosts_ready_idle: u64,
    /// robots.txt fetches of newly discovered hosts started ahead of their turn while
    /// every fetch slot was busy (bounded: an eighth of `--concurrency` over it).
    pub robots_look_aheads: u64,
    /// URLs refused when admitted because their host's `--max-pages-per-host` was
    /// spent (crawl log: outcome `budget`, `budget:pages-per-host`).
    pub urls_refused_budget: u64,
    /// Name resolution over all shards (docs/dns.md).
    pub dns: DnsFigures,
}

/// The resolvers' figures over all shards.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct DnsFigures {
    /// Lookups asked (every path: literal, override, cache, network).
    pub lookups: u64,
    /// Answered from the cache.
    pub cache_hits: u64,
    /// Lookups on the network now, and waiting for a network slot now.
    pub in_flight: u64,
    pub queued: u64,
    /// Network lookups that found addresses.
    pub succeeded: u64,
    /// Lookups that failed, by kind: no such name or no address; no answer in time;
    /// failed at once as a dead name; a server's error (SERVFAIL, REFUSED,
    /// malformed); this resolver's own limits (overloaded, no socket).
    pub failed_no_name: u64,
    pub failed_timeout: u64,
    pub failed_dead: u64,
    pub failed_server: u64,
    pub failed_local: u64,
    /// Names remembered as dead now.
    pub dead_names: u64,
    /// Queries sent, tries after the first, TCP fallbacks.
    pub queries_sent: u64,
    pub retransmits: u64,
    pub tcp_fallbacks: u64,
}

impl DnsFigures {
    fn sum<'a>(all: impl Iterator<Item = &'a crate::net::DnsStats>) -> Self {
        let mut f = Self::default();
        for d in all {
            f.lookups += d.lookups;
            f.cache_hits += d.cache_hits;
            f.in_flight += d.in_flight;
            f.queued += d.queued;
            f.succeeded += d.succeeded;
            f.failed_no_name += d.no_such_name + d.no_address;
            f.failed_timeout += d.timed_out;
            f.failed_dead += d.dead_fast_fails;
            f.failed_server += d.server_failure + d.refused + d.malformed;
            f.failed_local += d.overloaded + d.unavailable;
            f.dead_names += d.dead_names;
            f.queries_sent += d.queries_sent;
            f.retransmits += d.retransmits;
            f.tcp_fallbacks += d.tcp_fallbacks;
        }
        f
    }

    /// Lookups that failed, every kind.
    pub fn failed(&self) -> u64 {
        self.failed_no_name
            + self.failed_timeout
            + self.failed_dead
            + self.failed_server
            + self.failed_local
    }
}
