//! The files synthweb writes and the referee reads: request log, hosts file, seeds file
//! and manifest (the contract is `SYNTHWEB-FORMATS.md`, restated in `docs/synthweb.md`).
//!
//! Every format has a reader that returns a typed [`FormatError`] carrying the 1-based
//! line number on bad input (never a panic), and a writer that produces exactly what the
//! reader accepts, so `read(write(x)) == x` for every value the writer takes.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, BufRead, Write};
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Longest line any reader accepts, in bytes. A request log line holds a request target
/// and a handful of headers; a hostile client can send long ones, so the server is
/// expected to cap what it logs well below this (the referee refuses longer lines rather
/// than buffering without bound).
pub const MAX_LINE_BYTES: usize = 1 << 20;

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

/// Write a seeds file, one absolute URL per line.
///
/// # Errors
/// Returns the writer's I/O error.
pub fn write_seeds<'a, W: Write>(
    mut out: W,
    seeds: impl IntoIterator<Item = &'a str>,
) -> io::Result<()> {
    for seed in seeds {
        writeln!(out, "{seed}")?;
    }
    Ok(())
}

/// Read a seeds file. Blank lines and lines starting with `#` are skipped; each other
/// line, trimmed, must be an absolute `http://` or `https://` URL without whitespace.
///
/// # Errors
/// The first I/O error or malformed line.
pub fn read_seeds<R: BufRead>(input: R) -> Result<Vec<String>, FormatError> {
    let mut lines = LineReader::new(input, FileKind::Seeds);
    let mut seeds = Vec::new();
    while let Some(next) = lines.next_line() {
        let (line, text) = next?;
        let text = text.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        if !is_plausible_url(text) {
            return Err(FormatError::Syntax {
                file: FileKind::Seeds,
                line,
                reason: "expected an absolute http(s) URL",
            });
        }
        seeds.push(text.to_owned());
    }
    Ok(seeds)
}

/// How the crawl policy treats a robots.txt answered with 401 or 403.
///
/// RFC 9309 §2.3.1.3 says any 4xx means "no robots.txt: crawl anything"; some crawlers
/// treat 401/403 as "disallow everything" instead. The manifest depends on this choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Robots4xx {
    /// 401/403 mean allow (RFC 9309; trawl's default).
    #[default]
    Allow,
    /// 401/403 mean disallow all.
    Disallow,
}

impl Robots4xx {
    /// The header spelling (`allow` / `disallow`).
    pub fn as_str(self) -> &'static str {
        match self {
            Robots4xx::Allow => "allow",
            Robots4xx::Disallow => "disallow",
        }
    }

    /// Whether 401/403 robots.txt mean "disallow all" under this policy.
    pub fn is_disallow(self) -> bool {
        self == Robots4xx::Disallow
    }
}

impl FromStr for Robots4xx {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, ()> {
        match s {
            "allow" => Ok(Robots4xx::Allow),
            "disallow" => Ok(Robots4xx::Disallow),
            _ => Err(()),
        }
    }
}

/// The first line of a manifest: what the ground truth was computed for.
///
/// Written as `# synthweb manifest v1 seed=42 hosts=100 profile=default agent=trawl
/// robots_4xx=allow` followed by any further `key=value` pairs (the trap budget), which
/// are kept in `params` in order of key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestHeader {
    /// Generator seed.
    pub seed: u64,
    /// Number of hosts.
    pub hosts: u64,
    /// Profile (or comma-separated profile set) the web was generated with.
    pub profile: String,
    /// Robots agent name the policy uses (the product token, e.g. `trawl`).
    pub agent: String,
    /// How 401/403 robots.txt are treated.
    pub robots_4xx: Robots4xx,
    /// Further `key=value` parameters (trap budget), values without whitespace.
    pub params: BTreeMap<String, String>,
}

/// Manifest header parameter listing, comma-separated, the request-targets besides
/// `/robots.txt` that a crawler fetches as robots files (targets of robots.txt
/// redirects); the referee treats requests for them like `/robots.txt` requests.
pub const ROBOTS_FILES_PARAM: &str = "robots_files";

