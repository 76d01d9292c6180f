//! The crawl log on its own thread behind a bounded channel, like the WARC writer: shard
//! loops hand over [`LogRecord`]s, JSON encoding and writes happen here, and a full
//! queue blocks the sender (back-pressure) instead of growing.

use std::io;
use std::path::Path;
use std::thread::{self, JoinHandle};

use crossbeam_channel::{bounded, Receiver, Sender, TrySendError};

use super::{CrawlLogError, CrawlLogWriter, LogRecord};

enum Command {
    Line(Box<LogRecord>),
    Sync(Sender<Result<u64, CrawlLogError>>),
    Shutdown,
}

/// A handle to log records; cheap to clone, one per shard.
#[derive(Clone)]
pub struct CrawlLogSender {
    commands: Sender<Command>,
    path: std::path::PathBuf,
}

impl CrawlLogSender {
    /// Queues a line, blocking while the queue is full.
    ///
    /// # Errors
    /// A [`CrawlLogError`] of kind `BrokenPipe` if the writer thread has stopped.
    pub fn log(&self, record: LogRecord) -> Result<(), CrawlLogError> {
        self.commands
            .send(Command::Line(Box::new(record)))
            .map_err(|_| self.stopped())
    }

    /// Queues a line if there is room; gives it back when the queue is full.
    ///
    /// # Errors
    /// `Err(Some(record))` when full, `Err(None)` when the thread has stopped.
    pub fn try_log(&self, record: LogRecord) -> Result<(), Option<Box<LogRecord>>> {
        match self.commands.try_send(Command::Line(Box::new(record))) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(Command::Line(record))) => Err(Some(record)),
            Err(_) => Err(None),
        }
    }

    /// Waits until every line queued before is written and fsynced; returns the log's
    /// length for a checkpoint.
    ///
    /// # Errors
    /// The writer's error, or kind `BrokenPipe` if the thread has stopped.
    pub fn sync(&self) -> Result<u64, CrawlLogError> {
        let (reply, answer) = bounded(1);
        self.commands
            .send(Command::Sync(reply))
            .map_err(|_| self.stopped())?;
        answer.recv().map_err(|_| self.stopped())?
    }

    fn stopped(&self) -> CrawlLogError {
        CrawlLogError {
            op: "send to the writer of",
            path: self.path.clone(),
            source: io::Error::new(io::ErrorKind::BrokenPipe, "writer thread has stopped"),
        }
    }
}

/// The crawl-log writer thread.
pub struct CrawlLogThread {
    sender: CrawlLogSender,
    handle: JoinHandle<Result<u64, CrawlLogError>>,
}

impl CrawlLogThread {
    /// Opens `path` for appending and starts the thread with a queue of `capacity`
    /// lines (at least 1).
    ///
    /// # Errors
    /// [`CrawlLogError`] if the file cannot be opened or the thread not spawned.
    pub fn spawn(path: &Path, capacity: usize) -> Result<Self, CrawlLogError> {
        let writer = CrawlLogWriter::open(path)?;
        let (commands, queue) = bounded(capacity.max(1));
        let handle = thread::Builder::new()
            .name("crawl-log".to_owned())
            .spawn(move || run(writer, &queue))
            .map_err(|source| CrawlLogError {
                op: "spawn a writer for",
                path: path.to_path_buf(),
                source,
            })?;
        Ok(Self {
            sender: CrawlLogSender {
                commands,
                path: path.to_path_buf(),
            },
            handle,
        })
    }

    /// A sender for another shard.
    pub fn sender(&self) -> CrawlLogSender {
        self.sender.clone()
    }

    /// Writes what is queued, fsyncs, stops the thread; returns the log's length.
    ///
    /// # Errors
    /// The first error the thread met.
    pub fn finish(self) -> Result<u64, CrawlLogError> {
        let _ = self.sender.commands.send(Command::Shutdown);
        let path = self.sender.path.clone();
        self.handle.join().map_err(|_| CrawlLogError {
            op: "join the writer of",
            path,
            source: io::Error::other("writer thread panicked"),
        })?
    }
}

impl std::ops::Deref for CrawlLogThread {
    type Target = CrawlLogSender;

    fn deref(&self) -> &CrawlLogSender {
        &self.sender
    }
}

fn run(mut writer: CrawlLogWriter, queue: &Receiver<Command>) -> Result<u64, CrawlLogError> {
    while let Ok(command) = queue.recv() {
        match command {
            Command::Line(record) => writer.append(&record)?,
            Command::Sync(reply) => {
                let result = writer.sync();
                let failed = result.is_err();
                let _ = reply.send(result);
                if failed {
                    break;
                }
            }
            Command::Shutdown => break,
        }
    }
    writer.close()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crawllog::Outcome;
    use crate::warc::WarcDate;

    #[test]
    fn lines_arrive_in_order_and_sync_reports_length() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("crawl.log.jsonl");
        let log = CrawlLogThread::spawn(&path, 4).unwrap();
        let sender = log.sender();
        let producer = thread::spawn(move || {
            for i in 0..100 {
                let url = format!("http://a.example/{i}");
                sender
                    .log(LogRecord::new(
                        WarcDate::from_unix_micros(i),
                        url,
                        Outcome::Fetched,
                    ))
                    .unwrap();
            }
        });
        producer.join().unwrap();
        let len = log.sync().unwrap();
        assert_eq!(len, std::fs::metadata(&path).unwrap().len());
        let sender = log.sender();
        assert_eq!(log.finish().unwrap(), len);
        let text = std::fs::read_to_string(&path).unwrap();
        let urls: Vec<String> = text
            .lines()
            .map(|l| serde_json::from_str::<LogRecord>(l).unwrap().url)
            .collect();
        let expected: Vec<String> = (0..100).map(|i| format!("http://a.example/{i}")).collect();
        assert_eq!(urls, expected);
        let err = sender
            .log(LogRecord::new(
                WarcDate::from_unix_micros(0),
                "x",
                Outcome::Robots,
            ))
            .unwrap_err();
        assert_eq!(err.source.kind(), io::ErrorKind::BrokenPipe);
        assert!(matches!(
            sender.try_log(LogRecord::new(
                WarcDate::from_unix_micros(0),
                "x",
                Outcome::Robots
            )),
            Err(None)
        ));
    }
}
