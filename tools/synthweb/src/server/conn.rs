//! One HTTP/1.1 connection: read request heads (pipelining tolerated: every complete
//! request in the buffer is answered before the batch is flushed), answer from the
//! generator through the cache, apply hostile behaviours, log each request.

#![deny(clippy::indexing_slicing)]

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::cache::Key;
use super::log::{now_us, LogMsg, LogRecord};
use super::{hostile, Shared};
use crate::site::{Conditions, Framing, Response, Scheme, Site};

/// Largest request head accepted (a request-target past 8 KiB still fits, so the
/// generator can answer 414).
pub const MAX_HEAD_BYTES: usize = 32 * 1024;
/// Most request header fields accepted.
pub const MAX_HEADERS: usize = 100;
/// Largest request body skipped (requests with bodies are unusual for a crawler).
pub const MAX_REQUEST_BODY_BYTES: usize = 1 << 20;

/// A byte stream that can be reset (RST) instead of closed.
pub trait Stream: AsyncRead + AsyncWrite + Unpin + Send {
    /// Arrange for the next close to send RST (SO_LINGER 0).
    fn set_reset(&self);
}

impl Stream for tokio::net::TcpStream {
    fn set_reset(&self) {
        let _ = self.set_zero_linger();
    }
}

impl Stream for tokio_rustls::server::TlsStream<tokio::net::TcpStream> {
    fn set_reset(&self) {
        let _ = self.get_ref().0.set_zero_linger();
    }
}

/// Where a connection came from.
#[derive(Debug, Clone, Copy)]
pub struct ConnInfo {
    /// Connection id.
    pub id: u64,
    /// Local address.
    pub local: SocketAddr,
    /// Peer address.
    pub peer: SocketAddr,
    /// Scheme.
    pub scheme: Scheme,
}

/// A parsed request, owned.
#[derive(Debug, Default)]
pub struct Request {
    /// Method.
    pub method: String,
    /// Target.
    pub target: String,
    /// HTTP/1.0?
    pub http10: bool,
    /// Host header (raw).
    pub host: Option<String>,
    /// Connection: close / keep-alive.
    pub close: bool,
    /// Connection: keep-alive present.
    pub keep_alive: bool,
    /// Request body length to skip.
    pub body_len: usize,
    /// Chunked request body (unsupported: answered 400 then close).
    pub chunked: bool,
    /// Logged header values.
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
}

/// Outcome of parsing the buffer.
#[derive(Debug)]
pub enum Parsed {
    /// A request and the head length.
    Complete(Box<Request>, usize),
    /// Need more bytes.
    Partial,
    /// Unparseable: answer this status and close.
    Invalid(u16),
}

/// Parse one request head from `buf`.
#[must_use]
pub fn parse_request(buf: &[u8]) -> Parsed {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => {
            let mut r = Request {
                method: req.method.unwrap_or("").to_owned(),
                target: req.path.unwrap_or("").to_owned(),
                http10: req.version == Some(0),
                ..Request::default()
            };
            let mut has_cl = false;
            for h in req.headers.iter() {
                let v = || String::from_utf8_lossy(h.value).trim().to_owned();
                let name = h.name;
                if name.eq_ignore_ascii_case("host") {
                    if r.host.is_some() {
                        return Parsed::Invalid(400);
                    }
                    r.host = Some(v());
                } else if name.eq_ignore_ascii_case("connection") {
                    let val = v().to_ascii_lowercase();
                    r.close |= val.split(',').any(|t| t.trim() == "close");
                    r.keep_alive |= val.split(',').any(|t| t.trim() == "keep-alive");
                } else if name.eq_ignore_ascii_case("content-length") {
                    match v().parse::<usize>() {
                        Ok(len) if !has_cl || len == r.body_len => r.body_len = len,
                        _ => return Parsed::Invalid(400),
                    }
                    has_cl = true;
                } else if name.eq_ignore_ascii_case("transfer-encoding") {
                    r.chunked = true;
                } else if name.eq_ignore_ascii_case("user-agent") {
                    r.user_agent = Some(v());
                } else if name.eq_ignore_ascii_case("from") {
                    r.from = Some(v());
                } else if name.eq_ignore_ascii_case("accept") {
                    r.accept = Some(v());
                } else if name.eq_ignore_ascii_case("accept-encoding") {
                    r.accept_encoding = Some(v());
                } else if name.eq_ignore_ascii_case("if-none-match") {
                    r.if_none_match = Some(v());
                } else if name.eq_ignore_ascii_case("if-modified-since") {
                    r.if_modified_since = Some(v());
                } else if name.eq_ignore_ascii_case("referer") {
                    r.referer = Some(v());
                }
            }
            if r.body_len > MAX_REQUEST_BODY_BYTES {
                return Parsed::Invalid(413);
            }
            Parsed::Complete(Box::new(r), n)
        }
        Ok(httparse::Status::Partial) => {
            if buf.len() > MAX_HEAD_BYTES {
                Parsed::Invalid(431)
            } else {
                Parsed::Partial
            }
        }
        Err(httparse::Error::TooManyHeaders) => Parsed::Invalid(431),
        Err(_) => Parsed::Invalid(400),
    }
}

