//! Proxy URLs as curl reads them: `[scheme://][user[:password]@]host[:port][/…]`.
//!
//! No scheme means `http://`; the port defaults to 1080 (443 for `https://`), as in
//! curl; a path is ignored, as in curl. `socks4`/`socks4a` are refused (trawl speaks
//! SOCKS5 only). The user name and password are percent-decoded and kept in a
//! [`Credentials`] whose password is a [`Secret`]; [`ProxyUrl`]'s `Display` never shows
//! them, and [`redact`] turns a raw proxy string into one safe to quote in an error.

#![deny(clippy::indexing_slicing)]

use std::fmt;
use std::net::Ipv6Addr;

use super::secret::{CredSource, Credentials, Secret};

/// The longest user name or password a SOCKS5 proxy can be given (RFC 1929: one length
/// byte).
pub const MAX_SOCKS_CRED_BYTES: usize = 255;

/// The longest proxy URL read (a URL longer than this is a mistake, not a proxy).
pub const MAX_PROXY_URL_BYTES: usize = 2048;

/// The protocol spoken to a proxy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProxyKind {
    /// An HTTP proxy: absolute-form requests for `http://` origins, `CONNECT` tunnels
    /// for `https://` origins.
    Http,
    /// An HTTP proxy reached over TLS (parsed; the fetcher refuses it for now).
    Https,
    /// SOCKS5; trawl resolves the origin's name and sends the address.
    Socks5,
    /// SOCKS5; the proxy resolves the origin's name.
    Socks5h,
}

impl ProxyKind {
    /// The URL scheme.
    pub fn scheme(self) -> &'static str {
        match self {
            Self::Http => "http",
            Self::Https => "https",
            Self::Socks5 => "socks5",
            Self::Socks5h => "socks5h",
        }
    }

    /// curl's default port for the scheme.
    pub fn default_port(self) -> u16 {
        match self {
            Self::Https => 443,
            Self::Http | Self::Socks5 | Self::Socks5h => 1080,
        }
    }

    /// Whether the proxy, not trawl, resolves the origin's name (so trawl neither knows
    /// the origin's address nor can check it).
    pub fn resolves_remotely(self) -> bool {
        !matches!(self, Self::Socks5)
    }

    /// Whether this is a SOCKS5 proxy.
    pub fn is_socks(self) -> bool {
        matches!(self, Self::Socks5 | Self::Socks5h)
    }
}

/// A parsed proxy URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProxyUrl {
    /// The protocol.
    pub kind: ProxyKind,
    /// The host, lower case; an IPv6 literal without its brackets.
    pub host: String,
    /// The port.
    pub port: u16,
    /// The user name and password, when the URL had them.
    pub auth: Option<Credentials>,
}

/// Why a string is not a usable proxy URL. The message never quotes the input: callers
/// quote [`redact`]'s form of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProxyUrlError {
    /// Empty.
    #[error("empty proxy URL")]
    Empty,
    /// Over [`MAX_PROXY_URL_BYTES`].
    #[error("proxy URL longer than {MAX_PROXY_URL_BYTES} bytes")]
    TooLong,
    /// A blank or control character.
    #[error("blank or control character in proxy URL")]
    Blank,
    /// `socks4://` or `socks4a://`.
    #[error("SOCKS4 proxies are not supported (use socks5:// or socks5h://)")]
    Socks4,
    /// Another scheme.
    #[error("unknown proxy scheme (use http://, https://, socks5:// or socks5h://)")]
    Scheme,
    /// No host.
    #[error("proxy URL has no host")]
    NoHost,
    /// A character a host name cannot hold, or a bad IPv6 literal.
    #[error("bad proxy host")]
    Host,
    /// Not a number in 1..=65535.
    #[error("bad proxy port")]
    Port,
    /// A `%` not followed by two hex digits, or a user name that is not UTF-8.
    #[error("bad percent-encoding in proxy user or password")]
    Encoding,
    /// A `:` in the decoded user name (Basic authentication could not carry it).
    #[error("proxy user name contains ':'")]
    UserColon,
    /// A SOCKS5 user name that is empty or over 255 bytes, or a password over 255 bytes.
    #[error("SOCKS5 user name and password must be 1-255 and 0-255 bytes (RFC 1929)")]
    SocksCredLength,
}

impl ProxyUrl {
    /// Parses a proxy URL; `source` says where it was given, for the record of where the
    /// credentials (if any) came from.
    ///
    /// # Errors
    /// [`ProxyUrlError`] when the string is not a proxy URL trawl can use.
    pub fn parse(raw: &str, source: &str) -> Result<Self, ProxyUrlError> {
        if raw.is_empty() {
            return Err(ProxyUrlError::Empty);
        }
        if raw.len() > MAX_PROXY_URL_BYTES {
            return Err(ProxyUrlError::TooLong);
        }
        if raw.bytes().any(|b| b <= b' ' || b == 0x7f) {
            return Err(ProxyUrlError::Blank);
        }
        let (kind, rest) = match raw.split_once("://") {
            Some((scheme, rest)) => (kind_of(scheme)?, rest),
            None => (ProxyKind::Http, raw),
        };
        // curl ignores a path (and so a query or fragment) after the authority.
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let authority = rest.get(..end).unwrap_or(rest);
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let (host, port) = split_host_port(hostport)?;
        let port = match port {
            None => kind.default_port(),
            Some(p) => parse_port(p)?,
        };
        let auth = match userinfo {
            None => None,
            Some(info) => credentials(kind, info, source)?,
        };
        Ok(Self {
            kind,
            host,
            port,
            auth,
        })
    }

