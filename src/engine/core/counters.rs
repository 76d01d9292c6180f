//! The crawl's counters, shared by every shard's core and read by the engine: one
//! lock-free array indexed by [`Counter`], and the count of URLs still to finish
//! ([`Outstanding`]). Shards bump them; the engine reads them for `stats.json`, the
//! metrics and the checkpoint's counters, and a resume restores them.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::recrawl::{IndexEntry, RecrawlCounters, RecrawlStats, Verdict};

/// One of the crawl's counters. The names follow the `stats.json` fields they feed
/// (`engine/observe/stats.rs`); each is an event count that only grows, but for
/// `PagesStarted`, which a fetch handed back (a retry) takes back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Counter {
    /// Pages fetched (an answer came, whatever its status).
    Pages,
    /// Page fetches started: what `--max-pages` counts.
    PagesStarted,
    /// Bytes read off the wire: what `--max-bytes` counts.
    Bytes,
    /// URLs admitted to the frontier.
    Discovered,
    /// Pages whose content fingerprint was seen before.
    Duplicates,
    /// Pages a link-extraction cap cut (see `Stats`).
    PagesLinksTruncated,
    PagesScanTruncated,
    PagesLongAttributes,
    /// robots.txt bodies a parse cap cut (see `Stats`).
    RobotsTruncated,
    RobotsLongLines,
    /// Sitemap files read, cut by a cap, refused whole; entries the host rule refused
    /// (`sitemaps.rs`).
    SitemapsRead,
    SitemapsCut,
    SitemapsFailed,
    SitemapUrlsRefused,
    /// Hosts parked after consecutive failures.
    HostsParked,
    /// Hosts discovered (each host's first URL marks it in the presence bits); not
    /// carried across a resume.
    HostsKnown,
    /// Hosts given up (robots.txt unreachable through its retries, name dead, refused
    /// address, page budget spent): events, a host given up twice counts twice.
    HostsRetired,
    /// URLs refused when admitted because their host's `--max-pages-per-host` was
    /// spent (logged `budget:pages-per-host`, never queued).
    UrlsRefusedBudget,
    /// Re-crawl URLs skipped on their sitemap `<lastmod>` since this run started
    /// (`stats.json` `recrawl.skipped`, with the verdicts' count; see
    /// [`CrawlCounters::recrawl`]).
    LastmodSkipped,
}

impl Counter {
    /// How many counters there are.
    const COUNT: usize = Counter::LastmodSkipped as usize + 1;
}

/// The crawl's counters ([`Counter`]) and the re-crawl verdicts, lock-free. See the
/// module docs.
#[derive(Debug, Default)]
pub(crate) struct CrawlCounters {
    counts: [AtomicU64; Counter::COUNT],
    /// Re-crawl verdicts counted so far (`recrawl.rs`).
    recrawl: RecrawlCounters,
}

impl CrawlCounters {
    /// Adds one to `c`.
    pub fn bump(&self, c: Counter) {
        self.add(c, 1);
    }

    /// Adds `n` to `c`.
    pub fn add(&self, c: Counter, n: u64) {
        self.slot(c).fetch_add(n, Ordering::AcqRel);
    }

    /// Takes `n` back from `c` (a page fetch handed back before it was made).
    pub fn take_back(&self, c: Counter, n: u64) {
        self.slot(c).fetch_sub(n, Ordering::AcqRel);
    }

    /// The value of `c` now.
    pub fn get(&self, c: Counter) -> u64 {
        self.slot(c).load(Ordering::Acquire)
    }

    /// Sets `c` to a checkpoint's value (a resume).
    pub fn restore(&self, c: Counter, value: u64) {
        self.slot(c).store(value, Ordering::Release);
    }

    /// Counts one re-crawl verdict (see [`RecrawlCounters::record`]).
    pub fn record_verdict(&self, previous: Option<&IndexEntry>, verdict: Verdict) {
        self.recrawl.record(previous, verdict);
    }

    /// The re-crawl counts now: the verdicts, and the URLs skipped on their sitemap
    /// `<lastmod>` in `skipped`.
    pub fn recrawl(&self) -> RecrawlStats {
        let mut r = self.recrawl.snapshot();
        r.skipped += self.get(Counter::LastmodSkipped);
        r
    }

    /// Sets the re-crawl counts to a checkpoint's (a resume).
    pub fn restore_recrawl(&self, r: &RecrawlStats) {
        self.recrawl.restore(r);
    }

    fn slot(&self, c: Counter) -> &AtomicU64 {
        // In bounds: `COUNT` is one past the last discriminant.
        #[allow(clippy::indexing_slicing)]
        &self.counts[c as usize]
    }
}

/// URLs admitted and not yet finished (queued, in a channel, waiting, in flight, on
/// their way to or from the farm's bus): the crawl has ended when it is zero and no
/// fetch is in flight. Unlike a [`Counter`] it goes down as well as up.
#[derive(Debug, Default)]
pub(crate) struct Outstanding(AtomicU64);

impl Outstanding {
    /// `n` more URLs to finish.
    pub fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::AcqRel);
    }

    /// `n` URLs finished.
    pub fn sub(&self, n: u64) {
        self.0.fetch_sub(n, Ordering::AcqRel);
    }

    /// URLs to finish now.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }

    /// The atomic itself, for the farm's bus, which counts the links it receives
    /// through `farm::CrawlGauges::outstanding`.
    pub fn atomic(&self) -> &AtomicU64 {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_counter_has_its_own_slot() {
        let c = CrawlCounters::default();
        c.bump(Counter::Pages);
        c.add(Counter::LastmodSkipped, 3);
        c.add(Counter::PagesStarted, 2);
        c.take_back(Counter::PagesStarted, 1);
        assert_eq!(c.get(Counter::Pages), 1);
        assert_eq!(c.get(Counter::PagesStarted), 1);
        assert_eq!(c.get(Counter::Bytes), 0);
        assert_eq!(c.recrawl().skipped, 3);
        c.restore(Counter::Pages, 7);
        assert_eq!(c.get(Counter::Pages), 7);
    }
}
