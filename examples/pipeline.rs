//! Embedding trawl in a small pipeline through the library API.
//!
//! The crawl runs in this process (`Crawler::builder()...build()?.run()`); a
//! [`Handler`] sees every response, every crawl-log decision and every new link:
//!
//! - `on_response` keeps HTML pages with a 2xx status, extracts the `<title>` and counts
//!   the words of the text, and sends `(url, status, bytes, words, title)` over a
//!   bounded channel to a consumer thread that writes `OUT/index.tsv`. The hook runs on
//!   a shard thread, so it only does cheap work and hands the rest off; the bounded
//!   channel slows the crawl down rather than buffering without end if the consumer
//!   falls behind.
//! - `on_outcome` tallies the crawl-log outcomes (fetched, robots, filtered...).
//! - `accept_link` applies a user rule: drop URLs with a query string, and with
//!   `--same-host` links that leave the page's host.
//!
//! At the end it prints trawl's [`Stats`] and the pipeline's own counts.
//!
//! ```text
//! cargo run --example pipeline -- --seeds seeds.txt --out /tmp/pipe \
//!     [--hosts-file hosts.txt] [--allow-private-addresses] [--same-host] \
//!     [--delay-ms 1000] [--max-pages N] [--from you@example.org]
//! ```
//!
//! `--hosts-file` (a synthweb hosts file: `name address port`) and
//! `--allow-private-addresses` let it crawl a synthetic web on loopback:
//! `tests/example_pipeline.rs` does exactly that.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use trawl::crawllog::{LogRecord, Outcome};
use trawl::engine::{CrawlConfig, Crawler, Stats};
use trawl::{Handler, Page};
use url::Url;

/// What the pipeline was asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    pub seeds: PathBuf,
    pub out: PathBuf,
    pub hosts_file: Option<PathBuf>,
    pub allow_private_addresses: bool,
    /// Follow only links to the host of the page they are on.
    pub same_host: bool,
    pub delay_ms: u64,
    pub max_pages: Option<u64>,
    pub from: Option<String>,
}

impl Options {
    /// Parses `--flag value` arguments (without the program name).
    ///
    /// # Errors
    /// A missing required flag, a flag without its value, or an unknown flag.
    pub fn parse(args: &[String]) -> Result<Self, String> {
        let mut seeds = None;
        let mut out = None;
        let mut o = Options {
            seeds: PathBuf::new(),
            out: PathBuf::new(),
            hosts_file: None,
            allow_private_addresses: false,
            same_host: false,
            delay_ms: 1000,
            max_pages: None,
            from: None,
        };
        let mut it = args.iter();
        while let Some(flag) = it.next() {
            let mut value = || {
                it.next()
                    .cloned()
                    .ok_or_else(|| format!("{flag} needs a value"))
            };
            match flag.as_str() {
                "--seeds" => seeds = Some(PathBuf::from(value()?)),
                "--out" => out = Some(PathBuf::from(value()?)),
                "--hosts-file" => o.hosts_file = Some(PathBuf::from(value()?)),
                "--delay-ms" => {
                    o.delay_ms = value()?.parse().map_err(|e| format!("--delay-ms: {e}"))?;
                }
                "--max-pages" => {
                    o.max_pages = Some(value()?.parse().map_err(|e| format!("--max-pages: {e}"))?);
                }
                "--from" => o.from = Some(value()?),
                "--allow-private-addresses" => o.allow_private_addresses = true,
                "--same-host" => o.same_host = true,
                other => return Err(format!("unknown flag {other}")),
            }
        }
        o.seeds = seeds.ok_or("--seeds FILE is required")?;
        o.out = out.ok_or("--out DIR is required")?;
        Ok(o)
    }
}

/// One row of the index.
#[derive(Debug)]
struct Entry {
    url: String,
    status: u16,
    bytes: usize,
    words: usize,
    title: String,
}

