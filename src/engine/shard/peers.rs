//! The links a shard exchanges with its peers. [`Action::Route`] puts a URL in the
//! outbox of the shard that owns its host; outboxes go out as batches over bounded
//! crossbeam channels, waking the peer through its fetcher's `mio::Waker`. A full peer
//! inbox keeps the batch here (back-pressure without losing a URL), and past
//! [`OUTBOX_MAX_URLS`] the shard waits for the peer a while and stops new fetches
//! (`Shard::is_backlogged`). The inbox side drains peers' batches, and hands the links
//! other farm nodes sent and the URLs added while the crawl runs to the core, which
//! admits them.
//!
//! [`Action::Route`]: super::Action::Route

use std::time::{Duration, Instant};

use crossbeam_channel::TrySendError;

use crate::engine::core::{Action, Core, Now, RETAINED_ACTIONS};
use crate::frontier::QueuedUrl;

use super::{clock, Shard};

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

impl Shard {
    /// Queues the batches peers routed here, and gives the core the links other farm
    /// nodes sent and the URLs added to the crawl (called every loop turn, and inside
    /// a checkpoint's cut: an added URL the coordinator sent before the cut is in the
    /// frontier, or logged as refused, when the frontier is dumped).
    pub(super) fn take_inbox(&mut self) {
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
            self.admit_with(|core, now, actions| core.on_inbound(links, now, actions));
        }
        // URLs added while the crawl runs: the coordinator sends them before it starts
        // a checkpoint, so they are drained here inside the cut.
        while let Ok(urls) = self.added.try_recv() {
            self.admit_with(|core, now, actions| core.on_added(urls, now, actions));
        }
    }

    /// Runs one admission step of the core (`on_inbound`, `on_added`) and carries out
    /// its actions.
    fn admit_with(&mut self, step: impl FnOnce(&mut Core, Now, &mut Vec<Action>)) {
        let mut actions = std::mem::take(&mut self.actions);
        step(&mut self.core, clock(), &mut actions);
        self.execute(&mut actions);
        actions.shrink_to(RETAINED_ACTIONS);
        self.actions = actions;
    }

    /// Queues URLs of this shard's hosts in the core (a peer's batch, or our own
    /// batch a peer could not take).
    pub(super) fn push_local(&mut self, items: impl IntoIterator<Item = (String, QueuedUrl)>) {
        let now = clock();
        let mut actions = std::mem::take(&mut self.actions);
        for (host, item) in items {
            self.core.push(&host, item, now, &mut actions);
        }
        self.execute(&mut actions);
        actions.shrink_to(RETAINED_ACTIONS);
        self.actions = actions;
    }

    /// Carries out [`Action::Route`]: the URL joins the outbox of the shard that owns
    /// its host, sent as a batch once full (or at the end of the loop turn).
    pub(super) fn route(&mut self, target: usize, host: String, item: QueuedUrl) {
        if let Some(out) = self.outboxes.get_mut(target) {
            out.push((host, item));
            if out.len() >= BATCH_URLS {
                self.flush_outbox(target);
            }
        }
    }

    /// True when some outbox still holds `OUTBOX_MAX_URLS` or more after a send.
    pub(super) fn is_backlogged(&self) -> bool {
        self.outboxes.iter().any(|o| o.len() >= OUTBOX_MAX_URLS)
    }

    pub(super) fn flush_outboxes(&mut self) {
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
}
