//! The crawl log: one JSON object per line for every URL decision (fetched, refused by
//! robots.txt, filtered, failed...), the crawler's account of what it did and why.
//!
//! It plays the part of Heritrix's `crawl.log` in a format any tool reads: `jq`,
//! pandas, a database import. The hop path from the seed uses Heritrix's codes (`L`
//! link, `E` embed, `R` redirect, `X` speculative, `P` prerequisite, `I` inferred, `S`
//! form submit), so `LLE` is "an image on a page two clicks from a seed".
//!
//! [`CrawlLogWriter`] appends lines through a bounded buffer; the engine's output thread
//! (`src/engine/output.rs`) drives it. After a crash, [`repair`] cuts a torn last line
//! so the file stays valid JSON lines. See `docs/warc.md`.

// Every file below reads bytes from the network or the disk: no slice indexing and no
// panics (STYLE.md §5). Tests are exempt through clippy.toml.
#![deny(clippy::indexing_slicing, clippy::expect_used, clippy::panic)]

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

// The types a crawl-log line shares with the WARC records live in `crate::provenance`,
// so the crawl log does not depend on `crate::warc`.
use crate::provenance::{Digest, FetchTimings, HopsPath, Truncation, WarcDate};

/// The decision or result for a URL. `Fetched` covers every HTTP status (the status
/// is in [`LogRecord::status`]); the others mean no response was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// A response was received (any status).
    Fetched,
    /// robots.txt disallows the URL; never fetched.
    Robots,
    /// A URL filter refused it (reason in the annotations).
    Filtered,
    /// The resolved address is loopback, private, link-local... and not allowed.
    BlockedAddress,
    /// Name resolution failed.
    DnsError,
    /// The TCP connection failed or was refused.
    ConnectError,
    /// The TLS handshake or certificate check failed.
    TlsError,
    /// A timeout (connect, first byte, idle or total).
    Timeout,
    /// The response was not valid HTTP/1.1.
    ProtocolError,
    /// A budget (pages, bytes, hops) stopped it.
    Budget,
    /// Given up after the host was parked for repeated failures.
    HostParked,
    /// The proxy on the URL's route could not be reached, or closed before it answered
    /// (issue 29; never counted against the host).
    ProxyUnreachable,
    /// The proxy refused the credentials, or wants some (a 407); not retried.
    ProxyAuth,
    /// The proxy answered with an error of its own, or spoke a broken protocol
    /// (`proxy-error` and `proxy-protocol` failures; the annotation says which).
    ProxyError,
}

/// One crawl-log line. Field names are short and stable: they are the file format.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogRecord {
    /// When the decision was made (or the fetch ended), UTC.
    pub time: WarcDate,
    /// The URL.
    pub url: String,
    /// HTTP status, when a response was received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// What happened.
    pub outcome: Outcome,
    /// Bytes received on the wire (head and body).
    #[serde(default)]
    pub bytes: u64,
    /// The response's media type (`text/html`), without parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// SHA-1 of the payload, as in `WARC-Payload-Digest`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload_digest: Option<Digest>,
    /// Hop codes from the seed.
    #[serde(default)]
    pub hops: HopsPath,
    /// The page the URL was found on (or the redirecting URL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// The route the URL's host takes (`direct`, a rules file's name, or the proxy
    /// URL without credentials); present when the crawl has proxy routes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
    /// Step timings.
    #[serde(default)]
    pub timings: FetchTimings,
    /// Why the body is incomplete, if it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<Truncation>,
    /// Free-form tags: `robots`, `filter:<reason>`, `duplicate`, `trap:<kind>`,
    /// `nofollow`, `noindex`, `retry:<n>`...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub annotations: Vec<String>,
    /// Where the capture's response (or revisit) record is: WARC file and offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warc: Option<WarcRef>,
}

/// A pointer into the WARC output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarcRef {
    /// The file's final name.
    pub file: String,
    /// Offset of the record's gzip member in the file.
    pub offset: u64,
}

impl LogRecord {
    /// A line with only the required fields set.
    pub fn new(time: WarcDate, url: impl Into<String>, outcome: Outcome) -> Self {
        Self {
            time,
            url: url.into(),
            status: None,
            outcome,
            bytes: 0,
            media_type: None,
            payload_digest: None,
            hops: HopsPath::seed(),
            via: None,
            route: None,
            timings: FetchTimings::default(),
            truncated: None,
            annotations: Vec::new(),
            warc: None,
        }
    }

    /// The JSON line, newline included.
    pub fn to_line(&self) -> Vec<u8> {
        let mut line = Vec::new();
        self.append_line(&mut line);
        line
    }