    /// `host:port` as it goes in a `CONNECT` line or a connect call's error: an IPv6
    /// literal in brackets.
    pub fn authority(&self) -> String {
        authority(&self.host, self.port)
    }
}

impl fmt::Display for ProxyUrl {
    /// `scheme://host:port`, never the credentials: the form used as a route's label.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.kind.scheme(), self.authority())
    }
}

/// `host:port`, with an IPv6 literal in brackets.
pub fn authority(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// A raw proxy string safe to quote in an error: everything between the scheme and the
/// last `@`, if any, becomes `***@` (wherever the `@` is: a string that failed to parse
/// may hide a password anywhere).
pub fn redact(raw: &str) -> String {
    let (scheme, rest) = match raw.split_once("://") {
        Some((s, r)) => (Some(s), r),
        None => (None, raw),
    };
    let rest = match rest.rsplit_once('@') {
        Some((_, after)) => format!("***@{after}"),
        None => rest.to_owned(),
    };
    match scheme {
        Some(s) if !s.contains('@') => format!("{s}://{rest}"),
        Some(_) => format!("***@{}", raw.rsplit_once('@').map_or("", |(_, a)| a)),
        None => rest,
    }
}

fn kind_of(scheme: &str) -> Result<ProxyKind, ProxyUrlError> {
    let scheme = scheme.to_ascii_lowercase();
    match scheme.as_str() {
        "http" => Ok(ProxyKind::Http),
        "https" => Ok(ProxyKind::Https),
        "socks5" => Ok(ProxyKind::Socks5),
        "socks5h" => Ok(ProxyKind::Socks5h),
        "socks4" | "socks4a" => Err(ProxyUrlError::Socks4),
        _ => Err(ProxyUrlError::Scheme),
    }
}

/// Splits `host[:port]` or `[v6][:port]`; the host comes back lower case, without
/// brackets.
fn split_host_port(hostport: &str) -> Result<(String, Option<&str>), ProxyUrlError> {
    if let Some(v6) = hostport.strip_prefix('[') {
        let (addr, after) = v6.split_once(']').ok_or(ProxyUrlError::Host)?;
        let ip: Ipv6Addr = addr.parse().map_err(|_| ProxyUrlError::Host)?;
        let port = match after {
            "" => None,
            _ => Some(after.strip_prefix(':').ok_or(ProxyUrlError::Host)?),
        };
        return Ok((ip.to_string(), port));
    }
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (hostport, None),
    };
    if host.is_empty() {
        return Err(ProxyUrlError::NoHost);
    }
    if !host
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
    {
        return Err(ProxyUrlError::Host);
    }
    Ok((host.to_ascii_lowercase(), port))
}

fn parse_port(p: &str) -> Result<u16, ProxyUrlError> {
    if p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ProxyUrlError::Port);
    }
    match p.parse::<u16>() {
        Ok(0) | Err(_) => Err(ProxyUrlError::Port),
        Ok(n) => Ok(n),
    }
}

fn credentials(
    kind: ProxyKind,
    userinfo: &str,
    source: &str,
) -> Result<Option<Credentials>, ProxyUrlError> {
    let (user, pass) = match userinfo.split_once(':') {
        Some((u, p)) => (u, p),
        None => (userinfo, ""),
    };
    let user =
        String::from_utf8(percent_decode(user.as_bytes())?).map_err(|_| ProxyUrlError::Encoding)?;
    let pass = Secret::new(percent_decode(pass.as_bytes())?);
    if user.is_empty() && pass.is_empty() {
        return Ok(None);
    }
    if user.contains(':') {
        return Err(ProxyUrlError::UserColon);
    }
    if kind.is_socks()
        && (user.is_empty()
            || user.len() > MAX_SOCKS_CRED_BYTES
            || pass.len() > MAX_SOCKS_CRED_BYTES)
    {
        return Err(ProxyUrlError::SocksCredLength);
    }
    Ok(Some(Credentials {
        user,
        pass,
        source: CredSource::Url(source.to_owned()),
    }))
}

