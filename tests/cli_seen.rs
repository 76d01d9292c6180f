//! `trawl plan` and `trawl bench seen`, run as a user would run them.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers; a failure is a test failure"
)]

use std::process::Command;

fn trawl(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_trawl"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn plan_prints_memory_and_disk() {
    let (ok, out, err) = trawl(&["plan", "--urls", "5e9", "--fp", "1e-3"]);
    assert!(ok, "{err}");
    for needle in [
        "presence bits",
        "content fingerprints",
        "frontier on disk",
        "WARC output",
        "RAM",
        "disk",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    // 5e9 URLs at 1e-3: 15.49 bits per URL, 9.02 GiB.
    assert!(out.contains("9.02 GiB"), "{out}");
    assert!(out.contains("15.49 bits/URL"), "{out}");
}

#[test]
fn plan_json_adds_up() {
    let (ok, out, err) = trawl(&[
        "plan",
        "--urls",
        "1e6",
        "--fp",
        "0.01",
        "--pages",
        "2e5",
        "--warc-bytes-per-page",
        "1000",
        "--frontier-bytes-per-url",
        "40",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["urls"], 1_000_000);
    assert_eq!(v["pages"], 200_000);
    assert_eq!(v["warc_disk_bytes"].as_f64().unwrap(), 2e8);
    assert_eq!(v["frontier_disk_bytes"].as_f64().unwrap(), 4e7);
    let bpu = v["presence_bits_per_url"].as_f64().unwrap();
    assert!((9.85..9.95).contains(&bpu), "{bpu}");
    assert!(v["presence_model_fp"].as_f64().unwrap() <= 0.01);
    assert!(v["lossless_bits_per_url"].as_f64().unwrap() > 20.0);
}

#[test]
fn plan_rejects_bad_input() {
    for args in [
        &["plan", "--urls", "abc"][..],
        &["plan", "--urls", "0"],
        &["plan", "--urls", "1e9", "--fp", "2"],
        &["plan", "--urls", "1.5"],
    ] {
        let (ok, _, err) = trawl(args);
        assert!(!ok, "{args:?} accepted");
        assert!(!err.is_empty());
    }
}

#[test]
fn bench_seen_prints_one_json_object() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, out, err) = trawl(&[
        "bench",
        "seen",
        "--capacity",
        "20000",
        "--fp",
        "0.01",
        "--ops",
        "20000",
        "--threads",
        "2",
        "--batch",
        "16",
        "--snapshot",
        "--dir",
        dir.path().to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    for field in [
        "capacity",
        "bits_per_key",
        "theoretical_fp",
        "measured_fp",
        "insert_ns_per_op",
        "probe_ns_per_op",
        "threads",
        "file_bytes",
        "expected_lost",
        "observed_lost",
        "snapshot_ms",
        "reopen_ms",
    ] {
        assert!(!v[field].is_null(), "missing {field} in {v}");
    }
    assert_eq!(v["capacity"], 20_000);
    assert_eq!(v["threads"], 2);
    let file_bytes = v["file_bytes"].as_f64().unwrap();
    assert_eq!(
        v["bits_per_key"].as_f64().unwrap(),
        file_bytes * 8.0 / 20_000.0
    );
    let measured = v["measured_fp"].as_f64().unwrap();
    assert!(measured > 0.003 && measured < 0.02, "{measured}");
    // The bench cleans up after itself.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn bench_seen_single_key_path_works() {
    let (ok, out, err) = trawl(&[
        "bench",
        "seen",
        "--capacity",
        "5000",
        "--ops",
        "5000",
        "--batch",
        "1",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["batch"], 1);
    assert_eq!(v["threads"], 1);
}

/// `trawl plan | head -1`: the reader goes away before trawl has written everything. The
/// binary restores SIGPIPE's default action, so it ends quietly instead of panicking on
/// EPIPE (`docs/safety.md`).
#[test]
fn plan_into_a_closed_pipe_does_not_panic() {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_trawl"))
        .args(["plan", "--urls", "1e7"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the read end at once, as `head` does once it has its line.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
}
