//! Sitemaps of the synthetic web (profile `sitemaps`), all on host 0.
//!
//! | path | what |
//! |---|---|
//! | robots.txt | the allow-all rules plus `Sitemap: {origin}/sitemap_index.xml` |
//! | `/sitemap_index.xml` | index of the four files below, each with `<lastmod>` |
//! | `/sitemap-pages.xml` | `/`, `/p/k` (gone pages left out) and sitemap-only pages `/sm/0..15`, each with `<lastmod>` |
//! | `/sitemap-pages-2.xml.gz` | gzip-compressed sitemap of `/sm/15..25` |
//! | `/sitemap-nested-index.xml` | an index listing `/sitemap-nested.xml` (nesting depth 2) |
//! | `/sitemap-nested.xml` | `/sm/25..30` |
//! | `/sitemap-cross.xml` | `/smx/0..5` of host 2, whose robots.txt does not point to it: refused by the sitemaps.org host rule |
//! | `/sitemap-storage-index.xml` | index named by host 1's robots.txt (not host 0's), listing `/sitemap-storage.xml` |
//! | `/sitemap-storage.xml` | host 1's `/smb/0..4` and host 2's `/smx/0`, without `<lastmod>` |
//! | `/sitemap-big.xml` | 60,000 URLs `/big/k` (404): over the 50,000 cap; linked from nowhere |
//! | `/sitemap-bomb.xml.gz` | gzip bomb: an XML declaration and `<urlset>`, then 256 MiB of spaces, in about 1.7 MB; linked from nowhere |
//!
//! The storage pair is the common real case of cross-submission: host 1's robots.txt
//! (in this profile an allow-all file, whatever the catalogue says) names an index on
//! host 0, the storage host, whose sitemap lists host 1's pages. A crawler that passes
//! the robots.txt permission down the chain of indexes fetches host 1's `/smb/k`
//! (sitemap-only, manifest `S`); host 2's `/smx/0` in the same file is refused (host
//! 2's robots.txt names nothing). Its entries carry no `<lastmod>`, so which pages a
//! re-crawl with `--sitemap-lastmod skip` skips does not depend on whether host 0's
//! sitemap or host 1's pages come first: only host 0's own pages, listed with dates
//! by host 0's sitemaps, which a re-crawl reads before the pages of their host
//! ([`listed_lastmods`]).
//!
//! `/sm/k` pages are small HTML pages that no link reaches and that link only `/`: a
//! crawler finds them only through the sitemaps, and finds nothing else through them. `/smx/k` pages exist (200) but a correct crawler never asks for
//! them. The manifest lists `/sm/k` as `S` and `/smx/k` as `F`.

use std::sync::OnceLock;

use crate::coding;
use crate::site::{Scheme, Site};

/// The host that serves the sitemaps.
pub const HOST: u32 = 0;
/// The host whose URLs the cross-host sitemap lists.
pub const CROSS_HOST: u32 = 2;
/// Sitemap-only pages `/sm/0 .. /sm/(SITEMAP_ONLY_PAGES-1)`.
pub const SITEMAP_ONLY_PAGES: u32 = 30;
/// Pages `/smx/k` of the cross-host sitemap.
pub const CROSS_PAGES: u32 = 5;
/// URLs in `/sitemap-big.xml`.
pub const BIG_URLS: u32 = 60_000;
/// Uncompressed size of the bomb's run of spaces, in bytes (about).
pub const BOMB_BYTES: u64 = 256 << 20;

/// The host whose robots.txt names the storage index on [`HOST`].
pub const CHAIN_HOST: u32 = 1;
/// Sitemap-only pages of [`CHAIN_HOST`], `/smb/0 .. /smb/(CHAIN_PAGES-1)`, listed only
/// by the storage sitemap on [`HOST`].
pub const CHAIN_PAGES: u32 = 4;

/// The index robots.txt points to.
pub const INDEX: &str = "/sitemap_index.xml";
/// The index [`CHAIN_HOST`]'s robots.txt points to.
pub const STORAGE_INDEX: &str = "/sitemap-storage-index.xml";
/// Every sitemap file reachable from robots.txt, index first.
pub const LINKED_FILES: [&str; 8] = [
    INDEX,
    "/sitemap-pages.xml",
    "/sitemap-pages-2.xml.gz",
    "/sitemap-nested-index.xml",
    "/sitemap-nested.xml",
    "/sitemap-cross.xml",
    STORAGE_INDEX,
    "/sitemap-storage.xml",
];
/// The over-cap files, reachable only by being named (`--sitemap URL`).
pub const CAP_FILES: [&str; 2] = ["/sitemap-big.xml", "/sitemap-bomb.xml.gz"];

