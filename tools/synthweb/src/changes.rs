//! What changes between two crawls of the synthetic web (`--change-rate`).
//!
//! Generation 0 is the web as every other option describes it. With a change rate of
//! `r` basis points, generation `g` differs from generation 0 on ordinary hosts only:
//! each `/p/k` draws `u = hash(seed, host, k, g) % 10,000`; `u < 0.6 r` changes (a
//! revision line is added to the body, so its ETag changes, and its Last-Modified moves
//! past every generation-0 date), `0.6 r <= u < 0.8 r` vanishes (404 when `u` is even,
//! 410 when odd), and each host gains `/new/0 .. /new/(m-1)` with
//! `m = round(pages * 0.2 r / 10,000)`, linked from its root (which then changes too).
//! Pure functions of the config, so the server, the manifest walker and the list of
//! changes (`--changes FILE`) agree by construction.

use crate::config::SiteConfig;
use crate::hash::hash_words;

/// How a URL of generation `g` differs from generation 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Change {
    /// Same URL, different body (new ETag, newer Last-Modified).
    Changed,
    /// The URL answers this status (404 or 410) instead of its page.
    Gone(u16),
    /// A URL that generation 0 does not have.
    New,
}

impl Change {
    /// `changed`, `gone` or `new`: the word of the changes file.
    #[must_use]
    pub fn word(self) -> &'static str {
        match self {
            Self::Changed => "changed",
            Self::Gone(_) => "gone",
            Self::New => "new",
        }
    }
}

/// Whether changes apply at all.
#[must_use]
pub fn active(cfg: &SiteConfig) -> bool {
    cfg.change_rate_bp > 0
}

/// The change of ordinary page `/p/k` of host `index`, if any.
#[must_use]
pub fn of_page(cfg: &SiteConfig, index: u32, k: u32) -> Option<Change> {
    if !active(cfg) {
        return None;
    }
    let u = (hash_words(&[
        cfg.seed,
        u64::from(index),
        u64::from(k),
        u64::from(cfg.generation),
        0xC4A6,
    ]) % 10_000) as u32;
    let r = cfg.change_rate_bp;
    if u < r * 6 / 10 {
        Some(Change::Changed)
    } else if u < r * 8 / 10 {
        Some(Change::Gone(if u % 2 == 0 { 404 } else { 410 }))
    } else {
        None
    }
}

/// How many `/new/k` pages host `index` has, given its generation-0 page count.
#[must_use]
pub fn new_pages(cfg: &SiteConfig, pages: u32) -> u32 {
    if !active(cfg) {
        return 0;
    }
    // pages * 0.2 r / 10,000, rounded to nearest.
    let scaled = u64::from(pages) * u64::from(cfg.change_rate_bp) * 2;
    ((scaled + 50_000) / 100_000) as u32
}

/// Last-Modified (seconds since the epoch) of a changed or new page: after every
/// generation-0 date (those end in mid-2025), later for later generations.
#[must_use]
pub fn changed_last_modified_secs(cfg: &SiteConfig, index: u32, path: &str) -> i64 {
    // 2025-07-01T00:00:00Z
    const START: i64 = 1_751_328_000;
    let h = crate::hash::hash_bytes(cfg.seed ^ u64::from(index) ^ 0xC4A6, path.as_bytes());
    START + i64::from(cfg.generation) * 86_400 + (h % 86_400) as i64
}

/// The `M` sets (URLs a crawl must fetch) of generation 0 and of this generation.
#[derive(Debug, Default)]
pub struct Reach {
    /// What a crawl of generation 0 fetches: a page changed or gone is seen as such
    /// only by a re-crawl of a crawl that fetched it.
    pub before: std::collections::BTreeSet<String>,
    /// What a crawl of this generation fetches: a new page is found only if reached.
    pub now: std::collections::BTreeSet<String>,
}

impl Reach {
    /// Both manifests (empty without a change rate).
    ///
    /// # Errors
    /// The manifest of either generation cannot be computed.
    pub fn of(
        site: &crate::site::Site,
        policy: &crate::manifest::ManifestPolicy,
    ) -> Result<Self, crate::manifest::ManifestError> {
        if !active(site.config()) {
            return Ok(Self::default());
        }
        let mut base_cfg = site.config().clone();
        base_cfg.change_rate_bp = 0;
        let base = crate::site::Site::new(base_cfg).map_err(|_| {
            crate::manifest::ManifestError::Policy("the generation-0 configuration is invalid")
        })?;
        Ok(Self {
            before: crate::manifest::compute(&base, policy)?.must,
            now: crate::manifest::compute(site, policy)?.must,
        })
    }

    /// Whether a re-crawl can see `change` of `url` at all.
    pub fn sees(&self, url: &str, change: Change) -> bool {
        match change {
            Change::New => self.now.contains(url),
            Change::Changed | Change::Gone(_) => self.before.contains(url),
        }
    }

