//! The bus's receiving half: doorbells, `XREADGROUP` over the partitions that rang,
//! and each received link tested, admitted and delivered to its shard's inbox.

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

    /// One received entry: decode, test each link, admit the new ones, hold them for
    /// their shard. The entry is acknowledged after the next committed checkpoint,
    /// whatever it held (a bad entry too: it is logged and skipped, not re-read).
    /// Whether entry `id` of `partition` was received and is not acknowledged yet.
    fn holds_entry(&self, partition: u32, id: &str) -> bool {
        self.delivered
            .iter()
            .chain(&self.in_cut)
            .chain(&self.ack_due)
            .any(|(p, i)| *p == partition && i == id)
    }

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
            self.admit(link);
        }
        self.deliver_held();
    }

    /// The receiver's test and the engine's admission (as a peer shard's link).
    pub(super) fn admit(&mut self, link: WireLink) {
        if self.shared.seen.test_and_set(link.url.as_bytes()) {
            self.counters.links_known.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let Ok(url) = Url::parse(&link.url) else {
            self.counters.bad_entries.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(url = %link.url, "farm: received link does not parse: skipped");
            return;
        };
        if let Err(reason) = self.filter.check(&url, link.hops.len() as u32) {
            let mut rec = LogRecord::new(WarcDate::now(), url.as_str(), Outcome::Filtered);
            rec.via = Some(link.via);
            rec.hops = crate::provenance::HopsPath::try_from(link.hops).unwrap_or_default();
            rec.annotations.push(format!("filter:{}", reason.code()));
            if let Some(h) = &self.shared.handler {
                h.on_outcome(&rec);
            }
            self.shared.count_outcome(rec.outcome);
            self.log.push(OutputRecord::Log(Box::new(rec)));
            return;
        }
        if let Some(handler) = &self.shared.handler {
            if !handler.accept_link(&link.via, &url) {
                return;
            }
        }
        let Some(key) = crate::engine::host_key(&url) else {
            return;
        };
        // An empty `via` is a URL handed to the sending node by `trawl add`: a seed.
        let item = QueuedUrl {
            url: url.into(),
            via: (!link.via.is_empty()).then_some(link.via),
            hops: link.hops,
            attempts: 0,
        };
        self.shared.outstanding.fetch_add(1, Ordering::AcqRel);
        self.shared.discovered.fetch_add(1, Ordering::AcqRel);
        let shard = crate::engine::shard_of(&key, self.inboxes.len());
        if let Some(h) = self.held.get_mut(shard) {
            h.push((key, item));
        }
    }

    /// Hands held links to their shards' inboxes; a full inbox keeps them for later.
    pub(super) fn deliver_held(&mut self) {
        for (i, held) in self.held.iter_mut().enumerate() {
            if held.is_empty() {
                continue;
            }
            let Some(tx) = self.inboxes.get(i) else {
                continue;
            };
            match tx.try_send(std::mem::take(held)) {
                Ok(()) => {
                    if let Some(w) = self.wakers.get(i) {
                        let _ = w.wake();
                    }
                }
                Err(TrySendError::Full(b)) => *held = b,
                Err(TrySendError::Disconnected(b)) => {
                    // The shard has ended (the crawl is over); the entries stay
                    // unacknowledged and are read again by a resume.
                    self.shared
                        .outstanding
                        .fetch_sub(b.len() as u64, Ordering::AcqRel);
                }
            }
        }
    }
}