/// Reason phrase.
#[must_use]
pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        410 => "Gone",
        413 => "Content Too Large",
        414 => "URI Too Long",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// Serialize a response into `out`. Returns body bytes written.
pub fn write_response(
    out: &mut Vec<u8>,
    resp: &Response,
    framing: Framing,
    head_only: bool,
    close: bool,
    eol: &str,
) -> u64 {
    use std::io::Write;
    let _ = write!(out, "HTTP/1.1 {} {}{eol}", resp.status, reason(resp.status));
    out.extend_from_slice(b"Server: synthweb");
    out.extend_from_slice(eol.as_bytes());
    for (n, v) in &resp.headers {
        let _ = write!(out, "{n}: {v}{eol}");
    }
    let no_body = resp.status == 304 || (100..200).contains(&resp.status);
    match framing {
        Framing::ContentLength => {
            if !no_body {
                let _ = write!(out, "Content-Length: {}{eol}", resp.body.len());
            }
        }
        Framing::Chunked => {
            let _ = write!(out, "Transfer-Encoding: chunked{eol}");
        }
        Framing::Close => {}
    }
    if close || framing == Framing::Close {
        let _ = write!(out, "Connection: close{eol}");
    }
    out.extend_from_slice(eol.as_bytes());
    if head_only || no_body {
        return 0;
    }
    match framing {
        Framing::ContentLength | Framing::Close => out.extend_from_slice(&resp.body),
        Framing::Chunked => {
            for chunk in resp.body.chunks(4096) {
                let _ = write!(out, "{:x}\r\n", chunk.len());
                out.extend_from_slice(chunk);
                out.extend_from_slice(b"\r\n");
            }
            out.extend_from_slice(b"0\r\n\r\n");
        }
    }
    resp.body.len() as u64
}

fn error_response(status: u16) -> Response {
    Response {
        status,
        headers: vec![("Content-Type", "text/plain; charset=utf-8".to_owned())],
        body: format!("{status} {}\n", reason(status)).into_bytes(),
        framing: Framing::ContentLength,
        hostile: None,
    }
}

fn record(info: &ConnInfo, req: &Request, t_us: u64) -> LogRecord {
    LogRecord {
        t_us,
        end_us: 0,
        conn: info.id,
        local: info.local,
        peer: info.peer,
        scheme: match info.scheme {
            Scheme::Http => crate::formats::Scheme::Http,
            Scheme::Https => crate::formats::Scheme::Https,
        },
        host: req.host.as_deref().unwrap_or("").to_ascii_lowercase(),
        method: req.method.clone(),
        target: req.target.clone(),
        user_agent: req.user_agent.clone(),
        from: req.from.clone(),
        accept: req.accept.clone(),
        accept_encoding: req.accept_encoding.clone(),
        if_none_match: req.if_none_match.clone(),
        if_modified_since: req.if_modified_since.clone(),
        referer: req.referer.clone(),
        status: 0,
        body_bytes: 0,
    }
}

