//! The validated description of a synthetic web: everything the generator needs to answer
//! any request. Built by the CLI (or by tests and the manifest walker) and then frozen.

use std::net::Ipv4Addr;

/// Which optional parts of the web exist. The default web is always there; `traps` and
/// `hostile` put dedicated hosts at fixed indices (see [`crate::hosts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Profiles {
    /// Crawler traps: endless calendar, loops, session ids, duplicates, growing URLs,
    /// a million-page host (host indices 1..=7).
    pub traps: bool,
    /// Misbehaving servers, one behaviour per host (host indices 8..=23).
    pub hostile: bool,
    /// Sitemaps on host 0 (robots.txt `Sitemap:` line, an index, a nested index, a
    /// gzipped sitemap, sitemap-only pages `/sm/k`, a cross-host sitemap without
    /// permission, a 60,000-URL sitemap and a gzip bomb posing as a sitemap). Not part
    /// of `all`, which keeps its meaning for the tests written before sitemaps existed.
    pub sitemaps: bool,
    /// Cross-submission around a ring of hosts ([`crate::chain`]): each host's
    /// robots.txt names a gzipped sitemap and an index on the next host, which list its
    /// own sitemap-only pages (the index through a gzipped sitemap on the host after).
    /// Meant alone: every host of the ring gets an allow-all robots.txt.
    pub sitemap_chain: bool,
}

impl Profiles {
    /// Parse a comma-separated list such as `default,traps,hostile`.
    ///
    /// # Errors
    /// [`ConfigError::UnknownProfile`] for a name that is not a profile.
    pub fn parse(list: &str) -> Result<Self, ConfigError> {
        let mut p = Self::default();
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match name {
                "default" => {}
                "traps" => p.traps = true,
                "hostile" => p.hostile = true,
                "sitemaps" => p.sitemaps = true,
                "sitemap-chain" => p.sitemap_chain = true,
                "all" => {
                    p.traps = true;
                    p.hostile = true;
                }
                other => return Err(ConfigError::UnknownProfile(other.to_owned())),
            }
        }
        Ok(p)
    }

    /// The canonical spelling used in manifests and logs, e.g. `default+traps`.
    #[must_use]
    pub fn name(&self) -> String {
        let mut s = String::from("default");
        if self.traps {
            s.push_str("+traps");
        }
        if self.hostile {
            s.push_str("+hostile");
        }
        if self.sitemaps {
            s.push_str("+sitemaps");
        }
        if self.sitemap_chain {
            s.push_str("+sitemap-chain");
        }
        s
    }
}

/// An inclusive range of integers, e.g. page sizes in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// Smallest value.
    pub min: u32,
    /// Largest value (inclusive).
    pub max: u32,
}

impl Span {
    /// Parse `N` or `MIN-MAX`.
    ///
    /// # Errors
    /// [`ConfigError::BadSpan`] when the text is not one or two integers in order.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let bad = || ConfigError::BadSpan(text.to_owned());
        let (a, b) = match text.split_once('-') {
            Some((a, b)) => (a, b),
            None => (text, text),
        };
        let min: u32 = a.trim().parse().map_err(|_| bad())?;
        let max: u32 = b.trim().parse().map_err(|_| bad())?;
        if min > max {
            return Err(bad());
        }
        Ok(Self { min, max })
    }
}

