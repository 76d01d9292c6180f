//! Bytes that must never be printed: proxy passwords and the `Proxy-Authorization`
//! line built from them (issue 29, notes §7: store where credentials come from, never
//! what they are).
//!
//! [`Secret`]'s `Debug` and `Display` print `***`, so a `{:?}` of any config that holds
//! one cannot leak it into a log, the status page or a checkpoint. The bytes are
//! reachable only through [`Secret::expose`], which the wire writers call.

use std::fmt;
use std::path::PathBuf;

/// Bytes that print as `***`. Overwritten with zeros when dropped (a best effort: copies
/// the allocator or the kernel made are out of reach).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(Box<[u8]>);

impl Secret {
    /// Wraps `bytes`.
    pub fn new(bytes: impl Into<Box<[u8]>>) -> Self {
        Self(bytes.into())
    }

    /// The bytes themselves, for the one place that writes them on the wire.
    pub fn expose(&self) -> &[u8] {
        &self.0
    }

    /// The length in bytes (not secret: RFC 1929 limits it to 255).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl Drop for Secret {
    fn drop(&mut self) {
        self.0.fill(0);
        std::hint::black_box(&self.0);
    }
}

/// Where a proxy's credentials came from: this, not the credentials, is what
/// `start.json`, the manifest and `stats.json` record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CredSource {
    /// The userinfo of a proxy URL; the string says where the URL was given (`--proxy`,
    /// `rules.txt:3`, `env:https_proxy`).
    Url(String),
    /// A `user:password` file (`--proxy-user-file`), by absolute path.
    File(PathBuf),
    /// An environment variable holding `user:password` (`--proxy-user-env`), by name.
    Env(String),
}

impl fmt::Display for CredSource {
    /// The recordable form: `url:--proxy`, `file:/abs/path`, `env:NAME`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Url(from) => write!(f, "url:{from}"),
            Self::File(path) => write!(f, "file:{}", path.display()),
            Self::Env(name) => write!(f, "env:{name}"),
        }
    }
}

/// A proxy user name and password, with where they came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Credentials {
    /// The user name. Not secret by itself, but kept out of logs all the same: `Debug`
    /// prints it, `Display` of a proxy URL does not.
    pub user: String,
    /// The password.
    pub pass: Secret,
    /// Where they came from (recorded instead of them).
    pub source: CredSource,
}

impl Credentials {
    /// The whole `Proxy-Authorization: Basic …\r\n` header line (RFC 7617), itself a
    /// secret: base64 is an encoding, not a cipher.
    pub fn basic_header(&self) -> Secret {
        let mut plain = Vec::with_capacity(self.user.len() + 1 + self.pass.len());
        plain.extend_from_slice(self.user.as_bytes());
        plain.push(b':');
        plain.extend_from_slice(self.pass.expose());
        let encoded = data_encoding::BASE64.encode(&plain);
        plain.fill(0);
        let mut line = Vec::with_capacity(encoded.len() + 30);
        line.extend_from_slice(b"Proxy-Authorization: Basic ");
        line.extend_from_slice(encoded.as_bytes());
        line.extend_from_slice(b"\r\n");
        Secret::new(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_print_stars() {
        let s = Secret::new(b"hunter2".to_vec());
        assert_eq!(format!("{s:?}"), "***");
        assert_eq!(format!("{s}"), "***");
        assert_eq!(s.expose(), b"hunter2");
        let c = Credentials {
            user: "u".into(),
            pass: s,
            source: CredSource::Env("PROXY_PASS".into()),
        };
        let shown = format!("{c:?} {:?}", c.basic_header());
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(!shown.contains("dTpodW50ZXIy"), "{shown}");
    }

    #[test]
    fn basic_header_is_rfc_7617() {
        // RFC 7617 §2's example: Aladdin / open sesame.
        let c = Credentials {
            user: "Aladdin".into(),
            pass: Secret::new(b"open sesame".to_vec()),
            source: CredSource::Url("--proxy".into()),
        };
        assert_eq!(
            c.basic_header().expose(),
            b"Proxy-Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==\r\n"
        );
    }

    #[test]
    fn sources_record_their_origin_only() {
        assert_eq!(
            CredSource::Url("env:https_proxy".into()).to_string(),
            "url:env:https_proxy"
        );
        assert_eq!(CredSource::File("/etc/p".into()).to_string(), "file:/etc/p");
        assert_eq!(CredSource::Env("P".into()).to_string(), "env:P");
    }
}
