//! The oracle: the `robotstxt` crate with Google's longest-match strategy and a correct
//! wildcard matcher, beside trawl's own verdicts.

use robotstxt::matcher::{RobotsMatchStrategy, RobotsMatcher};
use trawl::robots::{Mode, Rules};

use crate::{AGENT, HOST};

/// Google's longest-match strategy with a correct wildcard matcher: the priority of a
/// matching pattern is its length, `-1` when it does not match.
#[derive(Default)]
pub struct GoogleStrategy;

impl RobotsMatchStrategy for GoogleStrategy {
    fn match_allow(&self, path: &str, pattern: &str) -> i32 {
        priority(path, pattern)
    }

    fn match_disallow(&self, path: &str, pattern: &str) -> i32 {
        priority(path, pattern)
    }
}

pub fn priority(path: &str, pattern: &str) -> i32 {
    if wildcard_matches(path.as_bytes(), pattern.as_bytes()) {
        i32::try_from(pattern.len()).expect("pattern length fits")
    } else {
        -1
    }
}

/// Google's matching rule, written from its specification: the pattern is anchored at
/// the start of the path, `*` matches any run of bytes, `$` is special only as the
/// last byte (the path must end there), every other byte matches itself. Tracks the
/// set of path offsets the pattern prefix can end at, in increasing order.
pub fn wildcard_matches(path: &[u8], pattern: &[u8]) -> bool {
    let mut ends: Vec<usize> = vec![0];
    for (i, &p) in pattern.iter().enumerate() {
        if p == b'$' && i + 1 == pattern.len() {
            return ends.last() == Some(&path.len());
        }
        if p == b'*' {
            let first = ends[0];
            ends = (first..=path.len()).collect();
        } else {
            ends = ends
                .into_iter()
                .filter(|&at| path.get(at) == Some(&p))
                .map(|at| at + 1)
                .collect();
            if ends.is_empty() {
                return false;
            }
        }
    }
    true
}

/// Google's verdict for `path` under `robots`, skipping a leading BOM as the C++
/// parser does (the port compares characters to BOM bytes and never skips it).
pub fn google_allows(robots: &str, path: &str) -> bool {
    let body = robots.strip_prefix('\u{FEFF}').unwrap_or(robots);
    let url = format!("{HOST}{path}");
    RobotsMatcher::<GoogleStrategy>::default().one_agent_allowed_by_robots(body, AGENT, &url)
}

/// The port as shipped, for the deviation tests.
pub fn port_allows(robots: &str, path: &str) -> bool {
    let url = format!("{HOST}{path}");
    robotstxt::DefaultMatcher::default().one_agent_allowed_by_robots(robots, AGENT, &url)
}

pub fn trawl_allows(robots: &[u8], path: &str) -> bool {
    Rules::parse(robots, AGENT, Mode::Rfc9309).allowed(&format!("{HOST}{path}"))
}

/// The rule trawl decided by, for failure reports.
pub fn trawl_reason(rules: &Rules, path: &str) -> String {
    let decision = rules.decide(path);
    format!(
        "line {:?} rule {:?}",
        decision.line(),
        decision.rule().map(ToString::to_string)
    )
}
