use std::fs;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use url::Url;

use super::dump::*;
use super::parse::{Mode, RuleKind};
use super::persist::*;
use super::policy::*;
use super::rules::Rules;
use crate::robots::cache::RobotsCache;
use crate::robots::pattern::{Pattern, Syntax};
use crate::robots::policy::RobotsResponse;
use crate::robots::{Access, Step};
use crate::routing::HostKey;

const BODY: &str = "# comment\n\
User-agent: othercrawler\n\
Disallow: /\n\
\n\
User-agent: trawl\n\
Crawl-delay: 2.5\n\
Disallow: /private/\n\
Allow: /private/ok$\n\
Disallow: /*.pdf$\n\
Disallow: /caf\u{e9}/\n\
Disallow: /a%2fb\n\
Allow: /p*q*r\n\
\n\
User-agent: *\n\
Disallow: /all\n\
Sitemap: http://h.test/sitemap.xml\n\
Sitemap: http://h.test/s2.xml\n";

const PATHS: &[&str] = &[
    "/",
    "/private/x",
    "/private/ok",
    "/private/ok/more",
    "/doc.pdf",
    "/doc.pdf?x",
    "/caf%C3%A9/x",
    "/a%2Fb",
    "/a/b",
    "/pxqyr",
    "/all",
    "/robots.txt",
    "/x$y*z",
];

fn url(host: &str) -> Url {
    Url::parse(&format!("http://{host}/page")).unwrap()
}

fn ok<'a>(body: &'a str, headers: &'static [(&'static str, &'static [u8])]) -> RobotsResponse<'a> {
    RobotsResponse {
        status: 200,
        headers,
        body: body.as_bytes(),
    }
}

fn status(code: u16) -> RobotsResponse<'static> {
    RobotsResponse {
        status: code,
        headers: &[],
        body: b"",
    }
}

/// Fetches robots.txt of `host` once, answering with `r`.
fn fetch(cache: &mut RobotsCache, host: &str, now: Instant, r: &RobotsResponse<'_>) {
    let u = url(host);
    cache.poll_fetch(&u, now).unwrap();
    let step = cache.on_response(&HostKey::of(&u).unwrap(), now, r);
    assert_eq!(step, Some(Step::Done));
}

/// A cache holding every state worth distinguishing, with the clock it was built at.
fn populated(config: PolicyConfig) -> (RobotsCache, Instant) {
    let t0 = Instant::now();
    let mut cache = RobotsCache::new(config.clone(), 1 << 24);
    let validators: &'static [(&'static str, &'static [u8])] = &[
        ("ETag", b"\"v1\""),
        ("Last-Modified", b"Sun, 22 Nov 2026 10:00:00 GMT"),
        ("Cache-Control", b"max-age=3600"),
    ];
    // Ready with parsed rules and validators.
    fetch(&mut cache, "parsed.test", t0, &ok(BODY, validators));
    // Ready: allow all (404) and disallow all (401 under Forbidden4xx::Disallow).
    fetch(&mut cache, "missing.test", t0, &status(404));
    fetch(&mut cache, "forbidden.test", t0, &status(401));
    // Unreachable, no last good copy, two failures.
    fetch(&mut cache, "down.test", t0, &status(503));
    let later = t0 + config.retry_initial + Duration::from_secs(1);
    fetch(&mut cache, "down.test", later, &status(500));
    // Unreachable with a last good copy: rules expired, revalidation failed.
    fetch(&mut cache, "flaky.test", t0, &ok(BODY, validators));
    let expired = t0 + config.max_ttl + Duration::from_secs(1);
    fetch(&mut cache, "flaky.test", expired, &status(503));
    // In flight: a revalidation (prior Ready) and a first fetch (prior nothing).
    fetch(&mut cache, "reval.test", t0, &ok(BODY, validators));
    cache.poll_fetch(&url("reval.test"), expired).unwrap();
    cache.poll_fetch(&url("first.test"), t0).unwrap();
    (cache, t0)
}

