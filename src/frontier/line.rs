//! The line: hosts waiting for their activation, at no RAM cost per host.
//!
//! A breadth crawl knows hundreds of thousands of hosts within minutes, far more than
//! it can serve at once. A host not in the active set has no entry in the host table:
//! its URLs wait in the line, one shared FIFO of records in discovery order, written
//! to the frontier's log files in blocks of [`LINE_BLOCK_RECORDS`] (mixed hosts; each
//! record names its host) through the same write batch as the hosts' own blocks, and
//! read back one block at a time from the front. RAM holds the newest records (a
//! block being built), the front block's records and 16 bytes a sealed block: nothing
//! per host. Only the hosts the crawl is serving have entries.
//!
//! A host is activated when the schedule has no active host ready and the active set
//! has room ([`Frontier::take_ready_with`]); the record at the front of the line names
//! the next host. A URL of a host that has an entry goes to that host's own queue; a
//! host that has an entry but is inactive (served to the end, or rotated out after
//! spending its activation's budget) gets a *marker* in the line (a record with an
//! empty URL), so it comes back behind the hosts that were waiting before it.
//!
//! Order: per host, first in first out, except that URLs of a host found while it
//! waited in the line may come before its rotated-out queue (both are served).

use std::collections::VecDeque;
use std::time::Instant;

use super::block::Builder;
use super::host::HostId;
use super::segment::Record;
use super::store::{BlockRef, UNWRITTEN};
use super::{heap_chunk, Frontier, FrontierError, QueuedUrl, BLOCK_REF_BYTES};

/// Records in a sealed block of the line: larger than a host's blocks, since the line
/// is read only at its front and sequentially (a block of a few KiB to tens of KiB).
pub(super) const LINE_BLOCK_RECORDS: usize = 256;

/// The write batch names the owner of each block by host id; the line's blocks are
/// this id.
pub(super) const LINE: HostId = HostId::MAX;

/// Records read from the line in one activation attempt at most: URLs of active
/// hosts and stale markers are moved along without an activation, and a scheduling
/// turn must stay bounded.
const MAX_RECORDS_PER_ACTIVATION: usize = 4096;

/// The shared queue of records of hosts not active (see the module docs).
#[derive(Debug, Default)]
pub(super) struct Line {
    /// Sealed blocks, oldest first; the last `unwritten` wait in the write batch.
    pub blocks: VecDeque<BlockRef>,
    pub unwritten: u32,
    /// The newest records, not yet a block.
    pub tail: Builder,
    /// The front block's records, read back, oldest first.
    pub head: VecDeque<Record>,
    /// Records in the line (URLs and markers), in all three parts.
    pub records: u64,
    /// Of which markers.
    pub markers: u64,
}

/// RAM a decoded record takes: the URL's, plus its host name's string.
fn record_bytes(r: &Record) -> usize {
    r.item.ram_bytes() + std::mem::size_of::<String>() + heap_chunk(r.host.len())
}

/// The marker of a host that has an entry but waits in the line.
fn marker() -> QueuedUrl {
    QueuedUrl::seed(String::new())
}

impl Frontier {
    /// Appends a URL of a host with no entry (or a marker) to the line's tail; a full
    /// tail becomes a block in the write batch.
    ///
    /// # Errors
    /// [`FrontierError::Write`]: the write batch was due and could not be appended;
    /// nothing was queued.
    pub(super) fn line_push(&mut self, host: &str, item: &QueuedUrl) -> Result<(), FrontierError> {
        if self.batch.len() >= self.batch_limit() {
            self.flush_batch()?;
        }
        let before = self.line.tail.heap_bytes();
        self.line.tail.push(host, item, &mut self.scratch);
        let after = self.line.tail.heap_bytes();
        self.ram_bytes = self.ram_bytes.saturating_sub(before) + after;
        self.ram_urls += 1;
        self.line.records += 1;
        if item.url.is_empty() {
            self.line.markers += 1;
        }
        if self.line.tail.len() >= LINE_BLOCK_RECORDS {
            self.seal_line();
        }
        Ok(())
    }

