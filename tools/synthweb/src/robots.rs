//! The robots.txt catalogue: what each host answers at `/robots.txt`, and an oracle that
//! evaluates the entry's *structured* rules with RFC 9309 semantics. The oracle never
//! parses the served bytes, so it is independent of any crawler's parser.
//!
//! Ordinary host `i` draws `CATALOGUE[i % CATALOGUE.len()]`; trap and hostile hosts
//! serve [`RobotsEntry::AllowAll`].

#![deny(clippy::indexing_slicing)]

use std::sync::OnceLock;

use crate::hosts::{self, HostRole};

/// One catalogue entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RobotsEntry {
    /// 200, `User-agent: *` / `Disallow:` (nothing disallowed).
    AllowAll,
    /// 404: no robots.txt, everything allowed (RFC 9309 2.3.1.3).
    Missing404,
    /// 401: "unavailable" 4xx; allowed by RFC 9309, disallowed by some crawler policies.
    Unauthorized401,
    /// 403: as 401.
    Forbidden403,
    /// 500: unreachable, complete disallow (RFC 9309 2.3.1.4).
    ServerError500,
    /// 503: unreachable, complete disallow.
    Unavailable503,
    /// 301 to `/robots-real.txt` on the same host, which disallows `/private/`.
    RedirectSameHost,
    /// 301 to `/robots-cross.txt` on host 0, which disallows `/tmp/`.
    RedirectCrossHost,
    /// 200 with an empty body: everything allowed.
    Empty,
    /// `Disallow: /`.
    DisallowAll,
    /// `Disallow: /private/` with `Allow: /private/open/`.
    SubtreeWithAllow,
    /// `Disallow: /x/*.php$` and `Disallow: /*?y=`.
    Wildcards,
    /// `*` may fetch nothing; a group naming `trawl` (among other agents) only loses `/tmp/`.
    AgentGroup,
    /// `Crawl-delay: 2` and `Disallow: /private/`.
    CrawlDelay,
    /// About 360 KB: 16,000 junk `Disallow` lines, then `Disallow: /private/`.
    Large,
    /// UTF-8 BOM and CRLF line ends; `Disallow: /private/`.
    BomCrlf,
    /// Garbage lines (HTML, binary bytes, unknown keys, a very long line) around a valid
    /// group disallowing `/tmp/`; no garbage line names a path any page links.
    Garbage,
}

/// Every entry, in the order hosts draw them.
pub const CATALOGUE: [RobotsEntry; 17] = [
    RobotsEntry::AllowAll,
    RobotsEntry::Missing404,
    RobotsEntry::Unauthorized401,
    RobotsEntry::Forbidden403,
    RobotsEntry::ServerError500,
    RobotsEntry::Unavailable503,
    RobotsEntry::RedirectSameHost,
    RobotsEntry::RedirectCrossHost,
    RobotsEntry::Empty,
    RobotsEntry::DisallowAll,
    RobotsEntry::SubtreeWithAllow,
    RobotsEntry::Wildcards,
    RobotsEntry::AgentGroup,
    RobotsEntry::CrawlDelay,
    RobotsEntry::Large,
    RobotsEntry::BomCrlf,
    RobotsEntry::Garbage,
];

/// Body of `/robots-real.txt` (target of [`RobotsEntry::RedirectSameHost`]).
pub const REAL_TXT: &str = "User-agent: *\nDisallow: /private/\n";
/// Body of `/robots-cross.txt` (target of [`RobotsEntry::RedirectCrossHost`]).
pub const CROSS_TXT: &str = "User-agent: *\nDisallow: /tmp/\n";

/// Allow or disallow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuleKind {
    /// `Allow:`
    Allow,
    /// `Disallow:`
    Disallow,
}

/// A group: the agents it names (lower-case product tokens, `*` for any) and its rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// Product tokens from the group's `User-agent` lines.
    pub agents: Vec<String>,
    /// `(kind, pattern)` in file order.
    pub rules: Vec<(RuleKind, String)>,
    /// `Crawl-delay` in seconds, if the group has one.
    pub crawl_delay_secs: Option<u32>,
}

