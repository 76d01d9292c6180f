//! The web between two crawls (`--change-rate`) and the sitemaps profile, checked
//! without a socket: unchanged pages stay byte-identical (so a conditional request
//! gets 304), changed ones get a new ETag and a newer Last-Modified, vanished ones 404
//! or 410, new ones are linked from the root; the sitemap files say what the docs say,
//! and the manifest lists sitemap-only pages as `S` and the cross-host ones as `F`.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "test helpers: a failure is a test failure"
)]

use std::io::Read;

use synthweb::changes::Change;
use synthweb::manifest::{self, ManifestPolicy};
use synthweb::site::Conditions;
use synthweb::{Profiles, Scheme, Site, SiteConfig};

fn site(profile: &str, rate_bp: u32) -> Site {
    Site::new(SiteConfig {
        seed: 7,
        hosts: 30,
        profiles: Profiles::parse(profile).unwrap(),
        http_port: 8080,
        change_rate_bp: rate_bp,
        ..SiteConfig::default()
    })
    .unwrap()
}

#[test]
fn without_a_change_rate_nothing_changes() {
    let s = site("default", 0);
    assert_eq!(s.changes().count(), 0);
    assert_eq!(s.change_at(3, "/p/1"), None);
    assert_eq!(s.new_page_count(3), 0);
    assert_eq!(s.page(Scheme::Http, 3, "/new/0").response.status, 404);
}

#[test]
fn changed_gone_and_new_pages_match_the_list_of_changes() {
    let base = site("default", 0);
    let next = site("default", 1_000);
    let (mut changed, mut gone, mut same, mut new) = (0u32, 0u32, 0u32, 0u32);
    for host in 0..30 {
        let pages = base.page_count(host);
        for k in 1..pages {
            let path = format!("/p/{k}");
            let old = base.page(Scheme::Http, host, &path).response;
            let now = next.page(Scheme::Http, host, &path).response;
            let etag = old.header("ETag").unwrap();
            let cond = Conditions {
                if_none_match: Some(etag),
                if_modified_since: None,
            };
            match next.change_at(host, &path) {
                None => {
                    same += 1;
                    assert_eq!(old, now, "{host} {path}");
                    let nm = Site::not_modified(&now, cond).expect("304 for an unchanged page");
                    assert_eq!(nm.status, 304);
                }
                Some(Change::Changed) => {
                    changed += 1;
                    assert_eq!(now.status, 200);
                    assert_ne!(old.body, now.body);
                    assert_ne!(now.header("ETag"), old.header("ETag"));
                    assert!(Site::not_modified(&now, cond).is_none());
                    // If-Modified-Since with the old date: modified since.
                    let ims = Conditions {
                        if_none_match: None,
                        if_modified_since: old.header("Last-Modified"),
                    };
                    assert!(Site::not_modified(&now, ims).is_none());
                    assert!(
                        next.last_modified_secs(host, &path) > base.last_modified_secs(host, &path)
                    );
                    // The links stay the same: only a revision line is added.
                    let old_links: Vec<_> = base.page(Scheme::Http, host, &path).links;
                    let new_links: Vec<_> = next.page(Scheme::Http, host, &path).links;
                    assert_eq!(old_links, new_links);
                }
                Some(Change::Gone(status)) => {
                    gone += 1;
                    assert!(matches!(status, 404 | 410));
                    assert_eq!(now.status, status);
                }
                Some(Change::New) => panic!("/p/k is never new"),
            }
        }
        let n_new = next.new_page_count(host);
        new += n_new;
        let root = next.page(Scheme::Http, host, "/");
        for k in 0..n_new {
            let url = next.url(Scheme::Http, host, &format!("/new/{k}"));
            assert!(
                root.links
                    .iter()
                    .any(|l| l.url.as_deref() == Some(url.as_str())),
                "root links {url}"
            );
            assert_eq!(
                next.page(Scheme::Http, host, &format!("/new/{k}"))
                    .response
                    .status,
                200
            );
            assert_eq!(
                base.page(Scheme::Http, host, &format!("/new/{k}"))
                    .response
                    .status,
                404
            );
        }
    }
    let total = changed + gone + same;
    // 10%: 6% changed, 2% gone (binomial spread over a few thousand pages).
    assert!(
        (3..=9).contains(&(changed * 100 / total)),
        "{changed} of {total}"
    );
    assert!(
        (1..=4).contains(&(gone * 100 / total)) || gone > 0,
        "{gone} of {total}"
    );
    assert!(new > 0);
    let list: Vec<(String, Change)> = next.changes().collect();
    let count = |f: fn(&Change) -> bool| list.iter().filter(|(_, c)| f(c)).count() as u32;
    assert_eq!(count(|c| matches!(c, Change::Gone(_))), gone);
    assert_eq!(count(|c| *c == Change::New), new);
    let roots_changed = (0..30).filter(|&h| next.new_page_count(h) > 0).count() as u32;
    assert_eq!(count(|c| *c == Change::Changed), changed + roots_changed);

    // The written list: header counts agree with the lines marked allowed.
    let mut out = Vec::new();
    let counts = synthweb::changes::write_changes(&mut out, &next, &trawl_policy()).unwrap();
    let text = String::from_utf8(out).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with("# synthweb changes v1 seed=7 generation=1 change_rate_bp=1000"));
    assert!(header.ends_with(&format!(
        "changed={} gone={} new={}",
        counts.changed, counts.gone, counts.new
    )));
    let allowed: Vec<&str> = lines.filter(|l| l.ends_with(" allowed")).collect();
    assert_eq!(
        allowed.len() as u64,
        counts.changed + counts.gone + counts.new
    );
    assert!(counts.changed > 0 && counts.gone > 0 && counts.new > 0);
}

