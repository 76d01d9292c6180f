//! The robots cache in a checkpoint: one `robots-NNNN.bin` file per shard, so a
//! resumed crawl does not fetch robots.txt again for every host it already knew.
//!
//! ```text
//! header:  b"TRWLROB\0" | version: u32 LE (3)
//! record:  varint payload_len | crc32(payload): u32 LE | payload
//! payload: type u8 ('M' meta, 'T' tier, 'E' entry, 'Z' end) | body
//! meta (first): varint agent_len | agent | mode u8 | forbidden u8 | varint wall_ms
//! tier (after the meta, if any): varint anchor_wall_ms | varint n,
//!   n x (varint name_len | name | varint len): the disk tier's log files kept beside
//!   the file (hard links), oldest first, each to be read up to `len` bytes
//! entry (one host each):
//!   varint url_len | robots_url | varint fetches | state u8 (1 Ready, 2 Unreachable)
//!   Ready:       ready
//!   Unreachable: varint since_ms | varint retry_at_ms | varint failures
//!                | u8 has_last_good | [ready]
//! ready:   varint fresh_until_ms | opt etag | opt last_modified | host_rules
//! opt:     u8 0 | u8 1, varint len, bytes
//! host_rules: u8 0 AllowAll | 1 DisallowAll | 2 Parsed, rules
//! rules:   mode u8 | u8 has_delay [varint secs, varint nanos]
//!          | varint n, n x (varint len, sitemap) | varint n, n x varint group_line
//!          | varint n, n x (kind u8, varint line, varint len, normalized pattern)
//! end (last):  varint entries
//! ```
//!
//! Times are absolute wall-clock milliseconds since the Unix epoch: an `Instant` does
//! not survive a restart, so the remaining freshness (or backoff) is carried as an
//! expiry date and turned back into an `Instant` on load. Rules are stored compiled
//! (kind, original line, normalized pattern) and rebuilt with [`Rules::from_stored`];
//! the original line survives, so a restored rule still reports `robots:line-N`.
//!
//! The file is a cache, unlike the frontier: a record whose checksum fails is skipped
//! (its host's robots.txt is simply fetched again), and reading goes on with the next
//! record; a length past the end stops the file, and a file without its end record is
//! reported as truncated (the entries before the cut are still used). The meta record names the agent,
//! mode and 401/403 reading the rules were compiled for; a resume with different
//! settings ignores the file, since the stored rules would answer for another crawler.
//!
//! Version 2 frames records with the shared record format of `crate::disk` (a varint
//! length); version 1 (a u32 length) is refused as a bad header, which a resume treats
//! like any unusable robots file: its hosts' robots.txt are fetched again. Version 3
//! adds each host's robots.txt fetch count (`fetches`, the cache's proof that it does
//! not refetch what it knows); version 2 files are refused the same way. The tier
//! record (2026-12) keeps version 3: a build without it skips the record as an unknown
//! type and refetches the tier's hosts; a file without it holds every host inline.
//!
//! The disk tier's hosts are not copied into the file at each checkpoint: its log
//! files are append-only, so the checkpoint gives each a second name (a hard link) and
//! records the length written so far; a resume reads them through, oldest first (a
//! later record of a host replaces an earlier one, and the file's own entries, the
//! hosts in RAM, come last and win). The tier's times count from its anchor instant
//! written as 2^42 ms; `anchor_wall_ms` is that instant's wall-clock time.
//!
//! The same entry encoding is the record of the cache's disk tier (`robots/spill`),
//! whose times are counted from an anchor of its own process rather than the epoch.
//!
//! The encoding and decoding here are sans-IO (bytes and clocks in, values out); the
//! file functions (in the private `file` submodule, re-exported here) do the I/O.

#![deny(clippy::indexing_slicing)]

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use url::Url;

use super::parse::{product_token, Mode, RuleKind};
use super::policy::{
    Fetching, Forbidden4xx, HostRules, PolicyConfig, Prior, Ready, RobotsPolicy, RobotsState,
    Unreachable, Validators,
};
use super::rules::Rules;
use crate::disk::{put_bytes, put_varint, take_bytes, take_varint, Format, VarintError};
use crate::routing::HostKey;

