//! Process limits a crawl needs: the open files limit, raised to its hard limit so
//! `--concurrency` connections fit, and the concurrency lowered (with a warning) when
//! even that is too small.

use crate::engine::CrawlConfig;

/// File descriptors a crawl keeps beside its connections: WARC and log files,
/// frontier files, checkpoints, the listener of the metrics endpoint, epoll and
/// wakers of every shard, DNS sockets.
const RESERVED_FDS: u64 = 512;

/// Raises `RLIMIT_NOFILE` to its hard limit and lowers `concurrency_per_shard` so that
/// the connections of every shard (each slot may hold a connection and, at width,
/// an idle pooled one beside it: a quarter more is kept) and [`RESERVED_FDS`] fit.
/// DNS lookups in flight hold a socket each and are reserved for too. A lowered
/// setting is said on stderr, never silently.
pub fn fit_concurrency_to_open_files(c: &mut CrawlConfig) {
    let limit = match crate::sys::process::raise_open_files_limit(u64::MAX) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("trawl: warning: cannot read or raise the open files limit: {e}");
            return;
        }
    };
    let shards = c.shards.max(1) as u64;
    // Each DNS lookup on the network holds a socket too.
    let dns = c.fetcher.dns.max_in_flight as u64 * shards;
    let per_shard = limit.saturating_sub(RESERVED_FDS + dns) * 4 / 5 / shards;
    let fits = usize::try_from(per_shard.max(1)).unwrap_or(usize::MAX);
    if c.concurrency_per_shard > fits {
        eprintln!(
            "trawl: warning: --concurrency {} a shard needs more open files than the limit \
             ({limit}) allows; using {fits} a shard (raise `ulimit -n` for more)",
            c.concurrency_per_shard
        );
        c.concurrency_per_shard = fits;
    }
}
