//! A byte-bounded LRU cache of per-host robots policies.
//!
//! A large crawl meets millions of hosts; keeping every parsed robots.txt would grow
//! without end. The cache counts the heap bytes of each entry and, past `max_bytes`,
//! drops the least recently used hosts. A dropped host simply starts again at
//! `NeedsFetch` (and gets a conditional-free fetch); correctness never depends on an
//! entry staying. The one entry being updated is never dropped by its own update, so
//! the cache can exceed `max_bytes` by at most one entry (itself bounded, since only
//! 500 KiB of a robots.txt are parsed) until the next update.

#![deny(clippy::indexing_slicing, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use url::Url;

use super::parse::ParseReport;
use super::policy::{
    robots_url, Access, FetchRequest, PolicyConfig, RobotsPolicy, RobotsResponse, Step,
};

pub use crate::routing::HostKey;

#[derive(Debug)]
struct Slot {
    /// Boxed: a policy is 320 bytes and the map's table keeps up to twice its
    /// entries' room (a million hosts cost 720 MB of table with it inline).
    policy: Box<RobotsPolicy>,
    bytes: usize,
    stamp: u64,
}

/// Figures of a [`RobotsCache`] (see [`RobotsCache::stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Hosts with an entry.
    pub hosts: u64,
    /// Bytes charged for them.
    pub bytes: u64,
    /// The budget.
    pub max_bytes: u64,
    /// Entries dropped to stay within the budget so far.
    pub evictions: u64,
    /// robots.txt fetches started so far (first fetches, refreshes, refetches after an
    /// eviction).
    pub fetches: u64,
}

/// Overhead charged per entry on top of what [`entry_bytes`] counts by size: the
/// map's table slot (48 bytes, at up to twice its entries' room) and the LRU order's
/// B-tree entry (32 bytes in nodes about two-thirds full). Checked against resident
/// memory by `trawl bench hosts` (docs/frontier.md, "Memory per host").
const ENTRY_OVERHEAD_BYTES: usize = 160;

/// Bytes one entry costs: the overhead, the boxed policy, its heap (rules,
/// validators, the robots.txt URL's text) and the host key, held twice (map and LRU
/// order), each as the allocator rounds it.
fn entry_bytes(key: &HostKey, policy: &RobotsPolicy) -> usize {
    use crate::bytesize::heap_chunk;
    ENTRY_OVERHEAD_BYTES
        + heap_chunk(std::mem::size_of::<RobotsPolicy>())
        + heap_chunk(policy.robots_url().as_str().len())
        + policy.heap_bytes()
        + 2 * heap_chunk(key.as_str().len())
}

/// A byte-bounded LRU map from host to [`RobotsPolicy`].
#[derive(Debug)]
pub struct RobotsCache {
    config: PolicyConfig,
    max_bytes: usize,
    bytes: usize,
    clock: u64,
    evictions: u64,
    fetches: u64,
    slots: HashMap<HostKey, Slot>,
    order: BTreeMap<u64, HostKey>,
}

impl RobotsCache {
    /// An empty cache holding at most about `max_bytes` of policies.
    pub fn new(config: PolicyConfig, max_bytes: usize) -> RobotsCache {
        RobotsCache {
            config,
            max_bytes,
            bytes: 0,
            clock: 0,
            evictions: 0,
            fetches: 0,
            slots: HashMap::new(),
            order: BTreeMap::new(),
        }
    }

    /// The policy settings.
    pub fn config(&self) -> &PolicyConfig {
        &self.config
    }

    /// Hosts held.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether no host is held.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Bytes charged for the hosts held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The byte budget.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// Hosts dropped so far to stay within the budget.
    pub fn evictions(&self) -> u64 {
        self.evictions
    }

