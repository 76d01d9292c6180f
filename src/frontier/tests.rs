use std::collections::HashMap;
use std::time::Duration;

use proptest::prelude::*;

use super::*;

fn config(budget: usize, per_host: usize, block: usize) -> FrontierConfig {
    let mut c = FrontierConfig::new("unused");
    c.ram_budget_bytes = budget;
    c.per_host_ram_urls = per_host;
    c.max_per_host_ram_urls = per_host;
    c.block_urls = block;
    c.segment_bytes = 4096;
    c
}

/// A frontier on a [`MemStore`], and a handle on the store.
fn in_memory(budget: usize, per_host: usize, block: usize) -> (Frontier, MemStore) {
    let c = config(budget, per_host, block);
    let store = MemStore::new(c.segment_bytes);
    (Frontier::with_store(c, Box::new(store.clone())), store)
}

fn url(host: usize, i: usize) -> QueuedUrl {
    QueuedUrl {
        url: format!("http://h{host}.test/p/{i}"),
        via: Some(format!("http://h{host}.test/")),
        hops: "L".into(),
        attempts: 0,
    }
}

fn index_of(u: &str) -> usize {
    u.rsplit('/').next().unwrap().parse().unwrap()
}

/// Pushes a URL and activates every host of the line, as a crawl with free slots
/// would: the tests of per-host queues need their hosts to have entries.
fn push(f: &mut Frontier, host: &str, item: QueuedUrl, now: Instant) {
    f.push(host, item, now).unwrap();
    f.activate_all(now);
}

impl Frontier {
    /// Activates every host waiting in the line, whatever the bound.
    fn activate_all(&mut self, now: Instant) {
        while self.activate_next(now).unwrap() {}
    }
}

/// Drains the frontier with zero politeness delay, returning URLs in fetch order.
fn drain(f: &mut Frontier, now: Instant) -> Vec<(String, String)> {
    let mut out = Vec::new();
    while let Some((host, item)) = f.take_ready(now).unwrap() {
        out.push((host.clone(), item.url));
        f.complete(&host, now);
    }
    out
}

/// Each host's URLs came in the order pushed (index 0, 1, 2, ...), `per_host` each.
fn assert_fifo_per_host(order: &[(String, String)], per_host: usize) {
    let mut next: HashMap<&str, usize> = HashMap::new();
    for (host, u) in order {
        let expected = next.entry(host).or_insert(0);
        assert_eq!(index_of(u), *expected, "host {host} out of order");
        *expected += 1;
    }
    assert!(next.values().all(|&n| n == per_host), "{next:?}");
}

#[test]
fn per_host_order_is_fifo_through_ram_buffer_and_blocks() {
    let now = Instant::now();
    // A small budget: heads of 4, blocks of 5, most URLs in blocks.
    let (mut f, store) = in_memory(16 * 1024, 4, 5);
    for i in 0..500 {
        for h in 0..5 {
            push(&mut f, &format!("h{h}"), url(h, i), now);
        }
        // Interleave serving with pushing, so heads, blocks and buffers mix.
        if i % 7 == 0 {
            if let Some((host, item)) = f.take_ready(now).unwrap() {
                f.requeue_front(&host, item, now);
                f.complete(&host, now);
            }
        }
    }
    let s = f.stats();
    assert!(s.disk_urls > 2000, "most URLs spilled: {s:?}");
    assert_eq!(s.hosts_with_disk, 5);
    assert!(store.calls().appends > 0);
    assert_eq!(f.recount_ram_bytes(), f.ram_bytes);
    let order = drain(&mut f, now);
    assert_eq!(order.len(), 2500, "nothing lost");
    assert_fifo_per_host(&order, 500);
    assert!(f.is_exhausted());
    let s = f.stats();
    assert_eq!((s.disk_urls, s.ram_urls, s.hosts_with_disk), (0, 0, 0));
    assert_eq!(s.blocks_read, s.blocks_written);
    // Only the file being appended to may be left.
    assert!(store.file_ids().len() <= 1, "{:?}", store.file_ids());
}

