//! What goes into the fetcher: a [`FetchRequest`], submitted on the fetcher's own thread
//! or through a [`Submitter`] from any other.

use std::sync::Arc;

use crossbeam_channel::{Sender, TrySendError};
use mio::Waker;

use crate::fetch::FetchRequest;

/// Slots of the channel a [`Submitter`] sends through; [`Submitter::submit`] reports
/// `Full` beyond them until the loop has taken some.
pub const SUBMIT_CHANNEL_SLOTS: usize = 1024;

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
