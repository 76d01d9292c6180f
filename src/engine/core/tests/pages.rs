//! Core tests: budgets and parking, redirects, links.

use super::*;

// --- budgets and parking --------------------------------------------------------------

#[test]
fn pages_per_host_budget_logs_the_rest() {
    let mut h = harness_with(
        &[A, "http://a.test/2"],
        |c| c.max_pages_per_host = Some(1),
        |_| {},
    );
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    h.feed(html(id, &url, ""), t1);
    let actions = h.schedule(t1.plus(secs(1)));
    assert!(fetches(&actions).is_empty());
    let logged = logs(&actions);
    assert_eq!(logged[0].outcome, Outcome::Budget);
    assert_eq!(
        logged[0].annotations,
        vec!["budget:pages-per-host".to_owned()]
    );
    assert_eq!(h.outstanding(), 0);
}

/// A host whose budget is spent with a deep queue (most of it in the frontier's
/// blocks): its URLs are logged in bounded batches, one batch a turn of the shard's
/// loop, each once and in order, and the frontier ends empty.
#[test]
fn a_spent_hosts_deep_queue_drains_in_bounded_turns() {
    let urls: Vec<String> = (0..10_000).map(|i| format!("http://a.test/{i}")).collect();
    let mut seeds: Vec<&str> = vec![A];
    seeds.extend(urls.iter().map(String::as_str));
    let mut h = harness_with(
        &seeds,
        |c| c.max_pages_per_host = Some(1),
        |f| f.ram_budget_bytes = 1 << 20,
    );
    assert!(h.core.frontier_stats().disk_urls > 5_000);
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    h.feed(html(id, &url, ""), t1);
    let mut logged = Vec::new();
    let mut turns = 0;
    while h.outstanding() > 0 {
        let actions = h.schedule(t1.plus(secs(60 * (turns + 1))));
        let batch = logs(&actions);
        assert!(
            !batch.is_empty() && batch.len() <= 5 * 1024 + 1,
            "{}",
            batch.len()
        );
        assert!(batch.iter().all(|r| r.outcome == Outcome::Budget));
        logged.extend(batch.into_iter().map(|r| r.url.clone()));
        turns += 1;
    }
    assert!(turns >= 3, "{turns} turns");
    assert_eq!(logged, urls);
    assert!(h.core.frontier.is_exhausted());
}

#[test]
fn a_host_failing_again_and_again_is_parked() {
    let mut h = harness_with(
        &[A, "http://a.test/2", "http://a.test/3"],
        |c| {
            c.max_retries = 0;
            c.host_failures_to_park = 2;
        },
        |_| {},
    );
    h.robots(h.t0, 200, "");
    let mut now = h.at(secs(1));
    for _ in 0..2 {
        let (id, url) = h.one_fetch(now);
        h.feed(failure(id, &url, FailReason::Refused), now);
        now = now.plus(secs(600));
    }
    assert!(h.core.tallies()["http://a.test"].parked);
    assert_eq!(h.shared.counters.get(Counter::HostsParked), 1);
    let actions = h.schedule(now);
    assert!(fetches(&actions).is_empty());
    assert_eq!(logs(&actions)[0].outcome, Outcome::HostParked);
    assert_eq!(h.outstanding(), 0);
}

#[test]
fn a_success_resets_the_failure_run() {
    let mut h = harness_with(
        &[A, "http://a.test/2", "http://a.test/3"],
        |c| c.max_retries = 0,
        |_| {},
    );
    h.robots(h.t0, 200, "");
    let mut now = h.at(secs(1));
    let (id, url) = h.one_fetch(now);
    h.feed(failure(id, &url, FailReason::Refused), now);
    assert_eq!(h.core.tallies()["http://a.test"].consecutive_failures, 1);
    now = now.plus(secs(600));
    let (id, url) = h.one_fetch(now);
    h.feed(html(id, &url, ""), now);
    assert_eq!(h.core.tallies()["http://a.test"].consecutive_failures, 0);
    assert_eq!(h.core.tallies()["http://a.test"].pages, 2);
}

#[test]
fn a_spent_crawl_budget_stops_scheduling() {
    let mut h = harness_with(&[A, "http://b.test/"], |c| c.max_pages = Some(1), |_| {});
    let actions = h.schedule(h.t0);
    for (id, url) in robots_fetches(&actions) {
        h.feed(response(id, &url, 200, &[], b""), h.t0);
    }
    let now = h.at(secs(1));
    let actions = h.schedule(now);
    assert_eq!(fetches(&actions).len(), 1);
    assert!(h.shared.is_stopping());
}

// --- redirects ---------------------------------------------------------------------

