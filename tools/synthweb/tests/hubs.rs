//! Hub mode (`--hubs`, issue 26) and the name server (`--dns`): every leaf is named by
//! exactly one hub page, a leaf is 3 pages that link one another, every robots.txt
//! allows every page, a tenth of them large; the name server answers the computed
//! addresses of a million-host web over UDP.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "tests: a failure is a test failure"
)]

mod common;

use std::collections::HashSet;
use std::net::{Ipv4Addr, UdpSocket};
use std::time::Duration;

use common::{exchange, get, parse, Server};
use synthweb::dns;
use synthweb::site::hub::{HubHost, HOSTS_PER_HUB, HUB_PAGES, LEAF_PAGES, LEAVES_PER_PAGE};
use synthweb::{Scheme, Site, SiteConfig};

const HUBS: u32 = 4;

fn site() -> Site {
    Site::new(SiteConfig {
        hosts: HUBS * HOSTS_PER_HUB,
        hubs: Some(HUBS),
        http_port: 80,
        hosts_per_address: Some(1),
        ..SiteConfig::default()
    })
    .unwrap()
}

fn path(k: u32) -> String {
    if k == 0 {
        "/".to_owned()
    } else {
        format!("/p/{k}")
    }
}

/// RFC 9309 for rule sets without wildcards: the `*` group's longest matching rule wins,
/// Allow on a tie; no rule allows.
fn naive_allows(robots: &str, path: &str) -> bool {
    let mut in_star = false;
    let mut best: Option<(usize, bool)> = None;
    for line in robots.lines() {
        let line = line.split('#').next().unwrap().trim();
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim().to_ascii_lowercase(), value.trim());
        match key.as_str() {
            "user-agent" => in_star = value == "*",
            "allow" | "disallow" if in_star && !value.is_empty() => {
                assert!(!value.contains('*') && !value.contains('$'), "{value}");
                if path.starts_with(value) {
                    let allow = key == "allow";
                    let better = best.is_none_or(|(len, a)| {
                        value.len() > len || (value.len() == len && allow && !a)
                    });
                    if better {
                        best = Some((value.len(), allow));
                    }
                }
            }
            _ => {}
        }
    }
    best.is_none_or(|(_, allow)| allow)
}

#[test]
fn hubs_name_every_leaf_once_and_leaves_have_three_pages() {
    let site = site();
    let seeds: Vec<String> = site.seeds().collect();
    assert_eq!(seeds.len(), HUBS as usize);
    assert_eq!(seeds[1], "http://h000001.synth.test/");
    let mut leaves = HashSet::new();
    for hub in 0..HUBS {
        assert_eq!(site.hub_host(hub), Some(HubHost::Hub(hub)));
        for k in 0..HUB_PAGES {
            let v = site.page(Scheme::Http, hub, &path(k));
            assert_eq!(v.response.status, 200);
            let urls: Vec<&str> = v.links.iter().map(|l| l.url.as_deref().unwrap()).collect();
            let own: Vec<&str> = urls
                .iter()
                .copied()
                .filter(|u| u.contains(&site.host_name(hub)))
                .collect();
            assert_eq!(own.len(), (HUB_PAGES - 1) as usize, "hub {hub} page {k}");
            assert_eq!(urls.len(), (HUB_PAGES - 1 + LEAVES_PER_PAGE) as usize);
            for u in urls.iter().filter(|u| !own.contains(u)) {
                let name = u.trim_start_matches("http://").trim_end_matches('/');
                let leaf = site.host_index(name).unwrap();
                assert_eq!(
                    site.hub_host(leaf),
                    Some(HubHost::Leaf {
                        n: leaf - HUBS,
                        hub
                    })
                );
                assert!(leaves.insert(leaf), "leaf {leaf} named twice");
            }
        }
        assert_eq!(site.page(Scheme::Http, hub, "/p/10").response.status, 404);
    }
    assert_eq!(leaves.len(), (HUBS * (HOSTS_PER_HUB - 1)) as usize);
    let mut large = 0;
    for leaf in HUBS..site.host_count() {
        let robots = site.page(Scheme::Http, leaf, "/robots.txt").response;
        assert_eq!(robots.status, 200);
        let text = String::from_utf8(robots.body).unwrap();
        if text.len() > 1_000 {
            assert!((10_000..31_000).contains(&text.len()), "{}", text.len());
            assert!(text.lines().filter(|l| l.starts_with("Disallow:")).count() > 200);
            assert!(text.lines().any(|l| l.starts_with('#')));
            large += 1;
        } else {
            assert_eq!(text.lines().count(), 2, "{text}");
        }
        for k in 0..LEAF_PAGES {
            assert!(naive_allows(&text, &path(k)), "leaf {leaf} {}", path(k));
        }
        // Pages: a sample (every page of 4,000 leaves takes a while in debug builds).
        if leaf % 97 == 0 {
            for k in 0..LEAF_PAGES {
                let v = site.page(Scheme::Http, leaf, &path(k));
                assert_eq!(v.response.status, 200);
                assert!((1_500..=4_500).contains(&v.response.body.len()));
                let mut want: Vec<String> = (0..LEAF_PAGES)
                    .filter(|&j| j != k)
                    .map(|j| site.url(Scheme::Http, leaf, &path(j)))
                    .collect();
                let mut got: Vec<String> = v.links.iter().map(|l| l.url.clone().unwrap()).collect();
                want.sort();
                got.sort();
                assert_eq!(got, want);
            }
            assert_eq!(site.page(Scheme::Http, leaf, "/p/3").response.status, 404);
        }
    }
    let share = f64::from(large) / f64::from(HUBS * 1_000);
    assert!(
        (0.07..0.13).contains(&share),
        "large robots.txt share {share}"
    );
    // The hubs' robots.txt is two lines too.
    let hub_robots = site.page(Scheme::Http, 0, "/robots.txt").response.body;
    assert_eq!(String::from_utf8(hub_robots).unwrap().lines().count(), 2);
}