fn config() -> PolicyConfig {
    let mut c = PolicyConfig::new("trawl/1.0 (+https://x.test)");
    c.forbidden = Forbidden4xx::Disallow;
    c
}

fn roundtrip(cache: &mut RobotsCache, clock: Clock) -> (FileContents, WriteStats) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("robots-0000.bin");
    let stats = write_file(&path, cache, clock).unwrap();
    assert_eq!(stats.bytes, fs::metadata(&path).unwrap().len());
    (read_file(&path).unwrap(), stats)
}

fn restore(contents: FileContents, clock: Clock, config: &PolicyConfig) -> RobotsCache {
    let mut cache = RobotsCache::new(config.clone(), 1 << 24);
    assert!(contents.meta.as_ref().unwrap().matches(config));
    for e in contents.entries {
        let (k, p) = e.into_policy(clock, config);
        cache.restore(k, p);
    }
    cache
}

fn verdicts(cache: &mut RobotsCache, host: &str, now: Instant) -> Vec<Option<(bool, Option<u32>)>> {
    PATHS
        .iter()
        .map(|p| {
            let u = Url::parse(&format!("http://{host}{p}")).unwrap();
            match cache.check(&u, now) {
                Access::Pending => None,
                Access::Decided(d) => Some((d.allowed, d.line())),
            }
        })
        .collect()
}

fn rule_list(r: &Rules) -> Vec<(RuleKind, u32, Vec<u8>)> {
    r.rules()
        .iter()
        .map(|x| (x.kind(), x.line(), x.pattern().to_vec()))
        .collect()
}