const NS: &str = "http://www.sitemaps.org/schemas/sitemap/0.9";
const DECL: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";

/// The `Sitemap:` line the robots.txt of host `index` ends with, if any: host 0
/// names its index, [`CHAIN_HOST`] the storage index on host 0.
#[must_use]
pub fn robots_line(site: &Site, scheme: Scheme, index: u32) -> Option<String> {
    let target = match index {
        HOST => INDEX,
        CHAIN_HOST => STORAGE_INDEX,
        _ => return None,
    };
    Some(format!("\nSitemap: {}\n", site.url(scheme, HOST, target)))
}

/// Whether `path` names a sitemap-only page, and which.
#[must_use]
pub fn sitemap_only_page(path: &str) -> Option<u32> {
    let k = path.strip_prefix("/sm/")?;
    parse_small(k).filter(|k| *k < SITEMAP_ONLY_PAGES)
}

/// Whether `path` names a sitemap-only page of [`CHAIN_HOST`], and which.
#[must_use]
pub fn chain_page(path: &str) -> Option<u32> {
    let k = path.strip_prefix("/smb/")?;
    parse_small(k).filter(|k| *k < CHAIN_PAGES)
}

/// Whether `path` names a page of the cross-host sitemap.
#[must_use]
pub fn cross_page(path: &str) -> Option<u32> {
    let k = path.strip_prefix("/smx/")?;
    parse_small(k).filter(|k| *k < CROSS_PAGES)
}

fn parse_small(k: &str) -> Option<u32> {
    if k.is_empty() || k.len() > 6 || (k.len() > 1 && k.starts_with('0')) {
        return None;
    }
    k.parse().ok()
}

/// Sitemap-only URLs (canonical, HTTP), the manifest's `S` entries: host 0's `/sm/k`
/// and [`CHAIN_HOST`]'s `/smb/k`.
#[must_use]
pub fn sitemap_only_urls(site: &Site) -> Vec<String> {
    (0..SITEMAP_ONLY_PAGES)
        .map(|k| site.url(Scheme::Http, HOST, &format!("/sm/{k}")))
        .chain((0..CHAIN_PAGES).map(|k| site.url(Scheme::Http, CHAIN_HOST, &format!("/smb/{k}"))))
        .collect()
}

/// URLs the cross-host sitemap lists (a crawler must refuse them).
#[must_use]
pub fn cross_urls(site: &Site) -> Vec<String> {
    (0..CROSS_PAGES)
        .map(|k| site.url(Scheme::Http, CROSS_HOST, &format!("/smx/{k}")))
        .collect()
}

/// The body and Content-Type of sitemap file `path` on host 0, `None` when `path` is
/// not one.
#[must_use]
pub fn file(site: &Site, scheme: Scheme, path: &str) -> Option<(&'static str, Vec<u8>)> {
    let url = |p: &str| site.url(scheme, HOST, p);
    let xml = |body: String| Some(("application/xml", body.into_bytes()));
    match path {
        INDEX => {
            let children = [
                "/sitemap-pages.xml",
                "/sitemap-pages-2.xml.gz",
                "/sitemap-nested-index.xml",
                "/sitemap-cross.xml",
            ];
            xml(index(children.iter().map(|c| url(c)), site.file_lastmod()))
        }
        "/sitemap-nested-index.xml" => xml(index(
            std::iter::once(url("/sitemap-nested.xml")),
            site.file_lastmod(),
        )),
        STORAGE_INDEX => xml(index(
            std::iter::once(url("/sitemap-storage.xml")),
            site.file_lastmod(),
        )),
        "/sitemap-pages-2.xml.gz" => {
            let body = urlset(site, scheme, &urlset_entries(site, path)?);
            let gz = coding::encode(coding::Coding::Gzip, body.as_bytes()).ok()?;
            Some(("application/gzip", gz))
        }
        "/sitemap-pages.xml"
        | "/sitemap-nested.xml"
        | "/sitemap-cross.xml"
        | "/sitemap-storage.xml" => xml(urlset(site, scheme, &urlset_entries(site, path)?)),
        "/sitemap-big.xml" => {
            let mut body = String::with_capacity(BIG_URLS as usize * 64 + 200);
            body.push_str(DECL);
            body.push_str(&format!("<urlset xmlns=\"{NS}\">\n"));
            for k in 0..BIG_URLS {
                body.push_str(&format!(
                    "<url><loc>{}</loc></url>\n",
                    url(&format!("/big/{k}"))
                ));
            }
            body.push_str("</urlset>\n");
            xml(body)
        }
        "/sitemap-bomb.xml.gz" => Some(("application/gzip", bomb().to_vec())),
        _ => None,
    }
}

