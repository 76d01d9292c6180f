//! Cross-submission around a ring of hosts (profile `sitemap-chain`): each host's
//! robots.txt names sitemaps that live on other hosts and list the naming host's
//! pages, the sitemaps.org way to submit one host's URLs from a storage host.
//!
//! The ring is hosts `0 .. n` (`n` = the web's host count, up to [`MAX_RING`]; all
//! indices below are mod `n`). For each host `i`:
//!
//! | where | path | what |
//! |---|---|---|
//! | host `i` | robots.txt | allow-all, ending with `Sitemap:` lines for the files of the next two rows and for `/chain-index-(i-2).xml` on host `i-1` |
//! | host `i+1` | `/chain-i.xml.gz` | gzipped `<urlset>` (`application/gzip`) listing host `i`'s `/orphan` |
//! | host `i+1` | `/chain-index-i.xml` | `<sitemapindex>` listing `/chain-deep-i.xml.gz` of host `i+2` |
//! | host `i+2` | `/chain-deep-i.xml.gz` | gzipped `<urlset>` listing host `i`'s `/orphan-deep` |
//! | host `i` | `/orphan`, `/orphan-deep` | small pages nothing links to, linking only `/` |
//!
//! `/chain-index-i.xml` is named by the robots.txt of hosts `i` and `i+2`: it may list
//! URLs of both, so its sitemap on host `i+2`, which carries that permission down the
//! chain, may list host `i`'s `/orphan-deep`. A crawler fetches every `/orphan` only
//! if a gzipped sitemap reached through robots.txt passes its refused-extension filter
//! (`.gz`) and the robots.txt permission of host `i` applies to a sitemap on another
//! host; every `/orphan-deep` only if both robots.txt permissions of the index are
//! joined (whichever robots.txt comes first: the index is read again when the second
//! permission arrives) and passed down from the index on host `i+1` to the sitemap on
//! host `i+2`. When the hosts are split between crawler nodes, the permissions have to
//! travel with the sitemap URLs from node to node. The manifest lists `/orphan` and
//! `/orphan-deep` as `S` (sitemap-only) and every chain file in `sitemap_files=`.

use crate::site::{Scheme, Site};
use crate::sitemaps::{self, urlset};

/// Most hosts in the ring (the manifest names every chain file in its header).
pub const MAX_RING: u32 = 32;
/// The sitemap-only page a host's direct chain sitemap lists.
pub const ORPHAN: &str = "/orphan";
/// The sitemap-only page a host's chain of index and sitemap lists.
pub const ORPHAN_DEEP: &str = "/orphan-deep";

/// Hosts in the ring of `site`.
#[must_use]
pub fn ring(site: &Site) -> u32 {
    site.config().hosts.min(MAX_RING)
}

/// The gzipped sitemap for host `i`'s `/orphan`, on host `i + 1`.
#[must_use]
pub fn gz_path(i: u32) -> String {
    format!("/chain-{i}.xml.gz")
}

/// The index for host `i`, on host `i + 1`.
#[must_use]
pub fn index_path(i: u32) -> String {
    format!("/chain-index-{i}.xml")
}

/// The gzipped sitemap for host `i`'s `/orphan-deep`, on host `i + 2`.
#[must_use]
pub fn deep_path(i: u32) -> String {
    format!("/chain-deep-{i}.xml.gz")
}

/// The `Sitemap:` lines host `index`'s robots.txt ends with (`None` off the ring).
#[must_use]
pub fn robots_lines(site: &Site, scheme: Scheme, index: u32) -> Option<String> {
    let n = ring(site);
    if index >= n {
        return None;
    }
    let next = (index + 1) % n;
    let prev = (index + n - 1) % n;
    Some(format!(
        "\nSitemap: {}\nSitemap: {}\nSitemap: {}\n",
        site.url(scheme, next, &gz_path(index)),
        site.url(scheme, next, &index_path(index)),
        site.url(scheme, prev, &index_path((index + n - 2) % n)),
    ))
}

/// Whether `path` is one of host `index`'s sitemap-only pages.
#[must_use]
pub fn is_orphan(site: &Site, index: u32, path: &str) -> bool {
    index < ring(site) && (path == ORPHAN || path == ORPHAN_DEEP)
}

/// The Content-Type and body of chain file `path` on host `index`, `None` when host
/// `index` serves no such file.
#[must_use]
pub fn file(
    site: &Site,
    scheme: Scheme,
    index: u32,
    path: &str,
) -> Option<(&'static str, Vec<u8>)> {
    let n = ring(site);
    if index >= n {
        return None;
    }
    let owner = |back: u32| (index + n - back) % n;
    let gz = |host: u32, page: &str| {
        let body = urlset(site, scheme, &[(host, page.to_owned(), false)]);
        let gz = crate::coding::encode(crate::coding::Coding::Gzip, body.as_bytes()).ok()?;
        Some(("application/gzip", gz))
    };
    let i = owner(1);
    if path == gz_path(i) {
        return gz(i, ORPHAN);
    }
    if path == index_path(i) {
        let child = site.url(scheme, (i + 2) % n, &deep_path(i));
        let body = sitemaps::index(std::iter::once(child), site.file_lastmod());
        return Some(("application/xml", body.into_bytes()));
    }
    let i = owner(2);
    if path == deep_path(i) {
        return gz(i, ORPHAN_DEEP);
    }
    None
}

