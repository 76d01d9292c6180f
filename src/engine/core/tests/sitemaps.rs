//! Core tests: the robots.txt permission along a chain of sitemap indexes (grants,
//! late grants, shards), and `--sitemap-lastmod skip` in a re-crawl.

use std::collections::HashMap;

use super::*;
use crate::recrawl::{IndexEntry, LastmodPolicy, Previous, Validators, Verdict};

const NS: &str = "http://www.sitemaps.org/schemas/sitemap/0.9";

pub(super) fn urlset(entries: &[(&str, Option<&str>)]) -> Vec<u8> {
    let mut s = format!("<?xml version=\"1.0\"?><urlset xmlns=\"{NS}\">");
    for (loc, lastmod) in entries {
        s.push_str(&format!("<url><loc>{loc}</loc>"));
        if let Some(l) = lastmod {
            s.push_str(&format!("<lastmod>{l}</lastmod>"));
        }
        s.push_str("</url>");
    }
    s.push_str("</urlset>");
    s.into_bytes()
}

fn index(children: &[&str]) -> Vec<u8> {
    let mut s = format!("<?xml version=\"1.0\"?><sitemapindex xmlns=\"{NS}\">");
    for c in children {
        s.push_str(&format!("<sitemap><loc>{c}</loc></sitemap>"));
    }
    s.push_str("</sitemapindex>");
    s.into_bytes()
}

/// What a run of the core against a made-up web did.
#[derive(Default)]
pub(super) struct Trace {
    /// Page requests in order: URL and `If-None-Match`.
    pub(super) requests: Vec<(String, Option<String>)>,
    /// Annotations of each fetched URL's last record.
    pub(super) notes: HashMap<String, Vec<String>>,
    /// URLs skipped on their lastmod, with their log annotations.
    skipped: Vec<(String, Vec<String>)>,
}

impl Trace {
    fn fetched(&self, url: &str) -> usize {
        self.requests.iter().filter(|(u, _)| u == url).count()
    }
}

