//! `trawl robots` end to end: spawns the built binary.

use std::io::Write;
use std::process::{Command, Stdio};

fn trawl() -> Command {
    Command::new(env!("CARGO_BIN_EXE_trawl"))
}

fn robots_file(text: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().expect("temp file");
    f.write_all(text.as_bytes()).expect("write");
    f
}

#[test]
fn urls_on_the_command_line() {
    let f = robots_file("User-agent: *\nDisallow: /private\nAllow: /private/ok\n\nUser-agent: trawl\nDisallow: /trawl-only\n");
    let out = trawl()
        .args(["robots", "--agent", "OtherBot/1.0", "--robots"])
        .arg(f.path())
        .args([
            "http://example.com/private/x",
            "/private/ok/y",
            "/public",
            "/robots.txt",
        ])
        .output()
        .expect("run trawl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).expect("utf8");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "disallowed http://example.com/private/x (line 2: disallow: /private)",
            "allowed /private/ok/y (line 3: allow: /private/ok)",
            "allowed /public (no matching rule)",
            "allowed /robots.txt (/robots.txt is always allowed)",
        ]
    );

    let out = trawl()
        .args(["robots", "--agent", "trawl", "--robots"])
        .arg(f.path())
        .args(["/private/x", "/trawl-only"])
        .output()
        .expect("run trawl");
    let stdout = String::from_utf8(out.stdout).expect("utf8");
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        [
            "allowed /private/x (no matching rule)",
            "disallowed /trawl-only (line 6: disallow: /trawl-only)"
        ]
    );
}

#[test]
fn legacy_mode_flag() {
    let f = robots_file("User-agent: *\nDisallow: /a\nAllow: /a/b\nDisallow: /cgi-bin/ /tmp/\n");
    for (flag, want_ab) in [("rfc9309", "allowed"), ("draft1996", "disallowed")] {
        let out = trawl()
            .args(["robots", "--mode", flag, "--robots"])
            .arg(f.path())
            .args(["/a/b", "/tmp/x"])
            .output()
            .expect("run trawl");
        let stdout = String::from_utf8(out.stdout).expect("utf8");
        let first = stdout.lines().next().expect("a line");
        assert!(
            first.starts_with(&format!("{want_ab} /a/b")),
            "{flag}: {first}"
        );
        let second = stdout.lines().nth(1).expect("a line");
        let want_tmp = if flag == "draft1996" {
            "disallowed /tmp/x (line 4"
        } else {
            "allowed /tmp/x"
        };
        assert!(second.starts_with(want_tmp), "{flag}: {second}");
    }
    let out = trawl()
        .args(["robots", "--robots-mode", "draft1996", "--robots"])
        .arg(f.path())
        .arg("/a/b")
        .output()
        .expect("run trawl");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("disallowed"));
}

#[test]
fn jsonl_mode() {
    let input = concat!(
        r#"{"id":1,"robots":"User-agent: *\nDisallow: /a\n","agent":"trawl","url":"http://x.test/a/b"}"#,
        "\n",
        r#"{"id":"two","robots":"User-agent: *\nDisallow: /a\n","agent":"trawl","url":"/b"}"#,
        "\n",
        "\n",
        r#"{"id":3,"robots":"User-agent: trawl\nAllow: /a/b\nDisallow: /a\n","agent":"Trawl/2.0","url":"/a/b/c"}"#,
        "\n",
        r#"{"id":4,"robots":"User-agent: *\nDisallow: /\n","agent":"x","url":"/robots.txt"}"#,
        "\n",
    );
    let mut child = trawl()
        .args(["robots", "--jsonl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn trawl");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success());
    let answers: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .expect("utf8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(
        answers,
        [
            serde_json::json!({"id": 1, "allowed": false, "line": 2}),
            serde_json::json!({"id": "two", "allowed": true, "line": null}),
            serde_json::json!({"id": 3, "allowed": true, "line": 2}),
            serde_json::json!({"id": 4, "allowed": true, "line": null}),
        ]
    );
}

#[test]
fn jsonl_bad_line_is_reported_and_the_rest_answered() {
    let mut child = trawl()
        .args(["robots", "--jsonl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn trawl");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"not json\n{\"id\":9,\"robots\":\"\",\"agent\":\"a\",\"url\":\"/\"}\n")
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).expect("utf8");
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert!(lines[0]["error"].is_string());
    assert_eq!(
        lines[1],
        serde_json::json!({"id": 9, "allowed": true, "line": null})
    );
}

#[test]
fn missing_file_is_an_error() {
    let out = trawl()
        .args(["robots", "--robots", "/nonexistent/robots.txt", "/"])
        .output()
        .expect("run trawl");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot open robots.txt"));
}