fn ask(sock: &UdpSocket, id: u16, name: &str, qtype: u16) -> Vec<u8> {
    sock.send(&dns::query(id, name, qtype)).unwrap();
    let mut buf = [0u8; 600];
    let n = sock.recv(&mut buf).unwrap();
    let r = buf[..n].to_vec();
    assert_eq!(u16::from_be_bytes([r[0], r[1]]), id);
    r
}

#[test]
fn a_million_host_hub_web_starts_small_and_its_names_resolve() {
    let mut srv = Server::start(&[
        "--hubs",
        "1000",
        "--dns",
        "127.0.0.1:0",
        "--dns-ttl-secs",
        "77",
    ]);
    assert_eq!(srv.ready["hosts"], 1_001_000);
    let rss = srv.ready["vm_rss_kb"].as_u64().unwrap();
    assert!(rss < 100 * 1024, "RSS at start {rss} KiB");
    let addr: std::net::SocketAddr = srv.ready["dns"].as_str().unwrap().parse().unwrap();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    sock.connect(addr).unwrap();
    let site = Site::new(SiteConfig {
        hosts: 1_001_000,
        hubs: Some(1_000),
        ..SiteConfig::default() // the server's addressing: 127.0.0.1 without --bind-any
    })
    .unwrap();
    for (i, host) in [0u32, 999, 1_000, 500_500, 1_000_999]
        .into_iter()
        .enumerate()
    {
        let name = site.host_name(host).to_uppercase();
        let r = ask(&sock, i as u16, &name, dns::TYPE_A);
        assert_eq!(r[3] & 0xF, 0, "{name}");
        assert_eq!(&r[6..8], &[0, 1]);
        let rr = &r[r.len() - 16..];
        assert_eq!(&rr[6..10], &77u32.to_be_bytes());
        let got = Ipv4Addr::new(rr[12], rr[13], rr[14], rr[15]);
        assert_eq!(got, site.host_addr(host), "{name}");
        let r = ask(&sock, 100 + i as u16, &name, dns::TYPE_AAAA);
        assert_eq!((r[3] & 0xF, &r[6..8]), (0, &[0u8, 0][..]), "AAAA {name}");
    }
    let r = ask(&sock, 7, "h1001000.synth.test", dns::TYPE_A);
    assert_eq!(r[3] & 0xF, 3, "past the last host: NXDOMAIN");
    let r = ask(&sock, 8, "leaf.example.org", dns::TYPE_A);
    assert_eq!(r[3] & 0xF, 5, "not our zone: REFUSED");
    // The web answers the same names (virtual hosting by Host header).
    let port = srv.http_port;
    let leaf = site.host_name(1_000_999);
    let raw = exchange(
        port,
        &get(&leaf, port, "/p/2", ""),
        Duration::from_secs(10),
        1 << 20,
    );
    assert_eq!(parse(&raw.bytes).status, 200);
    let done: serde_json::Value = serde_json::from_str(&srv.stop()).unwrap();
    assert_eq!(done["dns_queries"], 12);
    assert_eq!(done["dns_addresses"], 5);
    assert_eq!(done["dns_nxdomain"], 1);
}
