//! The bus thread: one per node, the only code that talks to Redis.
//!
//! Each turn it
//! 1. takes the shards' outgoing links into its spill (RAM, then a file),
//! 2. sends them: one pipeline of `XADD` (one entry per partition and batch, to the
//!    owner's partition stream), `XLEN` (the stream's length, for back-pressure: a
//!    partition whose stream holds `stream_max_entries` waits, nothing is trimmed)
//!    and `SADD` of the partition to the owner's doorbell set;
//! 3. acknowledges (`XACK` + `XDEL`) the entries a committed checkpoint holds;
//! 4. reads: `SPOP` of its doorbell, then one pipeline of `XREADGROUP` over the
//!    partitions that rang (after a start or a resume, first its own pending entries,
//!    read with id `0`: entries it received but had not acknowledged);
//!    each link is tested against the presence bits and admitted like a peer shard's
//!    link (filters, the handler's hook), then delivered to its shard's inbox;
//! 5. publishes its state and, when idle, takes termination snapshots (`term.rs`).
//!
//! Redis unreachable: every failed call closes the connection; reconnects back off
//! from 100 ms to 5 s; links wait in the spill; the node keeps crawling. Past
//! `redis_timeout` it stops with an error (the final checkpoint keeps the unsent links
//! in its outbox).

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crossbeam_channel::{select, Receiver, Sender, TrySendError};
use redis::{Cmd, Value};
use url::Url;

use crate::crawllog::{LogRecord, Outcome};
use crate::engine::output::{OutputBatch, OutputMsg, OutputRecord};
use crate::frontier::QueuedUrl;
use crate::url::UrlFilter;
use crate::warc::WarcDate;

use super::config::{FarmConfig, Keys, GROUP};
use super::conn::Conn;
use super::node::{BusEnds, Ctl, FarmCounters, Flags, OutBatch, OUTBOX_FILE};
use super::partition::Partitions;
use super::spill::Spill;
use super::term::{Detector, NodeState, Snapshot};
use super::wire::{Entry, WireLink};

/// Entries read per partition and call.
const READ_COUNT: usize = 32;
/// Partitions read per pipeline.
const READS_PER_CALL: usize = 256;
/// How often the node state is refreshed, and its lifetime in Redis.
const HEARTBEAT: Duration = Duration::from_millis(400);
const STATE_TTL_MS: u64 = 5_000;
/// All own partitions are read at least this often (a doorbell lost to a Redis
/// restart must not strand entries).
const FULL_SCAN: Duration = Duration::from_secs(5);
/// A node idle this long with something to checkpoint asks for a checkpoint.
const IDLE_CHECKPOINT_AFTER: Duration = Duration::from_millis(200);
const MIN_CHECKPOINT_GAP: Duration = Duration::from_millis(500);
/// Idle turn length.
const TURN: Duration = Duration::from_millis(20);
/// Outgoing links wait up to this long for more of their kind before they are sent, so
/// an entry carries a batch, not one link (measured: 1.1 links per entry without it on
/// synthweb, where a page's cross-host links spread over many partitions). Cuts, the
/// end, a full batch's worth and a locally idle node send at once.
const LINGER: Duration = Duration::from_millis(100);
/// The doorbell is polled every turn after a ring, then less and less often while it
/// stays silent, up to this interval: an idle farm costs a few calls a second.
const MAX_POLL_GAP: Duration = Duration::from_millis(200);

/// What the engine gives the bus thread.
pub(crate) struct BusParts {
    pub ends: BusEnds,
    pub config: FarmConfig,
    pub table: Partitions,
    pub shared: Arc<crate::engine::Shared>,
    pub filter: Arc<UrlFilter>,
    pub inboxes: Vec<Sender<crate::engine::Batch>>,
    pub wakers: Vec<Arc<mio::Waker>>,
    pub output: Sender<OutputMsg>,
    pub out_dir: PathBuf,
    /// Links of the resumed checkpoint's outbox, to send again.
    pub outbox: Vec<Entry>,
}

/// Starts the bus thread.
///
/// # Errors
/// The thread could not be spawned.
pub(crate) fn spawn(parts: BusParts) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("trawl-farm-bus".to_owned())
        .spawn(move || Bus::new(parts).run())
}

/// A received entry delivered to the shards, not yet acknowledged.
type EntryId = (u32, String);

