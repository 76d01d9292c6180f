//! The disk tier (`spill`), through the cache that uses it: rules come back as they went,
//! nothing fresh is fetched again, faults cost refetches (counted) and never lose
//! what RAM still holds, dead files go, and a checkpoint carries spilled hosts.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use url::Url;

use super::persist::Clock;
use super::policy::RobotsState;
use super::spill::*;
use crate::robots::dump::{read_file, write_file};
use crate::robots::{Access, PolicyConfig, RobotsCache, RobotsResponse, Step};
use crate::routing::HostKey;

const BODY: &str = "user-agent: *\ndisallow: /private/\nallow: /private/ok\ncrawl-delay: 2.5\n";

fn url(host: &str) -> Url {
    Url::parse(&format!("http://{host}/page")).unwrap()
}

fn key(host: &str) -> HostKey {
    HostKey::of(&url(host)).unwrap()
}

fn host(i: usize) -> String {
    format!("h{i}.example")
}

/// A cache whose RAM holds a handful of hosts, over a store a test can inspect.
fn small_cache(config: SpillConfig) -> (RobotsCache, MemStore) {
    let store = MemStore::new();
    let spill = Spill::new(Box::new(store.clone()), config);
    let cache = RobotsCache::with_spill(PolicyConfig::new("trawl"), 8_000, spill);
    (cache, store)
}

fn small_files() -> SpillConfig {
    SpillConfig {
        batch_bytes: 2_000,
        file_bytes: 64 << 10,
        ..SpillConfig::default()
    }
}

fn answer(cache: &mut RobotsCache, h: &str, now: Instant, status: u16, body: &str) {
    let req = cache.poll_fetch(&url(h), now).expect("a fetch is due");
    assert_eq!(req.url.path(), "/robots.txt");
    let headers: &[(&str, &[u8])] = &[("ETag", b"\"e1\""), ("Cache-Control", b"max-age=3600")];
    let step = cache.on_response(
        &key(h),
        now,
        &RobotsResponse {
            status,
            headers,
            body: body.as_bytes(),
        },
    );
    assert_eq!(step, Some(Step::Done));
}

fn verdict(
    cache: &mut RobotsCache,
    h: &str,
    path: &str,
    now: Instant,
) -> Option<(bool, Option<u32>)> {
    let u = Url::parse(&format!("http://{h}{path}")).unwrap();
    match cache.check(&u, now) {
        Access::Pending => None,
        Access::Decided(d) => Some((d.allowed, d.line())),
    }
}

