//! A farm that loses a node or Redis mid-crawl, or a read's reply, and still crawls
//! everything once.

use std::process::Command;
use std::time::Duration;

use trawl::routing::{partition_key, PartitionBy, Partitions};

use crate::checks::{assert_referee_passes, check_nodes, min_page_gap, referee};
use crate::crawl_support::{crash_seed, stats_json};
use crate::nodes::{farm_setup, now_us, spawn_node, wait_all};
use crate::redis::{cli, redis_available, Redis};
use crate::NODES;

/// One node is killed with SIGKILL at a random moment and resumed 5 s later from a
/// copy of its output directory with `--out COPY --resume` alone (the farm flags come
/// back from the start file); the other nodes keep fetching meanwhile.
#[test]
fn a_node_killed_and_resumed_loses_nothing() {
    let what = "farm kill -9";
    if !redis_available(what) {
        return;
    }
    let seed = crash_seed(what);
    let mut rng = fastrand::Rng::with_seed(seed);
    let tmp = tempfile::tempdir().unwrap();
    let redis = Redis::standalone(tmp.path(), false);
    let url = redis.url();
    let mut f = farm_setup();
    // A politeness delay stretches the crawl so the kill lands mid-crawl and the other
    // nodes still have work while the victim is down.
    let delay_ms = 100;
    let victim = 1usize;
    let mut children = f.spawn_nodes(&url, delay_ms, &["--checkpoint-secs", "1"]);
    let kill_after = Duration::from_millis(rng.u64(1500..=4000));
    std::thread::sleep(kill_after);
    assert!(
        children[victim].try_wait().unwrap().is_none(),
        "the victim finished before the kill: the world is too small"
    );
    children[victim].kill().unwrap(); // SIGKILL
    children[victim].wait().unwrap();
    let killed_at = now_us();
    std::thread::sleep(Duration::from_secs(5));
    let resumed_at = now_us();
    // Resume from a copy of its output directory elsewhere (as on another machine),
    // the original gone, with the directory alone: seeds and flags (farm ones
    // included) come back from the start file.
    let moved = f.outs[victim].with_file_name("node1-moved");
    let cp = Command::new("cp")
        .arg("-a")
        .arg(&f.outs[victim])
        .arg(&moved)
        .status()
        .unwrap();
    assert!(cp.success());
    std::fs::remove_dir_all(&f.outs[victim]).unwrap();
    f.outs[victim] = moved;
    let resume_args = vec![
        "crawl".to_owned(),
        "--out".to_owned(),
        f.outs[victim].display().to_string(),
    ];
    children[victim] = spawn_node(&f.sw, &resume_args, &f.logs[victim], true);
    wait_all(&mut children, Duration::from_secs(180), &f.logs, &url);
    f.sw.stop();

    let table = Partitions::new(1024, NODES, PartitionBy::Host).unwrap();
    let owner =
        |host: &str| table.owner(table.partition_of(partition_key(&format!("http://{host}"))));
    // The other nodes fetched pages while the victim was down.
    let req_log = std::fs::read_to_string(f.sw.path("req.log")).unwrap();
    let mut during = 0;
    let mut victim_recent = 0u64;
    for line in req_log.lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        let host = r["host"].as_str().unwrap();
        let t = r["t_us"].as_u64().unwrap();
        if t > killed_at && t < resumed_at && owner(host) as usize != victim {
            during += 1;
        }
        // The victim's requests in the last 2.5 s before the kill: with a checkpoint
        // every second, what a resume may redo lies in this window.
        if t <= killed_at && t + 2_500_000 > killed_at && owner(host) as usize == victim {
            victim_recent += 1;
        }
    }
    assert!(
        during > 0,
        "{what}: no fetch by the other nodes while node {victim} was down"
    );

    // The referee: everything but repeats must pass; repeats (the work the victim
    // redoes from its last checkpoint) are only on the victim's hosts and reported.
    let r = referee(&f.sw, delay_ms);
    let dup_count = r["duplicates"]["count"].as_u64().unwrap();
    for v in r["violations"].as_array().unwrap() {
        let v = v.as_str().unwrap_or_default();
        assert!(
            v == "duplicate",
            "{what}: referee violation other than a repeat: {v}\n{}",
            serde_json::to_string_pretty(&r).unwrap()
        );
    }
    let (gap, gap_host) = min_page_gap(&f.sw);
    assert_eq!(r["missed"]["count"], 0, "{what}: {r}");
    assert_eq!(r["forbidden_fetched"]["count"], 0, "{what}: {r}");
    assert_eq!(r["robots_not_first"]["count"], 0, "{what}: {r}");
    assert_eq!(r["over_connection_limit"]["count"], 0, "{what}: {r}");
    // The repeats the referee names are all on the victim's hosts.
    for ex in r["duplicates"]["examples"].as_array().unwrap() {
        let text = ex.to_string();
        let host = text
            .split("://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_default()
            .to_owned();
        if !host.is_empty() {
            assert_eq!(
                owner(&host) as usize,
                victim,
                "{what}: repeat on another node's host: {text}"
            );
        }
    }
    // Re-fetches are bounded by what the victim did since its last checkpoint.
    assert!(
        dup_count <= victim_recent,
        "{what}: {dup_count} re-fetches, more than the victim's {victim_recent} requests \
         of its last 2.5 s"
    );
    let s = stats_json(&f.outs[victim]);
    assert!(s["resumed_from"].as_u64().is_some(), "{what}: {s}");
    eprintln!(
        "{what}: killed after {:.1} s, down 5 s; {during} fetches by the others meanwhile; \
         referee: {} requests, {} duplicates (re-fetches after the kill; the victim made \
         {victim_recent} requests in its last 2.5 s), smallest page gap \
         {gap} us on {gap_host}, {} M URLs of {}",
        kill_after.as_secs_f64(),
        r["requests"],
        dup_count,
        r["must_fetched"],
        r["must"]
    );
    check_nodes(&f.outs, what, 0);
    drop(redis);
}

