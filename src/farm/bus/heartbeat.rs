//! The bus's heartbeat, its part in ending the farm: whether this node is idle, the
//! node state it publishes under an expiring key, the termination snapshots it takes
//! for the quiescence detector (`farm/quiescence.rs`), and Redis outages
//! (`--farm-redis-timeout-secs`).

use super::*;

impl Bus {
    /// Decides whether this node is idle, and asks for a checkpoint when one would
    /// acknowledge entries or record idleness.
    pub(super) fn watch_idle(&mut self, now: Instant) {
        let locally_idle = self.flags.locally_idle.load(Ordering::Acquire);
        if !locally_idle && self.was_locally_idle {
            self.bump();
        }
        self.was_locally_idle = locally_idle;
        let quiet = locally_idle
            && self.spill.is_empty()
            && self.out_rx.is_empty()
            && self.held_empty()
            && !self.cutting;
        if !quiet {
            self.idle_since = None;
        } else if self.idle_since.is_none() {
            self.idle_since = Some(now);
        }
        let gap_ok = now >= self.last_checkpoint_ask + MIN_CHECKPOINT_GAP;
        let idle_long = self
            .idle_since
            .is_some_and(|t| now >= t + IDLE_CHECKPOINT_AFTER);
        let owes = !self.checkpointed_idle || !self.delivered.is_empty();
        let ack_late = self
            .oldest_unacked
            .is_some_and(|t| now >= t + self.config.ack_interval)
            && !self.delivered.is_empty();
        if gap_ok && !self.cutting && ((idle_long && owes) || ack_late) {
            self.last_checkpoint_ask = now;
            if ack_late {
                self.oldest_unacked = Some(now);
            }
            self.flags.wants_checkpoint.store(true, Ordering::Release);
        }
    }

    pub(super) fn is_idle(&self) -> bool {
        self.flags.locally_idle.load(Ordering::Acquire)
            && self.checkpointed_idle
            && self.spill.is_empty()
            && self.out_rx.is_empty()
            && self.held_empty()
            && self.delivered.is_empty()
            && self.in_cut.is_empty()
            && self.ack_due.is_empty()
            && !self.cutting
    }

    pub(super) fn bump(&mut self) {
        self.activity += 1;
        self.checkpointed_idle = false;
        self.detector.reset();
    }

    pub(super) fn state(&self, done: bool) -> NodeState {
        let c = &self.counters;
        let get = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        NodeState {
            node: self.config.node,
            idle: self.is_idle(),
            done,
            activity: self.activity,
            links_sent: get(&c.links_sent),
            links_received: get(&c.links_received),
            batches_sent: get(&c.batches_sent),
            batches_received: get(&c.batches_received),
            unacked_entries: (self.delivered.len() + self.in_cut.len() + self.ack_due.len()) as u64,
            spilled_urls: self.spill.urls(),
            pages: self.shared.pages(),
            outstanding: self.shared.outstanding().load(Ordering::Relaxed),
            unix_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
        }
    }

    /// Writes this node's state; a finished node's state does not expire (the others
    /// may still be taking their last snapshots).
    pub(super) fn publish_state(&mut self, done: bool) {
        let state = self.state(done);
        let Ok(json) = serde_json::to_string(&state) else {
            return;
        };
        let mut set = Cmd::new();
        set.arg("SET")
            .arg(self.keys.node(self.config.node))
            .arg(json);
        if !done {
            set.arg("PX").arg(STATE_TTL_MS);
        }
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        let t = Instant::now();
        let r = conn.one(&set);
        self.count_call(t);
        if let Err(e) = r {
            self.failed(&e);
        }
    }

    pub(super) fn heartbeat_and_snapshot(&mut self) {
        self.publish_state(false);
        if !self.is_idle() || self.flags.finished.load(Ordering::Acquire) {
            return;
        }
        let Some(snap) = self.snapshot() else {
            return;
        };
        if self.detector.observe(&snap) {
            tracing::info!(
                node = self.config.node,
                "farm finished: every node idle, no link in flight"
            );
            self.flags.finished.store(true, Ordering::Release);
        }
    }

