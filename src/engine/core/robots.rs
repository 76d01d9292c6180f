//! robots.txt answers: feed the robots cache, follow its redirects, release the host
//! held in the frontier, and refuse hosts that resolve to private addresses.

use crate::fetch::{FailReason, FetchOutcome};
use crate::robots::{ParseReport, RobotsResponse, Step};
use crate::routing::HostKey;

use super::page::retry_after;
use super::recent::Asker;
use super::schedule::robots_request;
use super::Counter;
use super::{
    body_of, head_of, Action, Core, Note, Now, Record, RecordContext, RobotsFetch,
    MAX_REFUSAL_WARNINGS, MAX_REFUSED_HOSTS, POLICY_PRIVATE,
};

impl Core {
    /// A robots.txt answer for the host held waiting: fed to the cache; a redirect
    /// is followed for the same host; once settled, the host is released with its
    /// politeness after this fetch, and its URLs are decided as they come up.
    pub(super) fn on_robots(
        &mut self,
        fetch: RobotsFetch,
        o: FetchOutcome,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        let RobotsFetch { host, key, via } = fetch;
        if let Some(e) = self.robots.take_spill_error() {
            let cause = std::error::Error::source(&e).map_or(String::new(), |c| format!(": {c}"));
            out.push(Note::warn(format!(
                "{e}{cause} (the hosts concerned keep their rules in RAM, or fetch robots.txt again)"
            )));
        }
        // A redirect of robots.txt to another host that is refused is that host's
        // business: this host's rules are then unreachable, as for any failed hop.
        let own = HostKey::of(&o.url).is_some_and(|k| k.as_str() == host);
        if own && matches!(o.error, Some(FailReason::BlockedAddress)) {
            // Refused by policy, not by the network: final, so no robots.txt retry
            // schedule and no URL of the host left waiting for one.
            self.robots.on_network_error(&key, now.at);
            self.refuse_host(&host, &o, now, out);
            out.push(robots_record(o, via, vec![POLICY_PRIVATE.to_owned()]));
            return;
        }
        let proxy_failure = if own {
            self.note_route_health(&host, &o, now)
        } else {
            None
        };
        if let Some(kind) = proxy_failure {
            let pause = self.proxy_pause(&host, kind, now);
            if pause.is_some() || kind == crate::fetch::ProxyFailKind::Auth {
                // The proxy is down (its hosts wait for its next try, no failure
                // counted) or refused our credentials (the route's URLs are declined
                // `proxy-auth` as they come up): either way not this host's answer.
                let at = pause.unwrap_or(now.at);
                self.robots.forget(&key);
                self.robots_fetching.remove(&host);
                self.frontier.defer(&host, at);
                self.frontier.release(&host, at);
                let notes = pause
                    .map(|_| vec![super::proxy::PROXY_DOWN_RETRY.to_owned()])
                    .unwrap_or_default();
                out.push(robots_record(o, via, notes));
                return;
            }
        }
        if own && is_resolver_overload(o.error.as_ref()) {
            // This resolver's own limit, not the host's answer: its robots.txt is
            // asked again shortly, as if never asked (no failure counted).
            self.robots.forget(&key);
            self.robots_fetching.remove(&host);
            self.frontier.defer(&host, now.at + super::secs(1));
            self.frontier.release(&host, now.at + super::secs(1));
            out.push(robots_record(
                o,
                via,
                vec!["dns-overloaded:retry".to_owned()],
            ));
            return;
        }
        let unresolved = own
            .then(|| name_failure_hold(o.error.as_ref(), &self.shared.settings))
            .flatten();
        if let Some(hold) = unresolved {
            // The name did not resolve: the host's URLs are logged as DNS failures at
            // once rather than held for robots.txt retries, so a dead name delays
            // nothing but itself (`docs/frontier.md`, "Scheduling at width: what the
            // core adds").
            self.robots.on_network_error(&key, now.at);
            self.unresolve_host(&host, hold, now);
            out.push(robots_record(o, via, Vec::new()));
            return;
        }
        let step = match (&o.error, head_of(&o)) {
            (None, Some(head)) => {
                let headers: Vec<(&str, &[u8])> = head
                    .headers
                    .iter()
                    .map(|(n, v)| (n.as_str(), v.as_slice()))
                    .collect();
                let resp = RobotsResponse {
                    status: head.status,
                    headers: &headers,
                    body: body_of(&o),
                };
                self.robots.on_response(&key, now.at, &resp)
            }
            _ => self.robots.on_network_error(&key, now.at),
        };
        let annotations = match self.robots.take_parse_report(&key) {
            Some(report) => self.robots_caps(&report, body_of(&o).len()),
            None => Vec::new(),
        };
        let retry_after = head_of(&o).and_then(|h| retry_after(h, now));
        let elapsed = o.timings.response_time();
        let url = o.url.clone();
        // The record goes out first, then the decisions on its `Sitemap:` lines.
        let mut sitemaps = Vec::new();
        self.queue_robots_sitemaps(&host, &o, now, &mut sitemaps);
        out.push(robots_record(o, via.clone(), annotations));
        out.append(&mut sitemaps);
        if let Some(Step::Fetch(next)) = step {
            // A hop to the server just asked waits out its politeness delay like a
            // page would (the referee saw them back to back).
            let same_server = HostKey::of(&next.url) == HostKey::of(&url);
            let mut at = self.next_eligible(&url, elapsed, retry_after, None, now);
            if !same_server {
                // Another host: it waits for that host's own pace instead, as far as
                // any shard asked it lately (`RecentStarts`, reserved at once).
                let target = super::host_key(&next.url).unwrap_or_default();
                let delay = self.shared.settings.delay;
                at = match self.shared.memory.recent_starts.reserve(
                    &target,
                    Asker::Hop,
                    delay,
                    now.at,
                ) {
                    Ok(()) => now.at,
                    Err(until) => until,
                };
            }
            if at > now.at {
                self.robots_hops.push(super::RobotsHop {
                    at,
                    host,
                    key,
                    next,
                    via,
                });
                return;
            }
            let id = self.next_id();
            let action =
                robots_request(&self.shared, &mut self.in_flight, id, &host, key, next, via);
            out.push(action);
            return;
        }
        let at = self.next_eligible(&url, elapsed, retry_after, None, now);
        self.robots_fetching.remove(&host);
        // A host held for its rules is released; one whose robots.txt was fetched
        // ahead of its turn (look-ahead) was never held, and rests all the same.
        self.frontier.defer(&host, at);
        self.frontier.release(&host, at);
    }

