//! The control API (issue 22, `docs/control.md`) against real crawls of a loopback
//! site: raw HTTP requests as curl sends them, then `trawl ctl`; pause stops the
//! site's request log from growing, resume restarts it, an added URL is fetched, a
//! blocked prefix is never asked again (also after a resume), stop ends the crawl
//! cleanly; strangers (no token, another origin, another Host) are refused.

// Test helpers outside #[test] functions: a panic is the failure report.
#![allow(clippy::unwrap_used)]

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use trawl::engine::{Crawler, Stats};

use support::{read_head, send, ScriptServer};

/// Requests the site answered: when, and the path.
type RequestLog = Arc<Mutex<Vec<(Instant, String)>>>;

/// A site that lasts: `/p/k` links `/p/k+1` and `/x/k`, up to `/p/300`; `/x/k` and
/// `/added` are leaves; every answer 60 ms late; every request logged.
fn site() -> (ScriptServer, RequestLog) {
    let log: RequestLog = Arc::default();
    let l2 = Arc::clone(&log);
    let server = ScriptServer::start(move |mut s, _| {
        while let Some(head) = read_head(&mut s) {
            let head = String::from_utf8_lossy(&head);
            let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
            l2.lock().unwrap().push((Instant::now(), path.clone()));
            std::thread::sleep(Duration::from_millis(60));
            let k: Option<usize> = path.strip_prefix("/p/").and_then(|k| k.parse().ok());
            let body = match (path.as_str(), k) {
                ("/", _) => Some("<a href=\"/p/1\">p</a>".to_owned()),
                (_, Some(k)) if k < 300 => Some(format!(
                    "<a href=\"/p/{}\">next</a><a href=\"/x/{k}\">x</a>",
                    k + 1
                )),
                ("/added", _) => Some("<p>added</p>".to_owned()),
                (p, _) if p.starts_with("/x/") => Some("<p>x</p>".to_owned()),
                _ => None,
            };
            let out = match body {
                Some(b) => format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{b}",
                    b.len()
                ),
                None => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_owned(),
            };
            if !send(&mut s, out.as_bytes()) {
                return;
            }
        }
    });
    (server, log)
}

/// Sends raw bytes; returns (status code, body).
fn raw(addr: SocketAddr, request: &str) -> (u16, String) {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let code = head.split(' ').nth(1).unwrap().parse().unwrap();
    (code, body.to_owned())
}

