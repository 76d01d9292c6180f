//! Mesh mode (`--mesh`): the web of a wide crawl. Each host's pages all link each
//! other, cross-host links go to roots, a share of hosts is HTTPS-only and a share of
//! cross-host links names dead hosts; the manifest lists exactly the live pages.
#![allow(clippy::unwrap_used, reason = "tests")]

use std::collections::BTreeSet;

use synthweb::config::Mesh;
use synthweb::manifest::{compute, ManifestPolicy};
use synthweb::{Scheme, Site, SiteConfig, Span};

fn mesh(hosts: u32, https_percent: u32, dead_percent: u32) -> Site {
    Site::new(SiteConfig {
        hosts,
        page_bytes: Span {
            min: 8_192,
            max: 8_192,
        },
        fixed_size: true,
        pages_per_host: Span { min: 6, max: 6 },
        seed_stride: 50,
        tls: true,
        http_port: 80,
        tls_port: Some(443),
        mesh: Some(Mesh {
            cross_links: 2,
            https_percent,
            dead_percent,
        }),
        ..SiteConfig::default()
    })
    .unwrap()
}

fn urls(site: &Site, scheme: Scheme, host: u32, target: &str) -> Vec<String> {
    site.page(scheme, host, target)
        .links
        .into_iter()
        .filter_map(|l| l.url)
        .collect()
}

#[test]
fn every_page_links_its_host_and_two_roots_elsewhere() {
    let site = mesh(200, 25, 0);
    let host = 7;
    let scheme = site.link_scheme(Scheme::Http, host);
    let own = site.url(scheme, host, "");
    for target in ["/", "/p/1", "/p/5"] {
        let view = site.page(scheme, host, target);
        assert_eq!(view.response.status, 200);
        assert_eq!(view.response.body.len(), 8_192, "{target}");
        let links = urls(&site, scheme, host, target);
        let same: BTreeSet<_> = links.iter().filter(|u| u.starts_with(&own)).collect();
        let others: Vec<_> = links.iter().filter(|u| !u.starts_with(&own)).collect();
        assert_eq!(
            same.len(),
            5,
            "{target}: every other page of the host: {same:?}"
        );
        assert!(!same.contains(&format!("{own}{target}")), "no self link");
        assert_eq!(others.len(), 2, "{target}: {others:?}");
        for u in others {
            assert!(
                u.ends_with('/') && u.matches('/').count() == 3,
                "a root: {u}"
            );
        }
    }
    assert_eq!(site.page_count(host), 6);
}

#[test]
fn https_only_hosts_are_linked_and_seeded_over_https() {
    let site = mesh(400, 25, 0);
    let https: Vec<u32> = (0..400).filter(|&h| site.is_https_only(h)).collect();
    assert!((60..=140).contains(&https.len()), "{} of 400", https.len());
    assert!(!site.is_https_only(0));
    for h in 0..400 {
        for u in urls(&site, site.link_scheme(Scheme::Http, h), h, "/") {
            let name = u.split('/').nth(2).unwrap();
            let i = site.host_index(name).unwrap();
            let want = if site.is_https_only(i) {
                "https://"
            } else {
                "http://"
            };
            assert!(u.starts_with(want), "{u}");
        }
    }
    for s in site.seeds() {
        let i = site.host_index(s.split('/').nth(2).unwrap()).unwrap();
        assert_eq!(s.starts_with("https://"), site.is_https_only(i), "{s}");
    }
}

#[test]
fn the_manifest_lists_the_live_pages_and_the_link_depth() {
    let site = mesh(300, 25, 5);
    let all: Vec<String> = (0..300u32)
        .flat_map(|h| urls(&site, site.link_scheme(Scheme::Http, h), h, "/"))
        .collect();
    let dead: Vec<_> = all.iter().filter(|u| u.contains(".dead.test")).collect();
    assert!(!dead.is_empty(), "some of {} links are dead", all.len());
    let m = compute(&site, &ManifestPolicy::default()).unwrap();
    assert!(m.must.iter().all(|u| !u.contains(".dead.test")));
    assert!(m.must.iter().all(|u| !u.contains("/robots.txt")));
    // Every live page of every reached host, over its own scheme only.
    let hosts: BTreeSet<_> = m
        .must
        .iter()
        .map(|u| u.split('/').nth(2).unwrap())
        .collect();
    assert_eq!(m.must.len(), hosts.len() * 6);
    assert!(hosts.len() > 250, "{} of 300 hosts reachable", hosts.len());
    for u in &m.must {
        let i = site.host_index(u.split('/').nth(2).unwrap()).unwrap();
        assert_eq!(u.starts_with("https://"), site.is_https_only(i), "{u}");
    }
    let depth: u32 = m.header.params["depth"].parse().unwrap();
    let root_depth: u32 = m.header.params["root_depth"].parse().unwrap();
    assert!(
        depth > root_depth && (2..=12).contains(&root_depth),
        "{depth} {root_depth}"
    );
}
