//! Sitemaps in the crawl core (issue 14): the `Sitemap:` lines of a host's robots.txt are
//! queued like links with hop `M`; a 2xx answer to a URL whose hop path ends in `M`
//! and whose body is XML or gzip is read as a sitemap (`crate::sitemap::parse`) instead
//! of HTML, and its entries become outlinks with hop `M` (an index's entries are
//! sitemaps again, one level deeper: the depth is the run of trailing `M`s less one).
//!
//! The sitemaps.org host rule (`crate::sitemap::admit`) is applied with the origin of
//! the URL the sitemap was found on (its robots.txt, or the index that listed it) as
//! the robots.txt permission: a sitemap named by host H's robots.txt may list any URL
//! of H. Caps, refusals and errors are crawl-log annotations on the sitemap's line:
//! `sitemap:KIND:N` (entries taken), `sitemap-cut:urls:CAP:DROPPED`,
//! `sitemap-cut:bytes:CAP`, `sitemap-refused:N`, `sitemap-skipped:N`,
//! `sitemap-error:WHY`. A sitemap file is fetched with its body caps raised to the
//! protocol's 50 MB ([`widen_limits`]); the parser's 50 MB cap applies after
//! decompression. A `….xml.gz` reached by a
//! sitemap hop passes the extension filter (`.gz` is on its list of binaries).

use std::sync::atomic::Ordering;
use std::time::Instant;

use url::Url;

use super::{body_of, Action, Core, Now};
use crate::crawllog::Hop;
use crate::frontier::QueuedUrl;
use crate::net::FetchOutcome;
use crate::sitemap::{self, Cut, Limits, SitemapError, SitemapKind};
use crate::url::Reject;

/// A gzipped sitemap (`….xml.gz`) reached through a sitemap hop is not the binary
/// download the extension filter keeps out (`.gz` is on its list): let it through.
/// Other refusals stand.
pub(super) fn exempt(reason: Reject, url: &Url, hops: &str) -> Result<(), Reject> {
    let gz_sitemap = url.path().to_ascii_lowercase().ends_with(".xml.gz");
    if reason == Reject::BlockedExtension && gz_sitemap && hops.ends_with(Hop::Manifest.code()) {
        Ok(())
    } else {
        Err(reason)
    }
}

/// The protocol's cap on a sitemap file, uncompressed (sitemaps.org: 50 MB,
/// 52,428,800 bytes); the parser enforces it after decompression.
const SITEMAP_MAX_BYTES: u64 = 50 * 1024 * 1024;

/// Whether a URL reached by a sitemap hop looks like a sitemap file (not a page a
/// sitemap lists, which also carries hop `M`): its path ends in `.xml`, `.xml.gz` or
/// `.gz`, or names a sitemap. Only these get the wider body caps of
/// [`widen_limits`], so a page listed in a sitemap keeps the page cap.
pub(super) fn may_be_sitemap(item: &QueuedUrl, url: &Url) -> bool {
    if !item.hops.ends_with(Hop::Manifest.code()) {
        return false;
    }
    let path = url.path().to_ascii_lowercase();
    path.ends_with(".xml") || path.ends_with(".gz") || path.contains("sitemap")
}

/// Raises a fetch's body caps to the sitemap protocol's 50 MB (on the wire and
/// decoded), where the page caps are lower: a sitemap of 50,000 long URLs is larger
/// than a page may be, and cutting it at the page cap would drop its tail.
pub(super) fn widen_limits(limits: &mut crate::net::FetchLimits) {
    let wire = &mut limits.response.max_body_bytes;
    *wire = (*wire).max(SITEMAP_MAX_BYTES);
    let decoded = &mut limits.decode.max_decoded_bytes;
    *decoded = (*decoded).max(SITEMAP_MAX_BYTES);
}

/// `--sitemap URL`: queue the operator's sitemaps before the seeds, each as a sitemap
/// fetch (hop `M`, no referrer: `sitemap_links` then trusts the sitemap's own origin).
///
/// # Errors
/// A frontier that cannot take the URL (its disk tier failed).
pub(crate) fn queue_operator_sitemaps(
    sitemaps: &[String],
    shared: &crate::engine::Shared,
    frontiers: &mut [crate::frontier::Frontier],
    now: Instant,
) -> Result<(), crate::engine::CrawlError> {
    for s in sitemaps {
        let Ok(url) = crate::url::canonicalize_absolute(s) else {
            tracing::warn!(sitemap = %s, "--sitemap is not a URL: ignored");
            continue;
        };
        // Farm: like a seed, each node keeps the sitemaps of its own partitions.
        if shared.farm.as_ref().is_some_and(|f| !f.owns(url.as_str())) {
            continue;
        }
        if shared.seen.test_and_set(url.as_str().as_bytes()) {
            continue;
        }
        let Some(key) = super::host_key(&url) else {
            continue;
        };
        let item = QueuedUrl {
            url: url.into(),
            via: None,
            hops: Hop::Manifest.code().to_string(),
            attempts: 0,
        };
        if let Some(f) = frontiers.get_mut(super::shard_of(&key, frontiers.len())) {
            f.push(&key, item, now)?;
            shared.outstanding.fetch_add(1, Ordering::AcqRel);
            shared.discovered.fetch_add(1, Ordering::AcqRel);
        }
    }
    Ok(())
}

