//! `trawl farm status`: the farm as Redis sees it, read without taking part.

use redis::{Cmd, Value};
use serde::Serialize;

use super::config::{FarmConfig, Keys};
use super::conn::Conn;
use super::quiescence::NodeState;

/// A farm summary.
#[derive(Debug, Clone, Serialize)]
pub struct FarmStatus {
    pub name: String,
    /// `nodes=N partitions=P by=host`, as the first node recorded it.
    pub settings: Option<String>,
    pub nodes: Vec<NodeStatus>,
    /// Entries in all partition streams (links in flight between nodes, not yet
    /// acknowledged by a checkpoint of their owner).
    pub stream_entries: u64,
    /// Every node idle or done and no entry in flight.
    pub quiet: bool,
    pub links_sent: u64,
    pub links_received: u64,
    pub pages: u64,
}

/// One node's published state; `None` when its key is missing or expired (not started,
/// dead, or unreachable for more than a few seconds).
#[derive(Debug, Clone, Serialize)]
pub struct NodeStatus {
    pub node: u32,
    pub state: Option<NodeState>,
}

/// Reads the farm's state from Redis.
///
/// # Errors
/// Redis unreachable, or a reply of an unexpected shape.
pub fn status(config: &FarmConfig) -> Result<FarmStatus, String> {
    let keys: Keys = config.keys();
    let mut conn = Conn::open(&config.redis, config.cluster).map_err(|e| e.to_string())?;
    let mut get = Cmd::new();
    get.arg("GET").arg(keys.settings());
    let settings = match conn.one(&get).map_err(|e| e.to_string())? {
        Value::BulkString(b) => Some(String::from_utf8_lossy(&b).into_owned()),
        _ => None,
    };
    let field = |name: &str| -> Option<u32> {
        settings.as_deref().and_then(|s| {
            s.split(' ')
                .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
                .and_then(|v| v.parse().ok())
        })
    };
    let nodes = field("nodes").unwrap_or(config.nodes);
    let partitions = field("partitions").unwrap_or(config.partitions);
    let mut mget = Cmd::new();
    mget.arg("MGET");
    for n in 0..nodes {
        mget.arg(keys.node(n));
    }
    let states: Vec<Option<NodeState>> = match conn.one(&mget).map_err(|e| e.to_string())? {
        Value::Array(vs) => vs
            .iter()
            .map(|v| match v {
                Value::BulkString(b) => serde_json::from_slice(b).ok(),
                _ => None,
            })
            .collect(),
        other => return Err(format!("unexpected MGET reply {other:?}")),
    };
    let cmds: Vec<Cmd> = (0..partitions)
        .map(|p| {
            let mut c = Cmd::new();
            c.arg("XLEN").arg(keys.stream(p));
            c
        })
        .collect();
    let mut stream_entries = 0;
    for chunk in cmds.chunks(1024) {
        for v in conn.run(chunk).map_err(|e| e.to_string())? {
            if let Ok(Value::Int(n)) = v {
                stream_entries += u64::try_from(n).unwrap_or(0);
            }
        }
    }
    let quiet = stream_entries == 0
        && states
            .iter()
            .all(|s| s.as_ref().is_some_and(|s| s.idle || s.done));
    let sum = |f: fn(&NodeState) -> u64| states.iter().flatten().map(f).sum::<u64>();
    Ok(FarmStatus {
        name: config.name.clone(),
        settings,
        links_sent: sum(|s| s.links_sent),
        links_received: sum(|s| s.links_received),
        pages: sum(|s| s.pages),
        nodes: states
            .into_iter()
            .enumerate()
            .map(|(i, state)| NodeStatus {
                node: i as u32,
                state,
            })
            .collect(),
        stream_entries,
        quiet,
    })
}
