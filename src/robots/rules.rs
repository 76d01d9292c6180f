//! The rules of one robots.txt compiled for one crawler, and the verdict for a URL.
//!
//! Group selection happens once, at compile time (RFC 9309 §2.2.1), so a lookup only
//! runs patterns. Rules are sorted by priority — longest pattern first, `allow` before
//! `disallow` on a tie (§2.2.2) — so the first rule that matches is the winner and the
//! scan stops there. With many rules, a 256-way index on the byte after the leading `/`
//! of each rule's literal prefix skips the rules that cannot match at all.

#![deny(clippy::indexing_slicing)]

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use super::parse::{product_token, Group, Mode, RobotsTxt, RuleKind, Sitemap};
use super::pattern::{normalize, ByteSet, Pattern, Side, Syntax};

/// One compiled rule.
#[derive(Clone, Debug)]
pub struct Rule {
    kind: RuleKind,
    line: u32,
    pattern: Pattern,
}

impl Rule {
    /// Allow or disallow.
    pub fn kind(&self) -> RuleKind {
        self.kind
    }

    /// The 1-based line of the robots.txt the rule came from.
    pub fn line(&self) -> u32 {
        self.line
    }

    /// The normalized pattern.
    pub fn pattern(&self) -> &[u8] {
        self.pattern.as_bytes()
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}",
            self.kind.as_str(),
            String::from_utf8_lossy(self.pattern())
        )
    }
}

/// Why a URL was allowed or not.
#[derive(Clone, Copy, Debug)]
pub enum Reason<'r> {
    /// This rule was the most specific match (or, in 1996 mode, the first).
    Rule(&'r Rule),
    /// No rule matched, so access is allowed (RFC 9309 §2.2.2).
    NoMatchingRule,
    /// `/robots.txt` itself is always allowed (RFC 9309 §2.2.2).
    RobotsTxt,
    /// The robots.txt was unavailable (4xx, too many redirects): no restrictions
    /// (RFC 9309 §2.3.1.3).
    Unavailable,
    /// The robots.txt was unreachable (429, 5xx, network): complete disallow
    /// (RFC 9309 §2.3.1.4).
    Unreachable,
    /// The robots.txt answered 401/403 and the crawl was configured to read that as
    /// "keep out", the older convention of the seeds.
    Forbidden,
}

/// A verdict for one URL, with the reason for it.
#[derive(Clone, Copy, Debug)]
pub struct Decision<'r> {
    /// Whether the crawler may fetch the URL.
    pub allowed: bool,
    /// Why.
    pub reason: Reason<'r>,
}

impl Decision<'_> {
    /// The line of the deciding rule, if a rule decided.
    pub fn line(&self) -> Option<u32> {
        match self.reason {
            Reason::Rule(rule) => Some(rule.line),
            _ => None,
        }
    }

    /// The deciding rule, if a rule decided.
    pub fn rule(&self) -> Option<&Rule> {
        match self.reason {
            Reason::Rule(rule) => Some(rule),
            _ => None,
        }
    }
}

/// Index of rule positions by the second byte of their literal prefix, as a compressed
/// table (`starts[b]..starts[b + 1]` into `ids`), built only for larger rule sets.
/// Rules whose literal prefix is shorter than two bytes (`/*.pdf$`) are kept once in
/// `generic`; a lookup merges the bucket with them in priority order.
#[derive(Clone, Debug)]
struct Index {
    starts: Box<[u32]>,
    ids: Box<[u32]>,
    generic: Box<[u32]>,
}

/// Rule sets at most this large are scanned without the index.
const INDEX_MIN_RULES: usize = 12;

impl Index {
    fn build(rules: &[Rule]) -> Index {
        let key = |r: &Rule| r.pattern.literal_prefix().get(1).copied();
        let id = |i: usize| u32::try_from(i).unwrap_or(u32::MAX);
        let mut counts = [0usize; 256];
        for k in rules.iter().filter_map(key) {
            if let Some(c) = counts.get_mut(usize::from(k)) {
                *c += 1;
            }
        }
        let mut starts = Vec::with_capacity(257);
        let mut total = 0;
        starts.push(0);
        for c in counts {
            total += c;
            starts.push(id(total));
        }
        let mut cursor: Vec<usize> = starts.iter().map(|&s| s as usize).collect();
        let mut ids = vec![0u32; total];
        let mut generic = Vec::new();
        // Rules are visited in priority order, so every bucket stays in that order.
        for (i, rule) in rules.iter().enumerate() {
            match key(rule) {
                Some(k) => {
                    if let Some(at) = cursor.get_mut(usize::from(k)) {
                        if let Some(slot) = ids.get_mut(*at) {
                            *slot = id(i);
                        }
                        *at += 1;
                    }
                }
                None => generic.push(id(i)),
            }
        }
        Index {
            starts: starts.into_boxed_slice(),
            ids: ids.into_boxed_slice(),
            generic: generic.into_boxed_slice(),
        }
    }

