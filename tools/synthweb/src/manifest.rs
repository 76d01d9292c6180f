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

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;

use crate::config::{ConfigError, SiteConfig};
use crate::formats::{self, Manifest, ManifestHeader, Robots4xx};
use crate::hash::mix64;
use crate::html::{Element, LinkKind};
use crate::robots::{self, Group, RobotsFetch, RuleKind, CATALOGUE};
use crate::site::{PageView, Scheme, Site};

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

/// The manifest options of the server command line (`--manifest FILE` and the policy it
/// is computed for).
#[derive(Debug, Clone, clap::Args)]
pub struct ManifestArgs {
    /// Write the ground-truth manifest (M and F URLs) here, once the ports are bound.
    #[arg(long, value_name = "FILE")]
    pub manifest: Option<PathBuf>,
    /// Robots agent (product token) the manifest's crawler obeys robots.txt as.
    #[arg(long, default_value = "trawl", value_name = "NAME")]
    pub manifest_agent: String,
    /// How the manifest's crawler treats a robots.txt answered 401/403: allow (RFC 9309)
    /// or disallow.
    #[arg(long, default_value = "allow", value_name = "allow|disallow")]
    pub manifest_robots_4xx: String,
    /// The manifest's per-host budget: most requests per host, robots files not counted.
    #[arg(long, default_value_t = 2_000, value_name = "N")]
    pub manifest_max_pages_per_host: u32,
    /// The manifest's URL length limit in bytes.
    #[arg(long, default_value_t = 2_048, value_name = "BYTES")]
    pub manifest_max_url_bytes: usize,
    /// The manifest's redirect chain cap.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub manifest_max_redirects: u32,
}

impl ManifestArgs {
    /// The validated policy.
    ///
    /// # Errors
    /// [`ManifestError::Policy`] for a `--manifest-robots-4xx` other than allow/disallow.
    pub fn policy(&self) -> Result<ManifestPolicy, ManifestError> {
        let robots_4xx_disallow = match self.manifest_robots_4xx.as_str() {
            "allow" => false,
            "disallow" => true,
            _ => {
                return Err(ManifestError::Policy(
                    "--manifest-robots-4xx must be allow or disallow",
                ))
            }
        };
        Ok(ManifestPolicy {
            agent: self.manifest_agent.clone(),
            robots_4xx_disallow,
            max_pages_per_host: self.manifest_max_pages_per_host,
            max_url_bytes: self.manifest_max_url_bytes,
            max_redirects: self.manifest_max_redirects,
        })
    }

    /// When `--manifest` is given, compute the manifest of the web `site` describes as
    /// served on the bound ports, and write it (to a temporary file renamed into place, so
    /// a reader never sees half a manifest).
    ///
    /// # Errors
    /// An invalid policy or configuration, an ambiguous manifest, or an I/O error.
    pub fn write(
        &self,
        mut site: SiteConfig,
        http_port: u16,
        tls_port: Option<u16>,
    ) -> Result<(), ManifestError> {
        let Some(path) = &self.manifest else {
            return Ok(());
        };
        site.http_port = http_port;
        site.tls_port = tls_port;
        let site = Site::new(site)?;
        let manifest = compute(&site, &self.policy()?)?;
        let mut tmp = path.clone().into_os_string();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let mut out = io::BufWriter::new(File::create(&tmp)?);
        formats::write_manifest(&mut out, &manifest)?;
        out.into_inner()
            .map_err(io::IntoInnerError::into_error)?
            .sync_all()?;
        std::fs::rename(&tmp, path)?;
        Ok(())
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

/// A canonical URL split into what the generator needs.
#[derive(Debug, Clone)]
struct Target {
    url: String,
    scheme: Scheme,
    host: u32,
    /// Path and query (the request-target).
    path_q_at: usize,
    /// Consecutive redirects that led here.
    redirects: u32,
}

impl Target {
    fn path_q(&self) -> &str {
        self.url.get(self.path_q_at..).unwrap_or("/")
    }
}

/// Why a URL is forbidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Fetch,
    Forbidden,
    /// Not a host of this web (or not http/https): ignored.
    Foreign,
}

struct Walk<'a> {
    site: &'a Site,
    policy: &'a ManifestPolicy,
    /// Every URL queued (or refused) once, the presence set.
    seen: HashSet<String>,
    /// Requests per host.
    requests: HashMap<u32, u32>,
    /// Distinct entry URLs of each host: seeds and links or redirects from other hosts.
    entries: HashMap<u32, BTreeSet<String>>,
    /// Fetched URLs that answered well-formed (the M candidates).
    fetched: BTreeSet<String>,
    /// Fetched URLs of hostile hosts that never answer with a well-formed page.
    unfetchable: BTreeSet<String>,
    /// URLs refused by robots.txt or the URL filters.
    forbidden: BTreeSet<String>,
    /// URLs queued on a host after its budget was spent, by host.
    over_budget: HashMap<u32, Vec<String>>,
    /// Targets of hidden links.
    hidden: BTreeSet<String>,
    /// Targets of links a crawler may or may not follow (`rel=nofollow`, `img`, long
    /// redirect chains).
    optional: Vec<Target>,
    /// Content fingerprint of each page whose links were followed, with its followed links.
    fingerprints: HashMap<u128, (String, Vec<Vec<u8>>)>,
    /// URLs a crawler may fetch beyond `fetched` (from `optional` edges).
    possible: HashSet<String>,
    /// Whether the optional extension stopped at its bound.
    possible_truncated: bool,
    /// Each host's robots rules for the agent, built once.
    robots: HashMap<u32, HostRules>,
    /// Largest hop count from a seed of a fetched URL (the BFS level).
    max_depth: u32,
    /// Largest hop count from a seed of a fetched host root `/`.
    max_root_depth: u32,
}

