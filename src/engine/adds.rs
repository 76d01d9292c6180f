//! URLs added while a crawl runs (`trawl add`, issue 14): the coordinator's side of
//! the drop directory `OUT/add/` (`crate::add`).
//!
//! About once a second the coordinator polls the directory. Each URL is canonicalized,
//! checked against the crawl's filters (scope included: an added URL obeys the same
//! rules as a link; a refusal is a `filtered` crawl-log line annotated `added`), tested
//! against the presence bits, and sent to its shard's inbox as a seed; robots.txt and
//! politeness then apply as for any URL. A batch file is deleted once a checkpoint that
//! holds all its URLs has committed: the sends happen on the coordinator's thread
//! before it starts a checkpoint, and the shards drain their inboxes inside the cut
//! (after barrier 1), so the frontier dump holds them. A send that found an inbox full
//! is retried, and finished (blocking) before the next cut begins: a URL whose presence
//! bit is set is never left outside the frontier at a cut.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Sender, TrySendError};

use super::core;
use super::inbox::Batch;
use super::output::{OutputMsg, OutputRecord};
use super::{CrawlError, Shared};
use crate::add::DropDir;
use crate::crawllog::{LogRecord, Outcome};
use crate::frontier::QueuedUrl;
use crate::url::UrlFilter;
use crate::warc::WarcDate;

/// How often the drop directory is listed.
const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// The coordinator's drop-directory reader.
pub(super) struct Adds {
    drop: DropDir,
    inboxes: Vec<Sender<Batch>>,
    wakers: Vec<Arc<mio::Waker>>,
    /// Sends that found an inbox full, by shard, with the batch files they belong to.
    unsent: Vec<(usize, Batch)>,
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
        inboxes: Vec<Sender<Batch>>,
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
    pub fn poll(
        &mut self,
        shared: &Shared,
        filter: &UrlFilter,
        output: &Sender<OutputMsg>,
        now: Instant,
    ) {
        self.retry_unsent(false);
        if now < self.next_poll || shared.stopping.load(Ordering::Acquire) {
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
            // Farm (issue 13): URLs of other nodes' partitions go to their owners, which
            // filter and test them; the checkpoint that deletes this batch file holds
            // them in its farm outbox until Redis has them.
            if let Some(farm) = &shared.farm {
                for raw in &mut batch.urls {
                    if let Ok(u) = crate::url::canonicalize_absolute(raw) {
                        *raw = u.into();
                    }
                }
                farm.route_added(&mut batch.urls);
            }
            let mut per_shard: Vec<Batch> = (0..shards).map(|_| Vec::new()).collect();
            let mut log = Vec::new();
            let mut refused = |url: &str, why: String| {
                let mut rec = LogRecord::new(WarcDate::now(), url, Outcome::Filtered);
                rec.annotations.push(why);
                rec.annotations.push("added".to_owned());
                log.push(OutputRecord::Log(Box::new(rec)));
            };
            for raw in &batch.urls {
                let url = match crate::url::canonicalize_absolute(raw) {
                    Ok(u) => u,
                    Err(_) => {
                        refused(raw, "filter:unparsable".to_owned());
                        continue;
                    }
                };
                if let Err(reason) = filter.check(&url, 0) {
                    refused(url.as_str(), format!("filter:{}", reason.code()));
                    continue;
                }
                if shared.seen.test_and_set(url.as_str().as_bytes()) {
                    continue;
                }
                let Some(key) = core::host_key(&url) else {
                    continue;
                };
                let target = core::shard_of(&key, shards);
                shared.outstanding.fetch_add(1, Ordering::AcqRel);
                shared.discovered.fetch_add(1, Ordering::AcqRel);
                if let Some(list) = per_shard.get_mut(target) {
                    list.push((key, QueuedUrl::seed(url.as_str())));
                }
            }
            if batch.rejected_count > 0 {
                tracing::warn!(
                    batch = %batch.name,
                    lines = batch.rejected_count,
                    "lines of an added batch are not URLs"
                );
            }
            if !log.is_empty() {
                let _ = output.send(OutputMsg::Records(log));
            }
            for (target, list) in per_shard.into_iter().enumerate() {
                if !list.is_empty() {
                    self.unsent.push((target, list));
                }
            }
            self.waiting.push(batch.name);
        }
        self.retry_unsent(false);
    }

    /// Send what waits; with `block`, wait for room (the shards drain their inboxes
    /// every turn). Batch files are handed over once nothing of theirs waits.
    fn retry_unsent(&mut self, block: bool) {
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

    /// Called before the cut of checkpoint `epoch` begins: every added URL is in a
    /// shard's inbox, so the cut holds it.
    pub fn before_checkpoint(&mut self, epoch: u64) {
        self.retry_unsent(true);
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
