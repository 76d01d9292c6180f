//! [`Egress`]: the routes a fetcher uses, made ready for connecting. Per proxy route it
//! holds the proxy's addresses (resolved once at start, before any loop runs, like
//! `--resolve`), its [`Via`] (the `Proxy-Authorization` line encoded once) and the
//! process-wide count of connections open to it, the `--per-proxy-connections` cap.
//!
//! One `Egress` is shared (`Arc`) by every fetcher of a process, so the cap holds for
//! the process as the per-IP cap does. A direct-only configuration has no `Egress` at
//! all (`FetcherConfig::egress` is `None`): the direct path reads one `Option`.

use std::fmt;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::rules::{RouteId, Routes, DIRECT};
use super::url::ProxyKind;
use super::via::Via;
use crate::fetch::{FailReason, ProxyFailKind, RouteHealth, RouteState};

/// Connections to one proxy at most, across the process, by default.
pub const DEFAULT_PER_PROXY_CONNECTIONS: u32 = 256;

/// Why a route table cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum EgressError {
    /// An `https://` proxy (TLS to the proxy) is not supported yet.
    #[error("proxy {label}: https:// proxies (TLS to the proxy) are not supported; use http://, socks5:// or socks5h://")]
    HttpsProxy {
        /// The route's label (no credentials).
        label: String,
    },
    /// The proxy's own name does not resolve.
    #[error("proxy {label}: cannot resolve {host}: {reason}")]
    Resolve {
        /// The route's label (no credentials).
        label: String,
        /// The proxy's host.
        host: String,
        /// The resolver's message.
        reason: String,
    },
}

/// How long a proxy that is down stays paused by default before its URLs fail for
/// good (`--proxy-down-secs`).
pub const DEFAULT_PROXY_DOWN: Duration = Duration::from_secs(600);

/// The longest pause between two tries of a proxy that is down: a proxy back after an
/// outage is in use again within this.
pub const MAX_PROXY_PAUSE: Duration = Duration::from_secs(8);

/// One proxy route, ready to connect, and its health.
struct Proxy {
    via: Arc<Via>,
    addrs: Box<[SocketAddr]>,
    open: AtomicU32,
    /// Microseconds after `Egress::epoch` when the proxy was first found down in the
    /// current outage; 0 while it is up.
    down_since: AtomicU64,
    /// Microseconds after the epoch before which its hosts wait (the pause).
    retry_at: AtomicU64,
    /// Unreachable answers in a row (the pause doubles with each, to
    /// [`MAX_PROXY_PAUSE`]).
    misses: AtomicU32,
    /// The proxy refused the credentials (407 or a SOCKS refusal): sticky for the run.
    auth_failed: AtomicBool,
}

/// The routes and, per proxy route, its addresses, `Via`, open-connection count and
/// health.
pub struct Egress {
    routes: Routes,
    /// Indexed by [`RouteId`]; `None` for [`DIRECT`].
    proxies: Vec<Option<Proxy>>,
    per_proxy: u32,
    /// The time base of the health fields.
    epoch: Instant,
    /// How long a proxy may stay down before its URLs fail for good.
    down_limit: Duration,
}

impl fmt::Debug for Egress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Egress")
            .field("routes", &self.routes.routes().len())
            .field("per_proxy", &self.per_proxy)
            .finish_non_exhaustive()
    }
}

impl Egress {
    /// Makes `routes` ready: resolves each proxy's host with the system resolver
    /// (blocking; called once at start) and refuses what cannot be used.
    ///
    /// # Errors
    /// An `https://` proxy, or a proxy host that does not resolve.
    pub fn new(routes: Routes, per_proxy: u32) -> Result<Self, EgressError> {
        Self::with_resolver(routes, per_proxy, |host, port| {
            (host, port)
                .to_socket_addrs()
                .map(Iterator::collect)
                .map_err(|e| e.to_string())
        })
    }

