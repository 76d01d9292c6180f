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