#[test]
fn a_redirect_queues_its_target_with_hop_r() {
    let mut h = harness(&[A]);
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    let after = h.feed(response(id, &url, 301, &[("Location", "/moved")], b""), t1);
    match &records(&after)[0].context {
        RecordContext::Page { outlinks, .. } => {
            assert_eq!(outlinks.len(), 1);
            assert_eq!(outlinks[0].0, "http://a.test/moved");
        }
        other => panic!("not a page record: {other:?}"),
    }
    let mut queued = Vec::new();
    h.core
        .for_each_checkpointed(|_, item| queued.push(item.clone()))
        .expect("listing");
    assert_eq!(queued.len(), 1);
    assert_eq!(queued[0].url, "http://a.test/moved");
    assert_eq!(queued[0].hops, "R");
    assert_eq!(queued[0].via.as_deref(), Some(A));
    assert_eq!(h.outstanding(), 1);
}

#[test]
fn a_redirect_chain_past_the_limit_is_filtered() {
    let mut h = harness_with(&[], |c| c.max_redirects = 2, |_| {});
    h.shared.outstanding.add(1);
    let mut out = Vec::new();
    let item = QueuedUrl {
        url: "http://a.test/r2".to_owned(),
        via: Some("http://a.test/r1".to_owned()),
        hops: "RR".to_owned(),
        attempts: 0,
    };
    h.core.push("http://a.test", item, h.t0, &mut out);
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    let after = h.feed(response(id, &url, 302, &[("Location", "/r3")], b""), t1);
    let logged = logs(&after);
    assert_eq!(logged.len(), 1);
    assert_eq!(logged[0].url, "http://a.test/r3");
    assert_eq!(logged[0].outcome, Outcome::Filtered);
    assert_eq!(
        logged[0].annotations,
        vec!["filter:redirect-chain".to_owned()]
    );
    assert!(h.checkpointed().is_empty());
}

#[test]
fn an_unusable_location_is_annotated() {
    let mut h = harness(&[A]);
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    let after = h.feed(
        response(id, &url, 301, &[("Location", "http://[::1")], b""),
        t1,
    );
    let notes = &records(&after)[0].annotations;
    assert_eq!(notes.len(), 1);
    assert!(notes[0].starts_with("bad-location:"), "{notes:?}");
}

// --- links ----------------------------------------------------------------------------

