//! The synthweb world and the `trawl crawl --farm` node children of a farm test.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::crawl_support::{crawl_args, trawl_bin, Synthweb, World};
use crate::{BUDGET, NODES};

pub fn world(dir: &Path) -> Synthweb {
    let world = World {
        hosts: 30,
        profile: Some("default,traps"),
        pages_per_host: "5-10",
        out_degree: Some("5-10"),
        budget: Some(BUDGET),
    };
    world.start(dir, &["--seed-stride", "4"])
}

/// The `trawl crawl` arguments of node `i`.
pub fn node_args(out: &Path, farm: &str, i: u32, delay_ms: u64, extra: &[&str]) -> Vec<String> {
    node_args_budget(out, farm, i, BUDGET, delay_ms, extra)
}

/// [`node_args`] with a per-host budget of `budget` pages.
pub fn node_args_budget(
    out: &Path,
    farm: &str,
    i: u32,
    budget: u64,
    delay_ms: u64,
    extra: &[&str],
) -> Vec<String> {
    let mut a = crawl_args(out, budget, delay_ms);
    a.extend(
        [
            "--shards",
            "1",
            "--farm",
            farm,
            "--farm-nodes",
            &NODES.to_string(),
            "--farm-node",
            &i.to_string(),
        ]
        .iter()
        .map(|s| (*s).to_owned()),
    );
    a.extend(extra.iter().map(|s| (*s).to_owned()));
    a
}

pub fn spawn_node(sw: &Synthweb, args: &[String], log: &Path, resume: bool) -> Child {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    let mut cmd = Command::new(trawl_bin());
    cmd.current_dir(&sw.dir)
        .args(args)
        .stdout(Stdio::null())
        .stderr(f);
    if resume {
        cmd.arg("--resume");
    }
    cmd.spawn().unwrap()
}

/// Waits for every node to exit by itself; kills them all past `limit`.
pub fn wait_all(children: &mut [Child], limit: Duration, logs: &[PathBuf], farm: &str) {
    let deadline = Instant::now() + limit;
    let mut status = vec![None; children.len()];
    while status.iter().any(Option::is_none) {
        for (c, s) in children.iter_mut().zip(status.iter_mut()) {
            if s.is_none() {
                *s = c.try_wait().unwrap();
            }
        }
        if Instant::now() > deadline {
            // What each node published, read before they are killed: which one is not
            // idle, and what it still owes.
            let status = Command::new(trawl_bin())
                .args(["farm", "status", "--farm", farm, "--farm-nodes"])
                .arg(children.len().to_string())
                .output()
                .map(|o| {
                    format!(
                        "{}{}",
                        String::from_utf8_lossy(&o.stdout),
                        String::from_utf8_lossy(&o.stderr)
                    )
                })
                .unwrap_or_else(|e| format!("trawl farm status: {e}"));
            for c in children.iter_mut() {
                let _ = c.kill();
                let _ = c.wait();
            }
            panic!(
                "farm nodes did not all finish in {limit:?}; farm status:\n{status}\nlogs:\n{}",
                tails(logs)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for (i, s) in status.iter().enumerate() {
        let s = s.unwrap();
        assert!(s.success(), "node {i} exited {s}; logs:\n{}", tails(logs));
    }
}

pub fn tails(logs: &[PathBuf]) -> String {
    logs.iter()
        .map(|p| {
            let t = std::fs::read_to_string(p).unwrap_or_default();
            let lines: Vec<&str> = t.lines().collect();
            format!(
                "== {}\n{}",
                p.display(),
                lines[lines.len().saturating_sub(15)..].join("\n")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub struct Farm {
    _tmp: tempfile::TempDir,
    pub sw: Synthweb,
    pub outs: Vec<PathBuf>,
    pub logs: Vec<PathBuf>,
}

pub fn farm_setup() -> Farm {
    let tmp = tempfile::tempdir().unwrap();
    let sw = world(&tmp.path().join("web"));
    let (outs, logs) = node_dirs(tmp.path());
    Farm {
        _tmp: tmp,
        sw,
        outs,
        logs,
    }
}

impl Farm {
    /// Starts every node on the farm `url` with [`node_args`] (`delay_ms`, `extra`).
    pub fn spawn_nodes(&self, url: &str, delay_ms: u64, extra: &[&str]) -> Vec<Child> {
        (0..NODES)
            .map(|i| {
                let args = node_args(&self.outs[i as usize], url, i, delay_ms, extra);
                spawn_node(&self.sw, &args, &self.logs[i as usize], false)
            })
            .collect()
    }
}

/// Each node's output directory (`nodeI`) and stderr log (`nodeI.log`) in `dir`.
pub fn node_dirs(dir: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let outs = (0..NODES).map(|i| dir.join(format!("node{i}"))).collect();
    let logs = (0..NODES)
        .map(|i| dir.join(format!("node{i}.log")))
        .collect();
    (outs, logs)
}

pub fn now_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as u64
}
