//! The crawl engine: shard threads, the coordinator that watches them, checkpoints
//! and the library API (`Crawler::builder()...build()?.run()`).
//!
//! See `docs/architecture.md` for the path of one URL and the checkpoint protocol.

mod adds;
pub mod config;
mod control;
mod coordinator;
mod core;
mod crawl_handle;
mod error;
mod inbox;
mod observe;
pub(crate) mod output;
mod setup;
mod shard;
mod shared;
pub mod space;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Barrier};
use std::time::Instant;

use crossbeam_channel::{bounded, unbounded, Sender};

use crate::net::{Fetcher, IpSlots};

pub use config::CrawlConfig;
pub use control::OperatorStats;
pub use crawl_handle::{AddError, CrawlHandle, MAX_ADD_URLS};
pub use error::CrawlError;
pub use observe::metrics;
pub use observe::stats::Stats;
pub use observe::width::WidthStats;
pub use output::OutputSummary;

use crate::handler::Handler;

use crate::routing::InboundBatch;

use coordinator::Coordinator;
use observe::stats::{stats, write_stats};
use setup::Prepared;

pub(crate) use shared::Shared;

/// A message from the coordinator to a shard.
pub(crate) enum Control {
    Checkpoint(Arc<CheckpointCut>),
}

/// One checkpoint in progress: the barrier all shards and the coordinator meet at.
pub(crate) struct CheckpointCut {
    pub barrier: Barrier,
    pub dir: PathBuf,
    pub failed: AtomicBool,
}

/// Builds a [`Crawler`].
#[derive(Default)]
pub struct CrawlerBuilder {
    config: Option<CrawlConfig>,
    handler: Option<Arc<dyn Handler>>,
    resume: bool,
    stop: Option<Arc<AtomicBool>>,
    farm: Option<crate::farm::FarmConfig>,
}

impl CrawlerBuilder {
    /// Crawls as one node of a farm sharing the crawl over Redis (`docs/farm.md`).
    pub fn farm(mut self, farm: crate::farm::FarmConfig) -> Self {
        self.farm = Some(farm);
        self
    }

    /// Uses this configuration (seeds, output directory, limits...).
    pub fn config(mut self, config: CrawlConfig) -> Self {
        self.config = Some(config);
        self
    }

    /// Calls `handler` for every response, outcome and new link.
    pub fn handler(mut self, handler: Arc<dyn Handler>) -> Self {
        self.handler = Some(handler);
        self
    }

    /// Continues the crawl whose last checkpoint is in the output directory.
    pub fn resume(mut self, resume: bool) -> Self {
        self.resume = resume;
        self
    }

    /// A flag that, once set (e.g. by a SIGINT handler), stops the crawl gracefully:
    /// no new fetches, a final checkpoint, then `run` returns.
    pub fn stop_flag(mut self, flag: Arc<AtomicBool>) -> Self {
        self.stop = Some(flag);
        self
    }

    /// Validates the configuration.
    ///
    /// # Errors
    /// No configuration, no seeds (and not resuming), or a setting out of range
    /// ([`CrawlConfig::validate`]).
    pub fn build(self) -> Result<Crawler, CrawlError> {
        let config = self
            .config
            .ok_or_else(|| CrawlError::Config("no crawl configuration given".to_owned()))?;
        config
            .validate()
            .map_err(|e| CrawlError::Config(e.to_string()))?;
        if config.seeds.is_empty() && !self.resume && config.recrawl.is_none() {
            return Err(CrawlError::Config("no seed URLs".to_owned()));
        }
        if config.max_links_per_page == 0 {
            return Err(CrawlError::Config(
                "max_links_per_page must be at least 1".to_owned(),
            ));
        }
        if let Some(f) = &self.farm {
            f.validate().map_err(CrawlError::Config)?;
        }
        let operator = Arc::new(control::Operator::new(&config.out_dir, config.delay));
        Ok(Crawler {
            farm: self.farm,
            operator,
            config,
            handler: self.handler,
            resume: self.resume,
            stop: self.stop.unwrap_or_default(),
        })
    }
}

/// A configured crawl, ready to [`Crawler::run`].
pub struct Crawler {
    farm: Option<crate::farm::FarmConfig>,
    operator: Arc<control::Operator>,
    config: CrawlConfig,
    handler: Option<Arc<dyn Handler>>,
    resume: bool,
    stop: Arc<AtomicBool>,
}