    /// The pages a crawl of this generation fetches that a crawl of generation 0 did
    /// not, besides the `/new/k` pages `listed` already, answered 2xx. A changed page
    /// can make them: a page that was a copy of it (whose links a crawler does not
    /// follow) is no longer one once it gains a revision line, so its links now lead
    /// somewhere. Each is `new` in a re-crawl's eyes, so the list names them.
    pub fn appeared(
        &self,
        site: &crate::site::Site,
        listed: &[(String, Change)],
    ) -> Vec<(String, Change)> {
        let known: std::collections::HashSet<&str> =
            listed.iter().map(|(u, _)| u.as_str()).collect();
        self.now
            .difference(&self.before)
            .filter(|u| !known.contains(u.as_str()))
            .filter(|u| status_of(site, u).is_some_and(|s| (200..300).contains(&s)))
            .map(|u| (u.clone(), Change::New))
            .collect()
    }
}

/// The status this generation answers for an absolute URL of the web.
fn status_of(site: &crate::site::Site, url: &str) -> Option<u16> {
    let (scheme, rest) = if let Some(r) = url.strip_prefix("http://") {
        (crate::site::Scheme::Http, r)
    } else {
        (crate::site::Scheme::Https, url.strip_prefix("https://")?)
    };
    let slash = rest.find('/')?;
    let index = site.host_index(rest.get(..slash)?)?;
    Some(site.page(scheme, index, rest.get(slash..)?).response.status)
}

/// Counts of a changes list, robots-allowed URLs only (the ones a crawler can see).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChangeCounts {
    /// Pages whose body changed.
    pub changed: u64,
    /// Pages that answer 404 or 410.
    pub gone: u64,
    /// Pages that generation 0 did not have.
    pub new: u64,
}

/// The magic of the changes file's header line.
pub const CHANGES_MAGIC: &str = "# synthweb changes v1";

/// Write synthweb's own list of changes: a header line with the counts of the URLs a
/// re-crawl sees change, then one line per changed URL,
/// `changed|gone|new URL [status] allowed|disallowed|unreached`. `allowed`: robots.txt
/// lets `agent` fetch it and a crawl following links reaches it (a changed or gone
/// page in generation 0, a new one in this generation: [`Reach`]); `unreached`:
/// allowed, but no crawl finds it (its host is not reached, or only past the budget).
/// A re-crawl's counts of changed, gone and new pages are checked against the
/// `allowed` lines.
///
/// # Errors
/// The writer's I/O error, or a manifest that cannot be computed.
pub fn write_changes<W: std::io::Write>(
    mut out: W,
    site: &crate::site::Site,
    policy: &crate::manifest::ManifestPolicy,
) -> std::io::Result<ChangeCounts> {
    let (agent, robots_4xx_disallow) = (policy.agent.as_str(), policy.robots_4xx_disallow);
    let mut counts = ChangeCounts::default();
    let mut lines = Vec::new();
    let listed: Vec<(String, Change)> = site.changes().collect();
    let reach = Reach::of(site, policy).map_err(std::io::Error::other)?;
    let also_new = reach.appeared(site, &listed);
    for (url, change) in listed.into_iter().chain(also_new) {
        let path_at = url.find("://").map_or(0, |i| i + 3);
        let path = url
            .get(path_at..)
            .and_then(|rest| rest.find('/').and_then(|j| rest.get(j..)))
            .unwrap_or("/");
        let host = site
            .host_index(url.get(path_at..).unwrap_or(""))
            .unwrap_or(0);
        let robots_allowed = site.robots_allows(host, agent, path, robots_4xx_disallow)
            == crate::robots::RobotsVerdict::Allowed;
        let allowed = robots_allowed && reach.sees(&url, change);
        if allowed {
            match change {
                Change::Changed => counts.changed += 1,
                Change::Gone(_) => counts.gone += 1,
                Change::New => counts.new += 1,
            }
        }
        let status = match change {
            Change::Gone(s) => format!(" {s}"),
            _ => String::new(),
        };
        let verdict = match (robots_allowed, allowed) {
            (_, true) => "allowed",
            (true, false) => "unreached",
            (false, _) => "disallowed",
        };
        lines.push(format!("{} {url}{status} {verdict}", change.word()));
    }
    let cfg = site.config();
    writeln!(
        out,
        "{CHANGES_MAGIC} seed={} generation={} change_rate_bp={} agent={agent} changed={} gone={} new={}",
        cfg.seed, cfg.generation, cfg.change_rate_bp, counts.changed, counts.gone, counts.new
    )?;
    for l in lines {
        writeln!(out, "{l}")?;
    }
    Ok(counts)
}
