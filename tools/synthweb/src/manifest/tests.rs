//! The manifest's walk, policy and filters, on small webs.

use std::collections::{BTreeSet, HashSet};

use super::host_rules::HostRules;
use super::page_reading::{abstract_own_locations, fingerprint, says_nofollow};
use super::*;
use crate::config::{Profiles, SiteConfig, Span};
use crate::formats::Robots4xx;
use crate::hosts::{HostRole, TrapKind};
use crate::robots::RobotsVerdict;
use crate::site::Scheme;

/// A small web (short pages, few pages per host) so debug-build tests stay fast.
fn site(hosts: u32, profiles: Profiles) -> Site {
    Site::new(SiteConfig {
        hosts,
        profiles,
        page_bytes: Span {
            min: 1_024,
            max: 2_048,
        },
        out_degree: Span { min: 10, max: 30 },
        pages_per_host: Span { min: 10, max: 30 },
        ..SiteConfig::default()
    })
    .unwrap()
}

#[test]
fn repetition_filter() {
    for (path, trap) in [
        ("/", false),
        ("/d/sub/sub/sub/", false),
        ("/d/sub/sub/sub/sub/", true),
        ("/a/b/a/b/a/", false),
        ("/a/b/a/b/a/b/", true),
        ("/x/y/z/x/y/z/x/y/", false),
        ("/x/y/z/x/y/z/x/y/z", true),
        ("/q/1?a=/a/a/a/a", false),
        ("/a/x/a/y/a/z/a", true),
    ] {
        assert_eq!(is_repetitive(path), trap, "{path}");
    }
}

#[test]
fn indexed_robots_rules_agree_with_the_oracle() {
    let s = site(40, Profiles::default());
    let paths = [
        "/",
        "/p/1",
        "/private/1",
        "/private/open/1",
        "/private",
        "/x/1.php",
        "/x/1.php5",
        "/x/1.html?y=1",
        "/x/1.html?z=1",
        "/tmp/1",
        "/tmp",
        "/junk/77/a",
        "/junk/7",
        "/robots.txt",
        "/~u1/",
        "/wiki/Caf%C3%A9_0",
        "/q/1?a=1&b=two",
    ];
    for strict in [false, true] {
        let policy = ManifestPolicy {
            robots_4xx_disallow: strict,
            ..ManifestPolicy::default()
        };
        for host in 0..40 {
            let rules = HostRules::new(&s.robots(Scheme::Http, host).fetch, &policy);
            for path in paths {
                let oracle = s.robots_allows(host, "trawl", path, strict) == RobotsVerdict::Allowed;
                assert_eq!(
                    rules.allows(path),
                    oracle,
                    "host {host} {path} strict {strict}"
                );
            }
        }
    }
}

#[test]
fn own_locations_are_abstracted_like_trawl() {
    let listing = |dir: &str, parent: &str| {
        format!(
            "<title>Index of {}</title><h1>Index of {dir}</h1><a href=\"{parent}\">up</a>\
             <a href=\"sub/\">sub/</a>",
            dir.trim_end_matches('/')
        )
    };
    let a = abstract_own_locations("/ls/sub/", listing("/ls/sub/", "/ls/").as_bytes()).into_owned();
    let b = abstract_own_locations(
        "/ls/sub/alt/",
        listing("/ls/sub/alt/", "/ls/sub/").as_bytes(),
    )
    .into_owned();
    assert_eq!(a, b);
    // The root has no own location; an end tag is not a mention of `/a`.
    assert_eq!(&*abstract_own_locations("/", b"/x/"), b"/x/");
    assert_eq!(&*abstract_own_locations("/a/b/", b"</a>"), b"</a>");
    assert_ne!(
        abstract_own_locations("/p/1", b"<a href=\"/p/2\">").into_owned(),
        abstract_own_locations("/p/2", b"<a href=\"/p/3\">").into_owned()
    );
}

#[test]
fn fingerprints_tell_bodies_apart() {
    let bodies: [&[u8]; 6] = [b"", b"\0", b"a", b"abcdefgh", b"abcdefgh\0", b"abcdefgi"];
    let prints: HashSet<u128> = bodies.iter().map(|b| fingerprint(b)).collect();
    assert_eq!(prints.len(), bodies.len());
    assert_eq!(fingerprint(b"same body"), fingerprint(b"same body"));
}

