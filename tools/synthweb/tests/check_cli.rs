//! `synthweb check` as a command: exit 0 on a clean log, 1 on a violation (with the
//! report on stdout, JSON with `--json`), 2 when it cannot judge.

#![allow(clippy::unwrap_used, reason = "test helpers panic on setup failure")]

use std::path::Path;
use std::process::{Command, Output};

use synthweb::formats::{self, LogLine, Manifest, ManifestHeader, Robots4xx, Scheme};

const HOST: &str = "h000000.synth.test:8080";

fn line(t_ms: u64, target: &str) -> LogLine {
    LogLine {
        t_us: t_ms * 1000,
        end_us: t_ms * 1000 + 500,
        conn: 1,
        local: "127.0.0.1:8080".parse().unwrap(),
        peer: "127.0.0.1:50000".parse().unwrap(),
        scheme: Scheme::Http,
        host: HOST.to_owned(),
        method: "GET".to_owned(),
        target: target.to_owned(),
        user_agent: Some("trawl/0.1".to_owned()),
        from: Some("ops@example.org".to_owned()),
        accept: None,
        accept_encoding: None,
        if_none_match: None,
        if_modified_since: None,
        referer: None,
        status: 200,
        body_bytes: 10,
    }
}

fn write_files(dir: &Path, targets: &[&str]) {
    let manifest = Manifest {
        header: ManifestHeader {
            seed: 1,
            hosts: 1,
            profile: "default".to_owned(),
            agent: "trawl".to_owned(),
            robots_4xx: Robots4xx::Allow,
            params: Default::default(),
        },
        must: [format!("http://{HOST}/"), format!("http://{HOST}/p/1")]
            .into_iter()
            .collect(),
        forbidden: [format!("http://{HOST}/private/1")].into_iter().collect(),
        sitemap_only: Default::default(),
    };
    let mut out = Vec::new();
    formats::write_manifest(&mut out, &manifest).unwrap();
    std::fs::write(dir.join("manifest.txt"), out).unwrap();
    let mut out = Vec::new();
    for (i, target) in targets.iter().enumerate() {
        formats::write_log_line(&mut out, &line(i as u64 * 100, target)).unwrap();
    }
    std::fs::write(dir.join("log.jsonl"), out).unwrap();
}

fn check(dir: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_synthweb"))
        .current_dir(dir)
        .args(["check", "--log", "log.jsonl", "--manifest", "manifest.txt"])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn clean_log_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &["/robots.txt", "/", "/p/1"]);
    let out = check(
        dir.path(),
        &["--delay-ms", "100", "--per-host-connections", "1"],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.starts_with("synthweb referee: PASS"), "{text}");
}

#[test]
fn violation_exits_one_with_a_report() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &["/robots.txt", "/", "/p/1", "/private/1"]);
    let out = check(dir.path(), &["--json"]);
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["passed"], false);
    assert_eq!(
        report["violations"],
        serde_json::json!(["forbidden_fetched"])
    );
    // A delay the crawl did not keep is a violation too.
    write_files(dir.path(), &["/robots.txt", "/", "/p/1"]);
    let out = check(dir.path(), &["--delay-ms", "500"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("VIOLATION hosts under the delay"));
}

#[test]
fn unusable_input_exits_two() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &["/robots.txt", "/", "/p/1"]);
    let out = check(dir.path(), &["--agent", "otherbot"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("manifest was computed for agent trawl"));
    std::fs::write(dir.path().join("log.jsonl"), "{not json}\n").unwrap();
    let out = check(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("line 1"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_file(dir.path().join("manifest.txt")).unwrap();
    assert_eq!(check(dir.path(), &[]).status.code(), Some(2));
}