/// What one fetched page contributes, computed in parallel and applied in order.
struct Outcome {
    well_formed: bool,
    follow: Option<u128>,
    redirect: Option<String>,
    links: Vec<(String, LinkKind, Element)>,
}

impl<'a> Walk<'a> {
    fn new(site: &'a Site, policy: &'a ManifestPolicy) -> Self {
        Self {
            site,
            policy,
            seen: HashSet::new(),
            requests: HashMap::new(),
            entries: HashMap::new(),
            fetched: BTreeSet::new(),
            unfetchable: BTreeSet::new(),
            forbidden: BTreeSet::new(),
            over_budget: HashMap::new(),
            hidden: BTreeSet::new(),
            optional: Vec::new(),
            fingerprints: HashMap::new(),
            possible: HashSet::new(),
            possible_truncated: false,
            robots: HashMap::new(),
            max_depth: 0,
            max_root_depth: 0,
        }
    }

    /// Split a canonical absolute URL; `None` for other schemes and hosts.
    fn target(&self, url: &str, redirects: u32) -> Option<Target> {
        let (scheme, rest) = if let Some(rest) = url.strip_prefix("http://") {
            (Scheme::Http, rest)
        } else {
            (Scheme::Https, url.strip_prefix("https://")?)
        };
        let authority_len = rest.find(['/', '?']).unwrap_or(rest.len());
        let authority = rest.get(..authority_len)?;
        let host = self.site.host_index(authority)?;
        let port = authority
            .rsplit_once(':')
            .and_then(|(_, p)| p.parse::<u16>().ok());
        if port.is_some_and(|p| p != self.site.port(scheme)) {
            return None;
        }
        let path_q_at = url.len() - rest.len() + authority_len;
        Some(Target {
            url: url.to_owned(),
            scheme,
            host,
            path_q_at,
            redirects,
        })
    }

    fn verdict(&mut self, target: &Target) -> Verdict {
        let path_q = target.path_q();
        if !path_q.starts_with('/') {
            return Verdict::Foreign;
        }
        if target.url.len() > self.policy.max_url_bytes || is_repetitive(path_q) {
            return Verdict::Forbidden;
        }
        let (site, policy) = (self.site, self.policy);
        let rules = self.robots.entry(target.host).or_insert_with(|| {
            HostRules::new(&site.robots(Scheme::Http, target.host).fetch, policy)
        });
        if rules.allows(path_q) {
            Verdict::Fetch
        } else {
            Verdict::Forbidden
        }
    }

    /// Breadth-first over one global FIFO, one level at a time: decisions in queue order,
    /// page generation in parallel, results applied in queue order — the same result as
    /// a sequential FIFO walk.
    fn run(&mut self) -> Result<(), ManifestError> {
        let mut level: Vec<Target> = Vec::new();
        for seed in self.site.seeds() {
            if let Some(target) = self.target(&seed, 0) {
                self.entries
                    .entry(target.host)
                    .or_default()
                    .insert(seed.clone());
                if self.seen.insert(seed) {
                    level.push(target);
                }
            }
        }
        // Profiles sitemaps and sitemap-chain: the pages only sitemaps list join the
        // first level, like seeds (a sitemap-reading crawler queues them as soon as it
        // has read the sitemaps, which needs nothing but robots.txt).
        let mut listed = Vec::new();
        if self.site.config().profiles.sitemaps {
            listed.extend(crate::sitemaps::sitemap_only_urls(self.site));
        }
        if self.site.config().profiles.sitemap_chain {
            listed.extend(crate::chain::sitemap_only_urls(self.site));
        }
        for url in listed {
            if let Some(target) = self.target(&url, 0) {
                self.entries
                    .entry(target.host)
                    .or_default()
                    .insert(url.clone());
                if self.seen.insert(url) {
                    level.push(target);
                }
            }
        }
        let mut depth = 0u32;
        while !level.is_empty() {
            let mut to_fetch = Vec::with_capacity(level.len());
            for target in level {
                match self.verdict(&target) {
                    Verdict::Foreign => {}
                    Verdict::Forbidden => {
                        self.forbidden.insert(target.url);
                    }
                    Verdict::Fetch => {
                        let count = self.requests.entry(target.host).or_default();
                        if *count >= self.policy.max_pages_per_host {
                            self.over_budget
                                .entry(target.host)
                                .or_default()
                                .push(target.url);
                        } else {
                            *count += 1;
                            to_fetch.push(target);
                        }
                    }
                }
            }
            let outcomes = parallel_map(&to_fetch, |t| outcome(self.site, t));
            let mut next = Vec::new();
            for (target, outcome) in to_fetch.into_iter().zip(outcomes) {
                if outcome.well_formed {
                    self.max_depth = depth;
                    if target.path_q() == "/" {
                        self.max_root_depth = depth;
                    }
                }
                self.apply(&target, outcome, &mut next)?;
            }
            level = next;
            depth += 1;
        }
        self.check_budgets()
    }

