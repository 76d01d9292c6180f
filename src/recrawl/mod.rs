//! Re-crawls (`docs/recrawl.md`): what a crawl remembers so the next one can ask only
//! for what changed.
//!
//! [`index`] is the compact, versioned, checksummed file of URL → validators (ETag,
//! Last-Modified), fetch date, payload digest, hop path and WARC location that a crawl
//! appends to as it goes, and that a re-crawl reads instead of every WARC file, through
//! [`Previous`]'s table of 16 bytes per URL.
//! [`plan`] holds the re-crawl's decisions (conditional request, verdict, counts,
//! revisit fields) as pure functions.
//! `docs/recrawl.md` tells what is built and what is not yet wired into the engine.

// Every file below reads bytes from the disk: no slice indexing and no panics
// (STYLE.md §5). Tests are exempt through clippy.toml.
#![deny(clippy::indexing_slicing, clippy::expect_used, clippy::panic)]

pub mod index;
pub mod outlinks;
pub mod plan;
pub mod previous;

pub use plan::{classify, plan, revisit_fields, LastmodPolicy, Plan, RecrawlStats, Verdict};
pub use previous::{judge, IndexFacts, Judgement, Previous, RecrawlCounters};

pub use index::{
    fuzz_read, read_entry_at, read_latest, IndexEntry, IndexError, IndexReader, IndexVersion,
    IndexWriter, Recovered, Validators, INDEX_FILE, INDEX_MAGIC, INDEX_VERSION,
};