struct Bus {
    config: FarmConfig,
    keys: Keys,
    table: Partitions,
    own: Vec<u32>,
    out_rx: Receiver<OutBatch>,
    ctl_rx: Receiver<Ctl>,
    counters: Arc<FarmCounters>,
    flags: Arc<Flags>,
    shared: Arc<crate::engine::Shared>,
    filter: Arc<UrlFilter>,
    inboxes: Vec<Sender<crate::engine::Batch>>,
    wakers: Vec<Arc<mio::Waker>>,
    log: OutputBatch,
    conn: Option<Conn>,
    /// When Redis was last found unreachable (cleared by a successful call).
    down_since: Option<Instant>,
    next_connect: Instant,
    backoff: Duration,
    spill: Spill,
    /// Last known length of each partition stream we send to.
    stream_len: HashMap<u32, u64>,
    /// Per shard, admitted links its full inbox has not taken yet.
    held: Vec<crate::engine::Batch>,
    /// Entries delivered since the last cut began.
    delivered: Vec<EntryId>,
    /// Entries delivered before the cut in progress.
    in_cut: Vec<EntryId>,
    /// Entries a committed checkpoint holds, to acknowledge.
    ack_due: Vec<EntryId>,
    paused: bool,
    cutting: bool,
    cut_idle: bool,
    cut_activity: u64,
    /// Own partitions to read (rang, or not read dry last time).
    dirty: BTreeSet<u32>,
    last_full_scan: Instant,
    /// Reading our own pending entries (after a start or resume), from id `0` on.
    pending_scan: bool,
    /// During the pending scan, the last pending id read per partition: the next read
    /// starts after it (a pending read from `0` returns the same entries every time).
    pending_after: HashMap<u32, String>,
    groups_ready: bool,
    activity: u64,
    checkpointed_idle: bool,
    idle_since: Option<Instant>,
    last_checkpoint_ask: Instant,
    oldest_unacked: Option<Instant>,
    detector: Detector,
    last_heartbeat: Instant,
    was_locally_idle: bool,
    warned_down: bool,
    /// When the oldest link now waiting to be sent arrived.
    pending_since: Option<Instant>,
    /// Doorbell polling: the next poll, and the current gap (doubles while silent).
    next_poll: Instant,
    poll_gap: Duration,
}

impl Bus {
    fn new(p: BusParts) -> Self {
        let now = Instant::now();
        let spill_path = p
            .out_dir
            .join("farm")
            .join(format!("spill-{:04}.bin", p.config.node));
        let mut spill = Spill::new(p.config.node, p.config.spill_ram_urls, spill_path);
        let mut restored = 0u64;
        for e in p.outbox {
            for l in e.links {
                restored += 1;
                if let Err(err) = spill.push(e.partition, l) {
                    tracing::warn!(error = %err, "farm spill file write failed; holding in RAM");
                }
            }
        }
        p.ends
            .counters
            .outbox_restored
            .store(restored, Ordering::Relaxed);
        let shards = p.inboxes.len();
        let own = p.table.owned_by(p.config.node);
        Self {
            keys: p.config.keys(),
            own: own.clone(),
            table: p.table,
            out_rx: p.ends.out_rx,
            ctl_rx: p.ends.ctl_rx,
            counters: p.ends.counters,
            flags: p.ends.flags,
            log: OutputBatch::new(p.output),
            shared: p.shared,
            filter: p.filter,
            inboxes: p.inboxes,
            wakers: p.wakers,
            conn: None,
            down_since: None,
            next_connect: now,
            backoff: Duration::from_millis(100),
            spill,
            stream_len: HashMap::new(),
            held: (0..shards).map(|_| Vec::new()).collect(),
            delivered: Vec::new(),
            in_cut: Vec::new(),
            ack_due: Vec::new(),
            paused: false,
            cutting: false,
            cut_idle: false,
            cut_activity: 0,
            dirty: own.into_iter().collect(),
            last_full_scan: now,
            pending_scan: true,
            pending_after: HashMap::new(),
            groups_ready: false,
            activity: 1,
            checkpointed_idle: false,
            idle_since: None,
            last_checkpoint_ask: now,
            oldest_unacked: None,
            detector: Detector::default(),
            last_heartbeat: now - HEARTBEAT,
            was_locally_idle: false,
            warned_down: false,
            pending_since: None,
            next_poll: now,
            poll_gap: TURN,
            config: p.config,
        }
    }

    fn run(mut self) {
        loop {
            // Control first: a pause must not wait behind a long turn.
            while let Ok(ctl) = self.ctl_rx.try_recv() {
                if self.control(ctl) {
                    return;
                }
            }
            self.take_outgoing();
            self.deliver_held();
            let now = Instant::now();
            self.ensure_conn(now);
            if self.conn.is_some() && self.send_due(now) {
                self.send();
            }
            if self.conn.is_some() {
                self.acknowledge();
            }
            if self.conn.is_some() && !self.paused && self.held_empty() {
                self.read(now);
            }
            self.log.flush();
            self.watch_idle(now);
            if self.conn.is_some() && now >= self.last_heartbeat + HEARTBEAT {
                self.last_heartbeat = now;
                self.heartbeat_and_snapshot();
            }
            self.check_down(now);
            self.publish_gauges();
            // Sleep until something arrives, unless work is waiting.
            let busy = !self.dirty.is_empty() && !self.paused && self.conn.is_some();
            if !busy {
                select! {
                    recv(self.out_rx) -> b => {
                        if let Ok(b) = b {
                            self.push_outgoing(b);
                        }
                    }
                    recv(self.ctl_rx) -> c => {
                        if let Ok(c) = c {
                            if self.control(c) {
                                return;
                            }
                        }
                    }
                    default(TURN) => {}
                }
            }
        }
    }

