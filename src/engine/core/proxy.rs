//! Proxy failures in the core (issue 29): a proxy that is down pauses the hosts of its
//! route instead of failing them, and a proxy that refused the credentials ends its
//! route's URLs. The health itself is kept behind the shared [`RouteHealth`] (every
//! shard and fetcher sees the same), so one shard's discovery pauses the route for all.
//!
//! [`RouteHealth`]: crate::fetch::RouteHealth

use std::time::Instant;

use crate::fetch::{FetchOutcome, ProxyFailKind, RouteState};

use super::{Core, Now};

/// The annotation of a fetch that failed on its proxy being down: the URL is retried
/// when the proxy is tried again.
pub(crate) const PROXY_DOWN_RETRY: &str = "proxy-down:retry";
/// The annotation of a URL declined because its proxy stayed down past
/// `--proxy-down-secs`.
pub(crate) const PROXY_GAVE_UP: &str = "proxy-down:gave-up";
/// The annotation of a URL declined because its proxy refused the credentials.
pub(crate) const PROXY_AUTH: &str = "proxy-auth";

impl Core {
    /// Tells the route's health what `o` says about its proxy, and returns the
    /// proxy's failure kind when the fetch failed on the proxy. Direct hosts and
    /// crawls without proxies: `None`, and nothing else happens.
    pub(super) fn note_route_health(
        &self,
        host: &str,
        o: &FetchOutcome,
        now: Now,
    ) -> Option<ProxyFailKind> {
        let routes = self.shared.settings.routes.as_ref()?;
        routes.note(host, o.error.as_ref(), now.at)
    }

    /// Until when `host`'s URLs wait after a failure of `kind` on its proxy: the
    /// route's pause for an unreachable proxy; `None` for any other failure, or once
    /// the proxy has been down longer than `--proxy-down-secs` (then the failure is
    /// final).
    pub(super) fn proxy_pause(&self, host: &str, kind: ProxyFailKind, now: Now) -> Option<Instant> {
        if kind != ProxyFailKind::Unreachable {
            return None;
        }
        let routes = self.shared.settings.routes.as_ref()?;
        match routes.state(host, now.at) {
            RouteState::Paused(until) => Some(until),
            // Its pause already ended (another shard's answer came first): try again
            // after a second.
            RouteState::Up => Some(now.at + super::secs(1)),
            RouteState::GaveUp | RouteState::AuthFailed => None,
        }
    }
}
