//! What the fetcher hands back for every request: a [`FetchOutcome`].
//!
//! A failed fetch is a value, not an `Err`: the crawl engine records it in the crawl log
//! and moves on. [`FailReason`] has one variant per way a fetch can fail, with the phase
//! for timeouts and the parser's own typed error for protocol failures.
//!
//! The HTTP exchange comes back parsed, once: the request bytes as sent, the response
//! head as typed values (with its bytes), the payload as it came off the wire and the
//! decoded body. The engine, the WARC writer and the crawl log read these values and
//! share the buffers ([`SharedBytes`]); none of them parses the response again.

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use crate::http::{DecodeError, HttpError, ResponseHead, SharedBytes};

/// The phase a deadline belongs to (see `docs/fetcher.md`, "Deadlines").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimeoutPhase {
    /// Name resolution took too long. Not produced by the fetcher any more: a lookup
    /// past `dns_timeout` fails with [`DnsFailure::TimedOut`], so the crawl log keeps
    /// DNS failures together. Kept for readers of old logs.
    Dns,
    /// The TCP handshake did not finish within `connect_timeout`.
    Connect,
    /// The TLS handshake did not finish within `tls_timeout`.
    Tls,
    /// The request could not be written within `first_byte_timeout`.
    Send,
    /// No response byte arrived within `first_byte_timeout` after the request was sent.
    FirstByte,
    /// No byte arrived for `read_idle_timeout` while reading the response.
    ReadIdle,
    /// The whole exchange exceeded `total_timeout`.
    Total,
    /// The body arrived slower than `min_rate_bytes_per_sec` over a rate window.
    SlowTransfer,
    /// The request waited for a free connection slot longer than `total_timeout`.
    Queue,
    /// The proxy did not take our `CONNECT` request or SOCKS5 greeting within
    /// `proxy_timeout` (the proxy's failure; a reply that is late is the origin's,
    /// [`TimeoutPhase::Connect`]: the proxy is still dialling it).
    Proxy,
}

impl TimeoutPhase {
    /// Short lowercase name, as printed in JSON lines.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Dns => "dns",
            Self::Connect => "connect",
            Self::Tls => "tls",
            Self::Send => "send",
            Self::FirstByte => "first_byte",
            Self::ReadIdle => "read_idle",
            Self::Total => "total",
            Self::SlowTransfer => "slow_transfer",
            Self::Queue => "queue",
            Self::Proxy => "proxy",
        }
    }
}

/// Why name resolution failed: each kind says something different about the host, so
/// the crawl log keeps them apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DnsFailure {
    /// NXDOMAIN: the name does not exist (under every search domain tried).
    NoSuchName,
    /// The name exists but has no A or AAAA record (NODATA).
    NoAddress,
    /// No server answered before the lookup's deadline or its last retry.
    TimedOut,
    /// The name timed out before and is remembered as dead (`--dns-dead-secs`), or it
    /// used up its tries (`--dns-max-tries`): failed at once, nothing was sent.
    Dead,
    /// The servers answered SERVFAIL (or another error code).
    ServerFailure,
    /// The servers refused to answer (REFUSED).
    Refused,
    /// Only malformed answers came back.
    Malformed,
    /// Too many lookups are waiting already.
    Overloaded,
    /// No lookup could be sent (no socket, or no server to ask).
    Unavailable,
}

impl DnsFailure {
    /// Short lowercase name, as in the crawl log.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::NoSuchName => "no such name",
            Self::NoAddress => "no address",
            Self::TimedOut => "timed out",
            Self::Dead => "dead name",
            Self::ServerFailure => "server failure",
            Self::Refused => "refused",
            Self::Malformed => "malformed answer",
            Self::Overloaded => "resolver overloaded",
            Self::Unavailable => "resolver unavailable",
        }
    }
}

/// Which way a proxy failed (issue 29; `docs/network.md`, "Whose failure"). None of
/// them counts toward giving up the origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProxyFailKind {
    /// The proxy refused or reset our connection, timed out, or closed before it
    /// answered.
    Unreachable,
    /// The proxy refused our credentials or wants some (407, SOCKS5 method `0xFF` or an
    /// RFC 1929 refusal). Not retried.
    Auth,
    /// The proxy answered with an error of its own (a `CONNECT` refused, a 502-504 it
    /// marks as its own, a SOCKS5 failure that is not about the destination).
    Error,
    /// The proxy's answer does not parse, or it spoke out of turn (bytes after the
    /// handshake).
    Protocol,
}

