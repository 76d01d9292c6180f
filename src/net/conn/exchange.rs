//! What travels through the phases: the [`Job`] (a request, surviving retries and
//! address changes), the [`Exchange`] (one attempt on one connection) and [`ResponseProgress`]
//! (the response so far); and how they become a [`FetchOutcome`].

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::fetch::FetchRequest;
use crate::fetch::{FailReason, FetchOutcome, Timings};
use crate::http::{write_request, ResponseReader, SharedBytes};
use crate::net::per_ip::IpTicket;
use crate::net::pool::PoolKey;

/// A request on its way through the fetcher; survives a retry on a new connection.
pub(crate) struct Job {
    pub req: FetchRequest,
    pub key: PoolKey,
    /// The serialized request head, shared with the outcome (the WARC `request` record
    /// stores these bytes).
    pub wire: SharedBytes,
    pub submitted: Instant,
    pub dns: Option<Duration>,
    pub addrs: Option<Arc<[SocketAddr]>>,
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
    /// The current exchange runs on a connection opened for another host name on the
    /// same address (shared hosting): a 421 answer is retried on a fresh connection.
    pub shared_conn: bool,
}

impl Job {
    /// A request just submitted for `key`, its head serialized once (a retry resends
    /// the same bytes). A request with a fixed address skips DNS.
    pub fn new(req: FetchRequest, key: PoolKey, now: Instant) -> Self {
        let mut wire = Vec::with_capacity(256);
        write_request(&req.head, &mut wire);
        let addrs = req.addr.map(|a| -> Arc<[SocketAddr]> { vec![a].into() });
        Self {
            dns: addrs.as_ref().map(|_| Duration::ZERO),
            addrs,
            req,
            key,
            wire: wire.into(),
            submitted: now,
            addr_index: 0,
            retries: 0,
            fresh_only: false,
            ip_ticket: None,
            ip_wait_since: None,
            ip_waited: Duration::ZERO,
            shared_conn: false,
        }
    }

    /// Ends a wait for a per-IP slot (if one is running), adding it to `ip_waited`.
    pub fn end_ip_wait(&mut self, now: Instant) {
        if let Some(since) = self.ip_wait_since.take() {
            self.ip_waited += now.saturating_duration_since(since);
        }
    }
}

/// Per-exchange state carried through the phases of one request.
pub(crate) struct Exchange {
    /// Boxed: a connection's phase moves by value at every step (`Phase::take`, then
    /// the next phase put back), and the job is most of an exchange's bytes (a
    /// `Phase` was 1,184 bytes with it inline, copied several times per read event).
    pub job: Box<Job>,
    /// When the exchange left the queue (start of `total_timeout`).
    pub started: Instant,
    pub timings: Timings,
    pub reused: bool,
    /// The TLS handshake of this exchange resumed an earlier session.
    pub tls_resumed: bool,
}

impl Exchange {
    /// `job`'s exchange on a fresh connection, starting `now`.
    pub fn fresh(job: Job, now: Instant) -> Self {
        Self {
            job: Box::new(job),
            started: now,
            timings: Timings::default(),
            reused: false,
            tls_resumed: false,
        }
    }
}

/// The response state of an exchange, kept apart from [`Exchange`] so a failure or the
/// outcome can take both by move.
pub(crate) struct ResponseProgress {
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
    /// The payload of a content-coded body, as de-framed by the reader (kept only when
    /// the request asked for it; an identity body is its own payload).
    pub payload: Vec<u8>,
    /// Decoded body.
    pub body: Vec<u8>,
    /// The head said identity coding: the reader appends straight to `body`.
    pub identity: bool,
}

impl ResponseProgress {
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
            payload: Vec::new(),
            body: Vec::new(),
            identity: false,
        }
    }

    /// The rate window ends at `now`: whether at least `min_bytes_per_sec` arrived on
    /// average since it began. If so, the next window starts now; if not, the exchange
    /// is too slow (a drip that never trips the idle timeout).
    pub fn rate_window_passed(&mut self, min_bytes_per_sec: u64, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.rate_window_start);
        let needed = (min_bytes_per_sec as f64 * elapsed.as_secs_f64()) as u64;
        if self.rate_window_bytes < needed {
            return false;
        }
        self.rate_window_start = now;
        self.rate_window_bytes = 0;
        true
    }
}

/// The outcome of `ex`, with what was received (if anything) and the failure (if any).
pub(crate) fn build_outcome(
    ex: Exchange,
    reading: Option<ResponseProgress>,
    peer: Option<SocketAddr>,
    error: Option<FailReason>,
    now: Instant,
) -> FetchOutcome {
    let Exchange {
        job,
        mut timings,
        reused,
        tls_resumed,
        ..
    } = ex;
    timings.dns = job.dns;
    timings.ip_wait = (!job.ip_waited.is_zero()).then_some(job.ip_waited);
    timings.total = now.saturating_duration_since(job.submitted);
    let keep_payload = job.req.limits.keep_payload;
    let mut outcome = FetchOutcome {
        id: job.req.id,
        url: job.req.head.url,
        request: job.wire,
        head: None,
        payload: None,
        body: SharedBytes::default(),
        body_truncated: false,
        body_complete: false,
        wire_bytes: 0,
        decoded_bytes: 0,
        peer,
        reused_connection: reused,
        tls_resumed,
        retries: job.retries,
        timings,
        error,
    };
    if let Some(r) = reading {
        outcome.timings.first_byte = r
            .first_byte_at
            .map(|t| t.saturating_duration_since(r.sent_at));
        outcome.body_truncated = r.reader.body_truncated();
        outcome.body_complete = r.reader.is_done() && !outcome.body_truncated;
        outcome.wire_bytes = r.wire_bytes;
        outcome.decoded_bytes = r.body.len() as u64;
        // The body moves into a shared buffer (no copy); an identity body is also the
        // payload: the same allocation, not a second buffer.
        outcome.body = SharedBytes::from(r.body);
        let head = r.reader.into_head();
        if head.is_some() {
            outcome.payload = if r.identity {
                Some(outcome.body.clone())
            } else if keep_payload {
                Some(SharedBytes::from(r.payload))
            } else {
                None
            };
        }
        outcome.head = head;
    }
    outcome
}
