//! The engine's side of the control API (`docs/control.md`): the state an
//! operator's commands change, read by the shards, the core and the coordinator.
//!
//! The listener thread (`metrics/server.rs`) parses a request with `crate::control`
//! and calls [`Operator::apply`]; nothing here blocks a shard. Pause is a flag the
//! shards read each turn (beside the disk watch's); checkpoint and stop are flags the
//! coordinator takes on its next turn (a stop is the stop flag of the library API:
//! final checkpoint, clean exit); an add is a batch file in the drop directory, the
//! path of `trawl add`; blocks and delays are [`Rules`] the core reads when it takes
//! a URL (`core/schedule.rs`), kept in each checkpoint (`operator.json`) and restored
//! by a resume.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::control::{
    ApiError, Block, Command, OperatorRules, Rules, ADDR_FILE, RULES_FILE, TOKEN_FILE,
};

/// How long the `checkpoint` verb waits for its checkpoint to commit.
const CHECKPOINT_WAIT: Duration = Duration::from_secs(10);

/// How long a caller of live figures waits for the coordinator's next turn (it
/// turns every 20 ms, longer only while it writes a checkpoint).
const STATS_WAIT: Duration = Duration::from_secs(5);

/// What the operator has set, and what the engine reports back.
pub(crate) struct Operator {
    out: PathBuf,
    token: String,
    floor_ms: u64,
    paused: AtomicBool,
    checkpoint: AtomicBool,
    /// The epoch of the last checkpoint committed (the `checkpoint` verb waits for it).
    committed_epoch: AtomicU64,
    stop: AtomicBool,
    /// Set by the coordinator once the crawl is stopping (adds are refused then).
    ending: AtomicBool,
    /// The blocks and raised delays, which the crawl cores read (`CoreShared`).
    pub rules: std::sync::Arc<OperatorRules>,
    /// Live figures for the library's [`super::CrawlHandle::stats`]: asked for by a
    /// caller, published by the coordinator on its next turn.
    live: LiveStats,
}

/// The last `stats.json` content published, and whether a caller waits for a new one.
#[derive(Default)]
struct LiveStats {
    latest: std::sync::Mutex<Option<super::Stats>>,
    generation: AtomicU64,
    asked: AtomicBool,
    running: AtomicBool,
}

/// The operator's figures in `stats.json` and `/api/control`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct OperatorStats {
    /// Fetching paused by the operator (`pause`), apart from the disk watch's pause.
    pub paused: bool,
    /// URLs refused by a block (crawl-log annotation `filter:blocked-by-operator`).
    pub blocked_urls: u64,
    pub rules: Rules,
}

impl Operator {
    /// An operator for the crawl writing to `out` with `--delay-ms` `floor`, with a
    /// fresh random token.
    pub fn new(out: &Path, floor: Duration) -> Self {
        Self {
            out: out.to_owned(),
            token: new_token(),
            floor_ms: u64::try_from(floor.as_millis()).unwrap_or(u64::MAX),
            paused: AtomicBool::new(false),
            checkpoint: AtomicBool::new(false),
            committed_epoch: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            ending: AtomicBool::new(false),
            rules: std::sync::Arc::default(),
            live: LiveStats::default(),
        }
    }

    /// The coordinator runs (true) or has finished (false): whether a caller asking
    /// for live figures should wait for the next turn.
    pub fn set_running(&self, running: bool) {
        self.live.running.store(running, Ordering::Release);
    }

    /// Live figures were asked for since the last call.
    pub fn take_stats_request(&self) -> bool {
        self.live.asked.swap(false, Ordering::AcqRel)
    }