/// Manifest header parameter listing, comma-separated, the request-targets of sitemap
/// files (profile `sitemaps`, host 0; profile `sitemap-chain`, its ring); the referee
/// counts requests for them apart.
pub const SITEMAP_FILES_PARAM: &str = "sitemap_files";

/// The magic at the start of a manifest header line.
pub const MANIFEST_MAGIC: &str = "# synthweb manifest v1";

impl fmt::Display for ManifestHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{MANIFEST_MAGIC} seed={} hosts={} profile={} agent={} robots_4xx={}",
            self.seed,
            self.hosts,
            self.profile,
            self.agent,
            self.robots_4xx.as_str()
        )?;
        for (key, value) in &self.params {
            write!(f, " {key}={value}")?;
        }
        Ok(())
    }
}

impl ManifestHeader {
    /// Parse a header line (with or without its trailing newline).
    fn parse(text: &str, line: u64) -> Result<Self, FormatError> {
        let bad = |reason| FormatError::Syntax {
            file: FileKind::Manifest,
            line,
            reason,
        };
        let rest = text
            .trim_end()
            .strip_prefix(MANIFEST_MAGIC)
            .ok_or(bad("first line must be `# synthweb manifest v1 ...`"))?;
        let (mut seed, mut hosts, mut profile, mut agent, mut robots_4xx) =
            (None, None, None, None, None);
        let mut params = BTreeMap::new();
        for pair in rest.split_ascii_whitespace() {
            let (key, value) = pair.split_once('=').ok_or(bad("expected key=value"))?;
            match key {
                "seed" => seed = Some(u64::from_str(value).map_err(|_| bad("invalid seed"))?),
                "hosts" => hosts = Some(u64::from_str(value).map_err(|_| bad("invalid hosts"))?),
                "profile" => profile = Some(value.to_owned()),
                "agent" => agent = Some(value.to_owned()),
                "robots_4xx" => {
                    robots_4xx =
                        Some(Robots4xx::from_str(value).map_err(|()| bad("invalid robots_4xx"))?)
                }
                _ => {
                    params.insert(key.to_owned(), value.to_owned());
                }
            }
        }
        Ok(ManifestHeader {
            seed: seed.ok_or(bad("missing seed="))?,
            hosts: hosts.ok_or(bad("missing hosts="))?,
            profile: profile.ok_or(bad("missing profile="))?,
            agent: agent.ok_or(bad("missing agent="))?,
            robots_4xx: robots_4xx.ok_or(bad("missing robots_4xx="))?,
            params,
        })
    }
}

/// The tag of a manifest entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tag {
    /// `M`: must be fetched.
    Must,
    /// `F`: must never be fetched.
    Forbidden,
    /// `S`: must be fetched, and only a sitemap lists it (profiles `sitemaps`,
    /// `sitemap-chain`).
    SitemapOnly,
}

impl Tag {
    /// The one-letter spelling.
    pub fn letter(self) -> char {
        match self {
            Tag::Must => 'M',
            Tag::Forbidden => 'F',
            Tag::SitemapOnly => 'S',
        }
    }
}

/// Ground truth for one generated web: the URLs a correct crawler must fetch and the
/// URLs it must never fetch, both in canonical form, disjoint, kept sorted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// What the manifest was computed for.
    pub header: ManifestHeader,
    /// `M` entries.
    pub must: std::collections::BTreeSet<String>,
    /// `F` entries.
    pub forbidden: std::collections::BTreeSet<String>,
    /// `S` entries: pages only sitemaps list, which a crawler that reads sitemaps must
    /// fetch (empty without profile `sitemaps`). Disjoint from `M` and `F`.
    pub sitemap_only: std::collections::BTreeSet<String>,
}

/// Write a manifest: the header line, then `M` lines, then `F` lines, each set sorted.
///
/// # Errors
/// Returns the writer's I/O error.
pub fn write_manifest<W: Write>(mut out: W, manifest: &Manifest) -> io::Result<()> {
    writeln!(out, "{}", manifest.header)?;
    for url in &manifest.must {
        writeln!(out, "M {url}")?;
    }
    for url in &manifest.forbidden {
        writeln!(out, "F {url}")?;
    }
    for url in &manifest.sitemap_only {
        writeln!(out, "S {url}")?;
    }
    Ok(())
}

