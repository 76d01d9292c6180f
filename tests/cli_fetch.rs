//! `trawl fetch` end to end: JSON lines, --resolve, --hosts-file, --urls, --out, exit 0.

mod support;

use std::process::Command;

use support::{read_head, send, ScriptServer};

fn server() -> ScriptServer {
    ScriptServer::start(|mut s, _| {
        while let Some(head) = read_head(&mut s) {
            let text = String::from_utf8_lossy(&head);
            let target = text.split(' ').nth(1).unwrap_or("/").to_owned();
            let resp = if target == "/missing" {
                "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_owned()
            } else {
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{target}",
                    target.len()
                )
            };
            if !send(&mut s, resp.as_bytes()) {
                return;
            }
        }
    })
}

fn lines(stdout: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

#[test]
fn prints_one_json_line_per_url_and_exits_zero() {
    let server = server();
    let port = server.addr.port();
    let dir = tempfile::tempdir().expect("tempdir");
    let hosts = dir.path().join("hosts");
    std::fs::write(&hosts, format!("h1.synth.test 127.0.0.1 {port}\n")).expect("hosts");
    let urls = dir.path().join("urls");
    std::fs::write(
        &urls,
        format!(
            "# comment\nhttp://h1.synth.test:{port}/from-file\n\nhttp://127.0.0.1:{port}/missing\n"
        ),
    )
    .expect("urls");
    let out_dir = dir.path().join("bodies");
    let output = Command::new(env!("CARGO_BIN_EXE_trawl"))
        .args(["fetch", "--concurrency", "2", "--timeout-ms", "3000"])
        .arg("--hosts-file")
        .arg(&hosts)
        .arg("--urls")
        .arg(&urls)
        .arg("--out")
        .arg(&out_dir)
        .args(["--resolve", &format!("r.synth.test:{port}:127.0.0.1")])
        .arg(format!("http://r.synth.test:{port}/resolved"))
        .arg("ftp://example.org/")
        .output()
        .expect("run trawl");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut got = lines(&output.stdout);
    assert_eq!(got.len(), 4, "{got:?}");
    got.sort_by_key(|v| v["url"].as_str().unwrap_or_default().to_owned());
    let by_url = |suffix: &str| {
        got.iter()
            .find(|v| v["url"].as_str().unwrap_or_default().ends_with(suffix))
            .unwrap_or_else(|| panic!("no line for {suffix}: {got:?}"))
    };
    let ok = by_url("/resolved");
    assert_eq!(ok["status"], 200);
    assert_eq!(ok["outcome"], "ok");
    assert_eq!(ok["decoded_bytes"], 9);
    assert!(ok["error"].is_null());
    assert!(ok["ms"].is_u64() && ok["bytes"].as_u64().unwrap_or(0) > 9);
    assert_eq!(by_url("/from-file")["status"], 200);
    let missing = by_url("/missing");
    assert_eq!(
        (missing["status"].as_u64(), missing["outcome"].as_str()),
        (Some(404), Some("ok"))
    );
    let bad = by_url("ftp://example.org/");
    assert_eq!(bad["outcome"], "invalid_url");
    assert!(bad["status"].is_null() && bad["error"].is_string());
    // Bodies land in DIR/<index>.body: index 0 is the first positional URL.
    assert_eq!(
        std::fs::read(out_dir.join("000000.body")).expect("body"),
        b"/resolved"
    );
}

#[test]
fn network_failures_are_lines_not_errors() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let output = Command::new(env!("CARGO_BIN_EXE_trawl"))
        .args(["fetch", "--timeout-ms", "2000"])
        .arg(format!("http://127.0.0.1:{port}/"))
        .output()
        .expect("run trawl");
    assert!(output.status.success());
    let got = lines(&output.stdout);
    assert_eq!(got[0]["outcome"], "refused");
    assert_eq!(got[0]["error"], "connection refused");
}

#[test]
fn bad_flags_exit_non_zero() {
    let output = Command::new(env!("CARGO_BIN_EXE_trawl"))
        .args(["fetch", "--resolve", "nonsense", "http://x/"])
        .output()
        .expect("run trawl");
    assert_eq!(output.status.code(), Some(2));
}
