//! The generator, checked without a socket: determinism, link aliases against an
//! independent WHATWG URL parser (the `url` crate), reachability of every catalogue
//! entry, every trap and every special page.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failure is a test failure"
)]

use std::collections::{HashSet, VecDeque};

use synthweb::html::Charset;
use synthweb::robots::{RobotsFetch, CATALOGUE};
use synthweb::{
    HostRole, LinkKind, Profiles, RobotsEntry, RobotsVerdict, Scheme, Site, SiteConfig, Span,
    TrapKind,
};

fn site(seed: u64, profile: &str) -> Site {
    Site::new(SiteConfig {
        seed,
        hosts: 40,
        profiles: Profiles::parse(profile).unwrap(),
        http_port: 8080,
        ..SiteConfig::default()
    })
    .unwrap()
}

const SAMPLE: [&str; 8] = [
    "/",
    "/p/1",
    "/p/7",
    "/robots.txt",
    "/m/1",
    "/fs/0",
    "/q/2?a=2&b=two",
    "/img/1.png",
];

#[test]
fn same_seed_same_bytes_different_seed_different() {
    let (a, b, c) = (site(7, "all"), site(7, "all"), site(8, "all"));
    let mut differs = 0;
    for host in [0, 1, 5, 25, 39] {
        for t in SAMPLE {
            let (x, y, z) = (
                a.page(Scheme::Http, host, t),
                b.page(Scheme::Http, host, t),
                c.page(Scheme::Http, host, t),
            );
            assert_eq!(x.response, y.response, "host {host} {t}");
            assert_eq!(x.links, y.links);
            if x.response.body != z.response.body {
                differs += 1;
            }
        }
    }
    assert!(
        differs > 20,
        "a different seed must change most pages ({differs})"
    );
}

