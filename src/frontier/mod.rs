//! The frontier of one shard: per-host FIFO queues that continue on disk per host, and
//! a politeness-time scheduler of hosts. `docs/frontier.md` has the layout, the block
//! format, the RAM rules and the bytes per host.
//!
//! # Shape
//! - Each host's queue is, in order: its *head* in RAM (at most its fair share of the
//!   budget, [`Frontier::per_host_cap`]), then its *blocks* on disk (oldest first),
//!   then a small *buffer* of its newest URLs in RAM. A host's overflow collects in
//!   the buffer; a full buffer becomes one block ([`block`]: tens of URLs,
//!   front-coded, checksummed), put in the shard's write batch, which is appended to
//!   the current log file with one write ([`store`]). The host keeps a FIFO of block
//!   references (16 bytes a block, never per URL). Once a host has a backlog beyond
//!   RAM, its new URLs go behind it, so per-host order is first-in first-out end to
//!   end.
//! - The scheduler is a min-heap of hosts keyed by the instant their politeness
//!   delay ends. A host is on it while it has anything queued (RAM or disk), is not
//!   held and has a fetch slot free. When its turn comes and its RAM head is under
//!   the low-water mark (half its share), its oldest block is read back at once (one
//!   positioned read), whatever other hosts spilled. [`Frontier::take_ready`] serves
//!   the host whose delay ended longest ago, at O(log hosts) a pick.
//! - Log files are reference-counted by live blocks and deleted when none remains.
//! - The host table is bounded by what is queued: a host with nothing in RAM or on
//!   disk, nothing in flight, not held and whose instant passed is forgotten when
//!   the table needs room. A host with a backlog keeps its entry (its block list is
//!   its state).
//!
//! Sans-IO with respect to time: every method that needs the clock takes `now`.

#![deny(clippy::indexing_slicing, clippy::expect_used, clippy::panic)]

mod active;
mod address;
pub mod block;
mod host;
pub mod kept;
mod line;
mod queue;
mod ready;
pub mod segment;
mod stats;
pub mod store;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::bytesize::heap_chunk;
use host::{Host, HostId, HostTable, Spill};
pub use ready::Gate;
pub use segment::{Record, SegmentError, SegmentReader, SegmentWriter};
pub use stats::FrontierStats;
pub use store::{BlockRef, BlockStore, FileStore, MemCalls, MemStore};

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

/// Limits and places of one shard's frontier.
#[derive(Clone, Debug)]
pub struct FrontierConfig {
    /// Directory for this shard's block log files (created if missing; unused by
    /// [`Frontier::in_memory`]).
    pub dir: PathBuf,
    /// RAM the queued URLs and the host table may use, in bytes.
    pub ram_budget_bytes: usize,
    /// However many hosts share the budget, each may hold at least this many URLs in
    /// RAM (its head); at least [`FrontierConfig::block_urls`].
    pub per_host_ram_urls: usize,
    /// However few hosts there are, one holds at most this many URLs in RAM.
    pub max_per_host_ram_urls: usize,
    /// URLs in a full block: a host's buffer is written out when it holds this many.
    pub block_urls: usize,
    /// A log file is closed and a new one started past this size.
    pub segment_bytes: u64,
    /// Fetches of one host that may run at once.
    pub max_in_flight_per_host: u32,
    /// Hosts in the active set at most (served, held for robots.txt, or waiting out
    /// their politeness delay); the rest wait in the line at no RAM cost a host. The
    /// engine sizes it from `--memory`.
    pub max_active_hosts: usize,
    /// Active hosts on one server address at most (`address.rs`): a host found to be
    /// the next on a full address goes to the back of the line.
    pub max_active_per_address: u32,
    /// URLs an activation may take before its host goes to the back of the line, if
    /// hosts wait there (see docs/frontier.md, "The active set").
    pub activation_budget: u16,
}

impl FrontierConfig {
    /// Defaults for a directory: 64 MiB of RAM, blocks of 64 URLs (a few KiB on
    /// disk), heads of at least 64 URLs (a block's worth), 16 MiB log files, one fetch
    /// per host at a time.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            ram_budget_bytes: 64 << 20,
            per_host_ram_urls: 64,
            max_per_host_ram_urls: 1 << 16,
            block_urls: 64,
            segment_bytes: 16 << 20,
            max_in_flight_per_host: 1,
            max_active_hosts: 65_536,
            max_active_per_address: u32::MAX,
            activation_budget: DEFAULT_ACTIVATION_BUDGET,
        }
    }
}

