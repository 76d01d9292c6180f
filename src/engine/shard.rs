//! One shard's driver: the mio event loop around a [`Core`]. The core makes every
//! decision (see `core/mod.rs`); the driver feeds it the time, the URLs from peers and
//! the fetch outcomes, and carries out its [`Action`]s: it submits fetches to the
//! [`Fetcher`], sends log lines and WARC captures to the output thread in batches,
//! routes links to peer shards over crossbeam channels (waking them through their
//! fetcher's `mio::Waker`), and runs its part of the checkpoint barriers. Shards share
//! nothing on the hot path but the presence bits (lock-free) and a few atomic
//! counters.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TrySendError};

use crate::crawllog::{FetchTimings, Hop, LogRecord, Outcome};
use crate::frontier::{Frontier, QueuedUrl};
use crate::http::ResponseHead;
use crate::net::{FailReason, FetchOutcome, Fetcher};
use crate::robots::HostKey;
use crate::url::UrlFilter;
use crate::warc::{Capture, CaptureCompressor, Outlink, WarcDate};

use super::core::{hops_path, Action, Core, CoreParts, Now};
pub(crate) use super::core::{host_key, shard_of, HostTally};
use super::inbox::{Batch, InboxWaker, Received};
use super::output::{OutputBatch, OutputMsg, OutputRecord, WarcItem};
use super::{CheckpointCut, Control, Shared};

/// Links routed to other shards are sent in batches of this many.
const BATCH_URLS: usize = 256;

/// Past this many URLs waiting for a full peer inbox, a shard waits (draining its
/// own inbox meanwhile) for the peer to take them, for at most [`OUTBOX_WAIT`]: pages
/// of thousands of links otherwise piled millions of URLs into RAM here while the
/// peer was busy (the wide memory test).
const OUTBOX_MAX_URLS: usize = 4 * BATCH_URLS;

/// The longest a shard waits for a peer's inbox at a time; a peer stopped at a
/// checkpoint barrier does not drain it, so the wait must end.
const OUTBOX_WAIT: Duration = Duration::from_millis(100);

/// The host tallies of a checkpoint directory (`checkpoint::tallies`), routed to
/// their shards. A damaged file is an error naming it.
pub(crate) fn load_tallies(
    dir: &std::path::Path,
    shards: usize,
) -> Result<Vec<HashMap<String, HostTally>>, crate::checkpoint::CheckpointError> {
    let mut out: Vec<HashMap<String, HostTally>> = (0..shards).map(|_| HashMap::new()).collect();
    for row in crate::checkpoint::tallies::read_dir(dir)? {
        let tally = HostTally {
            pages: row.pages,
            consecutive_failures: row.consecutive_failures,
            parked: row.parked,
            ..HostTally::default()
        };
        if let Some(m) = out.get_mut(shard_of(&row.host, shards)) {
            m.insert(row.host, tally);
        }
    }
    Ok(out)
}