/// Canonical form per SYNTHWEB-FORMATS.md: WHATWG parse, drop fragment, decode %XX of
/// unreserved characters, upper-case other hex.
fn canonical(u: &url::Url) -> String {
    let mut u = u.clone();
    u.set_fragment(None);
    let s = u.as_str();
    let b = s.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let v = u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap();
            if v.is_ascii_alphanumeric() || b"-._~".contains(&v) {
                out.push(v as char);
            } else {
                out.push('%');
                out.push_str(&s[i + 1..i + 3].to_ascii_uppercase());
            }
            i += 3;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

fn html_unescape(s: &str) -> String {
    s.replace("&amp;", "&")
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
}

fn base_of(site: &Site, page_url: &url::Url, body: &[u8], charset: Charset) -> url::Url {
    let text: String = match charset {
        Charset::Utf8 => String::from_utf8(body.to_vec()).unwrap(),
        Charset::Windows1252 => body.iter().map(|&b| b as char).collect(),
    };
    let _ = site;
    match text.find("<base href=\"") {
        Some(i) => {
            let rest = &text[i + 12..];
            let end = rest.find('"').unwrap();
            page_url.join(&html_unescape(&rest[..end])).unwrap()
        }
        None => page_url.clone(),
    }
}

#[test]
fn every_extractable_link_resolves_to_its_canonical_url_and_exists() {
    let s = site(42, "all");
    let mut seen = HashSet::new();
    let mut queue: VecDeque<(u32, String)> = VecDeque::new();
    for h in [0u32, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33] {
        queue.push_back((h, "/".to_owned()));
    }
    let mut checked = 0;
    let mut kinds = HashSet::new();
    let mut exists = HashSet::new();
    while let Some((host, target)) = queue.pop_front() {
        if !seen.insert((host, target.clone())) || seen.len() > 400 {
            continue;
        }
        let v = s.page(Scheme::Http, host, &target);
        if s.role(host) != HostRole::Normal {
            continue;
        }
        if !target.starts_with("/e/404/") {
            assert_ne!(v.response.status, 404, "dangling link to {host} {target}");
        }
        let Some(cs) = v.charset else { continue };
        let page_url = url::Url::parse(&s.url(Scheme::Http, host, &target)).unwrap();
        let base = base_of(&s, &page_url, &v.response.body, cs);
        for l in &v.links {
            kinds.insert(format!("{:?}/{:?}", l.element, l.kind));
            let Some(want) = &l.url else {
                assert!(l.href.starts_with("javascript:") || l.href.starts_with("mailto:"));
                continue;
            };
            // The independent parser must agree with the generator's claim.
            let got = base.join(&html_unescape(&l.href)).unwrap();
            assert_eq!(&canonical(&got), want, "href {:?} on {}", l.href, page_url);
            checked += 1;
            if let LinkKind::Hidden(_) = l.kind {
                continue;
            }
            let u = url::Url::parse(want).unwrap();
            let to = s.host_index(u.host_str().unwrap()).unwrap();
            let t = match u.query() {
                Some(q) => format!("{}?{q}", u.path()),
                None => u.path().to_owned(),
            };
            if !t.starts_with("/e/404/") && exists.insert((to, t.clone())) {
                let r = s.page(Scheme::Http, to, &t).response;
                assert_ne!(r.status, 404, "link {want} from {page_url} is dangling");
            }
            if l.kind == LinkKind::Follow && s.role(to) == HostRole::Normal {
                queue.push_back((to, t));
            }
        }
    }
    assert!(checked > 1_000, "checked {checked} links");
    for k in [
        "A/Follow",
        "A/NoFollowRel",
        "A/NonHttp",
        "Area/Follow",
        "IFrame/Follow",
        "Frame/Follow",
        "Img/Resource",
        "Link/Resource",
        "MetaRefresh/Refresh",
        "A/Hidden(Comment)",
        "A/Hidden(Script)",
        "A/Hidden(Style)",
    ] {
        assert!(kinds.contains(k), "no {k} link seen: {kinds:?}");
    }
}

#[test]
fn hidden_links_sit_only_in_comments_scripts_styles() {
    let s = site(42, "default");
    let v = s.page(Scheme::Http, 0, "/");
    let body = String::from_utf8(v.response.body).unwrap();
    for l in v
        .links
        .iter()
        .filter(|l| matches!(l.kind, LinkKind::Hidden(_)))
    {
        let at = body.find(&l.href).unwrap();
        let before = &body[..at];
        let in_comment = before.rfind("<!--") > before.rfind("-->");
        let in_script = before.rfind("<script>") > before.rfind("</script>");
        let in_style = before.rfind("<style>") > before.rfind("</style>");
        assert!(in_comment || in_script || in_style, "{} is exposed", l.href);
    }
}

#[test]
fn page_sizes_follow_the_config() {
    let s = site(42, "default");
    for k in 1..30 {
        let n = s
            .page(Scheme::Http, 3, &format!("/p/{k}"))
            .response
            .body
            .len();
        assert!((5_000..=62_000).contains(&n), "size {n}");
    }
    let fixed = Site::new(SiteConfig {
        page_bytes: Span {
            min: 20_480,
            max: 20_480,
        },
        fixed_size: true,
        ..SiteConfig::default()
    })
    .unwrap();
    for k in 1..20 {
        let r = fixed.page(Scheme::Http, 2, &format!("/p/{k}")).response;
        assert_eq!(r.body.len(), 20_480);
        assert_eq!(r.framing, synthweb::site::Framing::ContentLength);
    }
}

#[test]
fn variety_exists_windows1252_non_ascii_framing_meta_robots() {
    let s = site(42, "default");
    let (mut cp, mut chunked, mut close, mut meta, mut xrt, mut base) = (0, 0, 0, 0, 0, 0);
    for (h, k) in (0..4).flat_map(|h| (1..80).map(move |k| (h, k))) {
        let v = s.page(Scheme::Http, h, &format!("/p/{k}"));
        if v.response.status != 200 {
            continue;
        }
        if v.charset == Some(Charset::Windows1252) {
            cp += 1;
            assert!(
                std::str::from_utf8(&v.response.body).is_err()
                    || !v.response.body.iter().any(|b| *b >= 0x80)
            );
        }
        match v.response.framing {
            synthweb::site::Framing::Chunked => chunked += 1,
            synthweb::site::Framing::Close => close += 1,
            synthweb::site::Framing::ContentLength => {}
        }
        meta += usize::from(v.meta_robots.is_some());
        xrt += usize::from(v.x_robots_tag.is_some());
        base += usize::from(String::from_utf8_lossy(&v.response.body).contains("<base href"));
    }
    assert!(
        cp > 5 && chunked > 5 && close > 2 && meta > 3 && xrt > 2 && base > 3,
        "{cp} {chunked} {close} {meta} {xrt} {base}"
    );
    let w = s.page(Scheme::Http, 0, "/wiki/Caf%C3%A9_0");
    assert_eq!(w.response.status, 200);
    let w = s.page(Scheme::Http, 0, "/wiki/Caf%c3%a9_0");
    assert_eq!(
        w.response.status, 200,
        "lower-case escapes reach the same page"
    );
    assert_eq!(s.page(Scheme::Http, 0, "/%7Eu1/").response.status, 200);
}

#[test]
fn every_robots_catalogue_entry_is_served_as_described() {
    let s = site(42, "default");
    let mut seen = HashSet::new();
    for h in 0..40 {
        let e = s.robots_entry(h);
        seen.insert(e);
        let v = s.page(Scheme::Http, h, "/robots.txt");
        let m = s.robots(Scheme::Http, h);
        assert_eq!(v.response.status, m.status, "{e:?}");
        match &m.fetch {
            RobotsFetch::Rules(_) => assert_eq!(v.response.body, e.body()),
            RobotsFetch::Redirect {
                path, cross_host, ..
            } => {
                let loc = v.response.header("Location").unwrap();
                assert!(loc.ends_with(path));
                let to = if *cross_host { 0 } else { h };
                let t = s.page(Scheme::Http, to, path).response;
                assert_eq!(t.status, 200);
            }
            RobotsFetch::NotFound(c)
            | RobotsFetch::Unauthorized(c)
            | RobotsFetch::ServerError(c) => {
                assert_eq!(v.response.status, *c);
            }
        }
    }
    assert_eq!(
        seen.len(),
        CATALOGUE.len(),
        "every entry drawn by some host"
    );
    let body = RobotsEntry::Large.body();
    assert!(
        body.len() > 300_000,
        "large robots.txt is {} bytes",
        body.len()
    );
    assert!(RobotsEntry::BomCrlf.body().starts_with(b"\xEF\xBB\xBF"));
    assert!(RobotsEntry::BomCrlf.body().windows(2).any(|w| w == b"\r\n"));
    // The oracle: host 10 draws SubtreeWithAllow.
    assert_eq!(s.robots_entry(10), RobotsEntry::SubtreeWithAllow);
    assert_eq!(
        s.robots_allows(10, "trawl", "/private/1", false),
        RobotsVerdict::Disallowed
    );
    assert_eq!(
        s.robots_allows(10, "trawl", "/private/open/1", false),
        RobotsVerdict::Allowed
    );
    assert_eq!(s.crawl_delay_secs(13, "trawl"), Some(2));
}

#[test]
fn traps_go_on_and_report_depth() {
    let s = site(42, "traps");
    assert_eq!(s.role(1), HostRole::Trap(TrapKind::Calendar));
    for (host, kind) in synthweb::hosts::TRAP_HOSTS {
        let mut target = "/".to_owned();
        let mut last_depth = 0;
        let mut bodies = HashSet::new();
        let hops = if kind == TrapKind::GrowingUrls {
            200
        } else {
            40
        };
        for hop in 0..hops {
            let v = s.page(Scheme::Http, host, &target);
            if kind == TrapKind::GrowingUrls && target.len() > 8_192 {
                assert_eq!(v.response.status, 414);
                break;
            }
            assert_eq!(v.response.status, 200, "{kind:?} hop {hop} {target}");
            let d = v.trap_depth.unwrap();
            if hop > 0 && kind != TrapKind::Duplicates {
                assert!(d > last_depth, "{kind:?} depth {d} after {last_depth}");
            }
            last_depth = d;
            bodies.insert(v.response.body.clone());
            let next = v
                .links
                .iter()
                .find(|l| {
                    l.kind == LinkKind::Follow
                        && l.url
                            .as_deref()
                            .is_some_and(|u| !u.ends_with(&target) || target == "/")
                })
                .unwrap();
            let u = url::Url::parse(next.url.as_deref().unwrap()).unwrap();
            target = match u.query() {
                Some(q) => format!("{}?{q}", u.path()),
                None => u.path().to_owned(),
            };
            if kind == TrapKind::Duplicates && hop == 1 {
                target = "/dup/3?ref=2".to_owned();
            }
        }
        match kind {
            TrapKind::GrowingUrls => assert!(target.len() > 4_096),
            TrapKind::Duplicates => assert!(bodies.len() <= 2, "same content under many URLs"),
            _ => assert!(last_depth >= 30, "{kind:?} stopped at depth {last_depth}"),
        }
    }
    assert_eq!(s.page(Scheme::Http, 7, "/p/999999").response.status, 200);
    assert_eq!(s.page(Scheme::Http, 7, "/p/1000000").response.status, 404);
    let a = s
        .page(Scheme::Http, 4, "/sess/3?sid=d4xdeadbeef")
        .response
        .body;
    let b = s
        .page(Scheme::Http, 4, "/sess/3?sid=d4x00000000")
        .response
        .body;
    let strip = |b: &[u8]| {
        String::from_utf8_lossy(b)
            .split("<a ")
            .next()
            .unwrap()
            .to_owned()
    };
    assert_eq!(strip(&a), strip(&b), "session pages share their content");
}

#[test]
fn special_pages_answer_as_documented() {
    let s = site(42, "default");
    let st = |t: &str| s.page(Scheme::Http, 0, t).response;
    for (t, code) in [
        ("/r/301/2", 301),
        ("/r/302/2", 302),
        ("/r/303/2", 303),
        ("/r/307/2", 307),
        ("/r/308/2", 308),
        ("/e/404/0", 404),
        ("/e/410/0", 410),
        ("/e/500/0", 500),
        ("/e/503/0", 503),
        ("/e/429/0", 429),
        ("/soft404/0", 200),
        ("/nowhere", 404),
    ] {
        assert_eq!(st(t).status, code, "{t}");
    }
    assert_eq!(st("/e/503/1").header("Retry-After"), Some("3"));
    assert_eq!(st("/e/429/1").header("Retry-After"), Some("5"));
    assert_eq!(st("/r/loop/a").header("Location"), Some("/r/loop/b"));
    assert_eq!(st("/r/chain/3/4").header("Location"), Some("/r/chain/2/4"));
    assert_eq!(
        s.page(Scheme::Http, 0, "/r/x/5").redirect_to.as_deref(),
        Some("http://h000005.synth.test:8080/")
    );
    assert_eq!(st("/img/2.png").header("Content-Type"), Some("image/png"));
    assert_eq!(
        st("/doc/1.pdf").header("Content-Type"),
        Some("application/pdf")
    );
    assert!(String::from_utf8_lossy(&st("/soft404/1").body).contains("not found"));
    assert!(String::from_utf8_lossy(&st("/m/1").body).contains("http-equiv=\"refresh\""));
}

#[test]
fn arbitrary_targets_never_panic() {
    let s = site(42, "all");
    let mut targets: Vec<String> = [
        "",
        "?",
        "/",
        "//",
        "/p/",
        "/p/0",
        "/p/-1",
        "/p/01",
        "/p/99999999999",
        "/p/1?x",
        "/cal/2031/13",
        "/cal/0000/01",
        "/cal/2031/7",
        "/cal/2031/06",
        "/cal/9999/12",
        "/d/subx/",
        "/d/sub",
        "/a/b/b/",
        "/a/",
        "/grow/",
        "/grow/x/",
        "/sess/",
        "/sess/1?sid=",
        "/sess/1?sid=dx",
        "/sess/1?sid=d99999999999x1",
        "/dup/1?ref=",
        "/dup/1?ref=9",
        "%",
        "%zz",
        "/%",
        "/%e",
        "/%E9",
        "/~u",
        "/~u9/",
        "/wiki/",
        "/wiki/%FF_1",
        "/q/1?",
        "/q/1?a=1&b=two",
        "/r/chain/0/1",
        "/r/chain/9/1",
        "/r/x/",
        "/r/x/99999",
        "/e/404/",
        "/e/999/1",
        "/img/.png",
        "/img/1.",
        "/doc/.pdf",
        "/hidden/comment/9",
        "/robots.txt?x",
        "/m/",
        "/fs/2",
        "/single/x",
    ]
    .iter()
    .map(|t| (*t).to_owned())
    .collect();
    let mut rng = synthweb::hash::Rng::new(9);
    let alphabet = b"/?&=%.~-_aAbpqrsuxz019:;#";
    for _ in 0..300 {
        let n = rng.range(1, 40) as usize;
        targets.push(
            (0..n)
                .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize] as char)
                .collect(),
        );
    }
    for h in 0..24 {
        for t in &targets {
            let v = s.page(Scheme::Http, h, t);
            assert!((200..600).contains(&v.response.status), "{h} {t:?}");
        }
    }
}