/// The point of the per-host layout: a host that is due gets its own blocks back at
/// once, with one read per block, however much another host spilled before it (the
/// shared FIFO of segments made it wait behind all of those).
#[test]
fn a_ready_hosts_blocks_come_back_at_once_behind_a_million_spilled_urls() {
    let now = Instant::now();
    let (mut f, store) = in_memory(1 << 20, 32, 32);
    let big = "http://big.test";
    for i in 0..1_000_000 {
        let item = QueuedUrl {
            url: format!("{big}/{i}"),
            via: None,
            hops: String::new(),
            attempts: 0,
        };
        push(&mut f, big, item, now);
    }
    let small = "http://h1.test";
    for i in 0..200 {
        push(&mut f, small, url(1, i), now);
    }
    assert!(f.stats().disk_urls > 999_000);
    // `big` is served once and then waits an hour; `small` is served back to back.
    let (host, _) = f.take_ready(now).unwrap().unwrap();
    assert_eq!(host, big);
    f.complete(big, now + Duration::from_secs(3600));
    let reads_before = store.calls().reads;
    let mut got = Vec::new();
    while let Some((host, item)) = f.take_ready(now).unwrap() {
        assert_eq!(host, small);
        got.push(index_of(&item.url));
        f.complete(&host, now);
    }
    assert_eq!(got, (0..200).collect::<Vec<_>>());
    // 200 URLs: a head of 32 and the rest in blocks of 32 (the last partly in the
    // buffer): at most 6 reads, all of them `small`'s.
    let reads = store.calls().reads - reads_before;
    assert!(reads <= 6, "{reads} block reads");
    assert_eq!(f.stats().disk_urls + f.stats().ram_urls, 999_999);
}

#[test]
fn hosts_are_served_breadth_first() {
    let now = Instant::now();
    let (mut f, _) = in_memory(1 << 20, 8, 8);
    // One huge host queued first, then four small ones.
    for i in 0..8 {
        push(&mut f, "big", url(0, i), now);
    }
    for h in 1..5 {
        push(&mut f, &format!("h{h}"), url(h, 0), now);
    }
    let delay = Duration::from_secs(1);
    let t = now;
    let mut served = Vec::new();
    for _ in 0..5 {
        let (host, _) = f.take_ready(t).unwrap().expect("a host is ready");
        served.push(host.clone());
        f.complete(&host, t + delay);
    }
    served.sort();
    assert_eq!(
        served,
        ["big", "h1", "h2", "h3", "h4"],
        "each host once before any twice"
    );
    // Nothing is ready until the politeness delay of someone has passed.
    assert!(f.take_ready(t).unwrap().is_none());
    assert_eq!(f.next_wakeup_at(now), Some(now + delay));
    let (host, _) = f.take_ready(t + delay).unwrap().unwrap();
    assert_eq!(host, "big");
}

#[test]
fn politeness_delay_is_never_shortened() {
    let now = Instant::now();
    let (mut f, _) = in_memory(1 << 20, 8, 8);
    push(&mut f, "a", url(0, 0), now);
    push(&mut f, "a", url(0, 1), now);
    let (h, _) = f.take_ready(now).unwrap().unwrap();
    // One fetch per host at a time: the second URL is not served while the first runs.
    assert!(f.take_ready(now).unwrap().is_none());
    f.complete(&h, now + Duration::from_millis(500));
    assert!(f
        .take_ready(now + Duration::from_millis(499))
        .unwrap()
        .is_none());
    assert!(f
        .take_ready(now + Duration::from_millis(500))
        .unwrap()
        .is_some());
}

#[test]
fn defer_postpones_a_ready_host_and_ready_hosts_are_counted() {
    let now = Instant::now();
    let (mut f, _) = in_memory(1 << 20, 8, 8);
    push(&mut f, "a", url(0, 0), now);
    push(&mut f, "b", url(1, 0), now);
    assert_eq!(f.hosts_ready_at(now), 2);
    f.defer("a", now + Duration::from_secs(5));
    assert_eq!(f.hosts_ready_at(now), 1);
    assert_eq!(f.hosts_ready_at(now + Duration::from_secs(5)), 2);
    assert_eq!(f.stats().hosts_ready, 2);
    let (b, _) = f.take_ready(now).unwrap().unwrap();
    assert_eq!(b, "b");
    assert!(f
        .take_ready(now + Duration::from_secs(4))
        .unwrap()
        .is_none());
    assert!(f
        .take_ready(now + Duration::from_secs(5))
        .unwrap()
        .is_some());
}

