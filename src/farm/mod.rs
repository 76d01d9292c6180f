//! A farm of trawl nodes sharing one crawl over Redis (issue 13; guide:
//! `docs/farm.md`).
//!
//! Each node owns the partitions that rendezvous hashing gives it ([`partition`]);
//! links for another node's partitions travel, untested, in batches ([`wire`]) through
//! that partition's Redis stream, and the owner tests them against its own presence
//! bits. One bus thread per node ([`bus`]) talks to Redis with the synchronous client;
//! the shards reach it through channels and it reaches them through their wakers.

pub mod config;
mod conn;
pub mod partition;
mod spill;
pub mod term;
pub mod wire;

pub use config::FarmConfig;
pub use partition::{PartitionBy, PartitionError, Partitions, DEFAULT_PARTITIONS};
pub use wire::{Entry, WireError, WireLink};

/// Fuzz entry point for stream entries (see [`wire::fuzz_decode`]).
pub fn fuzz_wire(data: &[u8]) {
    wire::fuzz_decode(data);
}
