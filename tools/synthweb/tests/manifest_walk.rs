//! "The manifest equals an independent walk": start the real server, crawl it over
//! loopback with an independent crawler (tests/walk: its own HTTP client, HTML scanner,
//! canonicalization and robots.txt parser), and compare the URLs it fetched with the
//! manifest's M set, exactly. Then judge the server's request log of that crawl with the
//! referee: a clean crawl must pass.

mod walk;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use synthweb::formats::{self, Manifest};
use synthweb::referee::{self, CheckPolicy};

/// A synthweb server child process, stopped with SIGTERM (so it flushes its log) when
/// dropped.
struct Server {
    child: Child,
}

impl Server {
    fn start(dir: &Path, extra: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_synthweb"))
            .current_dir(dir)
            .args([
                "--port",
                "0",
                "--hosts-file",
                "hosts.txt",
                "--seeds",
                "seeds.txt",
            ])
            .args([
                "--manifest",
                "manifest.txt",
                "--log",
                "log.jsonl",
                "--max-secs",
                "120",
            ])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn synthweb");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            let _ = tx.send(line);
            // Keep draining so the server's final line never meets a closed pipe.
            let _ = std::io::copy(&mut reader, &mut std::io::sink());
        });
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("server ready line in time");
        assert!(
            line.contains("\"ready\":true"),
            "server did not start: {line:?}"
        );
        Self { child }
    }

    /// Stop with SIGTERM and wait (bounded) for the log to be flushed.
    fn stop(mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        for _ in 0..100 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn open(path: &Path) -> BufReader<std::fs::File> {
    BufReader::new(std::fs::File::open(path).expect("open"))
}

fn first_differences<'a>(
    a: impl Iterator<Item = &'a String>,
    b: &std::collections::BTreeSet<String>,
) -> Vec<&'a String> {
    a.filter(|u| !b.contains(*u)).take(10).collect()
}

fn run_walk(
    extra: &[&str],
    max_pages_per_host: usize,
    after_walk: impl FnOnce(&Manifest, &walk::WalkResult, &HashMap<String, IpAddr>),
) -> (Manifest, walk::WalkResult, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), extra);
    let hosts: HashMap<String, IpAddr> = formats::read_hosts(open(&dir.path().join("hosts.txt")))
        .expect("hosts file")
        .into_iter()
        .map(|h| (h.name, h.addr))
        .collect();
    let seeds = formats::read_seeds(open(&dir.path().join("seeds.txt"))).expect("seeds file");
    let manifest =
        formats::read_manifest(open(&dir.path().join("manifest.txt"))).expect("manifest");
    let policy = walk::WalkPolicy {
        robots_4xx_disallow: false,
        max_pages_per_host,
        max_fetches: 20_000,
        max_time: Duration::from_secs(90),
    };
    let result = walk::walk(&seeds, &hosts, &policy);
    after_walk(&manifest, &result, &hosts);
    server.stop();
    (manifest, result, dir)
}

fn assert_walk_matches(manifest: &Manifest, result: &walk::WalkResult) {
    eprintln!(
        "walk: {} fetched, {} refused by robots, {} by filters; manifest: {} M, {} F",
        result.fetched.len(),
        result.disallowed.len(),
        result.filtered.len(),
        manifest.must.len(),
        manifest.forbidden.len()
    );
    assert!(!result.truncated, "walk hit its bound");
    assert!(
        result.errors.is_empty(),
        "fetch errors: {:?}",
        &result.errors[..result.errors.len().min(5)]
    );
    assert!(
        result.fetched == manifest.must,
        "walk and manifest differ: {} fetched, {} in M; fetched not in M: {:?}; M not fetched: {:?}",
        result.fetched.len(),
        manifest.must.len(),
        first_differences(result.fetched.iter(), &manifest.must),
        first_differences(manifest.must.iter(), &result.fetched),
    );
    // What the walk saw robots.txt or the filters refuse, the manifest forbids.
    let unlisted: Vec<_> = result
        .disallowed
        .iter()
        .chain(&result.filtered)
        .filter(|u| !manifest.forbidden.contains(*u))
        .take(10)
        .collect();
    assert!(
        unlisted.is_empty(),
        "refused by the walk but not F: {unlisted:?}"
    );
}

