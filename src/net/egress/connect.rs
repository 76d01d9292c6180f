//! The HTTP `CONNECT` handshake, sans-IO: [`ConnectClient`] holds the request to write
//! and reads the proxy's reply head; the connection phase (`net/conn/`) moves the bytes.
//!
//! The reply head is read up to [`MAX_CONNECT_HEAD_BYTES`] with at most
//! [`MAX_CONNECT_HEADERS`] headers, and classified by [`super::status::classify`]. A 2xx
//! reply has no body (RFC 9110 §9.3.6): bytes after its head are the proxy speaking out
//! of turn, reported as `surplus` for the caller to refuse (`proxy-protocol`). After any
//! other reply the connection is closed, so its body is never read.

#![deny(clippy::indexing_slicing)]

use super::secret::Secret;
use super::status::{classify, ProxyErrorKind, ReplyClass};
use super::url::authority;

/// The longest reply head read.
pub const MAX_CONNECT_HEAD_BYTES: usize = 16 * 1024;
/// Headers of a reply head read at most.
pub const MAX_CONNECT_HEADERS: usize = 64;

/// Why a `CONNECT` could not be made or its reply not read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConnectError {
    /// The target host holds a character a request line cannot carry.
    #[error("host cannot be sent in a CONNECT request")]
    Host,
    /// The reply head is over [`MAX_CONNECT_HEAD_BYTES`].
    #[error("proxy reply head over {MAX_CONNECT_HEAD_BYTES} bytes")]
    TooLarge,
    /// The reply head has over [`MAX_CONNECT_HEADERS`] headers.
    #[error("proxy reply has over {MAX_CONNECT_HEADERS} headers")]
    TooManyHeaders,
    /// The reply is not an HTTP/1.x response head.
    #[error("malformed proxy reply")]
    Malformed,
    /// The proxy spoke before the request was written.
    #[error("proxy replied before the CONNECT request was sent")]
    Early,
}

impl ConnectError {
    /// The failure kind: [`ProxyErrorKind::Protocol`] for all.
    pub fn kind(self) -> ProxyErrorKind {
        ProxyErrorKind::Protocol
    }
}

/// A proxy's reply head, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectReply {
    /// The status code.
    pub status: u16,
    /// What it means ([`ReplyClass::Tunnel`] or a failure).
    pub class: ReplyClass,
    /// The head's length in bytes.
    pub head_bytes: usize,
}

/// Parses a reply head at the start of `buf`: `Ok(None)` while it is incomplete.
///
/// # Errors
/// [`ConnectError`] when it is not a response head within the limits.
pub fn parse_reply(buf: &[u8]) -> Result<Option<ConnectReply>, ConnectError> {
    let window = buf.get(..MAX_CONNECT_HEAD_BYTES).unwrap_or(buf);
    let mut headers = [httparse::EMPTY_HEADER; MAX_CONNECT_HEADERS];
    let mut resp = httparse::Response::new(&mut headers);
    let head_bytes = match resp.parse(window) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) if buf.len() >= MAX_CONNECT_HEAD_BYTES => {
            return Err(ConnectError::TooLarge)
        }
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(ConnectError::TooManyHeaders),
        Err(_) => return Err(ConnectError::Malformed),
    };
    let status = resp.code.ok_or(ConnectError::Malformed)?;
    let mut proxy_status: Vec<u8> = Vec::new();
    let mut squid_error = None;
    for h in resp.headers.iter() {
        if h.name.eq_ignore_ascii_case("proxy-status") {
            if !proxy_status.is_empty() {
                proxy_status.push(b',');
            }
            proxy_status.extend_from_slice(h.value);
        } else if h.name.eq_ignore_ascii_case("x-squid-error") {
            squid_error = Some(h.value);
        }
    }
    let proxy_status = (!proxy_status.is_empty()).then_some(&proxy_status[..]);
    Ok(Some(ConnectReply {
        status,
        class: classify(status, true, proxy_status, squid_error),
        head_bytes,
    }))
}

/// One `CONNECT` handshake: the request to write, then the reply to read.
pub struct ConnectClient {
    /// The request (it may hold `Proxy-Authorization`, so it is a [`Secret`]).
    request: Secret,
    written: usize,
    head: Vec<u8>,
}

impl std::fmt::Debug for ConnectClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectClient")
            .field("request_bytes", &self.request.len())
            .field("written", &self.written)
            .field("head_bytes", &self.head.len())
            .finish()
    }
}

/// What reading the reply gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectDone {
    /// The reply.
    pub reply: ConnectReply,
    /// Bytes read past the head (a 2xx with any is a protocol error).
    pub surplus: usize,
}

