//! `trawl inspect DIR`: describe and verify a crawl's checkpoint (see
//! `docs/checkpoints.md`). Read-only: safe on the output directory of a running crawl or
//! one killed with `kill -9`.
//!
//! Exit status: 0 when the checkpoint verifies, 1 when it is damaged (every problem is
//! printed, naming the file and, for segments, the byte offset), 2 when `DIR` is not a
//! checkpoint or its manifest cannot be read.

use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use trawl::bytesize::human_bytes;
use trawl::inspect::{
    Checkpoint, CheckpointEntryKind, DescribeOptions, Description, PresenceReport,
};

/// Flags of `trawl inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// A crawl output directory (holding `checkpoint/`), a `checkpoint/` directory, or
    /// one `cp-NNNNNN` directory.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Print one JSON object instead of the human-readable report.
    #[arg(long)]
    pub json: bool,
    /// How many hosts to list by queued URLs.
    #[arg(long = "top", value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Print every queued URL (`url<TAB>host<TAB>hops<TAB>shard`, hops `-` for a seed)
    /// instead of the report; problems go to stderr.
    #[arg(long)]
    pub urls: bool,
    /// Do not read the crawl log (its outcome counts are then not reported).
    #[arg(long)]
    pub no_log: bool,
}

/// Runs `trawl inspect`.
///
/// # Errors
/// `DIR` is not a checkpoint, its manifest is unreadable, or stdout is closed.
pub fn run(args: InspectArgs) -> anyhow::Result<ExitCode> {
    let cp = Checkpoint::open(&args.dir)?;
    let opts = DescribeOptions {
        top_hosts: args.top,
        read_log: !args.no_log && !args.urls,
        ..DescribeOptions::default()
    };
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let (d, written) = if args.urls {
        let mut written = Ok(());
        let d = cp.describe_with(&opts, &mut |shard, rec| {
            if written.is_ok() {
                let hops = if rec.item.hops.is_empty() {
                    "-"
                } else {
                    rec.item.hops.as_str()
                };
                written = writeln!(out, "{}\t{}\t{hops}\t{shard}", rec.item.url, rec.host);
            }
        });
        for p in &d.verification.errors {
            eprintln!("trawl: error: {p}");
        }
        (d, written)
    } else {
        let d = cp.describe(&opts);
        let written = if args.json {
            serde_json::to_writer_pretty(&mut out, &d)
                .map_err(io::Error::from)
                .and_then(|()| writeln!(out))
        } else {
            out.write_all(render(&d).as_bytes())
        };
        (d, written)
    };
    match written.and_then(|()| out.flush()) {
        // A reader that stopped early (`| head`) is not an error of ours.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
        r => r.context("cannot write to stdout")?,
    }
    Ok(if d.verification.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The human-readable report.
fn render(d: &Description) -> String {
    let mut s = String::new();
    let current = if d.is_current {
        "current"
    } else {
        "NOT current: --resume would use another"
    };
    let _ = writeln!(
        s,
        "checkpoint   {} ({current}) in {}",
        d.name,
        d.root.display()
    );
    let _ = writeln!(
        s,
        "taken        {} ({} ago), epoch {}, {} shard(s), {} seed(s)",
        d.taken_at,
        duration(d.age_secs),
        d.epoch,
        d.shards,
        d.seeds
    );
    let others: Vec<String> = d
        .entries
        .iter()
        .filter(|e| e.kind != CheckpointEntryKind::Current)
        .map(|e| {
            let what = match e.kind {
                CheckpointEntryKind::Sealed => "sealed, not current, ignored",
                CheckpointEntryKind::Unfinished => "unfinished, ignored",
                CheckpointEntryKind::PointerTmp => "pointer being replaced, ignored",
                CheckpointEntryKind::Other | CheckpointEntryKind::Current => "not trawl's",
            };
            format!("{} ({what})", e.name)
        })
        .collect();
    if !others.is_empty() {
        let _ = writeln!(s, "others       {}", others.join(", "));
    }
    match &d.config {
        Some(c) => {
            let opt = |v: Option<u64>| v.map_or_else(|| "none".to_owned(), |n| n.to_string());
            let _ = writeln!(
                s,
                "config       {} shard(s) x {} fetches, delay {} ms (factor {}), {} connection(s)/host",
                c.shards, c.concurrency_per_shard, c.delay_ms, c.delay_factor, c.per_host_connections
            );
            let _ = writeln!(
                s,
                "             budgets: pages {}, pages/host {}, bytes {}; max hops {}, url bytes {}, path depth {}, scope {}",
                opt(c.max_pages),
                opt(c.max_pages_per_host),
                opt(c.max_bytes),
                c.max_hops,
                c.max_url_bytes,
                c.max_path_depth,
                c.scope
            );
            let _ = writeln!(
                s,
                "             memory {}, presence bits for {} URLs at fp {}, WARC {}, checkpoint every {} s{}",
                human_bytes(c.memory_bytes as f64, 1),
                c.seen_capacity,
                c.seen_fp,
                if c.warc { "on" } else { "off" },
                c.checkpoint_secs,
                if c.allow_private_addresses {
                    ", private addresses allowed"
                } else {
                    ""
                }
            );
            let _ = writeln!(
                s,
                "             user agent {:?}, from {}",
                c.user_agent,
                c.from.as_deref().unwrap_or("(none)")
            );
        }
        None => {
            let _ = writeln!(s, "config       not recorded (written by an older trawl)");
        }
    }
    let c = &d.counters;
    let _ = writeln!(
        s,
        "counters     {} pages ({} started), {} received, {} discovered, {} duplicates",
        c.pages,
        c.pages_started,
        human_bytes(c.bytes as f64, 1),
        c.discovered,
        c.duplicates
    );
    if let Some(log) = &d.log {
        let outcomes: Vec<String> = log
            .outcomes
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(
            s,
            "outcomes     {} (crawl log up to the checkpoint: {} lines, {} with a status)",
            if outcomes.is_empty() {
                "none".to_owned()
            } else {
                outcomes.join(", ")
            },
            log.lines,
            log.with_status
        );
    }
    let f = &d.frontier;
    let _ = writeln!(
        s,
        "frontier     {} URLs ({} in the manifest) on {}{} host(s), {} on disk ({:.1} bytes/URL); {} seed(s), {} retrying, max hops {}",
        f.urls,
        d.queued_urls,
        if f.hosts_capped { "at least " } else { "" },
        f.hosts,
        human_bytes(f.bytes as f64, 1),
        f.bytes_per_url,
        f.seeds_queued,
        f.retrying,
        f.max_hops
    );
    for sh in &f.shards {
        let _ = writeln!(
            s,
            "  shard {:<4}  {:>10} URLs {:>11} {:>8} host(s)  {}{}",
            sh.shard,
            sh.urls,
            human_bytes(sh.bytes as f64, 1),
            sh.hosts,
            sh.file
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            if sh.complete {
                ""
            } else {
                "  (DAMAGED: read up to the error)"
            }
        );
    }
    if !f.top_hosts.is_empty() {
        let _ = writeln!(s, "top hosts    by queued URLs");
        for h in &f.top_hosts {
            let _ = writeln!(s, "  {:>10}  {}", h.urls, h.host);
        }
    }
    let t = &d.tallies;
    let _ = writeln!(
        s,
        "tallies      {} host(s), {} pages, {} parked, {} failing",
        t.hosts, t.pages, t.parked, t.failing
    );
    let r = &d.robots;
    if r.files == 0 {
        let _ = writeln!(
            s,
            "robots       no robots cache files (a resume fetches every robots.txt again)"
        );
    } else {
        let _ = writeln!(
            s,
            "robots       {} host(s) in {} file(s), {}: {} ready ({} parsed with {} rules, {} allow-all, {} disallow-all; {} expired, {} with validators), {} unreachable{}",
            r.hosts,
            r.files,
            human_bytes(r.bytes as f64, 1),
            r.ready,
            r.parsed,
            r.rules,
            r.allow_all,
            r.disallow_all,
            r.expired,
            r.with_validators,
            r.unreachable,
            if r.damaged > 0 {
                format!(", {} damaged entries", r.damaged)
            } else {
                String::new()
            }
        );
        if r.tier_files > 0 {
            let _ = writeln!(
                s,
                "robots tier  {} log file(s) kept with the checkpoint (hard links), {} recorded, {} record(s) read (a host's latest counts above)",
                r.tier_files,
                human_bytes(r.tier_bytes as f64, 1),
                r.tier_records,
            );
        }
    }
    presence(&mut s, "seen bits   ", d.seen.as_ref());
    presence(&mut s, "fingerprints", d.fingerprints.as_ref());
    let p = &d.positions;
    let _ = write!(s, "positions    crawl log {} bytes", p.crawl_log_bytes);
    if let Some(n) = p.crawl_log_file_bytes {
        let _ = write!(s, " (file now {n})");
    }
    match (&p.warc_file, p.warc_offset) {
        (Some(file), Some(off)) => {
            let _ = write!(s, "; WARC {file} at byte {off}");
            if let (Some(path), Some(n)) = (&p.warc_path, p.warc_file_bytes) {
                let open = path.extension().is_some_and(|e| e == "open");
                let _ = write!(
                    s,
                    " (file now {n}{})",
                    if open { ", still open" } else { "" }
                );
            }
        }
        _ => {
            let _ = write!(s, "; no WARC output");
        }
    }
    let _ = writeln!(s);
    let v = &d.verification;
    if v.ok {
        let _ = writeln!(
            s,
            "verify       OK: {} file(s), {} read through, every checksum matches",
            v.files_checked,
            human_bytes(v.bytes_checked as f64, 1)
        );
    } else {
        let _ = writeln!(
            s,
            "verify       FAILED: {} error(s) ({} file(s), {} read)",
            v.errors.len(),
            v.files_checked,
            human_bytes(v.bytes_checked as f64, 1)
        );
    }
    for (label, list) in [("error", &v.errors), ("warning", &v.warnings)] {
        for p in list.iter().take(MAX_PROBLEMS_SHOWN) {
            let _ = writeln!(s, "  {label}: {p}");
        }
        if list.len() > MAX_PROBLEMS_SHOWN {
            let _ = writeln!(
                s,
                "  ... and {} more {label}s (all of them with --json)",
                list.len() - MAX_PROBLEMS_SHOWN
            );
        }
    }
    s
}

/// Problems listed in the human report (a garbled manifest can make thousands).
const MAX_PROBLEMS_SHOWN: usize = 100;

fn presence(s: &mut String, label: &str, p: Option<&PresenceReport>) {
    match p {
        Some(p) => {
            let _ = writeln!(
                s,
                "{label} {}, {} bits, k {}: {} set ({:.4}% full), {} keys of {} capacity{}, fp now {:.3e}, expected lost {:.3}",
                human_bytes(p.file_bytes as f64, 1),
                p.bits,
                p.k,
                p.set_bits,
                p.fill_ratio * 100.0,
                p.inserted,
                p.capacity,
                if p.over_capacity { " (OVER CAPACITY)" } else { "" },
                p.expected_fp,
                p.expected_lost
            );
            if let (Some(records), Some(base)) = (p.log_records, p.log_base_bytes) {
                let _ = writeln!(
                    s,
                    "{:12} presence log: {records} record(s), full record {}, deltas {}",
                    "",
                    human_bytes(base as f64, 1),
                    human_bytes(p.file_bytes.saturating_sub(base) as f64, 1)
                );
            }
        }
        None => {
            let _ = writeln!(s, "{label} unreadable (see verify)");
        }
    }
}

fn duration(secs: u64) -> String {
    match secs {
        s if s < 120 => format!("{s} s"),
        s if s < 7200 => format!("{} min", s / 60),
        s if s < 172_800 => format!("{} h", s / 3600),
        s => format!("{} days", s / 86_400),
    }
}