/// Everything that determines the web. Two sites built from equal configs serve equal
/// bytes for every request.
#[derive(Debug, Clone)]
pub struct SiteConfig {
    /// The world seed.
    pub seed: u64,
    /// Number of hosts, named `h000000.synth.test` .. (at least 6 digits).
    pub hosts: u32,
    /// Optional profiles.
    pub profiles: Profiles,
    /// Size of ordinary HTML pages in bytes (default 5,000..=60,000).
    pub page_bytes: Span,
    /// When true every ordinary page is exactly `page_bytes.min` bytes, sent with
    /// Content-Length (no chunked/close framing variety): the benchmark mode.
    pub fixed_size: bool,
    /// Links per ordinary page (default 10..=80).
    pub out_degree: Span,
    /// Pages `/p/1..` per ordinary host, the root `/` not counted (default 20..=200).
    pub pages_per_host: Span,
    /// Whether hosts are also served over HTTPS.
    pub tls: bool,
    /// The trap budget the manifest is computed for: how many hops into a trap a correct
    /// crawler may go (the generator itself serves traps without end).
    pub trap_budget: u32,
    /// The HTTP port, the same on every address.
    pub http_port: u16,
    /// The HTTPS port when `tls`.
    pub tls_port: Option<u16>,
    /// First loopback address hosts are spread over.
    pub bind_base: Ipv4Addr,
    /// Number of consecutive addresses from `bind_base`; host `i` lives on
    /// `bind_base + (i % bind_count)`.
    pub bind_count: u32,
    /// Every `seed_stride`-th host root is a seed (plus host 0 and every special host).
    pub seed_stride: u32,
    /// Wide mode: `Some(n)` gives every ordinary root and `/p/k` page exactly `n`
    /// links, all absolute cross-host links to random `/p/j` pages of random ordinary
    /// hosts, so a few thousand fetched pages discover tens of millions of distinct
    /// URLs (the frontier memory test). `None` (the default) leaves every page as the
    /// other options describe it, byte for byte.
    pub fanout: Option<u32>,
    /// Share of ordinary pages that differ from generation 0, in basis points
    /// (1,000 = 10%): of each host's `/p/k`, 60% of the share change, 20% vanish (404 or
    /// 410) and new pages `/new/k` appear, as many as 20% of the share (linked from the
    /// root, which then changes too). 0 (the default) serves generation 0 byte for byte.
    pub change_rate_bp: u32,
    /// Which set of changes `change_rate_bp` applies to generation 0 (each generation
    /// draws its own, always against generation 0). Ignored when the rate is 0.
    pub generation: u32,
    /// Mesh mode: a web shaped like a wide crawl under politeness (see [`Mesh`]).
    /// `None` (the default) leaves every page as the other options describe it.
    pub mesh: Option<Mesh>,
    /// Spread addressing: `Some(k)` puts hosts `k·j .. k·j + k − 1` on the `j`-th
    /// address of [`crate::hosts::spread_addr`] (127.1.0.1, 127.1.0.2, ..., skipping
    /// `.0` and `.255`), for a server listening on the wildcard address inside a network
    /// namespace. `None` uses `bind_base`/`bind_count`.
    pub hosts_per_address: Option<u32>,
    /// Hub mode (issue 26, "A million hosts"): `Some(h)` makes hosts `0..h` hubs and
    /// hosts `h..` leaves, `hosts` = `h` × [`crate::site::hub::HOSTS_PER_HUB`] (see
    /// [`crate::site::hub`]). `None` (the default) leaves every page as the other
    /// options describe it.
    pub hubs: Option<u32>,
}

/// Mesh mode: the web of a wide crawl under politeness. Every ordinary host has the
/// root and `/p/1 .. /p/(n-1)` (`pages_per_host`), each page linking every other page of
/// its host (so all of them hang off the root), plus `cross_links` absolute links per
/// page to the roots of other hosts. Needs the benchmark mode (`fixed_size`), the
/// default profile only; robots.txt is a small allow-all everywhere and pages are served
/// without content coding, so every page costs the same time on a paced server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mesh {
    /// Cross-host links per page, each to another host's root.
    pub cross_links: u32,
    /// Share of hosts (percent) that are HTTPS-only: every link to them is `https://`
    /// on the TLS port, and their seeds too (host 0 is never one). Needs `tls`.
    pub https_percent: u32,
    /// Share of cross-host links (percent) that name a dead host `dNNNNNN.dead.test`,
    /// a name no hosts file lists and whose DNS never answers.
    pub dead_percent: u32,
}

/// The DNS suffix of the dead names of mesh mode (never served, never resolved).
pub const DEAD_DOMAIN: &str = "dead.test";

