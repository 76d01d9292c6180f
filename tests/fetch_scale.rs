//! One event loop holds 5,000 simultaneous connections.

mod support;

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use trawl::fetch::FetchRequest;
use trawl::net::{Fetcher, FetcherConfig};

use support::read_head;

const CONNECTIONS: usize = 5_000;
/// Several listeners, so the 128-entry accept backlog of each is not a bottleneck.
const LISTENERS: usize = 10;

#[test]
fn five_thousand_simultaneous_connections_in_one_loop() {
    let limit = rlimit::increase_nofile_limit(3 * CONNECTIONS as u64 + 1000).expect("rlimit");
    if limit < 2 * CONNECTIONS as u64 + 200 {
        eprintln!(
            "skipped: RLIMIT_NOFILE hard limit {limit} is too low for {CONNECTIONS} connections"
        );
        return;
    }
    let accepted: Arc<Mutex<Vec<TcpStream>>> = Arc::new(Mutex::new(Vec::new()));
    let count = Arc::new(AtomicUsize::new(0));
    let go = Arc::new(AtomicBool::new(false));
    let mut ports = Vec::new();
    for _ in 0..LISTENERS {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        ports.push(listener.local_addr().expect("addr").port());
        let (accepted, count) = (Arc::clone(&accepted), Arc::clone(&count));
        std::thread::spawn(move || {
            for s in listener.incoming().flatten() {
                accepted.lock().expect("lock").push(s);
                if count.fetch_add(1, Ordering::SeqCst) + 1 >= CONNECTIONS {
                    // Keep accepting would only matter for a broken client.
                }
            }
        });
    }
    {
        let (accepted, go) = (Arc::clone(&accepted), Arc::clone(&go));
        std::thread::spawn(move || {
            while !go.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(10));
            }
            let streams = std::mem::take(&mut *accepted.lock().expect("lock"));
            for mut s in streams {
                if read_head(&mut s).is_some() {
                    let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
                }
            }
        });
    }

    let mut cfg = FetcherConfig {
        max_connections: CONNECTIONS + 100,
        ..FetcherConfig::default()
    };
    cfg.pool.max_idle_per_host = 16;
    let mut fetcher = Fetcher::new(cfg).expect("fetcher");
    let start = Instant::now();
    for i in 0..CONNECTIONS {
        let port = ports[i % LISTENERS];
        let url = url::Url::parse(&format!("http://127.0.0.1:{port}/{i}")).expect("url");
        fetcher.submit(FetchRequest::get(i as u64, url, "trawl-test/1".into()));
    }
    let mut out = Vec::new();
    let mut max_open = 0;
    while count.load(Ordering::SeqCst) < CONNECTIONS {
        assert!(
            start.elapsed() < Duration::from_secs(40),
            "accepted {}",
            count.load(Ordering::SeqCst)
        );
        fetcher
            .poll(&mut out, Some(Duration::from_millis(20)))
            .expect("poll");
        assert!(out.is_empty(), "early outcome: {:?}", out.first());
        max_open = max_open.max(fetcher.open_connections());
    }
    // Every connection is open at once, each waiting for its response.
    max_open = max_open.max(fetcher.open_connections());
    assert_eq!(fetcher.open_connections(), CONNECTIONS);
    assert_eq!(fetcher.in_flight(), CONNECTIONS);
    let connected_after = start.elapsed();
    go.store(true, Ordering::SeqCst);
    let mut ok = 0;
    fetcher
        .run_until_idle(Duration::from_secs(40), |o| {
            assert!(o.is_ok(), "{o:?}");
            assert_eq!(o.body, b"ok");
            ok += 1;
        })
        .expect("poll");
    eprintln!(
        "{CONNECTIONS} connections open after {connected_after:?}, all answered after {:?}",
        start.elapsed()
    );
    assert_eq!(ok, CONNECTIONS);
    assert_eq!(max_open, CONNECTIONS);
    assert!(fetcher.open_connections() <= 16 * LISTENERS);
}