#[test]
fn nofollow_directives() {
    assert!(says_nofollow("NOINDEX, NOFOLLOW"));
    assert!(says_nofollow("none"));
    assert!(says_nofollow("trawl: nofollow"));
    assert!(!says_nofollow("noindex"));
}

#[test]
fn manifest_is_deterministic_and_consistent() {
    let s = site(40, Profiles::default());
    let a = compute(&s, &ManifestPolicy::default()).unwrap();
    let b = compute(&s, &ManifestPolicy::default()).unwrap();
    assert_eq!(a, b);
    assert!(a.must.is_disjoint(&a.forbidden));
    assert!(a.must.contains("http://h000000.synth.test:8080/"));
    assert!(a.must.len() > 500, "{}", a.must.len());
    assert!(!a.forbidden.is_empty());
    // Every M URL is allowed by robots and passes the filters; hidden targets are F.
    for url in &a.must {
        let t = Walk::new(&s, &ManifestPolicy::default())
            .target(url, 0)
            .unwrap();
        assert_eq!(
            s.robots_allows(t.host, "trawl", t.path_q(), false),
            RobotsVerdict::Allowed,
            "{url}"
        );
    }
    assert!(a.forbidden.iter().any(|u| u.contains("/hidden/")));
    assert!(!a
        .must
        .iter()
        .any(|u| u.contains("/hidden/") || u.contains("/img/")));
    // Round trip through the file format.
    let mut out = Vec::new();
    formats::write_manifest(&mut out, &a).unwrap();
    assert_eq!(formats::read_manifest(out.as_slice()).unwrap(), a);
}

#[test]
fn robots_catalogue_shapes_m_and_f() {
    let s = site(40, Profiles::default());
    let m = compute(&s, &ManifestPolicy::default()).unwrap();
    for host in 0..40 {
        let name = s.host_name(host);
        let on_host: Vec<&String> = m.must.iter().filter(|u| u.contains(&name)).collect();
        match s.robots_entry(host).fetch() {
            RobotsFetch::ServerError(_) => assert!(on_host.is_empty(), "{name}"),
            _ if s.robots_allows(host, "trawl", "/", false) == RobotsVerdict::Disallowed => {
                assert!(on_host.is_empty(), "{name}")
            }
            _ => {}
        }
    }
    let strict = ManifestPolicy {
        robots_4xx_disallow: true,
        ..ManifestPolicy::default()
    };
    let m4 = compute(&s, &strict).unwrap();
    assert!(m4.must.len() < m.must.len());
    assert_eq!(m4.header.robots_4xx, Robots4xx::Disallow);
}

