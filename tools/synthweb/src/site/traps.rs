//! The trap hosts: URL spaces without end (a calendar, a symlink loop and the
//! self-listing directory, period-two paths, session ids, duplicates, growing URLs, a
//! million pages) and how deep a page lies in one.

use crate::hash::hash_words;
use crate::hosts::{HostRole, TrapKind};
use crate::html::{self, Charset, CharsetLabel, Element, LinkKind};

use super::response::{simple, Framing, PageView, Scheme};
use super::target::parse_u32;
use super::{Site, MILLION};

const SESSION_PAGES: u32 = 50;
const DUP_VARIANTS: u32 = 20;

fn sid(seed: u64, depth: u32, k: u32) -> String {
    format!(
        "d{depth}x{:08x}",
        hash_words(&[seed, u64::from(depth), u64::from(k)]) as u32
    )
}

fn grow_segment(seed: u64, i: u32) -> String {
    let h = hash_words(&[seed, u64::from(i), 0x6E0]);
    format!("g{i:03}-{h:016x}{:016x}{:016x}", mix(h, 1), mix(h, 2))
}

fn mix(h: u64, n: u64) -> u64 {
    crate::hash::mix64(h ^ n)
}

impl Site {
    pub(super) fn trap_page(
        &self,
        scheme: Scheme,
        index: u32,
        kind: TrapKind,
        path: &str,
        query: Option<&str>,
    ) -> PageView {
        let role = HostRole::Trap(kind);
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
        let full = match query {
            Some(q) => format!("{path}?{q}"),
            None => path.to_owned(),
        };
        let mut b = self.builder(scheme, index, &full, Charset::Utf8, "/");
        b.quirks = false;
        let mut links: Vec<String> = Vec::new();
        let depth: u32;
        let mut key = full.clone();
        let mut heading: Option<String> = None;
        if path == "/" && query.is_none() {
            depth = 0;
            links.push(match kind {
                TrapKind::Calendar => "/cal/2031/07".to_owned(),
                TrapKind::SymlinkLoop => "/d/".to_owned(),
                TrapKind::PeriodTwo => "/a/".to_owned(),
                TrapKind::SessionIds => format!("/sess/0?sid={}", sid(self.cfg.seed, 1, 0)),
                TrapKind::Duplicates => "/dup/0".to_owned(),
                TrapKind::GrowingUrls => format!("/grow/{}/", grow_segment(self.cfg.seed, 0)),
                TrapKind::MillionPages => "/p/0".to_owned(),
            });
            if kind == TrapKind::MillionPages {
                links.extend((1..10).map(|k| format!("/p/{k}")));
            }
            if kind == TrapKind::SymlinkLoop {
                links.push(LISTING_ROOT.to_owned());
            }
        } else {
            match (kind, query) {
                (TrapKind::Calendar, None) => {
                    let segs: Vec<&str> = path.split('/').collect();
                    let (Some(y), Some(m)) = (
                        segs.get(2).and_then(|y| y.parse::<u32>().ok()),
                        segs.get(3).and_then(|m| m.parse::<u32>().ok()),
                    ) else {
                        return not_found();
                    };
                    if segs.len() != 4
                        || segs.get(1) != Some(&"cal")
                        || !(1..=12).contains(&m)
                        || !(2031..=9999).contains(&y)
                        || segs.get(2).map(|s| s.len()) != Some(4)
                        || segs.get(3).map(|s| s.len()) != Some(2)
                        || (y == 2031 && m < 7)
                    {
                        return not_found();
                    }
                    depth = (y - 2031) * 12 + m - 7 + 1;
                    // A real calendar names its month; without it, the same month of
                    // two years would be the same page to a fingerprint that abstracts
                    // the page's own directory (`/cal/2032/`).
                    heading = Some(format!("{y}-{m:02}"));
                    let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
                    if ny <= 9999 {
                        links.push(format!("/cal/{ny}/{nm:02}"));
                    }
                    key = "/cal".to_owned();
                }
                (TrapKind::SymlinkLoop, None) if path.starts_with(LISTING_ROOT) => {
                    return self.listing_page(scheme, index, path);
                }
                (TrapKind::SymlinkLoop, None) => {
                    let Some(rest) = path.strip_prefix("/d/") else {
                        return not_found();
                    };
                    if !rest.is_empty()
                        && (!rest.ends_with("sub/")
                            || rest
                                .split('/')
                                .filter(|s| !s.is_empty())
                                .any(|s| s != "sub"))
                    {
                        return not_found();
                    }
                    depth = rest.matches("sub/").count() as u32 + 1;
                    links.push(format!("{path}sub/"));
                    key = "/d/".to_owned();
                }
                (TrapKind::PeriodTwo, None) => {
                    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
                    let ok = path.ends_with('/')
                        && segs
                            .iter()
                            .enumerate()
                            .all(|(i, s)| *s == if i % 2 == 0 { "a" } else { "b" });
                    if !ok {
                        return not_found();
                    }
                    depth = segs.len() as u32;
                    let next = if segs.len() % 2 == 1 { "b" } else { "a" };
                    links.push(format!("{path}{next}/"));
                    key = "/a/".to_owned();
                }
                (TrapKind::SessionIds, q) => {
                    let Some(k) = path
                        .strip_prefix("/sess/")
                        .and_then(parse_u32)
                        .filter(|k| *k < SESSION_PAGES)
                    else {
                        return not_found();
                    };
                    let d = q
                        .and_then(|q| q.strip_prefix("sid=d"))
                        .and_then(|s| s.split_once('x'))
                        .and_then(|(d, _)| parse_u32(d))
                        .unwrap_or(0);
                    depth = d;
                    for step in [1, 7] {
                        let nk = (k + step) % SESSION_PAGES;
                        links.push(format!(
                            "/sess/{nk}?sid={}",
                            sid(self.cfg.seed ^ u64::from(k), d + 1, nk)
                        ));
                    }
                    key = format!("/sess/{k}");
                }
                (TrapKind::Duplicates, q) => {
                    let Some(v) = path
                        .strip_prefix("/dup/")
                        .and_then(parse_u32)
                        .filter(|v| *v < DUP_VARIANTS)
                    else {
                        return not_found();
                    };
                    if let Some(q) = q {
                        if q.strip_prefix("ref=")
                            .and_then(parse_u32)
                            .is_none_or(|r| r >= 5)
                        {
                            return not_found();
                        }
                    }
                    let _ = v;
                    depth = 1 + u32::from(path != "/dup/0" || query.is_some());
                    links.extend((0..DUP_VARIANTS).map(|v| format!("/dup/{v}")));
                    links.extend((0..5).map(|r| format!("/dup/0?ref={r}")));
                    key = "/dup".to_owned();
                }
                (TrapKind::GrowingUrls, None) => {
                    let Some(rest) = path.strip_prefix("/grow/") else {
                        return not_found();
                    };
                    let segs: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
                    let ok = rest.ends_with('/')
                        && !segs.is_empty()
                        && segs
                            .iter()
                            .enumerate()
                            .all(|(i, s)| *s == grow_segment(self.cfg.seed, i as u32));
                    if !ok {
                        return not_found();
                    }
                    depth = segs.len() as u32;
                    links.push(format!("{path}{}/", grow_segment(self.cfg.seed, depth)));
                    key = "/grow".to_owned();
                }
                (TrapKind::MillionPages, None) => {
                    let Some(k) = path
                        .strip_prefix("/p/")
                        .and_then(parse_u32)
                        .filter(|k| *k < MILLION)
                    else {
                        return not_found();
                    };
                    depth = k + 1;
                    let mut r = self.page_rng(index, path);
                    links.extend(
                        (1..=5)
                            .map(|s| k + s)
                            .filter(|j| *j < MILLION)
                            .map(|j| format!("/p/{j}")),
                    );
                    links.extend((0..5).map(|_| format!("/p/{}", r.below(u64::from(MILLION)))));
                    key = path.to_owned();
                }
                _ => return not_found(),
            }
        }
        // Same body for every URL of a duplicate/session family: text keyed by `key`.
        let mut rng = self.page_rng(index, &key);
        b.html.push_str(&format!("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{}</title></head>\n<body>\n", html::escape(&key)));
        if let Some(h) = &heading {
            b.html.push_str(&format!("<h1>{h}</h1>\n"));
        }
        html::filler(&mut b.html, &mut rng, 1_500, Charset::Utf8);
        for l in &links {
            b.link(Element::A, index, l, LinkKind::Follow, "next");
        }
        b.html.push_str("</body></html>\n");
        self.finish(
            b,
            index,
            role,
            &key,
            CharsetLabel::Both("utf-8"),
            Framing::ContentLength,
            None,
            None,
            Some(depth),
        )
    }
}

