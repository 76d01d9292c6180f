//! An ordinary HTML page: charset, framing, robots directives, size, and the plan of
//! its links (same host, cross host, special).

use crate::changes::Change;
use crate::hosts::{self, HostRole};
use crate::html::{self, Charset, CharsetLabel, Element, LinkKind};

use super::bench_pages::WidePage;
use super::builder::encoded_len;
use super::response::{Framing, PageView, Scheme};
use super::Site;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PageKind {
    Root,
    Page(u32),
    Small,
    /// A page only sitemaps list: it links only `/`, so that what a crawler reaches
    /// through it is exactly itself (the manifest's `S` lines).
    SitemapOnly,
    Soft404,
    Refresh(u32),
    Frameset,
}

enum Planned {
    Same(String, Element, LinkKind),
    Cross(u32, String),
    Special(usize),
}

const SPECIALS: usize = 22;

impl Site {
    pub(super) fn html_page(
        &self,
        scheme: Scheme,
        index: u32,
        role: HostRole,
        full: &str,
        kind: PageKind,
    ) -> PageView {
        let mut prng = self.page_rng(index, full);
        let fixed = self.cfg.fixed_size;
        let charset =
            if !fixed && matches!(kind, PageKind::Page(_) | PageKind::Small) && prng.chance(20) {
                Charset::Windows1252
            } else {
                Charset::Utf8
            };
        let label = match (charset, prng.below(3)) {
            (Charset::Utf8, 0) => CharsetLabel::Header("utf-8"),
            (Charset::Utf8, _) => CharsetLabel::Both("utf-8"),
            (Charset::Windows1252, 0) => CharsetLabel::Header("windows-1252"),
            (Charset::Windows1252, 1) => CharsetLabel::Meta("iso-8859-1"),
            (Charset::Windows1252, _) => CharsetLabel::Both("windows-1252"),
        };
        let page_dir = match full
            .split('?')
            .next()
            .and_then(|p| p.rfind('/').map(|i| &p[..=i]))
        {
            Some(d) => d.to_owned(),
            None => "/".to_owned(),
        };
        let with_base = !fixed && matches!(kind, PageKind::Page(_)) && prng.chance(10);
        let base_dir = if with_base {
            format!("/base/d{}/", prng.below(5))
        } else {
            page_dir
        };
        let (meta_robots, x_robots) = if !fixed && matches!(kind, PageKind::Page(_)) {
            let m = match prng.below(100) {
                0..=3 => Some("noindex"),
                4..=7 => Some("nofollow"),
                8..=10 => Some("none"),
                11..=12 => Some("NOINDEX, NOFOLLOW"),
                _ => None,
            };
            let x = match prng.below(100) {
                0..=2 => Some("noindex"),
                3..=5 => Some("nofollow"),
                _ => None,
            };
            (m, x)
        } else {
            (None, None)
        };
        let framing = if fixed || !matches!(kind, PageKind::Page(_)) {
            Framing::ContentLength
        } else {
            match prng.below(10) {
                0..=6 => Framing::ContentLength,
                7..=8 => Framing::Chunked,
                _ => Framing::Close,
            }
        };
        let target_bytes = match kind {
            PageKind::Root | PageKind::Page(_) => prng.range(
                u64::from(self.cfg.page_bytes.min),
                u64::from(self.cfg.page_bytes.max),
            ) as usize,
            _ => prng.range(800, 2_500) as usize,
        };

        let mut b = self.builder(scheme, index, full, charset, &base_dir);
        let title = match kind {
            PageKind::Soft404 => "Page not found".to_owned(),
            _ => format!("{} {}", self.host_name(index), full),
        };
        b.html
            .push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n");
        if let Some(l) = label.meta() {
            b.html.push_str(&format!("<meta charset=\"{l}\">\n"));
        }
        b.html
            .push_str(&format!("<title>{}</title>\n", html::escape(&title)));
        if with_base {
            if prng.chance(50) {
                b.html.push_str(&format!("<base href=\"{}\">\n", base_dir));
            } else {
                b.html.push_str(&format!(
                    "<base href=\"{}{}\">\n",
                    b.here.canonical(),
                    base_dir
                ));
            }
        }
        if let Some(m) = meta_robots {
            b.html
                .push_str(&format!("<meta name=\"robots\" content=\"{m}\">\n"));
        }
        let n_pages = self.page_count(index);
        if let PageKind::Refresh(k) = kind {
            b.link(
                Element::MetaRefresh,
                index,
                &format!("/p/{k}"),
                LinkKind::Refresh,
                "",
            );
        }
        if b.quirks && matches!(kind, PageKind::Root | PageKind::Page(_)) {
            b.link(Element::Link, index, "/s/site.css", LinkKind::Resource, "");
            if kind != PageKind::Root || prng.chance(50) {
                let j = prng.range(1, u64::from(n_pages - 1)) as u32;
                b.link(
                    Element::Link,
                    index,
                    &format!("/p/{j}"),
                    LinkKind::Follow,
                    "",
                );
            }
        }
        b.html.push_str("</head>\n");
        if kind == PageKind::Frameset {
            b.html.push_str("<frameset cols=\"50%,50%\">\n");
            for _ in 0..2 {
                let j = prng.range(1, u64::from(n_pages - 1)) as u32;
                b.link(
                    Element::Frame,
                    index,
                    &format!("/p/{j}"),
                    LinkKind::Follow,
                    "f",
                );
            }
            b.html.push_str("</frameset>\n</html>\n");
            return self.finish(
                b,
                index,
                role,
                full,
                label,
                framing,
                meta_robots,
                x_robots,
                None,
            );
        }
        b.html
            .push_str(&format!("<body>\n<h1>{}</h1>\n", html::escape(&title)));
        if kind == PageKind::Soft404 {
            b.html
                .push_str("<p>Sorry, the page you asked for does not exist.</p>\n");
        }
        if let Some(c @ (Change::Changed | Change::New)) = self.change_at(index, full) {
            b.html.push_str(&format!(
                "<p class=\"rev\">revision {} ({})</p>\n",
                self.cfg.generation,
                c.word()
            ));
        }

        // Plan links.
        if let (Some(mesh), PageKind::Root | PageKind::Page(_)) = (self.cfg.mesh, kind) {
            let page = WidePage {
                index,
                role,
                full,
                label,
                framing,
                meta_robots,
                x_robots,
            };
            return self.mesh_page(b, &mut prng, mesh, kind, target_bytes, &page);
        }
        if let (Some(fanout), PageKind::Root | PageKind::Page(_)) = (self.cfg.fanout, kind) {
            let page = WidePage {
                index,
                role,
                full,
                label,
                framing,
                meta_robots,
                x_robots,
            };
            return self.wide_page(b, &mut prng, fanout, target_bytes, &page);
        }
        let degree = match kind {
            PageKind::Root | PageKind::Page(_) => prng.range(
                u64::from(self.cfg.out_degree.min),
                u64::from(self.cfg.out_degree.max),
            ) as usize,
            PageKind::SitemapOnly => 1,
            _ => 4,
        };
        let mut plan: Vec<Planned> = Vec::with_capacity(degree + 32);
        match kind {
            PageKind::Root => {
                for j in 1..n_pages.min(degree as u32 / 2 + 1) {
                    plan.push(Planned::Same(
                        format!("/p/{j}"),
                        Element::A,
                        LinkKind::Follow,
                    ));
                }
                if b.quirks {
                    for s in 0..SPECIALS {
                        plan.push(Planned::Special(s));
                    }
                }
                for k in 0..self.new_page_count(index) {
                    plan.push(Planned::Same(
                        format!("/new/{k}"),
                        Element::A,
                        LinkKind::Follow,
                    ));
                }
                if index == 0 {
                    for i in 1..hosts::min_hosts(self.cfg.profiles) {
                        if self.role(i) != HostRole::Normal {
                            plan.push(Planned::Cross(i, "/".to_owned()));
                        }
                    }
                }
            }
            PageKind::Page(k) => {
                if k + 1 < n_pages {
                    plan.push(Planned::Same(
                        format!("/p/{}", k + 1),
                        Element::A,
                        LinkKind::Follow,
                    ));
                }
                plan.push(Planned::Same("/".to_owned(), Element::A, LinkKind::Follow));
            }
            _ => {
                plan.push(Planned::Same("/".to_owned(), Element::A, LinkKind::Follow));
            }
        }
        // A page new in this generation links only to pages generation 0 has (no
        // special URLs): its own URL is then the only one it adds to the web, and the
        // changes file's `new` lines are every URL a re-crawl finds new.
        let new_page = kind == PageKind::Small && self.change_at(index, full) == Some(Change::New);
        while plan.len() < degree {
            let roll = prng.below(100);
            if roll < 55 || !b.quirks || (new_page && roll >= 67) {
                let j = prng.range(1, u64::from(n_pages - 1)) as u32;
                plan.push(Planned::Same(
                    format!("/p/{j}"),
                    Element::A,
                    LinkKind::Follow,
                ));
            } else if roll < 67 {
                let h = prng.below(u64::from(self.cfg.hosts)) as u32;
                let h = if self.role(h) == HostRole::Normal {
                    h
                } else {
                    0
                };
                let path = if prng.chance(50) {
                    "/".to_owned()
                } else {
                    format!("/p/{}", prng.range(1, u64::from(self.page_count(h) - 1)))
                };
                plan.push(Planned::Cross(h, path));
            } else {
                plan.push(Planned::Special(prng.below(SPECIALS as u64) as usize));
            }
        }

        // Write links spread through filler text.
        let per_link = target_bytes.saturating_sub(1_000) / (plan.len() + 1);
        for p in plan {
            let words = per_link.min(2_000);
            if words > 40 {
                html::filler(&mut b.html, &mut prng, words.saturating_sub(120), charset);
            }
            match p {
                Planned::Same(path, el, kind) => b.link(el, index, &path, kind, "next"),
                Planned::Cross(h, path) => {
                    b.link(Element::A, h, &path, LinkKind::Follow, "elsewhere")
                }
                Planned::Special(s) => self.special(&mut b, &mut prng, s, n_pages),
            }
        }
        let closing = "</body>\n</html>\n";
        let have = encoded_len(&b.html, charset);
        if have + closing.len() < target_bytes {
            let want = target_bytes - have - closing.len();
            if want > 200 {
                html::filler(&mut b.html, &mut prng, want - 150, charset);
            }
            let have = encoded_len(&b.html, charset);
            if have + closing.len() < target_bytes {
                let pad = target_bytes - have - closing.len();
                b.html.extend(std::iter::repeat_n(' ', pad));
            }
        }
        b.html.push_str(closing);
        self.finish(
            b,
            index,
            role,
            full,
            label,
            framing,
            meta_robots,
            x_robots,
            None,
        )
    }
}