/// How the file is answered at the HTTP level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RobotsFetch {
    /// 200 with rules (possibly none).
    Rules(Vec<Group>),
    /// 4xx other than 401/403: allow all.
    NotFound(u16),
    /// 401/403: allow or disallow all depending on the crawler's policy.
    Unauthorized(u16),
    /// 5xx: disallow all.
    ServerError(u16),
    /// 3xx to an absolute path on the same host, or to host 0's file.
    Redirect {
        /// Status code.
        status: u16,
        /// Whether the target is on another host (host 0).
        cross_host: bool,
        /// Path of the target.
        path: &'static str,
        /// Rules of the target file.
        target: Vec<Group>,
    },
}

/// The oracle's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RobotsVerdict {
    /// May fetch.
    Allowed,
    /// Must not fetch.
    Disallowed,
}

/// The catalogue entry of host `index` with the given role.
#[must_use]
pub fn entry_for(role: HostRole, index: u32) -> RobotsEntry {
    match role {
        HostRole::Normal => CATALOGUE
            .get((index as usize) % CATALOGUE.len())
            .copied()
            .unwrap_or(RobotsEntry::AllowAll),
        HostRole::Trap(_) | HostRole::Hostile(_) => RobotsEntry::AllowAll,
    }
}

fn group(agents: &[&str], rules: &[(RuleKind, &str)], delay: Option<u32>) -> Group {
    Group {
        agents: agents.iter().map(|a| a.to_ascii_lowercase()).collect(),
        rules: rules.iter().map(|(k, p)| (*k, (*p).to_owned())).collect(),
        crawl_delay_secs: delay,
    }
}

const LARGE_JUNK_LINES: u32 = 16_000;

impl RobotsEntry {
    /// The entry's structured form (what the served bytes mean).
    #[must_use]
    pub fn fetch(self) -> RobotsFetch {
        use RuleKind::{Allow, Disallow};
        match self {
            Self::AllowAll | Self::Empty => RobotsFetch::Rules(if self == Self::Empty {
                vec![]
            } else {
                vec![group(&["*"], &[], None)]
            }),
            Self::Missing404 => RobotsFetch::NotFound(404),
            Self::Unauthorized401 => RobotsFetch::Unauthorized(401),
            Self::Forbidden403 => RobotsFetch::Unauthorized(403),
            Self::ServerError500 => RobotsFetch::ServerError(500),
            Self::Unavailable503 => RobotsFetch::ServerError(503),
            Self::RedirectSameHost => RobotsFetch::Redirect {
                status: 301,
                cross_host: false,
                path: "/robots-real.txt",
                target: vec![group(&["*"], &[(Disallow, "/private/")], None)],
            },
            Self::RedirectCrossHost => RobotsFetch::Redirect {
                status: 301,
                cross_host: true,
                path: "/robots-cross.txt",
                target: vec![group(&["*"], &[(Disallow, "/tmp/")], None)],
            },
            Self::DisallowAll => RobotsFetch::Rules(vec![group(&["*"], &[(Disallow, "/")], None)]),
            Self::SubtreeWithAllow => RobotsFetch::Rules(vec![group(
                &["*"],
                &[(Disallow, "/private/"), (Allow, "/private/open/")],
                None,
            )]),
            Self::Wildcards => RobotsFetch::Rules(vec![group(
                &["*"],
                &[(Disallow, "/x/*.php$"), (Disallow, "/*?y=")],
                None,
            )]),
            Self::AgentGroup => RobotsFetch::Rules(vec![
                group(&["*"], &[(Disallow, "/")], None),
                group(&["otherbot", "trawl"], &[(Disallow, "/tmp/")], None),
            ]),
            Self::CrawlDelay => {
                RobotsFetch::Rules(vec![group(&["*"], &[(Disallow, "/private/")], Some(2))])
            }
            Self::Large => {
                let mut rules: Vec<(RuleKind, String)> = (0..LARGE_JUNK_LINES)
                    .map(|n| (Disallow, format!("/junk/{n}/")))
                    .collect();
                rules.push((Disallow, "/private/".to_owned()));
                RobotsFetch::Rules(vec![Group {
                    agents: vec!["*".to_owned()],
                    rules,
                    crawl_delay_secs: None,
                }])
            }
            Self::BomCrlf => {
                RobotsFetch::Rules(vec![group(&["*"], &[(Disallow, "/private/")], None)])
            }
            Self::Garbage => RobotsFetch::Rules(vec![group(&["*"], &[(Disallow, "/tmp/")], None)]),
        }
    }