#[test]
fn every_state_round_trips_with_its_verdicts_lines_and_times() {
    let config = config();
    let (mut cache, t0) = populated(config.clone());
    // Save "now" (a bit after t0), restore in a new process with the same wall clock
    // but another monotonic origin.
    let save = Clock {
        now: t0 + Duration::from_secs(10),
        wall_ms: 1_800_000_000_000,
    };
    let (contents, stats) = roundtrip(&mut cache, save);
    assert_eq!(
        stats.entries, 6,
        "first.test (first fetch in flight) is dropped"
    );
    assert_eq!(stats.skipped, 1);
    assert!(contents.damage.is_empty(), "{:?}", contents.damage);
    assert_eq!(contents.written, Some(6));
    let load = Clock {
        now: Instant::now() + Duration::from_secs(1000),
        wall_ms: save.wall_ms,
    };
    let mut back = restore(contents, load, &config);
    assert_eq!(back.len(), 6);
    assert!(back
        .get(&HostKey::of(&url("first.test")).unwrap())
        .is_none());
    // Same verdicts (and deciding lines) at the same wall-clock moment.
    for host in [
        "parsed.test",
        "missing.test",
        "forbidden.test",
        "down.test",
        "flaky.test",
    ] {
        assert_eq!(
            verdicts(&mut cache, host, save.now),
            verdicts(&mut back, host, load.now),
            "{host}"
        );
    }
    assert_eq!(
        back.crawl_delay(&url("parsed.test")),
        Some(Duration::from_millis(2500))
    );
    let parsed = HostKey::of(&url("parsed.test")).unwrap();
    let (a, b) = (cache.get(&parsed).unwrap(), back.get(&parsed).unwrap());
    let (ra, rb) = (a.rules().unwrap(), b.rules().unwrap());
    assert_eq!(rule_list(ra), rule_list(rb));
    assert_eq!(rb.crawl_delay(), Some(Duration::from_millis(2500)));
    assert_eq!(rb.sitemaps(), ra.sitemaps());
    assert_eq!(rb.sitemaps().len(), 2);
    assert_eq!(rb.group_lines(), ra.group_lines());
    assert_eq!(rb.mode(), Mode::Rfc9309);
    let d = rb.decide("/private/ok");
    assert_eq!((d.allowed, d.line()), (true, Some(8)), "original line kept");
    match (a.state(), b.state()) {
        (RobotsState::Ready(x), RobotsState::Ready(y)) => {
            assert_eq!(x.validators, y.validators);
            assert_eq!(x.validators.etag.as_deref(), Some("\"v1\""));
            // One hour of freshness, 10 s of it spent before the save.
            let left_x = x.fresh_until - save.now;
            let left_y = y.fresh_until - load.now;
            assert_eq!(left_x, Duration::from_secs(3590));
            assert_eq!(left_y, left_x);
            assert!(matches!(y.rules, HostRules::Parsed(_)));
        }
        other => panic!("{other:?}"),
    }
    let state = |c: &mut RobotsCache, h: &str| {
        c.get(&HostKey::of(&url(h)).unwrap())
            .unwrap()
            .state()
            .clone()
    };
    assert!(matches!(
        state(&mut back, "missing.test"),
        RobotsState::Ready(Ready {
            rules: HostRules::AllowAll,
            ..
        })
    ));
    assert!(matches!(
        state(&mut back, "forbidden.test"),
        RobotsState::Ready(Ready {
            rules: HostRules::DisallowAll,
            ..
        })
    ));
    match (
        state(&mut cache, "down.test"),
        state(&mut back, "down.test"),
    ) {
        (RobotsState::Unreachable(x), RobotsState::Unreachable(y)) => {
            assert_eq!(y.failures, 2);
            assert!(y.last_good.is_none());
            assert_eq!(x.retry_at - save.now, y.retry_at - load.now);
            assert_eq!(save.now - x.since, load.now - y.since);
        }
        other => panic!("{other:?}"),
    }
    match state(&mut back, "flaky.test") {
        RobotsState::Unreachable(u) => {
            assert_eq!(u.failures, 1);
            let good = u.last_good.unwrap();
            assert_eq!(good.validators.etag.as_deref(), Some("\"v1\""));
            assert!(matches!(good.rules, HostRules::Parsed(_)));
        }
        other => panic!("{other:?}"),
    }
    // The revalidation in flight comes back as its prior (rules already expired in a
    // real crawl; here the save clock is earlier): once expired, the next URL of the
    // host asks for a conditional refetch with the stored validators.
    let reval = url("reval.test");
    assert!(matches!(
        state(&mut back, "reval.test"),
        RobotsState::Ready(_)
    ));
    let after = load.now + Duration::from_secs(3600);
    assert!(matches!(back.check(&reval, after), Access::Pending));
    let req = back.poll_fetch(&reval, after).unwrap();
    assert_eq!(req.if_none_match.as_deref(), Some("\"v1\""));
    assert_eq!(
        req.if_modified_since.as_deref(),
        Some("Sun, 22 Nov 2026 10:00:00 GMT")
    );
    // And a 304 keeps the stored rules.
    let step = back.on_response(&HostKey::of(&reval).unwrap(), after, &status(304));
    assert_eq!(step, Some(Step::Done));
    let private = Url::parse("http://reval.test/private/x").unwrap();
    assert_eq!(back.check(&private, after).is_allowed(), Some(false));
}

#[test]
fn time_passes_across_the_restart() {
    let config = config();
    let (mut cache, t0) = populated(config.clone());
    let save = Clock {
        now: t0,
        wall_ms: 1_800_000_000_000,
    };
    let (contents, _) = roundtrip(&mut cache, save);
    // Restored two hours later: the one-hour rules are expired (revalidate), the
    // default-TTL ones (24 h) still fresh.
    let load = Clock {
        now: Instant::now(),
        wall_ms: save.wall_ms + 2 * 3600 * 1000,
    };
    let mut back = restore(contents, load, &config);
    assert!(matches!(
        back.check(&url("parsed.test"), load.now),
        Access::Pending
    ));
    assert_eq!(
        back.check(&url("missing.test"), load.now).is_allowed(),
        Some(true)
    );
    assert!(
        back.poll_fetch(&url("missing.test"), load.now).is_none(),
        "still fresh"
    );
    // The unreachable host's retry time has passed: retried at once.
    assert!(back.poll_fetch(&url("down.test"), load.now).is_some());
}