/// The robots file format: magic `TRWLROB\0`, version 3.
pub const FORMAT: Format = Format::new(*b"TRWLROB\0", 3, MAX_RECORD_BYTES);
pub(super) const TYPE_META: u8 = b'M';
pub(super) const TYPE_ENTRY: u8 = b'E';
pub(super) const TYPE_END: u8 = b'Z';
pub(super) const TYPE_TIER: u8 = b'T';

/// The disk tier's log files a checkpoint keeps beside its robots file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TierFiles {
    /// Wall-clock milliseconds of the tier's anchor instant (its records' time 2^42).
    pub anchor_wall_ms: u64,
    /// File names (in the robots file's directory) and the bytes to read of each,
    /// oldest first.
    pub files: Vec<(String, u64)>,
}

/// Encodes a tier record's body.
pub fn encode_tier(tier: &TierFiles, out: &mut Vec<u8>) {
    put_varint(out, tier.anchor_wall_ms);
    put_varint(out, tier.files.len() as u64);
    for (name, len) in &tier.files {
        put_bytes(out, name.as_bytes());
        put_varint(out, *len);
    }
}

/// Decodes a tier record's body.
///
/// # Errors
/// A malformed body, or a name that is not a plain file name.
pub fn decode_tier(payload: &[u8]) -> Result<TierFiles, DecodeError> {
    let mut i = Input(payload);
    let anchor_wall_ms = i.varint("tier anchor")?;
    let n = i.varint("tier files")?;
    let mut files = Vec::new();
    for _ in 0..n {
        let name = std::str::from_utf8(i.bytes("tier file")?)
            .map_err(|_| DecodeError::Malformed("tier file"))?;
        // A name, never a path: a damaged or hostile file must not point elsewhere.
        if name.is_empty() || name.contains('/') || name.starts_with('.') {
            return Err(DecodeError::Malformed("tier file"));
        }
        let len = i.varint("tier length")?;
        files.push((name.to_owned(), len));
    }
    if !i.0.is_empty() {
        return Err(DecodeError::Malformed("trailing bytes"));
    }
    Ok(TierFiles {
        anchor_wall_ms,
        files,
    })
}
/// Header bytes before the first record.
pub const HEADER_BYTES: u64 = crate::disk::HEADER_BYTES as u64;
/// A record larger than this is not written (the host is refetched after a resume) and
/// is damage when read. Only the first 500 KiB of a robots.txt are parsed, and
/// normalization at most triples a pattern, so real entries stay far below.
pub const MAX_RECORD_BYTES: usize = 4 << 20;

/// Why an entry could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The payload ends early, has an unknown tag or a count beyond its length.
    Malformed(&'static str),
    /// The stored robots.txt URL does not parse or has no host.
    BadUrl,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Malformed(what) => write!(f, "malformed robots entry: {what}"),
            Self::BadUrl => write!(f, "robots entry with an unusable robots.txt URL"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// What the rules of a file were compiled for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Meta {
    /// The crawler's product token (lower case), as matched against `user-agent`.
    pub agent_token: Vec<u8>,
    pub mode: Mode,
    pub forbidden: Forbidden4xx,
    /// When the file was written (Unix milliseconds).
    pub written_ms: u64,
}

impl Meta {
    /// The meta of a crawl with `config`, written at `wall_ms`.
    pub fn of(config: &PolicyConfig, wall_ms: u64) -> Meta {
        Meta {
            agent_token: product_token(config.agent.as_bytes()).to_vec(),
            mode: config.mode,
            forbidden: config.forbidden,
            written_ms: wall_ms,
        }
    }

    /// Whether rules stored under this meta answer for a crawl with `config`.
    pub fn matches(&self, config: &PolicyConfig) -> bool {
        self.agent_token[..] == product_token(config.agent.as_bytes())[..]
            && self.mode == config.mode
            && self.forbidden == config.forbidden
    }
}

/// A `Ready` state with its expiry as a wall-clock time.
#[derive(Clone, Debug)]
pub struct StoredReady {
    pub rules: HostRules,
    /// Unix milliseconds after which the rules must be revalidated.
    pub fresh_until_ms: u64,
    pub validators: Validators,
}

/// The states worth keeping across a restart.
#[derive(Clone, Debug)]
pub enum StoredState {
    Ready(StoredReady),
    Unreachable {
        since_ms: u64,
        retry_at_ms: u64,
        failures: u32,
        last_good: Option<StoredReady>,
    },
}

/// One host's entry as stored.
#[derive(Clone, Debug)]
pub struct StoredEntry {
    pub key: HostKey,
    pub robots_url: Url,
    pub state: StoredState,
    /// robots.txt fetches started for the host so far ([`RobotsPolicy::fetches`]).
    pub fetches: u32,
}

/// A pair of clocks read at the same moment: the monotonic one the policies use and
/// the wall clock a file can carry across a restart.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    pub now: Instant,
    /// Unix milliseconds at `now`.
    pub wall_ms: u64,
}