    /// Sends the robots.txt redirect hops whose politeness delay has passed.
    pub(super) fn send_due_robots_hops(&mut self, now: Now, out: &mut Vec<Action>) {
        if self.robots_hops.is_empty() {
            return;
        }
        let cap = self.shared.settings.concurrency_per_shard;
        let (due, mut wait): (Vec<_>, Vec<_>) = std::mem::take(&mut self.robots_hops)
            .into_iter()
            .partition(|h| h.at <= now.at);
        for mut h in due {
            // Like any fetch, a hop waits for a free slot (`--concurrency`).
            if self.busy() >= cap {
                wait.push(h);
                continue;
            }
            // A hop to another host waits again if that host was asked meanwhile.
            let target = super::host_key(&h.next.url).filter(|t| *t != h.host);
            let delay = self.shared.settings.delay;
            if let Some(Err(at)) = target.as_deref().map(|t| {
                self.shared
                    .memory
                    .recent_starts
                    .reserve(t, Asker::Hop, delay, now.at)
            }) {
                h.at = at;
                wait.push(h);
                continue;
            }
            let id = self.next_id();
            let action = robots_request(
                &self.shared,
                &mut self.in_flight,
                id,
                &h.host,
                h.key,
                h.next,
                h.via,
            );
            out.push(action);
        }
        self.robots_hops = wait;
    }

    /// The crawl-log annotations of a parsed robots.txt that a parse cap cut (no limit
    /// is silent), counted in the stats: `robots-truncated:BYTES` (the bytes past the
    /// size cap, not parsed), `robots-long-lines:N` (lines whose tail past 16,663 bytes
    /// was not read); `robots-ignored-lines:N` (lines of no field the parser knows) is
    /// logged only, as no cap is involved.
    fn robots_caps(&self, report: &ParseReport, body_bytes: usize) -> Vec<String> {
        let mut annotations = Vec::new();
        if report.truncated {
            let unread = body_bytes.saturating_sub(report.bytes_parsed);
            annotations.push(format!("robots-truncated:{unread}"));
            self.shared.counters.bump(Counter::RobotsTruncated);
        }
        if report.long_lines > 0 {
            annotations.push(format!("robots-long-lines:{}", report.long_lines));
            self.shared.counters.bump(Counter::RobotsLongLines);
        }
        if report.ignored_lines > 0 {
            annotations.push(format!("robots-ignored-lines:{}", report.ignored_lines));
        }
        annotations
    }

