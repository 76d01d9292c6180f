//! The engine's side of a re-crawl (`--recrawl PREV_OUT`, issue 14): each hook is one
//! call from the place it serves, so the files shared with other work keep small
//! hunks. Start-up reads the previous index and adds its URLs to the seeds
//! ([`load`], [`add_seeds`]); the core's request building adds the validators
//! ([`condition`]); the shard driver judges each page answer ([`judge_page`]) and
//! hands the output thread the facts of this crawl's own index entry
//! ([`index_facts`]); the output thread appends it (`output.rs`). The decisions are
//! `crate::recrawl`'s pure functions.

use std::path::Path;

use url::Url;

use crate::crawllog::Hop;
use crate::http::RequestHead;
use crate::net::FetchOutcome;
use crate::recrawl::{
    judge, plan, IndexFacts, IndexWriter, Judgement, LastmodPolicy, Plan, Previous, Verdict,
};
use crate::warc::WarcDate;

use super::{CrawlConfig, CrawlError, Shared};

/// The previous crawl's index, when this is a re-crawl. A damaged or missing index is
/// a configuration error (exit 2), never half-used.
pub(super) fn load(config: &CrawlConfig) -> Result<Option<Previous>, CrawlError> {
    let Some(prev_out) = &config.recrawl else {
        return Ok(None);
    };
    let previous = Previous::load(prev_out).map_err(|e| {
        CrawlError::Config(format!(
            "--recrawl {}: cannot use its re-crawl index: {e}{}",
            prev_out.display(),
            std::error::Error::source(&e).map_or(String::new(), |s| format!(": {s}"))
        ))
    })?;
    tracing::info!(urls = previous.len(), path = %previous.path.display(), "re-crawl: previous captures read");
    Ok(Some(previous))
}

/// Adds the URLs the previous crawl fetched to the seeds of a fresh crawl (after the
/// given ones; the presence bits drop repeats). They also widen the scope to the
/// previous crawl's hosts, as its seeds did. Previous URLs named like sitemap files
/// (`….xml`, `….xml.gz`) are queued as sitemaps instead (hop `M`, as `--sitemap`), so
/// a changed sitemap is read as one and leads to its new pages; the index keeps no
/// hop path, and one that is not a sitemap is a page like any other
/// (`core/sitemaps.rs`).
pub(super) fn add_seeds(
    previous: Option<&Previous>,
    seeds: &mut Vec<Url>,
    sitemaps: &mut Vec<String>,
) {
    let Some(previous) = previous else {
        return;
    };
    seeds.reserve(previous.len());
    for url in previous
        .urls()
        .into_iter()
        .filter_map(|u| Url::parse(u).ok())
    {
        let path = url.path().to_ascii_lowercase();
        if path.ends_with(".xml") || path.ends_with(".xml.gz") {
            sitemaps.push(url.into());
        } else {
            seeds.push(url);
        }
    }
}

/// This crawl's index (`OUT/recrawl.idx`), written by the output thread when WARC
/// output is on (an entry points at its WARC record; without WARC there is nothing to
/// refer back to).
pub(super) fn open_index(
    config: &CrawlConfig,
    resumed: bool,
) -> Result<Option<IndexWriter>, CrawlError> {
    if !config.warc {
        return Ok(None);
    }
    open_index_in(&config.out_dir, resumed).map(Some)
}

fn open_index_in(out: &Path, resumed: bool) -> Result<IndexWriter, CrawlError> {
    crate::recrawl::previous::open_index(out, resumed)
        .map_err(|e| CrawlError::Output(format!("{e}")))
}

/// Adds `If-None-Match` / `If-Modified-Since` from the previous capture of `url` to a
/// page request (`recrawl::plan`); nothing when this is not a re-crawl or the URL is
/// new.
pub(crate) fn condition(shared: &Shared, url: &str, head: &mut RequestHead) {
    let Some(previous) = &shared.previous else {
        return;
    };
    if let Plan::Fetch {
        if_none_match,
        if_modified_since,
    } = plan(previous.get(url), None, LastmodPolicy::Conditional)
    {
        head.if_none_match = if_none_match;
        head.if_modified_since = if_modified_since;
    }
}