#[test]
fn generations_draw_different_changes() {
    let one = site("default", 1_000);
    let two = Site::new(SiteConfig {
        generation: 2,
        ..one.config().clone()
    })
    .unwrap();
    let a: Vec<_> = one.changes().collect();
    let b: Vec<_> = two.changes().collect();
    assert_ne!(a, b);
}

fn body(s: &Site, path: &str) -> (u16, String, Vec<u8>) {
    let r = s.page(Scheme::Http, 0, path).response;
    let ctype = r.header("Content-Type").unwrap_or("").to_owned();
    (r.status, ctype, r.body)
}

#[test]
fn sitemaps_exist_only_with_their_profile() {
    let plain = site("default", 0);
    let robots = body(&plain, "/robots.txt").2;
    assert!(!String::from_utf8_lossy(&robots).contains("Sitemap:"));
    for path in ["/sitemap_index.xml", "/sm/0", "/sitemap-big.xml"] {
        assert_eq!(body(&plain, path).0, 404, "{path}");
    }
    assert_eq!(plain.page(Scheme::Http, 2, "/smx/0").response.status, 404);
}

#[test]
fn sitemap_files_are_as_documented() {
    let s = site("sitemaps", 0);
    let robots = String::from_utf8(body(&s, "/robots.txt").2).unwrap();
    assert!(
        robots.ends_with("\nSitemap: http://h000000.synth.test:8080/sitemap_index.xml\n"),
        "{robots}"
    );
    let (status, ctype, index) = body(&s, "/sitemap_index.xml");
    assert_eq!((status, ctype.as_str()), (200, "application/xml"));
    let index = String::from_utf8(index).unwrap();
    assert!(index.contains("<sitemapindex"));
    assert_eq!(index.matches("<sitemap>").count(), 4);
    assert!(index.contains("<loc>http://h000000.synth.test:8080/sitemap-pages-2.xml.gz</loc>"));

    let pages = String::from_utf8(body(&s, "/sitemap-pages.xml").2).unwrap();
    assert!(pages.contains("<loc>http://h000000.synth.test:8080/sm/14</loc>"));
    assert!(pages.contains("<loc>http://h000000.synth.test:8080/p/1</loc>"));
    assert_eq!(
        pages.matches("<url>").count(),
        pages.matches("<lastmod>").count()
    );

    let (status, ctype, gz) = body(&s, "/sitemap-pages-2.xml.gz");
    assert_eq!((status, ctype.as_str()), (200, "application/gzip"));
    let mut xml = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut xml)
        .unwrap();
    assert_eq!(xml.matches("<url>").count(), 10);
    assert!(xml.contains("/sm/15<") && xml.contains("/sm/24<"));

    let nested = String::from_utf8(body(&s, "/sitemap-nested-index.xml").2).unwrap();
    assert!(nested.contains("<sitemapindex") && nested.contains("/sitemap-nested.xml<"));
    let leaf = String::from_utf8(body(&s, "/sitemap-nested.xml").2).unwrap();
    assert_eq!(leaf.matches("<url>").count(), 5);

    let cross = String::from_utf8(body(&s, "/sitemap-cross.xml").2).unwrap();
    assert!(cross.contains("<loc>http://h000002.synth.test:8080/smx/0</loc>"));
    assert_eq!(s.page(Scheme::Http, 2, "/smx/0").response.status, 200);

    // Host 1's robots.txt names the storage index on host 0; its sitemap lists host
    // 1's pages and one of host 2's, without dates.
    let robots1 = String::from_utf8(s.page(Scheme::Http, 1, "/robots.txt").response.body).unwrap();
    assert!(
        robots1.ends_with("\nSitemap: http://h000000.synth.test:8080/sitemap-storage-index.xml\n"),
        "{robots1}"
    );
    let storage = String::from_utf8(body(&s, "/sitemap-storage-index.xml").2).unwrap();
    assert!(storage.contains("<loc>http://h000000.synth.test:8080/sitemap-storage.xml</loc>"));
    let leaf = String::from_utf8(body(&s, "/sitemap-storage.xml").2).unwrap();
    assert_eq!(leaf.matches("<url>").count(), 5);
    assert!(leaf.contains("<loc>http://h000001.synth.test:8080/smb/0</loc>"));
    assert!(leaf.contains("<loc>http://h000002.synth.test:8080/smx/0</loc>"));
    assert!(!leaf.contains("<lastmod>"));
    for k in 0..4 {
        assert_eq!(
            s.page(Scheme::Http, 1, &format!("/smb/{k}"))
                .response
                .status,
            200
        );
    }
    assert_eq!(s.page(Scheme::Http, 1, "/smb/4").response.status, 404);
    assert_eq!(s.page(Scheme::Http, 0, "/smb/0").response.status, 404);

    let big = String::from_utf8(body(&s, "/sitemap-big.xml").2).unwrap();
    assert_eq!(big.matches("<url>").count(), 60_000);

    for k in 0..30 {
        let (status, ctype, _) = body(&s, &format!("/sm/{k}"));
        assert_eq!(status, 200);
        assert!(ctype.starts_with("text/html"));
        // It leads nowhere else: what only sitemaps reach is the page itself.
        let links: Vec<_> = s
            .page(Scheme::Http, 0, &format!("/sm/{k}"))
            .links
            .into_iter()
            .filter_map(|l| l.url)
            .collect();
        assert_eq!(links, ["http://h000000.synth.test:8080/"]);
    }
    assert_eq!(body(&s, "/sm/30").0, 404);
}

