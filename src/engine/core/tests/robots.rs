//! Core tests: a host waiting for its robots.txt, and the answers.

use super::*;

// --- robots.txt waiting ------------------------------------------------------------

#[test]
fn a_new_host_asks_for_robots_txt_first_and_is_held() {
    let mut h = harness(&[A]);
    let actions = h.schedule(h.t0);
    assert_eq!(
        robots_fetches(&actions),
        vec![(1, "http://a.test/robots.txt".to_owned())]
    );
    assert!(fetches(&actions).is_empty());
    assert!(h.core.frontier.is_held("http://a.test"));
    assert_eq!(h.core.in_flight(), 1);
    // Held: nothing more to do for the host, however often the loop turns.
    assert!(h.schedule(h.at(secs(5))).is_empty());
}

#[test]
fn a_url_waiting_for_robots_never_leaves_the_frontier() {
    let mut h = harness(&[A, "http://a.test/2", "http://a.test/3"]);
    let asked = robots_fetches(&h.schedule(h.t0));
    // The checkpoint sees all three URLs in the frontier, none elsewhere.
    assert_eq!(
        h.checkpointed(),
        vec!["http://a.test/", "http://a.test/2", "http://a.test/3"]
    );
    assert_eq!(h.core.frontier_stats().ram_urls, 3);
    let (id, url) = asked[0].clone();
    h.feed(
        response(id, &url, 200, &[], b"User-agent: *\nAllow: /\n"),
        h.t0,
    );
    // Released: the URLs leave once each, in order, one per politeness delay.
    let start = h.at(secs(1));
    let urls = drain_fetch_urls(&mut h, start, 3);
    assert_eq!(
        urls,
        vec!["http://a.test/", "http://a.test/2", "http://a.test/3"]
    );
    assert_eq!(h.shared.counters.get(Counter::PagesStarted), 3);
    assert_eq!(h.outstanding(), 0);
}

#[test]
fn many_urls_of_a_held_host_ask_for_robots_once() {
    let mut h = harness_with(
        &[A, "http://a.test/2"],
        |_| {},
        |f| f.max_in_flight_per_host = 4,
    );
    let actions = h.schedule(h.t0);
    assert_eq!(robots_fetches(&actions).len(), 1);
    assert!(fetches(&actions).is_empty());
    assert!(h.schedule(h.t0).is_empty());
}

#[test]
fn robots_answer_releases_the_host_after_its_politeness_delay() {
    let mut h = harness(&[A]);
    let after = h.robots(h.t0, 200, "");
    assert_eq!(records(&after).len(), 1);
    assert!(!h.core.frontier.is_held("http://a.test"));
    assert!(fetches(&h.schedule(h.at(ms(999)))).is_empty());
    assert_eq!(h.one_fetch(h.at(secs(1))).1, A);
}

#[test]
fn robots_fetch_is_recorded_as_a_prerequisite_of_the_page() {
    let mut h = harness(&[A]);
    let after = h.robots(h.t0, 200, "");
    let rec = records(&after)[0];
    assert_eq!(rec.hops(), "P");
    assert_eq!(rec.via(), Some(A));
    assert!(rec.page().is_none());
    assert_eq!(rec.outcome.url.as_str(), "http://a.test/robots.txt");
}

#[test]
fn robots_disallow_logs_the_url_with_the_rule_line() {
    let mut h = harness(&["http://a.test/private/x"]);
    h.robots(h.t0, 200, "User-agent: *\nDisallow: /private\n");
    let actions = h.schedule(h.at(secs(1)));
    assert!(fetches(&actions).is_empty());
    let logged = logs(&actions);
    assert_eq!(logged.len(), 1);
    assert_eq!(logged[0].outcome, Outcome::Robots);
    assert_eq!(logged[0].annotations, vec!["robots:line-2".to_owned()]);
    assert_eq!(h.outstanding(), 0);
}

#[test]
fn robots_404_allows_everything() {
    let mut h = harness(&["http://a.test/private/x"]);
    h.robots(h.t0, 404, "");
    assert_eq!(h.one_fetch(h.at(secs(1))).1, "http://a.test/private/x");
}

#[test]
fn unreachable_robots_keeps_the_urls_waiting_and_retries_robots_later() {
    let mut h = harness(&[A]);
    h.robots(h.t0, 503, "");
    // Disallowed for now (RFC 9309 §2.3.1.4): no page fetch, no log, the URL stays.
    let mut now = h.at(secs(1));
    let mut asked_again = None;
    for _ in 0..4000 {
        let actions = h.schedule(now);
        assert!(fetches(&actions).is_empty(), "{actions:?}");
        assert!(logs(&actions).is_empty(), "{actions:?}");
        if let Some(r) = robots_fetches(&actions).first() {
            asked_again = Some((r.clone(), now));
            break;
        }
        now = now.plus(secs(1));
    }
    let ((id, url), when) = asked_again.expect("robots.txt asked again");
    assert!(when.at > h.at(secs(1)).at, "retried at once");
    assert_eq!(h.checkpointed(), vec![A]);
    h.feed(response(id, &url, 200, &[], b""), when);
    assert_eq!(h.one_fetch(when.plus(secs(1))).1, A);
}

