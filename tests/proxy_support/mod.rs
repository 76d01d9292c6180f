//! The real-server proxy harness (issue 29, notes §13): squid, microsocks and danted
//! from Debian, started by the test on loopback with configs of its own, in front of a
//! synthweb world whose names dnsmasq answers.
//!
//! Everything runs inside a network, mount and PID namespace of its own: the test
//! binary re-executes itself under `unshare --net --mount --propagation private --pid
//! --fork --kill-child --mount-proc` (the precedent is `tests/fetch_memory.rs`), so
//! the ports are private, `/etc/resolv.conf` and `/etc/hosts` can be bind-mounted over
//! (as `tools/widebench/run.sh` does), and every server dies with the test: the inner
//! test process is the namespace's PID 1. A test file calls [`run_in_namespace`] from
//! an outer `#[test]` and does its work in an inner `#[test]` that starts with
//! [`Lab::enter`], which is `None` everywhere but inside the namespace. Each file
//! starts its servers once and runs its cases with [`run_cases`] (in parallel, every
//! failure reported).
//!
//! **Egress tagging.** Each proxy connects out from its own source address
//! ([`SQUID_EGRESS`], [`MICROSOCKS_EGRESS`], [`DANTED_EGRESS`]; a direct client leaves
//! from 127.0.0.1), and synthweb's request log records each request's peer, so the
//! server itself tells which route served a request, without trusting a proxy's log.
//!
//! Without root, `unshare`, or one of the servers, a test says so and passes, unless
//! `CI=true`, where it fails.

#![allow(dead_code, reason = "each test binary uses a different subset")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::crawl_support::{self, Synthweb};

/// Set in the re-executed test binary: it runs inside the namespace.
pub const INNER_ENV: &str = "TRAWL_PROXY_NETNS_INNER";
/// Names of the cases to run (comma separated), for working on one: [`run_cases`].
pub const CASES_ENV: &str = "TRAWL_PROXY_CASES";
/// squid's `tcp_outgoing_address`.
pub const SQUID_EGRESS: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 9);
/// microsocks' `-b`.
pub const MICROSOCKS_EGRESS: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 10);
/// danted's `external:`.
pub const DANTED_EGRESS: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 11);
/// Where a direct client's connections come from.
pub const DIRECT_EGRESS: Ipv4Addr = Ipv4Addr::LOCALHOST;
/// The user and password of the proxies that ask for them (distinct enough for a
/// leak check: [`leaks`]).
pub const USER: &str = "crawler";
pub const PASSWORD: &str = "Sq7secretPw";
/// [`USER`]:[`PASSWORD`] as an Apache MD5 (`$apr1$`) htpasswd line for
/// `basic_ncsa_auth` (`openssl passwd -apr1 -salt trawltst Sq7secretPw`).
pub const HTPASSWD: &str = "crawler:$apr1$trawltst$pDQ42yGTGCZzAky.sNol5.";
/// The synthweb world of the proxy tests: HTTP and HTTPS hosts (`--tls`), a profile
/// without randomness in what is served, fixed page counts and sizes.
pub const WORLD: [&str; 8] = [
    "--hosts",
    "12",
    "--profile",
    "default",
    "--pages-per-host",
    "10-10",
    "--page-size",
    "2000-2000",
];
/// synthweb's hostile profile needs 24 hosts: 0 to 7 are ordinary, 8 to 23 each
/// misbehave in one way ([`HOSTILE_KINDS`]).
pub const HOSTILE_WORLD: [&str; 8] = [
    "--hosts",
    "24",
    "--profile",
    "hostile",
    "--pages-per-host",
    "10-10",
    "--page-size",
    "2000-2000",
];
/// The behaviour of each of [`HOSTILE_WORLD`]'s hostile hosts, from host 8 on
/// (synthweb's `HOSTILE_HOSTS`).
pub const HOSTILE_KINDS: [&str; 16] = [
    "head 1 byte a second",
    "chunked body without end",
    "Content-Length twice the body, close",
    "Content-Length half the body, a fake second response",
    "a bad chunk size line",
    "a 1 MiB header block",
    "10,000 header fields",
    "bare LF line ends",
    "gzip bomb",
    "half the body, then RST",
    "closed before any response byte",
    "never answered",
    "HTTP/0.9 reply (no status line)",
    "4 KiB of binary garbage",
    "TLS fails (plain HTTP normal)",
    "expired certificate (plain HTTP normal)",
];
/// Server fixtures for the error cases, each on its own address with its own name:
/// see [`Fixtures`].
pub const RESET_HOST: &str = "reset.fixture.test";
pub const SILENT_HOST: &str = "silent.fixture.test";
pub const CLOSE_HOST: &str = "close.fixture.test";
pub const FULL_HOST: &str = "full.fixture.test";
/// A name dnsmasq answers NXDOMAIN for (it is authoritative for `test`).
pub const NX_HOST: &str = "nx.synth.test";

const SQUID: &str = "/usr/sbin/squid";
const NCSA_AUTH: &str = "/usr/lib/squid/basic_ncsa_auth";
const MICROSOCKS: &str = "/usr/bin/microsocks";
const DANTED: &str = "/usr/sbin/danted";
const DNSMASQ: &str = "/usr/sbin/dnsmasq";
const CURL: &str = "/usr/bin/curl";

/// Whether `CI=true`: then a missing prerequisite fails instead of skipping.
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// A prerequisite is missing: panics under CI, else prints why and returns false.
pub fn skip(why: &str) -> bool {
    assert!(!under_ci(), "CI=true and {why}");
    eprintln!(
        "SKIPPED: {why} (the proxy tests need root, unshare and the servers .ci/run installs)"
    );
    false
}

/// Whether this process runs inside the test namespace.
pub fn inside() -> bool {
    std::env::var_os(INNER_ENV).is_some()
}