impl Clock {
    /// Reads both clocks.
    pub fn now() -> Clock {
        Clock {
            now: Instant::now(),
            wall_ms: unix_ms(SystemTime::now()),
        }
    }

    pub(crate) fn to_wall(self, t: Instant) -> u64 {
        if t >= self.now {
            self.wall_ms.saturating_add(millis(t - self.now))
        } else {
            self.wall_ms.saturating_sub(millis(self.now - t))
        }
    }

    /// The `Instant` of a wall-clock time, at most `cap` in the future. A time so far
    /// in the past that `Instant` cannot express it becomes `now`.
    fn to_instant(self, ms: u64, cap: Duration) -> Instant {
        if ms >= self.wall_ms {
            let ahead = Duration::from_millis(ms - self.wall_ms).min(cap);
            self.now.checked_add(ahead).unwrap_or(self.now)
        } else {
            self.now
                .checked_sub(Duration::from_millis(self.wall_ms - ms))
                .unwrap_or(self.now)
        }
    }
}

/// Unix milliseconds of `t` (0 before the epoch).
pub fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, millis)
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl StoredReady {
    fn of(r: &Ready, clock: Clock) -> StoredReady {
        StoredReady {
            rules: r.rules.clone(),
            fresh_until_ms: clock.to_wall(r.fresh_until),
            validators: r.validators.clone(),
        }
    }

    fn into_ready(self, clock: Clock, caps: Caps) -> Ready {
        Ready {
            rules: self.rules,
            // Never fresher than a live response could make it.
            fresh_until: clock.to_instant(self.fresh_until_ms, caps.ttl),
            validators: self.validators,
        }
    }
}

/// How far in the future a restored time may lie: a file from another process is
/// capped by the policy's limits; the disk tier's records, written by this process
/// against its own anchor, come back exactly.
#[derive(Clone, Copy, Debug)]
struct Caps {
    ttl: Duration,
    retry: Duration,
    since: Duration,
}

impl Caps {
    fn of(config: &PolicyConfig) -> Caps {
        Caps {
            ttl: config.max_ttl,
            retry: config.retry_max,
            since: Duration::ZERO,
        }
    }

    const EXACT: Caps = Caps {
        ttl: Duration::MAX,
        retry: Duration::MAX,
        since: Duration::MAX,
    };
}

impl StoredState {
    /// What of a live state is kept: `Ready` and `Unreachable` as they are; a fetch in
    /// flight as the state it started from (expired rules, or the failure run it
    /// retries, both then due again at once); nothing for a host never fetched.
    pub fn of(state: &RobotsState, clock: Clock) -> Option<StoredState> {
        let unreachable = |u: &Unreachable| StoredState::Unreachable {
            since_ms: clock.to_wall(u.since),
            retry_at_ms: clock.to_wall(u.retry_at),
            failures: u.failures,
            last_good: u.last_good.as_deref().map(|r| StoredReady::of(r, clock)),
        };
        match state {
            RobotsState::NeedsFetch
            | RobotsState::Fetching(Fetching {
                prior: Prior::Nothing,
                ..
            }) => None,
            RobotsState::Ready(r) => Some(StoredState::Ready(StoredReady::of(r, clock))),
            RobotsState::Fetching(Fetching {
                prior: Prior::Revalidating(r),
                ..
            }) => Some(StoredState::Ready(StoredReady::of(r, clock))),
            RobotsState::Fetching(Fetching {
                prior: Prior::Retrying(u),
                ..
            })
            | RobotsState::Unreachable(u) => Some(unreachable(u)),
        }
    }