/// `POST /api/control/VERB` as curl sends it, with these extra header lines.
fn post(addr: SocketAddr, verb: &str, extra: &str, body: &str) -> (u16, String) {
    raw(
        addr,
        &format!(
            "POST /api/control/{verb} HTTP/1.1\r\nHost: {addr}\r\n{extra}\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    )
}

fn with_token(token: &str) -> String {
    format!("Authorization: Bearer {token}\r\n")
}

/// Waits (at most `bound`) for `f` to hold.
fn wait_for(bound: Duration, what: &str, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + bound;
    while !f() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Starts a crawl of `seed` into `dir` on a thread; returns its listener and token
/// once `control.addr` is written.
fn start_crawl(
    dir: &Path,
    seed: String,
    resume: bool,
) -> (std::thread::JoinHandle<Stats>, SocketAddr, String) {
    let (mut c, metrics) = support::metrics_crawl_config(dir, seed);
    c.delay = Duration::from_millis(20);
    let _ = std::fs::remove_file(dir.join("control.addr"));
    let crawl = std::thread::spawn(move || {
        Crawler::builder()
            .config(c)
            .resume(resume)
            .build()
            .unwrap()
            .run()
            .unwrap()
    });
    wait_for(Duration::from_secs(15), "control.addr", || {
        dir.join("control.addr").is_file()
    });
    let addr: SocketAddr = std::fs::read_to_string(dir.join("control.addr"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(addr, metrics);
    let token = std::fs::read_to_string(dir.join("control.token")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dir.join("control.token"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "the token file is private");
    (crawl, addr, token.trim().to_owned())
}

fn join(crawl: std::thread::JoinHandle<Stats>) -> Stats {
    let end = Instant::now() + Duration::from_secs(30);
    while !crawl.is_finished() {
        assert!(Instant::now() < end, "the crawl did not stop");
        std::thread::sleep(Duration::from_millis(50));
    }
    crawl.join().unwrap()
}

fn count(log: &RequestLog) -> usize {
    log.lock().unwrap().len()
}

fn out_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("trawl-control-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn control_api_over_raw_http_and_rules_survive_a_resume() {
    let (server, log) = site();
    let dir = out_dir("raw");
    let (crawl, addr, token) = start_crawl(&dir, server.url("/").to_string(), false);
    let auth = with_token(&token);

    // Strangers are refused, and a refusal changes nothing.
    assert_eq!(post(addr, "pause", "", "").0, 401);
    assert_eq!(post(addr, "pause", "X-Trawl-Token: nope\r\n", "").0, 401);
    // Another origin without the token (a hostile page's form or fetch): refused.
    let (code, body) = post(addr, "stop", "Origin: http://evil.example\r\n", "");
    assert_eq!(code, 403, "{body}");
    let cross = format!("{auth}Origin: http://evil.example\r\n");
    let (code, body) = post(addr, "pause", &cross, "");
    assert_eq!(code, 403, "{body}");
    assert!(body.contains("\"cross-origin\""), "{body}");
    let rebound = format!(
        "POST /api/control/pause HTTP/1.1\r\nHost: evil.example:{}\r\n{auth}\r\n",
        addr.port()
    );
    assert_eq!(raw(addr, &rebound).0, 421);
    let get = format!("GET /api/control/pause HTTP/1.1\r\nHost: {addr}\r\n{auth}\r\n");
    assert_eq!(raw(addr, &get).0, 405);
    assert_eq!(post(addr, "block", &auth, "{\"host\":").0, 400);
    assert_eq!(post(addr, "explode", &auth, "").0, 404);
    let show = format!("GET /api/control HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    assert!(raw(addr, &show).1.contains("\"paused\":false"));
    // The page's own origin is accepted.
    let same = format!("{auth}Origin: http://{addr}\r\n");
    let (code, body) = post(addr, "checkpoint", &same, "");
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("\"committed\":true"), "{body}");

    // Block the /x/ prefix; a delay under --delay-ms (20 ms) is refused.
    let prefix = format!("http://{}/x/", server.addr);
    let (code, body) = post(
        addr,
        "block",
        &auth,
        &format!("{{\"prefix\":\"{prefix}\"}}"),
    );
    assert_eq!(code, 200, "{body}");
    let blocked_at = Instant::now();
    let host = server.addr.to_string();
    let (code, body) = post(
        addr,
        "delay",
        &auth,
        &format!("{{\"host\":\"{host}\",\"delay_ms\":5}}"),
    );
    assert_eq!(code, 422, "{body}");
    assert!(body.contains("delay-below-floor"), "{body}");
    let (code, _) = post(
        addr,
        "delay",
        &auth,
        &format!("{{\"host\":\"{host}\",\"delay_ms\":30}}"),
    );
    assert_eq!(code, 200);

    // Pause: once the fetch in flight ends, the site hears nothing.
    wait_for(Duration::from_secs(10), "some pages", || count(&log) >= 6);
    assert_eq!(post(addr, "pause", &auth, "").0, 200);
    std::thread::sleep(Duration::from_millis(600));
    let paused = count(&log);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(count(&log), paused, "requests while paused");
    assert!(raw(addr, &show).1.contains("\"paused\":true"));
    assert_eq!(post(addr, "resume", &auth, "").0, 200);
    wait_for(Duration::from_secs(10), "requests after resume", || {
        count(&log) > paused
    });

    // Add a URL: fetched within a few seconds.
    let added = server.url("/added").to_string();
    let (code, body) = post(addr, "add", &auth, &format!("{{\"urls\":[\"{added}\"]}}"));
    assert_eq!(code, 200, "{body}");
    wait_for(Duration::from_secs(15), "the added URL", || {
        log.lock().unwrap().iter().any(|(_, p)| p == "/added")
    });

    // The board: the site is the busiest host, with its robots.txt state.
    let hosts = format!("GET /api/hosts HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    let (code, board) = raw(addr, &hosts);
    assert_eq!(code, 200);
    let board: serde_json::Value = serde_json::from_str(&board).unwrap();
    assert_eq!(
        board["busiest"][0]["host"],
        format!("http://{}", server.addr)
    );
    assert_eq!(board["busiest"][0]["robots"], "404");
    assert_eq!(board["busiest"][0]["delay_ms"], 30);
    // Queue lengths come from the shards a moment after a host is first shown.
    wait_for(Duration::from_secs(5), "a queue length", || {
        let (_, b) = raw(addr, &hosts);
        let b: serde_json::Value = serde_json::from_str(&b).unwrap();
        b["busiest"][0]["queued"].as_u64().is_some()
    });

    // Stop: a final checkpoint and a clean end.
    assert_eq!(post(addr, "stop", &auth, "").0, 200);
    let stats = join(crawl);
    assert_eq!(stats.finish, "stopped");
    assert!(stats.operator.blocked_urls > 0, "{:?}", stats.operator);
    let late_x = log
        .lock()
        .unwrap()
        .iter()
        .filter(|(at, p)| p.starts_with("/x/") && *at > blocked_at + Duration::from_millis(500))
        .count();
    assert_eq!(late_x, 0, "blocked URLs were fetched");
    let crawl_log = std::fs::read_to_string(dir.join("crawl.log.jsonl")).unwrap();
    assert!(crawl_log.contains("filter:blocked-by-operator"));

    // Resume: the block and the delay are still there.
    let resumed_at = Instant::now();
    let (crawl, addr, token) = start_crawl(&dir, server.url("/").to_string(), true);
    let show = format!("GET /api/control HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    let shown = raw(addr, &show).1;
    assert!(shown.contains(&prefix), "{shown}");
    assert!(shown.contains(&format!("\"{host}\":30")), "{shown}");
    wait_for(
        Duration::from_secs(10),
        "the resumed crawl fetching",
        || {
            log.lock()
                .unwrap()
                .iter()
                .filter(|(at, _)| *at > resumed_at)
                .count()
                >= 3
        },
    );
    assert_eq!(post(addr, "stop", &with_token(&token), "").0, 200);
    let stats = join(crawl);
    assert_eq!(stats.finish, "stopped");
    let x_after_resume = log
        .lock()
        .unwrap()
        .iter()
        .filter(|(at, p)| p.starts_with("/x/") && *at > resumed_at)
        .count();
    assert_eq!(x_after_resume, 0, "a resumed crawl fetched blocked URLs");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `trawl ctl ARGS`; returns (success, stdout).
fn ctl(args: &[&str]) -> (bool, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_trawl"))
        .arg("ctl")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn trawl_ctl_drives_two_crawls_at_once() {
    let (server_a, log_a) = site();
    let (server_b, log_b) = site();
    let (dir_a, dir_b) = (out_dir("ctl-a"), out_dir("ctl-b"));
    let (crawl_a, addr_a, _) = start_crawl(&dir_a, server_a.url("/").to_string(), false);
    let (crawl_b, _, _) = start_crawl(&dir_b, server_b.url("/").to_string(), false);
    let (a, b) = (dir_a.to_str().unwrap(), dir_b.to_str().unwrap());
    wait_for(Duration::from_secs(10), "pages on both", || {
        count(&log_a) >= 3 && count(&log_b) >= 3
    });

    // Both nodes at once: one JSON line each.
    let (ok, out) = ctl(&["--out", a, "--out", b, "pause"]);
    assert!(ok, "{out}");
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(out.lines().all(|l| l.contains("\"status\":200")), "{out}");
    std::thread::sleep(Duration::from_millis(600));
    let (pa, pb) = (count(&log_a), count(&log_b));
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(
        (count(&log_a), count(&log_b)),
        (pa, pb),
        "requests while paused"
    );
    let (ok, out) = ctl(&["--out", a, "show"]);
    assert!(ok && out.contains("\"paused\":true"), "{out}");
    let (ok, out) = ctl(&["--out", a, "--out", b, "resume"]);
    assert!(ok, "{out}");
    wait_for(Duration::from_secs(10), "requests after resume", || {
        count(&log_a) > pa && count(&log_b) > pb
    });

    // An address without the token is refused (exit 1, the 401 printed).
    let addr = addr_a.to_string();
    let (ok, out) = ctl(&["--addr", &addr, "pause"]);
    assert!(!ok && out.contains("\"status\":401"), "{out}");

    let added = server_a.url("/added").to_string();
    let (ok, out) = ctl(&["--out", a, "add", &added]);
    assert!(ok, "{out}");
    let x = format!("http://{}/x/", server_a.addr);
    let (ok, out) = ctl(&["--out", a, "block", &x]);
    assert!(ok, "{out}");
    let (ok, out) = ctl(&["--out", a, "block", "bad host/name"]);
    assert!(!ok && out.contains("\"status\":400"), "{out}");
    let (ok, out) = ctl(&["--out", a, "delay", &server_a.addr.to_string(), "40"]);
    assert!(ok, "{out}");
    wait_for(Duration::from_secs(15), "the added URL", || {
        log_a.lock().unwrap().iter().any(|(_, p)| p == "/added")
    });

    let (ok, out) = ctl(&["--out", a, "--out", b, "stop"]);
    assert!(ok, "{out}");
    assert_eq!(join(crawl_a).finish, "stopped");
    assert_eq!(join(crawl_b).finish, "stopped");
    let _ = std::fs::remove_dir_all(&dir_a);
    let _ = std::fs::remove_dir_all(&dir_b);
}
