//! Free space on the output filesystem, and the pause that keeps a reserve of it.
//!
//! A crawl writes WARC files, the crawl log, frontier spill segments and checkpoints
//! under `--out`. Before this module a full disk failed the first write that met it and
//! ended the crawl, often in the middle of a checkpoint. Now the coordinator measures
//! the free space with `statvfs(2)` every [`PROBE_INTERVAL`] and, when it falls under
//! the reserve (`--disk-reserve`), pauses fetching: no new fetch starts, the fetches in
//! flight finish (or are dumped as queued by the checkpoint), and a checkpoint is
//! written into the space the reserve kept. When space returns the crawl goes on.
//!
//! [`DiskWatch`] makes the decisions without touching the filesystem (it is given the
//! measured [`Space`] and `now`); [`probe`] measures it (`statvfs`, in `sys::fs`), and
//! [`WriteStall`] is what the output thread uses when a write meets `ENOSPC` anyway
//! (something else filled the disk faster than the probe saw it). See
//! `docs/checkpoints.md`, "Disk full", for what survives and what does not.

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often the coordinator measures free space. `statvfs` costs a few microseconds
/// (4.5 µs measured through Python's `os.statvfs`, an upper bound), so ten probes a
/// second cost 0.005% of a core; at 100 ms even an output rate of 1 GB/s (far beyond what a crawl writes on a few
/// cores) uses up a tenth of the default 1 GiB reserve between two probes.
pub const PROBE_INTERVAL: Duration = Duration::from_millis(100);

/// The automatic reserve's upper bound: room for one checkpoint at the default settings
/// (presence bits for 100 million URLs at 1e-6 are 459 MiB, the fingerprints 115 MiB,
/// plus the frontier dump) and some seconds of output.
pub const AUTO_RESERVE_MAX_BYTES: u64 = 1 << 30;

/// The automatic reserve's share of the filesystem, in percent, so a small disk is not
/// mostly held back.
pub const AUTO_RESERVE_PERCENT: f64 = 5.0;

/// How long a write that failed for lack of space waits before it is tried again.
pub const WRITE_RETRY_INTERVAL: Duration = Duration::from_millis(100);

/// How much free space is kept back on the output filesystem.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Reserve {
    /// The smaller of [`AUTO_RESERVE_MAX_BYTES`] and [`AUTO_RESERVE_PERCENT`] of the
    /// filesystem.
    #[default]
    Auto,
    /// This many bytes; 0 turns the watch off (a full disk then ends the crawl).
    Bytes(u64),
    /// This percentage (0-100) of the filesystem's size.
    Percent(f64),
}

/// A `--disk-reserve` value that does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReserveError(String);

impl std::fmt::Display for ReserveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "bad disk reserve {:?}: expected a size (64M, 1G, 1048576), a percentage \
             of the filesystem (5%) or auto",
            self.0
        )
    }
}

impl std::error::Error for ReserveError {}

impl std::str::FromStr for Reserve {
    type Err = ReserveError;

    /// `auto`, a percentage (`5%`, `0.5%`, at most 100), or a size with an optional
    /// binary unit (`k`, `M`, `G`, `T`, optionally followed by `B` or `iB`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || ReserveError(s.to_owned());
        let t = s.trim();
        if t.eq_ignore_ascii_case("auto") {
            return Ok(Self::Auto);
        }
        if let Some(p) = t.strip_suffix('%') {
            let v: f64 = p.trim().parse().map_err(|_| bad())?;
            if !(v.is_finite() && (0.0..=100.0).contains(&v)) {
                return Err(bad());
            }
            return Ok(Self::Percent(v));
        }
        let lower = t.to_ascii_lowercase();
        let num_end = lower
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(lower.len());
        let (num, unit) = lower.split_at(num_end);
        let mult: u64 = match unit.trim() {
            "" | "b" => 1,
            "k" | "kb" | "kib" => 1 << 10,
            "m" | "mb" | "mib" => 1 << 20,
            "g" | "gb" | "gib" => 1 << 30,
            "t" | "tb" | "tib" => 1 << 40,
            _ => return Err(bad()),
        };
        let v: f64 = num.parse().map_err(|_| bad())?;
        let bytes = v * mult as f64;
        if !(bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64) {
            return Err(bad());
        }
        Ok(Self::Bytes(bytes as u64))
    }
}

