//! Core tests: checkpoints and odd inputs.

use super::*;

// --- checkpoints and odd inputs -------------------------------------------------------

#[test]
fn a_checkpoint_keeps_pages_in_flight_and_takes_them_off_the_tallies() {
    let mut h = harness(&[A, "http://a.test/2"]);
    h.robots(h.t0, 200, "");
    let (_, url) = h.one_fetch(h.at(secs(1)));
    assert_eq!(url, A);
    // In flight first, then the frontier.
    assert_eq!(h.checkpointed(), vec![A, "http://a.test/2"]);
    assert_eq!(h.core.tallies()["http://a.test"].pages, 1);
    assert_eq!(
        h.core.pages_in_flight_by_host().get("http://a.test"),
        Some(&1)
    );
}

#[test]
fn a_checkpoint_while_robots_is_fetched_keeps_every_url_once() {
    let mut h = harness(&[A, "http://a.test/2", "http://b.test/"]);
    h.schedule(h.t0);
    let mut urls = h.checkpointed();
    urls.sort();
    assert_eq!(urls, vec![A, "http://a.test/2", "http://b.test/"]);
}

#[test]
fn an_unparsable_queued_url_is_logged_as_filtered() {
    let mut h = harness(&[]);
    h.shared.outstanding.add(1);
    let mut out = Vec::new();
    h.core.push(
        "http://a.test",
        QueuedUrl::seed("not a url"),
        h.t0,
        &mut out,
    );
    let actions = h.schedule(h.t0);
    let logged = logs(&actions);
    assert_eq!(logged[0].outcome, Outcome::Filtered);
    assert_eq!(logged[0].annotations, vec!["filter:invalid-url".to_owned()]);
    assert_eq!(h.outstanding(), 0);
}

#[test]
fn an_outcome_of_an_unknown_fetch_is_ignored() {
    let mut h = harness(&[A]);
    assert!(h.feed(html(99, A, ""), h.t0).is_empty());
    assert_eq!(h.outstanding(), 1);
}

#[test]
fn a_blocked_page_refuses_its_host_without_backoff() {
    let mut h = harness(&[A, "http://a.test/2"]);
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    let after = h.feed(failure(id, &url, FailReason::BlockedAddress), t1);
    assert_eq!(
        records(&after)[0].annotations,
        vec![crate::engine::core::POLICY_PRIVATE.to_owned()]
    );
    let actions = h.schedule(t1);
    assert_eq!(logs(&actions)[0].outcome, Outcome::BlockedAddress);
    assert_eq!(h.outstanding(), 0);
}

#[test]
fn page_requests_carry_the_referer_and_robots_requests_ask_for_text() {
    let mut h = harness_with(&[A], |c| c.from = Some("ops@example.org".into()), |_| {});
    let actions = h.schedule(h.t0);
    match actions.first() {
        Some(Action::FetchRobots(r)) => {
            assert_eq!(r.head.accept, "text/plain,*/*;q=0.5");
            assert_eq!(r.head.from.as_deref(), Some("ops@example.org"));
        }
        other => panic!("{other:?}"),
    }
    let (id, url) = robots_fetches(&actions)[0].clone();
    h.feed(response(id, &url, 200, &[], b""), h.t0);
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    h.feed(html(id, &url, r#"<a href="/x">x</a>"#), t1);
    match h.schedule(t1.plus(secs(1))).first() {
        Some(Action::Fetch(r)) => assert_eq!(r.head.referer.as_deref(), Some(A)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_wakeup_is_the_next_politeness_instant_and_none_while_held() {
    let mut h = harness(&[A, "http://a.test/2"]);
    let asked = robots_fetches(&h.schedule(h.t0));
    // Held for robots.txt: nothing to wake up for.
    assert_eq!(h.core.next_wakeup(h.t0), None);
    let (id, url) = asked[0].clone();
    h.feed(response(id, &url, 200, &[], b""), h.t0);
    assert_eq!(h.core.next_wakeup(h.t0), Some(h.at(secs(1)).at));
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    // One fetch of the host at a time: no wake-up while it runs.
    assert_eq!(h.core.next_wakeup(t1), None);
    let done = t1.plus(ms(250));
    h.feed(html(id, &url, ""), done);
    assert_eq!(h.core.next_wakeup(done), Some(done.plus(secs(1)).at));
}

#[test]
fn urls_from_peers_are_scheduled_like_seeds() {
    let mut h = harness(&[]);
    h.shared.outstanding.add(1);
    let item = QueuedUrl {
        url: "http://b.test/from-peer".to_owned(),
        via: Some(A.to_owned()),
        hops: "L".to_owned(),
        attempts: 0,
    };
    let mut out = Vec::new();
    h.core.push("http://b.test", item, h.t0, &mut out);
    assert!(out.is_empty());
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let actions = h.schedule(t1);
    match actions.as_slice() {
        [Action::Fetch(r)] => {
            assert_eq!(r.head.url.as_str(), "http://b.test/from-peer");
            assert_eq!(r.head.referer.as_deref(), Some(A));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn shard_routing_is_stable_and_in_range() {
    for n in 1..8 {
        let a = shard_of("http://h000001.synth.test:8080", n);
        assert!(a < n);
        assert_eq!(a, shard_of("http://h000001.synth.test:8080", n));
    }
    // CRC-32 of the key: a fixed value, so checkpoints route the same forever.
    assert_eq!(
        shard_of("http://a.test:80", 1 << 20),
        (crc32fast::hash(b"http://a.test:80") as usize) % (1 << 20)
    );
}

#[test]
fn a_robots_fetch_that_takes_the_last_slot_ends_the_pass() {
    let mut h = harness_with(
        &[A, "http://b.test/"],
        |c| c.concurrency_per_shard = 2,
        |_| {},
    );
    let first = robots_fetches(&h.schedule(h.t0));
    assert_eq!(first.len(), 2);
    // b.test's rules arrive, so one slot is free again; c.test is new (found with a
    // slot free, so no look-ahead: the next pass asks for its robots.txt).
    let b = first
        .iter()
        .find(|(_, u)| u.starts_with("http://b.test"))
        .cloned()
        .expect("b's robots.txt");
    h.feed(response(b.0, &b.1, 200, &[], b""), h.t0);
    h.seed("http://c.test/");
    assert_eq!(h.core.in_flight(), 1);
    // b.test rests its delay and no active host is ready, so c.test joins the active
    // set from the line: its robots.txt takes the last slot.
    let actions = h.schedule(h.at(Duration::from_millis(10)));
    assert_eq!(
        robots_fetches(&actions)
            .into_iter()
            .map(|(_, u)| u)
            .collect::<Vec<_>>(),
        vec!["http://c.test/robots.txt".to_owned()]
    );
    assert!(fetches(&actions).is_empty());
    assert_eq!(h.core.in_flight(), 2);
    // b.test is ready one delay later, but no slot is free: the pass ends at once.
    assert!(h.schedule(h.at(secs(1))).is_empty());
}
