//! Page answers: status and failures, retries and backoff, per-host tallies and
//! failure parking, redirects, link extraction, and the admission and routing of the
//! links found.

use std::time::Duration;

use url::Url;

use crate::crawllog::{LogRecord, Outcome};
use crate::fetch::{FailReason, FetchOutcome};
use crate::frontier::QueuedUrl;
use crate::html::Links;
use crate::http::ResponseHead;
use crate::provenance::Hop;
use crate::robots::PageDirectives;
use crate::url::plain::PlainKey;

use super::Counter;
use super::{
    body_of, head_of, hops_path, host_key, shard_of, Action, Core, CoreShared, ErrorWindow, Note,
    Now, Record, RecordContext, POLICY_PRIVATE,
};

impl Core {
    /// A page's answer. In order: bytes counted; a policy refusal ends the host; a
    /// transient failure (or 429/503) goes back to the head of its host's queue until
    /// `max_retries`, after a backoff; otherwise the host's next turn is set, the
    /// links of a 2xx HTML page or the target of a 3xx are taken, and the record goes
    /// out followed by the decisions on those links.
    pub(super) fn on_page(
        &mut self,
        host: String,
        item: QueuedUrl,
        o: FetchOutcome,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        self.shared.counters.add(Counter::Bytes, o.wire_bytes);
        if let Some(peer) = o.peer {
            // Before `complete`: a host one too many on its address leaves at once.
            self.frontier.note_address(&host, peer.ip());
        }
        if matches!(o.error, Some(FailReason::BlockedAddress)) {
            // The rules came from before (a checkpoint, or the name now resolves
            // elsewhere): the page is refused by policy, once, with no backoff.
            self.frontier.complete(&host, now.at);
            self.refuse_host(&host, &o, now, out);
            out.push(page_record(
                &self.shared,
                o,
                item,
                Vec::new(),
                vec![POLICY_PRIVATE.to_owned()],
            ));
            self.finish_url();
            return;
        }
        let proxy_failure = self.note_route_health(&host, &o, now);
        if let Some(until) = proxy_failure.and_then(|kind| self.proxy_pause(&host, kind, now)) {
            // The proxy is down, not the host: the URL waits at the head of its queue
            // for the proxy's next try, its attempts and the host's tally untouched.
            self.frontier.requeue_front(&host, item.clone(), now.at);
            self.frontier.complete(&host, until);
            self.shared.counters.take_back(Counter::PagesStarted, 1);
            let note = super::proxy::PROXY_DOWN_RETRY.to_owned();
            out.push(page_record(&self.shared, o, item, Vec::new(), vec![note]));
            return;
        }
        let retry_after = head_of(&o).and_then(|h| retry_after(h, now));
        let status = o.status();
        let retryable = match (&o.error, status) {
            (Some(r), _) => is_retryable(r),
            (None, Some(429 | 503)) => true,
            _ => false,
        };
        // A proxy's failure is not the host's: it never counts toward parking it.
        let parked = if proxy_failure.is_some() {
            self.tallies.get(&host).is_some_and(|t| t.parked)
        } else {
            self.tally_answer(&host, o.error.is_some(), status, out)
        };
        let failures = self
            .tallies
            .get(&host)
            .map_or(0, |t| t.consecutive_failures);
        let backoff = backoff(failures);
        let at = self.next_eligible(&o.url, o.timings.response_time(), retry_after, backoff, now);
        if retryable && item.attempts < self.shared.settings.max_retries && !parked {
            let mut again = item.clone();
            again.attempts += 1;
            let note = format!("retry:{}", again.attempts);
            self.frontier.requeue_front(&host, again, now.at);
            self.frontier.complete(&host, at);
            self.shared.counters.take_back(Counter::PagesStarted, 1);
            out.push(page_record(&self.shared, o, item, Vec::new(), vec![note]));
            return;
        }
        self.frontier.complete(&host, at);
        let mut annotations = Vec::new();
        // Canonical URL strings: a link becomes a `Url` only once it is new (below).
        let mut outlinks: Vec<(String, Hop)> = Vec::new();
        // The robots.txt permission the links carry to another node: an index's
        // sitemaps carry the index's, a sitemap's redirect target the sitemap's.
        let mut grant: Vec<String> = Vec::new();
        if o.error.is_none() {
            self.shared.counters.bump(Counter::Pages);
            if let (Some(code), Some(head)) = (status, head_of(&o)) {
                if (300..400).contains(&code) {
                    if let Some(loc) = head
                        .header("location")
                        .and_then(|v| std::str::from_utf8(v).ok())
                    {
                        match crate::url::canonicalize(&o.url, loc.trim()) {
                            Ok(target) => {
                                outlinks.push((target.into(), Hop::Redirect));
                                grant = self.redirect_grant(&item);
                            }
                            Err(r) => annotations.push(format!("bad-location:{}", r.code())),
                        }
                    }
                } else if (200..300).contains(&code)
                    && Self::is_sitemap_fetch(&item, head, body_of(&o))
                {
                    grant = self.sitemap_links(&o, &item, &mut outlinks, &mut annotations);
                } else if (200..300).contains(&code) && head.is_html() {
                    self.links_of(&o, head, &mut outlinks, &mut annotations);
                }
            }
        }
        // The record goes out first and the decisions on its links follow it in the
        // log, but the links are admitted while `outlinks` is still ours to borrow.
        let mut links = std::mem::take(&mut self.link_actions);
        // In a farm, links another node owns leave untested, with their grant;
        // the owner tests and admits them (`Core::on_inbound`).
        self.split_for_farm(&mut outlinks, &item.url, &item.hops, &grant, out);
        self.admit_links(&item, &outlinks, now, &mut links);
        out.push(page_record(&self.shared, o, item, outlinks, annotations));
        out.append(&mut links);
        // Kept for the next page, but not at the size of the largest page's links
        // (thousands of actions of a few hundred bytes each, for good).
        links.shrink_to(super::RETAINED_ACTIONS);
        self.link_actions = links;
        self.finish_url();
    }

