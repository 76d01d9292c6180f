//! The loop around the phases: what happens before any socket exists.

use std::net::TcpListener;
use std::time::Duration;

use super::*;

#[test]
fn a_blocked_address_is_refused_without_connecting() {
    // A real listener on loopback: had the fetcher connected, it would sit in the
    // accept queue.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let cfg = FetcherConfig {
        allow_private_addresses: false,
        ..FetcherConfig::default()
    };
    let mut fetcher = Fetcher::new(cfg).unwrap();
    let url = url::Url::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
    fetcher.submit(FetchRequest::get(9, url, "trawl-test".into()));
    let mut outcomes = Vec::new();
    fetcher
        .run_until_idle(Duration::from_secs(10), |o| outcomes.push(o))
        .unwrap();
    assert_eq!(outcomes.len(), 1);
    let o = &outcomes[0];
    assert_eq!(o.id, 9);
    assert!(
        matches!(o.error, Some(FailReason::BlockedAddress)),
        "{:?}",
        o.error
    );
    assert_eq!(
        o.peer.map(|p| p.port()),
        Some(port),
        "the refused address is reported"
    );
    assert_eq!(fetcher.stats().connections_opened, 0);
    assert_eq!(fetcher.open_connections(), 0);
    assert!(
        matches!(listener.accept(), Err(e) if e.kind() == io::ErrorKind::WouldBlock),
        "nothing connected to the listener"
    );
}

#[test]
fn an_unsupported_scheme_fails_at_submit_and_comes_out_of_the_next_poll() {
    let mut fetcher = Fetcher::new(FetcherConfig::default()).unwrap();
    let url = url::Url::parse("ftp://example.org/file").unwrap();
    fetcher.submit(FetchRequest::get(1, url, "trawl-test".into()));
    assert_eq!(fetcher.in_flight(), 0);
    let mut out = Vec::new();
    fetcher.poll(&mut out, Some(Duration::ZERO)).unwrap();
    assert_eq!(out.len(), 1);
    assert!(matches!(out[0].error, Some(FailReason::InvalidUrl(_))));
    assert_eq!(fetcher.stats().connections_opened, 0);
}

/// A loopback server that accepts `fetches` requests, then writes every response
/// (`Connection: close`, a body of `body_bytes`) before the client reads any: they are
/// all ready at once. Joined, it returns the streams (kept open until then).
fn ready_at_once(
    fetches: u64,
    body_bytes: usize,
) -> (u16, std::thread::JoinHandle<Vec<std::net::TcpStream>>) {
    use std::io::{Read, Write};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let mut streams = Vec::new();
        for _ in 0..fetches {
            let (mut s, _) = listener.accept().unwrap();
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                s.read_exact(&mut byte).unwrap();
                head.push(byte[0]);
            }
            streams.push(s);
        }
        let body = vec![b'x'; body_bytes];
        for s in &mut streams {
            write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Length: {body_bytes}\r\nConnection: close\r\n\r\n"
            )
            .unwrap();
            s.write_all(&body).unwrap();
        }
        streams
    });
    (port, server)
}

/// Submits `fetches` requests to `port` and polls until all finish (or 20 s pass),
/// `pause` apart once the first has; checks that no poll hands back more than
/// `max_per_poll` and returns the outcomes.
fn poll_all(
    fetcher: &mut Fetcher,
    port: u16,
    fetches: u64,
    pause: Duration,
    max_per_poll: usize,
) -> Vec<FetchOutcome> {
    for id in 0..fetches {
        let url = url::Url::parse(&format!("http://127.0.0.1:{port}/{id}")).unwrap();
        fetcher.submit(FetchRequest::get(id, url, "trawl-test".into()));
    }
    let mut all = Vec::new();
    let mut out = Vec::new();
    let end = std::time::Instant::now() + Duration::from_secs(20);
    while (all.len() as u64) < fetches && std::time::Instant::now() < end {
        fetcher
            .poll(&mut out, Some(Duration::from_millis(50)))
            .unwrap();
        assert!(
            out.len() <= max_per_poll,
            "{} finished fetches in one poll",
            out.len()
        );
        all.append(&mut out);
        if !all.is_empty() {
            std::thread::sleep(pause);
        }
    }
    all
}

/// Past `max_done_bytes` of finished bodies, the connections still ready wait for the
/// next poll: with a cap of one byte, every poll hands back at most one finished
/// fetch, and every fetch still finishes, each once.
#[test]
fn a_poll_hands_back_finished_bodies_up_to_its_cap_and_the_rest_later() {
    const FETCHES: u64 = 8;
    let (port, server) = ready_at_once(FETCHES, 10_000);
    let cfg = FetcherConfig {
        max_done_bytes: 1,
        ..FetcherConfig::default()
    };
    let mut fetcher = Fetcher::new(cfg).unwrap();
    let outcomes = poll_all(&mut fetcher, port, FETCHES, Duration::ZERO, 1);
    drop(server.join().unwrap());
    let mut ids: Vec<u64> = outcomes
        .iter()
        .map(|o| {
            assert!(o.error.is_none(), "{:?}", o.error);
            assert_eq!(o.body.len(), 10_000);
            o.id
        })
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..FETCHES).collect::<Vec<_>>());
}

/// A connection whose readiness a poll deferred is not timed out for the wait: once
/// the responses are in, the caller polls 400 ms apart, past a 300 ms deadline; the
/// server is not slow, and every fetch succeeds.
#[test]
fn a_deferred_connection_is_not_timed_out_for_our_wait() {
    const FETCHES: u64 = 6;
    let (port, server) = ready_at_once(FETCHES, 10_000);
    let mut cfg = FetcherConfig {
        max_done_bytes: 1,
        ..FetcherConfig::default()
    };
    cfg.deadlines.total_timeout = Duration::from_millis(300);
    cfg.deadlines.read_idle_timeout = Duration::from_millis(300);
    let mut fetcher = Fetcher::new(cfg).unwrap();
    let outcomes = poll_all(&mut fetcher, port, FETCHES, Duration::from_millis(400), 1);
    drop(server.join().unwrap());
    assert_eq!(outcomes.len() as u64, FETCHES);
    assert!(
        outcomes.iter().all(|o| o.error.is_none()),
        "{:?}",
        outcomes.iter().map(|o| &o.error).collect::<Vec<_>>()
    );
}
