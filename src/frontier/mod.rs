//! The frontier of one shard: per-host FIFO queues, a politeness-aware host scheduler,
//! and a disk tier of append-only segments so that RAM stays within a budget.
//!
//! # Shape
//! - Each host has a FIFO queue in RAM holding its *oldest* queued URLs, at most its
//!   fair share of the RAM budget (never fewer than `per_host_ram_urls`). Everything
//!   else waits in segment files ([`segment`]: front-coded, checksummed records, about
//!   40 bytes per URL), written and read sequentially.
//! - Invariant: a host's RAM queue always holds its oldest entries. Once a host has
//!   entries on disk, its new entries go to disk too, behind them; a refill reads the
//!   oldest segment front to back and moves records into RAM in file order, so per-host
//!   order is first-in first-out end to end (breadth-first within a host).
//! - A refill runs when RAM is empty, or once a quarter of the RAM tier's worth of
//!   URLs was served since the last one (a pass over a segment must pay for itself).
//!   It consumes the oldest segment whole: records whose host has room in RAM
//!   (and while the RAM budget allows) are loaded; the others are *carried* into a new
//!   segment that takes the consumed one's place at the front of the queue, so they
//!   stay ahead of anything newer. Once a host's record is carried in a pass, all its
//!   later records in that pass are carried too, which keeps its order.
//! - The scheduler is a min-heap of hosts keyed by the instant their politeness delay
//!   ends. [`Frontier::take_ready`] serves the host whose delay ended longest ago, so
//!   the crawl is breadth-first across hosts and one huge or trapped host only ever gets
//!   its own turn. While a host has `max_in_flight` fetches running it is off the heap;
//!   [`Frontier::complete`] puts it back with its next eligible instant.
//! - The host table is bounded: a host with nothing in RAM, nothing in flight and a
//!   politeness instant in the past is forgotten when the table exceeds its share of
//!   the budget (its disk records are found again by the next refill). Forgetting one
//!   loses no URL; at worst a new link of that host is queued ahead of its older
//!   spilled ones.
//!
//! Sans-IO with respect to time: every method that needs the clock takes `now`.

#![deny(clippy::indexing_slicing, clippy::expect_used, clippy::panic)]

mod ready;
pub mod segment;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::path::{Path, PathBuf};
use std::time::Instant;

use ahash::{AHashMap, AHashSet};

pub use ready::Gate;
pub use segment::{Record, SegmentError, SegmentReader, SegmentWriter};

/// A URL waiting in the frontier, with what the crawl log needs about how it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueuedUrl {
    /// The canonical URL.
    pub url: String,
    /// The page (or redirect) it was found on; `None` for a seed.
    pub via: Option<String>,
    /// The hop path from the seed, one letter per hop (Heritrix style: `L` link,
    /// `R` redirect, `E` embed, `P` prerequisite such as robots.txt).
    pub hops: String,
    /// Fetch attempts that failed transiently so far (network errors, 429, 503).
    pub attempts: u8,
}

impl QueuedUrl {
    /// A seed: no via, no hops.
    pub fn seed(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            via: None,
            hops: String::new(),
            attempts: 0,
        }
    }

    /// Approximate bytes this entry costs in RAM: the struct plus each heap string as
    /// the allocator holds it ([`heap_chunk`]: a header and 16-byte rounding, which
    /// for URL-sized strings adds a third; the first wide memory test was over budget
    /// partly because this counted only the string lengths).
    pub fn ram_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + heap_chunk(self.url.len())
            + self.via.as_ref().map_or(0, |v| heap_chunk(v.len()))
            + heap_chunk(self.hops.len())
    }
}

/// Bytes a heap allocation of `len` bytes occupies in a typical malloc (glibc: an
/// 8-byte header, 16-byte granularity, 32 bytes at least); 0 for no allocation.
pub fn heap_chunk(len: usize) -> usize {
    if len == 0 {
        0
    } else {
        (len + 8).next_multiple_of(16).max(32)
    }
}

/// Limits and places of one shard's frontier.
#[derive(Clone, Debug)]
pub struct FrontierConfig {
    /// Directory for this shard's segment files (created if missing).
    pub dir: PathBuf,
    /// RAM the queued URLs and the host table may use, in bytes.
    pub ram_budget_bytes: usize,
    /// At most this many URLs per host are held in RAM.
    pub per_host_ram_urls: usize,
    /// A segment is sealed and a new one started past this size.
    pub segment_bytes: u64,
    /// Fetches of one host that may run at once.
    pub max_in_flight_per_host: u32,
}

