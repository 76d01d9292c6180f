//! The referee: judges a crawl from the server's side, from the request log alone.
//!
//! [`check`] is a pure function of the log lines, the manifest and a [`CheckPolicy`];
//! [`run`] is the `synthweb check` command around it (file reading, printing, exit
//! code). Every rule is documented in `docs/synthweb.md` (section "Referee and
//! manifest"); the short version:
//!
//! * A request's URL is `{scheme}://{host}{target}` with the target brought to canonical
//!   form (unreserved `%XX` decoded, other escapes upper-cased). A target that was not
//!   already canonical, or not in origin form (`/...`), is a violation: the crawler sent
//!   an alias.
//! * **Missed**: an `M` URL with no request. **Forbidden**: an `F` URL with any request.
//! * **Duplicate**: a request for an `M` URL requested before, unless it is a
//!   revalidation (carries `If-None-Match` or `If-Modified-Since`) or a retry (the
//!   previous request for that URL got status 0 = no response, 408, 429 or 5xx). More
//!   than `max_retries` retries of one URL is its own violation. Repeats of unlisted URLs
//!   are counted, not judged: hostile hosts' URLs are unlisted, and the log cannot tell a
//!   response the server cut short (which a crawler may retry) from a complete one.
//! * **robots.txt first**: for each origin (scheme, host, port) with any request other
//!   than `GET /robots.txt`, some `/robots.txt` request of that origin must have been
//!   answered completely (`end_us`) no later than the first other request started
//!   (`t_us`).
//! * **Politeness** is judged per host name (port and scheme stripped: one server, one
//!   host): the largest number of distinct connections with overlapping request
//!   intervals `[t_us, end_us)` (less [`END_STAMP_SLACK_US`] of stamp jitter at the
//!   end), and the smallest gap between two request starts (robots.txt included).
//! * **Identification**: every request carries a non-empty `User-Agent` naming the agent
//!   (its product token appears as a whole word, case-insensitively), a non-empty
//!   `From`, and a `Host`.

use std::collections::{HashMap, HashSet};
use std::fmt::{self, Write as _};
use std::fs::File;
use std::io::{self, BufReader, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;

use crate::formats::{self, FormatError, LogLine, Manifest};

/// How many example URLs (or hosts) each finding keeps.
pub const MAX_EXAMPLES: usize = 20;

/// `synthweb check` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct CheckArgs {
    /// Request log written by `synthweb --log FILE` during the crawl.
    #[arg(long, value_name = "FILE")]
    pub log: PathBuf,
    /// Manifest written by `synthweb --manifest FILE` for the same seed and hosts.
    #[arg(long, value_name = "FILE")]
    pub manifest: PathBuf,
    /// Robots agent (product token) the crawler claims; must match the manifest's
    /// agent. Defaults to the manifest's.
    #[arg(long)]
    pub agent: Option<String>,
    /// Smallest allowed gap between two request starts on one host, in milliseconds.
    /// Not checked when absent.
    #[arg(long, value_name = "D")]
    pub delay_ms: Option<u64>,
    /// Slack on `--delay-ms` for timing noise between the crawler's send and the
    /// server's receive, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 5)]
    pub delay_slack_ms: u64,
    /// Largest allowed number of simultaneous connections to one host. Not checked when
    /// absent.
    #[arg(long, value_name = "C")]
    pub per_host_connections: Option<u32>,
    /// Largest allowed number of simultaneous connections to one server address (the
    /// local IP the server accepted them on, all ports and host names together). Not
    /// checked when absent.
    #[arg(long, value_name = "C")]
    pub per_ip_connections: Option<u32>,
    /// Most retries (requests after a 0/408/429/5xx answer) allowed for one M URL.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub max_retries: u32,
    /// Print the report as one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// What the crawl is judged against, besides the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckPolicy {
    /// Robots product token the User-Agent must contain.
    pub agent: String,
    /// Smallest allowed gap between request starts per host, in microseconds.
    pub min_gap_us: Option<u64>,
    /// Largest allowed number of simultaneous connections per host.
    pub per_host_connections: Option<u32>,
    /// Largest allowed number of simultaneous connections per server address.
    pub per_ip_connections: Option<u32>,
    /// Most retries allowed per URL.
    pub max_retries: u32,
}

impl CheckPolicy {
    /// A policy that checks only what needs no parameter (no delay, no connection cap).
    pub fn new(agent: impl Into<String>) -> Self {
        Self {
            agent: agent.into(),
            min_gap_us: None,
            per_host_connections: None,
            per_ip_connections: None,
            max_retries: 10,
        }
    }
}

/// One kind of rule a crawl can break.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ViolationKind {
    /// A manifest `M` URL was never requested.
    Missed,
    /// A URL was requested again without being a revalidation or a retry.
    Duplicate,
    /// A manifest `F` URL was requested.
    ForbiddenFetched,
    /// A URL was retried more than `max_retries` times.
    ExcessiveRetries,
    /// A request-target was not in canonical form (an alias was fetched).
    NonCanonicalTarget,
    /// An origin was requested before its robots.txt was fetched (or without it).
    RobotsNotFirst,
    /// More simultaneous connections to one host than allowed.
    TooManyConnections,
    /// More simultaneous connections to one server address than allowed.
    TooManyIpConnections,
    /// Two request starts on one host closer than the delay.
    DelayTooShort,
    /// A request without a (non-empty) User-Agent.
    MissingUserAgent,
    /// A User-Agent that does not name the robots agent.
    UserAgentWithoutAgent,
    /// A request without a (non-empty) From header.
    MissingFrom,
    /// A request without a Host header.
    MissingHost,
    /// A manifest `S` URL (listed only by a sitemap) was never requested.
    SitemapMissed,
}

impl ViolationKind {
    /// Short lower-case description for the text report.
    pub fn describe(self) -> &'static str {
        match self {
            ViolationKind::Missed => "manifest URLs never fetched",
            ViolationKind::Duplicate => "URLs fetched more than once",
            ViolationKind::ForbiddenFetched => "forbidden URLs fetched",
            ViolationKind::ExcessiveRetries => "URLs retried too often",
            ViolationKind::NonCanonicalTarget => "non-canonical request targets",
            ViolationKind::RobotsNotFirst => "origins not starting with robots.txt",
            ViolationKind::TooManyConnections => "hosts over the connection limit",
            ViolationKind::TooManyIpConnections => "addresses over the connection limit",
            ViolationKind::DelayTooShort => "hosts under the delay",
            ViolationKind::MissingUserAgent => "requests without User-Agent",
            ViolationKind::UserAgentWithoutAgent => "User-Agents not naming the agent",
            ViolationKind::MissingFrom => "requests without From",
            ViolationKind::MissingHost => "requests without Host",
            ViolationKind::SitemapMissed => "sitemap-only URLs never fetched",
        }
    }
}

/// A count with the first few examples.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Listing {
    /// How many.
    pub count: u64,
    /// Up to [`MAX_EXAMPLES`] of them.
    pub examples: Vec<String>,
}

impl Listing {
    fn push(&mut self, example: impl FnOnce() -> String) {
        self.count += 1;
        if self.examples.len() < MAX_EXAMPLES {
            self.examples.push(example());
        }
    }
}

