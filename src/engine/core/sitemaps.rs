//! Sitemaps in the crawl core (`docs/sitemaps.md`, "In the crawl"): the `Sitemap:`
//! lines of a host's robots.txt are queued like links with hop `S`; a 2xx answer to a
//! URL whose hop path ends in `S` and whose body is XML or gzip is read as a sitemap
//! (`crate::sitemap::parse`) instead of HTML, and its entries become outlinks with hop
//! `S` (an index's entries are sitemaps again, one level deeper: the depth is the run
//! of trailing `S`s less one).
//!
//! The sitemaps.org host rule (`crate::sitemap::admit`) is applied with the sitemap's
//! grant as the robots.txt permission ([`SitemapMemory`], shared by the shards): the
//! origins whose robots.txt named it or an index above it (an operator's `--sitemap`
//! is granted its own origin). A sitemap named by host H's robots.txt, or listed by an
//! index H's robots.txt named, may list any URL of H. A grant that arrives after the
//! sitemap was read (a second robots.txt names it, a second index lists it) queues it
//! once more, so the wider permission is used. In a re-crawl with `--sitemap-lastmod
//! skip` the `<lastmod>` of each listed URL is kept, and the schedule skips a URL it
//! dates not newer than the previous fetch ([`lastmod_turn`]).
//!
//! Caps, refusals and errors are crawl-log annotations on the sitemap's line:
//! `sitemap:KIND:N` (entries taken), `sitemap-cut:urls:CAP:DROPPED`,
//! `sitemap-cut:bytes:CAP`, `sitemap-refused:N`, `sitemap-skipped:N`,
//! `sitemap-error:WHY`. A sitemap file is fetched with its body caps raised to the
//! protocol's 50 MB ([`widen_limits`]); the parser's 50 MB cap applies after
//! decompression. A `….xml.gz` reached by a
//! sitemap hop passes the extension filter (`.gz` is on its list of binaries).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use url::Url;

use super::Counter;
use super::{body_of, Action, Core, CoreShared, Note, Now};
use crate::fetch::FetchOutcome;
use crate::frontier::QueuedUrl;
use crate::provenance::Hop;
use crate::recrawl::{IndexEntry, LastmodPolicy};
use crate::sitemap::{
    self, Cut, Granted, Grants, LastMod, LastModTable, Limits, SitemapError, SitemapKind,
};
use crate::url::Reject;

/// A gzipped sitemap (`….xml.gz`) reached through a sitemap hop is not the binary
/// download the extension filter keeps out (`.gz` is on its list): let it through.
/// Other refusals stand.
pub(super) fn exempt(reason: Reject, path: &str, hops: &str) -> Result<(), Reject> {
    let gz_sitemap = path.to_ascii_lowercase().ends_with(".xml.gz");
    if reason == Reject::BlockedExtension && gz_sitemap && hops.ends_with(Hop::Manifest.code()) {
        Ok(())
    } else {
        Err(reason)
    }
}

/// A hop path with its trailing redirects dropped: a sitemap URL that redirects is
/// still a sitemap.
fn sitemap_hops(hops: &str) -> &str {
    hops.trim_end_matches(Hop::Redirect.code())
}

/// The protocol's cap on a sitemap file, uncompressed (sitemaps.org: 50 MB,
/// 52,428,800 bytes); the parser enforces it after decompression.
const SITEMAP_MAX_BYTES: u64 = 50 * 1024 * 1024;

/// Whether a URL reached by a sitemap hop looks like a sitemap file (not a page a
/// sitemap lists, which also carries hop `S`): its path ends in `.xml`, `.xml.gz` or
/// `.gz`, or names a sitemap. Only these get the wider body caps of
/// [`widen_limits`], so a page listed in a sitemap keeps the page cap.
pub(super) fn may_be_sitemap(item: &QueuedUrl, url: &Url) -> bool {
    if !sitemap_hops(&item.hops).ends_with(Hop::Manifest.code()) {
        return false;
    }
    let path = url.path().to_ascii_lowercase();
    sitemap_file_path(&path)
        // A text sitemap robots.txt or `--sitemap` named (hop path `S`).
        || (path.ends_with(".txt") && sitemap_hops(&item.hops).len() == 1)
}