    /// Reads every node's state, then every partition stream's length.
    pub(super) fn snapshot(&mut self) -> Option<Snapshot> {
        let nodes = self.config.nodes;
        let partitions = self.table.len();
        let mut mget = Cmd::new();
        mget.arg("MGET");
        for n in 0..nodes {
            mget.arg(self.keys.node(n));
        }
        let conn = self.conn.as_mut()?;
        let t = Instant::now();
        let r = conn.one(&mget);
        self.count_call(t);
        let states = match r {
            Ok(Value::Array(vs)) => vs
                .iter()
                .map(|v| match v {
                    Value::BulkString(b) => serde_json::from_slice::<NodeState>(b).ok(),
                    _ => None,
                })
                .collect::<Vec<_>>(),
            Ok(_) => return None,
            Err(e) => {
                self.failed(&e);
                return None;
            }
        };
        let cmds: Vec<Cmd> = (0..partitions)
            .map(|p| {
                let mut c = Cmd::new();
                c.arg("XLEN").arg(self.keys.stream(p));
                c
            })
            .collect();
        let conn = self.conn.as_mut()?;
        let t = Instant::now();
        let r = conn.run(&cmds);
        self.count_call(t);
        let mut stream_entries = 0u64;
        match r {
            Ok(replies) => {
                for v in replies {
                    match v {
                        Ok(Value::Int(n)) => stream_entries += u64::try_from(n).unwrap_or(0),
                        _ => return None,
                    }
                }
            }
            Err(e) => {
                self.failed(&e);
                return None;
            }
        }
        Some(Snapshot {
            nodes: states,
            stream_entries,
        })
    }

    pub(super) fn count_call(&self, since: Instant) {
        self.counters.round_trips.fetch_add(1, Ordering::Relaxed);
        self.counters
            .redis_wait_ns
            .fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }

    /// A Redis call failed: drop the connection, back off, remember since when.
    pub(super) fn failed(&mut self, e: &redis::RedisError) {
        self.counters.redis_errors.fetch_add(1, Ordering::Relaxed);
        let now = Instant::now();
        if self.down_since.is_none() {
            self.down_since = Some(now);
        }
        if !self.warned_down {
            self.warned_down = true;
            tracing::warn!(error = %e, spilled = self.spill.urls(), "farm: Redis unreachable; crawling own partitions, holding outgoing links, retrying");
        }
        self.conn = None;
        // A call cut off by the outage may have been carried out without its reply
        // reaching us: an `XREADGROUP ... >` then moved entries into our pending list
        // that we never saw, and they would sit in the stream for ever (the farm never
        // ends, their links are never crawled). Re-read our pending entries on
        // reconnecting, as after a start.
        self.pending_scan = true;
        self.pending_after.clear();
        self.dirty.extend(self.own.iter().copied());
        self.next_connect = now + self.backoff;
        self.backoff = (self.backoff * 2).min(Duration::from_secs(5));
    }

    pub(super) fn check_down(&mut self, now: Instant) {
        let Some(since) = self.down_since else {
            return;
        };
        if self.conn.is_some() {
            self.down_since = None;
            return;
        }
        if now >= since + self.config.redis_timeout {
            let msg = format!(
                "farm: Redis unreachable for {} s (--farm-redis-timeout-secs): stopping; {} outgoing links are kept in the final checkpoint's outbox",
                self.config.redis_timeout.as_secs(),
                self.spill.urls()
            );
            if let Ok(mut f) = self.flags.fatal.lock() {
                if f.is_none() {
                    tracing::error!("{msg}");
                    *f = Some(msg);
                }
            }
        }
    }

    pub(super) fn publish_gauges(&self) {
        let c = &self.counters;
        c.unacked_entries.store(
            (self.delivered.len() + self.in_cut.len() + self.ack_due.len()) as u64,
            Ordering::Relaxed,
        );
        c.spilled_urls.store(self.spill.urls(), Ordering::Relaxed);
        c.spill_disk_bytes
            .store(self.spill.disk_bytes(), Ordering::Relaxed);
    }
}
