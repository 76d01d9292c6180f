//! `trawl crawl` as a new user meets it, through the real binary: seed files with bad
//! lines, settings out of range, a loopback seed without `--allow-private-addresses`,
//! and the two spellings of a resume (`--resume DIR`, `--out DIR --resume`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod crawl_support;

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crawl_support::{crawl_args, crawl_log, fetched_urls, stats_json, trawl_bin, World};

fn trawl(dir: &Path, args: &[&str]) -> Output {
    Command::new(trawl_bin())
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run trawl")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A listener on loopback that counts the connections it gets and closes them. Any
/// connection at all means trawl contacted an address it should have refused.
struct Listener {
    port: u16,
    accepted: Arc<AtomicUsize>,
}

fn listener() -> Listener {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&accepted);
    std::thread::spawn(move || {
        for stream in l.incoming().flatten() {
            count.fetch_add(1, Ordering::SeqCst);
            let mut s = stream;
            let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
            let mut buf = [0u8; 512];
            let _ = s.read(&mut buf);
        }
    });
    Listener { port, accepted }
}

#[test]
fn bad_seed_lines_are_reported_by_line_number_and_the_rest_is_crawled() {
    let tmp = tempfile::tempdir().unwrap();
    let l = listener();
    let good = format!("http://127.0.0.1:{}/", l.port);
    std::fs::write(
        tmp.path().join("seeds.txt"),
        format!("# my seeds\n\nnot a url\nftp://files.test/x\n{good}\n"),
    )
    .unwrap();
    let o = trawl(
        tmp.path(),
        &[
            "crawl",
            "--seeds",
            "seeds.txt",
            "--out",
            "out",
            "--progress-secs",
            "0",
        ],
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("seeds.txt:3") && err.contains("not a url"),
        "line 3 not reported: {err}"
    );
    assert!(
        err.contains("seeds.txt:4") && err.contains("\"ftp\"") && err.contains("http and https"),
        "line 4 not reported: {err}"
    );
    assert!(
        !err.contains("seeds.txt:1:") && !err.contains("seeds.txt:2:"),
        "{err}"
    );
    // The usable seed was crawled (here: refused by policy, as it is loopback).
    let log = crawl_log(&tmp.path().join("out"));
    assert!(log.iter().any(|r| r["url"] == good.as_str()), "{log:?}");
}

#[test]
fn a_seed_file_without_a_usable_url_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("bad.txt"),
        "example.org\nmailto:me@example.org\n",
    )
    .unwrap();
    std::fs::write(tmp.path().join("empty.txt"), "# nothing yet\n\n").unwrap();
    let cases: [(&[&str], &[&str]); 3] = [
        (
            &["--seeds", "bad.txt"],
            &["bad.txt:1", "bad.txt:2", "no usable seed URL", "2 seeds"],
        ),
        (
            &["--seeds", "empty.txt"],
            &["no seed URL in empty.txt", "only comments"],
        ),
        (&[], &["no seeds", "--seeds FILE", "--seed URL"]),
    ];
    for (flags, expected) in cases {
        let mut args = vec!["crawl", "--out", "out"];
        args.extend_from_slice(flags);
        let o = trawl(tmp.path(), &args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {err}");
        for e in expected {
            assert!(err.contains(e), "{flags:?}: {e:?} missing from {err}");
        }
        assert!(
            !tmp.path().join("out/start.json").exists(),
            "{flags:?} started a crawl"
        );
    }
}

#[test]
fn settings_out_of_range_are_refused_with_their_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["--memory", "10"],
            &["--memory", "10 bytes", "minimum of 64M"],
        ),
        (&["--memory", "lots"], &["--memory", "lots"]),
        (
            &["--seen-capacity", "0"],
            &["--seen-capacity 0", "at least 1"],
        ),
        (&["--seen-fp", "1"], &["--seen-fp 1", "above 0 and below 1"]),
        (&["--seen-fp", "0"], &["--seen-fp 0", "above 0 and below 1"]),
        (&["--shards", "0"], &["--shards 0", "at least 1"]),
        (&["--concurrency", "0"], &["--concurrency 0", "at least 1"]),
        (
            &["--per-host-connections", "0"],
            &["--per-host-connections 0", "at least 1"],
        ),
        (&["--delay-factor=-1"], &["--delay-factor -1", "0 or more"]),
        (
            &["--delay-factor", "NaN"],
            &["--delay-factor NaN", "finite"],
        ),
        (&["--max-pages", "0"], &["--max-pages 0", "at least 1"]),
        (
            &["--max-url-bytes", "3"],
            &["--max-url-bytes 3", "at least 9"],
        ),
        (
            &["--robots-max-attempts", "0"],
            &["--robots-max-attempts 0", "at least 1"],
        ),
        (
            &["--robots-retry-secs", "0"],
            &["--robots-retry-secs 0", "at least 1"],
        ),
        (&["--timeout-ms", "0"], &["--timeout-ms 0", "at least 1"]),
        (
            &["--connect-timeout-ms", "0"],
            &["--connect-timeout-ms 0", "at least 1"],
        ),
        (&["--warc-max-bytes", "0"], &["--warc-max-bytes 0"]),
    ];
    for (flags, expected) in cases {
        let mut args = vec!["crawl", "--seed", "http://a.test/", "--out", "out"];
        args.extend_from_slice(flags);
        let o = trawl(tmp.path(), &args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {err}");
        for e in *expected {
            assert!(err.contains(e), "{flags:?}: {e:?} missing from {err}");
        }
        assert!(
            !tmp.path().join("out").exists(),
            "{flags:?} created the output"
        );
    }
}