/// URLs an activation takes before its host rotates to the back of the line (when
/// hosts wait there): at a 500 ms delay, two minutes of a host's time, long enough to
/// pay back its robots.txt and name lookup hundreds of times, short enough that a
/// host of millions of pages lets the waiting hosts in.
pub const DEFAULT_ACTIVATION_BUDGET: u16 = 256;

/// Why a frontier operation failed.
#[derive(Debug)]
pub enum FrontierError {
    /// A segment (a checkpoint's dump) could not be written or read.
    Segment { path: PathBuf, source: SegmentError },
    /// The frontier directory could not be prepared.
    Dir {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Blocks could not be appended to a log file (the URL being pushed is not
    /// queued; the blocks stay in RAM and are written by a later append).
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A block could not be read (not damage: the file or the read failed).
    Read {
        path: PathBuf,
        offset: u64,
        source: std::io::Error,
    },
}

impl std::fmt::Display for FrontierError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Segment { path, .. } => write!(f, "frontier segment {}", path.display()),
            Self::Dir { path, .. } => write!(f, "frontier directory {}", path.display()),
            Self::Write { path, .. } => write!(f, "cannot write frontier log {}", path.display()),
            Self::Read { path, offset, .. } => write!(
                f,
                "cannot read the frontier block at byte {offset} of {}",
                path.display()
            ),
        }
    }
}

impl std::error::Error for FrontierError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Segment { source, .. } => Some(source),
            Self::Dir { source, .. } | Self::Write { source, .. } | Self::Read { source, .. } => {
                Some(source)
            }
        }
    }
}

/// A block whose checksum or records did not decode: its URLs are lost (the
/// checkpoint has them, if it was taken before), the host's other blocks are served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockDamage {
    pub path: PathBuf,
    pub offset: u64,
    /// URLs the block held.
    pub urls: u32,
    pub host: String,
}

/// A typical queued URL's RAM cost ([`QueuedUrl::ram_bytes`]: the struct, a URL and a
/// via of some 60 bytes each), for sizing per-host shares.
const APPROX_URL_BYTES: usize = 256;

/// The write batch is appended to the log once it holds this many bytes (less for a
/// budget under 4 MiB: a sixteenth of it, 4 KiB at least).
const WRITE_BATCH_BYTES: usize = 256 << 10;

/// RAM one host costs beyond its URLs: its slot, its index entry (a `u32` and a
/// control byte, at a load of 7/8), one heap entry; its name comes on top
/// ([`heap_chunk`]).
const HOST_BYTES: usize = std::mem::size_of::<Option<Host>>() + 8 + HEAP_ENTRY_BYTES;
const HEAP_ENTRY_BYTES: usize = std::mem::size_of::<Reverse<(Instant, u64, HostId)>>();
/// A host's [`Spill`] as allocated.
const SPILL_BYTES: usize = (std::mem::size_of::<Spill>() + 8).next_multiple_of(16);
const BLOCK_REF_BYTES: usize = std::mem::size_of::<BlockRef>();

/// One shard's frontier. See the module docs.
#[derive(Debug)]
pub struct Frontier {
    config: FrontierConfig,
    store: Box<dyn BlockStore>,
    table: HostTable,
    heap: BinaryHeap<Reverse<(Instant, u64, HostId)>>,
    next_gen: u64,
    /// Hosts whose `on_heap` is set (the heap also holds stale entries).
    on_heap: u64,
    /// Encoded blocks not yet appended, and the host of each, in order.
    batch: Vec<u8>,
    batch_hosts: Vec<HostId>,
    /// RAM in use, as the budget counts it.
    ram_bytes: usize,
    /// RAM of the URLs in hosts' buffers (part of `ram_bytes`).
    pending_bytes: usize,
    ram_urls: u64,
    disk_urls: u64,
    in_flight: u64,
    /// Hosts with at least one fetch in flight.
    hosts_in_flight: u64,
    hosts_with_disk: u64,
    blocks_written: u64,
    blocks_read: u64,
    disk_reads_bytes: u64,
    blocks_damaged: u64,
    /// The latest damaged blocks (at most [`MAX_DAMAGE_REPORTS`]).
    damage: VecDeque<BlockDamage>,
    attempts_since_forget: usize,
    /// Hosts that held nothing and ran nothing when last seen, in that order: the
    /// first to forget when the table needs room (each listed once, so the list is
    /// no longer than the table).
    idle: VecDeque<HostId>,
    /// Hosts not in the active set wait here (`line.rs`).
    line: line::Line,
    active_hosts: u64,
    activations: u64,
    rotations: u64,
    /// Active hosts per server address (`address.rs`).
    addresses: address::Addresses,
    /// Active hosts whose fetch ended with nothing left or their budget spent: they
    /// leave the active set at the next turn, unless the page just fetched gave them
    /// more (its links are admitted after the fetch completes).
    settling: Vec<HostId>,
    /// Hosts that left the active set served to the end, since the caller last took
    /// them ([`Frontier::take_left`]): the engine drops what it keeps per host.
    left: Vec<Box<str>>,
    scratch: Vec<u8>,
    read_buf: Vec<u8>,
}

