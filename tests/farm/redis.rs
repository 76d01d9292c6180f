//! `redis-server` children for the farm tests, and `redis-cli` to read and plant what
//! the nodes share.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::crawl_support;

/// Whether `redis-server` and `redis-cli` can be run; under `CI=true` their absence
/// fails the test.
pub fn redis_available(test: &str) -> bool {
    let ok = ["redis-server", "redis-cli"].iter().all(|b| {
        Command::new(b)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    if !ok {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "redis-server / redis-cli not installed, and CI=true: the farm tests must run \
             (.ci/run installs redis-server)"
        );
        eprintln!("{test}: SKIPPED: redis-server / redis-cli not installed");
    }
    ok
}

pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

pub fn cli(port: u16, args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `redis-server` children on loopback ports of their own.
pub struct Redis {
    dir: PathBuf,
    pub ports: Vec<u16>,
    extra: Vec<String>,
    children: Vec<Option<Child>>,
}

impl Redis {
    fn spawn(dir: &Path, port: u16, extra: &[String]) -> Child {
        let child = Command::new("redis-server")
            .current_dir(dir)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", ""])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        let deadline = Instant::now() + Duration::from_secs(10);
        while cli(port, &["ping"]).trim() != "PONG" {
            assert!(
                Instant::now() < deadline,
                "redis-server on {port} did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        child
    }

    /// One standalone server; `persistent` turns AOF on (a restart keeps the streams).
    pub fn standalone(dir: &Path, persistent: bool) -> Self {
        std::fs::create_dir_all(dir).unwrap();
        let port = free_port();
        let extra: Vec<String> = if persistent {
            ["--appendonly", "yes", "--appendfsync", "always"]
        } else {
            ["--appendonly", "no", "--appendfsync", "no"]
        }
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let child = Self::spawn(dir, port, &extra);
        Self {
            dir: dir.to_owned(),
            ports: vec![port],
            extra,
            children: vec![Some(child)],
        }
    }

    /// A 3-master Redis Cluster, no replicas.
    pub fn cluster(dir: &Path) -> Self {
        std::fs::create_dir_all(dir).unwrap();
        let mut ports = Vec::new();
        let mut children = Vec::new();
        for _ in 0..3 {
            let port = free_port();
            let extra: Vec<String> = [
                "--appendonly",
                "no",
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                &format!("nodes-{port}.conf"),
                "--cluster-node-timeout",
                "5000",
            ]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
            children.push(Some(Self::spawn(dir, port, &extra)));
            ports.push(port);
        }
        let addrs: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
        let out = Command::new("redis-cli")
            .arg("--cluster")
            .arg("create")
            .args(&addrs)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "redis-cli --cluster create failed: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        while !ports
            .iter()
            .all(|&p| cli(p, &["cluster", "info"]).contains("cluster_state:ok"))
        {
            assert!(Instant::now() < deadline, "cluster did not become ok");
            std::thread::sleep(Duration::from_millis(100));
        }
        Self {
            dir: dir.to_owned(),
            ports,
            extra: Vec::new(),
            children,
        }
    }

    pub fn url(&self) -> String {
        self.ports
            .iter()
            .map(|p| format!("redis://127.0.0.1:{p}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Stops the (first) server: SIGTERM, so with AOF on it writes everything down.
    pub fn stop_first(&mut self) {
        if let Some(mut c) = self.children.first_mut().and_then(Option::take) {
            crawl_support::signal(c.id(), "TERM");
            let _ = c.wait();
        }
    }

    pub fn restart_first(&mut self) {
        let port = self.ports[0];
        self.children[0] = Some(Self::spawn(&self.dir, port, &self.extra));
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        for c in self.children.iter_mut().filter_map(Option::take) {
            let mut c = c;
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