/// The 180 s of robots.txt retries (60 s, then 120 s: the default `--robots-retry-secs`)
/// this used to cost: the refusal is final at the first attempt, which never leaves the machine (the address check follows name
/// resolution, before any connection).
#[test]
fn a_loopback_seed_without_the_flag_is_refused_once_and_promptly() {
    let tmp = tempfile::tempdir().unwrap();
    let l = listener();
    let seeds: Vec<String> = ["/", "/a", "/b"]
        .iter()
        .map(|p| format!("http://127.0.0.1:{}{p}", l.port))
        .collect();
    // Small presence bits: the default 100 million URLs take seconds to write at the
    // final checkpoint, which is not what this test times.
    let mut args = vec!["crawl", "--out", "out", "--progress-secs", "0"];
    args.extend(["--seen-capacity", "100000"]);
    for s in &seeds {
        args.extend(["--seed", s.as_str()]);
    }
    let t0 = Instant::now();
    let o = trawl(tmp.path(), &args);
    let took = t0.elapsed();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert_eq!(
        err.matches("--allow-private-addresses").count(),
        1,
        "one warning naming the flag: {err}"
    );
    assert!(err.contains("loopback"), "{err}");

    let log = crawl_log(&tmp.path().join("out"));
    let robots: Vec<_> = log
        .iter()
        .filter(|r| r["url"].as_str().unwrap().ends_with("/robots.txt"))
        .collect();
    assert_eq!(robots.len(), 1, "robots.txt attempted once: {log:?}");
    for seed in &seeds {
        let lines: Vec<_> = log.iter().filter(|r| r["url"] == seed.as_str()).collect();
        assert_eq!(lines.len(), 1, "{seed} logged once: {log:?}");
        assert_eq!(lines[0]["outcome"], "blocked-address");
        assert!(
            lines[0]["annotations"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a == "policy:private-address"),
            "{:?}",
            lines[0]
        );
    }
    assert_eq!(log.len(), 1 + seeds.len(), "{log:?}");
    assert_eq!(
        l.accepted.load(Ordering::SeqCst),
        0,
        "a refused address was contacted"
    );
    let stats: serde_json::Value = stats_json(&tmp.path().join("out"));
    assert_eq!(stats["finish"], "exhausted", "{stats}");
    assert_eq!(stats["outcomes"]["blocked-address"], 4, "{stats}");
}

