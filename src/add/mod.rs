//! Live adds (`docs/recrawl.md`, "URLs added while running: `trawl add` and the drop
//! directory"): URLs handed to a running crawl by `trawl add`, `trawl ctl add`, the
//! control API's `add` verb and the library's `CrawlHandle::add`. Every one of them
//! writes a batch file into the drop directory `OUT/add/`; the crawl's coordinator
//! reads it and sends the URLs to the shards that own their hosts, whose cores admit
//! them through the one admission every link passes (`engine/adds.rs`,
//! `engine/core/added.rs`).
//!
//! - [`batch`]: the batch file format and the check every added URL passes first
//!   ([`check_url`]), sans-IO.
//! - [`drop_dir`]: the directory: the atomic writer ([`write_batch`]) and the crawl's
//!   reader ([`DropDir`]), which deletes a batch file only once a checkpoint holds its
//!   URLs.
//!
//! A leaf: it names nothing else of the crate (`tools/modgraph/rules.toml`), so the
//! command line and the control API take it without taking the engine.

pub mod batch;
pub mod drop_dir;

pub use batch::{
    check_url, parse_batch, render_batch, Batch, RejectedLine, BATCH_HEADER, MAX_REJECTED_EXAMPLES,
    MAX_URL_BYTES,
};
pub use drop_dir::{write_batch, DropDir, DropError, ADD_DIR, BATCH_SUFFIX, MAX_BATCH_BYTES};
