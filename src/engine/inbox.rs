//! The channels into a shard: links for another shard's hosts travel in batches
//! over bounded crossbeam channels, and the sender wakes the owner through its
//! fetcher's `mio::Waker`, at most once per drain ([`InboxWaker`]); beside them, the
//! links other farm nodes found ([`crate::routing::InboundBatch`]) and the URLs added while the crawl runs
//! ([`Added`]), which the shard's core admits.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::frontier::QueuedUrl;

/// A batch of URLs routed to a shard, each with its host key.
pub(crate) type Batch = Vec<(String, QueuedUrl)>;

/// URLs added while the crawl runs (`trawl add`, read from the drop directory by the
/// coordinator, `super::adds`) for a shard's hosts, as written, not yet admitted: the
/// shard's core admits them ([`super::core::Core::on_added`]). A channel of its own
/// beside the inbox, as large, drained at the same moments (every turn, and inside a
/// checkpoint's cut), in messages of at most [`ADDED_URLS`].
pub(crate) type Added = Vec<String>;

/// Most URLs in one [`Added`] message: what one core call admits, and so the most
/// crawl-log lines it may leave in the shard's action buffer (a batch file holds up to
/// a million URLs).
pub(crate) const ADDED_URLS: usize = 4096;

/// Capacity of a shard's inbox, in batches: 16,384 URLs, a few MiB.
pub(crate) const INBOX_BATCHES: usize = 64;

/// A shard's inbox waker that skips redundant wakes. Senders call
/// [`InboxWaker::notify`] after each send and the owner calls [`InboxWaker::clear`]
/// before it drains its inbox; a wake is written only when none is on its way since
/// the last drain, so a busy peer is not woken once per batch (each wake is an
/// `eventfd` write and may cut its `epoll_wait` short; `docs/benchmarks.md`, "Wake-ups
/// and hand-offs").
///
/// No batch waits unseen: a sender that finds the flag set sent its batch before its
/// swap, which comes after the swap of the sender that set the flag and woke the
/// owner; the owner's next turn clears the flag (an acquire swap) and then drains the
/// inbox, which holds that batch.
pub(crate) struct InboxWaker {
    waker: Arc<mio::Waker>,
    pending: AtomicBool,
}

impl InboxWaker {
    pub fn new(waker: Arc<mio::Waker>) -> Self {
        Self {
            waker,
            pending: AtomicBool::new(false),
        }
    }

    /// Wakes the owner unless a wake is already on its way. A failed wake leaves the
    /// flag set: the owner's next turn (at most its poll timeout away) clears it and
    /// takes the batch anyway.
    pub fn notify(&self) {
        if !self.pending.swap(true, Ordering::AcqRel) {
            let _ = self.waker.wake();
        }
    }

    /// Called by the owner just before it drains its inbox.
    pub fn clear(&self) {
        self.pending.swap(false, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    /// Waker events seen by `poll` within `wait`.
    fn wakes(poll: &mut mio::Poll, wait: Duration) -> usize {
        let mut events = mio::Events::with_capacity(8);
        poll.poll(&mut events, Some(wait)).expect("poll");
        events.iter().count()
    }

    #[test]
    fn inbox_waker_wakes_once_per_drain_and_again_after_it() {
        let mut poll = mio::Poll::new().expect("poll");
        let waker = Arc::new(mio::Waker::new(poll.registry(), mio::Token(0)).expect("waker"));
        let w = InboxWaker::new(waker);
        // Two sends before the owner drains: one wake.
        w.notify();
        w.notify();
        assert_eq!(wakes(&mut poll, Duration::from_millis(200)), 1);
        assert_eq!(wakes(&mut poll, Duration::from_millis(20)), 0);
        // The owner drains (clears); the next send wakes it again.
        w.clear();
        w.notify();
        assert_eq!(wakes(&mut poll, Duration::from_millis(200)), 1);
    }

    #[test]
    fn inbox_waker_never_leaves_a_sent_batch_unseen_across_threads() {
        // A sender thread sends 2,000 batches, notifying after each; the owner drains
        // like `take_inbox` (clear, then drain) after each wake. Every batch must be
        // taken, with at most as many wakes as sends.
        let mut poll = mio::Poll::new().expect("poll");
        let waker = Arc::new(mio::Waker::new(poll.registry(), mio::Token(0)).expect("waker"));
        let w = Arc::new(InboxWaker::new(waker));
        let (tx, rx) = crossbeam_channel::unbounded::<u32>();
        let sender = {
            let w = Arc::clone(&w);
            std::thread::spawn(move || {
                for i in 0..2000u32 {
                    tx.send(i).expect("send");
                    w.notify();
                    if i % 64 == 0 {
                        std::thread::yield_now();
                    }
                }
            })
        };
        let mut taken = 0u32;
        let mut polls = 0u32;
        let mut timeouts = 0u32;
        let deadline = Instant::now() + Duration::from_secs(20);
        while taken < 2000 && Instant::now() < deadline {
            // The loop polls only while batches are still to come, and the sender
            // sends them within milliseconds: a poll that sees no wake for 2 s means
            // a batch was sent and its wake lost.
            if wakes(&mut poll, Duration::from_secs(2)) == 0 {
                timeouts += 1;
            }
            polls += 1;
            w.clear();
            while rx.try_recv().is_ok() {
                taken += 1;
            }
        }
        sender.join().expect("sender");
        assert_eq!(taken, 2000);
        assert_eq!(timeouts, 0, "a wake was lost");
        assert!(polls <= 2000, "{polls} polls");
    }
}