async fn emit(shared: &Shared, mut recs: Vec<LogRecord>, end_us: u64) {
    if let Some(tx) = &shared.log {
        for mut r in recs.drain(..) {
            r.end_us = end_us;
            // The writer only stops at shutdown; a send error then is expected.
            let _ = tx.send(LogMsg::Record(Box::new(r))).await;
        }
    }
}

/// Serve one connection until it closes, errs, idles out or the server shuts down.
pub async fn serve<S: Stream>(shared: Arc<Shared>, mut stream: S, info: ConnInfo) {
    let mut shutdown = shared.shutdown_rx.clone();
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    let mut out: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut pending: Vec<LogRecord> = Vec::new();
    let mut read_buf = vec![0u8; 16 * 1024];
    'conn: loop {
        // Answer every complete request already buffered.
        let mut close = false;
        loop {
            match parse_request(&buf) {
                Parsed::Partial => break,
                Parsed::Invalid(status) => {
                    let _ = write_response(
                        &mut out,
                        &error_response(status),
                        Framing::ContentLength,
                        false,
                        true,
                        "\r\n",
                    );
                    close = true;
                    break;
                }
                Parsed::Complete(req, n) => {
                    let t_us = now_us();
                    let total = n + req.body_len;
                    if buf.len() < total {
                        break; // wait for the request body
                    }
                    buf.drain(..total);
                    // `--latency-ms`: time to first byte, per request, without holding
                    // a worker thread.
                    if !shared.pace.latency.is_zero() {
                        tokio::select! {
                            () = tokio::time::sleep(shared.pace.latency) => {}
                            _ = shutdown.changed() => break 'conn,
                        }
                    }
                    // Only build the record when there is a log to write it to.
                    let rec = shared.log.is_some().then(|| record(&info, &req, t_us));
                    let wants_close = req.close || (req.http10 && !req.keep_alive);
                    let count = shared.requests.fetch_add(1, Ordering::Relaxed) + 1;
                    if shared.max_requests.is_some_and(|m| count >= m) {
                        close = true;
                    }
                    let (resp, framing) = match answer(&shared, &info, &req) {
                        Answer::Plain(r) => {
                            let framing = if req.http10 && r.framing == Framing::Chunked {
                                Framing::Close
                            } else {
                                r.framing
                            };
                            (r, framing)
                        }
                        Answer::Hostile(r) => {
                            // Flush what came before, then misbehave.
                            if !out.is_empty() && !write_bounded(&shared, &mut stream, &out).await {
                                break 'conn;
                            }
                            out.clear();
                            emit(&shared, std::mem::take(&mut pending), now_us()).await;
                            let head_only = req.method == "HEAD";
                            let o = hostile::run(
                                &mut stream,
                                &r,
                                &req.target,
                                head_only,
                                &mut shutdown,
                            )
                            .await;
                            if let Some(mut r) = rec {
                                r.status = o.status;
                                r.body_bytes = o.body_bytes;
                                emit(&shared, vec![r], now_us()).await;
                            }
                            if o.keep_open && !close && !wants_close {
                                continue;
                            }
                            break 'conn;
                        }
                    };
                    let close_now =
                        close || wants_close || framing == Framing::Close || req.chunked;
                    let head_only = req.method == "HEAD";
                    let body_bytes =
                        write_response(&mut out, &resp, framing, head_only, close_now, "\r\n");
                    if let Some(mut r) = rec {
                        r.status = resp.status;
                        r.body_bytes = body_bytes;
                        pending.push(r);
                    }
                    if shared.pace.is_on() {
                        // A paced server answers one request at a time: the next
                        // pipelined request waits for this response's last byte.
                        let ok = write_paced(&shared, &mut stream, &out, &mut shutdown).await;
                        out.clear();
                        emit(&shared, std::mem::take(&mut pending), now_us()).await;
                        if !ok {
                            break 'conn;
                        }
                    }
                    if close_now {
                        close = true;
                        break;
                    }
                }
            }
        }
        if !out.is_empty() {
            let ok = write_bounded(&shared, &mut stream, &out).await;
            out.clear();
            emit(&shared, std::mem::take(&mut pending), now_us()).await;
            if !ok {
                break;
            }
        }
        if close {
            let _ = stream.shutdown().await;
            break;
        }
        let read = tokio::select! {
            r = tokio::time::timeout(shared.idle_timeout, stream.read(&mut read_buf)) => r,
            _ = shutdown.changed() => break,
        };
        match read {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => break,
            Ok(Ok(n)) => buf.extend_from_slice(read_buf.get(..n).unwrap_or(&[])),
        }
    }
    emit(&shared, pending, now_us()).await;
    if shared
        .max_requests
        .is_some_and(|m| shared.requests.load(Ordering::Relaxed) >= m)
    {
        let _ = shared.shutdown_tx.send(true);
    }
}

