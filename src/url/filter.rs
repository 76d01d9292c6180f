//! The crawl's URL filters: the defences against traps (length, repeated segments,
//! depth), unwanted content (extensions, dynamic gateways), the operator's blacklist,
//! the crawl scope and the hop limit. Each refusal is a [`Reject`] with a stable code
//! for the crawl log.
//!
//! The filters work on canonical URLs (see [`super::canonicalize`]); build a
//! [`UrlFilter`] once from a [`FilterConfig`] and the seeds, then call
//! [`UrlFilter::check`] for every discovered link.

#![deny(clippy::indexing_slicing)]

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt;

use regex::RegexSet;
use url::{Host, Url};

use super::plain::PlainUrl;
use super::Reject;

/// Extensions refused by default: archives, executables and installers, images,
/// audio, video and other large binary media. The 1990s robot guides named
/// `.gz .tar .zip .exe .gif .jpg`; the rest are their modern kin.
pub const DEFAULT_BLOCKED_EXTENSIONS: &[&str] = &[
    // archives and compressed files
    "gz", "tgz", "tar", "zip", "bz2", "tbz", "tbz2", "xz", "txz", "7z", "rar", "zst", "lz", "lzma",
    "z", "cab", "arj", "lha", "iso", "dmg", "img", // executables, installers, packages
    "exe", "msi", "dll", "bin", "apk", "ipa", "deb", "rpm", "jar", "war", "class", "so",
    "appimage", "pkg", "msix", // images
    "gif", "jpg", "jpeg", "jpe", "png", "bmp", "tif", "tiff", "ico", "webp", "avif", "heic",
    "heif", "svg", "svgz", "psd", "xcf", "raw", "cr2", "nef", "jxl", // audio
    "mp3", "wav", "ogg", "oga", "opus", "flac", "aac", "m4a", "wma", "mid", "midi", "aif", "aiff",
    "ra", "ram", // video and animation
    "mp4", "m4v", "avi", "mov", "qt", "wmv", "flv", "f4v", "mkv", "webm", "mpg", "mpeg", "3gp",
    "ogv", "asf", "rm", "rmvb", "vob", "swf",
];

/// Which URLs belong to the crawl.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Scope {
    /// Every URL (a web-wide crawl; the other filters still apply).
    #[default]
    Any,
    /// Only the hosts of the seeds (exact host names, any scheme or port).
    SeedHosts,
    /// Only the registrable domains of the seeds (`news.example.co.uk` keeps
    /// everything under `example.co.uk`), from the public suffix list built into the
    /// `psl` crate. An IP-address seed keeps only that address.
    SeedDomains,
    /// URLs matching at least one `include` regex and no `exclude` regex.
    Regex {
        /// Patterns (Rust `regex` syntax) matched against the canonical URL.
        include: Vec<String>,
        /// Patterns that take a URL out of scope even if included.
        exclude: Vec<String>,
    },
}

/// The operator's blacklist: hosts (each also covers its subdomains), URL prefixes
/// and regexes. See [`Blacklist::parse`] for the file format.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Blacklist {
    /// Host names; `example.com` also blocks `www.example.com`.
    pub hosts: Vec<String>,
    /// URL prefixes, compared with the canonical URL (they are canonicalized first).
    pub prefixes: Vec<String>,
    /// Regexes matched anywhere in the canonical URL.
    pub regexes: Vec<String>,
}

impl Blacklist {
    /// Parses a blacklist file: one entry a line; blank lines and lines starting with
    /// `#` are ignored; `host NAME`, `prefix URL` and `regex PATTERN` say what an entry
    /// is; a bare entry is a prefix if it contains `://` and a host otherwise.
    ///
    /// # Errors
    /// [`FilterBuildError::BlacklistLine`] for an empty `host`/`prefix`/`regex` entry.
    pub fn parse(text: &str) -> Result<Blacklist, FilterBuildError> {
        let mut list = Blacklist::default();
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (kind, value) = match line.split_once(char::is_whitespace) {
                Some((kind @ ("host" | "prefix" | "regex"), value)) => (kind, value.trim()),
                _ if line == "host" || line == "prefix" || line == "regex" => (line, ""),
                _ if line.contains("://") => ("prefix", line),
                _ => ("host", line),
            };
            if value.is_empty() {
                return Err(FilterBuildError::BlacklistLine { line: index + 1 });
            }
            let target = match kind {
                "host" => &mut list.hosts,
                "prefix" => &mut list.prefixes,
                _ => &mut list.regexes,
            };
            target.push(value.to_owned());
        }
        Ok(list)
    }
}

