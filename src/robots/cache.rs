//! A byte-bounded LRU cache of per-host robots policies, over a disk tier.
//!
//! A large crawl meets millions of hosts; keeping every parsed robots.txt in RAM would
//! grow without end. The cache counts the heap bytes of each entry and, past
//! `max_bytes` less what the tier itself holds in RAM (its index and write batch; the
//! rules keep a quarter of `max_bytes` whatever the index), moves the least recently
//! used hosts to its disk tier
//! ([`super::spill`]), where an inactive host costs an index entry of RAM (at most 32
//! bytes) and comes back on its next use: rules are never forgotten for lack of RAM (a
//! cache that forgot them once fetched robots.txt 1.68 million times for 101,000 hosts:
//! `docs/robots.md`, "Disk tier"), they expire only as their freshness says. Only what
//! is not worth keeping is dropped: a host never fetched (it starts again at
//! `NeedsFetch`), a record too large for the tier, or, while the disk refuses writes,
//! what the write batch cannot hold; each is counted. An entry whose robots.txt fetch
//! is in flight stays in RAM (its answer must find it). The one entry being updated is
//! never moved out by its own update, so the cache can exceed `max_bytes` by at most
//! that entry (itself bounded, since only 500 KiB of a robots.txt are parsed) and the
//! entries of fetches in flight.
//!
//! Every read of a host's policy ([`RobotsCache::check`], [`RobotsCache::get`],
//! [`RobotsCache::poll_fetch`], [`RobotsCache::on_response`],
//! [`RobotsCache::on_network_error`], [`RobotsCache::crawl_delay`]) looks in the tier
//! after a miss in RAM, and a host found there is restored into RAM. Two need not:
//! [`RobotsCache::take_parse_report`] (a spilled policy has no report: reports are
//! taken right after the response that made them and are not stored) and
//! [`RobotsCache::forget`] (it concerns a fetch in flight, whose entry is in RAM).

#![deny(clippy::indexing_slicing, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::{Duration, Instant};

use url::Url;

use super::parse::ParseReport;
use super::policy::{
    robots_url, Access, FetchRequest, PolicyConfig, RobotsPolicy, RobotsResponse, RobotsState, Step,
};
use super::spill::{is_pinned, FileStore, Put, ScanStats, Spill, SpillConfig, SpillError};

use crate::routing::HostKey;

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
    /// Hosts with an entry in RAM.
    pub hosts: u64,
    /// Bytes charged for them.
    pub bytes: u64,
    /// The budget.
    pub max_bytes: u64,
    /// Entries moved out of RAM to stay within the budget so far (into the disk
    /// tier, or dropped: see `spill_dropped`).
    pub evictions: u64,
    /// robots.txt fetches started so far (first fetches, refreshes, retries).
    pub fetches: u64,
    /// Hosts whose entry is in the disk tier.
    pub hosts_spilled: u64,
    /// RAM of the disk tier's index (not in `bytes`: the engine counts it apart).
    pub index_bytes: u64,
    /// RAM of the disk tier's write batch.
    pub spill_batch_bytes: u64,
    /// Bytes of the disk tier's log files.
    pub disk_bytes: u64,
    /// The disk tier's log files.
    pub disk_files: u64,
    /// Batches written to the disk tier.
    pub spill_writes: u64,
    /// Hosts read back from the disk tier.
    pub spill_reads: u64,
    /// Records read back damaged, or not read at all (their hosts refetched).
    pub spill_damaged: u64,
    /// Batch writes that failed (the batch kept in RAM).
    pub spill_write_errors: u64,
    /// Evicted entries not kept (never fetched; too large; batch full while writes
    /// fail).
    pub spill_dropped: u64,
    /// Hosts that lost their tier record to another host of the same key hash.
    pub index_collisions: u64,
    /// The most robots.txt fetches started for one host (counted across spills and
    /// checkpoints).
    pub max_fetches_per_host: u64,
    /// Fetches started for a host whose last fetch succeeded and whose rules had not
    /// expired: none is ever due, so anything here is a bug.
    pub hosts_refetched_while_fresh: u64,
    /// Fetches started after a failure (or after a fetch given up by
    /// [`RobotsCache::forget`]).
    pub fetch_retries: u64,
    /// Fetches started because the rules expired (conditional when they can be).
    pub fetch_refreshes: u64,
    /// Fetches given up by [`RobotsCache::forget`] (this process's own limits).
    pub fetches_abandoned: u64,
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

