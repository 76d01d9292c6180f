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

// The enum is built once per process; boxing the large variant would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum Command {
    /// Test URLs against a robots.txt (RFC 9309 or the 1996 draft).
    Robots(cli::robots::RobotsArgs),
    /// URL tools (`trawl url canon`).
    Url(cli::url::UrlArgs),
    /// Print the links of an HTML page.
    Links(cli::links::LinksArgs),
    /// Fetch URLs in parallel over one event loop; one JSON line per URL.
    Fetch(cli::fetch::FetchArgs),
    /// Work out the memory and disk a crawl of a given size needs.
    Plan(cli::plan::PlanArgs),
    /// Run a benchmark and print one JSON object.
    Bench(cli::bench::BenchArgs),
    /// Crawl from seeds into an output directory (WARC, crawl log, checkpoints).
    #[command(args_override_self = true)]
    Crawl(trawl::options::crawl::CrawlArgs),
    /// Describe and verify a crawl's checkpoint (exit 1 if it is damaged).
    Inspect(cli::inspect::InspectArgs),
    /// Hand URLs to a running crawl through its drop directory (`OUT/add/`).
    Add(cli::add::AddArgs),
    /// Operate running crawls: pause, resume, checkpoint, stop, add, block, delay
    /// (`docs/control.md`).
    Ctl(cli::ctl::CtlArgs),
    /// A farm of trawl nodes sharing one crawl over Redis (`trawl farm status`).
    Farm(cli::farm::FarmCommand),
}

/// The binary's allocator. A crawl allocates and frees many small strings per page
/// (URLs, hop paths, log lines, header values) from several threads; glibc's malloc
/// spent about a tenth of the crawler's CPU in the crawl benchmark, mimalloc's
/// thread-local free lists roughly halve that. Embedders of the library choose their
/// own allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    trawl::sys::process::restore_default_sigpipe();
    let args = match trawl::options::crawl::expand_config(std::env::args().collect()) {
        Ok(args) => args,
        Err(err) => {
            eprintln!("trawl: {err:#}");
            return ExitCode::from(2);
        }
    };
    init_tracing();
    let cli = Cli::parse_from(&args);
    let result: anyhow::Result<ExitCode> = match cli.command {
        Command::Robots(args) => cli::robots::run(args),
        Command::Url(args) => cli::url::run(args),
        Command::Links(args) => cli::links::run(args),
        Command::Fetch(args) => cli::fetch::run(args),
        Command::Plan(args) => cli::plan::run(args),
        Command::Bench(args) => cli::bench::run(args),
        Command::Crawl(crawl) => cli::crawl::run(crawl, &args),
        Command::Inspect(args) => cli::inspect::run(args),
        Command::Add(args) => cli::add::run(args),
        Command::Ctl(args) => cli::ctl::run(args),
        Command::Farm(args) => cli::farm::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("trawl: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// Logs go to stderr at `warn` unless `RUST_LOG` says otherwise.
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