impl Core {
    /// Queue the `Sitemap:` lines of a robots.txt just fetched for `host` (a 200
    /// answer only: other statuses carry no rules).
    pub(super) fn queue_robots_sitemaps(
        &mut self,
        host: &str,
        o: &FetchOutcome,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        let ok = o.error.is_none() && o.head.as_ref().is_some_and(|h| h.status == 200);
        if !ok {
            return;
        }
        let Ok(robots) = Url::parse(&format!("{host}/robots.txt")) else {
            return;
        };
        let txt = crate::robots::RobotsTxt::parse(body_of(o), self.shared.config.robots.mode);
        let mut listed: Vec<(String, Hop)> = Vec::new();
        for line in txt.sitemaps() {
            match crate::url::canonicalize_absolute(line.url.trim()) {
                Ok(url) => listed.push((url.into(), Hop::Manifest)),
                Err(_) => {
                    tracing::debug!(host, line = %line.url, "robots.txt Sitemap: line is not a URL");
                }
            }
        }
        // Farm (issue 13): a sitemap on another node's host goes to that node.
        if let Some(farm) = &self.shared.farm {
            farm.route(&mut listed, robots.as_str(), "");
        }
        for (url, _) in listed {
            let Ok(url) = Url::parse(&url) else {
                continue;
            };
            if self.shared.seen.test_and_set(url.as_str().as_bytes()) {
                continue;
            }
            self.admit(
                url,
                robots.as_str(),
                Hop::Manifest.code().to_string(),
                now,
                out,
            );
        }
    }

    /// Whether a 2xx answer to `item` is a sitemap to read (hop `M`, XML or gzip).
    pub(super) fn is_sitemap_fetch(
        item: &QueuedUrl,
        head: &crate::http::ResponseHead,
        body: &[u8],
    ) -> bool {
        if !item.hops.ends_with(Hop::Manifest.code()) {
            return false;
        }
        let xml_type = head
            .header("content-type")
            .and_then(|v| std::str::from_utf8(v).ok())
            .is_some_and(|t| t.to_ascii_lowercase().contains("xml"));
        let start = body
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .and_then(|i| body.get(i..))
            .unwrap_or_default();
        xml_type || body.starts_with(&[0x1F, 0x8B]) || start.starts_with(b"<?xml")
    }

    /// Read a sitemap answer: its admitted entries become outlinks with hop `M`.
    pub(super) fn sitemap_links(
        &mut self,
        o: &FetchOutcome,
        item: &QueuedUrl,
        outlinks: &mut Vec<(String, Hop)>,
        annotations: &mut Vec<String>,
    ) {
        let run = item
            .hops
            .chars()
            .rev()
            .take_while(|&c| c == Hop::Manifest.code())
            .count();
        let depth = u8::try_from(run.saturating_sub(1)).unwrap_or(u8::MAX);
        // The referrer's origin (a robots.txt, or the index above); with none, an
        // operator's `--sitemap`: its own origin.
        let permitted: Vec<String> = match item.via.as_deref() {
            Some(v) => Url::parse(v)
                .map(|v| vec![v.origin().ascii_serialization()])
                .unwrap_or_default(),
            None => vec![o.url.origin().ascii_serialization()],
        };
        let map = match sitemap::parse(body_of(o), depth, &Limits::default()) {
            Ok(map) => map,
            Err(e) => {
                let why = match e {
                    SitemapError::NotASitemap => "not-a-sitemap".to_owned(),
                    SitemapError::Doctype => "doctype".to_owned(),
                    SitemapError::TooDeep { depth, .. } => format!("too-deep:{depth}"),
                    SitemapError::Gzip => "gzip".to_owned(),
                    SitemapError::Malformed { offset } => format!("malformed:{offset}"),
                };
                annotations.push(format!("sitemap-error:{why}"));
                self.shared.sitemaps[2].fetch_add(1, Ordering::AcqRel);
                return;
            }
        };
        self.shared.sitemaps[0].fetch_add(1, Ordering::AcqRel);
        if !map.cuts.is_empty() {
            self.shared.sitemaps[1].fetch_add(1, Ordering::AcqRel);
        }
        for cut in &map.cuts {
            annotations.push(match cut {
                Cut::Urls { cap, dropped } => format!("sitemap-cut:urls:{cap}:{dropped}"),
                Cut::Bytes { cap_bytes } => format!("sitemap-cut:bytes:{cap_bytes}"),
            });
        }
        let skipped = map.skipped.no_loc + map.skipped.too_long + map.skipped.bad_lastmod;
        if skipped > 0 {
            annotations.push(format!("sitemap-skipped:{skipped}"));
        }
        let (mut taken, mut refused) = (0u64, 0u64);
        for entry in map.entries {
            let listed = match Url::parse(&entry.loc) {
                Ok(u) if sitemap::admit(&o.url, &u, &permitted).is_ok() => u,
                _ => {
                    refused += 1;
                    continue;
                }
            };
            match crate::url::canonicalize_absolute(listed.as_str()) {
                Ok(url) => {
                    outlinks.push((url.into(), Hop::Manifest));
                    taken += 1;
                }
                Err(_) => refused += 1,
            }
        }
        let kind = match map.kind {
            SitemapKind::UrlSet => "urlset",
            SitemapKind::Index => "index",
        };
        annotations.push(format!("sitemap:{kind}:{taken}"));
        if refused > 0 {
            annotations.push(format!("sitemap-refused:{refused}"));
            self.shared.sitemaps[3].fetch_add(refused, Ordering::AcqRel);
        }
    }
}
