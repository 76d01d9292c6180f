//! The coordinator: the loop that watches the shards while they crawl (termination,
//! the disk watch, periodic checkpoints, progress), the checkpoint protocol's
//! coordinator side, and what it does when the disk watch pauses or resumes the crawl
//! or a checkpoint fails.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crossbeam_channel::{bounded, Sender};

use crate::checkpoint::{self, FileKind, Manifest, PresenceLogs};

use super::observe::monitor::Monitor;
use super::observe::stats::{stats, write_stats};
use super::setup::Prepared;
use super::{output, space, CheckpointCut, Control, CrawlError, Shared};

/// What the coordinator hands to the crawl's finish: for `stats.json` and the last
/// progress line.
pub(super) struct Report {
    pub started: Instant,
    pub checkpoints: u64,
    pub disk: space::DiskWatch,
    pub monitor: Monitor,
    /// URLs queued at the last committed checkpoint's cut: what a resume finds. The
    /// final `stats.json` reports these, since a fetch may still finish between the
    /// final cut and the shards' stop, and the checkpoint is what a resume reads.
    pub checkpoint_queued: Option<u64>,
}

/// The coordinator of a running crawl (see the module docs). Borrows what setup and
/// shard start-up made; [`Coordinator::run`] returns how the crawl ended.
pub(super) struct Coordinator<'a> {
    shared: &'a Shared,
    out: &'a Path,
    cp_root: &'a Path,
    output: &'a output::OutputThread,
    controls: &'a [Sender<Control>],
    wakers: &'a [Arc<mio::Waker>],
    /// The stop flag of the library API (a signal handler sets it).
    stop: &'a AtomicBool,
    resumed_epoch: Option<u64>,
    epoch: u64,
    /// The committed checkpoint the next one appends its presence logs to.
    last_cp: Option<(PathBuf, PresenceLogs)>,
    report: Report,
    next_checkpoint: Instant,
    /// A checkpoint the disk watch asks for: at a pause, once the fetches in flight
    /// have ended (or at the instant held, when they take longer than a fetch may),
    /// and right after a resume when one failed for lack of space. Letting them end
    /// first keeps a checkpoint that the output holds up (it waits for space) from
    /// stalling them past their deadlines, which would make them fail and be retried
    /// on a new connection while the server still serves the old one.
    disk_checkpoint: Option<Instant>,
    disk_checkpoint_failed: bool,
    drain_limit: Duration,
    /// `trawl add`'s drop directory: polled each turn, its batch files deleted once a
    /// checkpoint holds their URLs.
    adds: super::adds::Adds,
    /// The farm's bus asked for a checkpoint (to acknowledge what it received).
    farm_checkpoint: bool,
}

impl<'a> Coordinator<'a> {
    pub fn new(
        p: &'a Prepared,
        controls: &'a [Sender<Control>],
        wakers: &'a [Arc<mio::Waker>],
        stop: &'a AtomicBool,
        monitor: Monitor,
        adds: super::adds::Adds,
    ) -> Self {
        let shared = &*p.shared;
        let config = &shared.config;
        let started = Instant::now();
        let mut disk = space::DiskWatch::new(config.disk_reserve, started);
        if !disk.is_enabled() {
            // `--disk-reserve 0`: a write that meets ENOSPC fails at once, as it always did.
            p.output.stall.give_up();
        }
        disk.set_checkpoint_bytes(
            shared.core.memory.seen.stats().file_bytes
                + shared.core.memory.fingerprints.stats().file_bytes,
        );
        Self {
            shared,
            out: &p.out,
            cp_root: &p.cp_root,
            output: &p.output,
            controls,
            wakers,
            stop,
            resumed_epoch: p.resumed_epoch,
            epoch: p.epoch,
            last_cp: p.last_cp.clone(),
            next_checkpoint: started + nonzero(config.checkpoint_interval),
            report: Report {
                started,
                checkpoints: 0,
                disk,
                monitor,
                checkpoint_queued: None,
            },
            disk_checkpoint: None,
            disk_checkpoint_failed: false,
            drain_limit: config.fetcher.deadlines.total_timeout + Duration::from_secs(1),
            adds,
            farm_checkpoint: false,
        }
    }

