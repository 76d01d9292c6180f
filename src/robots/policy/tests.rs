use super::*;

fn cfg() -> PolicyConfig {
    PolicyConfig::new("trawl/0.1")
}

fn policy() -> RobotsPolicy {
    RobotsPolicy::new(Url::parse("http://example.com/robots.txt").unwrap())
}

fn respond(
    p: &mut RobotsPolicy,
    now: Instant,
    status: u16,
    headers: &[(&str, &[u8])],
    body: &str,
) -> Step {
    p.on_response(
        now,
        &RobotsResponse {
            status,
            headers,
            body: body.as_bytes(),
        },
        &cfg(),
    )
}

#[test]
fn fetch_then_obey_2xx() {
    let c = cfg();
    let now = Instant::now();
    let mut p = policy();
    assert!(matches!(p.check("/a", now, &c), Access::Pending));
    let req = p.poll_fetch(now).unwrap();
    assert_eq!(req.url.as_str(), "http://example.com/robots.txt");
    assert!(p.poll_fetch(now).is_none(), "one fetch at a time");
    assert!(matches!(p.check("/a", now, &c), Access::Pending));
    assert_eq!(
        respond(&mut p, now, 200, &[], "user-agent: *\ndisallow: /a\n"),
        Step::Done
    );
    assert_eq!(p.check("/a", now, &c).is_allowed(), Some(false));
    assert_eq!(p.check("/b", now, &c).is_allowed(), Some(true));
    assert_eq!(p.poll_timeout(), Some(now + Duration::from_secs(86_400)));
}

#[test]
fn parse_report_of_an_oversized_body_is_kept_until_taken() {
    let mut p = policy();
    let now = Instant::now();
    let _ = p.poll_fetch(now).unwrap();
    let mut body = String::from("user-agent: *\ndisallow: /x\n");
    while body.len() <= crate::robots::parse::MAX_ROBOTS_BYTES {
        body.push_str("disallow: /padding\n");
    }
    assert_eq!(respond(&mut p, now, 200, &[], &body), Step::Done);
    let report = p.take_parse_report().unwrap();
    assert!(report.truncated);
    assert_eq!(report.long_lines, 0);
    assert!(p.take_parse_report().is_none());
    // A status without a body to parse leaves no report.
    let mut p = policy();
    let _ = p.poll_fetch(now).unwrap();
    let _ = respond(&mut p, now, 404, &[], "");
    assert!(p.take_parse_report().is_none());
}

#[test]
fn status_table() {
    let c = cfg();
    let now = Instant::now();
    for (status, want) in [
        (404, true),
        (410, true),
        (400, true),
        (401, true),
        (403, true),
        (429, false),
        (500, false),
        (503, false),
        (599, false),
        (100, false),
    ] {
        let mut p = policy();
        p.poll_fetch(now).unwrap();
        respond(&mut p, now, status, &[], "user-agent: *\ndisallow: /\n");
        assert_eq!(
            p.check("/x", now, &c).is_allowed(),
            Some(want),
            "status {status}"
        );
    }
}

#[test]
fn strict_4xx_disallows_401_403_only() {
    let mut c = cfg();
    c.forbidden = Forbidden4xx::Disallow;
    let now = Instant::now();
    for (status, want) in [(401, false), (403, false), (404, true)] {
        let mut p = policy();
        p.poll_fetch(now).unwrap();
        p.on_response(
            now,
            &RobotsResponse {
                status,
                headers: &[],
                body: b"",
            },
            &c,
        );
        assert_eq!(
            p.check("/x", now, &c).is_allowed(),
            Some(want),
            "status {status}"
        );
    }
}