impl std::fmt::Display for Reserve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Auto => f.write_str("auto"),
            Self::Bytes(b) => write!(f, "{b}"),
            Self::Percent(p) => write!(f, "{p}%"),
        }
    }
}

impl Reserve {
    /// Whether the watch is on (`Bytes(0)` turns it off).
    pub fn is_enabled(self) -> bool {
        !matches!(self, Self::Bytes(0))
    }

    /// The reserve in bytes on a filesystem of `total_bytes`.
    pub fn bytes_of(self, total_bytes: u64) -> u64 {
        let percent = |p: f64| (total_bytes as f64 * p / 100.0) as u64;
        match self {
            Self::Auto => AUTO_RESERVE_MAX_BYTES.min(percent(AUTO_RESERVE_PERCENT)),
            Self::Bytes(b) => b,
            Self::Percent(p) => percent(p),
        }
    }
}

/// One measurement of a filesystem.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Space {
    /// Bytes an unprivileged process may still write (`f_bavail`): what the crawl can
    /// count on, even when it runs as root.
    pub free_bytes: u64,
    /// The filesystem's size (`f_blocks`).
    pub total_bytes: u64,
}

/// Measures the filesystem that holds `dir`.
///
/// # Errors
/// `statvfs` failed (the directory is gone, or the path holds a NUL byte).
pub fn probe(dir: &Path) -> io::Result<Space> {
    let fs = crate::sys::fs::statvfs(dir)?;
    Ok(Space {
        free_bytes: fs.available_bytes,
        total_bytes: fs.total_bytes,
    })
}

/// Whether `e` (or an error in its `source` chain) is an I/O error for lack of space:
/// `ENOSPC`, or `EDQUOT` (a quota, which `statvfs` does not show).
pub fn is_out_of_space(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<io::Error>() {
            if matches!(io.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT))
                || io.kind() == io::ErrorKind::StorageFull
            {
                return true;
            }
        }
        cur = err.source();
    }
    false
}

/// The bytes of the files directly in `dir` (a checkpoint directory is flat).
pub fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.metadata().ok())
                .filter(std::fs::Metadata::is_file)
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// What [`discard_unfinished_checkpoints`] removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Discarded {
    pub entries: usize,
    /// The files' lengths: what the failed attempt had written (or had sized, for the
    /// sparse presence-bit snapshots), so at least what a checkpoint needs.
    pub bytes: u64,
}

/// Removes what a failed checkpoint left in `root` (`tmp-*`, a sealed `cp-*` that
/// `CURRENT` does not name, `CURRENT.tmp`), so a paused crawl gets its space back. The
/// checkpoint `CURRENT` names is never touched: the previous checkpoint stays whole.
pub fn discard_unfinished_checkpoints(root: &Path) -> Discarded {
    let current = crate::checkpoint::current_name(root).ok();
    let mut out = Discarded::default();
    let Ok(entries) = std::fs::read_dir(root) else {
        return out;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        let (gone, bytes) = if name.starts_with("tmp-")
            || (name.starts_with("cp-") && current.as_deref() != Some(name.as_str()))
        {
            let bytes = dir_bytes(&path);
            (std::fs::remove_dir_all(&path).is_ok(), bytes)
        } else if name == "CURRENT.tmp" {
            (std::fs::remove_file(&path).is_ok(), 0)
        } else {
            (false, 0)
        };
        if gone {
            out.entries += 1;
            out.bytes += bytes;
        }
    }
    out
}

/// Why the crawl is paused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// Free space fell under the reserve.
    LowSpace,
    /// A write failed for lack of space (the output thread waits, or a checkpoint
    /// could not be written).
    WriteFailed,
}

/// A change of the pause state, for the coordinator to act on and log.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Change {
    Paused {
        free_bytes: u64,
        reserve_bytes: u64,
        cause: Cause,
    },
    Resumed {
        free_bytes: u64,
        reserve_bytes: u64,
        paused_for: Duration,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Running,
    Paused { since: Instant },
}

/// The pause decision (sans-IO): fed measurements, it says when to pause and resume.
///
/// The reserve in force is the configured one, raised to 1.25 times the size of a
/// checkpoint when that is larger: the pause writes a checkpoint beside the previous
/// one (which is deleted only once the new one is current), so a reserve smaller than
/// a checkpoint would pause a crawl that then cannot save itself. Resuming needs a
/// sixteenth of the reserve more (at least 1 MiB) than pausing, so a crawl at the
/// boundary does not flap.
#[derive(Debug)]
pub(crate) struct DiskWatch {
    reserve: Reserve,
    checkpoint_bytes: u64,
    state: State,
    pauses: u64,
    paused_before: Duration,
    last: Option<Space>,
    next_probe: Instant,
    raised_logged: bool,
}

