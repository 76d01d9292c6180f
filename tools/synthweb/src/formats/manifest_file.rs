//! The manifest file: a header line of parameters, then one tagged URL a line
//! (`M` must fetch, `F` must not, `S` sitemap-only).

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, BufRead, Write};
use std::str::FromStr;

use super::error::{FileKind, FormatError};
use super::line_reader::{is_plausible_url, LineReader};

/// How the crawl policy treats a robots.txt answered with 401 or 403.
///
/// RFC 9309 §2.3.1.3 says any 4xx means "no robots.txt: crawl anything"; some crawlers
/// treat 401/403 as "disallow everything" instead. The manifest depends on this choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Robots4xx {
    /// 401/403 mean allow (RFC 9309; trawl's default).
    #[default]
    Allow,
    /// 401/403 mean disallow all.
    Disallow,
}

impl Robots4xx {
    /// The header spelling (`allow` / `disallow`).
    pub fn as_str(self) -> &'static str {
        match self {
            Robots4xx::Allow => "allow",
            Robots4xx::Disallow => "disallow",
        }
    }

    /// Whether 401/403 robots.txt mean "disallow all" under this policy.
    pub fn is_disallow(self) -> bool {
        self == Robots4xx::Disallow
    }
}

impl FromStr for Robots4xx {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, ()> {
        match s {
            "allow" => Ok(Robots4xx::Allow),
            "disallow" => Ok(Robots4xx::Disallow),
            _ => Err(()),
        }
    }
}

/// The first line of a manifest: what the ground truth was computed for.
///
/// Written as `# synthweb manifest v1 seed=42 hosts=100 profile=default agent=trawl
/// robots_4xx=allow` followed by any further `key=value` pairs (the trap budget), which
/// are kept in `params` in order of key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestHeader {
    /// Generator seed.
    pub seed: u64,
    /// Number of hosts.
    pub hosts: u64,
    /// Profile (or comma-separated profile set) the web was generated with.
    pub profile: String,
    /// Robots agent name the policy uses (the product token, e.g. `trawl`).
    pub agent: String,
    /// How 401/403 robots.txt are treated.
    pub robots_4xx: Robots4xx,
    /// Further `key=value` parameters (trap budget), values without whitespace.
    pub params: BTreeMap<String, String>,
}

/// Manifest header parameter listing, comma-separated, the request-targets besides
/// `/robots.txt` that a crawler fetches as robots files (targets of robots.txt
/// redirects); the referee treats requests for them like `/robots.txt` requests.
pub const ROBOTS_FILES_PARAM: &str = "robots_files";

/// Manifest header parameter listing, comma-separated, the request-targets of sitemap
/// files (profile `sitemaps`, host 0; profile `sitemap-chain`, its ring); the referee
/// counts requests for them apart.
pub const SITEMAP_FILES_PARAM: &str = "sitemap_files";

/// The magic at the start of a manifest header line.
pub const MANIFEST_MAGIC: &str = "# synthweb manifest v1";

impl fmt::Display for ManifestHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{MANIFEST_MAGIC} seed={} hosts={} profile={} agent={} robots_4xx={}",
            self.seed,
            self.hosts,
            self.profile,
            self.agent,
            self.robots_4xx.as_str()
        )?;
        for (key, value) in &self.params {
            write!(f, " {key}={value}")?;
        }
        Ok(())
    }
}

impl ManifestHeader {
    /// Parse a header line (with or without its trailing newline).
    pub(super) fn parse(text: &str, line: u64) -> Result<Self, FormatError> {
        let bad = |reason| FormatError::Syntax {
            file: FileKind::Manifest,
            line,
            reason,
        };
        let rest = text
            .trim_end()
            .strip_prefix(MANIFEST_MAGIC)
            .ok_or(bad("first line must be `# synthweb manifest v1 ...`"))?;
        let (mut seed, mut hosts, mut profile, mut agent, mut robots_4xx) =
            (None, None, None, None, None);
        let mut params = BTreeMap::new();
        for pair in rest.split_ascii_whitespace() {
            let (key, value) = pair.split_once('=').ok_or(bad("expected key=value"))?;
            match key {
                "seed" => seed = Some(u64::from_str(value).map_err(|_| bad("invalid seed"))?),
                "hosts" => hosts = Some(u64::from_str(value).map_err(|_| bad("invalid hosts"))?),
                "profile" => profile = Some(value.to_owned()),
                "agent" => agent = Some(value.to_owned()),
                "robots_4xx" => {
                    robots_4xx =
                        Some(Robots4xx::from_str(value).map_err(|()| bad("invalid robots_4xx"))?)
                }
                _ => {
                    params.insert(key.to_owned(), value.to_owned());
                }
            }
        }
        Ok(ManifestHeader {
            seed: seed.ok_or(bad("missing seed="))?,
            hosts: hosts.ok_or(bad("missing hosts="))?,
            profile: profile.ok_or(bad("missing profile="))?,
            agent: agent.ok_or(bad("missing agent="))?,
            robots_4xx: robots_4xx.ok_or(bad("missing robots_4xx="))?,
            params,
        })
    }
}