    /// The coordinator's answer: the figures as of now (`finish` "running"), or the
    /// final ones.
    pub fn publish_stats(&self, stats: super::Stats) {
        if let Ok(mut latest) = self.live.latest.lock() {
            *latest = Some(stats);
        }
        self.live.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// Figures as of now: while the crawl runs, asks the coordinator and waits (at
    /// most [`STATS_WAIT`]) for its next turn; otherwise the last ones published
    /// (`None` before the crawl started).
    pub fn live_stats(&self) -> Option<super::Stats> {
        let before = self.live.generation.load(Ordering::Acquire);
        self.live.asked.store(true, Ordering::Release);
        let deadline = Instant::now() + STATS_WAIT;
        while self.live.running.load(Ordering::Acquire)
            && self.live.generation.load(Ordering::Acquire) == before
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.live.latest.lock().ok().and_then(|l| l.clone())
    }

    /// Asks for a pause (true) or the end of one (false).
    pub fn set_paused(&self, paused: bool) {
        let _ = self.apply(if paused {
            Command::Pause
        } else {
            Command::Resume
        });
    }

    /// Asks for a stop: final checkpoint, then the crawl ends.
    pub fn stop(&self) {
        let _ = self.apply(Command::Stop);
    }

    pub fn token(&self) -> &str {
        &self.token
    }

    pub fn is_paused(&self) -> bool {
        self.paused.load(Ordering::Acquire)
    }

    /// A checkpoint was asked for since the last call.
    pub fn take_checkpoint(&self) -> bool {
        self.checkpoint.swap(false, Ordering::AcqRel)
    }

    /// Checkpoint `epoch` committed (the coordinator says so).
    pub fn checkpoint_committed(&self, epoch: u64) {
        self.committed_epoch.store(epoch, Ordering::Release);
    }

    /// A stop was asked for.
    pub fn is_stop_asked(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    pub fn set_ending(&self) {
        self.ending.store(true, Ordering::Release);
    }

    /// A host's politeness delay as the status page's tables show it: the largest of
    /// `--delay-ms`, its robots.txt `Crawl-delay` and the operator's raised delay.
    pub fn delay_ms(&self) -> impl Fn(&str) -> u64 + '_ {
        let delays = self.rules.crawl_delays();
        move |host| {
            let robots = delays.get(host).copied().unwrap_or(0);
            let operator = self
                .rules
                .delay_of(host)
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
            self.floor_ms.max(robots).max(operator)
        }
    }

    pub fn stats(&self) -> OperatorStats {
        let (rules, blocked_urls) = self.rules.snapshot();
        OperatorStats {
            paused: self.is_paused(),
            blocked_urls,
            rules,
        }
    }

    /// Carries out `command`; the JSON answer on success.
    ///
    /// # Errors
    /// A refused command: a delay under its floor, a full rule set, an add while the
    /// crawl ends or that the drop directory could not take.
    pub fn apply(&self, command: Command) -> Result<serde_json::Value, ApiError> {
        let ok = |verb: &str| serde_json::json!({ "ok": true, "verb": verb });
        match command {
            Command::Pause => {
                self.paused.store(true, Ordering::Release);
                tracing::warn!("paused by the operator: no new fetches until resume");
                Ok(ok("pause"))
            }
            Command::Resume => {
                self.paused.store(false, Ordering::Release);
                tracing::warn!("resumed by the operator");
                Ok(ok("resume"))
            }
            Command::Checkpoint => Ok(self.checkpoint_now()),
            Command::Stop => {
                self.stop.store(true, Ordering::Release);
                tracing::warn!("stop asked by the operator: final checkpoint, then exit");
                Ok(ok("stop"))
            }
            Command::Add(urls) => self.add(&urls),
            Command::Block(b) => self.block(b),
            Command::Delay { host, delay_ms } => self.delay(&host, delay_ms),
        }
    }

    /// Asks for a checkpoint and waits (at most [`CHECKPOINT_WAIT`]) for it to commit:
    /// the coordinator takes it on its next turn unless one is running or the disk
    /// watch holds checkpoints back.
    fn checkpoint_now(&self) -> serde_json::Value {
        if let Some(epoch) = self.checkpoint_wait() {
            return serde_json::json!({
                "ok": true, "verb": "checkpoint", "committed": true, "epoch": epoch,
            });
        }
        serde_json::json!({
            "ok": true, "verb": "checkpoint", "committed": false,
            "message": "asked for; not committed within 10 s (a checkpoint may be running, \
                        or the disk watch holds them back); see checkpoints in /api/status",
        })
    }

    /// Asks for a checkpoint and waits (at most [`CHECKPOINT_WAIT`]) for it to
    /// commit; its epoch, or `None` if none committed in time.
    pub fn checkpoint_wait(&self) -> Option<u64> {
        let before = self.committed_epoch.load(Ordering::Acquire);
        self.checkpoint.store(true, Ordering::Release);
        let deadline = Instant::now() + CHECKPOINT_WAIT;
        while Instant::now() < deadline {
            let now = self.committed_epoch.load(Ordering::Acquire);
            if now > before {
                return Some(now);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    fn add(&self, urls: &[String]) -> Result<serde_json::Value, ApiError> {
        if self.ending.load(Ordering::Acquire) || self.is_stop_asked() {
            return Err(ApiError::new(
                409,
                "ending",
                "the crawl is ending; nothing added",
            ));
        }
        let path = crate::add::write_batch(&self.out, urls).map_err(|e| {
            ApiError::new(503, "add-failed", format!("cannot write the batch: {e}"))
        })?;
        Ok(serde_json::json!({
            "ok": true, "verb": "add", "added": urls.len(),
            "batch": path.display().to_string(),
        }))
    }

    fn block(&self, b: Block) -> Result<serde_json::Value, ApiError> {
        let what = match &b {
            Block::Host(h) => serde_json::json!({ "host": h }),
            Block::Prefix(p) => serde_json::json!({ "prefix": p }),
        };
        let new = self.rules.block(b)?;
        tracing::warn!(rule = %what, "blocked by the operator for the rest of the crawl");
        Ok(serde_json::json!({ "ok": true, "verb": "block", "blocked": what, "new": new }))
    }

    fn delay(&self, host: &str, delay_ms: u64) -> Result<serde_json::Value, ApiError> {
        // The host's robots.txt Crawl-delay, when a fetch met one: the longest over
        // the host keys it names.
        let robots_ms = self.rules.robots_delay_ms(host);
        self.rules
            .set_delay(host, delay_ms, self.floor_ms, robots_ms)?;
        tracing::warn!(host, delay_ms, "host delay raised by the operator");
        Ok(serde_json::json!({
            "ok": true, "verb": "delay", "host": host, "delay_ms": delay_ms,
            "floor_ms": self.floor_ms, "robots_crawl_delay_ms": robots_ms,
        }))
    }

    /// Writes the rules into checkpoint directory `dir` (fsynced; the commit that
    /// follows makes them part of the checkpoint). Nothing when there are none.
    ///
    /// # Errors
    /// The file could not be written.
    pub fn write_rules(&self, dir: &Path) -> std::io::Result<()> {
        let (rules, blocked_urls) = self.rules.snapshot();
        if rules.is_empty() {
            return Ok(());
        }
        let saved = Saved {
            rules,
            blocked_urls,
        };
        let bytes = serde_json::to_vec_pretty(&saved).map_err(std::io::Error::other)?;
        let mut f = std::fs::File::create(dir.join(RULES_FILE))?;
        f.write_all(&bytes)?;
        f.sync_all()
    }

    /// Restores the rules a checkpoint kept (a resume); a damaged file is refused
    /// with an error rather than silently dropping blocks.
    ///
    /// # Errors
    /// The file exists and cannot be read or parsed.
    pub fn restore_rules(&self, dir: &Path) -> Result<(), String> {
        let path = dir.join(RULES_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let Saved {
            rules,
            blocked_urls,
        } = serde_json::from_slice(&bytes)
            .map_err(|e| format!("damaged {}: {e}", path.display()))?;
        self.rules.restore(rules, blocked_urls);
        Ok(())
    }

    /// Writes `OUT/control.addr` and `OUT/control.token` (mode 0600) for `trawl ctl`,
    /// and returns the link that opens the page with the token.
    ///
    /// # Errors
    /// A file could not be written.
    pub fn publish_listener(&self, addr: std::net::SocketAddr) -> std::io::Result<String> {
        write_private(&self.out.join(TOKEN_FILE), self.token.as_bytes())?;
        write_private(&self.out.join(ADDR_FILE), addr.to_string().as_bytes())?;
        Ok(format!("http://{addr}/#token={}", self.token))
    }
}

/// `operator.json` in a checkpoint: the rules, and the URLs they refused so far.
#[derive(Serialize, serde::Deserialize)]
struct Saved {
    #[serde(flatten)]
    rules: Rules,
    #[serde(default)]
    blocked_urls: u64,
}

/// Writes `path` with mode 0600 (replaced atomically: temporary file, rename).
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension("tmp");
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// 32 random bytes from the kernel, as 64 hex digits; two v4 UUIDs if
/// `/dev/urandom` cannot be read.
fn new_token() -> String {
    let mut bytes = [0u8; 32];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        let (a, b) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
        for (dst, src) in bytes
            .iter_mut()
            .zip(a.as_bytes().iter().chain(b.as_bytes()))
        {
            *dst = *src;
        }
    }
    data_encoding::HEXLOWER.encode(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_change_the_state_and_rules_survive_a_checkpoint() {
        let dir = std::env::temp_dir().join(format!("trawl-operator-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let op = Operator::new(&dir, Duration::from_millis(100));
        assert_eq!(op.token().len(), 64);
        op.apply(Command::Pause).unwrap();
        assert!(op.is_paused());
        op.apply(Command::Resume).unwrap();
        assert!(!op.is_paused());
        // A coordinator that commits the checkpoint it is asked for.
        std::thread::scope(|s| {
            s.spawn(|| {
                while !op.take_checkpoint() {
                    std::thread::sleep(Duration::from_millis(5));
                }
                op.checkpoint_committed(7);
            });
            let answer = op.apply(Command::Checkpoint).unwrap();
            assert_eq!(answer["epoch"], 7, "{answer}");
        });
        assert!(!op.take_checkpoint());
        assert!(!op.rules.is_blocked("http://a.test", "http://a.test/"));
        op.apply(Command::Block(Block::host("a.test").unwrap()))
            .unwrap();
        assert!(op.rules.is_blocked("http://a.test", "http://a.test/"));
        op.rules
            .note_crawl_delay("http://b.test", Duration::from_secs(2));
        let low = Command::Delay {
            host: "b.test".to_owned(),
            delay_ms: 1000,
        };
        assert_eq!(op.apply(low).unwrap_err().code, "delay-below-robots");
        let under = Command::Delay {
            host: "c.test".to_owned(),
            delay_ms: 50,
        };
        assert_eq!(op.apply(under).unwrap_err().code, "delay-below-floor");
        let high = Command::Delay {
            host: "b.test".to_owned(),
            delay_ms: 5000,
        };
        op.apply(high).unwrap();
        assert_eq!(
            op.rules.delay_of("http://b.test"),
            Some(Duration::from_secs(5))
        );
        op.write_rules(&dir).unwrap();
        let resumed = Operator::new(&dir, Duration::from_millis(100));
        resumed.restore_rules(&dir).unwrap();
        assert!(resumed.rules.is_blocked("http://a.test", "http://a.test/x"));
        assert_eq!(
            resumed.rules.delay_of("http://b.test"),
            Some(Duration::from_secs(5))
        );
        // One refused before the checkpoint, one after the resume.
        assert_eq!(resumed.stats().blocked_urls, 2);
        let link = op.publish_listener("127.0.0.1:9".parse().unwrap()).unwrap();
        assert!(link.ends_with(op.token()));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join(TOKEN_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        std::fs::write(dir.join(RULES_FILE), b"{not json").unwrap();
        assert!(resumed.restore_rules(&dir).is_err());
        op.apply(Command::Stop).unwrap();
        assert!(op.is_stop_asked());
        let e = op
            .apply(Command::Add(vec!["http://a.test/".to_owned()]))
            .unwrap_err();
        assert_eq!(e.code, "ending");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