/// The pause figures for `stats.json`, the progress line and the metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct PauseStats {
    pub paused: bool,
    pub pauses: u64,
    pub paused_secs: f64,
    pub free_bytes: u64,
    pub reserve_bytes: u64,
}

impl DiskWatch {
    pub fn new(reserve: Reserve, now: Instant) -> Self {
        Self {
            reserve,
            checkpoint_bytes: 0,
            state: State::Running,
            pauses: 0,
            paused_before: Duration::ZERO,
            last: None,
            next_probe: now,
            raised_logged: false,
        }
    }

    pub fn is_enabled(&self) -> bool {
        self.reserve.is_enabled()
    }

    pub fn is_paused(&self) -> bool {
        matches!(self.state, State::Paused { .. })
    }

    /// Whether a probe is due (never when the watch is off).
    pub fn is_due(&self, now: Instant) -> bool {
        self.is_enabled() && now >= self.next_probe
    }

    /// The size of the last checkpoint (or, before the first, an estimate), which the
    /// reserve must hold.
    pub fn set_checkpoint_bytes(&mut self, bytes: u64) {
        self.checkpoint_bytes = bytes;
    }

    /// The reserve in force on a filesystem measured as `space`.
    pub fn reserve_bytes(&self, space: Space) -> u64 {
        let floor = self
            .checkpoint_bytes
            .saturating_add(self.checkpoint_bytes / 4);
        self.reserve.bytes_of(space.total_bytes).max(floor)
    }

    fn resume_bytes(reserve: u64) -> u64 {
        reserve.saturating_add((reserve / 16).max(1 << 20))
    }

    /// Takes a measurement; `writes_blocked` says the output thread is waiting for
    /// space. Returns the change, if any.
    pub fn observe(&mut self, space: Space, writes_blocked: bool, now: Instant) -> Option<Change> {
        self.next_probe = now + PROBE_INTERVAL;
        self.last = Some(space);
        if !self.is_enabled() {
            return None;
        }
        let reserve_bytes = self.reserve_bytes(space);
        if !self.raised_logged && reserve_bytes > self.reserve.bytes_of(space.total_bytes) {
            self.raised_logged = true;
            tracing::info!(
                reserve_bytes,
                configured = %self.reserve,
                checkpoint_bytes = self.checkpoint_bytes,
                "disk reserve raised to hold a checkpoint"
            );
        }
        match self.state {
            State::Running if writes_blocked || space.free_bytes < reserve_bytes => {
                let cause = if writes_blocked {
                    Cause::WriteFailed
                } else {
                    Cause::LowSpace
                };
                Some(self.pause(space, reserve_bytes, cause, now))
            }
            State::Paused { since }
                if !writes_blocked && space.free_bytes >= Self::resume_bytes(reserve_bytes) =>
            {
                let paused_for = now.saturating_duration_since(since);
                self.paused_before += paused_for;
                self.state = State::Running;
                Some(Change::Resumed {
                    free_bytes: space.free_bytes,
                    reserve_bytes,
                    paused_for,
                })
            }
            _ => None,
        }
    }

    /// A checkpoint failed for lack of space after writing `attempt_bytes` (its partial
    /// files, now removed; `space` is measured after). A checkpoint needs more than
    /// that, so the size the reserve must hold is raised to it (the crawl resumes only
    /// with more room than the attempt used), and the crawl pauses if it was running.
    /// Not the free space itself: when the output thread held the coordinator up in the
    /// checkpoint, space may have come back meanwhile, and a reserve raised to it would
    /// never let the crawl resume.
    pub fn checkpoint_failed(
        &mut self,
        attempt_bytes: u64,
        space: Space,
        now: Instant,
    ) -> Option<Change> {
        self.checkpoint_bytes = self.checkpoint_bytes.max(attempt_bytes);
        self.last = Some(space);
        let reserve_bytes = self.reserve_bytes(space);
        match self.state {
            State::Running => Some(self.pause(space, reserve_bytes, Cause::WriteFailed, now)),
            State::Paused { .. } => None,
        }
    }

