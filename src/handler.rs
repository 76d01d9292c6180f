//! The embedding API's hooks: a [`Handler`] sees each response ([`Page`]), each
//! crawl-log decision, and each newly discovered link. A leaf, so that the crawl core
//! (which asks [`Handler::accept_links`] at admission) and the engine's driver (which
//! calls the others) both name it without naming each other.

use std::net::IpAddr;
use std::time::SystemTime;

use url::Url;

use crate::crawllog::LogRecord;
use crate::http::ResponseHead;

/// A fetched response, as a [`Handler`] sees it.
#[derive(Debug)]
pub struct Page<'a> {
    pub url: &'a Url,
    pub head: &'a ResponseHead,
    /// The body, content-decoded (gzip, deflate, br), as the crawl decoded it.
    pub body: &'a [u8],
    /// The links found on the page (canonical URLs, the crawl's own extraction:
    /// `<a>`, `<area>`, embeds, a redirect's `Location`, a sitemap's `<loc>`s), before
    /// presence bits and filters; empty for a robots.txt.
    pub links: &'a [&'a str],
    /// When the response was recorded (the crawl log's `ts`).
    pub fetched_at: SystemTime,
    /// The server address the response came from, when known.
    pub ip: Option<IpAddr>,
}

/// Hooks for embedding trawl in a pipeline. Called from shard threads, so they must be
/// cheap and thread-safe; a slow hook slows the crawl.
pub trait Handler: Send + Sync {
    /// A response arrived (any status).
    fn on_response(&self, _page: &Page<'_>) {}
    /// A crawl-log line was decided (fetched, robots, filtered, failed...).
    fn on_outcome(&self, _record: &LogRecord) {}
    /// A newly discovered link passed the filters; return false to drop it. `from` is
    /// the page it was found on, or empty for a URL added while the crawl runs
    /// (`trawl add`, the control API, `CrawlHandle::add`), which passes this hook too.
    fn accept_link(&self, _from: &str, _link: &Url) -> bool {
        true
    }
    /// The batch form of [`Handler::accept_link`]: the new links of one page (or one
    /// batch of added URLs) that passed the filters, in one call; set `keep[i]` to
    /// false to drop `links[i]` (`keep` comes all true, as long as `links`). The
    /// default asks `accept_link` for each. An embedder whose hook has a fixed cost
    /// per call (a lock, a foreign interpreter's GIL) overrides this one.
    fn accept_links(&self, from: &str, links: &[Url], keep: &mut [bool]) {
        for (link, keep) in links.iter().zip(keep.iter_mut()) {
            *keep = self.accept_link(from, link);
        }
    }
    /// Whether the embedder's consumer is behind: while true, the shards start no new
    /// fetch (those in flight finish and are handed over as usual), as for a pause.
    /// Checked once per event-loop turn of each shard, so it must be cheap.
    fn is_backlogged(&self) -> bool {
        false
    }
}