    /// Counts a page answer in its host's tally; parks the host after
    /// `host_failures_to_park` failures in a row. True if the host is parked.
    fn tally_answer(
        &mut self,
        host: &str,
        failed: bool,
        status: Option<u16>,
        out: &mut Vec<Action>,
    ) -> bool {
        let tally = self.tallies.entry(host.to_owned()).or_default();
        if failed {
            tally.consecutive_failures += 1;
        } else {
            tally.consecutive_failures = 0;
        }
        let failures = tally.consecutive_failures;
        let error = failed || status.is_some_and(|s| s >= 500);
        if let Some(errors) = tally.errors.record(error) {
            out.push(Note::warn(format!(
                "errors rising on host {host}: {errors} of the last {}",
                ErrorWindow::WIDTH
            )));
        }
        if failures >= self.shared.settings.host_failures_to_park && !tally.parked {
            tally.parked = true;
            out.push(Note::warn(format!(
                "host keeps failing: parked: {host} ({failures} failures in a row)"
            )));
            self.shared.counters.bump(Counter::HostsParked);
        }
        tally.parked
    }

    /// The links of a fetched page: redirect targets past `max_redirects` are logged
    /// as filtered; the rest go through one pass over the presence bits, and the new
    /// ones to [`Core::admit`].
    pub(super) fn admit_links(
        &mut self,
        item: &QueuedUrl,
        outlinks: &[(String, Hop)],
        now: Now,
        out: &mut Vec<Action>,
    ) {
        let redirects = item.hops.chars().rev().take_while(|&c| c == 'R').count() as u32;
        let chain_full = redirects >= self.shared.settings.max_redirects;
        // A redirect past the chain's end is logged here and not tested.
        let over = |hop: Hop| hop == Hop::Redirect && chain_full;
        let mut keys: Vec<&[u8]> = Vec::with_capacity(outlinks.len());
        for (link, hop) in outlinks {
            if over(*hop) {
                let mut rec = LogRecord::new(now.wall, link.as_str(), Outcome::Filtered);
                rec.via = Some(item.url.clone());
                rec.annotations.push("filter:redirect-chain".to_owned());
                out.push(Action::Log(Box::new(rec)));
                continue;
            }
            keys.push(link.as_bytes());
        }
        // One pipelined pass over the presence bits for the whole page: the block of
        // each link is prefetched a few links ahead, so the cache misses of a page's
        // links overlap instead of being paid one after another.
        let mut seen = std::mem::take(&mut self.seen_scratch);
        seen.clear();
        seen.resize(keys.len(), false);
        self.shared.memory.seen.test_and_set_batch(&keys, &mut seen);
        let kept = outlinks.iter().filter(|(_, hop)| !over(*hop));
        let mut fresh = Vec::new();
        for ((link, hop), known) in kept.zip(seen.iter()) {
            if *known {
                continue;
            }
            // A plain key is read from its text; only the rest is parsed.
            let url = match PlainKey::new(link.clone()) {
                Ok(key) => Candidate::Plain(key),
                Err(link) => match parsed(&link, out) {
                    Some(url) => Candidate::Parsed(url),
                    None => continue,
                },
            };
            let mut hops = String::with_capacity(item.hops.len() + 1);
            hops.push_str(&item.hops);
            hops.push(hop.code());
            fresh.push((url, hops));
        }
        self.seen_scratch = seen;
        self.admit_batch(Some(&item.url), fresh, now, out);
    }

