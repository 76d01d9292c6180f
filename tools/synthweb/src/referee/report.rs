//! The referee's verdict: the kinds of violation, the listings of examples, and the
//! report (JSON, or text through `Display`).

use std::fmt;

use serde::Serialize;

use super::MAX_EXAMPLES;

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
    pub(super) fn push(&mut self, example: impl FnOnce() -> String) {
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
