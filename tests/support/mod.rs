//! Loopback test servers scripted to misbehave on cue (std::net threads), and helpers to
//! run one fetch with a time bound.

#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use trawl::fetch::{FetchLimits, FetchOutcome, FetchRequest};
use trawl::net::{Deadlines, Fetcher, FetcherConfig};

/// A server that runs `script` on its own thread for every accepted connection.
pub struct ScriptServer {
    pub addr: SocketAddr,
    pub accepts: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl ScriptServer {
    pub fn start<F>(script: F) -> Self
    where
        F: Fn(TcpStream, usize) + Send + Sync + 'static,
    {
        Self::start_on("127.0.0.1:0", script)
    }

    pub fn start_on<F>(bind: &str, script: F) -> Self
    where
        F: Fn(TcpStream, usize) + Send + Sync + 'static,
    {
        let listener = TcpListener::bind(bind).expect("bind");
        let addr = listener.local_addr().expect("addr");
        let accepts = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let script = Arc::new(script);
        let (a, s) = (Arc::clone(&accepts), Arc::clone(&stop));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let n = a.fetch_add(1, Ordering::SeqCst);
                let script = Arc::clone(&script);
                std::thread::spawn(move || script(stream, n));
            }
        });
        Self {
            addr,
            accepts,
            stop,
        }
    }

    pub fn url(&self, path: &str) -> url::Url {
        url::Url::parse(&format!("http://{}{}", self.addr, path)).expect("url")
    }

    pub fn accepts(&self) -> usize {
        self.accepts.load(Ordering::SeqCst)
    }
}

impl Drop for ScriptServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

/// Reads one request head (up to CRLF CRLF); `None` on EOF or error.
pub fn read_head(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return None,
        }
        if head.len() > 1 << 20 {
            return None;
        }
    }
    Some(head)
}

/// Writes, ignoring errors (the client may have gone).
pub fn send(stream: &mut TcpStream, bytes: &[u8]) -> bool {
    stream.write_all(bytes).is_ok()
}

/// Short deadlines so hostile tests finish fast.
pub fn fast_config() -> FetcherConfig {
    FetcherConfig {
        deadlines: Deadlines {
            dns_timeout: Duration::from_secs(2),
            connect_timeout: Duration::from_secs(2),
            tls_timeout: Duration::from_secs(2),
            proxy_timeout: Duration::from_secs(2),
            first_byte_timeout: Duration::from_millis(600),
            read_idle_timeout: Duration::from_millis(600),
            total_timeout: Duration::from_secs(3),
            min_rate_bytes_per_sec: 200,
            rate_window: Duration::from_secs(1),
        },
        ..FetcherConfig::default()
    }
}

/// Fetches one URL; panics if no outcome within `bound`.
pub fn fetch_one(
    fetcher: &mut Fetcher,
    url: url::Url,
    limits: FetchLimits,
    bound: Duration,
) -> FetchOutcome {
    let mut req = FetchRequest::get(1, url, "trawl-test/1".into());
    req.limits = limits;
    fetcher.submit(req);
    let start = Instant::now();
    let mut got = None;
    fetcher
        .run_until_idle(bound, |o| got = Some(o))
        .expect("poll");
    let o = got.unwrap_or_else(|| panic!("no outcome within {bound:?}"));
    assert!(start.elapsed() <= bound, "took {:?}", start.elapsed());
    o
}

/// Resident set size of this process in KiB (Linux `/proc/self/status`).
pub fn vm_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// A test CA and a server certificate for `localhost`, `synth.test` and 127.0.0.1,
/// signed by it. Returns the CA in PEM and the rustls server config.
pub fn tls_materials() -> (String, Arc<rustls::ServerConfig>) {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    };
    let ca_key = KeyPair::generate().expect("ca key");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("ca params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "trawl test CA");
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca_params.self_signed(&ca_key).expect("ca cert");
    let issuer = Issuer::new(ca_params, ca_key);
    let leaf_key = KeyPair::generate().expect("leaf key");
    let leaf_params = CertificateParams::new(vec![
        "localhost".to_owned(),
        "synth.test".to_owned(),
        "127.0.0.1".to_owned(),
    ])
    .expect("leaf params");
    let leaf = leaf_params
        .signed_by(&leaf_key, &issuer)
        .expect("leaf cert");
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone(), ca_cert.der().clone()], key)
        .expect("server config");
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    (ca_cert.pem(), Arc::new(config))
}