    /// Handles a control message; true to end the thread.
    fn control(&mut self, ctl: Ctl) -> bool {
        match ctl {
            Ctl::Pause(reply) => {
                // Everything admitted must be in an inbox before the shards drain them
                // at the cut: its presence bit is set, so a resume would not take it
                // again from the stream.
                let until = Instant::now() + Duration::from_secs(30);
                while !self.held_empty() && Instant::now() < until {
                    self.take_outgoing();
                    self.deliver_held();
                    if !self.held_empty() {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
                if !self.held_empty() {
                    tracing::error!(
                        "farm bus: shards did not take received links before the checkpoint"
                    );
                }
                self.log.flush();
                self.paused = true;
                self.cutting = true;
                self.in_cut = std::mem::take(&mut self.delivered);
                self.cut_activity = self.activity;
                let _ = reply.send(());
            }
            Ctl::WriteOutbox {
                dir,
                locally_idle,
                reply,
            } => {
                while let Ok(b) = self.out_rx.try_recv() {
                    self.push_outgoing(b);
                }
                if self.conn.is_some() {
                    self.send();
                }
                let r = super::node::write_settings(&dir, &self.config, &self.counters)
                    .and_then(|()| self.spill.write_all(&dir.join(OUTBOX_FILE)));
                self.cut_idle = locally_idle
                    && self.spill.is_empty()
                    && self.held_empty()
                    && self.activity == self.cut_activity;
                let _ = reply.send(r);
            }
            Ctl::Commit => {
                let acked = std::mem::take(&mut self.in_cut);
                if !acked.is_empty() {
                    self.ack_due.extend(acked);
                }
                if self.cut_idle && self.activity == self.cut_activity {
                    self.checkpointed_idle = true;
                }
                self.oldest_unacked = (!self.delivered.is_empty()).then(Instant::now);
                self.paused = false;
                self.cutting = false;
            }
            Ctl::Abort => {
                let mut back = std::mem::take(&mut self.in_cut);
                back.append(&mut self.delivered);
                self.delivered = back;
                self.paused = false;
                self.cutting = false;
            }
            Ctl::Finish(reply) => {
                while let Ok(b) = self.out_rx.try_recv() {
                    self.push_outgoing(b);
                }
                self.ensure_conn(Instant::now());
                if self.conn.is_some() {
                    self.send();
                    self.acknowledge();
                    self.publish_state(self.flags.finished.load(Ordering::Acquire));
                }
                self.publish_gauges();
                let _ = reply.send(());
                return true;
            }
        }
        false
    }

    fn held_empty(&self) -> bool {
        self.held.iter().all(Vec::is_empty)
    }

    fn take_outgoing(&mut self) {
        while let Ok(b) = self.out_rx.try_recv() {
            self.push_outgoing(b);
        }
    }

    fn push_outgoing(&mut self, batch: OutBatch) {
        if self.pending_since.is_none() && !batch.is_empty() {
            self.pending_since = Some(Instant::now());
        }
        for (p, l) in batch {
            if let Err(e) = self.spill.push(p, l) {
                tracing::warn!(error = %e, "farm spill file write failed; holding in RAM");
            }
        }
    }

    fn ensure_conn(&mut self, now: Instant) {
        if self.conn.is_some() || now < self.next_connect {
            return;
        }
        let t = Instant::now();
        let opened = Conn::open(&self.config.redis, self.config.cluster);
        self.count_call(t);
        match opened {
            Ok(c) => {
                self.conn = Some(c);
                self.backoff = Duration::from_millis(100);
                if !self.groups_ready {
                    self.create_groups();
                }
                if self.conn.is_some() {
                    if self.down_since.take().is_some() || self.warned_down {
                        tracing::warn!("farm: Redis reachable again");
                    }
                    self.warned_down = false;
                    // Entries may have arrived while we could not read.
                    self.dirty.extend(self.own.iter().copied());
                }
            }
            Err(e) => self.failed(&e),
        }
    }

    /// Creates the consumer group of each own partition (idempotent), and records
    /// the farm's settings (the first node's win; a node that disagrees stops).
    fn create_groups(&mut self) {
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        let settings = format!(
            "nodes={} partitions={} by={}",
            self.config.nodes,
            self.config.partitions,
            self.config.partition_by.name()
        );
        let mut set = Cmd::new();
        set.arg("SET")
            .arg(self.keys.settings())
            .arg(&settings)
            .arg("NX")
            .arg("GET");
        match conn.one(&set) {
            Ok(Value::BulkString(b)) if b != settings.as_bytes() => {
                let msg = format!(
                    "farm settings differ from the farm's ({} in Redis, {settings} here): every node needs the same --farm-nodes, --farm-partitions and --farm-partition-by",
                    String::from_utf8_lossy(&b)
                );
                tracing::error!("{msg}");
                if let Ok(mut f) = self.flags.fatal.lock() {
                    *f = Some(msg);
                }
                self.shared.fatal.store(true, Ordering::Release);
            }
            Ok(_) => {}
            Err(e) => {
                self.failed(&e);
                return;
            }
        }
        let cmds: Vec<Cmd> = self
            .own
            .iter()
            .map(|&p| {
                let mut c = Cmd::new();
                c.arg("XGROUP")
                    .arg("CREATE")
                    .arg(self.keys.stream(p))
                    .arg(GROUP)
                    .arg("0")
                    .arg("MKSTREAM");
                c
            })
            .collect();
        // One at a time on a cluster: its pipeline fails whole on one BUSYGROUP.
        let cluster = self.config.cluster;
        for chunk in cmds.chunks(if cluster { 1 } else { 512 }) {
            let Some(conn) = self.conn.as_mut() else {
                return;
            };
            let t = Instant::now();
            let r = if cluster {
                chunk
                    .first()
                    .map_or(Ok(Vec::new()), |c| conn.one(c).map(|v| vec![Ok(v)]))
            } else {
                conn.run(chunk)
            };
            self.count_call(t);
            match r {
                Ok(_) => {}
                Err(e) if e.to_string().contains("BUSYGROUP") => {}
                Err(e) => {
                    self.failed(&e);
                    return;
                }
            }
        }
        self.groups_ready = true;
    }

    /// Whether waiting links should go now (see [`LINGER`]).
    fn send_due(&self, now: Instant) -> bool {
        let Some(since) = self.pending_since else {
            return false;
        };
        now >= since + LINGER
            || self.spill.urls() >= self.config.batch_urls as u64
            || self.flags.locally_idle.load(Ordering::Acquire)
            || self.cutting
    }

    /// Sends waiting links: XADD + XLEN + SADD doorbell per batch, one pipeline.
    fn send(&mut self) {
        if self.spill.is_empty() {
            self.pending_since = None;
        } else {
            // Whatever stays (a full stream, a failure) waits another linger at most.
            self.pending_since = Some(Instant::now());
        }
        let max = self.config.stream_max_entries;
        loop {
            let lens = &self.stream_len;
            let counters = &self.counters;
            let batches = self.spill.take(self.config.batch_urls, |p| {
                let full = lens.get(&p).is_some_and(|&n| n >= max);
                if full {
                    counters.stream_full_waits.fetch_add(1, Ordering::Relaxed);
                }
                !full
            });
            if batches.is_empty() {
                break;
            }
            let mut cmds = Vec::with_capacity(batches.len() * 3);
            for (p, links) in &batches {
                let entry = Entry {
                    from_node: self.config.node,
                    partition: *p,
                    links: links.clone(),
                };
                let key = self.keys.stream(*p);
                let mut add = Cmd::new();
                add.arg("XADD")
                    .arg(&key)
                    .arg("*")
                    .arg("b")
                    .arg(entry.encode());
                let mut len = Cmd::new();
                len.arg("XLEN").arg(&key);
                let mut bell = Cmd::new();
                bell.arg("SADD")
                    .arg(self.keys.bell(self.table.owner(*p)))
                    .arg(*p);
                cmds.extend([add, len, bell]);
            }
            let Some(conn) = self.conn.as_mut() else {
                self.spill.put_back(batches);
                return;
            };
            let t = Instant::now();
            let r = conn.run(&cmds);
            self.count_call(t);
            match r {
                Ok(replies) => {
                    let mut failed = Vec::new();
                    for ((p, links), reply) in batches.into_iter().zip(replies.chunks(3)) {
                        let added = reply.first().is_some_and(Result::is_ok);
                        if let Some(Ok(Value::Int(n))) = reply.get(1) {
                            self.stream_len.insert(p, u64::try_from(*n).unwrap_or(0));
                        }
                        if added {
                            self.counters.batches_sent.fetch_add(1, Ordering::Relaxed);
                            self.counters
                                .links_sent
                                .fetch_add(links.len() as u64, Ordering::Relaxed);
                        } else {
                            failed.push((p, links));
                        }
                    }
                    self.bump();
                    if !failed.is_empty() {
                        tracing::warn!(batches = failed.len(), "farm: XADD refused; retrying");
                        self.spill.put_back(failed);
                        break;
                    }
                }
                Err(e) => {
                    self.spill.put_back(batches);
                    self.failed(&e);
                    return;
                }
            }
        }
        // Streams at the cap: re-measure them now and then (their owner drains them).
        if self.stream_len.values().any(|&n| n >= max) {
            let full: Vec<u32> = self
                .stream_len
                .iter()
                .filter(|(_, &n)| n >= max)
                .map(|(&p, _)| p)
                .collect();
            let cmds: Vec<Cmd> = full
                .iter()
                .map(|&p| {
                    let mut c = Cmd::new();
                    c.arg("XLEN").arg(self.keys.stream(p));
                    c
                })
                .collect();
            if let Some(conn) = self.conn.as_mut() {
                let t = Instant::now();
                let r = conn.run(&cmds);
                self.count_call(t);
                match r {
                    Ok(replies) => {
                        for (p, v) in full.into_iter().zip(replies) {
                            if let Ok(Value::Int(n)) = v {
                                self.stream_len.insert(p, u64::try_from(n).unwrap_or(0));
                            }
                        }
                    }
                    Err(e) => self.failed(&e),
                }
            }
        }
    }

    /// XACK + XDEL of the entries a committed checkpoint holds: they leave Redis.
    fn acknowledge(&mut self) {
        if self.ack_due.is_empty() {
            return;
        }
        let mut by: HashMap<u32, Vec<String>> = HashMap::new();
        for (p, id) in &self.ack_due {
            by.entry(*p).or_default().push(id.clone());
        }
        let mut cmds = Vec::new();
        for (p, ids) in &by {
            let key = self.keys.stream(*p);
            let mut ack = Cmd::new();
            ack.arg("XACK").arg(&key).arg(GROUP).arg(ids);
            let mut del = Cmd::new();
            del.arg("XDEL").arg(&key).arg(ids);
            cmds.push(ack);
            cmds.push(del);
        }
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        let t = Instant::now();
        let r = conn.run(&cmds);
        self.count_call(t);
        match r {
            Ok(_) => {
                self.counters
                    .acked_entries
                    .fetch_add(self.ack_due.len() as u64, Ordering::Relaxed);
                self.ack_due.clear();
            }
            Err(e) => self.failed(&e),
        }
    }

    /// Reads own partitions: pending entries first after a start, then what rang.
    fn read(&mut self, now: Instant) {
        if !self.groups_ready {
            return;
        }
        if now >= self.last_full_scan + FULL_SCAN {
            self.last_full_scan = now;
            self.dirty.extend(self.own.iter().copied());
        }
        if !self.pending_scan && self.dirty.is_empty() && now < self.next_poll {
            return;
        }
        if !self.pending_scan {
            let mut pop = Cmd::new();
            pop.arg("SPOP")
                .arg(self.keys.bell(self.config.node))
                .arg(4096);
            let Some(conn) = self.conn.as_mut() else {
                return;
            };
            let t = Instant::now();
            let r = conn.one(&pop);
            self.count_call(t);
            match r {
                Ok(Value::Array(items)) | Ok(Value::Set(items)) => {
                    // A ring: poll every turn again; silence: back off.
                    self.poll_gap = if items.is_empty() {
                        (self.poll_gap * 2).min(MAX_POLL_GAP)
                    } else {
                        TURN
                    };
                    self.next_poll = now + self.poll_gap;
                    for v in items {
                        if let Some(p) = value_u32(&v) {
                            if self.table.owner(p) == self.config.node {
                                self.dirty.insert(p);
                            }
                        }
                    }
                }
                Ok(_) => {
                    self.poll_gap = (self.poll_gap * 2).min(MAX_POLL_GAP);
                    self.next_poll = now + self.poll_gap;
                }
                Err(e) => {
                    self.failed(&e);
                    return;
                }
            }
        }
        if self.dirty.is_empty() {
            return;
        }
        let parts: Vec<u32> = self.dirty.iter().copied().take(READS_PER_CALL).collect();
        let consumer = Keys::consumer(self.config.node);
        let cmds: Vec<Cmd> = parts
            .iter()
            .map(|&p| {
                let mut c = Cmd::new();
                c.arg("XREADGROUP")
                    .arg("GROUP")
                    .arg(GROUP)
                    .arg(&consumer)
                    .arg("COUNT")
                    .arg(READ_COUNT)
                    .arg("STREAMS")
                    .arg(self.keys.stream(p));
                if self.pending_scan {
                    c.arg(self.pending_after.get(&p).map_or("0", String::as_str));
                } else {
                    c.arg(">");
                }
                c
            })
            .collect();
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        let t = Instant::now();
        let r = conn.run(&cmds);
        self.count_call(t);
        let replies = match r {
            Ok(r) => r,
            Err(e) => {
                self.failed(&e);
                return;
            }
        };
        for (p, reply) in parts.into_iter().zip(replies) {
            let entries = match reply {
                Ok(v) => stream_entries(&v),
                Err(e) => {
                    if e.to_string().contains("NOGROUP") {
                        // The stream went (a Redis restart without persistence).
                        self.groups_ready = false;
                    }
                    tracing::warn!(partition = p, error = %e, "farm: XREADGROUP failed");
                    continue;
                }
            };
            if entries.len() < READ_COUNT {
                self.dirty.remove(&p);
            }
            if self.pending_scan {
                if let Some((last, _)) = entries.last() {
                    self.pending_after.insert(p, last.clone());
                }
            }
            for (id, payload) in entries {
                self.receive(p, id, payload.as_deref());
            }
        }
        if self.pending_scan && self.dirty.is_empty() {
            // Own pending entries all re-read: from now on, new ones.
            self.pending_scan = false;
            self.pending_after.clear();
            self.dirty.extend(self.own.iter().copied());
        }
        if !self.groups_ready {
            self.conn = None;
        }
    }

    /// One received entry: decode, test each link, admit the new ones, hold them for
    /// their shard. The entry is acknowledged after the next committed checkpoint,
    /// whatever it held (a bad entry too: it is logged and skipped, not re-read).
    fn receive(&mut self, partition: u32, id: String, payload: Option<&[u8]>) {
        if self.delivered.is_empty() {
            self.oldest_unacked = Some(Instant::now());
        }
        self.delivered.push((partition, id.clone()));
        self.bump();
        let Some(payload) = payload else {
            // An entry deleted after it was delivered: nothing to take.
            return;
        };
        let entry = match Entry::decode(payload) {
            Ok(e) => e,
            Err(e) => {
                self.counters.bad_entries.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(partition, id = %id, error = %e, bytes = payload.len(), "farm: bad stream entry skipped");
                return;
            }
        };
        self.counters
            .batches_received
            .fetch_add(1, Ordering::Relaxed);
        self.counters
            .links_received
            .fetch_add(entry.links.len() as u64, Ordering::Relaxed);
        for link in entry.links {
            self.admit(link);
        }
        self.deliver_held();
    }

    /// The receiver's test and the engine's admission (as a peer shard's link).
    fn admit(&mut self, link: WireLink) {
        if self.shared.seen.test_and_set(link.url.as_bytes()) {
            self.counters.links_known.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let Ok(url) = Url::parse(&link.url) else {
            self.counters.bad_entries.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(url = %link.url, "farm: received link does not parse: skipped");
            return;
        };
        if let Err(reason) = self.filter.check(&url, link.hops.len() as u32) {
            let mut rec = LogRecord::new(WarcDate::now(), url.as_str(), Outcome::Filtered);
            rec.via = Some(link.via);
            rec.hops = crate::provenance::HopsPath::try_from(link.hops).unwrap_or_default();
            rec.annotations.push(format!("filter:{}", reason.code()));
            if let Some(h) = &self.shared.handler {
                h.on_outcome(&rec);
            }
            self.shared.count_outcome(rec.outcome);
            self.log.push(OutputRecord::Log(Box::new(rec)));
            return;
        }
        if let Some(handler) = &self.shared.handler {
            if !handler.accept_link(&link.via, &url) {
                return;
            }
        }
        let Some(key) = crate::engine::host_key(&url) else {
            return;
        };
        // An empty `via` is a URL handed to the sending node by `trawl add`: a seed.
        let item = QueuedUrl {
            url: url.into(),
            via: (!link.via.is_empty()).then_some(link.via),
            hops: link.hops,
            attempts: 0,
        };
        self.shared.outstanding.fetch_add(1, Ordering::AcqRel);
        self.shared.discovered.fetch_add(1, Ordering::AcqRel);
        let shard = crate::engine::shard_of(&key, self.inboxes.len());
        if let Some(h) = self.held.get_mut(shard) {
            h.push((key, item));
        }
    }

    /// Hands held links to their shards' inboxes; a full inbox keeps them for later.
    fn deliver_held(&mut self) {
        for (i, held) in self.held.iter_mut().enumerate() {
            if held.is_empty() {
                continue;
            }
            let Some(tx) = self.inboxes.get(i) else {
                continue;
            };
            match tx.try_send(std::mem::take(held)) {
                Ok(()) => {
                    if let Some(w) = self.wakers.get(i) {
                        let _ = w.wake();
                    }
                }
                Err(TrySendError::Full(b)) => *held = b,
                Err(TrySendError::Disconnected(b)) => {
                    // The shard has ended (the crawl is over); the entries stay
                    // unacknowledged and are read again by a resume.
                    self.shared
                        .outstanding
                        .fetch_sub(b.len() as u64, Ordering::AcqRel);
                }
            }
        }
    }

    /// Decides whether this node is idle, and asks for a checkpoint when one would
    /// acknowledge entries or record idleness.
    fn watch_idle(&mut self, now: Instant) {
        let locally_idle = self.flags.locally_idle.load(Ordering::Acquire);
        if !locally_idle && self.was_locally_idle {
            self.bump();
        }
        self.was_locally_idle = locally_idle;
        let quiet = locally_idle
            && self.spill.is_empty()
            && self.out_rx.is_empty()
            && self.held_empty()
            && !self.cutting;
        if !quiet {
            self.idle_since = None;
        } else if self.idle_since.is_none() {
            self.idle_since = Some(now);
        }
        let gap_ok = now >= self.last_checkpoint_ask + MIN_CHECKPOINT_GAP;
        let idle_long = self
            .idle_since
            .is_some_and(|t| now >= t + IDLE_CHECKPOINT_AFTER);
        let owes = !self.checkpointed_idle || !self.delivered.is_empty();
        let ack_late = self
            .oldest_unacked
            .is_some_and(|t| now >= t + self.config.ack_interval)
            && !self.delivered.is_empty();
        if gap_ok && !self.cutting && ((idle_long && owes) || ack_late) {
            self.last_checkpoint_ask = now;
            if ack_late {
                self.oldest_unacked = Some(now);
            }
            self.flags.wants_checkpoint.store(true, Ordering::Release);
        }
    }

    fn is_idle(&self) -> bool {
        self.flags.locally_idle.load(Ordering::Acquire)
            && self.checkpointed_idle
            && self.spill.is_empty()
            && self.out_rx.is_empty()
            && self.held_empty()
            && self.delivered.is_empty()
            && self.in_cut.is_empty()
            && self.ack_due.is_empty()
            && !self.cutting
    }

    fn bump(&mut self) {
        self.activity += 1;
        self.checkpointed_idle = false;
        self.detector.reset();
    }

    fn state(&self, done: bool) -> NodeState {
        let c = &self.counters;
        let get = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        NodeState {
            node: self.config.node,
            idle: self.is_idle(),
            done,
            activity: self.activity,
            links_sent: get(&c.links_sent),
            links_received: get(&c.links_received),
            batches_sent: get(&c.batches_sent),
            batches_received: get(&c.batches_received),
            unacked_entries: (self.delivered.len() + self.in_cut.len() + self.ack_due.len()) as u64,
            spilled_urls: self.spill.urls(),
            pages: self.shared.pages.load(Ordering::Relaxed),
            outstanding: self.shared.outstanding.load(Ordering::Relaxed),
            unix_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
        }
    }

    /// Writes this node's state; a finished node's state does not expire (the others
    /// may still be taking their last snapshots).
    fn publish_state(&mut self, done: bool) {
        let state = self.state(done);
        let Ok(json) = serde_json::to_string(&state) else {
            return;
        };
        let mut set = Cmd::new();
        set.arg("SET")
            .arg(self.keys.node(self.config.node))
            .arg(json);
        if !done {
            set.arg("PX").arg(STATE_TTL_MS);
        }
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        let t = Instant::now();
        let r = conn.one(&set);
        self.count_call(t);
        if let Err(e) = r {
            self.failed(&e);
        }
    }

    fn heartbeat_and_snapshot(&mut self) {
        self.publish_state(false);
        if !self.is_idle() || self.flags.finished.load(Ordering::Acquire) {
            return;
        }
        let Some(snap) = self.snapshot() else {
            return;
        };
        if self.detector.observe(&snap) {
            tracing::info!(
                node = self.config.node,
                "farm finished: every node idle, no link in flight"
            );
            self.flags.finished.store(true, Ordering::Release);
        }
    }

    /// Reads every node's state, then every partition stream's length.
    fn snapshot(&mut self) -> Option<Snapshot> {
        let nodes = self.config.nodes;
        let partitions = self.table.len();
        let mut mget = Cmd::new();
        mget.arg("MGET");
        for n in 0..nodes {
            mget.arg(self.keys.node(n));
        }
        let conn = self.conn.as_mut()?;
        let t = Instant::now();
        let r = conn.one(&mget);
        self.count_call(t);
        let states = match r {
            Ok(Value::Array(vs)) => vs
                .iter()
                .map(|v| match v {
                    Value::BulkString(b) => serde_json::from_slice::<NodeState>(b).ok(),
                    _ => None,
                })
                .collect::<Vec<_>>(),
            Ok(_) => return None,
            Err(e) => {
                self.failed(&e);
                return None;
            }
        };
        let cmds: Vec<Cmd> = (0..partitions)
            .map(|p| {
                let mut c = Cmd::new();
                c.arg("XLEN").arg(self.keys.stream(p));
                c
            })
            .collect();
        let conn = self.conn.as_mut()?;
        let t = Instant::now();
        let r = conn.run(&cmds);
        self.count_call(t);
        let mut stream_entries = 0u64;
        match r {
            Ok(replies) => {
                for v in replies {
                    match v {
                        Ok(Value::Int(n)) => stream_entries += u64::try_from(n).unwrap_or(0),
                        _ => return None,
                    }
                }
            }
            Err(e) => {
                self.failed(&e);
                return None;
            }
        }
        Some(Snapshot {
            nodes: states,
            stream_entries,
        })
    }

    fn count_call(&self, since: Instant) {
        self.counters.round_trips.fetch_add(1, Ordering::Relaxed);
        self.counters
            .redis_wait_ns
            .fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }

    /// A Redis call failed: drop the connection, back off, remember since when.
    fn failed(&mut self, e: &redis::RedisError) {
        self.counters.redis_errors.fetch_add(1, Ordering::Relaxed);
        let now = Instant::now();
        if self.down_since.is_none() {
            self.down_since = Some(now);
        }
        if !self.warned_down {
            self.warned_down = true;
            tracing::warn!(error = %e, spilled = self.spill.urls(), "farm: Redis unreachable; crawling own partitions, holding outgoing links, retrying");
        }
        self.conn = None;
        self.next_connect = now + self.backoff;
        self.backoff = (self.backoff * 2).min(Duration::from_secs(5));
    }

    fn check_down(&mut self, now: Instant) {
        let Some(since) = self.down_since else {
            return;
        };
        if self.conn.is_some() {
            self.down_since = None;
            return;
        }
        if now >= since + self.config.redis_timeout {
            let msg = format!(
                "farm: Redis unreachable for {} s (--farm-redis-timeout-secs): stopping; {} outgoing links are kept in the final checkpoint's outbox",
                self.config.redis_timeout.as_secs(),
                self.spill.urls()
            );
            if let Ok(mut f) = self.flags.fatal.lock() {
                if f.is_none() {
                    tracing::error!("{msg}");
                    *f = Some(msg);
                }
            }
        }
    }

    fn publish_gauges(&self) {
        let c = &self.counters;
        c.unacked_entries.store(
            (self.delivered.len() + self.in_cut.len() + self.ack_due.len()) as u64,
            Ordering::Relaxed,
        );
        c.spilled_urls.store(self.spill.urls(), Ordering::Relaxed);
        c.spill_disk_bytes
            .store(self.spill.disk_bytes(), Ordering::Relaxed);
    }
}

/// The entries of an `XREADGROUP` reply for one stream: id and the `b` field (`None`
/// for an entry deleted since it was delivered, as pending reads report them).
fn stream_entries(v: &Value) -> Vec<(String, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let streams = match v {
        Value::Array(s) => s.as_slice(),
        Value::Map(m) => {
            for (_, entries) in m {
                collect_entries(entries, &mut out);
            }
            return out;
        }
        _ => return out,
    };
    for s in streams {
        if let Value::Array(kv) = s {
            if let Some(entries) = kv.get(1) {
                collect_entries(entries, &mut out);
            }
        }
    }
    out
}

fn collect_entries(entries: &Value, out: &mut Vec<(String, Option<Vec<u8>>)>) {
    let Value::Array(entries) = entries else {
        return;
    };
    for e in entries {
        let Value::Array(parts) = e else { continue };
        let Some(id) = parts.first().and_then(value_string) else {
            continue;
        };
        let mut payload = None;
        if let Some(Value::Array(fields)) = parts.get(1) {
            let mut it = fields.iter();
            while let (Some(k), Some(v)) = (it.next(), it.next()) {
                if value_string(k).as_deref() == Some("b") {
                    if let Value::BulkString(b) = v {
                        payload = Some(b.clone());
                    }
                }
            }
            if payload.is_none() {
                // A field we do not know: garbage for us, still an entry to skip.
                payload = Some(Vec::new());
            }
        }
        out.push((id, payload));
    }
}

fn value_string(v: &Value) -> Option<String> {
    match v {
        Value::BulkString(b) => String::from_utf8(b.clone()).ok(),
        Value::SimpleString(s) => Some(s.clone()),
        _ => None,
    }
}

fn value_u32(v: &Value) -> Option<u32> {
    match v {
        Value::Int(n) => u32::try_from(*n).ok(),
        _ => value_string(v)?.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xreadgroup_replies_parse() {
        let b = |s: &str| Value::BulkString(s.as_bytes().to_vec());
        let reply = Value::Array(vec![Value::Array(vec![
            b("{t:p1}:links"),
            Value::Array(vec![
                Value::Array(vec![b("1-0"), Value::Array(vec![b("b"), b("xyz")])]),
                Value::Array(vec![b("2-0"), Value::Nil]),
                Value::Array(vec![b("3-0"), Value::Array(vec![b("other"), b("q")])]),
            ]),
        ])]);
        let e = stream_entries(&reply);
        assert_eq!(
            e,
            vec![
                ("1-0".to_owned(), Some(b"xyz".to_vec())),
                ("2-0".to_owned(), None),
                ("3-0".to_owned(), Some(Vec::new())),
            ]
        );
        assert!(stream_entries(&Value::Nil).is_empty());
        assert_eq!(value_u32(&b("17")), Some(17));
    }
}