#[test]
fn draft_1996_rules_round_trip() {
    let mut config = config();
    config.mode = Mode::Draft1996;
    let t0 = Instant::now();
    let mut cache = RobotsCache::new(config.clone(), 1 << 20);
    let body = "User-agent: trawl\nDisallow: /a*b /c$d\nAllow: /\n\nUser-agent: *\nDisallow: /\n";
    fetch(&mut cache, "old.test", t0, &ok(body, &[]));
    let clock = Clock {
        now: t0,
        wall_ms: 1_700_000_000_000,
    };
    let (contents, stats) = roundtrip(&mut cache, clock);
    assert_eq!(stats.entries, 1);
    assert_eq!(contents.meta.as_ref().unwrap().mode, Mode::Draft1996);
    assert!(
        !contents.meta.as_ref().unwrap().matches(&self::config()),
        "mode differs"
    );
    let mut back = restore(contents, clock, &config);
    let key = HostKey::of(&url("old.test")).unwrap();
    let (a, b) = (
        cache.get(&key).unwrap().rules().unwrap(),
        back.get(&key).unwrap().rules().unwrap(),
    );
    assert_eq!(rule_list(a), rule_list(b));
    assert_eq!(b.mode(), Mode::Draft1996);
    for p in ["/a*b", "/a%2Ab/x", "/axb", "/c$d", "/c%24d", "/cxd", "/"] {
        let u = Url::parse(&format!("http://old.test{p}")).unwrap();
        let x = cache.check(&u, t0).is_allowed();
        let y = back.check(&u, t0).is_allowed();
        assert_eq!(x, y, "{p}");
    }
}

#[test]
fn a_different_agent_or_reading_does_not_match() {
    let c = config();
    let meta = Meta::of(&c, 1);
    assert!(meta.matches(&PolicyConfig {
        agent: "TRAWL/2.0".into(),
        ..c.clone()
    }));
    assert!(!meta.matches(&PolicyConfig {
        agent: "otherbot".into(),
        ..c.clone()
    }));
    assert!(!meta.matches(&PolicyConfig {
        forbidden: Forbidden4xx::Allow,
        ..c.clone()
    }));
    let mut buf = Vec::new();
    encode_meta(&meta, &mut buf);
    assert_eq!(decode_meta(&buf).unwrap(), meta);
}

#[test]
fn a_small_budget_keeps_the_most_recent_hosts() {
    let config = config();
    let (mut cache, t0) = populated(config.clone());
    let clock = Clock {
        now: t0,
        wall_ms: 1_800_000_000_000,
    };
    let (contents, _) = roundtrip(&mut cache, clock);
    let mut small = RobotsCache::new(config.clone(), 2_000);
    for e in contents.entries {
        let (k, p) = e.into_policy(clock, &config);
        small.restore(k, p);
    }
    assert!(small.len() < 6 && !small.is_empty());
    assert!(small.bytes() <= small.max_bytes() || small.len() == 1);
    // The most recently used host (reval.test) survives.
    assert!(small
        .get(&HostKey::of(&url("reval.test")).unwrap())
        .is_some());
}

/// Bytes of the end record: a one-byte length, the checksum, the type and a one-byte
/// count.
const END_RECORD_BYTES: usize = 1 + 4 + 2;

fn written_file() -> (tempfile::TempDir, std::path::PathBuf, Vec<u8>, usize) {
    let (mut cache, t0) = populated(config());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("robots-0000.bin");
    let clock = Clock {
        now: t0,
        wall_ms: 1_800_000_000_000,
    };
    let stats = write_file(&path, &mut cache, clock).unwrap();
    let bytes = fs::read(&path).unwrap();
    (dir, path, bytes, stats.entries as usize)
}

