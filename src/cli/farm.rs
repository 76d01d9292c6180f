//! `trawl farm status`. (The `--farm*` flags of `trawl crawl` are the library's,
//! `trawl::options::farm`.)

use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};

use trawl::farm::FarmConfig;

/// `trawl farm ...`.
#[derive(Debug, Args)]
pub struct FarmCommand {
    #[command(subcommand)]
    pub command: FarmSub,
}

#[derive(Debug, Subcommand)]
pub enum FarmSub {
    /// Print the farm's state as JSON: each node's published state, the links in
    /// flight, whether the farm is quiet.
    Status(StatusArgs),
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// A redis:// URL, or a comma-separated list of a Redis Cluster's nodes.
    #[arg(long, value_name = "URLS")]
    pub farm: String,
    /// The farm's name.
    #[arg(long, default_value = "trawl")]
    pub farm_name: String,
    /// Nodes, if the farm's settings are not in Redis yet.
    #[arg(long, default_value_t = 1)]
    pub farm_nodes: u32,
}

/// Runs `trawl farm ...`.
///
/// # Errors
/// Redis unreachable or a bad flag.
pub fn run(cmd: FarmCommand) -> anyhow::Result<ExitCode> {
    match cmd.command {
        FarmSub::Status(a) => {
            let (redis, cluster) = FarmConfig::parse_redis(&a.farm).map_err(anyhow::Error::msg)?;
            let mut c = FarmConfig::new("", a.farm_nodes.max(1), 0);
            c.redis = redis;
            c.cluster = cluster;
            c.name = a.farm_name;
            let s = trawl::farm::status(&c)
                .map_err(anyhow::Error::msg)
                .context("cannot read the farm's state from Redis")?;
            println!("{}", serde_json::to_string_pretty(&s)?);
            Ok(ExitCode::SUCCESS)
        }
    }
}
