//! `trawl add` during a crawl (issue 14): URLs that no page links are handed to a
//! running crawl through `OUT/add/`; a kill -9 right after the add loses none of them
//! (the batch file stays until a checkpoint holds its URLs), a second add during the
//! resumed run is picked up live, an added URL outside the scope is refused like a
//! link, and every batch file is gone once the crawl has checkpointed them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod crawl_support;

use std::process::Command;
use std::time::Duration;

use crawl_support::{
    annotations, crawl_args, crawl_log, spawn_trawl, trawl_bin, wait_exit, ADD_WORLD,
};

fn add(out: &std::path::Path, urls: &[String]) {
    let o = Command::new(trawl_bin())
        .args(["add", "--out"])
        .arg(out)
        .args(urls)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "trawl add: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn added_urls_are_fetched_and_survive_a_kill_9() {
    let tmp = tempfile::tempdir().unwrap();
    let sw = ADD_WORLD.start_with(&tmp.path().join("web"), &[], false);
    let out = tmp.path().join("crawl");
    let mut args = crawl_args(&out, 1000, 150);
    args.extend(
        ["--checkpoint-secs", "1", "--scope", "seed-hosts"]
            .iter()
            .map(|s| (*s).to_owned()),
    );
    let url = |host: u32, path: &str| format!("http://h{host:06}.synth.test:{}{path}", sw.port);
    // Pages only "linked" from comments and scripts: no crawl finds them by itself.
    let first: Vec<String> = (0..3)
        .map(|k| url(1, &format!("/hidden/comment/{k}")))
        .chain(["http://outside.example/x".to_owned()])
        .collect();
    let second: Vec<String> = (0..3)
        .map(|k| url(2, &format!("/hidden/script/{k}")))
        .collect();

    let mut child = spawn_trawl(&sw, &args);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the crawl ended too soon"
    );
    add(&out, &first);
    child.kill().unwrap(); // SIGKILL right after the add
    child.wait().unwrap();

    let mut child = spawn_trawl(&sw, &[&args[..], &["--resume".to_owned()]].concat());
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the resumed crawl ended too soon"
    );
    add(&out, &second);
    let status = wait_exit(&mut child, Duration::from_secs(120), "the resumed crawl");
    assert!(status.success(), "resumed crawl failed: {status}");

    let log = crawl_log(&out);
    for u in first.iter().take(3).chain(&second) {
        assert!(
            log.iter()
                .any(|r| r["url"].as_str() == Some(u.as_str()) && r["status"] == 200),
            "added URL {u} was not fetched"
        );
    }
    let outside: Vec<_> = log
        .iter()
        .filter(|r| r["url"].as_str() == Some("http://outside.example/x"))
        .collect();
    assert_eq!(outside.len(), 1, "{outside:?}");
    assert!(outside[0]["status"].is_null());
    assert!(
        annotations(outside[0]).contains(&"added".to_owned()),
        "{:?}",
        outside[0]
    );
    let left: Vec<_> = std::fs::read_dir(out.join("add"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        left.is_empty(),
        "batch files left after the final checkpoint: {left:?}"
    );
}
