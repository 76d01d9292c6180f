//! synthweb: a deterministic synthetic web served on loopback (see docs/synthweb.md).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// A deterministic synthetic web on loopback, for testing and benchmarking crawlers.
#[derive(Debug, Parser)]
#[command(name = "synthweb", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Judge a crawl from the server's request log against a manifest.
    Check(synthweb::referee::CheckArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Check(args)) => match synthweb::referee::run(&args) {
            Ok(code) => code,
            Err(err) => {
                eprintln!("synthweb check: {}", anyhow::Error::from(err));
                ExitCode::from(2)
            }
        },
        None => ExitCode::SUCCESS,
    }
}