#[test]
fn links_are_admitted_once_through_the_presence_bits() {
    let mut h = harness(&[A, "http://a.test/2"]);
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    // `/` is a seed (known); `/x` is new; `/x` again on the page is a repeat.
    h.feed(
        html(
            id,
            &url,
            r#"<a href="/">home</a><a href="/x">x</a><a href="/x">x</a>"#,
        ),
        t1,
    );
    assert_eq!(h.checkpointed(), vec!["http://a.test/2", "http://a.test/x"]);
    assert_eq!(h.shared.counters.get(Counter::Discovered), 1);
    let (id, url) = h.one_fetch(t1.plus(secs(1)));
    h.feed(
        html(id, &url, r#"<a href="/x">x</a><a href="/y">y</a>"#),
        t1.plus(secs(1)),
    );
    assert_eq!(h.checkpointed(), vec!["http://a.test/x", "http://a.test/y"]);
}

#[test]
fn links_out_of_scope_are_logged_as_filtered() {
    let mut h = harness_with(&[A], |c| c.filter.scope = Scope::SeedHosts, |_| {});
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    let after = h.feed(
        html(id, &url, r#"<a href="http://elsewhere.test/">e</a>"#),
        t1,
    );
    let logged = logs(&after);
    assert_eq!(logged.len(), 1);
    assert_eq!(logged[0].outcome, Outcome::Filtered);
    assert_eq!(
        logged[0].annotations,
        vec!["filter:out_of_scope".to_owned()]
    );
    assert_eq!(logged[0].via.as_deref(), Some(A));
    // The page's own record comes first in the log.
    assert!(matches!(after.first(), Some(Action::Record(_))));
}

#[test]
fn links_of_another_shards_hosts_are_routed_there() {
    // Find a host that belongs to shard 1 of 2 (shard 0 is this core).
    let other = (0..100)
        .map(|i| format!("http://o{i}.test"))
        .find(|k| shard_of(k, 2) == 1)
        .expect("a host of shard 1");
    let own = (0..100)
        .map(|i| format!("http://s{i}.test"))
        .find(|k| shard_of(k, 2) == 0)
        .expect("a host of shard 0");
    let seed = format!("{own}/");
    let mut h = harness_with(&[&seed], |c| c.shards = 2, |_| {});
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    let page = format!(r#"<a href="{other}/p">p</a>"#);
    let after = h.feed(html(id, &url, &page), t1);
    let routed = routes(&after);
    assert_eq!(routed.len(), 1);
    assert_eq!(routed[0].0, 1);
    assert_eq!(routed[0].1, other);
    assert_eq!(routed[0].2.hops, "L");
    assert!(h.checkpointed().is_empty());
}

#[test]
fn a_nofollow_page_admits_no_links() {
    let mut h = harness(&[A]);
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    let body = r#"<meta name="robots" content="nofollow"><a href="/x">x</a>"#;
    let after = h.feed(html(id, &url, body), t1);
    assert_eq!(records(&after)[0].annotations, vec!["nofollow".to_owned()]);
    assert!(h.checkpointed().is_empty());
}

#[test]
fn a_page_seen_before_is_a_duplicate_and_not_followed() {
    let mut h = harness(&[A, "http://b.test/"]);
    let actions = h.schedule(h.t0);
    for (id, url) in robots_fetches(&actions) {
        h.feed(response(id, &url, 200, &[], b""), h.t0);
    }
    let t1 = h.at(secs(1));
    let page = r#"<a href="/x">x</a>"#;
    let got = fetches(&h.schedule(t1));
    assert_eq!(got.len(), 2);
    let first = h.feed(html(got[0].0, &got[0].1, page), t1);
    let second = h.feed(html(got[1].0, &got[1].1, page), t1);
    assert!(records(&first)[0].annotations.is_empty());
    assert_eq!(
        records(&second)[0].annotations,
        vec!["duplicate".to_owned()]
    );
    assert_eq!(h.shared.counters.get(Counter::Duplicates), 1);
    assert_eq!(h.checkpointed().len(), 1);
}

#[test]
fn charset_comes_from_the_content_type_parameter() {
    assert_eq!(
        charset_of("text/html; charset=ISO-8859-1"),
        Some(encoding_rs::WINDOWS_1252)
    );
    assert_eq!(
        charset_of("text/html;charset=\"utf-8\""),
        Some(encoding_rs::UTF_8)
    );
    assert_eq!(charset_of("text/html"), None);
}

// --- sitemaps ---------------------------------------------------------------------------

#[test]
fn a_robots_sitemap_is_fetched_with_the_sitemap_caps_and_its_pages_with_the_page_caps() {
    let mut h = harness(&[A]);
    let page_cap = h.shared.limits.response.max_body_bytes;
    h.robots(
        h.t0,
        200,
        "User-agent: *\nAllow: /\nSitemap: http://a.test/sitemap.xml\n",
    );
    let mut now = h.at(secs(1));
    let mut fetched = Vec::new();
    // The seed and the sitemap, in either order; then the page the sitemap lists.
    for _ in 0..3 {
        let actions = h.schedule(now);
        for a in &actions {
            if let Action::Fetch(req) = a {
                fetched.push((
                    req.head.url.path().to_owned(),
                    req.limits.response.max_body_bytes,
                ));
                let body: &[u8] = if req.head.url.path() == "/sitemap.xml" {
                    b"<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>http://a.test/listed</loc></url></urlset>"
                } else {
                    b"<html></html>"
                };
                let ct = if body.starts_with(b"<?xml") {
                    "application/xml"
                } else {
                    "text/html"
                };
                h.feed(
                    response(
                        req.id,
                        req.head.url.as_str(),
                        200,
                        &[("Content-Type", ct)],
                        body,
                    ),
                    now,
                );
            }
        }
        now = now.plus(secs(2));
    }
    fetched.sort();
    assert_eq!(fetched.len(), 3, "{fetched:?}");
    let cap_of = |p: &str| fetched.iter().find(|(q, _)| q == p).map(|(_, c)| *c);
    assert_eq!(cap_of("/sitemap.xml"), Some(page_cap.max(50 * 1024 * 1024)));
    assert_eq!(cap_of("/listed"), Some(page_cap));
    assert_eq!(cap_of("/"), Some(page_cap));
    assert_eq!(h.outstanding(), 0);
}

#[test]
fn links_of_a_host_past_its_budget_are_refused_when_admitted() {
    let mut h = harness_with(&[A], |c| c.max_pages_per_host = Some(1), |_| {});
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    let body = r#"<a href="/2">2</a><a href="/3">3</a><a href="http://b.test/">b</a>"#;
    let actions = h.feed(html(id, &url, body), t1);
    // a.test's two links never reach the frontier: logged at once, counted.
    let refused: Vec<&str> = logs(&actions)
        .iter()
        .filter(|l| l.outcome == Outcome::Budget)
        .map(|l| l.url.as_str())
        .collect();
    assert_eq!(refused, ["http://a.test/2", "http://a.test/3"]);
    assert!(logs(&actions)
        .iter()
        .filter(|l| l.outcome == Outcome::Budget)
        .all(|l| l.annotations == ["budget:pages-per-host"]));
    assert_eq!(h.shared.counters.get(Counter::UrlsRefusedBudget), 2);
    // b.test is another host with its own budget: queued.
    assert!(h.checkpointed().iter().any(|u| u == "http://b.test/"));
    assert!(!h
        .checkpointed()
        .iter()
        .any(|u| u.starts_with("http://a.test/")));
}

#[test]
fn one_turn_makes_a_bounded_number_of_decisions() {
    let mut h = harness_with(&[A], |c| c.max_pages_per_host = Some(1), |_| {});
    let n = super::super::MAX_DECISIONS_PER_TURN + 500;
    for i in 0..n {
        h.seed(&format!("http://a.test/q{i}"));
    }
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    h.feed(html(id, &url, ""), t1);
    // The budget is spent with n URLs queued: each turn logs at most the cap, and the
    // next turn goes on where it stopped.
    let first = h.schedule(t1.plus(secs(1)));
    assert_eq!(logs(&first).len(), super::super::MAX_DECISIONS_PER_TURN);
    let second = h.schedule(t1.plus(secs(1)));
    assert_eq!(logs(&second).len(), 500);
    assert_eq!(h.outstanding(), 0);
}

#[test]
fn requests_waiting_for_their_address_hold_no_slot() {
    let mut h = harness_with(
        &[A, "http://b.test/", "http://c.test/"],
        |c| c.concurrency_per_shard = 2,
        |_| {},
    );
    let now = h.at(secs(0));
    let first = h.schedule(now);
    assert_eq!(robots_fetches(&first).len(), 2, "two slots");
    // Both wait in the fetcher for their address: the third host goes too.
    h.core.set_waiting_unconnected(2);
    let second = h.schedule(now);
    assert_eq!(robots_fetches(&second).len(), 1);
    assert_eq!(h.core.busy(), 1);
    // At most --concurrency are excused.
    h.core.set_waiting_unconnected(10);
    assert_eq!(h.core.busy(), 1);
}

#[test]
fn a_page_whose_lookup_the_resolver_could_not_start_is_retried() {
    assert!(is_retryable(&FailReason::Dns(
        crate::fetch::DnsFailure::Overloaded
    )));
    assert!(!is_retryable(&FailReason::Dns(
        crate::fetch::DnsFailure::NoSuchName
    )));
}

/// The cost of admitting pages of new links ([`Core::admit_links`]: presence bits,
/// filters, host keys, frontier pushes), 40 links a page over 20 hosts, as a crawl of
/// `static20` sees them: every link admitted once and counted outstanding. Also the
/// workload to measure (the core prints nothing, so the figure comes from outside):
/// run the release test binary with `admission_cost` under callgrind and compare the
/// instructions of `admit_links` a call.
#[test]
fn admission_cost() {
    const PAGES: usize = 100;
    const LINKS: usize = 40;
    let mut h = harness(&["http://h00.test/"]);
    let item = QueuedUrl::seed("http://h00.test/");
    let pages: Vec<Vec<(String, crate::provenance::Hop)>> = (0..PAGES)
        .map(|page| {
            (0..LINKS)
                .map(|link| {
                    let host = (page + link) % 20;
                    let url = format!("http://h{host:02}.test/s{page}/page-{link:04}.html");
                    (url, crate::provenance::Hop::Link)
                })
                .collect()
        })
        .collect();
    let mut out = Vec::new();
    for links in &pages {
        out.clear();
        h.core.admit_links(&item, links, h.t0, &mut out);
        assert!(out.is_empty(), "{out:?}");
    }
    assert_eq!(h.outstanding(), 1 + (PAGES * LINKS) as u64);
}

/// The core's cost a page over a whole turn (schedule, request, answer, links), 20
/// hosts and 40 new links a page, as `static20` crawls, checked to fetch every page.
/// Also the workload to measure: run the release test binary with `page_cycle_cost`
/// under callgrind and compare the instructions of the test a page.
#[test]
fn page_cycle_cost() {
    const PAGES: usize = 200;
    let seeds: Vec<String> = (0..20).map(|h| format!("http://h{h:02}.test/")).collect();
    let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
    let mut h = harness(&seeds);
    let bodies: Vec<String> = (0..PAGES)
        .map(|page| {
            (0..40)
                .map(|link| {
                    let host = (page + link) % 20;
                    format!(
                        "<p><a href=\"http://h{host:02}.test/s{page}/p{link}.html\">a link</a>\n"
                    )
                })
                .collect()
        })
        .collect();
    let mut now = h.t0;
    let mut pages = 0;
    while pages < PAGES {
        now = now.plus(secs(1));
        let actions = h.schedule(now);
        for (id, url) in robots_fetches(&actions) {
            h.feed(response(id, &url, 404, &[], b""), now);
        }
        for (id, url) in fetches(&actions) {
            let body = &bodies[pages % PAGES];
            h.feed(html(id, &url, body), now);
            pages += 1;
        }
    }
    assert_eq!(h.shared.counters.get(Counter::Pages), pages as u64);
}
