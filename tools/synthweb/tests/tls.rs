//! `--tls`: the generated CA works for ordinary hosts; the two hostile TLS hosts fail.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failure is a test failure"
)]

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use common::{parse, Server};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};

fn client(ca_pem: &[u8]) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(ca_pem) {
        roots.add(c.unwrap()).unwrap();
    }
    Arc::new(
        rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth(),
    )
}

fn https_get(
    cfg: &Arc<rustls::ClientConfig>,
    port: u16,
    host: &str,
) -> Result<Vec<u8>, std::io::Error> {
    let name = ServerName::try_from(host.to_owned()).unwrap();
    let mut conn = rustls::ClientConnection::new(cfg.clone(), name).unwrap();
    let mut sock = TcpStream::connect(("127.0.0.1", port))?;
    sock.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut tls = rustls::Stream::new(&mut conn, &mut sock);
    tls.write_all(
        format!("GET / HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n").as_bytes(),
    )?;
    let mut out = Vec::new();
    match tls.read_to_end(&mut out) {
        Ok(_) => Ok(out),
        // Some servers close without close_notify; we send it, so this is an error here.
        Err(e) => Err(e),
    }
}

#[test]
fn tls_with_generated_ca_and_hostile_tls_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let ca_path = dir.path().join("ca.pem");
    let ca_arg = ca_path.to_str().unwrap().to_owned();
    let srv = Server::start(&[
        "--hosts",
        "30",
        "--profile",
        "hostile",
        "--tls",
        "--ca-out",
        &ca_arg,
    ]);
    let port = srv.tls_port.unwrap();
    let cfg = client(&std::fs::read(&ca_path).unwrap());

    let ok = https_get(&cfg, port, "h000000.synth.test").unwrap();
    let p = parse(&ok);
    assert_eq!(p.status, 200);
    let site = common::site_for(30, "hostile", srv.http_port, srv.tls_port);
    assert_eq!(
        p.body,
        site.page(synthweb::Scheme::Https, 0, "/").response.body
    );
    assert!(
        String::from_utf8_lossy(&p.body).contains("https://h0000"),
        "absolute links use https"
    );

    let fail = https_get(&cfg, port, "h000022.synth.test").unwrap_err();
    assert!(
        format!("{fail:?}").contains("Alert") || format!("{fail:?}").contains("alert"),
        "{fail:?}"
    );
    let expired = https_get(&cfg, port, "h000023.synth.test").unwrap_err();
    assert!(format!("{expired:?}").contains("Expired"), "{expired:?}");
}
