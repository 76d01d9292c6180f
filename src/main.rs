//! The `trawl` command line. Each subcommand lives in `src/cli/<name>.rs` as a clap
//! `Args` struct plus a `run` function; this file only dispatches.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

/// trawl: a polite, memory-bounded web crawler.
#[derive(Debug, Parser)]
#[command(name = "trawl", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {}

// The enum has no variants until the first subcommand lands; the match is then live.
#[allow(unreachable_code, unused_variables)]
fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: anyhow::Result<ExitCode> = match cli.command {};
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("trawl: {err:#}");
            ExitCode::from(2)
        }
    }
}
