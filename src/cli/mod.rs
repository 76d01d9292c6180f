//! Subcommands of the `trawl` binary (not part of the library API).

pub mod fetch;
