//! Static answers given on the command line: curl's `--resolve host:port:addr` and
//! synthweb's hosts file (`--hosts-file`). They win over `/etc/hosts` and DNS.

use std::fmt;
use std::net::IpAddr;

/// A static answer: `host:port` resolves to `addrs`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DnsOverride {
    /// Host name, lower-cased.
    pub host: String,
    /// Port the override applies to.
    pub port: u16,
    /// Addresses to use, in order.
    pub addrs: Vec<IpAddr>,
}

/// A malformed `--resolve` value or hosts-file line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverrideParseError {
    /// 1-based line number in a hosts file; 0 for a `--resolve` value.
    pub line: usize,
    /// What is wrong.
    pub detail: &'static str,
}

impl fmt::Display for OverrideParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "bad --resolve value: {}", self.detail)
        } else {
            write!(f, "hosts file line {}: {}", self.line, self.detail)
        }
    }
}

impl std::error::Error for OverrideParseError {}

pub(super) fn parse_ip(s: &str) -> Option<IpAddr> {
    let s = s
        .strip_prefix('[')
        .and_then(|v| v.strip_suffix(']'))
        .unwrap_or(s);
    s.parse().ok()
}

/// Parses curl's `--resolve` syntax: `host:port:addr[,addr]...`, where an IPv6 address
/// may be written in brackets (`example.org:443:[::1]`).
///
/// # Errors
/// A missing field, a bad port or address.
pub fn parse_resolve(value: &str) -> Result<DnsOverride, OverrideParseError> {
    let err = |detail| OverrideParseError { line: 0, detail };
    let (host, rest) = value
        .split_once(':')
        .ok_or(err("expected host:port:addr"))?;
    let (port, addrs) = rest.split_once(':').ok_or(err("expected host:port:addr"))?;
    if host.is_empty() {
        return Err(err("empty host"));
    }
    let port: u16 = port.parse().map_err(|_| err("bad port"))?;
    let addrs = addrs
        .split(',')
        .map(|a| parse_ip(a.trim()).ok_or(err("bad address")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(DnsOverride {
        host: host.to_ascii_lowercase(),
        port,
        addrs,
    })
}

/// Parses synthweb's hosts file: one `hostname address port [tls_port]` per line,
/// blank lines and `#` comments ignored. Each line yields one override per port.
///
/// # Errors
/// The first malformed line, with its number.
pub fn parse_hosts_file(text: &str) -> Result<Vec<DnsOverride>, OverrideParseError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |detail| OverrideParseError {
            line: i + 1,
            detail,
        };
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (host, addr, ports) = match fields.as_slice() {
            [h, a, p] => (*h, *a, vec![*p]),
            [h, a, p, t] => (*h, *a, vec![*p, *t]),
            _ => return Err(err("expected: hostname address port [tls_port]")),
        };
        let addr = parse_ip(addr).ok_or(err("bad address"))?;
        for p in ports {
            let port: u16 = p.parse().map_err(|_| err("bad port"))?;
            out.push(DnsOverride {
                host: host.to_ascii_lowercase(),
                port,
                addrs: vec![addr],
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_syntax() {
        let o = parse_resolve("Example.org:8443:127.0.0.2,[::1]").unwrap();
        assert_eq!(o.host, "example.org");
        assert_eq!(o.port, 8443);
        assert_eq!(o.addrs.len(), 2);
        assert!(o.addrs[1].is_ipv6());
        assert!(parse_resolve("example.org:80").is_err());
        assert!(parse_resolve("example.org:x:127.0.0.1").is_err());
        assert!(parse_resolve("example.org:80:nope").is_err());
    }

    #[test]
    fn hosts_file_with_tls_column() {
        let text =
            "# comment\nh000042.synth.test 127.0.1.43 8080\n\nh1.synth.test 127.0.1.2 8080 8443\n";
        let o = parse_hosts_file(text).unwrap();
        assert_eq!(o.len(), 3);
        assert_eq!(o[2].port, 8443);
        assert_eq!(o[2].addrs[0], "127.0.1.2".parse::<IpAddr>().unwrap());
        let bad = parse_hosts_file("a b\n").unwrap_err();
        assert_eq!(bad.line, 1);
    }
}