#[test]
fn redirects_followed_up_to_five_then_unavailable() {
    let c = cfg();
    let now = Instant::now();
    let mut p = policy();
    p.poll_fetch(now).unwrap();
    for i in 0..5 {
        let loc = format!("http://other{i}.example/robots.txt");
        let step = respond(&mut p, now, 301, &[("Location", loc.as_bytes())], "");
        assert_eq!(
            step,
            Step::Fetch(FetchRequest {
                url: Url::parse(&loc).unwrap(),
                if_none_match: None,
                if_modified_since: None
            })
        );
    }
    assert_eq!(
        respond(&mut p, now, 302, &[("location", b"/again")], ""),
        Step::Done
    );
    assert!(matches!(
        p.check("/x", now, &c),
        Access::Decided(Decision {
            allowed: true,
            reason: Reason::Unavailable
        })
    ));
}

#[test]
fn cross_host_redirect_applies_to_original_host() {
    let c = cfg();
    let now = Instant::now();
    let mut p = policy();
    p.poll_fetch(now).unwrap();
    let step = respond(
        &mut p,
        now,
        308,
        &[("location", b"https://cdn.example.net/r.txt")],
        "",
    );
    assert!(matches!(step, Step::Fetch(ref r) if r.url.host_str() == Some("cdn.example.net")));
    respond(
        &mut p,
        now,
        200,
        &[],
        "user-agent: trawl\ndisallow: /private\n",
    );
    assert_eq!(
        p.check("http://example.com/private/x", now, &c)
            .is_allowed(),
        Some(false)
    );
    assert_eq!(p.robots_url().host_str(), Some("example.com"));
}

#[test]
fn backoff_doubles_and_grace_falls_back_to_last_good() {
    let c = cfg();
    let t0 = Instant::now();
    let mut p = policy();
    p.poll_fetch(t0).unwrap();
    respond(
        &mut p,
        t0,
        200,
        &[("cache-control", b"max-age=3600")],
        "user-agent: *\ndisallow: /a\n",
    );
    let t1 = t0 + Duration::from_secs(3600);
    assert!(matches!(p.check("/b", t1, &c), Access::Pending));
    p.poll_fetch(t1).unwrap();
    // While revalidating the stale copy answers.
    assert_eq!(p.check("/b", t1, &c).is_allowed(), Some(true));
    respond(&mut p, t1, 503, &[], "");
    assert_eq!(
        p.check("/b", t1, &c).is_allowed(),
        Some(false),
        "unreachable: disallow all"
    );
    assert_eq!(p.poll_timeout(), Some(t1 + Duration::from_secs(60)));
    let mut t = t1;
    let mut waits = Vec::new();
    for _ in 0..4 {
        t = p.poll_timeout().unwrap();
        p.poll_fetch(t).unwrap();
        p.on_network_error(t, &c);
        waits.push(p.poll_timeout().unwrap() - t);
    }
    assert_eq!(waits, [120, 240, 480, 960].map(Duration::from_secs));
    let late = t1 + Duration::from_secs(31 * 24 * 3600);
    assert_eq!(
        p.check("/b", late, &c).is_allowed(),
        Some(true),
        "last good copy after 30 days"
    );
    assert_eq!(
        p.check("/a", late, &c).is_allowed(),
        Some(false),
        "last good copy after 30 days"
    );
    let _ = t;
}

#[test]
fn unreachable_without_copy_allows_after_grace() {
    let c = cfg();
    let t0 = Instant::now();
    let mut p = policy();
    p.poll_fetch(t0).unwrap();
    p.on_network_error(t0, &c);
    assert_eq!(
        p.check("/x", t0 + Duration::from_secs(29 * 86_400), &c)
            .is_allowed(),
        Some(false)
    );
    assert_eq!(
        p.check("/x", t0 + Duration::from_secs(30 * 86_400), &c)
            .is_allowed(),
        Some(true)
    );
}