/// Wide mode (`--fanout`): exactly `fanout` links per root and `/p/k` page, all
/// absolute, mostly to other hosts, each resolving (by the independent parser) to the
/// URL the generator records, each target served; deterministic; and a wide world
/// really is wide: 40 pages give almost 40 x fanout distinct URLs.
#[test]
fn wide_mode_pages_link_fanout_distinct_cross_host_urls() {
    let wide = |seed| {
        Site::new(SiteConfig {
            seed,
            hosts: 100_000,
            http_port: 8080,
            page_bytes: Span {
                min: 1_024,
                max: 1_024,
            },
            fixed_size: true,
            pages_per_host: Span {
                min: 1_000_000,
                max: 1_000_000,
            },
            fanout: Some(500),
            ..SiteConfig::default()
        })
        .unwrap()
    };
    let (s, again) = (wide(42), wide(42));
    let mut distinct = HashSet::new();
    let mut links = 0;
    for (host, target) in (0..20u32).flat_map(|h| {
        [
            (h * 977, "/".to_owned()),
            (h * 977, format!("/p/{}", h + 1)),
        ]
    }) {
        let v = s.page(Scheme::Http, host, &target);
        assert_eq!(v.response.status, 200, "{host} {target}");
        assert_eq!(v.response, again.page(Scheme::Http, host, &target).response);
        assert_eq!(v.links.len(), 500, "{host} {target}");
        let body = String::from_utf8(v.response.body.clone()).unwrap();
        for l in &v.links {
            let want = l.url.as_ref().unwrap();
            assert!(l.href.starts_with("http://"), "not absolute: {}", l.href);
            assert!(body.contains(&format!("href=\"{}\"", l.href)));
            let got = url::Url::parse(&l.href).unwrap();
            assert_eq!(&canonical(&got), want);
            distinct.insert(want.clone());
            links += 1;
        }
        // A sample of targets exists.
        for l in v.links.iter().take(3) {
            let u = url::Url::parse(l.url.as_ref().unwrap()).unwrap();
            let to = s.host_index(u.host_str().unwrap()).unwrap();
            assert_ne!(s.page(Scheme::Http, to, u.path()).response.status, 404);
        }
    }
    assert_eq!(links, 40 * 500);
    assert!(
        distinct.len() > 19_900,
        "{} distinct of {links}",
        distinct.len()
    );
}
