//! Re-crawls in the core: the links of a page answered `304 Not Modified`, read back by
//! the driver from the previous crawl's `metadata` record (`recrawl::outlinks`), are
//! admitted like the links of a fetched page (presence bits, filters, routing to the
//! farm node that owns them), so the site's shape is kept without the body. A page request of a re-crawl carries the
//! previous capture's validators ([`condition`]).

use super::{Action, Core, CoreShared, Now};
use crate::fetch::FetchOutcome;
use crate::frontier::QueuedUrl;
use crate::http::RequestHead;
use crate::provenance::Hop;
use crate::recrawl::{judge, plan, Judgement, LastmodPolicy, Plan, Previous};

/// Adds `If-None-Match` / `If-Modified-Since` from the previous capture of `url` to a
/// page request (`recrawl::plan`); nothing when this is not a re-crawl or the URL is
/// new.
pub(super) fn condition(previous: Option<&Previous>, url: &str, head: &mut RequestHead) {
    let Some(previous) = previous else {
        return;
    };
    if let Plan::Fetch {
        if_none_match,
        if_modified_since,
    } = plan(previous.get(url).as_ref(), None, LastmodPolicy::Conditional)
    {
        head.if_none_match = if_none_match;
        head.if_modified_since = if_modified_since;
    }
}

/// Judges a page answer against the previous capture and counts it: `None` when this
/// is not a re-crawl or no response arrived. The verdict's annotation goes on the
/// crawl-log line; a revisit turns the capture into a `revisit` record.
///
/// A sitemap file read as one is judged (its line annotated, a 304 or the same
/// payload written as a revisit) but not counted: `stats.json`'s verdicts count pages,
/// so that they compare with a list of changed pages.
pub(super) fn judge_page(
    shared: &CoreShared,
    o: &FetchOutcome,
    item: &QueuedUrl,
) -> Option<Judgement> {
    let previous = shared.previous.as_ref()?;
    let status = o.status()?;
    if o.error.is_some() {
        return None;
    }
    let sitemap = o
        .head
        .as_ref()
        .is_some_and(|h| Core::is_sitemap_fetch(item, h, &o.body));
    let j = judge(previous.get(o.url.as_str()), status, o.payload.as_deref());
    if !sitemap {
        shared
            .counters
            .record_verdict(j.previous.as_ref(), j.verdict);
    }
    Some(j)
}

impl Core {
    /// Admits `links` (canonical URLs and hops) as found on `item`'s page; when `item`
    /// is a sitemap index answered 304, its child sitemaps get its grant first.
    pub(crate) fn on_previous_links(
        &mut self,
        item: &QueuedUrl,
        links: &[(String, Hop)],
        now: Now,
        out: &mut Vec<Action>,
    ) {
        let grant = self.grant_previous_children(item, links);
        if self.shared.farm_routes.is_none() {
            self.admit_links(item, links, now, out);
            return;
        }
        // Farm: the links of other nodes' hosts go to their owners, as a fetched
        // page's do; listed sitemap files carry the grant of the sitemap that lists
        // them.
        let (mut sitemaps, mut others): (Vec<_>, Vec<_>) = links
            .iter()
            .cloned()
            .partition(|(link, hop)| super::sitemaps::is_listed_sitemap_file(link, *hop));
        self.split_for_farm(&mut sitemaps, &item.url, &item.hops, &grant, out);
        self.split_for_farm(&mut others, &item.url, &item.hops, &[], out);
        sitemaps.append(&mut others);
        self.admit_links(item, &sitemaps, now, out);
    }
}
