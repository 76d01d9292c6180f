//! The benchmark webs' pages: wide mode (`--fanout`) and mesh mode (`--mesh`).

use crate::hash::Rng;
use crate::hosts::HostRole;
use crate::html::{self, Charset, CharsetLabel, Element, Link, LinkKind};

use super::builder::{encoded_len, Builder};
use super::html_page::PageKind;
use super::response::{Framing, PageView};
use super::Site;

/// What [`Site::wide_page`] needs of the page being built.
pub(super) struct WidePage<'a> {
    pub(super) index: u32,
    pub(super) role: HostRole,
    pub(super) full: &'a str,
    pub(super) label: CharsetLabel,
    pub(super) framing: Framing,
    pub(super) meta_robots: Option<&'a str>,
    pub(super) x_robots: Option<&'a str>,
}

impl Site {
    /// The body of a wide-mode page (see [`crate::config::SiteConfig::fanout`]): `fanout` absolute
    /// links to `/p/j` of random ordinary hosts (a special host's draw becomes host 0),
    /// padded to the page size when that is larger.
    pub(super) fn wide_page(
        &self,
        mut b: Builder<'_>,
        prng: &mut Rng,
        fanout: u32,
        target_bytes: usize,
        page: &WidePage<'_>,
    ) -> PageView {
        b.html.push_str("<body>\n");
        for _ in 0..fanout {
            let h = prng.below(u64::from(self.cfg.hosts)) as u32;
            let h = if self.role(h) == HostRole::Normal {
                h
            } else {
                0
            };
            let j = prng.range(1, u64::from(self.page_count(h) - 1));
            b.link(Element::A, h, &format!("/p/{j}"), LinkKind::Follow, "w");
        }
        let closing = "</body>\n</html>\n";
        let have = encoded_len(&b.html, b.charset);
        if have + closing.len() < target_bytes {
            let pad = target_bytes - have - closing.len();
            b.html.extend(std::iter::repeat_n(' ', pad));
        }
        b.html.push_str(closing);
        self.finish(
            b,
            page.index,
            page.role,
            page.full,
            page.label,
            page.framing,
            page.meta_robots,
            page.x_robots,
            None,
        )
    }

    /// The body of a mesh-mode page (see [`crate::config::Mesh`]): a link to every other
    /// page of its host, then `cross_links` absolute links to other hosts' roots (a
    /// `dead_percent` share of them to dead names), text spread between them, padded
    /// to the page size.
    pub(super) fn mesh_page(
        &self,
        mut b: Builder<'_>,
        prng: &mut Rng,
        mesh: crate::config::Mesh,
        kind: PageKind,
        target_bytes: usize,
        page: &WidePage<'_>,
    ) -> PageView {
        let index = page.index;
        let n_pages = self.page_count(index);
        let mut same: Vec<String> = Vec::with_capacity(n_pages as usize);
        if kind != PageKind::Root {
            same.push("/".to_owned());
        }
        for j in 1..n_pages {
            if kind != PageKind::Page(j) {
                same.push(format!("/p/{j}"));
            }
        }
        let per_link =
            target_bytes.saturating_sub(1_000) / (same.len() + mesh.cross_links as usize + 1);
        let text = |b: &mut Builder<'_>, prng: &mut Rng| {
            if per_link > 160 {
                html::filler(&mut b.html, prng, per_link - 120, Charset::Utf8);
            }
        };
        for path in same {
            text(&mut b, prng);
            b.link(Element::A, index, &path, LinkKind::Follow, "here");
        }
        for _ in 0..mesh.cross_links {
            text(&mut b, prng);
            if prng.below(100) < u64::from(mesh.dead_percent) {
                let k = prng.below(u64::from(self.cfg.hosts)) as u32;
                let url = format!("http://{}:{}/", self.dead_name(k), self.cfg.http_port);
                b.html.push_str(&format!("<a href=\"{url}\">gone</a>\n"));
                b.links.push(Link {
                    element: Element::A,
                    href: url.clone(),
                    url: Some(url),
                    kind: LinkKind::Follow,
                });
                continue;
            }
            let mut h = prng.below(u64::from(self.cfg.hosts)) as u32;
            if h == index && self.cfg.hosts > 1 {
                h = (h + 1) % self.cfg.hosts;
            }
            b.link(Element::A, h, "/", LinkKind::Follow, "elsewhere");
        }
        let closing = "</body>\n</html>\n";
        let have = encoded_len(&b.html, b.charset);
        if have + closing.len() < target_bytes {
            let want = target_bytes - have - closing.len();
            if want > 200 {
                html::filler(&mut b.html, prng, want - 150, b.charset);
            }
            let have = encoded_len(&b.html, b.charset);
            if have + closing.len() < target_bytes {
                let pad = target_bytes - have - closing.len();
                b.html.extend(std::iter::repeat_n(' ', pad));
            }
        }
        b.html.push_str(closing);
        self.finish(
            b,
            page.index,
            page.role,
            page.full,
            page.label,
            page.framing,
            page.meta_robots,
            page.x_robots,
            None,
        )
    }
}