    /// Watches the crawl every 20 ms until it ends; returns how (`exhausted`,
    /// `budget`, `stopped` or `error`).
    ///
    /// # Errors
    /// A checkpoint failed other than for lack of space, or `stats.json` could not be
    /// written after one.
    pub fn run(&mut self) -> Result<&'static str, CrawlError> {
        loop {
            std::thread::sleep(Duration::from_millis(20));
            let now = Instant::now();
            let in_flight = self.observe_flags();
            if let Some(ending) = self.ending(in_flight) {
                return Ok(ending);
            }
            self.watch_disk(now);
            self.adds.poll(self.shared, now);
            self.checkpoint_if_due(now, in_flight)?;
            if self.report.monitor.due(now) {
                let mut s = self.stats();
                self.report.disk.fill(&mut s, now);
                self.report.monitor.update(&s, now);
            }
            if self.shared.operator.take_stats_request() {
                let mut s = self.stats();
                self.report.disk.fill(&mut s, now);
                self.shared.operator.publish_stats(s);
            }
        }
    }

    /// The last checkpoint of the crawl, taken while the shards still hold their
    /// frontiers.
    ///
    /// # Errors
    /// The checkpoint failed (the previous one stays current).
    pub fn final_checkpoint(&mut self) -> Result<(), CrawlError> {
        self.epoch += 1;
        let cp = self.checkpoint();
        self.report.checkpoints += u64::from(cp.is_ok());
        cp.map(|_| ())
    }

    pub fn into_report(self) -> Report {
        self.report
    }

    /// Turns the stop flag into `stopping`, lets the output give up on a full disk
    /// once stopped, and returns the fetches in flight over all shards.
    fn observe_flags(&self) -> u64 {
        let shared = self.shared;
        if shared.operator.is_stop_asked() {
            // An operator's stop through the control API is the library's stop flag.
            self.stop.store(true, Ordering::Release);
        }
        if self.stop.load(Ordering::Acquire) {
            shared.operator.set_ending();
        }
        if self.stop.load(Ordering::Acquire) && !shared.core.is_stopping() {
            shared.core.stop();
        }
        if self.stop.load(Ordering::Acquire) && self.output.stall.is_waiting() {
            // Stopped while the disk is full: the output cannot be made durable, so it
            // gives up and the final checkpoint fails; the previous one stays current.
            self.output.stall.give_up();
        }
        let in_flight = shared.in_flight();
        shared.width.sample_in_flight(in_flight);
        in_flight
    }

    /// How the crawl ended, if it did: a shard failed, every URL is done, or a
    /// budget or stop took effect and the last fetch ended.
    /// In a farm, "exhausted" means the whole farm is done (`FarmLink::tick`,
    /// `docs/farm.md`), and a node whose Redis stayed unreachable past its limit ends
    /// with `error`.
    fn ending(&mut self, in_flight: u64) -> Option<&'static str> {
        let shared = self.shared;
        if shared.flags.has_failed() {
            return Some("error");
        }
        let locally_idle = shared.core.outstanding.get() == 0 && in_flight == 0;
        let farm_tick = shared.farm_link.as_ref().map(|f| f.tick(locally_idle));
        if let Some(tick) = &farm_tick {
            if let Some(msg) = &tick.fatal {
                tracing::error!("{msg}");
                return Some("error");
            }
            self.farm_checkpoint |= tick.checkpoint;
        }
        if locally_idle && farm_tick.as_ref().is_none_or(|t| t.finished) {
            return Some("exhausted");
        }
        if shared.core.is_stopping() && in_flight == 0 {
            return Some(if self.stop.load(Ordering::Acquire) {
                "stopped"
            } else {
                "budget"
            });
        }
        None
    }

    /// Measures free space when due; a pause asks for a checkpoint once the fetches
    /// in flight end, a resume after a failed one asks for one at once.
    fn watch_disk(&mut self, now: Instant) {
        if !self.report.disk.is_due(now) {
            return;
        }
        let measured = match space::probe(self.out) {
            Ok(m) => m,
            Err(e) => {
                tracing::debug!(error = %e, "cannot measure free space on the output");
                return;
            }
        };
        let waiting = self.output.stall.is_waiting();
        let Some(change) = self.report.disk.observe(measured, waiting, now) else {
            return;
        };
        match change {
            space::Change::Paused { .. } => {
                self.disk_checkpoint = Some(now + self.drain_limit);
            }
            space::Change::Resumed { .. } if self.disk_checkpoint_failed => {
                self.disk_checkpoint = Some(now);
            }
            space::Change::Resumed { .. } => {}
        }
        on_disk_change(self.shared, self.out, &change);
        let mut s = self.stats();
        self.report.disk.fill(&mut s, now);
        if let Err(e) = write_stats(self.out, &s) {
            tracing::warn!(error = %e, "cannot write stats.json");
        }
    }

    /// A periodic checkpoint (not while paused) or one the disk watch asked for.
    fn checkpoint_if_due(&mut self, now: Instant, in_flight: u64) -> Result<(), CrawlError> {
        let config = &self.shared.config;
        let periodic = (!config.checkpoint_interval.is_zero() && now >= self.next_checkpoint)
            || std::mem::take(&mut self.farm_checkpoint)
            || self.shared.operator.take_checkpoint();
        let disk_due = self
            .disk_checkpoint
            .is_some_and(|at| in_flight == 0 || now >= at);
        let disk = &self.report.disk;
        // No checkpoint while the output thread waits for space: the shards may be
        // blocked sending to it and would not reach the checkpoint's barriers.
        if !((disk_due || (periodic && !disk.is_paused())) && !self.output.stall.is_waiting()) {
            return Ok(());
        }
        self.disk_checkpoint = None;
        self.epoch += 1;
        // Whether the disk was the trouble, should this checkpoint fail: it is one the
        // pause asked for, or a write waited for space while it ran (the coordinator
        // is blocked meanwhile, so space may be back by the time it fails).
        let (paused, stalls) = (disk.is_paused(), self.output.stall.stalls());
        match self.checkpoint() {
            Ok(()) => {
                self.report.checkpoints += 1;
                self.shared.operator.checkpoint_committed(self.epoch);
                self.disk_checkpoint_failed = false;
                if let Ok(name) = checkpoint::current_name(self.cp_root) {
                    let bytes = space::dir_bytes(&self.cp_root.join(name));
                    self.report.disk.set_checkpoint_bytes(bytes);
                }
                let mut s = self.stats();
                self.report.disk.fill(&mut s, Instant::now());
                match write_stats(self.out, &s) {
                    Err(e) if self.report.disk.is_paused() => {
                        tracing::warn!(error = %e, "cannot write stats.json");
                    }
                    r => r?,
                }
            }
            Err(e) => {
                let disk_trouble = paused || self.output.stall.stalls() != stalls;
                absorb_checkpoint_failure(
                    e,
                    disk_trouble,
                    self.shared,
                    self.out,
                    self.cp_root,
                    &mut self.report.disk,
                )?;
                self.disk_checkpoint_failed = true;
            }
        }
        self.next_checkpoint = Instant::now() + config.checkpoint_interval;
        Ok(())
    }

    /// Takes checkpoint `self.epoch`; on success it is the one the next appends to.
    fn checkpoint(&mut self) -> Result<(), CrawlError> {
        // Every added URL is sent to its shard before the cut, so the cut holds it.
        self.adds.before_checkpoint(self.shared, self.epoch);
        let (cp, queued) = take_checkpoint(
            self.shared,
            self.controls,
            self.wakers,
            &self.output.tx,
            self.cp_root,
            self.epoch,
            self.last_cp.as_ref(),
        )?;
        self.last_cp = Some(cp);
        self.report.checkpoint_queued = Some(queued);
        self.adds.committed(self.epoch);
        Ok(())
    }

    fn stats(&self) -> super::Stats {
        stats(
            self.shared,
            self.report.started,
            self.report.checkpoints,
            self.resumed_epoch,
            "running",
        )
    }
}

