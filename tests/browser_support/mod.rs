//! A headless browser for the end-to-end tests of the status page (issue 22): Debian's
//! `chromium` driven by `chromedriver` over the W3C WebDriver JSON protocol on loopback,
//! through the tiny client below. Shared by `tests/status_browser.rs` (one node) and
//! `tests/farm_control.rs` (a farm node's page).
//!
//! [`browser_available`] fails under `CI=true` when either binary is missing (`.ci/run`
//! installs `chromium` and `chromium-driver`); elsewhere it says so loudly and the
//! caller skips.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

pub fn browser_available() -> bool {
    let ok = Path::new(CHROMIUM).is_file() && Path::new(CHROMEDRIVER).is_file();
    if !ok {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "chromium / chromedriver not installed, and CI=true: the browser test must run \
             (.ci/run installs chromium and chromium-driver)"
        );
        eprintln!(
            "\n\n*** browser test SKIPPED: {CHROMIUM} or {CHROMEDRIVER} missing \
             (apt-get install -y chromium chromium-driver) ***\n\n"
        );
    }
    ok
}

/// One HTTP/1.1 request on loopback; returns (status, body).
pub fn http(addr: SocketAddr, method: &str, path: &str, body: Option<&Value>) -> (u16, String) {
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    // chromedriver keeps the connection open: read the head, then Content-Length
    // bytes (or chunks up to the last one).
    let mut raw = Vec::new();
    let mut buf = [0u8; 65536];
    let end = Instant::now() + Duration::from_secs(60);
    let complete = |raw: &[u8]| -> Option<(u16, String)> {
        let text = String::from_utf8_lossy(raw);
        let (head, rest) = text.split_once("\r\n\r\n")?;
        let code = head.split(' ').nth(1)?.parse().ok()?;
        let lower = head.to_ascii_lowercase();
        if let Some(len) = lower
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse::<usize>().ok())
        {
            return rest.get(..len).map(|b| (code, b.to_owned()));
        }
        if lower.contains("transfer-encoding: chunked") {
            if !rest.ends_with("0\r\n\r\n") {
                return None;
            }
            // Chunk sizes and bodies alternate; the JSON holds no CRLF.
            let body: String = rest.split("\r\n").skip(1).step_by(2).collect();
            return Some((code, body));
        }
        None
    };
    loop {
        if let Some(done) = complete(&raw) {
            return done;
        }
        assert!(
            Instant::now() < end,
            "no complete answer to {method} {path}"
        );
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) => panic!("{method} {path}: {e}"),
        }
    }
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let code = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let json = rest.to_owned();
    (code, json)
}

/// A WebDriver session (W3C protocol) on a chromedriver child.
pub struct Browser {
    driver: Child,
    addr: SocketAddr,
    session: String,
}

impl Browser {
    pub fn start(profile: &Path) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        wait_for(Duration::from_secs(15), "chromedriver", || {
            TcpStream::connect(addr).is_ok() && http(addr, "GET", "/status", None).0 == 200
        });
        let caps = json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": { "binary": CHROMIUM, "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync",
                "--window-size=1400,2200",
                format!("--user-data-dir={}", profile.display()),
            ]}
        }}});
        let (code, body) = http(addr, "POST", "/session", Some(&caps));
        assert_eq!(code, 200, "new session: {body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        let session = v["value"]["sessionId"].as_str().unwrap().to_owned();
        Self {
            driver,
            addr,
            session,
        }
    }

    pub fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let path = format!("/session/{}{path}", self.session);
        let (code, text) = http(self.addr, method, &path, body.as_ref());
        assert_eq!(code, 200, "{method} {path}: {text}");
        serde_json::from_str::<Value>(&text).unwrap()["value"].take()
    }

    pub fn script(&self, js: &str) -> Value {
        self.call(
            "POST",
            "/execute/sync",
            Some(json!({ "script": js, "args": [] })),
        )
    }

    pub fn element(&self, css: &str) -> String {
        let v = self.call(
            "POST",
            "/element",
            Some(json!({ "using": "css selector", "value": css })),
        );
        v.as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap()
            .to_owned()
    }

    pub fn click(&self, css: &str) {
        let e = self.element(css);
        self.call("POST", &format!("/element/{e}/click"), Some(json!({})));
    }

    pub fn type_into(&self, css: &str, text: &str) {
        let e = self.element(css);
        self.call(
            "POST",
            &format!("/element/{e}/value"),
            Some(json!({ "text": text })),
        );
    }

    pub fn text(&self, css: &str) -> String {
        let e = self.element(css);
        self.call("GET", &format!("/element/{e}/text"), None)
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    pub fn screenshot(&self, to: &Path) {
        let b64 = self.call("GET", "/screenshot", None);
        let png = data_encoding::BASE64
            .decode(b64.as_str().unwrap().as_bytes())
            .unwrap();
        std::fs::write(to, png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = http(
            self.addr,
            "DELETE",
            &format!("/session/{}", self.session),
            None,
        );
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

pub fn wait_for(bound: Duration, what: &str, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + bound;
    while !f() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}
