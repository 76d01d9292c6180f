//! Which `Host` values name this listener: the defence against DNS rebinding.
//!
//! A page on `http://evil.example/` whose name the attacker re-points at 127.0.0.1 makes
//! the operator's browser send requests to the listener as if it were the same origin,
//! and read the answers. Such requests carry `Host: evil.example:PORT`. So every request,
//! read-only views included, must name the listener itself: the IP literal the connection
//! arrived on with the listening port, or `localhost` when that address is loopback.
//! Prometheus scrapes a target by `ip:port` and sends exactly that; curl and browsers
//! opened on `http://127.0.0.1:PORT/` or `http://localhost:PORT/` do too.
//!
//! Sans-IO: the caller passes the field and the connection's local address.

#![deny(clippy::indexing_slicing)]

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Why a request's `Host` was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostRefusal {
    /// An HTTP/1.1 request without `Host` (RFC 9112 §3.2: answered `400`).
    Missing,
    /// A `Host` that does not name this listener (answered `421 Misdirected Request`).
    Misdirected {
        /// The address the connection arrived on, for the message.
        local: SocketAddr,
    },
}

impl fmt::Display for HostRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing => f.write_str("missing host field (required in http/1.1)"),
            Self::Misdirected { local } => {
                write!(f, "host must name this listener: {local}")?;
                if local.ip().is_loopback() {
                    write!(f, " or localhost:{}", local.port())?;
                }
                f.write_str(" (requests by other names are refused against dns rebinding)")
            }
        }
    }
}

/// Checks the `Host` field of a request that arrived on `local` (the connection's
/// local address, so a listener bound to `0.0.0.0` checks the address actually used).
///
/// Accepted: `IP:PORT` and `[IPv6]:PORT` equal to `local` (IPv4-mapped addresses
/// compared as IPv4); `localhost:PORT` (any case) when `local` is loopback; either
/// without `:PORT` when the port is 80. An HTTP/1.0 request may omit `Host` (no browser
/// does, so that is no way around the check).
///
/// # Errors
/// [`HostRefusal::Missing`] or [`HostRefusal::Misdirected`].
pub fn check_host(
    host: Option<&[u8]>,
    minor_version: u8,
    local: SocketAddr,
) -> Result<(), HostRefusal> {
    let local = SocketAddr::new(local.ip().to_canonical(), local.port());
    let misdirected = HostRefusal::Misdirected { local };
    let Some(host) = host else {
        return if minor_version == 0 {
            Ok(())
        } else {
            Err(HostRefusal::Missing)
        };
    };
    let host = std::str::from_utf8(host.trim_ascii()).map_err(|_| misdirected)?;
    let (name, port) = split_port(host).ok_or(misdirected)?;
    if port != local.port() {
        return Err(misdirected);
    }
    let names_local = match name {
        Name::Bracketed(v6) => v6
            .parse::<Ipv6Addr>()
            .is_ok_and(|ip| IpAddr::V6(ip).to_canonical() == local.ip()),
        Name::Plain(n) if n.eq_ignore_ascii_case("localhost") => local.ip().is_loopback(),
        Name::Plain(n) => n
            .parse::<Ipv4Addr>()
            .is_ok_and(|ip| IpAddr::V4(ip) == local.ip()),
    };
    if names_local {
        Ok(())
    } else {
        Err(misdirected)
    }
}