    /// Applies X-Robots-Tag, meta robots and content fingerprints, then extracts links.
    fn links_of(
        &mut self,
        o: &FetchOutcome,
        head: &ResponseHead,
        outlinks: &mut Vec<(String, Hop)>,
        annotations: &mut Vec<String>,
    ) {
        let agent = &self.shared.settings.agent_token;
        let header_dirs = PageDirectives::from_x_robots_tag(
            head.headers_named("x-robots-tag")
                .filter_map(|v| std::str::from_utf8(v).ok()),
            agent,
        );
        let charset = head.charset();
        let page = Links::extract_keys(&o.url, body_of(o), charset, &self.extract);
        let meta = PageDirectives {
            index: page.robots.index,
            follow: page.robots.follow,
            archive: page.robots.archive,
        };
        let dirs = header_dirs.restrict(meta);
        if !dirs.index {
            annotations.push("noindex".to_owned());
        }
        if !dirs.follow {
            annotations.push("nofollow".to_owned());
            return;
        }
        let digest =
            crate::html::fingerprint::page_fingerprint(o.url.path().as_bytes(), body_of(o));
        if self.shared.memory.fingerprints.test_and_set(digest) {
            annotations.push("duplicate".to_owned());
            self.shared.counters.bump(Counter::Duplicates);
            return;
        }
        // Every extraction cap that dropped something says so: no limit is silent.
        let caps = [
            (
                "links-truncated",
                page.links_dropped,
                Counter::PagesLinksTruncated,
            ),
            (
                "scan-truncated",
                page.unscanned_bytes,
                Counter::PagesScanTruncated,
            ),
            (
                "long-attributes",
                page.long_attributes,
                Counter::PagesLongAttributes,
            ),
        ];
        for (name, dropped, counter) in caps {
            if dropped > 0 {
                annotations.push(format!("{name}:{dropped}"));
                self.shared.counters.bump(counter);
            }
        }
        outlinks.reserve(page.links.len());
        for link in page.links {
            if link.nofollow {
                continue;
            }
            if let Ok(url) = link.url {
                let hop = match link.tag {
                    crate::html::Tag::A | crate::html::Tag::Area => Hop::Link,
                    crate::html::Tag::Meta => Hop::Redirect,
                    _ => Hop::Embed,
                };
                outlinks.push((url, hop));
            }
        }
    }