impl Crawler {
    /// Starts building a crawl.
    pub fn builder() -> CrawlerBuilder {
        CrawlerBuilder::default()
    }

    /// A handle for operating the crawl while [`Crawler::run`] runs (on another
    /// thread): add URLs, pause, resume, checkpoint, stop, live figures. See
    /// [`CrawlHandle`].
    pub fn handle(&self) -> CrawlHandle {
        CrawlHandle::new(self.config.out_dir.clone(), Arc::clone(&self.operator))
    }

    /// Runs the crawl to the end: the frontier is exhausted, a budget is spent, or the
    /// stop flag was set. Writes a final checkpoint and `stats.json`.
    ///
    /// # Errors
    /// Setting up the output directory, presence bits, writers or event loops failed,
    /// or a resume found no usable checkpoint.
    pub fn run(self) -> Result<Stats, CrawlError> {
        run(self)
    }
}

/// A crawl from start to end: [`setup::prepare`], [`start_shards`], the
/// [`Coordinator`] until the crawl ends, then [`finish`].
fn run(crawler: Crawler) -> Result<Stats, CrawlError> {
    let Crawler {
        farm,
        operator,
        config,
        handler,
        resume,
        stop,
    } = crawler;
    let mut prepared = setup::prepare(config, handler, resume, farm, operator)?;
    let monitor = observe::monitor::Monitor::new(
        &prepared.shared.config,
        Arc::clone(&prepared.shared.operator),
        Arc::clone(&prepared.shared.board),
        Instant::now(),
    )?;
    let (shards, adds) = start_shards(&mut prepared)?;
    let mut coordinator = Coordinator::new(
        &prepared,
        &shards.controls,
        &shards.wakers,
        &stop,
        monitor,
        adds,
    );
    prepared.shared.operator.set_running(true);
    let ending = coordinator.run();
    prepared.shared.operator.set_running(false);
    let ending = ending?;
    // The final checkpoint while the shards still hold their frontiers.
    let cp = coordinator.final_checkpoint();
    let report = coordinator.into_report();
    finish(cp, report, ending, shards, prepared)
}

/// The running shard threads and the means to reach them.
struct Shards {
    handles: Vec<std::thread::JoinHandle<()>>,
    /// The farm's bus thread, which delivers received links like a peer
    /// shard; `None` outside a farm.
    farm_bus: Option<std::thread::JoinHandle<()>>,
    controls: Vec<Sender<Control>>,
    wakers: Vec<Arc<mio::Waker>>,
}

