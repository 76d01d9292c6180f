//! The request log (`--log FILE`): one JSON line per request, written by a background
//! thread fed through a bounded channel, so a slow disk slows connections through
//! back-pressure instead of growing memory. Format: SYNTHWEB-FORMATS.md.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use tokio::sync::mpsc;

/// One request as the server saw it: the request-log line type of `formats/log.rs`, so the
/// server writes exactly what the referee reads.
pub type LogRecord = crate::formats::LogLine;

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