const MAX_DAMAGE_REPORTS: usize = 16;

impl Frontier {
    /// An empty frontier whose blocks go to log files in `config.dir` (created if
    /// missing). Leftover files from an earlier run are not read: resuming is the
    /// checkpoint's job.
    ///
    /// # Errors
    /// [`FrontierError::Dir`] if the directory cannot be created.
    pub fn new(config: FrontierConfig) -> Result<Self, FrontierError> {
        let store = FileStore::open(&config.dir, config.segment_bytes).map_err(|source| {
            FrontierError::Dir {
                path: config.dir.clone(),
                source,
            }
        })?;
        Ok(Self::with_store(config, Box::new(store)))
    }

    /// An empty frontier whose blocks stay in memory ([`MemStore`]): the same
    /// encoding and bookkeeping, no files (tests, benchmarks).
    pub fn in_memory(config: FrontierConfig) -> Self {
        let store = MemStore::new(config.segment_bytes);
        Self::with_store(config, Box::new(store))
    }

    /// An empty frontier on a given block store.
    pub fn with_store(mut config: FrontierConfig, store: Box<dyn BlockStore>) -> Self {
        config.block_urls = config.block_urls.clamp(1, 4096);
        config.per_host_ram_urls = config.per_host_ram_urls.max(config.block_urls);
        config.max_per_host_ram_urls = config.max_per_host_ram_urls.max(config.per_host_ram_urls);
        config.max_in_flight_per_host = config.max_in_flight_per_host.max(1);
        Self {
            config,
            store,
            table: HostTable::default(),
            heap: BinaryHeap::new(),
            next_gen: 0,
            on_heap: 0,
            batch: Vec::new(),
            batch_hosts: Vec::new(),
            ram_bytes: 0,
            pending_bytes: 0,
            hosts_in_flight: 0,
            ram_urls: 0,
            disk_urls: 0,
            in_flight: 0,
            hosts_with_disk: 0,
            blocks_written: 0,
            blocks_read: 0,
            disk_reads_bytes: 0,
            blocks_damaged: 0,
            damage: VecDeque::new(),
            attempts_since_forget: 0,
            idle: VecDeque::new(),
            line: line::Line::default(),
            active_hosts: 0,
            activations: 0,
            rotations: 0,
            addresses: address::Addresses::default(),
            settling: Vec::new(),
            left: Vec::new(),
            scratch: Vec::new(),
            read_buf: Vec::new(),
        }
    }

    /// Queues a URL for `host` (the scheduling key: `scheme://host:port` or the host
    /// name, as the engine chooses). A host with no entry waits in the line
    /// (`line.rs`) until its activation. A host with an entry takes it in its own
    /// queue: in its RAM head when it has no backlog, its head is under its share and
    /// the budget has room; else behind its backlog (its buffer, written out as a
    /// block when full). An inactive host with nothing queued gets a marker in the
    /// line, so it comes back behind the hosts waiting before it.
    ///
    /// # Errors
    /// [`FrontierError::Write`]: the write batch was full and could not be appended;
    /// the URL is then not queued.
    pub fn push(
        &mut self,
        host: &str,
        item: QueuedUrl,
        _now: Instant,
    ) -> Result<(), FrontierError> {
        let Some(id) = self.table.find(host) else {
            return self.line_push(host, &item);
        };
        if self.host(id).is_some_and(|h| !h.active && !h.waiting) {
            self.line_push_marker(id)?;
        }
        self.enqueue(id, item)?;
        self.schedule_if_idle(id);
        Ok(())
    }

