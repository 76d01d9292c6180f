//! `trawl crawl`: run a crawl from seeds into an output directory. The flags, their
//! checks and the resume are the library's (`trawl::options::crawl`, shared with the
//! Python package); this file adds what only a process does: the signal handlers, and
//! the summary on stderr.

use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Context;

use trawl::options::crawl::{crawl_flags, CrawlArgs, CrawlPlan};

/// Runs `trawl crawl`.
///
/// # Errors
/// Bad flags or files, or a crawl that cannot start (see `Crawler::run`).
///
/// `argv` is the whole command line after `--config` expansion: the flags given are
/// recorded in `start.json`, and a resume applies the recorded ones before them.
pub fn run(args: CrawlArgs, argv: &[String]) -> anyhow::Result<ExitCode> {
    let plan = CrawlPlan::new(args, crawl_flags(argv))?;
    if plan.config.from.is_none() {
        eprintln!("trawl: warning: no --from given; webmasters cannot reach the operator");
    }
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .context("cannot install signal handler")?;
    }
    let stats = plan.builder().stop_flag(stop).build()?.run()?;
    if stats.farm.is_some() && stats.finish == "error" {
        // A farm node that gave up (Redis unreachable past its limit) says so in its
        // exit status; the error itself was logged.
        eprintln!("trawl: farm node stopped on an error (see the log above); resume with --resume");
        return Ok(ExitCode::FAILURE);
    }
    eprintln!(
        "trawl: done ({}): {} pages in {:.1}s ({:.0} pages/s, {:.1} MB/s), {} discovered, {} queued",
        stats.finish, stats.pages, stats.elapsed_secs, stats.pages_per_sec, stats.mb_per_sec, stats.discovered, stats.queued
    );
    Ok(ExitCode::SUCCESS)
}
