//! Subcommands of the `trawl` binary (not part of the library API).

pub mod links;
pub mod robots;
pub mod url;
pub mod fetch;
pub mod bench;
pub mod count;
pub mod plan;
