//! The status page's history: the figures it plots, one sample per published snapshot,
//! over the whole crawl in bounded memory.
//!
//! At most [`MAX_SAMPLES`] are kept. When the ring is full every other sample is dropped
//! and from then on only every second snapshot is recorded (then every fourth, ...), so
//! the history always spans the crawl from its start, at a resolution that halves each
//! time it fills: 2,048 samples of about 200 bytes, under half a MiB.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::engine::Stats;

/// Most samples kept.
pub const MAX_SAMPLES: usize = 2048;

/// The plotted figures of one snapshot.
#[derive(Clone, Debug, PartialEq)]
struct Sample {
    figures: [f64; FIGURES.len()],
    /// Outcome counters, by the index of their name in [`History::outcome_names`].
    outcomes: Vec<u64>,
}

/// The figures kept, by their `stats.json` path (`width.x` inside `width`).
const FIGURES: [&str; 15] = [
    "elapsed_secs",
    "pages",
    "bytes",
    "frontier_ram_urls",
    "frontier_disk_urls",
    "hosts_active",
    "rss_less_presence_bits_bytes",
    "presence_bits_resident_bytes",
    "memory_budget_bytes",
    "disk_free_bytes",
    "disk_reserve_bytes",
    "width.requests_in_flight",
    "width.requests_waiting_for_address",
    "width.requests_waiting_for_dns",
    "width.hosts_ready_idle",
];

fn figures(s: &Stats) -> [f64; FIGURES.len()] {
    let w = &s.width;
    [
        s.elapsed_secs,
        s.pages as f64,
        s.bytes as f64,
        s.frontier_ram_urls as f64,
        s.frontier_disk_urls as f64,
        s.hosts_active as f64,
        s.rss_less_presence_bits_bytes as f64,
        s.presence_bits_resident_bytes as f64,
        s.memory_budget_bytes as f64,
        s.disk_free_bytes as f64,
        s.disk_reserve_bytes as f64,
        w.requests_in_flight as f64,
        w.requests_waiting_for_address as f64,
        w.requests_waiting_for_dns as f64,
        w.hosts_ready_idle as f64,
    ]
}

/// Samples of the crawl so far, thinned to stay within [`MAX_SAMPLES`].
#[derive(Debug, Default)]
pub struct History {
    samples: Vec<Sample>,
    /// Every outcome name seen (a handful: the crawl log's outcome kinds).
    outcome_names: Vec<String>,
    /// Record one snapshot in `stride`; `offered` counts them.
    stride: u64,
    offered: u64,
}

impl History {
    /// Records `s` if it falls on the current stride.
    pub fn push(&mut self, s: &Stats) {
        let stride = self.stride.max(1);
        self.offered += 1;
        if (self.offered - 1) % stride != 0 {
            return;
        }
        let mut outcomes = vec![0; self.outcome_names.len()];
        for (name, count) in &s.outcomes {
            match self.outcome_names.iter().position(|n| n == name) {
                Some(i) => {
                    if let Some(slot) = outcomes.get_mut(i) {
                        *slot = *count;
                    }
                }
                None => {
                    self.outcome_names.push(name.clone());
                    outcomes.push(*count);
                }
            }
        }
        self.samples.push(Sample {
            figures: figures(s),
            outcomes,
        });
        if self.samples.len() >= MAX_SAMPLES {
            let mut keep = false;
            self.samples.retain(|_| {
                keep = !keep;
                keep
            });
            self.stride = stride * 2;
        }
    }

    /// Samples held.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.samples.len()
    }

    /// The samples as JSON, each shaped like `stats.json` (the same field paths, only
    /// the plotted figures), oldest first.
    pub fn json(&self) -> String {
        let samples: Vec<Value> = self
            .samples
            .iter()
            .map(|sample| {
                let mut top = serde_json::Map::new();
                let mut width = serde_json::Map::new();
                for (name, v) in FIGURES.iter().zip(sample.figures) {
                    match name.strip_prefix("width.") {
                        Some(inner) => width.insert(inner.to_owned(), json!(v)),
                        None => top.insert((*name).to_owned(), json!(v)),
                    };
                }
                top.insert("width".to_owned(), Value::Object(width));
                // A sample taken before an outcome first appeared has no slot for it.
                let outcomes: BTreeMap<&str, u64> = self
                    .outcome_names
                    .iter()
                    .enumerate()
                    .map(|(i, n)| (n.as_str(), sample.outcomes.get(i).copied().unwrap_or(0)))
                    .collect();
                top.insert("outcomes".to_owned(), json!(outcomes));
                Value::Object(top)
            })
            .collect();
        Value::Array(samples).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(i: u64) -> Stats {
        let mut s = Stats {
            elapsed_secs: i as f64,
            pages: i * 10,
            ..Stats::default()
        };
        s.width.requests_in_flight = 3;
        if i >= 2 {
            s.outcomes.insert("fetched".to_owned(), i);
        }
        s
    }

    #[test]
    fn samples_come_back_shaped_like_stats_json() {
        let mut h = History::default();
        for i in 0..3 {
            h.push(&stats(i));
        }
        let v: Value = serde_json::from_str(&h.json()).unwrap();
        let v = v.as_array().unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(v[2]["pages"], 20.0);
        assert_eq!(v[2]["width"]["requests_in_flight"], 3.0);
        assert_eq!(v[2]["outcomes"]["fetched"], 2);
        // An outcome not seen yet is 0 in earlier samples.
        assert_eq!(v[0]["outcomes"]["fetched"], 0);
    }

    #[test]
    fn a_long_crawl_is_thinned_but_spans_from_the_start() {
        let mut h = History::default();
        let n = 10 * MAX_SAMPLES as u64;
        for i in 0..n {
            h.push(&stats(i));
            assert!(h.len() < MAX_SAMPLES);
        }
        let v: Value = serde_json::from_str(&h.json()).unwrap();
        let v = v.as_array().unwrap();
        assert_eq!(v[0]["elapsed_secs"], 0.0);
        let last = v.last().unwrap()["elapsed_secs"].as_f64().unwrap();
        assert!(last >= (n - 16) as f64, "last sample at {last}");
        assert!(v.len() >= MAX_SAMPLES / 2 - 1);
        // Evenly spaced.
        let t: Vec<f64> = v
            .iter()
            .map(|s| s["elapsed_secs"].as_f64().unwrap())
            .collect();
        let step = t[1] - t[0];
        assert!(t.windows(2).all(|w| w[1] - w[0] == step), "uneven steps");
    }
}