/// Acts on a pause or resume of the disk watch: the flag the shards read, and a log
/// line saying why, with the figures.
fn on_disk_change(shared: &Shared, out: &Path, change: &space::Change) {
    let mib = |b: u64| b as f64 / f64::from(1 << 20);
    match *change {
        space::Change::Paused {
            free_bytes,
            reserve_bytes,
            cause,
        } => {
            shared.flags.set_paused(true);
            let (why, then) = match cause {
                space::Cause::LowSpace => {
                    ("under the reserve", "writing a checkpoint into the reserve")
                }
                space::Cause::WriteFailed => (
                    "a write failed for lack of space",
                    "a checkpoint follows once the output is written",
                ),
            };
            tracing::warn!(
                out = %out.display(),
                free_bytes,
                reserve_bytes,
                "paused: disk: {:.1} MiB free on the output filesystem, reserve {:.1} MiB ({why}); \
                 no new fetches until space returns; {then}",
                mib(free_bytes),
                mib(reserve_bytes),
            );
        }
        space::Change::Resumed {
            free_bytes,
            reserve_bytes,
            paused_for,
        } => {
            shared.flags.set_paused(false);
            // A warning like the pause, so the default log level shows both.
            tracing::warn!(
                out = %out.display(),
                free_bytes,
                reserve_bytes,
                paused_secs = paused_for.as_secs_f64(),
                "resumed: disk: {:.1} MiB free again (reserve {:.1} MiB) after {:.1} s paused",
                mib(free_bytes),
                mib(reserve_bytes),
                paused_for.as_secs_f64(),
            );
        }
    }
}

