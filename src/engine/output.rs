//! The output writer thread: WARC captures and crawl-log lines, fed by every shard over
//! one bounded channel. A slow disk fills the channel and slows the shards (they block
//! on `send`), which is the back-pressure we want; nothing is dropped.
//!
//! A shard does not send a message per fetch: it gathers its records in an
//! [`OutputBatch`] and sends them as one message once it holds [`MAX_BATCH_RECORDS`]
//! or its oldest record is [`MAX_BATCH_AGE`] old, before each checkpoint barrier, and
//! when the shard ends. Each send may wake this thread (a futex wake and two context
//! switches when it sleeps); per-turn sends still woke it about once per page-and-a-
//! half, batches by count and age about once per 20 (figures in
//! `docs/benchmarks.md`, "Wake-ups and hand-offs"). Nothing waits on a record's
//! line reaching the log sooner: checkpoints flush first, and the crawl's end too.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{bounded, Receiver, Sender};

use crate::checkpoint::Positions;
use crate::crawllog::{CrawlLogWriter, LogRecord, WarcRef};
use crate::recrawl::{IndexFacts, IndexWriter};
use crate::warc::{
    CaptureCompressor, CompressedCapture, WarcPosition, WarcWriter, WarcWriterConfig,
};

/// The crawl-log annotation of a URL whose response was written as a WARC `revisit`
/// record: its payload is identical to an earlier capture's. Heritrix's crawl log uses
/// the same tag for digest-based deduplication.
pub const REVISIT_ANNOTATION: &str = "duplicate:digest";

/// Records a shard gathers before it sends them in one message. A turn that produces
/// more (a page whose links are logged as filtered, a robots.txt answer that decides
/// many waiting URLs) sends every this many, so a batch stays small.
pub(crate) const MAX_BATCH_RECORDS: usize = 32;

/// The longest a record waits in a shard's batch: a slow crawl's log still moves.
pub(crate) const MAX_BATCH_AGE: std::time::Duration = std::time::Duration::from_millis(25);

/// A message to the writer thread.
pub(crate) enum OutputMsg {
    /// One shard's records, in the order it made them.
    Records(Vec<OutputRecord>),
    /// Flush and fsync both outputs and report their positions (for a checkpoint).
    Sync(Sender<Result<Positions, String>>),
}

/// One record for the writer thread.
pub(crate) enum OutputRecord {
    /// A decision without a response (robots, filter, budget...).
    Log(Box<LogRecord>),
    /// A fetch: its log line and, when WARC is on, its capture, compressed by the
    /// shard. The line gets the capture's WARC file and offset and payload digest
    /// before it is written.
    Fetched {
        log: Box<LogRecord>,
        capture: Option<WarcItem>,
        /// A page's entry for the re-crawl index, completed with the capture's record
        /// id, digest and location once written (`None`: robots.txt, failures).
        index: Option<Box<IndexFacts>>,
    },
}

/// A shard's records waiting to be sent to the writer thread (see the module docs).
/// Whoever pushes must [`OutputBatch::flush`] before blocking or waiting at a
/// checkpoint barrier: the checkpoint protocol counts on every record made before the
/// cut being in the channel when the coordinator asks for positions.
pub(crate) struct OutputBatch {
    tx: Sender<OutputMsg>,
    pending: Vec<OutputRecord>,
    /// When the oldest pending record was queued.
    since: Option<std::time::Instant>,
}

impl OutputBatch {
    pub fn new(tx: Sender<OutputMsg>) -> Self {
        Self {
            tx,
            pending: Vec::new(),
            since: None,
        }
    }

    /// When the batch must be sent by [`OutputBatch::flush_due`] (`None`: empty).
    pub fn deadline(&self) -> Option<std::time::Instant> {
        self.since.map(|t| t + MAX_BATCH_AGE)
    }

    /// Sends the batch if its oldest record is [`MAX_BATCH_AGE`] old at `now`.
    pub fn flush_due(&mut self, now: std::time::Instant) {
        if self.deadline().is_some_and(|d| now >= d) {
            self.flush();
        }
    }

    /// Queues `record`; sends the batch once it holds [`MAX_BATCH_RECORDS`].
    pub fn push(&mut self, record: OutputRecord) {
        if self.pending.is_empty() {
            self.since = Some(std::time::Instant::now());
        }
        self.pending.push(record);
        if self.pending.len() >= MAX_BATCH_RECORDS {
            self.flush();
        }
    }

    /// Sends what is queued, blocking while the channel is full (back-pressure). A
    /// closed channel means the writer thread has ended (its error is reported when it
    /// is joined); the records have nowhere to go then.
    pub fn flush(&mut self) {
        self.since = None;
        if self.pending.is_empty() {
            return;
        }
        let records = std::mem::replace(&mut self.pending, Vec::with_capacity(MAX_BATCH_RECORDS));
        let _ = self.tx.send(OutputMsg::Records(records));
    }
}