    /// The decision for a URL the presence bits just reported as new (the caller sets
    /// its bit): [`Core::admit_batch`] of one.
    pub(super) fn admit(
        &mut self,
        url: Url,
        via: Option<&str>,
        hops: String,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        self.admit_batch(via, vec![(Candidate::Parsed(url), hops)], now, out);
    }

    /// The decision for URLs the presence bits just reported as new, all found on
    /// `via` (the caller set their bits): filters (a gzipped sitemap on a sitemap hop
    /// exempt from the refused extensions), then the handler's hook, asked once for
    /// all that passed ([`crate::handler::Handler::accept_links`]), then
    /// [`Core::route`]. The one admission: a page's links, a robots.txt's `Sitemap:`
    /// lines, the links other farm nodes send ([`Core::on_inbound`]) and the URLs added
    /// while the crawl runs ([`Core::on_added`]) all pass here. `via` is `None` only for
    /// an added URL (this node's, or one another node was handed): no page, no hop,
    /// refused as `added`.
    pub(super) fn admit_batch(
        &mut self,
        via: Option<&str>,
        candidates: Vec<(Candidate, String)>,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        let mut passed = Vec::with_capacity(candidates.len());
        for (url, hops) in candidates {
            if self.screen(&url, via, &hops, now, out) {
                passed.push((url, hops));
            }
        }
        let Some(handler) = self.shared.handler.clone() else {
            for (url, hops) in passed {
                self.enqueue(url, via, hops, now, out);
            }
            return;
        };
        if passed.is_empty() {
            return;
        }
        // The handler is shown parsed URLs: the plain keys are parsed for it.
        let (urls, hops): (Vec<Url>, Vec<String>) = passed
            .into_iter()
            .filter_map(|(url, hops)| Some((url.into_url(out)?, hops)))
            .unzip();
        let mut keep = vec![true; urls.len()];
        handler.accept_links(via.unwrap_or_default(), &urls, &mut keep);
        for ((url, hops), keep) in urls.into_iter().zip(hops).zip(keep) {
            if keep {
                self.enqueue(Candidate::Parsed(url), via, hops, now, out);
            }
        }
    }

    /// The filters' verdict on a new URL: true if it passes; a refusal is logged
    /// `filtered` with its reason.
    fn screen(
        &mut self,
        url: &Candidate,
        via: Option<&str>,
        hops: &str,
        now: Now,
        out: &mut Vec<Action>,
    ) -> bool {
        let depth = hops.len() as u32;
        let checked = match url {
            Candidate::Parsed(url) => self.filter.check(url, depth).map_err(|r| (r, url.path())),
            Candidate::Plain(key) => {
                let plain = key.get();
                self.filter
                    .check_plain(&plain, depth)
                    .map_err(|r| (r, plain.path()))
            }
        };
        let exempt = |(r, path)| super::sitemaps::exempt(r, path, hops);
        let Err(reason) = checked.or_else(exempt) else {
            return true;
        };
        if matches!(reason, crate::url::Reject::OutOfScope) && !self.scope_warned {
            self.scope_warned = true;
            out.push(Note::warn(format!(
                "links outside the crawl scope ({}) are logged as filtered \
                 (filter:out_of_scope) and not followed; --scope any follows them",
                self.shared.settings.scope
            )));
        }
        let mut rec = LogRecord::new(now.wall, url.as_str(), Outcome::Filtered);
        rec.via = via.map(str::to_owned);
        rec.hops = hops_path(hops);
        rec.annotations.push(format!("filter:{}", reason.code()));
        if via.is_none() {
            rec.annotations.push("added".to_owned());
        }
        out.push(Action::Log(Box::new(rec)));
        false
    }

    /// An admitted URL counted discovered and outstanding, then routed.
    fn enqueue(
        &mut self,
        url: Candidate,
        via: Option<&str>,
        hops: String,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        let (key, url) = match url {
            Candidate::Parsed(url) => {
                let Some(key) = host_key(&url) else { return };
                (key, url.into())
            }
            Candidate::Plain(url) => (url.get().origin().to_owned(), url.into_string()),
        };
        let item = QueuedUrl {
            url,
            via: via.map(str::to_owned),
            hops,
            attempts: 0,
        };
        self.shared.outstanding.add(1);
        self.shared.counters.bump(Counter::Discovered);
        self.route(key, item, now, out);
    }

