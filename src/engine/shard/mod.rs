//! One shard's driver: the mio event loop around a [`Core`]. The core makes every
//! decision (see `core/mod.rs`); the driver feeds it the time, the URLs from peers and
//! the fetch outcomes, and carries out its [`Action`]s: it submits fetches to the
//! [`Fetcher`], sends log lines and WARC captures to the output thread in batches,
//! routes links to peer shards over crossbeam channels (waking them through their
//! fetcher's `mio::Waker`), and runs its part of the checkpoint barriers. Shards share
//! nothing on the hot path but the presence bits (lock-free) and a few atomic
//! counters.
//!
//! This file is the loop and the dispatch of actions; beside it:
//! - `record.rs`: the records of a finished fetch (log line, WARC capture, re-crawl
//!   index entry), built without I/O from the outcome, the re-crawl judgement and the
//!   time; the driver does the judging, the handler's hooks and the sending around it;
//! - `peers.rs`: the links exchanged with peer shards (inbox, outboxes, back-pressure),
//!   and the links of other farm nodes and the added URLs handed to the core;
//! - `barrier.rs`: the shard's part of a checkpoint (barrier waits, frontier, tally
//!   and robots dumps) and the tallies read back on a resume.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use crate::crawllog::LogRecord;
use crate::frontier::Frontier;
use crate::net::Fetcher;
use crate::provenance::Hop;
use crate::provenance::WarcDate;
use crate::url::UrlFilter;
use crate::warc::CaptureCompressor;

pub(crate) use super::core::HostTally;
use super::core::{Action, Core, CoreParts, Now};
use super::inbox::{Added, Batch, InboxWaker};
use super::output::{OutputBatch, OutputMsg, OutputRecord, WarcItem};
use super::{Control, Shared};
use crate::routing::InboundBatch;

mod barrier;
mod peers;
mod record;

pub(crate) use barrier::load_tallies;
use record::{Fetched, RecordPolicy, Records, Recrawled};

pub(crate) struct Shard {
    pub index: usize,
    shared: Arc<Shared>,
    core: Core,
    fetcher: Fetcher,
    inbox: Receiver<Batch>,
    /// Links from other farm nodes, for the core's admission.
    received: Receiver<InboundBatch>,
    /// URLs added while the crawl runs, for the core's admission.
    added: Receiver<Added>,
    peers: Vec<Sender<Batch>>,
    peer_wakers: Vec<Arc<InboxWaker>>,
    outboxes: Vec<Batch>,
    /// Log lines and captures for the output thread, sent once per loop turn (see
    /// `output.rs`). In a `RefCell` because `log` and `record` take `&self`.
    output: std::cell::RefCell<OutputBatch>,
    control: Receiver<Control>,
    /// The core's actions of the current step, reused.
    actions: Vec<Action>,
    /// Compresses this shard's WARC captures (deflate in parallel across shards; the
    /// output thread only appends). In a `RefCell` because `record` takes `&self`.
    warc: std::cell::RefCell<Option<CaptureCompressor>>,
}

pub(crate) struct ShardParts {
    pub index: usize,
    pub shared: Arc<Shared>,
    pub frontier: Frontier,
    pub fetcher: Fetcher,
    pub filter: Arc<UrlFilter>,
    pub inbox: Receiver<Batch>,
    /// Links the farm bus received for this shard's hosts (never sent outside a farm).
    pub received: Receiver<InboundBatch>,
    /// URLs added while the crawl runs (`trawl add`) for this shard's hosts, from the
    /// coordinator (`adds.rs`).
    pub added: Receiver<Added>,
    pub peers: Vec<Sender<Batch>>,
    /// One per shard, this shard's own included (it clears its flag).
    pub peer_wakers: Vec<Arc<InboxWaker>>,
    pub output: Sender<OutputMsg>,
    pub control: Receiver<Control>,
    /// Host tallies restored from a checkpoint (empty on a fresh crawl).
    pub tallies: HashMap<String, HostTally>,
    /// The shard's robots cache, with what a checkpoint held.
    pub robots: crate::robots::RobotsCache,
    /// This shard's WARC compressor (`None` when WARC is off).
    pub warc: Option<CaptureCompressor>,
}

/// The time for the core: the two clocks, read once per step.
fn clock() -> Now {
    Now {
        at: Instant::now(),
        wall: WarcDate::now(),
    }
}

