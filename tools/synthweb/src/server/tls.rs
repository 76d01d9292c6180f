//! TLS for `--tls`: a CA generated at start-up (rcgen), one wildcard leaf certificate for
//! `*.synth.test`, and the two hostile TLS hosts: one whose handshake fails (the resolver
//! has no certificate for its name, so rustls aborts with a handshake_failure alert) and
//! one served a certificate that expired on 2001-01-01.

use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

/// Generated key material.
pub struct TlsMaterial {
    /// PEM of the CA certificate (what `--ca-out` writes).
    pub ca_pem: String,
    /// The server configuration.
    pub config: Arc<rustls::ServerConfig>,
}

/// A failure to build TLS material.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// rcgen failed.
    #[error("certificate generation failed")]
    Rcgen(#[from] rcgen::Error),
    /// rustls rejected the key or config.
    #[error("tls configuration failed")]
    Rustls(#[from] rustls::Error),
}

#[derive(Debug)]
struct Resolver {
    normal: Arc<CertifiedKey>,
    expired: Arc<CertifiedKey>,
    fail_name: Option<String>,
    expired_name: Option<String>,
}

impl ResolvesServerCert for Resolver {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let sni = hello.server_name().map(str::to_ascii_lowercase);
        match sni {
            Some(n) if self.fail_name.as_deref() == Some(n.as_str()) => None,
            Some(n) if self.expired_name.as_deref() == Some(n.as_str()) => {
                Some(self.expired.clone())
            }
            _ => Some(self.normal.clone()),
        }
    }
}

fn leaf(
    names: Vec<String>,
    expired: bool,
    ca: &rcgen::Certificate,
    ca_key: &KeyPair,
    provider: &rustls::crypto::CryptoProvider,
) -> Result<Arc<CertifiedKey>, TlsError> {
    let mut p = CertificateParams::new(names)?;
    p.distinguished_name
        .push(DnType::CommonName, "synthweb host");
    p.is_ca = IsCa::NoCa;
    p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    p.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    if expired {
        p.not_before = rcgen::date_time_ymd(2000, 1, 1);
        p.not_after = rcgen::date_time_ymd(2001, 1, 1);
    } else {
        p.not_before = rcgen::date_time_ymd(2020, 1, 1);
        p.not_after = rcgen::date_time_ymd(2099, 1, 1);
    }
    let key = KeyPair::generate()?;
    let cert = p.signed_by(&key, ca, ca_key)?;
    let der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let signing = provider.key_provider.load_private_key(der)?;
    let chain: Vec<CertificateDer<'static>> = vec![cert.der().clone()];
    Ok(Arc::new(CertifiedKey::new(chain, signing)))
}

/// Generate a CA and leaf certificates. `fail_name` / `expired_name` are the host names
/// of the hostile TLS hosts (when the hostile profile is on).
///
/// # Errors
/// [`TlsError`] if generation or configuration fails.
pub fn generate(
    fail_name: Option<String>,
    expired_name: Option<String>,
) -> Result<TlsMaterial, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "synthweb test CA");
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    ca_params.not_before = rcgen::date_time_ymd(2000, 1, 1);
    ca_params.not_after = rcgen::date_time_ymd(2099, 1, 1);
    let ca_key = KeyPair::generate()?;
    let ca = ca_params.self_signed(&ca_key)?;
    let normal = leaf(
        vec![
            format!("*.{}", crate::hosts::DOMAIN),
            crate::hosts::DOMAIN.to_owned(),
        ],
        false,
        &ca,
        &ca_key,
        &provider,
    )?;
    let expired = leaf(
        vec![expired_name
            .clone()
            .unwrap_or_else(|| format!("expired.{}", crate::hosts::DOMAIN))],
        true,
        &ca,
        &ca_key,
        &provider,
    )?;
    let resolver = Resolver {
        normal,
        expired,
        fail_name,
        expired_name,
    };
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(resolver));
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsMaterial {
        ca_pem: ca.pem(),
        config: Arc::new(config),
    })
}