/// The referee's verdict.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// True when there is no violation.
    pub passed: bool,
    /// Violation kinds found, sorted.
    pub violations: Vec<ViolationKind>,
    /// Agent the User-Agent was checked against.
    pub agent: String,
    /// Log lines read.
    pub requests: u64,
    /// `M` URLs in the manifest.
    pub must: u64,
    /// `M` URLs requested at least once.
    pub must_fetched: u64,
    /// `M` URLs never requested.
    pub missed: Listing,
    /// `F` URLs in the manifest.
    pub forbidden: u64,
    /// Requests for `F` URLs (examples are URLs).
    pub forbidden_fetched: Listing,
    /// Requests that repeat an earlier one without excuse (examples are URLs).
    pub duplicates: Listing,
    /// Requests excused as retries after 0/408/429/5xx.
    pub retries: u64,
    /// Requests excused as conditional revalidations.
    pub revalidations: u64,
    /// URLs retried more than allowed.
    pub excessive_retries: Listing,
    /// Requests for URLs neither in the manifest nor robots.txt (hostile hosts, traps
    /// beyond the budget): not violations by themselves.
    pub unlisted_requests: u64,
    /// Requests for unlisted URLs requested before (not judged: hostile hosts' URLs are
    /// unlisted, and a crawler may retry a response the server cut short).
    pub unlisted_repeats: u64,
    /// Requests whose target was not canonical (examples are targets as sent).
    pub non_canonical_targets: Listing,
    /// Origins requested.
    pub origins: u64,
    /// Requests for `/robots.txt` and the other robots files the manifest names.
    pub robots_requests: u64,
    /// Origins whose first non-robots request came before a complete robots.txt.
    pub robots_not_first: Listing,
    /// Hosts requested.
    pub hosts: u64,
    /// Largest number of simultaneous connections seen on one host.
    pub max_connections: u32,
    /// The host where `max_connections` was seen.
    pub max_connections_host: Option<String>,
    /// Hosts over the `--per-host-connections` limit.
    pub over_connection_limit: Listing,
    /// Server addresses (local IPs) requested.
    pub addresses: u64,
    /// Largest number of simultaneous connections seen on one server address.
    pub max_ip_connections: u32,
    /// The address where `max_ip_connections` was seen.
    pub max_ip_connections_addr: Option<String>,
    /// Addresses over the `--per-ip-connections` limit.
    pub over_ip_connection_limit: Listing,
    /// Smallest gap between two request starts on one host, in microseconds.
    pub min_gap_us: Option<u64>,
    /// The host where `min_gap_us` was seen.
    pub min_gap_host: Option<String>,
    /// Hosts with a gap under `--delay-ms`.
    pub under_delay: Listing,
    /// Requests without a User-Agent.
    pub missing_user_agent: Listing,
    /// Requests whose User-Agent does not name the agent (examples are the values).
    pub user_agent_without_agent: Listing,
    /// Requests without From.
    pub missing_from: Listing,
    /// Requests without Host.
    pub missing_host: Listing,
    /// Requests other than robots and sitemap files (pages, redirects, errors).
    pub page_requests: u64,
    /// Of `page_requests`, those carrying `If-None-Match` or `If-Modified-Since`.
    pub conditional_requests: u64,
    /// Of `page_requests`, those answered `304 Not Modified`.
    pub not_modified: u64,
    /// Body bytes the server wrote for `page_requests` (after content coding).
    pub page_body_bytes: u64,
    /// Of `page_requests`, those for URLs that serve a page: URLs some request of
    /// this log found answered 2xx or 304. Redirects and error URLs, which carry no
    /// validators a re-crawl could send back, are not counted.
    pub requests_for_pages: u64,
    /// Of `requests_for_pages`, those carrying `If-None-Match` or `If-Modified-Since`.
    pub conditional_for_pages: u64,
    /// Of `requests_for_pages`, those answered `304 Not Modified`.
    pub not_modified_for_pages: u64,
    /// Requests for the sitemap files the manifest names (`sitemap_files=`).
    pub sitemap_requests: u64,
    /// `S` URLs in the manifest (pages only sitemaps list).
    pub sitemap_only: u64,
    /// `S` URLs requested at least once.
    pub sitemap_only_fetched: u64,
    /// `S` URLs never requested.
    pub sitemap_missed: Listing,
}

/// Why `synthweb check` could not judge.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// A file could not be opened.
    #[error("cannot open {path}")]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A file is malformed.
    #[error("cannot read {path}")]
    Format {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: FormatError,
    },
    /// `--agent` disagrees with the agent the manifest was computed for.
    #[error("--agent {given} but the manifest was computed for agent {manifest}")]
    AgentMismatch {
        /// The `--agent` value.
        given: String,
        /// The manifest header's agent.
        manifest: String,
    },
    /// Writing the report failed.
    #[error("cannot write the report")]
    Output(#[source] io::Error),
}