    /// Puts `item` in `id`'s queue (head or backlog, as [`Frontier::push`] says).
    fn enqueue(&mut self, id: HostId, item: QueuedUrl) -> Result<(), FrontierError> {
        let bytes = item.ram_bytes();
        let cap = self.per_host_cap();
        let to_ram = self
            .host(id)
            .is_some_and(|h| h.spill.is_none() && h.ram.len() < cap)
            && self.ram_bytes + bytes <= self.head_budget();
        if to_ram {
            self.ram_bytes += bytes;
            self.ram_urls += 1;
            if let Some(h) = self.host_mut(id) {
                h.ram.push_back(item);
            }
        } else {
            self.spill(id, item)?;
        }
        Ok(())
    }

    /// Puts a URL taken by [`Frontier::take_ready`] back at the head of its host's
    /// queue (a retry, or a URL that waited for robots.txt), so it keeps its place in
    /// the host's order. It always goes to RAM, even past the budget by one entry: it
    /// was in RAM a moment ago. The host is active (it was just served).
    pub fn requeue_front(&mut self, host: &str, item: QueuedUrl, now: Instant) {
        let id = match self.table.find(host) {
            Some(id) => id,
            None => self.new_host(host, now),
        };
        self.activate(id);
        self.ram_bytes += item.ram_bytes();
        self.ram_urls += 1;
        if let Some(h) = self.host_mut(id) {
            h.ram.push_front(item);
        }
        self.schedule_if_idle(id);
    }

    /// A fetch of `host` ended; it may be served again from `next_eligible_at` (now
    /// plus its politeness delay, crawl-delay or Retry-After, as the engine decides).
    pub fn complete(&mut self, host: &str, next_eligible_at: Instant) {
        let Some(id) = self.table.find(host) else {
            return;
        };
        let Some(h) = self.host_mut(id) else {
            return;
        };
        let was_running = h.in_flight > 0;
        h.in_flight = h.in_flight.saturating_sub(1);
        if next_eligible_at > h.eligible_at {
            h.eligible_at = next_eligible_at;
        }
        let now_idle = h.in_flight == 0;
        let finished = h.in_flight == 0
            && h.active
            && (h.crowded || !h.has_queue() || h.takes >= self.config.activation_budget);
        if was_running {
            self.in_flight = self.in_flight.saturating_sub(1);
            if now_idle {
                self.hosts_in_flight = self.hosts_in_flight.saturating_sub(1);
            }
        }
        if finished {
            self.settling.push(id);
        }
        self.schedule_if_idle(id);
        self.list_if_idle(id);
    }

    /// Pushes back a host's eligibility without a fetch (e.g. its robots.txt or DNS is
    /// not ready, or it was parked after repeated failures).
    pub fn defer(&mut self, host: &str, until: Instant) {
        let Some(id) = self.table.find(host) else {
            return;
        };
        let Some(h) = self.host_mut(id) else {
            return;
        };
        h.eligible_at = h.eligible_at.max(until);
        let (at, on_heap) = (h.eligible_at, h.on_heap);
        if on_heap {
            self.push_heap(id, at);
        }
    }

    /// The earliest instant some host becomes eligible, for the event loop's poll
    /// timeout; `None` when nothing is queued (or every host with a queue is held or
    /// at its fetch limit). A host whose queue is all on disk is on the schedule like
    /// any other; a host of the line that may be activated is ready at `now`.
    pub fn next_wakeup_at(&mut self, now: Instant) -> Option<Instant> {
        let line = self.can_activate().then_some(now);
        while let Some(&Reverse((at, generation, id))) = self.heap.peek() {
            if self.is_live(generation, id) {
                return Some(line.map_or(at, |l| l.min(at)));
            }
            self.heap.pop();
        }
        line
    }

    /// Hosts on the schedule whose politeness instant is at or before `now`: ready
    /// to be served (ready but idle, if the engine has free slots and serves none).
    /// Walks only the heap entries at or before `now` (and their children), so it
    /// costs what it counts. It relies on std's array layout of a binary heap, which
    /// `as_slice` exposes (the children of `i` at `2i + 1`, `2i + 2`); the test
    /// `hosts_ready_at_agrees_with_a_plain_count` would catch a change.
    pub fn hosts_ready_at(&self, now: Instant) -> u64 {
        let entries = self.heap.as_slice();
        let mut count = 0;
        let mut stack = vec![0usize];
        while let Some(i) = stack.pop() {
            let Some(&Reverse((at, generation, id))) = entries.get(i) else {
                continue;
            };
            if at > now {
                continue;
            }
            if self.is_live(generation, id) {
                count += 1;
            }
            stack.push(2 * i + 1);
            stack.push(2 * i + 2);
        }
        count
    }

