//! Helpers for the end-to-end crawl tests: a synthweb server child, `trawl crawl`
//! invocations, the referee and `warcio check`.
//!
//! synthweb is the workspace's other binary; `cargo test --workspace` builds it next to
//! trawl in the target directory, where these helpers look for it (or `SYNTHWEB=path`).

#![allow(dead_code, reason = "each test binary uses a different subset")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The trawl binary under test.
pub fn trawl_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_trawl"))
}

/// The synthweb binary: `SYNTHWEB`, else next to trawl in the target directory.
pub fn synthweb_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("SYNTHWEB") {
        return PathBuf::from(p);
    }
    let p = trawl_bin().with_file_name("synthweb");
    assert!(
        p.is_file(),
        "synthweb binary not found at {}: build it with `cargo test --workspace` (or \
         `cargo build -p synthweb`), or set SYNTHWEB=/path/to/synthweb",
        p.display()
    );
    p
}

/// `warcio` from `.venv/bin/warcio` (made by `.ci/run`), `WARCIO`, or `PATH`; `None`
/// only when `TRAWL_SKIP_WARCIO=1` says to skip the check on purpose.
pub fn warcio() -> Option<PathBuf> {
    if std::env::var_os("TRAWL_SKIP_WARCIO").is_some_and(|v| v == "1") {
        return None;
    }
    let candidates = [
        std::env::var_os("WARCIO").map(PathBuf::from),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/warcio")),
    ];
    if let Some(found) = candidates.into_iter().flatten().find(|p| p.is_file()) {
        return Some(found);
    }
    if Command::new("warcio").arg("--help").output().is_ok() {
        return Some(PathBuf::from("warcio"));
    }
    panic!(
        "warcio not found: run `python3 -m venv .venv && .venv/bin/pip install warcio` in \
         the repository root (as .ci/run does), or set WARCIO=/path/to/warcio, or set \
         TRAWL_SKIP_WARCIO=1 to skip the warcio checks on purpose"
    );
}

/// Runs `warcio check -v` on every WARC file in `dir` and asserts it passes; returns
/// how many files were checked.
pub fn warcio_check_dir(dir: &Path) -> usize {
    let files = warc_files(dir);
    assert!(!files.is_empty(), "no WARC files in {}", dir.display());
    let Some(warcio) = warcio() else {
        return 0;
    };
    let out = Command::new(&warcio)
        .arg("check")
        .arg("-v")
        .args(&files)
        .output()
        .expect("run warcio");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "warcio check failed ({}):\n{}\n{}",
        out.status,
        stdout.chars().take(4000).collect::<String>(),
        String::from_utf8_lossy(&out.stderr)
    );
    files.len()
}

/// The web of synthweb's `sitemaps` profile, 4 hosts (host 1's robots.txt names the
/// storage index on host 0): crawled by one node in `tests/crawl_sitemaps.rs` and by a
/// farm in `tests/farm`.
pub const SITEMAPS_WEB: [&str; 8] = [
    "--hosts",
    "4",
    "--profile",
    "sitemaps",
    "--pages-per-host",
    "5-10",
    "--out-degree",
    "5-10",
];

/// The web of synthweb's `sitemap-chain` profile, 10 hosts: each host's robots.txt
/// names a gzipped sitemap on the next host listing its `/orphan`, and an index on the
/// next host (named by the robots.txt of the host after too) whose gzipped sitemap on
/// the host after lists its `/orphan-deep`. Crawled by one node in
/// `tests/crawl_sitemaps.rs` and by a farm in `tests/farm`.
pub const CHAIN_WEB: [&str; 10] = [
    "--hosts",
    "10",
    "--profile",
    "sitemap-chain",
    "--pages-per-host",
    "5-10",
    "--out-degree",
    "5-10",
    "--manifest-max-pages-per-host",
    "300",
];

/// A synthweb world as most crawl tests start one: `hosts` hosts serving `profile`
/// (synthweb's `--profile`; `None`: its default), pages per host and out-degree as
/// ranges (`"5-10"`; `None`: synthweb's own), and the manifest's per-host budget
/// (`None`: synthweb's own).
#[derive(Clone, Copy, Debug)]
pub struct World<'a> {
    pub hosts: u32,
    pub profile: Option<&'a str>,
    pub pages_per_host: &'a str,
    pub out_degree: Option<&'a str>,
    pub budget: Option<u64>,
}

