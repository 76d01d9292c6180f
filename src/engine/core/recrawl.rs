//! Re-crawls in the core: the links of a page answered `304 Not Modified`, read back by
//! the driver from the previous crawl's `metadata` record (`engine/recrawl.rs`), are
//! admitted like the links of a fetched page (presence bits, filters, routing), so the
//! site's shape is kept without the body.

use super::{Action, Core, Now};
use crate::crawllog::Hop;
use crate::frontier::QueuedUrl;

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