/// Judges a page answer against the previous capture and counts it: `None` when this
/// is not a re-crawl or no response arrived. The verdict's annotation goes on the
/// crawl-log line; a revisit turns the capture into a `revisit` record.
pub(crate) fn judge_page(shared: &Shared, o: &FetchOutcome) -> Option<Judgement> {
    let previous = shared.previous.as_ref()?;
    let status = o.status()?;
    if o.error.is_some() {
        return None;
    }
    let prev = previous.get(o.url.as_str());
    let j = judge(prev, status, o.payload.as_deref());
    shared.recrawl.record(prev, j.verdict);
    Some(j)
}

/// The facts of this crawl's index entry for a page answer (see
/// [`IndexFacts::of`]); `None` without a response head or after a failure.
pub(crate) fn index_facts(
    shared: &Shared,
    o: &FetchOutcome,
    date: WarcDate,
    judgement: Option<&Judgement>,
) -> Option<IndexFacts> {
    let head = o.head.as_ref()?;
    if o.error.is_some() {
        return None;
    }
    let prev = shared.previous.as_ref().and_then(|p| p.get(o.url.as_str()));
    let payload_bytes = o.payload.as_ref().map_or(0, |p| p.len() as u64);
    Some(IndexFacts::of(
        o.url.as_str(),
        head,
        date,
        payload_bytes,
        prev,
        judgement,
    ))
}

/// The links of a page answered `304 Not Modified`, read from the previous crawl's
/// `metadata` record of its capture (`recrawl::outlinks`), at most
/// `max_links_per_page`. Annotates the line: `previous-links:N`, plus
/// `links-truncated:M` past the cap, or `previous-links-error` when they could not be
/// read (the page's links are then only those the seeds give).
pub(crate) fn previous_links(
    shared: &Shared,
    o: &FetchOutcome,
    judgement: &Judgement,
    annotations: &mut Vec<String>,
) -> Option<Vec<(String, Hop)>> {
    if judgement.verdict != Verdict::NotModified {
        return None;
    }
    let previous = shared.previous.as_ref()?;
    let entry = previous.get(o.url.as_str())?;
    match crate::recrawl::outlinks::read_outlinks(
        &previous.warc_dir(),
        entry,
        shared.config.max_links_per_page,
    ) {
        Ok((links, more)) => {
            annotations.push(format!("previous-links:{}", links.len()));
            if more > 0 {
                annotations.push(format!("links-truncated:{more}"));
            }
            Some(links)
        }
        Err(e) => {
            tracing::debug!(url = %o.url, error = %e, "re-crawl: previous outlinks not read");
            annotations.push("previous-links-error".to_owned());
            None
        }
    }
}

/// The links of a URL skipped on its sitemap `<lastmod>` (`--sitemap-lastmod skip`),
/// read from the previous capture `previous` like those of a `304`
/// ([`previous_links`]): annotated `previous-links:N` (and `links-truncated:M`), or
/// `previous-links-error` and none. Its own index entry is not carried forward:
/// `output.rs` appends entries only with a written capture.
pub(crate) fn skipped_links(
    shared: &Shared,
    previous: &crate::recrawl::IndexEntry,
    annotations: &mut Vec<String>,
) -> Vec<(String, Hop)> {
    let Some(p) = shared.previous.as_ref() else {
        return Vec::new();
    };
    match crate::recrawl::outlinks::read_outlinks(
        &p.warc_dir(),
        previous,
        shared.config.max_links_per_page,
    ) {
        Ok((links, more)) => {
            annotations.push(format!("previous-links:{}", links.len()));
            if more > 0 {
                annotations.push(format!("links-truncated:{more}"));
            }
            links
        }
        Err(e) => {
            tracing::debug!(url = %previous.url, error = %e, "re-crawl: previous outlinks not read");
            annotations.push("previous-links-error".to_owned());
            Vec::new()
        }
    }
}
