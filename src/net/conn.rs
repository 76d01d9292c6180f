//! One connection: its socket, optional TLS session, and its [`Phase`].
//!
//! Each phase struct holds only what is valid in it (a `Connecting` connection has no
//! response reader; an `Idle` one has no request). The fetcher moves a connection from
//! phase to phase by taking the old phase out (`Phase::take`) and putting the next one
//! in. The mio interest and the next deadline are both functions of the phase
//! ([`Conn::interest`], [`Conn::deadline`]).

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::Interest;
use rustls::ClientConnection;

use crate::http::{ContentDecoder, ResponseReader};
use crate::net::config::{Deadlines, FetchLimits};
use crate::net::outcome::{TimeoutPhase, Timings};
use crate::net::per_ip::{IpSlot, IpTicket};
use crate::net::pool::PoolKey;
use crate::net::FetchRequest;

/// A request on its way through the fetcher; survives a retry on a new connection.
pub(crate) struct Job {
    pub req: FetchRequest,
    pub key: PoolKey,
    /// The serialized request head.
    pub wire: Vec<u8>,
    pub submitted: Instant,
    pub dns: Option<Duration>,
    pub addrs: Option<std::sync::Arc<[SocketAddr]>>,
    /// Index into `addrs` of the address being tried.
    pub addr_index: usize,
    pub retries: u8,
    /// Set after a failure on a reused connection: the retry must use a fresh one.
    pub fresh_only: bool,
    /// Place in the per-IP queue while waiting for a slot of its address.
    pub ip_ticket: Option<IpTicket>,
    /// When the current wait for a per-IP slot began.
    pub ip_wait_since: Option<Instant>,
    /// Time spent waiting for per-IP slots so far.
    pub ip_waited: Duration,
}

impl Job {
    /// Ends a wait for a per-IP slot (if one is running), adding it to `ip_waited`.
    pub fn end_ip_wait(&mut self, now: Instant) {
        if let Some(since) = self.ip_wait_since.take() {
            self.ip_waited += now.saturating_duration_since(since);
        }
    }
}

/// Per-exchange state carried through the phases of one request.
pub(crate) struct Exchange {
    pub job: Job,
    /// When the exchange left the queue (start of `total_timeout`).
    pub started: Instant,
    pub timings: Timings,
    pub reused: bool,
    /// The TLS handshake of this exchange resumed an earlier session.
    pub tls_resumed: bool,
}

pub(crate) struct Connecting {
    pub ex: Exchange,
    pub since: Instant,
}

pub(crate) struct Handshaking {
    pub ex: Exchange,
    pub since: Instant,
}

pub(crate) struct Sending {
    pub ex: Exchange,
    pub since: Instant,
    /// Bytes of `ex.job.wire` written so far (plain), or handed to rustls (TLS).
    pub written: usize,
}

/// What both reading phases share: the exchange and what has been received for it.
pub(crate) struct Reading {
    pub ex: Exchange,
    pub rx: Received,
}

/// The response state of an exchange, kept apart from [`Exchange`] so a failure or the
/// outcome can take both by move.
pub(crate) struct Received {
    pub reader: ResponseReader,
    pub sent_at: Instant,
    pub first_byte_at: Option<Instant>,
    pub last_read: Instant,
    pub rate_window_start: Instant,
    pub rate_window_bytes: u64,
    /// Response bytes received (plaintext HTTP).
    pub wire_bytes: u64,
    /// Input the reader did not consume yet (a partial head), bounded by the head cap.
    pub carry: Vec<u8>,
    /// Raw response bytes kept for the WARC writer (capped).
    pub raw: Vec<u8>,
    pub raw_truncated: bool,
    /// Decoded body.
    pub body: Vec<u8>,
    /// The head said identity coding: the reader appends straight to `body`.
    pub identity: bool,
}

pub(crate) struct ReadingHead {
    pub r: Reading,
}

pub(crate) struct ReadingBody {
    pub r: Reading,
    pub decoder: ContentDecoder,
}

pub(crate) struct Idle {
    pub since: Instant,
}

/// The connection state machine (STYLE.md §3).
pub(crate) enum Phase {
    /// Non-blocking connect in progress.
    Connecting(Connecting),
    /// TLS handshake in progress.
    Handshaking(Handshaking),
    /// Writing the request.
    Sending(Sending),
    /// Waiting for / parsing the response head.
    ReadingHead(ReadingHead),
    /// Receiving the body.
    ReadingBody(ReadingBody),
    /// In the keep-alive pool.
    Idle(Idle),
    /// Transient: the phase has been taken out for a transition.
    Gone,
}

impl Phase {
    /// Takes the phase out, leaving `Gone` until the next phase is put in.
    pub fn take(&mut self) -> Phase {
        std::mem::replace(self, Phase::Gone)
    }
}

/// A connection in the fetcher's slab.
pub(crate) struct Conn {
    pub stream: TcpStream,
    pub tls: Option<Box<ClientConnection>>,
    pub key: PoolKey,
    pub peer: SocketAddr,
    pub phase: Phase,
    /// Interest currently registered with the poll.
    pub registered: Interest,
    /// The earliest timer-heap entry outstanding for this connection.
    pub timer_at: Option<Instant>,
    /// Requests completed on this connection.
    pub served: u32,
    /// The connection's per-IP slot (when a cap is set); released when the connection
    /// is dropped, whatever closed it.
    pub ip_slot: Option<IpSlot>,
    /// Exchanges finished in a row while requests of other hosts waited for this
    /// connection's address (bounds how long a busy host keeps a contended slot).
    pub contended_reuses: u32,
}

