//! A farm of trawl nodes sharing one crawl over Redis (guide: `docs/farm.md`).
//!
//! Each node owns the partitions that rendezvous hashing gives it ([`crate::routing::partition`]);
//! links for another node's partitions travel, untested, in batches ([`wire`]) through
//! that partition's Redis stream, and the owner tests them against its own presence
//! bits and admits them as a shard's own (`engine::core::Core::on_inbound`). One bus
//! thread per node ([`bus`]) talks to Redis with the synchronous client; the shards
//! reach it through channels and it reaches them through their wakers.

mod bus;
pub mod config;
mod conn;
mod node;
pub mod quiescence;
pub mod report;
mod spill;
mod status;
pub mod wire;

pub use config::FarmConfig;
pub(crate) use node::BusEnds;
pub use node::{
    Cut, FarmCounters, FarmLink, FarmStats, RecordedSettings, Tick, OUTBOX_FILE, SETTINGS_FILE,
};
pub use status::{status, FarmStatus, NodeStatus};
pub use wire::{Entry, WireError, WireLink};

/// Fuzz entry point for stream entries (see [`wire::fuzz_decode`]).
pub fn fuzz_wire(data: &[u8]) {
    wire::fuzz_decode(data);
}

/// What the bus reads and sets of the crawl it serves (the engine's shared state
/// implements it): the URLs still outstanding, which received links join while they
/// travel to a shard and which the farm's quiet test reads; the pages fetched, for the
/// node's report; and the flag that ends the crawl on a fatal bus error.
pub trait CrawlGauges: Send + Sync {
    /// URLs admitted and not yet finished, this node's in-transit links included.
    fn outstanding(&self) -> &std::sync::atomic::AtomicU64;
    /// Pages fetched so far.
    fn pages(&self) -> u64;
    /// A fatal bus error: the crawl stops.
    fn fail(&self);
}

/// Starts this node's bus thread (engine side, after the shards' channels exist): it
/// hands received links to each shard through `received` (one sender per shard) and
/// wakes it; on resume, the links of the checkpoint's outbox (read by
/// `FarmLink::check_resume`) are sent again.
///
/// # Errors
/// The thread could not be spawned.
pub(crate) fn start_bus(
    mut ends: node::BusEnds,
    link: &FarmLink,
    gauges: std::sync::Arc<dyn CrawlGauges>,
    out_dir: std::path::PathBuf,
    received: Vec<crossbeam_channel::Sender<crate::routing::InboundBatch>>,
    wakers: Vec<std::sync::Arc<mio::Waker>>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let outbox = std::mem::take(&mut ends.outbox);
    bus::spawn(bus::BusParts {
        ends,
        config: link.config.clone(),
        table: link.table.clone(),
        shared: gauges,
        received,
        wakers,
        out_dir,
        outbox,
    })
}

/// Links in a checkpoint's `farm-outbox.bin` (`trawl inspect` verifies it).
///
/// # Errors
/// The file is unreadable or damaged (a record's length, checksum or format).
pub fn outbox_links(path: &std::path::Path) -> std::io::Result<u64> {
    Ok(spill::read_outbox(path)?
        .iter()
        .map(|e| e.links.len() as u64)
        .sum())
}
