//! A host's queue beyond its RAM head: the buffer, blocks, the shard's write batch,
//! reading a block back, dropping a host's queue and listing every queued URL.

use super::block::Buffer;
use super::host::{Host, HostId, Spill};
use super::store::{load_block, BlockRef, UNWRITTEN};
use super::{
    BlockDamage, Frontier, FrontierError, QueuedUrl, BLOCK_REF_BYTES, MAX_DAMAGE_REPORTS,
    SPILL_BYTES, WRITE_BATCH_BYTES,
};

/// What reading a host's next block gave.
enum Refill {
    /// URLs moved into the RAM head (a block, or the buffer).
    Loaded,
    /// Nothing beyond RAM.
    Empty,
}

impl Frontier {
    /// Queues `item` behind `id`'s backlog: in its buffer, which becomes a block
    /// when full (or when RAM is over the budget).
    pub(super) fn spill(&mut self, id: HostId, item: QueuedUrl) -> Result<(), FrontierError> {
        if self.batch.len() >= self.batch_limit() {
            // Appended before anything changes: on failure the URL is not queued and
            // the batch, whole, is tried again by a later push.
            self.flush_batch()?;
        }
        let block_urls = self.config.block_urls;
        let Some(Host { name, spill, .. }) = self.table.get_mut(id) else {
            return Ok(());
        };
        let created = spill.is_none();
        let spill = spill.get_or_insert_with(Box::default);
        let before = spill.pending.heap_bytes();
        spill.pending.push(name, &item, &mut self.scratch);
        let after = spill.pending.heap_bytes();
        let full = spill.pending.len() >= block_urls;
        if created {
            self.ram_bytes += SPILL_BYTES;
            self.hosts_with_disk += 1;
        }
        self.ram_bytes = self.ram_bytes.saturating_sub(before) + after;
        self.pending_bytes = self.pending_bytes.saturating_sub(before) + after;
        self.ram_urls += 1;
        if full || self.pending_bytes > self.pending_budget() {
            self.seal(id);
        }
        Ok(())
    }

    /// Turns `id`'s buffer into a block at the end of the write batch.
    fn seal(&mut self, id: HostId) {
        let Some(h) = self.table.get_mut(id) else {
            return;
        };
        let Some(spill) = h.spill.as_mut() else {
            return;
        };
        if spill.pending.is_empty() {
            return;
        }
        // The buffer's allocations are freed by the seal, so hosts that spilled once
        // do not each keep a block's worth of capacity.
        let held = spill.pending.heap_bytes();
        let offset = self.batch.len();
        let (len, count) = spill.pending.seal(&mut self.batch);
        if spill.blocks.capacity() == 0 {
            // Most hosts spill a block or two: room for one, not the default four.
            spill.blocks.reserve_exact(1);
        }
        spill.blocks.push_back(BlockRef {
            file: UNWRITTEN,
            offset: u32::try_from(offset).unwrap_or(u32::MAX),
            len: u32::try_from(len).unwrap_or(u32::MAX),
            count,
        });
        spill.unwritten += 1;
        self.batch_hosts.push(id);
        self.pending_bytes = self.pending_bytes.saturating_sub(held);
        self.ram_bytes = self.ram_bytes.saturating_sub(held) + BLOCK_REF_BYTES + len;
        self.ram_urls = self.ram_urls.saturating_sub(u64::from(count));
        self.disk_urls += u64::from(count);
    }