#[test]
fn resume_dir_and_out_dir_resume_both_continue_the_crawl() {
    let tmp = tempfile::tempdir().unwrap();
    let world = World {
        hosts: 4,
        profile: Some("default"),
        pages_per_host: "10-20",
        out_degree: None,
        budget: None,
    };
    let mut sw = world.start(&tmp.path().join("web"), &[]);
    let out = tmp.path().join("crawl");
    let out_s = out.display().to_string();
    let budget = 1000;
    // Run 1, from the server's directory (relative --seeds and --hosts-file): 10 pages.
    let mut args = crawl_args(&out, budget, 20);
    args.extend(["--max-pages".into(), "10".into()]);
    let o = Command::new(trawl_bin())
        .current_dir(&sw.dir)
        .args(&args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stats_json(&out)["finish"], "budget");

    // Run 2: `--resume DIR` alone, from another directory: the seeds and flags come
    // from start.json (relative paths were recorded absolute); a new --max-pages wins.
    let o = trawl(
        tmp.path(),
        &[
            "crawl",
            "--resume",
            &out_s,
            "--max-pages",
            "25",
            "--seed",
            "http://other.test/",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("seeds given with --resume are not used"),
        "{}",
        stderr(&o)
    );
    let s = stats_json(&out);
    assert!(s["resumed_from"].as_u64().is_some(), "{s}");
    assert_eq!(s["finish"], "budget", "{s}");
    assert!(s["pages"].as_u64().unwrap() > 10, "{s}");

    // Run 3: `--out DIR --resume`, to the end.
    let o = trawl(
        tmp.path(),
        &[
            "crawl",
            "--out",
            &out_s,
            "--resume",
            "--max-pages",
            "100000",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stats_json(&out);
    assert!(s["resumed_from"].as_u64().is_some(), "{s}");
    assert_eq!(s["finish"], "exhausted", "{s}");
    sw.stop();
    let (m, _) = sw.manifest();
    let log = crawl_log(&out);
    assert!(
        !log.iter()
            .any(|r| r["url"].as_str().unwrap().contains("other.test")),
        "a seed given with --resume was crawled"
    );
    let fetched = fetched_urls(&log);
    let missed: Vec<_> = m.difference(&fetched).take(5).collect();
    assert!(missed.is_empty(), "M URLs not fetched: {missed:?}");

    // Misuse: two different directories, or --resume with none.
    let o = trawl(
        tmp.path(),
        &["crawl", "--out", "elsewhere", "--resume", &out_s],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("different directories"),
        "{}",
        stderr(&o)
    );
    let o = trawl(tmp.path(), &["crawl", "--resume"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--resume DIR"), "{}", stderr(&o));
    let o = trawl(tmp.path(), &["crawl", "--resume", "no-such-dir"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no such directory"), "{}", stderr(&o));
    // A new crawl into the directory of an existing one is refused.
    let o = trawl(
        tmp.path(),
        &["crawl", "--out", &out_s, "--seed", "http://a.test/"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--resume"), "{}", stderr(&o));
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn a_proxy_down_past_its_limit_ends_the_crawl_and_its_url_credentials_are_never_written() {
    let tmp = tempfile::tempdir().unwrap();
    // A port nothing listens on: the proxy is down for the whole crawl.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let secret = "Sup3rSecretPw";
    let proxy = format!("http://crawler:{secret}@127.0.0.1:{port}");
    let args = [
        "crawl",
        "--out",
        "out",
        "--progress-secs",
        "0",
        "--seen-capacity",
        "100000",
        "--seed",
        "http://a.test/",
        "--proxy",
        proxy.as_str(),
        "--no-proxy-env",
        "--proxy-down-secs",
        "2",
    ];
    let t0 = Instant::now();
    let o = trawl(tmp.path(), &args);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", t0.elapsed());
    let out = tmp.path().join("out");
    let log = crawl_log(&out);
    assert!(
        log.iter().any(|r| r["annotations"]
            .as_array()
            .is_some_and(|a| a.iter().any(|n| n == "proxy-down:retry"))),
        "the proxy's outage paused the host first: {log:?}"
    );
    let seed: Vec<_> = log
        .iter()
        .filter(|r| r["url"] == "http://a.test/")
        .collect();
    assert_eq!(seed.len(), 1, "{log:?}");
    assert_eq!(seed[0]["outcome"], "proxy-unreachable", "{log:?}");
    let route = format!("http://127.0.0.1:{port}");
    assert!(log.iter().all(|r| r["route"] == route.as_str()), "{log:?}");
    let stats = stats_json(&out);
    assert_eq!(stats["finish"], "exhausted", "{stats}");
    assert_eq!(stats["outcomes"].get("fetched"), None, "{stats}");
    let routes = stats["routes"].as_array().expect("routes in stats.json");
    assert_eq!(routes[0]["label"], "direct");
    assert_eq!(routes[1]["label"], route.as_str());
    assert_eq!(routes[1]["credentials"], "url:--proxy");
    assert_eq!(routes[1]["state"], "gave-up");
    // The password, or its base64 with the user, is nowhere: not in any file of the
    // crawl (start.json, stats.json, the crawl log, the WARC, the checkpoint) nor on
    // stderr.
    let b64 = "Y3Jhd2xlcjpTdXAzclNlY3JldFB3"; // base64("crawler:Sup3rSecretPw")
    assert!(!err.contains(secret) && !err.contains(b64), "{err}");
    for f in files_under(&out) {
        let bytes = std::fs::read(&f).unwrap();
        for needle in [secret.as_bytes(), b64.as_bytes()] {
            assert!(
                !bytes.windows(needle.len()).any(|w| w == needle),
                "{} holds a credential",
                f.display()
            );
        }
    }
    let start = std::fs::read_to_string(out.join("start.json")).unwrap();
    assert!(
        start.contains("--proxy-credentials=url-not-recorded"),
        "{start}"
    );
    // A resume without the credentials stops and says why.
    let o = trawl(tmp.path(), &["crawl", "--resume", "out"]);
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("not recorded"), "{err}");
}
