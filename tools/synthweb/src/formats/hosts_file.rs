//! The hosts file: `hostname address port [tls_port]`, one host a line.

use std::fmt;
use std::io::{self, BufRead, Write};
use std::net::IpAddr;
use std::str::FromStr;

use super::error::{FileKind, FormatError};
use super::line_reader::LineReader;

/// One line of the hosts file: where a client must connect to reach a host (there is
/// no DNS for `.test` names on the loopback).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostEntry {
    /// Host name, e.g. `h000042.synth.test`.
    pub name: String,
    /// Loopback address the host is served on.
    pub addr: IpAddr,
    /// Plain-HTTP port.
    pub port: u16,
    /// HTTPS port, present with `--tls`.
    pub tls_port: Option<u16>,
}

impl fmt::Display for HostEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.name, self.addr, self.port)?;
        if let Some(tls_port) = self.tls_port {
            write!(f, " {tls_port}")?;
        }
        Ok(())
    }
}

/// Write a hosts file, one `name address port [tls_port]` line per entry.
///
/// # Errors
/// Returns the writer's I/O error.
pub fn write_hosts<'a, W: Write>(
    mut out: W,
    entries: impl IntoIterator<Item = &'a HostEntry>,
) -> io::Result<()> {
    for entry in entries {
        writeln!(out, "{entry}")?;
    }
    Ok(())
}

/// Read a hosts file. Blank lines and lines starting with `#` are skipped.
///
/// # Errors
/// The first I/O error or malformed line (wrong field count, bad address or port).
pub fn read_hosts<R: BufRead>(input: R) -> Result<Vec<HostEntry>, FormatError> {
    let mut lines = LineReader::new(input, FileKind::Hosts);
    let mut entries = Vec::new();
    while let Some(next) = lines.next_line() {
        let (line, text) = next?;
        let text = text.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let bad = |reason| FormatError::Syntax {
            file: FileKind::Hosts,
            line,
            reason,
        };
        let fields: Vec<&str> = text.split_ascii_whitespace().collect();
        let (name, addr, port, tls_port) = match fields.as_slice() {
            [name, addr, port] => (*name, *addr, *port, None),
            [name, addr, port, tls_port] => (*name, *addr, *port, Some(*tls_port)),
            _ => return Err(bad("expected `name address port [tls_port]`")),
        };
        let addr = IpAddr::from_str(addr).map_err(|_| bad("invalid IP address"))?;
        let port = u16::from_str(port).map_err(|_| bad("invalid port"))?;
        let tls_port = tls_port
            .map(u16::from_str)
            .transpose()
            .map_err(|_| bad("invalid TLS port"))?;
        entries.push(HostEntry {
            name: name.to_ascii_lowercase(),
            addr,
            port,
            tls_port,
        });
    }
    Ok(entries)
}