impl Default for SiteConfig {
    fn default() -> Self {
        Self {
            seed: 42,
            hosts: 100,
            profiles: Profiles::default(),
            page_bytes: Span {
                min: 5_000,
                max: 60_000,
            },
            fixed_size: false,
            out_degree: Span { min: 10, max: 80 },
            pages_per_host: Span { min: 20, max: 200 },
            tls: false,
            trap_budget: 20,
            http_port: 8080,
            tls_port: None,
            bind_base: Ipv4Addr::new(127, 0, 0, 1),
            bind_count: 1,
            seed_stride: 1,
            fanout: None,
            change_rate_bp: 0,
            generation: 1,
            mesh: None,
            hosts_per_address: None,
            hubs: None,
        }
    }
}

/// A configuration that cannot describe a web.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A profile name that is not `default`, `traps`, `hostile`, `sitemaps`,
    /// `sitemap-chain` or `all`.
    #[error(
        "unknown profile {0:?} (expected default, traps, hostile, sitemaps, sitemap-chain, all)"
    )]
    UnknownProfile(String),
    /// A range that does not parse.
    #[error("bad range {0:?} (expected N or MIN-MAX)")]
    BadSpan(String),
    /// Too few hosts for the special hosts of the chosen profiles.
    #[error("profile {profile} needs at least {needed} hosts, got {got}")]
    TooFewHosts {
        /// Profile name.
        profile: String,
        /// Minimum host count.
        needed: u32,
        /// Configured host count.
        got: u32,
    },
    /// More hosts than names can be generated for.
    #[error("at most {max} hosts are supported, got {got}")]
    TooManyHosts {
        /// The maximum.
        max: u32,
        /// Configured.
        got: u32,
    },
    /// A parameter out of its allowed range.
    #[error("{0}")]
    Invalid(&'static str),
}

/// Parse a change rate given in percent (`10%`, `10`, `2.5`) into basis points.
///
/// # Errors
/// [`ConfigError::Invalid`] for text that is not a percentage within 0..=100.
pub fn parse_rate_bp(text: &str) -> Result<u32, ConfigError> {
    let bad = ConfigError::Invalid("change rate must be a percentage within 0..=100");
    let t = text.trim().trim_end_matches('%');
    let (whole, frac) = t.split_once('.').unwrap_or((t, ""));
    if whole.is_empty()
        || frac.len() > 2
        || !(whole.bytes().chain(frac.bytes())).all(|b| b.is_ascii_digit())
    {
        return Err(bad);
    }
    let whole: u32 = whole.parse().map_err(|_| bad.clone())?;
    let frac: u32 = format!("{frac:0<2}").parse().map_err(|_| bad.clone())?;
    let bp = whole
        .checked_mul(100)
        .and_then(|w| w.checked_add(frac))
        .ok_or(bad.clone())?;
    if bp > 10_000 {
        return Err(bad);
    }
    Ok(bp)
}

/// Largest wide-mode fanout (links per page).
pub const MAX_FANOUT: u32 = 20_000;

/// Most hubs of hub mode (each with 1,000 leaves: 99,099,000 hosts, within [`MAX_HOSTS`]).
pub const MAX_HUBS: u32 = 99_000;

/// Largest supported host count (names stay 8 digits at most).
pub const MAX_HOSTS: u32 = 99_999_999;