fn is_root() -> bool {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

/// The servers and tools every proxy test needs, and curl when `curl` says so: true
/// when all are there, else [`skip`].
pub fn prerequisites(curl: bool) -> bool {
    if !is_root() {
        return skip("not root");
    }
    let mut need = vec![
        SQUID,
        NCSA_AUTH,
        MICROSOCKS,
        DANTED,
        DNSMASQ,
        "/usr/bin/unshare",
    ];
    if curl {
        need.push(CURL);
    }
    let missing: Vec<&str> = need
        .into_iter()
        .filter(|p| !Path::new(p).is_file())
        .collect();
    if !missing.is_empty() {
        return skip(&format!("missing {}", missing.join(", ")));
    }
    let works = Command::new("unshare")
        .args(["--net", "--mount", "--pid", "--fork", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !works {
        return skip("unshare --net --mount --pid fails here (a container without CAP_SYS_ADMIN?)");
    }
    true
}

/// The outer half: re-executes this test binary's test `inner` inside a fresh
/// namespace and asserts it passed (within `limit`). Inside the namespace, and when a
/// prerequisite is missing ([`prerequisites`]), it returns at once. The inner run's
/// output goes through this test's own (`eprint!`), so libtest shows it on failure or
/// with `--nocapture`.
pub fn run_in_namespace(inner: &str, curl: bool, limit: Duration) {
    if inside() || !prerequisites(curl) {
        return;
    }
    let exe = std::env::current_exe().expect("current exe");
    let started = Instant::now();
    let mut child = Command::new("unshare")
        .args([
            "--net",
            "--mount",
            "--propagation",
            "private",
            "--pid",
            "--fork",
            "--kill-child",
            "--mount-proc",
        ])
        .arg(exe)
        .args([inner, "--exact", "--nocapture", "--test-threads=1"])
        .env(INNER_ENV, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn unshare");
    // Both pipes drained by threads, so neither can fill up and stall the child.
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = r.read_to_end(&mut text);
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if Instant::now() > deadline {
            // The namespace's PID 1 is unshare's child: killing unshare kills it
            // (--kill-child), and with it every server.
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    eprint!("{}", out.join().unwrap_or_default());
    eprint!("{}", err.join().unwrap_or_default());
    eprintln!(
        "{inner}: the namespace run took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let status = status.unwrap_or_else(|| panic!("{inner} did not finish in {limit:?}"));
    assert!(
        status.success(),
        "{inner} failed inside the namespace: {status}"
    );
}

/// A named case of a test file, run by [`run_cases`].
pub type Case = (&'static str, fn(&Lab));

/// Runs every case against `lab`, each in its own thread, and panics listing the ones
/// that failed (each case's own panic message is printed as it happens). With
/// [`CASES_ENV`] set (names, comma separated), only those cases run.
pub fn run_cases(lab: &Lab, cases: &[Case]) {
    let only = std::env::var(CASES_ENV).ok();
    let chosen = |name: &str| {
        only.as_deref()
            .is_none_or(|list| list.split(',').any(|n| n.trim() == name))
    };
    let failed: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = cases
            .iter()
            .filter(|(name, _)| chosen(name))
            .map(|&(name, case)| {
                let started = Instant::now();
                (
                    name,
                    s.spawn(move || {
                        case(lab);
                        eprintln!(
                            "case {name}: ok in {:.1} s",
                            started.elapsed().as_secs_f64()
                        );
                    }),
                )
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|(name, h)| h.join().is_err().then(|| name.to_owned()))
            .collect()
    });
    assert!(failed.is_empty(), "cases failed: {failed:?}");
}

/// Runs a command that must succeed (namespace set-up).
fn sh(program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Waits until something accepts TCP connections on `addr` (or panics after `limit`,
/// with `what` and the tail of `log` in the message).
pub fn wait_port(addr: SocketAddr, limit: Duration, what: &str, log: &Path) {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let text = fs::read_to_string(log).unwrap_or_default();
    let tail: Vec<&str> = text.lines().rev().take(20).collect();
    panic!(
        "{what} does not listen on {addr}; {}:\n{}",
        log.display(),
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    );
}

/// A server process the harness can kill and start again: a slot for its child,
/// killed on drop.
#[derive(Default)]
pub struct Process(Mutex<Option<Child>>);

impl Process {
    /// Starts `cmd` with stdout and stderr appended to `log`, then waits until `addr`
    /// accepts connections (`what` and `log` name it in a failure).
    pub fn start(&self, cmd: &mut Command, log: &Path, addr: SocketAddr, what: &str) {
        self.kill();
        let out = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .unwrap();
        let child = cmd
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("start {what}: {e}"));
        *self.0.lock().unwrap() = Some(child);
        wait_port(addr, Duration::from_secs(30), what, log);
    }

    /// SIGKILL, as an outage would, and reap it: afterwards its port refuses.
    pub fn kill(&self) {
        if let Some(mut c) = self.0.lock().unwrap().take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Waits (up to 3 s) until the file at `path` stops growing: the servers' logs are
/// written through buffers.
pub fn wait_quiet(path: &Path) {
    let size = || fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut last = size();
    loop {
        std::thread::sleep(Duration::from_millis(150));
        let now = size();
        if now == last || Instant::now() > deadline {
            return;
        }
        last = now;
    }
}

/// One synthweb host: its name, address and ports.
#[derive(Clone, Debug)]
pub struct WebHost {
    pub name: String,
    pub addr: Ipv4Addr,
    pub http_port: u16,
    pub https_port: u16,
}

impl WebHost {
    /// `http://name:port/`.
    pub fn http_root(&self) -> String {
        format!("http://{}:{}/", self.name, self.http_port)
    }

    /// `https://name:port/`.
    pub fn https_root(&self) -> String {
        format!("https://{}:{}/", self.name, self.https_port)
    }
}

/// One request as synthweb logged it (the fields the proxy tests read).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct WebRequest {
    /// The connection's source address: which route served the request.
    pub peer: Ipv4Addr,
    pub scheme: String,
    /// `name:port`.
    pub host: String,
    pub target: String,
    pub status: u16,
    /// The `User-Agent` header: `curl/…` or trawl's.
    pub user_agent: String,
}

impl WebRequest {
    pub fn url(&self) -> String {
        format!("{}://{}{}", self.scheme, self.host, self.target)
    }

    /// Whether curl sent it (cases that run curl and cases that run trawl share the
    /// world, in parallel).
    pub fn by_curl(&self) -> bool {
        self.user_agent.starts_with("curl/")
    }
}

/// The namespace's world: synthweb, dnsmasq and the error fixtures, started by
/// [`Lab::enter`]; proxies are started on demand ([`Lab::squid`], [`Lab::microsocks`],
/// [`Lab::danted`]). Dropped, it stops what it started (the namespace's end would
/// anyway).
pub struct Lab {
    pub dir: PathBuf,
    pub web: Synthweb,
    pub hosts: Vec<WebHost>,
    /// synthweb's CA certificate (PEM).
    pub ca: PathBuf,
    /// `nameserver 127.0.0.1`: trawl's `--resolv-conf`.
    pub resolv_conf: PathBuf,
    pub fixtures: Fixtures,
    dnsmasq: Child,
    next_port: AtomicU16,
    /// Last, so that it is removed once synthweb has stopped (fields drop in order).
    _tmp: tempfile::TempDir,
}

impl Lab {
    /// Inside the namespace: sets it up and starts synthweb with `world` (plus `--tls
    /// --ca-out --bind-range 127.0.1.0/28`), the fixtures, and dnsmasq answering the
    /// world's names and the fixtures'. Elsewhere `None`.
    pub fn enter(world: &[&str]) -> Option<Lab> {
        if !inside() {
            return None;
        }
        let tmp = tempfile::Builder::new()
            .prefix("trawl-proxy-")
            .tempdir()
            .expect("tempdir");
        let dir = tmp.path().to_path_buf();
        // squid and danted drop to unprivileged users: they must reach their files.
        sh("chmod", &["0755", &dir.display().to_string()]);
        sh("ip", &["link", "set", "lo", "up"]);
        let resolv_conf = dir.join("resolv.conf");
        fs::write(&resolv_conf, "nameserver 127.0.0.1\n").unwrap();
        fs::write(
            dir.join("etc-hosts"),
            "127.0.0.1 localhost\n::1 localhost\n",
        )
        .unwrap();
        sh(
            "mount",
            &[
                "--bind",
                &resolv_conf.display().to_string(),
                "/etc/resolv.conf",
            ],
        );
        sh(
            "mount",
            &[
                "--bind",
                &dir.join("etc-hosts").display().to_string(),
                "/etc/hosts",
            ],
        );
        // squid's shared memory segments, private to the namespace.
        sh("mount", &["-t", "tmpfs", "tmpfs", "/dev/shm"]);

        let mut args: Vec<&str> = world.to_vec();
        args.extend([
            "--tls",
            "--ca-out",
            "ca.pem",
            "--bind-range",
            "127.0.1.0/28",
        ]);
        let web = Synthweb::start(&dir.join("web"), &args);
        let hosts = read_hosts(&web.path("hosts.txt"));
        assert!(!hosts.is_empty(), "synthweb wrote no hosts");
        let fixtures = Fixtures::start();

        let mut dns_hosts: String = hosts
            .iter()
            .map(|h| format!("{} {}\n", h.addr, h.name))
            .collect();
        for (addr, name) in fixtures.names() {
            dns_hosts.push_str(&format!("{addr} {name}\n"));
        }
        fs::write(dir.join("dns-hosts"), dns_hosts).unwrap();
        let dnsmasq = Command::new(DNSMASQ)
            .args([
                "--no-daemon",
                "--conf-file=/dev/null",
                "--no-resolv",
                "--no-hosts",
                "--user=root",
                "--listen-address=127.0.0.1",
                "--bind-interfaces",
                "--port=53",
                "--local=/test/",
                "--pid-file=",
            ])
            .arg(format!("--addn-hosts={}", dir.join("dns-hosts").display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(fs::File::create(dir.join("dnsmasq.err")).unwrap())
            .spawn()
            .expect("start dnsmasq");
        let lab = Lab {
            ca: web.path("ca.pem"),
            dir,
            _tmp: tmp,
            web,
            hosts,
            resolv_conf,
            fixtures,
            dnsmasq,
            next_port: AtomicU16::new(20_000),
        };
        let probe = lab.hosts[0].name.clone();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !getent(&probe) {
            assert!(
                Instant::now() < deadline,
                "dnsmasq does not answer {probe}: {}",
                fs::read_to_string(lab.dir.join("dnsmasq.err")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(!getent(NX_HOST), "{NX_HOST} resolves");
        Some(lab)
    }

    /// A resolv.conf naming a server nobody answers at (127.0.0.53): given to a
    /// `socks5h` or HTTP-proxy crawl as `--resolv-conf`, it proves trawl's own DNS
    /// was never needed.
    pub fn dead_resolv_conf(&self) -> PathBuf {
        let path = self.dir.join("dead-resolv.conf");
        fs::write(
            &path,
            "nameserver 127.0.0.53\noptions timeout:1 attempts:1\n",
        )
        .unwrap();
        path
    }

    /// A port nothing in the namespace uses yet.
    pub fn port(&self) -> u16 {
        self.next_port.fetch_add(1, Ordering::Relaxed)
    }

    /// A fresh directory under the lab's.
    pub fn subdir(&self, name: &str) -> PathBuf {
        let d = self.dir.join(name);
        fs::create_dir_all(&d).unwrap();
        d
    }

    /// Starts a squid (see [`SquidConfig`]).
    pub fn squid(&self, name: &str, config: SquidConfig) -> Squid {
        Squid::start(self, name, config)
    }

    /// Starts a microsocks on its own port, connecting out from
    /// [`MICROSOCKS_EGRESS`]; with `auth`, it asks for [`USER`]/[`PASSWORD`].
    pub fn microsocks(&self, name: &str, auth: bool) -> Microsocks {
        Microsocks::start(self, name, auth)
    }

    /// Starts a danted (no authentication: `socksmethod: username` needs system
    /// users) connecting out from [`DANTED_EGRESS`].
    pub fn danted(&self, name: &str) -> Danted {
        Danted::start(self, name)
    }

    /// How many lines synthweb's request log has now: a mark for
    /// [`Lab::requests_since`].
    pub fn web_mark(&self) -> usize {
        fs::read_to_string(self.web.path("req.log"))
            .unwrap_or_default()
            .lines()
            .count()
    }

    /// synthweb's requests logged after `mark` ([`Lab::web_mark`]), once the log has
    /// stopped growing (it is written when a response ends, and flushed when the
    /// writer's queue is empty).
    pub fn requests_since(&self, mark: usize) -> Vec<WebRequest> {
        let path = self.web.path("req.log");
        wait_quiet(&path);
        let text = fs::read_to_string(&path).unwrap_or_default();
        text.lines()
            .skip(mark)
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).expect("req.log line");
                let peer: SocketAddr = v["peer"].as_str().unwrap().parse().unwrap();
                let std::net::IpAddr::V4(peer) = peer.ip() else {
                    panic!("IPv6 peer in {l}");
                };
                WebRequest {
                    peer,
                    scheme: v["scheme"].as_str().unwrap().to_owned(),
                    host: v["host"].as_str().unwrap().to_owned(),
                    target: v["target"].as_str().unwrap().to_owned(),
                    status: u16::try_from(v["status"].as_u64().unwrap()).unwrap(),
                    user_agent: v["user_agent"].as_str().unwrap_or_default().to_owned(),
                }
            })
            .collect()
    }

    /// The `trawl crawl` flags for this lab's world into `out`: the policy synthweb's
    /// manifest assumes ([`crawl_support::crawl_args`]), names resolved through
    /// dnsmasq (`--resolv-conf`, not `--hosts-file`), synthweb's CA.
    pub fn crawl_args(&self, out: &Path, budget: u64, delay_ms: u64) -> Vec<String> {
        let mut args = crawl_support::crawl_args(out, budget, delay_ms);
        let at = args
            .iter()
            .position(|a| a == "--hosts-file")
            .expect("--hosts-file");
        args.drain(at..at + 2);
        args.extend([
            "--resolv-conf".to_owned(),
            self.resolv_conf.display().to_string(),
            "--ca-file".to_owned(),
            self.ca.display().to_string(),
        ]);
        args
    }

    /// Starts `trawl ARGS` in synthweb's directory (where `seeds.txt` is), its stdout
    /// and stderr to `out.stdout`/`out.stderr` beside `out`: a crawl to watch, kill or
    /// wait for with [`Lab::wait_crawl`].
    pub fn spawn_trawl(&self, out: &Path, args: &[String]) -> Child {
        self.spawn_trawl_env(out, args, &[])
    }

    /// As [`Lab::spawn_trawl`], with `env` added to trawl's environment (credentials
    /// for `--proxy-user-env`, proxy variables).
    pub fn spawn_trawl_env(&self, out: &Path, args: &[String], env: &[(&str, &str)]) -> Child {
        let log = |ext: &str| fs::File::create(out.with_extension(ext)).unwrap();
        Command::new(crawl_support::trawl_bin())
            .current_dir(&self.web.dir)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(log("stdout"))
            .stderr(log("stderr"))
            .spawn()
            .expect("spawn trawl")
    }

    /// Waits for a crawl [`Lab::spawn_trawl`] started into `out` (killed after
    /// `limit`), and reads what it wrote.
    pub fn wait_crawl(&self, child: &mut Child, out: &Path, limit: Duration) -> CrawlRun {
        let started = Instant::now();
        let status = crawl_support::wait_exit(child, limit, "trawl crawl");
        CrawlRun {
            status,
            elapsed: started.elapsed(),
            stderr: fs::read_to_string(out.with_extension("stderr")).unwrap_or_default(),
            log: crawl_support::crawl_log(out),
        }
    }

    /// Runs `trawl` + [`Lab::crawl_args`] + `extra` into `out` and waits (at most
    /// `limit`).
    pub fn crawl(
        &self,
        out: &Path,
        budget: u64,
        delay_ms: u64,
        extra: &[&str],
        limit: Duration,
    ) -> CrawlRun {
        let mut args = self.crawl_args(out, budget, delay_ms);
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        let mut child = self.spawn_trawl(out, &args);
        self.wait_crawl(&mut child, out, limit)
    }
}

/// The per-host page budget of a named crawl ([`Lab::named_crawl`]): above what a host
/// of [`WORLD`] serves over both schemes, so that no budget decides which URLs are
/// fetched.
pub const NAMED_BUDGET: u64 = 1_000;

/// A crawl with a name of its own ([`Lab::named_crawl`]): the name is in its
/// User-Agent, so that crawls running in parallel against one synthweb are told apart
/// in its request log, and in its directory.
pub struct Run {
    pub name: String,
    pub out: PathBuf,
    pub crawl: CrawlRun,
}

impl Run {
    /// The User-Agent of the crawl named `name`.
    pub fn user_agent(name: &str) -> String {
        format!("trawl/0 (proxy test {name})")
    }

    /// synthweb's requests from this crawl.
    pub fn requests(&self, lab: &Lab) -> Vec<WebRequest> {
        let ua = Run::user_agent(&self.name);
        lab.requests_since(0)
            .into_iter()
            .filter(|r| r.user_agent == ua)
            .collect()
    }

    /// The source addresses synthweb saw this crawl's requests come from.
    pub fn peers(&self, lab: &Lab) -> BTreeSet<Ipv4Addr> {
        self.requests(lab).iter().map(|r| r.peer).collect()
    }

    /// Every `(url, outcome, status)` of the crawl log, the URL [`scheme_less`]. A
    /// world's HTTP and HTTPS pages are alike, and a page whose twin was read first is
    /// a `duplicate` whose links are not followed, so which scheme of a URL linked
    /// from one page only is crawled depends on timing; this set does not.
    pub fn outcomes_any_scheme(&self) -> BTreeSet<(String, String, u64)> {
        self.crawl
            .outcomes()
            .into_iter()
            .map(|(u, o, s)| (scheme_less(&u), o, s))
            .collect()
    }

    /// Every URL the crawl log names.
    pub fn urls(&self) -> BTreeSet<String> {
        self.crawl
            .outcomes()
            .into_iter()
            .map(|(u, _, _)| u)
            .collect()
    }

    /// Every URL the crawl log names, [`scheme_less`].
    pub fn urls_any_scheme(&self) -> BTreeSet<String> {
        self.crawl
            .outcomes()
            .into_iter()
            .map(|(u, _, _)| scheme_less(&u))
            .collect()
    }

    /// Each URL's last crawl-log line: `(url, outcome, status)`, the URL
    /// [`scheme_less`].
    pub fn finals_any_scheme(&self) -> BTreeSet<(String, String, u64)> {
        let mut last: BTreeMap<String, (String, u64)> = BTreeMap::new();
        for r in &self.crawl.log {
            last.insert(
                r["url"].as_str().unwrap_or_default().to_owned(),
                (
                    r["outcome"].as_str().unwrap_or_default().to_owned(),
                    r["status"].as_u64().unwrap_or(0),
                ),
            );
        }
        last.into_iter()
            .map(|(u, (o, s))| (scheme_less(&u), o, s))
            .collect()
    }

    /// The crawl log's `route` values, with how many lines carry each (`-` for a line
    /// without one).
    pub fn routes(&self) -> BTreeMap<String, usize> {
        let mut n = BTreeMap::new();
        for r in &self.crawl.log {
            *n.entry(r["route"].as_str().unwrap_or("-").to_owned())
                .or_default() += 1;
        }
        n
    }

    /// The `WARC-IP-Address` of each `response` and `revisit` record (a world's HTTP
    /// and HTTPS pages are alike, so which of the two is the revisit varies), by target
    /// URI (`None` where the field is absent).
    pub fn warc_ip_addresses(&self) -> BTreeMap<String, Option<String>> {
        let files = crawl_support::warc_files(&self.out.join("warc"));
        crawl_support::read_warc_records(&files)
            .into_iter()
            .filter(|r| matches!(r.field("WARC-Type"), Some("response" | "revisit")))
            .map(|r| {
                (
                    r.field("WARC-Target-URI").unwrap_or_default().to_owned(),
                    r.field("WARC-IP-Address").map(str::to_owned),
                )
            })
            .collect()
    }

    pub fn assert_succeeded(&self) {
        assert!(
            self.crawl.status.success(),
            "{}: trawl crawl {}\n{}",
            self.name,
            self.crawl.status,
            self.crawl.stderr
        );
    }
}

/// `url` without its scheme and port: `host/path?query`, the same for a world's HTTP
/// and HTTPS twins ([`Run::outcomes_any_scheme`]).
pub fn scheme_less(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(u) => format!(
            "{}{}{}",
            u.host_str().unwrap_or_default(),
            u.path(),
            u.query().map(|q| format!("?{q}")).unwrap_or_default()
        ),
        Err(_) => url.to_owned(),
    }
}

/// `--proxy URL`.
pub fn via(url: &str) -> Vec<String> {
    vec!["--proxy".to_owned(), url.to_owned()]
}

/// Asserts two sets are equal, listing only their differences.
pub fn assert_same_set<T: Ord + std::fmt::Debug>(
    got: &BTreeSet<T>,
    want: &BTreeSet<T>,
    what: &str,
) {
    let missing: Vec<_> = want.difference(got).take(10).collect();
    let extra: Vec<_> = got.difference(want).take(10).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{what} ({} against {}): missing {missing:?}, extra {extra:?}",
        got.len(),
        want.len()
    );
}

impl Lab {
    /// The seeds of a named crawl: synthweb's (every host's HTTP root) and every host's
    /// HTTPS root, so that a route carries absolute-form requests and `CONNECT`
    /// tunnels both.
    pub fn seed_urls(&self) -> BTreeSet<String> {
        let mut seeds: BTreeSet<String> = fs::read_to_string(self.web.path("seeds.txt"))
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        seeds.extend(self.hosts.iter().map(WebHost::https_root));
        seeds
    }

    /// The `trawl crawl` flags of the crawl `name` into `out`: [`Lab::crawl_args`]
    /// with [`NAMED_BUDGET`], the HTTPS roots as `--seed`s ([`Lab::seed_urls`]), its
    /// own User-Agent ([`Run::user_agent`]), the environment's proxies ignored, then
    /// `extra`; a `--resolv-conf` in `extra` replaces the lab's.
    pub fn named_args(
        &self,
        name: &str,
        out: &Path,
        delay_ms: u64,
        extra: &[String],
    ) -> Vec<String> {
        let mut args = self.crawl_args(out, NAMED_BUDGET, delay_ms);
        let mut extra = extra.to_vec();
        if let Some(at) = extra.iter().position(|a| a == "--resolv-conf") {
            let value = extra.remove(at + 1);
            extra.remove(at);
            let at = args.iter().position(|a| a == "--resolv-conf").unwrap();
            args[at + 1] = value;
        }
        for h in &self.hosts {
            args.extend(["--seed".to_owned(), h.https_root()]);
        }
        args.extend([
            "--user-agent".to_owned(),
            Run::user_agent(name),
            "--no-proxy-env".to_owned(),
        ]);
        args.extend(extra);
        args
    }

    /// Starts the crawl `name` ([`Lab::named_args`]) into `crawl-NAME` under the lab's
    /// directory, with `env` added to trawl's environment; returns it and its `out`.
    pub fn start_named(
        &self,
        name: &str,
        delay_ms: u64,
        extra: &[String],
        env: &[(&str, &str)],
    ) -> (Child, PathBuf) {
        let out = self.dir.join(format!("crawl-{name}"));
        let args = self.named_args(name, &out, delay_ms, extra);
        (self.spawn_trawl_env(&out, &args, env), out)
    }

    /// Runs the crawl `name` ([`Lab::start_named`]) and waits for it (at most `limit`).
    pub fn named_crawl(
        &self,
        name: &str,
        delay_ms: u64,
        extra: &[String],
        env: &[(&str, &str)],
        limit: Duration,
    ) -> Run {
        let (mut child, out) = self.start_named(name, delay_ms, extra, env);
        let crawl = self.wait_crawl(&mut child, &out, limit);
        eprintln!(
            "crawl {name}: {} log lines, {:.1} s",
            crawl.log.len(),
            crawl.elapsed.as_secs_f64()
        );
        Run {
            name: name.to_owned(),
            out,
            crawl,
        }
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = self.dnsmasq.kill();
        let _ = self.dnsmasq.wait();
    }
}

/// Whether the system resolver (glibc, through the bind-mounted resolv.conf) knows
/// `name`.
pub fn getent(name: &str) -> bool {
    Command::new("getent")
        .args(["hosts", name])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Where any of `secrets` appears in the files under `roots` (files, or directories
/// walked), gzip members decoded (WARC files): `path: secret` for each hit. The leak
/// check of notes §7, for the password, `user:password` and its base64.
pub fn leaks(roots: &[&Path], secrets: &[&str]) -> Vec<String> {
    fn walk(p: &Path, files: &mut Vec<PathBuf>) {
        if p.is_dir() {
            for e in fs::read_dir(p).unwrap().flatten() {
                walk(&e.path(), files);
            }
        } else if p.is_file() {
            files.push(p.to_path_buf());
        }
    }
    let mut files = Vec::new();
    for r in roots {
        walk(r, &mut files);
    }
    let mut hits = Vec::new();
    for f in files {
        let mut bytes = fs::read(&f).unwrap_or_default();
        if bytes.starts_with(&[0x1f, 0x8b]) {
            let mut plain = Vec::new();
            if flate2::read::MultiGzDecoder::new(&bytes[..])
                .read_to_end(&mut plain)
                .is_ok()
            {
                bytes = plain;
            }
        }
        for s in secrets {
            if bytes.windows(s.len()).any(|w| w == s.as_bytes()) {
                hits.push(format!("{}: {s}", f.display()));
            }
        }
    }
    hits
}

/// The secrets a leak check looks for with `user` and `password`: the password,
/// `user:password`, and its base64 (the `Proxy-Authorization` value).
pub fn secrets_of(user: &str, password: &str) -> Vec<String> {
    let pair = format!("{user}:{password}");
    vec![
        password.to_owned(),
        data_encoding::BASE64.encode(pair.as_bytes()),
        pair,
    ]
}

/// synthweb's `hostname address port [tls_port]` lines.
fn read_hosts(path: &Path) -> Vec<WebHost> {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some(WebHost {
                name: (*f.first()?).to_owned(),
                addr: f.get(1)?.parse().ok()?,
                http_port: f.get(2)?.parse().ok()?,
                https_port: f.get(3)?.parse().ok()?,
            })
        })
        .collect()
}

/// A finished `trawl crawl`.
pub struct CrawlRun {
    pub status: ExitStatus,
    pub elapsed: Duration,
    pub stderr: String,
    /// Every crawl-log line.
    pub log: Vec<serde_json::Value>,
}

impl CrawlRun {
    /// Every `(url, outcome, status)` of the crawl log (status 0 when there was none).
    pub fn outcomes(&self) -> BTreeSet<(String, String, u64)> {
        self.log
            .iter()
            .map(|r| {
                (
                    r["url"].as_str().unwrap_or_default().to_owned(),
                    r["outcome"].as_str().unwrap_or_default().to_owned(),
                    r["status"].as_u64().unwrap_or(0),
                )
            })
            .collect()
    }
}

/// A squid's settings: the test's own config, not Debian's (which caches and refuses
/// `CONNECT` to ports other than 443).
#[derive(Clone, Copy, Debug)]
pub struct SquidConfig {
    /// Basic authentication through `basic_ncsa_auth` ([`HTPASSWD`]); else any client
    /// on localhost is allowed.
    pub auth: bool,
    /// `tcp_outgoing_address`.
    pub egress: Ipv4Addr,
    /// `read_timeout`.
    pub read_timeout_secs: u32,
    /// `connect_timeout`.
    pub connect_timeout_secs: u32,
}

impl Default for SquidConfig {
    fn default() -> Self {
        SquidConfig {
            auth: false,
            egress: SQUID_EGRESS,
            read_timeout_secs: 10,
            connect_timeout_secs: 5,
        }
    }
}

impl SquidConfig {
    /// The `squid.conf` text for a squid whose files are in `dir`.
    pub fn text(&self, dir: &Path, port: u16) -> String {
        let d = dir.display();
        let mut c = format!(
            "http_port 127.0.0.1:{port}\n\
             pid_filename {d}/squid.pid\n\
             cache_log {d}/cache.log\n\
             access_log stdio:{d}/access.log squid\n\
             strip_query_terms off\n\
             cache_store_log none\n\
             cache deny all\n\
             cache_mem 0 MB\n\
             coredump_dir {d}\n\
             dns_nameservers 127.0.0.1\n\
             hosts_file none\n\
             shutdown_lifetime 0 seconds\n\
             pinger_enable off\n\
             visible_hostname trawl-test-squid\n\
             tcp_outgoing_address {egress}\n\
             read_timeout {read} seconds\n\
             connect_timeout {connect} seconds\n\
             forwarded_for delete\n\
             # CONNECT to any port: no SSL_ports rule.\n",
            egress = self.egress,
            read = self.read_timeout_secs,
            connect = self.connect_timeout_secs,
        );
        if self.auth {
            c.push_str(&format!(
                "auth_param basic program {NCSA_AUTH} {d}/passwd\n\
                 acl authed proxy_auth REQUIRED\n\
                 http_access allow authed\n\
                 http_access deny all\n"
            ));
        } else {
            c.push_str("http_access allow localhost\nhttp_access deny all\n");
        }
        c
    }
}

/// A running squid (`squid -N`), restartable on the same port.
pub struct Squid {
    pub name: String,
    pub dir: PathBuf,
    pub port: u16,
    pub config: SquidConfig,
    process: Process,
}

impl Squid {
    fn start(lab: &Lab, name: &str, config: SquidConfig) -> Squid {
        assert!(
            name.bytes().all(|b| b.is_ascii_alphanumeric()),
            "squid -n {name}"
        );
        let dir = lab.subdir(&format!("squid-{name}"));
        let port = lab.port();
        fs::write(dir.join("squid.conf"), config.text(&dir, port)).unwrap();
        fs::write(dir.join("passwd"), format!("{HTPASSWD}\n")).unwrap();
        // squid refuses to stay root: it writes its logs as `proxy`.
        sh("chown", &["-R", "proxy:proxy", &dir.display().to_string()]);
        let conf = dir.join("squid.conf").display().to_string();
        sh(SQUID, &["-k", "parse", "-f", &conf]);
        let squid = Squid {
            name: name.to_owned(),
            dir,
            port,
            config,
            process: Process::default(),
        };
        squid.restart();
        squid
    }

    /// The proxy URL, with [`USER`]/[`PASSWORD`] (or `pass` instead) when `auth`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The proxy URL with credentials in it.
    pub fn url_with(&self, user: &str, pass: &str) -> String {
        format!("http://{user}:{pass}@127.0.0.1:{}", self.port)
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    /// SIGKILL, as an outage would; afterwards the port refuses.
    pub fn kill(&self) {
        self.process.kill();
    }

    /// Starts it (again) on the same port with the same config, and waits for the port.
    pub fn restart(&self) {
        let conf = self.dir.join("squid.conf").display().to_string();
        self.process.start(
            Command::new(SQUID).args(["-N", "-n", &self.name, "-f", &conf]),
            &self.dir.join("squid.out"),
            self.addr(),
            "squid",
        );
    }

    /// Every line of its access log (`squid` format).
    pub fn access_log(&self) -> Vec<SquidAccess> {
        // squid writes its access log through a buffer: wait for it to stop growing.
        let path = self.dir.join("access.log");
        wait_quiet(&path);
        fs::read_to_string(&path)
            .unwrap_or_default()
            .lines()
            .filter_map(SquidAccess::parse)
            .collect()
    }
}

/// One line of squid's native access log: `time elapsed client code/status bytes
/// method url user hierarchy/peer type`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SquidAccess {
    /// `TCP_MISS`, `TCP_TUNNEL`, `TCP_DENIED`, `NONE_NONE`, ...
    pub code: String,
    pub status: u16,
    pub method: String,
    /// The absolute URL, or `host:port` for `CONNECT`.
    pub url: String,
    /// The authenticated (or offered) user, `-` when none.
    pub user: String,
}

impl SquidAccess {
    pub fn parse(line: &str) -> Option<SquidAccess> {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (code, status) = f.get(3)?.split_once('/')?;
        Some(SquidAccess {
            code: code.to_owned(),
            status: status.parse().ok()?,
            method: (*f.get(5)?).to_owned(),
            url: (*f.get(6)?).to_owned(),
            user: (*f.get(7)?).to_owned(),
        })
    }
}

/// A running microsocks.
pub struct Microsocks {
    pub dir: PathBuf,
    pub port: u16,
    pub auth: bool,
    process: Process,
}

impl Microsocks {
    fn start(lab: &Lab, name: &str, auth: bool) -> Microsocks {
        let m = Microsocks {
            dir: lab.subdir(&format!("microsocks-{name}")),
            port: lab.port(),
            auth,
            process: Process::default(),
        };
        m.restart();
        m
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    /// `scheme://127.0.0.1:port` (`socks5` or `socks5h`), with the credentials when it
    /// asks for them.
    pub fn url(&self, scheme: &str) -> String {
        if self.auth {
            format!("{scheme}://{USER}:{PASSWORD}@127.0.0.1:{}", self.port)
        } else {
            format!("{scheme}://127.0.0.1:{}", self.port)
        }
    }

    /// SIGKILL; afterwards the port refuses.
    pub fn kill(&self) {
        self.process.kill();
    }

    /// Starts it (again) on the same port; its stderr (the log) is appended to.
    pub fn restart(&self) {
        let mut cmd = Command::new(MICROSOCKS);
        cmd.args(["-i", "127.0.0.1", "-p", &self.port.to_string()])
            .args(["-b", &MICROSOCKS_EGRESS.to_string()]);
        if self.auth {
            cmd.args(["-u", USER, "-P", PASSWORD]);
        }
        let log = self.dir.join("microsocks.log");
        self.process
            .start(&mut cmd, &log, self.addr(), "microsocks");
    }

    /// The targets of its log's `client[N] IP: connected to HOST:PORT` lines, in order
    /// (microsocks 1.0.3 logs a connection it made, and nothing for one that failed).
    pub fn connected(&self) -> Vec<String> {
        fs::read_to_string(self.dir.join("microsocks.log"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| {
                l.split_once(": connected to ")
                    .map(|(_, t)| t.trim().to_owned())
            })
            .collect()
    }

    /// Its whole log.
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.join("microsocks.log")).unwrap_or_default()
    }
}

/// A running danted (Dante 1.4), run as `nobody`: it needs no privilege to serve
/// SOCKS5 without authentication on a port above 1024.
pub struct Danted {
    pub dir: PathBuf,
    pub port: u16,
    process: Process,
}

impl Danted {
    fn start(lab: &Lab, name: &str) -> Danted {
        let dir = lab.subdir(&format!("danted-{name}"));
        let port = lab.port();
        let conf = format!(
            "logoutput: {log}\n\
             internal: 127.0.0.1 port = {port}\n\
             external: {DANTED_EGRESS}\n\
             socksmethod: none\n\
             clientmethod: none\n\
             client pass {{ from: 127.0.0.0/8 to: 0.0.0.0/0 }}\n\
             socks pass {{ from: 0.0.0.0/0 to: 0.0.0.0/0 log: connect error }}\n",
            log = dir.join("danted.log").display(),
        );
        fs::write(dir.join("danted.conf"), conf).unwrap();
        // It runs unprivileged: as `nobody` from the start (setpriv execs it, so the
        // child is danted itself and a kill reaches it).
        sh(
            "chown",
            &["-R", "nobody:nogroup", &dir.display().to_string()],
        );
        let d = Danted {
            dir,
            port,
            process: Process::default(),
        };
        d.process.start(
            Command::new("setpriv")
                .args([
                    "--reuid=nobody",
                    "--regid=nogroup",
                    "--clear-groups",
                    DANTED,
                ])
                .args(["-f", &d.dir.join("danted.conf").display().to_string()])
                .args(["-p", &d.dir.join("danted.pid").display().to_string()])
                .args(["-N", "1"]),
            &d.dir.join("danted.out"),
            d.addr(),
            "danted",
        );
        d
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    pub fn url(&self, scheme: &str) -> String {
        format!("{scheme}://127.0.0.1:{}", self.port)
    }

    /// Its log (`pass(1): tcp/connect [: CLIENT PROXY -> EGRESS TARGET` lines).
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.join("danted.log")).unwrap_or_default()
    }
}

/// Origins that fail in the ways a proxy must report, each on its own address with a
/// name in dnsmasq (threads of the inner test process; they live as long as it does).
pub struct Fixtures {
    /// Reads the request, then resets the connection (SO_LINGER 0).
    pub reset: SocketAddr,
    /// Accepts and never answers.
    pub silent: SocketAddr,
    /// Reads the request, then closes cleanly without a response.
    pub close: SocketAddr,
    /// Its accept queue is full: a connect to it never completes.
    pub full: SocketAddr,
    /// Held so that `full` stays full.
    _full: TcpListener,
    _held: Vec<TcpStream>,
}

impl Fixtures {
    fn start() -> Fixtures {
        let listen = |last: u8| TcpListener::bind((Ipv4Addr::new(127, 0, 2, last), 8000)).unwrap();
        let reset = listen(1);
        let silent = listen(2);
        let close = listen(3);
        let full = listen(4);
        let addrs = (
            reset.local_addr().unwrap(),
            silent.local_addr().unwrap(),
            close.local_addr().unwrap(),
            full.local_addr().unwrap(),
        );
        std::thread::spawn(move || {
            for s in reset.incoming().flatten() {
                let mut s = s;
                let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
                // SO_LINGER 0 has no safe std API; a close with unread input resets
                // the connection too, so read one byte and let the rest arrive.
                let _ = s.read(&mut [0u8; 1]);
                std::thread::sleep(Duration::from_millis(50));
                drop(s);
            }
        });
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for s in silent.incoming().flatten() {
                held.push(s);
            }
        });
        std::thread::spawn(move || {
            for s in close.incoming().flatten() {
                let mut s = s;
                let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
                let _ = s.read(&mut [0u8; 4096]);
                let _ = s.shutdown(Shutdown::Both);
            }
        });
        // Never accepted: fill the accept queue until a connect times out.
        let mut held = Vec::new();
        while held.len() < 1_000 {
            match TcpStream::connect_timeout(&addrs.3, Duration::from_millis(300)) {
                Ok(s) => held.push(s),
                Err(_) => break,
            }
        }
        Fixtures {
            reset: addrs.0,
            silent: addrs.1,
            close: addrs.2,
            full: addrs.3,
            _full: full,
            _held: held,
        }
    }

    fn names(&self) -> [(std::net::IpAddr, &'static str); 4] {
        [
            (self.reset.ip(), RESET_HOST),
            (self.silent.ip(), SILENT_HOST),
            (self.close.ip(), CLOSE_HOST),
            (self.full.ip(), FULL_HOST),
        ]
    }
}

/// Sends `request` to `addr` and returns the response head (up to the blank line,
/// without it), or what came before the connection ended; gives up after `limit`.
pub fn response_head(addr: SocketAddr, request: &[u8], limit: Duration) -> String {
    send_request(addr, request, limit).0
}

/// Connects, sends `request`, and reads the response head ([`response_head`]); the
/// stream is returned for what follows the head.
fn send_request(addr: SocketAddr, request: &[u8], limit: Duration) -> (String, TcpStream) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(limit)).unwrap();
    s.write_all(request).unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let end = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(buf.len());
    (String::from_utf8_lossy(&buf[..end]).into_owned(), s)
}

/// What a client sees in a tunnel after the proxy's `200` to `request` (a
/// `CONNECT`): it sends a few bytes (as a TLS ClientHello would be), then reads until
/// the tunnel ends or `limit` passes. Returns the head, what ended the wait (`eof`,
/// `reset`, `timeout`, `data`) and when.
pub fn through_tunnel(
    addr: SocketAddr,
    request: &[u8],
    limit: Duration,
) -> (String, &'static str, Duration) {
    let (head, mut s) = send_request(addr, request, limit);
    let started = Instant::now();
    let _ = s.write_all(b"\x16\x03\x01\x00\x05hello");
    let ended = match s.read(&mut [0u8; 4096]) {
        Ok(0) => "eof",
        Ok(_) => "data",
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => "reset",
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            "timeout"
        }
        Err(_) => "error",
    };
    (head, ended, started.elapsed())
}

/// The value of header `name` in a head from [`response_head`].
pub fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().skip(1).find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// The status code of a head from [`response_head`].
pub fn status_of(head: &str) -> u16 {
    head.split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// A SOCKS5 exchange as a client: `method` offered (0 none, 2 user/pass), then
/// the credentials if chosen, then `CONNECT` to a name (ATYP 3) or an IPv4 address.
/// Returns the bytes of each server message, as hex, in order; stops at the first
/// refusal.
pub fn socks5_exchange(
    proxy: SocketAddr,
    offer: u8,
    creds: Option<(&str, &str)>,
    target: &str,
    port: u16,
    limit: Duration,
) -> Vec<Vec<u8>> {
    let mut s = TcpStream::connect(proxy).expect("connect");
    s.set_read_timeout(Some(limit)).unwrap();
    let mut got = Vec::new();
    let read = |s: &mut TcpStream, want: usize| {
        let mut buf = vec![0u8; want];
        let mut n = 0;
        while n < want {
            match s.read(&mut buf[n..]) {
                Ok(0) | Err(_) => break,
                Ok(k) => n += k,
            }
        }
        buf.truncate(n);
        buf
    };
    s.write_all(&[5, 1, offer]).unwrap();
    let method = read(&mut s, 2);
    got.push(method.clone());
    match method.as_slice() {
        [5, 2] => {
            let (u, p) = creds.unwrap_or(("", ""));
            let mut m = vec![1, u.len() as u8];
            m.extend(u.as_bytes());
            m.push(p.len() as u8);
            m.extend(p.as_bytes());
            s.write_all(&m).unwrap();
            let status = read(&mut s, 2);
            got.push(status.clone());
            if status.get(1) != Some(&0) {
                return got;
            }
        }
        [5, 0] => {}
        _ => return got,
    }
    let mut req = vec![5, 1, 0];
    match target.parse::<Ipv4Addr>() {
        Ok(ip) => {
            req.push(1);
            req.extend(ip.octets());
        }
        Err(_) => {
            req.extend([3, target.len() as u8]);
            req.extend(target.as_bytes());
        }
    }
    req.extend(port.to_be_bytes());
    s.write_all(&req).unwrap();
    // The reply's length depends on its address type: read the fixed part first.
    let mut reply = read(&mut s, 4);
    let rest = match reply.get(3) {
        Some(1) => 6,
        Some(4) => 18,
        Some(3) => {
            let n = read(&mut s, 1);
            let len = usize::from(n.first().copied().unwrap_or(0));
            reply.extend(n);
            len + 2
        }
        _ => 0,
    };
    reply.extend(read(&mut s, rest));
    got.push(reply);
    got
}

/// What `curl` did: its exit code, the origin's status (`%{http_code}`), the proxy's
/// answer to `CONNECT` (`%{http_connect}`), and stderr.
#[derive(Debug)]
pub struct CurlRun {
    pub code: i32,
    pub status: u16,
    pub connect: u16,
    pub stderr: String,
}

/// `curl -sS --max-time 10 ARGS`, the body discarded.
pub fn curl(args: &[&str]) -> CurlRun {
    let out = Command::new(CURL)
        .args(["-sS", "--max-time", "10", "-o", "/dev/null"])
        .args(["-w", "%{http_code} %{http_connect}"])
        .args(args)
        .output()
        .expect("run curl");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut codes = stdout.split_whitespace().map(|c| c.parse().unwrap_or(0));
    CurlRun {
        code: out.status.code().unwrap_or(-1),
        status: codes.next().unwrap_or(0),
        connect: codes.next().unwrap_or(0),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
