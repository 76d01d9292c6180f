//! Following sitemaps from where they are named to the pages they list, sans-IO.
//!
//! A [`SitemapWalk`] starts from the `Sitemap:` lines of one robots.txt (the origin
//! that named them grants the host-rule permission, inherited down an index) or from
//! the operator's `--sitemap` URLs (each grants its own origin). The caller fetches
//! what [`SitemapWalk::next_fetch`] asks for, politely and under robots.txt like any
//! URL, and hands the answer to [`SitemapWalk::on_response`], which parses it, queues
//! an index's children one level deeper, and returns the admitted pages with their
//! `<lastmod>` plus a [`Note`] for everything dropped (caps, refusals, errors), for
//! the crawl log. Each sitemap URL is fetched at most once per walk, and a walk fetches
//! at most [`WalkLimits::max_files`] files.

use std::collections::{HashSet, VecDeque};

use url::Url;

use super::{admit, parse, Cut, LastMod, Limits, Refusal, SitemapError, SitemapKind, Skipped};

/// The caps of one walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalkLimits {
    /// Caps of each file.
    pub parse: Limits,
    /// Most sitemap files one walk fetches (an index of 50,000 sitemaps would
    /// otherwise be 2.5 billion URLs).
    pub max_files: usize,
}

impl Default for WalkLimits {
    fn default() -> Self {
        Self {
            parse: Limits::default(),
            max_files: 1_000,
        }
    }
}

/// One sitemap file to fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SitemapFetch {
    /// Its URL.
    pub url: Url,
    /// 0 where robots.txt or the operator named it, parent + 1 below an index.
    pub depth: u8,
    /// Origins (ASCII serialization) whose robots.txt, or the operator, named it or an
    /// index above it: URLs of these origins are admitted wherever they are.
    pub permitted: Vec<String>,
}

/// A page a sitemap lists, admitted by the host rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The page (parsed, not yet canonicalized or scoped).
    pub url: Url,
    /// Its `<lastmod>`.
    pub lastmod: Option<LastMod>,
}

/// Something a walk dropped or could not use, for the crawl log and the stats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// A cap cut this sitemap; the entries before it were used.
    Cut {
        /// The sitemap.
        sitemap: Url,
        /// Which cap.
        cut: Cut,
    },
    /// The sitemap gave nothing.
    Error {
        /// The sitemap.
        sitemap: Url,
        /// Why.
        error: SitemapError,
    },
    /// The sitemap answered a status other than 200.
    Status {
        /// The sitemap.
        sitemap: Url,
        /// The status.
        status: u16,
    },
    /// A listed URL (page or child sitemap) the host rule refused.
    Refused {
        /// The sitemap that listed it.
        sitemap: Url,
        /// The URL as listed.
        url: String,
        /// Why.
        refusal: Refusal,
    },
    /// A robots.txt `Sitemap:` value that is not an absolute http(s) URL.
    BadSitemapLine {
        /// The origin whose robots.txt had it.
        origin: String,
        /// The value.
        line: String,
    },
    /// A `<loc>` that is not an absolute URL.
    BadLoc {
        /// The sitemap.
        sitemap: Url,
        /// The text.
        loc: String,
    },
    /// Entries the parser skipped (no loc, too long, bad lastmod).
    Skipped {
        /// The sitemap.
        sitemap: Url,
        /// How many of each.
        skipped: Skipped,
    },
    /// Child sitemaps not fetched: the walk reached `max_files`.
    FileCap {
        /// The index that listed them.
        sitemap: Url,
        /// How many.
        dropped: u64,
    },
}

/// What one sitemap file gave.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Step {
    /// Pages to queue (hop code for sitemaps, see `docs/sitemaps.md`).
    pub pages: Vec<Listed>,
    /// Child sitemaps queued for fetching.
    pub children: usize,
    /// What was dropped.
    pub notes: Vec<Note>,
}

/// The sitemaps of one robots.txt (or of the operator), followed to their pages.
#[derive(Debug)]
pub struct SitemapWalk {
    limits: WalkLimits,
    queue: VecDeque<SitemapFetch>,
    seen: HashSet<String>,
    /// Files handed out by `next_fetch` plus files queued: never above `max_files`.
    files: usize,
}

