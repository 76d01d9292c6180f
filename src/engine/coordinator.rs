//! The coordinator's helpers: the checkpoint protocol's coordinator side, and what
//! it does when the disk watch pauses or resumes the crawl or a checkpoint fails.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crossbeam_channel::{bounded, Sender};

use crate::checkpoint::{self, Manifest, PresenceLogs};

use super::{output, space, CheckpointCut, Control, CrawlError, Shared};

/// Acts on a pause or resume of the disk watch: the flag the shards read, and a log
/// line saying why, with the figures.
pub(super) fn on_disk_change(shared: &Shared, out: &Path, change: &space::Change) {
    let mib = |b: u64| b as f64 / f64::from(1 << 20);
    match *change {
        space::Change::Paused {
            free_bytes,
            reserve_bytes,
            cause,
        } => {
            shared.paused.store(true, Ordering::Release);
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
            shared.paused.store(false, Ordering::Release);
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
pub(super) fn absorb_checkpoint_failure(
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

pub(super) fn nonzero(d: Duration) -> Duration {
    if d.is_zero() {
        Duration::from_secs(365 * 24 * 3600)
    } else {
        d
    }
}

/// The coordinator's side of the checkpoint protocol (see `docs/architecture.md`).
/// `prev` is the last committed checkpoint of this run (or the one resumed from),
/// whose presence logs this one appends to; returns this one's.
pub(super) fn take_checkpoint(
    shared: &Shared,
    controls: &[Sender<Control>],
    wakers: &[Arc<mio::Waker>],
    output: &Sender<output::OutputMsg>,
    root: &Path,
    epoch: u64,
    prev: Option<&(PathBuf, PresenceLogs)>,
) -> Result<(PathBuf, PresenceLogs), CrawlError> {
    let begun = Instant::now();
    let dir = checkpoint::prepare(root, epoch)?;
    // Farm: the bus stops delivering received links until this cut ends.
    let farm_cut = shared.farm.as_ref().map(crate::farm::FarmLink::begin_cut);
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
        .seen
        .checkpoint_log(
            &dir,
            checkpoint::SEEN_LOG,
            prev.map(|(d, p)| p.seen(d)).as_ref(),
            epoch,
        )
        .map_err(CrawlError::from);
    let fps = shared
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
    let queued = shared.outstanding.load(Ordering::Acquire);
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
    let manifest = Manifest {
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
    };
    let presence = manifest.presence.unwrap_or(PresenceLogs {
        seen_bytes: 0,
        fingerprints_bytes: 0,
    });
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
    if let Ok(mut f) = shared.checkpoint_figures.lock() {
        f.last_bytes = bytes;
        f.total_bytes += bytes;
        f.max_bytes = f.max_bytes.max(bytes);
        f.last_presence_bytes = presence_bytes;
        f.last_secs = secs;
        f.total_secs += secs;
        f.max_secs = f.max_secs.max(secs);
        f.compactions += u64::from(compacted);
    }
    tracing::debug!(
        epoch,
        bytes,
        presence_bytes,
        compacted,
        secs,
        "checkpoint committed"
    );
    Ok((done, presence))
}
