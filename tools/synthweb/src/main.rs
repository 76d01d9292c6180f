//! synthweb: a deterministic synthetic web served on loopback (see docs/synthweb.md).

use clap::Parser;

/// A deterministic synthetic web on loopback, for testing and benchmarking crawlers.
#[derive(Debug, Parser)]
#[command(name = "synthweb", version, about)]
struct Cli {}

fn main() {
    let _cli = Cli::parse();
}
