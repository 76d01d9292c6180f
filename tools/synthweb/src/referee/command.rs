//! The `synthweb check` command around [`check`]: its arguments, reading
//! the manifest and the log, printing the report, the exit code.

use std::fs::File;
use std::io::{self, BufReader, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use crate::formats::{self, FormatError};

use super::{check, CheckPolicy};

/// `synthweb check` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct CheckArgs {
    /// Request log written by `synthweb --log FILE` during the crawl.
    #[arg(long, value_name = "FILE")]
    pub log: PathBuf,
    /// Manifest written by `synthweb --manifest FILE` for the same seed and hosts.
    #[arg(long, value_name = "FILE")]
    pub manifest: PathBuf,
    /// Robots agent (product token) the crawler claims; must match the manifest's
    /// agent. Defaults to the manifest's.
    #[arg(long)]
    pub agent: Option<String>,
    /// Smallest allowed gap between two request starts on one host, in milliseconds.
    /// Not checked when absent.
    #[arg(long, value_name = "D")]
    pub delay_ms: Option<u64>,
    /// Slack on `--delay-ms` for timing noise between the crawler's send and the
    /// server's receive, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 5)]
    pub delay_slack_ms: u64,
    /// Largest allowed number of simultaneous connections to one host. Not checked when
    /// absent.
    #[arg(long, value_name = "C")]
    pub per_host_connections: Option<u32>,
    /// Largest allowed number of simultaneous connections to one server address (the
    /// local IP the server accepted them on, all ports and host names together). Not
    /// checked when absent.
    #[arg(long, value_name = "C")]
    pub per_ip_connections: Option<u32>,
    /// Most retries (requests after a 0/408/429/5xx answer) allowed for one M URL.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub max_retries: u32,
    /// Print the report as one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Why `synthweb check` could not judge.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// A file could not be opened.
    #[error("cannot open {path}")]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A file is malformed.
    #[error("cannot read {path}")]
    Format {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: FormatError,
    },
    /// `--agent` disagrees with the agent the manifest was computed for.
    #[error("--agent {given} but the manifest was computed for agent {manifest}")]
    AgentMismatch {
        /// The `--agent` value.
        given: String,
        /// The manifest header's agent.
        manifest: String,
    },
    /// Writing the report failed.
    #[error("cannot write the report")]
    Output(#[source] io::Error),
}

/// `synthweb check`: read the files, judge, print. Exit code 0 when the crawl passes, 1
/// when it breaks a rule.
///
/// # Errors
/// Unreadable or malformed files, an agent mismatch, or a failed write: the caller
/// reports them and exits with 2.
pub fn run(args: &CheckArgs) -> Result<ExitCode, CheckError> {
    let open = |path: &PathBuf| {
        File::open(path)
            .map(BufReader::new)
            .map_err(|source| CheckError::Open {
                path: path.clone(),
                source,
            })
    };
    let manifest =
        formats::read_manifest(open(&args.manifest)?).map_err(|source| CheckError::Format {
            path: args.manifest.clone(),
            source,
        })?;
    let lines = formats::read_log(open(&args.log)?).map_err(|source| CheckError::Format {
        path: args.log.clone(),
        source,
    })?;
    let agent = match &args.agent {
        Some(agent) if !agent.eq_ignore_ascii_case(&manifest.header.agent) => {
            return Err(CheckError::AgentMismatch {
                given: agent.clone(),
                manifest: manifest.header.agent.clone(),
            })
        }
        Some(agent) => agent.clone(),
        None => manifest.header.agent.clone(),
    };
    let policy = CheckPolicy {
        agent,
        min_gap_us: args
            .delay_ms
            .map(|d| d.saturating_sub(args.delay_slack_ms).saturating_mul(1000)),
        per_host_connections: args.per_host_connections,
        per_ip_connections: args.per_ip_connections,
        max_retries: args.max_retries,
    };
    let report = check(&lines, &manifest, &policy);
    let mut out = io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report).map_err(io::Error::from)
    } else {
        out.write_all(report.to_string().as_bytes())
    }
    .and_then(|()| out.write_all(b"\n"))
    .map_err(CheckError::Output)?;
    Ok(if report.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
