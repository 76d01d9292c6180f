//! A host's `/robots.txt`: what it answers and what it allows (the robots oracle).

use crate::hosts::HostRole;
use crate::robots::{self, RobotsEntry, RobotsFetch, RobotsVerdict};

use super::response::{simple, Framing, PageView, Scheme};
use super::Site;

/// What a host answers at `/robots.txt`.
#[derive(Debug, Clone)]
pub struct RobotsModel {
    /// Catalogue entry.
    pub entry: RobotsEntry,
    /// Status.
    pub status: u16,
    /// `Location` (canonical absolute URL) for redirect entries.
    pub location: Option<String>,
    /// Body bytes (as served, identity coding).
    pub body: Vec<u8>,
    /// The structured meaning.
    pub fetch: RobotsFetch,
}

impl Site {
    /// The robots catalogue entry of a host.
    #[must_use]
    pub fn robots_entry(&self, index: u32) -> RobotsEntry {
        // Hub mode's robots.txt files (site/hub.rs) allow every page there is.
        if self.cfg.mesh.is_some() || self.cfg.hubs.is_some() {
            return RobotsEntry::AllowAll;
        }
        robots::host_entry(self.cfg.profiles, index)
    }

    /// What `/robots.txt` of a host answers.
    #[must_use]
    pub fn robots(&self, scheme: Scheme, index: u32) -> RobotsModel {
        let entry = self.robots_entry(index);
        let fetch = entry.fetch();
        let location = match &fetch {
            RobotsFetch::Redirect {
                cross_host, path, ..
            } => Some(self.url(scheme, if *cross_host { 0 } else { index }, path)),
            _ => None,
        };
        RobotsModel {
            entry,
            status: entry.status(),
            location,
            body: entry.body(),
            fetch,
        }
    }

    /// The oracle: may `agent` fetch `path_and_query` on host `index`? Evaluated from the
    /// catalogue entry's structured rules with RFC 9309 semantics.
    #[must_use]
    pub fn robots_allows(
        &self,
        index: u32,
        agent: &str,
        path_and_query: &str,
        robots_4xx_disallow: bool,
    ) -> RobotsVerdict {
        robots::verdict(
            self.robots_entry(index),
            agent,
            path_and_query,
            robots_4xx_disallow,
        )
    }

    /// Crawl-delay (seconds) a host asks of `agent`.
    #[must_use]
    pub fn crawl_delay_secs(&self, index: u32, agent: &str) -> Option<u32> {
        match self.robots_entry(index).fetch() {
            RobotsFetch::Rules(g) => robots::crawl_delay_secs(&g, agent),
            RobotsFetch::Redirect { target, .. } => robots::crawl_delay_secs(&target, agent),
            _ => None,
        }
    }

    pub(super) fn robots_view(&self, scheme: Scheme, index: u32, role: HostRole) -> PageView {
        let m = self.robots(scheme, index);
        let mut resp = if m.status == 200 {
            let mut body = m.body;
            if self.cfg.profiles.sitemaps {
                if let Some(line) = crate::sitemaps::robots_line(self, scheme, index) {
                    body.extend_from_slice(line.as_bytes());
                }
            }
            if self.cfg.profiles.sitemap_chain {
                if let Some(lines) = crate::chain::robots_lines(self, scheme, index) {
                    body.extend_from_slice(lines.as_bytes());
                }
            }
            let mut r = simple(200, "text/plain; charset=utf-8", body);
            self.validators(&mut r, index, "/robots.txt");
            r
        } else if let Some(loc) = &m.location {
            let mut r = simple(
                m.status,
                "text/html; charset=utf-8",
                b"<p>moved</p>\n".to_vec(),
            );
            r.headers.push(("Location", loc.clone()));
            r
        } else {
            let mut r = simple(
                m.status,
                "text/html; charset=utf-8",
                format!("<html><body><h1>{}</h1></body></html>\n", m.status).into_bytes(),
            );
            if m.status == 503 {
                r.headers.push(("Retry-After", "3".to_owned()));
            }
            r
        };
        resp.framing = Framing::ContentLength;
        let mut v = self.plain_view(role, resp);
        v.redirect_to = m.location;
        v
    }
}
