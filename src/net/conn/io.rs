//! Socket and TLS reads and writes for one connection: drain to `WouldBlock`, retry
//! `Interrupted`, hand plaintext to a sink. No state machine here; the phases call these.

use std::io::{self, Read, Write};

use mio::net::TcpStream;
use rustls::ClientConnection;

use super::fail::verdict_reason;
use crate::fetch::{FailReason, ProxyFailKind, ProxyFailure};
use crate::net::egress::connect::{ConnectClient, ConnectDone, ConnectError};
use crate::net::egress::socks5::{Socks5Client, Socks5Done, Socks5Error};
use crate::net::egress::status::ProxyVerdict;

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
/// already reported the peer's FIN (no later edge would tell us again). TLS reads go
/// through rustls (`read_tls`, `process_new_packets`, then the plaintext reader), with
/// the same shortcut: once a socket read hands rustls fewer bytes than it had room for,
/// the records are processed and the loop stops. At width, where responses trickle in
/// pieces, that final `EAGAIN` read was about one `recvfrom` in five.
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
            let mut socket = NoteShortRead {
                stream: &mut *stream,
                short: false,
            };
            match tls.read_tls(&mut socket) {
                Ok(0) => eof = true,
                Ok(_) => blocked = socket.short && !drain_fully,
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

/// The socket as rustls reads it, noting whether the last read came back short (fewer
/// bytes than rustls had room for): the kernel's buffer was empty then, and the
/// edge-triggered poll reports the next arrival.
struct NoteShortRead<'s> {
    stream: &'s mut TcpStream,
    short: bool,
}

impl Read for NoteShortRead<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.stream.read(buf)?;
        self.short = n < buf.len();
        Ok(n)
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

/// A proxy's handshake, sans-IO ([`crate::net::egress::connect::ConnectClient`],
/// [`crate::net::egress::socks5::Socks5Client`]): messages to write, replies to feed.
pub(crate) trait Handshake {
    /// What a finished handshake gives.
    type Done;
    /// Why it failed.
    type Error: std::fmt::Display;
    /// The bytes of the current message not written yet.
    fn pending(&self) -> &[u8];
    /// Records that `n` more bytes were written.
    fn wrote(&mut self, n: usize);
    /// Whether a reply is awaited.
    fn wants_read(&self) -> bool;
    /// Reads reply bytes: `Ok(None)` while the handshake goes on.
    fn feed(&mut self, input: &[u8]) -> Result<Option<Self::Done>, Self::Error>;
    /// Whose failure `e` is.
    fn verdict(e: &Self::Error) -> ProxyVerdict;
}

/// How a round of a proxy handshake ended.
pub(crate) enum Shook<D> {
    /// The socket would block: wait for readiness.
    Wait,
    /// The handshake finished.
    Done(D),
    /// It failed: the proxy said no or made no sense (its verdict), or closed or reset
    /// the connection before it finished (`proxy-unreachable`).
    Failed(FailReason),
}

/// Drives a proxy handshake on a plain socket until it must wait or ends: writes the
/// pending message, then feeds what the proxy sent, and again while a reply calls for
/// a next message (SOCKS5's method, then authentication, then the request).
pub(crate) fn shake<H: Handshake>(
    stream: &mut TcpStream,
    buf: &mut [u8],
    h: &mut H,
) -> Shook<H::Done> {
    let lost = |why: String| {
        Shook::Failed(FailReason::Proxy(ProxyFailure::new(
            ProxyFailKind::Unreachable,
            why,
        )))
    };
    loop {
        if !h.pending().is_empty() {
            let mut written = 0;
            let all = write_plain(stream, h.pending(), &mut written);
            h.wrote(written);
            match all {
                Ok(true) => {}
                Ok(false) => return Shook::Wait,
                Err(e) => return lost(e.to_string()),
            }
        }
        let mut ended = None;
        let read = read_plaintext(stream, None, buf, true, |chunk| match h.feed(chunk) {
            Ok(None) => h.wants_read(),
            Ok(Some(done)) => {
                ended = Some(Ok(done));
                false
            }
            Err(e) => {
                ended = Some(Err(e));
                false
            }
        });
        match ended {
            Some(Ok(done)) => return Shook::Done(done),
            Some(Err(e)) => return Shook::Failed(verdict_reason(H::verdict(&e), &e.to_string())),
            None => {}
        }
        match read {
            Ok(ReadEnd::Eof) => return lost("closed before answering".into()),
            Err(ReadError::Io(e)) => return lost(e.to_string()),
            Err(ReadError::Tls(e)) => return lost(e.to_string()),
            Ok(ReadEnd::WouldBlock) if h.pending().is_empty() => return Shook::Wait,
            // A reply asked for the next message: write it.
            Ok(ReadEnd::WouldBlock | ReadEnd::Stopped) => {}
        }
    }
}

impl Handshake for ConnectClient {
    type Done = ConnectDone;
    type Error = ConnectError;
    fn pending(&self) -> &[u8] {
        self.pending()
    }
    fn wrote(&mut self, n: usize) {
        self.wrote(n);
    }
    fn wants_read(&self) -> bool {
        self.is_sent()
    }
    fn feed(&mut self, input: &[u8]) -> Result<Option<ConnectDone>, ConnectError> {
        self.feed(input)
    }
    fn verdict(e: &ConnectError) -> ProxyVerdict {
        ProxyVerdict::Own(e.kind())
    }
}

impl Handshake for Socks5Client {
    type Done = Socks5Done;
    type Error = Socks5Error;
    fn pending(&self) -> &[u8] {
        self.pending()
    }
    fn wrote(&mut self, n: usize) {
        self.wrote(n);
    }
    fn wants_read(&self) -> bool {
        self.wants_read()
    }
    fn feed(&mut self, input: &[u8]) -> Result<Option<Socks5Done>, Socks5Error> {
        self.feed(input)
    }
    fn verdict(e: &Socks5Error) -> ProxyVerdict {
        e.verdict()
    }
}