    /// A marker for the host `id` (inactive, with a queue): it comes back when the
    /// marker reaches the front.
    pub(super) fn line_push_marker(&mut self, id: HostId) -> Result<(), FrontierError> {
        let Some(name) = self.table.get(id).map(|h| h.name.to_string()) else {
            return Ok(());
        };
        self.line_push(&name, &marker())?;
        if let Some(h) = self.table.get_mut(id) {
            h.waiting = true;
        }
        Ok(())
    }

    /// Turns the line's tail into a block at the end of the write batch.
    fn seal_line(&mut self) {
        if self.line.tail.is_empty() {
            return;
        }
        let held = self.line.tail.heap_bytes();
        let offset = self.batch.len();
        let (len, count) = self.line.tail.seal(&mut self.batch);
        self.line.blocks.push_back(BlockRef {
            file: UNWRITTEN,
            offset: u32::try_from(offset).unwrap_or(u32::MAX),
            len: u32::try_from(len).unwrap_or(u32::MAX),
            count,
        });
        self.line.unwritten += 1;
        self.batch_hosts.push(LINE);
        self.ram_bytes = self.ram_bytes.saturating_sub(held) + BLOCK_REF_BYTES + len;
        self.ram_urls = self.ram_urls.saturating_sub(u64::from(count));
        self.disk_urls += u64::from(count);
    }

    /// The line's front record, taken off it: from the front block's records, else the
    /// next block (one positioned read; a damaged block is reported and skipped), else
    /// the tail.
    ///
    /// # Errors
    /// A block could not be read (or the batch holding it appended); the line is
    /// unchanged.
    fn line_pop(&mut self) -> Result<Option<Record>, FrontierError> {
        loop {
            if let Some(r) = self.line.head.pop_front() {
                self.ram_bytes = self.ram_bytes.saturating_sub(record_bytes(&r));
                self.ram_urls = self.ram_urls.saturating_sub(1);
                self.line.records = self.line.records.saturating_sub(1);
                if r.item.url.is_empty() {
                    self.line.markers = self.line.markers.saturating_sub(1);
                }
                if self.line.head.is_empty() {
                    self.line.head = VecDeque::new();
                }
                return Ok(Some(r));
            }
            if let Some(&front) = self.line.blocks.front() {
                if front.file == UNWRITTEN {
                    self.flush_batch()?;
                    continue;
                }
                let records = self.read_block(front)?;
                self.line.blocks.pop_front();
                self.ram_bytes = self.ram_bytes.saturating_sub(BLOCK_REF_BYTES);
                self.disk_urls = self.disk_urls.saturating_sub(u64::from(front.count));
                self.release_file(front.file);
                match records {
                    Some(records) => self.line_to_head(records),
                    None => {
                        self.line.records =
                            self.line.records.saturating_sub(u64::from(front.count));
                        self.report_line_damage(front);
                    }
                }
                continue;
            }
            if self.line.tail.is_empty() {
                return Ok(None);
            }
            let held = self.line.tail.heap_bytes();
            let count = self.line.tail.len() as u64;
            // The tail is our own RAM: it always decodes.
            let records = self.line.tail.records().unwrap_or_default();
            self.line.tail = Builder::default();
            self.ram_bytes = self.ram_bytes.saturating_sub(held);
            self.ram_urls = self.ram_urls.saturating_sub(count);
            self.line.records = self.line.records.saturating_sub(count);
            self.line.records += records.len() as u64;
            self.line_to_head(records);
        }
    }

    /// Decoded records become the line's head (they were counted as records already).
    fn line_to_head(&mut self, records: Vec<Record>) {
        for r in records {
            self.ram_bytes += record_bytes(&r);
            self.ram_urls += 1;
            self.line.head.push_back(r);
        }
    }

    /// Puts a record taken by [`Frontier::line_pop`] back at the front (its host's
    /// queue could not take it).
    fn line_unpop(&mut self, r: Record) {
        self.ram_bytes += record_bytes(&r);
        self.ram_urls += 1;
        self.line.records += 1;
        if r.item.url.is_empty() {
            self.line.markers += 1;
        }
        self.line.head.push_front(r);
    }

