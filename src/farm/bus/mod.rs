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
//!    each link is parsed and handed to the shard that owns its host, whose core tests
//!    it against the presence bits and admits it as it admits its own links (one
//!    admission: `Core::on_inbound`);
//! 5. publishes its state and, when idle, takes termination snapshots (`quiescence.rs`).
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

use crate::routing::{InboundBatch, InboundLink};

use super::config::{FarmConfig, Keys, GROUP};
use super::conn::Conn;
use super::node::{BusEnds, Ctl, FarmCounters, Flags, OutBatch, OUTBOX_FILE};
use super::quiescence::{Detector, NodeState, Snapshot};
use super::spill::Spill;
use super::wire::{Entry, WireLink};
use crate::routing::Partitions;

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
    pub shared: Arc<dyn super::CrawlGauges>,
    /// Per shard, the channel of links received for its hosts.
    pub received: Vec<Sender<InboundBatch>>,
    pub wakers: Vec<Arc<mio::Waker>>,
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
    shared: Arc<dyn super::CrawlGauges>,
    received: Vec<Sender<InboundBatch>>,
    wakers: Vec<Arc<mio::Waker>>,
    conn: Option<Conn>,
    /// When Redis was last found unreachable (cleared by a successful call).
    down_since: Option<Instant>,
    next_connect: Instant,
    backoff: Duration,
    spill: Spill,
    /// Last known length of each partition stream we send to.
    stream_len: HashMap<u32, u64>,
    /// Per shard, received links its full channel has not taken yet (counted
    /// outstanding only once the shard has them).
    held: Vec<InboundBatch>,
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
        let shards = p.received.len();
        let own = p.table.owned_by(p.config.node);
        Self {
            keys: p.config.keys(),
            own: own.clone(),
            table: p.table,
            out_rx: p.ends.out_rx,
            ctl_rx: p.ends.ctl_rx,
            counters: p.ends.counters,
            flags: p.ends.flags,
            shared: p.shared,
            received: p.received,
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
                // Everything received must be with its shard before the shards drain
                // their channels at the cut: its entry is acknowledged after this
                // checkpoint commits, so a resume would not read it again.
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

mod heartbeat;
mod receive;
mod send;

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
