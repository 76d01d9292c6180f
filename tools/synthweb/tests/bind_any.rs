//! `--bind-any` listens on 0.0.0.0 only where that means loopback alone: in a network
//! namespace whose only interface is `lo`. Elsewhere it is refused before any socket
//! is bound. (Which case applies depends on where the test runs; both are checked.)
#![allow(clippy::unwrap_used, reason = "tests")]

use std::process::Command;

#[test]
fn bind_any_is_refused_unless_loopback_is_the_only_interface() {
    let dev = std::fs::read_to_string("/proc/self/net/dev").unwrap();
    let isolated = dev
        .lines()
        .filter_map(|l| l.split_once(':').map(|(n, _)| n.trim().to_owned()))
        .all(|n| n == "lo");
    let out = Command::new(env!("CARGO_BIN_EXE_synthweb"))
        .args([
            "--hosts",
            "10",
            "--bind-any",
            "--port",
            "0",
            "--max-secs",
            "1",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if isolated {
        assert!(out.status.success(), "{stderr}");
        let ready: serde_json::Value =
            serde_json::from_slice(out.stdout.split(|b| *b == b'\n').next().unwrap()).unwrap();
        assert_eq!(ready["bind_first"], "0.0.0.0");
    } else {
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("refusing to bind 0.0.0.0"), "{stderr}");
        assert!(out.stdout.is_empty(), "no ready line");
    }
    // Spread addressing needs --bind-any.
    let out = Command::new(env!("CARGO_BIN_EXE_synthweb"))
        .args([
            "--hosts",
            "10",
            "--hosts-per-address",
            "2",
            "--max-secs",
            "1",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
}