impl ProxyFailKind {
    /// The name in the `outcome` field of JSON lines.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unreachable => "proxy-unreachable",
            Self::Auth => "proxy-auth",
            Self::Error => "proxy-error",
            Self::Protocol => "proxy-protocol",
        }
    }
}

/// A failure of the proxy itself: its kind and a short detail (the proxy's error
/// type, a status code, a SOCKS5 reply). The detail never holds a credential: it is
/// built by trawl from fixed text and the proxy's sanitized error type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProxyFailure {
    /// Which way the proxy failed.
    pub kind: ProxyFailKind,
    /// What the proxy said or did, short and lowercase where trawl wrote it.
    pub detail: String,
}

impl ProxyFailure {
    /// A failure of `kind` with `detail`.
    pub fn new(kind: ProxyFailKind, detail: impl Into<String>) -> Self {
        Self {
            kind,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for ProxyFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.as_str(), self.detail)
    }
}

/// Why a fetch failed. Every failure the network can cause ends in one of these.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FailReason {
    /// The URL cannot be fetched (not http/https, no host, ...).
    InvalidUrl(&'static str),
    /// Name resolution failed.
    Dns(DnsFailure),
    /// The peer refused the connection (RST on SYN).
    Refused,
    /// Another connect failure (unreachable network or host, ...).
    Connect(String),
    /// The peer reset the connection after it was established.
    Reset,
    /// The peer closed the connection before a complete response.
    ClosedEarly,
    /// A deadline passed; the phase says which one.
    Timeout(TimeoutPhase),
    /// The TLS handshake or a TLS record failed (bad certificate, alert, ...).
    Tls(String),
    /// The response broke HTTP/1.1 framing; the HTTP layer's typed error says how.
    Protocol(HttpError),
    /// The body could not be content-decoded (corrupt stream, unknown coding).
    Decode(DecodeError),
    /// A size cap was hit and the configured mode is to abort: body bytes on the wire
    /// (`Protocol` carries head-size caps) or decoded bytes / expansion ratio (a bomb).
    TooLarge,
    /// Another I/O error on the socket.
    Io(String),
    /// The fetcher is shutting down or out of capacity for queued requests.
    Overloaded,
    /// The resolved address is loopback, private, link-local, multicast or
    /// unspecified, and private addresses are not allowed.
    BlockedAddress,
    /// The proxy on the request's route failed (its own failure; a failure it reports
    /// for the destination gets the reason a direct fetch would have).
    Proxy(ProxyFailure),
}

impl FailReason {
    /// Short lowercase class, as printed in the `outcome` field of JSON lines.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::InvalidUrl(_) => "invalid_url",
            Self::Dns(_) => "dns",
            Self::Refused => "refused",
            Self::Connect(_) => "connect",
            Self::Reset => "reset",
            Self::ClosedEarly => "closed",
            Self::Timeout(_) => "timeout",
            Self::BlockedAddress => "blocked-address",
            Self::Tls(_) => "tls",
            Self::Protocol(_) => "protocol",
            Self::Decode(_) => "decode",
            Self::TooLarge => "too_large",
            Self::Io(_) => "io",
            Self::Overloaded => "overloaded",
            Self::Proxy(p) => p.kind.as_str(),
        }
    }
}

impl fmt::Display for FailReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidUrl(why) => write!(f, "invalid url: {why}"),
            Self::Dns(e) => write!(f, "dns: {}", e.as_str()),
            Self::Refused => f.write_str("connection refused"),
            Self::Connect(e) => write!(f, "connect: {e}"),
            Self::Reset => f.write_str("connection reset"),
            Self::ClosedEarly => f.write_str("connection closed before a complete response"),
            Self::Timeout(p) => write!(f, "timeout: {}", p.as_str()),
            Self::Tls(e) => write!(f, "tls: {e}"),
            Self::Protocol(e) => write!(f, "protocol: {e}"),
            Self::Decode(e) => write!(f, "decode: {e:?}"),
            Self::TooLarge => f.write_str("response too large"),
            Self::Io(e) => write!(f, "io: {e}"),
            Self::Overloaded => f.write_str("fetcher overloaded"),
            Self::BlockedAddress => {
                f.write_str("address not allowed (private, loopback or special)")
            }
            Self::Proxy(p) => p.fmt(f),
        }
    }
}

