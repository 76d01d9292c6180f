//! Shared helpers for the synthweb integration tests: start the real binary as a child,
//! talk to it with a raw std::net client under time bounds.
#![allow(dead_code, reason = "each test binary uses a subset")]
#![allow(
    clippy::unwrap_used,
    reason = "test helper: a failure here is a test failure"
)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use synthweb::{Profiles, Site, SiteConfig, Span};

/// A running server.
pub struct Server {
    pub child: Child,
    pub ready: serde_json::Value,
    pub dir: tempfile::TempDir,
    pub http_port: u16,
    pub tls_port: Option<u16>,
    stdout: Option<std::io::BufReader<std::process::ChildStdout>>,
}

impl Server {
    /// Start `synthweb` with `args` (plus --hosts-file/--log in a temp dir).
    pub fn start(args: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_synthweb"));
        cmd.args(args)
            .arg("--log")
            .arg(dir.path().join("log.jsonl"))
            .arg("--max-secs")
            .arg("120")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
        let ready: serde_json::Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("no ready line ({e}): {line:?}"));
        let http_port = ready["http_port"].as_u64().unwrap() as u16;
        let tls_port = ready["tls_port"].as_u64().map(|p| p as u16);
        Self {
            child,
            ready,
            dir,
            http_port,
            tls_port,
            stdout: Some(stdout),
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// SIGTERM, wait, return the final stdout line.
    pub fn stop(&mut self) -> String {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        self.wait_done()
    }

    /// Wait for the process to exit by itself (limits) and return its last line.
    pub fn wait_done(&mut self) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            assert!(Instant::now() < deadline, "server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut rest = String::new();
        if let Some(mut s) = self.stdout.take() {
            let _ = s.read_to_string(&mut rest);
        }
        rest.lines().last().unwrap_or("").to_owned()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The site the server with these flags serves (same defaults as the CLI).
pub fn site_for(hosts: u32, profile: &str, http_port: u16, tls_port: Option<u16>) -> Site {
    let cfg = SiteConfig {
        seed: 42,
        hosts,
        profiles: Profiles::parse(profile).unwrap(),
        page_bytes: Span {
            min: 5_000,
            max: 60_000,
        },
        fixed_size: false,
        out_degree: Span { min: 10, max: 80 },
        pages_per_host: Span { min: 20, max: 200 },
        tls: tls_port.is_some(),
        trap_budget: 20,
        http_port,
        tls_port,
        bind_base: std::net::Ipv4Addr::new(127, 0, 0, 1),
        bind_count: 1,
        seed_stride: 1,
        fanout: None,
        change_rate_bp: 0,
        generation: 1,
        mesh: None,
        hosts_per_address: None,
        hubs: None,
    };
    Site::new(cfg).unwrap()
}

/// A raw response.
#[derive(Debug, Default)]
pub struct Raw {
    /// All bytes received.
    pub bytes: Vec<u8>,
    /// Whether the read ended by timeout (connection still open).
    pub timed_out: bool,
    /// Error kind that ended the read, if any.
    pub error: Option<std::io::ErrorKind>,
    /// Time until the first byte.
    pub elapsed: Duration,
}

pub fn connect(port: u16) -> TcpStream {
    let s = TcpStream::connect(SocketAddr::from(([127, 0, 0, 1], port))).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    s
}

/// Send `request` and read until EOF, error, `max_bytes`, or `limit` elapses.
pub fn exchange(port: u16, request: &[u8], limit: Duration, max_bytes: usize) -> Raw {
    let mut s = connect(port);
    s.write_all(request).unwrap();
    read_all(&mut s, limit, max_bytes)
}

pub fn read_all(s: &mut TcpStream, limit: Duration, max_bytes: usize) -> Raw {
    let start = Instant::now();
    let mut raw = Raw::default();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        if start.elapsed() > limit {
            raw.timed_out = true;
            break;
        }
        if raw.bytes.len() >= max_bytes {
            break;
        }
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.bytes.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => {
                raw.error = Some(e.kind());
                break;
            }
        }
    }
    raw.elapsed = start.elapsed();
    raw
}

pub fn get(host: &str, port: u16, target: &str, extra: &str) -> Vec<u8> {
    format!("GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\nUser-Agent: test\r\n{extra}Connection: close\r\n\r\n").into_bytes()
}

/// A parsed HTTP/1.1 response.
#[derive(Debug)]
pub struct Parsed {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub head_len: usize,
    pub body: Vec<u8>,
    /// Bytes after this response (pipelining).
    pub rest: Vec<u8>,
}

impl Parsed {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Parse one response with its body framing (CL, chunked, or until end of bytes).
pub fn parse(bytes: &[u8]) -> Parsed {
    let mut headers = vec![httparse::EMPTY_HEADER; 200];
    let mut r = httparse::Response::new(&mut headers);
    let n = match r.parse(bytes).unwrap() {
        httparse::Status::Complete(n) => n,
        httparse::Status::Partial => panic!(
            "partial head: {:?}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(300)])
        ),
    };
    let status = r.code.unwrap();
    let hs: Vec<(String, String)> = r
        .headers
        .iter()
        .map(|h| {
            (
                h.name.to_owned(),
                String::from_utf8_lossy(h.value).into_owned(),
            )
        })
        .collect();
    let get = |name: &str| {
        hs.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let rest = &bytes[n..];
    let (body, rest) = if status == 304 {
        (Vec::new(), rest.to_vec())
    } else if let Some(cl) = get("content-length") {
        let cl: usize = cl.parse().unwrap();
        (rest[..cl].to_vec(), rest[cl..].to_vec())
    } else if get("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        let mut body = Vec::new();
        let mut i = 0;
        loop {
            let line_end = i + rest[i..].windows(2).position(|w| w == b"\r\n").unwrap();
            let size =
                usize::from_str_radix(std::str::from_utf8(&rest[i..line_end]).unwrap().trim(), 16)
                    .unwrap();
            i = line_end + 2;
            if size == 0 {
                i += 2;
                break;
            }
            body.extend_from_slice(&rest[i..i + size]);
            i += size + 2;
        }
        (body, rest[i..].to_vec())
    } else {
        (rest.to_vec(), Vec::new())
    };
    Parsed {
        status,
        headers: hs,
        head_len: n,
        body,
        rest,
    }
}
