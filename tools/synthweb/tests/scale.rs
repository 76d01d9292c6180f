//! Scale and limits: a 1,000,000-host web starts small; non-loopback binds are refused.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failure is a test failure"
)]

mod common;

use std::process::Command;
use std::time::Duration;

use common::{exchange, get, parse, Server};

fn rss_kb(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap()
}

#[test]
fn a_million_hosts_start_with_small_rss() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts.txt");
    let srv = Server::start(&[
        "--hosts",
        "1000000",
        "--profile",
        "all",
        "--hosts-file",
        hosts.to_str().unwrap(),
    ]);
    let ready_rss = srv.ready["vm_rss_kb"].as_u64().unwrap();
    assert!(ready_rss < 200 * 1024, "RSS at start {ready_rss} KiB");
    let port = srv.http_port;
    for h in [
        "h999999.synth.test",
        "h000000.synth.test",
        "h500000.synth.test",
    ] {
        let raw = exchange(
            port,
            &get(h, port, "/", ""),
            Duration::from_secs(10),
            1 << 20,
        );
        assert_eq!(parse(&raw.bytes).status, 200, "{h}");
    }
    let rss = rss_kb(srv.child.id());
    assert!(rss < 200 * 1024, "RSS after requests {rss} KiB");
    let text = std::fs::read_to_string(&hosts).unwrap();
    assert_eq!(text.lines().count(), 1_000_000);
    assert_eq!(
        text.lines().last().unwrap(),
        format!("h999999.synth.test 127.0.0.1 {port}")
    );
}

#[test]
fn refuses_non_loopback_binds() {
    for bad in ["10.0.0.1", "0.0.0.0", "192.168.1.0/24", "0.0.0.0/0"] {
        let out = Command::new(env!("CARGO_BIN_EXE_synthweb"))
            .args(["--bind-range", bad, "--max-secs", "1"])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{bad} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("loopback"), "{bad}: {err}");
        assert!(out.stdout.is_empty(), "{bad}: no ready line");
    }
}
