//! The engine's side of the farm: what the shards and the coordinator call.
//!
//! - Shards call [`FarmLink::route`] on a page's links *before* the presence bits: the
//!   links another node owns leave for the bus untested, with the robots.txt grant of
//!   the sitemap files among them (the owner tests and admits them: `Core::on_inbound`).
//! - Seeds are kept by [`FarmLink::owns`].
//! - The coordinator calls [`FarmLink::tick`] every turn (is the farm finished? does the
//!   bus want a checkpoint?), and brackets each checkpoint with [`FarmLink::begin_cut`]
//!   ... [`Cut::write`] ... [`Cut::committed`], so received entries are acknowledged
//!   only once a committed checkpoint holds them.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::{bounded, Receiver, Sender};

use crate::provenance::Hop;

use super::config::FarmConfig;
use super::wire::WireLink;
use crate::routing::{partition_key, Partitions};

/// Links a shard hands the bus at once, each with its partition.
pub(crate) type OutBatch = Vec<(u32, WireLink)>;

/// Batches in the shards-to-bus channel. The bus drains it all the time (into its
/// spill, which goes to disk past its RAM cap), so a shard never waits long on it.
const OUT_CHANNEL_BATCHES: usize = 256;

/// The checkpoint file holding the links a node had not yet sent at the cut.
pub const OUTBOX_FILE: &str = "farm-outbox.bin";

/// The checkpoint file holding the farm settings the node ran with.
pub const SETTINGS_FILE: &str = "farm.json";

/// The settings a resume must agree with: another node index, node count or
/// partitioning would route the checkpoint's URLs to the wrong owners.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RecordedSettings {
    pub name: String,
    pub nodes: u32,
    pub node: u32,
    pub partitions: u32,
    pub partition_by: crate::routing::PartitionBy,
    pub redis: Vec<String>,
    /// The farm counters at the cut, restored on resume like the engine's counters
    /// (absent in checkpoints of the first farm build).
    #[serde(default)]
    pub counters: std::collections::BTreeMap<String, u64>,
}

impl FarmCounters {
    /// The cumulative counters by name (gauges left out: they are recomputed).
    fn cumulative(&self) -> [(&'static str, &AtomicU64); 10] {
        [
            ("links_sent", &self.links_sent),
            ("links_received", &self.links_received),
            ("links_known", &self.links_known),
            ("batches_sent", &self.batches_sent),
            ("batches_received", &self.batches_received),
            ("round_trips", &self.round_trips),
            ("redis_wait_ns", &self.redis_wait_ns),
            ("acked_entries", &self.acked_entries),
            ("bad_entries", &self.bad_entries),
            ("redis_errors", &self.redis_errors),
        ]
    }

    fn save(&self) -> std::collections::BTreeMap<String, u64> {
        self.cumulative()
            .iter()
            .map(|(k, a)| ((*k).to_owned(), a.load(Ordering::Relaxed)))
            .collect()
    }

    fn restore(&self, saved: &std::collections::BTreeMap<String, u64>) {
        for (k, a) in self.cumulative() {
            if let Some(v) = saved.get(k) {
                a.store(*v, Ordering::Relaxed);
            }
        }
    }
}

impl RecordedSettings {
    pub fn of(c: &FarmConfig) -> Self {
        Self {
            name: c.name.clone(),
            nodes: c.nodes,
            node: c.node,
            partitions: c.partitions,
            partition_by: c.partition_by,
            redis: c.redis.clone(),
            counters: std::collections::BTreeMap::new(),
        }
    }

