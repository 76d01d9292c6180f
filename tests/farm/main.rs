//! A farm of three trawl nodes sharing one synthweb crawl over Redis (issue 13).
//!
//! Each test starts its own `redis-server` children (a port of their own, no
//! persistence unless the test is about a Redis restart), a synthweb world of 30 hosts
//! (default + traps profiles), and three `trawl crawl --farm` nodes given the same
//! seeds. The synthweb referee then judges every request the server saw.
//!
//! Under `CI=true` a missing `redis-server` fails the tests; elsewhere they are skipped
//! with a printed reason. Needs `cargo test --workspace` (synthweb built).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../crawl_support/mod.rs"]
mod crawl_support;

// The harness: the Redis servers, the nodes, the checks of a finished farm crawl.
mod checks;
mod nodes;
mod redis;

// The tests, by what they put the farm through.
mod recovery;
mod referee;
mod settings;
mod sitemaps;

const NODES: u32 = 3;
const BUDGET: u64 = 60;