    /// HTTP status of `/robots.txt` for this entry.
    #[must_use]
    pub fn status(self) -> u16 {
        match self.fetch() {
            RobotsFetch::Rules(_) => 200,
            RobotsFetch::NotFound(s)
            | RobotsFetch::Unauthorized(s)
            | RobotsFetch::ServerError(s) => s,
            RobotsFetch::Redirect { status, .. } => status,
        }
    }

    /// The served body of `/robots.txt` (for 200 entries; error statuses get a short
    /// HTML body instead, see [`crate::site`]).
    #[must_use]
    pub fn body(self) -> Vec<u8> {
        match self {
            Self::AllowAll => b"User-agent: *\nDisallow:\n".to_vec(),
            Self::Empty => Vec::new(),
            Self::DisallowAll => b"User-agent: *\nDisallow: /\n".to_vec(),
            Self::SubtreeWithAllow => {
                b"# subtree with an exception\nUser-agent: *\nDisallow: /private/\nAllow: /private/open/\n".to_vec()
            }
            Self::Wildcards => {
                b"User-agent: *\nDisallow: /x/*.php$   # only .php at the end\nDisallow: /*?y=\n".to_vec()
            }
            Self::AgentGroup => b"User-agent: *\nDisallow: /\n\nUser-agent: otherbot\nUser-Agent: TRAWL\nDisallow: /tmp/\n".to_vec(),
            Self::CrawlDelay => b"User-agent: *\nCrawl-delay: 2\nDisallow: /private/\n".to_vec(),
            Self::Large => large_body().to_vec(),
            Self::BomCrlf => b"\xEF\xBB\xBFUser-agent: *\r\nDisallow: /private/\r\n".to_vec(),
            Self::Garbage => {
                let mut b = Vec::new();
                b.extend_from_slice(b"<html><body>not a robots file</body></html>\n");
                b.extend_from_slice(b"%%%% ???? !!!!\n\x00\x01\xFF\xFE binary\n");
                b.extend_from_slice(b"Foo: bar\nSitemap: not a url\njust some words here\n");
                b.extend_from_slice(b"User-agent: *\nDisallow: /tmp/\n");
                b.extend_from_slice(b"Unknown-directive: /garbage/\n");
                b.extend(std::iter::repeat_n(b'z', 5_000));
                b.push(b'\n');
                b
            }
            Self::Missing404
            | Self::Unauthorized401
            | Self::Forbidden403
            | Self::ServerError500
            | Self::Unavailable503
            | Self::RedirectSameHost
            | Self::RedirectCrossHost => Vec::new(),
        }
    }
}

fn large_body() -> &'static [u8] {
    static BODY: OnceLock<Vec<u8>> = OnceLock::new();
    BODY.get_or_init(|| {
        let mut b = String::from("# a large robots.txt\nUser-agent: *\n");
        for n in 0..LARGE_JUNK_LINES {
            b.push_str(&format!("Disallow: /junk/{n}/\n"));
        }
        b.push_str("Disallow: /private/\n");
        b.into_bytes()
    })
}