    /// The line's RAM, recomputed (tests check the running count).
    #[cfg(test)]
    pub(super) fn line_ram_bytes(&self) -> usize {
        self.line.tail.heap_bytes()
            + self.line.head.iter().map(record_bytes).sum::<usize>()
            + self.line.blocks.len() * BLOCK_REF_BYTES
    }

    fn report_line_damage(&mut self, front: BlockRef) {
        let path = self.store.path(front.file);
        tracing::warn!(path = %path.display(), offset = front.offset, urls = front.count,
            "frontier line block damaged: its URLs are skipped");
        self.blocks_damaged += 1;
        if self.damage.len() >= super::MAX_DAMAGE_REPORTS {
            self.damage.pop_front();
        }
        self.damage.push_back(super::BlockDamage {
            path,
            offset: u64::from(front.offset),
            urls: front.count,
            host: "(line)".to_owned(),
        });
    }

    /// Activates the next host of the line: reads records from its front, moving URLs
    /// of hosts with an entry (active, or waiting for their marker) to their queues,
    /// until one names a host to activate (a new host, a host served to the end that
    /// got a URL, or a marker's host); then goes on moving the records that follow
    /// while they need no other activation, so a run of one host's URLs (a seed list,
    /// a page's links to a new host) reaches its queue at once. Returns whether a host
    /// was activated; false when the line is empty or a bounded number of records
    /// named none.
    ///
    /// # Errors
    /// A line block could not be read, or a host's queue could not take a URL (the
    /// record goes back to the line's front).
    pub(super) fn activate_next(&mut self, now: Instant) -> Result<bool, FrontierError> {
        let mut activated = false;
        for _ in 0..MAX_RECORDS_PER_ACTIVATION {
            let Some(record) = self.line_pop()? else {
                return Ok(activated);
            };
            let is_marker = record.item.url.is_empty();
            let entry = self.table.find(&record.host);
            let needs_activation = match entry.and_then(|id| self.table.get(id)) {
                None => !is_marker,
                Some(h) if is_marker => h.waiting && !h.active,
                Some(h) => !h.active && !h.waiting,
            };
            if needs_activation && activated {
                self.line_unpop(record);
                return Ok(true);
            }
            let id = match entry {
                Some(id) => id,
                None if is_marker => continue,
                None => self.new_host(&record.host, now),
            };
            if !is_marker {
                if let Err(e) = self.enqueue(id, record.item.clone()) {
                    self.line_unpop(record);
                    return Err(e);
                }
            }
            if !needs_activation {
                // Queued for a host being served or waiting, or a stale marker.
                continue;
            }
            if self.table.get(id).is_some_and(|h| h.has_queue()) && self.address_full(id) {
                // Its server has its share of the active set: it waits for room there.
                self.wait_for_address(id);
            } else if self.table.get(id).is_some_and(|h| h.has_queue()) {
                self.activate(id);
                activated = true;
            } else if let Some(h) = self.table.get_mut(id) {
                // A marker whose host's queue was given up meanwhile.
                h.waiting = false;
                self.list_if_idle(id);
            }
        }
        Ok(activated)
    }

    /// Every URL in the line, in order (markers left out), for a checkpoint: the
    /// front block's records, every block read without consuming it, the tail.
    ///
    /// # Errors
    /// A block could not be read.
    pub(super) fn for_each_in_line(
        &mut self,
        f: &mut impl FnMut(&str, &QueuedUrl),
        blocks: bool,
    ) -> Result<(), FrontierError> {
        let mut visit = |r: &Record| {
            if !r.item.url.is_empty() {
                f(&r.host, &r.item);
            }
        };
        self.line.head.iter().for_each(&mut visit);
        let mut buf = std::mem::take(&mut self.read_buf);
        let mut damaged = Vec::new();
        for b in self.line.blocks.iter().filter(|_| blocks) {
            match super::store::load_block(&mut *self.store, *b, &mut buf)? {
                Some(records) => records.iter().for_each(&mut visit),
                None => damaged.push(*b),
            }
        }
        self.read_buf = buf;
        for r in self.line.tail.records().unwrap_or_default() {
            visit(&r);
        }
        for b in damaged {
            self.report_line_damage(b);
        }
        Ok(())
    }
}