/// `hosts_ready_at` walks the heap's array (std's layout: children of `i` at
/// `2i + 1` and `2i + 2`), pruning at the first instant past `now`: it must agree
/// with a plain count, stale entries included.
#[test]
fn hosts_ready_at_agrees_with_a_plain_count() {
    let now = Instant::now();
    let (mut f, _) = in_memory(1 << 20, 8, 8);
    let ms = |n: u64| now + Duration::from_millis(n);
    for h in 0..500u64 {
        push(&mut f, &format!("h{h}"), url(h as usize, 0), now);
        f.defer(&format!("h{h}"), ms((h * 7919) % 1000));
        if h % 3 == 0 {
            // A second deferral leaves a stale entry behind.
            f.defer(&format!("h{h}"), ms((h * 7919) % 1000 + 300));
        }
    }
    for t in [0, 1, 150, 499, 500, 999, 1300, 2000] {
        let plain = (0..500u64)
            .filter(|&h| {
                let d = (h * 7919) % 1000 + if h % 3 == 0 { 300 } else { 0 };
                d <= t
            })
            .count() as u64;
        assert_eq!(f.hosts_ready_at(ms(t)), plain, "at {t} ms");
    }
}

#[test]
fn for_each_queued_lists_every_url_once_in_host_order() {
    let now = Instant::now();
    let (mut f, _) = in_memory(8 * 1024, 3, 4);
    for i in 0..300 {
        for h in 0..7 {
            push(&mut f, &format!("h{h}"), url(h, i), now);
        }
    }
    let s = f.stats();
    assert!(s.disk_urls > 0 && s.ram_urls > 0, "{s:?}");
    let mut seen = Vec::new();
    f.for_each_queued(|host, item| seen.push((host.to_owned(), item.url.clone())))
        .unwrap();
    assert_eq!(seen.len(), 2100);
    assert_fifo_per_host(&seen, 300);
    // Listing consumes nothing.
    assert_eq!(f.stats().disk_urls + f.stats().ram_urls, 2100);
    assert_eq!(drain(&mut f, now).len(), 2100);
}

#[test]
fn drop_host_streams_a_big_queue_in_bounded_steps() {
    let now = Instant::now();
    let (mut f, store) = in_memory(64 * 1024, 16, 16);
    for i in 0..10_000 {
        push(&mut f, "trap", url(0, i), now);
        if i % 10 == 0 {
            push(&mut f, "other", url(1, i / 10), now);
        }
    }
    let mut dropped = Vec::new();
    let mut turns = 0;
    loop {
        let mut this_turn = 0;
        let more = f
            .drop_host("trap", 100, |item| {
                dropped.push(index_of(&item.url));
                this_turn += 1;
            })
            .unwrap();
        assert!(this_turn <= 100);
        // At most one block beyond the head is in RAM at any time.
        assert!(f.stats().ram_urls <= 16 + 16 + 1000, "{:?}", f.stats());
        assert_eq!(f.recount_ram_bytes(), f.ram_bytes);
        turns += 1;
        if !more {
            break;
        }
        assert_eq!(this_turn, 100);
    }
    assert_eq!(turns, 100);
    assert_eq!(dropped, (0..10_000).collect::<Vec<_>>());
    assert!(f.drop_host("trap", 100, |_| {}).is_ok_and(|more| !more));
    // The other host is whole, and served in order.
    let order = drain(&mut f, now);
    assert_fifo_per_host(&order, 1000);
    assert!(f.is_exhausted());
    assert!(store.calls().deleted > 0);
    assert!(store.file_ids().len() <= 1);
}

#[test]
fn a_damaged_block_is_reported_and_the_hosts_other_blocks_are_served() {
    let now = Instant::now();
    let (mut f, store) = in_memory(1 << 20, 8, 8);
    for i in 0..40 {
        push(&mut f, "a", url(0, i), now);
    }
    // Head 0..8; blocks 8..16, 16..24, 24..32; 32..40 in the buffer (sealed full).
    f.for_each_queued(|_, _| {}).unwrap();
    assert_eq!(store.file_ids(), vec![0]);
    // The first block starts right after the header; flip a byte inside it.
    assert!(store.flip_byte(0, crate::disk::HEADER_BYTES as u32 + 10));
    let got: Vec<usize> = drain(&mut f, now)
        .iter()
        .map(|(_, u)| index_of(u))
        .collect();
    let want: Vec<usize> = (0..8).chain(16..40).collect();
    assert_eq!(got, want);
    let s = f.stats();
    assert_eq!(s.blocks_damaged, 1);
    let d: Vec<&BlockDamage> = f.damaged_blocks().collect();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].offset, crate::disk::HEADER_BYTES as u64);
    assert_eq!(d[0].urls, 8);
    assert_eq!(d[0].host, "a");
    assert!(d[0].path.to_string_lossy().contains("blocks-00000000"));
    assert!(f.is_exhausted());
}