/// A checkpoint failed. If the disk was the trouble (`disk_trouble`: see the caller) or
/// the output filesystem is now short of space (under the reserve, measured before the
/// attempt's files are removed: an `ENOSPC` leaves it nearly full), the failure is
/// taken as lack of space: the attempt's files go, the previous checkpoint stays
/// current and whole, and the crawl pauses (it is owed a checkpoint when it resumes).
/// Any other failure, or any with the watch off, ends the crawl as before.
fn absorb_checkpoint_failure(
    e: CrawlError,
    disk_trouble: bool,
    shared: &Shared,
    out: &Path,
    cp_root: &Path,
    disk: &mut space::DiskWatch,
) -> Result<(), CrawlError> {
    let measured = space::probe(out);
    let short = disk.is_enabled()
        && (disk_trouble
            || measured
                .as_ref()
                .is_ok_and(|s| s.free_bytes < disk.reserve_bytes(*s)));
    if !short {
        tracing::error!(error = %e, space = ?measured, "checkpoint failed, not for lack of space");
        return Err(e);
    }
    let removed = space::discard_unfinished_checkpoints(cp_root);
    let after = space::probe(out).unwrap_or_default();
    tracing::warn!(
        error = %e,
        free_bytes = after.free_bytes,
        removed = removed.entries,
        removed_bytes = removed.bytes,
        "checkpoint failed for lack of space; the previous checkpoint stays current"
    );
    if let Some(change) = disk.checkpoint_failed(removed.bytes, after, Instant::now()) {
        on_disk_change(shared, out, &change);
    }
    Ok(())
}

fn nonzero(d: Duration) -> Duration {
    if d.is_zero() {
        Duration::from_secs(365 * 24 * 3600)
    } else {
        d
    }
}

