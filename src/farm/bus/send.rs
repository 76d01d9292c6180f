//! The bus's sending half: outgoing links into the spill, pipelined `XADD`s to the
//! owners' partition streams with back-pressure, and acknowledgements after a commit.

use super::*;

impl Bus {
    pub(super) fn take_outgoing(&mut self) {
        while let Ok(b) = self.out_rx.try_recv() {
            self.push_outgoing(b);
        }
    }

    pub(super) fn push_outgoing(&mut self, batch: OutBatch) {
        if self.pending_since.is_none() && !batch.is_empty() {
            self.pending_since = Some(Instant::now());
        }
        for (p, l) in batch {
            if let Err(e) = self.spill.push(p, l) {
                tracing::warn!(error = %e, "farm spill file write failed; holding in RAM");
            }
        }
    }

    pub(super) fn ensure_conn(&mut self, now: Instant) {
        if self.conn.is_some() || now < self.next_connect {
            return;
        }
        let t = Instant::now();
        let opened = Conn::open(&self.config.redis, self.config.cluster);
        self.count_call(t);
        match opened {
            Ok(c) => {
                self.conn = Some(c);
                self.backoff = Duration::from_millis(100);
                if !self.groups_ready {
                    self.create_groups();
                }
                if self.conn.is_some() {
                    if self.down_since.take().is_some() || self.warned_down {
                        tracing::warn!("farm: Redis reachable again");
                    }
                    self.warned_down = false;
                    // Entries may have arrived while we could not read.
                    self.dirty.extend(self.own.iter().copied());
                }
            }
            Err(e) => self.failed(&e),
        }
    }

    /// Creates the consumer group of each own partition (idempotent), and records
    /// the farm's settings (the first node's win; a node that disagrees stops).
    pub(super) fn create_groups(&mut self) {
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        let mut settings = format!(
            "nodes={} partitions={} by={}",
            self.config.nodes,
            self.config.partitions,
            self.config.partition_by.name()
        );
        if let Some(routes) = &self.config.egress {
            settings.push_str(" routes=");
            settings.push_str(routes);
        }
        let mut set = Cmd::new();
        set.arg("SET")
            .arg(self.keys.settings())
            .arg(&settings)
            .arg("NX")
            .arg("GET");
        match conn.one(&set) {
            Ok(Value::BulkString(b)) if b != settings.as_bytes() => {
                let msg = format!(
                    "farm settings differ from the farm's ({} in Redis, {settings} here): every node needs the same --farm-nodes, --farm-partitions and --farm-partition-by, and the same proxy routes (--proxy, --proxy-rules, the proxy environment) and number of --bind-address",
                    String::from_utf8_lossy(&b)
                );
                tracing::error!("{msg}");
                if let Ok(mut f) = self.flags.fatal.lock() {
                    *f = Some(msg);
                }
                self.shared.fail();
            }
            Ok(_) => {}
            Err(e) => {
                self.failed(&e);
                return;
            }
        }
        let cmds: Vec<Cmd> = self
            .own
            .iter()
            .map(|&p| {
                let mut c = Cmd::new();
                c.arg("XGROUP")
                    .arg("CREATE")
                    .arg(self.keys.stream(p))
                    .arg(GROUP)
                    .arg("0")
                    .arg("MKSTREAM");
                c
            })
            .collect();
        // One at a time on a cluster: its pipeline fails whole on one BUSYGROUP.
        let cluster = self.config.cluster;
        for chunk in cmds.chunks(if cluster { 1 } else { 512 }) {
            let Some(conn) = self.conn.as_mut() else {
                return;
            };
            let t = Instant::now();
            let r = if cluster {
                chunk
                    .first()
                    .map_or(Ok(Vec::new()), |c| conn.one(c).map(|v| vec![Ok(v)]))
            } else {
                conn.run(chunk)
            };
            self.count_call(t);
            match r {
                Ok(_) => {}
                Err(e) if e.to_string().contains("BUSYGROUP") => {}
                Err(e) => {
                    self.failed(&e);
                    return;
                }
            }
        }
        self.groups_ready = true;
    }

    /// Whether waiting links should go now (see [`LINGER`]).
    pub(super) fn send_due(&self, now: Instant) -> bool {
        let Some(since) = self.pending_since else {
            return false;
        };
        now >= since + LINGER
            || self.spill.urls() >= self.config.batch_urls as u64
            || self.flags.locally_idle.load(Ordering::Acquire)
            || self.cutting
    }