/// The tag of a manifest entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tag {
    /// `M`: must be fetched.
    Must,
    /// `F`: must never be fetched.
    Forbidden,
    /// `S`: must be fetched, and only a sitemap lists it (profiles `sitemaps`,
    /// `sitemap-chain`).
    SitemapOnly,
}

impl Tag {
    /// The one-letter spelling.
    pub fn letter(self) -> char {
        match self {
            Tag::Must => 'M',
            Tag::Forbidden => 'F',
            Tag::SitemapOnly => 'S',
        }
    }
}

/// Ground truth for one generated web: the URLs a correct crawler must fetch and the
/// URLs it must never fetch, both in canonical form, disjoint, kept sorted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// What the manifest was computed for.
    pub header: ManifestHeader,
    /// `M` entries.
    pub must: std::collections::BTreeSet<String>,
    /// `F` entries.
    pub forbidden: std::collections::BTreeSet<String>,
    /// `S` entries: pages only sitemaps list, which a crawler that reads sitemaps must
    /// fetch (empty without profile `sitemaps`). Disjoint from `M` and `F`.
    pub sitemap_only: std::collections::BTreeSet<String>,
}

/// Write a manifest: the header line, then `M` lines, then `F` lines, each set sorted.
///
/// # Errors
/// Returns the writer's I/O error.
pub fn write_manifest<W: Write>(mut out: W, manifest: &Manifest) -> io::Result<()> {
    writeln!(out, "{}", manifest.header)?;
    for url in &manifest.must {
        writeln!(out, "M {url}")?;
    }
    for url in &manifest.forbidden {
        writeln!(out, "F {url}")?;
    }
    for url in &manifest.sitemap_only {
        writeln!(out, "S {url}")?;
    }
    Ok(())
}

/// Read a manifest. The first line must be the header; later lines starting with `#`
/// and blank lines are skipped; every other line is `M url` or `F url`. A URL listed
/// under both tags is an error (the manifest would contradict itself); a URL listed twice
/// under one tag is accepted once.
///
/// # Errors
/// The first I/O error or malformed line.
pub fn read_manifest<R: BufRead>(input: R) -> Result<Manifest, FormatError> {
    let mut lines = LineReader::new(input, FileKind::Manifest);
    let header = match lines.next_line() {
        Some(first) => {
            let (line, text) = first?;
            ManifestHeader::parse(&text, line)?
        }
        None => {
            return Err(FormatError::Syntax {
                file: FileKind::Manifest,
                line: 1,
                reason: "empty manifest",
            })
        }
    };
    let mut manifest = Manifest {
        header,
        must: Default::default(),
        forbidden: Default::default(),
        sitemap_only: Default::default(),
    };
    while let Some(next) = lines.next_line() {
        let (line, text) = next?;
        let text = text.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() || text.starts_with('#') {
            continue;
        }
        let bad = |reason| FormatError::Syntax {
            file: FileKind::Manifest,
            line,
            reason,
        };
        let (tag, url) = match text.split_once(' ') {
            Some(("M", url)) => (Tag::Must, url),
            Some(("F", url)) => (Tag::Forbidden, url),
            Some(("S", url)) => (Tag::SitemapOnly, url),
            _ => return Err(bad("expected `M url`, `F url` or `S url`")),
        };
        if !is_plausible_url(url) {
            return Err(bad("expected an absolute http(s) URL"));
        }
        let listed = [
            (Tag::Must, &manifest.must),
            (Tag::Forbidden, &manifest.forbidden),
            (Tag::SitemapOnly, &manifest.sitemap_only),
        ];
        if listed.iter().any(|(t, set)| *t != tag && set.contains(url)) {
            return Err(bad("URL listed under two of M, F and S"));
        }
        match tag {
            Tag::Must => &mut manifest.must,
            Tag::Forbidden => &mut manifest.forbidden,
            Tag::SitemapOnly => &mut manifest.sitemap_only,
        }
        .insert(url.to_owned());
    }
    Ok(manifest)
}