    fn apply(
        &mut self,
        from: &Target,
        outcome: Outcome,
        next: &mut Vec<Target>,
    ) -> Result<(), ManifestError> {
        if outcome.well_formed {
            self.fetched.insert(from.url.clone());
        } else {
            self.unfetchable.insert(from.url.clone());
        }
        if let Some(location) = outcome.redirect {
            let redirects = from.redirects + 1;
            if let Some(target) = self.target(&location, redirects) {
                self.note_entry(from, &target);
                if redirects <= self.policy.max_redirects {
                    self.enqueue(target, next);
                } else {
                    self.optional.push(target);
                }
            }
        }
        let Some(fingerprint) = outcome.follow else {
            // Not followed; still record what it forbids and hides.
            return Ok(());
        };
        // Copies must carry the same links, read relative to their own location (a
        // self-listing directory links `sub/` wherever it is).
        let path = from.path_q();
        let path = path.split_once('?').map_or(path, |(p, _)| p);
        let followed: Vec<Vec<u8>> = outcome
            .links
            .iter()
            .filter(|(_, kind, el)| is_followed(*kind, *el))
            .map(|(url, _, _)| abstract_own_locations(path, url.as_bytes()).into_owned())
            .collect();
        if let Some((first, links)) = self.fingerprints.get(&fingerprint) {
            if *links != followed {
                return Err(ManifestError::Ambiguous(format!(
                    "{} and {first} have the same body but different links",
                    from.url
                )));
            }
            return Ok(()); // a duplicate: links not followed, and they are the same.
        }
        self.fingerprints
            .insert(fingerprint, (from.url.clone(), followed));
        for (url, kind, element) in outcome.links {
            let Some(target) = self.target(&url, 0) else {
                continue;
            };
            if matches!(kind, LinkKind::Hidden(_)) {
                // Hidden targets are judged at the end, but a forbidden one is F now.
                if self.verdict(&target) == Verdict::Forbidden {
                    self.forbidden.insert(target.url);
                } else {
                    self.hidden.insert(target.url);
                }
                continue;
            }
            self.note_entry(from, &target);
            if is_followed(kind, element) {
                self.enqueue(target, next);
            } else if self.verdict(&target) == Verdict::Forbidden {
                self.forbidden.insert(target.url);
            } else {
                self.optional.push(target);
            }
        }
        Ok(())
    }

    fn note_entry(&mut self, from: &Target, to: &Target) {
        if from.host != to.host {
            self.entries
                .entry(to.host)
                .or_default()
                .insert(to.url.clone());
        }
    }

    fn enqueue(&mut self, target: Target, next: &mut Vec<Target>) {
        if self.seen.insert(target.url.clone()) {
            next.push(target);
        }
    }

    /// A host that spent its budget must have had a single entry, or which of its URLs
    /// were fetched depends on the order the rest of the crawl discovered them.
    fn check_budgets(&self) -> Result<(), ManifestError> {
        for (host, urls) in &self.over_budget {
            let entries = self.entries.get(host).map_or(0, BTreeSet::len);
            if entries > 1 && !urls.is_empty() {
                return Err(ManifestError::Ambiguous(format!(
                    "host {} reaches the budget of {} requests but is entered by {entries} URLs",
                    self.site.host_name(*host),
                    self.policy.max_pages_per_host
                )));
            }
        }
        Ok(())
    }

    /// Extend with what a crawler may also fetch (optional edges and everything they
    /// lead to), on hosts that did not spend their budget, so hidden targets it may reach
    /// are not called forbidden. Bounded: past the bound, hidden targets are left out of
    /// `F` entirely.
    fn extend_possible(&mut self) {
        let limit = self.seen.len().saturating_mul(4).max(10_000);
        let mut queue: Vec<Target> = std::mem::take(&mut self.optional);
        let mut visited = 0usize;
        while let Some(target) = queue.pop() {
            if self.over_budget.contains_key(&target.host)
                || self.fetched.contains(&target.url)
                || self.unfetchable.contains(&target.url)
                || self.verdict(&target) != Verdict::Fetch
                || !self.possible.insert(target.url.clone())
            {
                continue;
            }
            visited += 1;
            if visited > limit {
                self.possible_truncated = true;
                return;
            }
            let outcome = outcome(self.site, &target);
            if let Some(location) = outcome.redirect {
                queue.extend(self.target(&location, 0));
            }
            if outcome.follow.is_some() {
                for (url, kind, _) in outcome.links {
                    if !matches!(kind, LinkKind::Hidden(_) | LinkKind::NonHttp) {
                        queue.extend(self.target(&url, 0));
                    }
                }
            }
        }
    }