impl Conn {
    /// The interest the phase needs. Plain sockets in `Sending` normally never get here
    /// (the request is written at once), so WRITABLE is registered only when a write
    /// blocked.
    pub fn interest(&self) -> Interest {
        let tls_wants_write = self.tls.as_ref().is_some_and(|t| t.wants_write());
        match &self.phase {
            Phase::Connecting(_) => Interest::WRITABLE,
            Phase::Sending(_) if self.tls.is_none() => Interest::WRITABLE,
            Phase::Sending(_) | Phase::Handshaking(_) => {
                if tls_wants_write {
                    Interest::READABLE | Interest::WRITABLE
                } else {
                    Interest::READABLE
                }
            }
            Phase::ReadingHead(_) | Phase::ReadingBody(_) if tls_wants_write => {
                Interest::READABLE | Interest::WRITABLE
            }
            Phase::ReadingHead(_) | Phase::ReadingBody(_) | Phase::Idle(_) | Phase::Gone => {
                Interest::READABLE
            }
        }
    }

    /// The next deadline of the phase and which timeout it is; `None` for `Idle` (its
    /// deadline is passed in as `idle_timeout`).
    pub fn deadline(&self, d: &Deadlines, idle_timeout: Duration) -> Option<(Instant, Deadline)> {
        let total = |ex: &Exchange| {
            (
                after(ex.started, d.total_timeout),
                Deadline::Fail(TimeoutPhase::Total),
            )
        };
        let min = |a: (Instant, Deadline), b: (Instant, Deadline)| if b.0 < a.0 { b } else { a };
        match &self.phase {
            Phase::Connecting(p) => Some(min(
                total(&p.ex),
                (
                    after(p.since, d.connect_timeout),
                    Deadline::Fail(TimeoutPhase::Connect),
                ),
            )),
            Phase::Handshaking(p) => Some(min(
                total(&p.ex),
                (
                    after(p.since, d.tls_timeout),
                    Deadline::Fail(TimeoutPhase::Tls),
                ),
            )),
            Phase::Sending(p) => Some(min(
                total(&p.ex),
                (
                    after(p.since, d.first_byte_timeout),
                    Deadline::Fail(TimeoutPhase::Send),
                ),
            )),
            Phase::ReadingHead(ReadingHead { r }) | Phase::ReadingBody(ReadingBody { r, .. }) => {
                let (ex, r) = (&r.ex, &r.rx);
                let mut best = total(ex);
                best = min(
                    best,
                    match r.first_byte_at {
                        None => (
                            after(r.sent_at, d.first_byte_timeout),
                            Deadline::Fail(TimeoutPhase::FirstByte),
                        ),
                        Some(_) => (
                            after(r.last_read, d.read_idle_timeout),
                            Deadline::Fail(TimeoutPhase::ReadIdle),
                        ),
                    },
                );
                if d.min_rate_bytes_per_sec > 0 && r.first_byte_at.is_some() {
                    best = min(
                        best,
                        (
                            after(r.rate_window_start, d.rate_window),
                            Deadline::RateCheck,
                        ),
                    );
                }
                Some(best)
            }
            Phase::Idle(p) => Some((after(p.since, idle_timeout), Deadline::IdleExpired)),
            Phase::Gone => None,
        }
    }
}

/// How far away "never" is: deadlines are clamped here so that an absurd configured
/// duration cannot overflow `Instant` arithmetic (which would panic).
const FAR_FUTURE: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

/// `t + d`, saturating at [`FAR_FUTURE`] from `t`.
pub(crate) fn after(t: Instant, d: Duration) -> Instant {
    t + d.min(FAR_FUTURE)
}

/// What happens when a connection's deadline passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Deadline {
    /// The exchange fails with this timeout.
    Fail(TimeoutPhase),
    /// Check the transfer rate over the window just ended.
    RateCheck,
    /// The idle connection is closed.
    IdleExpired,
}

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

impl Received {
    /// A fresh response state for a request that was just sent.
    pub fn new(reader: ResponseReader, now: Instant) -> Self {
        Self {
            reader,
            sent_at: now,
            first_byte_at: None,
            last_read: now,
            rate_window_start: now,
            rate_window_bytes: 0,
            wire_bytes: 0,
            carry: Vec::new(),
            raw: Vec::new(),
            raw_truncated: false,
            body: Vec::new(),
            identity: false,
        }
    }

    /// Keeps `bytes` in the raw record, up to the cap.
    pub fn record_raw(&mut self, bytes: &[u8], limits: &FetchLimits) {
        if limits.record_raw_bytes == 0 {
            return;
        }
        let room = limits.record_raw_bytes.saturating_sub(self.raw.len());
        let take = room.min(bytes.len());
        self.raw
            .extend_from_slice(bytes.get(..take).unwrap_or_default());
        if take < bytes.len() {
            self.raw_truncated = true;
        }
    }
}