/// The product token of a user-agent string: up to the first `/` or space, lower-cased.
#[must_use]
pub fn product_token(agent: &str) -> String {
    agent
        .split(['/', ' '])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// Evaluate a set of groups for `agent` and `path_and_query` (RFC 9309 2.2: merge every
/// group naming the agent's product token case-insensitively, else every `*` group;
/// the longest matching pattern wins, Allow on a tie; `/robots.txt` is always allowed).
#[must_use]
pub fn evaluate(groups: &[Group], agent: &str, path_and_query: &str) -> RobotsVerdict {
    if path_and_query == "/robots.txt" {
        return RobotsVerdict::Allowed;
    }
    let token = product_token(agent);
    let named: Vec<&Group> = groups
        .iter()
        .filter(|g| g.agents.contains(&token))
        .collect();
    let chosen: Vec<&Group> = if named.is_empty() {
        groups
            .iter()
            .filter(|g| g.agents.iter().any(|a| a == "*"))
            .collect()
    } else {
        named
    };
    let mut best: Option<(usize, RuleKind)> = None;
    for g in chosen {
        for (kind, pattern) in &g.rules {
            if pattern.is_empty() || !pattern_matches(pattern.as_bytes(), path_and_query.as_bytes())
            {
                continue;
            }
            let len = pattern.len();
            best = match best {
                None => Some((len, *kind)),
                Some((bl, _)) if len > bl => Some((len, *kind)),
                Some((bl, _)) if len == bl && *kind == RuleKind::Allow => {
                    Some((bl, RuleKind::Allow))
                }
                keep => keep,
            };
        }
    }
    match best {
        Some((_, RuleKind::Disallow)) => RobotsVerdict::Disallowed,
        _ => RobotsVerdict::Allowed,
    }
}

/// Crawl-delay for `agent` from the chosen groups.
#[must_use]
pub fn crawl_delay_secs(groups: &[Group], agent: &str) -> Option<u32> {
    let token = product_token(agent);
    let named = groups.iter().any(|g| g.agents.contains(&token));
    groups
        .iter()
        .filter(|g| {
            g.agents
                .iter()
                .any(|a| if named { *a == token } else { a == "*" })
        })
        .find_map(|g| g.crawl_delay_secs)
}

/// RFC 9309 pattern match: prefix match, `*` matches any sequence, a final `$` anchors.
#[must_use]
pub fn pattern_matches(pattern: &[u8], path: &[u8]) -> bool {
    let (pattern, anchored) = match pattern.split_last() {
        Some((b'$', rest)) => (rest, true),
        _ => (pattern, false),
    };
    // Classic wildcard matching with backtracking over the last star.
    let (mut p, mut s) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    loop {
        if p == pattern.len() {
            if !anchored || s == path.len() {
                return true;
            }
            match star {
                Some((sp, ss)) if ss < path.len() => {
                    p = sp + 1;
                    s = ss + 1;
                    star = Some((sp, ss + 1));
                    continue;
                }
                _ => return false,
            }
        }
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, s));
                p += 1;
            }
            Some(&c) if path.get(s) == Some(&c) => {
                p += 1;
                s += 1;
            }
            _ => match star {
                Some((sp, ss)) if ss < path.len() => {
                    p = sp + 1;
                    s = ss + 1;
                    star = Some((sp, ss + 1));
                }
                _ => return false,
            },
        }
    }
}

/// Verdict for a host's entry under a crawl policy (`robots_4xx_disallow`: treat 401 and
/// 403 as "disallow all" instead of RFC 9309's "allow all").
#[must_use]
pub fn verdict(
    entry: RobotsEntry,
    agent: &str,
    path_and_query: &str,
    robots_4xx_disallow: bool,
) -> RobotsVerdict {
    if path_and_query == "/robots.txt" {
        return RobotsVerdict::Allowed;
    }
    match entry.fetch() {
        RobotsFetch::Rules(groups) => evaluate(&groups, agent, path_and_query),
        RobotsFetch::Redirect { target, .. } => evaluate(&target, agent, path_and_query),
        RobotsFetch::NotFound(_) => RobotsVerdict::Allowed,
        RobotsFetch::Unauthorized(_) if robots_4xx_disallow => RobotsVerdict::Disallowed,
        RobotsFetch::Unauthorized(_) => RobotsVerdict::Allowed,
        RobotsFetch::ServerError(_) => RobotsVerdict::Disallowed,
    }
}

