//! The per-host robots.txt fetch policy: an explicit state machine the engine drives.
//!
//! Sans-IO in the manner of quinn-proto: the engine asks [`RobotsPolicy::poll_fetch`]
//! what to fetch, performs the request itself, and feeds back the outcome with
//! [`RobotsPolicy::on_response`] or [`RobotsPolicy::on_network_error`]; the time is
//! always passed in (`now: Instant`), never read. The states are
//!
//! ```text
//!            poll_fetch              2xx / 4xx / 304
//! NeedsFetch ----------> Fetching ------------------> Ready(rules, fresh_until)
//!                         |  ^  3xx + Location (≤5)     |  fresh_until passed:
//!                         |  +--------------------------+  poll_fetch revalidates
//!                         | 429 / 5xx / network error
//!                         v
//!                  Unreachable(since, retry_at) --poll_fetch at retry_at--> Fetching
//! ```
//!
//! The readings of RFC 9309 behind each transition are in `docs/robots.md`.

#![deny(clippy::indexing_slicing)]

use std::time::{Duration, Instant};

use url::Url;

use super::parse::{Mode, ParseReport, RobotsTxt};
use super::rules::{Decision, Reason, Rules};
use crate::http::parse_http_date;

/// How a 401 or 403 answer to `/robots.txt` is read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Forbidden4xx {
    /// RFC 9309 §2.3.1.3: like any 4xx, "unavailable", no restrictions.
    #[default]
    Allow,
    /// The older reading of *HTTP: The Definitive Guide*: the site is off limits.
    Disallow,
}

/// Settings of the fetch policy. Every duration has its unit in the type.
#[derive(Clone, Debug)]
pub struct PolicyConfig {
    /// The crawler's `User-Agent` (only its product token is used for matching).
    pub agent: String,
    /// RFC 9309 or 1996 conventions.
    pub mode: Mode,
    /// The reading of 401/403 (`--robots-4xx`).
    pub forbidden: Forbidden4xx,
    /// Freshness when the response says nothing (RFC 9309 §2.4: 24 hours).
    pub default_ttl: Duration,
    /// Upper bound on freshness whatever the headers say (24 hours).
    pub max_ttl: Duration,
    /// Lower bound on freshness, so `no-cache` or a past `Expires` cannot make the
    /// crawler refetch robots.txt before every page.
    pub min_ttl: Duration,
    /// First retry delay after a failure; doubled on each further failure.
    pub retry_initial: Duration,
    /// Longest retry delay.
    pub retry_max: Duration,
    /// How long a robots.txt may stay unreachable before RFC 9309 §2.3.1.4's "MAY
    /// assume unavailable" applies (30 days).
    pub unreachable_grace: Duration,
    /// Redirects followed per fetch (RFC 9309 §2.3.1.2: at least five).
    pub max_redirects: u8,
    /// Largest crawl-delay honoured; longer values are capped to it.
    pub crawl_delay_cap: Duration,
}

impl PolicyConfig {
    /// The defaults described in `docs/robots.md`, for the given agent.
    pub fn new(agent: &str) -> PolicyConfig {
        PolicyConfig {
            agent: agent.to_owned(),
            mode: Mode::Rfc9309,
            forbidden: Forbidden4xx::Allow,
            default_ttl: Duration::from_secs(24 * 3600),
            max_ttl: Duration::from_secs(24 * 3600),
            min_ttl: Duration::from_secs(5 * 60),
            retry_initial: Duration::from_secs(60),
            retry_max: Duration::from_secs(6 * 3600),
            unreachable_grace: Duration::from_secs(30 * 24 * 3600),
            max_redirects: 5,
            crawl_delay_cap: Duration::from_secs(30),
        }
    }
}

/// The effective rules of a host.
#[derive(Clone, Debug)]
pub enum HostRules {
    /// A robots.txt was fetched (2xx) and parsed.
    Parsed(Rules),
    /// Unavailable (4xx, too many redirects): no restrictions.
    AllowAll,
    /// 401/403 under [`Forbidden4xx::Disallow`].
    DisallowAll,
}