impl SitemapWalk {
    /// A walk from the `Sitemap:` lines of the robots.txt of `robots_origin`
    /// (`http://host:port` as [`url::Origin::ascii_serialization`] gives). Lines that
    /// are not absolute http(s) URLs are returned as notes.
    pub fn from_robots(
        robots_origin: &str,
        sitemap_urls: &[String],
        limits: WalkLimits,
    ) -> (Self, Vec<Note>) {
        let mut walk = Self::empty(limits);
        let mut notes = Vec::new();
        for s in sitemap_urls {
            match Url::parse(s.trim()) {
                Ok(url) if matches!(url.scheme(), "http" | "https") => {
                    walk.push(url, 0, vec![robots_origin.to_owned()]);
                }
                _ => notes.push(Note::BadSitemapLine {
                    origin: robots_origin.to_owned(),
                    line: s.clone(),
                }),
            }
        }
        (walk, notes)
    }

    /// A walk from sitemaps the operator named (`--sitemap URL`): each is trusted for
    /// its own origin (its directory does not limit it there), never for another.
    pub fn from_operator(sitemaps: &[Url], limits: WalkLimits) -> Self {
        let mut walk = Self::empty(limits);
        for url in sitemaps {
            let own = url.origin().ascii_serialization();
            walk.push(url.clone(), 0, vec![own]);
        }
        walk
    }

    fn empty(limits: WalkLimits) -> Self {
        Self {
            limits,
            queue: VecDeque::new(),
            seen: HashSet::new(),
            files: 0,
        }
    }

    /// Queue a sitemap unless seen or over the file cap; false when dropped by the cap.
    fn push(&mut self, url: Url, depth: u8, permitted: Vec<String>) -> bool {
        if self.seen.contains(url.as_str()) {
            return true;
        }
        if self.files >= self.limits.max_files {
            return false;
        }
        self.files += 1;
        self.seen.insert(url.as_str().to_owned());
        self.queue.push_back(SitemapFetch {
            url,
            depth,
            permitted,
        });
        true
    }

    /// The next sitemap to fetch, breadth first.
    pub fn next_fetch(&mut self) -> Option<SitemapFetch> {
        self.queue.pop_front()
    }

    /// Whether nothing is left to fetch.
    pub fn is_done(&self) -> bool {
        self.queue.is_empty()
    }