/// The pipeline's side of the crawl: the hooks trawl calls from its shard threads.
struct Indexer {
    tx: SyncSender<Entry>,
    same_host: bool,
    /// Crawl-log decisions, by outcome.
    fetched: AtomicU64,
    robots: AtomicU64,
    filtered: AtomicU64,
    failed: AtomicU64,
    /// Responses seen, and those that were not 2xx HTML (not indexed).
    responses: AtomicU64,
    skipped: AtomicU64,
    /// Links our rule refused.
    links_rejected: AtomicU64,
}

impl Handler for Indexer {
    fn on_response(&self, page: &Page<'_>) {
        self.responses.fetch_add(1, Ordering::Relaxed);
        let html = page.head.header("content-type").is_some_and(|v| {
            let v = String::from_utf8_lossy(v).to_ascii_lowercase();
            v.trim_start().starts_with("text/html")
        });
        if !html || !(200..300).contains(&page.head.status) {
            self.skipped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let text = String::from_utf8_lossy(page.body);
        let entry = Entry {
            url: page.url.to_string(),
            status: page.head.status,
            bytes: page.body.len(),
            words: count_words(&text),
            title: title_of(&text).unwrap_or_default(),
        };
        // A closed channel means the consumer failed; it reports that itself.
        let _ = self.tx.send(entry);
    }

    fn on_outcome(&self, record: &LogRecord) {
        let counter = match record.outcome {
            Outcome::Fetched => &self.fetched,
            Outcome::Robots => &self.robots,
            Outcome::Filtered => &self.filtered,
            _ => &self.failed,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    fn accept_link(&self, from: &str, link: &Url) -> bool {
        let off_host = self.same_host
            && Url::parse(from).map_or(true, |f| {
                f.host_str() != link.host_str()
                    || f.port_or_known_default() != link.port_or_known_default()
            });
        let ok = link.query().is_none() && !off_host;
        if !ok {
            self.links_rejected.fetch_add(1, Ordering::Relaxed);
        }
        ok
    }
}

/// The text of the first `<title>` element, whitespace collapsed, references decoded.
fn title_of(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower.get(open..)?.find('>')? + 1;
    let end = start + lower.get(start..)?.find("</title")?;
    let raw = html.get(start..end)?;
    let decoded = trawl::html::decode_attribute(raw);
    Some(decoded.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Words of the text outside tags (a rough count: scripts and styles included).
fn count_words(html: &str) -> usize {
    let mut words = 0;
    let mut in_tag = false;
    let mut in_word = false;
    for c in html.chars() {
        match c {
            '<' => {
                in_tag = true;
                in_word = false;
            }
            '>' => in_tag = false,
            _ if in_tag => {}
            c if c.is_alphanumeric() => {
                if !in_word {
                    words += 1;
                    in_word = true;
                }
            }
            _ => in_word = false,
        }
    }
    words
}

/// The consumer: writes one TSV row per entry until the channel closes.
fn spawn_writer(
    path: PathBuf,
    rx: Receiver<Entry>,
) -> std::io::Result<JoinHandle<std::io::Result<u64>>> {
    let mut out = BufWriter::new(File::create(&path)?);
    Ok(std::thread::spawn(move || {
        writeln!(out, "url\tstatus\tbytes\twords\ttitle")?;
        let mut rows = 0;
        for e in rx {
            let title = e.title.replace(['\t', '\n', '\r'], " ");
            writeln!(
                out,
                "{}\t{}\t{}\t{}\t{title}",
                e.url, e.status, e.bytes, e.words
            )?;
            rows += 1;
        }
        out.flush()?;
        Ok(rows)
    }))
}

/// What one run produced.
#[derive(Debug)]
pub struct Summary {
    pub stats: Stats,
    pub index: PathBuf,
    pub rows: u64,
    pub responses: u64,
    pub skipped: u64,
    pub links_rejected: u64,
    pub outcomes: [(&'static str, u64); 4],
}

/// Crawls the seeds into `opts.out` and writes `opts.out/index.tsv`.
///
/// # Errors
/// Unreadable seeds or hosts file, a crawl that cannot start, or a failed index write.
pub fn run_pipeline(opts: &Options) -> Result<Summary, Box<dyn std::error::Error>> {
    let mut config = CrawlConfig::new(&opts.out);
    config.seeds = std::fs::read_to_string(&opts.seeds)?
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect();
    if let Some(path) = &opts.hosts_file {
        let text = std::fs::read_to_string(path)?;
        config
            .fetcher
            .dns
            .overrides
            .extend(trawl::net::parse_hosts_file(&text)?);
    }
    config.fetcher.allow_private_addresses = opts.allow_private_addresses;
    config.delay = Duration::from_millis(opts.delay_ms);
    config.max_pages = opts.max_pages;
    config.from.clone_from(&opts.from);
    // A small pipeline: presence bits for a million URLs, no progress lines.
    config.seen_capacity = 1_000_000;
    config.progress_interval = Duration::ZERO;

    std::fs::create_dir_all(&opts.out)?;
    let index = opts.out.join("index.tsv");
    let (tx, rx) = sync_channel(1024);
    let writer = spawn_writer(index.clone(), rx)?;
    let indexer = Arc::new(Indexer {
        tx,
        same_host: opts.same_host,
        fetched: AtomicU64::new(0),
        robots: AtomicU64::new(0),
        filtered: AtomicU64::new(0),
        failed: AtomicU64::new(0),
        responses: AtomicU64::new(0),
        skipped: AtomicU64::new(0),
        links_rejected: AtomicU64::new(0),
    });
    let result = Crawler::builder()
        .config(config)
        .handler(indexer.clone())
        .build()
        .and_then(Crawler::run);
    // `run` has joined the shard threads and dropped its handle on the handler; ours is
    // the last sender, so dropping it ends the writer's loop.
    let Ok(indexer) = Arc::try_unwrap(indexer) else {
        return Err("the crawler kept a reference to the handler".into());
    };
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
    let counts = (
        load(&indexer.responses),
        load(&indexer.skipped),
        load(&indexer.links_rejected),
        [
            ("fetched", load(&indexer.fetched)),
            ("robots", load(&indexer.robots)),
            ("filtered", load(&indexer.filtered)),
            ("other", load(&indexer.failed)),
        ],
    );
    drop(indexer);
    let rows = writer.join().map_err(|_| "index writer panicked")??;
    let stats = result?;
    Ok(Summary {
        stats,
        index,
        rows,
        responses: counts.0,
        skipped: counts.1,
        links_rejected: counts.2,
        outcomes: counts.3,
    })
}

#[allow(
    dead_code,
    reason = "tests/example_pipeline.rs includes this file as a module"
)]
fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = match Options::parse(&args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("pipeline: {e}");
            eprintln!(
                "usage: pipeline --seeds FILE --out DIR [--hosts-file FILE] \
                 [--allow-private-addresses] [--same-host] [--delay-ms N] [--max-pages N] [--from EMAIL]"
            );
            return ExitCode::from(2);
        }
    };
    match run_pipeline(&opts) {
        Ok(s) => {
            println!(
                "{} pages indexed in {} ({} responses, {} not 2xx HTML, {} links refused by the rule)",
                s.rows,
                s.index.display(),
                s.responses,
                s.skipped,
                s.links_rejected
            );
            let outcomes: Vec<String> =
                s.outcomes.iter().map(|(k, v)| format!("{k} {v}")).collect();
            println!("outcomes: {}", outcomes.join(", "));
            match serde_json::to_string_pretty(&s.stats) {
                Ok(json) => println!("{json}"),
                Err(e) => eprintln!("pipeline: stats: {e}"),
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("pipeline: {e}");
            ExitCode::FAILURE
        }
    }
}