/// Whether a (lowercase) path names a sitemap file: `.xml`, `.gz`, or `sitemap` in it.
/// Whether a link read back from a sitemap's previous capture names a sitemap file:
/// listed by a sitemap (hop `S`) at a path that looks like one.
pub(super) fn is_listed_sitemap_file(link: &str, hop: Hop) -> bool {
    hop == Hop::Manifest
        && Url::parse(link).is_ok_and(|u| sitemap_file_path(&u.path().to_ascii_lowercase()))
}

fn sitemap_file_path(path: &str) -> bool {
    path.ends_with(".xml") || path.ends_with(".gz") || path.contains("sitemap")
}

/// Raises a fetch's body caps to the sitemap protocol's 50 MB (on the wire and
/// decoded), where the page caps are lower: a sitemap of 50,000 long URLs is larger
/// than a page may be, and cutting it at the page cap would drop its tail.
pub(super) fn widen_limits(limits: &mut crate::fetch::FetchLimits) {
    let wire = &mut limits.response.max_body_bytes;
    *wire = (*wire).max(SITEMAP_MAX_BYTES);
    let decoded = &mut limits.decode.max_decoded_bytes;
    *decoded = (*decoded).max(SITEMAP_MAX_BYTES);
}

/// What the crawl remembers of sitemaps, for all shards (a chain robots.txt → index →
/// sitemap → page crosses hosts, hence shards): each sitemap's robots.txt grant
/// ([`Grants`]) and, in a re-crawl with `--sitemap-lastmod skip`, each listed URL's
/// `<lastmod>` ([`LastModTable`]). Both are capped; a grant or date the cap keeps out is
/// counted (`stats.json` `sitemap_grants_dropped`, `sitemap_lastmods_dropped`) and
/// said once on stderr. Locked briefly per sitemap read or listed URL, never per page
/// link.
///
/// Not in the checkpoint: after a resume both start empty; the grants of the
/// robots.txt files the checkpoint's robots cache holds are made again ([`regrant`])
/// and a sitemap without one takes its index's ([`Core::permission`]); the dates are
/// gone, so URLs whose sitemap was read before the checkpoint are asked for
/// conditionally rather than skipped.
#[derive(Debug, Default)]
pub(crate) struct SitemapMemory {
    grants: Mutex<Grants>,
    lastmods: Mutex<LastModTable>,
    grants_warned: AtomicBool,
    lastmods_warned: AtomicBool,
    /// Warnings said where no action buffer is at hand (a cap reached under a shared
    /// lock, an operator's sitemap at start-up): the next scheduling turn of any
    /// shard's core takes them out as [`Action::Note`]s.
    notes: Mutex<Vec<String>>,
}

impl SitemapMemory {
    /// Adds `origins` to `sitemap`'s grant.
    pub(super) fn grant(&self, sitemap: &str, origins: &[String]) -> Granted {
        let granted = match self.grants.lock() {
            Ok(mut g) => g.grant(sitemap, origins),
            Err(_) => Granted::Full,
        };
        if granted == Granted::Full && !self.grants_warned.swap(true, Ordering::AcqRel) {
            self.note(format!(
                "sitemap grants full at {sitemap} ({} sitemaps, {} origins each): further \
                 robots.txt permissions are not recorded (counted in stats.json \
                 sitemap_grants_dropped)",
                Grants::DEFAULT_MAX_SITEMAPS,
                Grants::DEFAULT_MAX_ORIGINS
            ));
        }
        granted
    }

    /// Keeps a warning for the next scheduling turn (see `notes`).
    fn note(&self, text: String) {
        if let Ok(mut notes) = self.notes.lock() {
            notes.push(text);
        }
    }

    /// The warnings kept since the last call, as actions.
    pub(super) fn take_notes(&self, out: &mut Vec<Action>) {
        let Ok(mut notes) = self.notes.lock() else {
            return;
        };
        out.extend(notes.drain(..).map(Note::warn));
    }

    /// `sitemap`'s grant, marked read; `None` when none is known.
    pub(super) fn read(&self, sitemap: &str) -> Option<Vec<String>> {
        self.grants.lock().ok()?.read(sitemap)
    }

    /// `sitemap`'s grant, not marked read.
    pub(super) fn origins(&self, sitemap: &str) -> Option<Vec<String>> {
        self.grants.lock().ok()?.origins(sitemap)
    }