    /// Appends the JSON line, newline included, to `out` (the writer reuses one
    /// buffer instead of a new vector a line).
    pub fn append_line(&self, out: &mut Vec<u8>) {
        let start = out.len();
        // Serializing these plain fields cannot fail (no maps with non-string keys);
        // were it to, the partial line is taken back and the line is empty.
        if serde_json::to_writer(&mut *out, self).is_err() {
            out.truncate(start);
            return;
        }
        out.push(b'\n');
    }
}

/// An I/O failure of the crawl log, with the file it concerns.
#[derive(Debug, thiserror::Error)]
#[error("crawl log {}: cannot {op}", path.display())]
pub struct CrawlLogError {
    /// What was being done (`open`, `write`, `sync`, `repair`).
    pub op: &'static str,
    /// The file.
    pub path: PathBuf,
    /// The cause.
    #[source]
    pub source: io::Error,
}

/// Appends log lines to a file through a buffer of bounded size.
#[derive(Debug)]
pub struct CrawlLogWriter {
    path: PathBuf,
    out: BufWriter<File>,
    len: u64,
    /// The line being written, kept between lines.
    line: Vec<u8>,
}

/// Buffer size: a few hundred lines between writes.
const BUFFER_BYTES: usize = 64 * 1024;

impl CrawlLogWriter {
    /// Opens `path` for appending (created if missing). Run [`repair`] first after a
    /// crash.
    ///
    /// # Errors
    /// [`CrawlLogError`] if the file cannot be opened.
    pub fn open(path: &Path) -> Result<Self, CrawlLogError> {
        let err = |op, source| CrawlLogError {
            op,
            path: path.to_path_buf(),
            source,
        };
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| err("open", e))?;
        let len = file.metadata().map_err(|e| err("open", e))?.len();
        Ok(Self {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(BUFFER_BYTES, file),
            len,
            line: Vec::with_capacity(1024),
        })
    }

    /// Appends one line.
    ///
    /// # Errors
    /// [`CrawlLogError`] on a write failure.
    pub fn append(&mut self, record: &LogRecord) -> Result<(), CrawlLogError> {
        // A line of a page with thousands of annotations or a huge URL is not kept.
        if self.line.capacity() > BUFFER_BYTES {
            self.line = Vec::with_capacity(1024);
        }
        self.line.clear();
        record.append_line(&mut self.line);
        let written = self.out.write_all(&self.line);
        written.map_err(|e| self.err("write", e))?;
        self.len += self.line.len() as u64;
        Ok(())
    }

    /// Flushes and fsyncs; returns the length of the file, all of it complete lines,
    /// for a checkpoint.
    ///
    /// # Errors
    /// [`CrawlLogError`] if the flush or fsync fails.
    pub fn sync(&mut self) -> Result<u64, CrawlLogError> {
        self.out.flush().map_err(|e| self.err("write", e))?;
        self.out
            .get_ref()
            .sync_data()
            .map_err(|e| self.err("sync", e))?;
        Ok(self.len)
    }

    /// Bytes appended so far (buffered ones included).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the log is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Flushes, fsyncs and closes.
    ///
    /// # Errors
    /// As [`CrawlLogWriter::sync`].
    pub fn close(mut self) -> Result<u64, CrawlLogError> {
        self.sync()
    }

    fn err(&self, op: &'static str, source: io::Error) -> CrawlLogError {
        CrawlLogError {
            op,
            path: self.path.clone(),
            source,
        }
    }
}

/// Fuzz entry point (`fuzz/fuzz_targets/warc_parse.rs`, replayed by
/// `tests/fuzz_warc.rs` beside [`crate::warc::fuzz_parse`]): reads `data` as a
/// crawl-log line, as `trawl inspect` and a resumed crawl do. Must never panic.
pub fn fuzz_parse(data: &[u8]) {
    let _ = serde_json::from_slice::<LogRecord>(data);
}

/// Cuts a crawl log back to whole lines: to `valid_len` (a checkpoint's position) when
/// given, else to just after the last newline. Returns the new length.
///
/// # Errors
/// [`CrawlLogError`] if the file cannot be read or truncated, or (kind `InvalidData`)
/// if it is shorter than `valid_len`, which means the checkpoint is not covered by the
/// file.
pub fn repair(path: &Path, valid_len: Option<u64>) -> Result<u64, CrawlLogError> {
    let err = |source| CrawlLogError {
        op: "repair",
        path: path.to_path_buf(),
        source,
    };
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(err)?;
    let len = file.metadata().map_err(err)?.len();
    let keep = match valid_len {
        Some(valid) if valid > len => {
            return Err(err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("file has {len} bytes, checkpoint says {valid}"),
            )))
        }
        Some(valid) => valid,
        None => last_line_end(&mut file, len).map_err(err)?,
    };
    if keep < len {
        file.set_len(keep).map_err(err)?;
        file.sync_all().map_err(err)?;
    }
    Ok(keep)
}