/// The manifest's `S` URLs (HTTP): every ring host's `/orphan` and `/orphan-deep`.
#[must_use]
pub fn sitemap_only_urls(site: &Site) -> Vec<String> {
    (0..ring(site))
        .flat_map(|i| {
            [ORPHAN, ORPHAN_DEEP]
                .into_iter()
                .map(move |p| site.url(Scheme::Http, i, p))
        })
        .collect()
}

/// The request-targets of every chain file, for the manifest's `sitemap_files=`.
#[must_use]
pub fn files(site: &Site) -> Vec<String> {
    (0..ring(site))
        .flat_map(|i| [gz_path(i), index_path(i), deep_path(i)])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Profiles, SiteConfig, Span};

    fn site(hosts: u32) -> Site {
        Site::new(SiteConfig {
            hosts,
            profiles: Profiles::parse("sitemap-chain").unwrap(),
            page_bytes: Span {
                min: 1_024,
                max: 2_048,
            },
            pages_per_host: Span { min: 5, max: 10 },
            out_degree: Span { min: 5, max: 10 },
            ..SiteConfig::default()
        })
        .unwrap()
    }

    fn gunzip(b: &[u8]) -> String {
        let mut out = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(b), &mut out).unwrap();
        out
    }

    #[test]
    fn each_host_names_sitemaps_on_the_next_that_list_its_orphans() {
        let s = site(10);
        let h = |i: u32, p: &str| s.url(Scheme::Http, i, p);
        let lines = robots_lines(&s, Scheme::Http, 9).unwrap();
        assert!(lines.contains(&format!("Sitemap: {}\n", h(0, "/chain-9.xml.gz"))));
        assert!(lines.contains(&format!("Sitemap: {}\n", h(0, "/chain-index-9.xml"))));
        assert!(lines.contains(&format!("Sitemap: {}\n", h(8, "/chain-index-7.xml"))));
        let (ctype, body) = file(&s, Scheme::Http, 0, "/chain-9.xml.gz").unwrap();
        assert_eq!(ctype, "application/gzip");
        assert!(gunzip(&body).contains(&format!("<loc>{}</loc>", h(9, ORPHAN))));
        let (ctype, body) = file(&s, Scheme::Http, 0, "/chain-index-9.xml").unwrap();
        assert_eq!(ctype, "application/xml");
        let body = String::from_utf8(body).unwrap();
        assert!(body.contains("<sitemapindex"));
        assert!(body.contains(&format!("<loc>{}</loc>", h(1, "/chain-deep-9.xml.gz"))));
        let (_, body) = file(&s, Scheme::Http, 1, "/chain-deep-9.xml.gz").unwrap();
        assert!(gunzip(&body).contains(&format!("<loc>{}</loc>", h(9, ORPHAN_DEEP))));
        // Only where the ring puts them.
        assert!(file(&s, Scheme::Http, 1, "/chain-9.xml.gz").is_none());
        assert!(file(&s, Scheme::Http, 0, "/chain-deep-9.xml.gz").is_none());
        assert_eq!(sitemap_only_urls(&s).len(), 20);
        assert_eq!(files(&s).len(), 30);
        assert!(is_orphan(&s, 3, ORPHAN) && !is_orphan(&s, 3, "/orphan-2"));
    }

    #[test]
    fn the_server_answers_the_chain_and_the_manifest_lists_it() {
        let s = site(5);
        let v = s.page(Scheme::Http, 2, "/robots.txt");
        assert_eq!(v.response.status, 200);
        let robots = String::from_utf8(v.response.body.clone()).unwrap();
        assert!(robots.contains("/chain-index-2.xml"), "{robots}");
        let v = s.page(Scheme::Http, 3, "/chain-2.xml.gz");
        assert_eq!(v.response.status, 200);
        let v = s.page(Scheme::Http, 2, ORPHAN_DEEP);
        assert_eq!(v.response.status, 200);
        assert_eq!(
            s.page(Scheme::Http, 2, "/chain-2.xml.gz").response.status,
            404
        );
        let m = crate::manifest::compute(&s, &crate::manifest::ManifestPolicy::default()).unwrap();
        assert_eq!(m.sitemap_only.len(), 10);
        assert!(m.sitemap_only.contains(&s.url(Scheme::Http, 4, ORPHAN)));
        let files = &m.header.params[crate::formats::SITEMAP_FILES_PARAM];
        assert!(files.contains("/chain-deep-4.xml.gz"), "{files}");
    }
}