    /// Whether a crawl with `c` may resume from these (the Redis address may change:
    /// the farm can move to another Redis that holds its streams).
    pub fn agrees(&self, c: &FarmConfig) -> bool {
        let now = Self::of(c);
        self.name == now.name
            && self.nodes == now.nodes
            && self.node == now.node
            && self.partitions == now.partitions
            && self.partition_by == now.partition_by
    }
}

/// Writes `farm.json` into a checkpoint directory (synced, like the other files).
pub(crate) fn write_settings(
    dir: &Path,
    c: &FarmConfig,
    counters: &FarmCounters,
) -> std::io::Result<()> {
    let mut recorded = RecordedSettings::of(c);
    recorded.counters = counters.save();
    let json = serde_json::to_vec_pretty(&recorded).map_err(std::io::Error::other)?;
    let path = dir.join(SETTINGS_FILE);
    std::fs::write(&path, json)?;
    std::fs::File::open(&path)?.sync_all()
}

/// Farm figures (stats.json `farm`, the progress line, Prometheus).
#[derive(Debug, Default)]
pub struct FarmCounters {
    pub links_sent: AtomicU64,
    pub links_received: AtomicU64,
    /// Received links the presence bits already knew (sent by several nodes, or
    /// re-read after a resume).
    pub links_known: AtomicU64,
    pub batches_sent: AtomicU64,
    pub batches_received: AtomicU64,
    pub round_trips: AtomicU64,
    pub redis_wait_ns: AtomicU64,
    /// Received entries waiting for a checkpoint before they are acknowledged.
    pub unacked_entries: AtomicU64,
    pub acked_entries: AtomicU64,
    /// Outgoing links waiting (RAM and spill file).
    pub spilled_urls: AtomicU64,
    pub spill_disk_bytes: AtomicU64,
    /// Entries that did not decode (garbage, a foreign version): logged and skipped.
    pub bad_entries: AtomicU64,
    pub redis_errors: AtomicU64,
    /// Links restored from the checkpoint's outbox on resume.
    pub outbox_restored: AtomicU64,
    /// Times a sender held a partition back because its stream was full.
    pub stream_full_waits: AtomicU64,
}

/// Farm figures at one moment, for `stats.json`.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FarmStats {
    pub node: u32,
    pub nodes: u32,
    pub partitions: u32,
    pub partitions_owned: u32,
    pub partition_by: String,
    pub links_sent: u64,
    pub links_received: u64,
    pub links_known: u64,
    pub batches_sent: u64,
    pub batches_received: u64,
    pub redis_round_trips: u64,
    pub redis_wait_secs: f64,
    pub unacked_entries: u64,
    pub acked_entries: u64,
    pub spilled_urls: u64,
    pub spill_disk_bytes: u64,
    pub bad_entries: u64,
    pub redis_errors: u64,
    pub outbox_restored: u64,
    pub stream_full_waits: u64,
    /// The farm was seen to finish (every node idle, no link in flight).
    pub finished: bool,
}

/// What the bus tells the coordinator and the coordinator tells the bus, lock-free.
#[derive(Debug, Default)]
pub(crate) struct Flags {
    /// Written by the coordinator: nothing queued or in flight on this node.
    pub locally_idle: AtomicBool,
    /// Written by the bus: the farm has finished.
    pub finished: AtomicBool,
    /// Written by the bus: take a checkpoint soon (to acknowledge entries, or to
    /// record that this node is idle).
    pub wants_checkpoint: AtomicBool,
    /// Written by the bus: Redis stayed unreachable past the limit.
    pub fatal: Mutex<Option<String>>,
}

/// Control messages to the bus thread.
pub(crate) enum Ctl {
    /// Deliver what is held, stop delivering, reply.
    Pause(Sender<()>),
    /// Drain the shards' links, try to send them, write the rest to the checkpoint dir.
    WriteOutbox {
        dir: std::path::PathBuf,
        locally_idle: bool,
        reply: Sender<std::io::Result<u64>>,
    },
    /// The checkpoint committed: acknowledge what it holds, go on.
    Commit,
    /// The checkpoint failed: go on, acknowledge nothing yet.
    Abort,
    /// The crawl ends: send what can be sent, publish the final state, stop.
    Finish(Sender<()>),
}

/// The handle every shard and the coordinator hold (in `Shared`).
pub struct FarmLink {
    pub(crate) config: FarmConfig,
    pub(crate) table: Partitions,
    out_tx: Sender<OutBatch>,
    ctl_tx: Sender<Ctl>,
    pub(crate) counters: Arc<FarmCounters>,
    pub(crate) flags: Arc<Flags>,
}