impl HostRules {
    fn decide(&self, url: &str) -> Decision<'_> {
        match self {
            HostRules::Parsed(rules) => rules.decide(url),
            HostRules::AllowAll => Decision {
                allowed: true,
                reason: Reason::Unavailable,
            },
            HostRules::DisallowAll => Decision {
                allowed: false,
                reason: Reason::Forbidden,
            },
        }
    }

    fn heap_bytes(&self) -> usize {
        match self {
            HostRules::Parsed(rules) => rules.heap_bytes(),
            _ => 0,
        }
    }
}

/// Validators kept for a conditional re-fetch (`If-None-Match`, `If-Modified-Since`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Validators {
    /// The `ETag` of the cached copy.
    pub etag: Option<String>,
    /// The `Last-Modified` of the cached copy.
    pub last_modified: Option<String>,
}

/// A host with usable rules.
#[derive(Clone, Debug)]
pub struct Ready {
    /// The rules.
    pub rules: HostRules,
    /// Until when they may be used without revalidation.
    pub fresh_until: Instant,
    /// For the conditional re-fetch.
    pub validators: Validators,
}

/// A host whose robots.txt could not be fetched (429, 5xx, network error).
#[derive(Clone, Debug)]
pub struct Unreachable {
    /// When the current run of failures began.
    pub since: Instant,
    /// When to try again.
    pub retry_at: Instant,
    /// Failures in a row.
    pub failures: u32,
    /// The last good copy, used once the failure run exceeds the grace period.
    pub last_good: Option<Box<Ready>>,
}

/// What a fetch in flight replaces, restored or extended by its outcome.
#[derive(Clone, Debug)]
pub enum Prior {
    /// First fetch for this host.
    Nothing,
    /// Revalidating expired rules (their answers are used meanwhile).
    Revalidating(Box<Ready>),
    /// Retrying after failures.
    Retrying(Unreachable),
}

/// A fetch of `/robots.txt` (or a redirect target) in flight.
#[derive(Clone, Debug)]
pub struct Fetching {
    /// The URL being fetched.
    pub url: Url,
    /// Redirects followed so far.
    pub redirects: u8,
    /// The state before the fetch.
    pub prior: Prior,
}

/// The states of a host's robots.txt.
#[derive(Clone, Debug)]
pub enum RobotsState {
    /// Nothing known: fetch before any other URL of the host.
    NeedsFetch,
    /// A request is in flight.
    Fetching(Fetching),
    /// Rules are known (possibly expired: see [`RobotsPolicy::poll_fetch`]).
    Ready(Ready),
    /// The last attempts failed.
    Unreachable(Unreachable),
}

/// The request the engine should make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchRequest {
    /// `/robots.txt` of the host, or a redirect target (possibly on another host).
    pub url: Url,
    /// Send as `If-None-Match`.
    pub if_none_match: Option<String>,
    /// Send as `If-Modified-Since`.
    pub if_modified_since: Option<String>,
}

/// A response to a [`FetchRequest`], as the HTTP layer read it.
#[derive(Clone, Copy, Debug)]
pub struct RobotsResponse<'a> {
    /// The status code.
    pub status: u16,
    /// Header fields, names in any case; repeated fields appear repeatedly.
    pub headers: &'a [(&'a str, &'a [u8])],
    /// The body (decoded); only the first 500 KiB are parsed.
    pub body: &'a [u8],
}

impl RobotsResponse<'_> {
    fn header_values<'h>(&'h self, name: &'h str) -> impl Iterator<Item = &'h str> + 'h {
        // Values borrow from the response, not from `name`; `'h` covers both.
        self.headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .filter_map(|(_, v)| std::str::from_utf8(v).ok())
            .map(str::trim)
    }

    fn header<'h>(&'h self, name: &'h str) -> Option<&'h str> {
        self.header_values(name).next()
    }
}

/// What the engine does next after an outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// The host's state is settled; [`RobotsPolicy::check`] answers.
    Done,
    /// Follow a redirect: fetch this next and report its outcome here.
    Fetch(FetchRequest),
    /// No fetch was in flight; the outcome was ignored.
    NotFetching,
}

