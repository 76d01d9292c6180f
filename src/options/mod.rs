//! A crawl's settings as flags: the one table the `trawl crawl` command line and the
//! Python package (`trawl.Crawl(delay_ms=500, ...)`) both parse, so the two cannot
//! drift apart. Clap parses raw flags ([`crawl::CrawlArgs`], with [`netargs::NetArgs`]
//! and [`farm::FarmArgs`] flattened in), then they become a validated
//! [`crate::engine::CrawlConfig`] ([`crawl::CrawlPlan`]), as ripgrep turns `LowArgs`
//! into `HiArgs`.
//!
//! - `crawl/`: `trawl crawl`'s flags, their checks, `--config` TOML expansion, and the
//!   resume from `start.json`.
//! - `netargs.rs`: name overrides, CA files, deadlines, DNS bounds (also `trawl fetch`'s).
//! - `farm.rs`: the `--farm*` flags.
//! - `limits.rs`: the open files limit a crawl's concurrency needs.

pub mod crawl;
pub mod egressargs;
pub mod farm;
pub mod limits;
pub mod netargs;
