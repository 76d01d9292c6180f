//! Memory stays flat across 100 rounds of hostile servers (VmRSS). Alone in its own test
//! binary: VmRSS is per process, and other tests running in parallel threads would
//! disturb it.

mod support;

use std::io::Write;
use std::time::Duration;

use trawl::fetch::FetchLimits;
use trawl::net::Fetcher;

use support::{fast_config, fetch_one, read_head, send, vm_rss_kib, ScriptServer};

const BOUND: Duration = Duration::from_secs(5);

fn gzip_bomb() -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..64 {
        enc.write_all(&zeros).expect("gzip");
    }
    enc.finish().expect("gzip")
}

/// One server plays every hostile behaviour in turn (by connection number); the same
/// fetcher fetches them 100 times over. RSS must stay flat: no buffer, timer or slot leaks.
#[test]
fn memory_flat_across_100_rounds() {
    let bomb = gzip_bomb();
    let behaviours: usize = 6;
    let server = ScriptServer::start(move |mut s, n| match n % 6 {
        0 => {
            if read_head(&mut s).is_some() {
                send(
                    &mut s,
                    b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nshort",
                );
            }
        }
        1 => {
            let _ = read_head(&mut s);
        }
        2 => {
            if read_head(&mut s).is_some() {
                send(
                    &mut s,
                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                );
            }
        }
        3 => {
            if read_head(&mut s).is_some() {
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
                    bomb.len()
                );
                send(&mut s, head.as_bytes());
                send(&mut s, &bomb);
            }
        }
        4 => {
            if read_head(&mut s).is_some() {
                send(&mut s, b"not http at all\r\n\r\n");
            }
        }
        _ => {
            if read_head(&mut s).is_some() {
                let mut head = b"HTTP/1.1 200 OK\r\n".to_vec();
                head.extend(std::iter::repeat_n(b'h', 200 * 1024));
                send(&mut s, &head);
            }
        }
    });
    let mut fetcher = Fetcher::new(fast_config()).expect("fetcher");
    let mut limits = FetchLimits::default();
    // A smaller decode cap keeps 100 bombs quick in debug builds; the cap path is the same.
    limits.decode.max_decoded_bytes = 4 << 20;
    let mut rss_after_warmup = 0;
    for round in 0..100 {
        for _ in 0..behaviours {
            let o = fetch_one(&mut fetcher, server.url("/"), limits, BOUND);
            assert!(o.error.is_some(), "{o:?}");
        }
        if round == 9 {
            rss_after_warmup = vm_rss_kib();
        }
    }
    let rss_end = vm_rss_kib();
    eprintln!("rss after 10 rounds {rss_after_warmup} KiB, after 100 rounds {rss_end} KiB");
    assert_eq!(fetcher.open_connections(), 0);
    assert!(
        rss_end <= rss_after_warmup + 8 * 1024,
        "rss grew from {rss_after_warmup} KiB to {rss_end} KiB"
    );
}