impl FrontierConfig {
    /// Defaults for a directory: 64 MiB of RAM, 8 URLs per host in RAM, 64 MiB
    /// segments, one fetch per host at a time.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            ram_budget_bytes: 64 << 20,
            per_host_ram_urls: 8,
            segment_bytes: 64 << 20,
            max_in_flight_per_host: 1,
        }
    }
}

/// Why a frontier operation failed.
#[derive(Debug)]
pub enum FrontierError {
    /// A segment could not be written or read.
    Segment { path: PathBuf, source: SegmentError },
    /// The frontier directory could not be prepared.
    Dir {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl std::fmt::Display for FrontierError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Segment { path, .. } => write!(f, "frontier segment {}", path.display()),
            Self::Dir { path, .. } => write!(f, "frontier directory {}", path.display()),
        }
    }
}

impl std::error::Error for FrontierError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Segment { source, .. } => Some(source),
            Self::Dir { source, .. } => Some(source),
        }
    }
}

/// Counters a progress display and `stats.json` show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrontierStats {
    pub ram_urls: u64,
    pub disk_urls: u64,
    pub disk_bytes: u64,
    pub ram_bytes: u64,
    pub hosts: u64,
    pub hosts_ready: u64,
    pub hosts_in_flight: u64,
    pub segments: u64,
    pub refills: u64,
    pub carried_records: u64,
}

impl FrontierStats {
    /// Disk bytes per URL waiting on disk (0 when none).
    pub fn disk_bytes_per_url(&self) -> f64 {
        if self.disk_urls == 0 {
            0.0
        } else {
            self.disk_bytes as f64 / self.disk_urls as f64
        }
    }
}

/// Fixed per-host overhead counted against the RAM budget (table slot, map entry,
/// heap entry); measured approximately from the struct sizes.
const HOST_OVERHEAD_BYTES: usize = 160;

/// A typical queued URL's RAM cost ([`QueuedUrl::ram_bytes`]: the struct, a URL and a
/// via of some 60 bytes each), for sizing per-host shares and the refill gate.
const APPROX_URL_BYTES: usize = 256;

/// However few hosts there are, one holds at most this many URLs in RAM.
const MAX_PER_HOST_RAM_URLS: usize = 1 << 16;

#[derive(Debug)]
struct Host {
    name: Box<str>,
    ram: VecDeque<QueuedUrl>,
    in_flight: u32,
    eligible_at: Instant,
    /// Generation of the heap entry that is live for this host; older entries are
    /// skipped (lazy deletion).
    heap_gen: u64,
    on_heap: bool,
    /// Not ready: the engine holds the host's queue (its robots.txt is being fetched)
    /// until [`Frontier::release`]. Off the heap while set.
    held: bool,
}

type HostId = usize;

/// One shard's frontier. See the module docs.
#[derive(Debug)]
pub struct Frontier {
    config: FrontierConfig,
    hosts: Vec<Option<Host>>,
    free_slots: Vec<HostId>,
    by_name: AHashMap<Box<str>, HostId>,
    heap: BinaryHeap<Reverse<(Instant, u64, HostId)>>,
    next_gen: u64,
    /// Sealed segments, oldest first.
    sealed: VecDeque<PathBuf>,
    sealed_bytes: u64,
    active: Option<SegmentWriter>,
    next_segment_seq: u64,
    /// RAM in use: queued URLs plus [`HOST_OVERHEAD_BYTES`] per host in the table.
    ram_bytes: usize,
    ram_urls: u64,
    disk_urls: u64,
    /// Fixed-size counting sketch: records on disk per hash bucket of host names. A
    /// host whose bucket is non-zero may have records on disk, so its new URLs go to
    /// disk behind them (a collision only sends a URL to disk early: order is kept,
    /// nothing is lost). It needs no per-host state, so hosts that live only on disk
    /// cost no RAM.
    disk_counts: Vec<u32>,
    attempts_since_forget: usize,
    /// URLs served from RAM since the last refill (see [`Frontier::refill_gate`]).
    taken_since_refill: u64,
    refills: u64,
    carried_records: u64,
}