    /// The latest damaged blocks met (at most 16), oldest first.
    pub fn damaged_blocks(&self) -> impl Iterator<Item = &BlockDamage> {
        self.damage.iter()
    }

    /// The configured directory.
    pub fn dir(&self) -> &Path {
        &self.config.dir
    }

    /// URLs one host may hold in its RAM head: its fair share of the head budget (at
    /// [`APPROX_URL_BYTES`] a URL, split over the hosts in the table), never fewer
    /// than `per_host_ram_urls`. A crawl of few hosts with deep queues then fills its
    /// RAM; a crawl of many hosts gets the configured minimum. The budget check still
    /// bounds the total.
    fn per_host_cap(&self) -> usize {
        let share = self.head_budget() / APPROX_URL_BYTES / self.table.len().max(1);
        share.clamp(
            self.config.per_host_ram_urls,
            self.config.max_per_host_ram_urls,
        )
    }

    /// RAM the hosts' buffers may fill together: the quarter of the budget heads
    /// leave, less the write batch. Past it, a buffer that grows is written out as
    /// a block at once, not full.
    fn pending_budget(&self) -> usize {
        (self.config.ram_budget_bytes / 4).saturating_sub(self.batch_limit())
    }

    /// Bytes of the write batch that make it due for appending.
    fn batch_limit(&self) -> usize {
        (self.config.ram_budget_bytes / 16).clamp(4096, WRITE_BATCH_BYTES)
    }

    /// Below this many URLs in its head, a host with a backlog reads its next block.
    fn low_water(&self) -> usize {
        (self.per_host_cap() / 2).max(1)
    }

    /// The part of the budget RAM heads may fill: three quarters. The rest is for
    /// what a backlog costs in RAM (buffers, block references, the write batch), so
    /// a full head tier still leaves buffers room to fill whole blocks.
    fn head_budget(&self) -> usize {
        self.config.ram_budget_bytes - self.config.ram_budget_bytes / 4
    }

    fn host(&self, id: HostId) -> Option<&Host> {
        self.table.get(id)
    }

    fn host_mut(&mut self, id: HostId) -> Option<&mut Host> {
        self.table.get_mut(id)
    }

    fn is_live(&self, generation: u64, id: HostId) -> bool {
        self.host(id)
            .is_some_and(|h| h.on_heap && h.heap_gen == generation)
    }

    /// A new, inactive entry for `name`, not in the table yet (after forgetting idle
    /// hosts when the table has no room in the budget).
    fn new_host(&mut self, name: &str, now: Instant) -> HostId {
        let need = HOST_BYTES + heap_chunk(name.len());
        self.forget_listed(need, now);
        if self.ram_bytes + need > self.config.ram_budget_bytes {
            // A scan is O(hosts): at most once per quarter-table of new hosts, so a
            // table full of busy hosts costs amortized O(1) a push.
            self.attempts_since_forget += 1;
            if self.attempts_since_forget >= self.table.len() / 4 {
                self.attempts_since_forget = 0;
                self.forget_idle_hosts(now);
            }
        }
        self.ram_bytes += need;
        self.table.insert(Host::new(name, now))
    }

    /// Forgets hosts from the front of the idle list (oldest first) until `need`
    /// more bytes fit the budget, or the front host is busy again (it leaves the
    /// list) or still within its politeness delay (it stays, and so do the later
    /// ones: the list is in completion order). O(1) a forgotten host.
    fn forget_listed(&mut self, need: usize, now: Instant) {
        while self.ram_bytes + need > self.config.ram_budget_bytes {
            let Some(&id) = self.idle.front() else {
                return;
            };
            let Some(h) = self.table.get_mut(id) else {
                self.idle.pop_front();
                continue;
            };
            if h.is_idle(now) {
                self.idle.pop_front();
                if let Some(h) = self.table.remove(id) {
                    self.ram_bytes = self
                        .ram_bytes
                        .saturating_sub(HOST_BYTES + heap_chunk(h.name.len()));
                }
            } else if h.is_idle(h.eligible_at) {
                return;
            } else {
                h.idle_listed = false;
                self.idle.pop_front();
            }
        }
    }

