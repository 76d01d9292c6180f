//! `trawl url canon`: canonicalize URLs from `base<TAB>href` lines or JSON lines.

use std::io::{self, BufRead, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use serde::Serialize;
use serde_json::Value;
use trawl::url::{canonicalize_with, CanonOptions, Reject};
use url::Url;

use super::links::open_input;

/// URL tools.
#[derive(Debug, Args)]
pub struct UrlArgs {
    #[command(subcommand)]
    command: UrlCommand,
}

#[derive(Debug, Subcommand)]
enum UrlCommand {
    /// Canonicalize `base<TAB>href` lines (a line without a tab is an absolute URL),
    /// printing the canonical URL or `error: <reason code>` per line.
    Canon(CanonArgs),
}

#[derive(Debug, Args)]
struct CanonArgs {
    /// Read `{"id","base","href"}` objects and print
    /// `{"id","canonical":string|null,"error":string|null}`.
    #[arg(long)]
    jsonl: bool,
    /// Lossy: remove well-known session-id parameters.
    #[arg(long)]
    strip_session_ids: bool,
    /// Lossy: sort query parameters.
    #[arg(long)]
    sort_query: bool,
    /// Encoding of the documents the references come from (query encoding), e.g.
    /// `windows-1252`. Default UTF-8.
    #[arg(long)]
    charset: Option<String>,
    /// Input file (default: standard input).
    file: Option<PathBuf>,
}

/// One output object of `--jsonl`, fields in the documented order.
#[derive(Serialize)]
struct CanonRecord<'a> {
    id: Value,
    canonical: Option<&'a str>,
    error: Option<&'a str>,
}

/// Runs `trawl url ...`.
///
/// # Errors
/// Unreadable input, an unknown `--charset`, or a write error.
pub fn run(args: UrlArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        UrlCommand::Canon(args) => canon(args),
    }
}

fn canon(args: CanonArgs) -> anyhow::Result<ExitCode> {
    let encoding = match &args.charset {
        Some(label) => Some(
            encoding_rs::Encoding::for_label(label.as_bytes())
                .with_context(|| format!("unknown charset {label:?}"))?,
        ),
        None => None,
    };
    let options = CanonOptions {
        strip_session_ids: args.strip_session_ids,
        sort_query: args.sort_query,
    };
    let input = open_input(args.file.as_deref())?;
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    for line in input.lines() {
        let line = line.context("reading input")?;
        let line = line.strip_suffix('\r').unwrap_or(&line);
        if args.jsonl {
            if line.trim().is_empty() {
                continue;
            }
            let (id, result) = match serde_json::from_str::<Value>(line) {
                Ok(obj) => {
                    let id = obj.get("id").cloned().unwrap_or(Value::Null);
                    let base = obj.get("base").and_then(Value::as_str);
                    let href = obj.get("href").and_then(Value::as_str);
                    let result = match href {
                        Some(href) => canon_one(base, href, &options, encoding),
                        None => Err("missing_href"),
                    };
                    (id, result)
                }
                Err(_) => (Value::Null, Err("bad_json")),
            };
            let record = match &result {
                Ok(url) => CanonRecord {
                    id,
                    canonical: Some(url.as_str()),
                    error: None,
                },
                Err(code) => CanonRecord {
                    id,
                    canonical: None,
                    error: Some(code),
                },
            };
            serde_json::to_writer(&mut out, &record)?;
            writeln!(out)?;
        } else {
            let (base, href) = match line.split_once('\t') {
                Some((base, href)) => (Some(base), href),
                None => (None, line),
            };
            match canon_one(base, href, &options, encoding) {
                Ok(url) => writeln!(out, "{url}")?,
                Err(code) => writeln!(out, "error: {code}")?,
            }
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Canonicalizes one reference; a missing or empty base means `href` is absolute.
fn canon_one(
    base: Option<&str>,
    href: &str,
    options: &CanonOptions,
    encoding: Option<&'static encoding_rs::Encoding>,
) -> Result<Url, &'static str> {
    let base = match base.filter(|b| !b.trim().is_empty()) {
        Some(base) => Url::parse(base.trim()).map_err(|_| "invalid_base")?,
        None => {
            let absolute = trawl::url::canonicalize_absolute(href).map_err(|r| r.code())?;
            return canonicalize_with(&absolute, href, options, encoding).map_err(|r| r.code());
        }
    };
    canonicalize_with(&base, href, options, encoding).map_err(|r: Reject| r.code())
}
