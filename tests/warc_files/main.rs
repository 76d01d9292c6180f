//! WARC files as written to disk: one gzip member per record, rotation, repair after a
//! torn write, the writer thread, and `warcio check` / `warcio index` over every file
//! these tests write.
//!
//! warcio comes from `.venv/bin/warcio` (made by `.ci/run`: `python3 -m venv .venv &&
//! .venv/bin/pip install warcio`), or the `WARCIO` variable, or `PATH`. Without it the
//! tests fail, unless `TRAWL_SKIP_WARCIO=1` says to skip that check on purpose.

// Test helpers outside `#[test]` functions: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

#[path = "../crawl_support/mod.rs"]
mod crawl_support;

// The harness: warcio, sample captures, the files read back.
mod reading;
mod samples;
mod warcio;

// The tests.
mod dedup;
mod hints;
mod repair;
mod writer;
