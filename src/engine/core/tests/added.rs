//! Core tests: URLs added while the crawl runs (`trawl add`, the control API,
//! `CrawlHandle::add`) pass the one admission ([`Core::admit`]) a page's links pass
//! (`added.rs`): presence bits, scope and filters, the handler's hook, the counters.

use std::sync::Mutex;

use super::*;
use crate::handler::Handler;

/// A handler that records what `accept_link` is asked and refuses one URL.
#[derive(Default)]
struct Recorder {
    asked: Mutex<Vec<(String, String)>>,
    refuse: String,
}

impl Handler for Recorder {
    fn accept_link(&self, from: &str, link: &Url) -> bool {
        self.asked
            .lock()
            .expect("lock")
            .push((from.to_owned(), link.to_string()));
        link.as_str() != self.refuse
    }
}

impl Recorder {
    fn asked(&self) -> Vec<(String, String)> {
        self.asked.lock().expect("lock").clone()
    }
}

/// Hands `urls` to the core as a shard does with the coordinator's message: counted
/// outstanding on the way.
fn add(h: &mut Harness, urls: &[&str]) -> Vec<Action> {
    h.shared.outstanding.add(urls.len() as u64);
    let mut out = Vec::new();
    let urls = urls.iter().map(|u| (*u).to_owned()).collect();
    h.core.on_added(urls, h.t0, &mut out);
    out
}

/// The URLs a checkpoint of `h` holds, with their referrer and hop path.
fn queued(h: &mut Harness) -> Vec<(String, Option<String>, String)> {
    let mut items = Vec::new();
    h.core
        .for_each_checkpointed(|_, item| {
            items.push((item.url.clone(), item.via.clone(), item.hops.clone()));
        })
        .expect("listing");
    items.sort();
    items
}

#[test]
fn added_urls_pass_the_handlers_hook_like_links() {
    let recorder = Arc::new(Recorder {
        refuse: "http://a.test/refused".to_owned(),
        ..Recorder::default()
    });
    let handler: Arc<dyn Handler> = recorder.clone();
    let mut h = harness_with(&[A], |c| c.handler = Some(handler), |_| {});
    h.robots(h.t0, 200, "User-agent: *\nDisallow:\n");
    let discovered = h.shared.counters.get(Counter::Discovered);
    // Written as an operator types them: the core canonicalizes.
    let out = add(
        &mut h,
        &[
            "HTTP://A.test:80/new",
            "http://a.test/refused",
            "http://a.test/",
        ],
    );
    assert!(logs(&out).is_empty(), "{out:?}");
    // The hook saw both new URLs, canonical, with no referrer; not the seed (known).
    assert_eq!(
        recorder.asked(),
        [
            (String::new(), "http://a.test/new".to_owned()),
            (String::new(), "http://a.test/refused".to_owned()),
        ]
    );
    // Queued like a seed: no referrer, no hop. The refused one is not.
    assert_eq!(
        queued(&mut h),
        [
            ("http://a.test/".to_owned(), None, String::new()),
            ("http://a.test/new".to_owned(), None, String::new()),
        ]
    );
    // The seed and the one admitted; what travelled is counted no more.
    assert_eq!(h.outstanding(), 2);
    assert_eq!(h.shared.counters.get(Counter::Discovered), discovered + 1);
    // Fetched like the seed, by the same schedule.
    let mut now = h.at(secs(1));
    let mut fetched = Vec::new();
    for _ in 0..2 {
        let (id, url) = h.one_fetch(now);
        h.feed(html(id, &url, "<p>leaf</p>"), now);
        fetched.push(url);
        now = now.plus(secs(1));
    }
    fetched.sort();
    assert_eq!(fetched, ["http://a.test/", "http://a.test/new"]);
}

#[test]
fn an_added_url_outside_the_scope_is_refused_as_added() {
    let recorder = Arc::new(Recorder::default());
    let handler: Arc<dyn Handler> = recorder.clone();
    let mut h = harness_with(
        &[A],
        |c| {
            c.filter.scope = Scope::SeedHosts;
            c.handler = Some(handler);
        },
        |_| {},
    );
    let out = add(&mut h, &["http://elsewhere.test/x"]);
    let logged = logs(&out);
    assert_eq!(logged.len(), 1, "{out:?}");
    assert_eq!(logged[0].url, "http://elsewhere.test/x");
    assert_eq!(logged[0].outcome, Outcome::Filtered);
    assert_eq!(logged[0].via, None);
    assert_eq!(logged[0].annotations, ["filter:out_of_scope", "added"]);
    assert!(
        recorder.asked().is_empty(),
        "the hook sees only what passed"
    );
    assert_eq!(queued(&mut h).len(), 1, "the seed only");
    assert_eq!(h.outstanding(), 1);
}

#[test]
fn a_filtered_added_url_never_reaches_the_frontier() {
    let mut h = harness(&[A]);
    let out = add(
        &mut h,
        &["http://a.test/archive.zip", "http://a.test/a/a/a/a/a/x"],
    );
    let mut refused: Vec<(&str, &[String])> = logs(&out)
        .iter()
        .map(|r| (r.url.as_str(), r.annotations.as_slice()))
        .collect();
    refused.sort();
    assert_eq!(
        refused,
        [
            (
                "http://a.test/a/a/a/a/a/x",
                &["filter:repeated_segments".to_owned(), "added".to_owned()][..]
            ),
            (
                "http://a.test/archive.zip",
                &["filter:blocked_extension".to_owned(), "added".to_owned()][..]
            ),
        ]
    );
    assert_eq!(queued(&mut h).len(), 1, "the seed only");
    assert_eq!(h.outstanding(), 1);
    // Its presence bit is set, as a filtered link's is: added again, it is dropped
    // without a second line.
    let again = add(&mut h, &["http://a.test/archive.zip"]);
    assert!(again.is_empty(), "{again:?}");
    assert_eq!(h.outstanding(), 1);
}

#[test]
fn an_added_url_a_page_already_linked_is_dropped_silently() {
    let mut h = harness(&[A]);
    h.robots(h.t0, 200, "User-agent: *\nDisallow:\n");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    h.feed(html(id, &url, r#"<a href="/linked">x</a>"#), t1);
    let out = add(&mut h, &["http://a.test/linked", "http://a.test/%7Efresh"]);
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(
        queued(&mut h),
        [
            (
                "http://a.test/linked".to_owned(),
                Some("http://a.test/".to_owned()),
                "L".to_owned()
            ),
            ("http://a.test/~fresh".to_owned(), None, String::new()),
        ]
    );
}

#[test]
fn an_added_url_that_does_not_parse_is_logged_as_added() {
    let mut h = harness(&[A]);
    let out = add(&mut h, &["http://[::1/x"]);
    let logged = logs(&out);
    assert_eq!(logged.len(), 1, "{out:?}");
    assert_eq!(logged[0].url, "http://[::1/x");
    assert_eq!(logged[0].annotations, ["filter:unparsable", "added"]);
    assert_eq!(h.outstanding(), 1);
}