/// The coordinator's side of the checkpoint protocol (see `docs/architecture.md`).
/// `prev` is the last committed checkpoint of this run (or the one resumed from),
/// whose presence logs this one appends to; returns this one's.
fn take_checkpoint(
    shared: &Shared,
    controls: &[Sender<Control>],
    wakers: &[Arc<mio::Waker>],
    output: &Sender<output::OutputMsg>,
    root: &Path,
    epoch: u64,
    prev: Option<&(PathBuf, PresenceLogs)>,
) -> Result<((PathBuf, PresenceLogs), u64), CrawlError> {
    let begun = Instant::now();
    let dir = checkpoint::prepare(root, epoch)?;
    // Farm: the bus stops delivering received links until this cut ends.
    let farm_cut = shared
        .farm_link
        .as_deref()
        .map(crate::farm::FarmLink::begin_cut);
    let cut = Arc::new(CheckpointCut {
        barrier: Barrier::new(controls.len() + 1),
        dir: dir.clone(),
        failed: AtomicBool::new(false),
    });
    for (tx, w) in controls.iter().zip(wakers) {
        tx.send(Control::Checkpoint(Arc::clone(&cut)))
            .map_err(|_| CrawlError::ShardGone)?;
        let _ = w.wake();
    }
    cut.barrier.wait(); // 1: every shard flushed its links to peers and stopped
    cut.barrier.wait(); // 2: every inbox drained; no URL is in a channel
    let seen = shared
        .core
        .memory
        .seen
        .checkpoint_log(
            &dir,
            checkpoint::SEEN_LOG,
            prev.map(|(d, p)| p.seen(d)).as_ref(),
            epoch,
        )
        .map_err(CrawlError::from);
    let fps = shared
        .core
        .memory
        .fingerprints
        .checkpoint_log(
            &dir,
            checkpoint::FINGERPRINTS_LOG,
            prev.map(|(d, p)| p.fingerprints(d)).as_ref(),
            epoch,
        )
        .map_err(CrawlError::from);
    let (reply_tx, reply_rx) = bounded(1);
    let positions = output
        .send(output::OutputMsg::Sync(reply_tx))
        .ok()
        .and_then(|()| reply_rx.recv().ok())
        .unwrap_or_else(|| Err("output thread gone".to_owned()));
    let counters = shared.counters();
    let queued = shared.core.outstanding.get();
    cut.barrier.wait(); // 3: every shard dumped its frontier
    let farm_outbox = farm_cut.as_ref().map(|c| c.write(&dir, queued == 0));
    cut.barrier.wait(); // 4: shards go on
    if let Some(Err(e)) = farm_outbox {
        tracing::error!(error = %e, "checkpoint farm outbox failed");
        return Err(CrawlError::ShardCheckpoint);
    }
    let seen = seen?;
    let fps = fps?;
    let positions = positions.map_err(CrawlError::Output)?;
    if cut.failed.load(Ordering::Acquire) {
        return Err(CrawlError::ShardCheckpoint);
    }
    let mut manifest = Manifest {
        version: checkpoint::MANIFEST_VERSION,
        epoch,
        unix_time: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        shards: controls.len(),
        seeds: shared.config.seeds.clone(),
        counters,
        positions,
        queued_urls: queued,
        config: Some(checkpoint::RecordedConfig::of(&shared.config)),
        presence: Some(PresenceLogs {
            seen_bytes: seen.write.committed_bytes,
            fingerprints_bytes: fps.write.committed_bytes,
        }),
        files: None,
    };
    let presence = manifest.presence.unwrap_or(PresenceLogs {
        seen_bytes: 0,
        fingerprints_bytes: 0,
    });
    // The blocks and delays an operator set through the control API are part of the
    // checkpoint, so a resumed crawl keeps them.
    shared
        .operator
        .write_rules(&dir)
        .map_err(|e| CrawlError::Io {
            op: "write the operator's rules",
            path: dir.join(crate::control::RULES_FILE),
            source: e,
        })?;
    // The manifest lists every file of the cut, so a reader needs no writer's names.
    let others = [
        (crate::farm::SETTINGS_FILE, FileKind::FarmSettings),
        (crate::farm::OUTBOX_FILE, FileKind::FarmOutbox),
        (crate::control::RULES_FILE, FileKind::OperatorRules),
    ];
    manifest.files = Some(checkpoint::list_files(&dir, manifest.shards, &others)?);
    let done = checkpoint::commit(root, &dir, &manifest)?;
    if let Some(c) = farm_cut {
        c.committed();
    }
    let presence_bytes = seen.write.written_bytes + fps.write.written_bytes;
    let compacted = seen.write.compacted || fps.write.compacted;
    seen.confirm();
    fps.confirm();
    // The other files are new in every checkpoint; the logs are counted by what was
    // appended, not by their length.
    let other_bytes: u64 = fs::read_dir(&done)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| !e.file_name().to_string_lossy().ends_with(".plog"))
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0);
    let bytes = presence_bytes + other_bytes;
    let secs = begun.elapsed().as_secs_f64();
    shared.record_checkpoint(bytes, presence_bytes, secs, compacted);
    tracing::debug!(
        epoch,
        bytes,
        presence_bytes,
        compacted,
        secs,
        "checkpoint committed"
    );
    Ok(((done, presence), queued))
}