#[test]
fn manifest_equals_an_independent_walk_and_the_referee_passes_it() {
    let extra = [
        "--hosts",
        "12",
        "--pages-per-host",
        "10-25",
        "--page-size",
        "1024-3000",
        "--out-degree",
        "10-30",
    ];
    // After the clean crawl, misbehave on purpose: fetch an M URL again, an alias of
    // one, a URL robots.txt forbids, and send a request without From and without the
    // agent in its User-Agent. The referee must pass the crawl and fail the whole log
    // for exactly those reasons.
    let mut boundary_us = 0;
    let (manifest, result, dir) = run_walk(&extra, 2_000, |manifest, result, hosts| {
        boundary_us = now_us();
        let root = manifest.must.first().expect("an M URL").clone();
        let forbidden = result
            .disallowed
            .first()
            .expect("a URL robots.txt refused")
            .clone();
        let alias = manifest
            .must
            .iter()
            .find(|u| u.ends_with("/p/1"))
            .expect("a /p/1 page")
            .replace("/p/1", "/p/%31");
        for url in [&root, &alias, &forbidden] {
            let (addr, host, target) = locate(hosts, url);
            walk::get(addr, &host, &target).expect("misbehaving fetch");
        }
        let (addr, host, _) = locate(hosts, &root);
        raw_get(
            addr,
            &format!(
                "GET / HTTP/1.1\r\nHost: {host}\r\nUser-Agent: curl/8\r\nConnection: close\r\n\r\n"
            ),
        );
    });
    assert!(
        manifest.must.len() > 300,
        "a web worth walking: {}",
        manifest.must.len()
    );
    assert!(!manifest.forbidden.is_empty());
    assert_walk_matches(&manifest, &result);

    // The server's log of that crawl is a clean crawl: the referee passes it.
    let all = formats::read_log(open(&dir.path().join("log.jsonl"))).expect("log");
    let lines: Vec<_> = all
        .iter()
        .filter(|l| l.t_us < boundary_us)
        .cloned()
        .collect();
    assert_eq!(
        all.len(),
        lines.len() + 4,
        "four misbehaving requests logged"
    );
    let report = referee::check(&lines, &manifest, &CheckPolicy::new("trawl"));
    assert!(report.passed, "{report}");
    assert_eq!(report.must_fetched, report.must);
    assert_eq!(report.max_connections, 1);
    // It fails when one manifest URL is dropped from the log.
    let dropped = lines
        .iter()
        .position(|l| manifest.must.contains(&l.url()))
        .expect("an M request");
    let mut short = lines.clone();
    short.remove(dropped);
    let report = referee::check(&short, &manifest, &CheckPolicy::new("trawl"));
    assert_eq!(report.violations, [referee::ViolationKind::Missed]);
    // And the whole log fails for each misbehaviour.
    let report = referee::check(&all, &manifest, &CheckPolicy::new("trawl"));
    use referee::ViolationKind as V;
    assert_eq!(
        report.violations,
        [
            V::Duplicate,
            V::ForbiddenFetched,
            V::NonCanonicalTarget,
            V::UserAgentWithoutAgent,
            V::MissingFrom
        ],
        "{report}"
    );
    assert_eq!(report.duplicates.count, 3, "{report}");
}

fn now_us() -> u64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970");
    u64::try_from(since.as_micros()).expect("microseconds fit")
}

/// Address, Host header value and request-target of a canonical URL.
fn locate(hosts: &HashMap<String, IpAddr>, url: &str) -> (SocketAddr, String, String) {
    let parsed = url::Url::parse(url).expect("manifest URL");
    let name = parsed.host_str().expect("host");
    let port = parsed.port().expect("explicit port");
    let at = url.find(&format!("{name}:{port}")).expect("authority")
        + name.len()
        + 1
        + port.to_string().len();
    (
        SocketAddr::new(hosts[name], port),
        format!("{name}:{port}"),
        url[at..].to_owned(),
    )
}

fn raw_get(addr: SocketAddr, request: &str) {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(3)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    stream.write_all(request.as_bytes()).expect("send");
    let mut sink = Vec::new();
    let _ = stream.read_to_end(&mut sink);
}

#[test]
fn manifest_equals_an_independent_walk_on_traps() {
    let extra = [
        "--hosts",
        "10",
        "--profile",
        "traps",
        "--pages-per-host",
        "10-20",
        "--page-size",
        "1024-2048",
        "--out-degree",
        "10-20",
        "--manifest-max-pages-per-host",
        "120",
    ];
    let (manifest, result, _dir) = run_walk(&extra, 120, |_, _, _| {});
    assert!(manifest.header.profile.contains("traps"));
    assert_walk_matches(&manifest, &result);
}