#[test]
fn revalidation_sends_validators_and_304_extends() {
    let c = cfg();
    let t0 = Instant::now();
    let mut p = policy();
    p.poll_fetch(t0).unwrap();
    respond(
        &mut p,
        t0,
        200,
        &[
            ("ETag", b"\"v1\""),
            ("Last-Modified", b"Sun, 06 Nov 1994 08:49:37 GMT"),
            ("Cache-Control", b"public, max-age=600"),
        ],
        "user-agent: *\ndisallow: /a\n",
    );
    let t1 = t0 + Duration::from_secs(600);
    let req = p.poll_fetch(t1).unwrap();
    assert_eq!(req.if_none_match.as_deref(), Some("\"v1\""));
    assert_eq!(
        req.if_modified_since.as_deref(),
        Some("Sun, 06 Nov 1994 08:49:37 GMT")
    );
    respond(&mut p, t1, 304, &[], "");
    assert_eq!(p.check("/a", t1, &c).is_allowed(), Some(false));
    assert_eq!(p.poll_timeout(), Some(t1 + Duration::from_secs(86_400)));
}

#[test]
fn freshness_table() {
    let c = cfg();
    let day = Duration::from_secs(86_400);
    type Headers<'a> = &'a [(&'a str, &'a [u8])];
    let cases: &[(Headers<'_>, Duration)] = &[
        (&[], day),
        (
            &[("cache-control", b"max-age=7200")],
            Duration::from_secs(7200),
        ),
        (
            &[("cache-control", b"max-age=\"7200\"")],
            Duration::from_secs(7200),
        ),
        (&[("cache-control", b"max-age=999999999")], day),
        (
            &[("cache-control", b"max-age=99999999999999999999999")],
            day,
        ),
        (&[("cache-control", b"max-age=0")], c.min_ttl),
        (&[("cache-control", b"no-cache")], c.min_ttl),
        (
            &[
                ("cache-control", b"public"),
                ("Cache-Control", b"max-age=1000"),
            ],
            Duration::from_secs(1000),
        ),
        (
            &[
                ("expires", b"Sun, 06 Nov 1994 10:49:37 GMT"),
                ("date", b"Sun, 06 Nov 1994 08:49:37 GMT"),
            ],
            Duration::from_secs(7200),
        ),
        (&[("expires", b"0")], c.min_ttl),
        (&[("expires", b"Sun, 06 Nov 1994 10:49:37 GMT")], day),
        (
            &[
                ("expires", b"Sun, 06 Nov 1994 10:49:37 GMT"),
                ("date", b"Sun, 06 Nov 1994 08:49:37 GMT"),
                ("cache-control", b"max-age=60000"),
            ],
            Duration::from_secs(60000),
        ),
    ];
    for (headers, want) in cases {
        let r = RobotsResponse {
            status: 200,
            headers,
            body: b"",
        };
        assert_eq!(freshness(&r, &c), *want, "{headers:?}");
    }
}

#[test]
fn crawl_delay_is_capped() {
    let c = cfg();
    let now = Instant::now();
    let mut p = policy();
    p.poll_fetch(now).unwrap();
    respond(&mut p, now, 200, &[], "user-agent: *\ncrawl-delay: 120\n");
    assert_eq!(p.crawl_delay(&c), Some(Duration::from_secs(30)));
    let mut p = policy();
    p.poll_fetch(now).unwrap();
    respond(&mut p, now, 200, &[], "user-agent: *\ncrawl-delay: 2.5\n");
    assert_eq!(p.crawl_delay(&c), Some(Duration::from_millis(2500)));
}

#[test]
fn robots_url_of_a_page() {
    let u = Url::parse("https://user:pw@Example.COM:8443/a/b?c#d").unwrap();
    assert_eq!(
        robots_url(&u).unwrap().as_str(),
        "https://example.com:8443/robots.txt"
    );
    assert!(robots_url(&Url::parse("mailto:a@b.c").unwrap()).is_none());
}

#[test]
fn response_when_not_fetching_is_ignored() {
    let mut p = policy();
    assert_eq!(
        respond(&mut p, Instant::now(), 200, &[], ""),
        Step::NotFetching
    );
    assert!(matches!(p.state(), RobotsState::NeedsFetch));
}