    /// [`Egress::new`] with the proxy hosts resolved by `resolve` (tests).
    ///
    /// # Errors
    /// As [`Egress::new`].
    pub fn with_resolver(
        routes: Routes,
        per_proxy: u32,
        resolve: impl Fn(&str, u16) -> Result<Vec<SocketAddr>, String>,
    ) -> Result<Self, EgressError> {
        let mut proxies = Vec::with_capacity(routes.routes().len());
        for (id, route) in routes.routes().iter().enumerate() {
            let Some(url) = &route.proxy else {
                proxies.push(None);
                continue;
            };
            if url.kind == ProxyKind::Https {
                return Err(EgressError::HttpsProxy {
                    label: route.label.clone(),
                });
            }
            let addrs = resolve(&url.host, url.port)
                .and_then(|a| {
                    if a.is_empty() {
                        Err("no address".to_owned())
                    } else {
                        Ok(a)
                    }
                })
                .map_err(|reason| EgressError::Resolve {
                    label: route.label.clone(),
                    host: url.host.clone(),
                    reason,
                })?;
            let id = RouteId::try_from(id).unwrap_or(RouteId::MAX);
            proxies.push(Some(Proxy {
                via: Arc::new(Via::new(id, url)),
                addrs: addrs.into(),
                open: AtomicU32::new(0),
                down_since: AtomicU64::new(0),
                retry_at: AtomicU64::new(0),
                misses: AtomicU32::new(0),
                auth_failed: AtomicBool::new(false),
            }));
        }
        Ok(Self {
            routes,
            proxies,
            per_proxy: per_proxy.max(1),
            epoch: Instant::now(),
            down_limit: DEFAULT_PROXY_DOWN,
        })
    }

    /// Sets how long a proxy may stay down before its URLs fail for good
    /// (`--proxy-down-secs`).
    #[must_use]
    pub fn with_down_limit(mut self, limit: Duration) -> Self {
        self.down_limit = limit;
        self
    }

    /// The route of a scheduling key (`scheme://host[:port]`, as
    /// `routing::HostKey` writes it).
    pub fn route_of_key(&self, host_key: &str) -> RouteId {
        let (https, rest) = match host_key.split_once("://") {
            Some((scheme, rest)) => (scheme.eq_ignore_ascii_case("https"), rest),
            None => (false, host_key),
        };
        // Strip a port: after the last ':' past any IPv6 literal's ']'.
        let host = match rest.rfind(':') {
            Some(i)
                if !rest[i..].contains(']')
                    && rest[i + 1..].bytes().all(|b| b.is_ascii_digit()) =>
            {
                &rest[..i]
            }
            _ => rest,
        };
        self.pick(https, host)
    }

    /// The health of route `id` at `now`.
    pub fn state(&self, id: RouteId, now: Instant) -> RouteState {
        let Some(p) = self.proxy(id) else {
            return RouteState::Up;
        };
        if p.auth_failed.load(Ordering::Acquire) {
            return RouteState::AuthFailed;
        }
        let since = p.down_since.load(Ordering::Acquire);
        if since == 0 {
            return RouteState::Up;
        }
        let at = self.micros(now);
        if at.saturating_sub(since) > u64::try_from(self.down_limit.as_micros()).unwrap_or(u64::MAX)
        {
            return RouteState::GaveUp;
        }
        let retry = p.retry_at.load(Ordering::Acquire);
        if at < retry {
            RouteState::Paused(self.epoch + Duration::from_micros(retry))
        } else {
            RouteState::Up
        }
    }

    /// Route `id`'s proxy did not answer (refused, reset, timed out): its hosts pause,
    /// 1, 2, 4, then 8 s at most between tries. Returns the state after.
    pub fn note_unreachable(&self, id: RouteId, now: Instant) -> RouteState {
        if let Some(p) = self.proxy(id) {
            let at = self.micros(now).max(1);
            let _ = p
                .down_since
                .compare_exchange(0, at, Ordering::AcqRel, Ordering::Acquire);
            let misses = p.misses.fetch_add(1, Ordering::AcqRel).min(3);
            let pause = Duration::from_secs(1 << misses).min(MAX_PROXY_PAUSE);
            let retry = at + u64::try_from(pause.as_micros()).unwrap_or(u64::MAX);
            p.retry_at.fetch_max(retry, Ordering::AcqRel);
        }
        self.state(id, now)
    }

    /// Route `id`'s proxy answered: the outage, if any, is over.
    pub fn note_answered(&self, id: RouteId) {
        if let Some(p) = self.proxy(id) {
            if p.down_since.load(Ordering::Acquire) != 0 {
                p.down_since.store(0, Ordering::Release);
                p.misses.store(0, Ordering::Release);
                p.retry_at.store(0, Ordering::Release);
            }
        }
    }

