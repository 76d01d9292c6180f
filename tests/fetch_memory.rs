//! Memory per idle keep-alive connection, plain and TLS, measured as the VmRSS delta of
//! this process over N idle pooled connections divided by N. The servers run in a child
//! process (this test binary re-executed) so their memory is not counted.

mod support;

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use trawl::fetch::FetchRequest;
use trawl::net::{Fetcher, FetcherConfig};

use support::{tls_keep_alive_server, tls_materials, vm_rss_kib, ScriptServer};

const CHILD_ENV: &str = "TRAWL_MEMORY_CHILD";
const PLAIN_CONNECTIONS: usize = 1_000;
const TLS_CONNECTIONS: usize = 200;

/// Not a test of its own: the server half, run when the parent re-executes this binary.
#[test]
fn child_server() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let _ = rlimit::increase_nofile_limit(10_000);
    let plain = ScriptServer::start(|mut s, _| {
        while let Some(head) = support::read_head(&mut s) {
            let text = String::from_utf8_lossy(&head);
            let target = text.split(' ').nth(1).unwrap_or("/").to_owned();
            let resp = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{target}",
                target.len()
            );
            if !support::send(&mut s, resp.as_bytes()) {
                return;
            }
        }
    });
    let (ca_pem, config) = tls_materials();
    let tls = tls_keep_alive_server(config);
    let ca_path = std::env::temp_dir().join(format!("trawl-memtest-ca-{}.pem", std::process::id()));
    std::fs::write(&ca_path, ca_pem).expect("ca");
    println!(
        "READY {} {} {}",
        plain.addr.port(),
        tls.addr.port(),
        ca_path.display()
    );
    // Live until the parent closes our stdin.
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    let _ = std::fs::remove_file(&ca_path);
    std::process::exit(0);
}

fn measure(fetcher: &mut Fetcher, scheme: &str, port: u16, n: usize) -> f64 {
    let url = |i: usize| url::Url::parse(&format!("{scheme}://localhost:{port}/{i}")).expect("url");
    // Warm up: one connection, so the loop's own buffers and the TLS config exist.
    fetcher.submit(FetchRequest::get(0, url(0), "t".into()));
    fetcher
        .run_until_idle(Duration::from_secs(10), |o| assert!(o.is_ok(), "{o:?}"))
        .expect("poll");
    let open_before = fetcher.open_connections();
    let rss_before = vm_rss_kib();
    for i in 0..n {
        fetcher.submit(FetchRequest::get(i as u64, url(i), "t".into()));
    }
    let mut ok = 0;
    fetcher
        .run_until_idle(Duration::from_secs(60), |o| {
            assert!(o.is_ok(), "{o:?}");
            ok += 1;
        })
        .expect("poll");
    assert_eq!(ok, n);
    let rss_after = vm_rss_kib();
    let opened = fetcher.open_connections() - open_before;
    assert!(opened + 1 >= n, "only {opened} idle connections");
    assert_eq!(fetcher.open_connections(), fetcher.idle_connections());
    (rss_after.saturating_sub(rss_before)) as f64 / opened as f64
}

#[test]
fn idle_connection_memory_is_bounded() {
    let _ = rlimit::increase_nofile_limit(10_000);
    let exe = std::env::current_exe().expect("exe");
    let mut child = Command::new(exe)
        .args(["child_server", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn server child");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let start = Instant::now();
    let ready = loop {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "child did not start"
        );
        let line = lines.next().expect("child output").expect("line");
        // The harness may print "test child_server ... " on the same line.
        if let Some((_, rest)) = line.split_once("READY ") {
            break rest.to_owned();
        }
    };
    let fields: Vec<&str> = ready.split(' ').collect();
    let plain_port: u16 = fields[0].parse().expect("port");
    let tls_port: u16 = fields[1].parse().expect("port");
    let ca_path = fields[2].to_owned();

    let mut cfg = FetcherConfig::default();
    cfg.pool.max_idle_per_host = PLAIN_CONNECTIONS + 10;
    cfg.pool.max_idle_total = PLAIN_CONNECTIONS + TLS_CONNECTIONS + 10;
    cfg.tls.ca_files.push(ca_path.into());
    cfg.dns
        .overrides
        .push(trawl::net::parse_resolve(&format!("localhost:{plain_port}:127.0.0.1")).expect("r"));
    cfg.dns
        .overrides
        .push(trawl::net::parse_resolve(&format!("localhost:{tls_port}:127.0.0.1")).expect("r"));
    let mut fetcher = Fetcher::new(cfg).expect("fetcher");
    let plain_kib = measure(&mut fetcher, "http", plain_port, PLAIN_CONNECTIONS);
    let tls_kib = measure(&mut fetcher, "https", tls_port, TLS_CONNECTIONS);
    eprintln!(
        "idle connection memory: plain {plain_kib:.1} KiB ({PLAIN_CONNECTIONS} conns), \
         tls {tls_kib:.1} KiB ({TLS_CONNECTIONS} conns)"
    );
    drop(child.stdin.take());
    let _ = child.wait();
    assert!(
        plain_kib <= 16.0,
        "plain idle connection costs {plain_kib:.1} KiB"
    );
    assert!(
        tls_kib <= 64.0,
        "tls idle connection costs {tls_kib:.1} KiB"
    );
}