    fn bucket(&self, byte: u8) -> &[u32] {
        let b = usize::from(byte);
        let lo = self.starts.get(b).copied().unwrap_or(0) as usize;
        let hi = self.starts.get(b + 1).copied().unwrap_or(0) as usize;
        self.ids.get(lo..hi).unwrap_or_default()
    }

    /// Rule positions that may match a path whose second byte is `byte`, in
    /// priority order (both lists are sorted; merge them).
    fn candidates(&self, byte: u8) -> impl Iterator<Item = u32> + '_ {
        let mut a = self.bucket(byte).iter().peekable();
        let mut b = self.generic.iter().peekable();
        std::iter::from_fn(move || match (a.peek(), b.peek()) {
            (Some(&&x), Some(&&y)) if x < y => a.next().copied(),
            (Some(_), Some(_)) | (None, Some(_)) => b.next().copied(),
            (Some(_), None) => a.next().copied(),
            (None, None) => None,
        })
    }
}

/// The rules of one robots.txt that apply to one crawler, ready for lookups.
#[derive(Clone, Debug)]
pub struct Rules {
    mode: Mode,
    rules: Vec<Rule>,
    index: Option<Index>,
    crawl_delay: Option<Duration>,
    sitemaps: Vec<String>,
    /// The line of the first `user-agent` line of each chosen group (empty when no
    /// group applies).
    group_lines: Vec<u32>,
}

impl RobotsTxt {
    /// Chooses the groups that apply to `agent` and compiles their rules.
    ///
    /// `agent` may be a whole `User-Agent` string: only its product token (the
    /// `[A-Za-z_-]` prefix, RFC 9309 §2.2.1) is compared, case-insensitively and
    /// exactly. Every group naming it is merged; if none does, every `*` group is
    /// merged; if there is none either, nothing is restricted. The crawler's own group
    /// replaces `*`, it is not added to it. In [`Mode::Draft1996`] the first record
    /// whose agent value contains the token is used, else the first `*` record.
    pub fn rules_for(&self, agent: &str) -> Rules {
        let token = product_token(agent.as_bytes());
        let chosen: Vec<&Group> = match self.mode {
            Mode::Rfc9309 => {
                let named: Vec<&Group> = self
                    .groups
                    .iter()
                    .filter(|g| {
                        !token.is_empty() && g.agents.iter().any(|a| a.token_lower == token)
                    })
                    .collect();
                if named.is_empty() {
                    self.groups
                        .iter()
                        .filter(|g| g.agents.iter().any(|a| a.is_global))
                        .collect()
                } else {
                    named
                }
            }
            Mode::Draft1996 => {
                let named = self.groups.iter().find(|g| {
                    !token.is_empty()
                        && g.agents.iter().any(|a| {
                            !a.is_global && memchr::memmem::find(&a.value_lower, &token).is_some()
                        })
                });
                named
                    .or_else(|| {
                        self.groups
                            .iter()
                            .find(|g| g.agents.iter().any(|a| a.is_global))
                    })
                    .into_iter()
                    .collect()
            }
        };
        let syntax = match self.mode {
            Mode::Rfc9309 => Syntax::Wildcards,
            Mode::Draft1996 => Syntax::Literal,
        };
        let rules: Vec<Rule> = chosen
            .iter()
            .flat_map(|g| g.rules.iter())
            .map(|r| Rule {
                kind: r.kind,
                line: r.line,
                pattern: Pattern::new(&r.value, syntax),
            })
            .filter(|r| !r.pattern.is_empty())
            .collect();
        // Of several applicable delays, the longest: the politest reading.
        let crawl_delay = chosen.iter().filter_map(|g| g.crawl_delay).max();
        let group_lines = chosen
            .iter()
            .filter_map(|g| g.agents.first().map(|a| a.line))
            .collect();
        let sitemaps = self
            .sitemaps
            .iter()
            .map(|s: &Sitemap| s.url.clone())
            .collect();
        Rules::assemble(self.mode, rules, crawl_delay, sitemaps, group_lines)
    }
}

