//! Which node owns a URL: a fixed number of partitions from a stable hash of the host
//! (or its registrable domain), and the owner of each partition by rendezvous hashing
//! over the node indices.
//!
//! Why rendezvous (highest random weight) hashing: each partition's owner depends only
//! on the partition and the node indices, so changing the number of nodes moves only
//! the partitions whose highest-scoring node changed (about `P/N` of them when a node
//! is added), and every node computes the same table without talking to the others.
//! The hashes are xxh3 with a fixed seed, so the table is the same in every build and
//! on every machine (a checkpoint resumed elsewhere routes the same way).

use xxhash_rust::xxh3::xxh3_64_with_seed;

/// Default number of partitions: enough that hosts spread evenly over a few dozen
/// nodes, few enough that a node reads its streams in one pipelined round trip.
pub const DEFAULT_PARTITIONS: u32 = 1024;

/// Largest number of partitions accepted (one Redis stream each).
pub const MAX_PARTITIONS: u32 = 65_536;

/// Largest number of nodes accepted.
pub const MAX_NODES: u32 = 4096;

/// What a partition is computed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PartitionBy {
    /// `scheme://host:port`, the engine's host key (robots.txt scope): one node owns
    /// each host's politeness clock and robots rules.
    #[default]
    Host,
    /// The registrable domain (public suffix list): all hosts of `example.co.uk` on one
    /// node, so per-domain limits hold farm-wide.
    Domain,
}

impl PartitionBy {
    /// The flag value.
    pub fn name(self) -> &'static str {
        match self {
            Self::Host => "host",
            Self::Domain => "domain",
        }
    }
}

impl std::str::FromStr for PartitionBy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "host" => Ok(Self::Host),
            "domain" => Ok(Self::Domain),
            _ => Err(format!("unknown partitioning {s:?} (host or domain)")),
        }
    }
}

/// A bad partition table request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartitionError {
    #[error("--farm-nodes must be between 1 and {MAX_NODES}, not {0}")]
    Nodes(u32),
    #[error("--farm-node {node} is not below --farm-nodes {nodes}")]
    Node { node: u32, nodes: u32 },
    #[error("--farm-partitions must be between 1 and {MAX_PARTITIONS}, not {0}")]
    Partitions(u32),
}

/// Seeds of the two hashes; changing either re-partitions every farm.
const KEY_SEED: u64 = 0x7472_6177_6c2d_7031; // "trawl-p1"
const OWNER_SEED: u64 = 0x7472_6177_6c2d_6f31; // "trawl-o1"

/// The partition table of one farm: every node builds the same one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partitions {
    by: PartitionBy,
    nodes: u32,
    /// Owner node of each partition.
    owners: Vec<u32>,
}

impl Partitions {
    /// The table for `partitions` partitions over `nodes` nodes.
    ///
    /// # Errors
    /// Zero or too many nodes or partitions.
    pub fn new(partitions: u32, nodes: u32, by: PartitionBy) -> Result<Self, PartitionError> {
        if nodes == 0 || nodes > MAX_NODES {
            return Err(PartitionError::Nodes(nodes));
        }
        if partitions == 0 || partitions > MAX_PARTITIONS {
            return Err(PartitionError::Partitions(partitions));
        }
        let owners = (0..partitions).map(|p| owner_of(p, nodes)).collect();
        Ok(Self { by, nodes, owners })
    }

    /// Number of partitions.
    pub fn len(&self) -> u32 {
        self.owners.len() as u32
    }

    /// Always false (a table has at least one partition); for clippy's `len` rule.
    pub fn is_empty(&self) -> bool {
        self.owners.is_empty()
    }

    /// Number of nodes.
    pub fn nodes(&self) -> u32 {
        self.nodes
    }

    /// What partitions are computed from.
    pub fn by(&self) -> PartitionBy {
        self.by
    }

    /// The partition of a host key (`scheme://host:port`).
    pub fn partition_of(&self, host_key: &str) -> u32 {
        let key = match self.by {
            PartitionBy::Host => host_key,
            PartitionBy::Domain => registrable_domain(host_key),
        };
        (xxh3_64_with_seed(key.as_bytes(), KEY_SEED) % u64::from(self.len().max(1))) as u32
    }

    /// The node that owns a partition.
    pub fn owner(&self, partition: u32) -> u32 {
        self.owners.get(partition as usize).copied().unwrap_or(0)
    }

    /// The partitions `node` owns, in order.
    pub fn owned_by(&self, node: u32) -> Vec<u32> {
        (0..self.len()).filter(|&p| self.owner(p) == node).collect()
    }
}