/// The crawl core's questions to the farm (`routing::FarmRoutes`).
impl crate::routing::FarmRoutes for FarmLink {
    fn owns(&self, url: &str) -> bool {
        FarmLink::owns(self, url)
    }
    fn count_known(&self, n: u64) {
        FarmLink::count_known(self, n);
    }
}

/// The ends the bus thread takes (see `bus::spawn`).
pub(crate) struct BusEnds {
    /// Links of the resumed checkpoint's outbox, to send again.
    pub outbox: Vec<super::wire::Entry>,
    pub out_rx: Receiver<OutBatch>,
    pub ctl_rx: Receiver<Ctl>,
    pub counters: Arc<FarmCounters>,
    pub flags: Arc<Flags>,
}

impl FarmLink {
    /// The link and the bus's ends of its channels.
    ///
    /// # Errors
    /// A setting out of range.
    pub(crate) fn new(config: FarmConfig) -> Result<(Self, BusEnds), String> {
        config.validate()?;
        let table = config.table().map_err(|e| e.to_string())?;
        let (out_tx, out_rx) = bounded(OUT_CHANNEL_BATCHES);
        let (ctl_tx, ctl_rx) = crossbeam_channel::unbounded();
        let counters = Arc::new(FarmCounters::default());
        let flags = Arc::new(Flags::default());
        Ok((
            Self {
                config,
                table,
                out_tx,
                ctl_tx,
                counters: Arc::clone(&counters),
                flags: Arc::clone(&flags),
            },
            BusEnds {
                outbox: Vec::new(),
                out_rx,
                ctl_rx,
                counters,
                flags,
            },
        ))
    }

    /// Before a resume starts anything: refuses a checkpoint taken with other farm
    /// settings (`farm.json`), and reads its outbox (the links to send again) into the
    /// bus's ends.
    ///
    /// # Errors
    /// The recorded settings differ or are unreadable, or the outbox is damaged.
    pub(crate) fn check_resume(&self, checkpoint: &Path, ends: &mut BusEnds) -> Result<(), String> {
        let outbox = checkpoint.join(OUTBOX_FILE);
        ends.outbox =
            super::spill::read_outbox(&outbox).map_err(|e| format!("{}: {e}", outbox.display()))?;
        let path = checkpoint.join(SETTINGS_FILE);
        let Ok(bytes) = std::fs::read(&path) else {
            return Ok(());
        };
        let recorded: RecordedSettings =
            serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        if recorded.agrees(&self.config) {
            ends.counters.restore(&recorded.counters);
            return Ok(());
        }
        Err(format!(
            "the checkpoint was taken as farm node {} of {} ({} partitions by {}, farm {:?}); \
             a resume must use the same --farm-node, --farm-nodes, --farm-partitions, \
             --farm-partition-by and --farm-name",
            recorded.node,
            recorded.nodes,
            recorded.partitions,
            recorded.partition_by.name(),
            recorded.name
        ))
    }

    /// The partition of a canonical URL (see [`partition_key`]).
    pub fn partition_of_url(&self, url: &str) -> u32 {
        self.table.partition_of(partition_key(url))
    }

    /// Whether this node owns the URL's partition.
    pub fn owns(&self, url: &str) -> bool {
        self.table.owner(self.partition_of_url(url)) == self.config.node
    }

    /// Takes the links of other nodes' partitions out of `links` and hands them to the
    /// bus with the page they were found on, their hop path (`hops` of the page plus
    /// the link's own hop) and `grant`: the robots.txt permission the links carry when
    /// they are sitemap files (a robots.txt's `Sitemap:` lines, an index's sitemaps, a
    /// sitemap's redirect), empty otherwise. Blocks only while the bus's channel is
    /// full, which the bus drains continuously.
    pub fn route(&self, links: &mut Vec<(String, Hop)>, via: &str, hops: &str, grant: &[String]) {
        let mut batch: OutBatch = Vec::new();
        links.retain(|(url, hop)| {
            let p = self.partition_of_url(url);
            if self.table.owner(p) == self.config.node {
                return true;
            }
            let mut h = String::with_capacity(hops.len() + 1);
            h.push_str(hops);
            h.push(hop.code());
            batch.push((
                p,
                WireLink {
                    url: url.clone(),
                    via: via.to_owned(),
                    hops: h,
                    grant: grant.to_vec(),
                },
            ));
            false
        });
        self.send(batch);
    }