/// A TLS server (one thread per connection) answering keep-alive requests with the
/// request target as body. Counts accepts and TLS handshakes that resumed a session.
pub fn tls_keep_alive_server(config: Arc<rustls::ServerConfig>) -> ScriptServer {
    ScriptServer::start(move |s, _| {
        let Ok(conn) = rustls::ServerConnection::new(Arc::clone(&config)) else {
            return;
        };
        let mut tls = rustls::StreamOwned::new(conn, s);
        let mut buf = Vec::new();
        let mut byte = [0u8; 1];
        loop {
            buf.clear();
            while !buf.ends_with(b"\r\n\r\n") {
                match tls.read(&mut byte) {
                    Ok(1) => buf.push(byte[0]),
                    _ => return,
                }
            }
            let text = String::from_utf8_lossy(&buf);
            let target = text.split(' ').nth(1).unwrap_or("/").to_owned();
            let resp = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{target}",
                target.len()
            );
            if tls
                .write_all(resp.as_bytes())
                .and_then(|()| tls.flush())
                .is_err()
            {
                return;
            }
        }
    })
}

/// A slow chain of pages for crawls that must last long enough to be watched: `/`
/// links `/p/1`, `/p/k` links `/p/k+1` up to `pages - 1`, each answer 150 ms late,
/// anything else 404. Used by the metrics and dashboard tests.
pub fn slow_chain_site(pages: usize) -> ScriptServer {
    ScriptServer::start(move |mut s, _| {
        while let Some(head) = read_head(&mut s) {
            let head = String::from_utf8_lossy(&head);
            let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
            std::thread::sleep(Duration::from_millis(150));
            let k: Option<usize> = path.strip_prefix("/p/").and_then(|k| k.parse().ok());
            let reply = match (path.as_str(), k) {
                ("/", _) => Some("<a href=\"/p/1\">start</a>".to_owned()),
                (_, Some(k)) if k < pages => {
                    Some(format!("<p>page {k}</p><a href=\"/p/{}\">next</a>", k + 1))
                }
                _ => None,
            };
            let out = match reply {
                Some(body) => format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                ),
                None => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_owned(),
            };
            if !send(&mut s, out.as_bytes()) {
                return;
            }
        }
    })
}

/// A one-shard crawl of `seed` into `dir` with the metrics listener on a free loopback
/// port (returned), no politeness delay, no WARC and no progress line.
pub fn metrics_crawl_config(
    dir: &std::path::Path,
    seed: String,
) -> (trawl::engine::CrawlConfig, SocketAddr) {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port");
    let metrics = SocketAddr::from(([127, 0, 0, 1], port));
    let mut c = trawl::engine::CrawlConfig::new(dir);
    c.seeds = vec![seed];
    c.shards = 1;
    c.delay = Duration::ZERO;
    c.robots.crawl_delay_cap = Duration::ZERO;
    c.seen_capacity = 10_000;
    c.warc = false;
    c.progress_interval = Duration::ZERO;
    c.fetcher.allow_private_addresses = true;
    c.metrics_addr = Some(metrics);
    (c, metrics)
}

/// A GET of `path` on `host` (a name that only exists here), sent to `addr`.
pub fn named_request(id: u64, host: &str, addr: SocketAddr, path: &str) -> FetchRequest {
    let url = url::Url::parse(&format!("http://{host}:{}{path}", addr.port())).expect("url");
    let mut r = FetchRequest::get(id, url, "trawl-test/1".into());
    r.addr = Some(addr);
    r
}

/// Runs `reqs` through `fetcher`, `concurrency` in flight, within `bound`.
pub fn run_requests(
    fetcher: &mut Fetcher,
    reqs: Vec<FetchRequest>,
    concurrency: usize,
    bound: Duration,
) -> Vec<FetchOutcome> {
    let start = Instant::now();
    let total = reqs.len();
    let mut reqs = reqs.into_iter();
    let mut done = Vec::new();
    let mut out = Vec::new();
    while done.len() < total {
        assert!(start.elapsed() < bound, "not finished within {bound:?}");
        while fetcher.in_flight() < concurrency {
            let Some(r) = reqs.next() else { break };
            fetcher.submit(r);
        }
        fetcher
            .poll(&mut out, Some(Duration::from_millis(50)))
            .expect("poll");
        done.append(&mut out);
    }
    done
}
