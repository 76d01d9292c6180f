//! [`Via`]: what a connection needs to know about the proxy on its route, prepared once
//! per route (the `Proxy-Authorization` line is encoded once, not per request).
//!
//! A job of a proxied route has the route's id in its pool key (`PoolKey::via`), and
//! the connection opened for it an `Arc<Via>` (`Conn::via`); direct, they are 0 and
//! `None`, so a direct request pays nothing. The connection phases read it to choose
//! their path (`net/conn/connecting.rs`).

use std::fmt;

use super::secret::{Credentials, Secret};
use super::url::{ProxyKind, ProxyUrl};

/// The proxy of one route, as the connection phases use it.
pub(crate) struct Via {
    /// The route's id (`Routes::pick`; never 0, which is `direct`).
    pub id: u16,
    /// The protocol spoken to the proxy.
    pub kind: ProxyKind,
    /// The whole `Proxy-Authorization: Basic …\r\n` line, for HTTP proxies.
    pub basic: Option<Secret>,
    /// The user name and password, for SOCKS5 (RFC 1929).
    pub creds: Option<Credentials>,
}

impl Via {
    /// The route `id` through `proxy`.
    pub fn new(id: u16, proxy: &ProxyUrl) -> Self {
        let http = matches!(proxy.kind, ProxyKind::Http | ProxyKind::Https);
        Self {
            id,
            kind: proxy.kind,
            basic: proxy
                .auth
                .as_ref()
                .filter(|_| http)
                .map(Credentials::basic_header),
            creds: proxy.auth.clone().filter(|_| !http),
        }
    }

    /// Whether plain-HTTP requests go to this proxy in absolute form (an HTTP proxy),
    /// rather than through a tunnel.
    pub fn is_http(&self) -> bool {
        matches!(self.kind, ProxyKind::Http | ProxyKind::Https)
    }
}

impl fmt::Debug for Via {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Via")
            .field("id", &self.id)
            .field("kind", &self.kind)
            .field("auth", &(self.basic.is_some() || self.creds.is_some()))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_http_route_keeps_the_header_line_and_a_socks_route_the_credentials() {
        let http = ProxyUrl::parse("http://u:pw@proxy.test:3128", "--proxy").expect("url");
        let v = Via::new(1, &http);
        assert!(v.is_http() && v.creds.is_none());
        assert_eq!(
            v.basic.as_ref().map(Secret::expose),
            Some(&b"Proxy-Authorization: Basic dTpwdw==\r\n"[..])
        );
        assert!(!format!("{v:?}").contains("dTpw"));
        let socks = ProxyUrl::parse("socks5h://u:pw@proxy.test", "--proxy").expect("url");
        let v = Via::new(2, &socks);
        assert!(!v.is_http() && v.basic.is_none());
        assert_eq!(v.creds.as_ref().map(|c| c.user.as_str()), Some("u"));
        let bare = ProxyUrl::parse("socks5://proxy.test", "--proxy").expect("url");
        let v = Via::new(3, &bare);
        assert!(v.basic.is_none() && v.creds.is_none());
    }
}
