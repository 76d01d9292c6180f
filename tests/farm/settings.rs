//! Settings every node must share: a node whose proxy routes differ from the farm's
//! stops at once with a message naming them (issue 29), as one with other partitions
//! does.

use std::time::{Duration, Instant};

use crate::nodes::{farm_setup, node_args, spawn_node, tails};
use crate::redis::{redis_available, Redis};

#[test]
fn a_node_with_other_proxy_routes_stops() {
    let what = "farm routes must agree";
    if !redis_available(what) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let redis = Redis::standalone(tmp.path(), false);
    let url = redis.url();
    let f = farm_setup();
    // Node 0 goes direct and records the farm's settings first.
    let args0 = node_args(&f.outs[0], &url, 0, 200, &[]);
    let mut first = spawn_node(&f.sw, &args0, &f.logs[0], false);
    std::thread::sleep(Duration::from_millis(1500));
    // Node 1 would send everything through a proxy (never reached: it stops first).
    let args1 = node_args(
        &f.outs[1],
        &url,
        1,
        200,
        &["--proxy", "http://127.0.0.1:9", "--no-proxy-env"],
    );
    let mut second = spawn_node(&f.sw, &args1, &f.logs[1], false);
    let end = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = second.try_wait().unwrap() {
            break Some(s);
        }
        if Instant::now() > end {
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = first.kill();
    let _ = first.wait();
    let logs = tails(&f.logs[..2]);
    let Some(status) = status else {
        let _ = second.kill();
        panic!("node 1 did not stop:\n{logs}");
    };
    assert!(!status.success(), "node 1 must fail:\n{logs}");
    let log1 = std::fs::read_to_string(&f.logs[1]).unwrap();
    assert!(
        log1.contains("farm settings differ") && log1.contains("proxy routes"),
        "{logs}"
    );
}