/// Starts one thread per shard: its fetcher (event loop), its inbox from the other
/// shards, its control channel from the coordinator, and its frontier, tallies and
/// robots cache from [`setup::prepare`]. Also opens the drop directory of `trawl add`
/// (`adds.rs`), which sends added URLs to the shards that own their hosts.
fn start_shards(p: &mut Prepared) -> Result<(Shards, adds::Adds), CrawlError> {
    let config = &p.shared.config;
    let n = config.shards;
    let mut fetchers = Vec::with_capacity(n);
    // One per-IP table for all shards: hosts are sharded by name, servers are not.
    let ip_slots = (config.per_ip_connections > 0).then(|| IpSlots::new(config.per_ip_connections));
    for _ in 0..n {
        let mut fc = config.fetcher.clone();
        fc.ip_slots.clone_from(&ip_slots);
        fc.max_connections = fc
            .max_connections
            .min(config.concurrency_per_shard * 2 + 16);
        fetchers.push(Fetcher::new(fc)?);
    }
    let wakers: Vec<Arc<mio::Waker>> = fetchers.iter().map(Fetcher::waker).collect();
    let inbox_wakers: Vec<Arc<inbox::InboxWaker>> = wakers
        .iter()
        .map(|w| Arc::new(inbox::InboxWaker::new(Arc::clone(w))))
        .collect();
    let (inbox_txs, inbox_rxs): (Vec<_>, Vec<_>) =
        (0..n).map(|_| bounded(inbox::INBOX_BATCHES)).unzip();
    // Links from other farm nodes (unused outside a farm).
    let (received_txs, received_rxs): (Vec<Sender<InboundBatch>>, Vec<_>) =
        (0..n).map(|_| bounded(inbox::INBOX_BATCHES)).unzip();
    // URLs added while the crawl runs, from the coordinator (`adds.rs`).
    let (added_txs, added_rxs): (Vec<Sender<inbox::Added>>, Vec<_>) =
        (0..n).map(|_| bounded(inbox::INBOX_BATCHES)).unzip();
    let (controls, control_rxs): (Vec<Sender<Control>>, Vec<_>) =
        (0..n).map(|_| unbounded()).unzip();
    // The frontiers, tallies and robots entries move into the shards; `p` keeps the
    // rest for the coordinator.
    let mut per_shard = std::mem::take(&mut p.frontiers)
        .into_iter()
        .zip(std::mem::take(&mut p.tallies))
        .zip(std::mem::take(&mut p.robots));
    let mut handles = Vec::with_capacity(n);
    for (i, (((fetcher, (inbox, control)), received), added)) in fetchers
        .into_iter()
        .zip(inbox_rxs.into_iter().zip(control_rxs))
        .zip(received_rxs)
        .zip(added_rxs)
        .enumerate()
    {
        let Some(((frontier, tallies), robots)) = per_shard.next() else {
            break;
        };
        let parts = shard::ShardParts {
            index: i,
            shared: Arc::clone(&p.shared),
            frontier,
            fetcher,
            filter: Arc::clone(&p.filter),
            inbox,
            received,
            added,
            peers: inbox_txs.clone(),
            peer_wakers: inbox_wakers.clone(),
            output: p.output.tx.clone(),
            control,
            tallies,
            robots,
            warc: p.output.warc_compressor.clone(),
        };
        let handle = std::thread::Builder::new()
            .name(format!("trawl-shard-{i}"))
            .spawn(move || shard::Shard::new(parts).run())
            .map_err(|source| CrawlError::ShardSpawn { index: i, source })?;
        handles.push(handle);
    }
    let farm_bus = match p.farm_ends.take() {
        Some(ends) => {
            let Some(link) = p.shared.farm_link.as_ref() else {
                return Err(CrawlError::Config(
                    "farm bus without farm settings".to_owned(),
                ));
            };
            let gauges: Arc<dyn crate::farm::CrawlGauges> = p.shared.clone();
            Some(
                crate::farm::start_bus(
                    ends,
                    link,
                    gauges,
                    p.shared.config.out_dir.clone(),
                    received_txs,
                    wakers.clone(),
                )
                .map_err(CrawlError::io(
                    "spawn the farm bus thread",
                    &p.shared.config.out_dir,
                ))?,
            )
        }
        None => None,
    };
    let adds = adds::Adds::open(
        &p.out,
        p.resumed_epoch.unwrap_or(0),
        added_txs,
        wakers.clone(),
    )?;
    Ok((
        Shards {
            handles,
            farm_bus,
            controls,
            wakers,
        },
        adds,
    ))
}

/// Ends a crawl after its final checkpoint (`cp`, taken while the shards still held
/// their frontiers): the shards stop, the output is flushed and closed, and
/// `stats.json` is written with how the crawl ended (`ending`).
fn finish(
    cp: Result<(), CrawlError>,
    report: coordinator::Report,
    ending: &'static str,
    shards: Shards,
    prepared: Prepared,
) -> Result<Stats, CrawlError> {
    let shared = Arc::clone(&prepared.shared);
    shared.flags.exit();
    for w in &shards.wakers {
        let _ = w.wake();
    }
    for h in shards.handles {
        let _ = h.join();
    }
    drop(shards.controls);
    if let (Some(f), Some(bus)) = (&shared.farm_link, shards.farm_bus) {
        f.finish();
        let _ = bus.join();
    }
    prepared.output.finish().map_err(CrawlError::Output)?;
    cp?;
    let mut s = stats(
        &shared,
        report.started,
        report.checkpoints,
        prepared.resumed_epoch,
        ending,
    );
    if let Some(queued) = report.checkpoint_queued {
        s.queued = queued;
    }
    report.disk.fill(&mut s, Instant::now());
    report.monitor.finish(&s);
    shared.operator.publish_stats(s.clone());
    write_stats(&prepared.out, &s)?;
    Ok(s)
}