#[test]
fn every_flipped_byte_is_detected_and_never_decoded_as_garbage() {
    let (_dir, path, bytes, entries) = written_file();
    let good = read_file(&path).unwrap();
    let urls: Vec<String> = good
        .entries
        .iter()
        .map(|e| e.robots_url.to_string())
        .collect();
    for at in 0..bytes.len() {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x5A;
        fs::write(&path, &damaged).unwrap();
        let c = read_file(&path).unwrap();
        assert!(!c.damage.is_empty(), "flip at {at} went unnoticed");
        // The end record carries no entry.
        if at < bytes.len() - END_RECORD_BYTES {
            assert!(c.entries.len() < entries, "flip at {at}: nothing lost?");
        }
        for e in &c.entries {
            assert!(urls.contains(&e.robots_url.to_string()), "flip at {at}");
        }
    }
}

#[test]
fn a_flipped_payload_byte_loses_only_its_own_entry() {
    let (_dir, path, bytes, entries) = written_file();
    // The last byte before the end record belongs to the last entry's payload.
    let mut damaged = bytes.clone();
    let at = bytes.len() - END_RECORD_BYTES - 1;
    damaged[at] ^= 1;
    fs::write(&path, &damaged).unwrap();
    let c = read_file(&path).unwrap();
    assert_eq!(c.damage.len(), 1, "{:?}", c.damage);
    assert!(c.damage[0].message.contains("checksum"));
    assert_eq!(c.entries.len(), entries - 1);
}

#[test]
fn every_truncation_is_detected_and_keeps_the_entries_before_it() {
    let (_dir, path, bytes, entries) = written_file();
    for len in 0..bytes.len() {
        fs::write(&path, &bytes[..len]).unwrap();
        let c = read_file(&path).unwrap();
        assert!(!c.damage.is_empty(), "cut at {len} went unnoticed");
        assert!(c.entries.len() <= entries);
    }
    let mut longer = bytes.clone();
    longer.push(0);
    fs::write(&path, &longer).unwrap();
    assert!(!read_file(&path).unwrap().damage.is_empty());
}

#[test]
fn decoding_arbitrary_bytes_never_panics() {
    let (_dir, _path, bytes, _) = written_file();
    for start in 0..bytes.len().min(400) {
        for end in (start..bytes.len()).step_by(7) {
            let _ = decode_entry(&bytes[start..end]);
            let _ = decode_meta(&bytes[start..end]);
        }
    }
}

#[test]
fn load_dir_uses_what_verifies_and_never_fails() {
    let config = config();
    let (mut cache, t0) = populated(config.clone());
    let clock = Clock {
        now: t0,
        wall_ms: 1_800_000_000_000,
    };
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    // Shard 0 intact, shard 1 with one damaged record, shard 2 truncated in the middle,
    // shard 3 compiled for another agent, shard 4 garbage; a stray file beside them.
    write_file(&p("robots-0000.bin"), &mut cache, clock).unwrap();
    let bytes = fs::read(p("robots-0000.bin")).unwrap();
    let mut flipped = bytes.clone();
    let at = bytes.len() - END_RECORD_BYTES - 3;
    flipped[at] ^= 0x10;
    fs::write(p("robots-0001.bin"), &flipped).unwrap();
    fs::write(p("robots-0002.bin"), &bytes[..bytes.len() / 2]).unwrap();
    let mut other = RobotsCache::new(PolicyConfig::new("otherbot"), 1 << 20);
    write_file(&p("robots-0003.bin"), &mut other, clock).unwrap();
    fs::write(p("robots-0004.bin"), b"not a robots file at all").unwrap();
    fs::write(p("frontier-0000.seg"), b"x").unwrap();
    let loaded = load_dir(dir.path(), &config, clock);
    assert_eq!(loaded.stats.files, 5);
    assert_eq!(loaded.stats.ignored_files, 2, "other agent, garbage");
    assert!(loaded.stats.damaged >= 3, "{}", loaded.stats.damaged);
    let half = read_file(&p("robots-0002.bin")).unwrap().entries.len();
    assert!(half > 0 && half < 6);
    assert_eq!(loaded.entries.len(), 6 + 5 + half);
    // A directory that does not exist: nothing, no panic.
    let none = load_dir(&p("missing"), &config, clock);
    assert!(none.entries.is_empty() && none.stats.files == 0);
}