    /// The live state at `clock`. Expired rules stay expired (the next URL of the host
    /// revalidates them with the stored validators); future times are capped by the
    /// policy's longest freshness and longest retry delay.
    pub fn into_state(self, clock: Clock, config: &PolicyConfig) -> RobotsState {
        self.into_state_capped(clock, Caps::of(config))
    }

    fn into_state_capped(self, clock: Clock, caps: Caps) -> RobotsState {
        match self {
            StoredState::Ready(r) => RobotsState::Ready(r.into_ready(clock, caps)),
            StoredState::Unreachable {
                since_ms,
                retry_at_ms,
                failures,
                last_good,
            } => RobotsState::Unreachable(Unreachable {
                since: clock.to_instant(since_ms, caps.since),
                retry_at: clock.to_instant(retry_at_ms, caps.retry),
                failures,
                last_good: last_good.map(|r| Box::new(r.into_ready(clock, caps))),
            }),
        }
    }
}

impl StoredEntry {
    /// The same entry with every time moved from one clock's milliseconds to another's:
    /// `from` in this entry's clock is `to` in the new one (the disk tier counts from its
    /// anchor, `spill::ANCHOR_MS`; a checkpoint in wall-clock time).
    #[must_use]
    pub fn rebased(mut self, from: u64, to: u64) -> StoredEntry {
        let move_ms = |t: &mut u64| *t = t.saturating_sub(from).saturating_add(to);
        let move_ready = |r: &mut StoredReady| move_ms(&mut r.fresh_until_ms);
        match &mut self.state {
            StoredState::Ready(r) => move_ready(r),
            StoredState::Unreachable {
                since_ms,
                retry_at_ms,
                last_good,
                ..
            } => {
                move_ms(since_ms);
                move_ms(retry_at_ms);
                if let Some(r) = last_good {
                    move_ready(r);
                }
            }
        }
        self
    }

    /// The live policy.
    pub fn into_policy(self, clock: Clock, config: &PolicyConfig) -> (HostKey, RobotsPolicy) {
        let state = self.state.into_state(clock, config);
        (
            self.key,
            RobotsPolicy::restored(self.robots_url, state, self.fetches),
        )
    }

    /// The live policy of an entry this process wrote against `clock` (the disk
    /// tier's anchor): times come back as they were, uncapped (to the millisecond).
    pub fn into_policy_exact(self, clock: Clock) -> (HostKey, RobotsPolicy) {
        let state = self.state.into_state_capped(clock, Caps::EXACT);
        (
            self.key,
            RobotsPolicy::restored(self.robots_url, state, self.fetches),
        )
    }

    /// The entry of a live policy at `clock`; `None` for a state not worth keeping
    /// (see [`StoredState::of`]).
    pub fn of(key: &HostKey, policy: &RobotsPolicy, clock: Clock) -> Option<StoredEntry> {
        Some(StoredEntry {
            key: key.clone(),
            robots_url: policy.robots_url().clone(),
            state: StoredState::of(policy.state(), clock)?,
            fetches: policy.fetches(),
        })
    }
}

// ---- encoding ----

fn put_opt(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        None => out.push(0),
        Some(s) => {
            out.push(1);
            put_bytes(out, s.as_bytes());
        }
    }
}

fn mode_byte(m: Mode) -> u8 {
    match m {
        Mode::Rfc9309 => 0,
        Mode::Draft1996 => 1,
    }
}

/// Encodes the meta record's payload.
pub fn encode_meta(meta: &Meta, out: &mut Vec<u8>) {
    put_bytes(out, &meta.agent_token);
    out.push(mode_byte(meta.mode));
    out.push(match meta.forbidden {
        Forbidden4xx::Allow => 0,
        Forbidden4xx::Disallow => 1,
    });
    put_varint(out, meta.written_ms);
}