    fn finish(self) -> Result<Manifest, ManifestError> {
        let mut forbidden = self.forbidden;
        for urls in self.over_budget.into_values() {
            forbidden.extend(urls);
        }
        if !self.possible_truncated {
            for url in self.hidden {
                let reachable = self.fetched.contains(&url)
                    || self.unfetchable.contains(&url)
                    || self.possible.contains(&url)
                    || self.seen.contains(&url);
                if !reachable {
                    forbidden.insert(url);
                }
            }
        }
        let mut must = self.fetched;
        let mut sitemap_only = BTreeSet::new();
        let cfg = self.site.config();
        if cfg.profiles.sitemap_chain {
            for url in crate::chain::sitemap_only_urls(self.site) {
                if must.remove(&url) {
                    sitemap_only.insert(url);
                }
            }
        }
        if cfg.profiles.sitemaps {
            for url in crate::sitemaps::sitemap_only_urls(self.site) {
                if must.remove(&url) {
                    sitemap_only.insert(url);
                }
            }
            // The cross-host sitemap's URLs: the sitemaps.org host rule refuses them.
            forbidden.extend(crate::sitemaps::cross_urls(self.site));
        }
        debug_assert!(must.is_disjoint(&forbidden));
        let mut params = std::collections::BTreeMap::new();
        let mut files: Vec<String> = Vec::new();
        if cfg.profiles.sitemaps {
            files.extend(
                crate::sitemaps::LINKED_FILES
                    .iter()
                    .map(|f| (*f).to_owned()),
            );
            files.extend(crate::sitemaps::CAP_FILES.iter().map(|f| (*f).to_owned()));
        }
        if cfg.profiles.sitemap_chain {
            files.extend(crate::chain::files(self.site));
        }
        if !files.is_empty() {
            params.insert(formats::SITEMAP_FILES_PARAM.to_owned(), files.join(","));
        }
        if cfg.mesh.is_some() {
            // What a wide-crawl benchmark's time floor is computed from.
            params.insert("depth".to_owned(), self.max_depth.to_string());
            params.insert("root_depth".to_owned(), self.max_root_depth.to_string());
        }
        params.insert(
            "max_pages_per_host".to_owned(),
            self.policy.max_pages_per_host.to_string(),
        );
        params.insert(
            "max_url_bytes".to_owned(),
            self.policy.max_url_bytes.to_string(),
        );
        params.insert(
            "max_redirects".to_owned(),
            self.policy.max_redirects.to_string(),
        );
        params.insert(
            "max_segment_repeats".to_owned(),
            MAX_SEGMENT_REPEATS.to_string(),
        );
        params.insert(
            formats::ROBOTS_FILES_PARAM.to_owned(),
            robots_files().join(","),
        );
        Ok(Manifest {
            header: ManifestHeader {
                seed: cfg.seed,
                hosts: u64::from(cfg.hosts),
                profile: cfg.profiles.name(),
                agent: self.policy.agent.clone(),
                robots_4xx: if self.policy.robots_4xx_disallow {
                    Robots4xx::Disallow
                } else {
                    Robots4xx::Allow
                },
                params,
            },
            must,
            forbidden,
            sitemap_only,
        })
    }
}

/// One host's robots.txt for the agent, indexed so a URL is judged in time linear in
/// its length: literal patterns (no `*`, no final `$`) in a map probed with each prefix
/// of the URL, wildcard patterns matched one by one. Same semantics as
/// [`robots::evaluate`] (RFC 9309: longest match wins, `allow` wins a tie), which the
/// catalogue's `Large` entry (12,000 rules) makes too slow to call per URL.
#[derive(Debug)]
enum HostRules {
    AllowAll,
    DisallowAll,
    Rules {
        literal: HashMap<String, RuleKind>,
        wildcard: Vec<(RuleKind, String)>,
    },
}

impl HostRules {
    fn new(fetch: &RobotsFetch, policy: &ManifestPolicy) -> Self {
        match fetch {
            RobotsFetch::Rules(groups) | RobotsFetch::Redirect { target: groups, .. } => {
                Self::from_groups(groups, &policy.agent)
            }
            RobotsFetch::NotFound(_) => Self::AllowAll,
            RobotsFetch::Unauthorized(_) if policy.robots_4xx_disallow => Self::DisallowAll,
            RobotsFetch::Unauthorized(_) => Self::AllowAll,
            RobotsFetch::ServerError(_) => Self::DisallowAll,
        }
    }