impl std::error::Error for FailReason {}

/// Durations of each step of one fetch. A step that did not happen (a reused connection
/// has no connect) is `None`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timings {
    /// Name resolution (zero for a cache hit or a static override).
    pub dns: Option<Duration>,
    /// TCP connect.
    pub connect: Option<Duration>,
    /// The proxy handshake (`CONNECT` or SOCKS5), from the connect to the tunnel.
    pub proxy: Option<Duration>,
    /// TLS handshake.
    pub tls: Option<Duration>,
    /// From the request being written to the first response byte.
    pub first_byte: Option<Duration>,
    /// From submission to the outcome.
    pub total: Duration,
    /// Time spent waiting for a per-IP connection slot (`None`: no wait).
    pub ip_wait: Option<Duration>,
}

impl Timings {
    /// How long the exchange took once it was free to start: `total` less the per-IP
    /// wait. What adaptive politeness should scale with (a queue in front of a shared
    /// server says nothing about how fast one of its hosts answers).
    pub fn response_time(&self) -> Duration {
        self.total.saturating_sub(self.ip_wait.unwrap_or_default())
    }
}

/// The result of one request.
#[derive(Debug)]
pub struct FetchOutcome {
    /// The id the caller gave in [`crate::fetch::FetchRequest::id`].
    pub id: u64,
    /// The URL requested.
    pub url: url::Url,
    /// The request head exactly as written to the connection (serialized once, when the
    /// request was submitted; a retry resends the same bytes).
    pub request: SharedBytes,
    /// The final response head (1xx skipped), when one arrived — also on some failures
    /// (a body that broke off still has its head). [`ResponseHead::raw`] holds its bytes
    /// as received.
    pub head: Option<ResponseHead>,
    /// The payload as it came off the wire: the message body with the transfer coding
    /// (chunked) removed and the content coding (gzip, br) kept — what a WARC `response`
    /// record stores and its payload digest covers. The same buffer as `body` when the
    /// body has no content coding; `None` when a content-coded payload was not asked
    /// for ([`crate::fetch::FetchLimits::keep_payload`]) or no head arrived.
    pub payload: Option<SharedBytes>,
    /// The body, content-decoded, capped by the request's limits.
    pub body: SharedBytes,
    /// The body was cut at a cap (truncate mode) rather than received whole.
    pub body_truncated: bool,
    /// The response's framing ended where it said it would (Content-Length reached, last
    /// chunk, or the close of a close-delimited body), not cut by a cap or a failure.
    pub body_complete: bool,
    /// Bytes received on the wire for this exchange (head and framed body, before TLS
    /// decryption overhead is counted: plaintext HTTP bytes).
    pub wire_bytes: u64,
    /// Body bytes after content decoding.
    pub decoded_bytes: u64,
    /// The address connected to.
    pub peer: Option<SocketAddr>,
    /// Whether the exchange ran on a connection reused from the keep-alive pool.
    pub reused_connection: bool,
    /// The TLS handshake for this exchange resumed a cached session (fresh HTTPS
    /// connections only; false for plain HTTP and reused connections).
    pub tls_resumed: bool,
    /// How many times the request was retried on a fresh connection (0 or 1).
    pub retries: u8,
    /// Step durations.
    pub timings: Timings,
    /// `None` when the fetch completed; the reason otherwise.
    pub error: Option<FailReason>,
}

impl FetchOutcome {
    /// An outcome with no response: the request failed (or was refused) before a
    /// head arrived.
    pub fn failed(id: u64, url: url::Url, request: SharedBytes, error: FailReason) -> Self {
        Self {
            id,
            url,
            request,
            head: None,
            payload: None,
            body: SharedBytes::default(),
            body_truncated: false,
            body_complete: false,
            wire_bytes: 0,
            decoded_bytes: 0,
            peer: None,
            reused_connection: false,
            tls_resumed: false,
            retries: 0,
            timings: Timings::default(),
            error: Some(error),
        }
    }

    /// The HTTP status, when a response head arrived.
    pub fn status(&self) -> Option<u16> {
        self.head.as_ref().map(|h| h.status)
    }