/// The offset just past the last `\n`, reading backwards in blocks.
fn last_line_end(file: &mut File, len: u64) -> io::Result<u64> {
    let mut end = len;
    let mut buf = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(buf.len() as u64);
        let chunk = buf
            .get_mut(..(end - start) as usize)
            .ok_or_else(|| io::Error::other("buffer"))?;
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(chunk)?;
        if let Some(pos) = chunk.iter().rposition(|&b| b == b'\n') {
            return Ok(start + pos as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provenance::Hop;

    fn sample() -> LogRecord {
        let mut record = LogRecord::new(
            WarcDate::from_unix_micros(1_790_075_101_000_000),
            "http://a.example/img.png",
            Outcome::Fetched,
        );
        record.status = Some(200);
        record.bytes = 1234;
        record.media_type = Some("image/png".into());
        record.payload_digest = Some(Digest::of(b"abc"));
        record.hops = HopsPath::seed().then(Hop::Link).then(Hop::Embed);
        record.via = Some("http://a.example/".into());
        record.timings.total_ms = Some(12);
        record.annotations.push("duplicate".into());
        record
    }

    #[test]
    fn exact_json_line() {
        let line = String::from_utf8(sample().to_line()).unwrap();
        assert_eq!(
            line,
            "{\"time\":\"2026-09-22T11:05:01.000000Z\",\"url\":\"http://a.example/img.png\",\
             \"status\":200,\"outcome\":\"fetched\",\"bytes\":1234,\"media_type\":\"image/png\",\
             \"payload_digest\":\"sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5\",\"hops\":\"LE\",\
             \"via\":\"http://a.example/\",\"timings\":{\"total_ms\":12},\
             \"annotations\":[\"duplicate\"]}\n"
        );
    }

    #[test]
    fn round_trips_and_rejects_bad_hops() {
        let record = sample();
        let line = record.to_line();
        let back: LogRecord = serde_json::from_slice(&line).unwrap();
        assert_eq!(back, record);
        let bad = String::from_utf8(line).unwrap().replace("\"LE\"", "\"LQ\"");
        assert!(serde_json::from_str::<LogRecord>(&bad).is_err());
        let robots = LogRecord::new(WarcDate::from_unix_micros(0), "http://b/", Outcome::Robots);
        let text = String::from_utf8(robots.to_line()).unwrap();
        assert!(text.contains("\"outcome\":\"robots\""), "{text}");
        assert!(!text.contains("status"), "{text}");
    }

    #[test]
    fn hop_codes_round_trip() {
        for hop in [
            Hop::Link,
            Hop::Embed,
            Hop::Redirect,
            Hop::Speculative,
            Hop::Prerequisite,
            Hop::Inferred,
            Hop::Manifest,
        ] {
            assert_eq!(Hop::from_code(hop.code()), Some(hop));
        }
        assert_eq!(Hop::Manifest.code(), 'S');
        assert_eq!(Hop::from_code('M'), Some(Hop::Manifest));
        assert_eq!(Hop::from_code('Z'), None);
    }

    #[test]
    fn writer_appends_syncs_and_repair_cuts_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("crawl.log.jsonl");
        let mut writer = CrawlLogWriter::open(&path).unwrap();
        writer.append(&sample()).unwrap();
        let checkpoint = writer.sync().unwrap();
        writer.append(&sample()).unwrap();
        let full = writer.close().unwrap();
        assert_eq!(full, 2 * checkpoint);
        // A torn third line.
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"{\"time\":\"2026").unwrap();
        drop(file);
        assert_eq!(repair(&path, None).unwrap(), full);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2);
        for line in text.lines() {
            serde_json::from_str::<LogRecord>(line).unwrap();
        }
        assert_eq!(repair(&path, Some(checkpoint)).unwrap(), checkpoint);
        assert!(repair(&path, Some(checkpoint + 1)).is_err());
        // Reopening appends after the repaired end.
        let mut writer = CrawlLogWriter::open(&path).unwrap();
        assert_eq!(writer.len(), checkpoint);
        writer.append(&sample()).unwrap();
        assert_eq!(writer.close().unwrap(), full);
    }
}
