//! The operator's board: per-host figures and the latest errors, for the status page's
//! tables (`/api/hosts`; `docs/control.md`, "The page's tables"). Fed by the output
//! thread with every crawl-log record it writes (one uncontended lock per record), read
//! by the status listener. Bounded: at most [`MAX_HOSTS`] hosts are followed (later
//! ones are counted, not kept) and the last [`MAX_ERRORS`] errors.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use serde::Serialize;

use super::stats::{outcome_name, outcome_str};
use crate::crawllog::{LogRecord, Outcome};

/// Most hosts followed.
pub const MAX_HOSTS: usize = 20_000;
/// Latest errors kept.
pub const MAX_ERRORS: usize = 20;
/// Rows of each table served.
pub const TOP_ROWS: usize = 10;

/// One host's figures.
#[derive(Clone, Debug, Default, Serialize)]
pub struct HostRow {
    pub host: String,
    /// Crawl-log lines of the host's pages (fetched or not).
    pub decisions: u64,
    pub fetched: u64,
    /// Failed fetches (DNS, connect, TLS, timeout, protocol) and answers >= 400.
    pub failures: u64,
    pub last_status: Option<u16>,
    pub last_outcome: String,
    /// robots.txt: `"200"`, `"404"`, `"failed"` ... (the last fetch), or `"unknown"`.
    pub robots: String,
    /// URLs robots.txt disallowed.
    pub disallowed: u64,
    /// The politeness delay in ms (filled when served: the crawl's, the robots.txt
    /// Crawl-delay met, the operator's, whichever is longest).
    pub delay_ms: u64,
    /// URLs queued for the host (filled when served, from the shards).
    pub queued: Option<u64>,
    /// The route the host takes, in a crawl with proxy routes (the crawl log's
    /// `route`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
}

/// One recent error.
#[derive(Clone, Debug, Serialize)]
pub struct ErrorRow {
    pub time: String,
    pub url: String,
    pub outcome: String,
    pub status: Option<u16>,
    pub annotations: Vec<String>,
}

/// What `/api/hosts` serves.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BoardView {
    pub busiest: Vec<HostRow>,
    pub failing: Vec<HostRow>,
    pub errors: Vec<ErrorRow>,
    pub hosts_followed: usize,
    pub hosts_not_followed: u64,
}

#[derive(Default)]
struct State {
    /// Every logged line looks its host up here: aHash (randomly keyed, so still
    /// DoS-resistant) instead of SipHash.
    hosts: HashMap<String, HostRow, ahash::RandomState>,
    not_followed: u64,
    errors: VecDeque<ErrorRow>,
}

/// See the module docs.
#[derive(Default)]
pub(crate) struct Board {
    state: Mutex<State>,
    /// The hosts the page's tables showed last (at most 2 x [`TOP_ROWS`]), and their
    /// queue lengths as the shards publish them.
    shown: Mutex<Vec<String>>,
    queues: Mutex<HashMap<String, u64>>,
}

impl Board {
    /// Takes one crawl-log record.
    pub fn note(&self, rec: &LogRecord) {
        let host = crate::routing::partition_key(&rec.url);
        let is_robots = rec.url.ends_with("/robots.txt");
        let failed = match rec.outcome {
            Outcome::Fetched => rec.status.is_some_and(|s| s >= 400) && !is_robots,
            Outcome::DnsError
            | Outcome::ConnectError
            | Outcome::TlsError
            | Outcome::Timeout
            | Outcome::ProtocolError
            | Outcome::HostParked
            | Outcome::ProxyUnreachable
            | Outcome::ProxyAuth
            | Outcome::ProxyError => true,
            _ => false,
        };
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        if failed {
            if st.errors.len() >= MAX_ERRORS {
                st.errors.pop_front();
            }
            st.errors.push_back(ErrorRow {
                time: rec.time.to_string(),
                url: rec.url.clone(),
                outcome: outcome_name(rec.outcome),
                status: rec.status,
                annotations: rec.annotations.clone(),
            });
        }
        if !st.hosts.contains_key(host) {
            if st.hosts.len() >= MAX_HOSTS {
                st.not_followed += 1;
                return;
            }
            st.hosts.insert(
                host.to_owned(),
                HostRow {
                    host: host.to_owned(),
                    robots: "unknown".to_owned(),
                    ..HostRow::default()
                },
            );
        }
        let Some(row) = st.hosts.get_mut(host) else {
            return;
        };
        if row.route.as_deref() != rec.route.as_deref() {
            row.route.clone_from(&rec.route);
        }
        if is_robots {
            row.robots = match (rec.outcome, rec.status) {
                (Outcome::Fetched, Some(s)) => s.to_string(),
                (o, _) => outcome_name(o),
            };
            return;
        }
        row.decisions += 1;
        row.fetched += u64::from(rec.outcome == Outcome::Fetched);
        row.failures += u64::from(failed);
        row.disallowed += u64::from(rec.outcome == Outcome::Robots);
        if rec.status.is_some() {
            row.last_status = rec.status;
        }
        let name = outcome_str(rec.outcome);
        if row.last_outcome != name {
            row.last_outcome = name.to_owned();
        }
    }