    /// Records `lastmod` for `url`; false when the cap kept it out.
    fn record_lastmod(&self, url: &str, lastmod: LastMod) -> bool {
        let kept = self
            .lastmods
            .lock()
            .is_ok_and(|mut m| m.record(url, lastmod));
        if !kept && !self.lastmods_warned.swap(true, Ordering::AcqRel) {
            self.note(format!(
                "sitemap lastmod dates full at {url} ({} URLs): further URLs are fetched \
                 conditionally, not skipped (counted in stats.json sitemap_lastmods_dropped)",
                LastModTable::DEFAULT_MAX_URLS
            ));
        }
        kept
    }

    /// The `<lastmod>` recorded for `url`.
    #[cfg(test)]
    pub(super) fn lastmod(&self, url: &str) -> Option<LastMod> {
        self.lastmods.lock().ok()?.get(url)
    }

    /// Grants and dates the caps kept out, for `stats.json`.
    pub(crate) fn dropped(&self) -> (u64, u64) {
        let g = self.grants.lock().map_or(0, |g| g.dropped());
        let l = self.lastmods.lock().map_or(0, |l| l.dropped());
        (g, l)
    }
}

/// A sitemap to read again (its host key and queued form), found on `via`.
fn reread_item(url: &Url, via: &str, hops: String) -> Option<(String, QueuedUrl)> {
    let host = super::host_key(url)?;
    let item = QueuedUrl {
        url: url.as_str().to_owned(),
        via: Some(via.to_owned()),
        hops,
        attempts: 0,
    };
    Some((host, item))
}

/// The previous crawl's capture of `url`, in a re-crawl: the one place sitemap code
/// asks the previous index.
fn previous_capture(shared: &CoreShared, url: &str) -> Option<IndexEntry> {
    shared.previous.as_ref()?.get(url)
}

/// Whether `<lastmod>` dates are kept and used: a re-crawl with
/// `--sitemap-lastmod skip` (under the default a date changes nothing).
fn lastmod_skips(shared: &CoreShared) -> bool {
    shared.previous.is_some() && shared.settings.sitemap_lastmod == LastmodPolicy::Skip
}

/// What a URL whose turn has come does under `--sitemap-lastmod skip`.
#[derive(Debug)]
pub(super) enum LastmodTurn {
    /// Fetch it (conditionally, from its previous capture, if it has one).
    Fetch,
    /// Do not: its `<lastmod>` is not newer than the previous fetch of this capture.
    Skip(Box<IndexEntry>),
    /// Go behind its host's queue once: no date is known yet, and a sitemap queued
    /// behind it on its host may give one.
    Wait,
}

/// `--sitemap-lastmod skip` (a re-crawl): whether `item`'s URL is fetched, skipped
/// (`recrawl::plan` says `Skip`) or waits a turn. Only a URL the previous crawl
/// fetched with a 2xx can be skipped, never a sitemap file (its entries would go
/// unread). Such a URL whose date no sitemap gave yet waits once, behind its host's
/// queue: the sitemaps of its host queued at that moment are read before its next
/// turn, so the skip does not depend on the order URLs were queued in (a sitemap on
/// another host may or may not have been read by then).
pub(super) fn lastmod_turn(shared: &CoreShared, item: &QueuedUrl, url: &Url) -> LastmodTurn {
    if !lastmod_skips(shared) || may_be_sitemap(item, url) {
        return LastmodTurn::Fetch;
    }
    let Some(prev) = previous_capture(shared, &item.url) else {
        return LastmodTurn::Fetch;
    };
    if !(200..300).contains(&prev.status) {
        return LastmodTurn::Fetch;
    }
    let Ok(mut lastmods) = shared.memory.sitemaps.lastmods.lock() else {
        return LastmodTurn::Fetch;
    };
    match lastmods.get(&item.url) {
        Some(lastmod) => {
            let plan = crate::recrawl::plan(Some(&prev), Some(lastmod), LastmodPolicy::Skip);
            if plan == crate::recrawl::Plan::Skip {
                LastmodTurn::Skip(Box::new(prev))
            } else {
                LastmodTurn::Fetch
            }
        }
        None if lastmods.wait_once(&item.url) => LastmodTurn::Wait,
        None => {
            if lastmods.dropped() > 0
                && !shared
                    .memory
                    .sitemaps
                    .lastmods_warned
                    .swap(true, Ordering::AcqRel)
            {
                shared.memory.sitemaps.note(format!(
                    "sitemap lastmod waits full at {} ({} URLs): further URLs are fetched \
                     conditionally, not skipped (counted in stats.json \
                     sitemap_lastmods_dropped)",
                    item.url,
                    LastModTable::DEFAULT_MAX_URLS
                ));
            }
            LastmodTurn::Fetch
        }
    }
}

