//! Runs the `hyperload` binary against a tiny keep-alive server on loopback and checks
//! its JSON report against what the server saw.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

const BODY: &[u8] = b"<html><body>hello from the test server</body></html>";

#[derive(Default)]
struct Seen {
    connections: AtomicU64,
    requests: AtomicU64,
}

/// A thread-per-connection HTTP/1.1 server answering every request with `BODY`, keeping
/// connections alive until the client closes them.
fn serve(listener: TcpListener, seen: Arc<Seen>) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        seen.connections.fetch_add(1, Ordering::SeqCst);
        let seen = Arc::clone(&seen);
        thread::spawn(move || handle(stream, &seen));
    }
}

fn handle(stream: TcpStream, seen: &Seen) {
    let mut writer = stream.try_clone().expect("clone stream");
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    loop {
        // Request line, then fields until the empty line.
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        assert!(line.starts_with("GET /page?x=1 HTTP/1.1"), "{line:?}");
        let mut host_ok = false;
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line.eq_ignore_ascii_case("host: site.test:8080\r\n") {
                host_ok = true;
            }
            if line == "\r\n" {
                break;
            }
        }
        assert!(host_ok, "request without the URL's Host");
        seen.requests.fetch_add(1, Ordering::SeqCst);
        // One write per response: head and body in two writes would meet Nagle's
        // algorithm and the client's delayed ACK (40 ms per request).
        let mut response =
            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", BODY.len()).into_bytes();
        response.extend_from_slice(BODY);
        if writer.write_all(&response).is_err() {
            return;
        }
    }
}

fn field<'a>(json: &'a str, name: &str) -> &'a str {
    let key = format!("\"{name}\":");
    let start = json
        .find(&key)
        .unwrap_or_else(|| panic!("{name} missing in {json}"))
        + key.len();
    let rest = &json[start..];
    let end = rest.find([',', '}']).expect("end of field");
    &rest[..end]
}

#[test]
fn fixed_request_count_over_keep_alive_connections() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Seen::default());
    let server_seen = Arc::clone(&seen);
    thread::spawn(move || serve(listener, server_seen));

    let output = Command::new(env!("CARGO_BIN_EXE_hyperload"))
        .args([
            "--connections",
            "4",
            "--requests",
            "300",
            "--duration-secs",
            "30",
        ])
        .args(["--threads", "2", "--connect", &addr.to_string()])
        .arg("http://site.test:8080/page?x=1#frag")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json = String::from_utf8(output.stdout).unwrap();
    assert_eq!(field(&json, "requests"), "300", "{json}");
    assert_eq!(field(&json, "errors"), "0", "{json}");
    assert_eq!(field(&json, "non_2xx"), "0", "{json}");
    assert_eq!(field(&json, "connects"), "4", "{json}");
    assert_eq!(
        field(&json, "bytes"),
        (300 * BODY.len()).to_string(),
        "{json}"
    );
    let rps: f64 = field(&json, "rps").parse().unwrap();
    assert!(rps > 0.0);
    let cpu: f64 = field(&json, "cpu_us_per_request").parse().unwrap();
    assert!(cpu > 0.0, "{json}");
    assert_eq!(seen.requests.load(Ordering::SeqCst), 300);
    // Keep-alive: one connection per task, never one per request.
    assert_eq!(seen.connections.load(Ordering::SeqCst), 4);
}

#[test]
fn refuses_non_loopback_targets() {
    let output = Command::new(env!("CARGO_BIN_EXE_hyperload"))
        .args(["--connect", "192.0.2.1:80", "http://example.com/"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("loopback"));
}

#[test]
fn duration_limited_run_stops_on_time() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Seen::default());
    let server_seen = Arc::clone(&seen);
    thread::spawn(move || serve(listener, server_seen));

    let dir = std::env::temp_dir().join(format!("hyperload-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let list = dir.join("urls.txt");
    std::fs::write(&list, "# one URL\nhttp://site.test:8080/page?x=1\n").unwrap();
    let started = std::time::Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_hyperload"))
        .args(["-c", "2", "-n", "0", "-d", "0.5", "-t", "1"])
        .args(["--connect", &addr.to_string(), "--urls"])
        .arg(&list)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Generous bound: the run is time-limited, not count-limited.
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    let json = String::from_utf8(output.stdout).unwrap();
    let requests: u64 = field(&json, "requests").parse().unwrap();
    assert!(requests > 0, "{json}");
    assert_eq!(field(&json, "errors"), "0", "{json}");
    let seconds: f64 = field(&json, "seconds").parse().unwrap();
    assert!((0.4..10.0).contains(&seconds), "{json}");
    // Requests in flight at the deadline are abandoned: the server may have seen them.
    let served = seen.requests.load(Ordering::SeqCst);
    assert!(
        (requests..=requests + 2).contains(&served),
        "{served} vs {json}"
    );
}