    /// Where an admitted URL goes: this shard's frontier, or [`Action::Route`] to the
    /// shard that owns its host (by [`shard_of`] its host key). The one place a URL
    /// changes hands, so a partition of the hosts over machines checks here.
    pub(super) fn route(&mut self, host: String, item: QueuedUrl, now: Now, out: &mut Vec<Action>) {
        let target = shard_of(&host, self.shards);
        if target == self.index {
            self.push(&host, item, now, out);
        } else {
            out.push(Action::Route {
                shard: target,
                host,
                item,
            });
        }
    }
}

/// A URL up for admission ([`Core::admit_batch`]): parsed, or a canonical key read
/// from its text, which needs no parse unless a handler is to see it.
pub(super) enum Candidate {
    Parsed(Url),
    Plain(PlainKey),
}

impl Candidate {
    fn as_str(&self) -> &str {
        match self {
            Candidate::Parsed(url) => url.as_str(),
            Candidate::Plain(key) => key.get().as_str(),
        }
    }

    /// The URL parsed; `None`, said in `out`, if it does not parse.
    fn into_url(self, out: &mut Vec<Action>) -> Option<Url> {
        match self {
            Candidate::Parsed(url) => Some(url),
            Candidate::Plain(key) => parsed(key.get().as_str(), out),
        }
    }
}

/// A canonical link parsed, or `None` with a warning: a canonical URL parses to
/// itself, so this is unreachable, but said, not silent.
fn parsed(link: &str, out: &mut Vec<Action>) -> Option<Url> {
    let url = Url::parse(link).ok();
    if url.is_none() {
        out.push(Note::warn(format!(
            "canonical link does not parse: dropped: {link}"
        )));
    }
    url
}

fn page_record(
    shared: &CoreShared,
    o: FetchOutcome,
    item: QueuedUrl,
    outlinks: Vec<(String, Hop)>,
    annotations: Vec<String>,
) -> Action {
    let judgement = super::recrawl::judge_page(shared, &o, &item);
    Action::Record(Box::new(Record {
        outcome: o,
        context: RecordContext::Page { item, outlinks },
        annotations,
        judgement,
    }))
}

/// Back off exponentially on a failing host, on top of politeness: 4 s, 8 s, ...
/// The first step is long enough that a server trickling a response we gave up on (it
/// learns of the close only at its next write or two) has seen the old connection end
/// before the next one starts, so the per-host connection cap holds from the server's
/// side too.
pub(super) fn backoff(failures: u32) -> Option<Duration> {
    (failures > 0).then(|| Duration::from_secs(2u64 << failures.min(8)))
}

pub(super) fn is_retryable(r: &FailReason) -> bool {
    matches!(
        r,
        FailReason::Refused
            | FailReason::Connect(_)
            | FailReason::Reset
            | FailReason::Proxy(crate::fetch::ProxyFailure {
                kind: crate::fetch::ProxyFailKind::Error | crate::fetch::ProxyFailKind::Protocol,
                ..
            })
            | FailReason::ClosedEarly
            | FailReason::Timeout(_)
            | FailReason::Io(_)
            | FailReason::Overloaded
            // This process's resolver was too busy to ask (widebench 100k: 14,000
            // pages of live hosts lost so); the name itself is not in question.
            | FailReason::Dns(crate::fetch::DnsFailure::Overloaded | crate::fetch::DnsFailure::Unavailable)
    )
}

/// `Retry-After` as a delay from `now`: delay-seconds, or an HTTP-date compared with
/// the wall clock of `now`.
pub(super) fn retry_after(head: &ResponseHead, now: Now) -> Option<Duration> {
    head.retry_after(now.system_time())
}
