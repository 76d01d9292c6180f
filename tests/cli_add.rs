//! `trawl add`: the batch appears atomically in `OUT/add/` and the crawl-side reader
//! gets exactly the URLs given; bad input is refused with nothing written.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::process::{Command, Stdio};

use trawl::add::{DropDir, ADD_DIR};

fn trawl() -> Command {
    Command::new(env!("CARGO_BIN_EXE_trawl"))
}

/// An output directory as a crawl leaves it from its start (`start.json`).
fn crawl_dir() -> tempfile::TempDir {
    let out = tempfile::tempdir().unwrap();
    std::fs::write(out.path().join("start.json"), "{}").unwrap();
    out
}

#[test]
fn add_urls_and_a_file_then_the_crawl_side_reads_them() {
    let out = crawl_dir();
    let o = trawl()
        .args(["add", "--out"])
        .arg(out.path())
        .args([
            "http://h000001.synth.test:8080/p/1",
            "https://b.example/x?y=1",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let line: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(line["added"], 2);

    let mut child = trawl()
        .args(["add", "--out"])
        .arg(out.path())
        .args(["--file", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"# from stdin\nhttp://a.example/1\n\nhttp://a.example/2\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());

    let mut dd = DropDir::open(out.path(), 0).unwrap();
    let (batches, errors) = dd.poll().unwrap();
    assert!(errors.is_empty());
    let all: Vec<&str> = batches
        .iter()
        .flat_map(|b| b.urls.iter().map(String::as_str))
        .collect();
    assert_eq!(
        all,
        [
            "http://h000001.synth.test:8080/p/1",
            "https://b.example/x?y=1",
            "http://a.example/1",
            "http://a.example/2"
        ]
    );
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(out.path().join(ADD_DIR))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 2);
    assert!(names.iter().all(|n| n.ends_with(".urls")), "{names:?}");
}

#[test]
fn bad_urls_and_missing_directories_are_refused_with_nothing_written() {
    let out = crawl_dir();
    let o = trawl()
        .args(["add", "--out"])
        .arg(out.path())
        .args(["http://ok.example/", "/relative", "ftp://x.example/"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("2 line(s) are not absolute http(s) URLs"),
        "{err}"
    );
    assert!(err.contains("line 2: not an absolute URL"), "{err}");
    assert!(!out.path().join(ADD_DIR).exists());

    let o = trawl()
        .args(["add", "--out"])
        .arg(out.path().join("missing"))
        .arg("http://ok.example/")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not a crawl output directory"));

    // An existing directory that is not a crawl's.
    let other = tempfile::tempdir().unwrap();
    let o = trawl()
        .args(["add", "--out"])
        .arg(other.path())
        .arg("http://ok.example/")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no start.json"));
    assert!(!other.path().join(ADD_DIR).exists());
}
