//! TLS client configuration for the fetcher: rustls with the *ring* provider.
//!
//! One [`TlsClient`] is built per fetcher (per shard) and shared by all its connections,
//! so the session cache inside it gives TLS session resumption across connections to the
//! same host (TLS 1.3 tickets and TLS 1.2 session ids). Trust comes from the Mozilla root
//! set compiled in by `webpki-roots`, plus any extra CA given with `--ca-file` (synthweb's
//! test CA). Skipping verification is possible only through [`TlsConfig::dangerous`], an
//! explicitly named switch that is off by default, in the spirit of rustls' own
//! `dangerous()` API.
//!
//! Sockets are not touched here: `src/net/` drives the `rustls::ClientConnection`
//! (`read_tls` / `process_new_packets` / `write_tls`) from its event loop.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{Resumption, WebPkiServerVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore, SignatureScheme,
};

/// ALPN protocol we offer: trawl speaks HTTP/1.1 only.
const ALPN_HTTP11: &[u8] = b"http/1.1";

/// What the operator asked for; turned into a [`TlsClient`] by [`TlsClient::new`].
#[derive(Clone, Debug)]
pub struct TlsConfig {
    /// Trust the Mozilla root program (webpki-roots). On by default.
    pub use_webpki_roots: bool,
    /// Extra PEM files whose certificates are trusted as roots (`--ca-file`).
    pub ca_files: Vec<PathBuf>,
    /// How many TLS sessions to remember for resumption (shared by every connection of
    /// the fetcher). Bounded: rustls evicts the oldest beyond this count.
    pub session_cache_entries: usize,
    dangerous: DangerousTlsConfig,
}

/// Options that weaken security. Reached only through [`TlsConfig::dangerous`].
#[derive(Clone, Debug, Default)]
pub struct DangerousTlsConfig {
    skip_verification: bool,
}

impl DangerousTlsConfig {
    /// Accept any server certificate for any name. Off by default; for test rigs only.
    pub fn set_skip_verification(&mut self, skip: bool) {
        self.skip_verification = skip;
    }

    /// Whether certificate verification is skipped.
    pub fn is_skip_verification(&self) -> bool {
        self.skip_verification
    }
}

impl Default for TlsConfig {
    fn default() -> Self {
        Self {
            use_webpki_roots: true,
            ca_files: Vec::new(),
            session_cache_entries: 256,
            dangerous: DangerousTlsConfig::default(),
        }
    }
}

impl TlsConfig {
    /// The options that weaken security, named so that using them is visible in review.
    pub fn dangerous(&mut self) -> &mut DangerousTlsConfig {
        &mut self.dangerous
    }

    /// Read-only view of the dangerous options.
    pub fn dangerous_ref(&self) -> &DangerousTlsConfig {
        &self.dangerous
    }
}

/// Why a TLS client configuration could not be built.
#[derive(Debug)]
pub enum TlsSetupError {
    /// A `--ca-file` could not be read or holds no usable certificate.
    CaFile {
        /// The file named by the operator.
        path: PathBuf,
        /// What went wrong with it.
        detail: String,
    },
    /// rustls refused the configuration (e.g. no protocol version available).
    Rustls(rustls::Error),
}

impl fmt::Display for TlsSetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::CaFile { path, detail } => write!(f, "ca file {}: {detail}", path.display()),
            Self::Rustls(_) => f.write_str("tls configuration rejected"),
        }
    }
}

impl std::error::Error for TlsSetupError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Rustls(e) => Some(e),
            Self::CaFile { .. } => None,
        }
    }
}

/// A ready client configuration, cheap to clone (one `Arc`), shared by all connections.
#[derive(Clone)]
pub struct TlsClient {
    config: Arc<ClientConfig>,
    /// The verifier the handshakes use, kept to check a live connection's certificate
    /// against another name ([`TlsClient::certificate_covers`]).
    verifier: Option<Arc<dyn ServerCertVerifier>>,
}

impl fmt::Debug for TlsClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsClient").finish_non_exhaustive()
    }
}