    /// Occupancy and churn, for progress and `stats.json`: fetches far above the number
    /// of hosts mean the cache is too small for the hosts being crawled.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hosts: self.slots.len() as u64,
            bytes: self.bytes as u64,
            max_bytes: self.max_bytes as u64,
            evictions: self.evictions,
            fetches: self.fetches,
        }
    }

    /// Drops a host's entry (its robots.txt is asked again when next needed): for a
    /// fetch that failed on this process's own limits, which is no answer at all.
    pub fn forget(&mut self, key: &HostKey) {
        if let Some(slot) = self.slots.remove(key) {
            self.bytes -= slot.bytes;
            self.order.remove(&slot.stamp);
        }
    }

    /// The policy of a host, without touching its recency.
    pub fn get(&self, key: &HostKey) -> Option<&RobotsPolicy> {
        self.slots.get(key).map(|s| &*s.policy)
    }

    /// The answer for `url` at `now`: `Pending` if the host is unknown (or its rules
    /// expired), so the caller calls [`RobotsCache::poll_fetch`] first.
    pub fn check(&mut self, url: &Url, now: Instant) -> Access<'_> {
        let Some(key) = HostKey::of(url) else {
            return Access::Pending;
        };
        self.touch(&key);
        match self.slots.get(&key) {
            Some(slot) => slot.policy.check(url.as_str(), now, &self.config),
            None => Access::Pending,
        }
    }

    /// Starts a robots.txt fetch for `url`'s host if one is due, creating the entry.
    pub fn poll_fetch(&mut self, url: &Url, now: Instant) -> Option<FetchRequest> {
        let key = HostKey::of(url)?;
        if !self.slots.contains_key(&key) {
            let policy = RobotsPolicy::new(robots_url(url)?);
            self.insert(key.clone(), policy);
        }
        let fetch = self.update(&key, |p, _| p.poll_fetch(now)).flatten();
        if fetch.is_some() {
            self.fetches += 1;
        }
        fetch
    }

    /// Feeds a robots.txt response for the host `key`. `None` if the host was
    /// dropped meanwhile (the response is then discarded; the host will be refetched).
    pub fn on_response(
        &mut self,
        key: &HostKey,
        now: Instant,
        response: &RobotsResponse<'_>,
    ) -> Option<Step> {
        self.update(key, |p, config| p.on_response(now, response, config))
    }

    /// The parse report of the robots.txt body [`RobotsCache::on_response`] last parsed
    /// for `key` (once), for the crawl log's `robots-truncated`/`robots-long-lines`
    /// annotations. Does not count as a use of the entry.
    pub fn take_parse_report(&mut self, key: &HostKey) -> Option<ParseReport> {
        self.slots.get_mut(key)?.policy.take_parse_report()
    }

    /// Reports a network failure of the fetch in flight for `key`.
    pub fn on_network_error(&mut self, key: &HostKey, now: Instant) -> Option<Step> {
        self.update(key, |p, config| p.on_network_error(now, config))
    }

    /// The capped crawl-delay of `url`'s host, if known.
    pub fn crawl_delay(&self, url: &Url) -> Option<Duration> {
        let key = HostKey::of(url)?;
        self.slots.get(&key)?.policy.crawl_delay(&self.config)
    }

    /// Every host held, least recently used first: the order in which
    /// [`RobotsCache::restore`] must see them again so recency survives a checkpoint.
    pub fn entries_lru(&self) -> impl Iterator<Item = (&HostKey, &RobotsPolicy)> + '_ {
        self.order
            .values()
            .filter_map(|k| self.slots.get(k).map(|s| (k, &*s.policy)))
    }

    /// Puts a host's policy back (from a checkpoint), as the most recently used entry.
    /// Past the byte budget the least recently used hosts are dropped as usual, so
    /// restoring oldest first keeps the newest that fit.
    pub fn restore(&mut self, key: HostKey, policy: RobotsPolicy) {
        self.insert(key, policy);
    }

    fn insert(&mut self, key: HostKey, policy: RobotsPolicy) {
        self.clock += 1;
        let bytes = entry_bytes(&key, &policy);
        self.bytes += bytes;
        self.order.insert(self.clock, key.clone());
        if let Some(old) = self.slots.insert(
            key,
            Slot {
                policy: Box::new(policy),
                bytes,
                stamp: self.clock,
            },
        ) {
            self.bytes -= old.bytes;
            self.order.remove(&old.stamp);
        }
        self.evict_except(self.clock);
    }

    fn touch(&mut self, key: &HostKey) {
        if let Some(slot) = self.slots.get_mut(key) {
            self.clock += 1;
            self.order.remove(&slot.stamp);
            slot.stamp = self.clock;
            self.order.insert(self.clock, key.clone());
        }
    }

    /// Runs `f` on a host's policy, then re-measures it and evicts to fit.
    fn update<R>(
        &mut self,
        key: &HostKey,
        f: impl FnOnce(&mut RobotsPolicy, &PolicyConfig) -> R,
    ) -> Option<R> {
        self.touch(key);
        let slot = self.slots.get_mut(key)?;
        let result = f(&mut slot.policy, &self.config);
        let bytes = entry_bytes(key, &slot.policy);
        self.bytes = self.bytes - slot.bytes + bytes;
        slot.bytes = bytes;
        let stamp = slot.stamp;
        self.evict_except(stamp);
        Some(result)
    }

    fn evict_except(&mut self, keep: u64) {
        while self.bytes > self.max_bytes {
            let victim = self.order.keys().copied().find(|s| *s != keep);
            let Some(stamp) = victim else { break };
            let Some(key) = self.order.remove(&stamp) else {
                break;
            };
            if let Some(slot) = self.slots.remove(&key) {
                self.bytes -= slot.bytes;
                self.evictions += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(n: usize) -> String {
        let mut s = String::from("user-agent: *\n");
        for i in 0..n {
            s.push_str(&format!("disallow: /private/{i}/*.html$\n"));
        }
        s
    }

    #[test]
    fn fetch_check_and_evict_lru() {
        let now = Instant::now();
        let mut cache = RobotsCache::new(PolicyConfig::new("trawl"), 40_000);
        let hosts: Vec<Url> = (0..20)
            .map(|i| Url::parse(&format!("http://h{i}.example/page")).unwrap())
            .collect();
        for url in &hosts {
            assert!(matches!(cache.check(url, now), Access::Pending));
            let req = cache.poll_fetch(url, now).unwrap();
            assert_eq!(req.url.path(), "/robots.txt");
            let key = HostKey::of(url).unwrap();
            let text = body(20);
            let step = cache.on_response(
                &key,
                now,
                &RobotsResponse {
                    status: 200,
                    headers: &[],
                    body: text.as_bytes(),
                },
            );
            assert_eq!(step, Some(Step::Done));
            assert!(
                cache.bytes() <= cache.max_bytes(),
                "{} > {}",
                cache.bytes(),
                cache.max_bytes()
            );
            // Keep host 0 hot.
            let _ = cache.check(&hosts[0], now);
        }
        assert!(cache.evictions() > 0);
        assert!(cache.len() < hosts.len());
        let url0 = Url::parse("http://h0.example/private/3/x.html").unwrap();
        assert_eq!(
            cache.check(&url0, now).is_allowed(),
            Some(false),
            "hot host kept"
        );
        assert!(
            cache.get(&HostKey::of(&hosts[1]).unwrap()).is_none(),
            "cold host dropped"
        );
        let sum: usize = cache
            .slots
            .iter()
            .map(|(k, s)| entry_bytes(k, &s.policy))
            .sum::<usize>();
        assert_eq!(sum, cache.bytes(), "byte accounting");
    }

    #[test]
    fn parse_report_is_taken_once_per_parsed_body() {
        let now = Instant::now();
        let mut cache = RobotsCache::new(PolicyConfig::new("trawl"), 1 << 20);
        let url = Url::parse("http://caps.example/").unwrap();
        let key = HostKey::of(&url).unwrap();
        assert!(cache.take_parse_report(&key).is_none(), "unknown host");
        let _ = cache.poll_fetch(&url, now).unwrap();
        let mut text = b"user-agent: *\ndisallow: /".to_vec();
        text.resize(text.len() + crate::robots::parse::MAX_LINE_BYTES, b'a');
        text.extend_from_slice(b"\nfoo: bar\n");
        let resp = RobotsResponse {
            status: 200,
            headers: &[],
            body: &text,
        };
        assert_eq!(cache.on_response(&key, now, &resp), Some(Step::Done));
        let report = cache.take_parse_report(&key).unwrap();
        assert_eq!(report.long_lines, 1);
        assert_eq!(report.ignored_lines, 1);
        assert!(!report.truncated);
        assert!(cache.take_parse_report(&key).is_none(), "taken once");
    }

    #[test]
    fn response_for_dropped_host_is_reported() {
        let now = Instant::now();
        let mut cache = RobotsCache::new(PolicyConfig::new("trawl"), 1_000_000);
        let key = HostKey::of(&Url::parse("http://gone.example/").unwrap()).unwrap();
        let r = RobotsResponse {
            status: 200,
            headers: &[],
            body: b"",
        };
        assert_eq!(cache.on_response(&key, now, &r), None);
    }

    #[test]
    fn host_key_includes_scheme_and_port() {
        let a = HostKey::of(&Url::parse("http://x.example/").unwrap()).unwrap();
        let b = HostKey::of(&Url::parse("https://x.example/").unwrap()).unwrap();
        let c = HostKey::of(&Url::parse("http://x.example:8080/").unwrap()).unwrap();
        let d = HostKey::of(&Url::parse("http://X.example:80/q").unwrap()).unwrap();
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_eq!(a, d);
        assert_eq!(c.as_str(), "http://x.example:8080");
    }
}