impl Shard {
    pub fn new(p: ShardParts) -> Self {
        let shards = p.peers.len();
        let core = Core::new(CoreParts {
            index: p.index,
            shards,
            shared: Arc::clone(&p.shared.core),
            frontier: p.frontier,
            filter: p.filter,
            tallies: p.tallies,
            robots: p.robots,
        });
        Self {
            index: p.index,
            core,
            fetcher: p.fetcher,
            inbox: p.inbox,
            received: p.received,
            added: p.added,
            peers: p.peers,
            peer_wakers: p.peer_wakers,
            outboxes: (0..shards).map(|_| Vec::new()).collect(),
            output: std::cell::RefCell::new(OutputBatch::new(p.output)),
            control: p.control,
            actions: Vec::new(),
            warc: std::cell::RefCell::new(p.warc),
            shared: p.shared,
        }
    }

    /// Runs until the crawl is finished, a budget is spent and the fetches in flight
    /// ended, or a stop is requested.
    pub fn run(mut self) {
        let mut outcomes = Vec::new();
        let mut next_publish = Instant::now();
        loop {
            while let Ok(ctl) = self.control.try_recv() {
                match ctl {
                    Control::Checkpoint(cut) => self.checkpoint(&cut),
                }
            }
            if self.shared.flags.is_exiting() {
                break;
            }
            self.take_inbox();
            let now = clock();
            // A budget or a stop ends scheduling for good; a disk pause until space
            // returns. Fetches in flight finish either way.
            // A peer that cannot take our links (its inbox full, our outbox past
            // `OUTBOX_MAX_URLS` after the last turn's send) stops new fetches here
            // until it can: the links of pages fetched faster than the shards can
            // queue them otherwise pile up in outboxes, out of any budget (the wide
            // memory test, once the frontier served every ready host at once).
            let backlogged = self.is_backlogged();
            let scheduling = !self.shared.core.is_stopping()
                && !self.shared.flags.is_paused()
                && !self.shared.operator.is_paused()
                && !backlogged
                && !self.is_consumer_behind();
            if scheduling {
                let mut actions = std::mem::take(&mut self.actions);
                self.core.set_waiting_unconnected(
                    self.fetcher.waiting_for_address() + self.fetcher.waiting_for_dns(),
                );
                self.core.schedule(now, &mut actions);
                self.execute(&mut actions);
                actions.shrink_to(super::core::RETAINED_ACTIONS);
                self.actions = actions;
            }
            self.flush_outboxes();
            // Records go out in batches by count and age (`output.rs`); the poll below
            // wakes in time to send an aging batch.
            self.output.borrow_mut().flush_due(now.at);
            if now.at >= next_publish {
                self.publish();
                next_publish = now.at + Duration::from_millis(250);
            }
            let mut timeout = Duration::from_millis(50);
            // A frontier wake-up only matters when a fetch could start; with every slot
            // busy the next event is a completion, and waking for a host that is already
            // ready would spin the loop at zero timeout (seen in tools/crawlbench).
            // Not scheduling (paused, stopping), a ready host would spin it the same way.
            if scheduling && self.core.has_free_slot() {
                if let Some(at) = self.core.next_wakeup(now) {
                    timeout = timeout.min(at.saturating_duration_since(now.at));
                }
            }
            if let Some(at) = self.output.borrow().deadline() {
                timeout = timeout.min(at.saturating_duration_since(now.at));
            }
            if backlogged {
                // The peer drains its inbox without waking us: retry soon.
                timeout = timeout.min(Duration::from_millis(2));
            }
            if self.fetcher.poll(&mut outcomes, Some(timeout)).is_err() {
                // epoll itself failed: nothing can progress on this shard.
                tracing::error!(shard = self.index, "event loop failed");
                self.shared.flags.fail();
                break;
            }
            if !outcomes.is_empty() {
                let now = clock();
                let mut actions = std::mem::take(&mut self.actions);
                for outcome in outcomes.drain(..) {
                    self.core.on_fetched(outcome, now, &mut actions);
                    self.execute(&mut actions);
                }
                actions.shrink_to(super::core::RETAINED_ACTIONS);
                self.actions = actions;
            }
            self.publish_in_flight();
        }
        self.flush_output();
        self.publish();
    }

    /// The embedder's consumer is behind ([`crate::handler::Handler::is_backlogged`]):
    /// no new fetch starts until it catches up; those in flight finish.
    fn is_consumer_behind(&self) -> bool {
        self.shared
            .core
            .handler
            .as_ref()
            .is_some_and(|h| h.is_backlogged())
    }