/// The answer for a URL of the host.
#[derive(Clone, Copy, Debug)]
pub enum Access<'r> {
    /// robots.txt must be (re)fetched first; do not fetch the URL yet.
    Pending,
    /// A verdict.
    Decided(Decision<'r>),
}

impl Access<'_> {
    /// `Some(allowed)` once decided.
    pub fn is_allowed(&self) -> Option<bool> {
        match self {
            Access::Pending => None,
            Access::Decided(d) => Some(d.allowed),
        }
    }
}

/// The robots.txt URL of the host (scheme, host and port) of `url`.
///
/// # Errors
/// `None` for URLs without a host (`mailto:`, `data:`), which robots.txt cannot cover.
pub fn robots_url(url: &Url) -> Option<Url> {
    url.host_str()?;
    let mut robots = url.clone();
    robots.set_path("/robots.txt");
    robots.set_query(None);
    robots.set_fragment(None);
    // Credentials never go into the robots.txt request.
    robots.set_username("").ok()?;
    robots.set_password(None).ok()?;
    Some(robots)
}

/// One host's robots.txt policy.
#[derive(Clone, Debug)]
pub struct RobotsPolicy {
    robots_url: Url,
    state: RobotsState,
    /// What the parser saw in the last 2xx body, until the engine takes it for the
    /// crawl log and the stats (no silent limits: the caps of `robots/parse.rs`).
    parsed: Option<ParseReport>,
    /// robots.txt fetches started for this host (first, refreshes, retries; the hops
    /// of one redirect chain are one fetch), kept across spills and checkpoints so
    /// the cache can prove it does not refetch what it already knows.
    fetches: u32,
}

impl RobotsPolicy {
    /// A host that has not been fetched yet. `robots_url` is the host's
    /// `/robots.txt` (see [`robots_url`]).
    pub fn new(robots_url: Url) -> RobotsPolicy {
        RobotsPolicy {
            robots_url,
            state: RobotsState::NeedsFetch,
            parsed: None,
            fetches: 0,
        }
    }

    /// A policy in a given state: how a checkpoint's robots file is restored
    /// (`robots/persist.rs`), with the fetches counted so far. Only `Ready` and
    /// `Unreachable` are ever restored.
    pub(crate) fn restored(robots_url: Url, state: RobotsState, fetches: u32) -> RobotsPolicy {
        RobotsPolicy {
            robots_url,
            state,
            parsed: None,
            fetches,
        }
    }

    /// robots.txt fetches started for this host so far (a redirect chain is one).
    pub fn fetches(&self) -> u32 {
        self.fetches
    }

    /// Gives up the fetch in flight as if it had never been started (the answer
    /// failed on this process's own limits, which says nothing about the host): the
    /// state before it comes back (expired rules, the failure run it retried, or
    /// nothing), so the next fetch is as conditional as this one was and no failure
    /// is counted. The fetch stays counted. False if no fetch was in flight.
    pub fn abandon_fetch(&mut self) -> bool {
        match std::mem::replace(&mut self.state, RobotsState::NeedsFetch) {
            RobotsState::Fetching(f) => {
                self.state = match f.prior {
                    Prior::Nothing => RobotsState::NeedsFetch,
                    Prior::Revalidating(r) => RobotsState::Ready(*r),
                    Prior::Retrying(u) => RobotsState::Unreachable(u),
                };
                true
            }
            other => {
                self.state = other;
                false
            }
        }
    }

    /// The parse report of the last 2xx robots.txt fed to [`RobotsPolicy::on_response`],
    /// once: whether the file was over the size cap, how many lines were cut or
    /// ignored. `None` if no body was parsed since the last call.
    pub fn take_parse_report(&mut self) -> Option<ParseReport> {
        self.parsed.take()
    }

    /// The current state.
    pub fn state(&self) -> &RobotsState {
        &self.state
    }

    /// The host's `/robots.txt` URL.
    pub fn robots_url(&self) -> &Url {
        &self.robots_url
    }

