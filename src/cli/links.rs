//! `trawl links`: the links of an HTML page, canonical, without crawl filters.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use serde::Serialize;
use serde_json::Value;
use trawl::html::{ExtractOptions, Links, PageLinks};
use url::Url;

/// Print the links of an HTML page, one canonical URL a line, in document order.
#[derive(Debug, Args)]
pub struct LinksArgs {
    /// The page's URL (the base for relative links). Required without `--jsonl`; with
    /// it, the default for objects without a `base`.
    #[arg(long)]
    base: Option<String>,
    /// Read `{"id","base","html"}` objects and print
    /// `{"id","links":[...],"base":...,"robots":{"index":bool,"follow":bool}}`.
    #[arg(long)]
    jsonl: bool,
    /// Also extract `<img src>`.
    #[arg(long)]
    images: bool,
    /// The page's encoding, as an HTTP `Content-Type` charset would give it.
    #[arg(long)]
    charset: Option<String>,
    /// Print `tag<TAB>attribute<TAB>follow|nofollow<TAB>url` and dropped links as
    /// `error: <reason code>` too.
    #[arg(long)]
    long: bool,
    /// Input file (default: standard input).
    file: Option<PathBuf>,
}

/// Opens `path`, or standard input.
///
/// # Errors
/// The file cannot be opened.
pub fn open_input(path: Option<&Path>) -> anyhow::Result<Box<dyn BufRead>> {
    Ok(match path {
        Some(p) if p != Path::new("-") => Box::new(BufReader::new(
            File::open(p).with_context(|| format!("opening {}", p.display()))?,
        )),
        _ => Box::new(BufReader::new(io::stdin())),
    })
}

/// Runs `trawl links`.
///
/// # Errors
/// Unreadable input, a missing or invalid `--base`, an unknown `--charset`, or a
/// write error.
pub fn run(args: LinksArgs) -> anyhow::Result<ExitCode> {
    let charset = match &args.charset {
        Some(label) => Some(
            encoding_rs::Encoding::for_label(label.as_bytes())
                .with_context(|| format!("unknown charset {label:?}"))?,
        ),
        None => None,
    };
    let options = ExtractOptions {
        include_images: args.images,
        ..ExtractOptions::default()
    };
    let default_base = match &args.base {
        Some(b) => Some(Url::parse(b).with_context(|| format!("invalid --base {b:?}"))?),
        None => None,
    };
    let mut input = open_input(args.file.as_deref())?;
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    if !args.jsonl {
        let base = default_base.context("--base URL is required without --jsonl")?;
        let mut page = Vec::new();
        input.read_to_end(&mut page).context("reading input")?;
        let links = Links::extract_with(&base, &page, charset, &options);
        print_lines(&links, args.long, &mut out)?;
        out.flush()?;
        warn_if_capped(base.as_str(), &links);
        return Ok(ExitCode::SUCCESS);
    }
    for line in input.lines() {
        let line = line.context("reading input")?;
        if line.trim().is_empty() {
            continue;
        }
        let (id, page, error) = match serde_json::from_str::<Value>(&line) {
            Ok(obj) => {
                let id = obj.get("id").cloned().unwrap_or(Value::Null);
                let html = obj.get("html").and_then(Value::as_str).unwrap_or("");
                let base = match obj.get("base").and_then(Value::as_str) {
                    Some(b) => Url::parse(b).ok(),
                    None => default_base.clone(),
                };
                match base {
                    Some(base) => (
                        id,
                        Some(Links::extract_with(
                            &base,
                            html.as_bytes(),
                            charset,
                            &options,
                        )),
                        None,
                    ),
                    None => (id, None, Some("invalid_base")),
                }
            }
            Err(_) => (Value::Null, None, Some("bad_json")),
        };
        if let Some(p) = &page {
            warn_if_capped(&id.to_string(), p);
        }
        let record = LinksRecord {
            id,
            links: page.as_ref().map_or_else(Vec::new, |p| {
                p.links
                    .iter()
                    .filter_map(|l| l.url.as_ref().ok().map(Url::as_str))
                    .collect()
            }),
            base: page.as_ref().map(|p| p.base.as_str()),
            robots: Robots {
                index: page.as_ref().is_none_or(|p| p.robots.index),
                follow: page.as_ref().is_none_or(|p| p.robots.follow),
            },
            error,
        };
        serde_json::to_writer(&mut out, &record)?;
        writeln!(out)?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// One output object of `--jsonl`, fields in the documented order; `error` only
/// when the input object could not be used.
#[derive(Serialize)]
struct LinksRecord<'a> {
    id: Value,
    links: Vec<&'a str>,
    base: Option<&'a str>,
    robots: Robots,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'static str>,
}

#[derive(Serialize)]
struct Robots {
    index: bool,
    follow: bool,
}

/// Says on stderr when an extraction cap dropped links of `page` (no limit is
/// silent), in the crawl log's annotation words, e.g.
/// `trawl links: http://h/: links capped: links-truncated:200 long-attributes:1`.
/// `what` names the page (its base, or the `--jsonl` id). The exit code is unchanged:
/// the links printed are right, only not all of them.
fn warn_if_capped(what: &str, page: &PageLinks) {
    if !page.is_truncated() {
        return;
    }
    let caps = [
        ("links-truncated", page.links_dropped),
        ("rejects-truncated", page.rejects_dropped),
        ("scan-truncated", page.unscanned_bytes),
        ("long-attributes", page.long_attributes),
    ];
    let mut line = format!("trawl links: {what}: links capped:");
    for (name, n) in caps.iter().filter(|(_, n)| *n > 0) {
        line.push_str(&format!(" {name}:{n}"));
    }
    eprintln!("{line}");
}

fn print_lines(page: &PageLinks, long: bool, out: &mut impl Write) -> io::Result<()> {
    for link in &page.links {
        match (&link.url, long) {
            (Ok(url), false) => writeln!(out, "{url}")?,
            (Err(_), false) => {}
            (url, true) => {
                let follow = if link.nofollow { "nofollow" } else { "follow" };
                let url = match url {
                    Ok(u) => u.to_string(),
                    Err(r) => format!("error: {}", r.code()),
                };
                writeln!(
                    out,
                    "{}\t{}\t{follow}\t{url}",
                    link.tag.name(),
                    link.attr.name()
                )?;
            }
        }
    }
    Ok(())
}