/// Read a manifest. The first line must be the header; later lines starting with `#`
/// and blank lines are skipped; every other line is `M url` or `F url`. A URL listed
/// under both tags is an error (the manifest would contradict itself); a URL listed twice
/// under one tag is accepted once.
///
/// # Errors
/// The first I/O error or malformed line.
pub fn read_manifest<R: BufRead>(input: R) -> Result<Manifest, FormatError> {
    let mut lines = LineReader::new(input, FileKind::Manifest);
    let header = match lines.next_line() {
        Some(first) => {
            let (line, text) = first?;
            ManifestHeader::parse(&text, line)?
        }
        None => {
            return Err(FormatError::Syntax {
                file: FileKind::Manifest,
                line: 1,
                reason: "empty manifest",
            })
        }
    };
    let mut manifest = Manifest {
        header,
        must: Default::default(),
        forbidden: Default::default(),
        sitemap_only: Default::default(),
    };
    while let Some(next) = lines.next_line() {
        let (line, text) = next?;
        let text = text.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() || text.starts_with('#') {
            continue;
        }
        let bad = |reason| FormatError::Syntax {
            file: FileKind::Manifest,
            line,
            reason,
        };
        let (tag, url) = match text.split_once(' ') {
            Some(("M", url)) => (Tag::Must, url),
            Some(("F", url)) => (Tag::Forbidden, url),
            Some(("S", url)) => (Tag::SitemapOnly, url),
            _ => return Err(bad("expected `M url`, `F url` or `S url`")),
        };
        if !is_plausible_url(url) {
            return Err(bad("expected an absolute http(s) URL"));
        }
        let listed = [
            (Tag::Must, &manifest.must),
            (Tag::Forbidden, &manifest.forbidden),
            (Tag::SitemapOnly, &manifest.sitemap_only),
        ];
        if listed.iter().any(|(t, set)| *t != tag && set.contains(url)) {
            return Err(bad("URL listed under two of M, F and S"));
        }
        match tag {
            Tag::Must => &mut manifest.must,
            Tag::Forbidden => &mut manifest.forbidden,
            Tag::SitemapOnly => &mut manifest.sitemap_only,
        }
        .insert(url.to_owned());
    }
    Ok(manifest)
}

/// Which file a [`FormatError`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// Request log.
    Log,
    /// Hosts file.
    Hosts,
    /// Seeds file.
    Seeds,
    /// Manifest.
    Manifest,
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FileKind::Log => "request log",
            FileKind::Hosts => "hosts file",
            FileKind::Seeds => "seeds file",
            FileKind::Manifest => "manifest",
        })
    }
}

/// Why a synthweb file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// Reading failed.
    #[error("{file}: read failed")]
    Io {
        /// The file being read.
        file: FileKind,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A request-log line is not a valid record.
    #[error("request log line {line}: invalid record")]
    Json {
        /// 1-based line number.
        line: u64,
        /// What serde_json found.
        #[source]
        source: serde_json::Error,
    },
    /// A line of a text format is malformed.
    #[error("{file} line {line}: {reason}")]
    Syntax {
        /// The file being read.
        file: FileKind,
        /// 1-based line number.
        line: u64,
        /// What is wrong.
        reason: &'static str,
    },
    /// A line is longer than [`MAX_LINE_BYTES`] or not UTF-8.
    #[error("{file} line {line}: line too long or not UTF-8")]
    BadLine {
        /// The file being read.
        file: FileKind,
        /// 1-based line number.
        line: u64,
    },
}

/// Whether `text` looks like an absolute http(s) URL with no whitespace: the check the
/// readers apply (full parsing is the crawler's job, not the file format's).
fn is_plausible_url(text: &str) -> bool {
    let lower = text
        .get(..8)
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    (lower.starts_with("http://") || lower.starts_with("https://"))
        && text.len() > lower.find("//").map_or(0, |i| i + 2)
        && !text.chars().any(char::is_whitespace)
}