#[test]
fn traps_are_cut_by_filters_and_budget() {
    let s = site(
        30,
        Profiles {
            traps: true,
            hostile: false,
            ..Profiles::default()
        },
    );
    let policy = ManifestPolicy {
        max_pages_per_host: 300,
        ..ManifestPolicy::default()
    };
    let m = compute(&s, &policy).unwrap();
    let host = |kind| {
        let i = crate::hosts::TRAP_HOSTS
            .iter()
            .find(|(_, k)| *k == kind)
            .unwrap()
            .0;
        format!("http://{}:8080", s.host_name(i))
    };
    let on = |set: &BTreeSet<String>, kind| {
        let h = host(kind);
        set.iter().filter(|u| u.starts_with(&h)).count()
    };
    // Symlink loop: /, /d/, /d/sub/ .. /d/sub/sub/sub/, which is a copy of
    // /d/sub/sub/ (own directory abstracted), so the fourth `sub` is never linked.
    let d = host(TrapKind::SymlinkLoop);
    let under = |prefix: &str| {
        let p = format!("{d}{prefix}");
        m.must.iter().filter(|u| u.starts_with(&p)).count()
    };
    assert_eq!(under("/d/"), 4);
    assert!(m.must.contains(&format!("{d}/")));
    assert!(m.must.contains(&format!("{d}/d/sub/sub/sub/")));
    assert!(!m.must.contains(&format!("{d}/d/sub/sub/sub/sub/")));
    // The self-listing loop: /ls/ and the first level below it are new pages, every
    // deeper listing is a copy (own directory abstracted), whose links are not
    // followed: 7 fetches, where the URL filters alone would allow 134.
    let mut ls: Vec<&str> = m
        .must
        .iter()
        .filter_map(|u| u.strip_prefix(&format!("{d}/ls/")))
        .collect();
    ls.sort_unstable();
    assert_eq!(
        ls,
        [
            "",
            "alt/",
            "index.html",
            "sub/",
            "sub/alt/",
            "sub/index.html",
            "sub/sub/"
        ]
    );
    assert_eq!(on(&m.must, TrapKind::SymlinkLoop), 1 + 4 + 7);
    let a = host(TrapKind::PeriodTwo);
    assert!(m.must.contains(&format!("{a}/a/b/a/b/a/")));
    // /a/b/a/b/a/ is a copy of /a/b/a/: its link /a/b/a/b/a/b/ is never taken.
    assert!(!m.must.contains(&format!("{a}/a/b/a/b/a/b/")));
    // Budget-limited traps: exactly the budget, and the next queued URL is F.
    for kind in [
        TrapKind::Calendar,
        TrapKind::SessionIds,
        TrapKind::MillionPages,
    ] {
        assert_eq!(on(&m.must, kind), 300, "{kind:?}");
        assert!(on(&m.forbidden, kind) >= 1, "{kind:?}");
    }
    let c = host(TrapKind::Calendar);
    assert!(m.must.contains(&format!("{c}/cal/2031/07")));
    assert!(m.forbidden.contains(&format!(
        "{c}/cal/{}/{:02}",
        2031 + (299 + 6) / 12,
        (299 + 6) % 12 + 1
    )));
    // Growing URLs stop at the length limit, before the budget.
    let g = host(TrapKind::GrowingUrls);
    assert!(on(&m.must, TrapKind::GrowingUrls) < 300);
    assert!(m
        .must
        .iter()
        .filter(|u| u.starts_with(&g))
        .all(|u| u.len() <= 2048));
    assert!(m
        .forbidden
        .iter()
        .any(|u| u.starts_with(&g) && u.len() > 2048));
    // Duplicates: every variant fetched, each once.
    assert_eq!(on(&m.must, TrapKind::Duplicates), 1 + 20 + 5);
    for i in 0..30 {
        if s.role(i) == HostRole::Normal {
            assert!(
                m.must.contains(&format!("http://{}:8080/", s.host_name(i)))
                    || s.robots_allows(i, "trawl", "/", false) == RobotsVerdict::Disallowed
            );
        }
    }
}

#[test]
fn hostile_pages_are_neither_m_nor_f() {
    let s = site(
        30,
        Profiles {
            traps: false,
            hostile: true,
            ..Profiles::default()
        },
    );
    let m = compute(&s, &ManifestPolicy::default()).unwrap();
    for (i, kind) in crate::hosts::HOSTILE_HOSTS {
        let root = format!("http://{}:8080/", s.host_name(i));
        let well_formed = kind.delivers_page() || kind.is_tls_only();
        assert_eq!(m.must.contains(&root), well_formed, "{kind:?}");
        assert!(!m.forbidden.contains(&root), "{kind:?}");
    }
}

#[test]
fn a_budget_below_ordinary_hosts_is_refused() {
    let s = site(20, Profiles::default());
    let tiny = ManifestPolicy {
        max_pages_per_host: 5,
        ..ManifestPolicy::default()
    };
    assert!(matches!(
        compute(&s, &tiny),
        Err(ManifestError::Ambiguous(_))
    ));
    let zero = ManifestPolicy {
        max_pages_per_host: 0,
        ..ManifestPolicy::default()
    };
    assert!(matches!(compute(&s, &zero), Err(ManifestError::Policy(_))));
}

#[test]
fn robots_files_are_the_redirect_targets() {
    assert_eq!(robots_files(), ["/robots-cross.txt", "/robots-real.txt"]);
}