    /// Sends waiting links: XADD + XLEN + SADD doorbell per batch, one pipeline.
    pub(super) fn send(&mut self) {
        if self.spill.is_empty() {
            self.pending_since = None;
        } else {
            // Whatever stays (a full stream, a failure) waits another linger at most.
            self.pending_since = Some(Instant::now());
        }
        let max = self.config.stream_max_entries;
        loop {
            let lens = &self.stream_len;
            let counters = &self.counters;
            let batches = self.spill.take(self.config.batch_urls, |p| {
                let full = lens.get(&p).is_some_and(|&n| n >= max);
                if full {
                    counters.stream_full_waits.fetch_add(1, Ordering::Relaxed);
                }
                !full
            });
            if batches.is_empty() {
                break;
            }
            let mut cmds = Vec::with_capacity(batches.len() * 3);
            for (p, links) in &batches {
                let entry = Entry {
                    from_node: self.config.node,
                    partition: *p,
                    links: links.clone(),
                };
                let key = self.keys.stream(*p);
                let mut add = Cmd::new();
                add.arg("XADD")
                    .arg(&key)
                    .arg("*")
                    .arg("b")
                    .arg(entry.encode());
                let mut len = Cmd::new();
                len.arg("XLEN").arg(&key);
                let mut bell = Cmd::new();
                bell.arg("SADD")
                    .arg(self.keys.bell(self.table.owner(*p)))
                    .arg(*p);
                cmds.extend([add, len, bell]);
            }
            let Some(conn) = self.conn.as_mut() else {
                self.spill.put_back(batches);
                return;
            };
            let t = Instant::now();
            let r = conn.run(&cmds);
            self.count_call(t);
            match r {
                Ok(replies) => {
                    let mut failed = Vec::new();
                    for ((p, links), reply) in batches.into_iter().zip(replies.chunks(3)) {
                        let added = reply.first().is_some_and(Result::is_ok);
                        if let Some(Ok(Value::Int(n))) = reply.get(1) {
                            self.stream_len.insert(p, u64::try_from(*n).unwrap_or(0));
                        }
                        if added {
                            self.counters.batches_sent.fetch_add(1, Ordering::Relaxed);
                            self.counters
                                .links_sent
                                .fetch_add(links.len() as u64, Ordering::Relaxed);
                        } else {
                            failed.push((p, links));
                        }
                    }
                    self.bump();
                    if !failed.is_empty() {
                        tracing::warn!(batches = failed.len(), "farm: XADD refused; retrying");
                        self.spill.put_back(failed);
                        break;
                    }
                }
                Err(e) => {
                    self.spill.put_back(batches);
                    self.failed(&e);
                    return;
                }
            }
        }
        // Streams at the cap: re-measure them now and then (their owner drains them).
        if self.stream_len.values().any(|&n| n >= max) {
            let full: Vec<u32> = self
                .stream_len
                .iter()
                .filter(|(_, &n)| n >= max)
                .map(|(&p, _)| p)
                .collect();
            let cmds: Vec<Cmd> = full
                .iter()
                .map(|&p| {
                    let mut c = Cmd::new();
                    c.arg("XLEN").arg(self.keys.stream(p));
                    c
                })
                .collect();
            if let Some(conn) = self.conn.as_mut() {
                let t = Instant::now();
                let r = conn.run(&cmds);
                self.count_call(t);
                match r {
                    Ok(replies) => {
                        for (p, v) in full.into_iter().zip(replies) {
                            if let Ok(Value::Int(n)) = v {
                                self.stream_len.insert(p, u64::try_from(n).unwrap_or(0));
                            }
                        }
                    }
                    Err(e) => self.failed(&e),
                }
            }
        }
    }

    /// XACK + XDEL of the entries a committed checkpoint holds: they leave Redis.
    pub(super) fn acknowledge(&mut self) {
        if self.ack_due.is_empty() {
            return;
        }
        let mut by: HashMap<u32, Vec<String>> = HashMap::new();
        for (p, id) in &self.ack_due {
            by.entry(*p).or_default().push(id.clone());
        }
        let mut cmds = Vec::new();
        for (p, ids) in &by {
            let key = self.keys.stream(*p);
            let mut ack = Cmd::new();
            ack.arg("XACK").arg(&key).arg(GROUP).arg(ids);
            let mut del = Cmd::new();
            del.arg("XDEL").arg(&key).arg(ids);
            cmds.push(ack);
            cmds.push(del);
        }
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        let t = Instant::now();
        let r = conn.run(&cmds);
        self.count_call(t);
        match r {
            Ok(_) => {
                self.counters
                    .acked_entries
                    .fetch_add(self.ack_due.len() as u64, Ordering::Relaxed);
                self.ack_due.clear();
            }
            Err(e) => self.failed(&e),
        }
    }
}