    /// Route `id`'s proxy refused the credentials: its URLs fail from now on, without
    /// asking it again (a resume reads the credentials again and tries).
    pub fn note_auth_failed(&self, id: RouteId) {
        if let Some(p) = self.proxy(id) {
            p.auth_failed.store(true, Ordering::Release);
        }
    }

    fn micros(&self, now: Instant) -> u64 {
        u64::try_from(now.saturating_duration_since(self.epoch).as_micros()).unwrap_or(u64::MAX)
    }

    /// The route table.
    pub fn routes(&self) -> &Routes {
        &self.routes
    }

    /// The route for a URL of scheme `https` (or http) on `host`.
    pub fn pick(&self, https: bool, host: &str) -> RouteId {
        self.routes.pick(https, host)
    }

    /// The proxy of route `id` (`None`: direct).
    pub(crate) fn via(&self, id: RouteId) -> Option<&Arc<Via>> {
        self.proxy(id).map(|p| &p.via)
    }

    /// Whether the proxy of route `id` resolves origin names itself (an HTTP proxy,
    /// `socks5h`): trawl's resolver is then not asked, and trawl never learns the
    /// origin's address.
    pub fn resolves_names(&self, id: RouteId) -> bool {
        self.proxy(id).is_some_and(|p| {
            matches!(
                p.via.kind,
                ProxyKind::Http | ProxyKind::Https | ProxyKind::Socks5h
            )
        })
    }

    /// The address to connect to for route `id`'s proxy, the `attempt`-th choice
    /// (attempts go round its addresses).
    pub fn proxy_addr(&self, id: RouteId, attempt: usize) -> Option<SocketAddr> {
        let p = self.proxy(id)?;
        p.addrs.get(attempt % p.addrs.len().max(1)).copied()
    }

    /// Connections open to route `id`'s proxy, across the process.
    pub fn open(&self, id: RouteId) -> u32 {
        self.proxy(id).map_or(0, |p| p.open.load(Ordering::Relaxed))
    }

    /// The `--per-proxy-connections` cap.
    pub fn per_proxy(&self) -> u32 {
        self.per_proxy
    }

    /// A connection slot of route `id`'s proxy, if it has fewer than the cap open.
    pub fn try_slot(self: &Arc<Self>, id: RouteId) -> Option<ProxySlot> {
        let p = self.proxy(id)?;
        p.open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.per_proxy).then_some(n + 1)
            })
            .ok()?;
        Some(ProxySlot {
            egress: Arc::clone(self),
            id,
        })
    }

    fn proxy(&self, id: RouteId) -> Option<&Proxy> {
        if id == DIRECT {
            return None;
        }
        self.proxies.get(usize::from(id))?.as_ref()
    }
}

impl RouteHealth for Egress {
    fn state(&self, host_key: &str, now: Instant) -> RouteState {
        Egress::state(self, self.route_of_key(host_key), now)
    }

    fn note(
        &self,
        host_key: &str,
        error: Option<&FailReason>,
        now: Instant,
    ) -> Option<ProxyFailKind> {
        let id = self.route_of_key(host_key);
        if id == DIRECT {
            return None;
        }
        match error {
            Some(FailReason::Proxy(p)) => {
                match p.kind {
                    ProxyFailKind::Unreachable => {
                        self.note_unreachable(id, now);
                    }
                    ProxyFailKind::Auth => self.note_auth_failed(id),
                    // It answered, if with an error of its own.
                    ProxyFailKind::Error | ProxyFailKind::Protocol => self.note_answered(id),
                }
                Some(p.kind)
            }
            _ => {
                self.note_answered(id);
                None
            }
        }
    }

    fn label(&self, host_key: &str) -> &str {
        &self.routes.route(self.route_of_key(host_key)).label
    }
}

/// One route's figures for `stats.json` and the status page: never a credential, only
/// where it came from.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RouteStats {
    /// `direct`, a rules file's name, or the proxy URL without credentials.
    pub label: String,
    /// `direct`, `http`, `socks5` or `socks5h`.
    pub kind: String,
    /// The proxy's `host:port` (empty for direct).
    pub endpoint: String,
    /// `none`, or where the credentials came from (`url:--proxy`, `file:/abs/path`,
    /// `env:NAME`).
    pub credentials: String,
    /// Connections open to the proxy now, across the process.
    pub open_connections: u32,
    /// `up`, `paused` (down, its hosts waiting for the next try), `gave-up` (down past
    /// `--proxy-down-secs`) or `auth-failed`.
    pub state: String,
    /// Seconds the current outage has lasted (0 when up).
    pub down_secs: f64,
}