/// Write `bytes`, giving up when the peer does not read for the idle timeout (a client
/// that never reads must not hold a connection slot forever).
async fn write_bounded<S: Stream>(shared: &Shared, stream: &mut S, bytes: &[u8]) -> bool {
    matches!(
        tokio::time::timeout(shared.idle_timeout, stream.write_all(bytes)).await,
        Ok(Ok(()))
    )
}

/// Write `bytes` at most `--bandwidth` bytes per second: a slice every
/// [`super::Pace::TICK`], each written when the bytes before it and itself are due, so
/// the last byte leaves `len / rate` seconds after the first (the whole response,
/// head included, is paced). Without a rate, [`write_bounded`].
async fn write_paced<S: Stream>(
    shared: &Shared,
    stream: &mut S,
    bytes: &[u8],
    shutdown: &mut tokio::sync::watch::Receiver<bool>,
) -> bool {
    let Some(rate) = shared.pace.bytes_per_sec else {
        return write_bounded(shared, stream, bytes).await;
    };
    let slice = shared.pace.slice_bytes();
    let start = tokio::time::Instant::now();
    let mut sent = 0u64;
    for chunk in bytes.chunks(slice) {
        sent += chunk.len() as u64;
        let due = start + std::time::Duration::from_secs_f64(sent as f64 / rate as f64);
        tokio::select! {
            () = tokio::time::sleep_until(due) => {}
            _ = shutdown.changed() => return false,
        }
        if !write_bounded(shared, stream, chunk).await {
            return false;
        }
        if stream.flush().await.is_err() {
            return false;
        }
    }
    true
}

enum Answer {
    Plain(Arc<Response>),
    Hostile(Arc<Response>),
}