/// Bounded line reader shared by the formats: yields `(line_number, text)` with the line
/// terminator removed, refusing lines over [`MAX_LINE_BYTES`].
#[derive(Debug)]
struct LineReader<R> {
    input: R,
    file: FileKind,
    line: u64,
    buf: Vec<u8>,
    done: bool,
}

impl<R: BufRead> LineReader<R> {
    fn new(input: R, file: FileKind) -> Self {
        Self {
            input,
            file,
            line: 0,
            buf: Vec::new(),
            done: false,
        }
    }

    fn next_line(&mut self) -> Option<Result<(u64, String), FormatError>> {
        if self.done {
            return None;
        }
        self.buf.clear();
        self.line += 1;
        let limit = u64::try_from(MAX_LINE_BYTES).unwrap_or(u64::MAX) + 1;
        let read = io::Read::take(&mut self.input, limit).read_until(b'\n', &mut self.buf);
        match read {
            Err(source) => {
                self.done = true;
                Some(Err(FormatError::Io {
                    file: self.file,
                    source,
                }))
            }
            Ok(0) => {
                self.done = true;
                None
            }
            Ok(_) => {
                if self.buf.last() == Some(&b'\n') {
                    self.buf.pop();
                    if self.buf.last() == Some(&b'\r') {
                        self.buf.pop();
                    }
                } else if self.buf.len() > MAX_LINE_BYTES {
                    self.done = true;
                    return Some(Err(FormatError::BadLine {
                        file: self.file,
                        line: self.line,
                    }));
                }
                match String::from_utf8(std::mem::take(&mut self.buf)) {
                    Ok(text) => Some(Ok((self.line, text))),
                    Err(_) => {
                        self.done = true;
                        Some(Err(FormatError::BadLine {
                            file: self.file,
                            line: self.line,
                        }))
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_line() -> LogLine {
        LogLine {
            t_us: 1_700_000_000_123_456,
            end_us: 1_700_000_000_123_789,
            conn: 17,
            local: "127.0.1.43:8080".parse().unwrap(),
            peer: "127.0.0.1:51234".parse().unwrap(),
            scheme: Scheme::Http,
            host: "h000042.synth.test:8080".into(),
            method: "GET".into(),
            target: "/p/12?x=1".into(),
            user_agent: Some("trawl/0.1.0 (+https://example.org/bot)".into()),
            from: Some("ops@example.org".into()),
            accept: Some("text/html,*/*;q=0.8".into()),
            accept_encoding: Some("gzip, deflate, br".into()),
            if_none_match: None,
            if_modified_since: None,
            referer: None,
            status: 200,
            body_bytes: 20480,
        }
    }

    #[test]
    fn log_line_matches_the_documented_example() {
        let doc = r#"{"t_us":1700000000123456,"end_us":1700000000123789,"conn":17,
 "local":"127.0.1.43:8080","peer":"127.0.0.1:51234","scheme":"http",
 "host":"h000042.synth.test:8080","method":"GET","target":"/p/12?x=1",
 "user_agent":"trawl/0.1.0 (+https://example.org/bot)","from":"ops@example.org",
 "accept":"text/html,*/*;q=0.8","accept_encoding":"gzip, deflate, br",
 "if_none_match":null,"if_modified_since":null,"referer":null,
 "status":200,"body_bytes":20480}"#;
        let parsed: LogLine = serde_json::from_str(doc).unwrap();
        assert_eq!(parsed, sample_line());
        assert_eq!(parsed.url(), "http://h000042.synth.test:8080/p/12?x=1");
        assert_eq!(parsed.origin(), "http://h000042.synth.test:8080");
    }

    #[test]
    fn log_round_trips_and_skips_blank_lines() {
        let mut second = sample_line();
        second.scheme = Scheme::Https;
        second.if_none_match = Some("\"abc\"".into());
        second.user_agent = None;
        let mut out = Vec::new();
        write_log_line(&mut out, &sample_line()).unwrap();
        out.extend_from_slice(b"\n");
        write_log_line(&mut out, &second).unwrap();
        let back = read_log(out.as_slice()).unwrap();
        assert_eq!(back, vec![sample_line(), second.clone()]);
        assert!(back[1].is_conditional());
        // A final line cut without its newline still parses.
        out.pop();
        assert_eq!(read_log(out.as_slice()).unwrap().len(), 2);
    }

    #[test]
    fn bad_log_lines_are_typed_errors_with_line_numbers() {
        let mut out = Vec::new();
        write_log_line(&mut out, &sample_line()).unwrap();
        out.extend_from_slice(b"{\"t_us\":1}\n");
        match read_log(out.as_slice()) {
            Err(FormatError::Json { line: 2, .. }) => {}
            other => panic!("unexpected {other:?}"),
        }
        let not_utf8 = b"\xff\xfe\n";
        assert!(matches!(
            read_log(&not_utf8[..]),
            Err(FormatError::BadLine {
                file: FileKind::Log,
                line: 1
            })
        ));
        let long = vec![b'x'; MAX_LINE_BYTES + 10];
        assert!(matches!(
            read_log(long.as_slice()),
            Err(FormatError::BadLine { .. })
        ));
    }

    #[test]
    fn hosts_round_trip_with_and_without_tls() {
        let entries = vec![
            HostEntry {
                name: "h000042.synth.test".into(),
                addr: "127.0.1.43".parse().unwrap(),
                port: 8080,
                tls_port: None,
            },
            HostEntry {
                name: "h000043.synth.test".into(),
                addr: "::1".parse().unwrap(),
                port: 8080,
                tls_port: Some(8443),
            },
        ];
        let mut out = Vec::new();
        write_hosts(&mut out, &entries).unwrap();
        assert_eq!(
            String::from_utf8(out.clone()).unwrap(),
            "h000042.synth.test 127.0.1.43 8080\nh000043.synth.test ::1 8080 8443\n"
        );
        assert_eq!(read_hosts(out.as_slice()).unwrap(), entries);
    }

    #[test]
    fn bad_hosts_lines_are_rejected() {
        for (text, reason) in [
            ("a 127.0.0.1\n", "expected `name address port [tls_port]`"),
            (
                "a 127.0.0.1 1 2 3\n",
                "expected `name address port [tls_port]`",
            ),
            ("a 300.0.0.1 80\n", "invalid IP address"),
            ("a 127.0.0.1 70000\n", "invalid port"),
            ("# c\n\na 127.0.0.1 1 x\n", "invalid TLS port"),
        ] {
            match read_hosts(text.as_bytes()) {
                Err(FormatError::Syntax {
                    file: FileKind::Hosts,
                    reason: r,
                    ..
                }) => {
                    assert_eq!(r, reason, "{text:?}")
                }
                other => panic!("{text:?}: unexpected {other:?}"),
            }
        }
    }

    #[test]
    fn seeds_round_trip_and_reject_non_urls() {
        let seeds = [
            "http://h000000.synth.test:8080/",
            "https://h000001.synth.test:8443/",
        ];
        let mut out = Vec::new();
        write_seeds(&mut out, seeds).unwrap();
        assert_eq!(read_seeds(out.as_slice()).unwrap(), seeds);
        assert!(matches!(
            read_seeds("ftp://x/\n".as_bytes()),
            Err(FormatError::Syntax {
                file: FileKind::Seeds,
                line: 1,
                ..
            })
        ));
        assert!(matches!(
            read_seeds("http://\n".as_bytes()),
            Err(FormatError::Syntax {
                file: FileKind::Seeds,
                line: 1,
                ..
            })
        ));
    }

    #[test]
    fn manifest_round_trips() {
        let mut params = BTreeMap::new();
        params.insert("max_url_bytes".to_owned(), "2048".to_owned());
        let manifest = Manifest {
            header: ManifestHeader {
                seed: 42,
                hosts: 100,
                profile: "default".into(),
                agent: "trawl".into(),
                robots_4xx: Robots4xx::Allow,
                params,
            },
            must: [
                "http://h000000.synth.test:8080/",
                "http://h000000.synth.test:8080/p/1",
            ]
            .into_iter()
            .map(String::from)
            .collect(),
            forbidden: ["http://h000003.synth.test:8080/private/x"]
                .into_iter()
                .map(String::from)
                .collect(),
            sitemap_only: Default::default(),
        };
        let mut out = Vec::new();
        write_manifest(&mut out, &manifest).unwrap();
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(text.starts_with(
            "# synthweb manifest v1 seed=42 hosts=100 profile=default agent=trawl \
             robots_4xx=allow max_url_bytes=2048\nM http://h000000.synth.test:8080/\n"
        ));
        assert!(text.ends_with("F http://h000003.synth.test:8080/private/x\n"));
        assert_eq!(read_manifest(out.as_slice()).unwrap(), manifest);
        let mut with_s = manifest.clone();
        with_s
            .sitemap_only
            .insert("http://h000000.synth.test:8080/sm/0".to_owned());
        let mut out = Vec::new();
        write_manifest(&mut out, &with_s).unwrap();
        assert!(String::from_utf8(out.clone())
            .unwrap()
            .ends_with("S http://h000000.synth.test:8080/sm/0\n"));
        assert_eq!(read_manifest(out.as_slice()).unwrap(), with_s);
    }

    #[test]
    fn bad_manifests_are_rejected() {
        let header = "# synthweb manifest v1 seed=1 hosts=2 profile=p agent=a robots_4xx=allow\n";
        for (text, line) in [
            ("", 1),
            ("M http://a/\n", 1),
            (
                "# synthweb manifest v1 seed=x hosts=2 profile=p agent=a robots_4xx=allow\n",
                1,
            ),
            (
                "# synthweb manifest v1 hosts=2 profile=p agent=a robots_4xx=allow\n",
                1,
            ),
            (
                "# synthweb manifest v1 seed=1 hosts=2 profile=p agent=a robots_4xx=maybe\n",
                1,
            ),
            (&format!("{header}X http://a/\n"), 2),
            (&format!("{header}M not-a-url\n"), 2),
            (&format!("{header}M http://a/\n# c\nF http://a/\n"), 4),
            (&format!("{header}S http://a/\nM http://a/\n"), 3),
        ] {
            match read_manifest(text.as_bytes()) {
                Err(FormatError::Syntax {
                    file: FileKind::Manifest,
                    line: l,
                    ..
                }) => {
                    assert_eq!(l, line, "{text:?}")
                }
                other => panic!("{text:?}: unexpected {other:?}"),
            }
        }
        let ok = read_manifest(format!("{header}M http://a/x\nM http://a/x\n").as_bytes());
        assert_eq!(ok.unwrap().must.len(), 1);
    }

    /// Damaged files (bytes flipped, cut, duplicated) give values or typed errors, never
    /// a panic: the referee reads files a crashed server or a careless hand produced.
    #[test]
    fn damaged_files_never_panic() {
        let mut log = Vec::new();
        write_log_line(&mut log, &sample_line()).unwrap();
        write_log_line(&mut log, &sample_line()).unwrap();
        let manifest =
            b"# synthweb manifest v1 seed=1 hosts=2 profile=p agent=a robots_4xx=allow k=v\n\
            M http://h000000.synth.test:8080/\nF http://h000000.synth.test:8080/x\n";
        let hosts = b"h000042.synth.test 127.0.1.43 8080 8443\nh1 ::1 1\n";
        let mut state = 0x2545_F491_4F6C_DD1D_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for original in [&log[..], &manifest[..], &hosts[..]] {
            for _ in 0..700 {
                let mut bytes = original.to_vec();
                for _ in 0..1 + next() % 4 {
                    let at = (next() as usize) % bytes.len().max(1);
                    match next() % 4 {
                        0 => bytes.truncate(at),
                        1 if at < bytes.len() => bytes[at] = next() as u8,
                        2 if at < bytes.len() => bytes[at] = b"\n:= \"{}M#"[(next() % 9) as usize],
                        _ => {
                            let copy = bytes[at..].to_vec();
                            bytes.extend_from_slice(&copy);
                        }
                    }
                }
                let _ = read_log(bytes.as_slice());
                let _ = read_manifest(bytes.as_slice());
                let _ = read_hosts(bytes.as_slice());
                let _ = read_seeds(bytes.as_slice());
            }
        }
    }
}