impl Frontier {
    /// Opens an empty frontier in `config.dir` (created if missing). Leftover segment
    /// files from an earlier run are not read here: resuming is the checkpoint's job.
    ///
    /// # Errors
    /// [`FrontierError::Dir`] if the directory cannot be created.
    pub fn new(config: FrontierConfig) -> Result<Self, FrontierError> {
        std::fs::create_dir_all(&config.dir).map_err(|source| FrontierError::Dir {
            path: config.dir.clone(),
            source,
        })?;
        let disk_counts = vec![0; disk_sketch_len(config.ram_budget_bytes)];
        Ok(Self {
            config,
            hosts: Vec::new(),
            free_slots: Vec::new(),
            by_name: AHashMap::new(),
            heap: BinaryHeap::new(),
            next_gen: 0,
            sealed: VecDeque::new(),
            sealed_bytes: 0,
            active: None,
            next_segment_seq: 0,
            ram_bytes: 0,
            ram_urls: 0,
            disk_urls: 0,
            disk_counts,
            attempts_since_forget: 0,
            taken_since_refill: 0,
            refills: 0,
            carried_records: 0,
        })
    }

    /// Queues a URL for `host` (the scheduling key: `scheme://host:port` or the host
    /// name, as the engine chooses). It goes to RAM when the host's queue and the budget
    /// have room and nothing of the host waits on disk, else to the disk tier.
    ///
    /// # Errors
    /// A segment write failure; the URL is then not queued.
    pub fn push(&mut self, host: &str, item: QueuedUrl, now: Instant) -> Result<(), FrontierError> {
        let slot = self.disk_slot(host);
        let on_disk = self.disk_counts.get(slot).is_some_and(|&c| c > 0);
        if !on_disk {
            if let Some(id) = self.ram_room_for(host, &item, now) {
                self.enqueue_ram(id, item);
                return Ok(());
            }
        }
        self.append_to_disk(host, &item)?;
        if let Some(c) = self.disk_counts.get_mut(slot) {
            *c += 1;
        }
        Ok(())
    }

    /// Puts a URL taken by [`Frontier::take_ready`] back at the head of its host's
    /// queue (a retry, or a URL that waited for robots.txt), so it keeps its place in
    /// the host's order. It always goes to RAM, even past the budget by one entry: it
    /// was in RAM a moment ago.
    pub fn requeue_front(&mut self, host: &str, item: QueuedUrl) {
        let id = match self.by_name.get(host) {
            Some(&id) => id,
            None => self.host_id(host, Instant::now()),
        };
        self.ram_bytes += item.ram_bytes();
        self.ram_urls += 1;
        self.host_mut(id).ram.push_front(item);
    }

    /// A fetch of `host` ended; it may be served again from `next_eligible_at` (now
    /// plus its politeness delay, crawl-delay or Retry-After, as the engine decides).
    pub fn complete(&mut self, host: &str, next_eligible_at: Instant) {
        let Some(&id) = self.by_name.get(host) else {
            return;
        };
        let max_in_flight = self.config.max_in_flight_per_host;
        let h = self.host_mut(id);
        h.in_flight = h.in_flight.saturating_sub(1);
        if next_eligible_at > h.eligible_at {
            h.eligible_at = next_eligible_at;
        }
        let at = h.eligible_at;
        if !h.held && !h.ram.is_empty() && h.in_flight < max_in_flight {
            self.push_heap(id, at);
        }
    }

    /// Pushes back a host's eligibility without a fetch (e.g. its robots.txt or DNS is
    /// not ready, or it was parked after repeated failures).
    pub fn defer(&mut self, host: &str, until: Instant) {
        let Some(&id) = self.by_name.get(host) else {
            return;
        };
        let h = self.host_mut(id);
        h.eligible_at = h.eligible_at.max(until);
        let at = h.eligible_at;
        if h.on_heap {
            self.push_heap(id, at);
        }
    }

    /// The earliest instant some host becomes eligible, for the event loop's poll
    /// timeout; `None` when nothing is queued in RAM and nothing waits on disk.
    pub fn next_wakeup(&mut self) -> Option<Instant> {
        self.next_wakeup_at(Instant::now())
    }