/// The part of a URL that rules match: path, params and query, never the fragment
/// (RFC 9309 §2.2.2). Accepts an absolute URL (`http://host/p?q`) or a path (`/p?q`);
/// an empty path is `/`. This is a fast split, not a URL parser: callers pass URLs
/// their URL layer already parsed and serialized.
pub fn match_target(url: &str) -> Cow<'_, str> {
    let no_fragment = url.split_once('#').map_or(url, |(head, _)| head);
    let after_scheme = no_fragment.find("://").and_then(|i| {
        let scheme = no_fragment.get(..i)?;
        let mut chars = scheme.chars();
        let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        valid.then(|| no_fragment.get(i + 3..)).flatten()
    });
    let path = match after_scheme {
        Some(rest) => match rest.find(['/', '?']) {
            Some(i) => rest.get(i..).unwrap_or("/"),
            None => "",
        },
        None => no_fragment,
    };
    if path.starts_with('/') {
        Cow::Borrowed(path)
    } else {
        Cow::Owned(format!("/{path}"))
    }
}

impl Rules {
    /// Orders compiled rules by priority and builds the lookup index: the one place
    /// that establishes the invariants [`Rules::decide`] relies on (first match wins).
    fn assemble(
        mode: Mode,
        mut rules: Vec<Rule>,
        crawl_delay: Option<Duration>,
        sitemaps: Vec<String>,
        group_lines: Vec<u32>,
    ) -> Rules {
        if mode == Mode::Rfc9309 {
            // Longest first; allow wins a tie; then file order, for stable reports.
            rules.sort_by(|a, b| {
                b.pattern
                    .len()
                    .cmp(&a.pattern.len())
                    .then_with(|| {
                        (a.kind == RuleKind::Disallow).cmp(&(b.kind == RuleKind::Disallow))
                    })
                    .then_with(|| a.line.cmp(&b.line))
            });
        }
        // A cache holds these for many hosts: no growth slack.
        rules.shrink_to_fit();
        let index =
            (mode == Mode::Rfc9309 && rules.len() > INDEX_MIN_RULES).then(|| Index::build(&rules));
        Rules {
            mode,
            rules,
            index,
            crawl_delay,
            sitemaps,
            group_lines,
        }
    }

    /// Rebuilds rules from their stored parts (a checkpoint's robots file): each rule's
    /// kind, original line and normalized pattern, in the order [`Rules::rules`] lists
    /// them. Patterns are compiled again with the syntax of `mode`; normalization is
    /// idempotent, so a stored pattern compiles to the same text and priority. The
    /// order is re-established here rather than trusted, so damaged input cannot break
    /// the first-match invariant.
    pub fn from_stored(
        mode: Mode,
        rules: impl IntoIterator<Item = (RuleKind, u32, Vec<u8>)>,
        crawl_delay: Option<Duration>,
        sitemaps: Vec<String>,
        group_lines: Vec<u32>,
    ) -> Rules {
        let syntax = match mode {
            Mode::Rfc9309 => Syntax::Wildcards,
            Mode::Draft1996 => Syntax::Literal,
        };
        let rules = rules
            .into_iter()
            .map(|(kind, line, pattern)| Rule {
                kind,
                line,
                pattern: Pattern::new(&pattern, syntax),
            })
            .filter(|r| !r.pattern.is_empty())
            .collect();
        Rules::assemble(mode, rules, crawl_delay, sitemaps, group_lines)
    }

    /// Rules that allow everything (no robots.txt, or no group for this crawler).
    pub fn allow_all(mode: Mode) -> Rules {
        Rules {
            mode,
            rules: Vec::new(),
            index: None,
            crawl_delay: None,
            sitemaps: Vec::new(),
            group_lines: Vec::new(),
        }
    }

    /// Parses `bytes` and compiles the part for `agent`: a shortcut for
    /// `RobotsTxt::parse(bytes, mode).rules_for(agent)`.
    pub fn parse(bytes: &[u8], agent: &str, mode: Mode) -> Rules {
        RobotsTxt::parse(bytes, mode).rules_for(agent)
    }

    /// Whether the crawler may fetch `url` (absolute, or a path with query).
    pub fn allowed(&self, url: &str) -> bool {
        self.decide(url).allowed
    }