/// A fetch's WARC capture as the shard hands it over.
pub(crate) enum WarcItem {
    /// Records compressed into gzip members (see `crate::warc::compressed`).
    Compressed(Box<CompressedCapture>),
    /// The shard could not build the records (a field value that cannot be written);
    /// counted as rejected. The shard has put the reason in the log line.
    Refused,
}

/// Totals at the end.
#[derive(Clone, Copy, Debug, Default)]
pub struct OutputSummary {
    pub log_lines: u64,
    pub warc_records: u64,
    /// Captures written as `revisit` records.
    pub warc_revisits: u64,
    pub warc_bytes: u64,
    pub warc_files: u64,
}

pub(crate) struct OutputThread {
    pub tx: Sender<OutputMsg>,
    /// Revisit records written so far, counted by the thread (for `Stats`).
    pub revisits: Arc<AtomicU64>,
    /// A compressor for each shard to clone (`None` when WARC is off): deflate runs on
    /// the shard threads, in parallel; this thread only appends.
    pub warc_compressor: Option<CaptureCompressor>,
    /// Set while a write waits for disk space (the coordinator pauses fetching).
    pub stall: Arc<super::space::WriteStall>,
    handle: JoinHandle<Result<OutputSummary, String>>,
}

impl OutputThread {
    /// Starts the writer for `log_path` and, when `warc` is given, a WARC writer.
    /// `capacity` bounds the records queued in the channel: it holds
    /// `capacity / MAX_BATCH_RECORDS` batches.
    pub fn spawn(
        log_path: PathBuf,
        warc: Option<WarcWriterConfig>,
        index: Option<IndexWriter>,
        capacity: usize,
        board: Arc<super::observe::board::Board>,
    ) -> Result<Self, String> {
        let log = CrawlLogWriter::open(&log_path).map_err(|e| format!("{e}"))?;
        let warc = match warc {
            Some(cfg) => Some(WarcWriter::new(cfg).map_err(|e| format!("{e}"))?),
            None => None,
        };
        let warc_compressor = warc.as_ref().map(WarcWriter::compressor);
        let (tx, rx) = bounded((capacity / MAX_BATCH_RECORDS).max(1));
        let revisits = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&revisits);
        let stall = Arc::new(super::space::WriteStall::default());
        let waits = Arc::clone(&stall);
        let handle = std::thread::Builder::new()
            .name("trawl-output".to_owned())
            .spawn(move || run(log, warc, index, &rx, &counter, &waits, &board))
            .map_err(|e| format!("cannot start the output thread: {e}"))?;
        Ok(Self {
            tx,
            revisits,
            warc_compressor,
            stall,
            handle,
        })
    }

    /// Drops the sender, lets the thread write what is queued, and joins it.
    pub fn finish(self) -> Result<OutputSummary, String> {
        drop(self.tx);
        self.handle
            .join()
            .map_err(|_| "output thread panicked".to_owned())?
    }
}

fn run(
    mut log: CrawlLogWriter,
    mut warc: Option<WarcWriter>,
    mut index: Option<IndexWriter>,
    rx: &Receiver<OutputMsg>,
    revisits: &AtomicU64,
    stall: &super::space::WriteStall,
    board: &super::observe::board::Board,
) -> Result<OutputSummary, String> {
    // A write that fails for lack of space waits for space and is tried again (the
    // writers cut a failed write back first); other write errors end the thread.
    let mut summary = OutputSummary::default();
    for msg in rx {
        match msg {
            OutputMsg::Records(records) => {
                for record in records {
                    // The status page's per-host tables and latest errors (`board.rs`).
                    match &record {
                        OutputRecord::Log(l) | OutputRecord::Fetched { log: l, .. } => {
                            board.note(l);
                        }
                    }
                    write_record(
                        record,
                        &mut log,
                        warc.as_mut(),
                        index.as_mut(),
                        &mut summary,
                        revisits,
                        stall,
                    )?;
                }
            }
            OutputMsg::Sync(reply) => {
                let result = sync(&mut log, warc.as_mut(), index.as_mut());
                let _ = reply.send(result);
            }
        }
    }
    log.close().map_err(|e| format!("{e}"))?;
    if let Some(i) = index.as_mut() {
        i.sync().map_err(|e| format!("{e}"))?;
    }
    if let Some(w) = warc {
        let s = w.close().map_err(|e| format!("{e}"))?;
        summary.warc_bytes = s.bytes;
        summary.warc_files = s.files;
    }
    Ok(summary)
}