    /// Carries out the core's actions, in order, leaving `actions` empty.
    fn execute(&mut self, actions: &mut Vec<Action>) {
        let mut submitted = false;
        for action in actions.drain(..) {
            match action {
                Action::Fetch(req) | Action::FetchRobots(req) => {
                    self.fetcher.submit(*req);
                    submitted = true;
                }
                Action::Log(rec) => self.log(*rec),
                Action::Farm(to) => {
                    if let Some(farm) = &self.shared.farm_link {
                        let super::core::ToFarm {
                            mut links,
                            via,
                            hops,
                            grant,
                        } = *to;
                        farm.route(&mut links, &via, &hops, &grant);
                    }
                    // The core counted the batch outstanding while it waited here.
                    self.shared.core.outstanding.sub(1);
                }
                Action::Note(note) => note_to_log(&note),
                Action::Record(r) => {
                    let previous = self.record(
                        &Fetched {
                            outcome: &r.outcome,
                            via: r.via(),
                            hops: r.hops(),
                            page: r.page(),
                            annotations: &r.annotations,
                        },
                        r.judgement.as_ref(),
                    );
                    if let (Some(links), Some((item, _))) = (previous, r.page()) {
                        // A 304 in a re-crawl: its links come from the previous crawl.
                        let mut more = Vec::new();
                        self.core
                            .on_previous_links(item, &links, clock(), &mut more);
                        self.execute(&mut more);
                    }
                }
                Action::Skip(skipped) => {
                    // Skipped on its sitemap `<lastmod>`: its links come from the
                    // previous crawl, as for a 304.
                    let super::core::Skipped {
                        item,
                        mut log,
                        previous,
                    } = *skipped;
                    let links = self
                        .previous_links(&previous, &mut log.annotations)
                        .unwrap_or_default();
                    // Its previous entry goes on into this crawl's index (with WARC
                    // output, which the index needs), so the next re-crawl has it.
                    let index =
                        self.shared.config.warc.then(|| {
                            Box::new(crate::recrawl::IndexFacts::unfetched(previous, &item))
                        });
                    self.log_with_index(log, index);
                    let mut more = Vec::new();
                    self.core
                        .on_previous_links(&item, &links, clock(), &mut more);
                    self.execute(&mut more);
                }
                Action::Route { shard, host, item } => self.route(shard, host, item),
            }
        }
        if submitted {
            self.publish_in_flight();
        }
    }

    /// Sends the records gathered since the last flush to the output thread.
    fn flush_output(&self) {
        self.output.borrow_mut().flush();
    }

    fn publish_in_flight(&self) {
        self.shared
            .publish_in_flight(self.index, self.core.in_flight() as u64);
    }

    /// Shares this shard's counters with the coordinator (progress, stats.json).
    fn publish(&mut self) {
        self.publish_in_flight();
        let now = clock();
        self.shared.width.publish(
            self.index,
            super::observe::width::ShardWidth {
                waiting_for_address: self.fetcher.waiting_for_address() as u64,
                waiting_for_dns: self.fetcher.waiting_for_dns() as u64,
                hosts_ready_idle: self.core.hosts_ready_idle(now),
                robots_look_aheads: self.core.robots_look_aheads(),
                dns: self.fetcher.dns_stats(),
            },
        );
        // The status page's host tables (`/api/hosts`): queue lengths of the hosts shown.
        let shards = self.shared.config.shards;
        let queues: Vec<(String, u64)> = self
            .shared
            .board
            .shown_hosts()
            .into_iter()
            .filter(|h| crate::routing::shard_of(h, shards) == self.index)
            .map(|h| {
                let n = self.core.queued_of(&h).unwrap_or(0);
                (h, n)
            })
            .collect();
        self.shared.board.note_queues(queues);
        self.shared.publish_caches(
            self.index,
            self.core.frontier_stats(),
            self.core.robots_stats(),
        );
    }

    /// The links of the previous capture `entry` (a `304`, or a URL skipped on its
    /// sitemap `<lastmod>`), read back from the previous crawl's WARC files
    /// (`recrawl::outlinks::previous_links`), annotating `annotations`.
    fn previous_links(
        &self,
        entry: &crate::recrawl::IndexEntry,
        annotations: &mut Vec<String>,
    ) -> Option<Vec<(String, Hop)>> {
        let previous = self.shared.core.previous.as_ref()?;
        crate::recrawl::outlinks::previous_links(
            previous,
            entry,
            self.shared.config.max_links_per_page,
            annotations,
        )
    }