    /// Use the answer to `fetch`: `status` and the payload (content coding already
    /// removed; gzip files are recognized by their bytes).
    pub fn on_response(&mut self, fetch: &SitemapFetch, status: u16, body: &[u8]) -> Step {
        let mut step = Step::default();
        let sitemap = &fetch.url;
        if status != 200 {
            step.notes.push(Note::Status {
                sitemap: sitemap.clone(),
                status,
            });
            return step;
        }
        let map = match parse(body, fetch.depth, &self.limits.parse) {
            Ok(map) => map,
            Err(error) => {
                step.notes.push(Note::Error {
                    sitemap: sitemap.clone(),
                    error,
                });
                return step;
            }
        };
        for cut in &map.cuts {
            step.notes.push(Note::Cut {
                sitemap: sitemap.clone(),
                cut: *cut,
            });
        }
        if map.skipped != Skipped::default() {
            step.notes.push(Note::Skipped {
                sitemap: sitemap.clone(),
                skipped: map.skipped,
            });
        }
        let mut over_cap = 0u64;
        for entry in map.entries {
            let url = match Url::parse(&entry.loc) {
                Ok(u) => u,
                Err(_) => {
                    step.notes.push(Note::BadLoc {
                        sitemap: sitemap.clone(),
                        loc: entry.loc,
                    });
                    continue;
                }
            };
            if let Err(refusal) = admit(sitemap, &url, &fetch.permitted) {
                step.notes.push(Note::Refused {
                    sitemap: sitemap.clone(),
                    url: entry.loc,
                    refusal,
                });
                continue;
            }
            match map.kind {
                SitemapKind::UrlSet => step.pages.push(Listed {
                    url,
                    lastmod: entry.lastmod,
                }),
                SitemapKind::Index => {
                    if self.push(url, fetch.depth.saturating_add(1), fetch.permitted.clone()) {
                        step.children += 1;
                    } else {
                        over_cap += 1;
                    }
                }
            }
        }
        if over_cap > 0 {
            step.notes.push(Note::FileCap {
                sitemap: sitemap.clone(),
                dropped: over_cap,
            });
        }
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NS: &str = "xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"";

    fn index(children: &[&str]) -> Vec<u8> {
        let mut s = format!("<sitemapindex {NS}>");
        for c in children {
            s.push_str(&format!("<sitemap><loc>{c}</loc></sitemap>"));
        }
        s.push_str("</sitemapindex>");
        s.into_bytes()
    }

    fn urlset(urls: &[&str]) -> Vec<u8> {
        let mut s = format!("<urlset {NS}>");
        for u in urls {
            s.push_str(&format!(
                "<url><loc>{u}</loc><lastmod>2025-07-01</lastmod></url>"
            ));
        }
        s.push_str("</urlset>");
        s.into_bytes()
    }

    #[test]
    fn robots_index_children_pages_and_refusals() {
        let (mut walk, notes) = SitemapWalk::from_robots(
            "http://a.example",
            &[
                "http://a.example/index.xml".to_owned(),
                "not a url".to_owned(),
            ],
            WalkLimits::default(),
        );
        assert_eq!(notes.len(), 1);
        let root = walk.next_fetch().unwrap();
        assert_eq!(root.depth, 0);
        let step = walk.on_response(
            &root,
            200,
            &index(&[
                "http://a.example/maps/one.xml",
                "http://a.example/index.xml",
                "http://b.example/theirs.xml",
            ]),
        );
        // The index itself again is not queued twice; another origin's sitemap is
        // refused.
        assert_eq!(step.children, 2);
        assert!(matches!(
            step.notes.as_slice(),
            [Note::Refused {
                refusal: Refusal::OtherOrigin,
                ..
            }]
        ));
        let one = walk.next_fetch().unwrap();
        assert_eq!(one.url.as_str(), "http://a.example/maps/one.xml");
        assert_eq!(one.depth, 1);
        let step = walk.on_response(
            &one,
            200,
            &urlset(&[
                "http://a.example/maps/p1",
                // Outside /maps/, but robots.txt of a.example named the index above.
                "http://a.example/p2",
                "http://c.example/p3",
                "relative/p4",
            ]),
        );
        let pages: Vec<&str> = step.pages.iter().map(|p| p.url.as_str()).collect();
        assert_eq!(pages, ["http://a.example/maps/p1", "http://a.example/p2"]);
        assert_eq!(step.pages[0].lastmod.map(|l| l.secs), Some(1_751_328_000));
        assert_eq!(step.notes.len(), 2);
        assert!(walk.next_fetch().is_none() && walk.is_done());
    }

    #[test]
    fn operator_sitemaps_are_trusted_for_their_own_origin_only() {
        let mut walk = SitemapWalk::from_operator(
            &[Url::parse("http://a.example/deep/s.xml").unwrap()],
            WalkLimits::default(),
        );
        let f = walk.next_fetch().unwrap();
        let step = walk.on_response(
            &f,
            200,
            &urlset(&["http://a.example/top", "http://b.example/x"]),
        );
        assert_eq!(step.pages.len(), 1);
        assert!(matches!(
            step.notes.as_slice(),
            [Note::Refused {
                refusal: Refusal::OtherOrigin,
                ..
            }]
        ));
    }

    #[test]
    fn file_cap_depth_status_and_errors_are_notes() {
        let limits = WalkLimits {
            max_files: 3,
            ..WalkLimits::default()
        };
        let (mut walk, _) = SitemapWalk::from_robots(
            "http://a.example",
            &["http://a.example/i.xml".to_owned()],
            limits,
        );
        let root = walk.next_fetch().unwrap();
        let step = walk.on_response(
            &root,
            200,
            &index(&[
                "http://a.example/1.xml",
                "http://a.example/2.xml",
                "http://a.example/3.xml",
                "http://a.example/4.xml",
            ]),
        );
        assert_eq!(step.children, 2);
        assert!(step.notes.contains(&Note::FileCap {
            sitemap: root.url.clone(),
            dropped: 2
        }));
        let a = walk.next_fetch().unwrap();
        let step = walk.on_response(&a, 404, b"");
        assert!(matches!(
            step.notes.as_slice(),
            [Note::Status { status: 404, .. }]
        ));
        let b = walk.next_fetch().unwrap();
        let step = walk.on_response(&b, 200, b"<html></html>");
        assert!(matches!(
            step.notes.as_slice(),
            [Note::Error {
                error: SitemapError::NotASitemap,
                ..
            }]
        ));
        // An index at the depth bound is refused.
        let deep = SitemapFetch {
            url: Url::parse("http://a.example/deep.xml").unwrap(),
            depth: 2,
            permitted: vec![],
        };
        let step = walk.on_response(&deep, 200, &index(&["http://a.example/x.xml"]));
        assert!(matches!(
            step.notes.as_slice(),
            [Note::Error {
                error: SitemapError::TooDeep { .. },
                ..
            }]
        ));
    }
}
