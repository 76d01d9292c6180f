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
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use super::rules::{RouteId, Routes, DIRECT};
use super::url::ProxyKind;
use super::via::Via;

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

/// One proxy route, ready to connect.
struct Proxy {
    via: Arc<Via>,
    addrs: Box<[SocketAddr]>,
    open: AtomicU32,
}

/// The routes and, per proxy route, its addresses, `Via` and open-connection count.
pub struct Egress {
    routes: Routes,
    /// Indexed by [`RouteId`]; `None` for [`DIRECT`].
    proxies: Vec<Option<Proxy>>,
    per_proxy: u32,
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
            }));
        }
        Ok(Self {
            routes,
            proxies,
            per_proxy: per_proxy.max(1),
        })
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
}