    fn log(&self, rec: LogRecord) {
        self.log_with_index(rec, None);
    }

    /// The label of the route `url`'s host takes, when the crawl has proxy routes.
    fn route_label(&self, url: &str) -> Option<String> {
        let routes = self.shared.core.settings.routes.as_ref()?;
        Some(routes.label(origin_of(url)).to_owned())
    }

    /// A crawl-log line with no capture, and maybe a re-crawl index entry to keep.
    fn log_with_index(&self, mut rec: LogRecord, index: Option<Box<crate::recrawl::IndexFacts>>) {
        if rec.route.is_none() {
            rec.route = self.route_label(&rec.url);
        }
        if let Some(h) = &self.shared.core.handler {
            h.on_outcome(&rec);
        }
        self.shared.count_outcome(rec.outcome);
        let record = match index {
            None => OutputRecord::Log(Box::new(rec)),
            Some(index) => OutputRecord::Fetched {
                log: Box::new(rec),
                capture: None,
                index: Some(index),
            },
        };
        self.output.borrow_mut().push(record);
    }

    /// Writes the crawl-log line (and the WARC capture) of a finished fetch. Returns
    /// the links of a page answered 304 in a re-crawl, read from the previous crawl.
    ///
    /// `judgement` is the core's (a re-crawl's verdict on a page answer, counted
    /// there); for a `304` the previous capture's links are read back here.
    fn record(
        &self,
        fetched: &Fetched<'_>,
        judgement: Option<&crate::recrawl::Judgement>,
    ) -> Option<Vec<(String, Hop)>> {
        let now = WarcDate::now();
        let o = fetched.outcome;
        let mut notes = Vec::new();
        // A 304 in a re-crawl: the previous capture's links, read back.
        let previous_links = judgement
            .filter(|j| j.verdict == crate::recrawl::Verdict::NotModified)
            .and_then(|j| j.previous.as_ref())
            .and_then(|entry| self.previous_links(entry, &mut notes));
        let recrawled = Recrawled {
            judgement,
            previous_links: previous_links.as_deref(),
            notes: &notes,
        };
        let policy = RecordPolicy {
            warc: self.shared.config.warc,
            skip_noindex: self.shared.config.skip_noindex,
        };
        let Records {
            mut log,
            capture,
            index,
        } = record::build(policy, fetched, &recrawled, now);
        log.route = self.route_label(&log.url);
        if let Some(h) = &self.shared.core.handler {
            if let (Some(head), None) = (o.head.as_ref(), &o.error) {
                let links: Vec<&str> = fetched
                    .page
                    .map(|(_, links)| links.iter().map(|(l, _)| l.as_str()).collect())
                    .unwrap_or_default();
                let micros = u64::try_from(now.unix_micros()).unwrap_or(0);
                h.on_response(&crate::handler::Page {
                    url: &o.url,
                    head,
                    body: &o.body,
                    links: &links,
                    fetched_at: std::time::UNIX_EPOCH + Duration::from_micros(micros),
                    ip: o.peer.map(|p| p.ip()),
                });
            }
            h.on_outcome(&log);
        }
        let capture = capture.and_then(|capture| {
            let mut warc = self.warc.borrow_mut();
            let result = warc.as_mut()?.compress(&capture);
            Some(match result {
                Ok(compressed) => WarcItem::Compressed(Box::new(compressed)),
                Err(e) => {
                    log.annotations.push(format!("warc-error:{e}"));
                    WarcItem::Refused
                }
            })
        });
        self.shared.count_outcome(log.outcome);
        self.output.borrow_mut().push(OutputRecord::Fetched {
            log: Box::new(log),
            capture,
            index,
        });
        previous_links
    }
}

/// Writes a core's diagnostic to the process log, at its level.
fn note_to_log(note: &super::core::Note) {
    use super::core::NoteLevel;
    match note.level {
        NoteLevel::Debug => tracing::debug!("{}", note.text),
        NoteLevel::Warn => tracing::warn!("{}", note.text),
        NoteLevel::Error => tracing::error!("{}", note.text),
    }
}

/// The `scheme://host[:port]` start of a URL (its scheduling key when the URL is
/// canonical), without any userinfo.
fn origin_of(url: &str) -> &str {
    let Some(at) = url.find("://") else {
        return url;
    };
    let end = url[at + 3..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| at + 3 + i);
    &url[..end]
}