/// Every limit and switch of the URL filters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterConfig {
    /// Longest canonical URL accepted, in bytes (default 2,048).
    pub max_url_bytes: usize,
    /// A path segment may occur at most this many times (default 3).
    pub max_segment_occurrences: usize,
    /// A run of `2..=max_sequence_period` segments may repeat back to back at most
    /// this many times (default 2: `/a/b/a/b/a/b/` is refused).
    pub max_sequence_repeats: usize,
    /// Longest repeating run of segments looked for (default 3).
    pub max_sequence_period: usize,
    /// Most non-empty path segments accepted (default 20).
    pub max_path_depth: usize,
    /// Refused extensions of the last path segment, lower case, without the dot.
    pub blocked_extensions: Vec<String>,
    /// Refuse dynamic URLs: `cgi` anywhere in the path, or any query (default off).
    pub reject_dynamic: bool,
    /// The operator's blacklist.
    pub blacklist: Blacklist,
    /// The crawl scope.
    pub scope: Scope,
    /// Most links followed from a seed (default 20; seeds are hop 0).
    pub max_hops: u32,
}

impl Default for FilterConfig {
    fn default() -> Self {
        FilterConfig {
            max_url_bytes: 2048,
            max_segment_occurrences: 3,
            max_sequence_repeats: 2,
            max_sequence_period: 3,
            max_path_depth: 20,
            blocked_extensions: DEFAULT_BLOCKED_EXTENSIONS
                .iter()
                .map(|e| (*e).to_owned())
                .collect(),
            reject_dynamic: false,
            blacklist: Blacklist::default(),
            scope: Scope::Any,
            max_hops: 20,
        }
    }
}

/// A filter could not be built from its configuration.
#[derive(Debug)]
#[non_exhaustive]
pub enum FilterBuildError {
    /// A blacklist or scope regex does not compile.
    Regex {
        /// The offending pattern.
        pattern: String,
        /// The regex crate's error.
        source: regex::Error,
    },
    /// A blacklist line has a kind but no value.
    BlacklistLine {
        /// 1-based line number.
        line: usize,
    },
}

impl fmt::Display for FilterBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FilterBuildError::Regex { pattern, .. } => write!(f, "bad regex {pattern:?}"),
            FilterBuildError::BlacklistLine { line } => {
                write!(f, "blacklist line {line} has no value")
            }
        }
    }
}

impl std::error::Error for FilterBuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FilterBuildError::Regex { source, .. } => Some(source),
            FilterBuildError::BlacklistLine { .. } => None,
        }
    }
}

/// Compiled scope.
#[derive(Debug, Clone)]
enum CompiledScope {
    Any,
    Hosts(NameSet),
    Domains(NameSet),
    Regex {
        include: RegexSet,
        exclude: RegexSet,
    },
}

/// The URL filters, compiled: hash sets for hosts and extensions, one `RegexSet` per
/// regex list.
#[derive(Debug, Clone)]
pub struct UrlFilter {
    config: FilterConfig,
    extensions: NameSet,
    blocked_hosts: NameSet,
    blocked_prefixes: Vec<String>,
    blocked_regexes: RegexSet,
    scope: CompiledScope,
}

fn regex_set(patterns: &[String]) -> Result<RegexSet, FilterBuildError> {
    for pattern in patterns {
        if let Err(source) = regex::Regex::new(pattern) {
            return Err(FilterBuildError::Regex {
                pattern: pattern.clone(),
                source,
            });
        }
    }
    RegexSet::new(patterns).map_err(|source| FilterBuildError::Regex {
        pattern: patterns.join(" | "),
        source,
    })
}

/// The sets of names every link is looked up in: ahash, keyed at random as SipHash
/// is, at a fraction of its cost on short keys.
type NameSet = HashSet<String, ahash::RandomState>;

fn normalize_host(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// `text` in lower case, copied only if it has an upper-case letter (a canonical
/// URL's host never has; an extension seldom).
fn lowercase(text: &str) -> Cow<'_, str> {
    if text.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(text.to_ascii_lowercase())
    } else {
        Cow::Borrowed(text)
    }
}

