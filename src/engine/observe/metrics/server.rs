//! The listener behind `--metrics-addr`: one std thread, one connection at a time,
//! every request read with the one request parser (`http::IncomingRequest`), its `Host`
//! checked ([`super::host`]), answered and closed.

use std::borrow::Cow;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::control;
use super::history::History;
use super::host::{check_host, HostRefusal};
use super::{render, status};
use crate::engine::control::Operator;
use crate::engine::observe::board::Board;
use crate::engine::Stats;
use crate::http::{IncomingRequest, RequestLimits, RequestParseError};

/// Longest request head read; anything longer gets `431`.
pub const MAX_REQUEST_BYTES: usize = 8 * 1024;
/// Time a client has to send its request, and to take the answer.
pub const IO_TIMEOUT: Duration = Duration::from_secs(2);
/// How long, and how many bytes, a closing connection is drained.
const LINGER: Duration = Duration::from_millis(250);
const MAX_LINGER_BYTES: usize = 64 * 1024;
/// How often the accept loop looks at the stop flag when no connection comes: it
/// waits in epoll meanwhile, so an idle listener costs 4 wake-ups a second.
const POLL: Duration = Duration::from_millis(250);

/// Why the metrics server could not start.
#[derive(Debug)]
pub enum MetricsError {
    /// The address is not loopback and non-loopback was not allowed.
    NotLoopback(SocketAddr),
    /// Binding or configuring the listening socket failed.
    Bind(SocketAddr, io::Error),
}

impl std::fmt::Display for MetricsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotLoopback(a) => write!(
                f,
                "metrics address {a} is not loopback (allow it explicitly to expose metrics)"
            ),
            Self::Bind(a, _) => write!(f, "cannot listen for metrics on {a}"),
        }
    }
}

impl std::error::Error for MetricsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::NotLoopback(_) => None,
            Self::Bind(_, e) => Some(e),
        }
    }
}

/// A running metrics endpoint. Stops (and joins its thread) on [`MetricsServer::stop`]
/// or drop.
pub struct MetricsServer {
    addr: SocketAddr,
    latest: Arc<Mutex<Published>>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

/// The crawl behind a listener that serves more than the snapshot: the operator whose
/// control API it answers, and the board of the status page's host tables.
pub(crate) struct Console {
    pub operator: Arc<Operator>,
    pub board: Arc<Board>,
}

impl MetricsServer {
    /// Binds `addr` (port 0 picks one; see [`MetricsServer::local_addr`]) and starts the
    /// server thread, serving `Stats::default()` until the first [`publish`].
    ///
    /// # Errors
    /// A non-loopback address without `allow_remote`, or a socket error.
    ///
    /// [`publish`]: MetricsServer::publish
    pub fn start(addr: SocketAddr, allow_remote: bool) -> Result<Self, MetricsError> {
        Self::start_with_console(addr, allow_remote, None)
    }