/// One `<url>` of a sitemap file: host, path, whether it carries a `<lastmod>`.
pub(crate) type UrlEntry = (u32, String, bool);

/// The entries of the `<urlset>` files robots.txt leads to, `None` for other paths.
fn urlset_entries(site: &Site, path: &str) -> Option<Vec<UrlEntry>> {
    let sm = |ks: std::ops::Range<u32>| -> Vec<UrlEntry> {
        ks.map(|k| (HOST, format!("/sm/{k}"), true)).collect()
    };
    Some(match path {
        "/sitemap-pages.xml" => {
            let mut entries = vec![(HOST, "/".to_owned(), true)];
            for k in 1..site.page_count(HOST) {
                let p = format!("/p/{k}");
                if !site.is_gone(HOST, &p) {
                    entries.push((HOST, p, true));
                }
            }
            for k in 0..site.new_page_count(HOST) {
                entries.push((HOST, format!("/new/{k}"), true));
            }
            entries.extend(sm(0..15));
            entries
        }
        "/sitemap-pages-2.xml.gz" => sm(15..25),
        "/sitemap-nested.xml" => sm(25..SITEMAP_ONLY_PAGES),
        "/sitemap-cross.xml" => (0..CROSS_PAGES)
            .map(|k| (CROSS_HOST, format!("/smx/{k}"), false))
            .collect(),
        "/sitemap-storage.xml" => (0..CHAIN_PAGES)
            .map(|k| (CHAIN_HOST, format!("/smb/{k}"), false))
            .chain(std::iter::once((CROSS_HOST, "/smx/0".to_owned(), false)))
            .collect(),
        _ => return None,
    })
}

/// Every URL (HTTP) that the sitemaps robots.txt leads to list with a `<lastmod>`,
/// with that date in seconds since the epoch: host 0's own pages (the only dated
/// entries). Deterministic for a seed, and all before 2025-07 in generation 0
/// ([`Site::last_modified_secs`]), so before any crawl run now: the list a re-crawl
/// with `--sitemap-lastmod skip` is checked against (`--sitemap-lastmods FILE`).
#[must_use]
pub fn listed_lastmods(site: &Site) -> Vec<(String, i64)> {
    LINKED_FILES
        .iter()
        .filter_map(|f| urlset_entries(site, f))
        .flatten()
        .filter(|(_, _, dated)| *dated)
        .map(|(host, path, _)| {
            let secs = site.last_modified_secs(host, &path);
            (site.url(Scheme::Http, host, &path), secs)
        })
        .collect()
}

/// The sitemap gzip bomb, built once.
#[must_use]
pub fn bomb() -> &'static [u8] {
    static B: OnceLock<Vec<u8>> = OnceLock::new();
    B.get_or_init(|| {
        let prefix = format!("{DECL}<urlset xmlns=\"{NS}\">\n");
        crate::bomb::gzip_prefixed_run(prefix.as_bytes(), b' ', BOMB_BYTES / 258)
    })
}

pub(crate) fn index(children: impl Iterator<Item = String>, lastmod_secs: i64) -> String {
    let mut s = format!("{DECL}<sitemapindex xmlns=\"{NS}\">\n");
    for loc in children {
        s.push_str(&format!(
            "  <sitemap>\n    <loc>{loc}</loc>\n    <lastmod>{}</lastmod>\n  </sitemap>\n",
            coding::format_w3c_date(lastmod_secs)
        ));
    }
    s.push_str("</sitemapindex>\n");
    s
}

/// A `<urlset>` of `entries` (host, path, with lastmod).
pub(crate) fn urlset(site: &Site, scheme: Scheme, entries: &[UrlEntry]) -> String {
    let mut s = format!("{DECL}<urlset xmlns=\"{NS}\">\n");
    for (host, path, with_lastmod) in entries {
        let host = *host;
        s.push_str(&format!(
            "  <url>\n    <loc>{}</loc>\n",
            site.url(scheme, host, path)
        ));
        if *with_lastmod {
            s.push_str(&format!(
                "    <lastmod>{}</lastmod>\n",
                coding::format_w3c_date(site.last_modified_secs(host, path))
            ));
        }
        s.push_str("    <changefreq>weekly</changefreq>\n  </url>\n");
    }
    s.push_str("</urlset>\n");
    s
}