    fn from_groups(groups: &[Group], agent: &str) -> Self {
        let token = robots::product_token(agent);
        let named = groups.iter().any(|g| g.agents.contains(&token));
        let mut literal: HashMap<String, RuleKind> = HashMap::new();
        let mut wildcard = Vec::new();
        let chosen = groups.iter().filter(|g| {
            g.agents
                .iter()
                .any(|a| if named { *a == token } else { a == "*" })
        });
        for (kind, pattern) in chosen.flat_map(|g| g.rules.iter()) {
            if pattern.is_empty() {
                continue;
            }
            if pattern.contains('*') || pattern.ends_with('$') {
                wildcard.push((*kind, pattern.clone()));
            } else {
                let slot = literal.entry(pattern.clone()).or_insert(*kind);
                if *kind == RuleKind::Allow {
                    *slot = RuleKind::Allow;
                }
            }
        }
        Self::Rules { literal, wildcard }
    }

    fn allows(&self, path_q: &str) -> bool {
        if path_q == "/robots.txt" {
            return true;
        }
        let (literal, wildcard) = match self {
            Self::AllowAll => return true,
            Self::DisallowAll => return false,
            Self::Rules { literal, wildcard } => (literal, wildcard),
        };
        let mut best: Option<(usize, RuleKind)> = None;
        let mut consider = |len: usize, kind: RuleKind| {
            best = match best {
                Some((l, k)) if l > len || (l == len && k == RuleKind::Allow) => Some((l, k)),
                _ => Some((len, kind)),
            };
        };
        if !literal.is_empty() {
            for (end, _) in path_q.char_indices().skip(1).chain([(path_q.len(), ' ')]) {
                if let Some(kind) = path_q.get(..end).and_then(|prefix| literal.get(prefix)) {
                    consider(end, *kind);
                }
            }
        }
        for (kind, pattern) in wildcard {
            if robots::pattern_matches(pattern.as_bytes(), path_q.as_bytes()) {
                consider(pattern.len(), *kind);
            }
        }
        best.is_none_or(|(_, kind)| kind == RuleKind::Allow)
    }
}

/// Whether trawl's default extractor takes and follows a link of this kind and element.
fn is_followed(kind: LinkKind, element: Element) -> bool {
    match kind {
        LinkKind::Follow | LinkKind::Refresh => true,
        LinkKind::Resource => element != Element::Img,
        LinkKind::NoFollowRel | LinkKind::Hidden(_) | LinkKind::NonHttp => false,
    }
}

/// Generate one page and reduce it to what the walk needs.
fn outcome(site: &Site, target: &Target) -> Outcome {
    let view: PageView = site.page(target.scheme, target.host, target.path_q());
    let response = &view.response;
    let well_formed = response.hostile.is_none_or(|kind| kind.delivers_page());
    let redirect = if (300..400).contains(&response.status) {
        view.redirect_to.clone()
    } else {
        None
    };
    let is_html = response
        .header("Content-Type")
        .is_some_and(|t| t.trim_start().to_ascii_lowercase().starts_with("text/html"));
    let nofollow = view.meta_robots.as_deref().is_some_and(says_nofollow)
        || view.x_robots_tag.as_deref().is_some_and(says_nofollow);
    let path = target.path_q();
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    let follow = (well_formed && (200..300).contains(&response.status) && is_html && !nofollow)
        .then(|| fingerprint(&abstract_own_locations(path, &response.body)));
    let links = view
        .links
        .into_iter()
        .filter_map(|link| Some((link.url?, link.kind, link.element)))
        .collect();
    Outcome {
        well_formed,
        follow,
        redirect,
        links,
    }
}

/// trawl's duplicate-content reading (`trawl::html::fingerprint::page_fingerprint`,
/// reimplemented here so the manifest stays an independent model): the body with every
/// mention of the page's own directory, the directory without its final `/`, its parent
/// directory and the parent without its `/` (in that order of preference, the root `/`
/// never) replaced by a marker, except right after `<` (an end tag such as `</a>`). Pages
/// equal after this are copies: a self-listing directory at `/ls/sub/` and
/// `/ls/sub/alt/` is one page.
fn abstract_own_locations<'a>(path: &str, body: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
    let path = path.as_bytes();
    let dir_end = path.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1);
    let dir = path.get(..dir_end).unwrap_or_default();
    let mut needles: Vec<&[u8]> = Vec::new();
    if dir.len() > 1 {
        let bare = dir.get(..dir.len() - 1).unwrap_or_default();
        needles.push(dir);
        needles.push(bare);
        let parent_end = bare.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1);
        let parent = bare.get(..parent_end).unwrap_or_default();
        if parent.len() > 1 {
            needles.push(parent);
            needles.push(parent.get(..parent.len() - 1).unwrap_or_default());
        }
    }
    if needles.is_empty() {
        return std::borrow::Cow::Borrowed(body);
    }
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while let Some(&byte) = body.get(i) {
        if byte == b'/' && (i == 0 || body.get(i - 1) != Some(&b'<')) {
            let tail = body.get(i..).unwrap_or_default();
            if let Some(k) = needles.iter().position(|n| tail.starts_with(n)) {
                out.extend_from_slice(&[0, b"DdPp"[k]]);
                i += needles[k].len();
                continue;
            }
        }
        out.push(byte);
        i += 1;
    }
    std::borrow::Cow::Owned(out)
}

