//! HTTPS against a rustls server with a test CA made by rcgen: works with the CA, a TLS
//! outcome without it, and only with the dangerous switch when verification is skipped.

mod support;

use std::time::Duration;

use trawl::net::{FailReason, FetchLimits, Fetcher};

use support::{fast_config, fetch_one, tls_keep_alive_server, tls_materials};

const BOUND: Duration = Duration::from_secs(5);

#[test]
fn https_with_and_without_the_ca() {
    let (ca_pem, server_config) = tls_materials();
    let server = tls_keep_alive_server(server_config);
    let dir = tempfile::tempdir().expect("tempdir");
    let ca_path = dir.path().join("ca.pem");
    std::fs::write(&ca_path, ca_pem).expect("write ca");
    let port = server.addr.port();
    let url = |host: &str, path: &str| {
        url::Url::parse(&format!("https://{host}:{port}{path}")).expect("url")
    };

    // With the CA: works, by name (SNI, via --resolve) and by IP address.
    let mut cfg = fast_config();
    cfg.tls.ca_files.push(ca_path.clone());
    cfg.dns
        .overrides
        .push(trawl::net::parse_resolve(&format!("synth.test:{port}:127.0.0.1")).expect("resolve"));
    let mut fetcher = Fetcher::new(cfg.clone()).expect("fetcher");
    let o = fetch_one(
        &mut fetcher,
        url("synth.test", "/a"),
        FetchLimits::default(),
        BOUND,
    );
    assert!(o.is_ok(), "{o:?}");
    assert_eq!(o.body, b"/a");
    assert!(o.timings.tls.is_some());
    let o = fetch_one(
        &mut fetcher,
        url("synth.test", "/b"),
        FetchLimits::default(),
        BOUND,
    );
    assert!(o.is_ok() && o.reused_connection, "{o:?}");
    let o = fetch_one(
        &mut fetcher,
        url("127.0.0.1", "/ip"),
        FetchLimits::default(),
        BOUND,
    );
    assert!(o.is_ok(), "{o:?}");
    assert_eq!(server.accepts(), 2);
    drop(fetcher);

    // Session resumption: with pooling off every fetch opens a fresh connection; the
    // fetcher's shared session cache makes the second handshake a resumption.
    let mut cfg_fresh = cfg.clone();
    cfg_fresh.pool.max_idle_per_host = 0;
    let mut fetcher = Fetcher::new(cfg_fresh).expect("fetcher");
    let first = fetch_one(
        &mut fetcher,
        url("synth.test", "/r1"),
        FetchLimits::default(),
        BOUND,
    );
    let second = fetch_one(
        &mut fetcher,
        url("synth.test", "/r2"),
        FetchLimits::default(),
        BOUND,
    );
    assert!(first.is_ok() && !first.tls_resumed, "{first:?}");
    assert!(second.is_ok() && !second.reused_connection, "{second:?}");
    assert!(
        second.tls_resumed,
        "second handshake did not resume: {second:?}"
    );

    // A name the certificate does not cover: TLS outcome.
    let mut cfg_bad_name = cfg.clone();
    cfg_bad_name
        .dns
        .overrides
        .push(trawl::net::parse_resolve(&format!("other.test:{port}:127.0.0.1")).expect("resolve"));
    let mut fetcher = Fetcher::new(cfg_bad_name).expect("fetcher");
    let o = fetch_one(
        &mut fetcher,
        url("other.test", "/"),
        FetchLimits::default(),
        BOUND,
    );
    assert!(matches!(o.error, Some(FailReason::Tls(_))), "{o:?}");

    // Without the CA: TLS outcome (unknown issuer).
    let mut cfg_no_ca = fast_config();
    cfg_no_ca.dns.overrides = cfg.dns.overrides.clone();
    let mut fetcher = Fetcher::new(cfg_no_ca.clone()).expect("fetcher");
    let o = fetch_one(
        &mut fetcher,
        url("synth.test", "/"),
        FetchLimits::default(),
        BOUND,
    );
    match &o.error {
        Some(FailReason::Tls(msg)) => assert!(msg.contains("UnknownIssuer"), "{msg}"),
        other => panic!("expected a tls outcome, got {other:?}"),
    }

    // The dangerous switch accepts it.
    cfg_no_ca.tls.dangerous().set_skip_verification(true);
    let mut fetcher = Fetcher::new(cfg_no_ca).expect("fetcher");
    let o = fetch_one(
        &mut fetcher,
        url("synth.test", "/d"),
        FetchLimits::default(),
        BOUND,
    );
    assert!(o.is_ok(), "{o:?}");
}

#[test]
fn plain_http_server_answering_tls_is_a_tls_outcome() {
    let server = support::ScriptServer::start(|mut s, _| {
        let _ = std::io::Read::read(&mut s, &mut [0u8; 512]);
        support::send(&mut s, b"HTTP/1.1 400 Bad Request\r\n\r\n");
    });
    let mut fetcher = Fetcher::new(fast_config()).expect("fetcher");
    let url = url::Url::parse(&format!("https://127.0.0.1:{}/", server.addr.port())).expect("url");
    let o = fetch_one(&mut fetcher, url, FetchLimits::default(), BOUND);
    assert!(matches!(o.error, Some(FailReason::Tls(_))), "{o:?}");
}
