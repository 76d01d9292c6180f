//! The previous crawl at start-up (`--recrawl PREV_OUT`): its index read into
//! its table ([`load`]), recorded for the next re-crawl ([`record_previous`]), the
//! scope widened to its hosts ([`add_scope`]), its URLs queued with their hop paths
//! ([`queue_previous`]), and this crawl's own index opened ([`open_index`]). The rest of
//! a re-crawl lives in its home, `crate::recrawl` (the index, the plan and judgement,
//! the previous links read back), and in the core's decisions (`core/recrawl.rs`).

use std::path::Path;
use std::time::Instant;

use url::Url;

use crate::frontier::{Frontier, QueuedUrl};
use crate::provenance::Hop;
use crate::recrawl::{IndexEntry, IndexError, IndexWriter, Previous};
use crate::routing::{host_key, shard_of};

use super::super::core::Counter;
use crate::engine::{CrawlConfig, CrawlError, Shared};

/// The previous crawl's index, when this is a re-crawl. A damaged or missing index is
/// a configuration error (exit 2), never half-used.
pub(super) fn load(config: &CrawlConfig) -> Result<Option<Previous>, CrawlError> {
    let Some(prev_out) = &config.recrawl else {
        return Ok(None);
    };
    let previous = Previous::load(prev_out).map_err(|e| index_error(prev_out, &e))?;
    tracing::info!(urls = previous.len(), table_bytes = previous.table_bytes(),
        path = %previous.path.display(), "re-crawl: previous captures read");
    Ok(Some(previous))
}

fn index_error(prev_out: &Path, e: &IndexError) -> CrawlError {
    CrawlError::Config(format!(
        "--recrawl {}: cannot use its re-crawl index: {e}{}",
        prev_out.display(),
        std::error::Error::source(e).map_or(String::new(), |s| format!(": {s}"))
    ))
}

/// Records which crawl this one re-crawls (`OUT/recrawl.prev`, its absolute path), so
/// that a later re-crawl of this one can follow entries kept without a fetch back to
/// the crawl whose WARC files hold them (`Previous::warc_dirs`).
pub(super) fn record_previous(config: &CrawlConfig) -> Result<(), CrawlError> {
    let Some(prev_out) = &config.recrawl else {
        return Ok(());
    };
    crate::recrawl::previous::write_previous_out(&config.out_dir, prev_out)
        .map_err(|e| CrawlError::Output(format!("{e}")))
}

/// Widens the scope to the previous crawl's hosts, as its seeds did: one URL per host
/// joins `scope` (the URLs the scope is built from). They are not queued as seeds,
/// which would give one previous URL per host an empty hop path and no referrer:
/// [`queue_previous`] queues every previous URL with its own.
pub(super) fn add_scope(previous: Option<&mut Previous>, scope: &mut Vec<Url>) {
    if let Some(previous) = previous {
        scope.extend(previous.take_host_urls());
    }
}

/// The hop path a previous URL is queued with: the one it had (so `--max-hops` and
/// sitemap hops behave as in the first crawl: a URL whose path ends in `S` is read as
/// a sitemap when its answer is one). A version-1 index kept
/// none: a URL named like a sitemap file (`….xml`, `….xml.gz`) then gets `S` (as
/// `--sitemap`), any other an empty path (a seed).
fn hops_of(entry: &IndexEntry, url: &Url) -> String {
    if let Some(hops) = &entry.hops {
        return hops.clone();
    }
    let path = url.path().to_ascii_lowercase();
    if path.ends_with(".xml") || path.ends_with(".xml.gz") {
        Hop::Manifest.code().to_string()
    } else {
        String::new()
    }
}

/// Queues the URLs the previous crawl fetched (a fresh crawl, after its own seeds: the
/// presence bits drop repeats), streamed from its index in the order they were
/// fetched, each with its hop path ([`hops_of`]) and its referrer (none in a version-1
/// index): its crawl-log line names the same referrer as in the previous crawl, and a
/// sitemap a robots.txt named starts with that robots.txt's permission again
/// (`core/sitemaps.rs`, `Core::permission` takes the referrer's origin).
///
/// # Errors
/// An index that changed since it was loaded and no longer reads, or a frontier that
/// cannot take a URL.
pub(super) fn queue_previous(
    shared: &Shared,
    frontiers: &mut [Frontier],
) -> Result<(), CrawlError> {
    let Some(previous) = &shared.core.previous else {
        return Ok(());
    };
    let prev_out = previous.path.parent().unwrap_or(Path::new("."));
    let now = Instant::now();
    let n = frontiers.len();
    let (mut queued, mut repeats) = (0u64, 0u64);
    for entry in previous
        .latest_entries()
        .map_err(|e| index_error(prev_out, &e))?
    {
        let entry = entry.map_err(|e| index_error(prev_out, &e))?;
        let Ok(url) = Url::parse(&entry.url) else {
            continue;
        };
        // Farm: every node reads the same previous crawl and keeps its own.
        if shared
            .farm_link
            .as_ref()
            .is_some_and(|f| !f.owns(url.as_str()))
        {
            continue;
        }
        if shared
            .core
            .memory
            .seen
            .test_and_set(url.as_str().as_bytes())
        {
            repeats += 1;
            continue;
        }
        let Some(key) = host_key(&url) else {
            continue;
        };
        let item = QueuedUrl {
            hops: hops_of(&entry, &url),
            url: entry.url,
            via: entry.via,
            attempts: 0,
        };
        if let Some(f) = frontiers.get_mut(shard_of(&key, n)) {
            f.push(&key, item, now)?;
            shared.core.outstanding.add(1);
            shared.core.counters.bump(Counter::Discovered);
            queued += 1;
        }
    }
    tracing::info!(
        queued,
        repeats,
        "re-crawl: previous URLs queued with their hop paths and referrers"
    );
    Ok(())
}

/// This crawl's index (`OUT/recrawl.idx`), written by the output thread when WARC
/// output is on (an entry points at its WARC record; without WARC there is nothing to
/// refer back to).
///
/// A resume cuts it back to the checkpoint's length (`resumed`: the checkpoint's
/// positions), like the WARC files and the crawl log.
pub(super) fn open_index(
    config: &CrawlConfig,
    resumed: Option<&crate::checkpoint::Positions>,
) -> Result<Option<IndexWriter>, CrawlError> {
    if !config.warc {
        return Ok(None);
    }
    crate::recrawl::previous::open_index(
        &config.out_dir,
        resumed.is_some(),
        resumed.and_then(|p| p.recrawl_index_bytes),
    )
    .map(Some)
    .map_err(|e| CrawlError::Output(format!("{e}")))
}