impl ConnectClient {
    /// A `CONNECT host:port` request, with `auth` (a whole `Proxy-Authorization` line,
    /// from `Credentials::basic_header`) when given. `host` may be an IPv6 literal,
    /// bracketed or not.
    ///
    /// # Errors
    /// [`ConnectError::Host`] for a host with a character outside `[A-Za-z0-9.:_-]`.
    pub fn new(host: &str, port: u16, auth: Option<&Secret>) -> Result<Self, ConnectError> {
        let bare = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        let valid = !bare.is_empty()
            && bare
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b':'));
        if !valid || (bare.contains(':') && bare.parse::<std::net::Ipv6Addr>().is_err()) {
            return Err(ConnectError::Host);
        }
        let target = authority(bare, port);
        let mut req = Vec::with_capacity(2 * target.len() + 64);
        req.extend_from_slice(b"CONNECT ");
        req.extend_from_slice(target.as_bytes());
        req.extend_from_slice(b" HTTP/1.1\r\nHost: ");
        req.extend_from_slice(target.as_bytes());
        req.extend_from_slice(b"\r\n");
        if let Some(line) = auth {
            req.extend_from_slice(line.expose());
        }
        req.extend_from_slice(b"\r\n");
        Ok(Self {
            request: Secret::new(req),
            written: 0,
            head: Vec::new(),
        })
    }

    /// The request bytes not written yet.
    pub fn pending(&self) -> &[u8] {
        self.request.expose().get(self.written..).unwrap_or(&[])
    }

    /// Records that `n` more request bytes were written.
    pub fn wrote(&mut self, n: usize) {
        self.written = self.written.saturating_add(n).min(self.request.len());
    }

    /// Whether the whole request is written (then the reply is awaited).
    pub fn is_sent(&self) -> bool {
        self.written >= self.request.len()
    }

    /// Reads reply bytes: `Ok(None)` until the head is complete.
    ///
    /// # Errors
    /// [`ConnectError`] for a reply that cannot be read, or bytes before the request is
    /// out.
    pub fn feed(&mut self, input: &[u8]) -> Result<Option<ConnectDone>, ConnectError> {
        if input.is_empty() {
            return Ok(None);
        }
        if !self.is_sent() {
            return Err(ConnectError::Early);
        }
        let room = MAX_CONNECT_HEAD_BYTES.saturating_sub(self.head.len());
        let (now, later) = input.split_at(input.len().min(room));
        self.head.extend_from_slice(now);
        match parse_reply(&self.head)? {
            None if self.head.len() >= MAX_CONNECT_HEAD_BYTES => Err(ConnectError::TooLarge),
            None => Ok(None),
            Some(reply) => {
                let surplus = self.head.len() - reply.head_bytes + later.len();
                Ok(Some(ConnectDone { reply, surplus }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::secret::{CredSource, Credentials};
    use super::super::status::{DnsFailure, OriginFailure, ProxyVerdict};
    use super::*;

    #[test]
    fn request_bytes() {
        let c = ConnectClient::new("a.test", 443, None).expect("request");
        assert_eq!(
            c.pending(),
            b"CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n"
        );
        let c = ConnectClient::new("[::1]", 8443, None).expect("request");
        assert!(c.pending().starts_with(b"CONNECT [::1]:8443 HTTP/1.1\r\n"));
        let auth = Credentials {
            user: "u".into(),
            pass: Secret::new(b"p".to_vec()),
            source: CredSource::Url("--proxy".into()),
        }
        .basic_header();
        let mut c = ConnectClient::new("::1", 1, Some(&auth)).expect("request");
        assert_eq!(
            c.pending(),
            &b"CONNECT [::1]:1 HTTP/1.1\r\nHost: [::1]:1\r\nProxy-Authorization: Basic dTpw\r\n\r\n"[..]
        );
        assert!(!format!("{c:?}").contains("dTpw"));
        assert_eq!(c.feed(b"H"), Err(ConnectError::Early));
        c.wrote(10);
        assert!(!c.is_sent());
        c.wrote(1000);
        assert!(c.is_sent());
        assert!(c.pending().is_empty());
        for bad in ["a b", "a\r\nX: y", "", "a/b", "[]", "a:b", "[a.test]:1"] {
            assert_eq!(
                ConnectClient::new(bad, 1, None).map(|_| ()),
                Err(ConnectError::Host),
                "{bad:?}"
            );
        }
    }

    /// Replies with and without bodies and `Proxy-Status`: every prefix shorter than
    /// the head is incomplete, and every longer one gives the same reply, fed at once or
    /// in two pieces.
    #[test]
    fn every_prefix_of_valid_replies() {
        use ProxyVerdict::{Origin, Own};
        let table: &[(&[u8], usize, u16, ReplyClass)] = &[
            (b"HTTP/1.1 200 Connection established\r\n\r\n", 0, 200, ReplyClass::Tunnel),
            (b"HTTP/1.0 200 OK\r\nVia: 1.1 squid\r\n\r\n", 0, 200, ReplyClass::Tunnel),
            (
                b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"x\"\r\nContent-Length: 5\r\n\r\nhello",
                5,
                407,
                ReplyClass::Failed { verdict: Own(ProxyErrorKind::Auth), error_type: None },
            ),
            (
                b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n",
                0,
                407,
                ReplyClass::Failed { verdict: Own(ProxyErrorKind::Auth), error_type: None },
            ),
            (
                b"HTTP/1.1 503 Service Unavailable\r\nX-Squid-Error: ERR_DNS_FAIL 0\r\nContent-Length: 3\r\n\r\nabc",
                3,
                503,
                ReplyClass::Failed {
                    verdict: Origin(OriginFailure::Dns(DnsFailure::NoSuchName)),
                    error_type: Some("ERR_DNS_FAIL".into()),
                },
            ),
            (
                b"HTTP/1.1 503 Service Unavailable\r\nProxy-Status: origin; error=http_request_denied\r\nProxy-Status: squid; error=connection_refused\r\nX-Squid-Error: ERR_ACCESS_DENIED 0\r\n\r\n",
                0,
                503,
                ReplyClass::Failed {
                    verdict: Origin(OriginFailure::Refused),
                    error_type: Some("connection_refused".into()),
                },
            ),
            (
                b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n",
                0,
                503,
                ReplyClass::Failed { verdict: Own(ProxyErrorKind::Error), error_type: None },
            ),
            (
                b"HTTP/1.1 502 Bad Gateway\r\nProxy-Status: p; error=proxy_loop_detected\r\n\r\n<html>",
                6,
                502,
                ReplyClass::Failed {
                    verdict: Own(ProxyErrorKind::Error),
                    error_type: Some("proxy_loop_detected".into()),
                },
            ),
        ];
        for (bytes, body, status, class) in table {
            let head = bytes.len() - body;
            for cut in 0..=bytes.len() {
                let prefix = &bytes[..cut];
                let got = parse_reply(prefix).unwrap_or_else(|e| panic!("{cut}: {e}"));
                if cut < head {
                    assert_eq!(
                        got,
                        None,
                        "prefix {cut} of {}",
                        String::from_utf8_lossy(bytes)
                    );
                    continue;
                }
                let want = ConnectReply {
                    status: *status,
                    class: class.clone(),
                    head_bytes: head,
                };
                assert_eq!(got.as_ref(), Some(&want), "prefix {cut}");
                for split in 0..=cut {
                    let mut c = ConnectClient::new("a.test", 443, None).expect("request");
                    c.wrote(c.pending().len());
                    let (done, fed) = match c.feed(&prefix[..split]).expect("first piece") {
                        Some(done) => (done, split),
                        None => {
                            let rest = c.feed(&prefix[split..]).expect("second piece");
                            (rest.expect("complete"), cut)
                        }
                    };
                    assert_eq!(done.reply, want, "split {split} of {cut}");
                    assert_eq!(done.surplus, fed - head, "split {split} of {cut}");
                }
            }
        }
    }

    #[test]
    fn limits_and_garbage() {
        assert_eq!(
            parse_reply(b"SSH-2.0-OpenSSH\r\n\r\n"),
            Err(ConnectError::Malformed)
        );
        assert_eq!(
            parse_reply(b"HTTP/1.1 abc\r\n\r\n"),
            Err(ConnectError::Malformed)
        );
        let mut many = b"HTTP/1.1 200 OK\r\n".to_vec();
        for i in 0..=MAX_CONNECT_HEADERS {
            many.extend_from_slice(format!("X-{i}: y\r\n").as_bytes());
        }
        many.extend_from_slice(b"\r\n");
        assert_eq!(parse_reply(&many), Err(ConnectError::TooManyHeaders));
        let mut big = b"HTTP/1.1 200 OK\r\nX: ".to_vec();
        big.resize(MAX_CONNECT_HEAD_BYTES, b'a');
        assert_eq!(parse_reply(&big), Err(ConnectError::TooLarge));
        let mut c = ConnectClient::new("a.test", 443, None).expect("request");
        c.wrote(usize::MAX);
        assert_eq!(c.feed(&big[..100]), Ok(None));
        assert_eq!(c.feed(&big[100..]), Err(ConnectError::TooLarge));
        assert_eq!(ConnectError::TooLarge.kind(), ProxyErrorKind::Protocol);
    }
}