/// A 128-bit content fingerprint of a body, word at a time (the generator's byte-wise
/// hash is too slow for hundreds of thousands of pages). Two lanes with different
/// multipliers; the length is mixed in. A collision could only make [`compute`] report a
/// spurious [`ManifestError::Ambiguous`], never a silent error: equal fingerprints are
/// checked to carry equal links.
fn fingerprint(body: &[u8]) -> u128 {
    const K1: u64 = 0x9E37_79B9_7F4A_7C15;
    const K2: u64 = 0xC2B2_AE3D_27D4_EB4F;
    let (mut a, mut b) = (0x243F_6A88_85A3_08D3_u64, 0x1319_8A2E_0370_7344_u64);
    let mut words = body.chunks_exact(8);
    for word in &mut words {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let w = u64::from_le_bytes(w);
        a = (a ^ w).wrapping_mul(K1).rotate_left(29);
        b = (b ^ w).wrapping_mul(K2).rotate_left(31);
    }
    let mut tail = [0u8; 8];
    if let Some(t) = tail.get_mut(..words.remainder().len()) {
        t.copy_from_slice(words.remainder());
    }
    let tail = u64::from_le_bytes(tail) ^ (body.len() as u64).rotate_left(56);
    a = mix64(a ^ tail);
    b = mix64(b ^ tail.wrapping_mul(K1));
    (u128::from(a) << 64) | u128::from(b)
}

/// Whether a robots directive list (`<meta name=robots>` content or `X-Robots-Tag`)
/// forbids following links.
fn says_nofollow(directives: &str) -> bool {
    directives.split(',').any(|d| {
        let d = d.trim();
        // `X-Robots-Tag: trawl: nofollow` style: the last `:`-part is the directive.
        let d = d.rsplit(':').next().unwrap_or(d).trim();
        d.eq_ignore_ascii_case("nofollow") || d.eq_ignore_ascii_case("none")
    })
}

/// More occurrences of one path segment than this make a URL a trap.
pub const MAX_SEGMENT_REPEATS: usize = 3;

/// trawl's repetition filter on the path of a request-target: one segment more than
/// [`MAX_SEGMENT_REPEATS`] times anywhere in the path, or a run of 2 or 3 segments
/// repeated 3 times in a row (`/a/b/a/b/a/b/`, `/x/y/z/x/y/z/x/y/z`). Empty segments are
/// ignored.
pub fn is_repetitive(path_q: &str) -> bool {
    let path = path_q.split('?').next().unwrap_or(path_q);
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for segment in &segments {
        let n = counts.entry(segment).or_default();
        *n += 1;
        if *n > MAX_SEGMENT_REPEATS {
            return true;
        }
    }
    (2..=3).any(|period| {
        segments.windows(3 * period).any(|w| {
            let (a, rest) = w.split_at(period);
            let (b, c) = rest.split_at(period);
            a == b && b == c
        })
    })
}

