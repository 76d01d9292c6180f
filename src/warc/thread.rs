//! The WARC writer on its own thread, fed by a bounded channel.
//!
//! Shard loops submit [`Capture`]s; gzip compression, digests and disk writes happen
//! here. The channel's capacity is the back-pressure: when the disk (or compression)
//! falls behind, `submit` blocks and the crawl slows down instead of queueing without
//! end; `try_submit` lets an event loop keep serving its sockets and retry later.

use std::thread::{self, JoinHandle};

use crossbeam_channel::{bounded, Receiver, Sender, TrySendError};

use super::capture::{Capture, CaptureWritten};
use super::writer::{WarcError, WarcPosition, WarcWriter, WarcWriterConfig, WriterSummary};

/// Commands to the writer thread.
enum Command {
    Capture(Box<Capture>, Option<Sender<CaptureWritten>>),
    Sync(Sender<Result<Option<WarcPosition>, WarcError>>),
    Shutdown,
}

/// Why [`WarcSender::try_submit`] did not take a capture.
#[derive(Debug)]
pub enum TrySubmitError {
    /// The queue is full; here is the capture back, try later.
    Full(Box<Capture>),
    /// The writer thread has stopped (see [`WarcWriterThread::finish`] for why).
    Stopped(Box<Capture>),
}

/// A handle to submit captures; cheap to clone, one per shard.
#[derive(Clone)]
pub struct WarcSender {
    commands: Sender<Command>,
}

impl WarcSender {
    /// Queues a capture, blocking while the queue is full (back-pressure).
    ///
    /// # Errors
    /// [`WarcError::Stopped`] if the writer thread has stopped.
    pub fn submit(&self, capture: Capture) -> Result<(), WarcError> {
        self.commands
            .send(Command::Capture(Box::new(capture), None))
            .map_err(|_| WarcError::Stopped)
    }

    /// Queues a capture and asks for its file and offset (for the crawl log) on
    /// `written`, a channel the caller drains.
    ///
    /// # Errors
    /// [`WarcError::Stopped`] if the writer thread has stopped.
    pub fn submit_with_receipt(
        &self,
        capture: Capture,
        written: Sender<CaptureWritten>,
    ) -> Result<(), WarcError> {
        self.commands
            .send(Command::Capture(Box::new(capture), Some(written)))
            .map_err(|_| WarcError::Stopped)
    }

    /// Queues a capture if there is room, without blocking.
    ///
    /// # Errors
    /// [`TrySubmitError`] with the capture when the queue is full or the thread gone.
    pub fn try_submit(&self, capture: Capture) -> Result<(), TrySubmitError> {
        match self
            .commands
            .try_send(Command::Capture(Box::new(capture), None))
        {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(Command::Capture(capture, _))) => {
                Err(TrySubmitError::Full(capture))
            }
            Err(TrySendError::Disconnected(Command::Capture(capture, _))) => {
                Err(TrySubmitError::Stopped(capture))
            }
            // Only captures are sent above; other commands cannot come back.
            Err(_) => Ok(()),
        }
    }

    /// Waits until every capture queued before this call is written and fsynced, and
    /// returns the position to store in a checkpoint (`None` if nothing was written).
    ///
    /// # Errors
    /// The writer's error if the sync failed, [`WarcError::Stopped`] if the thread has
    /// stopped.
    pub fn sync(&self) -> Result<Option<WarcPosition>, WarcError> {
        let (reply, answer) = bounded(1);
        self.commands
            .send(Command::Sync(reply))
            .map_err(|_| WarcError::Stopped)?;
        answer.recv().map_err(|_| WarcError::Stopped)?
    }

    /// Captures waiting in the queue.
    pub fn queued(&self) -> usize {
        self.commands.len()
    }
}

/// The writer thread and a sender to it.
pub struct WarcWriterThread {
    sender: WarcSender,
    handle: JoinHandle<Result<WriterSummary, WarcError>>,
}

impl WarcWriterThread {
    /// Starts a writer thread for `config` with a queue of `capacity` captures (at
    /// least 1). Memory held by the queue is bounded by `capacity` times the largest
    /// capture (the fetcher caps body sizes).
    ///
    /// # Errors
    /// As [`WarcWriter::new`]; also [`WarcError::Dir`] if the thread cannot be spawned.
    pub fn spawn(config: WarcWriterConfig, capacity: usize) -> Result<Self, WarcError> {
        let writer = WarcWriter::new(config.clone())?;
        let (commands, queue) = bounded(capacity.max(1));
        let handle = thread::Builder::new()
            .name(format!("warc-writer-{}", config.shard))
            .spawn(move || run(writer, &queue))
            .map_err(|source| WarcError::Dir {
                op: "spawn a writer for",
                path: config.dir.clone(),
                source,
            })?;
        Ok(Self {
            sender: WarcSender { commands },
            handle,
        })
    }

    /// A sender for another shard.
    pub fn sender(&self) -> WarcSender {
        self.sender.clone()
    }

    /// Writes everything queued, closes the file (fsync, rename) and stops the thread.
    /// Senders still held elsewhere get [`WarcError::Stopped`] afterwards.
    ///
    /// # Errors
    /// The first error the thread met, which also stopped it.
    pub fn finish(self) -> Result<WriterSummary, WarcError> {
        // If the thread already stopped on an error, the send fails and join reports it.
        let _ = self.sender.commands.send(Command::Shutdown);
        self.handle.join().map_err(|_| WarcError::Panicked)?
    }
}

impl std::ops::Deref for WarcWriterThread {
    type Target = WarcSender;

    fn deref(&self) -> &WarcSender {
        &self.sender
    }
}

fn run(mut writer: WarcWriter, queue: &Receiver<Command>) -> Result<WriterSummary, WarcError> {
    // Ends on Shutdown, or when every sender is gone.
    while let Ok(command) = queue.recv() {
        match command {
            Command::Capture(capture, receipt) => {
                match writer.write_capture(&capture) {
                    Ok(written) => {
                        if let Some(receipt) = receipt {
                            // The receiver may have gone; the capture is written anyway.
                            let _ = receipt.send(written);
                        }
                    }
                    // A capture with an unwritable field is refused alone (counted in
                    // the summary); the file is untouched and the thread goes on.
                    Err(WarcError::Record { .. }) => {}
                    Err(err) => return Err(err),
                }
            }
            Command::Sync(reply) => {
                let result = writer.sync();
                let failed = result.is_err();
                let _ = reply.send(result);
                if failed {
                    // The error went to the caller; stop taking work.
                    return Err(WarcError::Stopped);
                }
            }
            Command::Shutdown => break,
        }
    }
    writer.close()
}