/// The host part of a `Host` value: `[...]` (an IPv6 literal) or anything else.
enum Name<'a> {
    Bracketed(&'a str),
    Plain(&'a str),
}

/// Splits `host[:port]` (`uri-host [ ":" port ]`, RFC 9110 §7.2); no port is 80, an
/// empty or malformed port is `None`.
fn split_port(host: &str) -> Option<(Name<'_>, u16)> {
    let (name, rest) = match host.strip_prefix('[') {
        Some(inner) => {
            let (v6, rest) = inner.split_once(']')?;
            (Name::Bracketed(v6), rest)
        }
        None => match host.split_once(':') {
            Some((n, _)) => (Name::Plain(n), host.get(n.len()..)?),
            None => (Name::Plain(host), ""),
        },
    };
    let port = match rest.strip_prefix(':') {
        None if rest.is_empty() => 80,
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => p.parse().ok()?,
        _ => return None,
    };
    Some((name, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(host: Option<&str>, local: &str) -> Result<(), HostRefusal> {
        check_host(host.map(str::as_bytes), 1, local.parse().unwrap())
    }

    #[test]
    fn the_listeners_own_names_pass() {
        for (host, local) in [
            ("127.0.0.1:9898", "127.0.0.1:9898"),
            ("localhost:9898", "127.0.0.1:9898"),
            ("LocalHost:9898", "127.0.0.1:9898"),
            (" 127.0.0.1:9898 ", "127.0.0.1:9898"),
            ("[::1]:9898", "[::1]:9898"),
            ("localhost:9898", "[::1]:9898"),
            ("127.0.0.1:9898", "[::ffff:127.0.0.1]:9898"),
            ("10.1.2.3:9898", "10.1.2.3:9898"),
            ("127.0.0.1", "127.0.0.1:80"),
            ("localhost", "127.0.0.1:80"),
        ] {
            assert_eq!(check(Some(host), local), Ok(()), "{host} on {local}");
        }
    }

    #[test]
    fn other_names_are_misdirected() {
        for (host, local) in [
            // DNS rebinding: a name the attacker controls, pointed at loopback.
            ("evil.example:9898", "127.0.0.1:9898"),
            ("evil.example", "127.0.0.1:80"),
            ("localhost.evil.example:9898", "127.0.0.1:9898"),
            ("localhost.:9898", "127.0.0.1:9898"),
            // Right address, wrong port, and the reverse.
            ("127.0.0.1:9899", "127.0.0.1:9898"),
            ("127.0.0.2:9898", "127.0.0.1:9898"),
            ("127.0.0.1", "127.0.0.1:9898"),
            // localhost is only the loopback listener's name.
            ("localhost:9898", "10.1.2.3:9898"),
            // Other spellings of an address are not the listener's name.
            ("0177.0.0.1:9898", "127.0.0.1:9898"),
            ("2130706433:9898", "127.0.0.1:9898"),
            ("::1:9898", "[::1]:9898"),
            ("[::1]:9898", "127.0.0.1:9898"),
            // Malformed values.
            ("", "127.0.0.1:80"),
            ("127.0.0.1:", "127.0.0.1:9898"),
            ("127.0.0.1:+9898", "127.0.0.1:9898"),
            ("127.0.0.1:99999", "127.0.0.1:9898"),
            ("[::1", "[::1]:9898"),
            ("[::1]x", "[::1]:80"),
            ("user@127.0.0.1:9898", "127.0.0.1:9898"),
        ] {
            assert!(
                matches!(
                    check(Some(host), local),
                    Err(HostRefusal::Misdirected { .. })
                ),
                "{host:?} on {local} passed"
            );
        }
        assert!(matches!(
            check_host(Some(b"\xff:9898"), 1, "127.0.0.1:9898".parse().unwrap()),
            Err(HostRefusal::Misdirected { .. })
        ));
    }

    #[test]
    fn a_missing_host_is_refused_in_http_1_1_only() {
        let local: SocketAddr = "127.0.0.1:9898".parse().unwrap();
        assert_eq!(check_host(None, 1, local), Err(HostRefusal::Missing));
        assert_eq!(check_host(None, 0, local), Ok(()));
    }

    #[test]
    fn refusals_say_what_is_accepted() {
        let loopback = HostRefusal::Misdirected {
            local: "127.0.0.1:9898".parse().unwrap(),
        };
        assert!(loopback
            .to_string()
            .contains("127.0.0.1:9898 or localhost:9898"));
        let remote = HostRefusal::Misdirected {
            local: "10.1.2.3:9898".parse().unwrap(),
        };
        assert!(!remote.to_string().contains("localhost"));
    }
}