    /// [`MetricsServer::start`], serving the control API and the host tables of
    /// `console` too (`docs/control.md`).
    ///
    /// # Errors
    /// As [`MetricsServer::start`].
    pub(crate) fn start_with_console(
        addr: SocketAddr,
        allow_remote: bool,
        console: Option<Console>,
    ) -> Result<Self, MetricsError> {
        if !addr.ip().is_loopback() && !allow_remote {
            return Err(MetricsError::NotLoopback(addr));
        }
        let listener = TcpListener::bind(addr).map_err(|e| MetricsError::Bind(addr, e))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| MetricsError::Bind(addr, e))?;
        let local = listener
            .local_addr()
            .map_err(|e| MetricsError::Bind(addr, e))?;
        let latest = Arc::new(Mutex::new(Published::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (l2, s2) = (Arc::clone(&latest), Arc::clone(&stop));
        let handle = std::thread::Builder::new()
            .name("trawl-metrics".to_owned())
            .spawn(move || accept_loop(listener, &l2, &s2, console.as_ref()))
            .map_err(|e| MetricsError::Bind(addr, e))?;
        Ok(Self {
            addr: local,
            latest,
            stop,
            handle: Some(handle),
        })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Replaces the snapshot that scrapes see, and adds it to the status page's
    /// history.
    pub fn publish(&self, stats: &Stats) {
        if let Ok(mut p) = self.latest.lock() {
            p.stats.clone_from(stats);
            p.history.push(stats);
        }
    }

    /// Stops accepting and joins the thread (at most one in-flight answer plus
    /// [`IO_TIMEOUT`]).
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// What the coordinator last published: the snapshot, and the history of the plotted
/// figures.
#[derive(Default)]
struct Published {
    stats: Stats,
    history: History,
}

/// Waits in epoll for connections, so the status thread costs no CPU between requests
/// (`docs/benchmarks.md`, "Status server CPU"), then accepts until `WouldBlock`; one
/// connection at a time, by construction.
fn accept_loop(
    listener: TcpListener,
    latest: &Mutex<Published>,
    stop: &AtomicBool,
    console: Option<&Console>,
) {
    let mut listener = mio::net::TcpListener::from_std(listener);
    let poll = mio::Poll::new().and_then(|p| {
        p.registry()
            .register(&mut listener, mio::Token(0), mio::Interest::READABLE)
            .map(|()| p)
    });
    let mut poll = match poll {
        Ok(p) => Some(p),
        Err(e) => {
            tracing::debug!(error = %e, "metrics listener falls back to sleeping");
            None
        }
    };
    let mut events = mio::Events::with_capacity(4);
    while !stop.load(Ordering::Acquire) {
        match listener.accept() {
            Ok((stream, _)) => {
                if let Err(e) = serve_one(stream.into(), latest, console) {
                    tracing::debug!(error = %e, "metrics connection failed");
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => match poll.as_mut() {
                Some(p) => {
                    if let Err(e) = p.poll(&mut events, Some(POLL)) {
                        if e.kind() != io::ErrorKind::Interrupted {
                            std::thread::sleep(POLL);
                        }
                    }
                }
                None => std::thread::sleep(POLL),
            },
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                tracing::debug!(error = %e, "metrics accept failed");
                std::thread::sleep(POLL);
            }
        }
    }
}

/// What the listener serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resource {
    /// `/metrics`: the Prometheus text format.
    Metrics,
    /// `/`: the status page, one self-contained HTML file.
    StatusPage,
    /// `/api/status`: the latest [`Stats`] as JSON (what `stats.json` holds).
    StatusJson,
    /// `/api/history`: the plotted figures of the crawl so far ([`History`]).
    HistoryJson,
    /// `/api/control`: the operator's pause, blocks and delays (`docs/control.md`).
    ControlJson,
    /// `/api/hosts`: the busiest and most failing hosts, the latest errors.
    HostsJson,
}

impl Resource {
    fn of(path: &str) -> Option<Self> {
        match path {
            "/metrics" => Some(Self::Metrics),
            "/" => Some(Self::StatusPage),
            "/api/status" => Some(Self::StatusJson),
            "/api/history" => Some(Self::HistoryJson),
            "/api/control" => Some(Self::ControlJson),
            "/api/hosts" => Some(Self::HostsJson),
            _ => None,
        }
    }
}

/// What a request asks for, and what it gets.
#[derive(Debug, PartialEq, Eq)]
enum Request {
    Get {
        resource: Resource,
        head_only: bool,
    },
    NotFound,
    BadMethod,
    /// A malformed head: `400` with the parser's reason.
    Bad(RequestParseError),
    /// A head over a cap: `431`.
    TooLarge,
    /// `Host` missing (`400`) or not naming this listener (`421`).
    Host(HostRefusal),
    /// A read-only view asked from off loopback without the token (`401`).
    Unauthorized(crate::control::ApiError),
}

/// The request parser's caps: [`MAX_REQUEST_BYTES`], and 64 fields.
const LIMITS: RequestLimits = RequestLimits {
    max_head_bytes: MAX_REQUEST_BYTES,
    max_headers: 64,
};

/// Reads one request head (bounded in bytes and time) and answers it.
fn serve_one(
    mut stream: TcpStream,
    latest: &Mutex<Published>,
    console: Option<&Console>,
) -> io::Result<()> {
    let operator = console.map(|c| &*c.operator);
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let local = stream.local_addr()?;
    let peer = stream.peer_addr()?;
    let deadline = Instant::now() + IO_TIMEOUT;
    let mut buf = vec![0u8; MAX_REQUEST_BYTES];
    let mut len = 0;
    let request = loop {
        match IncomingRequest::parse(buf.get(..len).unwrap_or_default(), LIMITS) {
            Ok(Some((head, used))) => {
                if crate::control::is_control_path(head.path()) {
                    if let Err(r) = check_host(head.header("host"), head.minor_version, local) {
                        break Request::Host(r);
                    }
                    // A control verb (`POST /api/control/<verb>`): its body follows the
                    // head.
                    let early = buf.get(used..len).unwrap_or_default();
                    let (status, body) =
                        control::answer(&head, early, &mut stream, operator, deadline);
                    let out = Reply {
                        status,
                        content_type: "application/json",
                        body: Cow::Owned(body),
                        head_only: false,
                    };
                    stream.write_all(&out.to_bytes())?;
                    stream.flush()?;
                    return linger(&mut stream);
                }
                break route(&head, local, peer, operator);
            }
            Ok(None) => {}
            Err(e) if e.is_cap() => break Request::TooLarge,
            Err(e) => break Request::Bad(e),
        }
        if Instant::now() >= deadline {
            return Ok(());
        }
        let Some(space) = buf.get_mut(len..).filter(|s| !s.is_empty()) else {
            break Request::TooLarge;
        };
        match stream.read(space) {
            Ok(0) => return Ok(()),
            Ok(n) => len += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    };
    let out = reply(&request, latest, console).to_bytes();
    stream.write_all(&out)?;
    stream.flush()?;
    linger(&mut stream)
}

/// What a parsed request that arrived on `local` gets: `Host` is checked first (no
/// answer at all for a name that is not this listener's), then the method, then the
/// path.
///
/// Off loopback (a listener bound elsewhere with the explicit flag), the JSON views ask
/// for the control token; `/metrics` and the page itself do not (a scrape stays as it
/// was; the page holds no data and reads the token from its link).
fn route(
    head: &IncomingRequest,
    local: SocketAddr,
    peer: SocketAddr,
    operator: Option<&Operator>,
) -> Request {
    if let Err(refusal) = check_host(head.header("host"), head.minor_version, local) {
        return Request::Host(refusal);
    }
    let head_only = match head.method.as_str() {
        "GET" => false,
        "HEAD" => true,
        _ => return Request::BadMethod,
    };
    match Resource::of(head.path()) {
        Some(
            r @ (Resource::StatusJson
            | Resource::HistoryJson
            | Resource::ControlJson
            | Resource::HostsJson),
        ) if !peer.ip().to_canonical().is_loopback() => {
            let token = operator.map_or("", Operator::token);
            match crate::control::has_token(&control::credentials(head), token) {
                Ok(()) => Request::Get {
                    resource: r,
                    head_only,
                },
                Err(e) => Request::Unauthorized(e),
            }
        }
        Some(resource) => Request::Get {
            resource,
            head_only,
        },
        None => Request::NotFound,
    }
}

const TEXT: &str = "text/plain; charset=utf-8";

/// One answer, before it is written.
struct Reply {
    status: &'static str,
    content_type: &'static str,
    body: Cow<'static, str>,
    head_only: bool,
}

/// The answer to `request`, rendered from the latest snapshot where it needs one.
fn reply(request: &Request, latest: &Mutex<Published>, console: Option<&Console>) -> Reply {
    let text = |status, body: String| Reply {
        status,
        content_type: TEXT,
        body: Cow::Owned(body),
        head_only: false,
    };
    match request {
        Request::Get {
            resource,
            head_only,
        } => {
            let (content_type, body) = match resource {
                Resource::Metrics => (
                    "text/plain; version=0.0.4; charset=utf-8",
                    Cow::Owned(latest.lock().map(|p| render(&p.stats)).unwrap_or_default()),
                ),
                Resource::StatusPage => ("text/html; charset=utf-8", Cow::Borrowed(status::PAGE)),
                Resource::StatusJson => (
                    "application/json",
                    Cow::Owned(
                        latest
                            .lock()
                            .map(|p| status::json(&p.stats))
                            .unwrap_or_default(),
                    ),
                ),
                Resource::HistoryJson => (
                    "application/json",
                    Cow::Owned(latest.lock().map(|p| p.history.json()).unwrap_or_default()),
                ),
                Resource::HostsJson => (
                    "application/json",
                    Cow::Owned(
                        console
                            .map(|c| {
                                let view = c.board.view(c.operator.delay_ms());
                                serde_json::to_string(&view).unwrap_or_default()
                            })
                            .unwrap_or_else(|| "{}".to_owned()),
                    ),
                ),
                Resource::ControlJson => (
                    "application/json",
                    Cow::Owned(
                        console
                            .map(|c| serde_json::to_string(&c.operator.stats()).unwrap_or_default())
                            .unwrap_or_else(|| "{}".to_owned()),
                    ),
                ),
            };
            Reply {
                status: "200 OK",
                content_type,
                body,
                head_only: *head_only,
            }
        }
        Request::NotFound => text(
            "404 Not Found",
            "not found; try / (status page), /metrics, /api/status, /api/history, \
             /api/control or POST /api/control/VERB\n"
                .to_owned(),
        ),
        Request::BadMethod => text(
            "405 Method Not Allowed",
            "method not allowed; use GET or HEAD\n".to_owned(),
        ),
        Request::Bad(e) => text("400 Bad Request", format!("bad request: {e}\n")),
        Request::TooLarge => text(
            "431 Request Header Fields Too Large",
            format!("request head over {MAX_REQUEST_BYTES} bytes or 64 fields\n"),
        ),
        Request::Unauthorized(e) => Reply {
            status: e.status_line(),
            content_type: "application/json",
            body: Cow::Owned(e.json()),
            head_only: false,
        },
        Request::Host(r @ HostRefusal::Missing) => {
            text("400 Bad Request", format!("bad request: {r}\n"))
        }
        Request::Host(r @ HostRefusal::Misdirected { .. }) => text(
            "421 Misdirected Request",
            format!("misdirected request: {r}\n"),
        ),
    }
}

impl Reply {
    /// The bytes on the wire. Every answer closes the connection, is never cached and
    /// is never sniffed as another type; the page may not be framed (clickjacking) and
    /// may only talk to this listener (its Content-Security-Policy).
    fn to_bytes(&self) -> Vec<u8> {
        let mut out = format!(
            "HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n\
             Connection: close\r\nCache-Control: no-store\r\n\
             X-Content-Type-Options: nosniff\r\n",
            self.status,
            self.content_type,
            self.body.len()
        );
        if self.status.starts_with("405") {
            out.push_str("Allow: GET, HEAD\r\n");
        }
        if self.content_type.starts_with("text/html") {
            out.push_str(status::PAGE_HEADERS);
        }
        out.push_str("\r\n");
        if !self.head_only {
            out.push_str(&self.body);
        }
        out.into_bytes()
    }
}

/// Lingering close (RFC 9112 section 9.6): stop sending, then discard what the client
/// still sends for a moment, so unread request bytes do not turn the close into a reset
/// that destroys the answer before the client reads it. Bounded in bytes and time.
fn linger(stream: &mut TcpStream) -> io::Result<()> {
    stream.shutdown(std::net::Shutdown::Write)?;
    stream.set_read_timeout(Some(LINGER))?;
    let deadline = Instant::now() + LINGER;
    let mut scratch = [0u8; 4096];
    let mut drained = 0;
    while drained < MAX_LINGER_BYTES && Instant::now() < deadline {
        match stream.read(&mut scratch) {
            Ok(0) | Err(_) => break,
            Ok(n) => drained += n,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(buf: &[u8]) -> Request {
        let local: SocketAddr = "127.0.0.1:9898".parse().unwrap();
        match IncomingRequest::parse(buf, LIMITS) {
            Ok(Some((head, _))) => route(&head, local, local, None),
            Ok(None) => panic!("incomplete head"),
            Err(e) if e.is_cap() => Request::TooLarge,
            Err(e) => Request::Bad(e),
        }
    }

    #[test]
    fn requests_are_classified() {
        assert_eq!(
            classify(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9898\r\n\r\n"),
            Request::Get {
                resource: Resource::Metrics,
                head_only: false
            }
        );
        assert_eq!(
            classify(b"HEAD /metrics?x=1 HTTP/1.0\r\n\r\n"),
            Request::Get {
                resource: Resource::Metrics,
                head_only: true
            }
        );
        assert_eq!(
            classify(b"GET /nothing HTTP/1.1\r\nHost: localhost:9898\r\n\r\n"),
            Request::NotFound
        );
        assert_eq!(
            classify(b"GET / HTTP/1.1\r\nHost: localhost:9898\r\n\r\n"),
            Request::Get {
                resource: Resource::StatusPage,
                head_only: false
            }
        );
        assert_eq!(
            classify(b"GET /api/status?t=1 HTTP/1.1\r\nHost: 127.0.0.1.nip.io:9898\r\n\r\n"),
            Request::Host(HostRefusal::Misdirected {
                local: "127.0.0.1:9898".parse().unwrap()
            })
        );
        assert_eq!(
            classify(b"GET /api/status?t=1 HTTP/1.1\r\nHost: 127.0.0.1:9898\r\n\r\n"),
            Request::Get {
                resource: Resource::StatusJson,
                head_only: false
            }
        );
        assert_eq!(
            classify(b"POST /metrics HTTP/1.1\r\nHost: 127.0.0.1:9898\r\n\r\n"),
            Request::BadMethod
        );
        // Host comes before method and path: a rebinding page learns nothing.
        assert!(matches!(
            classify(b"POST /nothing HTTP/1.1\r\nHost: evil.example:9898\r\n\r\n"),
            Request::Host(HostRefusal::Misdirected { .. })
        ));
        assert_eq!(
            classify(b"GET /metrics HTTP/1.1\r\n\r\n"),
            Request::Host(HostRefusal::Missing)
        );
        assert!(matches!(classify(b"GET /metrics\r\n\r\n"), Request::Bad(_)));
        assert!(matches!(
            classify(b"GET /metrics HTTP/2\r\n\r\n"),
            Request::Bad(RequestParseError::InvalidVersion)
        ));
        assert!(matches!(
            classify(b"\xff\xfe HTTP/1.1\r\n\r\n"),
            Request::Bad(_)
        ));
        let many: String = (0..65).map(|i| format!("X{i}: y\r\n")).collect();
        let head = format!("GET /metrics HTTP/1.1\r\n{many}\r\n");
        assert_eq!(classify(head.as_bytes()), Request::TooLarge);
    }

    #[test]
    fn views_off_loopback_need_the_token() {
        let local: SocketAddr = "10.0.0.5:9898".parse().unwrap();
        let remote: SocketAddr = "10.0.0.9:40000".parse().unwrap();
        let dir = std::env::temp_dir();
        let op = Operator::new(&dir, Duration::ZERO);
        let ask = |path: &str, extra: &str| {
            let req = format!("GET {path} HTTP/1.1\r\nHost: 10.0.0.5:9898\r\n{extra}\r\n");
            match IncomingRequest::parse(req.as_bytes(), LIMITS) {
                Ok(Some((head, _))) => route(&head, local, remote, Some(&op)),
                other => panic!("{other:?}"),
            }
        };
        assert!(matches!(ask("/api/status", ""), Request::Unauthorized(_)));
        assert!(matches!(
            ask("/api/hosts", "X-Trawl-Token: no\r\n"),
            Request::Unauthorized(_)
        ));
        let good = format!("Authorization: Bearer {}\r\n", op.token());
        assert!(matches!(ask("/api/status", &good), Request::Get { .. }));
        // Scrapes and the page itself stay open (the page holds no data).
        assert!(matches!(ask("/metrics", ""), Request::Get { .. }));
        assert!(matches!(ask("/", ""), Request::Get { .. }));
        // On loopback the views need no token.
        let lo: SocketAddr = "127.0.0.1:9898".parse().unwrap();
        let req = b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:9898\r\n\r\n";
        let Ok(Some((head, _))) = IncomingRequest::parse(req, LIMITS) else {
            panic!("parse")
        };
        assert!(matches!(
            route(&head, lo, lo, Some(&op)),
            Request::Get { .. }
        ));
    }

    #[test]
    fn non_loopback_is_refused_unless_allowed() {
        let addr: SocketAddr = "0.0.0.0:0".parse().unwrap();
        assert!(matches!(
            MetricsServer::start(addr, false),
            Err(MetricsError::NotLoopback(_))
        ));
    }

    #[test]
    fn replies_carry_their_type_and_guards() {
        let mut published = Published::default();
        published.stats.pages = 7;
        published.history.push(&published.stats.clone());
        let latest = Mutex::new(published);
        let get = |resource| Request::Get {
            resource,
            head_only: false,
        };
        let text = |r: &Request| String::from_utf8(reply(r, &latest, None).to_bytes()).unwrap();
        let page = text(&get(Resource::StatusPage));
        assert!(page.contains("Content-Type: text/html; charset=utf-8\r\n"));
        assert!(page.contains("Content-Security-Policy: default-src 'none';"));
        assert!(page.contains("X-Frame-Options: DENY\r\n"));
        assert!(page.ends_with(status::PAGE));
        let json = text(&get(Resource::StatusJson));
        assert!(json.contains("Content-Type: application/json\r\n"));
        assert!(json.contains("\"pages\":7"));
        assert!(!json.contains("Content-Security-Policy"));
        let history = text(&get(Resource::HistoryJson));
        assert!(history.contains("Content-Type: application/json\r\n"));
        assert!(history.contains("\"pages\":7.0"), "{history}");
        let metrics = text(&get(Resource::Metrics));
        assert!(metrics.contains("text/plain; version=0.0.4"));
        assert!(metrics.contains("\ntrawl_pages_total 7\n"));
        let head = text(&Request::Get {
            resource: Resource::StatusPage,
            head_only: true,
        });
        assert!(head.ends_with("\r\n\r\n"));
        assert!(head.contains(&format!("Content-Length: {}\r\n", status::PAGE.len())));
        let refused = text(&Request::BadMethod);
        assert!(refused.contains("Allow: GET, HEAD\r\n") && refused.contains("no-store"));
    }
}