#[test]
fn a_write_failure_refuses_the_url_and_loses_nothing_queued() {
    let now = Instant::now();
    let (mut f, store) = in_memory(1 << 20, 4, 4);
    store.set_fail_appends(true);
    let mut queued = 0;
    let mut refused = 0;
    for i in 0..100_000 {
        match f.push("a", url(0, i), now) {
            Ok(()) => queued += 1,
            Err(FrontierError::Write { path, .. }) => {
                assert!(path.to_string_lossy().ends_with("blocks-00000000.log"));
                refused += 1;
                if refused == 3 {
                    break;
                }
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(refused, 3);
    store.set_fail_appends(false);
    let got = drain(&mut f, now);
    assert_eq!(got.len(), queued);
    // The refused URLs are missing from the order; everything before is in order.
    let idx: Vec<usize> = got.iter().map(|(_, u)| index_of(u)).collect();
    assert!(idx.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn the_file_store_deletes_log_files_once_their_blocks_are_consumed() {
    let dir = tempfile::tempdir().unwrap();
    let now = Instant::now();
    let mut c = config(16 * 1024, 4, 8);
    c.dir = dir.path().join("frontier");
    let mut f = Frontier::new(c).unwrap();
    for i in 0..4000 {
        push(&mut f, &format!("h{}", i % 3), url(i % 3, i / 3), now);
    }
    f.for_each_queued(|_, _| {}).unwrap();
    let files = std::fs::read_dir(dir.path().join("frontier"))
        .unwrap()
        .count();
    assert!(files > 3, "{files} log files");
    assert_eq!(f.stats().segments, files as u64);
    let order = drain(&mut f, now);
    assert_eq!(order.len(), 4000);
    let left = std::fs::read_dir(dir.path().join("frontier"))
        .unwrap()
        .count();
    assert!(left <= 1, "{left} log files left");
    assert!(f.stats().disk_bytes <= 4096);
}

/// The gate's verdict per host name, for the readiness tests below.
fn gate_for<'a>(
    rules: &'a HashMap<&'a str, &'a str>,
) -> impl FnMut(&str, &QueuedUrl) -> Gate<()> + 'a {
    move |host, _| match rules.get(host).copied() {
        Some("hold") => Gate::Hold,
        Some("stop") => Gate::Stop,
        _ => Gate::Take(()),
    }
}

#[test]
fn a_held_host_keeps_its_queue_until_released() {
    let now = Instant::now();
    let (mut f, _) = in_memory(1 << 20, 8, 8);
    for i in 0..3 {
        push(&mut f, "h0", url(0, i), now);
    }
    push(&mut f, "h1", url(1, 0), now);
    let rules = HashMap::from([("h0", "hold")]);
    // h0 is held (its URLs stay), h1 is served.
    let (host, _, ()) = f.take_ready_with(now, gate_for(&rules)).unwrap().unwrap();
    assert_eq!(host, "h1");
    assert!(f.is_held("h0"));
    assert_eq!(f.stats().ram_urls, 3);
    f.complete("h1", now);
    // Held: not served even to a gate that would take it, and not a wake-up.
    assert!(f.take_ready(now).unwrap().is_none());
    assert_eq!(f.next_wakeup_at(now), None);
    // Released not before `at`: served from then, in order, each URL once.
    let at = now + Duration::from_secs(2);
    f.release("h0", at);
    assert!(!f.is_held("h0"));
    assert!(f.take_ready(now).unwrap().is_none());
    let got: Vec<String> = drain(&mut f, at).into_iter().map(|(_, u)| u).collect();
    assert_eq!(got, (0..3).map(|i| url(0, i).url).collect::<Vec<_>>());
}

#[test]
fn a_deferred_host_comes_back_at_its_instant_and_stop_keeps_the_turn() {
    let now = Instant::now();
    let later = now + Duration::from_secs(60);
    let (mut f, _) = in_memory(1 << 20, 8, 8);
    push(&mut f, "h0", url(0, 0), now);
    // Deferred to `later`: nothing now, the wake-up says when.
    assert!(f
        .take_ready_with(now, |_, _| Gate::<()>::Defer(later))
        .unwrap()
        .is_none());
    assert_eq!(f.next_wakeup_at(now), Some(later));
    // A stop leaves the host ready at its turn.
    assert!(f
        .take_ready_with(later, |_, _| Gate::<()>::Stop)
        .unwrap()
        .is_none());
    let (host, item) = f.take_ready(later).unwrap().unwrap();
    assert_eq!((host.as_str(), item), ("h0", url(0, 0)));
    // Releasing a host that is not held changes nothing.
    f.release("h0", later + Duration::from_secs(600));
    f.complete("h0", later);
    assert!(f.is_exhausted());
}

#[test]
fn idle_hosts_are_forgotten_and_hosts_with_a_backlog_are_kept() {
    let now = Instant::now();
    let budget = 64 * 1024;
    let (mut f, _) = in_memory(budget, 4, 4);
    for i in 0..100 {
        push(&mut f, "deep", url(0, i), now);
    }
    let rules = HashMap::from([("deep", "hold")]);
    for h in 1..3000 {
        push(&mut f, &format!("h{h}"), url(h, 0), now);
        while let Some((host, _, ())) = f.take_ready_with(now, gate_for(&rules)).unwrap() {
            f.complete(&host, now);
        }
    }
    let s = f.stats();
    assert!(s.hosts < 1000, "idle hosts forgotten: {s:?}");
    assert!(f.is_held("deep"));
    assert_eq!(s.hosts_with_disk, 1);
    assert_eq!(s.ram_urls + s.disk_urls, 100);
    assert!(s.ram_bytes <= budget as u64, "{s:?}");
}

/// Bytes of one host's entry, pinned: a million known hosts must fit a 512 MiB
/// process (docs/frontier.md, "Bytes per host").
#[test]
fn a_host_entry_is_small() {
    assert_eq!(std::mem::size_of::<Option<host::Host>>(), 104);
    assert_eq!(HOST_BYTES, 104 + 8 + 32);
    assert_eq!(std::mem::size_of::<BlockRef>(), 16);
    assert_eq!(SPILL_BYTES, 64);
}

#[derive(Clone, Debug)]
enum Op {
    Push { host: usize, n: usize },
    Take,
    Drop { host: usize, max: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..40usize, 1..60usize).prop_map(|(host, n)| Op::Push { host, n }),
        3 => Just(Op::Take),
        1 => (0..40usize, 1..50usize).prop_map(|(host, max)| Op::Drop { host, max }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Whatever is pushed, served and dropped: the running RAM count is exact, RAM
    /// stays within the budget plus the one block a due host may read past it plus
    /// requeues, and every URL pushed is served or dropped exactly once, in order.
    #[test]
    fn ram_stays_within_the_budget(ops in prop::collection::vec(op(), 1..120)) {
        let now = Instant::now();
        let budget = 48 * 1024;
        let (mut f, _) = in_memory(budget, 8, 8);
        let mut pushed = vec![0usize; 40];
        let mut out: Vec<(String, String)> = Vec::new();
        let max_url_bytes = url(39, 100_000).ram_bytes();
        let mut running: Option<String> = None;
        for op in ops {
            match op {
                Op::Push { host, n } => {
                    for _ in 0..n {
                        push(&mut f, &format!("h{host}"), url(host, pushed[host]), now);
                        pushed[host] += 1;
                    }
                }
                Op::Take => {
                    // Two fetches at once, completed one turn late.
                    if let Some((host, item)) = f.take_ready(now).unwrap() {
                        out.push((host.clone(), item.url));
                        if let Some(prev) = running.replace(host) {
                            f.complete(&prev, now);
                        }
                    }
                }
                Op::Drop { host, max } => {
                    let name = format!("h{host}");
                    f.drop_host(&name, max, |item| out.push((name.clone(), item.url.clone())))
                        .unwrap();
                }
            }
            prop_assert_eq!(f.recount_ram_bytes(), f.ram_bytes);
            prop_assert_eq!(f.recount(), f.counts());
            // Beyond the budget: a block read into a due host's empty head, and what
            // is per host or per block (entries, block references).
            let per_host: usize = f.table.iter().map(|(_, h)| {
                HOST_BYTES + heap_chunk(h.name.len()) + h.spill.as_ref().map_or(0, |s| {
                    SPILL_BYTES + s.blocks.len() * BLOCK_REF_BYTES
                })
            }).sum();
            prop_assert!(
                f.ram_bytes <= budget + 8 * max_url_bytes + per_host,
                "{} over {budget}", f.ram_bytes
            );
        }
        if let Some(prev) = running {
            f.complete(&prev, now);
        }
        prop_assert_eq!(f.recount(), f.counts());
        out.extend(drain(&mut f, now));
        let total: usize = pushed.iter().sum();
        prop_assert_eq!(out.len(), total);
        let mut next: HashMap<&str, usize> = HashMap::new();
        for (host, u) in &out {
            let e = next.entry(host).or_insert(0);
            prop_assert_eq!(index_of(u), *e);
            *e += 1;
        }
    }
}

/// A host's queue length counts its RAM head, its blocks and its unwritten buffer
/// (the status page's host tables).
#[test]
fn queued_of_counts_ram_blocks_and_buffer() {
    let now = Instant::now();
    let (mut f, _store) = in_memory(16 * 1024, 4, 5);
    for i in 0..300 {
        push(&mut f, "h0", url(0, i), now);
    }
    push(&mut f, "h1", url(1, 0), now);
    assert_eq!(f.queued_of("h0"), Some(300));
    assert_eq!(f.queued_of("h1"), Some(1));
    assert_eq!(f.queued_of("nobody"), None);
    assert!(f.stats().disk_urls > 0, "some of h0 spilled");
    let (host, item) = f.take_ready(now).unwrap().unwrap();
    let left = f.queued_of(&host).unwrap();
    assert_eq!(left, if host == "h0" { 299 } else { 0 });
    f.requeue_front(&host, item, now);
    f.complete(&host, now);
}

/// A frontier whose active set holds at most `max_active` hosts.
fn with_active_bound(max_active: usize, budget: u16) -> Frontier {
    let mut c = config(1 << 20, 64, 64);
    c.max_active_hosts = max_active;
    c.activation_budget = budget;
    Frontier::in_memory(c)
}

#[test]
fn new_hosts_wait_in_the_line_with_no_entry_until_a_slot_would_wait() {
    let now = Instant::now();
    let mut f = with_active_bound(2, 100);
    for h in 0..1000 {
        f.push(&format!("h{h}"), url(h, 0), now).unwrap();
    }
    let s = f.stats();
    assert_eq!((s.hosts, s.hosts_active, s.line_records), (0, 0, 1000));
    assert_eq!(f.recount_ram_bytes(), f.ram_bytes);
    // The first take activates the line's first host; a second take the next; a third
    // finds the active set full (both hosts are in flight).
    let (a, _) = f.take_ready(now).unwrap().unwrap();
    let (b, _) = f.take_ready(now).unwrap().unwrap();
    assert_eq!((a.as_str(), b.as_str()), ("h0", "h1"));
    assert!(f.take_ready(now).unwrap().is_none());
    assert_eq!(f.stats().hosts_active, 2);
    assert_eq!(f.next_wakeup_at(now), None, "nothing may start");
    // h0 is done: it leaves the active set at the next turn and h2 comes in.
    f.complete("h0", now);
    let (c, _) = f.take_ready(now).unwrap().unwrap();
    assert_eq!(c, "h2");
    assert_eq!(f.stats().hosts_active, 2);
    assert_eq!(f.stats().activations, 3);
}

#[test]
fn started_hosts_come_before_new_ones() {
    let now = Instant::now();
    let mut f = with_active_bound(100, 100);
    push(&mut f, "started", url(0, 0), now);
    let (host, _) = f.take_ready(now).unwrap().unwrap();
    assert_eq!(host, "started");
    // The page gives its host more URLs after the fetch ends (links are admitted
    // after `complete`): the host stays active.
    let later = now + Duration::from_millis(500);
    f.complete("started", later);
    f.push("started", url(0, 1), now).unwrap();
    for h in 1..50 {
        f.push(&format!("h{h}"), url(h, 0), now).unwrap();
    }
    // While it rests, new hosts fill the free slots; once it is due, it comes first.
    let (first_new, _) = f.take_ready(now).unwrap().unwrap();
    assert_eq!(first_new, "h1");
    assert!(f.is_active("started"));
    let (next, item) = f.take_ready(later).unwrap().unwrap();
    assert_eq!((next.as_str(), index_of(&item.url)), ("started", 1));
}

#[test]
fn a_host_that_spends_its_budget_goes_to_the_back_of_the_line() {
    let now = Instant::now();
    let mut f = with_active_bound(1, 3);
    for i in 0..10 {
        push(&mut f, "big", url(0, i), now);
    }
    f.push("small", url(1, 0), now).unwrap();
    let mut order = Vec::new();
    while let Some((host, item)) = f.take_ready(now).unwrap() {
        order.push((host.clone(), index_of(&item.url)));
        f.complete(&host, now);
    }
    let hosts: Vec<&str> = order.iter().map(|(h, _)| h.as_str()).collect();
    assert_eq!(
        hosts,
        ["big", "big", "big", "small", "big", "big", "big", "big", "big", "big", "big"]
    );
    let big: Vec<usize> = order
        .iter()
        .filter(|(h, _)| h == "big")
        .map(|o| o.1)
        .collect();
    assert_eq!(big, (0..10).collect::<Vec<_>>(), "its order is kept");
    assert_eq!(f.stats().rotations, 1);
    assert!(f.is_exhausted());
}

#[test]
fn the_line_spills_in_blocks_and_a_checkpoint_lists_it() {
    let now = Instant::now();
    let (mut f, store) = in_memory(64 * 1024, 4, 8);
    for h in 0..5000 {
        f.push(&format!("http://h{h}.test"), url(h, 0), now)
            .unwrap();
    }
    let s = f.stats();
    assert_eq!((s.hosts, s.line_records), (0, 5000));
    assert!(s.disk_urls > 4000, "the line is on disk: {s:?}");
    assert!(store.calls().appends > 0);
    assert!(
        s.ram_bytes < 64 * 1024,
        "RAM does not grow with waiting hosts: {s:?}"
    );
    let (pending, _, ram, disk) = f.recount();
    assert_eq!(
        (pending, ram, disk),
        (f.pending_bytes, f.ram_urls, f.disk_urls)
    );
    let mut listed = Vec::new();
    f.for_each_queued(|host, item| listed.push((host.to_owned(), item.url.clone())))
        .unwrap();
    assert_eq!(listed.len(), 5000);
    assert_eq!(listed[17], ("http://h17.test".to_owned(), url(17, 0).url));
    // Served to the end, in discovery order, each host once.
    let order = drain(&mut f, now);
    assert_eq!(order.len(), 5000);
    assert!(order
        .iter()
        .enumerate()
        .all(|(i, (h, _))| *h == format!("http://h{i}.test")));
    assert!(f.is_exhausted());
    assert_eq!(f.stats().hosts_active, 0);
}

#[test]
fn a_host_served_to_the_end_that_gets_a_url_comes_back_through_the_line() {
    let now = Instant::now();
    let mut f = with_active_bound(1, 100);
    push(&mut f, "a", url(0, 0), now);
    let (host, _) = f.take_ready(now).unwrap().unwrap();
    f.complete(&host, now);
    f.push("b", url(1, 0), now).unwrap();
    // `a` leaves the active set at the next turn; `b` comes in.
    let (next, _) = f.take_ready(now).unwrap().unwrap();
    assert_eq!(next, "b");
    assert!(!f.is_active("a"));
    f.push("a", url(0, 1), now).unwrap();
    assert!(
        f.take_ready(now).unwrap().is_none(),
        "the set is full (b runs)"
    );
    f.complete("b", now);
    let (again, item) = f.take_ready(now).unwrap().unwrap();
    assert_eq!((again.as_str(), index_of(&item.url)), ("a", 1));
}

#[test]
fn a_damaged_line_block_is_reported_and_the_rest_served() {
    let now = Instant::now();
    let (mut f, store) = in_memory(64 * 1024, 4, 8);
    for h in 0..1000 {
        f.push(&format!("h{h}"), url(h, 0), now).unwrap();
    }
    f.flush_batch().unwrap();
    let first = *f.line.blocks.front().unwrap();
    assert!(store.flip_byte(first.file, first.offset + 10));
    let order = drain(&mut f, now);
    let s = f.stats();
    assert_eq!(s.blocks_damaged, 1);
    assert_eq!(order.len() as u64, 1000 - u64::from(first.count));
    assert!(f.is_exhausted());
    assert_eq!(f.damaged_blocks().next().unwrap().host, "(line)");
}
