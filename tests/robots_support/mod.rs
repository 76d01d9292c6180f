//! The RFC 9309 conformance table, `tests/data/robots_conformance/`, as the robots
//! tests read it: replayed against trawl by `tests/robots_conformance.rs` and through
//! Google's parser by `tests/robots_google`.

#![allow(dead_code, reason = "each test binary reads different fields")]

use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct Table {
    pub suite: Vec<Suite>,
}

/// One rule of the RFC, checked on one robots.txt (as text, or as hex for bytes that
/// are not UTF-8).
#[derive(Debug, Deserialize)]
pub struct Suite {
    pub rfc: String,
    pub rule: String,
    pub agent: String,
    #[serde(default)]
    pub mode: Option<String>,
    #[serde(default)]
    pub robots: Option<String>,
    #[serde(default)]
    pub robots_hex: Option<String>,
    #[serde(default)]
    pub pad_bytes: Option<usize>,
    pub cases: Vec<Case>,
}

/// A URL, its verdict, and the line of the deciding rule.
#[derive(Debug, Deserialize)]
pub struct Case {
    pub url: String,
    pub allowed: bool,
    pub line: u32,
}

/// The table's files, in order (one file a group of RFC sections).
const PARTS: [(&str, &str); 3] = [
    (
        "1-agents-and-lines.toml",
        include_str!("../data/robots_conformance/1-agents-and-lines.toml"),
    ),
    (
        "2-matching.toml",
        include_str!("../data/robots_conformance/2-matching.toml"),
    ),
    (
        "3-examples-limits-legacy.toml",
        include_str!("../data/robots_conformance/3-examples-limits-legacy.toml"),
    ),
];

/// The table; panics if a part does not parse.
pub fn load() -> Table {
    let mut table = Table { suite: Vec::new() };
    for (name, text) in PARTS {
        let part: Table = toml::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        table.suite.extend(part.suite);
    }
    table
}
