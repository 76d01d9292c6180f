//! The Robots Exclusion Protocol: robots.txt (RFC 9309, and the 1994/1996 conventions
//! as an option), the per-host fetch policy and cache, and page-level directives
//! (`<meta name="robots">`, `X-Robots-Tag`).
//!
//! Everything here is sans-IO: bytes and `now: Instant` in, verdicts out. The layers:
//!
//! - [`RobotsTxt::parse`] reads a file into groups, never failing (`parse.rs`);
//! - [`RobotsTxt::rules_for`] picks the groups for one crawler and compiles them into
//!   [`Rules`], whose [`Rules::decide`] names the deciding line (`rules.rs`), using
//!   linear-time wildcard [patterns](pattern) with percent-encoding normalization;
//! - [`RobotsPolicy`] is the per-host state machine the engine drives (fetch, redirects,
//!   status codes, expiry, backoff), and [`RobotsCache`] bounds many of them in bytes
//!   of RAM, over a disk tier that keeps the rest ([`spill`]);
//! - [`PageDirectives`] combines meta tags and headers.
//!
//! `docs/robots.md` records the conformance table and how each RFC ambiguity was read.

// Every file below reads bytes from the network or the disk: no slice indexing and no
// panics (STYLE.md §5). Tests are exempt through clippy.toml.
#![deny(clippy::indexing_slicing, clippy::expect_used, clippy::panic)]

mod cache;
pub mod dump;
mod meta;
mod parse;
pub mod pattern;
pub mod persist;
#[cfg(test)]
mod persist_tests;
mod policy;
mod rules;
pub mod spill;
#[cfg(test)]
mod tier_tests;

pub use cache::{CacheStats, RobotsCache};
pub use meta::PageDirectives;
pub use parse::{
    product_token, AgentLine, Group, Mode, ParseReport, RawRule, RobotsTxt, RuleKind, Sitemap,
    MAX_LINE_BYTES, MAX_ROBOTS_BYTES,
};
pub use policy::{
    freshness, robots_url, Access, FetchRequest, Fetching, Forbidden4xx, HostRules, PolicyConfig,
    Prior, Ready, RobotsPolicy, RobotsResponse, RobotsState, Step, Unreachable, Validators,
};
pub use rules::{match_target, Decision, Reason, Rule, Rules};

/// Fuzz entry point: parses `data` as a robots.txt in both modes and matches paths
/// taken from the data itself, checking the linear matcher against the naive one on
/// short inputs. Must never panic; a panic here is a bug (a mismatch is a matcher bug).
pub fn fuzz_parse(data: &[u8]) {
    let (agent, body) = match data.split_first() {
        Some((&b, rest)) if b & 1 == 0 => ("trawl", rest),
        Some((_, rest)) => ("Googlebot/2.1", rest),
        None => ("trawl", data),
    };
    for mode in [Mode::Rfc9309, Mode::Draft1996] {
        let robots = RobotsTxt::parse(body, mode);
        let rules = robots.rules_for(agent);
        let _ = rules.heap_bytes();
        // Paths: each line of the input, used as a URL path.
        for line in body.split(|&b| b == b'\n').take(16) {
            let path = String::from_utf8_lossy(line);
            let a = rules.decide(&path);
            let b = rules.decide(&path);
            assert_eq!(a.allowed, b.allowed, "deterministic");
            let target = match_target(&path);
            let normalized = pattern::normalize(target.as_bytes(), pattern::Side::Target);
            // The whole decision (index, byte-set filter, early exit) against a naive
            // evaluation, where the naive matcher stays cheap: short paths, few stars.
            let small = |p: &[u8]| p.len() <= 24 && p.iter().filter(|&&b| b == b'*').count() <= 3;
            if normalized.len() <= 32
                && rules.rules().len() <= 64
                && rules.rules().iter().all(|r| small(r.pattern()))
            {
                if mode == Mode::Rfc9309 {
                    for rule in rules.rules() {
                        let compiled =
                            pattern::Pattern::new(rule.pattern(), pattern::Syntax::Wildcards);
                        assert_eq!(
                            compiled.matches(&normalized),
                            pattern::naive_matches(rule.pattern(), &normalized),
                            "linear and naive matchers disagree"
                        );
                    }
                }
                let want = if normalized.as_ref() == b"/robots.txt" {
                    true
                } else if mode == Mode::Rfc9309 {
                    rules
                        .rules()
                        .iter()
                        .filter(|r| pattern::naive_matches(r.pattern(), &normalized))
                        .map(|r| (r.pattern().len(), r.kind() == RuleKind::Allow))
                        .max()
                        .is_none_or(|(_, allow)| allow)
                } else {
                    rules
                        .rules()
                        .iter()
                        .find(|r| normalized.starts_with(r.pattern()))
                        .is_none_or(|r| r.kind() == RuleKind::Allow)
                };
                assert_eq!(
                    a.allowed, want,
                    "compiled rules and naive evaluation disagree"
                );
            }
        }
    }
    let _ = PageDirectives::from_x_robots_tag(
        body.split(|&b| b == b'\n')
            .filter_map(|l| std::str::from_utf8(l).ok()),
        agent,
    );
}
