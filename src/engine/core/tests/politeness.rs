//! Core tests: politeness, retries and backoff.

use super::*;

// --- politeness ----------------------------------------------------------------------

#[test]
fn politeness_delay_spaces_fetches_of_one_host() {
    let mut h = harness(&[A, "http://a.test/2"]);
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    // One fetch per host at a time: the second waits for the first.
    assert!(fetches(&h.schedule(t1)).is_empty());
    let done = t1.plus(ms(300));
    h.feed(html(id, &url, "<p>x</p>"), done);
    assert!(fetches(&h.schedule(done.plus(ms(999)))).is_empty());
    assert_eq!(h.one_fetch(done.plus(secs(1))).1, "http://a.test/2");
}

#[test]
fn robots_crawl_delay_lengthens_the_politeness_delay() {
    let mut h = harness(&[A, "http://a.test/2"]);
    h.robots(h.t0, 200, "User-agent: *\nCrawl-delay: 5\n");
    let t1 = h.at(secs(5));
    let (id, url) = h.one_fetch(t1);
    h.feed(html(id, &url, ""), t1);
    assert!(fetches(&h.schedule(t1.plus(secs(4)))).is_empty());
    assert_eq!(fetches(&h.schedule(t1.plus(secs(5)))).len(), 1);
}

#[test]
fn adaptive_delay_scales_with_the_response_time() {
    let mut h = harness_with(
        &[A, "http://a.test/2"],
        |c| {
            c.delay = Duration::ZERO;
            c.delay_factor = 2.0;
        },
        |_| {},
    );
    h.robots(h.t0, 200, "");
    let (id, url) = h.one_fetch(h.t0);
    let mut o = html(id, &url, "");
    o.timings.total = secs(3);
    h.feed(o, h.t0);
    assert!(fetches(&h.schedule(h.at(ms(5999)))).is_empty());
    assert_eq!(fetches(&h.schedule(h.at(secs(6)))).len(), 1);
}

#[test]
fn concurrency_cap_bounds_the_fetches_in_flight() {
    let seeds: Vec<String> = (0..6).map(|i| format!("http://h{i}.test/")).collect();
    let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
    let mut h = harness_with(&seeds, |c| c.concurrency_per_shard = 4, |_| {});
    let actions = h.schedule(h.t0);
    assert_eq!(robots_fetches(&actions).len(), 4);
    assert_eq!(h.core.in_flight(), 4);
    assert!(h.schedule(h.t0).is_empty());
}

#[test]
fn hosts_take_turns_breadth_first() {
    let mut h = harness(&[A, "http://a.test/2", "http://b.test/", "http://b.test/2"]);
    let actions = h.schedule(h.t0);
    for (id, url) in robots_fetches(&actions) {
        h.feed(response(id, &url, 200, &[], b""), h.t0);
    }
    let now = h.at(secs(1));
    let first = fetches(&h.schedule(now));
    let hosts: Vec<&str> = first.iter().map(|(_, u)| &u[..13]).collect();
    assert_eq!(first.len(), 2, "one fetch per host: {first:?}");
    assert!(hosts.contains(&"http://a.test") && hosts.contains(&"http://b.test"));
}

// --- retries and backoff ------------------------------------------------------------

#[test]
fn a_transient_failure_is_retried_after_a_backoff() {
    let mut h = harness(&[A]);
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    let after = h.feed(failure(id, &url, FailReason::Reset), t1);
    let rec = records(&after)[0];
    assert_eq!(rec.annotations, vec!["retry:1".to_owned()]);
    // The started count gives the retry back; the URL is still outstanding.
    assert_eq!(h.shared.counters.get(Counter::PagesStarted), 0);
    assert_eq!(h.outstanding(), 1);
    assert_eq!(h.checkpointed(), vec![A]);
    // One failure: 4 s of backoff, longer than the 1 s delay.
    assert!(fetches(&h.schedule(t1.plus(ms(3999)))).is_empty());
    let (_, again) = h.one_fetch(t1.plus(secs(4)));
    assert_eq!(again, A);
}

#[test]
fn retries_end_after_max_retries_with_the_failure_logged() {
    let mut h = harness_with(&[A], |c| c.max_retries = 2, |_| {});
    h.robots(h.t0, 200, "");
    let mut now = h.at(secs(1));
    let mut notes = Vec::new();
    for _ in 0..3 {
        let (id, url) = h.one_fetch(now);
        let after = h.feed(
            failure(
                id,
                &url,
                FailReason::Timeout(crate::fetch::TimeoutPhase::Total),
            ),
            now,
        );
        notes.push(records(&after)[0].annotations.clone());
        now = now.plus(secs(600));
    }
    assert_eq!(
        notes,
        vec![
            vec!["retry:1".to_owned()],
            vec!["retry:2".to_owned()],
            vec![]
        ]
    );
    assert_eq!(h.outstanding(), 0);
    assert!(h.schedule(now).is_empty());
}

#[test]
fn permanent_failures_are_not_retried() {
    let mut h = harness(&[A]);
    h.robots(h.t0, 200, "");
    let (id, url) = h.one_fetch(h.at(secs(1)));
    let after = h.feed(
        failure(id, &url, FailReason::Tls("bad cert".into())),
        h.at(secs(1)),
    );
    assert!(records(&after)[0].annotations.is_empty());
    assert_eq!(h.outstanding(), 0);
}

#[test]
fn status_503_with_retry_after_seconds_delays_the_host() {
    let mut h = harness(&[A]);
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    let after = h.feed(response(id, &url, 503, &[("Retry-After", "30")], b""), t1);
    assert_eq!(records(&after)[0].annotations, vec!["retry:1".to_owned()]);
    assert!(fetches(&h.schedule(t1.plus(ms(29_999)))).is_empty());
    assert_eq!(fetches(&h.schedule(t1.plus(secs(30)))).len(), 1);
}

#[test]
fn retry_after_as_an_http_date_counts_from_the_wall_clock() {
    let mut h = harness(&[A]);
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    // WALL_SECS + 1 s is 22:13:21; two minutes later:
    let date = "Tue, 14 Nov 2023 22:15:21 GMT";
    h.feed(response(id, &url, 429, &[("Retry-After", date)], b""), t1);
    assert!(fetches(&h.schedule(t1.plus(ms(119_999)))).is_empty());
    assert_eq!(fetches(&h.schedule(t1.plus(secs(120)))).len(), 1);
}

#[test]
fn retry_after_is_capped() {
    let mut h = harness_with(&[A], |c| c.max_retry_after = secs(60), |_| {});
    h.robots(h.t0, 200, "");
    let t1 = h.at(secs(1));
    let (id, url) = h.one_fetch(t1);
    h.feed(
        response(id, &url, 429, &[("Retry-After", "86400")], b""),
        t1,
    );
    assert_eq!(fetches(&h.schedule(t1.plus(secs(60)))).len(), 1);
}

#[test]
fn backoff_doubles_per_failure_up_to_a_cap() {
    assert_eq!(backoff(0), None);
    assert_eq!(backoff(1), Some(secs(4)));
    assert_eq!(backoff(2), Some(secs(8)));
    assert_eq!(backoff(3), Some(secs(16)));
    assert_eq!(backoff(8), Some(secs(512)));
    assert_eq!(backoff(30), Some(secs(512)));
}

#[test]
fn retryable_failures_are_transient_ones() {
    assert!(is_retryable(&FailReason::Reset));
    assert!(is_retryable(&FailReason::Refused));
    assert!(!is_retryable(&FailReason::BlockedAddress));
    assert!(!is_retryable(&FailReason::Tls("x".into())));
}