pub(crate) struct Shard {
    pub index: usize,
    shared: Arc<Shared>,
    core: Core,
    fetcher: Fetcher,
    inbox: Receiver<Batch>,
    /// Links from other farm nodes, for the core's admission.
    received: Receiver<Received>,
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
    pub received: Receiver<Received>,
    pub peers: Vec<Sender<Batch>>,
    /// One per shard, this shard's own included (it clears its flag).
    pub peer_wakers: Vec<Arc<InboxWaker>>,
    pub output: Sender<OutputMsg>,
    pub control: Receiver<Control>,
    /// Host tallies restored from a checkpoint (empty on a fresh crawl).
    pub tallies: HashMap<String, HostTally>,
    /// Robots cache entries restored from a checkpoint, least recently used first.
    pub robots: Vec<(HostKey, crate::robots::RobotsPolicy)>,
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
            shared: Arc::clone(&p.shared),
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
            if self.shared.exit.load(Ordering::Acquire) {
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
            let scheduling = !self.shared.stopping.load(Ordering::Acquire)
                && !self.shared.paused.load(Ordering::Acquire)
                && !self.shared.operator.is_paused()
                && !backlogged;
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
                self.shared.fatal.store(true, Ordering::Release);
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
                Action::Record(r) => {
                    let previous =
                        self.record(&r.outcome, r.via(), r.hops(), r.page(), &r.annotations);
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
                    let links = super::recrawl::skipped_links(
                        &self.shared,
                        &previous,
                        &mut log.annotations,
                    );
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
        if let Some(a) = self.shared.in_flight.get(self.index) {
            a.store(self.core.in_flight() as u64, Ordering::Release);
        }
    }

    /// Shares this shard's counters with the coordinator (progress, stats.json).
    fn publish(&mut self) {
        self.publish_in_flight();
        let now = clock();
        self.shared.width.publish(
            self.index,
            super::width::ShardWidth {
                waiting_for_address: self.fetcher.waiting_for_address() as u64,
                waiting_for_dns: self.fetcher.waiting_for_dns() as u64,
                hosts_ready_idle: self.core.hosts_ready_idle(now),
                robots_look_aheads: self.core.robots_look_aheads(),
                dns: self.fetcher.dns_stats(),
            },
        );
        let stats = self.core.frontier_stats();
        if let Ok(mut all) = self.shared.frontier_stats.lock() {
            if let Some(slot) = all.get_mut(self.index) {
                *slot = stats;
            }
        }
        // The status page's host tables (issue 22): queue lengths of the hosts shown.
        let shards = self.shared.config.shards;
        let queues: Vec<(String, u64)> = self
            .shared
            .operator
            .shown_hosts()
            .into_iter()
            .filter(|h| super::shard_of(h, shards) == self.index)
            .map(|h| {
                let n = self.core.queued_of(&h).unwrap_or(0);
                (h, n)
            })
            .collect();
        self.shared.operator.note_queues(queues);
        let robots = self.core.robots_stats();
        if let Ok(mut all) = self.shared.robots_stats.lock() {
            if let Some(slot) = all.get_mut(self.index) {
                *slot = robots;
            }
        }
    }

    fn take_inbox(&mut self) {
        if let Some(w) = self.peer_wakers.get(self.index) {
            w.clear();
        }
        let mut batches = Vec::new();
        while let Ok(batch) = self.inbox.try_recv() {
            batches.push(batch);
        }
        if !batches.is_empty() {
            self.push_local(batches.into_iter().flatten());
        }
        // Links from other farm nodes: the bus wakes us after each send (drained here
        // every turn and inside a checkpoint's cut, like the inbox).
        while let Ok(links) = self.received.try_recv() {
            let mut actions = std::mem::take(&mut self.actions);
            self.core.on_received(links, clock(), &mut actions);
            self.execute(&mut actions);
            actions.shrink_to(super::core::RETAINED_ACTIONS);
            self.actions = actions;
        }
    }

    /// Queues URLs of this shard's hosts in the core (a peer's batch, or our own
    /// batch a peer could not take).
    fn push_local(&mut self, items: impl IntoIterator<Item = (String, QueuedUrl)>) {
        let now = clock();
        let mut actions = std::mem::take(&mut self.actions);
        for (host, item) in items {
            self.core.push(&host, item, now, &mut actions);
        }
        self.execute(&mut actions);
        actions.shrink_to(super::core::RETAINED_ACTIONS);
        self.actions = actions;
    }

    /// Carries out [`Action::Route`]: the URL joins the outbox of the shard that owns
    /// its host, sent as a batch once full (or at the end of the loop turn).
    fn route(&mut self, target: usize, host: String, item: QueuedUrl) {
        if let Some(out) = self.outboxes.get_mut(target) {
            out.push((host, item));
            if out.len() >= BATCH_URLS {
                self.flush_outbox(target);
            }
        }
    }

    /// True when some outbox still holds `OUTBOX_MAX_URLS` or more after a send.
    fn is_backlogged(&self) -> bool {
        self.outboxes.iter().any(|o| o.len() >= OUTBOX_MAX_URLS)
    }

    fn flush_outboxes(&mut self) {
        for target in 0..self.outboxes.len() {
            self.flush_outbox(target);
        }
    }

    fn flush_outbox(&mut self, target: usize) {
        let Some(out) = self.outboxes.get_mut(target) else {
            return;
        };
        if out.is_empty() {
            return;
        }
        let batch = std::mem::take(out);
        let Some(tx) = self.peers.get(target) else {
            return;
        };
        match tx.try_send(batch) {
            Ok(()) => {
                if let Some(w) = self.peer_wakers.get(target) {
                    w.notify();
                }
            }
            // The peer's inbox is full: keep the batch and retry on the next turn
            // (back-pressure without blocking this loop or losing a URL).
            Err(TrySendError::Full(batch)) => {
                let over = batch.len() >= OUTBOX_MAX_URLS;
                if let Some(out) = self.outboxes.get_mut(target) {
                    *out = batch;
                }
                if over {
                    self.wait_for_peer(target);
                }
            }
            // The peer stopped (crawl ending): keep the URLs in our own frontier so
            // the final checkpoint holds them.
            Err(TrySendError::Disconnected(batch)) => self.push_local(batch),
        }
    }

    /// Back-pressure on a full peer inbox (see [`OUTBOX_MAX_URLS`]): retries the send
    /// while draining our own inbox (so two shards waiting on each other both make
    /// room), for at most [`OUTBOX_WAIT`].
    fn wait_for_peer(&mut self, target: usize) {
        let until = Instant::now() + OUTBOX_WAIT;
        while Instant::now() < until {
            self.take_inbox();
            let Some(tx) = self.peers.get(target) else {
                return;
            };
            let Some(out) = self.outboxes.get_mut(target) else {
                return;
            };
            match tx.try_send(std::mem::take(out)) {
                Ok(()) => {
                    if let Some(w) = self.peer_wakers.get(target) {
                        w.notify();
                    }
                    return;
                }
                Err(TrySendError::Full(batch)) => {
                    *out = batch;
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(TrySendError::Disconnected(batch)) => {
                    self.push_local(batch);
                    return;
                }
            }
        }
    }

    fn log(&self, rec: LogRecord) {
        self.log_with_index(rec, None);
    }

    /// A crawl-log line with no capture, and maybe a re-crawl index entry to keep.
    fn log_with_index(&self, rec: LogRecord, index: Option<Box<crate::recrawl::IndexFacts>>) {
        if let Some(h) = &self.shared.handler {
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
    fn record(
        &self,
        o: &FetchOutcome,
        via: Option<&str>,
        hops: &str,
        page: Option<(&QueuedUrl, &[(String, Hop)])>,
        annotations: &[String],
    ) -> Option<Vec<(String, Hop)>> {
        let outcome = match &o.error {
            None => Outcome::Fetched,
            Some(r) => outcome_of(r),
        };
        let mut rec = LogRecord::new(WarcDate::now(), o.url.as_str(), outcome);
        rec.status = o.status();
        rec.bytes = o.wire_bytes;
        rec.hops = hops_path(hops);
        rec.via = via.map(str::to_owned);
        rec.timings = timings_of(o);
        rec.media_type = o.head.as_ref().and_then(ResponseHead::media_type);
        rec.annotations.extend_from_slice(annotations);
        if let Some(r) = &o.error {
            rec.annotations.push(format!("error:{r}"));
        }
        if o.body_truncated {
            rec.truncated = Some(crate::warc::Truncation::Length);
        }
        let skip = self.shared.config.skip_noindex && annotations.iter().any(|a| a == "noindex");
        // A re-crawl judges a page answer against the previous capture
        // (`engine/recrawl.rs`): annotated, counted, maybe a revisit.
        let judgement = page.and_then(|(item, _)| {
            let sitemap = o
                .head
                .as_ref()
                .is_some_and(|h| super::core::Core::is_sitemap_fetch(item, h, &o.body));
            super::recrawl::judge_page(&self.shared, o, sitemap)
        });
        if let Some(note) = judgement.as_ref().and_then(|j| j.annotation()) {
            rec.annotations.push(note.to_owned());
        }
        let previous_links = judgement
            .as_ref()
            .and_then(|j| super::recrawl::previous_links(&self.shared, j, &mut rec.annotations));
        // A 304 whose links could not be read back: the metadata record says so.
        let links_unknown = previous_links.is_none()
            && judgement
                .as_ref()
                .is_some_and(|j| j.verdict == crate::recrawl::Verdict::NotModified);
        let date = WarcDate::now();
        let index = page
            .filter(|_| self.shared.config.warc && !skip)
            .and_then(|(item, _)| super::recrawl::index_facts(o, item, date, judgement.as_ref()))
            .map(Box::new);
        // The capture shares the outcome's buffers (request, head, payload): no copy.
        let capture = (self.shared.config.warc && !skip)
            .then(|| Capture::from_outcome(o, date))
            .flatten()
            .map(|mut capture| {
                capture.revisit = judgement.as_ref().and_then(|j| j.revisit.clone());
                capture.metadata = page.map(|(it, links)| crate::warc::CaptureMetadata {
                    via: it.via.clone(),
                    hops_path: it.hops.clone(),
                    // A 304's links are the previous crawl's: written again, so the
                    // next re-crawl finds them after this revisit.
                    outlinks: links
                        .iter()
                        .chain(previous_links.iter().flatten())
                        .map(|(url, hop)| Outlink {
                            url: url.to_string(),
                            hop: *hop,
                        })
                        .collect(),
                    outlinks_unknown: links_unknown,
                    timings: timings_of(o),
                });
                capture
            });
        if let Some(h) = &self.shared.handler {
            if let (Some(head), None) = (o.head.as_ref(), &o.error) {
                h.on_response(&super::Page {
                    url: &o.url,
                    head,
                    body: &o.body,
                });
            }
            h.on_outcome(&rec);
        }
        let capture = capture.and_then(|capture| {
            let mut warc = self.warc.borrow_mut();
            let result = warc.as_mut()?.compress(&capture);
            Some(match result {
                Ok(compressed) => WarcItem::Compressed(Box::new(compressed)),
                Err(e) => {
                    rec.annotations.push(format!("warc-error:{e}"));
                    WarcItem::Refused
                }
            })
        });
        self.shared.count_outcome(rec.outcome);
        self.output.borrow_mut().push(OutputRecord::Fetched {
            log: Box::new(rec),
            capture,
            index,
        });
        previous_links
    }

    /// The checkpoint protocol (see `docs/architecture.md`): stop, flush links to
    /// peers, wait; drain the inbox, wait; dump the frontier (with the URLs in flight,
    /// which will be fetched again after a resume), wait; go on.
    fn checkpoint(&mut self, cut: &Arc<CheckpointCut>) {
        self.flush_outboxes();
        // A full peer inbox could keep a batch here; the barrier below would then lose
        // it, so push it into our own frontier instead (the host is routed by key on
        // resume, so ownership does not matter for the dump).
        let unsent: Vec<Batch> = self.outboxes.iter_mut().map(std::mem::take).collect();
        self.push_local(unsent.into_iter().flatten());
        // Every record made before the cut reaches the channel before the coordinator
        // asks the output thread for its positions (after barrier 2).
        self.flush_output();
        cut.barrier.wait();
        self.take_inbox();
        self.flush_output();
        cut.barrier.wait();
        let path = cut.dir.join(format!("frontier-{:04}.seg", self.index));
        let result = self.dump_frontier(&path);
        if let Err(e) = result {
            tracing::error!(shard = self.index, error = %e, "checkpoint frontier dump failed");
            cut.failed.store(true, Ordering::Release);
        }
        let path = cut
            .dir
            .join(crate::checkpoint::tallies::file_name(self.index));
        if let Err(e) = self.dump_tallies(&path) {
            tracing::error!(shard = self.index, error = %e, "checkpoint tally dump failed");
            cut.failed.store(true, Ordering::Release);
        }
        // The robots cache is a cache: failing to write it costs refetches after a
        // resume, not correctness, so it does not fail the cut (the partial file goes).
        let path = cut.dir.join(format!("robots-{:04}.bin", self.index));
        let clock = crate::robots::persist::Clock::now();
        if let Err(e) = crate::robots::persist::write_file(&path, self.core.robots(), clock) {
            tracing::warn!(shard = self.index, error = %e, "checkpoint robots dump failed; a resume refetches robots.txt");
            let _ = std::fs::remove_file(&path);
        }
        cut.barrier.wait();
        cut.barrier.wait();
    }

    /// Writes the host tallies (`checkpoint::tallies`). Pages in flight are dumped as
    /// queued URLs, so they are taken off their host's count: the resumed crawl counts
    /// them again when it fetches them.
    fn dump_tallies(
        &self,
        path: &std::path::Path,
    ) -> Result<u64, crate::checkpoint::CheckpointError> {
        let in_flight = self.core.pages_in_flight_by_host();
        let rows = self.core.tallies().iter().map(|(host, t)| {
            let pages = t
                .pages
                .saturating_sub(in_flight.get(host.as_str()).copied().unwrap_or(0));
            crate::checkpoint::tallies::TallyRow {
                host: host.clone(),
                pages,
                consecutive_failures: t.consecutive_failures,
                parked: t.parked,
            }
        });
        crate::checkpoint::tallies::write_file(path, rows)
    }

    /// Writes the URLs a checkpoint keeps ([`Core::for_each_checkpointed`]: pages in
    /// flight, then the frontier) into one segment.
    fn dump_frontier(
        &mut self,
        path: &std::path::Path,
    ) -> Result<u64, crate::frontier::SegmentError> {
        let mut w = crate::frontier::SegmentWriter::create(path)?;
        let mut err = None;
        let write = |host: &str, item: &QueuedUrl| {
            if err.is_none() {
                if let Err(e) = w.append(host, item) {
                    err = Some(e);
                }
            }
        };
        if let Err(e) = self.core.for_each_checkpointed(write) {
            tracing::error!(error = %e, "frontier listing failed");
            return Err(crate::frontier::SegmentError::Io(std::io::Error::other(
                e.to_string(),
            )));
        }
        if let Some(e) = err {
            return Err(e);
        }
        let n = w.records();
        w.sync()?;
        Ok(n)
    }
}

fn outcome_of(r: &FailReason) -> Outcome {
    match r {
        FailReason::Dns(_) => Outcome::DnsError,
        FailReason::Refused | FailReason::Connect(_) => Outcome::ConnectError,
        FailReason::Tls(_) => Outcome::TlsError,
        FailReason::Timeout(_) => Outcome::Timeout,
        FailReason::BlockedAddress => Outcome::BlockedAddress,
        FailReason::InvalidUrl(_) => Outcome::Filtered,
        _ => Outcome::ProtocolError,
    }
}

fn timings_of(o: &FetchOutcome) -> FetchTimings {
    let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    FetchTimings {
        dns_ms: o.timings.dns.map(ms),
        connect_ms: o.timings.connect.map(ms),
        tls_ms: o.timings.tls.map(ms),
        first_byte_ms: o.timings.first_byte.map(ms),
        total_ms: Some(ms(o.timings.total)),
    }
}

/// The shard's side of the checkpoint barriers, with the coordinator's side played by
/// a thread: no socket (the fetcher's event loop is created, never used).
#[cfg(test)]
mod checkpoint_tests {
    use std::sync::atomic::{AtomicBool, AtomicU64};
    use std::sync::Barrier;

    use crossbeam_channel::{bounded, unbounded};

    use super::*;
    use crate::engine::CrawlConfig;
    use crate::frontier::{FrontierConfig, SegmentReader};
    use crate::net::{FetchLimits, FetcherConfig};
    use crate::seen::{Backing, ContentSeen, SeenConfig, SeenSet};

    fn item(url: &str) -> QueuedUrl {
        QueuedUrl {
            url: url.to_owned(),
            via: Some("http://a.test/".to_owned()),
            hops: "L".to_owned(),
            attempts: 0,
        }
    }

    #[test]
    fn a_checkpoint_dumps_queued_unsent_and_inbox_urls_between_its_barriers() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut config = CrawlConfig::new(dir.path().join("out"));
        config.shards = 2;
        config.warc = false;
        let seen_config = SeenConfig {
            backing: Backing::Memory,
            ..SeenConfig::new(10_000, 1e-6)
        };
        let shared = Arc::new(Shared::new(
            config,
            FetchLimits::default(),
            SeenSet::create_with(dir.path().join("seen.bits"), &seen_config).expect("seen"),
            ContentSeen::create_backed(dir.path().join("fp.bits"), 1_000, 1e-6, Backing::Memory)
                .expect("fingerprints"),
            None,
            Arc::new(AtomicU64::new(0)),
        ));
        let mut frontier =
            Frontier::new(FrontierConfig::new(dir.path().join("frontier"))).expect("frontier");
        frontier
            .push(
                "http://a.test",
                item("http://a.test/queued"),
                Instant::now(),
            )
            .expect("push");
        let fetcher = Fetcher::new(FetcherConfig::default()).expect("fetcher");
        let own_waker = Arc::new(InboxWaker::new(fetcher.waker()));
        let peer_poll = mio::Poll::new().expect("poll");
        let peer_waker = Arc::new(InboxWaker::new(Arc::new(
            mio::Waker::new(peer_poll.registry(), mio::Token(0)).expect("waker"),
        )));
        let (own_tx, own_rx) = bounded::<Batch>(4);
        // The peer's inbox is full: a batch routed to it stays in our outbox.
        let (peer_tx, _peer_rx) = bounded::<Batch>(1);
        peer_tx.send(Vec::new()).expect("fill");
        let (output_tx, _output_rx) = unbounded();
        let (_control_tx, control_rx) = unbounded();
        let (received_tx, received_rx) = bounded::<Received>(4);
        let mut shard = Shard::new(ShardParts {
            index: 0,
            shared: Arc::clone(&shared),
            frontier,
            fetcher,
            filter: Arc::new(crate::url::UrlFilter::new(Default::default(), &[]).expect("filter")),
            inbox: own_rx,
            received: received_rx,
            peers: vec![own_tx.clone(), peer_tx],
            peer_wakers: vec![own_waker, peer_waker],
            output: output_tx,
            control: control_rx,
            tallies: HashMap::new(),
            robots: Vec::new(),
            warc: None,
        });
        shard.route(1, "http://b.test".to_owned(), item("http://b.test/unsent"));
        // A peer's batch that reached our inbox before barrier 1.
        own_tx
            .send(vec![(
                "http://c.test".to_owned(),
                item("http://c.test/inbox"),
            )])
            .expect("send");
        // A gzipped sitemap another farm node sent before barrier 1, for a host of this
        // shard: admitted at the cut (the sitemap hop exempts its `.gz`), so dumped.
        let received_host = ["d.test", "e.test", "f.test", "g.test", "h.test"]
            .iter()
            .map(|h| format!("http://{h}"))
            .find(|h| shard_of(h, 2) == 0)
            .expect("a host of shard 0");
        let received_url = format!("{received_host}/sitemap.xml.gz");
        shared.outstanding.fetch_add(1, Ordering::AcqRel);
        received_tx
            .send(vec![crate::engine::core::ReceivedLink {
                url: url::Url::parse(&received_url).expect("url"),
                host: received_host.clone(),
                via: Some("http://a.test/robots.txt".to_owned()),
                hops: "S".to_owned(),
                grant: vec!["http://a.test".to_owned()],
            }])
            .expect("send");
        let cp_dir = dir.path().join("cp");
        std::fs::create_dir_all(&cp_dir).expect("cp dir");
        let cut = Arc::new(CheckpointCut {
            barrier: Barrier::new(2),
            dir: cp_dir.clone(),
            failed: AtomicBool::new(false),
        });
        let coordinator = {
            let cut = Arc::clone(&cut);
            std::thread::spawn(move || {
                for _ in 0..4 {
                    cut.barrier.wait();
                }
            })
        };
        shard.checkpoint(&cut);
        coordinator.join().expect("coordinator");
        assert!(!cut.failed.load(Ordering::Acquire));
        let mut r = SegmentReader::open(&cp_dir.join("frontier-0000.seg")).expect("segment");
        let mut urls = Vec::new();
        while let Some(rec) = r.next_record().expect("record") {
            urls.push((rec.host, rec.item.url));
        }
        urls.sort();
        assert_eq!(
            urls,
            vec![
                (
                    "http://a.test".to_owned(),
                    "http://a.test/queued".to_owned()
                ),
                (
                    "http://b.test".to_owned(),
                    "http://b.test/unsent".to_owned()
                ),
                ("http://c.test".to_owned(), "http://c.test/inbox".to_owned()),
                (received_host, received_url),
            ]
        );
        assert!(cp_dir
            .join(crate::checkpoint::tallies::file_name(0))
            .exists());
        assert!(cp_dir.join("robots-0000.bin").exists());
    }
}