/// The rendezvous owner: the node with the highest score for this partition.
fn owner_of(partition: u32, nodes: u32) -> u32 {
    let mut best = (0u64, 0u32);
    for node in 0..nodes {
        let mut key = [0u8; 8];
        key[..4].copy_from_slice(&partition.to_le_bytes());
        key[4..].copy_from_slice(&node.to_le_bytes());
        let score = xxh3_64_with_seed(&key, OWNER_SEED);
        if node == 0 || score > best.0 {
            best = (score, node);
        }
    }
    best.1
}

/// The registrable domain of a host key (`scheme://host:port`), or the host itself
/// when the public suffix list knows none (an IP address, `localhost`, a bare suffix).
fn registrable_domain(host_key: &str) -> &str {
    let rest = host_key.split_once("://").map_or(host_key, |(_, r)| r);
    let host = if rest.starts_with('[') {
        // An IPv6 literal, brackets kept: its own domain.
        rest.find(']').and_then(|i| rest.get(..=i)).unwrap_or(rest)
    } else {
        rest.rsplit_once(':').map_or(rest, |(h, _)| h)
    };
    if host.starts_with('[') || host.parse::<std::net::Ipv4Addr>().is_ok() {
        return host;
    }
    psl::domain_str(host).unwrap_or(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_are_stable_and_in_range() {
        let t = Partitions::new(1024, 3, PartitionBy::Host).unwrap();
        // Fixed values: a change of hash or seed re-partitions every farm, and must
        // be a deliberate, documented step.
        let p = t.partition_of("http://example.com:80");
        assert_eq!(p, t.partition_of("http://example.com:80"));
        assert!(p < 1024);
        for i in 0..2000 {
            assert!(t.partition_of(&format!("http://h{i}.test:80")) < 1024);
        }
        assert_eq!(Partitions::new(1024, 3, PartitionBy::Host).unwrap(), t);
    }

    #[test]
    fn owners_spread_evenly() {
        let t = Partitions::new(1024, 4, PartitionBy::Host).unwrap();
        for node in 0..4 {
            let n = t.owned_by(node).len();
            assert!((200..=312).contains(&n), "node {node} owns {n} of 1024");
        }
        let total: usize = (0..4).map(|n| t.owned_by(n).len()).sum();
        assert_eq!(total, 1024);
    }

    #[test]
    fn changing_n_moves_only_the_partitions_whose_owner_changes() {
        for (from, to) in [(3, 4), (4, 3), (1, 2), (5, 8), (8, 5)] {
            let a = Partitions::new(1024, from, PartitionBy::Host).unwrap();
            let b = Partitions::new(1024, to, PartitionBy::Host).unwrap();
            let mut moved = 0;
            for p in 0..1024 {
                let (oa, ob) = (a.owner(p), b.owner(p));
                if oa != ob {
                    moved += 1;
                    // Growing: a partition moves only to a new node. Shrinking: only
                    // partitions of a removed node move.
                    if to > from {
                        assert!(ob >= from, "partition {p} moved {oa} -> {ob}");
                    } else {
                        assert!(oa >= to, "partition {p} moved {oa} -> {ob}");
                    }
                }
            }
            // About |1/from - 1/to| of the partitions change owner.
            let (lo, hi) = (from.min(to), from.max(to));
            let expected = 1024.0 * f64::from(hi - lo) / f64::from(hi);
            assert!(
                (f64::from(moved) - expected).abs() < expected * 0.3 + 8.0,
                "{from}->{to}: {moved} moved, expected about {expected}"
            );
        }
    }

    #[test]
    fn domain_partitioning_groups_the_hosts_of_a_registrable_domain() {
        let t = Partitions::new(1024, 3, PartitionBy::Domain).unwrap();
        let p = t.partition_of("http://www.example.co.uk:80");
        assert_eq!(p, t.partition_of("https://shop.example.co.uk:443"));
        assert_eq!(p, t.partition_of("http://example.co.uk:8080"));
        assert_eq!(
            registrable_domain("http://a.b.example.com:80"),
            "example.com"
        );
        assert_eq!(registrable_domain("http://127.0.0.1:8080"), "127.0.0.1");
        assert_eq!(registrable_domain("http://[::1]:80"), "[::1]");
        assert_eq!(registrable_domain("http://localhost:80"), "localhost");
        let h = Partitions::new(1024, 3, PartitionBy::Host).unwrap();
        let differ = (0..50)
            .filter(|i| {
                h.partition_of(&format!("http://w{i}.example.com:80"))
                    != h.partition_of("http://example.com:80")
            })
            .count();
        assert!(differ > 40, "host partitioning spreads subdomains");
    }

    #[test]
    fn bad_sizes_are_refused() {
        assert_eq!(
            Partitions::new(1024, 0, PartitionBy::Host),
            Err(PartitionError::Nodes(0))
        );
        assert_eq!(
            Partitions::new(0, 2, PartitionBy::Host),
            Err(PartitionError::Partitions(0))
        );
        assert!("host".parse::<PartitionBy>().is_ok());
        assert!("ip".parse::<PartitionBy>().is_err());
    }
}