impl World<'_> {
    /// The synthweb flags of this world, `extra` after them.
    pub fn args(&self, extra: &[&str]) -> Vec<String> {
        let mut v = vec!["--hosts".to_owned(), self.hosts.to_string()];
        if let Some(p) = self.profile {
            v.extend(["--profile".to_owned(), p.to_owned()]);
        }
        v.extend([
            "--pages-per-host".to_owned(),
            self.pages_per_host.to_owned(),
        ]);
        if let Some(d) = self.out_degree {
            v.extend(["--out-degree".to_owned(), d.to_owned()]);
        }
        if let Some(b) = self.budget {
            v.extend(["--manifest-max-pages-per-host".to_owned(), b.to_string()]);
        }
        v.extend(extra.iter().map(|s| (*s).to_owned()));
        v
    }

    /// Starts it in `dir` ([`Synthweb::start`]), `extra` flags after the world's.
    pub fn start(&self, dir: &Path, extra: &[&str]) -> Synthweb {
        self.start_with(dir, extra, true)
    }

    /// As [`World::start`]; without `manifest` ([`Synthweb::start_with`]).
    pub fn start_with(&self, dir: &Path, extra: &[&str], manifest: bool) -> Synthweb {
        let args = self.args(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        Synthweb::start_with(dir, &args, manifest)
    }
}

/// The web the tests of URLs added to a running crawl use (`trawl add` in
/// `tests/crawl_add.rs`, the library's handle in `tests/crawl_handle.rs`): 3 hosts of
/// synthweb's default profile, large enough that the crawl is still running when
/// the URLs are added.
pub const ADD_WORLD: World<'static> = World {
    hosts: 3,
    profile: None,
    pages_per_host: "20-40",
    out_degree: Some("5-15"),
    budget: None,
};

/// A synthweb server child in its own directory; stopped (SIGTERM, which flushes the
/// request log) on [`Synthweb::stop`] or drop.
pub struct Synthweb {
    child: Option<Child>,
    /// Kept open so the server's exit line does not meet a closed pipe.
    _stdout: BufReader<std::process::ChildStdout>,
    pub dir: PathBuf,
    pub port: u16,
}

impl Synthweb {
    /// Starts `synthweb --port 0` with the given world flags in `dir`, writing
    /// `hosts.txt`, `seeds.txt`, `req.log` and `manifest.txt` there, and waits for its
    /// ready line.
    pub fn start(dir: &Path, world: &[&str]) -> Self {
        Self::start_with(dir, world, true)
    }

    /// As [`Synthweb::start`]; without `manifest` (large worlds) no manifest is
    /// computed and no request log is written.
    pub fn start_with(dir: &Path, world: &[&str], manifest: bool) -> Self {
        Self::start_on(dir, 0, world, manifest)
    }