impl Egress {
    /// Every route's figures at `now`, direct first.
    pub fn route_stats(&self, now: Instant) -> Vec<RouteStats> {
        let at = self.micros(now);
        self.routes
            .routes()
            .iter()
            .enumerate()
            .map(|(i, route)| {
                let id = RouteId::try_from(i).unwrap_or(DIRECT);
                let p = self.proxy(id);
                let since = p.map_or(0, |p| p.down_since.load(Ordering::Acquire));
                RouteStats {
                    label: route.label.clone(),
                    kind: route
                        .proxy
                        .as_ref()
                        .map_or("direct", |u| u.kind.scheme())
                        .to_owned(),
                    endpoint: route
                        .proxy
                        .as_ref()
                        .map_or_else(String::new, |u| format!("{}:{}", u.host, u.port)),
                    credentials: route
                        .proxy
                        .as_ref()
                        .and_then(|u| u.auth.as_ref())
                        .map_or_else(|| "none".to_owned(), |c| c.source.to_string()),
                    open_connections: self.open(id),
                    state: match self.state(id, now) {
                        RouteState::Up if since != 0 => "paused",
                        RouteState::Up => "up",
                        RouteState::Paused(_) => "paused",
                        RouteState::GaveUp => "gave-up",
                        RouteState::AuthFailed => "auth-failed",
                    }
                    .to_owned(),
                    down_secs: if since == 0 {
                        0.0
                    } else {
                        at.saturating_sub(since) as f64 / 1e6
                    },
                }
            })
            .collect()
    }
}

/// A short fingerprint of a node's routes and number of source addresses, for the
/// farm's settings (every node must route alike); `None` with neither.
pub fn fingerprint(egress: Option<&Egress>, bind_count: usize) -> Option<String> {
    if egress.is_none() && bind_count == 0 {
        return None;
    }
    use sha1::Digest as _;
    let text = format!(
        "{}|bind={bind_count}",
        egress.map_or_else(String::new, |e| e.routes.describe())
    );
    let digest = sha1::Sha1::digest(text.as_bytes());
    Some(digest.iter().take(8).map(|b| format!("{b:02x}")).collect())
}

/// One open connection to a proxy; the count goes down when it is dropped, whatever
/// closed the connection.
pub struct ProxySlot {
    egress: Arc<Egress>,
    id: RouteId,
}