/// Whether a request for `item` goes without validators: with `--sitemap-lastmod
/// skip` a sitemap file is asked for in full, since a `304` would leave its
/// `<lastmod>` dates unread and nothing could be skipped.
pub(super) fn unconditional(shared: &CoreShared, item: &QueuedUrl, url: &Url) -> bool {
    lastmod_skips(shared) && may_be_sitemap(item, url)
}

/// A resume: the grants are not in the checkpoint, but the robots.txt rules are (with
/// their `Sitemap:` lines), so each restored robots.txt grants its origin to the
/// sitemaps it names again, as when it was fetched. Indexes read before the
/// checkpoint are not read again: their children find their grant through
/// [`Core::permission`]'s lookup of the index above.
pub(super) fn regrant(shared: &CoreShared, policy: &crate::robots::RobotsPolicy) {
    let Some(rules) = policy.rules() else {
        return;
    };
    let origin = vec![policy.robots_url().origin().ascii_serialization()];
    for line in rules.sitemaps() {
        if let Ok(url) = crate::url::canonicalize_absolute(line.trim()) {
            shared.memory.sitemaps.grant(url.as_str(), &origin);
        }
    }
}

/// `--sitemap URL`: queue the operator's sitemaps before the seeds, each as a sitemap
/// fetch (hop `S`, no referrer: `sitemap_links` then trusts the sitemap's own origin).
///
/// # Errors
/// A frontier that cannot take the URL (its disk tier failed).
pub(crate) fn queue_operator_sitemaps(
    sitemaps: &[String],
    shared: &CoreShared,
    frontiers: &mut [crate::frontier::Frontier],
    now: Instant,
) -> Result<(), crate::frontier::FrontierError> {
    for s in sitemaps {
        let Ok(url) = crate::url::canonicalize_absolute(s) else {
            shared
                .memory
                .sitemaps
                .note(format!("--sitemap {s} is not a URL: ignored"));
            continue;
        };
        // Farm: like a seed, each node keeps the sitemaps of its own partitions.
        if shared
            .farm_routes
            .as_ref()
            .is_some_and(|f| !f.owns(url.as_str()))
        {
            continue;
        }
        let own = vec![url.origin().ascii_serialization()];
        shared.memory.sitemaps.grant(url.as_str(), &own);
        if shared.memory.seen.test_and_set(url.as_str().as_bytes()) {
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
            shared.outstanding.add(1);
            shared.counters.bump(Counter::Discovered);
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
        let txt = crate::robots::RobotsTxt::parse(body_of(o), self.shared.settings.robots.mode);
        let mut listed: Vec<(String, Hop)> = Vec::new();
        for line in txt.sitemaps() {
            match crate::url::canonicalize_absolute(line.url.trim()) {
                Ok(url) => listed.push((url.into(), Hop::Manifest)),
                Err(_) => {
                    out.push(Note::debug(format!(
                        "robots.txt of {host}: Sitemap: line is not a URL: {}",
                        line.url
                    )));
                }
            }
        }
        let origin = vec![robots.origin().ascii_serialization()];
        // In a farm, a sitemap on another node's host goes to that node, with
        // this robots.txt's permission (`Core::on_inbound` grants it there).
        self.split_for_farm(&mut listed, robots.as_str(), "", &origin, out);
        for (url, _) in listed {
            let Ok(url) = Url::parse(&url) else {
                continue;
            };
            // The grant first: a sitemap already queued (another robots.txt named it,
            // or a re-crawl re-seeded it) is read with this origin too; one already
            // read is read again.
            let granted = self.shared.memory.sitemaps.grant(url.as_str(), &origin);
            let hops = Hop::Manifest.code().to_string();
            match (
                self.shared
                    .memory
                    .seen
                    .test_and_set(url.as_str().as_bytes()),
                granted,
            ) {
                (false, _) => self.admit(url, Some(robots.as_str()), hops, now, out),
                (true, Granted::AfterRead) => {
                    if let Some((host, item)) = reread_item(&url, robots.as_str(), hops) {
                        self.shared.outstanding.add(1);
                        self.route(host, item, now, out);
                    }
                }
                (true, _) => {}
            }
        }
    }

    /// Whether a 2xx answer to `item` is a sitemap to read (hop `S`, XML or gzip).
    pub(crate) fn is_sitemap_fetch(
        item: &QueuedUrl,
        head: &crate::http::ResponseHead,
        body: &[u8],
    ) -> bool {
        if !sitemap_hops(&item.hops).ends_with(Hop::Manifest.code()) {
            return false;
        }
        let media = head.media_type().unwrap_or_default();
        // An (X)HTML page a sitemap lists is a page, XML prolog or not.
        if media.contains("html") {
            return false;
        }
        let start = body
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .and_then(|i| body.get(i..))
            .unwrap_or_default();
        // A text sitemap (one URL a line) is plain text at a sitemap-like path, so a
        // text page a sitemap lists is not read as one.
        let text_sitemap = media == "text/plain" && {
            let path = item
                .url
                .split(['?', '#'])
                .next()
                .unwrap_or_default()
                .to_ascii_lowercase();
            path.ends_with(".txt")
                && (path.contains("sitemap") || sitemap_hops(&item.hops).len() == 1)
        };
        media.contains("xml")
            || body.starts_with(&[0x1F, 0x8B])
            || start.starts_with(b"<?xml")
            || text_sitemap
    }

    /// Read a sitemap answer: its admitted entries become outlinks with hop `S`.
    /// Returns the grant its entries carry when it is an index (its own permission:
    /// the sitemaps it lists are granted it here, and those another node owns take it
    /// along, `FarmLink::route`); empty for a `<urlset>`, whose entries are pages.
    pub(super) fn sitemap_links(
        &mut self,
        o: &FetchOutcome,
        item: &QueuedUrl,
        outlinks: &mut Vec<(String, Hop)>,
        annotations: &mut Vec<String>,
    ) -> Vec<String> {
        let run = sitemap_hops(&item.hops)
            .chars()
            .rev()
            .take_while(|&c| c == Hop::Manifest.code())
            .count();
        let depth = u8::try_from(run.saturating_sub(1)).unwrap_or(u8::MAX);
        let permitted = self.permission(o, item);
        let mut map = match sitemap::parse(body_of(o), depth, &Limits::default()) {
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
                self.shared.counters.bump(Counter::SitemapsFailed);
                return Vec::new();
            }
        };
        // A body the fetch cut short (a cap, or the connection): an XML one does not
        // parse, but a text one does, and its last line may be a URL cut in two.
        if o.body_truncated || !o.body_complete {
            map.entries.pop();
            map.cuts.push(Cut::Bytes {
                cap_bytes: o.body.len() as u64,
            });
        }
        self.shared.counters.bump(Counter::SitemapsRead);
        if !map.cuts.is_empty() {
            self.shared.counters.bump(Counter::SitemapsCut);
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
        let (mut taken, mut refused, mut lastmods_dropped) = (0u64, 0u64, 0u64);
        let dates = map.kind == SitemapKind::UrlSet && lastmod_skips(&self.shared);
        for entry in map.entries {
            let listed = match Url::parse(&entry.loc) {
                Ok(u) if sitemap::admit(&o.url, &u, &permitted).is_ok() => u,
                _ => {
                    refused += 1;
                    continue;
                }
            };
            let Ok(url) = crate::url::canonicalize_absolute(listed.as_str()) else {
                refused += 1;
                continue;
            };
            let url = String::from(url);
            if map.kind == SitemapKind::Index {
                // The chain: a sitemap an index lists carries the index's grant.
                if self.shared.memory.sitemaps.grant(&url, &permitted) == Granted::AfterRead {
                    self.reread_sitemap(&url, item);
                }
            }
            if let (true, Some(lastmod)) = (dates, entry.lastmod) {
                // Only a URL the previous crawl fetched can be skipped.
                if previous_capture(&self.shared, &url).is_some()
                    && !self.shared.memory.sitemaps.record_lastmod(&url, lastmod)
                {
                    lastmods_dropped += 1;
                }
            }
            outlinks.push((url, Hop::Manifest));
            taken += 1;
        }
        if lastmods_dropped > 0 {
            annotations.push(format!("sitemap-lastmod-cap:{lastmods_dropped}"));
        }
        let kind = match map.kind {
            SitemapKind::UrlSet => "urlset",
            SitemapKind::Index => "index",
        };
        annotations.push(format!("sitemap:{kind}:{taken}"));
        if refused > 0 {
            annotations.push(format!("sitemap-refused:{refused}"));
            self.shared
                .counters
                .add(Counter::SitemapUrlsRefused, refused);
        }
        if map.kind == SitemapKind::Index {
            permitted
        } else {
            Vec::new()
        }
    }

    /// The grant the target of `item`'s redirect carries to another node when `item`
    /// is a sitemap: its own, which one node finds for the target through its referrer
    /// ([`Core::permission`]). Empty for a page, or a sitemap with no grant recorded
    /// (the owner then falls back on the referrer's origin, as one node would).
    pub(super) fn redirect_grant(&self, item: &QueuedUrl) -> Vec<String> {
        if self.shared.farm_routes.is_none()
            || !sitemap_hops(&item.hops).ends_with(Hop::Manifest.code())
        {
            return Vec::new();
        }
        self.shared
            .memory
            .sitemaps
            .origins(&item.url)
            .unwrap_or_default()
    }

    /// The robots.txt permission of the sitemap `o` answers: its grant
    /// ([`SitemapMemory`]). When none is known (a cap, or a resume), the grant of the
    /// index that listed it, taken as its own (after a resume the indexes robots.txt
    /// named are granted again by [`regrant`]); else the origin of its referrer (a
    /// robots.txt, or an index with no grant either), or its own origin for an
    /// operator's `--sitemap` (no referrer); either is then recorded as its grant.
    fn permission(&self, o: &FetchOutcome, item: &QueuedUrl) -> Vec<String> {
        self.permission_of(&o.url, item)
    }

    /// [`Core::permission`] of the sitemap at `sitemap`, queued as `item`.
    fn permission_of(&self, sitemap: &Url, item: &QueuedUrl) -> Vec<String> {
        let memory = &self.shared.memory.sitemaps;
        let url = sitemap.as_str();
        if let Some(granted) = memory.read(url) {
            return granted;
        }
        if let Some(inherited) = item.via.as_deref().and_then(|v| memory.origins(v)) {
            memory.grant(url, &inherited);
            return memory.read(url).unwrap_or(inherited);
        }
        let fallback = match item.via.as_deref() {
            Some(v) => Url::parse(v)
                .map(|v| vec![v.origin().ascii_serialization()])
                .unwrap_or_default(),
            None => vec![sitemap.origin().ascii_serialization()],
        };
        // Recorded as its grant and marked read, so a robots.txt that names it later
        // widens the grant after the read and has it read again.
        memory.grant(url, &fallback);
        memory.read(url).unwrap_or(fallback)
    }

    /// A sitemap answered `304` in a re-crawl is not parsed: its entries come back as
    /// the previous crawl's links (`Core::on_previous_links`). When it is an index,
    /// the sitemaps it lists must still carry its grant down the chain, as
    /// [`Core::sitemap_links`] gives them when it reads one: each listed URL (hop `S`)
    /// that names a sitemap file is granted the index's permission (and read again if
    /// it was read without it).
    ///
    /// Returns that grant (empty when `item` is no sitemap), which the listed sitemap
    /// files another farm node owns carry there.
    pub(super) fn grant_previous_children(
        &mut self,
        item: &QueuedUrl,
        links: &[(String, Hop)],
    ) -> Vec<String> {
        let Ok(url) = Url::parse(&item.url) else {
            return Vec::new();
        };
        if !may_be_sitemap(item, &url) {
            return Vec::new();
        }
        let permitted = self.permission_of(&url, item);
        for (link, hop) in links {
            if is_listed_sitemap_file(link, *hop)
                && self.shared.memory.sitemaps.grant(link, &permitted) == Granted::AfterRead
            {
                self.reread_sitemap(link, item);
            }
        }
        permitted
    }

    /// Queues `sitemap`, listed by the index `index`, once more: it was read before
    /// this grant widened its permission. Held (counted outstanding, and in a
    /// checkpoint) until the next [`Core::queue_rereads`] routes it, past the presence
    /// bits, which already hold it, and past the filters, which it passed when first
    /// listed.
    fn reread_sitemap(&mut self, sitemap: &str, index: &QueuedUrl) {
        let mut hops = index.hops.clone();
        hops.push(Hop::Manifest.code());
        let Some(reread) = Url::parse(sitemap)
            .ok()
            .and_then(|u| reread_item(&u, &index.url, hops))
        else {
            return;
        };
        self.shared.outstanding.add(1);
        self.sitemap_rereads.push(reread);
    }

    /// Routes the sitemaps [`Core::reread_sitemap`] held (from `schedule`).
    pub(super) fn queue_rereads(&mut self, now: Now, out: &mut Vec<Action>) {
        for (host, item) in std::mem::take(&mut self.sitemap_rereads) {
            self.route(host, item, now, out);
        }
    }
}