/// Why a fetch is started, by the state it starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FetchKind {
    First,
    Refresh,
    Retry,
    WhileFresh,
}

impl FetchKind {
    fn of(policy: &RobotsPolicy, now: Instant) -> FetchKind {
        match policy.state() {
            RobotsState::NeedsFetch if policy.fetches() == 0 => FetchKind::First,
            RobotsState::Ready(r) if now < r.fresh_until => FetchKind::WhileFresh,
            RobotsState::Ready(_) => FetchKind::Refresh,
            _ => FetchKind::Retry,
        }
    }
}

/// A byte-bounded LRU map from host to [`RobotsPolicy`], over a disk tier.
#[derive(Debug)]
pub struct RobotsCache {
    config: PolicyConfig,
    max_bytes: usize,
    bytes: usize,
    clock: u64,
    evictions: u64,
    fetches: u64,
    retries: u64,
    refreshes: u64,
    while_fresh: u64,
    abandoned: u64,
    max_fetches_per_host: u32,
    slots: HashMap<HostKey, Slot>,
    order: BTreeMap<u64, HostKey>,
    spill: Spill,
}

impl RobotsCache {
    /// An empty cache holding at most about `max_bytes` of policies in RAM, with its
    /// disk tier's log files in memory (tests, benchmarks, embeddings without an
    /// output directory).
    pub fn new(config: PolicyConfig, max_bytes: usize) -> RobotsCache {
        RobotsCache::with_spill(config, max_bytes, Spill::in_memory())
    }

    /// An empty cache whose disk tier keeps its log files in `dir` (created when the
    /// first batch is written; log files an earlier run left there are removed then).
    pub fn with_spill_dir(config: PolicyConfig, max_bytes: usize, dir: &Path) -> RobotsCache {
        let spill = Spill::new(Box::new(FileStore::new(dir)), SpillConfig::default());
        RobotsCache::with_spill(config, max_bytes, spill)
    }

    /// An empty cache over a given disk tier.
    pub fn with_spill(config: PolicyConfig, max_bytes: usize, spill: Spill) -> RobotsCache {
        RobotsCache {
            config,
            max_bytes,
            bytes: 0,
            clock: 0,
            evictions: 0,
            fetches: 0,
            retries: 0,
            refreshes: 0,
            while_fresh: 0,
            abandoned: 0,
            max_fetches_per_host: 0,
            slots: HashMap::new(),
            order: BTreeMap::new(),
            spill,
        }
    }

    /// The policy settings.
    pub fn config(&self) -> &PolicyConfig {
        &self.config
    }

    /// Hosts held in RAM.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether no host is held in RAM.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Hosts held in the disk tier.
    pub fn spilled(&self) -> usize {
        self.spill.len()
    }

    /// Bytes charged for the hosts held in RAM (the LRU's budget).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// RAM of the disk tier (its index and write batch), charged apart from
    /// [`RobotsCache::bytes`]: the engine counts it against `--memory`.
    pub fn index_bytes(&self) -> usize {
        self.spill.ram_bytes()
    }

    /// The byte budget.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// Hosts moved out of RAM so far to stay within the budget.
    pub fn evictions(&self) -> u64 {
        self.evictions
    }

    /// Occupancy and churn, for progress and `stats.json`: fetches far above the number
    /// of hosts mean hosts are fetched again; the fetch accounting says why.
    pub fn stats(&self) -> CacheStats {
        let s = self.spill.stats();
        CacheStats {
            hosts: self.slots.len() as u64,
            bytes: self.bytes as u64,
            max_bytes: self.max_bytes as u64,
            evictions: self.evictions,
            fetches: self.fetches,
            hosts_spilled: s.hosts,
            index_bytes: s.index_bytes,
            spill_batch_bytes: s.batch_bytes,
            disk_bytes: s.disk_bytes,
            disk_files: s.files,
            spill_writes: s.writes,
            spill_reads: s.reads,
            spill_damaged: s.damaged + s.read_errors,
            spill_write_errors: s.write_errors,
            spill_dropped: s.dropped,
            index_collisions: s.collisions,
            max_fetches_per_host: u64::from(self.max_fetches_per_host),
            hosts_refetched_while_fresh: self.while_fresh,
            fetch_retries: self.retries,
            fetch_refreshes: self.refreshes,
            fetches_abandoned: self.abandoned,
        }
    }

