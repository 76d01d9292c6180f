//! Hub mode (`--hubs H`, issue 26 "A million hosts"): a breadth crawl's web, where a
//! few thousand fetched pages name a million hosts and each of those hosts is finished
//! after a robots.txt and three pages.
//!
//! Hosts `0..H` are hubs, hosts `H..H + 1,000·H` leaves. A hub has 10 pages (`/` and
//! `/p/1..=9`); hub page `k` links the hub's 9 other pages and the roots of 100 distinct
//! leaves, `H + 1,000·hub + 100·k .. + 99`, so each leaf is named by exactly one hub page.
//! A leaf has 3 small pages (`/`, `/p/1`, `/p/2`, 2 to 4 KB) that link one another and a
//! robots.txt: one leaf in ten a large one (10 to 30 KB of `Disallow` lines for paths
//! no page uses, and comments), the others two lines. Every page is allowed. Everything
//! is computed from the host number: no per-host state.

use crate::hash::{hash_words, Rng};
use crate::hosts::HostRole;
use crate::html::{self, Charset, Element, Link, LinkKind};

use super::response::{simple, Framing, PageView, Scheme};
use super::Site;

/// Pages of a hub: `/` and `/p/1..=9`.
pub const HUB_PAGES: u32 = 10;
/// Leaf roots one hub page links.
pub const LEAVES_PER_PAGE: u32 = 100;
/// Leaves one hub names.
pub const LEAVES_PER_HUB: u32 = HUB_PAGES * LEAVES_PER_PAGE;
/// Hosts per hub: the hub and its leaves (`hosts` = hubs × this).
pub const HOSTS_PER_HUB: u32 = 1 + LEAVES_PER_HUB;
/// Pages of a leaf: `/`, `/p/1`, `/p/2`.
pub const LEAF_PAGES: u32 = 3;
/// One leaf in this many has a large robots.txt.
pub const LARGE_ROBOTS_EVERY: u64 = 10;

/// Directories the large robots.txt files forbid: none is a prefix of `/` or `/p/`.
const DIRS: [&str; 16] = [
    "admin",
    "cgi-bin",
    "search",
    "cart",
    "checkout",
    "login",
    "account",
    "tmp",
    "old",
    "archive",
    "private",
    "wp-admin",
    "includes",
    "media/cache",
    "api/v1",
    "print",
];

/// What a host of hub mode is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HubHost {
    /// Hub `n` (its host index).
    Hub(u32),
    /// Leaf `n` of hub `hub` (0-based among all leaves).
    Leaf {
        /// Leaf number, 0 .. 1,000·hubs.
        n: u32,
        /// The hub whose page links it.
        hub: u32,
    },
}

impl Site {
    /// The hub-mode role of host `index` (`None` outside hub mode).
    #[must_use]
    pub fn hub_host(&self, index: u32) -> Option<HubHost> {
        let hubs = self.cfg.hubs?;
        if index < hubs {
            return Some(HubHost::Hub(index));
        }
        let n = index - hubs;
        Some(HubHost::Leaf {
            n,
            hub: n / LEAVES_PER_HUB,
        })
    }

    /// Whether leaf host `index` serves a large robots.txt.
    fn has_large_robots(&self, index: u32) -> bool {
        hash_words(&[self.cfg.seed, u64::from(index), 0x2606]) % LARGE_ROBOTS_EVERY == 0
    }

    /// The robots.txt of a hub-mode host (always 200, every page allowed).
    pub(super) fn hub_robots_view(&self, index: u32) -> PageView {
        let mut prng = Rng::new(hash_words(&[self.cfg.seed, u64::from(index), 0x7087]));
        let leaf = matches!(self.hub_host(index), Some(HubHost::Leaf { .. }));
        let mut body = String::from("User-agent: *\n");
        if leaf && self.has_large_robots(index) {
            let target = prng.range(10_000, 30_000) as usize;
            body.insert_str(0, "# robots.txt: what our crawlers may not visit\n");
            while body.len() < target {
                if prng.below(5) == 0 {
                    body.push_str("# ");
                    let mut line = String::new();
                    html::filler(&mut line, &mut prng, 60, Charset::Utf8);
                    let text = line
                        .replace("<p>", "")
                        .replace("</p>", "")
                        .replace('\n', " ");
                    body.push_str(text.trim());
                    body.push('\n');
                } else {
                    let dir = DIRS[prng.below(DIRS.len() as u64) as usize];
                    let n = prng.below(100_000);
                    body.push_str(&format!("Disallow: /{dir}/{n}/\n"));
                }
            }
            body.push_str("Allow: /\n");
        } else if prng.below(2) == 0 {
            body.push_str("Allow: /\n");
        } else {
            body.push_str("Disallow: /nothing\n");
        }
        let mut r = simple(200, "text/plain; charset=utf-8", body.into_bytes());
        self.validators(&mut r, index, "/robots.txt");
        self.plain_view(HostRole::Normal, r)
    }

