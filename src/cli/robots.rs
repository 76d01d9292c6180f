//! `trawl robots`: ask "may this robot fetch these URLs?" of a robots.txt, the way a
//! webmaster (or a test harness) would.

use std::io::{BufRead, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::{Args, ValueEnum};
use serde::Deserialize;
use trawl::robots::{Decision, Mode, Reason, Rules, MAX_ROBOTS_BYTES};

/// Conventions for reading the file.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ModeArg {
    /// RFC 9309: merged groups, longest match wins, `*` and `$` wildcards.
    Rfc9309,
    /// 1994/1996: first matching record and rule in file order, literal prefixes.
    Draft1996,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::Rfc9309 => Mode::Rfc9309,
            ModeArg::Draft1996 => Mode::Draft1996,
        }
    }
}

/// Test URLs against a robots.txt.
#[derive(Debug, Args)]
pub struct RobotsArgs {
    /// The robot's name or User-Agent (only its product token is matched).
    #[arg(long, default_value = "trawl")]
    agent: String,
    /// The robots.txt file to read (`-` for standard input).
    #[arg(long, value_name = "FILE", required_unless_present = "jsonl")]
    robots: Option<PathBuf>,
    /// Read `{"id","robots","agent","url"}` objects from standard input, one per line,
    /// and print `{"id","allowed","line"}` for each.
    #[arg(long, conflicts_with = "robots")]
    jsonl: bool,
    /// Which conventions to follow.
    #[arg(
        long,
        visible_alias = "robots-mode",
        value_enum,
        default_value = "rfc9309"
    )]
    mode: ModeArg,
    /// URLs (absolute, or paths with query) to test.
    #[arg(value_name = "URL")]
    urls: Vec<String>,
}

/// Longest input line accepted in `--jsonl` mode: an inline robots.txt is parsed only
/// up to 500 KiB, and JSON escaping can at most sextuple it.
const MAX_JSONL_LINE_BYTES: u64 = 6 * MAX_ROBOTS_BYTES as u64 + 64 * 1024;

/// Runs the subcommand.
///
/// # Errors
/// Unreadable robots.txt file, or I/O errors on standard input/output.
pub fn run(args: RobotsArgs) -> anyhow::Result<ExitCode> {
    let mode = Mode::from(args.mode);
    if args.jsonl {
        if !args.urls.is_empty() {
            bail!("--jsonl reads URLs from standard input; do not also pass URL arguments");
        }
        return run_jsonl(mode);
    }
    let Some(path) = args.robots else {
        bail!("--robots FILE is required");
    };
    let bytes = read_limited(&path)?;
    let rules = Rules::parse(&bytes, &args.agent, mode);
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    for url in &args.urls {
        let decision = rules.decide(url);
        writeln!(
            out,
            "{} {url} ({})",
            verdict_word(&decision),
            explain(&decision)
        )?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn read_limited(path: &PathBuf) -> anyhow::Result<Vec<u8>> {
    // Read one byte past the parse limit so the parser knows the file was cut.
    let limit = MAX_ROBOTS_BYTES as u64 + 1;
    let mut bytes = Vec::new();
    if path.as_os_str() == "-" {
        std::io::stdin()
            .lock()
            .take(limit)
            .read_to_end(&mut bytes)?;
    } else {
        let file = std::fs::File::open(path)
            .with_context(|| format!("cannot open robots.txt {}", path.display()))?;
        file.take(limit).read_to_end(&mut bytes)?;
    }
    Ok(bytes)
}

fn verdict_word(d: &Decision<'_>) -> &'static str {
    if d.allowed {
        "allowed"
    } else {
        "disallowed"
    }
}

fn explain(d: &Decision<'_>) -> String {
    match d.reason {
        Reason::Rule(rule) => format!("line {}: {rule}", rule.line()),
        Reason::NoMatchingRule => "no matching rule".to_owned(),
        Reason::RobotsTxt => "/robots.txt is always allowed".to_owned(),
        Reason::Unavailable => "robots.txt unavailable".to_owned(),
        Reason::Unreachable => "robots.txt unreachable".to_owned(),
        Reason::Forbidden => "robots.txt forbidden".to_owned(),
    }
}

#[derive(Debug, Deserialize)]
struct Query {
    #[serde(default)]
    id: serde_json::Value,
    #[serde(default)]
    robots: String,
    #[serde(default)]
    agent: String,
    url: String,
}

fn run_jsonl(mode: Mode) -> anyhow::Result<ExitCode> {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut line = Vec::new();
    // Consecutive queries often share one file: keep the last compiled rules.
    let mut last: Option<(String, String, Rules)> = None;
    let mut had_error = false;
    loop {
        line.clear();
        let n = (&mut input)
            .take(MAX_JSONL_LINE_BYTES)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            break;
        }
        if !line.ends_with(b"\n") && n as u64 == MAX_JSONL_LINE_BYTES {
            // Skip the rest of an over-long line.
            let mut sink = Vec::new();
            input.read_until(b'\n', &mut sink)?;
            writeln!(
                out,
                "{}",
                serde_json::json!({"id": null, "error": "line too long"})
            )?;
            had_error = true;
            continue;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let query: Query = match serde_json::from_slice(&line) {
            Ok(q) => q,
            Err(err) => {
                writeln!(
                    out,
                    "{}",
                    serde_json::json!({"id": null, "error": err.to_string()})
                )?;
                had_error = true;
                continue;
            }
        };
        let reuse = matches!(&last, Some((r, a, _)) if *r == query.robots && *a == query.agent);
        if !reuse {
            let rules = Rules::parse(query.robots.as_bytes(), &query.agent, mode);
            last = Some((query.robots, query.agent, rules));
        }
        let Some((_, _, rules)) = &last else { continue };
        let decision = rules.decide(&query.url);
        let answer = serde_json::json!({
            "id": query.id,
            "allowed": decision.allowed,
            "line": decision.line(),
        });
        writeln!(out, "{answer}")?;
    }
    out.flush()?;
    Ok(if had_error {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
