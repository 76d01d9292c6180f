//! Re-crawls end to end (issue 14): `trawl crawl --recrawl PREV_OUT` against synthweb
//! on loopback, the second server on the first one's port (absolute links carry it).
//!
//! (a) an unchanged web: every page request conditional and answered 304, no body
//!     bytes, server-not-modified revisit records that `warcio check` and
//!     `warcio index` accept;
//! (b) `--change-rate 10%`: the `stats.json` counts equal synthweb's `--changes` list,
//!     every changed page fetched in full, every vanished one logged `gone`, every new
//!     one found;
//! (c) a re-crawl killed with SIGKILL and resumed: every URL of the previous crawl has
//!     exactly one answer in the final log and one entry in the new index.
//!
//! The web is synthweb's benchmark mode (`--page-bytes`): pages `/` and `/p/k` only.
//! Its default profile also serves redirects and error pages, which carry no
//! validators and are asked for unconditionally (docs/recrawl.md gives that figure).
//!
//! The same against synthweb's default profile (redirects, error pages, traps) is in
//! `default_profile`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

#[path = "../crawl_support/mod.rs"]
mod crawl_support;

// The harness: the web, its referee, the crawls.
mod web;

// The tests.
mod changes;
mod default_profile;
mod resume;
mod revisits;
mod unchanged;