    /// True when a complete response was received (whatever its status).
    pub fn is_ok(&self) -> bool {
        self.error.is_none()
    }
}

#[cfg(test)]
impl FetchOutcome {
    /// A made-up complete answer for the crawl's own tests (core, record builder):
    /// request `id` for `url`, `status` with `headers`, `body` identity-coded (no
    /// payload kept; set `payload` for a WARC capture), 100 bytes of head on the wire.
    pub(crate) fn answered(
        id: u64,
        url: &str,
        status: u16,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Self {
        let url = url::Url::parse(url).expect("a test URL");
        let mut o = Self::failed(id, url, SharedBytes::default(), FailReason::Reset);
        o.error = None;
        let mut raw = format!("HTTP/1.1 {status} X\r\n");
        for (n, v) in headers {
            raw.push_str(&format!("{n}: {v}\r\n"));
        }
        raw.push_str("\r\n");
        o.head = Some(ResponseHead::parse(raw.as_bytes()).expect("a test head"));
        o.body = body.into();
        o.body_complete = true;
        o.wire_bytes = body.len() as u64 + 100;
        o.decoded_bytes = body.len() as u64;
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_outcome_has_no_response_and_says_why() {
        let url = url::Url::parse("http://a.test/").unwrap();
        let o = FetchOutcome::failed(7, url, SharedBytes::default(), FailReason::Refused);
        assert_eq!((o.id, o.status(), o.is_ok()), (7, None, false));
        assert!(o.head.is_none() && o.payload.is_none() && o.body.is_empty());
        assert!(!o.body_complete && !o.body_truncated);
        assert_eq!(o.error.as_ref().map(FailReason::kind), Some("refused"));
        assert_eq!(o.timings, Timings::default());
    }

    #[test]
    fn a_response_outcome_reads_its_status_from_the_typed_head() {
        let url = url::Url::parse("http://a.test/").unwrap();
        let mut o = FetchOutcome::failed(1, url, SharedBytes::from(b"GET"), FailReason::Reset);
        o.error = None;
        o.head = Some(ResponseHead::parse(b"HTTP/1.1 404 Not Found\r\n\r\n").unwrap());
        assert_eq!((o.status(), o.is_ok()), (Some(404), true));
        assert_eq!(o.request, b"GET");
    }

    #[test]
    fn response_time_leaves_out_the_per_ip_wait() {
        let t = Timings {
            total: Duration::from_millis(900),
            ip_wait: Some(Duration::from_millis(600)),
            ..Timings::default()
        };
        assert_eq!(t.response_time(), Duration::from_millis(300));
        let no_wait = Timings {
            total: Duration::from_millis(5),
            ..Timings::default()
        };
        assert_eq!(no_wait.response_time(), Duration::from_millis(5));
    }

    #[test]
    fn failure_kinds_and_messages_are_short_and_lowercase() {
        let reasons = [
            FailReason::Timeout(TimeoutPhase::FirstByte),
            FailReason::Protocol(HttpError::IncompleteBody),
            FailReason::Dns(DnsFailure::NoAddress),
            FailReason::BlockedAddress,
            FailReason::Timeout(TimeoutPhase::Proxy),
            FailReason::Proxy(ProxyFailure::new(ProxyFailKind::Auth, "407 from proxy")),
        ];
        for r in reasons {
            let text = r.to_string();
            assert_eq!(text, text.to_lowercase(), "{r:?}");
            assert!(!r.kind().is_empty());
        }
        assert_eq!(
            FailReason::Timeout(TimeoutPhase::FirstByte).to_string(),
            "timeout: first_byte"
        );
    }

    #[test]
    fn proxy_failures_are_named_by_their_kind() {
        let cases = [
            (ProxyFailKind::Unreachable, "proxy-unreachable"),
            (ProxyFailKind::Auth, "proxy-auth"),
            (ProxyFailKind::Error, "proxy-error"),
            (ProxyFailKind::Protocol, "proxy-protocol"),
        ];
        for (kind, name) in cases {
            let r = FailReason::Proxy(ProxyFailure::new(kind, "x"));
            assert_eq!(r.kind(), name);
            assert_eq!(r.to_string(), format!("{name}: x"));
        }
        assert_eq!(TimeoutPhase::Proxy.as_str(), "proxy");
    }
}