    fn pause(&mut self, space: Space, reserve_bytes: u64, cause: Cause, now: Instant) -> Change {
        self.state = State::Paused { since: now };
        self.pauses += 1;
        Change::Paused {
            free_bytes: space.free_bytes,
            reserve_bytes,
            cause,
        }
    }

    /// Writes the pause figures into `s` (`stats.json`, progress line, metrics).
    pub fn fill(&self, s: &mut super::Stats, now: Instant) {
        let p = self.stats(now);
        s.paused = p.paused.then(|| "disk".to_owned());
        s.disk_pauses = p.pauses;
        s.disk_paused_secs = p.paused_secs;
        s.disk_free_bytes = p.free_bytes;
        s.disk_reserve_bytes = p.reserve_bytes;
    }

    pub fn stats(&self, now: Instant) -> PauseStats {
        let current = match self.state {
            State::Paused { since } => now.saturating_duration_since(since),
            State::Running => Duration::ZERO,
        };
        let last = self.last.unwrap_or_default();
        PauseStats {
            paused: self.is_paused(),
            pauses: self.pauses,
            paused_secs: (self.paused_before + current).as_secs_f64(),
            free_bytes: last.free_bytes,
            reserve_bytes: if self.is_enabled() {
                self.reserve_bytes(last)
            } else {
                0
            },
        }
    }
}

/// Shared between the output thread and the coordinator: a write that failed for lack
/// of space is retried every [`WRITE_RETRY_INTERVAL`] instead of ending the crawl,
/// while [`WriteStall::is_waiting`] tells the coordinator to pause. The writers cut a
/// failed write back (the WARC writer truncates its partial member, the crawl log's
/// buffer keeps what it could not write), so trying again neither loses nor doubles a
/// record.
#[derive(Debug)]
pub(crate) struct WriteStall {
    waiting: AtomicBool,
    /// Times a write started waiting, so the coordinator can tell whether one did
    /// during a checkpoint it was blocked in.
    stalls: AtomicU64,
    give_up: AtomicBool,
    retry_every: Duration,
}

impl Default for WriteStall {
    fn default() -> Self {
        Self::new(WRITE_RETRY_INTERVAL)
    }
}

impl WriteStall {
    pub fn new(retry_every: Duration) -> Self {
        Self {
            waiting: AtomicBool::new(false),
            stalls: AtomicU64::new(0),
            give_up: AtomicBool::new(false),
            retry_every,
        }
    }

    /// Whether a write is waiting for space now.
    pub fn is_waiting(&self) -> bool {
        self.waiting.load(Ordering::Acquire)
    }

    /// How many times a write started waiting for space.
    pub fn stalls(&self) -> u64 {
        self.stalls.load(Ordering::Acquire)
    }

    /// Stops waiting: the write in progress and later ones return their error (the
    /// crawl is being stopped while the disk is full).
    pub fn give_up(&self) {
        self.give_up.store(true, Ordering::Release);
    }