fn answer(shared: &Shared, info: &ConnInfo, req: &Request) -> Answer {
    if req.chunked {
        return Answer::Plain(Arc::new(error_response(400)));
    }
    if req.method != "GET" && req.method != "HEAD" {
        let mut r = error_response(405);
        r.headers.push(("Allow", "GET, HEAD".to_owned()));
        return Answer::Plain(Arc::new(r));
    }
    let Some(host) = req.host.as_deref() else {
        return Answer::Plain(Arc::new(if req.http10 {
            error_response(404)
        } else {
            error_response(400)
        }));
    };
    let site: &Site = &shared.site;
    let Some(index) = site.host_index(host) else {
        return Answer::Plain(Arc::new(error_response(404)));
    };
    let target = if req.target.starts_with('/') {
        req.target.clone()
    } else {
        // Absolute-form targets: keep the path and query.
        match req
            .target
            .split_once("://")
            .and_then(|(_, rest)| rest.find('/').map(|i| rest[i..].to_owned()))
        {
            Some(t) => t,
            None => return Answer::Plain(Arc::new(error_response(400))),
        }
    };
    let c = site.coding_for(req.accept_encoding.as_deref());
    let key = Key {
        scheme: info.scheme,
        host: index,
        target: target.clone(),
        coding: c,
    };
    let resp = shared
        .cache
        .get_or_insert(key, || site.representation(info.scheme, host, &target, c));
    if resp.hostile.is_some() {
        return Answer::Hostile(resp);
    }
    let cond = Conditions {
        if_none_match: req.if_none_match.as_deref(),
        if_modified_since: req.if_modified_since.as_deref(),
    };
    if let Some(nm) = Site::not_modified(&resp, cond) {
        return Answer::Plain(Arc::new(nm));
    }
    Answer::Plain(resp)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status_of(p: &Parsed) -> Option<u16> {
        match p {
            Parsed::Invalid(s) => Some(*s),
            _ => None,
        }
    }

    #[test]
    fn parses_request_heads() {
        let bytes: &[u8] = b"GET /p/1?x=1 HTTP/1.1\r\nHost: H000001.synth.test:80\r\nUser-Agent: t\r\nFrom: a@b\r\nAccept-Encoding: br\r\nConnection: keep-alive\r\n\r\nGET";
        let p = parse_request(bytes);
        let Parsed::Complete(r, n) = p else {
            panic!("not complete")
        };
        assert_eq!(n, bytes.len() - 3, "the pipelined next request is left");
        assert_eq!((r.method.as_str(), r.target.as_str()), ("GET", "/p/1?x=1"));
        assert_eq!(r.host.as_deref(), Some("H000001.synth.test:80"));
        assert_eq!(r.from.as_deref(), Some("a@b"));
        assert!(r.keep_alive && !r.close && !r.http10);
        assert!(matches!(
            parse_request(b"GET / HTTP/1.1\r\nHost: x\r\n"),
            Parsed::Partial
        ));
        let ten = parse_request(b"GET / HTTP/1.0\r\n\r\n");
        assert!(matches!(ten, Parsed::Complete(ref r, _) if r.http10 && r.host.is_none()));
    }

    #[test]
    fn rejects_bad_heads_with_typed_statuses() {
        let cases: [(&[u8], u16); 4] = [
            (b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
            (
                b"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                400,
            ),
            (b"GET / HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n", 413),
            (b"\x00\x01garbage\r\n\r\n", 400),
        ];
        for (bytes, want) in cases {
            assert_eq!(status_of(&parse_request(bytes)), Some(want), "{bytes:?}");
        }
        let many: String = (0..200).map(|i| format!("X-{i}: v\r\n")).collect();
        let req = format!("GET / HTTP/1.1\r\n{many}\r\n");
        assert_eq!(status_of(&parse_request(req.as_bytes())), Some(431));
        let huge = vec![b'a'; MAX_HEAD_BYTES + 10];
        let mut req = b"GET /".to_vec();
        req.extend_from_slice(&huge);
        assert_eq!(status_of(&parse_request(&req)), Some(431));
    }

    #[test]
    fn writes_each_framing() {
        let r = Response {
            status: 200,
            headers: vec![("Content-Type", "text/plain".to_owned())],
            body: b"hello".to_vec(),
            framing: Framing::ContentLength,
            hostile: None,
        };
        let mut out = Vec::new();
        write_response(&mut out, &r, Framing::ContentLength, false, false, "\r\n");
        assert!(out.ends_with(b"Content-Length: 5\r\n\r\nhello"));
        out.clear();
        write_response(&mut out, &r, Framing::Chunked, false, false, "\r\n");
        assert!(out.ends_with(b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"));
        out.clear();
        write_response(&mut out, &r, Framing::Close, false, false, "\r\n");
        assert!(out.ends_with(b"Connection: close\r\n\r\nhello"));
        out.clear();
        assert_eq!(
            write_response(&mut out, &r, Framing::ContentLength, true, false, "\r\n"),
            0
        );
        assert!(out.ends_with(b"\r\n\r\n"));
    }
}
