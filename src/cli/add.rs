//! `trawl add --out DIR URL...` (or `--file F`, `-` for stdin): hand URLs to a running
//! crawl through its drop directory `DIR/add/` (`trawl::add`, see `docs/recrawl.md`).
//!
//! The batch file appears atomically (temporary name, fsync, rename, fsync of the
//! directory): once `trawl add` has printed its line, a kill -9 of the crawl loses none
//! of the URLs. Every line is checked first; one that is not an absolute http(s) URL
//! stops the command with exit 2 and nothing is written, as does a `DIR` that is not
//! a crawl's output directory (no `start.json`).
//!
//! The running crawl polls `DIR/add/` about once a second (`src/engine/adds.rs`) and
//! admits the added URLs as it admits links (`src/engine/core/added.rs`): presence
//! bits, scope, filters, an embedder's hook, then robots.txt and politeness.

use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::Args;

use trawl::add::{check_url, write_batch};

/// Flags of `trawl add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The running crawl's output directory (its `--out`).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Read URLs from this file, one per line (`-` for standard input); blank lines and
    /// lines starting with `#` are skipped.
    #[arg(long, value_name = "FILE", conflicts_with = "urls")]
    pub file: Option<PathBuf>,
    /// URLs to add.
    #[arg(value_name = "URL", required_unless_present = "file")]
    pub urls: Vec<String>,
}

/// Most URLs one `trawl add` takes (a batch file is read whole by the crawl).
const MAX_URLS: usize = 1_000_000;

pub fn run(args: AddArgs) -> anyhow::Result<ExitCode> {
    let lines: Vec<String> = match &args.file {
        Some(path) => {
            let mut text = String::new();
            if path.as_os_str() == "-" {
                io::stdin()
                    .read_to_string(&mut text)
                    .context("reading URLs from standard input")?;
            } else {
                text = std::fs::read_to_string(path)
                    .with_context(|| format!("reading {}", path.display()))?;
            }
            text.lines().map(|l| l.trim().to_owned()).collect()
        }
        None => args.urls.iter().map(|u| u.trim().to_owned()).collect(),
    };
    let mut urls = Vec::new();
    let mut bad = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match check_url(line) {
            Ok(()) => urls.push(line.clone()),
            Err(reason) => bad.push(format!("  line {}: {reason}: {line:?}", i + 1)),
        }
    }
    if !bad.is_empty() {
        bail!(
            "{} line(s) are not absolute http(s) URLs; nothing was added:\n{}",
            bad.len(),
            bad.join("\n")
        );
    }
    if urls.is_empty() {
        bail!("no URLs to add");
    }
    if urls.len() > MAX_URLS {
        bail!(
            "{} URLs in one add; at most {MAX_URLS} (split them over several)",
            urls.len()
        );
    }
    // A typo in --out must not leave URLs where no crawl will read them.
    if !trawl::checkpoint::start::start_path(&args.out).is_file() {
        bail!(
            "{} is not a crawl output directory (no {}); give the --out of a running crawl",
            args.out.display(),
            trawl::checkpoint::start::START_FILE
        );
    }
    let path = write_batch(&args.out, &urls)?;
    let mut out = io::stdout().lock();
    serde_json::to_writer(
        &mut out,
        &serde_json::json!({ "added": urls.len(), "batch": path.display().to_string() }),
    )?;
    writeln!(out)?;
    Ok(ExitCode::SUCCESS)
}