/// What the filters read of a URL: the parts of a parsed [`Url`], or the same parts
/// cut from the text of a [`PlainUrl`] (a canonical key the crawl need not parse).
trait Parts {
    fn as_str(&self) -> &str;
    fn host_str(&self) -> Option<&str>;
    fn host(&self) -> Option<Host<&str>>;
    fn path(&self) -> &str;
    fn query(&self) -> Option<&str>;
}

impl Parts for Url {
    fn as_str(&self) -> &str {
        Url::as_str(self)
    }
    fn host_str(&self) -> Option<&str> {
        Url::host_str(self)
    }
    fn host(&self) -> Option<Host<&str>> {
        Url::host(self)
    }
    fn path(&self) -> &str {
        Url::path(self)
    }
    fn query(&self) -> Option<&str> {
        Url::query(self)
    }
}

impl Parts for PlainUrl<'_> {
    fn as_str(&self) -> &str {
        PlainUrl::as_str(self)
    }
    fn host_str(&self) -> Option<&str> {
        Some(PlainUrl::host_str(self))
    }
    fn host(&self) -> Option<Host<&str>> {
        Some(PlainUrl::host(self))
    }
    fn path(&self) -> &str {
        PlainUrl::path(self)
    }
    fn query(&self) -> Option<&str> {
        PlainUrl::query(self)
    }
}

/// The registrable domain (eTLD+1) of a host, or the host itself for IP addresses and
/// names the public suffix list cannot split.
fn registrable_domain(url: &impl Parts) -> Option<String> {
    match url.host()? {
        Host::Domain(domain) => {
            let domain = domain.trim_end_matches('.');
            Some(psl::domain_str(domain).unwrap_or(domain).to_owned())
        }
        Host::Ipv4(ip) => Some(ip.to_string()),
        Host::Ipv6(ip) => Some(format!("[{ip}]")),
    }
}

impl UrlFilter {
    /// Compiles `config`; `seeds` (canonical URLs) define the seed-host and
    /// seed-domain scopes.
    ///
    /// # Errors
    /// [`FilterBuildError::Regex`] if a blacklist or scope regex does not compile.
    pub fn new(config: FilterConfig, seeds: &[Url]) -> Result<UrlFilter, FilterBuildError> {
        let scope = match &config.scope {
            Scope::Any => CompiledScope::Any,
            Scope::SeedHosts => CompiledScope::Hosts(
                seeds
                    .iter()
                    .filter_map(Url::host_str)
                    .map(normalize_host)
                    .collect(),
            ),
            Scope::SeedDomains => {
                CompiledScope::Domains(seeds.iter().filter_map(registrable_domain).collect())
            }
            Scope::Regex { include, exclude } => CompiledScope::Regex {
                include: regex_set(include)?,
                exclude: regex_set(exclude)?,
            },
        };
        let blocked_prefixes = config
            .blacklist
            .prefixes
            .iter()
            .map(|p| match super::canonicalize_absolute(p) {
                // Keep a prefix without a path as typed: `http://h` must not become
                // `http://h/`, which would miss `http://h:8080/`.
                Ok(url) if p.trim_end().ends_with('/') || url.path() != "/" => url.into(),
                _ => p.clone(),
            })
            .collect();
        Ok(UrlFilter {
            extensions: config
                .blocked_extensions
                .iter()
                .map(|e| e.trim_start_matches('.').to_ascii_lowercase())
                .collect(),
            blocked_hosts: config
                .blacklist
                .hosts
                .iter()
                .map(|h| normalize_host(h))
                .collect(),
            blocked_prefixes,
            blocked_regexes: regex_set(&config.blacklist.regexes)?,
            scope,
            config,
        })
    }

    /// The configuration this filter was built from.
    pub fn config(&self) -> &FilterConfig {
        &self.config
    }

    /// Decides whether the crawl may fetch `url`, found `hops` links away from a seed.
    ///
    /// # Errors
    /// The first filter that refuses the URL, as a [`Reject`].
    pub fn check(&self, url: &Url, hops: u32) -> Result<(), Reject> {
        self.check_parts(url, hops)
    }

    /// [`UrlFilter::check`] of a canonical URL read from its text: the same verdict
    /// as for its parse.
    pub(crate) fn check_plain(&self, url: &PlainUrl<'_>, hops: u32) -> Result<(), Reject> {
        self.check_parts(url, hops)
    }