#[test]
fn robots_unreachable_through_every_attempt_logs_the_urls() {
    let mut h = harness_with(
        &[A, "http://a.test/2"],
        |c| c.robots_max_attempts = 2,
        |_| {},
    );
    let mut now = h.t0;
    let mut failures = 0;
    let mut logged = Vec::new();
    for _ in 0..20_000 {
        let actions = h.schedule(now);
        for l in logs(&actions) {
            logged.push((l.url.clone(), l.outcome, l.annotations.clone()));
        }
        if let Some((id, url)) = robots_fetches(&actions).first().cloned() {
            h.feed(failure(id, &url, FailReason::Refused), now);
            failures += 1;
        }
        if logged.len() == 2 {
            break;
        }
        now = now.plus(secs(1));
    }
    assert_eq!(failures, 2);
    assert_eq!(
        logged,
        vec![
            (
                A.to_owned(),
                Outcome::Robots,
                vec!["robots-unreachable".to_owned()]
            ),
            (
                "http://a.test/2".to_owned(),
                Outcome::Robots,
                vec!["robots-unreachable".to_owned()]
            ),
        ]
    );
    assert_eq!(h.outstanding(), 0);
}

#[test]
fn robots_redirect_is_followed_for_the_host_that_asked() {
    let mut h = harness(&["http://a.test/private"]);
    let actions = h.schedule(h.t0);
    let (id, url) = robots_fetches(&actions)[0].clone();
    let hop = h.feed(
        response(
            id,
            &url,
            301,
            &[("Location", "http://b.test/rules.txt")],
            b"",
        ),
        h.t0,
    );
    let next = robots_fetches(&hop);
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].1, "http://b.test/rules.txt");
    assert!(h.core.frontier.is_held("http://a.test"));
    h.feed(
        response(
            next[0].0,
            &next[0].1,
            200,
            &[],
            b"User-agent: *\nDisallow: /private\n",
        ),
        h.t0,
    );
    let decided = h.schedule(h.at(secs(1)));
    assert_eq!(logs(&decided)[0].outcome, Outcome::Robots);
    assert!(fetches(&decided).is_empty());
}

#[test]
fn a_robots_redirect_to_the_same_server_waits_out_the_politeness_delay() {
    let mut h = harness_with(&["http://a.test/private"], |c| c.delay = secs(2), |_| {});
    let actions = h.schedule(h.t0);
    let (id, url) = robots_fetches(&actions)[0].clone();
    let hop = h.feed(
        response(id, &url, 301, &[("Location", "/rules.txt")], b""),
        h.t0,
    );
    // Not at once: the server was just asked.
    assert!(robots_fetches(&hop).is_empty(), "{hop:?}");
    assert!(h.core.frontier.is_held("http://a.test"));
    assert_eq!(h.core.next_wakeup(h.t0), Some(h.at(secs(2)).at));
    assert!(robots_fetches(&h.schedule(h.at(ms(1500)))).is_empty());
    let due = h.schedule(h.at(secs(2)));
    let next = robots_fetches(&due);
    assert_eq!(next.len(), 1, "{due:?}");
    assert_eq!(next[0].1, "http://a.test/rules.txt");
    let t = h.at(secs(2));
    h.feed(
        response(
            next[0].0,
            &next[0].1,
            200,
            &[],
            b"User-agent: *\nDisallow: /private\n",
        ),
        t,
    );
    let decided = h.schedule(h.at(secs(5)));
    assert_eq!(logs(&decided)[0].outcome, Outcome::Robots);
}

