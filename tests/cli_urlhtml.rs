//! `trawl url canon` and `trawl links`, run as the real binary.

use std::io::Write;
use std::process::{Command, Stdio};

fn run(args: &[&str], stdin: &str) -> (String, bool) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_trawl"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn trawl");
    // The child may exit before reading everything (usage errors): ignore EPIPE.
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes());
    let out = child.wait_with_output().expect("wait");
    (
        String::from_utf8(out.stdout).expect("utf-8 output"),
        out.status.success(),
    )
}

#[test]
fn url_canon_tsv() {
    let (out, ok) = run(
        &["url", "canon"],
        "http://a/b/c/d;p?q\t../g#s\nhttp://a/\tmailto:x@y\nHTTP://Example.COM:80/%7euser\nhttp://a/\t///other.example/x\nnot a url\n",
    );
    assert!(ok);
    assert_eq!(
        out,
        "http://a/b/g\nerror: unsupported_scheme\nhttp://example.com/~user\nhttp://other.example/x\nerror: invalid_url\n"
    );
}

#[test]
fn url_canon_jsonl() {
    let (out, ok) = run(
        &["url", "canon", "--jsonl"],
        "{\"id\":1,\"base\":\"http://a/b\",\"href\":\"c?x=%7e#f\"}\n\
         {\"id\":\"two\",\"base\":\"http://a/\",\"href\":\"javascript:x\"}\n\
         {\"id\":3,\"base\":\"http://a/\",\"href\":\"http://[::1\"}\n",
    );
    assert!(ok);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(
        lines,
        [
            serde_json::json!({"id": 1, "canonical": "http://a/c?x=~", "error": null}),
            serde_json::json!({"id": "two", "canonical": null, "error": "unsupported_scheme"}),
            serde_json::json!({"id": 3, "canonical": null, "error": "invalid_url"}),
        ]
    );
    assert!(
        out.starts_with("{\"id\":1,\"canonical\""),
        "documented field order"
    );
}

#[test]
fn links_text() {
    let (out, ok) = run(
        &["links", "--base", "http://h/dir/p.html"],
        "<a href=x>1</a><!-- <a href=no> --><base href='/b/'><A HREF='y?a=1&amp;b=2#f'>\
         <script>'<a href=s>'</script><link rel=nofollow href=z.css><img src=i.png>",
    );
    assert!(ok);
    assert_eq!(
        out,
        "http://h/dir/x\nhttp://h/b/y?a=1&b=2\nhttp://h/b/z.css\n"
    );
    let (out, _) = run(
        &["links", "--base", "http://h/", "--images", "--long"],
        "<img src=i.png><a rel=nofollow href=mailto:x>",
    );
    assert_eq!(
        out,
        "img\tsrc\tfollow\thttp://h/i.png\na\thref\tnofollow\terror: unsupported_scheme\n"
    );
}

#[test]
fn links_jsonl() {
    let input = [
        serde_json::json!({"id": 1, "base": "http://h/a/", "html": "<a href=x><base href=http://cdn.example/><a href=/y><meta name=ROBOTS content='noindex, nofollow'>"}),
        serde_json::json!({"id": "p2", "base": "https://s.example/", "html": "<meta http-equiv=refresh content='0; url=/next'><area href=map>"}),
    ]
    .map(|v| v.to_string())
    .join("\n");
    let (out, ok) = run(&["links", "--jsonl"], &input);
    assert!(ok);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(
        lines,
        [
            serde_json::json!({"id": 1, "links": ["http://h/a/x", "http://cdn.example/y"],
                "base": "http://cdn.example/", "robots": {"index": false, "follow": false}}),
            serde_json::json!({"id": "p2", "links": ["https://s.example/next", "https://s.example/map"],
                "base": "https://s.example/", "robots": {"index": true, "follow": true}}),
        ]
    );
}

#[test]
fn links_requires_base_without_jsonl() {
    let (_, ok) = run(&["links"], "<a href=x>");
    assert!(!ok);
}

/// Runs trawl on `stdin`: stdout, stderr, exit code.
fn run_all(args: &[&str], stdin: &str) -> (String, String, Option<i32>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_trawl"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn trawl");
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes());
    let out = child.wait_with_output().expect("wait");
    (
        String::from_utf8(out.stdout).expect("utf-8 output"),
        String::from_utf8(out.stderr).expect("utf-8 stderr"),
        out.status.code(),
    )
}

#[test]
fn links_says_when_a_cap_dropped_links() {
    // An `href` over the 128 KiB attribute cap is dropped, and said so on stderr;
    // the other links print and the exit code stays 0.
    let html = format!(
        "<a href=a>1</a><a href=\"/{}\">long</a><a href=b>2</a>",
        "x".repeat(140 * 1024)
    );
    let (out, err, code) = run_all(&["links", "--base", "http://h/"], &html);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "http://h/a\nhttp://h/b\n");
    assert_eq!(
        err.trim_end(),
        "trawl links: http://h/: links capped: long-attributes:1"
    );

    // With --jsonl the line names the object's id.
    let input = [
        serde_json::json!({"id": "capped", "base": "http://h/", "html": html}),
        serde_json::json!({"id": "fine", "base": "http://h/", "html": "<a href=c>"}),
    ]
    .map(|v| v.to_string())
    .join("\n");
    let (out, err, code) = run_all(&["links", "--jsonl"], &input);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.lines().count(), 2);
    assert_eq!(
        err.trim_end(),
        "trawl links: \"capped\": links capped: long-attributes:1"
    );

    // A page no cap touched prints nothing on stderr.
    let (_, err, code) = run_all(&["links", "--base", "http://h/"], "<a href=a>");
    assert_eq!(code, Some(0));
    assert!(err.is_empty(), "{err}");
}