#[test]
fn large_indexed_rule_sets_round_trip() {
    let config = config();
    let mut body = String::from("user-agent: *\n");
    for i in 0..60 {
        body.push_str(&format!(
            "disallow: /{}{i}/\nallow: /*x{i}$\n",
            (b'a' + (i % 26) as u8) as char
        ));
    }
    body.push_str("disallow: /*.pdf\nallow: /\n");
    let t0 = Instant::now();
    let mut cache = RobotsCache::new(config.clone(), 1 << 22);
    fetch(&mut cache, "big.test", t0, &ok(&body, &[]));
    let clock = Clock {
        now: t0,
        wall_ms: 1_800_000_000_000,
    };
    let (contents, _) = roundtrip(&mut cache, clock);
    let mut back = restore(contents, clock, &config);
    for p in [
        "/a0/", "/a0/x0", "/b1/q", "/zz.pdf", "/", "/q", "/c2/x2", "/x", "/h59/x59",
    ] {
        let u = Url::parse(&format!("http://big.test{p}")).unwrap();
        let a = match cache.check(&u, t0) {
            Access::Decided(d) => (d.allowed, d.line()),
            Access::Pending => panic!("pending"),
        };
        let b = match back.check(&u, t0) {
            Access::Decided(d) => (d.allowed, d.line()),
            Access::Pending => panic!("pending"),
        };
        assert_eq!(a, b, "{p}");
    }
}

proptest! {
    /// Stored patterns are compiled again on restore: compiling an already normalized
    /// pattern must give back the same text (and so the same priority and matches).
    #[test]
    fn compiling_a_normalized_pattern_is_idempotent(raw in proptest::collection::vec(
        prop_oneof![
            Just(b'*'), Just(b'$'), Just(b'%'), Just(b'/'), Just(b'?'), Just(b'a'),
            Just(b'F'), Just(b'2'), Just(b'~'), Just(b' '), Just(0xC3), Just(0xA9),
            any::<u8>(),
        ],
        0..24,
    )) {
        for syntax in [Syntax::Wildcards, Syntax::Literal] {
            let once = Pattern::new(&raw, syntax);
            let twice = Pattern::new(once.as_bytes(), syntax);
            prop_assert_eq!(once.as_bytes(), twice.as_bytes());
            for path in [&b"/"[..], b"/a", b"/a%2A", b"/%C3%A9x", b"/a?b", &raw] {
                prop_assert_eq!(once.matches(path), twice.matches(path));
            }
        }
    }

    /// Arbitrary bytes are a typed error or an entry, never a panic.
    #[test]
    fn decoding_random_payloads_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = decode_entry(&bytes);
        let _ = decode_meta(&bytes);
    }
}

#[test]
fn a_version_1_file_is_refused_with_a_clear_message() {
    let (_dir, path, mut bytes, _) = written_file();
    // Version 1 (u32 lengths) and version 2 (no fetch counts) alike.
    for old in [1u32, 2] {
        bytes[8..12].copy_from_slice(&old.to_le_bytes());
        fs::write(&path, &bytes).unwrap();
        let c = read_file(&path).unwrap();
        assert!(c.meta.is_none() && c.entries.is_empty());
        assert_eq!(c.damage.len(), 1);
        assert!(
            c.damage[0]
                .message
                .contains(&format!("format version {old}"))
                && c.damage[0].message.contains("reads version 3"),
            "{}",
            c.damage[0].message
        );
    }
    fs::write(&path, b"TRWLSEG\0\x02\0\0\0").unwrap();
    let c = read_file(&path).unwrap();
    assert!(c.damage[0].message.contains("not a trawl robots file"));
}