/// A robots.txt redirect to another host waits until that host's last request (by
/// any shard) is a politeness delay old; and a host asked by such a hop waits the
/// delay before its own shard asks it (the demo's referee once saw 4.9 ms with 10).
/// Both waits add `SEND_SLACK` (50 ms): a request may leave later than the instant its
/// shard reserved it at.
#[test]
fn a_robots_redirect_to_another_host_waits_for_that_hosts_pace() {
    let mut h = harness_with(&["http://a.test/private"], |c| c.delay = secs(2), |_| {});
    // b.test was just asked (by its own shard, say).
    h.shared
        .memory
        .recent_starts
        .record("http://b.test", h.at(ms(500)).at);
    let actions = h.schedule(h.at(ms(500)));
    let (id, url) = robots_fetches(&actions)[0].clone();
    let hop = h.feed(
        response(
            id,
            &url,
            301,
            &[("Location", "http://b.test/robots-cross.txt")],
            b"",
        ),
        h.at(ms(600)),
    );
    assert!(robots_fetches(&hop).is_empty(), "{hop:?}");
    assert!(robots_fetches(&h.schedule(h.at(ms(2540)))).is_empty());
    // (Starts are kept to the microsecond, rounded up: due just after 2.55 s.)
    let due = h.schedule(h.at(ms(2551)));
    let next = robots_fetches(&due);
    assert_eq!(next.len(), 1, "{due:?}");
    assert_eq!(next[0].1, "http://b.test/robots-cross.txt");
    // The hop is recorded: b.test's own pages wait the delay (and slack) after it.
    let b = h.at(ms(2551)).at;
    let owner = crate::engine::core::recent::Asker::Owner;
    let until = h
        .shared
        .memory
        .recent_starts
        .reserve("http://b.test", owner, secs(2), b);
    assert!(
        until.is_err_and(|u| u >= b + secs(2) + ms(50) && u <= b + secs(2) + ms(51)),
        "{until:?}"
    );
}

#[test]
fn robots_refused_by_address_policy_declines_every_url_of_the_host() {
    let mut h = harness(&[A, "http://a.test/2"]);
    let actions = h.schedule(h.t0);
    let (id, url) = robots_fetches(&actions)[0].clone();
    let after = h.feed(failure(id, &url, FailReason::BlockedAddress), h.t0);
    assert_eq!(
        records(&after)[0].annotations,
        vec![crate::engine::core::POLICY_PRIVATE.to_owned()]
    );
    let mut declined = Vec::new();
    let mut now = h.t0;
    for _ in 0..5 {
        let actions = h.schedule(now);
        assert!(fetches(&actions).is_empty());
        assert!(robots_fetches(&actions).is_empty());
        declined.extend(logs(&actions).iter().map(|l| (l.url.clone(), l.outcome)));
        now = now.plus(secs(1));
    }
    assert_eq!(
        declined,
        vec![
            (A.to_owned(), Outcome::BlockedAddress),
            ("http://a.test/2".to_owned(), Outcome::BlockedAddress)
        ]
    );
    assert_eq!(h.outstanding(), 0);
}

#[test]
fn robots_parse_caps_are_annotated_and_counted() {
    let mut h = harness(&[A]);
    let long = format!("User-agent: *\nDisallow: /{}\n", "x".repeat(20_000));
    let after = h.robots(h.t0, 200, &long);
    let notes = &records(&after)[0].annotations;
    assert!(
        notes.iter().any(|n| n.starts_with("robots-long-lines:")),
        "{notes:?}"
    );
    assert_eq!(h.shared.counters.get(Counter::RobotsLongLines), 1);
}

#[test]
fn expired_robots_rules_are_revalidated_while_the_host_waits() {
    let mut h = harness(&[A, "http://a.test/2"]);
    let asked = robots_fetches(&h.schedule(h.t0));
    let (id, url) = asked[0].clone();
    h.feed(response(id, &url, 200, &[("ETag", "\"v1\"")], b""), h.t0);
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    h.feed(html(id, &url, ""), t1);
    // A day and more later the rules have expired: the host waits again, and the
    // robots.txt request is conditional.
    let later = h.at(secs(25 * 3600));
    let actions = h.schedule(later);
    assert!(fetches(&actions).is_empty());
    let refresh = match actions.as_slice() {
        [Action::FetchRobots(r)] => r,
        other => panic!("{other:?}"),
    };
    assert_eq!(refresh.head.if_none_match.as_deref(), Some("\"v1\""));
    assert!(h.core.frontier.is_held("http://a.test"));
    let (id, url) = (refresh.id, refresh.head.url.to_string());
    h.feed(response(id, &url, 304, &[], b""), later);
    assert_eq!(h.one_fetch(later.plus(secs(1))).1, "http://a.test/2");
}

