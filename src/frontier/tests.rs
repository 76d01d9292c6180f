use std::collections::HashMap;
use std::time::Duration;

use super::*;

fn frontier(dir: &Path, budget: usize, per_host: usize) -> Frontier {
    let mut c = FrontierConfig::new(dir);
    c.ram_budget_bytes = budget;
    c.per_host_ram_urls = per_host;
    c.segment_bytes = 4096;
    Frontier::new(c).unwrap()
}

fn url(host: usize, i: usize) -> QueuedUrl {
    QueuedUrl {
        url: format!("http://h{host}.test/p/{i}"),
        via: Some(format!("http://h{host}.test/")),
        hops: "L".into(),
        attempts: 0,
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

#[test]
fn per_host_order_is_fifo_across_ram_and_disk() {
    let dir = tempfile::tempdir().unwrap();
    let now = Instant::now();
    // A tiny budget forces most entries to disk.
    let mut f = frontier(dir.path(), 4096, 3);
    for i in 0..500 {
        for h in 0..5 {
            f.push(&format!("h{h}"), url(h, i), now).unwrap();
        }
    }
    let s = f.stats();
    assert!(s.disk_urls > 2000, "most URLs spilled: {s:?}");
    assert!(s.ram_bytes <= 4096 + 5 * HOST_OVERHEAD_BYTES as u64);
    let order = drain(&mut f, now);
    assert_eq!(order.len(), 2500, "nothing lost");
    let mut next: HashMap<String, usize> = HashMap::new();
    for (host, u) in order {
        let i: usize = u.rsplit('/').next().unwrap().parse().unwrap();
        let expected = next.entry(host.clone()).or_insert(0);
        assert_eq!(i, *expected, "host {host} out of order");
        *expected += 1;
    }
    assert!(f.is_exhausted());
    assert_eq!(f.stats().disk_urls, 0);
    // Consumed segments are deleted.
    let leftover = std::fs::read_dir(dir.path()).unwrap().count();
    assert!(leftover <= 1, "{leftover} segment files left");
}

#[test]
fn hosts_are_served_breadth_first() {
    let dir = tempfile::tempdir().unwrap();
    let now = Instant::now();
    let mut f = frontier(dir.path(), 1 << 20, 8);
    // One huge host queued first, then four small ones.
    for i in 0..8 {
        f.push("big", url(0, i), now).unwrap();
    }
    for h in 1..5 {
        f.push(&format!("h{h}"), url(h, 0), now).unwrap();
    }
    let delay = Duration::from_secs(1);
    let mut t = now;
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
    assert_eq!(f.next_wakeup(), Some(now + delay));
    t += delay;
    let (host, _) = f.take_ready(t).unwrap().unwrap();
    assert_eq!(host, "big");
}

#[test]
fn politeness_delay_is_never_shortened() {
    let dir = tempfile::tempdir().unwrap();
    let now = Instant::now();
    let mut f = frontier(dir.path(), 1 << 20, 8);
    f.push("a", url(0, 0), now).unwrap();
    f.push("a", url(0, 1), now).unwrap();
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
fn defer_postpones_a_ready_host() {
    let dir = tempfile::tempdir().unwrap();
    let now = Instant::now();
    let mut f = frontier(dir.path(), 1 << 20, 8);
    f.push("a", url(0, 0), now).unwrap();
    f.defer("a", now + Duration::from_secs(5));
    assert!(f
        .take_ready(now + Duration::from_secs(4))
        .unwrap()
        .is_none());
    assert!(f
        .take_ready(now + Duration::from_secs(5))
        .unwrap()
        .is_some());
}

#[test]
fn ram_stays_within_budget_while_the_frontier_grows() {
    let dir = tempfile::tempdir().unwrap();
    let now = Instant::now();
    let budget = 64 * 1024;
    let mut f = frontier(dir.path(), budget, 4);
    let mut peak = 0;
    for i in 0..20_000 {
        f.push(&format!("h{}", i % 3000), url(i % 3000, i), now)
            .unwrap();
        peak = peak.max(f.stats().ram_bytes);
    }
    assert!(
        peak <= budget as u64 * 5 / 4,
        "peak {peak} over budget {budget}"
    );
    let s = f.stats();
    assert_eq!(s.ram_urls + s.disk_urls, 20_000);
    assert!(
        s.disk_bytes_per_url() > 0.0 && s.disk_bytes_per_url() < 100.0,
        "{s:?}"
    );
    // Every URL comes back exactly once.
    let order = drain(&mut f, now);
    assert_eq!(order.len(), 20_000);
    let mut urls: Vec<_> = order.into_iter().map(|(_, u)| u).collect();
    urls.sort();
    urls.dedup();
    assert_eq!(urls.len(), 20_000);
}

#[test]
fn for_each_queued_lists_every_url_in_both_tiers() {
    let dir = tempfile::tempdir().unwrap();
    let now = Instant::now();
    let mut f = frontier(dir.path(), 2048, 2);
    for i in 0..300 {
        f.push(&format!("h{}", i % 7), url(i % 7, i), now).unwrap();
    }
    let mut seen = Vec::new();
    f.for_each_queued(|_, item| seen.push(item.url.clone()))
        .unwrap();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 300);
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
    let dir = tempfile::tempdir().unwrap();
    let now = Instant::now();
    let mut f = frontier(dir.path(), 1 << 20, 8);
    for i in 0..3 {
        f.push("h0", url(0, i), now).unwrap();
    }
    f.push("h1", url(1, 0), now).unwrap();
    let rules = HashMap::from([("h0", "hold")]);
    // h0 is held (its URLs stay), h1 is served.
    let (host, _, ()) = f.take_ready_with(now, gate_for(&rules)).unwrap().unwrap();
    assert_eq!(host, "h1");
    assert!(f.is_held("h0"));
    assert_eq!(f.stats().ram_urls, 3);
    f.complete("h1", now);
    // Held: not served even to a gate that would take it, and not a wake-up.
    assert!(f.take_ready(now).unwrap().is_none());
    assert_eq!(f.next_wakeup(), None);
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
    let dir = tempfile::tempdir().unwrap();
    let now = Instant::now();
    let later = now + Duration::from_secs(60);
    let mut f = frontier(dir.path(), 1 << 20, 8);
    f.push("h0", url(0, 0), now).unwrap();
    // Deferred to `later`: nothing now, the wake-up says when.
    assert!(f
        .take_ready_with(now, |_, _| Gate::<()>::Defer(later))
        .unwrap()
        .is_none());
    assert_eq!(f.next_wakeup(), Some(later));
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
