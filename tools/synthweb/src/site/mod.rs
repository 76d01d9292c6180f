//! The generator: for any `(scheme, host, target)` what the server answers, and the
//! outgoing links of the page as the generator intends them. Pure: no I/O, no clock, no
//! per-host state. The server (crate::server) and the manifest walker both use this.

use std::net::Ipv4Addr;

use crate::coding::{self, Coding};
use crate::config::{ConfigError, SiteConfig};
use crate::hash::{hash_words, Rng};
use crate::hosts::{self, HostRole, TrapKind};
use crate::html::Origin;

mod bench_pages;
mod builder;
mod generation;
mod html_page;
pub mod hub;
mod response;
mod robots_txt;
mod routes;
mod specials;
mod target;
mod traps;
mod validators;

pub use response::{Conditions, Framing, PageView, Response, Scheme, MAX_TARGET_BYTES};
pub use robots_txt::RobotsModel;
pub use target::normalize_target;

use response::simple;

/// The synthetic web.
#[derive(Debug, Clone)]
pub struct Site {
    cfg: SiteConfig,
}

const MILLION: u32 = 1_000_000;

impl Site {
    /// Build a site.
    ///
    /// # Errors
    /// The config's first [`ConfigError`].
    pub fn new(cfg: SiteConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(Self { cfg })
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &SiteConfig {
        &self.cfg
    }

    /// Number of hosts.
    #[must_use]
    pub fn host_count(&self) -> u32 {
        self.cfg.hosts
    }

    /// Name of host `index`.
    #[must_use]
    pub fn host_name(&self, index: u32) -> String {
        hosts::host_name(self.cfg.hosts, index)
    }

    /// Index for a Host header value (port ignored, case-insensitive).
    #[must_use]
    pub fn host_index(&self, host_header: &str) -> Option<u32> {
        hosts::host_index(self.cfg.hosts, host_header)
    }

    /// Loopback address of host `index`.
    #[must_use]
    pub fn host_addr(&self, index: u32) -> Ipv4Addr {
        hosts::host_addr(&self.cfg, index)
    }

    /// Role of host `index`.
    #[must_use]
    pub fn role(&self, index: u32) -> HostRole {
        hosts::role(self.cfg.profiles, index)
    }

    /// Port for a scheme.
    #[must_use]
    pub fn port(&self, scheme: Scheme) -> u16 {
        match scheme {
            Scheme::Http => self.cfg.http_port,
            Scheme::Https => self.cfg.tls_port.unwrap_or(self.cfg.http_port),
        }
    }

    /// Origin of a host.
    #[must_use]
    pub fn origin(&self, scheme: Scheme, index: u32) -> Origin {
        Origin {
            scheme: scheme.as_str(),
            host: self.host_name(index),
            port: self.port(scheme),
        }
    }

    /// Canonical URL `scheme://host:port{path_q}`.
    #[must_use]
    pub fn url(&self, scheme: Scheme, index: u32, path_q: &str) -> String {
        format!("{}{}", self.origin(scheme, index).canonical(), path_q)
    }

    /// Seed host indices: host 0, every special host of the active profiles, and every
    /// `seed_stride`-th host; in hub mode every hub.
    pub fn seed_hosts(&self) -> impl Iterator<Item = u32> + '_ {
        let end = self.cfg.hubs.unwrap_or(self.cfg.hosts);
        (0..end).filter(move |&i| {
            self.cfg.hubs.is_some()
                || i == 0
                || i % self.cfg.seed_stride == 0
                || self.role(i) != HostRole::Normal
        })
    }