/// Entry for host `index` of a web with the given profiles. Profile `sitemaps` gives
/// its chain host an allow-all robots.txt (a 200 that can carry its `Sitemap:` line;
/// the catalogue's entry for host 1 is a 404); profile `sitemap-chain` gives one to
/// every host of its ring.
#[must_use]
pub fn host_entry(profiles: crate::config::Profiles, index: u32) -> RobotsEntry {
    if profiles.sitemaps && index == crate::sitemaps::CHAIN_HOST {
        return RobotsEntry::AllowAll;
    }
    if profiles.sitemap_chain && index < crate::chain::MAX_RING {
        return RobotsEntry::AllowAll;
    }
    entry_for(hosts::role(profiles, index), index)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        assert!(pattern_matches(b"/private/", b"/private/x"));
        assert!(!pattern_matches(b"/private/", b"/privat"));
        assert!(pattern_matches(b"/x/*.php$", b"/x/3.php"));
        assert!(!pattern_matches(b"/x/*.php$", b"/x/3.php5"));
        assert!(!pattern_matches(b"/x/*.php$", b"/x/3.php?y=1"));
        assert!(pattern_matches(b"/*?y=", b"/x/3.html?y=1"));
        assert!(pattern_matches(b"/", b"/anything"));
        assert!(pattern_matches(b"*", b"/"));
        assert!(pattern_matches(b"/a*b*c$", b"/aXbYbc"));
        assert!(!pattern_matches(b"/a*b*c$", b"/aXbYbcd"));
    }

    #[test]
    fn verdicts_follow_rfc9309() {
        use RobotsVerdict::{Allowed, Disallowed};
        let v = |e, p| verdict(e, "trawl/0.1", p, false);
        assert_eq!(v(RobotsEntry::SubtreeWithAllow, "/private/1"), Disallowed);
        assert_eq!(v(RobotsEntry::SubtreeWithAllow, "/private/open/1"), Allowed);
        assert_eq!(v(RobotsEntry::DisallowAll, "/robots.txt"), Allowed);
        assert_eq!(v(RobotsEntry::DisallowAll, "/"), Disallowed);
        assert_eq!(v(RobotsEntry::AgentGroup, "/p/1"), Allowed);
        assert_eq!(v(RobotsEntry::AgentGroup, "/tmp/1"), Disallowed);
        assert_eq!(
            verdict(RobotsEntry::AgentGroup, "otherbot", "/p/1", false),
            Allowed
        );
        assert_eq!(
            verdict(RobotsEntry::AgentGroup, "googlebot", "/p/1", false),
            Disallowed
        );
        assert_eq!(v(RobotsEntry::Unauthorized401, "/p/1"), Allowed);
        assert_eq!(
            verdict(RobotsEntry::Forbidden403, "trawl", "/p/1", true),
            Disallowed
        );
        assert_eq!(v(RobotsEntry::Unavailable503, "/"), Disallowed);
        assert_eq!(v(RobotsEntry::Large, "/private/2"), Disallowed);
        assert_eq!(v(RobotsEntry::Large, "/junk/77/a"), Disallowed);
        assert_eq!(v(RobotsEntry::Large, "/p/2"), Allowed);
        assert_eq!(v(RobotsEntry::RedirectCrossHost, "/tmp/1"), Disallowed);
        assert_eq!(v(RobotsEntry::Wildcards, "/x/1.php"), Disallowed);
        assert_eq!(v(RobotsEntry::Wildcards, "/x/1.php5"), Allowed);
        assert_eq!(
            crawl_delay_secs(&[group(&["*"], &[], Some(2))], "trawl"),
            Some(2)
        );
        assert!(large_body().len() > 200_000 && large_body().len() < 500_000);
    }
}