    /// Runs `op` until it succeeds or fails for another reason than lack of space (or
    /// [`WriteStall::give_up`] was called).
    ///
    /// # Errors
    /// `op`'s error when it is not for lack of space, or after giving up.
    pub fn retry<T, E>(&self, mut op: impl FnMut() -> Result<T, E>) -> Result<T, E>
    where
        E: std::error::Error + 'static,
    {
        loop {
            match op() {
                Err(e) if is_out_of_space(&e) && !self.give_up.load(Ordering::Acquire) => {
                    if !self.waiting.swap(true, Ordering::AcqRel) {
                        self.stalls.fetch_add(1, Ordering::AcqRel);
                        tracing::warn!(error = %e, source = ?std::error::Error::source(&e).map(ToString::to_string),
                            "no space left for the crawl output: waiting for space (fetching pauses)");
                    }
                    std::thread::sleep(self.retry_every);
                }
                result => {
                    if self.waiting.swap(false, Ordering::AcqRel) && result.is_ok() {
                        tracing::info!("crawl output written again after waiting for space");
                    }
                    return result;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserves_parse() {
        let cases: &[(&str, Reserve)] = &[
            ("auto", Reserve::Auto),
            ("AUTO", Reserve::Auto),
            ("64M", Reserve::Bytes(64 << 20)),
            ("1G", Reserve::Bytes(1 << 30)),
            ("1GiB", Reserve::Bytes(1 << 30)),
            ("512kb", Reserve::Bytes(512 << 10)),
            ("1.5m", Reserve::Bytes(3 << 19)),
            ("1048576", Reserve::Bytes(1 << 20)),
            ("0", Reserve::Bytes(0)),
            ("5%", Reserve::Percent(5.0)),
            (" 0.5 % ", Reserve::Percent(0.5)),
            ("100%", Reserve::Percent(100.0)),
        ];
        for (text, want) in cases {
            assert_eq!(text.parse::<Reserve>().as_ref(), Ok(want), "{text}");
        }
        for bad in [
            "", "M", "12q", "-1M", "101%", "-1%", "1e400", "nan%", "5%%", "1.2.3G",
        ] {
            assert!(bad.parse::<Reserve>().is_err(), "{bad:?} parsed");
        }
        let e = "12q".parse::<Reserve>().err().map(|e| e.to_string());
        assert!(e.is_some_and(|m| m.contains("\"12q\"") && m.contains("5%")));
    }

    #[test]
    fn auto_reserve_is_the_smaller_of_1_gib_and_5_percent() {
        const GIB: u64 = 1 << 30;
        assert_eq!(Reserve::Auto.bytes_of(10 * GIB), GIB / 2);
        assert_eq!(Reserve::Auto.bytes_of(20 * GIB), GIB);
        assert_eq!(Reserve::Auto.bytes_of(4000 * GIB), GIB);
        assert_eq!(Reserve::Auto.bytes_of(40 << 20), 2 << 20);
        assert_eq!(Reserve::Percent(10.0).bytes_of(1000), 100);
        assert_eq!(Reserve::Bytes(7).bytes_of(1000), 7);
        assert!(!Reserve::Bytes(0).is_enabled());
        assert!(Reserve::Auto.is_enabled());
    }

    fn space(free_mib: u64) -> Space {
        Space {
            free_bytes: free_mib << 20,
            total_bytes: 1000 << 20,
        }
    }

    /// A table of measurements and the change each must cause: pause under the
    /// reserve, no flapping inside the hysteresis band, resume above it.
    #[test]
    fn pauses_under_the_reserve_and_resumes_above_it() {
        let t0 = Instant::now();
        let mut w = DiskWatch::new(Reserve::Bytes(32 << 20), t0);
        assert!(w.is_due(t0));
        // (free MiB, output blocked, expected: None / Some(true) paused / Some(false) resumed)
        let steps: &[(u64, bool, Option<bool>)] = &[
            (100, false, None),
            (33, false, None),
            (31, false, Some(true)),
            (10, false, None),
            (32, false, None), // at the reserve, inside the band (32 + 2 MiB)
            (33, false, None),
            (34, true, None), // enough space, but the output thread still waits
            (34, false, Some(false)),
            (40, false, None),
            (40, true, Some(true)), // a write met ENOSPC: pause though statvfs looks fine
            (40, false, Some(false)),
        ];
        for (i, (free, blocked, want)) in steps.iter().enumerate() {
            let now = t0 + Duration::from_secs(i as u64 + 1);
            let got = w.observe(space(*free), *blocked, now);
            let got = got.map(|c| matches!(c, Change::Paused { .. }));
            assert_eq!(got, *want, "step {i}: {free} MiB free, blocked {blocked}");
            assert!(!w.is_due(now) && w.is_due(now + PROBE_INTERVAL));
        }
        let s = w.stats(t0 + Duration::from_secs(20));
        assert_eq!(s.pauses, 2);
        assert!(!s.paused);
        // Paused at steps 3..8 (5 s) and 10..11 (1 s).
        assert!((s.paused_secs - 6.0).abs() < 1e-9, "{s:?}");
        assert_eq!(s.free_bytes, 40 << 20);
        assert_eq!(s.reserve_bytes, 32 << 20);
    }

    #[test]
    fn the_reserve_holds_a_checkpoint() {
        let t0 = Instant::now();
        let mut w = DiskWatch::new(Reserve::Bytes(8 << 20), t0);
        w.set_checkpoint_bytes(40 << 20);
        assert_eq!(w.reserve_bytes(space(500)), 50 << 20);
        let c = w.observe(space(49), false, t0);
        assert!(
            matches!(c, Some(Change::Paused { reserve_bytes, cause: Cause::LowSpace, .. }) if reserve_bytes == 50 << 20)
        );
        // A checkpoint that failed after writing 60 MiB needed more: 75 MiB now, resume
        // at 79.6; the free space measured after does not matter.
        assert_eq!(w.checkpoint_failed(60 << 20, space(900), t0), None);
        assert_eq!(w.reserve_bytes(space(60)), 75 << 20);
        assert_eq!(w.observe(space(79), false, t0), None);
        assert!(matches!(
            w.observe(space(80), false, t0),
            Some(Change::Resumed { .. })
        ));
        // A running crawl whose checkpoint fails pauses.
        assert!(matches!(
            w.checkpoint_failed(0, space(90), t0),
            Some(Change::Paused {
                cause: Cause::WriteFailed,
                ..
            })
        ));
    }

    #[test]
    fn a_zero_reserve_turns_the_watch_off() {
        let t0 = Instant::now();
        let mut w = DiskWatch::new(Reserve::Bytes(0), t0);
        assert!(!w.is_due(t0));
        assert_eq!(w.observe(space(0), false, t0), None);
        assert_eq!(w.stats(t0).reserve_bytes, 0);
    }

    #[test]
    fn probe_measures_a_real_filesystem() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let s = probe(dir.path()).unwrap_or_else(|e| panic!("statvfs: {e}"));
        assert!(s.total_bytes > 0 && s.free_bytes <= s.total_bytes, "{s:?}");
        let gone = probe(&dir.path().join("missing")).err();
        assert_eq!(gone.map(|e| e.kind()), Some(io::ErrorKind::NotFound));
        assert!(probe(Path::new("a\0b")).is_err());
    }

    #[derive(Debug, thiserror::Error)]
    #[error("cannot write x")]
    struct Wrapped(#[source] io::Error);

    #[test]
    fn out_of_space_is_found_in_the_source_chain() {
        let full = Wrapped(io::Error::from_raw_os_error(libc::ENOSPC));
        assert!(is_out_of_space(&full));
        assert!(is_out_of_space(&io::Error::from_raw_os_error(libc::EDQUOT)));
        assert!(!is_out_of_space(&Wrapped(io::Error::from_raw_os_error(
            libc::EIO
        ))));
        assert!(!is_out_of_space(&Wrapped(io::Error::other("no"))));
    }

    #[test]
    fn a_stalled_write_is_retried_until_space_returns() {
        let stall = WriteStall::new(Duration::ZERO);
        let mut calls = 0;
        let mut seen_waiting = false;
        let r: Result<u32, Wrapped> = stall.retry(|| {
            calls += 1;
            seen_waiting |= stall.is_waiting();
            if calls < 4 {
                Err(Wrapped(io::Error::from_raw_os_error(libc::ENOSPC)))
            } else {
                Ok(7)
            }
        });
        assert_eq!(r.ok(), Some(7));
        assert_eq!(calls, 4);
        assert!(seen_waiting && !stall.is_waiting());
        assert_eq!(stall.stalls(), 1);
        // Other errors are returned at once.
        let mut calls = 0;
        let r: Result<(), Wrapped> = stall.retry(|| {
            calls += 1;
            Err(Wrapped(io::Error::from_raw_os_error(libc::EIO)))
        });
        assert!(r.is_err() && calls == 1);
        // After give_up, lack of space is returned too.
        stall.give_up();
        let r: Result<(), Wrapped> =
            stall.retry(|| Err(Wrapped(io::Error::from_raw_os_error(libc::ENOSPC))));
        assert!(r.is_err() && !stall.is_waiting());
    }

    #[test]
    fn unfinished_checkpoints_are_discarded_and_the_current_one_kept() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let root = dir.path();
        for d in ["cp-000001", "cp-000002", "tmp-000003"] {
            std::fs::create_dir(root.join(d)).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(root.join(d).join("f"), b"12345").unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(root.join("CURRENT"), b"cp-000001").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join("CURRENT.tmp"), b"cp-000002").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            discard_unfinished_checkpoints(root),
            Discarded {
                entries: 3,
                bytes: 10
            }
        );
        let mut left: Vec<String> = std::fs::read_dir(root)
            .unwrap_or_else(|e| panic!("{e}"))
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["CURRENT", "cp-000001"]);
        assert_eq!(dir_bytes(&root.join("cp-000001")), 5);
        assert_eq!(dir_bytes(&root.join("nope")), 0);
    }
}
