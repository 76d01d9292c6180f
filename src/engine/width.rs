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
    /// Hosts whose politeness instant has passed, with URLs queued and no fetch
    /// running, after the shard's last scheduling turn.
    pub hosts_ready_idle: u64,
    /// robots.txt fetches started ahead of their host's turn, so far.
    pub robots_look_aheads: u64,
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
            hosts_ready_idle: all.iter().map(|s| s.hosts_ready_idle).sum(),
            robots_look_aheads: all.iter().map(|s| s.robots_look_aheads).sum(),
            urls_refused_budget,
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
    /// Hosts ready (politeness passed, URLs queued) with no request running.
    pub hosts_ready_idle: u64,
    /// robots.txt fetches of newly discovered hosts started ahead of their turn while
    /// every fetch slot was busy (bounded: an eighth of `--concurrency` over it).
    pub robots_look_aheads: u64,
    /// URLs refused when admitted because their host's `--max-pages-per-host` was
    /// spent (crawl log: outcome `budget`, `budget:pages-per-host`).
    pub urls_refused_budget: u64,
}
