//! Three nodes crawl to the end and pass the referee: on standalone Redis (with bad
//! entries planted), on a three-master cluster, and with streams capped at one entry.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

use trawl::routing::{PartitionBy, Partitions};

use crate::checks::{assert_referee_passes, check_nodes, check_ownership};
use crate::crawl_support::trawl_bin;
use crate::nodes::{farm_setup, wait_all};
use crate::redis::{cli, redis_available, Redis};
use crate::NODES;

/// `bad_entries`: stream entries planted before the crawl that no node can read.
pub fn run_farm(redis_url: &str, what: &str, bad_entries: u64) {
    let _ = run_farm_with(redis_url, what, bad_entries, &[]);
}

pub fn run_farm_with(
    redis_url: &str,
    what: &str,
    bad_entries: u64,
    extra: &[&str],
) -> BTreeMap<&'static str, u64> {
    let mut f = farm_setup();
    let mut children = f.spawn_nodes(redis_url, 0, extra);
    let started = Instant::now();
    wait_all(&mut children, Duration::from_secs(120), &f.logs, redis_url);
    eprintln!(
        "{what}: 3 nodes finished in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    f.sw.stop();
    assert_referee_passes(&f.sw, 0, what);
    let sums = check_nodes(&f.outs, what, bad_entries);
    eprintln!("{what}: {sums:?}");
    check_ownership(&f.outs, what);

    // The farm summary agrees: quiet, every node done.
    let out = Command::new(trawl_bin())
        .args(["farm", "status", "--farm", redis_url])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["quiet"], true, "{status}");
    assert_eq!(status["stream_entries"], 0, "{status}");
    for n in status["nodes"].as_array().unwrap() {
        assert_eq!(n["state"]["done"], true, "{status}");
    }

    // The checkpoint keeps the farm settings: a resume as another node is refused.
    let out = Command::new(trawl_bin())
        .current_dir(&f.sw.dir)
        .args([
            "crawl",
            "--out",
            &f.outs[0].display().to_string(),
            "--resume",
        ])
        .args(["--farm-node", "1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "{what}: resume as another node ran: {err}"
    );
    assert!(err.contains("farm node 0 of 3"), "{what}: {err}");
    sums
}

#[test]
fn three_nodes_on_standalone_redis_pass_the_referee() {
    let what = "farm standalone";
    if !redis_available(what) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let redis = Redis::standalone(tmp.path(), false);
    // Garbage and an entry of a foreign format version in two partitions' streams, their
    // owners' doorbells rung: logged and skipped, never a crash.
    let table = Partitions::new(1024, NODES, PartitionBy::Host).unwrap();
    for (p, payload) in [
        (5u32, "not an entry at all"),
        (700, "TRWL\tfrom a future trawl"),
    ] {
        let key = format!("{{trawl:p{p}}}:links");
        assert!(!cli(redis.ports[0], &["XADD", &key, "*", "b", payload]).is_empty());
        let bell = format!("{{trawl:ctl}}:bell:{}", table.owner(p));
        cli(redis.ports[0], &["SADD", &bell, &p.to_string()]);
    }
    run_farm(&redis.url(), what, 2);
}

#[test]
fn three_nodes_on_a_three_master_cluster_pass_the_referee() {
    let what = "farm cluster";
    if !redis_available(what) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let redis = Redis::cluster(tmp.path());
    run_farm(&redis.url(), what, 0);
}

/// Streams capped at one entry and a RAM spill of one link: senders hold links back
/// until the owner has checkpointed and acknowledged what it read (back-pressure), and
/// the crawl still completes with the referee passing.
#[test]
fn tiny_stream_caps_hold_senders_back_and_lose_nothing() {
    let what = "farm back-pressure";
    if !redis_available(what) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let redis = Redis::standalone(tmp.path(), false);
    let sums = run_farm_with(
        &redis.url(),
        what,
        0,
        &[
            "--farm-stream-max-entries",
            "1",
            "--farm-spill-urls",
            "1",
            "--farm-ack-secs",
            "1",
        ],
    );
    assert!(
        sums["stream_full_waits"] > 0,
        "{what}: no sender was held back: {sums:?}"
    );
}