    /// [`Frontier::next_wakeup`] with the time given: URLs waiting on disk (a refill
    /// is due) make it `now`. For callers that read no clock (the crawl core).
    pub fn next_wakeup_at(&mut self, now: Instant) -> Option<Instant> {
        while let Some(&Reverse((at, generation, id))) = self.heap.peek() {
            let live = matches!(self.hosts.get(id), Some(Some(h)) if h.on_heap && h.heap_gen == generation);
            if live {
                return Some(at);
            }
            self.heap.pop();
        }
        if self.disk_urls > 0 {
            Some(now)
        } else {
            None
        }
    }

    /// True when no URL is queued in RAM or on disk and nothing is in flight.
    pub fn is_exhausted(&self) -> bool {
        self.ram_urls == 0
            && self.disk_urls == 0
            && self.hosts.iter().flatten().all(|h| h.in_flight == 0)
    }

    /// Current counters.
    pub fn stats(&self) -> FrontierStats {
        let active_bytes = self.active.as_ref().map_or(0, SegmentWriter::bytes);
        let hosts = self.hosts.iter().flatten();
        let (mut count, mut in_flight) = (0, 0);
        for h in hosts {
            count += 1;
            if h.in_flight > 0 {
                in_flight += 1;
            }
        }
        FrontierStats {
            ram_urls: self.ram_urls,
            disk_urls: self.disk_urls,
            disk_bytes: self.sealed_bytes + active_bytes,
            ram_bytes: self.ram_bytes as u64,
            hosts: count,
            hosts_ready: self.hosts.iter().flatten().filter(|h| h.on_heap).count() as u64,
            hosts_in_flight: in_flight,
            segments: self.sealed.len() as u64 + u64::from(self.active.is_some()),
            refills: self.refills,
            carried_records: self.carried_records,
        }
    }

    /// Every queued URL, RAM and disk, in per-host FIFO order per tier, for a
    /// checkpoint. Flushes the active segment so the on-disk part is complete.
    ///
    /// # Errors
    /// A segment flush or read failure.
    pub fn for_each_queued(
        &mut self,
        mut f: impl FnMut(&str, &QueuedUrl),
    ) -> Result<(), FrontierError> {
        for h in self.hosts.iter().flatten() {
            for item in &h.ram {
                f(&h.name, item);
            }
        }
        if let Some(active) = self.active.as_mut() {
            let path = active.path().to_path_buf();
            active
                .flush()
                .map_err(|source| FrontierError::Segment { path, source })?;
        }
        let paths: Vec<PathBuf> = self
            .sealed
            .iter()
            .cloned()
            .chain(self.active.as_ref().map(|a| a.path().to_path_buf()))
            .collect();
        for path in paths {
            let mut reader =
                SegmentReader::open(&path).map_err(|source| FrontierError::Segment {
                    path: path.clone(),
                    source,
                })?;
            while let Some(rec) = reader
                .next_record()
                .map_err(|source| FrontierError::Segment {
                    path: path.clone(),
                    source,
                })?
            {
                f(&rec.host, &rec.item);
            }
        }
        Ok(())
    }

    fn host(&self, id: HostId) -> &Host {
        match self.hosts.get(id) {
            Some(Some(h)) => h,
            _ => unreachable!("host ids come from by_name and are live"),
        }
    }

    fn host_mut(&mut self, id: HostId) -> &mut Host {
        match self.hosts.get_mut(id) {
            Some(Some(h)) => h,
            _ => unreachable!("host ids come from by_name and are live"),
        }
    }

    fn host_id(&mut self, name: &str, now: Instant) -> HostId {
        if let Some(&id) = self.by_name.get(name) {
            return id;
        }
        let host = Host {
            name: name.into(),
            ram: VecDeque::new(),
            in_flight: 0,
            eligible_at: now,
            heap_gen: 0,
            on_heap: false,
            held: false,
        };
        let id = if let Some(slot) = self.free_slots.pop() {
            if let Some(s) = self.hosts.get_mut(slot) {
                *s = Some(host);
            }
            slot
        } else {
            self.hosts.push(Some(host));
            self.hosts.len() - 1
        };
        self.by_name.insert(name.into(), id);
        self.ram_bytes += HOST_OVERHEAD_BYTES + name.len();
        id
    }

    fn push_heap(&mut self, id: HostId, at: Instant) {
        self.next_gen += 1;
        let generation = self.next_gen;
        let h = self.host_mut(id);
        h.heap_gen = generation;
        h.on_heap = true;
        self.heap.push(Reverse((at, generation, id)));
    }