impl Drop for ProxySlot {
    fn drop(&mut self) {
        if let Some(p) = self.egress.proxy(self.id) {
            p.open.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl fmt::Debug for ProxySlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ProxySlot").field(&self.id).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::egress::rules::RouteSpec;

    fn egress(proxy: &str, per_proxy: u32) -> Result<Arc<Egress>, EgressError> {
        let routes = Routes::build(RouteSpec {
            proxy: Some(proxy),
            ..RouteSpec::default()
        })
        .expect("routes");
        Egress::with_resolver(routes, per_proxy, |host, port| {
            if host == "proxy.test" {
                Ok(vec![
                    SocketAddr::from(([127, 0, 0, 9], port)),
                    SocketAddr::from(([127, 0, 0, 10], port)),
                ])
            } else {
                Err("no such name".to_owned())
            }
        })
        .map(Arc::new)
    }

    #[test]
    fn the_cap_counts_open_connections_and_a_drop_gives_the_slot_back() {
        let e = egress("http://proxy.test:3128", 2).expect("egress");
        let id = e.pick(false, "a.test");
        assert_ne!(id, DIRECT);
        let a = e.try_slot(id).expect("first");
        let _b = e.try_slot(id).expect("second");
        assert!(e.try_slot(id).is_none());
        assert_eq!(e.open(id), 2);
        drop(a);
        assert!(e.try_slot(id).is_some());
        assert!(e.try_slot(DIRECT).is_none(), "direct has no proxy slot");
    }

    #[test]
    fn proxy_addresses_go_round_and_names_resolve_where_the_kind_says() {
        let e = egress("http://proxy.test:3128", 8).expect("egress");
        let id = e.pick(true, "a.test");
        assert_eq!(
            e.proxy_addr(id, 0),
            Some(SocketAddr::from(([127, 0, 0, 9], 3128)))
        );
        assert_eq!(
            e.proxy_addr(id, 3),
            Some(SocketAddr::from(([127, 0, 0, 10], 3128)))
        );
        assert!(e.resolves_names(id));
        assert!(!e.resolves_names(DIRECT));
        let s = egress("socks5://proxy.test", 8).expect("egress");
        assert!(!s.resolves_names(s.pick(false, "a.test")));
        let h = egress("socks5h://proxy.test", 8).expect("egress");
        assert!(h.resolves_names(h.pick(false, "a.test")));
    }

    #[test]
    fn https_proxies_and_unresolvable_proxies_are_refused_without_credentials() {
        let e = egress("https://u:secret@proxy.test", 8).expect_err("https proxy");
        assert!(matches!(e, EgressError::HttpsProxy { .. }));
        assert!(!e.to_string().contains("secret"), "{e}");
        let e = egress("http://u:secret@nowhere.test", 8).expect_err("unresolvable");
        assert!(e.to_string().contains("nowhere.test"), "{e}");
        assert!(!e.to_string().contains("secret"), "{e}");
    }

    #[test]
    fn a_proxy_down_pauses_its_route_doubling_to_8_s_and_gives_up_past_the_limit() {
        let e = egress("http://proxy.test:3128", 8).expect("egress");
        let e = Arc::try_unwrap(e)
            .expect("one owner")
            .with_down_limit(Duration::from_secs(20));
        let id = e.pick(false, "a.test");
        let t0 = e.epoch + Duration::from_secs(1);
        assert_eq!(e.state(id, t0), RouteState::Up);
        let pauses: Vec<Duration> = (0..5)
            .map(|_| match e.note_unreachable(id, t0) {
                RouteState::Paused(until) => until - t0,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(pauses.last(), Some(&Duration::from_secs(8)));
        assert!(pauses.windows(2).all(|w| w[0] <= w[1]), "{pauses:?}");
        assert_eq!(
            e.state(id, t0 + Duration::from_secs(9)),
            RouteState::Up,
            "time to try again"
        );
        assert_eq!(
            e.state(id, t0 + Duration::from_secs(21)),
            RouteState::GaveUp
        );
        e.note_answered(id);
        assert_eq!(e.state(id, t0 + Duration::from_secs(21)), RouteState::Up);
        e.note_auth_failed(id);
        assert_eq!(e.state(id, t0), RouteState::AuthFailed);
        assert_eq!(e.state(DIRECT, t0), RouteState::Up);
    }

    #[test]
    fn a_scheduling_key_finds_the_route_of_its_host() {
        let routes = Routes::build(RouteSpec {
            rules: Some((
                "r",
                "a.test http://proxy.test:1\nhttps:[::1] http://proxy.test:2\n",
            )),
            ..RouteSpec::default()
        })
        .expect("routes");
        let e = Egress::with_resolver(routes, 8, |_, port| {
            Ok(vec![SocketAddr::from(([127, 0, 0, 1], port))])
        })
        .expect("egress");
        assert_ne!(e.route_of_key("http://a.test:8080"), DIRECT);
        assert_ne!(e.route_of_key("http://a.test"), DIRECT);
        assert_eq!(e.route_of_key("http://b.test"), DIRECT);
        assert_ne!(e.route_of_key("https://[::1]:8443"), DIRECT);
        assert_ne!(e.route_of_key("https://[::1]"), DIRECT);
        assert_eq!(e.route_of_key("http://[::1]"), DIRECT);
    }

    #[test]
    fn the_farm_fingerprint_ignores_credentials_and_sees_routes_and_bind_count() {
        let a = egress("http://u:one@proxy.test:3128", 8).expect("egress");
        let b = egress("http://v:two@proxy.test:3128", 8).expect("egress");
        let c = egress("http://proxy.test:3129", 8).expect("egress");
        assert_eq!(fingerprint(None, 0), None);
        assert_eq!(fingerprint(Some(&a), 0), fingerprint(Some(&b), 0));
        assert_ne!(fingerprint(Some(&a), 0), fingerprint(Some(&c), 0));
        assert_ne!(fingerprint(Some(&a), 0), fingerprint(Some(&a), 2));
        assert_eq!(fingerprint(Some(&a), 0).map(|f| f.len()), Some(16));
    }
}
