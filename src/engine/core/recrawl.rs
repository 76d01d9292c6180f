//! Re-crawls in the core: the links of a page answered `304 Not Modified`, read back by
//! the driver from the previous crawl's `metadata` record (`engine/recrawl.rs`), are
//! admitted like the links of a fetched page (presence bits, filters, routing), so the
//! site's shape is kept without the body. A page request of a re-crawl carries the
//! previous capture's validators ([`condition`]).

use super::{Action, Core, Now};
use crate::crawllog::Hop;
use crate::frontier::QueuedUrl;
use crate::http::RequestHead;
use crate::recrawl::{plan, LastmodPolicy, Plan, Previous};

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
        self.grant_previous_children(item, links);
        self.admit_links(item, links, now, out);
    }
}
