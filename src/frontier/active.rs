//! The active set: the hosts a shard is serving (on the schedule, held for their
//! robots.txt, or resting their politeness delay), how a host joins it from the line
//! (`line.rs`), and how it leaves: served to the end, or sent to the back of the line
//! after spending its activation's budget. `docs/frontier.md`, "The active set and the
//! line".

use super::host::HostId;
use super::Frontier;

impl Frontier {
    /// `id` joins the active set: on the schedule once servable.
    pub(super) fn activate(&mut self, id: HostId) {
        let Some(h) = self.table.get_mut(id) else {
            return;
        };
        if h.active {
            return;
        }
        h.active = true;
        h.waiting = false;
        h.takes = 0;
        self.active_hosts += 1;
        self.activations += 1;
        self.join_address(id);
        self.schedule_if_idle(id);
    }

    /// Hosts of the settling list leave the active set if they still have nothing
    /// queued and nothing running, or go to the back of the line if they spent their
    /// activation's budget, or are crowded on their address (`address.rs`), while
    /// hosts wait there.
    pub(super) fn settle(&mut self) {
        let budget = self.config.activation_budget;
        for id in std::mem::take(&mut self.settling) {
            let Some(h) = self.table.get(id) else {
                continue;
            };
            if !h.active || h.held || h.in_flight > 0 {
                continue;
            }
            // A crowded host waits for its address in RAM; one that spent its budget
            // goes to the back of the line, if hosts wait there.
            let for_address = h.has_queue() && h.crowded;
            let to_line =
                h.has_queue() && !for_address && h.takes >= budget && self.line.records > 0;
            let rotate = for_address || to_line;
            if h.has_queue() && !rotate {
                continue;
            }
            if to_line && self.line_push_marker(id).is_err() {
                // It stays active; the write is tried again with the next batch.
                continue;
            }
            if let Some(h) = self.table.get_mut(id) {
                h.active = false;
                if !rotate {
                    self.left.push(h.name.clone());
                }
            }
            self.leave_address(id);
            if for_address {
                self.wait_for_address(id);
            }
            self.active_hosts = self.active_hosts.saturating_sub(1);
            self.rotations += u64::from(to_line);
            self.off_heap(id);
            self.list_if_idle(id);
        }
    }

    /// Whether a host of the line may join the active set: the line holds something
    /// and the active set has room (always when no host is active, so the crawl cannot
    /// stall on the bound).
    pub(super) fn can_activate(&self) -> bool {
        (self.line.records > 0 || self.addresses.has_ready())
            && (self.active_hosts == 0 || self.active_hosts < self.config.max_active_hosts as u64)
    }

    /// The hosts that left the active set served to the end since the last call.
    pub fn take_left(&mut self) -> Vec<Box<str>> {
        std::mem::take(&mut self.left)
    }

    /// Whether `host` has an entry in the host table (active, or inactive and not
    /// forgotten yet); a host of the line has none.
    pub fn has_entry(&self, host: &str) -> bool {
        self.table.find(host).is_some()
    }

    /// Whether `host` is in the active set (served, held for robots.txt, or waiting
    /// out its politeness delay).
    pub fn is_active(&self, host: &str) -> bool {
        self.table
            .find(host)
            .and_then(|id| self.host(id))
            .is_some_and(|h| h.active)
    }

    /// True when no URL is queued in RAM or on disk and nothing is in flight.
    pub fn is_exhausted(&self) -> bool {
        self.ram_urls == 0 && self.disk_urls == 0 && self.in_flight == 0
    }

    /// URLs queued for `host`, in RAM and on disk; `None` when the frontier does not
    /// know the host (never queued, or forgotten once idle). For the status page's host
    /// tables.
    pub fn queued_of(&self, host: &str) -> Option<u64> {
        let h = self.host(self.table.find(host)?)?;
        let spilled = h.spill.as_ref().map_or(0, |s| {
            s.blocks.iter().map(|b| u64::from(b.count)).sum::<u64>() + s.pending.len() as u64
        });
        Some(h.ram.len() as u64 + spilled)
    }
}
