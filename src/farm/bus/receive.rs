//! The bus's receiving half: doorbells, `XREADGROUP` over the partitions that rang,
//! and each received link handed to the shard that owns its host, whose core tests and
//! admits it.

use super::*;

impl Bus {
    /// Reads own partitions: pending entries first after a start, then what rang.
    pub(super) fn read(&mut self, now: Instant) {
        if !self.groups_ready {
            return;
        }
        if now >= self.last_full_scan + FULL_SCAN {
            self.last_full_scan = now;
            self.dirty.extend(self.own.iter().copied());
        }
        if !self.pending_scan && self.dirty.is_empty() && now < self.next_poll {
            return;
        }
        if !self.pending_scan {
            let mut pop = Cmd::new();
            pop.arg("SPOP")
                .arg(self.keys.bell(self.config.node))
                .arg(4096);
            let Some(conn) = self.conn.as_mut() else {
                return;
            };
            let t = Instant::now();
            let r = conn.one(&pop);
            self.count_call(t);
            match r {
                Ok(Value::Array(items)) | Ok(Value::Set(items)) => {
                    // A ring: poll every turn again; silence: back off.
                    self.poll_gap = if items.is_empty() {
                        (self.poll_gap * 2).min(MAX_POLL_GAP)
                    } else {
                        TURN
                    };
                    self.next_poll = now + self.poll_gap;
                    for v in items {
                        if let Some(p) = value_u32(&v) {
                            if self.table.owner(p) == self.config.node {
                                self.dirty.insert(p);
                            }
                        }
                    }
                }
                Ok(_) => {
                    self.poll_gap = (self.poll_gap * 2).min(MAX_POLL_GAP);
                    self.next_poll = now + self.poll_gap;
                }
                Err(e) => {
                    self.failed(&e);
                    return;
                }
            }
        }
        if self.dirty.is_empty() {
            return;
        }
        let parts: Vec<u32> = self.dirty.iter().copied().take(READS_PER_CALL).collect();
        let consumer = Keys::consumer(self.config.node);
        let cmds: Vec<Cmd> = parts
            .iter()
            .map(|&p| {
                let mut c = Cmd::new();
                c.arg("XREADGROUP")
                    .arg("GROUP")
                    .arg(GROUP)
                    .arg(&consumer)
                    .arg("COUNT")
                    .arg(READ_COUNT)
                    .arg("STREAMS")
                    .arg(self.keys.stream(p));
                if self.pending_scan {
                    c.arg(self.pending_after.get(&p).map_or("0", String::as_str));
                } else {
                    c.arg(">");
                }
                c
            })
            .collect();
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        let t = Instant::now();
        let r = conn.run(&cmds);
        self.count_call(t);
        let replies = match r {
            Ok(r) => r,
            Err(e) => {
                self.failed(&e);
                return;
            }
        };
        for (p, reply) in parts.into_iter().zip(replies) {
            let entries = match reply {
                Ok(v) => stream_entries(&v),
                Err(e) => {
                    if e.to_string().contains("NOGROUP") {
                        // The stream went (a Redis restart without persistence).
                        self.groups_ready = false;
                    }
                    tracing::warn!(partition = p, error = %e, "farm: XREADGROUP failed");
                    continue;
                }
            };
            if entries.len() < READ_COUNT {
                self.dirty.remove(&p);
            }
            if self.pending_scan {
                if let Some((last, _)) = entries.last() {
                    self.pending_after.insert(p, last.clone());
                }
            }
            for (id, payload) in entries {
                if self.pending_scan && self.holds_entry(p, &id) {
                    // Re-read after an outage: already received, not yet acknowledged.
                    continue;
                }
                self.receive(p, id, payload.as_deref());
            }
        }
        if self.pending_scan && self.dirty.is_empty() {
            // Own pending entries all re-read: from now on, new ones.
            self.pending_scan = false;
            self.pending_after.clear();
            self.dirty.extend(self.own.iter().copied());
        }
        if !self.groups_ready {
            self.conn = None;
        }
    }

    /// Whether entry `id` of `partition` was received and is not acknowledged yet.
    fn holds_entry(&self, partition: u32, id: &str) -> bool {
        self.delivered
            .iter()
            .chain(&self.in_cut)
            .chain(&self.ack_due)
            .any(|(p, i)| *p == partition && i == id)
    }

    /// One received entry: decode, hold each link for its shard. The entry is
    /// acknowledged after the next committed checkpoint, whatever it held (a bad entry
    /// too: it is logged and skipped, not re-read).
    pub(super) fn receive(&mut self, partition: u32, id: String, payload: Option<&[u8]>) {
        if self.delivered.is_empty() {
            self.oldest_unacked = Some(Instant::now());
        }
        self.delivered.push((partition, id.clone()));
        self.bump();
        let Some(payload) = payload else {
            // An entry deleted after it was delivered: nothing to take.
            return;
        };
        let entry = match Entry::decode(payload) {
            Ok(e) => e,
            Err(e) => {
                self.counters.bad_entries.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(partition, id = %id, error = %e, bytes = payload.len(), "farm: bad stream entry skipped");
                return;
            }
        };
        self.counters
            .batches_received
            .fetch_add(1, Ordering::Relaxed);
        self.counters
            .links_received
            .fetch_add(entry.links.len() as u64, Ordering::Relaxed);
        for link in entry.links {
            self.hold_for_shard(link);
        }
        self.deliver_held();
    }

    /// A received link goes to the shard that owns its host, as the engine routes a
    /// URL ([`crate::routing::host_key`], [`crate::routing::shard_of`]): that shard's
    /// core tests and admits it (`Core::on_inbound`), the one admission every link
    /// passes. Only what the bus must know is done here: the URL parses (a link that
    /// does not is a bad entry's) and has a host.
    pub(super) fn hold_for_shard(&mut self, link: WireLink) {
        let Ok(url) = Url::parse(&link.url) else {
            self.counters.bad_entries.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(url = %link.url, "farm: received link does not parse: skipped");
            return;
        };
        let Some(host) = crate::routing::host_key(&url) else {
            return;
        };
        let shard = crate::routing::shard_of(&host, self.received.len());
        if let Some(h) = self.held.get_mut(shard) {
            h.push(InboundLink {
                url,
                host,
                // An empty `via` is a URL handed to the sending node by `trawl add`.
                via: (!link.via.is_empty()).then_some(link.via),
                hops: link.hops,
                grant: link.grant,
            });
        }
    }

    /// Hands held links to their shards; a full channel keeps them for later. Each
    /// link counts outstanding from the moment its shard may see it until its core has
    /// admitted it, so the node never looks idle with links on their way in.
    pub(super) fn deliver_held(&mut self) {
        for (i, held) in self.held.iter_mut().enumerate() {
            if held.is_empty() {
                continue;
            }
            let Some(tx) = self.received.get(i) else {
                continue;
            };
            let n = held.len() as u64;
            self.shared.outstanding().fetch_add(n, Ordering::AcqRel);
            match tx.try_send(std::mem::take(held)) {
                Ok(()) => {
                    if let Some(w) = self.wakers.get(i) {
                        let _ = w.wake();
                    }
                }
                Err(TrySendError::Full(b)) => {
                    self.shared.outstanding().fetch_sub(n, Ordering::AcqRel);
                    *held = b;
                }
                Err(TrySendError::Disconnected(_)) => {
                    // The shard has ended (the crawl is over); the entries stay
                    // unacknowledged and are read again by a resume.
                    self.shared.outstanding().fetch_sub(n, Ordering::AcqRel);
                }
            }
        }
    }
}
