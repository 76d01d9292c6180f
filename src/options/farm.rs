//! `--farm*` flags of `trawl crawl` (and of `trawl.Crawl` in Python).

use std::time::Duration;

use clap::Args;

use crate::farm::FarmConfig;
use crate::routing::{PartitionBy, DEFAULT_PARTITIONS};

/// Farm flags of `trawl crawl` (`docs/farm.md`).
#[derive(Debug, Clone, Args)]
pub struct FarmArgs {
    /// Crawl as one node of a farm sharing the crawl over Redis: a redis:// URL, or a
    /// comma-separated list of a Redis Cluster's nodes.
    #[arg(long, value_name = "URLS")]
    pub farm: Option<String>,
    /// Nodes in the farm (every node is given the same number).
    #[arg(long, default_value_t = 1)]
    pub farm_nodes: u32,
    /// This node's index, 0 to --farm-nodes - 1.
    #[arg(long, default_value_t = 0)]
    pub farm_node: u32,
    /// Partitions of the URL space (the same on every node).
    #[arg(long, default_value_t = DEFAULT_PARTITIONS)]
    pub farm_partitions: u32,
    /// Partition by host (scheme://host:port) or registrable domain.
    #[arg(long, default_value = "host")]
    pub farm_partition_by: PartitionBy,
    /// The farm's name: the prefix of its Redis keys.
    #[arg(long, default_value = "trawl")]
    pub farm_name: String,
    /// Stop with an error after Redis has been unreachable this long (the node keeps
    /// crawling its own partitions meanwhile).
    #[arg(long, default_value_t = 300)]
    pub farm_redis_timeout_secs: u64,
    /// Outgoing links held in RAM while they cannot be sent; past it, on disk.
    #[arg(long, default_value_t = 1_000_000)]
    pub farm_spill_urls: usize,
    /// Entries a partition stream may hold before senders wait for its owner.
    #[arg(long, default_value_t = 10_000)]
    pub farm_stream_max_entries: u64,
    /// Ask for a checkpoint when received entries have waited this long for one.
    #[arg(long, default_value_t = 30)]
    pub farm_ack_secs: u64,
}

impl FarmArgs {
    /// The farm settings, or `None` without `--farm`.
    ///
    /// # Errors
    /// A bad `--farm` list or a setting out of range.
    pub fn config(&self) -> anyhow::Result<Option<FarmConfig>> {
        let Some(list) = &self.farm else {
            return Ok(None);
        };
        let (redis, cluster) = FarmConfig::parse_redis(list).map_err(anyhow::Error::msg)?;
        let mut c = FarmConfig::new("", self.farm_nodes, self.farm_node);
        c.redis = redis;
        c.cluster = cluster;
        c.name.clone_from(&self.farm_name);
        c.partitions = self.farm_partitions;
        c.partition_by = self.farm_partition_by;
        c.redis_timeout = Duration::from_secs(self.farm_redis_timeout_secs);
        c.spill_ram_urls = self.farm_spill_urls;
        c.stream_max_entries = self.farm_stream_max_entries;
        c.ack_interval = Duration::from_secs(self.farm_ack_secs);
        c.validate().map_err(anyhow::Error::msg)?;
        Ok(Some(c))
    }
}