    /// Takes the URLs of other nodes' partitions out of `urls` (URLs handed to this
    /// node by `trawl add`, like seeds: no page, no hop) and hands them to the bus for
    /// their owners, which test and queue them.
    pub fn route_added(&self, urls: &mut Vec<String>) {
        let mut batch: OutBatch = Vec::new();
        urls.retain(|url| {
            let p = self.partition_of_url(url);
            if self.table.owner(p) == self.config.node {
                return true;
            }
            batch.push((
                p,
                WireLink {
                    url: url.clone(),
                    via: String::new(),
                    hops: String::new(),
                    grant: Vec::new(),
                },
            ));
            false
        });
        self.send(batch);
    }

    /// Counts received links the presence bits already knew (the owner's admission,
    /// `Core::on_inbound`).
    pub(crate) fn count_known(&self, n: u64) {
        if n > 0 {
            self.counters.links_known.fetch_add(n, Ordering::Relaxed);
        }
    }

    fn send(&self, batch: OutBatch) {
        if !batch.is_empty() {
            // A closed channel means the bus has ended, which happens only after the
            // shards: unreachable while a shard routes.
            if self.out_tx.send(batch).is_err() {
                tracing::error!("farm bus gone: links of other nodes dropped");
            }
        }
    }

    /// The coordinator's turn: records whether the node has anything to do, and says
    /// whether the farm is finished and whether the bus wants a checkpoint now.
    pub fn tick(&self, locally_idle: bool) -> Tick {
        self.flags
            .locally_idle
            .store(locally_idle, Ordering::Release);
        Tick {
            finished: self.flags.finished.load(Ordering::Acquire),
            checkpoint: self.flags.wants_checkpoint.swap(false, Ordering::AcqRel),
            fatal: self.flags.fatal.lock().ok().and_then(|f| f.clone()),
        }
    }

    /// Starts a checkpoint's farm part: the bus delivers what it holds and stops
    /// delivering until [`Cut::committed`] or the cut is dropped.
    pub fn begin_cut(&self) -> Cut<'_> {
        let (tx, rx) = bounded(1);
        let paused = self.ctl_tx.send(Ctl::Pause(tx)).is_ok()
            && rx.recv_timeout(Duration::from_secs(60)).is_ok();
        if !paused {
            tracing::error!("farm bus did not pause for the checkpoint");
        }
        Cut {
            link: self,
            done: false,
        }
    }

    /// Ends the bus thread (after the shards and the final checkpoint).
    pub(crate) fn finish(&self) {
        let (tx, rx) = bounded(1);
        if self.ctl_tx.send(Ctl::Finish(tx)).is_ok() {
            let _ = rx.recv_timeout(Duration::from_secs(30));
        }
    }

    /// Figures for `stats.json`.
    pub fn stats(&self) -> FarmStats {
        let c = &self.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        FarmStats {
            node: self.config.node,
            nodes: self.config.nodes,
            partitions: self.config.partitions,
            partitions_owned: self.table.owned_by(self.config.node).len() as u32,
            partition_by: self.config.partition_by.name().to_owned(),
            links_sent: get(&c.links_sent),
            links_received: get(&c.links_received),
            links_known: get(&c.links_known),
            batches_sent: get(&c.batches_sent),
            batches_received: get(&c.batches_received),
            redis_round_trips: get(&c.round_trips),
            redis_wait_secs: get(&c.redis_wait_ns) as f64 / 1e9,
            unacked_entries: get(&c.unacked_entries),
            acked_entries: get(&c.acked_entries),
            spilled_urls: get(&c.spilled_urls),
            spill_disk_bytes: get(&c.spill_disk_bytes),
            bad_entries: get(&c.bad_entries),
            redis_errors: get(&c.redis_errors),
            outbox_restored: get(&c.outbox_restored),
            stream_full_waits: get(&c.stream_full_waits),
            finished: self.flags.finished.load(Ordering::Acquire),
        }
    }
}