    fn check_parts(&self, url: &impl Parts, hops: u32) -> Result<(), Reject> {
        let cfg = &self.config;
        let bytes = url.as_str().len();
        if bytes > cfg.max_url_bytes {
            return Err(Reject::TooLong {
                bytes,
                max_bytes: cfg.max_url_bytes,
            });
        }
        if self.is_blacklisted(url) {
            return Err(Reject::Blacklisted);
        }
        if !self.is_in_scope(url) {
            return Err(Reject::OutOfScope);
        }
        if hops > cfg.max_hops {
            return Err(Reject::TooManyHops {
                hops,
                max_hops: cfg.max_hops,
            });
        }
        let path = url.path();
        if cfg.reject_dynamic && (url.query().is_some() || contains_cgi(path)) {
            return Err(Reject::Dynamic);
        }
        if self.has_blocked_extension(path) {
            return Err(Reject::BlockedExtension);
        }
        let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        if segments.len() > cfg.max_path_depth {
            return Err(Reject::TooDeep {
                depth: segments.len(),
                max_depth: cfg.max_path_depth,
            });
        }
        if self.has_repeated_segments(&segments) {
            return Err(Reject::RepeatedSegments);
        }
        Ok(())
    }

    fn is_blacklisted(&self, url: &impl Parts) -> bool {
        if !self.blocked_hosts.is_empty() {
            if let Some(host) = url.host_str() {
                let host = host.trim_end_matches('.');
                let mut suffix = host;
                loop {
                    if self.blocked_hosts.contains(suffix) {
                        return true;
                    }
                    match suffix.split_once('.') {
                        Some((_, rest)) if !rest.is_empty() => suffix = rest,
                        _ => break,
                    }
                }
            }
        }
        let text = url.as_str();
        self.blocked_prefixes
            .iter()
            .any(|p| text.starts_with(p.as_str()))
            || (!self.blocked_regexes.is_empty() && self.blocked_regexes.is_match(text))
    }

    fn is_in_scope(&self, url: &impl Parts) -> bool {
        match &self.scope {
            CompiledScope::Any => true,
            CompiledScope::Hosts(hosts) => url
                .host_str()
                .is_some_and(|h| hosts.contains(lowercase(h.trim_end_matches('.')).as_ref())),
            CompiledScope::Domains(domains) => {
                registrable_domain(url).is_some_and(|d| domains.contains(&d))
            }
            CompiledScope::Regex { include, exclude } => {
                include.is_match(url.as_str()) && !exclude.is_match(url.as_str())
            }
        }
    }

    fn has_blocked_extension(&self, path: &str) -> bool {
        let last = path.rsplit('/').next().unwrap_or("");
        let last = last.split(';').next().unwrap_or("");
        match last.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() && !ext.is_empty() => {
                self.extensions.contains(lowercase(ext).as_ref())
            }
            _ => false,
        }
    }

    fn has_repeated_segments(&self, segments: &[&str]) -> bool {
        let cfg = &self.config;
        if segments.len() > cfg.max_segment_occurrences {
            if segments.len() <= 64 {
                for (i, seg) in segments.iter().enumerate() {
                    let later = segments.iter().skip(i).filter(|s| *s == seg).count();
                    if later > cfg.max_segment_occurrences {
                        return true;
                    }
                }
            } else {
                let mut counts: HashMap<&str, usize> = HashMap::new();
                for seg in segments {
                    let n = counts.entry(seg).or_insert(0);
                    *n += 1;
                    if *n > cfg.max_segment_occurrences {
                        return true;
                    }
                }
            }
        }
        let repeats = cfg.max_sequence_repeats.saturating_add(1);
        for period in 2..=cfg.max_sequence_period.max(1) {
            let span = period.saturating_mul(repeats);
            if span > segments.len() {
                break;
            }
            for start in 0..=segments.len() - span {
                let Some(window) = segments.get(start..start + span) else {
                    break;
                };
                let (first, rest) = window.split_at(period);
                if rest.chunks(period).all(|chunk| chunk == first) {
                    return true;
                }
            }
        }
        false
    }

    /// A filter with the default configuration and no seeds (scope `Any`), used by the
    /// fuzz entry points.
    pub(crate) fn default_for_fuzz() -> UrlFilter {
        UrlFilter {
            config: FilterConfig::default(),
            extensions: DEFAULT_BLOCKED_EXTENSIONS
                .iter()
                .map(|e| (*e).to_owned())
                .collect(),
            blocked_hosts: NameSet::default(),
            blocked_prefixes: Vec::new(),
            blocked_regexes: RegexSet::empty(),
            scope: CompiledScope::Any,
        }
    }

    /// Canonicalizes `url` as an absolute URL, then [`UrlFilter::check`]s it.
    ///
    /// # Errors
    /// The canonicalization or filter [`Reject`].
    pub fn check_str(&self, url: &str, hops: u32) -> Result<Url, Reject> {
        let url = super::canonicalize_absolute(url)?;
        self.check(&url, hops)?;
        Ok(url)
    }
}

