//! What goes into the fetcher: a [`FetchRequest`], submitted on the fetcher's own thread
//! or through a [`Submitter`] from any other.

use std::net::SocketAddr;
use std::sync::Arc;

use crossbeam_channel::{Sender, TrySendError};
use mio::Waker;

use crate::http::RequestHead;
use crate::net::config::FetchLimits;

/// Slots of the channel a [`Submitter`] sends through; [`Submitter::submit`] reports
/// `Full` beyond them until the loop has taken some.
pub const SUBMIT_CHANNEL_SLOTS: usize = 1024;

/// One request for the fetcher.
#[derive(Clone, Debug)]
pub struct FetchRequest {
    /// Caller's id, echoed in the outcome.
    pub id: u64,
    /// The request head (method, URL, headers).
    pub head: RequestHead,
    /// Caps for this request.
    pub limits: FetchLimits,
    /// Connect to this address instead of resolving the URL's host.
    pub addr: Option<SocketAddr>,
}

impl FetchRequest {
    /// A GET of `url` with default limits.
    pub fn get(id: u64, url: url::Url, user_agent: String) -> Self {
        Self {
            id,
            head: RequestHead::get(url, user_agent),
            limits: FetchLimits::default(),
            addr: None,
        }
    }
}

/// Hands requests to a fetcher from another thread.
#[derive(Clone)]
pub struct Submitter {
    tx: Sender<FetchRequest>,
    waker: Arc<Waker>,
}

impl Submitter {
    pub(crate) fn new(tx: Sender<FetchRequest>, waker: Arc<Waker>) -> Self {
        Self { tx, waker }
    }

    /// Queues `req` and wakes the loop.
    ///
    /// # Errors
    /// Gives the request back when the submission channel is full or the fetcher is gone.
    pub fn submit(&self, req: FetchRequest) -> Result<(), Box<FetchRequest>> {
        match self.tx.try_send(req) {
            Ok(()) => {
                let _ = self.waker.wake();
                Ok(())
            }
            Err(TrySendError::Full(r) | TrySendError::Disconnected(r)) => Err(Box::new(r)),
        }
    }
}
