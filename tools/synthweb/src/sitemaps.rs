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
//! | `/sitemap-big.xml` | 60,000 URLs `/big/k` (404): over the 50,000 cap; linked from nowhere |
//! | `/sitemap-bomb.xml.gz` | gzip bomb: an XML declaration and `<urlset>`, then 256 MiB of spaces, in about 1.7 MB; linked from nowhere |
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

/// The index robots.txt points to.
pub const INDEX: &str = "/sitemap_index.xml";
/// Every sitemap file reachable from robots.txt, index first.
pub const LINKED_FILES: [&str; 6] = [
    INDEX,
    "/sitemap-pages.xml",
    "/sitemap-pages-2.xml.gz",
    "/sitemap-nested-index.xml",
    "/sitemap-nested.xml",
    "/sitemap-cross.xml",
];
/// The over-cap files, reachable only by being named (`--sitemap URL`).
pub const CAP_FILES: [&str; 2] = ["/sitemap-big.xml", "/sitemap-bomb.xml.gz"];

const NS: &str = "http://www.sitemaps.org/schemas/sitemap/0.9";
const DECL: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";

/// The `Sitemap:` line host 0's robots.txt ends with.
#[must_use]
pub fn robots_line(site: &Site, scheme: Scheme) -> String {
    format!("\nSitemap: {}\n", site.url(scheme, HOST, INDEX))
}

/// Whether `path` names a sitemap-only page, and which.
#[must_use]
pub fn sitemap_only_page(path: &str) -> Option<u32> {
    let k = path.strip_prefix("/sm/")?;
    parse_small(k).filter(|k| *k < SITEMAP_ONLY_PAGES)
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

/// Sitemap-only URLs (canonical, HTTP), the manifest's `S` entries.
#[must_use]
pub fn sitemap_only_urls(site: &Site) -> Vec<String> {
    (0..SITEMAP_ONLY_PAGES)
        .map(|k| site.url(Scheme::Http, HOST, &format!("/sm/{k}")))
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
        "/sitemap-pages.xml" => {
            let mut entries = vec![("/".to_owned(), true)];
            for k in 1..site.page_count(HOST) {
                let p = format!("/p/{k}");
                if !site.is_gone(HOST, &p) {
                    entries.push((p, true));
                }
            }
            for k in 0..site.new_page_count(HOST) {
                entries.push((format!("/new/{k}"), true));
            }
            entries.extend((0..15).map(|k| (format!("/sm/{k}"), true)));
            xml(urlset(site, scheme, HOST, &entries))
        }
        "/sitemap-pages-2.xml.gz" => {
            let entries: Vec<(String, bool)> =
                (15..25).map(|k| (format!("/sm/{k}"), true)).collect();
            let body = urlset(site, scheme, HOST, &entries);
            let gz = coding::encode(coding::Coding::Gzip, body.as_bytes()).ok()?;
            Some(("application/gzip", gz))
        }
        "/sitemap-nested.xml" => {
            let entries: Vec<(String, bool)> = (25..SITEMAP_ONLY_PAGES)
                .map(|k| (format!("/sm/{k}"), true))
                .collect();
            xml(urlset(site, scheme, HOST, &entries))
        }
        "/sitemap-cross.xml" => {
            let entries: Vec<(String, bool)> = (0..CROSS_PAGES)
                .map(|k| (format!("/smx/{k}"), false))
                .collect();
            xml(urlset(site, scheme, CROSS_HOST, &entries))
        }
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

/// The sitemap gzip bomb, built once.
#[must_use]
pub fn bomb() -> &'static [u8] {
    static B: OnceLock<Vec<u8>> = OnceLock::new();
    B.get_or_init(|| {
        let prefix = format!("{DECL}<urlset xmlns=\"{NS}\">\n");
        crate::bomb::gzip_prefixed_run(prefix.as_bytes(), b' ', BOMB_BYTES / 258)
    })
}

fn index(children: impl Iterator<Item = String>, lastmod_secs: i64) -> String {
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

/// A `<urlset>` of `entries` (path, with lastmod) on `host`.
fn urlset(site: &Site, scheme: Scheme, host: u32, entries: &[(String, bool)]) -> String {
    let mut s = format!("{DECL}<urlset xmlns=\"{NS}\">\n");
    for (path, with_lastmod) in entries {
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