    /// Marks `host` as refused by policy (its address is private or loopback and
    /// `--allow-private-addresses` is off): its queued URLs are logged as they come up
    /// in the schedule (the gate declines them), each once, none fetched. A host held
    /// for its robots.txt is released now for that.
    pub(super) fn refuse_host(
        &mut self,
        host: &str,
        o: &FetchOutcome,
        now: Now,
        out: &mut Vec<Action>,
    ) {
        if self.refused_hosts.len() >= MAX_REFUSED_HOSTS {
            self.refused_hosts.clear();
        }
        if self.refused_hosts.insert(host.to_owned()) {
            self.shared.counters.bump(Counter::HostsRetired);
            self.refusal_warnings += 1;
            if self.refusal_warnings <= MAX_REFUSAL_WARNINGS {
                let addr = o
                    .peer
                    .map_or_else(|| "?".to_owned(), |p| p.ip().to_string());
                out.push(Note::warn(format!(
                    "{host} resolves to a loopback, private or special address ({addr}): its \
                     URLs are refused, not fetched (crawl log: blocked-address, {POLICY_PRIVATE}); \
                     give --allow-private-addresses to crawl it"
                )));
            } else if self.refusal_warnings == MAX_REFUSAL_WARNINGS + 1 {
                out.push(Note::warn(format!(
                    "more hosts refused for private addresses: see the crawl log ({POLICY_PRIVATE})"
                )));
            }
        }
        self.robots_fetching.remove(host);
        self.frontier.release(host, now.at);
    }

    /// `host`'s name did not resolve for its robots.txt: its URLs are logged
    /// `dns-error` (`dns-unresolved`) as they come up, until the resolver's memory
    /// of the failure ends; a URL of it found later asks again then.
    pub(super) fn unresolve_host(&mut self, host: &str, hold: std::time::Duration, now: Now) {
        if self.unresolved_hosts.len() >= MAX_REFUSED_HOSTS {
            self.unresolved_hosts.clear();
        }
        self.unresolved_hosts.insert(host.to_owned(), now.at + hold);
        self.shared.counters.bump(Counter::HostsRetired);
        self.robots_fetching.remove(host);
        self.frontier.release(host, now.at);
    }
}

/// Whether a fetch failed on this process's resolver limits (its lookup FIFO full,
/// its deadline passed in the FIFO, no socket), which say nothing about the host.
fn is_resolver_overload(e: Option<&FailReason>) -> bool {
    use crate::fetch::DnsFailure as D;
    matches!(e, Some(FailReason::Dns(D::Overloaded | D::Unavailable)))
}

/// How long a host stays unresolved after a fetch failed on its name: as long as
/// the resolver remembers the failure (a name no server answered: `--dns-dead-secs`;
/// no such name, no address or a server's error: the negative cache's time). `None`
/// for anything else, this resolver's own overload included (the host is retried as
/// for any network failure).
fn name_failure_hold(
    e: Option<&FailReason>,
    settings: &super::CoreSettings,
) -> Option<std::time::Duration> {
    use crate::fetch::DnsFailure as D;
    match e? {
        FailReason::Timeout(crate::fetch::TimeoutPhase::Dns)
        | FailReason::Dns(D::TimedOut | D::Dead) => Some(settings.dns_dead_for),
        FailReason::Dns(
            D::NoSuchName | D::NoAddress | D::ServerFailure | D::Refused | D::Malformed,
        ) => Some(settings.dns_negative_ttl),
        _ => None,
    }
}

fn robots_record(o: FetchOutcome, via: String, annotations: Vec<String>) -> Action {
    Action::Record(Box::new(Record {
        outcome: o,
        context: RecordContext::Robots { via },
        annotations,
        judgement: None,
    }))
}
