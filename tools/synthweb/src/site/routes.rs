//! The URL space of an ordinary (or hostile) host: which path is which kind of page,
//! and the redirects, resources and small page families it serves.

use crate::changes::Change;
use crate::hosts::HostRole;
use crate::html;
use crate::robots;

use super::html_page::PageKind;
use super::response::{simple, PageView, Scheme};
use super::target::parse_u32;
use super::Site;

const WIKI: [&str; 4] = ["Café", "Über", "Ñandú", "東京"];
pub(super) const SMALL_K: u32 = 3;
pub(super) const WIKI_K: u32 = 8;
pub(super) const QUERY_K: u32 = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Probe {
    Private,
    PrivateOpen,
    Php,
    Php5,
    HtmlY,
    Tmp,
}

pub(super) const PROBES: [Probe; 6] = [
    Probe::Private,
    Probe::PrivateOpen,
    Probe::Php,
    Probe::Php5,
    Probe::HtmlY,
    Probe::Tmp,
];

impl Probe {
    pub(super) fn path(self, k: u32) -> String {
        match self {
            Self::Private => format!("/private/{k}"),
            Self::PrivateOpen => format!("/private/open/{k}"),
            Self::Php => format!("/x/{k}.php"),
            Self::Php5 => format!("/x/{k}.php5"),
            Self::HtmlY => format!("/x/{k}.html?y=1"),
            Self::Tmp => format!("/tmp/{k}"),
        }
    }
}

pub(super) fn wiki_segment(k: u32) -> String {
    let name = WIKI[(k as usize) % WIKI.len()];
    format!("{}_{k}", html::pct_utf8(name))
}