impl TlsClient {
    /// Builds the rustls configuration: roots, ALPN `http/1.1`, session resumption.
    ///
    /// # Errors
    /// A CA file that cannot be read or parsed, or a configuration rustls rejects.
    pub fn new(cfg: &TlsConfig) -> Result<Self, TlsSetupError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = RootCertStore::empty();
        if cfg.use_webpki_roots {
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        }
        for path in &cfg.ca_files {
            add_ca_file(&mut roots, path)?;
        }
        let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(TlsSetupError::Rustls)?;
        let verifier: Option<Arc<dyn ServerCertVerifier>> = if cfg.dangerous.skip_verification {
            Some(Arc::new(NoVerification {
                provider: Arc::clone(&provider),
            }))
        } else if roots.is_empty() {
            None // nothing can verify; rustls then fails every handshake as before
        } else {
            // The verifier `with_root_certificates` would build, but kept by us.
            let v = WebPkiServerVerifier::builder_with_provider(Arc::new(roots.clone()), provider)
                .build()
                .map_err(|e| TlsSetupError::Rustls(rustls::Error::General(e.to_string())))?;
            Some(v)
        };
        let mut config = match &verifier {
            Some(v) => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::clone(v))
                .with_no_client_auth(),
            None => builder.with_root_certificates(roots).with_no_client_auth(),
        };
        config.alpn_protocols = vec![ALPN_HTTP11.to_vec()];
        config.resumption = Resumption::in_memory_sessions(cfg.session_cache_entries.max(1));
        Ok(Self {
            config: Arc::new(config),
            verifier,
        })
    }

    /// Whether the certificate `conn` was given in its handshake is valid for `host`
    /// too, checked now by the same verifier (chain, expiry, name). Lets a connection
    /// opened for one name carry a request for another name the certificate covers.
    pub fn certificate_covers(&self, conn: &ClientConnection, host: &str) -> bool {
        let Some((end_entity, intermediates)) = conn
            .peer_certificates()
            .and_then(<[CertificateDer<'static>]>::split_first)
        else {
            return false;
        };
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        let (Ok(name), Some(verifier)) = (ServerName::try_from(host.to_owned()), &self.verifier)
        else {
            return false;
        };
        verifier
            .verify_server_cert(end_entity, intermediates, &name, &[], UnixTime::now())
            .is_ok()
    }

    /// Starts a client session for `host` (SNI is sent for DNS names; for IP literals
    /// rustls verifies the address against the certificate and sends no SNI).
    ///
    /// # Errors
    /// A host that is not a valid server name, or a rustls failure.
    pub fn connect(&self, host: &str) -> Result<ClientConnection, rustls::Error> {
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        let name = ServerName::try_from(host.to_owned())
            .map_err(|_| rustls::Error::General("invalid server name".into()))?;
        ClientConnection::new(Arc::clone(&self.config), name)
    }
}

fn add_ca_file(roots: &mut RootCertStore, path: &Path) -> Result<(), TlsSetupError> {
    let err = |detail: String| TlsSetupError::CaFile {
        path: path.to_owned(),
        detail,
    };
    let iter = CertificateDer::pem_file_iter(path).map_err(|e| err(e.to_string()))?;
    let mut added = 0usize;
    for cert in iter {
        let cert = cert.map_err(|e| err(e.to_string()))?;
        roots.add(cert).map_err(|e| err(e.to_string()))?;
        added += 1;
    }
    if added == 0 {
        return Err(err("no certificate found".into()));
    }
    Ok(())
}

/// The verifier behind `dangerous().set_skip_verification(true)`: accepts every
/// certificate, but still checks handshake signatures so the TLS session is well formed.
#[derive(Debug)]
struct NoVerification {
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_config_builds_and_verifies() {
        let cfg = TlsConfig::default();
        assert!(!cfg.dangerous_ref().is_skip_verification());
        let client = TlsClient::new(&cfg).unwrap();
        let conn = client.connect("example.org").unwrap();
        assert!(conn.is_handshaking());
    }

    #[test]
    fn ip_literal_and_bracketed_ipv6_are_server_names() {
        let client = TlsClient::new(&TlsConfig::default()).unwrap();
        assert!(client.connect("127.0.0.1").is_ok());
        assert!(client.connect("[::1]").is_ok());
    }

    #[test]
    fn missing_ca_file_is_a_typed_error() {
        let mut cfg = TlsConfig::default();
        cfg.ca_files.push("/nonexistent/ca.pem".into());
        assert!(matches!(
            TlsClient::new(&cfg),
            Err(TlsSetupError::CaFile { .. })
        ));
    }
}