/// `cgi` in any case anywhere in the path (`/cgi-bin/`, `/search.cgi`).
fn contains_cgi(path: &str) -> bool {
    path.as_bytes()
        .windows(3)
        .any(|w| w.eq_ignore_ascii_case(b"cgi"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        super::super::canonicalize_absolute(s).expect("test url")
    }

    fn code(filter: &UrlFilter, s: &str, hops: u32) -> &'static str {
        match filter.check(&url(s), hops) {
            Ok(()) => "ok",
            Err(r) => r.code(),
        }
    }

    #[test]
    fn defaults_table() {
        let f = UrlFilter::new(FilterConfig::default(), &[]).expect("filter");
        let long = format!("http://h/{}", "x".repeat(2048));
        let exact = format!("http://h/{}", "x".repeat(2048 - 9));
        for (u, expected) in [
            ("http://h/", "ok"),
            (long.as_str(), "too_long"),
            (exact.as_str(), "ok"),
            // one segment more than three times
            ("http://h/a/x/a/y/a/z/a", "repeated_segments"),
            ("http://h/a/x/a/y/a/z", "ok"),
            ("http://h/a/a/a/a/", "repeated_segments"),
            // a run of period 2 or 3 repeated three times
            ("http://h/a/b/a/b/a/b/", "repeated_segments"),
            ("http://h/x/a/b/c/a/b/c/a/b/c", "repeated_segments"),
            ("http://h/a/b/a/b/", "ok"),
            ("http://h/a/b/c/a/b/c/", "ok"),
            ("http://h/a//b//a//b//a/c", "ok"),
            // depth
            (
                "http://h/1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16/17/18/19/20",
                "ok",
            ),
            (
                "http://h/1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16/17/18/19/20/21",
                "too_deep",
            ),
            // extensions, case-insensitive, last segment only
            ("http://h/a.tar.gz", "blocked_extension"),
            ("http://h/Setup.EXE", "blocked_extension"),
            ("http://h/pic.JPG?x=1", "blocked_extension"),
            ("http://h/photo.webp", "blocked_extension"),
            ("http://h/zip/readme.html", "ok"),
            ("http://h/.gif", "ok"),
            ("http://h/a.zip/", "ok"),
            ("http://h/a.mp4;v=1", "blocked_extension"),
            // dynamic URLs are allowed by default
            ("http://h/cgi-bin/cal?m=1", "ok"),
        ] {
            assert_eq!(code(&f, u, 0), expected, "{u}");
        }
        assert_eq!(code(&f, "http://h/", 20), "ok");
        assert_eq!(code(&f, "http://h/", 21), "too_many_hops");
    }

    #[test]
    fn dynamic_filter() {
        let f = UrlFilter::new(
            FilterConfig {
                reject_dynamic: true,
                ..FilterConfig::default()
            },
            &[],
        )
        .expect("filter");
        assert_eq!(code(&f, "http://h/cgi-bin/x", 0), "dynamic");
        assert_eq!(code(&f, "http://h/search.CGI", 0), "dynamic");
        assert_eq!(code(&f, "http://h/a?", 0), "dynamic");
        assert_eq!(code(&f, "http://h/a?b=1", 0), "dynamic");
        assert_eq!(code(&f, "http://h/a", 0), "ok");
    }

    #[test]
    fn blacklist_file() {
        let text = "# trap sites\nhost spam.example\n\nprefix http://h/private/\nregex (?i)calendar\\.php\nevil.example\nhttp://h:8080\n";
        let list = Blacklist::parse(text).expect("parses");
        assert_eq!(list.hosts, ["spam.example", "evil.example"]);
        assert_eq!(list.prefixes, ["http://h/private/", "http://h:8080"]);
        assert_eq!(list.regexes, ["(?i)calendar\\.php"]);
        let f = UrlFilter::new(
            FilterConfig {
                blacklist: list,
                ..FilterConfig::default()
            },
            &[],
        )
        .expect("filter");
        for (u, expected) in [
            ("http://spam.example/", "blacklisted"),
            ("https://www.SPAM.example./x", "blacklisted"),
            ("http://notspam.example/", "ok"),
            ("http://h/private/a", "blacklisted"),
            ("http://h/%70rivate/a", "blacklisted"),
            ("http://h/privateer", "ok"),
            ("http://h/Calendar.php?y=2030", "blacklisted"),
            ("http://h:8080/x", "blacklisted"),
            ("http://h:80/x", "ok"),
        ] {
            assert_eq!(code(&f, u, 0), expected, "{u}");
        }
        assert!(matches!(
            Blacklist::parse("regex\n"),
            Err(FilterBuildError::BlacklistLine { line: 1 })
        ));
        let bad = FilterConfig {
            blacklist: Blacklist {
                regexes: vec!["(".into()],
                ..Blacklist::default()
            },
            ..FilterConfig::default()
        };
        assert!(matches!(
            UrlFilter::new(bad, &[]),
            Err(FilterBuildError::Regex { .. })
        ));
    }

    #[test]
    fn scopes() {
        let seeds = [
            url("http://news.example.co.uk/"),
            url("https://10.0.0.1:8080/"),
        ];
        let hosts = UrlFilter::new(
            FilterConfig {
                scope: Scope::SeedHosts,
                ..FilterConfig::default()
            },
            &seeds,
        )
        .expect("filter");
        let domains = UrlFilter::new(
            FilterConfig {
                scope: Scope::SeedDomains,
                ..FilterConfig::default()
            },
            &seeds,
        )
        .expect("filter");
        for (u, by_host, by_domain) in [
            ("https://news.example.co.uk/a", "ok", "ok"),
            ("http://sport.example.co.uk/", "out_of_scope", "ok"),
            ("http://example.co.uk/", "out_of_scope", "ok"),
            ("http://other.co.uk/", "out_of_scope", "out_of_scope"),
            ("http://10.0.0.1/", "ok", "ok"),
            ("http://10.0.0.2/", "out_of_scope", "out_of_scope"),
        ] {
            assert_eq!(code(&hosts, u, 0), by_host, "hosts {u}");
            assert_eq!(code(&domains, u, 0), by_domain, "domains {u}");
        }
        let regex = UrlFilter::new(
            FilterConfig {
                scope: Scope::Regex {
                    include: vec!["^https?://([a-z]+\\.)?example\\.org/".into()],
                    exclude: vec!["/private/".into()],
                },
                ..FilterConfig::default()
            },
            &[],
        )
        .expect("filter");
        assert_eq!(code(&regex, "http://www.example.org/a", 0), "ok");
        assert_eq!(
            code(&regex, "http://example.org/private/a", 0),
            "out_of_scope"
        );
        assert_eq!(code(&regex, "http://example.com/", 0), "out_of_scope");
    }

    #[test]
    fn limits_are_configurable() {
        let f = UrlFilter::new(
            FilterConfig {
                max_url_bytes: 20,
                max_segment_occurrences: 1,
                max_path_depth: 2,
                max_hops: 0,
                blocked_extensions: vec![".PDF".into()],
                ..FilterConfig::default()
            },
            &[],
        )
        .expect("filter");
        assert_eq!(code(&f, "http://h/a/a", 0), "repeated_segments");
        assert_eq!(code(&f, "http://h/a/b/c", 0), "too_deep");
        assert_eq!(code(&f, "http://h/x.pdf", 0), "blocked_extension");
        assert_eq!(code(&f, "http://h/x.gif", 0), "ok");
        assert_eq!(code(&f, "http://h/", 1), "too_many_hops");
        assert_eq!(code(&f, "http://h/abcdefghijklmn", 0), "too_long");
        assert_eq!(
            f.check(&url("http://h/abcdefghijklmn"), 0)
                .map_err(|r| r.to_string()),
            Err("url too long: 23 bytes > 20".to_owned())
        );
    }
}