    /// Appends the write batch to the log with one write and gives its blocks their
    /// places.
    ///
    /// # Errors
    /// [`FrontierError::Write`]; the batch is kept whole for a later try.
    pub(super) fn flush_batch(&mut self) -> Result<(), FrontierError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let blocks = u32::try_from(self.batch_hosts.len()).unwrap_or(u32::MAX);
        let (file, base) =
            self.store
                .append(&self.batch, blocks)
                .map_err(|source| FrontierError::Write {
                    path: self.store.path(self.store.current()),
                    source,
                })?;
        self.blocks_written += u64::from(blocks);
        for &id in &self.batch_hosts {
            if id == super::line::LINE {
                let line = &mut self.line;
                let first_unwritten = line.blocks.len().saturating_sub(line.unwritten as usize);
                if let Some(b) = line.blocks.get_mut(first_unwritten) {
                    b.file = file;
                    b.offset = base.saturating_add(b.offset);
                    line.unwritten -= 1;
                }
                continue;
            }
            let Some(spill) = self.table.get_mut(id).and_then(|h| h.spill.as_mut()) else {
                continue;
            };
            let first_unwritten = spill.blocks.len().saturating_sub(spill.unwritten as usize);
            if let Some(b) = spill.blocks.get_mut(first_unwritten) {
                b.file = file;
                b.offset = base.saturating_add(b.offset);
                spill.unwritten -= 1;
            }
        }
        self.ram_bytes = self.ram_bytes.saturating_sub(self.batch.len());
        self.batch.clear();
        self.batch_hosts.clear();
        if self.batch.capacity() > 2 * WRITE_BATCH_BYTES {
            self.batch.shrink_to(WRITE_BATCH_BYTES);
        }
        Ok(())
    }

    /// Moves the next part of `id`'s backlog into its RAM head: its oldest block
    /// (one positioned read), or its buffer when it has no block. A damaged block is
    /// reported and skipped, and the next one read.
    ///
    /// # Errors
    /// The write batch could not be appended (the block was in it), or a block could
    /// not be read; the backlog is unchanged.
    fn refill(&mut self, id: HostId) -> Result<Refill, FrontierError> {
        loop {
            let Some(spill) = self.table.get(id).and_then(|h| h.spill.as_ref()) else {
                return Ok(Refill::Empty);
            };
            let Some(&front) = spill.blocks.front() else {
                if spill.pending.is_empty() {
                    self.end_spill(id);
                    return Ok(Refill::Empty);
                }
                if let Some(h) = self.table.get_mut(id) {
                    if let Some(spill) = h.spill.as_mut() {
                        let held = spill.pending.heap_bytes();
                        let count = spill.pending.len() as u64;
                        let records = spill.pending.records();
                        spill.pending = Buffer::default();
                        self.pending_bytes = self.pending_bytes.saturating_sub(held);
                        self.ram_bytes = self.ram_bytes.saturating_sub(held);
                        // The buffer is our own RAM: it always decodes.
                        let records = records.unwrap_or_default();
                        let lost = count.saturating_sub(records.len() as u64);
                        self.ram_urls = self.ram_urls.saturating_sub(lost);
                        for r in records {
                            self.ram_bytes += r.item.ram_bytes();
                            h.ram.push_back(r.item);
                        }
                    }
                }
                self.end_spill(id);
                return Ok(Refill::Loaded);
            };
            if front.file == UNWRITTEN {
                self.flush_batch()?;
                continue;
            }
            let records = self.read_block(front)?;
            self.consume_front(id, front);
            match records {
                Some(records) => {
                    let mut bytes = 0;
                    let n = records.len() as u64;
                    if let Some(h) = self.table.get_mut(id) {
                        for r in records {
                            bytes += r.item.ram_bytes();
                            h.ram.push_back(r.item);
                        }
                    }
                    self.ram_bytes += bytes;
                    self.ram_urls += n;
                    if self
                        .table
                        .get(id)
                        .is_some_and(|h| h.spill.as_ref().is_some_and(|s| s.is_empty()))
                    {
                        self.end_spill(id);
                    }
                    return Ok(Refill::Loaded);
                }
                None => self.report_damage(id, front),
            }
        }
    }

    /// Reads the written block `b` back (one positioned read, counted) and decodes
    /// it: `None` if it is damaged. The block stays where it is; the caller consumes it.
    ///
    /// # Errors
    /// [`FrontierError::Read`]: the read failed.
    pub(super) fn read_block(
        &mut self,
        b: BlockRef,
    ) -> Result<Option<Vec<super::segment::Record>>, FrontierError> {
        let records = load_block(&mut *self.store, b, &mut self.read_buf)?;
        self.blocks_read += 1;
        self.disk_reads_bytes += u64::from(b.len);
        Ok(records)
    }

    /// The front block of `id` was read: off its list, released in the store.
    fn consume_front(&mut self, id: HostId, front: BlockRef) {
        if let Some(spill) = self.table.get_mut(id).and_then(|h| h.spill.as_mut()) {
            spill.blocks.pop_front();
            // A host that once had a long backlog gives the list's room back.
            if spill.blocks.capacity() > 64 && spill.blocks.len() < spill.blocks.capacity() / 4 {
                spill.blocks.shrink_to(spill.blocks.len() * 2);
            }
        }
        self.ram_bytes = self.ram_bytes.saturating_sub(BLOCK_REF_BYTES);
        self.disk_urls = self.disk_urls.saturating_sub(u64::from(front.count));
        self.release_file(front.file);
    }

    /// One block of `file` was consumed: the store deletes the file with its last.
    pub(super) fn release_file(&mut self, file: u32) {
        if let Err(e) = self.store.release(file) {
            tracing::warn!(path = %self.store.path(file).display(), error = %e,
                "frontier log file could not be deleted");
        }
    }

    fn report_damage(&mut self, id: HostId, front: BlockRef) {
        let path = self.store.path(front.file);
        let host = self
            .table
            .get(id)
            .map(|h| h.name.to_string())
            .unwrap_or_default();
        tracing::warn!(path = %path.display(), offset = front.offset, urls = front.count, %host,
            "frontier block damaged: its URLs are skipped");
        self.blocks_damaged += 1;
        if self.damage.len() >= MAX_DAMAGE_REPORTS {
            self.damage.pop_front();
        }
        self.damage.push_back(BlockDamage {
            path,
            offset: u64::from(front.offset),
            urls: front.count,
            host,
        });
    }

    /// `id`'s backlog is empty: it drops its [`Spill`].
    fn end_spill(&mut self, id: HostId) {
        if let Some(h) = self.table.get_mut(id) {
            if h.spill.take().is_some() {
                self.ram_bytes = self.ram_bytes.saturating_sub(SPILL_BYTES);
                self.hosts_with_disk = self.hosts_with_disk.saturating_sub(1);
            }
        }
    }

    /// Reads `id`'s next block into RAM if its head is under the low-water mark: at
    /// once when the head is empty (the host is due and has nothing else), else only
    /// while the budget has room for a block.
    ///
    /// # Errors
    /// As [`Frontier::refill`].
    pub(super) fn top_up(&mut self, id: HostId) -> Result<(), FrontierError> {
        let low = self.low_water();
        let block_bytes = self.config.block_urls * super::APPROX_URL_BYTES;
        let Some(h) = self.table.get(id) else {
            return Ok(());
        };
        if h.spill.is_none() || h.ram.len() >= low {
            return Ok(());
        }
        if h.ram.is_empty() || self.ram_bytes + block_bytes <= self.config.ram_budget_bytes {
            // An empty head whose blocks were all damaged is left empty: the caller
            // moves on.
            self.refill(id)?;
        }
        Ok(())
    }

    /// Removes up to `max_urls` of `host`'s queued URLs, oldest first (RAM head, then
    /// its blocks one at a time, then its buffer), calling `f` for each; returns
    /// whether more remain. The engine calls it once a turn for a host whose queue is
    /// given up (robots.txt unreachable for good, budget spent, a trap), so a queue of
    /// millions drains in bounded memory: one block in RAM at a time. Blocks read are
    /// released, and their log files deleted once no live block remains in them.
    ///
    /// # Errors
    /// A block could not be read (or the write batch holding it written); the URLs
    /// removed before are gone, the rest stay queued.
    pub fn drop_host(
        &mut self,
        host: &str,
        max_urls: usize,
        mut f: impl FnMut(&QueuedUrl),
    ) -> Result<bool, FrontierError> {
        let Some(id) = self.table.find(host) else {
            return Ok(false);
        };
        let mut dropped = 0;
        while dropped < max_urls {
            let item = self.table.get_mut(id).and_then(|h| h.ram.pop_front());
            if let Some(item) = item {
                self.ram_bytes = self.ram_bytes.saturating_sub(item.ram_bytes());
                self.ram_urls = self.ram_urls.saturating_sub(1);
                f(&item);
                dropped += 1;
                continue;
            }
            if matches!(self.refill(id)?, Refill::Empty) {
                break;
            }
        }
        let Some(h) = self.table.get_mut(id) else {
            return Ok(false);
        };
        if h.ram.is_empty() {
            h.ram = std::collections::VecDeque::new();
        }
        let more = !h.ram.is_empty() || h.spill.is_some();
        if !more {
            self.off_heap(id);
            self.settling.push(id);
        }
        Ok(more)
    }

    /// Every queued URL, per host in queue order (RAM head, blocks, buffer), for a
    /// checkpoint. Appends the write batch first so every block has its place; reads
    /// every block (one positioned read each) without consuming it. A damaged block
    /// is reported and skipped.
    ///
    /// # Errors
    /// The write batch could not be appended, or a block could not be read.
    pub fn for_each_queued(
        &mut self,
        f: impl FnMut(&str, &QueuedUrl),
    ) -> Result<(), FrontierError> {
        self.list_queued(f, true)
    }

    /// [`Frontier::for_each_queued`] without the URLs of the line's blocks on disk: a
    /// checkpoint keeps those by reference ([`Frontier::keep_line_blocks`]).
    ///
    /// # Errors
    /// As [`Frontier::for_each_queued`].
    pub fn for_each_queued_but_line_blocks(
        &mut self,
        f: impl FnMut(&str, &QueuedUrl),
    ) -> Result<(), FrontierError> {
        self.list_queued(f, false)
    }

    fn list_queued(
        &mut self,
        mut f: impl FnMut(&str, &QueuedUrl),
        line_blocks: bool,
    ) -> Result<(), FrontierError> {
        self.flush_batch()?;
        let mut damaged = Vec::new();
        let mut buf = std::mem::take(&mut self.read_buf);
        for (id, h) in self.table.iter() {
            for item in &h.ram {
                f(&h.name, item);
            }
            let Some(spill) = h.spill.as_deref() else {
                continue;
            };
            let Spill {
                blocks, pending, ..
            } = spill;
            for b in blocks {
                match load_block(&mut *self.store, *b, &mut buf)? {
                    Some(records) => records.iter().for_each(|r| f(&h.name, &r.item)),
                    None => damaged.push((id, *b)),
                }
            }
            for r in pending.records().unwrap_or_default() {
                f(&h.name, &r.item);
            }
        }
        self.read_buf = buf;
        for (id, b) in damaged {
            self.report_damage(id, b);
        }
        self.for_each_in_line(&mut f, line_blocks)
    }
}
