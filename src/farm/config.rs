//! A node's farm settings (`--farm*` flags, [`crate::engine::CrawlerBuilder::farm`])
//! and the Redis key names they imply.

use std::time::Duration;

use crate::routing::{PartitionBy, PartitionError, Partitions, DEFAULT_PARTITIONS};

/// How one node takes part in a farm.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FarmConfig {
    /// `redis://` URLs: one for a standalone Redis, several for the seed nodes of a
    /// Redis Cluster.
    pub redis: Vec<String>,
    /// Talk to a Redis Cluster (set when more than one URL is given).
    pub cluster: bool,
    /// The farm's name: every key starts with it, so farms can share a Redis.
    pub name: String,
    /// Nodes in the farm (static membership).
    pub nodes: u32,
    /// This node's index, `0..nodes`.
    pub node: u32,
    pub partitions: u32,
    pub partition_by: PartitionBy,
    /// How long Redis may stay unreachable before the node gives up with an error
    /// (it keeps crawling what it owns meanwhile).
    pub redis_timeout: Duration,
    /// Outgoing links held in RAM while Redis is unreachable or an owner's stream is
    /// full; past it they go to a spill file under `OUT/farm/`.
    pub spill_ram_urls: usize,
    /// Entries a partition's stream may hold before senders hold back (back-pressure:
    /// the owner has fallen behind). Entries are never trimmed unread.
    pub stream_max_entries: u64,
    /// Links per stream entry at most.
    pub batch_urls: usize,
    /// A node with received entries not yet covered by a checkpoint asks for one
    /// after this long, so they can be acknowledged and leave Redis.
    pub ack_interval: Duration,
    /// A fingerprint of the node's proxy routes and source-address count
    /// (`net::egress_fingerprint`), recorded with the farm's settings so a node whose
    /// routes differ stops; `None` without proxies or `--bind-address`.
    pub egress: Option<String>,
}

impl FarmConfig {
    /// A farm of `nodes` nodes on one standalone Redis, this node being `node`.
    pub fn new(redis: impl Into<String>, nodes: u32, node: u32) -> Self {
        Self {
            redis: vec![redis.into()],
            cluster: false,
            name: "trawl".to_owned(),
            nodes,
            node,
            partitions: DEFAULT_PARTITIONS,
            partition_by: PartitionBy::Host,
            redis_timeout: Duration::from_secs(300),
            spill_ram_urls: 1_000_000,
            stream_max_entries: 10_000,
            batch_urls: 512,
            ack_interval: Duration::from_secs(30),
            egress: None,
        }
    }

    /// Parses `--farm`: one `redis://` URL, or a comma-separated list for a cluster.
    ///
    /// # Errors
    /// An empty list or a URL that is not `redis://` / `rediss://` / `unix://`.
    pub fn parse_redis(list: &str) -> Result<(Vec<String>, bool), String> {
        let urls: Vec<String> = list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        if urls.is_empty() {
            return Err("--farm needs a redis:// URL".to_owned());
        }
        for u in &urls {
            if !(u.starts_with("redis://")
                || u.starts_with("rediss://")
                || u.starts_with("unix://"))
            {
                return Err(format!("--farm: {u:?} is not a redis:// URL"));
            }
        }
        let cluster = urls.len() > 1;
        Ok((urls, cluster))
    }

    /// The partition table.
    ///
    /// # Errors
    /// Sizes out of range, or `node` not below `nodes`.
    pub fn table(&self) -> Result<Partitions, PartitionError> {
        if self.node >= self.nodes {
            return Err(PartitionError::Node {
                node: self.node,
                nodes: self.nodes,
            });
        }
        Partitions::new(self.partitions, self.nodes, self.partition_by)
    }

    /// Checks every setting.
    ///
    /// # Errors
    /// A message naming the flag.
    pub fn validate(&self) -> Result<(), String> {
        self.table().map_err(|e| e.to_string())?;
        if self.redis.is_empty() {
            return Err("--farm needs a redis:// URL".to_owned());
        }
        if self.name.is_empty() || self.name.contains(['{', '}', ' ']) {
            return Err(format!(
                "--farm-name {:?}: must be non-empty, without braces or spaces",
                self.name
            ));
        }
        if self.batch_urls == 0 || self.stream_max_entries == 0 || self.spill_ram_urls == 0 {
            return Err("farm batch, stream and spill sizes must be at least 1".to_owned());
        }
        Ok(())
    }

    /// The keys of this farm.
    pub fn keys(&self) -> Keys {
        Keys {
            name: self.name.clone(),
        }
    }
}

/// Redis key names. Each partition's stream carries its own hash tag, so it lives in
/// one Redis Cluster slot and the partitions spread over the masters; the control keys
/// share one tag, so a snapshot reads them in one `MGET`.
#[derive(Clone, Debug)]
pub struct Keys {
    name: String,
}

/// The consumer group every owner reads its streams through.
pub const GROUP: &str = "owner";

impl Keys {
    /// The stream of a partition.
    pub fn stream(&self, partition: u32) -> String {
        format!("{{{}:p{partition}}}:links", self.name)
    }

    /// The doorbell of a node: the set of its partitions with new entries.
    pub fn bell(&self, node: u32) -> String {
        format!("{{{}:ctl}}:bell:{node}", self.name)
    }

    /// A node's published state (termination snapshots, `trawl farm status`).
    pub fn node(&self, node: u32) -> String {
        format!("{{{}:ctl}}:node:{node}", self.name)
    }

    /// The farm's settings, set by the first node; the others must agree.
    pub fn settings(&self) -> String {
        format!("{{{}:ctl}}:settings", self.name)
    }

    /// The consumer name of a node: stable, so a node resumed on another machine reads
    /// the entries it had not acknowledged.
    pub fn consumer(node: u32) -> String {
        format!("node-{node}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_carry_one_hash_tag_per_partition() {
        let k = FarmConfig::new("redis://127.0.0.1:1", 3, 0).keys();
        assert_eq!(k.stream(7), "{trawl:p7}:links");
        assert_ne!(k.stream(7), k.stream(8));
        assert!(k.node(2).starts_with("{trawl:ctl}"));
        assert!(k.bell(1).starts_with("{trawl:ctl}"));
    }

    #[test]
    fn redis_lists_parse_and_bad_ones_are_refused() {
        assert_eq!(
            FarmConfig::parse_redis("redis://127.0.0.1:6379"),
            Ok((vec!["redis://127.0.0.1:6379".to_owned()], false))
        );
        let (urls, cluster) =
            FarmConfig::parse_redis("redis://127.0.0.1:7000, redis://127.0.0.1:7001").unwrap();
        assert_eq!(urls.len(), 2);
        assert!(cluster);
        assert!(FarmConfig::parse_redis("").is_err());
        assert!(FarmConfig::parse_redis("http://x").is_err());
        let mut c = FarmConfig::new("redis://127.0.0.1:1", 3, 3);
        assert!(c.validate().is_err());
        c.node = 2;
        assert!(c.validate().is_ok());
        c.name = "a{b".to_owned();
        assert!(c.validate().is_err());
    }
}
