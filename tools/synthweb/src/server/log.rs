//! The request log (`--log FILE`): one JSON line per request, written by a background
//! thread fed through a bounded channel, so a slow disk slows connections through
//! back-pressure instead of growing memory. Format: SYNTHWEB-FORMATS.md.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use serde::Serialize;
use tokio::sync::mpsc;

/// One request as the server saw it.
#[derive(Debug, Clone, Serialize, Default)]
pub struct LogRecord {
    /// Microseconds since the epoch when the request head was complete.
    pub t_us: u64,
    /// When the response was fully written or the connection ended.
    pub end_us: u64,
    /// Connection id.
    pub conn: u64,
    /// Local socket address.
    pub local: String,
    /// Peer socket address.
    pub peer: String,
    /// `http` or `https`.
    pub scheme: &'static str,
    /// Host header, lower-cased, `""` if missing.
    pub host: String,
    /// Method.
    pub method: String,
    /// Request-target as sent.
    pub target: String,
    /// User-Agent.
    pub user_agent: Option<String>,
    /// From.
    pub from: Option<String>,
    /// Accept.
    pub accept: Option<String>,
    /// Accept-Encoding.
    pub accept_encoding: Option<String>,
    /// If-None-Match.
    pub if_none_match: Option<String>,
    /// If-Modified-Since.
    pub if_modified_since: Option<String>,
    /// Referer.
    pub referer: Option<String>,
    /// Status sent, 0 if none.
    pub status: u16,
    /// Body bytes sent.
    pub body_bytes: u64,
}

/// Messages to the writer.
#[derive(Debug)]
pub enum LogMsg {
    /// A record.
    Record(Box<LogRecord>),
    /// Flush and stop.
    Shutdown,
}

/// Capacity of the channel to the writer (records in flight).
pub const LOG_CHANNEL_RECORDS: usize = 65_536;

/// Start the writer thread.
///
/// # Errors
/// The file cannot be created.
pub fn start(
    path: &Path,
) -> std::io::Result<(
    mpsc::Sender<LogMsg>,
    std::thread::JoinHandle<std::io::Result<u64>>,
)> {
    let file = File::create(path)?;
    let (tx, mut rx) = mpsc::channel::<LogMsg>(LOG_CHANNEL_RECORDS);
    let handle = std::thread::Builder::new()
        .name("synthweb-log".to_owned())
        .spawn(move || {
            let mut w = BufWriter::with_capacity(1 << 20, file);
            let mut n = 0u64;
            while let Some(msg) = rx.blocking_recv() {
                match msg {
                    LogMsg::Record(r) => {
                        serde_json::to_writer(&mut w, &r).map_err(std::io::Error::other)?;
                        w.write_all(b"\n")?;
                        n += 1;
                        if rx.is_empty() {
                            w.flush()?;
                        }
                    }
                    LogMsg::Shutdown => break,
                }
            }
            w.flush()?;
            w.get_ref().sync_all()?;
            Ok(n)
        })?;
    Ok((tx, handle))
}

/// Microseconds since the Unix epoch.
#[must_use]
pub fn now_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}