    /// Starts a fetch if one is due: first contact, expired rules (a conditional
    /// request), or a retry time reached. Moves to `Fetching`.
    pub fn poll_fetch(&mut self, now: Instant) -> Option<FetchRequest> {
        let due = match &self.state {
            RobotsState::NeedsFetch => true,
            RobotsState::Fetching(_) => false,
            RobotsState::Ready(r) => now >= r.fresh_until,
            RobotsState::Unreachable(u) => now >= u.retry_at,
        };
        if !due {
            return None;
        }
        let prior = match std::mem::replace(&mut self.state, RobotsState::NeedsFetch) {
            RobotsState::Ready(r) => Prior::Revalidating(Box::new(r)),
            RobotsState::Unreachable(u) => Prior::Retrying(u),
            _ => Prior::Nothing,
        };
        let validators = match &prior {
            Prior::Revalidating(r) => r.validators.clone(),
            Prior::Retrying(u) => u
                .last_good
                .as_ref()
                .map(|r| r.validators.clone())
                .unwrap_or_default(),
            Prior::Nothing => Validators::default(),
        };
        let url = self.robots_url.clone();
        self.fetches = self.fetches.saturating_add(1);
        self.state = RobotsState::Fetching(Fetching {
            url: url.clone(),
            redirects: 0,
            prior,
        });
        Some(FetchRequest {
            url,
            if_none_match: validators.etag,
            if_modified_since: validators.last_modified,
        })
    }