fn encode_rules(r: &Rules, out: &mut Vec<u8>) {
    out.push(mode_byte(r.mode()));
    match r.crawl_delay() {
        None => out.push(0),
        Some(d) => {
            out.push(1);
            put_varint(out, d.as_secs());
            put_varint(out, u64::from(d.subsec_nanos()));
        }
    }
    put_varint(out, r.sitemaps().len() as u64);
    for s in r.sitemaps() {
        put_bytes(out, s.as_bytes());
    }
    put_varint(out, r.group_lines().len() as u64);
    for &l in r.group_lines() {
        put_varint(out, u64::from(l));
    }
    put_varint(out, r.rules().len() as u64);
    for rule in r.rules() {
        out.push(match rule.kind() {
            RuleKind::Allow => 0,
            RuleKind::Disallow => 1,
        });
        put_varint(out, u64::from(rule.line()));
        put_bytes(out, rule.pattern());
    }
}

fn encode_ready(r: &StoredReady, out: &mut Vec<u8>) {
    put_varint(out, r.fresh_until_ms);
    put_opt(out, r.validators.etag.as_deref());
    put_opt(out, r.validators.last_modified.as_deref());
    match &r.rules {
        HostRules::AllowAll => out.push(0),
        HostRules::DisallowAll => out.push(1),
        HostRules::Parsed(rules) => {
            out.push(2);
            encode_rules(rules, out);
        }
    }
}

/// Encodes one host's entry (appending to `out`).
pub fn encode_entry(e: &StoredEntry, out: &mut Vec<u8>) {
    put_bytes(out, e.robots_url.as_str().as_bytes());
    put_varint(out, u64::from(e.fetches));
    match &e.state {
        StoredState::Ready(r) => {
            out.push(1);
            encode_ready(r, out);
        }
        StoredState::Unreachable {
            since_ms,
            retry_at_ms,
            failures,
            last_good,
        } => {
            out.push(2);
            put_varint(out, *since_ms);
            put_varint(out, *retry_at_ms);
            put_varint(out, u64::from(*failures));
            match last_good {
                None => out.push(0),
                Some(r) => {
                    out.push(1);
                    encode_ready(r, out);
                }
            }
        }
    }
}

// ---- decoding ----

struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    fn byte(&mut self, what: &'static str) -> Result<u8, DecodeError> {
        let (&b, rest) = self.0.split_first().ok_or(DecodeError::Malformed(what))?;
        self.0 = rest;
        Ok(b)
    }

    fn varint(&mut self, what: &'static str) -> Result<u64, DecodeError> {
        take_varint(&mut self.0).map_err(|_: VarintError| DecodeError::Malformed(what))
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, DecodeError> {
        u32::try_from(self.varint(what)?).map_err(|_| DecodeError::Malformed(what))
    }

    fn bytes(&mut self, what: &'static str) -> Result<&'a [u8], DecodeError> {
        take_bytes(&mut self.0).map_err(|_| DecodeError::Malformed(what))
    }

    fn string(&mut self, what: &'static str) -> Result<String, DecodeError> {
        std::str::from_utf8(self.bytes(what)?)
            .map(str::to_owned)
            .map_err(|_| DecodeError::Malformed(what))
    }

    fn opt(&mut self, what: &'static str) -> Result<Option<String>, DecodeError> {
        match self.byte(what)? {
            0 => Ok(None),
            1 => self.string(what).map(Some),
            _ => Err(DecodeError::Malformed(what)),
        }
    }

    /// A count of items each at least one byte long: never more than what is left,
    /// so a damaged count cannot make a decoder allocate beyond the record.
    fn count(&mut self, what: &'static str) -> Result<usize, DecodeError> {
        let n = usize::try_from(self.varint(what)?).map_err(|_| DecodeError::Malformed(what))?;
        if n > self.0.len() {
            return Err(DecodeError::Malformed(what));
        }
        Ok(n)
    }

    fn mode(&mut self) -> Result<Mode, DecodeError> {
        match self.byte("mode")? {
            0 => Ok(Mode::Rfc9309),
            1 => Ok(Mode::Draft1996),
            _ => Err(DecodeError::Malformed("mode")),
        }
    }
}

/// Decodes the meta record's payload.
///
/// # Errors
/// [`DecodeError::Malformed`] for a payload that is not a meta record.
pub fn decode_meta(payload: &[u8]) -> Result<Meta, DecodeError> {
    let mut i = Input(payload);
    let agent_token = i.bytes("agent")?.to_vec();
    let mode = i.mode()?;
    let forbidden = match i.byte("forbidden")? {
        0 => Forbidden4xx::Allow,
        1 => Forbidden4xx::Disallow,
        _ => return Err(DecodeError::Malformed("forbidden")),
    };
    let written_ms = i.varint("time")?;
    if !i.0.is_empty() {
        return Err(DecodeError::Malformed("trailing bytes"));
    }
    Ok(Meta {
        agent_token,
        mode,
        forbidden,
        written_ms,
    })
}

fn decode_rules(i: &mut Input<'_>) -> Result<Rules, DecodeError> {
    let mode = i.mode()?;
    let crawl_delay = match i.byte("crawl-delay")? {
        0 => None,
        1 => {
            let secs = i.varint("crawl-delay")?;
            let nanos = i.u32("crawl-delay")?;
            if nanos >= 1_000_000_000 {
                return Err(DecodeError::Malformed("crawl-delay"));
            }
            Some(Duration::new(secs, nanos))
        }
        _ => return Err(DecodeError::Malformed("crawl-delay")),
    };
    let n = i.count("sitemaps")?;
    let mut sitemaps = Vec::with_capacity(n);
    for _ in 0..n {
        sitemaps.push(i.string("sitemap")?);
    }
    let n = i.count("group lines")?;
    let mut group_lines = Vec::with_capacity(n);
    for _ in 0..n {
        group_lines.push(i.u32("group line")?);
    }
    let n = i.count("rules")?;
    let mut rules = Vec::with_capacity(n);
    for _ in 0..n {
        let kind = match i.byte("rule kind")? {
            0 => RuleKind::Allow,
            1 => RuleKind::Disallow,
            _ => return Err(DecodeError::Malformed("rule kind")),
        };
        let line = i.u32("rule line")?;
        let pattern = i.bytes("pattern")?.to_vec();
        rules.push((kind, line, pattern));
    }
    Ok(Rules::from_stored(
        mode,
        rules,
        crawl_delay,
        sitemaps,
        group_lines,
    ))
}

fn decode_ready(i: &mut Input<'_>) -> Result<StoredReady, DecodeError> {
    let fresh_until_ms = i.varint("expiry")?;
    let etag = i.opt("etag")?;
    let last_modified = i.opt("last-modified")?;
    let rules = match i.byte("rules kind")? {
        0 => HostRules::AllowAll,
        1 => HostRules::DisallowAll,
        2 => HostRules::Parsed(decode_rules(i)?),
        _ => return Err(DecodeError::Malformed("rules kind")),
    };
    Ok(StoredReady {
        rules,
        fresh_until_ms,
        validators: Validators {
            etag,
            last_modified,
        },
    })
}

/// Decodes one host's entry.
///
/// # Errors
/// [`DecodeError`] for a payload that does not decode completely.
pub fn decode_entry(payload: &[u8]) -> Result<StoredEntry, DecodeError> {
    let mut i = Input(payload);
    let url = std::str::from_utf8(i.bytes("url")?).map_err(|_| DecodeError::BadUrl)?;
    let robots_url = Url::parse(url).map_err(|_| DecodeError::BadUrl)?;
    let key = HostKey::of(&robots_url).ok_or(DecodeError::BadUrl)?;
    if robots_url.path() != "/robots.txt" || !matches!(robots_url.scheme(), "http" | "https") {
        return Err(DecodeError::BadUrl);
    }
    let fetches = i.u32("fetches")?;
    let state = match i.byte("state")? {
        1 => StoredState::Ready(decode_ready(&mut i)?),
        2 => {
            let since_ms = i.varint("since")?;
            let retry_at_ms = i.varint("retry")?;
            let failures = i.u32("failures")?;
            let last_good = match i.byte("last good")? {
                0 => None,
                1 => Some(decode_ready(&mut i)?),
                _ => return Err(DecodeError::Malformed("last good")),
            };
            StoredState::Unreachable {
                since_ms,
                retry_at_ms,
                failures,
                last_good,
            }
        }
        _ => return Err(DecodeError::Malformed("state")),
    };
    if !i.0.is_empty() {
        return Err(DecodeError::Malformed("trailing bytes"));
    }
    Ok(StoredEntry {
        key,
        robots_url,
        state,
        fetches,
    })
}
