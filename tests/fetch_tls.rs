//! HTTPS against a rustls server with a test CA made by rcgen: works with the CA, a TLS
//! outcome without it, and only with the dangerous switch when verification is skipped.

mod support;

use std::time::Duration;

use trawl::fetch::{FailReason, FetchLimits};
use trawl::net::Fetcher;

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

/// A fetcher trusting the test CA, with a per-IP cap of 1 and `names` resolving to
/// 127.0.0.1 on `port`.
fn capped_https_fetcher(ca_pem: &str, port: u16, names: &[&str]) -> (Fetcher, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let ca_path = dir.path().join("ca.pem");
    std::fs::write(&ca_path, ca_pem).expect("write ca");
    let mut cfg = fast_config();
    cfg.tls.ca_files.push(ca_path);
    cfg.ip_slots = Some(trawl::net::IpSlots::new(1));
    for name in names {
        cfg.dns
            .overrides
            .push(trawl::net::parse_resolve(&format!("{name}:{port}:127.0.0.1")).expect("resolve"));
    }
    (Fetcher::new(cfg).expect("fetcher"), dir)
}

#[test]
fn an_https_connection_serves_another_name_only_if_its_certificate_covers_it() {
    // The test certificate covers localhost and synth.test, not other.test.
    let (ca_pem, server_config) = tls_materials();
    let server = tls_keep_alive_server(server_config);
    let port = server.addr.port();
    let (mut fetcher, _dir) =
        capped_https_fetcher(&ca_pem, port, &["synth.test", "localhost", "other.test"]);
    let get = |f: &mut Fetcher, host: &str, path: &str| {
        let url = url::Url::parse(&format!("https://{host}:{port}{path}")).expect("url");
        fetch_one(f, url, FetchLimits::default(), BOUND)
    };
    let a = get(&mut fetcher, "synth.test", "/a");
    assert!(a.is_ok(), "{a:?}");
    let b = get(&mut fetcher, "localhost", "/b");
    assert!(b.is_ok() && b.reused_connection, "{b:?}");
    assert_eq!(b.body, b"/b");
    assert_eq!(
        server.accepts(),
        1,
        "localhost rode on synth.test's connection"
    );
    assert_eq!(fetcher.stats().shared_host_reuses, 1);
    // other.test: the certificate does not cover it, so it cannot ride; the idle
    // connection yields and a new one fails verification, as it must.
    let c = get(&mut fetcher, "other.test", "/c");
    assert!(matches!(c.error, Some(FailReason::Tls(_))), "{c:?}");
    assert_eq!(server.accepts(), 2);
    assert_eq!(fetcher.stats().shared_host_reuses, 1);
}

#[test]
fn a_421_on_a_shared_https_connection_is_retried_on_a_fresh_one() {
    // A server that, like many CDNs, answers 421 when Host is not the SNI name.
    use std::io::{Read, Write};
    let (ca_pem, server_config) = tls_materials();
    let server = support::ScriptServer::start(move |s, _| {
        let Ok(conn) = rustls::ServerConnection::new(std::sync::Arc::clone(&server_config)) else {
            return;
        };
        let mut tls = rustls::StreamOwned::new(conn, s);
        let mut byte = [0u8; 1];
        loop {
            let mut buf = Vec::new();
            while !buf.ends_with(b"\r\n\r\n") {
                match tls.read(&mut byte) {
                    Ok(1) => buf.push(byte[0]),
                    _ => return,
                }
            }
            let text = String::from_utf8_lossy(&buf).to_lowercase();
            let host = text
                .lines()
                .find_map(|l| l.strip_prefix("host: "))
                .and_then(|h| h.split(':').next())
                .unwrap_or_default()
                .to_owned();
            let sni = tls.conn.server_name().unwrap_or_default().to_owned();
            let resp = if host == sni {
                "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
            } else {
                "HTTP/1.1 421 Misdirected Request\r\nContent-Length: 0\r\n\r\n"
            };
            if tls
                .write_all(resp.as_bytes())
                .and_then(|()| tls.flush())
                .is_err()
            {
                return;
            }
        }
    });
    let port = server.addr.port();
    let (mut fetcher, _dir) = capped_https_fetcher(&ca_pem, port, &["synth.test", "localhost"]);
    let get = |f: &mut Fetcher, host: &str| {
        let url = url::Url::parse(&format!("https://{host}:{port}/")).expect("url");
        fetch_one(f, url, FetchLimits::default(), BOUND)
    };
    assert!(get(&mut fetcher, "synth.test").is_ok());
    let b = get(&mut fetcher, "localhost");
    assert!(b.is_ok(), "{b:?}");
    assert_eq!(
        (b.status(), b.retries, b.reused_connection),
        (Some(200), 1, false)
    );
    assert_eq!(server.accepts(), 2);
    let s = fetcher.stats();
    assert_eq!((s.shared_host_reuses, s.retries), (1, 1));
}
