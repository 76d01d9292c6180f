//! The embedding API's hooks: a [`Handler`] sees each response ([`Page`]), each
//! crawl-log decision, and each newly discovered link. A leaf, so that the crawl core
//! (which asks [`Handler::accept_link`] at admission) and the engine's driver (which
//! calls the others) both name it without naming each other.

use url::Url;

use crate::crawllog::LogRecord;
use crate::http::ResponseHead;

/// A fetched response, as a [`Handler`] sees it.
#[derive(Debug)]
pub struct Page<'a> {
    pub url: &'a Url,
    pub head: &'a ResponseHead,
    /// The body, content-decoded.
    pub body: &'a [u8],
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
}