    /// As [`Synthweb::start_with`] on a given `port` (0: any free one). A re-crawl's
    /// second server takes the first one's port: absolute links carry it.
    pub fn start_on(dir: &Path, port: u16, world: &[&str], manifest: bool) -> Self {
        fs::create_dir_all(dir).unwrap();
        let _ = fs::remove_file(dir.join("req.log"));
        let mut cmd = Command::new(synthweb_bin());
        cmd.current_dir(dir).args([
            "--port",
            &port.to_string(),
            "--hosts-file",
            "hosts.txt",
            "--seeds",
            "seeds.txt",
        ]);
        if manifest {
            cmd.args(["--log", "req.log", "--manifest", "manifest.txt"]);
        }
        let mut child = cmd
            .args(world)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start synthweb");
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        let mut stdout = BufReader::new(stdout);
        stdout.read_line(&mut line).unwrap();
        let ready: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("synthweb ready line {line:?}: {e}"));
        assert_eq!(ready["ready"], true, "synthweb did not start: {line}");
        let port = u16::try_from(ready["http_port"].as_u64().unwrap()).unwrap();
        Synthweb {
            child: Some(child),
            _stdout: stdout,
            dir: dir.to_path_buf(),
            port,
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// SIGTERM and wait: the request log is complete afterwards.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            signal(child.id(), "TERM");
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// The manifest's M and F sets.
    pub fn manifest(&self) -> (BTreeSet<String>, BTreeSet<String>) {
        let text = fs::read_to_string(self.path("manifest.txt")).unwrap();
        let mut m = BTreeSet::new();
        let mut f = BTreeSet::new();
        for line in text.lines() {
            if let Some(u) = line.strip_prefix("M ") {
                m.insert(u.to_owned());
            } else if let Some(u) = line.strip_prefix("F ") {
                f.insert(u.to_owned());
            }
        }
        (m, f)
    }

    /// Runs `synthweb check` on the request log; returns (passed, report text).
    pub fn check(&self, delay_ms: u64, per_host_connections: u32) -> (bool, String) {
        let out = Command::new(synthweb_bin())
            .current_dir(&self.dir)
            .args(["check", "--log", "req.log", "--manifest", "manifest.txt"])
            .args(["--delay-ms", &delay_ms.to_string()])
            .args(["--per-host-connections", &per_host_connections.to_string()])
            .output()
            .expect("run synthweb check");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    }
}

impl Drop for Synthweb {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Sends a signal by name (`TERM`, `KILL`) to a process we started.
pub fn signal(pid: u32, name: &str) {
    let _ = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status();
}

/// The `trawl crawl` flags (run with the server's directory as the working directory) matching the policy synthweb's manifest assumes (see
/// `docs/architecture.md`, "Testing against synthweb"): no hop or depth limit, the
/// manifest's per-host budget, Retry-After capped at 1 s and 4 s deadlines (shorter ones race
/// the server on a loaded machine: a request sent just before the deadline is answered,
/// the client gives up anyway, and the retry is a duplicate to the referee) so the
/// hostile hosts do not stretch the test, small presence bits.
pub fn crawl_args(out: &Path, per_host_budget: u64, delay_ms: u64) -> Vec<String> {
    let mut v: Vec<String> = [
        "crawl",
        "--seeds",
        "seeds.txt",
        "--hosts-file",
        "hosts.txt",
        "--allow-private-addresses",
        "--from",
        "ops@example.org",
        "--max-crawl-delay-secs",
        "0",
        "--robots-retry-secs",
        "1",
        "--max-retry-after-secs",
        "1",
        "--max-hops",
        "1000000",
        "--max-path-depth",
        "1000000",
        "--max-url-bytes",
        "2048",
        "--timeout-ms",
        "4000",
        "--seen-capacity",
        "1000000",
        "--progress-secs",
        "0",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    v.extend([
        "--out".to_owned(),
        out.display().to_string(),
        "--delay-ms".to_owned(),
        delay_ms.to_string(),
        "--max-pages-per-host".to_owned(),
        per_host_budget.to_string(),
    ]);
    v
}

/// Runs `trawl` with `args` in `dir` and waits; panics with its stderr unless it
/// succeeded.
pub fn run_trawl<S: AsRef<std::ffi::OsStr>>(dir: &Path, args: &[S]) {
    let o = Command::new(trawl_bin())
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "trawl {:?}: {}",
        args.first()
            .map(|a| a.as_ref().to_string_lossy().into_owned()),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Runs `trawl crawl` of the server's web into `out` ([`crawl_args`], then `extra`),
/// its stderr shown, and asserts it succeeded.
pub fn crawl(sw: &Synthweb, out: &Path, budget: u64, delay_ms: u64, extra: &[&str]) {
    let status = Command::new(trawl_bin())
        .current_dir(&sw.dir)
        .args(crawl_args(out, budget, delay_ms))
        .args(extra)
        .status()
        .unwrap();
    assert!(status.success(), "trawl crawl failed: {status}");
}

/// Starts `trawl` with `args` in the server's directory, its stderr discarded: a crawl
/// to kill or to watch.
pub fn spawn_trawl<S: AsRef<std::ffi::OsStr>>(sw: &Synthweb, args: &[S]) -> Child {
    Command::new(trawl_bin())
        .current_dir(&sw.dir)
        .args(args)
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Waits for `child` to exit; past `limit` kills it and panics that `what` did not
/// finish.
pub fn wait_exit(child: &mut Child, limit: Duration, what: &str) -> ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what} did not finish in {} s", limit.as_secs());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The seed of a test's random kill moments: `CRASH_SEED`, else the clock; printed
/// under `label` so that a failure can be replayed.
pub fn crash_seed(label: &str) -> u64 {
    let seed = std::env::var("CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("{label}: CRASH_SEED={seed}");
    seed
}

/// Asserts that `fetched` holds every M URL of the server's manifest and no F URL;
/// `context` goes into the message.
pub fn assert_covers_manifest(sw: &Synthweb, fetched: &BTreeSet<String>, context: &str) {
    let (m, f) = sw.manifest();
    let missed: Vec<_> = m.difference(fetched).collect();
    assert!(
        missed.is_empty(),
        "{} of {} M URLs not fetched ({context}), e.g. {:?}",
        missed.len(),
        m.len(),
        missed.iter().take(5).collect::<Vec<_>>()
    );
    let forbidden: Vec<_> = f.intersection(fetched).take(5).collect();
    assert!(forbidden.is_empty(), "F URLs fetched: {forbidden:?}");
}

/// Every crawl-log line as JSON.
pub fn crawl_log(out: &Path) -> Vec<serde_json::Value> {
    let text = fs::read_to_string(out.join("crawl.log.jsonl")).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad log line {l:?}: {e}")))
        .collect()
}

/// The crawl's `stats.json` (panics if missing or not JSON: the crawl wrote none).
pub fn stats_json(out: &Path) -> serde_json::Value {
    let text = fs::read_to_string(out.join("stats.json")).expect("stats.json");
    serde_json::from_str(&text).expect("stats.json is JSON")
}

/// The annotations of one crawl-log record, as strings.
pub fn annotations(record: &serde_json::Value) -> Vec<String> {
    record["annotations"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// What a crawl of the `sitemap-chain` web ([`CHAIN_WEB`]) must not log: any `filter:`
/// refusal, and a `sitemap-refused` that stands. An index read before its second
/// robots.txt permission arrived refuses its child on the third host once; it is read
/// again with both (a later line for it with no refusal), and that refusal is fine.
pub fn chain_refusals(log: &[serde_json::Value]) -> Vec<String> {
    let mut bad = Vec::new();
    for (at, l) in log.iter().enumerate() {
        let notes = annotations(l);
        if notes.iter().any(|n| n.starts_with("filter:")) {
            bad.push(format!("{} {notes:?}", l["url"]));
        }
        if notes.iter().any(|n| n.starts_with("sitemap-refused")) {
            let read_again = log.iter().skip(at + 1).any(|m| {
                m["url"] == l["url"]
                    && m["status"] == 200
                    && !annotations(m)
                        .iter()
                        .any(|n| n.starts_with("sitemap-refused"))
            });
            if !read_again {
                bad.push(format!("{} {notes:?} (not read again)", l["url"]));
            }
        }
    }
    bad
}

/// URLs the crawl log decides more than once (the first 5, with their count): retry
/// lines aside, and robots.txt (hops ending `P`), which may take several lines
/// (redirect hops, 5xx retries, a refetch after a resume).
pub fn decided_twice(log: &[serde_json::Value]) -> Vec<(String, usize)> {
    let mut decided: BTreeMap<&str, usize> = BTreeMap::new();
    for r in log {
        let retry = annotations(r).iter().any(|s| s.starts_with("retry:"));
        let robots = r["hops"].as_str().is_some_and(|h| h.ends_with('P'));
        if !retry && !robots {
            *decided.entry(r["url"].as_str().unwrap()).or_default() += 1;
        }
    }
    decided
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .take(5)
        .map(|(u, n)| (u.to_owned(), n))
        .collect()
}

/// URLs the crawl log shows an HTTP response for (any status).
pub fn fetched_urls(log: &[serde_json::Value]) -> BTreeSet<String> {
    log.iter()
        .filter(|r| r.get("status").is_some_and(|s| !s.is_null()))
        .filter_map(|r| r["url"].as_str().map(str::to_owned))
        .collect()
}

/// The WARC files in `dir`, sorted by name.
pub fn warc_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".warc.gz"))
        .collect();
    files.sort();
    files
}

/// One WARC record as the tests read it: header fields in order, the block, and where
/// it lies (file index in the list given, offset of its gzip member).
pub struct WarcRecord {
    pub fields: Vec<(String, String)>,
    pub block: Vec<u8>,
    pub file: usize,
    pub offset: u64,
}

impl WarcRecord {
    /// The value of header field `name` (any case).
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Every record of every file, in write order, each gzip member decoded on its own and
/// holding exactly one record (asserted).
pub fn read_warc_records(files: &[PathBuf]) -> Vec<WarcRecord> {
    use std::io::Read;
    let mut out = Vec::new();
    for (file, path) in files.iter().enumerate() {
        let data = fs::read(path).unwrap();
        let mut rest: &[u8] = &data;
        while !rest.is_empty() {
            let offset = (data.len() - rest.len()) as u64;
            let mut record = Vec::new();
            flate2::bufread::GzDecoder::new(&mut rest)
                .read_to_end(&mut record)
                .unwrap();
            let end = record.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
            let header = std::str::from_utf8(&record[..end]).unwrap();
            let fields: Vec<(String, String)> = header
                .lines()
                .skip(1)
                .filter_map(|l| l.split_once(": "))
                .map(|(n, v)| (n.to_owned(), v.to_owned()))
                .collect();
            let len: usize = fields
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("Content-Length"))
                .unwrap()
                .1
                .parse()
                .unwrap();
            assert_eq!(record.len(), end + len + 4, "one record per member");
            out.push(WarcRecord {
                block: record[end..end + len].to_vec(),
                fields,
                file,
                offset,
            });
        }
    }
    out
}