    /// The verdict for `url` with its reason: the deciding rule and its line.
    pub fn decide(&self, url: &str) -> Decision<'_> {
        self.decide_path(match_target(url).as_bytes())
    }

    /// The verdict for a path (with params and query, without fragment).
    pub fn decide_path(&self, path: &[u8]) -> Decision<'_> {
        let path = normalize(path, Side::Target);
        let path = path.as_ref();
        if path == b"/robots.txt" {
            return Decision {
                allowed: true,
                reason: Reason::RobotsTxt,
            };
        }
        let bytes = ByteSet::of(path);
        let found = match (&self.index, path.get(1)) {
            (Some(index), Some(&byte)) => index
                .candidates(byte)
                .filter_map(|i| self.rules.get(i as usize))
                .find(|r| r.pattern.matches_with(path, bytes)),
            _ => self
                .rules
                .iter()
                .find(|r| r.pattern.matches_with(path, bytes)),
        };
        match found {
            Some(rule) => Decision {
                allowed: rule.kind == RuleKind::Allow,
                reason: Reason::Rule(rule),
            },
            None => Decision {
                allowed: true,
                reason: Reason::NoMatchingRule,
            },
        }
    }

    /// The conventions these rules follow.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The rules, in the order they are tried.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The `crawl-delay` of the chosen group(s), uncapped (the policy caps it).
    pub fn crawl_delay(&self) -> Option<Duration> {
        self.crawl_delay
    }

    /// The file's `sitemap:` URLs (they apply to every agent).
    pub fn sitemaps(&self) -> &[String] {
        &self.sitemaps
    }

    /// First lines of the groups that were chosen for this crawler.
    pub fn group_lines(&self) -> &[u32] {
        &self.group_lines
    }

    /// Approximate heap bytes held, for the byte-bounded [`RobotsCache`].
    ///
    /// [`RobotsCache`]: crate::robots::RobotsCache
    pub fn heap_bytes(&self) -> usize {
        self.rules
            .iter()
            .map(|r| r.pattern.heap_bytes())
            .sum::<usize>()
            + self.rules.capacity() * std::mem::size_of::<Rule>()
            + self
                .index
                .as_ref()
                .map_or(0, |i| (i.starts.len() + i.ids.len()) * 4)
            + self
                .sitemaps
                .iter()
                .map(|s| s.capacity() + 24)
                .sum::<usize>()
            + self.group_lines.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_rule_sets_stay_compact() {
        // 16,000 plain prefixes (the shape of real large robots.txt files): the
        // compiled form must stay within a small multiple of the text, or a breadth-first
        // crawl's robots cache cannot hold the hosts it cycles through.
        let mut body = String::from("User-agent: *\n");
        for n in 0..16_000 {
            body.push_str(&format!("Disallow: /junk/{n}/\n"));
        }
        let rules = Rules::parse(body.as_bytes(), "trawl", Mode::Rfc9309);
        let per_rule = rules.heap_bytes() / 16_000;
        assert!(
            std::mem::size_of::<Rule>() <= 40,
            "Rule is {} bytes",
            std::mem::size_of::<Rule>()
        );
        assert!(per_rule <= 64, "{per_rule} heap bytes per rule");
        assert!(!rules.allowed("http://a.test/junk/77/x"));
        assert!(rules.allowed("http://a.test/junk/x"));
    }

    #[test]
    fn match_target_table() {
        let cases = [
            ("http://example.com", "/"),
            ("http://example.com/", "/"),
            ("http://example.com?q=1", "/?q=1"),
            ("https://example.com:8080/a/b;p?q#frag", "/a/b;p?q"),
            ("/a?b#c", "/a?b"),
            ("a/b", "/a/b"),
            ("HTTP://Example.com/X", "/X"),
            ("", "/"),
        ];
        for (url, want) in cases {
            assert_eq!(match_target(url), want, "{url}");
        }
    }

    #[test]
    fn index_gives_same_answers_as_scan() {
        let mut body = String::from("user-agent: *\n");
        for i in 0..40 {
            body.push_str(&format!(
                "disallow: /{}{}/\nallow: /*x{i}$\n",
                (b'a' + i % 26) as char,
                i
            ));
        }
        body.push_str("disallow: /*.pdf\nallow: /\n");
        let rules = Rules::parse(body.as_bytes(), "trawl", Mode::Rfc9309);
        assert!(rules.index.is_some());
        let mut scan = rules.clone();
        scan.index = None;
        for path in [
            "/a0/",
            "/a0/x0",
            "/b1/q",
            "/zz.pdf",
            "/",
            "/q",
            "/c2/x2",
            "/x",
            "/robots.txt",
        ] {
            let a = rules.decide(path);
            let b = scan.decide(path);
            assert_eq!((a.allowed, a.line()), (b.allowed, b.line()), "{path}");
        }
    }
}