#[test]
fn the_sitemap_bomb_inflates_past_the_cap() {
    let s = site("sitemaps", 0);
    let (status, _, gz) = body(&s, "/sitemap-bomb.xml.gz");
    assert_eq!(status, 200);
    assert!(gz.len() < 2 << 20, "{} bytes", gz.len());
    // Read 60 MB (past the 50 MB cap) without reaching the end.
    let mut d = flate2::read::GzDecoder::new(&gz[..]).take(60 << 20);
    let mut head = vec![0u8; 200];
    d.read_exact(&mut head).unwrap();
    assert!(head.starts_with(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset"));
    let rest = std::io::copy(&mut d, &mut std::io::sink()).unwrap();
    assert_eq!(rest + 200, 60 << 20);
}

#[test]
fn manifest_lists_sitemap_only_pages_and_forbids_the_cross_host_ones() {
    let s = site("sitemaps", 0);
    let m = manifest::compute(&s, &ManifestPolicy::default()).unwrap();
    assert_eq!(m.sitemap_only.len(), 34);
    assert!(m
        .sitemap_only
        .contains("http://h000000.synth.test:8080/sm/29"));
    // Host 1's pages, listed only by the storage sitemap on host 0.
    assert!(m
        .sitemap_only
        .contains("http://h000001.synth.test:8080/smb/3"));
    assert!(!m.must.iter().any(|u| u.contains("/sm/")));
    assert!(m.forbidden.contains("http://h000002.synth.test:8080/smx/4"));
    assert!(m.header.params["sitemap_files"].starts_with("/sitemap_index.xml,"));
    // Without the profile: no S, the same M as ever.
    let plain = manifest::compute(&site("default", 0), &ManifestPolicy::default()).unwrap();
    assert!(plain.sitemap_only.is_empty());
    assert!(!plain.header.params.contains_key("sitemap_files"));
    assert_eq!(plain.must, m.must);
}

/// The URLs a crawl of generation 1 must fetch that a crawl of generation 0 did not
/// are exactly the `new` lines of the changes list (robots-allowed), so a re-crawl's
/// count of new pages can be checked against the list: a new page links only to pages
/// generation 0 has, never to a special URL no generation-0 page linked.
#[test]
fn the_new_urls_of_a_generation_are_the_new_lines_of_its_changes() {
    for (hosts, seed) in [(3, 42), (30, 7)] {
        let cfg = |rate_bp| SiteConfig {
            seed,
            hosts,
            profiles: Profiles::parse("default").unwrap(),
            http_port: 8080,
            change_rate_bp: rate_bp,
            ..SiteConfig::default()
        };
        let base = Site::new(cfg(0)).unwrap();
        let next = Site::new(cfg(1_000)).unwrap();
        let policy = trawl_policy();
        let m0 = manifest::compute(&base, &policy).unwrap().must;
        let m1 = manifest::compute(&next, &policy).unwrap().must;
        // Redirects and error URLs that appeared are not pages: a re-crawl counts only
        // 2xx answers as new.
        let appeared: Vec<&String> = m1
            .difference(&m0)
            .filter(|u| (200..300).contains(&status(&next, u)))
            .collect();
        let mut out = Vec::new();
        let counts = synthweb::changes::write_changes(&mut out, &next, &policy).unwrap();
        let text = String::from_utf8(out).unwrap();
        let mut listed: Vec<String> = text
            .lines()
            .filter_map(|l| l.strip_prefix("new ")?.strip_suffix(" allowed"))
            .map(str::to_owned)
            .collect();
        listed.sort();
        assert_eq!(listed.len() as u64, counts.new);
        let mut appeared: Vec<String> = appeared.into_iter().cloned().collect();
        appeared.sort();
        assert!(!listed.is_empty());
        let only_appeared: Vec<&String> = appeared.iter().filter(|u| !listed.contains(u)).collect();
        let only_listed: Vec<&String> = listed.iter().filter(|u| !appeared.contains(u)).collect();
        assert_eq!(appeared, listed, "hosts={hosts} seed={seed}: appeared only {only_appeared:?}, listed only {only_listed:?}");
    }
}

fn trawl_policy() -> ManifestPolicy {
    ManifestPolicy {
        agent: "trawl".to_owned(),
        robots_4xx_disallow: false,
        ..ManifestPolicy::default()
    }
}

/// The status `site` answers for an absolute `http://` URL of the web.
fn status(site: &Site, url: &str) -> u16 {
    let rest = url.strip_prefix("http://").unwrap();
    let slash = rest.find('/').unwrap();
    let host = site.host_index(&rest[..slash]).unwrap();
    site.page(Scheme::Http, host, &rest[slash..])
        .response
        .status
}

/// The dated entries a re-crawl may skip: host 0's pages only, the same for a seed,
/// every date before 2025-07 (so before any crawl run now), and each one the date the
/// sitemap file itself says.
#[test]
fn listed_lastmods_are_host_0_pages_dated_before_the_first_crawl() {
    let s = site("sitemaps", 0);
    let listed = synthweb::sitemaps::listed_lastmods(&s);
    assert_eq!(
        listed,
        synthweb::sitemaps::listed_lastmods(&site("sitemaps", 0))
    );
    // `/`, the /p/k pages, /sm/0..30.
    assert_eq!(listed.len() as u32, s.page_count(0) + 30);
    let july_2025 = 1_751_328_000;
    for (url, secs) in &listed {
        assert!(url.starts_with("http://h000000.synth.test:8080/"), "{url}");
        assert!(*secs < july_2025, "{url} {secs}");
    }
    let pages = String::from_utf8(body(&s, "/sitemap-pages.xml").2).unwrap();
    let (url, secs) = listed.iter().find(|(u, _)| u.ends_with("/sm/3")).unwrap();
    let date = synthweb::coding::format_w3c_date(*secs);
    assert!(pages.contains(&format!("<loc>{url}</loc>\n    <lastmod>{date}</lastmod>")));
}
