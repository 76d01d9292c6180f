//! A re-crawl killed and resumed, and one whose previous index is damaged.

use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::crawl_support::{stats_json, trawl_bin, warcio_check_dir};
use crate::web::{crawl_args, first_crawl, has, page_lines, run, start_web};

#[test]
fn a_recrawl_killed_with_sigkill_resumes_and_loses_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let web_dir = tmp.path().join("web");
    let (first, second) = (tmp.path().join("c1"), tmp.path().join("c2"));
    let (port, _) = first_crawl(&web_dir, &first);
    let prev = trawl::recrawl::read_latest(&first.join("recrawl.idx"))
        .unwrap()
        .0;

    let mut web = start_web(&web_dir, port, &[]);
    // 40 ms between requests to a host: about 3.5 s for the re-crawl, killed at 1.8 s
    // (checkpoints every second).
    let mut args = crawl_args(&second);
    args.extend(
        ["--recrawl", first.to_str().unwrap(), "--delay-ms", "40"]
            .iter()
            .map(|s| (*s).to_owned()),
    );
    let mut child = Command::new(trawl_bin())
        .current_dir(&web_dir)
        .args(&args)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1800));
    assert!(child.try_wait().unwrap().is_none(), "ended before the kill");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let killed_at = page_lines(&second).len();
    assert!(
        killed_at > 0 && killed_at < prev.len(),
        "{killed_at} of {} pages when killed",
        prev.len()
    );
    run(&web_dir, &args, &["--resume"]);
    web.stop();

    // Every previous URL answered exactly once in the final log, 304.
    let lines = page_lines(&second);
    let urls: BTreeSet<&String> = lines.keys().collect();
    let want: BTreeSet<&String> = prev.keys().collect();
    assert_eq!(urls, want);
    for (url, l) in &lines {
        assert_eq!(l.len(), 1, "{url}: {l:?}");
        assert!(has(&l[0], "not-modified"), "{url}");
    }
    // The new index holds every URL (the resumed run appended after the torn tail).
    let now = trawl::recrawl::read_latest(&second.join("recrawl.idx"))
        .unwrap()
        .0;
    assert_eq!(
        now.keys().collect::<BTreeSet<_>>(),
        want,
        "the new index lacks URLs"
    );
    let stats = stats_json(&second);
    assert!(stats["resumed_from"].as_u64().is_some(), "{stats}");
    assert_eq!(
        stats["recrawl"]["not_modified"].as_u64(),
        Some(prev.len() as u64),
        "{}",
        stats["recrawl"]
    );
    warcio_check_dir(&second.join("warc"));
    eprintln!(
        "crawl_recrawl (c): killed after {killed_at} of {} pages, resumed, all answered once",
        prev.len()
    );
}

#[test]
fn a_damaged_previous_index_stops_the_crawl_with_exit_2() {
    use trawl::recrawl::{IndexEntry, IndexWriter, Validators};
    let tmp = tempfile::tempdir().unwrap();
    let prev = tmp.path().join("c1");
    std::fs::create_dir_all(&prev).unwrap();
    let path = prev.join("recrawl.idx");
    let mut w = IndexWriter::create(&path).unwrap();
    for i in 0..3 {
        w.append(&IndexEntry {
            url: format!("http://127.0.0.1:9/p/{i}"),
            status: 200,
            fetched_at_us: 1,
            validators: Validators::default(),
            payload_digest: String::new(),
            record_id: String::new(),
            warc_file: "x.warc.gz".to_owned(),
            warc_offset: 0,
            payload_bytes: 10,
            hops: Some(String::new()),
            via: None,
        })
        .unwrap();
    }
    w.sync().unwrap();
    drop(w);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[40] ^= 0xff; // inside the first record, with records after it
    std::fs::write(&path, &bytes).unwrap();
    let out = tmp.path().join("c2");
    let o = Command::new(trawl_bin())
        .args(["crawl", "--allow-private-addresses", "--recrawl"])
        .arg(&prev)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("re-crawl index") && err.contains("damaged"),
        "{err}"
    );
    assert!(
        !out.exists(),
        "nothing is written for a crawl that cannot start"
    );
}
