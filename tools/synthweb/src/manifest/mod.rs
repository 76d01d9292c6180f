//! Ground truth: which URLs a correct robots-obeying crawler must fetch (`M`) and which it
//! must never fetch (`F`), computed by walking the generator's own graph
//! ([`Site::page`]), never by crawling.
//!
//! # The crawl policy the manifest assumes (trawl's defaults)
//! * Seeds: [`Site::seeds`]. robots.txt per host, judged by [`Site::robots_allows`]
//!   (RFC 9309; 401/403 per [`ManifestPolicy::robots_4xx_disallow`]; 5xx disallow all).
//! * URL filters: a URL longer than [`ManifestPolicy::max_url_bytes`] (2,048) bytes, or
//!   whose path has one segment more than 3 times, or a sequence of 2 or 3 segments
//!   repeated 3 times in a row (`/a/b/a/b/a/b/`), is never fetched.
//! * Links are taken from 2xx `text/html` pages only, unless the page says `nofollow` or
//!   `none` (meta robots or `X-Robots-Tag`), and only from `a`, `area`, `link`, `frame`,
//!   `iframe` and `meta refresh` — not from comments, scripts, styles or `img`.
//! * Redirects: the `Location` of a 3xx is followed like a link; chains of at most
//!   [`ManifestPolicy::max_redirects`] (5).
//! * A page whose body is identical to one fetched before, once each page's mentions of
//!   its own directory and parent are abstracted (trawl's `page_fingerprint`), is
//!   recorded, but its links are not followed.
//! * Budget: at most [`ManifestPolicy::max_pages_per_host`] requests per host (every
//!   request counts, whatever its status; robots files do not), taken in breadth-first
//!   order (one FIFO queue per host, in discovery order).
//!
//! # What is certain, and what is left open
//! `M` and `F` hold only what every crawler following that policy does, whatever order its
//! concurrency imposes across hosts:
//! * A host that reaches the budget must have a single entry URL (every link from
//!   elsewhere and every seed of the host names the same URL); its per-host FIFO is then
//!   independent of the rest of the crawl, so the first `max_pages_per_host` requests are
//!   `M` and URLs it queued beyond the budget are `F`. A budget-limited host with several
//!   entries makes the manifest ambiguous: [`compute`] refuses with
//!   [`ManifestError::Ambiguous`] (raise the budget).
//! * Copies (equal as above) must carry identical links, read relative to their own
//!   directory, or which copy's links are followed would depend on order: also
//!   [`ManifestError::Ambiguous`].
//! * `rel="nofollow"` links and `img` sources are neither required nor forbidden: a
//!   crawler may follow them. Their targets are `M` only when reached otherwise. So are
//!   redirect targets beyond the chain cap.
//! * Hostile hosts' URLs whose response is not a well-formed page (everything but the
//!   bare-LF host, and the TLS-only behaviours over plain HTTP) are neither `M` nor `F`:
//!   the crawler must try them, but what the server logs for them depends on the
//!   crawler's timeouts and limits.
//! * `F` holds the linked URLs that robots.txt or the URL filters forbid, the URLs of
//!   budget-limited hosts queued beyond the budget, and the targets of links hidden in
//!   comments, scripts and styles that no extractable link reaches (taking `rel=nofollow`
//!   and `img` edges into account).
//! * robots.txt and the robots files it redirects to are in neither set; they are named in
//!   the header parameter `robots_files` for the referee.

use std::io::{self, Write};

use crate::config::ConfigError;
use crate::formats::{self, Manifest};
use crate::robots::{RobotsFetch, CATALOGUE};
use crate::site::Site;

mod args;
mod host_rules;
mod page_reading;
mod url_filters;
mod walk;

pub use args::ManifestArgs;
pub use url_filters::{is_repetitive, MAX_SEGMENT_REPEATS};

use walk::Walk;

/// The crawl policy and trap budget a manifest is computed for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestPolicy {
    /// Robots product token, e.g. `trawl`.
    pub agent: String,
    /// Whether robots.txt answered 401/403 means "disallow all" (RFC 9309: allow).
    pub robots_4xx_disallow: bool,
    /// Most requests per host (robots files not counted).
    pub max_pages_per_host: u32,
    /// Longest URL fetched, in bytes.
    pub max_url_bytes: usize,
    /// Longest redirect chain followed.
    pub max_redirects: u32,
}

impl Default for ManifestPolicy {
    /// trawl's defaults, with a per-host budget of 2,000 requests: above what any ordinary
    /// host of the default profile needs, so only trap hosts reach it.
    fn default() -> Self {
        Self {
            agent: "trawl".to_owned(),
            robots_4xx_disallow: false,
            max_pages_per_host: 2_000,
            max_url_bytes: 2_048,
            max_redirects: 5,
        }
    }
}

/// Why a manifest cannot be computed.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The site configuration is invalid.
    #[error("invalid site configuration")]
    Config(#[from] ConfigError),
    /// The policy is unusable.
    #[error("invalid manifest policy: {0}")]
    Policy(&'static str),
    /// What a correct crawler fetches would depend on its crawl order.
    #[error("the manifest would depend on crawl order: {0}")]
    Ambiguous(String),
    /// Writing the manifest failed.
    #[error("cannot write the manifest")]
    Io(#[from] io::Error),
}

/// Compute the manifest of `site` under `policy`.
///
/// # Errors
/// [`ManifestError::Policy`] for a zero budget or an empty agent;
/// [`ManifestError::Ambiguous`] when the result would depend on crawl order (see the
/// module docs).
pub fn compute(site: &Site, policy: &ManifestPolicy) -> Result<Manifest, ManifestError> {
    if policy.max_pages_per_host == 0 {
        return Err(ManifestError::Policy(
            "max_pages_per_host must be at least 1",
        ));
    }
    if policy.agent.trim().is_empty() {
        return Err(ManifestError::Policy("agent must not be empty"));
    }
    let mut walk = Walk::new(site, policy);
    walk.run()?;
    walk.extend_possible();
    walk.finish()
}

/// Compute and write the manifest to `out`.
///
/// # Errors
/// As [`compute`], plus the writer's I/O error.
pub fn write<W: Write>(out: W, site: &Site, policy: &ManifestPolicy) -> Result<(), ManifestError> {
    let manifest = compute(site, policy)?;
    formats::write_manifest(out, &manifest)?;
    Ok(())
}

/// The request-targets of robots.txt redirect targets in the catalogue.
pub fn robots_files() -> Vec<&'static str> {
    let mut files: Vec<&'static str> = CATALOGUE
        .iter()
        .filter_map(|entry| match entry.fetch() {
            RobotsFetch::Redirect { path, .. } => Some(path),
            _ => None,
        })
        .collect();
    files.sort_unstable();
    files.dedup();
    files
}

#[cfg(test)]
mod tests;
