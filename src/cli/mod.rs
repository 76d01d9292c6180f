//! Subcommands of the `trawl` binary (not part of the library API).

pub mod add;
pub mod bench;
pub mod bench_hosts;
pub mod count;
pub mod crawl;
pub mod ctl;
pub mod farm;
pub mod fetch;
pub mod inspect;
pub mod links;
pub mod plan;
pub mod robots;
pub mod url;