    /// Puts `id` on the idle list if it holds nothing and runs nothing now.
    fn list_if_idle(&mut self, id: HostId) {
        let Some(h) = self.table.get_mut(id) else {
            return;
        };
        if !h.idle_listed && h.is_idle(h.eligible_at) {
            h.idle_listed = true;
            self.idle.push_back(id);
        }
    }

    /// Forgets every host that holds nothing, runs nothing, is not held and whose
    /// politeness instant has passed: it carries no state worth its RAM.
    fn forget_idle_hosts(&mut self, now: Instant) {
        for id in self.table.ids() {
            if !self.host(id).is_some_and(|h| h.is_idle(now)) {
                continue;
            }
            if let Some(h) = self.table.remove(id) {
                self.ram_bytes = self
                    .ram_bytes
                    .saturating_sub(HOST_BYTES + heap_chunk(h.name.len()));
            }
        }
        // Ids in the list may now name other hosts: the list is rebuilt lazily.
        self.idle.clear();
        for id in self.table.ids() {
            if let Some(h) = self.table.get_mut(id) {
                h.idle_listed = false;
            }
        }
    }

    fn push_heap(&mut self, id: HostId, at: Instant) {
        self.next_gen += 1;
        let generation = self.next_gen;
        let Some(h) = self.table.get_mut(id) else {
            return;
        };
        h.heap_gen = generation;
        if !h.on_heap {
            h.on_heap = true;
            self.on_heap += 1;
        }
        self.heap.push(Reverse((at, generation, id)));
        // Stale entries (deferrals of hosts on the heap) are dropped lazily; past
        // twice the live ones, all at once.
        if self.heap.len() as u64 > 2 * self.on_heap + 1024 {
            let table = &self.table;
            self.heap.retain(|&Reverse((_, g, i))| {
                table.get(i).is_some_and(|h| h.on_heap && h.heap_gen == g)
            });
        }
    }

    /// Takes `id` off the schedule (its heap entry goes stale).
    fn off_heap(&mut self, id: HostId) {
        if let Some(h) = self.table.get_mut(id) {
            if h.on_heap {
                h.on_heap = false;
                self.on_heap = self.on_heap.saturating_sub(1);
            }
        }
    }

    fn schedule_if_idle(&mut self, id: HostId) {
        let max_in_flight = self.config.max_in_flight_per_host;
        let Some(h) = self.host(id) else {
            return;
        };
        if !h.on_heap && h.is_servable(max_in_flight) {
            let at = h.eligible_at;
            self.push_heap(id, at);
        }
    }
}

#[cfg(test)]
impl Frontier {
    /// `ram_bytes` recomputed from scratch, to check the running count.
    fn recount_ram_bytes(&self) -> usize {
        let mut n = self.batch.len();
        for (_, h) in self.table.iter() {
            n += HOST_BYTES + heap_chunk(h.name.len());
            n += h.ram.iter().map(QueuedUrl::ram_bytes).sum::<usize>();
            if let Some(s) = &h.spill {
                n += SPILL_BYTES + s.blocks.len() * BLOCK_REF_BYTES;
                n += s.pending.heap_bytes();
            }
        }
        n + self.line_ram_bytes()
    }

    /// The running counts that are not `ram_bytes`, recomputed: buffer bytes, hosts
    /// in flight, URLs in RAM, URLs in blocks.
    fn recount(&self) -> (usize, u64, u64, u64) {
        let (mut pending, mut in_flight, mut ram, mut disk) = (0, 0, 0, 0);
        for (_, h) in self.table.iter() {
            in_flight += u64::from(h.in_flight > 0);
            ram += h.ram.len() as u64;
            if let Some(s) = &h.spill {
                pending += s.pending.heap_bytes();
                ram += s.pending.len() as u64;
                disk += s.blocks.iter().map(|b| u64::from(b.count)).sum::<u64>();
            }
        }
        ram += self.line.tail.len() as u64 + self.line.head.len() as u64;
        disk += self
            .line
            .blocks
            .iter()
            .map(|b| u64::from(b.count))
            .sum::<u64>();
        (pending, in_flight, ram, disk)
    }

    fn counts(&self) -> (usize, u64, u64, u64) {
        (
            self.pending_bytes,
            self.hosts_in_flight,
            self.ram_urls,
            self.disk_urls,
        )
    }
}

#[cfg(test)]
mod tests;
