//! The crawl core's words for proxy routes (issue 29): whether the route a host takes
//! is up, paused or given up, and what a fetch's failure told about its proxy. The
//! network layer keeps the routes and their health (`net::egress::book::Egress`
//! implements [`RouteHealth`]); the core only asks, through this trait, so it names no
//! type of the network layer.

use std::fmt;
use std::time::Instant;

use super::{FailReason, ProxyFailKind};

/// A proxy route's health, as the core reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RouteState {
    /// Answering (or direct).
    Up,
    /// Down: its hosts wait until this instant.
    Paused(Instant),
    /// Down for longer than `--proxy-down-secs`: its URLs fail for good.
    GaveUp,
    /// The proxy refused the credentials.
    AuthFailed,
}

/// The routes of a crawl and their health, shared by every shard and fetcher.
pub trait RouteHealth: Send + Sync + fmt::Debug {
    /// The health of the route `host_key` (`scheme://host[:port]`) takes at `now`.
    fn state(&self, host_key: &str, now: Instant) -> RouteState;

    /// Tells the route of `host_key` what a fetch's `error` says about its proxy (no
    /// error, or the origin's: it answered), and returns the proxy's failure kind when
    /// the fetch failed on the proxy. `None` for a direct host.
    fn note(
        &self,
        host_key: &str,
        error: Option<&FailReason>,
        now: Instant,
    ) -> Option<ProxyFailKind>;

    /// The label of the route `host_key` takes (`direct`, a rules file's name, or the
    /// proxy URL without credentials), for the crawl log and the figures.
    fn label(&self, host_key: &str) -> &str;
}
