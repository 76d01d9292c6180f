//! The walk: a breadth-first crawl of the generator's graph by the policy's crawler,
//! host by host, that sorts every URL it meets into `M`, `F` or neither.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::formats::{self, Manifest, ManifestHeader, Robots4xx};
use crate::html::{Element, LinkKind};
use crate::site::{PageView, Scheme, Site};

use super::host_rules::HostRules;
use super::page_reading::{abstract_own_locations, fingerprint, is_followed, says_nofollow};
use super::url_filters::{is_repetitive, MAX_SEGMENT_REPEATS};
use super::{robots_files, ManifestError, ManifestPolicy};

/// A canonical URL split into what the generator needs.
#[derive(Debug, Clone)]
pub(super) struct Target {
    pub(super) url: String,
    scheme: Scheme,
    pub(super) host: u32,
    /// Path and query (the request-target).
    path_q_at: usize,
    /// Consecutive redirects that led here.
    redirects: u32,
}

impl Target {
    pub(super) fn path_q(&self) -> &str {
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

pub(super) struct Walk<'a> {
    pub(super) site: &'a Site,
    pub(super) policy: &'a ManifestPolicy,
    /// Every URL queued (or refused) once, the presence set.
    seen: HashSet<String>,
    /// Requests per host.
    pub(super) requests: HashMap<u32, u32>,
    /// Distinct entry URLs of each host: seeds and links or redirects from other hosts.
    entries: HashMap<u32, BTreeSet<String>>,
    /// Fetched URLs that answered well-formed (the M candidates).
    pub(super) fetched: BTreeSet<String>,
    /// Fetched URLs of hostile hosts that never answer with a well-formed page.
    unfetchable: BTreeSet<String>,
    /// URLs refused by robots.txt or the URL filters.
    pub(super) forbidden: BTreeSet<String>,
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
    pub(super) robots: HashMap<u32, HostRules>,
    /// Largest hop count from a seed of a fetched URL (the BFS level).
    max_depth: u32,
    /// Largest hop count from a seed of a fetched host root `/`.
    max_root_depth: u32,
}

/// What one fetched page contributes, computed in parallel and applied in order.
struct Outcome {
    pub(super) well_formed: bool,
    follow: Option<u128>,
    redirect: Option<String>,
    pub(super) links: Vec<(String, LinkKind, Element)>,
}

impl<'a> Walk<'a> {
    pub(super) fn new(site: &'a Site, policy: &'a ManifestPolicy) -> Self {
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
    pub(super) fn target(&self, url: &str, redirects: u32) -> Option<Target> {
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
    pub(super) fn run(&mut self) -> Result<(), ManifestError> {
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
    pub(super) fn extend_possible(&mut self) {
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

    pub(super) fn finish(self) -> Result<Manifest, ManifestError> {
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
