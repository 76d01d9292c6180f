//! The RFC 9309 conformance table, `tests/data/robots_conformance.toml`, as the robots
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

/// The table; panics if it does not parse.
pub fn load() -> Table {
    toml::from_str(include_str!("../data/robots_conformance.toml"))
        .expect("conformance table parses")
}