/// A made-up answer: status, header fields, body. The header
/// `X-Test-Body-Cut` marks a body the fetch cut short.
pub(super) type Answer = (u16, Vec<(&'static str, String)>, Vec<u8>);

/// Runs the core from `from` (default: the start) until nothing is outstanding (at
/// most 200 turns, 2 s apart): robots.txt answered 200 with `robots(host)`, pages with
/// `web(url)` (`None`: 404). XML bodies are `application/xml`, bodies starting with
/// `http` `text/plain`, the rest HTML.
fn run(
    h: &mut Harness,
    from: Option<Now>,
    robots: &dyn Fn(&str) -> String,
    web: &dyn Fn(&str) -> Option<Vec<u8>>,
    trace: &mut Trace,
) -> Now {
    let answer = |url: &str| -> Answer {
        let Some(body) = web(url) else {
            return (404, Vec::new(), Vec::new());
        };
        let media = if body.starts_with(b"<?xml") {
            "application/xml"
        } else if body.starts_with(b"http") {
            "text/plain; charset=utf-8"
        } else {
            "text/html"
        };
        (200, vec![("Content-Type", media.to_owned())], body)
    };
    run_answers(h, from, robots, &answer, trace)
}

/// [`run`] with each answer made up whole (status, header fields, body).
pub(super) fn run_answers(
    h: &mut Harness,
    from: Option<Now>,
    robots: &dyn Fn(&str) -> String,
    web: &dyn Fn(&str) -> Answer,
    trace: &mut Trace,
) -> Now {
    let mut now = from.unwrap_or(h.t0);
    for _ in 0..200 {
        let actions = h.schedule(now);
        for a in &actions {
            match a {
                Action::FetchRobots(r) => {
                    let host = r.head.url.host_str().unwrap_or_default().to_owned();
                    let body = robots(&host);
                    h.feed(
                        response(r.id, r.head.url.as_str(), 200, &[], body.as_bytes()),
                        now,
                    );
                }
                Action::Fetch(r) => {
                    let url = r.head.url.to_string();
                    trace
                        .requests
                        .push((url.clone(), r.head.if_none_match.clone()));
                    let (status, headers, body) = web(&url);
                    let fields: Vec<(&str, &str)> =
                        headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
                    let mut o = response(r.id, &url, status, &fields, &body);
                    if headers.iter().any(|(k, _)| *k == "X-Test-Body-Cut") {
                        o.body_truncated = true;
                        o.body_complete = false;
                    }
                    for rec in records(&h.feed(o, now)) {
                        trace.notes.insert(url.clone(), rec.annotations.clone());
                    }
                }
                Action::Skip(s) => trace
                    .skipped
                    .push((s.item.url.clone(), s.log.annotations.clone())),
                _ => {}
            }
        }
        if h.outstanding() == 0 && h.core.in_flight() == 0 {
            return now;
        }
        now = now.plus(secs(2));
    }
    panic!("the crawl did not finish: {} outstanding", h.outstanding());
}

/// A text sitemap (one URL a line, `text/plain`) named by robots.txt is read as one;
/// a text file that a sitemap lists as a page is not, though it holds URLs too.
#[test]
fn a_text_sitemap_is_read_and_a_listed_text_page_is_not() {
    let www = "http://www.a.test/";
    let mut h = harness_with(&[www], any_scope, |_| {});
    let robots =
        |_: &str| "User-agent: *\nAllow: /\nSitemap: http://www.a.test/sitemap.txt\n".to_owned();
    let web = |url: &str| {
        match url {
        "http://www.a.test/sitemap.txt" => Some(
            b"http://www.a.test/t1\nhttp://www.a.test/t2\r\n\nnot a url\nhttp://www.a.test/notes.txt\n"
                .to_vec(),
        ),
        "http://www.a.test/notes.txt" => Some(b"http://www.a.test/never\n".to_vec()),
        _ => Some(b"<html></html>".to_vec()),
    }
    };
    let mut trace = Trace::default();
    run(&mut h, None, &robots, &web, &mut trace);
    for page in ["t1", "t2", "notes.txt"] {
        assert_eq!(
            trace.fetched(&format!("http://www.a.test/{page}")),
            1,
            "{page}"
        );
    }
    assert_eq!(trace.fetched("http://www.a.test/never"), 0);
    let map = &trace.notes["http://www.a.test/sitemap.txt"];
    assert!(map.contains(&"sitemap:urlset:3".to_owned()), "{map:?}");
    assert!(map.contains(&"sitemap-skipped:1".to_owned()), "{map:?}");
    let notes = &trace.notes["http://www.a.test/notes.txt"];
    assert!(!notes.iter().any(|n| n.starts_with("sitemap")), "{notes:?}");
}

/// A re-crawl's 304 for an index: its children come back as previous links, and the
/// child sitemaps among them get the index's grant (www's robots.txt named the index
/// on the storage host), so a child listing www pages admits them; a page the index
/// does not name as a sitemap file gets no grant.
#[test]
fn the_children_of_an_index_answered_304_get_its_grant() {
    let mut h = harness_with(&["http://www.a.test/"], any_scope, |_| {});
    let now = h.t0;
    let line = "User-agent: *\nAllow: /\nSitemap: http://storage.b.test/index.xml\n";
    let mut out = Vec::new();
    h.core.queue_robots_sitemaps(
        "http://www.a.test",
        &response(0, "http://www.a.test/robots.txt", 200, &[], line.as_bytes()),
        now,
        &mut out,
    );
    let index = QueuedUrl {
        url: "http://storage.b.test/index.xml".to_owned(),
        via: Some("http://www.a.test/robots.txt".to_owned()),
        hops: "S".to_owned(),
        attempts: 0,
    };
    let children = [
        (
            "http://storage.b.test/maps/s1.xml".to_owned(),
            crate::provenance::Hop::Manifest,
        ),
        (
            "http://storage.b.test/a-page".to_owned(),
            crate::provenance::Hop::Manifest,
        ),
    ];
    h.core.on_previous_links(&index, &children, now, &mut out);
    let memory = &h.shared.memory.sitemaps;
    assert_eq!(
        memory.origins("http://storage.b.test/maps/s1.xml"),
        Some(vec!["http://www.a.test".to_owned()])
    );
    assert_eq!(memory.origins("http://storage.b.test/a-page"), None);
}

/// Queues a sitemap fetch as the engine does (presence bit set, counted outstanding).
fn queue_sitemap(h: &mut Harness, url: &str, via: Option<&str>, hops: &str) {
    h.shared.outstanding.add(1);
    h.shared.memory.seen.test_and_set(url.as_bytes());
    let key = host_key(&Url::parse(url).expect("url")).expect("host");
    let item = QueuedUrl {
        url: url.to_owned(),
        via: via.map(str::to_owned),
        hops: hops.to_owned(),
        attempts: 0,
    };
    let mut out = Vec::new();
    h.core.push(&key, item, h.t0, &mut out);
    assert!(out.is_empty(), "{out:?}");
}

pub(super) fn any_scope(c: &mut TestConfig) {
    c.filter.scope = Scope::Any;
}

/// The common real case: www's robots.txt names an index on a storage host, whose
/// sitemaps list www pages. Those pass on the grant the index inherited; a third
/// host's URL and a storage URL outside the sitemap's directory do not.
#[test]
fn a_sitemap_listed_by_an_index_carries_the_robots_grant_of_the_index() {
    let www = "http://www.a.test/";
    let mut h = harness_with(&[www], any_scope, |_| {});
    let robots = |host: &str| match host {
        "www.a.test" => {
            "User-agent: *\nAllow: /\nSitemap: http://storage.b.test/index.xml\n".to_owned()
        }
        _ => String::new(),
    };
    let web = |url: &str| match url {
        "http://storage.b.test/index.xml" => Some(index(&["http://storage.b.test/maps/s1.xml"])),
        "http://storage.b.test/maps/s1.xml" => Some(urlset(&[
            ("http://www.a.test/only-in-a-sitemap", None),
            ("http://storage.b.test/maps/page", None),
            ("http://c.test/third-host", None),
            ("http://storage.b.test/elsewhere", None),
        ])),
        _ => Some(b"<html></html>".to_vec()),
    };
    let mut trace = Trace::default();
    run(&mut h, None, &robots, &web, &mut trace);
    assert_eq!(trace.fetched("http://www.a.test/only-in-a-sitemap"), 1);
    assert_eq!(trace.fetched("http://storage.b.test/maps/page"), 1);
    assert_eq!(trace.fetched("http://c.test/third-host"), 0);
    assert_eq!(trace.fetched("http://storage.b.test/elsewhere"), 0);
    let s1 = &trace.notes["http://storage.b.test/maps/s1.xml"];
    assert!(s1.contains(&"sitemap:urlset:2".to_owned()), "{s1:?}");
    assert!(s1.contains(&"sitemap-refused:2".to_owned()), "{s1:?}");
    assert_eq!(h.shared.counters.get(Counter::SitemapUrlsRefused), 2);
    // The grant went down the chain: index and child both carry www's origin only.
    for s in [
        "http://storage.b.test/index.xml",
        "http://storage.b.test/maps/s1.xml",
    ] {
        assert_eq!(
            h.shared.memory.sitemaps.read(s),
            Some(vec!["http://www.a.test".to_owned()]),
            "{s}"
        );
    }
}

/// Before grants, the same web refused the www page: the child sitemap's permission
/// was its referrer's origin (the storage host). The fallback is kept for a sitemap
/// with no known grant (a cap, a resume): here, a child nobody granted.
#[test]
fn without_a_grant_the_referrers_origin_is_the_permission() {
    let mut h = harness_with(&[], any_scope, |_| {});
    queue_sitemap(
        &mut h,
        "http://storage.b.test/maps/s1.xml",
        Some("http://storage.b.test/idx/index.xml"),
        "SS",
    );
    let robots = |_: &str| String::new();
    let web = |url: &str| match url {
        "http://storage.b.test/maps/s1.xml" => Some(urlset(&[
            ("http://www.a.test/only-in-a-sitemap", None),
            ("http://storage.b.test/other/page", None),
        ])),
        _ => Some(b"<html></html>".to_vec()),
    };
    let mut trace = Trace::default();
    let now = run(&mut h, None, &robots, &web, &mut trace);
    assert_eq!(trace.fetched("http://www.a.test/only-in-a-sitemap"), 0);
    assert_eq!(trace.fetched("http://storage.b.test/other/page"), 1);
    // The fallback was recorded as the sitemap's grant, so www's robots.txt naming it
    // later is a wider grant after the read: the sitemap is read again, and the www
    // page it lists is fetched (a re-crawl meets this when a child sitemap comes
    // before the robots.txt that named its index).
    let line = "User-agent: *\nAllow: /\nSitemap: http://storage.b.test/maps/s1.xml\n";
    let mut out = Vec::new();
    h.core.queue_robots_sitemaps(
        "http://www.a.test",
        &response(0, "http://www.a.test/robots.txt", 200, &[], line.as_bytes()),
        now,
        &mut out,
    );
    let robots = |_: &str| line.to_owned();
    run(&mut h, Some(now.plus(secs(5))), &robots, &web, &mut trace);
    assert_eq!(trace.fetched("http://storage.b.test/maps/s1.xml"), 2);
    assert_eq!(trace.fetched("http://www.a.test/only-in-a-sitemap"), 1);
}

/// A second robots.txt names a sitemap already read: the sitemap (and the child it
/// lists) is read again once with the wider grant, and the page the first read
/// refused is fetched. A third naming by a robots.txt already counted changes nothing.
#[test]
fn a_grant_after_the_read_reads_the_sitemap_again() {
    let storage = "http://storage.b.test/";
    let mut h = harness_with(&[storage], any_scope, |_| {});
    let line = "User-agent: *\nAllow: /\nSitemap: http://storage.b.test/index.xml\n";
    let robots = |_: &str| line.to_owned();
    let web = |url: &str| match url {
        "http://storage.b.test/index.xml" => Some(index(&["http://storage.b.test/s1.xml"])),
        "http://storage.b.test/s1.xml" => Some(urlset(&[
            ("http://www.a.test/p", None),
            ("http://storage.b.test/q", None),
        ])),
        _ => Some(b"<html></html>".to_vec()),
    };
    let mut trace = Trace::default();
    let now = run(&mut h, None, &robots, &web, &mut trace);
    assert_eq!(trace.fetched("http://storage.b.test/s1.xml"), 1);
    assert_eq!(trace.fetched("http://www.a.test/p"), 0);
    assert_eq!(trace.fetched("http://storage.b.test/q"), 1);
    // Now www's robots.txt (naming the same index) comes in.
    h.seed("http://www.a.test/");
    let now = run(&mut h, Some(now.plus(secs(5))), &robots, &web, &mut trace);
    assert_eq!(trace.fetched("http://storage.b.test/index.xml"), 2);
    assert_eq!(trace.fetched("http://storage.b.test/s1.xml"), 2);
    assert_eq!(trace.fetched("http://www.a.test/p"), 1);
    assert_eq!(trace.fetched("http://storage.b.test/q"), 1);
    assert_eq!(
        trace.notes["http://storage.b.test/s1.xml"],
        vec!["sitemap:urlset:2".to_owned()]
    );
    // Named again by a host already granted: no third read.
    let mut out = Vec::new();
    h.core.queue_robots_sitemaps(
        "http://www.a.test",
        &response(0, "http://www.a.test/robots.txt", 200, &[], line.as_bytes()),
        now,
        &mut out,
    );
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(h.outstanding(), 0);
}

/// A child to read again is held until the next schedule, outstanding and in a
/// checkpoint, so neither the end of the crawl nor a resume loses it.
#[test]
fn a_child_to_read_again_is_held_in_the_checkpoint() {
    let mut h = harness_with(&[], any_scope, |_| {});
    let idx = "http://storage.b.test/index.xml";
    let child = "http://storage.b.test/s1.xml";
    h.shared
        .memory
        .sitemaps
        .grant(idx, &["http://storage.b.test".to_owned()]);
    h.shared
        .memory
        .sitemaps
        .grant(child, &["http://storage.b.test".to_owned()]);
    h.shared.memory.sitemaps.read(child);
    h.shared.memory.seen.test_and_set(child.as_bytes());
    // A second robots.txt granted the index www after the child was read.
    h.shared
        .memory
        .sitemaps
        .grant(idx, &["http://www.a.test".to_owned()]);
    queue_sitemap(&mut h, idx, Some("http://www.a.test/robots.txt"), "S");
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    let body = index(&[child]);
    let after = h.feed(
        response(id, &url, 200, &[("Content-Type", "application/xml")], &body),
        t1,
    );
    assert!(fetches(&after).is_empty());
    assert_eq!(h.checkpointed(), [child]);
    assert_eq!(h.outstanding(), 1);
    let (_, again) = h.one_fetch(t1.plus(secs(2)));
    assert_eq!(again, child);
    assert_eq!(
        h.shared.memory.sitemaps.read(child).map(|o| o.len()),
        Some(2)
    );
}

/// A resume: the grants are gone, but the robots cache comes back from the checkpoint
/// with www's `Sitemap:` line, which grants the storage index again; the storage
/// child that was queued (its index read before the checkpoint) inherits that grant
/// through its referrer, so www's page is still admitted.
#[test]
fn after_a_resume_the_restored_robots_txt_grants_again() {
    let line = "User-agent: *\nAllow: /\nSitemap: http://storage.b.test/index.xml\n";
    let mut before = harness_with(&["http://www.a.test/"], any_scope, |_| {});
    before.robots(before.t0, 200, line);
    let restored: Vec<_> = before
        .core
        .robots()
        .entries_lru()
        .map(|(k, p)| (k.clone(), p.clone()))
        .collect();
    assert_eq!(restored.len(), 1);

    let mut h = harness_with(&[], any_scope, |_| {});
    let filter = Arc::new(UrlFilter::new(h.filter.clone(), &[]).expect("filter"));
    let frontier = FrontierConfig::new(std::path::PathBuf::from("frontier-resumed-in-memory"));
    h.core = Core::new(CoreParts {
        index: 0,
        shards: 1,
        shared: Arc::clone(&h.shared),
        frontier: Frontier::in_memory(frontier),
        filter,
        tallies: Default::default(),
        robots: {
            let mut cache = crate::engine::core::robots_cache(&h.shared.settings, 0);
            for (key, policy) in restored {
                crate::engine::core::restore_robots(&h.shared, &mut cache, key, policy);
            }
            cache
        },
    });
    assert_eq!(
        h.shared
            .memory
            .sitemaps
            .origins("http://storage.b.test/index.xml"),
        Some(vec!["http://www.a.test".to_owned()])
    );
    queue_sitemap(
        &mut h,
        "http://storage.b.test/maps/s1.xml",
        Some("http://storage.b.test/index.xml"),
        "SS",
    );
    let robots = |_: &str| String::new();
    let web = |url: &str| match url {
        "http://storage.b.test/maps/s1.xml" => Some(urlset(&[
            ("http://www.a.test/only-in-a-sitemap", None),
            ("http://c.test/third-host", None),
        ])),
        _ => Some(b"<html></html>".to_vec()),
    };
    let mut trace = Trace::default();
    run(&mut h, None, &robots, &web, &mut trace);
    assert_eq!(trace.fetched("http://www.a.test/only-in-a-sitemap"), 1);
    assert_eq!(trace.fetched("http://c.test/third-host"), 0);
    assert_eq!(
        h.shared
            .memory
            .sitemaps
            .read("http://storage.b.test/maps/s1.xml"),
        Some(vec!["http://www.a.test".to_owned()])
    );
}

/// A child sitemap on a host another shard owns (allowed: that host's robots.txt
/// named the index too) leaves as a route; its grant is in the memory all shards
/// share, so the shard that reads it uses www's permission as well.
#[test]
fn a_child_on_another_shard_finds_its_grant_in_the_shared_memory() {
    let www = "http://www.a.test/";
    // Two shards; this core is shard 0. Find hosts on each side.
    let mut h = harness_with(
        &[],
        |c| {
            c.shards = 2;
            any_scope(c);
        },
        |_| {},
    );
    let host_on = |shard: usize| {
        (0..100)
            .map(|i| format!("http://s{i}.test"))
            .find(|k| shard_of(k, 2) == shard)
            .expect("a host")
    };
    let (mine, theirs) = (host_on(0), host_on(1));
    let idx = format!("{mine}/index.xml");
    let child = format!("{theirs}/s1.xml");
    // www's robots.txt and the other host's both named the index: it may list a
    // sitemap there, which carries both grants.
    let granted = vec![www.trim_end_matches('/').to_owned(), theirs.clone()];
    h.shared.memory.sitemaps.grant(&idx, &granted);
    queue_sitemap(&mut h, &idx, Some("http://www.a.test/robots.txt"), "S");
    h.robots(h.t0, 200, "");
    let (id, url) = h.one_fetch(h.at(secs(1)));
    assert_eq!(url, idx);
    let body = index(&[&child]);
    let after = h.feed(
        response(id, &url, 200, &[("Content-Type", "application/xml")], &body),
        h.at(secs(1)),
    );
    let routed = routes(&after);
    assert_eq!(routed.len(), 1, "{after:?}");
    assert_eq!((routed[0].0, routed[0].2.url.as_str()), (1, child.as_str()));
    assert_eq!(routed[0].2.hops, "SS");
    assert_eq!(h.shared.memory.sitemaps.read(&child), Some(granted));
}

// --- --sitemap-lastmod skip -------------------------------------------------------------

/// 2023-11-14T22:13:20Z less a day: the previous crawl's fetch date.
const PREV_SECS: i64 = WALL_SECS - 86_400;

fn entry(url: &str, status: u16, etag: &str) -> IndexEntry {
    IndexEntry {
        url: url.to_owned(),
        status,
        fetched_at_us: PREV_SECS * 1_000_000,
        validators: Validators {
            etag: Some(etag.to_owned()),
            last_modified: None,
        },
        payload_digest: "sha1:AAAA".to_owned(),
        record_id: "<urn:uuid:00000000-0000-0000-0000-000000000000>".to_owned(),
        warc_file: "warc/none.warc.gz".to_owned(),
        warc_offset: 0,
        payload_bytes: 100,
        hops: Some(String::new()),
        via: None,
    }
}

const SITEMAP: &str = "http://a.test/sitemap.xml";
/// A sitemap file a urlset lists with an old date: never skipped.
const SITEMAP2: &str = "http://a.test/more-sitemap.xml";

/// A re-crawl of a.test: the sitemap is queued before the previous pages, or after
/// them with `pages_first`. The sitemap lists `/old` (lastmod before the previous
/// fetch), `/same-second` (the very second), `/newer` (after it), `/was-404` (not a
/// 2xx before), `/new` (no previous capture) and another sitemap file with an old
/// date; `/unlisted` was fetched before but no sitemap lists it.
fn recrawl(policy: LastmodPolicy, pages_first: bool) -> (Harness, Trace) {
    let previous = Previous::from_entries([
        entry(SITEMAP, 200, "\"s\""),
        entry("http://a.test/old", 200, "\"o\""),
        entry("http://a.test/same-second", 200, "\"t\""),
        entry("http://a.test/newer", 200, "\"n\""),
        entry("http://a.test/was-404", 404, "\"x\""),
        entry(SITEMAP2, 200, "\"s2\""),
        entry("http://a.test/unlisted", 200, "\"u\""),
    ])
    .expect("entries in memory");
    let mut h = harness_of(
        &[],
        |c| {
            c.recrawl = Some("prev".into());
            c.sitemap_lastmod = policy;
        },
        |_| {},
        Some(previous),
    );
    if !pages_first {
        queue_sitemap(&mut h, SITEMAP, None, "S");
    }
    for p in ["/old", "/same-second", "/newer", "/was-404", "/unlisted"] {
        h.seed(&format!("http://a.test{p}"));
    }
    if pages_first {
        queue_sitemap(&mut h, SITEMAP, None, "S");
    }
    // PREV_SECS is 2023-11-13T22:13:20Z.
    let listed = urlset(&[
        ("http://a.test/old", Some("2023-11-13T21:13:20Z")),
        (
            "http://a.test/same-second",
            Some("2023-11-13T22:13:20+00:00"),
        ),
        ("http://a.test/newer", Some("2023-11-13T23:13:20Z")),
        ("http://a.test/was-404", Some("2023-11-13")),
        ("http://a.test/new", Some("2023-11-13")),
        (SITEMAP2, Some("2023-11-13")),
    ]);
    let robots = |_: &str| String::new();
    let web = move |url: &str| match url {
        SITEMAP => Some(listed.clone()),
        SITEMAP2 => Some(urlset(&[])),
        _ => Some(b"<html></html>".to_vec()),
    };
    let mut trace = Trace::default();
    run(&mut h, None, &robots, &web, &mut trace);
    (h, trace)
}

#[test]
fn skip_policy_skips_urls_whose_lastmod_is_not_newer() {
    let (h, trace) = recrawl(LastmodPolicy::Skip, false);
    // The sitemap first, in full (a 304 would leave its dates unread).
    assert_eq!(trace.requests[0], (SITEMAP.to_owned(), None));
    let skipped: Vec<&str> = trace.skipped.iter().map(|(u, _)| u.as_str()).collect();
    assert_eq!(skipped, ["http://a.test/old", "http://a.test/same-second"]);
    for (_, notes) in &trace.skipped {
        assert_eq!(notes, &["skipped", "lastmod-not-newer"]);
    }
    assert_eq!(trace.fetched("http://a.test/old"), 0);
    assert_eq!(trace.fetched("http://a.test/same-second"), 0);
    // Newer: conditional; a previous 404 and a new URL: plain.
    let req = |u: &str| trace.requests.iter().find(|(x, _)| x == u).cloned();
    assert_eq!(
        req("http://a.test/newer").and_then(|r| r.1).as_deref(),
        Some("\"n\"")
    );
    assert_eq!(req("http://a.test/was-404").map(|r| r.1), Some(None));
    assert_eq!(req("http://a.test/new").map(|r| r.1), Some(None));
    // The listed sitemap file is read (in full), not skipped.
    assert_eq!(req(SITEMAP2).map(|r| r.1), Some(None));
    assert_eq!(h.shared.counters.get(Counter::LastmodSkipped), 2);
    assert_eq!(h.shared.counters.get(Counter::LastmodSkipped), 2);
    // A URL no sitemap dates waits a turn, then is asked for conditionally.
    assert_eq!(
        req("http://a.test/unlisted").and_then(|r| r.1).as_deref(),
        Some("\"u\"")
    );
    // Skipped URLs cost no page budget.
    assert_eq!(h.core.tallies()["http://a.test"].pages, 6);
    assert_eq!(h.outstanding(), 0);
}

/// The pages queued before their sitemap (a re-crawl queues previous URLs in the
/// order they were fetched; a page reached by a link came before the sitemap that
/// also lists it): each 2xx page without a date waits one turn, behind the sitemap,
/// and is skipped after all. A previous 404 does not wait.
#[test]
fn a_page_queued_before_its_sitemap_waits_a_turn_and_is_skipped() {
    let (h, trace) = recrawl(LastmodPolicy::Skip, true);
    let order: Vec<&str> = trace.requests.iter().map(|(u, _)| u.as_str()).collect();
    assert_eq!(order[..2], ["http://a.test/was-404", SITEMAP]);
    let skipped: Vec<&str> = trace.skipped.iter().map(|(u, _)| u.as_str()).collect();
    assert_eq!(skipped, ["http://a.test/old", "http://a.test/same-second"]);
    assert_eq!(trace.fetched("http://a.test/newer"), 1);
    assert_eq!(trace.fetched("http://a.test/unlisted"), 1);
    assert_eq!(h.shared.counters.get(Counter::LastmodSkipped), 2);
    assert_eq!(h.outstanding(), 0);
}

#[test]
fn the_default_fetches_them_conditionally() {
    let (h, trace) = recrawl(LastmodPolicy::Conditional, true);
    assert!(trace.skipped.is_empty());
    // Nothing waits: the queue's order is kept, the sitemap asked for conditionally.
    let order: Vec<&str> = trace.requests.iter().map(|(u, _)| u.as_str()).collect();
    assert_eq!(
        order[..6],
        [
            "http://a.test/old",
            "http://a.test/same-second",
            "http://a.test/newer",
            "http://a.test/was-404",
            "http://a.test/unlisted",
            SITEMAP
        ]
    );
    assert_eq!(trace.requests[5].1.as_deref(), Some("\"s\""));
    let req = |u: &str| trace.requests.iter().find(|(x, _)| x == u).cloned();
    assert_eq!(
        req("http://a.test/old").and_then(|r| r.1).as_deref(),
        Some("\"o\"")
    );
    assert_eq!(trace.requests.len(), 8);
    assert_eq!(h.shared.counters.get(Counter::LastmodSkipped), 0);
    // Under the default no date is kept.
    assert_eq!(h.shared.memory.sitemaps.lastmod("http://a.test/old"), None);
}

/// Outside a re-crawl `--sitemap-lastmod skip` does nothing.
#[test]
fn skip_policy_without_a_previous_crawl_changes_nothing() {
    let mut h = harness_with(&[], |c| c.sitemap_lastmod = LastmodPolicy::Skip, |_| {});
    queue_sitemap(&mut h, SITEMAP, None, "S");
    let robots = |_: &str| String::new();
    let web = |url: &str| match url {
        SITEMAP => Some(urlset(&[("http://a.test/old", Some("2001-01-01"))])),
        _ => Some(b"<html></html>".to_vec()),
    };
    let mut trace = Trace::default();
    run(&mut h, None, &robots, &web, &mut trace);
    assert!(trace.skipped.is_empty());
    assert_eq!(trace.fetched("http://a.test/old"), 1);
}

/// A re-crawl's page answer leaves the core judged (the re-crawl judgement is the
/// core's, not the engine's): a `304` on a page the previous crawl fetched is
/// `NotModified` on its record and counted; a new URL's `200` is judged new.
#[test]
fn page_answers_of_a_recrawl_leave_the_core_judged_and_counted() {
    let previous = Previous::from_entries([entry("http://a.test/old", 200, "\"o\"")])
        .expect("entries in memory");
    let mut h = harness_of(
        &["http://a.test/old", "http://a.test/new"],
        |c| c.recrawl = Some("prev".into()),
        |_| {},
        Some(previous),
    );
    h.robots(h.t0, 404, "");
    let mut now = h.at(secs(1));
    let mut verdicts = Vec::new();
    for _ in 0..2 {
        let (id, url) = h.one_fetch(now);
        let o = if url.ends_with("/old") {
            response(id, &url, 304, &[("ETag", "\"o\"")], b"")
        } else {
            html(id, &url, "<html></html>")
        };
        let out = h.feed(o, now);
        let recs = records(&out);
        assert_eq!(recs.len(), 1, "{out:?}");
        let j = recs[0].judgement.as_ref().expect("judged in a re-crawl");
        verdicts.push((url, j.verdict));
        now = now.plus(secs(1));
    }
    verdicts.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        verdicts,
        [
            ("http://a.test/new".to_owned(), Verdict::New),
            ("http://a.test/old".to_owned(), Verdict::NotModified),
        ]
    );
    let counted = h.shared.counters.recrawl();
    assert_eq!((counted.not_modified, counted.new), (1, 1), "{counted:?}");
}