    /// When the policy next wants [`RobotsPolicy::poll_fetch`] called: expiry of the
    /// rules or the retry time. `None` while fetching or before the first fetch.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match &self.state {
            RobotsState::Ready(r) => Some(r.fresh_until),
            RobotsState::Unreachable(u) => Some(u.retry_at),
            _ => None,
        }
    }

    /// Feeds the response to the fetch in flight.
    pub fn on_response(
        &mut self,
        now: Instant,
        response: &RobotsResponse<'_>,
        config: &PolicyConfig,
    ) -> Step {
        let fetching = match std::mem::replace(&mut self.state, RobotsState::NeedsFetch) {
            RobotsState::Fetching(f) => f,
            other => {
                self.state = other;
                return Step::NotFetching;
            }
        };
        let ttl = freshness(response, config);
        let fresh_until = now.checked_add(ttl).unwrap_or(now);
        let ready = |rules: HostRules, validators: Validators| Ready {
            rules,
            fresh_until,
            validators,
        };
        self.state = match response.status {
            200..=299 => {
                let txt = RobotsTxt::parse(response.body, config.mode);
                self.parsed = Some(txt.report());
                let rules = txt.rules_for(&config.agent);
                RobotsState::Ready(ready(HostRules::Parsed(rules), validators_of(response)))
            }
            304 => match fetching.prior {
                Prior::Revalidating(old) => {
                    let mut validators = old.validators.clone();
                    let fresh = validators_of(response);
                    validators.etag = fresh.etag.or(validators.etag);
                    validators.last_modified = fresh.last_modified.or(validators.last_modified);
                    RobotsState::Ready(ready(old.rules, validators))
                }
                Prior::Retrying(Unreachable {
                    last_good: Some(old),
                    ..
                }) => {
                    let validators = old.validators.clone();
                    RobotsState::Ready(ready(old.rules, validators))
                }
                // A 304 to an unconditional request is a server fault: retry later.
                prior => failure(now, prior, None, config),
            },
            300..=399 => {
                let target = response
                    .header("location")
                    .and_then(|loc| fetching.url.join(loc).ok())
                    .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some());
                match target {
                    Some(url) if fetching.redirects < config.max_redirects => {
                        let request = FetchRequest {
                            url: url.clone(),
                            if_none_match: None,
                            if_modified_since: None,
                        };
                        self.state = RobotsState::Fetching(Fetching {
                            url,
                            redirects: fetching.redirects + 1,
                            prior: fetching.prior,
                        });
                        return Step::Fetch(request);
                    }
                    // Too many redirects, or none usable: "unavailable" (§2.3.1.2).
                    _ => RobotsState::Ready(ready(HostRules::AllowAll, Validators::default())),
                }
            }
            401 | 403 if config.forbidden == Forbidden4xx::Disallow => {
                RobotsState::Ready(ready(HostRules::DisallowAll, Validators::default()))
            }
            429 => failure(now, fetching.prior, retry_after(response), config),
            400..=499 => RobotsState::Ready(ready(HostRules::AllowAll, Validators::default())),
            503 => failure(now, fetching.prior, retry_after(response), config),
            _ => failure(now, fetching.prior, None, config),
        };
        Step::Done
    }

    /// The fetch in flight failed below HTTP (DNS, connect, TLS, timeout, bad
    /// response): unreachable, disallow all, retry with backoff.
    pub fn on_network_error(&mut self, now: Instant, config: &PolicyConfig) -> Step {
        match std::mem::replace(&mut self.state, RobotsState::NeedsFetch) {
            RobotsState::Fetching(f) => {
                self.state = failure(now, f.prior, None, config);
                Step::Done
            }
            other => {
                self.state = other;
                Step::NotFetching
            }
        }
    }

    /// The answer for `url` (absolute URL or path) of this host at `now`.
    pub fn check(&self, url: &str, now: Instant, config: &PolicyConfig) -> Access<'_> {
        match &self.state {
            RobotsState::NeedsFetch => Access::Pending,
            RobotsState::Fetching(f) => match &f.prior {
                Prior::Nothing => Access::Pending,
                // Stale rules answer for the short time a revalidation takes.
                Prior::Revalidating(old) => Access::Decided(old.rules.decide(url)),
                Prior::Retrying(u) => Access::Decided(unreachable_decision(u, url, now, config)),
            },
            RobotsState::Ready(r) if now >= r.fresh_until => Access::Pending,
            RobotsState::Ready(r) => Access::Decided(r.rules.decide(url)),
            RobotsState::Unreachable(u) => {
                Access::Decided(unreachable_decision(u, url, now, config))
            }
        }
    }

    /// The rules in force, if any were fetched (the current or last good copy).
    pub fn rules(&self) -> Option<&Rules> {
        let ready = match &self.state {
            RobotsState::Ready(r) => Some(r),
            RobotsState::Fetching(Fetching {
                prior: Prior::Revalidating(r),
                ..
            }) => Some(&**r),
            RobotsState::Fetching(Fetching {
                prior: Prior::Retrying(u),
                ..
            })
            | RobotsState::Unreachable(u) => u.last_good.as_deref(),
            _ => None,
        }?;
        match &ready.rules {
            HostRules::Parsed(rules) => Some(rules),
            _ => None,
        }
    }

    /// The crawl-delay the host asks for, capped at `config.crawl_delay_cap`.
    pub fn crawl_delay(&self, config: &PolicyConfig) -> Option<Duration> {
        self.rules()?
            .crawl_delay()
            .map(|d| d.min(config.crawl_delay_cap))
    }

    /// Approximate heap bytes held, for the byte-bounded cache.
    pub fn heap_bytes(&self) -> usize {
        let ready_bytes = |r: &Ready| {
            r.rules.heap_bytes()
                + r.validators.etag.as_ref().map_or(0, String::len)
                + r.validators.last_modified.as_ref().map_or(0, String::len)
        };
        let state = match &self.state {
            RobotsState::NeedsFetch => 0,
            RobotsState::Ready(r) => ready_bytes(r),
            RobotsState::Fetching(f) => {
                f.url.as_str().len()
                    + match &f.prior {
                        Prior::Nothing => 0,
                        Prior::Revalidating(r) => ready_bytes(r),
                        Prior::Retrying(u) => u.last_good.as_deref().map_or(0, ready_bytes),
                    }
            }
            RobotsState::Unreachable(u) => u.last_good.as_deref().map_or(0, ready_bytes),
        };
        state + self.robots_url.as_str().len() + std::mem::size_of::<RobotsPolicy>()
    }
}