#[test]
fn a_new_host_found_while_every_slot_is_busy_waits_in_the_line_for_its_activation() {
    let mut h = harness_with(&[A], |c| c.concurrency_per_shard = 1, |_| {});
    let now = h.at(secs(0));
    let first = robots_fetches(&h.schedule(now));
    assert_eq!(first.len(), 1, "the one slot: a.test's robots.txt");
    // b.test is discovered with the slot busy: it waits in the line, asking nothing
    // (its robots.txt is the first request of its activation, not of its discovery).
    let push = |h: &mut Harness, u: &str| {
        let url = Url::parse(u).expect("url");
        h.shared.memory.seen.test_and_set(url.as_str().as_bytes());
        h.shared.outstanding.add(1);
        let mut out = Vec::new();
        let key = host_key(&url).expect("host");
        h.core
            .push(&key, QueuedUrl::seed(url.as_str()), now, &mut out);
        out
    };
    assert!(push(&mut h, "http://b.test/x").is_empty());
    assert!(push(&mut h, "http://b.test/y").is_empty());
    assert_eq!(h.core.robots_look_aheads(), 0);
    assert!(!h.core.frontier.is_active("http://b.test"));
    // a.test's rules come at 200 ms: the slot frees while a.test rests its delay, so
    // b.test is activated and asks for its robots.txt.
    let t1 = now.plus(ms(200));
    h.feed(response(first[0].0, &first[0].1, 200, &[], b""), t1);
    let b_robots = robots_fetches(&h.schedule(t1));
    assert_eq!(b_robots.len(), 1);
    assert_eq!(b_robots[0].1, "http://b.test/robots.txt");
    assert!(h.core.frontier.is_active("http://b.test"));
    // a.test, started first, is served first once its delay is over.
    let t2 = t1.plus(ms(100));
    h.feed(response(b_robots[0].0, &b_robots[0].1, 200, &[], b""), t2);
    let a_page = fetches(&h.schedule(t1.plus(secs(1))));
    assert_eq!(a_page.len(), 1);
    assert_eq!(a_page[0].1, A);
}

#[test]
fn a_host_whose_name_does_not_resolve_has_its_urls_logged_at_once() {
    let mut h = harness(&[A, "http://a.test/2", "http://b.test/"]);
    let first = robots_fetches(&h.schedule(h.t0));
    assert_eq!(first.len(), 2);
    let (id, url) = first
        .iter()
        .find(|(_, u)| u.starts_with("http://a.test"))
        .cloned()
        .expect("a's robots.txt");
    let t1 = h.at(secs(5));
    h.feed(
        failure(
            id,
            &url,
            FailReason::Timeout(crate::fetch::TimeoutPhase::Dns),
        ),
        t1,
    );
    // No robots.txt retry schedule: a.test's two URLs are decided in the next turn.
    let actions = h.schedule(t1);
    let dns: Vec<&str> = logs(&actions)
        .iter()
        .filter(|l| l.outcome == Outcome::DnsError)
        .map(|l| l.url.as_str())
        .collect();
    assert_eq!(dns, [A, "http://a.test/2"]);
    assert!(logs(&actions)
        .iter()
        .all(|l| l.annotations == ["dns-unresolved"]));
    // b.test is not held up by it.
    assert_eq!(h.core.in_flight(), 1);
    assert_eq!(h.outstanding(), 1);
}

#[test]
fn a_robots_txt_lookup_the_resolver_could_not_start_is_asked_again_soon() {
    let mut h = harness(&[A]);
    let first = robots_fetches(&h.schedule(h.t0));
    let (id, url) = first[0].clone();
    let t1 = h.at(secs(5));
    let actions = h.feed(
        failure(
            id,
            &url,
            FailReason::Dns(crate::fetch::DnsFailure::Overloaded),
        ),
        t1,
    );
    // Not the host's failure: nothing of it is given up, no failure counted.
    assert!(logs(&actions).is_empty());
    assert!(
        robots_fetches(&h.schedule(t1)).is_empty(),
        "a second's rest"
    );
    let again = robots_fetches(&h.schedule(t1.plus(secs(1))));
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].1, "http://a.test/robots.txt");
    assert_eq!(h.outstanding(), 1);
}

#[test]
fn hosts_known_counts_each_new_host_once_and_nothing_per_host_in_ram() {
    let mut h = harness(&[A]);
    let now = h.at(secs(0));
    let before = h.shared.counters.get(Counter::HostsKnown);
    for u in ["http://n1.test/a", "http://n1.test/b", "http://n2.test/a"] {
        let url = Url::parse(u).expect("url");
        h.shared.memory.seen.test_and_set(url.as_str().as_bytes());
        h.shared.outstanding.add(1);
        let key = host_key(&url).expect("host");
        let mut out = Vec::new();
        h.core
            .push(&key, QueuedUrl::seed(url.as_str()), now, &mut out);
    }
    assert_eq!(h.shared.counters.get(Counter::HostsKnown) - before, 2);
    // Both wait in the line: no entry in the host table.
    assert!(!h.core.frontier.has_entry("http://n1.test"));
    assert_eq!(h.core.frontier_stats().line_records, 3 + 1);
}