impl Site {
    #[allow(
        clippy::too_many_lines,
        reason = "one routing table reads best in one place"
    )]
    pub(super) fn normal_page(
        &self,
        scheme: Scheme,
        index: u32,
        role: HostRole,
        full: &str,
        path: &str,
        query: Option<&str>,
    ) -> PageView {
        let segs: Vec<&str> = path.split('/').skip(1).collect();
        let n_pages = self.page_count(index);
        let small = |k: u32, max: u32| k < max;
        let not_found = || {
            self.plain_view(
                role,
                simple(
                    404,
                    "text/html; charset=utf-8",
                    b"<html><body><h1>404 Not Found</h1></body></html>\n".to_vec(),
                ),
            )
        };
        let q_none = query.is_none();
        match segs.as_slice() {
            [""] if q_none => self.html_page(scheme, index, role, full, PageKind::Root),
            ["p", k] if q_none => match parse_u32(k) {
                Some(k) if k >= 1 && k < n_pages => {
                    if let Some(Change::Gone(status)) = self.change_at(index, full) {
                        return self.plain_view(
                            role,
                            simple(
                                status,
                                "text/html; charset=utf-8",
                                format!("<html><body><h1>{status}</h1></body></html>\n")
                                    .into_bytes(),
                            ),
                        );
                    }
                    self.html_page(scheme, index, role, full, PageKind::Page(k))
                }
                _ => not_found(),
            },
            ["new", _] if q_none && self.change_at(index, full) == Some(Change::New) => {
                self.html_page(scheme, index, role, full, PageKind::Small)
            }
            ["sm", _]
                if q_none
                    && self.cfg.profiles.sitemaps
                    && index == crate::sitemaps::HOST
                    && crate::sitemaps::sitemap_only_page(full).is_some() =>
            {
                self.html_page(scheme, index, role, full, PageKind::SitemapOnly)
            }
            ["smb", _]
                if q_none
                    && self.cfg.profiles.sitemaps
                    && index == crate::sitemaps::CHAIN_HOST
                    && crate::sitemaps::chain_page(full).is_some() =>
            {
                self.html_page(scheme, index, role, full, PageKind::SitemapOnly)
            }
            ["smx", _]
                if q_none
                    && self.cfg.profiles.sitemaps
                    && index == crate::sitemaps::CROSS_HOST
                    && crate::sitemaps::cross_page(full).is_some() =>
            {
                self.html_page(scheme, index, role, full, PageKind::Small)
            }
            [f] if q_none
                && self.cfg.profiles.sitemaps
                && index == crate::sitemaps::HOST
                && f.starts_with("sitemap") =>
            {
                match crate::sitemaps::file(self, scheme, full) {
                    Some((ctype, body)) => {
                        let mut r = simple(200, ctype, body);
                        self.validators(&mut r, index, full);
                        self.plain_view(role, r)
                    }
                    None => not_found(),
                }
            }
            [f] if q_none && self.cfg.profiles.sitemap_chain && f.starts_with("chain-") => {
                match crate::chain::file(self, scheme, index, full) {
                    Some((ctype, body)) => {
                        let mut r = simple(200, ctype, body);
                        self.validators(&mut r, index, full);
                        self.plain_view(role, r)
                    }
                    None => not_found(),
                }
            }
            [_] if q_none
                && self.cfg.profiles.sitemap_chain
                && crate::chain::is_orphan(self, index, full) =>
            {
                self.html_page(scheme, index, role, full, PageKind::SitemapOnly)
            }
            [t, ""] if q_none && t.starts_with("~u") => match parse_u32(&t[2..]) {
                Some(k) if small(k, SMALL_K) => {
                    self.html_page(scheme, index, role, full, PageKind::Small)
                }
                _ => not_found(),
            },
            ["wiki", name] if q_none => {
                let ok = (0..WIKI_K).any(|k| *name == wiki_segment(k));
                if ok {
                    self.html_page(scheme, index, role, full, PageKind::Small)
                } else {
                    not_found()
                }
            }
            ["q", k] => match (parse_u32(k), query) {
                (Some(k), Some(q)) if small(k, QUERY_K) && q == format!("a={k}&b=two") => {
                    self.html_page(scheme, index, role, full, PageKind::Small)
                }
                _ => not_found(),
            },
            _ if PROBES
                .iter()
                .any(|p| (0..SMALL_K).any(|k| p.path(k) == full)) =>
            {
                self.html_page(scheme, index, role, full, PageKind::Small)
            }
            ["soft404", k] if q_none && parse_u32(k).is_some_and(|k| small(k, SMALL_K)) => {
                self.html_page(scheme, index, role, full, PageKind::Soft404)
            }
            ["m", k] if q_none => match parse_u32(k) {
                Some(k) if small(k, SMALL_K) => self.html_page(
                    scheme,
                    index,
                    role,
                    full,
                    PageKind::Refresh(k.min(n_pages - 1).max(1)),
                ),
                _ => not_found(),
            },
            ["fs", k] if q_none && parse_u32(k).is_some_and(|k| small(k, 2)) => {
                self.html_page(scheme, index, role, full, PageKind::Frameset)
            }
            ["hidden", w, k]
                if q_none
                    && matches!(*w, "comment" | "script" | "style")
                    && parse_u32(k).is_some_and(|k| small(k, SMALL_K)) =>
            {
                self.html_page(scheme, index, role, full, PageKind::Small)
            }
            ["r", code, k] if q_none && matches!(*code, "301" | "302" | "303" | "307" | "308") => {
                match parse_u32(k) {
                    Some(k) if k >= 1 && k < n_pages => {
                        let status: u16 = code.parse().unwrap_or(302);
                        // 301 and 308 use an absolute Location, the others a relative one.
                        let loc = if matches!(status, 301 | 308) {
                            self.url(scheme, index, &format!("/p/{k}"))
                        } else {
                            format!("/p/{k}")
                        };
                        self.redirect(scheme, role, status, loc, &format!("/p/{k}"), index)
                    }
                    _ => not_found(),
                }
            }
            ["r", "chain", n, k] if q_none => match (parse_u32(n), parse_u32(k)) {
                (Some(n), Some(k)) if (1..=5).contains(&n) && k >= 1 && k < n_pages => {
                    let next = if n > 1 {
                        format!("/r/chain/{}/{k}", n - 1)
                    } else {
                        format!("/p/{k}")
                    };
                    self.redirect(scheme, role, 302, next.clone(), &next, index)
                }
                _ => not_found(),
            },
            ["r", "loop", ab] if q_none && matches!(*ab, "a" | "b") => {
                let next = if *ab == "a" { "/r/loop/b" } else { "/r/loop/a" };
                self.redirect(scheme, role, 302, next.to_owned(), next, index)
            }
            ["r", "x", h] if q_none => match parse_u32(h) {
                Some(h) if h < self.cfg.hosts => {
                    self.redirect(scheme, role, 301, self.url(scheme, h, "/"), "/", h)
                }
                _ => not_found(),
            },
            ["e", code, k] if q_none && parse_u32(k).is_some_and(|k| small(k, SMALL_K)) => {
                let status: u16 = match *code {
                    "404" => 404,
                    "410" => 410,
                    "500" => 500,
                    "503" => 503,
                    "429" => 429,
                    _ => return not_found(),
                };
                let mut r = simple(
                    status,
                    "text/html; charset=utf-8",
                    format!("<html><body><h1>error {status}</h1></body></html>\n").into_bytes(),
                );
                match status {
                    503 => r.headers.push(("Retry-After", "3".to_owned())),
                    429 => r.headers.push(("Retry-After", "5".to_owned())),
                    _ => {}
                }
                self.plain_view(role, r)
            }
            ["img", f] if q_none => {
                let (k, ext) = f.split_once('.').unwrap_or((f, ""));
                match (parse_u32(k), ext) {
                    (Some(k), "png" | "jpg" | "gif") if small(k, 4) => {
                        self.resource(role, index, full, ext)
                    }
                    _ => not_found(),
                }
            }
            ["doc", f] if q_none => match f.strip_suffix(".pdf").and_then(parse_u32) {
                Some(k) if small(k, 2) => self.resource(role, index, full, "pdf"),
                _ => not_found(),
            },
            ["s", "site.css"] if q_none => self.resource(role, index, full, "css"),
            ["robots-real.txt"] if q_none => {
                let mut r = simple(
                    200,
                    "text/plain; charset=utf-8",
                    robots::REAL_TXT.as_bytes().to_vec(),
                );
                self.validators(&mut r, index, full);
                self.plain_view(role, r)
            }
            ["robots-cross.txt"] if q_none => {
                let mut r = simple(
                    200,
                    "text/plain; charset=utf-8",
                    robots::CROSS_TXT.as_bytes().to_vec(),
                );
                self.validators(&mut r, index, full);
                self.plain_view(role, r)
            }
            _ => not_found(),
        }
    }

    #[allow(clippy::too_many_arguments, reason = "internal helper")]
    pub(super) fn redirect(
        &self,
        scheme: Scheme,
        role: HostRole,
        status: u16,
        location: String,
        to_path: &str,
        to_host: u32,
    ) -> PageView {
        let mut r = simple(
            status,
            "text/html; charset=utf-8",
            format!(
                "<html><body><a href=\"{}\">moved</a></body></html>\n",
                html::escape(&location)
            )
            .into_bytes(),
        );
        r.headers.push(("Location", location));
        let mut v = self.plain_view(role, r);
        v.redirect_to = Some(self.url(scheme, to_host, to_path));
        v
    }

    fn resource(&self, role: HostRole, index: u32, full: &str, ext: &str) -> PageView {
        let mut rng = self.page_rng(index, full);
        let (ctype, mut body): (&str, Vec<u8>) = match ext {
            "png" => (
                "image/png",
                b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR".to_vec(),
            ),
            "jpg" => ("image/jpeg", b"\xFF\xD8\xFF\xE0\x00\x10JFIF\x00".to_vec()),
            "gif" => ("image/gif", b"GIF89a\x01\x00\x01\x00".to_vec()),
            "pdf" => ("application/pdf", b"%PDF-1.4\n%\xE2\xE3\xCF\xD3\n".to_vec()),
            _ => (
                "text/css; charset=utf-8",
                b"body { font-family: serif; }\n".to_vec(),
            ),
        };
        if ext != "css" {
            let n = rng.range(200, 2_000);
            body.extend((0..n).map(|_| rng.next_u64() as u8));
        }
        let mut r = simple(200, ctype, body);
        self.validators(&mut r, index, full);
        self.plain_view(role, r)
    }
}
