//! Socket and TLS reads and writes for one connection: drain to `WouldBlock`, retry
//! `Interrupted`, hand plaintext to a sink. No state machine here; the phases call these.

use std::io::{self, Read, Write};

use mio::net::TcpStream;
use rustls::ClientConnection;

/// Result of reading from a connection: how the read loop ended.
#[derive(Debug)]
pub(crate) enum ReadEnd {
    /// Drained: no more data for now.
    WouldBlock,
    /// The peer closed its side.
    Eof,
    /// The consumer asked to stop (response complete or failed).
    Stopped,
}

/// Reads plaintext from a plain or TLS connection, handing each chunk to `sink` until
/// the socket would block, the peer closes, or `sink` returns `false`.
///
/// For plain sockets a short read (fewer bytes than the buffer) means the kernel buffer
/// is empty, so the loop stops there without a final `EAGAIN` read: the edge-triggered
/// poll reports the next arrival. `drain_fully` disables that shortcut when the event
/// already reported the peer's FIN (no later edge would tell us again). TLS reads go through rustls (`read_tls`,
/// `process_new_packets`, then the plaintext reader) until `WouldBlock`.
///
/// # Errors
/// Socket errors as `io::Error`; TLS errors as [`ReadError::Tls`].
pub(crate) fn read_plaintext(
    stream: &mut TcpStream,
    tls: Option<&mut ClientConnection>,
    buf: &mut [u8],
    drain_fully: bool,
    mut sink: impl FnMut(&[u8]) -> bool,
) -> Result<ReadEnd, ReadError> {
    match tls {
        None => loop {
            match stream.read(buf) {
                Ok(0) => return Ok(ReadEnd::Eof),
                Ok(n) => {
                    let chunk = buf.get(..n).unwrap_or_default();
                    if !sink(chunk) {
                        return Ok(ReadEnd::Stopped);
                    }
                    if n < buf.len() && !drain_fully {
                        return Ok(ReadEnd::WouldBlock);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(ReadEnd::WouldBlock),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ReadError::Io(e)),
            }
        },
        Some(tls) => loop {
            let mut eof = false;
            let mut blocked = false;
            match tls.read_tls(stream) {
                Ok(0) => eof = true,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => blocked = true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(ReadError::Io(e)),
            }
            let state = match tls.process_new_packets() {
                Ok(s) => s,
                Err(e) => {
                    // Send our alert if we can; the error is the outcome either way.
                    let _ = tls.write_tls(stream);
                    return Err(ReadError::Tls(e));
                }
            };
            let mut plaintext = state.plaintext_bytes_to_read();
            let peer_closed = state.peer_has_closed();
            while plaintext > 0 {
                match tls.reader().read(buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        plaintext = plaintext.saturating_sub(n);
                        if !sink(buf.get(..n).unwrap_or_default()) {
                            return Ok(ReadEnd::Stopped);
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            if tls.wants_write() {
                flush_tls(stream, tls).map_err(ReadError::Io)?;
            }
            if eof || peer_closed {
                return Ok(ReadEnd::Eof);
            }
            if blocked {
                return Ok(ReadEnd::WouldBlock);
            }
        },
    }
}

/// A read failure.
#[derive(Debug)]
pub(crate) enum ReadError {
    Io(io::Error),
    Tls(rustls::Error),
}

/// Writes pending TLS records until rustls has none or the socket would block.
///
/// # Errors
/// Socket errors other than `WouldBlock` / `Interrupted`.
pub(crate) fn flush_tls(stream: &mut TcpStream, tls: &mut ClientConnection) -> io::Result<()> {
    while tls.wants_write() {
        match tls.write_tls(stream) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Writes `data[*written..]` to a plain socket until done or `WouldBlock`. Returns whether
/// everything was written.
///
/// # Errors
/// Socket errors other than `WouldBlock` / `Interrupted`.
pub(crate) fn write_plain(
    stream: &mut TcpStream,
    data: &[u8],
    written: &mut usize,
) -> io::Result<bool> {
    while let Some(rest) = data.get(*written..).filter(|r| !r.is_empty()) {
        match stream.write(rest) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => *written += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}
