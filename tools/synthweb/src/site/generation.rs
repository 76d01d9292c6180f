//! How the web of this generation differs from generation 0 (see [`crate::changes`]):
//! changed, vanished and new pages.

use crate::changes::{self, Change};
use crate::hosts::HostRole;

use super::response::Scheme;
use super::target::parse_u32;
use super::Site;

impl Site {
    /// How `path` (a request-target in canonical form) on host `index` differs from
    /// generation 0 (see [`crate::changes`]). Only ordinary hosts change.
    #[must_use]
    pub fn change_at(&self, index: u32, path: &str) -> Option<Change> {
        if !changes::active(&self.cfg) || self.role(index) != HostRole::Normal {
            return None;
        }
        if path == "/" {
            return (self.new_page_count(index) > 0).then_some(Change::Changed);
        }
        if let Some(k) = path.strip_prefix("/p/").and_then(parse_u32) {
            if k >= 1 && k < self.page_count(index) {
                return changes::of_page(&self.cfg, index, k);
            }
            return None;
        }
        let k = path.strip_prefix("/new/").and_then(parse_u32)?;
        (k < self.new_page_count(index)).then_some(Change::New)
    }

    /// Whether `path` on host `index` vanished in this generation.
    #[must_use]
    pub fn is_gone(&self, index: u32, path: &str) -> bool {
        matches!(self.change_at(index, path), Some(Change::Gone(_)))
    }

    /// Pages `/new/0..n` host `index` gained in this generation.
    #[must_use]
    pub fn new_page_count(&self, index: u32) -> u32 {
        if !changes::active(&self.cfg) || self.role(index) != HostRole::Normal {
            return 0;
        }
        changes::new_pages(&self.cfg, self.page_count(index))
    }

    /// Every URL (canonical, HTTP) that differs from generation 0, with how, host by
    /// host in page order: the root, `/p/k`, then `/new/k`.
    pub fn changes(&self) -> impl Iterator<Item = (String, Change)> + '_ {
        (0..self.cfg.hosts)
            .filter(move |&i| changes::active(&self.cfg) && self.role(i) == HostRole::Normal)
            .flat_map(move |i| {
                let root = self
                    .change_at(i, "/")
                    .map(|c| (self.url(Scheme::Http, i, "/"), c));
                let pages = (1..self.page_count(i)).filter_map(move |k| {
                    changes::of_page(&self.cfg, i, k)
                        .map(|c| (self.url(Scheme::Http, i, &format!("/p/{k}")), c))
                });
                let new = (0..self.new_page_count(i))
                    .map(move |k| (self.url(Scheme::Http, i, &format!("/new/{k}")), Change::New));
                root.into_iter().chain(pages).chain(new)
            })
    }
}
