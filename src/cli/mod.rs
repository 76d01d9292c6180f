//! Subcommands of the `trawl` binary (not part of the library API).

pub mod bench;
pub mod count;
pub mod plan;