/// Where the self-listing directory loop of the symlink-loop host starts.
const LISTING_ROOT: &str = "/ls/";

/// The names under which the listed directory contains itself (two symlinks to `.`).
const LISTING_SELF_LINKS: [&str; 2] = ["sub", "alt"];

impl Site {
    /// The self-listing directory loop: `/ls/` and every `/ls/{sub,alt}/.../` serve an
    /// Apache-style listing of the same directory (`Index of /ls/sub`, a parent link,
    /// relative `index.html`, `sub/`, `alt/`), and every `index.html` the same static
    /// page. Only the listing's naming of its own location changes between levels, so
    /// with two self-links the URL filters alone (a segment at most 3 times) allow
    /// 134 fetches; trawl's fingerprint, which abstracts the page's own
    /// directory, stops it after the first level below `/ls/` (7 fetches).
    fn listing_page(&self, scheme: Scheme, index: u32, path: &str) -> PageView {
        let role = HostRole::Trap(TrapKind::SymlinkLoop);
        let (dir, file) = match path.rfind('/') {
            Some(i) => (&path[..=i], &path[i + 1..]),
            None => (path, ""),
        };
        let rest = dir.strip_prefix(LISTING_ROOT).unwrap_or("x");
        let valid = rest
            .split('/')
            .filter(|s| !s.is_empty())
            .all(|s| LISTING_SELF_LINKS.contains(&s))
            && (file.is_empty() || file == "index.html");
        if !valid {
            return self.plain_view(
                role,
                simple(
                    404,
                    "text/html; charset=utf-8",
                    b"<html><body><h1>404 Not Found</h1></body></html>\n".to_vec(),
                ),
            );
        }
        let depth = rest.matches('/').count() as u32 + 1;
        let mut b = self.builder(scheme, index, LISTING_ROOT, Charset::Utf8, dir);
        b.quirks = false;
        if file == "index.html" {
            // The same file at every level: byte-identical, links relative.
            b.html.push_str(
                "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>About this \
                 tree</title></head>\n<body>\n<p>Mirror notes.</p>\n",
            );
            for name in LISTING_SELF_LINKS {
                b.relative_link(&format!("{name}/"), &format!("{dir}{name}/"), name);
            }
        } else {
            let bare = dir.trim_end_matches('/');
            let parent = &bare[..=bare.rfind('/').unwrap_or(0)];
            b.html.push_str(&format!(
                "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Index of \
                 {bare}</title></head>\n<body>\n<h1>Index of {dir}</h1>\n"
            ));
            b.relative_link(parent, parent, "Parent Directory");
            b.relative_link("index.html", &format!("{dir}index.html"), "index.html");
            for name in LISTING_SELF_LINKS {
                b.relative_link(
                    &format!("{name}/"),
                    &format!("{dir}{name}/"),
                    &format!("{name}/"),
                );
            }
        }
        b.html.push_str("</body></html>\n");
        self.finish(
            b,
            index,
            role,
            path,
            CharsetLabel::Both("utf-8"),
            Framing::ContentLength,
            None,
            None,
            Some(depth),
        )
    }
}
