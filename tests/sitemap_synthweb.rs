//! The sitemap parser against synthweb's profile `sitemaps`, over real loopback
//! sockets: robots.txt → index → nested index → sitemaps (one gzipped) gives every
//! sitemap-only page, the cross-host sitemap's URLs are refused by the host rule, the
//! 60,000-URL sitemap is cut at 50,000, and the gzip bomb stops at 50 MB.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod crawl_support;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crawl_support::Synthweb;
use trawl::sitemap::{self, Cut, Limits, Note, Refusal, SitemapWalk, WalkLimits};
use url::Url;

/// GET `url` from synthweb (every host listens on 127.0.0.1): status and body.
fn get(url: &Url) -> (u16, Vec<u8>) {
    let port = url.port().unwrap();
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "GET {} HTTP/1.1\r\nHost: {}:{port}\r\nUser-Agent: trawl-test\r\nConnection: close\r\n\r\n",
        url.path(),
        url.host_str().unwrap()
    )
    .unwrap();
    let mut raw = Vec::new();
    s.take(64 << 20).read_to_end(&mut raw).unwrap();
    let head_end = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let head = String::from_utf8_lossy(&raw[..head_end]).into_owned();
    let status: u16 = head[9..12].parse().unwrap();
    (status, raw[head_end..].to_vec())
}

#[test]
fn synthweb_sitemaps_parse_as_documented() {
    let dir = tempfile::tempdir().unwrap();
    let mut web = Synthweb::start_with(
        dir.path(),
        &["--hosts", "4", "--profile", "sitemaps"],
        false,
    );
    let origin = format!("http://h000000.synth.test:{}", web.port);
    let (status, robots) = get(&Url::parse(&format!("{origin}/robots.txt")).unwrap());
    assert_eq!(status, 200);
    let robots = trawl::robots::RobotsTxt::parse(&robots, trawl::robots::Mode::Rfc9309);
    let named: Vec<String> = robots.sitemaps().iter().map(|s| s.url.clone()).collect();
    assert_eq!(named, [format!("{origin}/sitemap_index.xml")]);

    // Walk as the crawler will: the robots.txt of host 0 named the index, so host 0's
    // origin is the permission every file below it inherits.
    let (mut walk, notes) = SitemapWalk::from_robots(&origin, &named, WalkLimits::default());
    assert!(notes.is_empty());
    let (mut pages, mut refused, mut files) = (BTreeSet::new(), Vec::new(), 0);
    while let Some(fetch) = walk.next_fetch() {
        files += 1;
        assert!(files <= 10, "sitemap walk does not end");
        let (status, body) = get(&fetch.url);
        let step = walk.on_response(&fetch, status, &body);
        for listed in step.pages {
            assert!(listed.lastmod.is_some(), "{}", listed.url);
            pages.insert(listed.url.to_string());
        }
        for note in step.notes {
            match note {
                Note::Refused { url, refusal, .. } => refused.push((url, refusal)),
                other => panic!("{}: unexpected {other:?}", fetch.url),
            }
        }
    }
    assert_eq!(files, 6);
    for k in 0..30 {
        assert!(pages.contains(&format!("{origin}/sm/{k}")), "/sm/{k}");
    }
    assert!(pages.contains(&format!("{origin}/p/1")));
    assert_eq!(refused.len(), 5);
    assert!(refused
        .iter()
        .all(|(u, r)| u.contains("h000002") && u.contains("/smx/") && *r == Refusal::OtherOrigin));

    let limits = Limits::default();
    // The 60,000-URL sitemap: cut at 50,000, the 10,000 others counted.
    let (_, big) = get(&Url::parse(&format!("{origin}/sitemap-big.xml")).unwrap());
    let map = sitemap::parse(&big, 0, &limits).unwrap();
    assert_eq!(map.entries.len(), 50_000);
    assert_eq!(
        map.cuts,
        [Cut::Urls {
            cap: 50_000,
            dropped: 10_000
        }]
    );
    assert!(map.entries[49_999].loc.ends_with("/big/49999"));

    // The bomb: about 1.7 MB on the wire, stopped at 50 MB inflated.
    let (_, bomb) = get(&Url::parse(&format!("{origin}/sitemap-bomb.xml.gz")).unwrap());
    assert!(bomb.len() < 2 << 20);
    let map = sitemap::parse(&bomb, 0, &limits).unwrap();
    assert!(map.entries.is_empty());
    assert_eq!(
        map.cuts,
        [Cut::Bytes {
            cap_bytes: 52_428_800
        }]
    );
    assert_eq!(map.uncompressed_bytes, 52_428_800);
    web.stop();
}