impl SiteConfig {
    /// Check the config can be served.
    ///
    /// # Errors
    /// A [`ConfigError`] naming the first problem.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.hosts == 0 {
            return Err(ConfigError::Invalid("at least one host is needed"));
        }
        if self.hosts > MAX_HOSTS {
            return Err(ConfigError::TooManyHosts {
                max: MAX_HOSTS,
                got: self.hosts,
            });
        }
        let needed = crate::hosts::min_hosts(self.profiles);
        if self.hosts < needed {
            return Err(ConfigError::TooFewHosts {
                profile: self.profiles.name(),
                needed,
                got: self.hosts,
            });
        }
        if self.page_bytes.min < 1_024 || self.page_bytes.max > 4_000_000 {
            return Err(ConfigError::Invalid(
                "page bytes must lie within 1024..=4000000",
            ));
        }
        if self.out_degree.min < 1 || self.out_degree.max > 2_000 {
            return Err(ConfigError::Invalid("out-degree must lie within 1..=2000"));
        }
        if self.pages_per_host.min < 2 || self.pages_per_host.max > 10_000_000 {
            return Err(ConfigError::Invalid(
                "pages per host must lie within 2..=10000000",
            ));
        }
        if self.bind_count == 0 || self.bind_count > 65_536 {
            return Err(ConfigError::Invalid(
                "bind range must hold 1..=65536 addresses",
            ));
        }
        if self.fanout.is_some_and(|n| !(1..=MAX_FANOUT).contains(&n)) {
            return Err(ConfigError::Invalid("fanout must lie within 1..=20000"));
        }
        if self.change_rate_bp > 10_000 {
            return Err(ConfigError::Invalid("change rate must lie within 0..=100%"));
        }
        if self.seed_stride == 0 {
            return Err(ConfigError::Invalid("seed stride must be at least 1"));
        }
        if let Some(m) = self.mesh {
            if !self.fixed_size {
                return Err(ConfigError::Invalid("mesh mode needs --page-bytes"));
            }
            if self.profiles != Profiles::default() || self.fanout.is_some() {
                return Err(ConfigError::Invalid(
                    "mesh mode takes the default profile only and no fanout",
                ));
            }
            if m.cross_links > 1_000 || m.https_percent > 100 || m.dead_percent > 100 {
                return Err(ConfigError::Invalid(
                    "mesh: cross links within 0..=1000, shares within 0..=100%",
                ));
            }
            if m.https_percent > 0 && !self.tls {
                return Err(ConfigError::Invalid("HTTPS-only hosts need --tls"));
            }
        }
        if let Some(k) = self.hosts_per_address {
            if k == 0 || self.hosts.div_ceil(k) > crate::hosts::MAX_SPREAD_ADDRESSES {
                return Err(ConfigError::Invalid(
                    "hosts per address must be at least 1 and leave at most 16,516,096 addresses",
                ));
            }
        }
        if let Some(h) = self.hubs {
            if !(1..=MAX_HUBS).contains(&h) {
                return Err(ConfigError::Invalid("hubs must lie within 1..=99000"));
            }
            if self.hosts != h * crate::site::hub::HOSTS_PER_HUB {
                return Err(ConfigError::Invalid(
                    "hub mode: hosts must be hubs x 1,001 (each hub names 1,000 leaves)",
                ));
            }
            if self.profiles != Profiles::default()
                || self.fanout.is_some()
                || self.mesh.is_some()
                || self.change_rate_bp != 0
            {
                return Err(ConfigError::Invalid(
                    "hub mode takes the default profile only, no fanout, mesh or change rate",
                ));
            }
        }
        if self.tls && self.tls_port.is_none() {
            return Err(ConfigError::Invalid("tls needs a tls port"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_profiles_and_spans() {
        let p = Profiles::parse("default,traps").unwrap();
        assert!(p.traps && !p.hostile);
        assert_eq!(p.name(), "default+traps");
        assert!(Profiles::parse("nope").is_err());
        assert_eq!(Span::parse("5-60").unwrap(), Span { min: 5, max: 60 });
        assert_eq!(Span::parse("7").unwrap(), Span { min: 7, max: 7 });
        assert!(Span::parse("9-3").is_err());
        let s = Profiles::parse("sitemaps").unwrap();
        assert!(s.sitemaps && !s.traps);
        assert_eq!(s.name(), "default+sitemaps");
        assert!(!Profiles::parse("all").unwrap().sitemaps);
        let c = Profiles::parse("sitemap-chain").unwrap();
        assert!(c.sitemap_chain && !c.sitemaps);
        assert_eq!(c.name(), "default+sitemap-chain");
        assert!(!Profiles::parse("all").unwrap().sitemap_chain);
        assert_eq!(parse_rate_bp("10%").unwrap(), 1_000);
        assert_eq!(parse_rate_bp("2.5").unwrap(), 250);
        assert_eq!(parse_rate_bp("0").unwrap(), 0);
        assert!(parse_rate_bp("101%").is_err());
        assert!(parse_rate_bp("x").is_err());
    }
}