fn percent_decode(s: &[u8]) -> Result<Vec<u8>, ProxyUrlError> {
    let mut out = Vec::with_capacity(s.len());
    let mut it = s.iter();
    while let Some(&b) = it.next() {
        if b != b'%' {
            out.push(b);
            continue;
        }
        let hi = it.next().and_then(|&c| hex(c));
        let lo = it.next().and_then(|&c| hex(c));
        match (hi, lo) {
            (Some(h), Some(l)) => out.push(h << 4 | l),
            _ => return Err(ProxyUrlError::Encoding),
        }
    }
    Ok(out)
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).and_then(|d| u8::try_from(d).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<ProxyUrl, ProxyUrlError> {
        ProxyUrl::parse(s, "--proxy")
    }

    #[test]
    fn curl_defaults() {
        // Checked against curl 7.88.1: no scheme is http, the port is 1080 (443 for an
        // https proxy), a path is ignored.
        let table: &[(&str, ProxyKind, &str, u16)] = &[
            ("127.0.0.1", ProxyKind::Http, "127.0.0.1", 1080),
            ("proxy:3128", ProxyKind::Http, "proxy", 3128),
            (
                "http://Proxy.Example:3128/",
                ProxyKind::Http,
                "proxy.example",
                3128,
            ),
            ("HTTP://p:1/x?y#z", ProxyKind::Http, "p", 1),
            ("https://p", ProxyKind::Https, "p", 443),
            ("socks5://p", ProxyKind::Socks5, "p", 1080),
            ("socks5h://[::1]:9050", ProxyKind::Socks5h, "::1", 9050),
            ("http://[2001:DB8::1]", ProxyKind::Http, "2001:db8::1", 1080),
        ];
        for &(raw, kind, host, port) in table {
            let url = parse(raw).unwrap_or_else(|e| panic!("{raw}: {e}"));
            assert_eq!(
                (url.kind, url.host.as_str(), url.port),
                (kind, host, port),
                "{raw}"
            );
            assert!(url.auth.is_none(), "{raw}");
        }
    }

    #[test]
    fn credentials_are_decoded_and_never_displayed() {
        let url = parse("http://al%40ice:p%3Ass@w0rd@proxy:3128").expect("parses");
        let auth = url.auth.as_ref().expect("credentials");
        assert_eq!(auth.user, "al@ice");
        assert_eq!(auth.pass.expose(), b"p:ss@w0rd");
        assert_eq!(auth.source, CredSource::Url("--proxy".into()));
        assert_eq!(url.to_string(), "http://proxy:3128");
        assert!(!format!("{url:?}").contains("w0rd"));
        assert_eq!(
            redact("http://al%40ice:p%3Ass@w0rd@proxy:3128/x"),
            "http://***@proxy:3128/x"
        );
        assert_eq!(redact("u:p@h"), "***@h");
        assert_eq!(redact("h:1"), "h:1");
        assert_eq!(redact("http;//u:pw@p"), "***@p");
        assert_eq!(redact("u:pw@x://p"), "***@x://p");
        // A user with no password is still credentials; `@` alone is none.
        assert!(parse("http://u@p").expect("parses").auth.is_some());
        assert!(parse("http://@p").expect("parses").auth.is_none());
    }

    #[test]
    fn errors() {
        let long = format!("http://{}", "a".repeat(MAX_PROXY_URL_BYTES));
        let table: &[(&str, ProxyUrlError)] = &[
            ("", ProxyUrlError::Empty),
            (&long, ProxyUrlError::TooLong),
            ("http://p :1", ProxyUrlError::Blank),
            ("socks4://p", ProxyUrlError::Socks4),
            ("socks4a://p", ProxyUrlError::Socks4),
            ("ftp://p", ProxyUrlError::Scheme),
            ("http://", ProxyUrlError::NoHost),
            ("http://:80", ProxyUrlError::NoHost),
            ("http://u:p@", ProxyUrlError::NoHost),
            ("http://p!x", ProxyUrlError::Host),
            ("http://[::1", ProxyUrlError::Host),
            ("http://[zz]:1", ProxyUrlError::Host),
            ("http://[::1]x", ProxyUrlError::Host),
            ("http://p:", ProxyUrlError::Port),
            ("http://p:0", ProxyUrlError::Port),
            ("http://p:65536", ProxyUrlError::Port),
            ("http://p:+1", ProxyUrlError::Port),
            ("http://u:%4@p", ProxyUrlError::Encoding),
            ("http://%ff:x@p", ProxyUrlError::Encoding),
            ("http://a%3Ab:x@p", ProxyUrlError::UserColon),
            ("socks5://:x@p", ProxyUrlError::SocksCredLength),
        ];
        for &(raw, want) in table {
            assert_eq!(parse(raw), Err(want), "{raw}");
        }
        let user = "u".repeat(256);
        assert_eq!(
            parse(&format!("socks5h://{user}:p@h")),
            Err(ProxyUrlError::SocksCredLength)
        );
        assert!(
            parse(&format!("http://{user}:p@h")).is_ok(),
            "HTTP has no such limit"
        );
    }

    #[test]
    fn kinds() {
        assert!(ProxyKind::Http.resolves_remotely());
        assert!(ProxyKind::Socks5h.resolves_remotely());
        assert!(!ProxyKind::Socks5.resolves_remotely());
        assert_eq!(authority("::1", 8), "[::1]:8");
    }
}