/// Map `items` with `f` on up to `available_parallelism` threads, keeping order.
fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(16);
    if threads <= 1 || items.len() < 64 {
        return items.iter().map(f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| {
                let f = &f;
                scope.spawn(move || part.iter().map(f).collect::<Vec<R>>())
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| match h.join() {
                Ok(results) => results,
                // A panic in the generator is a bug there; surface it here.
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Profiles, SiteConfig, Span};
    use crate::hosts::{HostRole, TrapKind};
    use crate::robots::RobotsVerdict;

    /// A small web (short pages, few pages per host) so debug-build tests stay fast.
    fn site(hosts: u32, profiles: Profiles) -> Site {
        Site::new(SiteConfig {
            hosts,
            profiles,
            page_bytes: Span {
                min: 1_024,
                max: 2_048,
            },
            out_degree: Span { min: 10, max: 30 },
            pages_per_host: Span { min: 10, max: 30 },
            ..SiteConfig::default()
        })
        .unwrap()
    }

    #[test]
    fn repetition_filter() {
        for (path, trap) in [
            ("/", false),
            ("/d/sub/sub/sub/", false),
            ("/d/sub/sub/sub/sub/", true),
            ("/a/b/a/b/a/", false),
            ("/a/b/a/b/a/b/", true),
            ("/x/y/z/x/y/z/x/y/", false),
            ("/x/y/z/x/y/z/x/y/z", true),
            ("/q/1?a=/a/a/a/a", false),
            ("/a/x/a/y/a/z/a", true),
        ] {
            assert_eq!(is_repetitive(path), trap, "{path}");
        }
    }

    #[test]
    fn indexed_robots_rules_agree_with_the_oracle() {
        let s = site(40, Profiles::default());
        let paths = [
            "/",
            "/p/1",
            "/private/1",
            "/private/open/1",
            "/private",
            "/x/1.php",
            "/x/1.php5",
            "/x/1.html?y=1",
            "/x/1.html?z=1",
            "/tmp/1",
            "/tmp",
            "/junk/77/a",
            "/junk/7",
            "/robots.txt",
            "/~u1/",
            "/wiki/Caf%C3%A9_0",
            "/q/1?a=1&b=two",
        ];
        for strict in [false, true] {
            let policy = ManifestPolicy {
                robots_4xx_disallow: strict,
                ..ManifestPolicy::default()
            };
            for host in 0..40 {
                let rules = HostRules::new(&s.robots(Scheme::Http, host).fetch, &policy);
                for path in paths {
                    let oracle =
                        s.robots_allows(host, "trawl", path, strict) == RobotsVerdict::Allowed;
                    assert_eq!(
                        rules.allows(path),
                        oracle,
                        "host {host} {path} strict {strict}"
                    );
                }
            }
        }
    }

    #[test]
    fn own_locations_are_abstracted_like_trawl() {
        let listing = |dir: &str, parent: &str| {
            format!(
                "<title>Index of {}</title><h1>Index of {dir}</h1><a href=\"{parent}\">up</a>\
                 <a href=\"sub/\">sub/</a>",
                dir.trim_end_matches('/')
            )
        };
        let a =
            abstract_own_locations("/ls/sub/", listing("/ls/sub/", "/ls/").as_bytes()).into_owned();
        let b = abstract_own_locations(
            "/ls/sub/alt/",
            listing("/ls/sub/alt/", "/ls/sub/").as_bytes(),
        )
        .into_owned();
        assert_eq!(a, b);
        // The root has no own location; an end tag is not a mention of `/a`.
        assert_eq!(&*abstract_own_locations("/", b"/x/"), b"/x/");
        assert_eq!(&*abstract_own_locations("/a/b/", b"</a>"), b"</a>");
        assert_ne!(
            abstract_own_locations("/p/1", b"<a href=\"/p/2\">").into_owned(),
            abstract_own_locations("/p/2", b"<a href=\"/p/3\">").into_owned()
        );
    }

    #[test]
    fn fingerprints_tell_bodies_apart() {
        let bodies: [&[u8]; 6] = [b"", b"\0", b"a", b"abcdefgh", b"abcdefgh\0", b"abcdefgi"];
        let prints: HashSet<u128> = bodies.iter().map(|b| fingerprint(b)).collect();
        assert_eq!(prints.len(), bodies.len());
        assert_eq!(fingerprint(b"same body"), fingerprint(b"same body"));
    }

    #[test]
    fn nofollow_directives() {
        assert!(says_nofollow("NOINDEX, NOFOLLOW"));
        assert!(says_nofollow("none"));
        assert!(says_nofollow("trawl: nofollow"));
        assert!(!says_nofollow("noindex"));
    }

    #[test]
    fn manifest_is_deterministic_and_consistent() {
        let s = site(40, Profiles::default());
        let a = compute(&s, &ManifestPolicy::default()).unwrap();
        let b = compute(&s, &ManifestPolicy::default()).unwrap();
        assert_eq!(a, b);
        assert!(a.must.is_disjoint(&a.forbidden));
        assert!(a.must.contains("http://h000000.synth.test:8080/"));
        assert!(a.must.len() > 500, "{}", a.must.len());
        assert!(!a.forbidden.is_empty());
        // Every M URL is allowed by robots and passes the filters; hidden targets are F.
        for url in &a.must {
            let t = Walk::new(&s, &ManifestPolicy::default())
                .target(url, 0)
                .unwrap();
            assert_eq!(
                s.robots_allows(t.host, "trawl", t.path_q(), false),
                RobotsVerdict::Allowed,
                "{url}"
            );
        }
        assert!(a.forbidden.iter().any(|u| u.contains("/hidden/")));
        assert!(!a
            .must
            .iter()
            .any(|u| u.contains("/hidden/") || u.contains("/img/")));
        // Round trip through the file format.
        let mut out = Vec::new();
        formats::write_manifest(&mut out, &a).unwrap();
        assert_eq!(formats::read_manifest(out.as_slice()).unwrap(), a);
    }

    #[test]
    fn robots_catalogue_shapes_m_and_f() {
        let s = site(40, Profiles::default());
        let m = compute(&s, &ManifestPolicy::default()).unwrap();
        for host in 0..40 {
            let name = s.host_name(host);
            let on_host: Vec<&String> = m.must.iter().filter(|u| u.contains(&name)).collect();
            match s.robots_entry(host).fetch() {
                RobotsFetch::ServerError(_) => assert!(on_host.is_empty(), "{name}"),
                _ if s.robots_allows(host, "trawl", "/", false) == RobotsVerdict::Disallowed => {
                    assert!(on_host.is_empty(), "{name}")
                }
                _ => {}
            }
        }
        let strict = ManifestPolicy {
            robots_4xx_disallow: true,
            ..ManifestPolicy::default()
        };
        let m4 = compute(&s, &strict).unwrap();
        assert!(m4.must.len() < m.must.len());
        assert_eq!(m4.header.robots_4xx, Robots4xx::Disallow);
    }

    #[test]
    fn traps_are_cut_by_filters_and_budget() {
        let s = site(
            30,
            Profiles {
                traps: true,
                hostile: false,
                ..Profiles::default()
            },
        );
        let policy = ManifestPolicy {
            max_pages_per_host: 300,
            ..ManifestPolicy::default()
        };
        let m = compute(&s, &policy).unwrap();
        let host = |kind| {
            let i = crate::hosts::TRAP_HOSTS
                .iter()
                .find(|(_, k)| *k == kind)
                .unwrap()
                .0;
            format!("http://{}:8080", s.host_name(i))
        };
        let on = |set: &BTreeSet<String>, kind| {
            let h = host(kind);
            set.iter().filter(|u| u.starts_with(&h)).count()
        };
        // Symlink loop: /, /d/, /d/sub/ .. /d/sub/sub/sub/, which is a copy of
        // /d/sub/sub/ (own directory abstracted), so the fourth `sub` is never linked.
        let d = host(TrapKind::SymlinkLoop);
        let under = |prefix: &str| {
            let p = format!("{d}{prefix}");
            m.must.iter().filter(|u| u.starts_with(&p)).count()
        };
        assert_eq!(under("/d/"), 4);
        assert!(m.must.contains(&format!("{d}/")));
        assert!(m.must.contains(&format!("{d}/d/sub/sub/sub/")));
        assert!(!m.must.contains(&format!("{d}/d/sub/sub/sub/sub/")));
        // The self-listing loop: /ls/ and the first level below it are new pages, every
        // deeper listing is a copy (own directory abstracted), whose links are not
        // followed: 7 fetches, where the URL filters alone would allow 134.
        let mut ls: Vec<&str> = m
            .must
            .iter()
            .filter_map(|u| u.strip_prefix(&format!("{d}/ls/")))
            .collect();
        ls.sort_unstable();
        assert_eq!(
            ls,
            [
                "",
                "alt/",
                "index.html",
                "sub/",
                "sub/alt/",
                "sub/index.html",
                "sub/sub/"
            ]
        );
        assert_eq!(on(&m.must, TrapKind::SymlinkLoop), 1 + 4 + 7);
        let a = host(TrapKind::PeriodTwo);
        assert!(m.must.contains(&format!("{a}/a/b/a/b/a/")));
        // /a/b/a/b/a/ is a copy of /a/b/a/: its link /a/b/a/b/a/b/ is never taken.
        assert!(!m.must.contains(&format!("{a}/a/b/a/b/a/b/")));
        // Budget-limited traps: exactly the budget, and the next queued URL is F.
        for kind in [
            TrapKind::Calendar,
            TrapKind::SessionIds,
            TrapKind::MillionPages,
        ] {
            assert_eq!(on(&m.must, kind), 300, "{kind:?}");
            assert!(on(&m.forbidden, kind) >= 1, "{kind:?}");
        }
        let c = host(TrapKind::Calendar);
        assert!(m.must.contains(&format!("{c}/cal/2031/07")));
        assert!(m.forbidden.contains(&format!(
            "{c}/cal/{}/{:02}",
            2031 + (299 + 6) / 12,
            (299 + 6) % 12 + 1
        )));
        // Growing URLs stop at the length limit, before the budget.
        let g = host(TrapKind::GrowingUrls);
        assert!(on(&m.must, TrapKind::GrowingUrls) < 300);
        assert!(m
            .must
            .iter()
            .filter(|u| u.starts_with(&g))
            .all(|u| u.len() <= 2048));
        assert!(m
            .forbidden
            .iter()
            .any(|u| u.starts_with(&g) && u.len() > 2048));
        // Duplicates: every variant fetched, each once.
        assert_eq!(on(&m.must, TrapKind::Duplicates), 1 + 20 + 5);
        for i in 0..30 {
            if s.role(i) == HostRole::Normal {
                assert!(
                    m.must.contains(&format!("http://{}:8080/", s.host_name(i)))
                        || s.robots_allows(i, "trawl", "/", false) == RobotsVerdict::Disallowed
                );
            }
        }
    }

    #[test]
    fn hostile_pages_are_neither_m_nor_f() {
        let s = site(
            30,
            Profiles {
                traps: false,
                hostile: true,
                ..Profiles::default()
            },
        );
        let m = compute(&s, &ManifestPolicy::default()).unwrap();
        for (i, kind) in crate::hosts::HOSTILE_HOSTS {
            let root = format!("http://{}:8080/", s.host_name(i));
            let well_formed = kind.delivers_page() || kind.is_tls_only();
            assert_eq!(m.must.contains(&root), well_formed, "{kind:?}");
            assert!(!m.forbidden.contains(&root), "{kind:?}");
        }
    }

    #[test]
    fn a_budget_below_ordinary_hosts_is_refused() {
        let s = site(20, Profiles::default());
        let tiny = ManifestPolicy {
            max_pages_per_host: 5,
            ..ManifestPolicy::default()
        };
        assert!(matches!(
            compute(&s, &tiny),
            Err(ManifestError::Ambiguous(_))
        ));
        let zero = ManifestPolicy {
            max_pages_per_host: 0,
            ..ManifestPolicy::default()
        };
        assert!(matches!(compute(&s, &zero), Err(ManifestError::Policy(_))));
    }

    #[test]
    fn robots_files_are_the_redirect_targets() {
        assert_eq!(robots_files(), ["/robots-cross.txt", "/robots-real.txt"]);
    }
}
