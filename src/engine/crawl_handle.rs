//! Operating a running crawl from the library (`Crawler::handle()`): adding URLs,
//! pause, resume, checkpoint, stop and live figures, from any thread. The controls
//! are the control API's (`engine/control.rs`, the verbs of `trawl ctl`), reached in
//! process rather than over HTTP.
//!
//! An add writes through the same drop directory as `trawl add` (`OUT/add/`,
//! `crate::add`, the one home of live adds): a batch file written atomically, picked
//! up by the coordinator about once a second, admitted by the shards' cores like any
//! link (`core/added.rs`: the embedder's own `Handler::accept_link` is asked too), and
//! deleted only once a checkpoint holds its URLs.
//! So an add survives a kill -9 of the crawl exactly as `trawl add` does, and the
//! embedder need not keep the URLs itself; the price is a file and two fsyncs per call
//! (add URLs in batches, not one by one).

use std::path::PathBuf;
use std::sync::Arc;

use crate::add::{check_url, write_batch, DropError};

use super::control::Operator;
use super::Stats;

/// Most URLs one [`CrawlHandle::add`] takes (as `trawl add`).
pub const MAX_ADD_URLS: usize = 1_000_000;

/// A handle to a crawl for operating it while it runs, from any thread
/// ([`super::Crawler::handle`]). Cheap to clone.
#[derive(Clone)]
pub struct CrawlHandle {
    out: PathBuf,
    operator: Arc<Operator>,
}

impl std::fmt::Debug for CrawlHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrawlHandle")
            .field("out", &self.out)
            .finish_non_exhaustive()
    }
}

/// Why [`CrawlHandle::add`] added nothing.
#[derive(Debug, thiserror::Error)]
pub enum AddError {
    /// A URL that is not an absolute http(s) URL with a host (index in the input).
    #[error("url {index} ({url:?}): {reason}; nothing was added")]
    BadUrl {
        /// Position in the input, from 0.
        index: usize,
        /// The URL given.
        url: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// More than [`MAX_ADD_URLS`] URLs in one call.
    #[error("{0} URLs in one add; at most {MAX_ADD_URLS}")]
    TooMany(usize),
    /// The crawl has not written its start file yet (it is not running), so nothing
    /// would read the batch.
    #[error("the crawl in {0} has not started (no start.json)")]
    NotStarted(PathBuf),
    /// Writing the batch failed.
    #[error(transparent)]
    Write(#[from] DropError),
}

impl CrawlHandle {
    pub(super) fn new(out: PathBuf, operator: Arc<Operator>) -> Self {
        Self { out, operator }
    }

    /// Starts no new fetch until [`CrawlHandle::resume`] (fetches in flight finish);
    /// as `trawl ctl pause`. Before the run starts, the crawl starts paused.
    pub fn pause(&self) {
        self.operator.set_paused(true);
    }

    /// Ends a [`CrawlHandle::pause`].
    pub fn resume(&self) {
        self.operator.set_paused(false);
    }

    /// Whether the crawl is paused by [`CrawlHandle::pause`] (or `trawl ctl pause`).
    pub fn is_paused(&self) -> bool {
        self.operator.is_paused()
    }

    /// Asks for a checkpoint and waits (at most 10 s) for it to commit. Returns its
    /// epoch, or `None` when none committed in time (one was running, the disk watch
    /// holds them back, or the crawl is not running).
    pub fn checkpoint(&self) -> Option<u64> {
        self.operator.checkpoint_wait()
    }

    /// Stops the crawl gracefully: no new fetches, a final checkpoint, then
    /// [`super::Crawler::run`] returns (`finish` `stopped`). A resume continues it.
    pub fn stop(&self) {
        self.operator.stop();
    }

    /// The crawl's figures as of now (the `stats.json` content, `finish` `running`
    /// while it runs); the final ones once it ended; `None` before it started.
    /// Waits for the coordinator's next turn (about 20 ms).
    pub fn stats(&self) -> Option<Stats> {
        self.operator.live_stats()
    }

    /// Hands `urls` to the running crawl. Each is checked first (one bad URL adds
    /// nothing); the crawl then canonicalizes them and applies its presence bits,
    /// scope, filters, the handler's `accept_link`, robots.txt and politeness as for
    /// any link. Returns the number of
    /// URLs handed over.
    ///
    /// # Errors
    /// [`AddError`]: a bad URL, too many, the crawl not started, or the write failed.
    pub fn add<I, S>(&self, urls: I) -> Result<usize, AddError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut checked = Vec::new();
        for (index, url) in urls.into_iter().enumerate() {
            let url = url.as_ref().trim();
            check_url(url).map_err(|reason| AddError::BadUrl {
                index,
                url: url.to_owned(),
                reason,
            })?;
            checked.push(url.to_owned());
            if checked.len() > MAX_ADD_URLS {
                return Err(AddError::TooMany(checked.len()));
            }
        }
        if checked.is_empty() {
            return Ok(0);
        }
        if !crate::checkpoint::start::start_path(&self.out).is_file() {
            return Err(AddError::NotStarted(self.out.clone()));
        }
        write_batch(&self.out, &checked)?;
        Ok(checked.len())
    }
}