    fn schedule_if_idle(&mut self, id: HostId) {
        let max_in_flight = self.config.max_in_flight_per_host;
        let h = self.host(id);
        if !h.on_heap && !h.held && !h.ram.is_empty() && h.in_flight < max_in_flight {
            let at = h.eligible_at;
            self.push_heap(id, at);
        }
    }

    /// The host's id if one more URL of it fits in RAM (creating the host entry when
    /// the budget allows, after forgetting idle hosts if needed).
    fn ram_room_for(&mut self, host: &str, item: &QueuedUrl, now: Instant) -> Option<HostId> {
        let item_bytes = item.ram_bytes();
        if let Some(&id) = self.by_name.get(host) {
            let fits = self.host(id).ram.len() < self.per_host_cap()
                && self.ram_bytes + item_bytes <= self.config.ram_budget_bytes;
            return fits.then_some(id);
        }
        let need = item_bytes + HOST_OVERHEAD_BYTES + host.len();
        if self.ram_bytes + need > self.config.ram_budget_bytes {
            // Scanning the table is O(hosts): do it at most once per quarter-table of
            // attempts, so a table full of busy hosts costs amortized O(1) per push.
            self.attempts_since_forget += 1;
            if self.attempts_since_forget < self.by_name.len() / 4 {
                return None;
            }
            self.attempts_since_forget = 0;
            self.forget_idle_hosts(now);
            if self.ram_bytes + need > self.config.ram_budget_bytes {
                return None;
            }
        }
        Some(self.host_id(host, now))
    }

    /// URLs one host may hold in RAM: its fair share of the budget (at
    /// [`APPROX_URL_BYTES`] a URL, split over the hosts in the table), never fewer than
    /// `per_host_ram_urls`. A crawl of few hosts with deep queues then fills its RAM
    /// tier instead of holding 8 URLs a host and refilling constantly; a crawl of many
    /// hosts gets the configured minimum. The budget check still bounds the total.
    fn per_host_cap(&self) -> usize {
        let share = self.config.ram_budget_bytes / APPROX_URL_BYTES / self.by_name.len().max(1);
        share.clamp(self.config.per_host_ram_urls, MAX_PER_HOST_RAM_URLS)
    }

    /// URLs that must leave RAM between two refills (unless RAM is empty): a quarter
    /// of what the budget holds at [`APPROX_URL_BYTES`] a URL, so one segment pass is
    /// amortized over many served URLs.
    fn refill_gate(&self) -> u64 {
        (self.config.ram_budget_bytes / APPROX_URL_BYTES / 4).max(1) as u64
    }

    fn enqueue_ram(&mut self, id: HostId, item: QueuedUrl) {
        self.ram_bytes += item.ram_bytes();
        self.ram_urls += 1;
        self.host_mut(id).ram.push_back(item);
        self.schedule_if_idle(id);
    }

    /// Forgets every host that holds nothing in RAM, runs nothing and whose politeness
    /// instant has passed: such a host carries no state worth its RAM. One scan frees
    /// all of them, so the cost is amortized over the hosts created since.
    fn forget_idle_hosts(&mut self, now: Instant) {
        for id in 0..self.hosts.len() {
            let idle = matches!(self.hosts.get(id), Some(Some(h))
                if h.ram.is_empty() && h.in_flight == 0 && !h.held && h.eligible_at <= now);
            if !idle {
                continue;
            }
            if let Some(h) = self.hosts.get_mut(id).and_then(Option::take) {
                self.ram_bytes = self
                    .ram_bytes
                    .saturating_sub(HOST_OVERHEAD_BYTES + h.name.len());
                self.by_name.remove(&h.name);
                self.free_slots.push(id);
            }
        }
    }

    fn disk_slot(&self, host: &str) -> usize {
        // A fixed-key hash: the sketch must give the same bucket for the same host for
        // the life of the process (ahash with fixed keys does; the seeds are arbitrary).
        let state = ahash::RandomState::with_seeds(0x7472_6177, 0x6c66, 0x726f_6e74, 0x0069_6572);
        let len = self.disk_counts.len().max(1);
        (state.hash_one(host) % len as u64) as usize
    }

    fn segment_path(&mut self) -> PathBuf {
        let seq = self.next_segment_seq;
        self.next_segment_seq += 1;
        self.config.dir.join(format!("frontier-{seq:012}.seg"))
    }