/// What the coordinator learns each turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tick {
    pub finished: bool,
    pub checkpoint: bool,
    pub fatal: Option<String>,
}

/// One checkpoint's farm part; dropped without [`Cut::committed`] it aborts (the bus
/// goes on and acknowledges nothing of it).
pub struct Cut<'a> {
    link: &'a FarmLink,
    done: bool,
}

impl Cut<'_> {
    /// Writes the links not yet sent into the checkpoint directory (after the shards
    /// stopped at the cut). `locally_idle`: nothing is queued on this node at the cut.
    ///
    /// # Errors
    /// Writing the outbox failed (the checkpoint must fail: it would lose them).
    pub fn write(&self, dir: &Path, locally_idle: bool) -> std::io::Result<u64> {
        let (tx, rx) = bounded(1);
        self.link
            .ctl_tx
            .send(Ctl::WriteOutbox {
                dir: dir.to_owned(),
                locally_idle,
                reply: tx,
            })
            .map_err(|_| std::io::Error::other("farm bus gone"))?;
        rx.recv_timeout(Duration::from_secs(120))
            .map_err(|_| std::io::Error::other("farm bus did not write its outbox"))?
    }

    /// The checkpoint committed: the bus acknowledges the entries it holds.
    pub fn committed(mut self) {
        self.done = true;
        let _ = self.link.ctl_tx.send(Ctl::Commit);
    }
}

impl Drop for Cut<'_> {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.link.ctl_tx.send(Ctl::Abort);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_settings_guard_a_resume_and_carry_the_counters() {
        let tmp = tempfile::tempdir().unwrap();
        let c = FarmConfig::new("redis://127.0.0.1:1", 3, 2);
        let (link, _) = FarmLink::new(c.clone()).unwrap();
        link.counters.links_sent.store(41, Ordering::Relaxed);
        write_settings(tmp.path(), &c, &link.counters).unwrap();
        let (again, mut ends) = FarmLink::new(c.clone()).unwrap();
        again.check_resume(tmp.path(), &mut ends).unwrap();
        assert_eq!(again.counters.links_sent.load(Ordering::Relaxed), 41);
        let mut other = c.clone();
        other.node = 1;
        let (wrong, mut ends) = FarmLink::new(other).unwrap();
        let err = wrong.check_resume(tmp.path(), &mut ends).unwrap_err();
        assert!(err.contains("farm node 2 of 3"), "{err}");
        // Another Redis address is allowed: the farm may move.
        let mut moved = c;
        moved.redis = vec!["redis://127.0.0.1:2".to_owned()];
        let (ok, mut ends) = FarmLink::new(moved).unwrap();
        assert!(ok.check_resume(tmp.path(), &mut ends).is_ok());
    }

    #[test]
    fn route_keeps_own_links_and_hands_the_rest_to_the_bus() {
        let (link, ends) = FarmLink::new(FarmConfig::new("redis://127.0.0.1:1", 3, 1)).unwrap();
        let mut links: Vec<(String, Hop)> = (0..300)
            .map(|i| (format!("http://h{i}.test/p"), Hop::Link))
            .collect();
        let grant = vec!["http://g.test".to_owned()];
        link.route(&mut links, "http://from.test/", "LR", &grant);
        assert!(links.iter().all(|(u, _)| link.owns(u)));
        assert!(
            (60..140).contains(&links.len()),
            "about a third kept: {}",
            links.len()
        );
        let sent: OutBatch = ends.out_rx.try_recv().unwrap();
        assert_eq!(sent.len() + links.len(), 300);
        for (p, l) in &sent {
            assert_ne!(link.table.owner(*p), 1);
            assert_eq!(*p, link.partition_of_url(&l.url));
            assert_eq!(l.via, "http://from.test/");
            assert_eq!(l.hops, "LRL");
            assert_eq!(l.grant, grant);
        }
    }
}
