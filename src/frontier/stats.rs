//! The frontier's counters, as a progress display, `stats.json` and Prometheus show
//! them.

use super::Frontier;

/// Counters a progress display and `stats.json` show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrontierStats {
    /// URLs in RAM: hosts' heads and buffers.
    pub ram_urls: u64,
    /// URLs in blocks (on disk, or in the write batch).
    pub disk_urls: u64,
    /// Bytes of the log files, dead blocks included, plus the write batch.
    pub disk_bytes: u64,
    /// RAM counted against the budget: URLs, host table, block references, batch.
    pub ram_bytes: u64,
    pub hosts: u64,
    /// Hosts on the schedule (something queued, not held, a fetch slot free).
    pub hosts_ready: u64,
    pub hosts_in_flight: u64,
    /// Hosts whose queue continues beyond RAM (blocks or a buffer).
    pub hosts_with_disk: u64,
    /// Log files on disk.
    pub segments: u64,
    pub blocks_written: u64,
    pub blocks_read: u64,
    pub disk_reads_bytes: u64,
    /// Blocks found damaged (checksum or records), their URLs lost.
    pub blocks_damaged: u64,
    /// Hosts in the active set.
    pub hosts_active: u64,
    /// Records waiting in the line (URLs of inactive hosts, and markers).
    pub line_records: u64,
    /// Activations so far (a host entering the active set).
    pub activations: u64,
    /// Hosts sent to the back of the line after spending an activation's budget.
    pub rotations: u64,
    /// Hosts sent to the back of the line because their server's address had its
    /// share of the active set (`address.rs`), and distinct addresses in the set.
    pub address_rotations: u64,
    pub active_addresses: u64,
}

impl FrontierStats {
    /// Disk bytes per URL waiting on disk (0 when none).
    pub fn disk_bytes_per_url(&self) -> f64 {
        if self.disk_urls == 0 {
            0.0
        } else {
            self.disk_bytes as f64 / self.disk_urls as f64
        }
    }
}

impl Frontier {
    /// Current counters.
    pub fn stats(&self) -> FrontierStats {
        FrontierStats {
            ram_urls: self.ram_urls,
            disk_urls: self.disk_urls,
            disk_bytes: self.store.bytes() + self.batch.len() as u64,
            ram_bytes: self.ram_bytes as u64,
            hosts: self.table.len() as u64,
            hosts_ready: self.on_heap,
            hosts_in_flight: self.hosts_in_flight,
            hosts_with_disk: self.hosts_with_disk,
            segments: self.store.files(),
            blocks_written: self.blocks_written,
            blocks_read: self.blocks_read,
            disk_reads_bytes: self.disk_reads_bytes,
            blocks_damaged: self.blocks_damaged,
            hosts_active: self.active_hosts,
            line_records: self.line.records,
            activations: self.activations,
            rotations: self.rotations,
            address_rotations: self.addresses.rotations,
            active_addresses: self.addresses.len() as u64,
        }
    }
}