/// Redis is stopped for 10 s in the middle of the crawl (with AOF on, so its streams
/// survive the restart): the nodes keep crawling, hold their links, and the crawl
/// completes with the referee passing.
#[test]
fn redis_stopped_for_10_s_mid_crawl_loses_nothing() {
    let what = "farm redis outage";
    if !redis_available(what) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut redis = Redis::standalone(tmp.path(), true);
    let url = redis.url();
    let mut f = farm_setup();
    let delay_ms = 100;
    let mut children = f.spawn_nodes(&url, delay_ms, &["--farm-redis-timeout-secs", "60"]);
    std::thread::sleep(Duration::from_secs(2));
    for (i, c) in children.iter_mut().enumerate() {
        assert!(
            c.try_wait().unwrap().is_none(),
            "node {i} ended before the outage"
        );
    }
    redis.stop_first();
    let stopped_at = now_us();
    std::thread::sleep(Duration::from_secs(10));
    let restarted_at = now_us();
    redis.restart_first();
    wait_all(&mut children, Duration::from_secs(180), &f.logs, &url);
    f.sw.stop();
    let req_log = std::fs::read_to_string(f.sw.path("req.log")).unwrap();
    let during = req_log
        .lines()
        .filter(|l| {
            let r: serde_json::Value = serde_json::from_str(l).unwrap();
            let t = r["t_us"].as_u64().unwrap();
            t > stopped_at && t < restarted_at
        })
        .count();
    eprintln!("{what}: {during} fetches while Redis was down");
    assert_referee_passes(&f.sw, delay_ms, what);
    let sums = check_nodes(&f.outs, what, 0);
    eprintln!("{what}: {sums:?}");
    let errors: u64 = f
        .outs
        .iter()
        .map(|o| stats_json(o)["farm"]["redis_errors"].as_u64().unwrap())
        .sum();
    assert!(errors > 0, "{what}: the nodes never saw Redis down");
}

/// A reply lost in an outage: Redis carried out an `XREADGROUP` for node 0 whose reply
/// never reached it (played here by another client reading node 0's partition as node
/// 0, then every client's connection cut). Node 0 must read its pending entries again
/// on reconnecting; otherwise they stay in the stream, their links are never crawled and
/// the farm never ends (what CI once saw after the 10 s Redis stop).
#[test]
fn entries_whose_reply_was_lost_are_read_again() {
    let what = "farm lost reply";
    if !redis_available(what) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let redis = Redis::standalone(tmp.path(), false);
    let url = redis.url();
    let port = redis.ports[0];
    let mut f = farm_setup();
    let delay_ms = 100;
    let mut children = f.spawn_nodes(&url, delay_ms, &[]);
    std::thread::sleep(Duration::from_secs(2));
    for (i, c) in children.iter_mut().enumerate() {
        assert!(c.try_wait().unwrap().is_none(), "node {i} ended too soon");
    }
    let table = Partitions::new(1024, NODES, PartitionBy::Host).unwrap();
    let p = table.owned_by(0)[0];
    let key = format!("{{trawl:p{p}}}:links");
    // One entry of a field the nodes do not know (a bad entry to them), then every
    // undelivered entry of the stream read into node 0's pending list behind its back.
    cli(port, &["XADD", &key, "*", "x", "lost"]);
    let stolen = cli(
        port,
        &[
            "XREADGROUP",
            "GROUP",
            "owner",
            "node-0",
            "COUNT",
            "100000",
            "STREAMS",
            &key,
            ">",
        ],
    );
    assert!(stolen.contains("lost"), "{what}: nothing read: {stolen}");
    cli(port, &["CLIENT", "KILL", "TYPE", "normal"]);
    wait_all(&mut children, Duration::from_secs(120), &f.logs, &url);
    f.sw.stop();
    assert_referee_passes(&f.sw, delay_ms, what);
    check_nodes(&f.outs, what, 1);
    assert_eq!(
        cli(port, &["XLEN", &key]).trim(),
        "0",
        "{what}: entries left"
    );
    drop(redis);
}
