//! The request log: one JSON object per request, in completion order.

use std::fmt;
use std::io::{self, BufRead, Write};
use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

use super::error::{FileKind, FormatError};
use super::line_reader::LineReader;

/// The URL scheme a request arrived over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    /// Plain HTTP.
    Http,
    /// HTTP over TLS (`--tls`).
    Https,
}

impl Scheme {
    /// The scheme as it appears in a URL.
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One request as the server saw it: one JSON object per line of `--log FILE`.
///
/// Strings are the bytes the client sent, decoded as UTF-8; the server replaces bytes
/// that are not UTF-8 with U+FFFD (such requests cannot be canonical URLs of the
/// synthetic web anyway, so the referee counts them as stray requests).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogLine {
    /// Microseconds since the Unix epoch when the request head was fully received.
    pub t_us: u64,
    /// Microseconds since the Unix epoch when the response was fully written, or when the
    /// connection ended if it never was (hostile behaviours).
    pub end_us: u64,
    /// Connection id, unique within one server run.
    pub conn: u64,
    /// Local (server) address of the connection.
    pub local: SocketAddr,
    /// Peer (client) address of the connection.
    pub peer: SocketAddr,
    /// Scheme the request arrived over.
    pub scheme: Scheme,
    /// The Host header, lower-cased, port included; empty when the header was missing.
    pub host: String,
    /// The request method as sent.
    pub method: String,
    /// The request-target as sent.
    pub target: String,
    /// `User-Agent` header, `None` when absent.
    pub user_agent: Option<String>,
    /// `From` header, `None` when absent.
    pub from: Option<String>,
    /// `Accept` header, `None` when absent.
    pub accept: Option<String>,
    /// `Accept-Encoding` header, `None` when absent.
    pub accept_encoding: Option<String>,
    /// `If-None-Match` header, `None` when absent.
    pub if_none_match: Option<String>,
    /// `If-Modified-Since` header, `None` when absent.
    pub if_modified_since: Option<String>,
    /// `Referer` header, `None` when absent.
    pub referer: Option<String>,
    /// Status code sent, or 0 when the connection ended before any status line.
    pub status: u16,
    /// Body bytes written (after content coding), excluding the head.
    pub body_bytes: u64,
}

impl LogLine {
    /// The canonical URL of the request: `{scheme}://{host}{target}` (see the formats
    /// note: the host already carries the port, and the synthetic web only ever links to
    /// URLs whose canonical form is exactly this string).
    pub fn url(&self) -> String {
        format!("{}://{}{}", self.scheme, self.host, self.target)
    }

    /// The origin the request was addressed to, as `scheme://host[:port]`: the unit
    /// of robots.txt and of politeness in the referee.
    pub fn origin(&self) -> String {
        format!("{}://{}", self.scheme, self.host)
    }

    /// Whether this is a conditional request (`If-None-Match` or `If-Modified-Since`).
    pub fn is_conditional(&self) -> bool {
        self.if_none_match.is_some() || self.if_modified_since.is_some()
    }
}

/// Write one request-log line (JSON object plus `\n`).
///
/// # Errors
/// Returns the writer's I/O error.
pub fn write_log_line<W: Write>(mut out: W, line: &LogLine) -> io::Result<()> {
    serde_json::to_writer(&mut out, line).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

/// Reads a request log line by line. Blank lines are skipped; a final line without
/// `\n` (a log cut short by a crash) is still parsed.
#[derive(Debug)]
pub struct LogReader<R> {
    lines: LineReader<R>,
}

impl<R: BufRead> LogReader<R> {
    /// Wrap a buffered reader positioned at the start of a log.
    pub fn new(input: R) -> Self {
        Self {
            lines: LineReader::new(input, FileKind::Log),
        }
    }
}

impl<R: BufRead> Iterator for LogReader<R> {
    type Item = Result<LogLine, FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (line_no, text) = match self.lines.next_line()? {
                Ok(pair) => pair,
                Err(err) => return Some(Err(err)),
            };
            if text.trim().is_empty() {
                continue;
            }
            return Some(
                serde_json::from_str(&text).map_err(|source| FormatError::Json {
                    line: line_no,
                    source,
                }),
            );
        }
    }
}

/// Read a whole request log.
///
/// # Errors
/// The first I/O error or malformed line.
pub fn read_log<R: BufRead>(input: R) -> Result<Vec<LogLine>, FormatError> {
    LogReader::new(input).collect()
}
