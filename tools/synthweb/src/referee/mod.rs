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

use crate::formats::{LogLine, Manifest};

mod command;
mod identification;
mod politeness;
mod report;
mod robots_first;
mod urls;

pub use command::{run, CheckArgs, CheckError};
pub use identification::names_agent;
pub use politeness::END_STAMP_SLACK_US;
pub use report::{Listing, Report, ViolationKind};
pub use urls::canonical_target;

use identification::check_identification;
use politeness::{check_per_ip, check_politeness};
use robots_first::check_robots_first;
use urls::check_urls;

/// How many example URLs (or hosts) each finding keeps.
pub const MAX_EXAMPLES: usize = 20;

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

#[cfg(test)]
mod tests;