    /// The first fault of the disk tier since the last call (a failed write, read or
    /// removal, a damaged record), for the caller to log once; later ones are counted
    /// in [`CacheStats`].
    pub fn take_spill_error(&mut self) -> Option<SpillError> {
        self.spill.take_error()
    }

    /// Writes the disk tier's batch now (before a checkpoint, at the end of a crawl).
    ///
    /// # Errors
    /// The batch could not be written; it stays in RAM.
    pub fn flush(&mut self) -> Result<(), SpillError> {
        self.spill.flush()
    }

    /// Gives up the fetch in flight for `key` (its robots.txt is asked again when
    /// next needed): for a fetch that failed on this process's own limits, which is
    /// no answer at all. The host's state before the fetch comes back (see
    /// [`RobotsPolicy::abandon_fetch`]), so nothing it knew is lost.
    pub fn forget(&mut self, key: &HostKey) {
        if self.update(key, |p, _| p.abandon_fetch()) == Some(true) {
            self.abandoned += 1;
        }
    }

    /// The policy of a host (restored from the disk tier if it is there).
    pub fn get(&mut self, key: &HostKey) -> Option<&RobotsPolicy> {
        self.load(key);
        self.slots.get(key).map(|s| &*s.policy)
    }

    /// The answer for `url` at `now`: `Pending` if the host is unknown (or its rules
    /// expired), so the caller calls [`RobotsCache::poll_fetch`] first.
    pub fn check(&mut self, url: &Url, now: Instant) -> Access<'_> {
        let Some(key) = HostKey::of(url) else {
            return Access::Pending;
        };
        self.load(&key);
        self.touch(&key);
        match self.slots.get(&key) {
            Some(slot) => slot.policy.check(url.as_str(), now, &self.config),
            None => Access::Pending,
        }
    }

    /// Starts a robots.txt fetch for `url`'s host if one is due, creating the entry.
    pub fn poll_fetch(&mut self, url: &Url, now: Instant) -> Option<FetchRequest> {
        let key = HostKey::of(url)?;
        if !self.load(&key) {
            let policy = RobotsPolicy::new(robots_url(url)?);
            self.insert(key.clone(), policy);
        }
        let (fetch, kind, count) = self.update(&key, |p, _| {
            let kind = FetchKind::of(p, now);
            (p.poll_fetch(now), kind, p.fetches())
        })?;
        if fetch.is_some() {
            self.fetches += 1;
            self.max_fetches_per_host = self.max_fetches_per_host.max(count);
            match kind {
                FetchKind::First => {}
                FetchKind::Refresh => self.refreshes += 1,
                FetchKind::Retry => self.retries += 1,
                FetchKind::WhileFresh => self.while_fresh += 1,
            }
        }
        fetch
    }

    /// Feeds a robots.txt response for the host `key`. `None` if the host is unknown
    /// (the response is then discarded; the host will be fetched when next needed).
    pub fn on_response(
        &mut self,
        key: &HostKey,
        now: Instant,
        response: &RobotsResponse<'_>,
    ) -> Option<Step> {
        self.load(key);
        self.update(key, |p, config| p.on_response(now, response, config))
    }

    /// The parse report of the robots.txt body [`RobotsCache::on_response`] last parsed
    /// for `key` (once), for the crawl log's `robots-truncated`/`robots-long-lines`
    /// annotations. Does not count as a use of the entry, and does not look in the
    /// disk tier (a report is not stored: it is taken right after its response).
    pub fn take_parse_report(&mut self, key: &HostKey) -> Option<ParseReport> {
        self.slots.get_mut(key)?.policy.take_parse_report()
    }

    /// Reports a network failure of the fetch in flight for `key`.
    pub fn on_network_error(&mut self, key: &HostKey, now: Instant) -> Option<Step> {
        self.load(key);
        self.update(key, |p, config| p.on_network_error(now, config))
    }

    /// The capped crawl-delay of `url`'s host, if known (restored from the disk tier
    /// if it is there).
    pub fn crawl_delay(&mut self, url: &Url) -> Option<Duration> {
        let key = HostKey::of(url)?;
        self.load(&key);
        self.slots.get(&key)?.policy.crawl_delay(&self.config)
    }

    /// Every host held in RAM, least recently used first: the order in which
    /// [`RobotsCache::restore`] must see them again so recency survives a checkpoint.
    /// The disk tier's hosts are older still: see [`RobotsCache::for_each_spilled`].
    pub fn entries_lru(&self) -> impl Iterator<Item = (&HostKey, &RobotsPolicy)> + '_ {
        self.order
            .values()
            .filter_map(|k| self.slots.get(k).map(|s| (k, &*s.policy)))
    }

    /// Hands every host of the disk tier to `f`, one at a time (read back from its log
    /// files in bounded memory): for a checkpoint, which writes them before
    /// [`RobotsCache::entries_lru`]. The tier is left as it is.
    pub fn for_each_spilled(&self, f: impl FnMut(HostKey, RobotsPolicy)) -> ScanStats {
        self.spill.for_each_live(f)
    }

    /// Puts a host's policy back (from a checkpoint), as the most recently used entry.
    /// Past the byte budget the least recently used hosts move to the disk tier as
    /// usual, so restoring oldest first keeps the newest in RAM.
    pub fn restore(&mut self, key: HostKey, policy: RobotsPolicy) {
        self.max_fetches_per_host = self.max_fetches_per_host.max(policy.fetches());
        // A checkpoint may name a host twice (an older record in the tier's logs, a
        // newer one later or in RAM): the last one given wins, in RAM and in the tier.
        if !self.spill.is_empty() {
            self.spill.take(&key);
        }
        self.insert(key, policy);
    }

    /// For a checkpoint: the disk tier's log files, made durable and named again in
    /// `dir` (see [`Spill::keep_logs`]).
    ///
    /// # Errors
    /// As [`Spill::keep_logs`].
    pub fn keep_tier_logs(
        &mut self,
        dir: &std::path::Path,
        prefix: &str,
        clock: super::persist::Clock,
    ) -> Result<Option<super::persist::TierFiles>, super::spill::SpillError> {
        self.spill.keep_logs(dir, prefix, clock)
    }

    /// The disk tier, for tests that look inside it.
    #[cfg(test)]
    pub(crate) fn spill_for_tests(&self) -> &Spill {
        &self.spill
    }

    /// Whether `key` is in RAM, after restoring it from the disk tier if it was there.
    fn load(&mut self, key: &HostKey) -> bool {
        if self.slots.contains_key(key) {
            return true;
        }
        match self.spill.take(key) {
            Some(policy) => {
                self.insert(key.clone(), policy);
                true
            }
            None => false,
        }
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

    /// Runs `f` on a host's policy in RAM, then re-measures it and evicts to fit.
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

    /// Moves least recently used entries to the disk tier until the budget holds,
    /// sparing `keep` and the entries of fetches in flight.
    /// What the rules in RAM may take: the budget less the disk tier's RAM (its index
    /// and write batch), so the cache as a whole stays within `max_bytes`; but never
    /// less than a quarter of it, the room the active hosts' rules need (an index past
    /// three quarters of the budget is the part over it, reported in the stats).
    fn rules_budget(&self) -> usize {
        self.max_bytes
            .saturating_sub(self.spill.ram_bytes())
            .max(self.max_bytes / 4)
    }

    fn evict_except(&mut self, keep: u64) {
        let mut from = 0;
        // Read once a call: evictions grow the index by a few bytes each.
        let budget = self.rules_budget();
        while self.bytes > budget {
            let slots = &self.slots;
            let victim = self
                .order
                .range(from..)
                .find(|(s, k)| **s != keep && slots.get(*k).is_some_and(|v| !is_pinned(&v.policy)))
                .map(|(s, _)| *s);
            let Some(stamp) = victim else { break };
            from = stamp + 1;
            let Some(key) = self.order.remove(&stamp) else {
                break;
            };
            if let Some(slot) = self.slots.remove(&key) {
                self.bytes -= slot.bytes;
                self.evictions += 1;
                // A dropped entry is counted by the tier.
                let _: Put = self.spill.put(&key, &slot.policy);
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
        let cold = HostKey::of(&hosts[1]).unwrap();
        assert!(!cache.slots.contains_key(&cold), "cold host out of RAM");
        assert!(cache.spilled() > 0);
        assert!(cache.get(&cold).is_some(), "cold host kept on disk");
        assert!(cache.slots.contains_key(&cold), "and back in RAM");
        assert_eq!(cache.stats().fetches, hosts.len() as u64);
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