#[test]
fn spilled_rules_come_back_identical_and_answer_the_same() {
    let t0 = Instant::now();
    let (mut cache, store) = small_cache(small_files());
    answer(&mut cache, "first.example", t0, 200, BODY);
    let before = cache.get(&key("first.example")).unwrap().clone();
    let want: Vec<_> = ["/", "/private/x", "/private/ok"]
        .iter()
        .map(|p| verdict(&mut cache, "first.example", p, t0))
        .collect();
    for i in 0..200 {
        answer(&mut cache, &host(i), t0, 200, BODY);
    }
    assert!(!cache.entries_lru().any(|(k, _)| *k == key("first.example")));
    assert!(cache.spilled() > 150, "{}", cache.spilled());
    assert!(store.calls().writes > 0, "batches written");
    let t1 = t0 + Duration::from_secs(60);
    let got: Vec<_> = ["/", "/private/x", "/private/ok"]
        .iter()
        .map(|p| verdict(&mut cache, "first.example", p, t1))
        .collect();
    assert_eq!(got, want);
    assert_eq!(got[1], Some((false, Some(2))), "deciding line kept");
    let after = cache.get(&key("first.example")).unwrap();
    assert_eq!(after.fetches(), 1);
    assert_eq!(after.robots_url(), before.robots_url());
    match (before.state(), after.state()) {
        (RobotsState::Ready(a), RobotsState::Ready(b)) => {
            assert_eq!(a.validators, b.validators);
            let drift = a.fresh_until.max(b.fresh_until) - a.fresh_until.min(b.fresh_until);
            assert!(drift < Duration::from_millis(1), "{drift:?}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        cache.crawl_delay(&url("first.example")),
        Some(Duration::from_millis(2500))
    );
    assert!(cache.stats().spill_reads >= 1);
}

#[test]
fn a_fresh_host_is_never_refetched_after_eviction() {
    let t0 = Instant::now();
    let (mut cache, _store) = small_cache(small_files());
    let n = 500;
    for i in 0..n {
        answer(&mut cache, &host(i), t0, 200, BODY);
    }
    // Twice over, in another order: every host answers, none is due.
    let t1 = t0 + Duration::from_secs(1800);
    for round in 0..2 {
        for i in (0..n).rev() {
            let h = host((i * 7 + round) % n);
            assert_eq!(
                verdict(&mut cache, &h, "/private/x", t1),
                Some((false, Some(2)))
            );
            assert!(cache.poll_fetch(&url(&h), t1).is_none(), "{h} refetched");
        }
    }
    let s = cache.stats();
    assert_eq!(s.fetches, n as u64);
    assert_eq!(s.max_fetches_per_host, 1);
    assert_eq!(s.hosts_refetched_while_fresh, 0);
    assert_eq!(s.hosts + s.hosts_spilled, n as u64);
    assert!(s.hosts_spilled > 0 && s.spill_reads > 0);
    assert_eq!(s.spill_dropped + s.spill_damaged + s.index_collisions, 0);
    // Once expired, each host is refreshed once, conditionally.
    let t2 = t0 + Duration::from_secs(3601);
    let req = cache.poll_fetch(&url(&host(3)), t2).unwrap();
    assert_eq!(req.if_none_match.as_deref(), Some("\"e1\""));
    let s = cache.stats();
    assert_eq!((s.fetch_refreshes, s.fetch_retries), (1, 0));
    assert_eq!(s.max_fetches_per_host, 2);
}

#[test]
fn the_backoff_of_an_unreachable_host_survives_a_spill() {
    let t0 = Instant::now();
    let (mut cache, _store) = small_cache(small_files());
    let down = "down.example";
    for k in 0..3u64 {
        let at = cache
            .get(&key(down))
            .and_then(|p| p.poll_timeout())
            .unwrap_or(t0)
            .max(t0 + Duration::from_secs(k));
        cache.poll_fetch(&url(down), at).unwrap();
        assert_eq!(cache.on_network_error(&key(down), at), Some(Step::Done));
    }
    let (failures, retry_at, since) = match cache.get(&key(down)).unwrap().state() {
        RobotsState::Unreachable(u) => (u.failures, u.retry_at, u.since),
        other => panic!("{other:?}"),
    };
    assert_eq!(failures, 3);
    for i in 0..200 {
        answer(&mut cache, &host(i), t0, 200, BODY);
    }
    assert!(
        !cache.entries_lru().any(|(k, _)| *k == key(down)),
        "spilled"
    );
    // Still refused, and not retried before its time.
    assert_eq!(
        verdict(&mut cache, down, "/", retry_at - Duration::from_secs(1)).map(|v| v.0),
        Some(false)
    );
    assert!(cache
        .poll_fetch(&url(down), retry_at - Duration::from_millis(5))
        .is_none());
    match cache.get(&key(down)).unwrap().state() {
        RobotsState::Unreachable(u) => {
            assert_eq!(u.failures, 3);
            assert!(u.retry_at <= retry_at && retry_at - u.retry_at < Duration::from_millis(1));
            assert!(u.since <= since && since - u.since < Duration::from_millis(1));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        cache.poll_fetch(&url(down), retry_at).is_some(),
        "retried at its time"
    );
    let s = cache.stats();
    assert_eq!(s.fetch_retries, 3);
    assert_eq!(s.max_fetches_per_host, 4);
}

#[test]
fn a_damaged_record_is_skipped_the_host_refetched_and_counted() {
    let t0 = Instant::now();
    let (mut cache, store) = small_cache(small_files());
    answer(&mut cache, "victim.example", t0, 200, BODY);
    for i in 0..200 {
        answer(&mut cache, &host(i), t0, 200, BODY);
    }
    cache.flush().unwrap();
    // Damage the victim's record: the index says where it is.
    let spill = cache.spill_for_tests();
    let (file, offset) = spill.record_at(&key("victim.example")).expect("written");
    assert!(store.flip_byte(file, offset + 20));
    assert_eq!(
        verdict(&mut cache, "victim.example", "/", t0),
        None,
        "unknown again"
    );
    assert!(
        cache.poll_fetch(&url("victim.example"), t0).is_some(),
        "refetched"
    );
    let s = cache.stats();
    assert_eq!(s.spill_damaged, 1);
    assert!(matches!(
        cache.take_spill_error(),
        Some(SpillError::Damaged { .. })
    ));
    assert!(cache.take_spill_error().is_none(), "reported once");
    // The other hosts of that file are unharmed.
    for i in 0..200 {
        assert!(verdict(&mut cache, &host(i), "/", t0).is_some(), "{i}");
    }
}

#[test]
fn a_failed_write_keeps_the_batch_and_loses_nothing() {
    let t0 = Instant::now();
    let (mut cache, store) = small_cache(small_files());
    store.set_fail_writes(true);
    for i in 0..300 {
        answer(&mut cache, &host(i), t0, 200, BODY);
    }
    let s = cache.stats();
    assert!(s.spill_write_errors > 0);
    assert_eq!(s.spill_writes, 0);
    assert!(s.spill_batch_bytes > 0);
    assert!(matches!(
        cache.take_spill_error(),
        Some(SpillError::Write { .. })
    ));
    assert!(cache.flush().is_err());
    // Every host still answers from RAM or from the batch.
    for i in (0..300).step_by(3) {
        assert!(verdict(&mut cache, &host(i), "/", t0).is_some(), "{i}");
    }
    store.set_fail_writes(false);
    cache.flush().unwrap();
    assert_eq!(cache.stats().spill_batch_bytes, 0);
    for i in 0..300 {
        assert!(verdict(&mut cache, &host(i), "/", t0).is_some(), "{i}");
    }
    let s = cache.stats();
    assert_eq!(s.fetches, 300);
    assert_eq!(s.spill_dropped, 0);
}

#[test]
fn a_batch_that_cannot_be_written_stops_growing_at_its_cap() {
    let t0 = Instant::now();
    let config = SpillConfig {
        batch_bytes: 1_000,
        max_batch_bytes: 4_000,
        ..small_files()
    };
    let (mut cache, store) = small_cache(config);
    store.set_fail_writes(true);
    for i in 0..300 {
        answer(&mut cache, &host(i), t0, 200, BODY);
    }
    let s = cache.stats();
    assert!(
        s.spill_batch_bytes < 4_000 + 1_000,
        "{}",
        s.spill_batch_bytes
    );
    assert!(s.spill_dropped > 0, "past the cap, evictions are dropped");
    assert_eq!(s.hosts + s.hosts_spilled + s.spill_dropped, 300);
}

#[test]
fn a_file_whose_records_all_died_is_removed() {
    let t0 = Instant::now();
    let mut source = RobotsCache::new(PolicyConfig::new("trawl"), usize::MAX / 2);
    let n = 2_000;
    for i in 0..n {
        answer(&mut source, &host(i), t0, 200, BODY);
    }
    let store = MemStore::new();
    let mut spill = Spill::new(Box::new(store.clone()), small_files());
    for (k, p) in source.entries_lru() {
        assert_eq!(spill.put(k, p), Put::Spilled);
    }
    spill.flush().unwrap();
    let files = store.file_ids();
    assert!(files.len() >= 3, "{files:?}");
    assert_eq!(spill.stats().files, files.len() as u64);
    assert_eq!(spill.stats().disk_bytes, store.bytes());
    // The oldest half back: the files holding only them go, the rest stay.
    for i in 0..n / 2 {
        assert!(spill.take(&key(&host(i))).is_some(), "{i}");
    }
    let half = store.file_ids();
    assert!(
        !half.contains(&files[0]) && half.len() < files.len(),
        "{half:?}"
    );
    assert_eq!(spill.stats().disk_bytes, store.bytes());
    for i in n / 2..n {
        assert!(spill.take(&key(&host(i))).is_some(), "{i}");
    }
    // Only the file appended to is left (it goes when the next one starts).
    assert_eq!(store.file_ids().len(), 1);
    assert_eq!(spill.stats().files, 1);
    assert_eq!(spill.len(), 0);
    assert_eq!(store.calls().removes, files.len() as u64 - 1);
    assert!(spill.take(&key(&host(0))).is_none(), "taken once");
}

#[test]
fn hosts_of_one_hash_share_a_slot_and_the_loser_is_refetched() {
    let t0 = Instant::now();
    let config = SpillConfig {
        hash_mask: 0,
        ..small_files()
    };
    let (mut cache, _store) = small_cache(config);
    for i in 0..100 {
        answer(&mut cache, &host(i), t0, 200, BODY);
    }
    let s = cache.stats();
    assert_eq!(s.hosts_spilled, 1, "one slot for all");
    assert_eq!(s.index_collisions, s.evictions - 1);
    // A host that lost its slot is simply unknown: fetched again.
    assert_eq!(verdict(&mut cache, &host(0), "/", t0), None);
    assert!(cache.poll_fetch(&url(&host(0)), t0).is_some());
}

#[test]
fn a_fetch_in_flight_stays_in_ram_and_its_answer_finds_it() {
    let t0 = Instant::now();
    let (mut cache, _store) = small_cache(small_files());
    cache.poll_fetch(&url("slow.example"), t0).unwrap();
    for i in 0..200 {
        answer(&mut cache, &host(i), t0, 200, BODY);
    }
    assert!(cache.entries_lru().any(|(k, _)| *k == key("slow.example")));
    let step = cache.on_response(
        &key("slow.example"),
        t0,
        &RobotsResponse {
            status: 200,
            headers: &[],
            body: BODY.as_bytes(),
        },
    );
    assert_eq!(step, Some(Step::Done));
    assert_eq!(
        verdict(&mut cache, "slow.example", "/private/", t0),
        Some((false, Some(2)))
    );
}

#[test]
fn forget_gives_the_fetch_up_and_keeps_what_the_host_knew() {
    let t0 = Instant::now();
    let (mut cache, _store) = small_cache(small_files());
    answer(&mut cache, "a.example", t0, 200, BODY);
    let t1 = t0 + Duration::from_secs(3601);
    let req = cache.poll_fetch(&url("a.example"), t1).unwrap();
    assert!(req.if_none_match.is_some());
    cache.forget(&key("a.example"));
    // The expired rules are back: the next fetch is conditional again.
    let req = cache.poll_fetch(&url("a.example"), t1).unwrap();
    assert_eq!(req.if_none_match.as_deref(), Some("\"e1\""));
    let s = cache.stats();
    assert_eq!(s.fetches_abandoned, 1);
    assert_eq!(s.fetch_refreshes, 2);
    assert_eq!(s.hosts_refetched_while_fresh, 0);
    assert_eq!(s.max_fetches_per_host, 3);
}

#[test]
fn a_checkpoint_carries_the_spilled_hosts() {
    let t0 = Instant::now();
    let (mut cache, _store) = small_cache(small_files());
    let down = "down.example";
    cache.poll_fetch(&url(down), t0).unwrap();
    cache.on_network_error(&key(down), t0);
    for i in 0..400 {
        answer(&mut cache, &host(i), t0, 200, BODY);
    }
    cache.poll_fetch(&url("inflight.example"), t0).unwrap();
    assert!(cache.spilled() > 300);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("robots-0000.bin");
    let save = Clock {
        now: t0 + Duration::from_secs(10),
        wall_ms: 1_800_000_000_000,
    };
    let w = write_file(&path, &mut cache, save).unwrap();
    // The tier's hosts are kept by reference: its log files beside the file.
    assert_eq!(
        (w.entries + w.skipped) as usize,
        cache.len(),
        "RAM's hosts in the file"
    );
    assert_eq!(w.skipped, 1, "the first fetch in flight");
    assert!(w.spilled > 300);
    assert!(w.tier_files >= 1 && w.tier_bytes > 0, "{w:?}");
    assert_eq!(w.damaged, 0);
    let contents = read_file(&path).unwrap();
    assert!(contents.damage.is_empty(), "{:?}", contents.damage);
    let tier = contents.tier.clone().unwrap();
    assert_eq!(tier.files.len() as u64, w.tier_files);
    for (name, len) in &tier.files {
        assert!(name.starts_with("robots-0000-tier-"), "{name}");
        assert!(std::fs::metadata(dir.path().join(name)).unwrap().len() >= *len);
    }
    // A resumed crawl knows every host and fetches nothing: the tier's hosts first
    // (least recently used), RAM's last.
    let load = Clock {
        now: Instant::now() + Duration::from_secs(100),
        wall_ms: save.wall_ms,
    };
    let config = PolicyConfig::new("trawl");
    let loaded = crate::robots::dump::load_dir(dir.path(), &config, load);
    assert_eq!(loaded.stats.damaged, 0);
    assert_eq!(loaded.entries.last().unwrap().0, key(&host(399)));
    let (mut back, _store) = small_cache(small_files());
    for (k, p) in loaded.entries {
        back.restore(k, p);
    }
    assert!(back.spilled() > 300, "restored past RAM: spilled again");
    for i in 0..400 {
        assert_eq!(
            verdict(&mut back, &host(i), "/private/x", load.now),
            Some((false, Some(2)))
        );
        assert!(back.poll_fetch(&url(&host(i)), load.now).is_none());
    }
    assert_eq!(
        verdict(&mut back, down, "/", load.now).map(|v| v.0),
        Some(false)
    );
    assert_eq!(back.stats().fetches, 0);
    assert_eq!(back.stats().max_fetches_per_host, 1);
}

#[test]
fn the_file_store_writes_reads_and_removes_real_files() {
    let t0 = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let shard = dir.path().join("shard-0000");
    std::fs::create_dir_all(&shard).unwrap();
    std::fs::write(shard.join("spill-2000.log"), b"left by an earlier run").unwrap();
    let spill = Spill::new(Box::new(FileStore::new(&shard)), small_files());
    let mut cache = RobotsCache::with_spill(PolicyConfig::new("trawl"), 8_000, spill);
    for i in 0..2_000 {
        answer(&mut cache, &host(i), t0, 200, BODY);
    }
    cache.flush().unwrap();
    let logs = |d: &std::path::Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let before = logs(&shard);
    assert!(before.len() >= 3, "{before:?}");
    assert!(
        !before.contains(&"spill-2000.log".to_owned()),
        "stale log removed"
    );
    let on_disk: u64 = before
        .iter()
        .map(|n| std::fs::metadata(shard.join(n)).unwrap().len())
        .sum();
    assert_eq!(on_disk, cache.stats().disk_bytes);
    for i in 0..2_000 {
        assert_eq!(
            verdict(&mut cache, &host(i), "/private/x", t0),
            Some((false, Some(2))),
            "{i}"
        );
    }
    assert!(before.contains(&"spill-0000.log".to_owned()));
    assert!(
        !logs(&shard).contains(&"spill-0000.log".to_owned()),
        "the oldest log died"
    );
    assert_eq!(cache.stats().fetches, 2_000);
}

/// Two checkpoints of a tier on real files, with churn between them (hosts read back,
/// files dying and their ids reused, one host's rules changed): each checkpoint, read
/// after the crawl's own logs are gone, gives every host with the rules it had then.
#[test]
fn checkpoints_keep_the_tier_by_reference_across_churn() {
    let t0 = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let shard = dir.path().join("robots").join("shard-0000");
    let spill = Spill::new(Box::new(FileStore::new(&shard)), small_files());
    let mut cache = RobotsCache::with_spill(PolicyConfig::new("trawl"), 8_000, spill);
    for i in 0..2_000 {
        answer(&mut cache, &host(i), t0, 200, BODY);
    }
    let clock = |at: Instant| Clock {
        now: at,
        wall_ms: 1_800_000_000_000 + (at - t0).as_millis() as u64,
    };
    let cp = |n: &str| {
        let d = dir.path().join(n);
        std::fs::create_dir_all(&d).unwrap();
        d
    };
    let (cp1, cp2) = (cp("cp-1"), cp("cp-2"));
    let w1 = write_file(&cp1.join("robots-0000.bin"), &mut cache, clock(t0)).unwrap();
    assert!(w1.spilled > 1_900 && w1.tier_files >= 3, "{w1:?}");
    // Churn: every host read back (the oldest logs die and are removed), then h3's
    // robots.txt changes after its rules expired.
    for i in 0..2_000 {
        assert_eq!(
            verdict(&mut cache, &host(i), "/private/x", t0),
            Some((false, Some(2)))
        );
    }
    let t1 = t0 + Duration::from_secs(3_601);
    let req = cache.poll_fetch(&url(&host(3)), t1).unwrap();
    assert!(req.if_none_match.is_some());
    let changed = "user-agent: *\ndisallow: /\n";
    let step = cache.on_response(
        &key(&host(3)),
        t1,
        &RobotsResponse {
            status: 200,
            headers: &[("Cache-Control", b"max-age=3600")],
            body: changed.as_bytes(),
        },
    );
    assert_eq!(step, Some(Step::Done));
    for i in 2_000..2_500 {
        answer(&mut cache, &host(i), t1, 200, BODY);
    }
    let w2 = write_file(&cp2.join("robots-0000.bin"), &mut cache, clock(t1)).unwrap();
    assert!(w2.spilled > 2_000, "{w2:?}");
    // A new crawl would start by removing its logs: the checkpoints keep their own.
    std::fs::remove_dir_all(dir.path().join("robots")).unwrap();
    let config = PolicyConfig::new("trawl");
    let load = |cp: &std::path::Path, at: Instant| {
        let loaded = crate::robots::dump::load_dir(cp, &config, clock(at));
        assert_eq!(loaded.stats.damaged, 0, "{:?}", loaded.stats);
        let (mut back, _store) = small_cache(small_files());
        for (k, p) in loaded.entries {
            back.restore(k, p);
        }
        back
    };
    // The first checkpoint, resumed at its cut: every host's rules, h3's old ones.
    let mut back = load(&cp1, t0);
    for i in (0..2_000).filter(|&i| i != 3) {
        assert_eq!(
            verdict(&mut back, &host(i), "/private/x", t0),
            Some((false, Some(2))),
            "{i}"
        );
    }
    assert_eq!(
        verdict(&mut back, &host(3), "/public", t0),
        Some((true, None))
    );
    assert_eq!(back.stats().fetches, 0, "nothing fetched again");
    // The second, at its cut an hour later: h3's new rules (its latest record wins),
    // the hosts of the hour after; the first 2,000 hosts' rules expired meanwhile, so
    // they are revalidated with their validators, not fetched as new.
    let mut back = load(&cp2, t1);
    assert_eq!(
        verdict(&mut back, &host(3), "/public", t1),
        Some((false, Some(2)))
    );
    for i in 2_000..2_500 {
        assert_eq!(
            verdict(&mut back, &host(i), "/private/x", t1),
            Some((false, Some(2))),
            "{i}"
        );
    }
    for i in (0..2_000).filter(|&i| i != 3) {
        let req = back
            .poll_fetch(&url(&host(i)), t1)
            .expect("expired: revalidated");
        assert!(
            req.if_none_match.is_some(),
            "{i}: known rules, a conditional request"
        );
    }
}

/// One step of a crawl's robots traffic over a few hosts.
#[derive(Clone, Debug)]
enum Op {
    Check(usize, bool),
    Fetch(usize),
    Answer(usize, u16, usize),
    Fail(usize),
    Forget(usize),
    Wait(u64),
    Flush,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..24usize, any::<bool>()).prop_map(|(h, p)| Op::Check(h, p)),
        3 => (0..24usize).prop_map(Op::Fetch),
        3 => (0..24usize, prop::sample::select(vec![200u16, 404, 503]), 0..4usize)
            .prop_map(|(h, s, b)| Op::Answer(h, s, b)),
        1 => (0..24usize).prop_map(Op::Fail),
        1 => (0..24usize).prop_map(Op::Forget),
        1 => (0..4000u64).prop_map(Op::Wait),
        1 => Just(Op::Flush),
    ]
}

fn body(n: usize) -> String {
    let mut s = String::from("user-agent: *\n");
    for i in 0..=n * 6 {
        s.push_str(&format!("disallow: /p{i}/\n"));
    }
    s
}

/// An answer with no fetch in flight is ignored, whether the host is unknown (`None`)
/// or known (`NotFetching`): a host never fetched (or whose only fetch was given up)
/// is dropped rather than spilled, so the small cache may not know it.
fn ignored(step: Option<Step>) -> Option<Step> {
    step.filter(|s| *s != Step::NotFetching)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A cache whose RAM holds a few hosts, over the disk tier, answers every call
    /// exactly as one that holds them all in RAM.
    #[test]
    fn a_small_cache_over_the_tier_answers_like_an_unbounded_one(
        ops in prop::collection::vec(op(), 1..200),
        budget in 1_500usize..6_000,
    ) {
        let t0 = Instant::now();
        let mut now = t0;
        let mut reference = RobotsCache::with_spill(
            PolicyConfig::new("trawl"), usize::MAX / 2, Spill::in_memory());
        let store = MemStore::new();
        let config = SpillConfig { batch_bytes: 700, ..small_files() };
        let mut cache = RobotsCache::with_spill(
            PolicyConfig::new("trawl"), budget, Spill::new(Box::new(store), config));
        for op in ops {
            match op {
                Op::Check(h, private) => {
                    let path = if private { "/p1/x" } else { "/" };
                    prop_assert_eq!(
                        verdict(&mut cache, &host(h), path, now),
                        verdict(&mut reference, &host(h), path, now)
                    );
                }
                Op::Fetch(h) => prop_assert_eq!(
                    cache.poll_fetch(&url(&host(h)), now),
                    reference.poll_fetch(&url(&host(h)), now)
                ),
                Op::Answer(h, status, b) => {
                    let text = body(b);
                    let r = RobotsResponse { status, headers: &[], body: text.as_bytes() };
                    prop_assert_eq!(
                        ignored(cache.on_response(&key(&host(h)), now, &r)),
                        ignored(reference.on_response(&key(&host(h)), now, &r))
                    );
                }
                Op::Fail(h) => prop_assert_eq!(
                    ignored(cache.on_network_error(&key(&host(h)), now)),
                    ignored(reference.on_network_error(&key(&host(h)), now))
                ),
                Op::Forget(h) => {
                    cache.forget(&key(&host(h)));
                    reference.forget(&key(&host(h)));
                }
                Op::Wait(s) => now += Duration::from_secs(s),
                Op::Flush => cache.flush().unwrap(),
            }
        }
        let (a, b) = (cache.stats(), reference.stats());
        prop_assert_eq!(a.fetches, b.fetches);
        prop_assert_eq!(a.hosts_refetched_while_fresh, 0);
        prop_assert_eq!(a.spill_damaged + a.spill_write_errors, 0);
    }
}
