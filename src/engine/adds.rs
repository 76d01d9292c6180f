//! URLs added while a crawl runs (`trawl add`, the control API's `add`,
//! `CrawlHandle::add`): the coordinator's side of the drop directory
//! `OUT/add/` (`crate::add`).
//!
//! About once a second the coordinator polls the directory and sends each URL, as
//! written, to the shard that owns its host (by the host of its canonical form), in
//! messages of at most [`ADDED_URLS`] on the shard's channel of added URLs. The shard's
//! core admits them ([`super::core::Core::on_added`]) through the one admission every
//! link passes: presence bits, scope and filters, the handler's `accept_link`, the
//! counters, then robots.txt and politeness (a refusal is a `filtered` crawl-log line
//! annotated `added`). Each URL is counted outstanding from the poll until the core
//! has decided it, so the crawl does not end with added URLs on their way.
//!
//! A batch file is deleted once a checkpoint that holds all its URLs has committed:
//! the sends happen on the coordinator's thread before it starts a checkpoint, and the
//! shards drain their channels inside the cut (after barrier 1), so each added URL is
//! in the frontier dump or already logged as refused. A send that found a channel full
//! is retried, and finished (blocking) before the next cut begins: no URL of a batch
//! file handed over is left outside the cut.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Sender, TrySendError};

use super::inbox::{Added, ADDED_URLS};
use super::{CrawlError, Shared};
use crate::add::DropDir;
use crate::routing::{host_key, shard_of};

/// How often the drop directory is listed.
const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// The coordinator's drop-directory reader.
pub(super) struct Adds {
    drop: DropDir,
    /// Each shard's channel of added URLs.
    inboxes: Vec<Sender<Added>>,
    wakers: Vec<Arc<mio::Waker>>,
    /// Sends that found a channel full, by shard (counted outstanding already).
    unsent: Vec<(usize, Added)>,
    /// Batch files whose URLs are all sent once `unsent` is empty.
    waiting: Vec<String>,
    next_poll: Instant,
}

impl Adds {
    /// The drop directory of `out`; `resumed_epoch` is the checkpoint the crawl resumed
    /// from (0 for a fresh crawl).
    pub fn open(
        out: &Path,
        resumed_epoch: u64,
        inboxes: Vec<Sender<Added>>,
        wakers: Vec<Arc<mio::Waker>>,
    ) -> Result<Self, CrawlError> {
        let drop = DropDir::open(out, resumed_epoch).map_err(|e| CrawlError::Io {
            op: "open the drop directory",
            path: out.join(crate::add::ADD_DIR),
            source: std::io::Error::other(e.to_string()),
        })?;
        Ok(Self {
            drop,
            inboxes,
            wakers,
            unsent: Vec::new(),
            waiting: Vec::new(),
            next_poll: Instant::now(),
        })
    }

    /// Take new batch files, if it is time to look.
    pub fn poll(&mut self, shared: &Shared, now: Instant) {
        self.retry_unsent(shared, false);
        if now < self.next_poll || shared.core.is_stopping() {
            return;
        }
        self.next_poll = now + POLL_INTERVAL;
        let (batches, errors) = match self.drop.poll() {
            Ok(found) => found,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the drop directory");
                return;
            }
        };
        for e in errors {
            tracing::warn!(error = %e, "a file in the drop directory was refused");
        }
        let shards = self.inboxes.len();
        for mut batch in batches {
            // In a farm, URLs of other nodes' partitions go to their owners, which
            // admit them (`Core::on_inbound`); the checkpoint that deletes this batch
            // file holds them in its farm outbox until Redis has them.
            if let Some(farm) = &shared.farm_link {
                for raw in &mut batch.urls {
                    if let Ok(u) = crate::url::canonicalize_absolute(raw) {
                        *raw = u.into();
                    }
                }
                farm.route_added(&mut batch.urls);
            }
            if batch.rejected_count > 0 {
                tracing::warn!(
                    batch = %batch.name,
                    lines = batch.rejected_count,
                    "lines of an added batch are not URLs"
                );
            }
            // The shard that owns the host of a URL's canonical form; the core
            // canonicalizes it again and logs one that does not parse (shard 0's).
            let mut per_shard: Vec<Added> = (0..shards).map(|_| Vec::new()).collect();
            for raw in batch.urls {
                let target = crate::url::canonicalize_absolute(&raw)
                    .ok()
                    .and_then(|u| host_key(&u))
                    .map_or(0, |key| shard_of(&key, shards));
                if let Some(list) = per_shard.get_mut(target) {
                    list.push(raw);
                }
            }
            for (target, urls) in per_shard.into_iter().enumerate() {
                for chunk in urls.chunks(ADDED_URLS) {
                    shared.core.outstanding.add(chunk.len() as u64);
                    self.unsent.push((target, chunk.to_vec()));
                }
            }
            self.waiting.push(batch.name);
        }
        self.retry_unsent(shared, false);
    }

    /// Send what waits; with `block`, wait for room (the shards drain their inboxes
    /// every turn). Batch files are handed over once nothing of theirs waits.
    fn retry_unsent(&mut self, shared: &Shared, block: bool) {
        let mut still = Vec::new();
        for (target, list) in std::mem::take(&mut self.unsent) {
            let Some(tx) = self.inboxes.get(target) else {
                continue;
            };
            let sent = if block {
                tx.send(list)
                    .map_err(|e| TrySendError::Disconnected(e.into_inner()))
            } else {
                tx.try_send(list)
            };
            match sent {
                Ok(()) => {
                    if let Some(w) = self.wakers.get(target) {
                        let _ = w.wake();
                    }
                }
                Err(TrySendError::Full(list)) => still.push((target, list)),
                Err(TrySendError::Disconnected(list)) => {
                    // The shard has stopped (the crawl is ending): the batch file stays
                    // and a resume reads it again.
                    tracing::warn!(urls = list.len(), "added URLs not queued: crawl ending");
                    shared.core.outstanding.sub(list.len() as u64);
                    self.waiting.clear();
                }
            }
        }
        self.unsent = still;
        if self.unsent.is_empty() {
            for name in self.waiting.drain(..) {
                self.drop.handed_over(&name);
            }
        }
    }

    /// Called before the cut of checkpoint `epoch` begins: every added URL is in its
    /// shard's channel, which the shard drains inside the cut, so the cut holds it.
    pub fn before_checkpoint(&mut self, shared: &Shared, epoch: u64) {
        self.retry_unsent(shared, true);
        self.drop.cut_begun(epoch);
    }

    /// Checkpoint `epoch` committed: delete the batch files it holds.
    pub fn committed(&mut self, epoch: u64) {
        match self.drop.committed(epoch) {
            Ok(names) if !names.is_empty() => {
                tracing::debug!(files = names.len(), epoch, "added batches checkpointed");
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "cannot remove a checkpointed batch"),
        }
    }
}