/// `synthweb check`: read the files, judge, print. Exit code 0 when the crawl passes, 1
/// when it breaks a rule.
///
/// # Errors
/// Unreadable or malformed files, an agent mismatch, or a failed write: the caller
/// reports them and exits with 2.
pub fn run(args: &CheckArgs) -> Result<ExitCode, CheckError> {
    let open = |path: &PathBuf| {
        File::open(path)
            .map(BufReader::new)
            .map_err(|source| CheckError::Open {
                path: path.clone(),
                source,
            })
    };
    let manifest =
        formats::read_manifest(open(&args.manifest)?).map_err(|source| CheckError::Format {
            path: args.manifest.clone(),
            source,
        })?;
    let lines = formats::read_log(open(&args.log)?).map_err(|source| CheckError::Format {
        path: args.log.clone(),
        source,
    })?;
    let agent = match &args.agent {
        Some(agent) if !agent.eq_ignore_ascii_case(&manifest.header.agent) => {
            return Err(CheckError::AgentMismatch {
                given: agent.clone(),
                manifest: manifest.header.agent.clone(),
            })
        }
        Some(agent) => agent.clone(),
        None => manifest.header.agent.clone(),
    };
    let policy = CheckPolicy {
        agent,
        min_gap_us: args
            .delay_ms
            .map(|d| d.saturating_sub(args.delay_slack_ms).saturating_mul(1000)),
        per_host_connections: args.per_host_connections,
        per_ip_connections: args.per_ip_connections,
        max_retries: args.max_retries,
    };
    let report = check(&lines, &manifest, &policy);
    let mut out = io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report).map_err(io::Error::from)
    } else {
        out.write_all(report.to_string().as_bytes())
    }
    .and_then(|()| out.write_all(b"\n"))
    .map_err(CheckError::Output)?;
    Ok(if report.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Judge a crawl: the log lines (any order), the manifest it must match, the policy.
pub fn check(lines: &[LogLine], manifest: &Manifest, policy: &CheckPolicy) -> Report {
    let mut report = Report {
        agent: policy.agent.clone(),
        requests: u64::try_from(lines.len()).unwrap_or(u64::MAX),
        must: len_u64(manifest.must.len()),
        forbidden: len_u64(manifest.forbidden.len()),
        sitemap_only: len_u64(manifest.sitemap_only.len()),
        ..Report::default()
    };
    // Judge in the order the requests started; the log is written in completion order.
    let mut order: Vec<&LogLine> = lines.iter().collect();
    order.sort_by_key(|line| (line.t_us, line.end_us, line.conn));

    check_identification(&order, policy, &mut report);
    check_urls(&order, manifest, policy, &mut report);
    check_robots_first(&order, manifest, &mut report);
    check_politeness(&order, policy, &mut report);
    check_per_ip(&order, policy, &mut report);

    let mut violations = Vec::new();
    for (listing, kind) in [
        (&report.missed, ViolationKind::Missed),
        (&report.duplicates, ViolationKind::Duplicate),
        (&report.forbidden_fetched, ViolationKind::ForbiddenFetched),
        (&report.excessive_retries, ViolationKind::ExcessiveRetries),
        (
            &report.non_canonical_targets,
            ViolationKind::NonCanonicalTarget,
        ),
        (&report.robots_not_first, ViolationKind::RobotsNotFirst),
        (
            &report.over_connection_limit,
            ViolationKind::TooManyConnections,
        ),
        (
            &report.over_ip_connection_limit,
            ViolationKind::TooManyIpConnections,
        ),
        (&report.under_delay, ViolationKind::DelayTooShort),
        (&report.missing_user_agent, ViolationKind::MissingUserAgent),
        (
            &report.user_agent_without_agent,
            ViolationKind::UserAgentWithoutAgent,
        ),
        (&report.missing_from, ViolationKind::MissingFrom),
        (&report.missing_host, ViolationKind::MissingHost),
        (&report.sitemap_missed, ViolationKind::SitemapMissed),
    ] {
        if listing.count > 0 {
            violations.push(kind);
        }
    }
    violations.sort();
    report.passed = violations.is_empty();
    report.violations = violations;
    report
}

fn len_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// The request-target that is `/robots.txt` for its origin.
const ROBOTS_TARGET: &str = "/robots.txt";

/// The request-targets that are robots files: `/robots.txt` plus the targets of
/// robots.txt redirects the manifest names in its `robots_files=` header parameter
/// (comma-separated). Fetching these is part of obeying robots: they are never
/// duplicates, never "other paths" for the robots-first rule, and not in M or F.
fn robots_files(manifest: &Manifest) -> HashSet<&str> {
    let mut files: HashSet<&str> = manifest
        .header
        .params
        .get(formats::ROBOTS_FILES_PARAM)
        .map(|list| list.split(',').filter(|s| !s.is_empty()).collect())
        .unwrap_or_default();
    files.insert(ROBOTS_TARGET);
    files
}

fn check_identification(order: &[&LogLine], policy: &CheckPolicy, report: &mut Report) {
    let blank = |v: &Option<String>| v.as_deref().is_none_or(|s| s.trim().is_empty());
    for line in order {
        if blank(&line.user_agent) {
            report.missing_user_agent.push(|| line.url());
        } else if let Some(ua) = &line.user_agent {
            if !names_agent(ua, &policy.agent) {
                report.user_agent_without_agent.push(|| ua.clone());
            }
        }
        if blank(&line.from) {
            report.missing_from.push(|| line.url());
        }
        if line.host.is_empty() {
            report
                .missing_host
                .push(|| format!("{} {}", line.local, line.target));
        }
    }
}

/// Whether the User-Agent value contains `agent` as a whole product token (bounded by
/// characters outside `[A-Za-z_-]`), case-insensitively: RFC 9309 §2.2.1 asks crawlers
/// to send the token they match robots.txt groups with.
pub fn names_agent(user_agent: &str, agent: &str) -> bool {
    let is_token = |b: u8| b.is_ascii_alphabetic() || b == b'_' || b == b'-';
    let ua = user_agent.as_bytes();
    let needle = agent.as_bytes();
    if needle.is_empty() || needle.len() > ua.len() {
        return false;
    }
    (0..=ua.len() - needle.len()).any(|start| {
        let end = start + needle.len();
        ua.get(start..end)
            .is_some_and(|w| w.eq_ignore_ascii_case(needle))
            && (start == 0 || ua.get(start - 1).is_some_and(|&b| !is_token(b)))
            && ua.get(end).is_none_or(|&b| !is_token(b))
    })
}

/// What happened to one URL so far.
#[derive(Debug, Default)]
struct UrlState {
    last_status: u16,
    retries: u32,
}

/// Whether a response status excuses asking again: no response at all, a timeout, a
/// rate limit or a server error.
fn is_retryable(status: u16) -> bool {
    matches!(status, 0 | 408 | 429 | 500..=599)
}

/// The request-targets of sitemap files the manifest names (`sitemap_files=`).
fn sitemap_files(manifest: &Manifest) -> HashSet<&str> {
    manifest
        .header
        .params
        .get(formats::SITEMAP_FILES_PARAM)
        .map(|list| list.split(',').filter(|s| !s.is_empty()).collect())
        .unwrap_or_default()
}

fn check_urls(order: &[&LogLine], manifest: &Manifest, policy: &CheckPolicy, report: &mut Report) {
    let robots_files = robots_files(manifest);
    let sitemap_files = sitemap_files(manifest);
    let mut seen: HashMap<String, UrlState> = HashMap::new();
    let mut fetched_must: HashSet<&str> = HashSet::new();
    let mut fetched_sitemap_only: HashSet<&str> = HashSet::new();
    let mut unlisted: HashSet<String> = HashSet::new();
    // Per URL: (requests, conditional, 304, served a page).
    let mut by_url: HashMap<String, (u64, u64, u64, bool)> = HashMap::new();
    for line in order {
        if robots_files.contains(line.target.as_str()) {
            report.robots_requests += 1;
            continue;
        }
        if sitemap_files.contains(line.target.as_str()) {
            report.sitemap_requests += 1;
            continue;
        }
        report.page_requests += 1;
        report.page_body_bytes = report.page_body_bytes.saturating_add(line.body_bytes);
        if line.is_conditional() {
            report.conditional_requests += 1;
        }
        if line.status == 304 {
            report.not_modified += 1;
        }
        let canonical = canonical_target(&line.target);
        let tally = by_url
            .entry(format!("{}://{}{}", line.scheme, line.host, canonical))
            .or_default();
        tally.0 += 1;
        tally.1 += u64::from(line.is_conditional());
        tally.2 += u64::from(line.status == 304);
        tally.3 |= matches!(line.status, 200..=299 | 304);
        // A crawler sends origin-form targets (RFC 9112 3.2.1); anything else is as wrong
        // as an alias.
        if canonical != line.target || !line.target.starts_with('/') {
            report.non_canonical_targets.push(|| line.url());
        }
        let url = format!("{}://{}{}", line.scheme, line.host, canonical);
        match (manifest.must.get(&url), manifest.sitemap_only.get(&url)) {
            (Some(must), _) => {
                fetched_must.insert(must.as_str());
            }
            (None, Some(listed)) => {
                fetched_sitemap_only.insert(listed.as_str());
            }
            (None, None) => {
                if manifest.forbidden.contains(&url) {
                    report.forbidden_fetched.push(|| url.clone());
                } else {
                    report.unlisted_requests += 1;
                    if !unlisted.insert(url) {
                        report.unlisted_repeats += 1;
                    }
                }
                // Repeats are judged for M URLs only (see the module docs).
                continue;
            }
        }
        match seen.get_mut(&url) {
            None => {
                seen.insert(
                    url,
                    UrlState {
                        last_status: line.status,
                        retries: 0,
                    },
                );
            }
            Some(state) => {
                if line.is_conditional() {
                    report.revalidations += 1;
                } else if is_retryable(state.last_status) {
                    report.retries += 1;
                    state.retries += 1;
                    if state.retries == policy.max_retries.saturating_add(1) {
                        report.excessive_retries.push(|| url.clone());
                    }
                } else {
                    report.duplicates.push(|| url.clone());
                }
                state.last_status = line.status;
            }
        }
    }
    for (requests, conditional, not_modified, _) in by_url.values().filter(|t| t.3) {
        report.requests_for_pages += requests;
        report.conditional_for_pages += conditional;
        report.not_modified_for_pages += not_modified;
    }
    report.must_fetched = len_u64(fetched_must.len());
    for url in &manifest.must {
        if !fetched_must.contains(url.as_str()) {
            report.missed.push(|| url.clone());
        }
    }
    report.sitemap_only_fetched = len_u64(fetched_sitemap_only.len());
    for url in &manifest.sitemap_only {
        if !fetched_sitemap_only.contains(url.as_str()) {
            report.sitemap_missed.push(|| url.clone());
        }
    }
}

/// The canonical form of a request-target by trawl's rule 5: `%XX` escapes of
/// unreserved characters (`A-Z a-z 0-9 - . _ ~`) decoded, the hex digits of every other
/// escape upper-cased, raw non-ASCII characters and controls percent-encoded as UTF-8
/// (as URL serialization does), nothing else changed (a `%` not followed by two hex
/// digits stays).
pub fn canonical_target(target: &str) -> String {
    let bytes = target.as_bytes();
    let mut out = String::with_capacity(target.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let escape = match (bytes.get(i + 1), bytes.get(i + 2)) {
            (Some(&h), Some(&l)) if b == b'%' => hex(h).zip(hex(l)).map(|(h, l)| h * 16 + l),
            _ => None,
        };
        match escape {
            Some(v) if v.is_ascii_alphanumeric() || matches!(v, b'-' | b'.' | b'_' | b'~') => {
                out.push(char::from(v));
                i += 3;
            }
            Some(v) => {
                let _ = write!(out, "%{v:02X}");
                i += 3;
            }
            None => {
                // Copy the whole UTF-8 character starting here (targets are `str`).
                let ch = target.get(i..).and_then(|rest| rest.chars().next());
                match ch {
                    // Non-ASCII and controls are percent-encoded in a serialized URL
                    // (WHATWG): a raw one is sent only by a crawler that skipped that.
                    Some(ch) if !ch.is_ascii() || ch.is_ascii_control() => {
                        let mut utf8 = [0u8; 4];
                        for byte in ch.encode_utf8(&mut utf8).bytes() {
                            let _ = write!(out, "%{byte:02X}");
                        }
                        i += ch.len_utf8();
                    }
                    Some(ch) => {
                        out.push(ch);
                        i += ch.len_utf8();
                    }
                    None => break,
                }
            }
        }
    }
    out
}

fn hex(b: u8) -> Option<u8> {
    char::from(b)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

fn check_robots_first(order: &[&LogLine], manifest: &Manifest, report: &mut Report) {
    let robots_files = robots_files(manifest);
    /// Per origin: when its first robots.txt answer completed, and its first other
    /// request started.
    #[derive(Default)]
    struct Origin {
        robots_done_us: Option<u64>,
        first_other: Option<(u64, String)>,
    }
    let mut origins: HashMap<String, Origin> = HashMap::new();
    for line in order {
        if line.host.is_empty() {
            continue; // reported as missing Host; there is no origin to judge.
        }
        let origin = origins.entry(line.origin()).or_default();
        if line.target == ROBOTS_TARGET {
            let done = origin
                .robots_done_us
                .map_or(line.end_us, |d| d.min(line.end_us));
            origin.robots_done_us = Some(done);
        } else if origin.first_other.is_none() && !robots_files.contains(line.target.as_str()) {
            origin.first_other = Some((line.t_us, line.target.clone()));
        }
    }
    report.origins = len_u64(origins.len());
    let mut bad: Vec<String> = origins
        .into_iter()
        .filter_map(|(name, origin)| {
            let (start, target) = origin.first_other?;
            match origin.robots_done_us {
                None => Some(format!("{name}: {target} requested, robots.txt never")),
                // The server stamps a response's end after its last write and its
                // bookkeeping, so a client may have the whole answer (and ask its
                // next URL) before that stamp: the same slack as for overlaps.
                Some(done) if done > start + END_STAMP_SLACK_US => Some(format!(
                    "{name}: {target} requested before robots.txt was answered"
                )),
                Some(_) => None,
            }
        })
        .collect();
    bad.sort();
    for entry in bad {
        report.robots_not_first.push(|| entry);
    }
}

/// The host name of a Host header value: lower-case already, port stripped (IPv6
/// literals keep their brackets).
fn host_name(host: &str) -> &str {
    match host.rfind(':') {
        Some(colon) if !host.get(colon..).is_some_and(|tail| tail.contains(']')) => {
            host.get(..colon).unwrap_or(host)
        }
        _ => host,
    }
}

fn check_politeness(order: &[&LogLine], policy: &CheckPolicy, report: &mut Report) {
    let mut by_host: HashMap<&str, Vec<&LogLine>> = HashMap::new();
    for line in order {
        if !line.host.is_empty() {
            by_host.entry(host_name(&line.host)).or_default().push(line);
        }
    }
    report.hosts = len_u64(by_host.len());
    let mut hosts: Vec<(&str, Vec<&LogLine>)> = by_host.into_iter().collect();
    hosts.sort_by(|a, b| a.0.cmp(b.0));
    for (host, lines) in hosts {
        let connections = max_simultaneous_connections(&lines);
        if connections > report.max_connections {
            report.max_connections = connections;
            report.max_connections_host = Some(host.to_owned());
        }
        if policy
            .per_host_connections
            .is_some_and(|cap| connections > cap)
        {
            report
                .over_connection_limit
                .push(|| format!("{host}: {connections} connections"));
        }
        // `lines` is in start order.
        let gap = lines
            .windows(2)
            .filter_map(|w| Some(w.get(1)?.t_us.saturating_sub(w.first()?.t_us)))
            .min();
        if let Some(gap) = gap {
            if report.min_gap_us.is_none_or(|min| gap < min) {
                report.min_gap_us = Some(gap);
                report.min_gap_host = Some(host.to_owned());
            }
            if policy.min_gap_us.is_some_and(|min| gap < min) {
                report
                    .under_delay
                    .push(|| format!("{host}: {gap} us between request starts"));
            }
        }
    }
}

/// The per-address cap: connections with a request in progress at once, per local IP
/// the server accepted them on (every port, scheme and host name of that address).
/// Idle keep-alive connections are invisible in a request log, so this is a lower
/// bound of the connections the crawler held open.
fn check_per_ip(order: &[&LogLine], policy: &CheckPolicy, report: &mut Report) {
    let mut by_ip: HashMap<std::net::IpAddr, Vec<&LogLine>> = HashMap::new();
    for line in order {
        by_ip
            .entry(line.local.ip().to_canonical())
            .or_default()
            .push(line);
    }
    report.addresses = len_u64(by_ip.len());
    let mut addrs: Vec<_> = by_ip.into_iter().collect();
    addrs.sort_by_key(|(ip, _)| *ip);
    for (ip, lines) in addrs {
        let connections = max_simultaneous_connections(&lines);
        if connections > report.max_ip_connections {
            report.max_ip_connections = connections;
            report.max_ip_connections_addr = Some(ip.to_string());
        }
        if policy
            .per_ip_connections
            .is_some_and(|cap| connections > cap)
        {
            report
                .over_ip_connection_limit
                .push(|| format!("{ip}: {connections} connections"));
        }
    }
}

/// How much earlier than its `end_us` stamp a response may count as over. The server
/// stamps `end_us` when its write of the last byte returns to the task, after an
/// `.await`; a client on loopback can have read that byte and sent its next request (on
/// a new connection, if the old one was closed) before the stamp: a few tens of
/// microseconds on a quiet machine, but on a loaded 2-core one the server task can wait
/// a scheduling period between the write and the stamp (2.6 ms seen in `crawl_e2e`
/// while the whole test suite ran; the crawl log showed the fetch complete before the
/// next one started). Overlaps shorter than this are that race, not two connections at
/// work; a crawler that really used two connections at once shows it on the slow and
/// trickled pages, whose responses last far longer.
pub const END_STAMP_SLACK_US: u64 = 5_000;

/// Largest number of distinct connections with a request in progress at one instant.
/// A request occupies `[t_us, end_us - END_STAMP_SLACK_US)` (never less than one
/// microsecond): one ending when another starts does not overlap it.
fn max_simultaneous_connections(lines: &[&LogLine]) -> u32 {
    // Events sorted by time, ends before starts at the same instant.
    let mut events: Vec<(u64, bool, u64)> = Vec::with_capacity(lines.len() * 2);
    for line in lines {
        events.push((line.t_us, true, line.conn));
        // At least one microsecond long, so that its end never sorts before its start.
        let end = line.end_us.saturating_sub(END_STAMP_SLACK_US);
        events.push((end.max(line.t_us + 1), false, line.conn));
    }
    events.sort_unstable();
    let mut active: HashMap<u64, u32> = HashMap::new();
    let (mut open, mut max) = (0u32, 0u32);
    for (_, is_start, conn) in events {
        let count = active.entry(conn).or_insert(0);
        if is_start {
            if *count == 0 {
                open += 1;
                max = max.max(open);
            }
            *count += 1;
        } else {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open = open.saturating_sub(1);
            }
        }
    }
    max
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.passed { "PASS" } else { "FAIL" };
        writeln!(
            f,
            "synthweb referee: {verdict} ({} requests, agent {})",
            self.requests, self.agent
        )?;
        writeln!(
            f,
            "manifest: {} of {} M URLs fetched, {} missed; {} F URLs, {} requests for them",
            self.must_fetched,
            self.must,
            self.missed.count,
            self.forbidden,
            self.forbidden_fetched.count
        )?;
        writeln!(
            f,
            "repeats: {} duplicates, {} retries, {} revalidations; {} unlisted requests ({} repeated)",
            self.duplicates.count,
            self.retries,
            self.revalidations,
            self.unlisted_requests,
            self.unlisted_repeats
        )?;
        writeln!(
            f,
            "conditional: {} of {} page requests conditional, {} answered 304; {} page body bytes",
            self.conditional_requests, self.page_requests, self.not_modified, self.page_body_bytes
        )?;
        writeln!(
            f,
            "pages: {} of {} requests for pages conditional, {} answered 304 (redirects and error URLs apart)",
            self.conditional_for_pages, self.requests_for_pages, self.not_modified_for_pages
        )?;
        if self.sitemap_only > 0 || self.sitemap_requests > 0 {
            writeln!(
                f,
                "sitemaps: {} requests for sitemap files; {} of {} sitemap-only URLs fetched, {} missed",
                self.sitemap_requests,
                self.sitemap_only_fetched,
                self.sitemap_only,
                self.sitemap_missed.count
            )?;
        }
        writeln!(
            f,
            "robots.txt: {} requests over {} origins, {} origins not starting with it",
            self.robots_requests, self.origins, self.robots_not_first.count
        )?;
        let gap = self
            .min_gap_us
            .map_or("-".to_owned(), |g| format!("{g} us"));
        writeln!(
            f,
            "politeness over {} hosts: at most {} simultaneous connections ({}), smallest gap {} ({})",
            self.hosts,
            self.max_connections,
            self.max_connections_host.as_deref().unwrap_or("-"),
            gap,
            self.min_gap_host.as_deref().unwrap_or("-"),
        )?;
        writeln!(
            f,
            "server addresses: {}, at most {} simultaneous connections on one ({})",
            self.addresses,
            self.max_ip_connections,
            self.max_ip_connections_addr.as_deref().unwrap_or("-"),
        )?;
        writeln!(
            f,
            "identification: {} without User-Agent, {} not naming the agent, {} without From, {} without Host",
            self.missing_user_agent.count,
            self.user_agent_without_agent.count,
            self.missing_from.count,
            self.missing_host.count
        )?;
        for kind in &self.violations {
            let listing = match kind {
                ViolationKind::Missed => &self.missed,
                ViolationKind::Duplicate => &self.duplicates,
                ViolationKind::ForbiddenFetched => &self.forbidden_fetched,
                ViolationKind::ExcessiveRetries => &self.excessive_retries,
                ViolationKind::NonCanonicalTarget => &self.non_canonical_targets,
                ViolationKind::RobotsNotFirst => &self.robots_not_first,
                ViolationKind::TooManyConnections => &self.over_connection_limit,
                ViolationKind::TooManyIpConnections => &self.over_ip_connection_limit,
                ViolationKind::DelayTooShort => &self.under_delay,
                ViolationKind::MissingUserAgent => &self.missing_user_agent,
                ViolationKind::UserAgentWithoutAgent => &self.user_agent_without_agent,
                ViolationKind::MissingFrom => &self.missing_from,
                ViolationKind::MissingHost => &self.missing_host,
                ViolationKind::SitemapMissed => &self.sitemap_missed,
            };
            writeln!(f, "VIOLATION {}: {}", kind.describe(), listing.count)?;
            for example in &listing.examples {
                writeln!(f, "  {example}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::formats::{ManifestHeader, Robots4xx, Scheme};

    const A: &str = "h000001.synth.test:8080";
    const B: &str = "h000002.synth.test:8080";
    const UA: &str = "trawl/0.1 (+https://example.org/trawl)";

    /// A tiny crawl log builder: each request is 10 ms after the previous on its own
    /// host's connection, and lasts 1 ms.
    struct Crawl {
        lines: Vec<LogLine>,
    }

    impl Crawl {
        fn new() -> Self {
            Self { lines: Vec::new() }
        }

        fn req(
            &mut self,
            t_ms: u64,
            conn: u64,
            host: &str,
            target: &str,
            status: u16,
        ) -> &mut LogLine {
            self.lines.push(LogLine {
                t_us: t_ms * 1000,
                end_us: t_ms * 1000 + 1000,
                conn,
                local: "127.0.1.2:8080".parse().unwrap(),
                peer: "127.0.0.1:40000".parse().unwrap(),
                scheme: Scheme::Http,
                host: host.to_owned(),
                method: "GET".to_owned(),
                target: target.to_owned(),
                user_agent: Some(UA.to_owned()),
                from: Some("ops@example.org".to_owned()),
                accept: Some("text/html".to_owned()),
                accept_encoding: Some("gzip".to_owned()),
                if_none_match: None,
                if_modified_since: None,
                referer: None,
                status,
                body_bytes: 100,
            });
            self.lines.last_mut().unwrap()
        }

        /// A clean crawl of the manifest below: robots first, one connection per host,
        /// 10 ms between starts on each host, the two hosts interleaved.
        fn clean() -> Self {
            let mut c = Self::new();
            c.req(0, 1, A, "/robots.txt", 200);
            c.req(5, 2, B, "/robots.txt", 404);
            c.req(10, 1, A, "/", 200);
            c.req(15, 2, B, "/", 200);
            c.req(20, 1, A, "/p/1", 301);
            c.req(25, 2, B, "/p/~x", 503);
            c.req(30, 1, A, "/p/2", 200);
            c.req(35, 2, B, "/p/~x", 200); // retry after 503
            c.req(40, 1, A, "/p/1", 304).if_none_match = Some("\"e\"".to_owned()); // revalidation
            c.req(45, 2, B, "/hostile", 0); // unlisted
            c
        }
    }

    fn manifest() -> Manifest {
        let urls = |list: &[&str]| {
            list.iter()
                .map(|s| (*s).to_owned())
                .collect::<BTreeSet<_>>()
        };
        Manifest {
            header: ManifestHeader {
                seed: 1,
                hosts: 2,
                profile: "default".to_owned(),
                agent: "trawl".to_owned(),
                robots_4xx: Robots4xx::Allow,
                params: Default::default(),
            },
            must: urls(&[
                "http://h000001.synth.test:8080/",
                "http://h000001.synth.test:8080/p/1",
                "http://h000001.synth.test:8080/p/2",
                "http://h000002.synth.test:8080/",
                "http://h000002.synth.test:8080/p/~x",
            ]),
            forbidden: urls(&["http://h000001.synth.test:8080/private/x"]),
            sitemap_only: BTreeSet::new(),
        }
    }

    fn strict() -> CheckPolicy {
        CheckPolicy {
            agent: "trawl".to_owned(),
            min_gap_us: Some(10_000),
            per_host_connections: Some(1),
            per_ip_connections: Some(2),
            max_retries: 2,
        }
    }

    fn judge(crawl: &Crawl) -> Report {
        check(&crawl.lines, &manifest(), &strict())
    }

    /// Assert the report fails for exactly `kind`.
    fn fails_for(crawl: &Crawl, kind: ViolationKind) -> Report {
        let report = judge(crawl);
        assert!(!report.passed, "{report}");
        assert_eq!(report.violations, vec![kind], "{report}");
        report
    }

    #[test]
    fn clean_log_passes() {
        let report = judge(&Crawl::clean());
        assert!(report.passed, "{report}");
        assert_eq!(report.must_fetched, 5);
        assert_eq!(report.retries, 1);
        assert_eq!(report.revalidations, 1);
        assert_eq!(report.unlisted_requests, 1);
        assert_eq!(report.robots_requests, 2);
        assert_eq!(report.origins, 2);
        assert_eq!(report.max_connections, 1);
        assert_eq!(report.min_gap_us, Some(10_000));
        assert!(report.to_string().starts_with("synthweb referee: PASS"));
    }

    #[test]
    fn clean_log_passes_in_any_line_order() {
        let mut crawl = Crawl::clean();
        crawl.lines.reverse();
        assert!(judge(&crawl).passed);
    }

    #[test]
    fn missed_url_fails() {
        let mut crawl = Crawl::clean();
        crawl.lines.retain(|l| l.target != "/p/2");
        let report = fails_for(&crawl, ViolationKind::Missed);
        assert_eq!(
            report.missed.examples,
            ["http://h000001.synth.test:8080/p/2"]
        );
    }

    #[test]
    fn duplicate_fetch_fails() {
        let mut crawl = Crawl::clean();
        crawl.req(50, 1, A, "/p/2", 200);
        let report = fails_for(&crawl, ViolationKind::Duplicate);
        assert_eq!(
            report.duplicates.examples,
            ["http://h000001.synth.test:8080/p/2"]
        );
    }

    #[test]
    fn refetch_after_success_is_a_duplicate_even_after_a_retry() {
        // 503, retry 200 (fine), then again unconditionally: duplicate.
        let mut crawl = Crawl::clean();
        crawl.req(55, 2, B, "/p/~x", 200);
        fails_for(&crawl, ViolationKind::Duplicate);
    }

    #[test]
    fn alias_of_a_fetched_url_is_a_duplicate_and_non_canonical() {
        let mut crawl = Crawl::clean();
        crawl.req(55, 2, B, "/p/%7ex", 200);
        let report = judge(&crawl);
        assert_eq!(
            report.violations,
            [ViolationKind::Duplicate, ViolationKind::NonCanonicalTarget],
            "{report}"
        );
    }

    #[test]
    fn non_canonical_target_fails_even_without_a_duplicate() {
        let mut crawl = Crawl::clean();
        crawl.lines.retain(|l| l.target != "/p/2");
        crawl.req(30, 1, A, "/p/%32", 200);
        let report = fails_for(&crawl, ViolationKind::NonCanonicalTarget);
        assert_eq!(report.must_fetched, 5);
    }

    #[test]
    fn absolute_form_target_is_non_canonical() {
        let mut crawl = Crawl::clean();
        crawl.req(50, 1, A, "http://h000001.synth.test:8080/p/9", 200);
        fails_for(&crawl, ViolationKind::NonCanonicalTarget);
    }

    #[test]
    fn forbidden_fetch_fails() {
        let mut crawl = Crawl::clean();
        crawl.req(50, 1, A, "/private/x", 200);
        fails_for(&crawl, ViolationKind::ForbiddenFetched);
    }

    /// The test manifest plus one more M URL on host A.
    fn manifest_with(path: &str) -> Manifest {
        let mut m = manifest();
        m.must.insert(format!("http://{A}{path}"));
        m
    }

    #[test]
    fn too_many_retries_fail() {
        let m = manifest_with("/flaky");
        let judge = |crawl: &Crawl| check(&crawl.lines, &m, &strict());
        let fails_for = |crawl: &Crawl, kind| {
            let report = judge(crawl);
            assert_eq!(report.violations, [kind], "{report}");
        };
        let mut crawl = Crawl::clean();
        for (i, t) in [50, 60, 70].into_iter().enumerate() {
            crawl.req(t, 1, A, "/flaky", if i == 2 { 200 } else { 500 });
        }
        // Two retries (after the first two 500s) are within max_retries = 2.
        assert!(judge(&crawl).passed);
        crawl.lines.last_mut().unwrap().status = 500;
        crawl.req(80, 1, A, "/flaky", 500);
        fails_for(&crawl, ViolationKind::ExcessiveRetries);
    }

    #[test]
    fn retry_after_no_response_429_and_408_is_allowed() {
        let m = manifest_with("/x");
        let judge = |crawl: &Crawl| check(&crawl.lines, &m, &strict());
        let fails_for = |crawl: &Crawl, kind| {
            let report = judge(crawl);
            assert_eq!(report.violations, [kind], "{report}");
        };
        for status in [0, 408, 429, 502] {
            let mut crawl = Crawl::clean();
            crawl.req(50, 1, A, "/x", status);
            crawl.req(60, 1, A, "/x", 200);
            assert!(judge(&crawl).passed, "status {status}");
        }
        let mut crawl = Crawl::clean();
        crawl.req(50, 1, A, "/x", 404);
        crawl.req(60, 1, A, "/x", 200);
        fails_for(&crawl, ViolationKind::Duplicate);
    }

    #[test]
    fn robots_missing_fails() {
        let mut crawl = Crawl::clean();
        crawl
            .lines
            .retain(|l| !(l.host == B && l.target == "/robots.txt"));
        let report = fails_for(&crawl, ViolationKind::RobotsNotFirst);
        assert_eq!(report.robots_not_first.count, 1);
        assert!(report.robots_not_first.examples[0].contains("never"));
    }

    #[test]
    fn robots_after_other_path_fails() {
        let mut crawl = Crawl::clean();
        crawl.lines[0].t_us = 50_000; // A's robots.txt now after A's "/" at 10 ms
        crawl.lines[0].end_us = 51_000;
        fails_for(&crawl, ViolationKind::RobotsNotFirst);
    }

    #[test]
    fn request_while_robots_still_in_flight_fails() {
        let mut crawl = Crawl::clean();
        // Answered 6 ms after "/" started at 10 ms: past the end-stamp slack.
        crawl.lines[0].end_us = 16_000;
        fails_for(&crawl, ViolationKind::RobotsNotFirst);
    }

    #[test]
    fn a_robots_end_stamp_a_little_after_the_next_request_is_stamp_jitter() {
        // The server stamped robots.txt's end 2.4 ms after "/" arrived (crawl_e2e on a
        // loaded machine: the crawler had the whole answer before asking "/").
        let mut crawl = Crawl::clean();
        crawl.lines[0].end_us = 12_400;
        assert!(judge(&crawl).passed);
    }

    #[test]
    fn robots_is_per_origin_scheme_and_port() {
        // Same host name on another port: a new origin that needs its own robots.txt.
        let mut crawl = Crawl::clean();
        crawl.req(50, 3, "h000001.synth.test:8443", "/elsewhere", 200);
        fails_for(&crawl, ViolationKind::RobotsNotFirst);
        let mut crawl = Crawl::clean();
        crawl.req(50, 3, A, "/other-scheme", 200).scheme = Scheme::Https;
        fails_for(&crawl, ViolationKind::RobotsNotFirst);
    }

    #[test]
    fn robots_redirect_targets_are_robots_files() {
        let mut m = manifest();
        m.header
            .params
            .insert("robots_files".to_owned(), "/robots-cross.txt".to_owned());
        let mut crawl = Crawl::clean();
        // Two hosts' robots.txt redirect to A's /robots-cross.txt: fetched twice, and on
        // a third origin before that origin's own robots.txt.
        crawl.req(50, 1, A, "/robots-cross.txt", 200);
        crawl.req(60, 1, A, "/robots-cross.txt", 200);
        crawl.req(60, 3, "h000001.synth.test:8443", "/robots-cross.txt", 200);
        let report = check(&crawl.lines, &m, &CheckPolicy::new("trawl"));
        assert!(report.passed, "{report}");
        assert_eq!(report.robots_requests, 5);
        // Without the header parameter they are ordinary paths, requested before the
        // third origin's robots.txt.
        let report = check(&crawl.lines, &manifest(), &CheckPolicy::new("trawl"));
        assert_eq!(
            report.violations,
            [ViolationKind::RobotsNotFirst],
            "{report}"
        );
        assert_eq!(report.unlisted_repeats, 1);
    }

    #[test]
    fn repeats_of_unlisted_urls_are_counted_not_judged() {
        // A hostile host's page cut short (status 200 logged) and retried.
        let mut crawl = Crawl::clean();
        crawl.req(55, 2, B, "/hostile", 200);
        let report = judge(&crawl);
        assert!(report.passed, "{report}");
        assert_eq!(report.unlisted_repeats, 1);
        assert_eq!(report.duplicates.count, 0);
    }

    #[test]
    fn overlapping_connections_fail() {
        let mut crawl = Crawl::clean();
        // A second connection to A whose request [60, 80) ms overlaps "/p/5" at 70 ms
        // by more than the end-stamp slack (5 ms).
        crawl.req(50, 1, A, "/p/3", 200);
        crawl.req(60, 7, A, "/p/4", 200).end_us = 80_000;
        crawl.req(70, 1, A, "/p/5", 200);
        let report = fails_for(&crawl, ViolationKind::TooManyConnections);
        assert_eq!(report.max_connections, 2);
        assert_eq!(
            report.max_connections_host.as_deref(),
            Some("h000001.synth.test")
        );
    }

    #[test]
    fn connections_to_one_address_over_the_limit_fail() {
        // Hosts A and B on one address, one connection each (per-host fine), plus a
        // third host C on the same address: three at once at 60 ms over a limit of 2.
        const C: &str = "h000003.synth.test:8080";
        let mut crawl = Crawl::clean();
        crawl.req(50, 1, A, "/p/3", 200).end_us = 70_000;
        crawl.req(55, 2, B, "/p/4", 200).end_us = 70_000;
        crawl.req(58, 3, C, "/robots.txt", 404).end_us = 61_000;
        let report = fails_for(&crawl, ViolationKind::TooManyIpConnections);
        assert_eq!(report.max_ip_connections, 3);
        assert_eq!(report.max_ip_connections_addr.as_deref(), Some("127.0.1.2"));
        assert_eq!(
            report.over_ip_connection_limit.examples,
            ["127.0.1.2: 3 connections"]
        );
        assert!(report
            .to_string()
            .contains("addresses over the connection limit: 1"));
    }

    #[test]
    fn connections_on_different_addresses_do_not_add_up() {
        const C: &str = "h000003.synth.test:8080";
        let mut crawl = Crawl::clean();
        crawl.req(50, 1, A, "/p/3", 200).end_us = 70_000;
        crawl.req(55, 2, B, "/p/4", 200).end_us = 70_000;
        // Same port, another address; IPv4-mapped IPv6 counts as its IPv4 address.
        crawl.req(58, 3, C, "/robots.txt", 404).local = "127.0.1.3:8080".parse().unwrap();
        crawl.req(70, 4, C, "/", 200).local = "[::ffff:127.0.1.3]:8080".parse().unwrap();
        let report = judge(&crawl);
        assert!(report.passed, "{report}");
        assert_eq!(report.addresses, 2);
        assert_eq!(report.max_ip_connections, 2);
        // Without a limit it is reported, not judged.
        let mut crawl = Crawl::clean();
        crawl.req(50, 1, A, "/p/3", 200).end_us = 70_000;
        crawl.req(55, 2, B, "/p/4", 200).end_us = 70_000;
        crawl.req(58, 3, C, "/robots.txt", 404).end_us = 61_000;
        let mut lax = strict();
        lax.per_ip_connections = None;
        let report = check(&crawl.lines, &manifest(), &lax);
        assert!(report.passed, "{report}");
        assert_eq!(report.max_ip_connections, 3);
    }

    #[test]
    fn overlaps_within_the_end_stamp_slack_are_not_counted() {
        let mut crawl = Crawl::clean();
        // The server stamped the end 0.4 ms after the next request on a new connection
        // started: the stamp race, not two connections at work.
        crawl.req(50, 7, A, "/p/3", 200).end_us = 60_400;
        crawl.req(60, 8, A, "/p/4", 200);
        let report = judge(&crawl);
        assert!(report.passed, "{report}");
        assert_eq!(report.max_connections, 1);
    }

    #[test]
    fn back_to_back_connections_do_not_overlap() {
        let mut crawl = Crawl::clean();
        crawl.req(50, 7, A, "/p/3", 200).end_us = 60_000;
        crawl.req(60, 8, A, "/p/4", 200);
        let report = judge(&crawl);
        assert!(report.passed, "{report}");
        assert_eq!(report.max_connections, 1);
    }

    #[test]
    fn pipelined_requests_on_one_connection_count_once() {
        let mut crawl = Crawl::clean();
        crawl.req(50, 1, A, "/p/3", 200).end_us = 75_000;
        crawl.req(60, 1, A, "/p/4", 200).end_us = 75_000;
        assert_eq!(judge(&crawl).max_connections, 1);
    }

    #[test]
    fn connections_count_per_host_across_ports_and_schemes() {
        let mut crawl = Crawl::clean();
        crawl.req(50, 1, A, "/p/3", 200).end_us = 80_000;
        crawl
            .req(60, 9, "h000001.synth.test:8443", "/robots.txt", 200)
            .scheme = Scheme::Https;
        fails_for(&crawl, ViolationKind::TooManyConnections);
    }

    #[test]
    fn short_gap_fails_robots_included() {
        let mut crawl = Crawl::clean();
        crawl.lines[0].t_us = 9_000; // robots.txt at 9 ms, then "/" at 10 ms on A
        crawl.lines[0].end_us = 9_500;
        let report = fails_for(&crawl, ViolationKind::DelayTooShort);
        assert_eq!(report.min_gap_us, Some(1_000));
        assert_eq!(report.min_gap_host.as_deref(), Some("h000001.synth.test"));
    }

    #[test]
    fn without_limits_politeness_is_reported_not_judged() {
        let mut crawl = Crawl::clean();
        crawl.req(50, 1, A, "/p/3", 200).end_us = 80_000;
        crawl.req(50, 9, A, "/p/4", 200);
        let report = check(&crawl.lines, &manifest(), &CheckPolicy::new("trawl"));
        assert!(report.passed, "{report}");
        assert_eq!(report.max_connections, 2);
        assert_eq!(report.min_gap_us, Some(0));
    }

    #[test]
    fn missing_user_agent_fails() {
        let mut crawl = Crawl::clean();
        crawl.lines[3].user_agent = None;
        fails_for(&crawl, ViolationKind::MissingUserAgent);
        crawl.lines[3].user_agent = Some("  ".to_owned());
        fails_for(&crawl, ViolationKind::MissingUserAgent);
    }

    #[test]
    fn user_agent_must_name_the_agent() {
        let mut crawl = Crawl::clean();
        crawl.lines[3].user_agent = Some("Mozilla/5.0 trawlerbot/1".to_owned());
        let report = fails_for(&crawl, ViolationKind::UserAgentWithoutAgent);
        assert_eq!(
            report.user_agent_without_agent.examples,
            ["Mozilla/5.0 trawlerbot/1"]
        );
        assert!(names_agent("Mozilla/5.0 (compatible; Trawl/0.1)", "trawl"));
        assert!(names_agent("trawl", "trawl"));
        assert!(!names_agent("xtrawl/1", "trawl"));
        assert!(!names_agent("trawl_x/1", "trawl"));
        assert!(!names_agent("tra", "trawl"));
    }

    #[test]
    fn missing_from_fails() {
        let mut crawl = Crawl::clean();
        crawl.lines[5].from = None;
        fails_for(&crawl, ViolationKind::MissingFrom);
    }

    #[test]
    fn missing_host_fails() {
        let mut crawl = Crawl::clean();
        crawl.req(50, 5, "", "/", 400);
        fails_for(&crawl, ViolationKind::MissingHost);
    }

    #[test]
    fn canonical_target_decodes_unreserved_and_upper_cases_the_rest() {
        for (input, expected) in [
            ("/", "/"),
            ("/%7Euser/%7efoo", "/~user/~foo"),
            ("/a%2fb%2Fc", "/a%2Fb%2Fc"),
            ("/%41%5a%30%2D%2e%5F", "/AZ0-._"),
            ("/x?q=%3d%26", "/x?q=%3D%26"),
            ("/%zz/%4", "/%zz/%4"),
            ("/%", "/%"),
            ("/é%c3%a9", "/%C3%A9%C3%A9"),
            ("/a\u{7f}b", "/a%7Fb"),
        ] {
            assert_eq!(canonical_target(input), expected, "{input}");
        }
    }

    #[test]
    fn host_name_strips_the_port() {
        assert_eq!(host_name("h1.synth.test:8080"), "h1.synth.test");
        assert_eq!(host_name("h1.synth.test"), "h1.synth.test");
        assert_eq!(host_name("[::1]:8080"), "[::1]");
        assert_eq!(host_name("[::1]"), "[::1]");
    }

    #[test]
    fn conditional_requests_and_304s_are_counted() {
        let mut crawl = Crawl::clean();
        // The clean crawl already revalidates /p/1 once (answered 304).
        let before = judge(&crawl);
        assert_eq!((before.conditional_requests, before.not_modified), (1, 1));
        // A re-crawl: the same URL again, conditionally, answered 304 (a revalidation,
        // not a duplicate), and another answered 200 in full.
        crawl.req(60, 1, A, "/p/1", 304).if_none_match = Some("\"e\"".to_owned());
        crawl.req(70, 1, A, "/p/2", 200).if_modified_since =
            Some("Sat, 01 Jan 2022 00:00:00 GMT".to_owned());
        let report = judge(&crawl);
        assert!(report.passed, "{report}");
        assert_eq!(report.conditional_requests, 3);
        assert_eq!(report.not_modified, 2);
        assert_eq!(report.revalidations, before.revalidations + 2);
        assert_eq!(report.page_requests, before.page_requests + 2);
        assert!(report.to_string().contains(&format!(
            "conditional: 3 of {} page requests conditional, 2 answered 304",
            report.page_requests
        )));
    }

    #[test]
    fn requests_for_pages_leave_redirects_and_errors_apart() {
        let mut crawl = Crawl::clean();
        let before = judge(&crawl);
        // A re-crawl: a page answered 304 after a conditional request, a redirect and
        // an error URL asked again unconditionally (they carried no validators).
        crawl.req(60, 1, A, "/p/1", 304).if_none_match = Some("\"e\"".to_owned());
        crawl.req(61, 1, A, "/r/301/1", 301);
        crawl.req(62, 1, A, "/missing", 404);
        let report = judge(&crawl);
        assert_eq!(report.page_requests, before.page_requests + 3);
        assert_eq!(report.requests_for_pages, before.requests_for_pages + 1);
        assert_eq!(
            report.conditional_for_pages,
            before.conditional_for_pages + 1
        );
        assert_eq!(
            report.not_modified_for_pages,
            before.not_modified_for_pages + 1
        );
        assert!(report.to_string().contains(&format!(
            "pages: {} of {} requests for pages conditional",
            report.conditional_for_pages, report.requests_for_pages
        )));
    }

    #[test]
    fn sitemap_only_urls_must_be_fetched() {
        let mut m = manifest();
        m.sitemap_only
            .insert("http://h000001.synth.test:8080/sm/0".to_owned());
        m.header.params.insert(
            formats::SITEMAP_FILES_PARAM.to_owned(),
            "/sitemap_index.xml,/sitemap-pages.xml".to_owned(),
        );
        let mut crawl = Crawl::clean();
        let report = check(&crawl.lines, &m, &strict());
        assert_eq!(
            report.violations,
            [ViolationKind::SitemapMissed],
            "{report}"
        );
        assert_eq!(
            report.sitemap_missed.examples,
            ["http://h000001.synth.test:8080/sm/0"]
        );
        crawl.req(50, 1, A, "/sitemap_index.xml", 200);
        crawl.req(60, 1, A, "/sitemap-pages.xml", 200);
        crawl.req(70, 1, A, "/sm/0", 200);
        let report = check(&crawl.lines, &m, &strict());
        assert!(report.passed, "{report}");
        assert_eq!(report.sitemap_requests, 2);
        assert_eq!((report.sitemap_only, report.sitemap_only_fetched), (1, 1));
        assert!(report
            .to_string()
            .contains("sitemaps: 2 requests for sitemap files; 1 of 1 sitemap-only URLs fetched"));
        // Fetched twice without excuse: a duplicate like any M URL.
        crawl.req(80, 1, A, "/sm/0", 200);
        let report = check(&crawl.lines, &m, &strict());
        assert_eq!(report.violations, [ViolationKind::Duplicate], "{report}");
    }

    #[test]
    fn json_report_names_the_violations() {
        let mut crawl = Crawl::clean();
        crawl.req(50, 1, A, "/private/x", 200);
        let json = serde_json::to_value(judge(&crawl)).unwrap();
        assert_eq!(json["passed"], false);
        assert_eq!(json["violations"], serde_json::json!(["forbidden_fetched"]));
        assert_eq!(json["forbidden_fetched"]["count"], 1);
    }
}