    fn append_to_disk(&mut self, host: &str, item: &QueuedUrl) -> Result<(), FrontierError> {
        if self
            .active
            .as_ref()
            .is_some_and(|a| a.bytes() >= self.config.segment_bytes)
        {
            self.seal_active()?;
        }
        if self.active.is_none() {
            let path = self.segment_path();
            let writer = SegmentWriter::create(&path).map_err(|source| FrontierError::Segment {
                path: path.clone(),
                source,
            })?;
            self.active = Some(writer);
        }
        if let Some(active) = self.active.as_mut() {
            active
                .append(host, item)
                .map_err(|source| FrontierError::Segment {
                    path: active.path().to_path_buf(),
                    source,
                })?;
        }
        self.disk_urls += 1;
        Ok(())
    }

    fn seal_active(&mut self) -> Result<(), FrontierError> {
        if let Some(active) = self.active.take() {
            let path = active.path().to_path_buf();
            let bytes = active.bytes();
            active.seal().map_err(|source| FrontierError::Segment {
                path: path.clone(),
                source,
            })?;
            self.sealed.push_back(path);
            self.sealed_bytes += bytes;
        }
        Ok(())
    }

    /// Moves records from the oldest segment into RAM (see the module docs).
    fn refill(&mut self, now: Instant) -> Result<(), FrontierError> {
        self.taken_since_refill = 0;
        if self.sealed.is_empty() {
            self.seal_active()?;
        }
        let Some(path) = self.sealed.pop_front() else {
            return Ok(());
        };
        self.refills += 1;
        let consumed_bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let mut reader = SegmentReader::open(&path).map_err(|source| FrontierError::Segment {
            path: path.clone(),
            source,
        })?;
        let carry_path = self.segment_path();
        let mut carry: Option<SegmentWriter> = None;
        let mut carried_hosts: AHashSet<String> = AHashSet::new();
        loop {
            let rec = match reader.next_record() {
                Ok(Some(rec)) => rec,
                Ok(None) => break,
                // A damaged tail cannot be decoded; the records before it were taken.
                // The checkpoint keeps an intact copy; here we stop reading this file.
                Err(source) => {
                    warn_damaged_segment(&path, &source);
                    break;
                }
            };
            self.disk_urls = self.disk_urls.saturating_sub(1);
            let room = if carried_hosts.contains(&rec.host) {
                None
            } else {
                self.ram_room_for(&rec.host, &rec.item, now)
            };
            if let Some(id) = room {
                let slot = self.disk_slot(&rec.host);
                if let Some(c) = self.disk_counts.get_mut(slot) {
                    *c = c.saturating_sub(1);
                }
                self.enqueue_ram(id, rec.item);
            } else {
                if carry.is_none() {
                    carry = Some(SegmentWriter::create(&carry_path).map_err(|source| {
                        FrontierError::Segment {
                            path: carry_path.clone(),
                            source,
                        }
                    })?);
                }
                if let Some(w) = carry.as_mut() {
                    w.append(&rec.host, &rec.item)
                        .map_err(|source| FrontierError::Segment {
                            path: carry_path.clone(),
                            source,
                        })?;
                }
                self.disk_urls += 1;
                self.carried_records += 1;
                carried_hosts.insert(rec.host);
            }
        }
        if let Some(w) = carry {
            let bytes = w.bytes();
            let (p, _) = w.seal().map_err(|source| FrontierError::Segment {
                path: carry_path.clone(),
                source,
            })?;
            self.sealed.push_front(p);
            self.sealed_bytes += bytes;
        }
        self.sealed_bytes = self.sealed_bytes.saturating_sub(consumed_bytes);
        std::fs::remove_file(&path).map_err(|source| FrontierError::Segment {
            path: path.clone(),
            source: SegmentError::Io(source),
        })?;
        Ok(())
    }

    /// The configured directory.
    pub fn dir(&self) -> &Path {
        &self.config.dir
    }
}

/// Buckets in the disk sketch: about 1/16 of the budget in 4-byte counters, between
/// 1,024 and 1,048,576.
fn disk_sketch_len(ram_budget_bytes: usize) -> usize {
    (ram_budget_bytes / 64).clamp(1024, 1 << 20)
}

fn warn_damaged_segment(path: &Path, err: &SegmentError) {
    eprintln!(
        "trawl: frontier segment {} damaged, rest skipped: {err}",
        path.display()
    );
}

#[cfg(test)]
mod tests;