/// Writes one record: the WARC capture first, then the log line that points at it.
fn write_record(
    record: OutputRecord,
    log: &mut CrawlLogWriter,
    mut warc: Option<&mut WarcWriter>,
    index: Option<&mut IndexWriter>,
    summary: &mut OutputSummary,
    revisits: &AtomicU64,
    stall: &super::space::WriteStall,
) -> Result<(), String> {
    match record {
        OutputRecord::Log(rec) => {
            stall
                .retry(|| log.append(&rec))
                .map_err(|e| format!("{e}"))?;
            summary.log_lines += 1;
        }
        OutputRecord::Fetched {
            log: mut rec,
            capture,
            index: facts,
        } => {
            if let (Some(w), Some(WarcItem::Refused)) = (warc.as_deref_mut(), &capture) {
                w.count_rejected();
            }
            // A URL not fetched (a re-crawl's lastmod skip) keeps its previous entry.
            let (index, facts) = match (capture.is_none(), index, facts) {
                (true, Some(index), Some(facts)) => {
                    if let Some(entry) = facts.without_capture() {
                        stall
                            .retry(|| index.append(&entry))
                            .map_err(|e| format!("{e}"))?;
                    }
                    (None, None)
                }
                (_, index, facts) => (index, facts),
            };
            if let (Some(w), Some(WarcItem::Compressed(capture))) = (warc, capture) {
                match stall.retry(|| w.append_compressed(&capture)) {
                    Ok(written) => {
                        if let (Some(index), Some(facts)) = (index, facts) {
                            let entry = facts.entry(
                                written.response_id.to_string(),
                                written.payload_digest.to_string(),
                                written.file_name.clone(),
                                written.response_offset,
                            );
                            stall
                                .retry(|| index.append(&entry))
                                .map_err(|e| format!("{e}"))?;
                        }
                        rec.warc = Some(WarcRef {
                            file: written.file_name,
                            // The response (or revisit) record, as
                            // `docs/warc.md` says: what a CDX index and
                            // `warcio extract` address.
                            offset: written.response_offset,
                        });
                        rec.payload_digest = Some(written.payload_digest);
                        summary.warc_records += 1;
                        if written.revisit {
                            // A re-crawl's revisit is annotated by its verdict
                            // (`not-modified`, `unchanged`) already.
                            if !capture.is_caller_revisit() {
                                rec.annotations.push(REVISIT_ANNOTATION.to_owned());
                            }
                            summary.warc_revisits += 1;
                            revisits.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    Err(e) => rec.annotations.push(format!("warc-error:{e}")),
                }
            }
            stall
                .retry(|| log.append(&rec))
                .map_err(|e| format!("{e}"))?;
            summary.log_lines += 1;
        }
    }
    Ok(())
}

fn sync(
    log: &mut CrawlLogWriter,
    warc: Option<&mut WarcWriter>,
    index: Option<&mut IndexWriter>,
) -> Result<Positions, String> {
    let crawl_log_bytes = log.sync().map_err(|e| format!("{e}"))?;
    // The re-crawl index is durable with the checkpoint that holds its captures.
    let recrawl_index_bytes = match index {
        Some(index) => Some(index.sync().map_err(|e| format!("{e}"))?),
        None => None,
    };
    let warc = match warc {
        Some(w) => w
            .sync()
            .map_err(|e| format!("{e}"))?
            .map(|WarcPosition { file_name, offset }| (file_name, offset)),
        None => None,
    };
    Ok(Positions {
        crawl_log_bytes,
        warc,
        recrawl_index_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crawllog::Outcome;
    use crate::provenance::WarcDate;

    fn record(i: usize) -> OutputRecord {
        let url = format!("http://a.test/{i}");
        OutputRecord::Log(Box::new(LogRecord::new(
            WarcDate::now(),
            url,
            Outcome::Robots,
        )))
    }

    fn urls(msg: OutputMsg) -> Vec<String> {
        match msg {
            OutputMsg::Records(records) => records
                .into_iter()
                .map(|r| match r {
                    OutputRecord::Log(l) | OutputRecord::Fetched { log: l, .. } => l.url,
                })
                .collect(),
            OutputMsg::Sync(_) => Vec::new(),
        }
    }

    #[test]
    fn a_batch_goes_at_its_size_in_order_and_the_rest_on_flush() {
        let (tx, rx) = crossbeam_channel::unbounded();
        let mut batch = OutputBatch::new(tx);
        for i in 0..MAX_BATCH_RECORDS + 3 {
            batch.push(record(i));
        }
        let first = urls(rx.try_recv().expect("a full batch is sent"));
        let want: Vec<String> = (0..MAX_BATCH_RECORDS)
            .map(|i| format!("http://a.test/{i}"))
            .collect();
        assert_eq!(first, want);
        assert!(rx.try_recv().is_err(), "the 3 left wait for a flush");
        assert!(batch.deadline().is_some());
        batch.flush();
        assert_eq!(urls(rx.try_recv().expect("flushed")).len(), 3);
        assert!(batch.deadline().is_none());
        batch.flush();
        assert!(rx.try_recv().is_err(), "an empty flush sends nothing");
    }

    #[test]
    fn a_batch_goes_when_its_oldest_record_is_due() {
        let (tx, rx) = crossbeam_channel::unbounded();
        let mut batch = OutputBatch::new(tx);
        batch.push(record(0));
        let due = batch.deadline().expect("pending");
        batch.flush_due(due - std::time::Duration::from_millis(1));
        assert!(rx.try_recv().is_err());
        batch.flush_due(due);
        assert_eq!(urls(rx.try_recv().expect("due")).len(), 1);
    }
}