    /// A page of a hub-mode host: `path` of host `index` (404 for any other path).
    pub(super) fn hub_page(
        &self,
        scheme: Scheme,
        index: u32,
        path: &str,
        query: Option<&str>,
    ) -> PageView {
        let page = match path {
            "/" => Some(0),
            _ => path
                .strip_prefix("/p/")
                .and_then(super::target::parse_u32)
                .filter(|&k| k >= 1),
        };
        let (hub, leaf) = match self.hub_host(index) {
            Some(HubHost::Hub(_)) => (true, false),
            Some(HubHost::Leaf { .. }) => (false, true),
            None => (false, false),
        };
        let pages = if hub { HUB_PAGES } else { LEAF_PAGES };
        match page {
            Some(k) if query.is_none() && (hub || leaf) && k < pages => {
                self.hub_html(scheme, index, k, pages, hub)
            }
            _ => self.plain_view(
                HostRole::Normal,
                simple(
                    404,
                    "text/html; charset=utf-8",
                    b"<html><body><h1>404 Not Found</h1></body></html>\n".to_vec(),
                ),
            ),
        }
    }

    /// Page `k` of a hub (its other pages and 100 leaf roots) or a leaf (its other
    /// pages and filler up to 2 to 4 KB).
    fn hub_html(&self, scheme: Scheme, index: u32, k: u32, pages: u32, hub: bool) -> PageView {
        let mut prng = Rng::new(hash_words(&[
            self.cfg.seed,
            u64::from(index),
            u64::from(k),
            0x4B0B,
        ]));
        let origin = self.origin(scheme, index).canonical();
        let path_of = |j: u32| {
            if j == 0 {
                "/".to_owned()
            } else {
                format!("/p/{j}")
            }
        };
        let kind = if hub { "hub" } else { "leaf" };
        let mut html = format!(
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{kind} {index} page {k}</title></head>\n<body>\n<h1>{kind} {index}, page {k}</h1>\n"
        );
        let mut links = Vec::new();
        for j in (0..pages).filter(|&j| j != k) {
            let path = path_of(j);
            html.push_str(&format!("<a href=\"{path}\">page {j}</a>\n"));
            links.push(Link {
                element: Element::A,
                href: path.clone(),
                url: Some(format!("{origin}{path}")),
                kind: LinkKind::Follow,
            });
        }
        if hub {
            let hubs = self.cfg.hubs.unwrap_or(0);
            let first = hubs + index * LEAVES_PER_HUB + k * LEAVES_PER_PAGE;
            html.push_str("<ul>\n");
            for leaf in first..first + LEAVES_PER_PAGE {
                let url = format!("{}/", self.origin(scheme, leaf).canonical());
                html.push_str(&format!("<li><a href=\"{url}\">site {leaf}</a>\n"));
                links.push(Link {
                    element: Element::A,
                    href: url.clone(),
                    url: Some(url),
                    kind: LinkKind::Follow,
                });
            }
            html.push_str("</ul>\n");
        } else {
            let target = prng.range(2_000, 4_000) as usize;
            let want = target.saturating_sub(html.len() + 40);
            html::filler(&mut html, &mut prng, want, Charset::Utf8);
        }
        html.push_str("</body>\n</html>\n");
        let mut r = simple(200, "text/html; charset=utf-8", html.into_bytes());
        r.framing = Framing::ContentLength;
        self.validators(&mut r, index, &path_of(k));
        let mut view = self.plain_view(HostRole::Normal, r);
        view.links = links;
        view.charset = Some(Charset::Utf8);
        view
    }
}