    /// Seed URLs, one per seed host root (HTTP, or HTTPS for a mesh's HTTPS-only host).
    pub fn seeds(&self) -> impl Iterator<Item = String> + '_ {
        self.seed_hosts()
            .map(|i| self.url(self.link_scheme(Scheme::Http, i), i, "/"))
    }

    /// Whether host `index` is HTTPS-only (mesh mode's `https_percent`; never host 0).
    #[must_use]
    pub fn is_https_only(&self, index: u32) -> bool {
        self.cfg.mesh.is_some_and(|m| {
            index != 0
                && hash_words(&[self.cfg.seed, u64::from(index), 0x7715]) % 100
                    < u64::from(m.https_percent)
        })
    }

    /// The scheme of a link to host `index` from a page served over `from`: the
    /// host's own scheme in mesh mode (HTTPS-only hosts are linked `https://`, the
    /// others `http://`), else the page's.
    #[must_use]
    pub fn link_scheme(&self, from: Scheme, index: u32) -> Scheme {
        match self.cfg.mesh {
            Some(_) if self.is_https_only(index) => Scheme::Https,
            Some(_) => Scheme::Http,
            None => from,
        }
    }

    /// The content coding of a response for an `Accept-Encoding` value: none in mesh
    /// mode (every page then costs the same bytes on a paced server), else negotiated.
    #[must_use]
    pub fn coding_for(&self, accept_encoding: Option<&str>) -> Coding {
        if self.cfg.mesh.is_some() {
            Coding::Identity
        } else {
            coding::negotiate(accept_encoding)
        }
    }

    /// The name of dead host `k` of mesh mode, e.g. `d000042.dead.test`.
    #[must_use]
    pub fn dead_name(&self, k: u32) -> String {
        format!(
            "d{k:0w$}.{}",
            crate::config::DEAD_DOMAIN,
            w = hosts::name_width(self.cfg.hosts)
        )
    }

    /// Pages `/p/1..n` of a host (`n` exclusive).
    #[must_use]
    pub fn page_count(&self, index: u32) -> u32 {
        if self.role(index) == HostRole::Trap(TrapKind::MillionPages) {
            return MILLION;
        }
        let mut r = Rng::new(hash_words(&[self.cfg.seed, u64::from(index), 0x5A6E]));
        r.range(
            u64::from(self.cfg.pages_per_host.min),
            u64::from(self.cfg.pages_per_host.max),
        ) as u32
    }

    /// The response to `GET target` for a Host header value, with content coding applied
    /// per `coding` (only to 200 responses with a textual type). Unknown hosts get 404.
    #[must_use]
    pub fn representation(
        &self,
        scheme: Scheme,
        host_header: &str,
        target: &str,
        coding: Coding,
    ) -> Response {
        let Some(index) = self.host_index(host_header) else {
            return simple(404, "text/plain; charset=utf-8", b"unknown host\n".to_vec());
        };
        let coding = if self.cfg.mesh.is_some() {
            Coding::Identity
        } else {
            coding
        };
        let mut resp = self.page(scheme, index, target).response;
        if coding != Coding::Identity && resp.status == 200 && resp.hostile.is_none() {
            let textual = resp
                .header("Content-Type")
                .is_some_and(|t| t.starts_with("text/") || t.starts_with("application/json"));
            if textual {
                if let Ok(enc) = coding::encode(coding, &resp.body) {
                    resp.body = enc;
                    if let Some(tok) = coding.token() {
                        resp.headers.push(("Content-Encoding", tok.to_owned()));
                        // A strong ETag names one representation: each coding gets its own.
                        for (n, v) in &mut resp.headers {
                            if *n == "ETag" {
                                *v = format!("{}-{tok}\"", v.trim_end_matches('"'));
                            }
                        }
                    }
                    resp.headers.push(("Vary", "Accept-Encoding".to_owned()));
                }
            }
        }
        resp
    }

    /// Everything about `target` on host `index`: the identity-coded response and the
    /// links the page carries.
    #[must_use]
    pub fn page(&self, scheme: Scheme, index: u32, target: &str) -> PageView {
        let role = self.role(index);
        let mut view = if target.len() > MAX_TARGET_BYTES {
            self.plain_view(
                role,
                simple(414, "text/plain; charset=utf-8", b"URI too long\n".to_vec()),
            )
        } else {
            let t = normalize_target(target);
            let (path, query) = match t.split_once('?') {
                Some((p, q)) => (p, Some(q)),
                None => (t.as_str(), None),
            };
            if self.cfg.hubs.is_some() {
                if path == "/robots.txt" && query.is_none() {
                    self.hub_robots_view(index)
                } else {
                    self.hub_page(scheme, index, path, query)
                }
            } else if path == "/robots.txt" && query.is_none() {
                self.robots_view(scheme, index, role)
            } else {
                match role {
                    HostRole::Trap(kind) => self.trap_page(scheme, index, kind, path, query),
                    HostRole::Normal | HostRole::Hostile(_) => {
                        self.normal_page(scheme, index, role, &t, path, query)
                    }
                }
            }
        };
        if let HostRole::Hostile(kind) = role {
            let applies = !(kind.is_tls_only() && scheme == Scheme::Http)
                && normalize_target(target) != "/robots.txt";
            if applies {
                view.response.hostile = Some(kind);
                if !kind.delivers_page() {
                    view.links.clear();
                }
            }
        }
        view
    }
}