    /// The busiest and most failing hosts and the latest errors, as `/api/hosts`
    /// serves them: `delay_ms` gives a host's politeness delay; queue lengths are the
    /// shards' last (at most 250 ms old; absent for a host shown for the first time).
    /// The hosts shown become those whose queue lengths the shards publish.
    pub fn view(&self, delay_ms: impl Fn(&str) -> u64) -> BoardView {
        let mut view = self.rows(delay_ms);
        let queues = self.queues.lock().map(|q| q.clone()).unwrap_or_default();
        let mut shown = Vec::new();
        for row in view.busiest.iter_mut().chain(view.failing.iter_mut()) {
            row.queued = queues.get(&row.host).copied();
            if !shown.contains(&row.host) {
                shown.push(row.host.clone());
            }
        }
        if let Ok(mut s) = self.shown.lock() {
            *s = shown;
        }
        view
    }

    /// The hosts whose queue lengths the shards should publish.
    pub fn shown_hosts(&self) -> Vec<String> {
        self.shown.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// A shard's queue lengths of shown hosts it owns.
    pub fn note_queues(&self, found: Vec<(String, u64)>) {
        if found.is_empty() {
            return;
        }
        if let Ok(mut q) = self.queues.lock() {
            if q.len() > 4 * TOP_ROWS {
                q.clear();
            }
            q.extend(found);
        }
    }

    /// The view's rows and errors, without queue lengths.
    fn rows(&self, delay_ms: impl Fn(&str) -> u64) -> BoardView {
        let Ok(st) = self.state.lock() else {
            return BoardView::default();
        };
        let top = |key: fn(&HostRow) -> u64| {
            let mut rows: Vec<&HostRow> = st.hosts.values().filter(|r| key(r) > 0).collect();
            rows.sort_by(|a, b| key(b).cmp(&key(a)).then_with(|| a.host.cmp(&b.host)));
            rows.into_iter()
                .take(TOP_ROWS)
                .map(|r| HostRow {
                    delay_ms: delay_ms(&r.host),
                    ..r.clone()
                })
                .collect::<Vec<_>>()
        };
        BoardView {
            busiest: top(|r| r.decisions),
            failing: top(|r| r.failures),
            errors: st.errors.iter().rev().cloned().collect(),
            hosts_followed: st.hosts.len(),
            hosts_not_followed: st.not_followed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provenance::WarcDate;

    fn rec(url: &str, outcome: Outcome, status: Option<u16>) -> LogRecord {
        let mut r = LogRecord::new(WarcDate::now(), url, outcome);
        r.status = status;
        r
    }

    #[test]
    fn hosts_are_ranked_and_errors_kept_newest_first() {
        let b = Board::default();
        b.note(&rec(
            "http://a.test/robots.txt",
            Outcome::Fetched,
            Some(404),
        ));
        for i in 0..5 {
            b.note(&rec(
                &format!("http://a.test/{i}"),
                Outcome::Fetched,
                Some(200),
            ));
        }
        b.note(&rec("http://b.test/x", Outcome::Fetched, Some(500)));
        b.note(&rec("http://b.test/y", Outcome::Timeout, None));
        b.note(&rec("http://b.test/z", Outcome::Robots, None));
        let v = b.view(|h| if h == "http://b.test" { 3000 } else { 0 });
        assert_eq!(v.busiest[0].host, "http://a.test");
        assert_eq!(v.busiest[0].robots, "404");
        assert_eq!(v.busiest[0].fetched, 5);
        assert_eq!(v.failing.len(), 1);
        assert_eq!(v.failing[0].failures, 2);
        assert_eq!(v.failing[0].disallowed, 1);
        assert_eq!(v.failing[0].delay_ms, 3000);
        assert_eq!(v.failing[0].last_status, Some(500));
        assert_eq!(v.errors.len(), 2);
        assert_eq!(v.errors[0].url, "http://b.test/y");
        assert_eq!(v.errors[0].outcome, "timeout");
        for i in 0..(MAX_ERRORS + 5) {
            b.note(&rec(
                &format!("http://c.test/{i}"),
                Outcome::ConnectError,
                None,
            ));
        }
        assert_eq!(b.view(|_| 0).errors.len(), MAX_ERRORS);
    }

    #[test]
    fn a_hosts_row_shows_its_route_and_proxy_failures_count_as_errors() {
        let b = Board::default();
        let mut r = rec("http://p.test/a", Outcome::ProxyUnreachable, None);
        r.route = Some("squid".to_owned());
        b.note(&r);
        b.note(&rec("http://d.test/a", Outcome::Fetched, Some(200)));
        let v = b.view(|_| 0);
        let p = v
            .failing
            .iter()
            .find(|h| h.host.contains("p.test"))
            .expect("p.test fails");
        assert_eq!(p.route.as_deref(), Some("squid"));
        assert_eq!(v.errors.len(), 1);
        assert_eq!(v.errors[0].outcome, "proxy-unreachable");
        let d = v
            .busiest
            .iter()
            .find(|h| h.host.contains("d.test"))
            .expect("d.test");
        assert_eq!(d.route, None);
    }
}