/// RFC 9309 §2.3.1.4: complete disallow while unreachable; after the grace period
/// (30 days), the last good copy if there is one, else "unavailable" (allow).
fn unreachable_decision<'r>(
    u: &'r Unreachable,
    url: &str,
    now: Instant,
    config: &PolicyConfig,
) -> Decision<'r> {
    if now.saturating_duration_since(u.since) < config.unreachable_grace {
        return Decision {
            allowed: false,
            reason: Reason::Unreachable,
        };
    }
    match &u.last_good {
        Some(ready) => ready.rules.decide(url),
        None => Decision {
            allowed: true,
            reason: Reason::Unavailable,
        },
    }
}

/// The next `Unreachable` state after a failure, with exponential backoff (and at
/// least the server's `Retry-After`, both capped at `retry_max`).
fn failure(
    now: Instant,
    prior: Prior,
    retry_after: Option<Duration>,
    config: &PolicyConfig,
) -> RobotsState {
    let (since, failures, last_good) = match prior {
        Prior::Nothing => (now, 1, None),
        Prior::Revalidating(ready) => (now, 1, Some(ready)),
        Prior::Retrying(u) => (u.since, u.failures.saturating_add(1), u.last_good),
    };
    let shift = failures.saturating_sub(1).min(20);
    let backoff = config
        .retry_initial
        .saturating_mul(1 << shift)
        .min(config.retry_max);
    let delay = retry_after
        .map_or(backoff, |r| r.max(backoff))
        .min(config.retry_max);
    RobotsState::Unreachable(Unreachable {
        since,
        retry_at: now.checked_add(delay).unwrap_or(now),
        failures,
        last_good,
    })
}

fn validators_of(response: &RobotsResponse<'_>) -> Validators {
    Validators {
        etag: response.header("etag").map(str::to_owned),
        last_modified: response.header("last-modified").map(str::to_owned),
    }
}

/// `Retry-After` as delta-seconds, or as an HTTP-date relative to the `Date` header.
fn retry_after(response: &RobotsResponse<'_>) -> Option<Duration> {
    let value = response.header("retry-after")?;
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = parse_http_date(value)?;
    let date = parse_http_date(response.header("date")?)?;
    Some(Duration::from_secs(
        u64::try_from(at.saturating_sub(date)).unwrap_or(0),
    ))
}

/// The freshness lifetime of a robots.txt response (RFC 9111 §4.2.1): `max-age` wins,
/// else `Expires - Date`, else the default; always within `[min_ttl, max_ttl]`.
pub fn freshness(response: &RobotsResponse<'_>, config: &PolicyConfig) -> Duration {
    let clamp = |d: Duration| d.clamp(config.min_ttl, config.max_ttl.max(config.min_ttl));
    let mut no_cache = false;
    for value in response.header_values("cache-control") {
        for directive in value.split(',') {
            let directive = directive.trim();
            let (name, arg) = directive.split_once('=').unwrap_or((directive, ""));
            let name = name.trim();
            if name.eq_ignore_ascii_case("max-age") {
                let digits = arg.trim().trim_matches('"');
                return match digits.parse::<u64>() {
                    Ok(secs) => clamp(Duration::from_secs(secs)),
                    // All digits but too large for u64: as long as allowed.
                    Err(_) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
                        clamp(Duration::MAX)
                    }
                    Err(_) => clamp(Duration::ZERO),
                };
            }
            if name.eq_ignore_ascii_case("no-cache") || name.eq_ignore_ascii_case("no-store") {
                no_cache = true;
            }
        }
    }
    if no_cache {
        return clamp(Duration::ZERO);
    }
    if let Some(expires) = response.header("expires") {
        let Some(expires) = parse_http_date(expires) else {
            // RFC 9111 §5.3: an invalid Expires means "already expired".
            return clamp(Duration::ZERO);
        };
        if let Some(date) = response.header("date").and_then(parse_http_date) {
            let secs = u64::try_from(expires.saturating_sub(date)).unwrap_or(0);
            return clamp(Duration::from_secs(secs));
        }
    }
    clamp(config.default_ttl)
}

#[cfg(test)]
mod tests;
