//! The shard's part of a checkpoint (see `docs/architecture.md`, and the
//! coordinator's side in `coordinator.rs`): at the cut it flushes its links to peers
//! and its records to the output thread, waits at the barrier, drains its inbox,
//! waits, dumps its frontier segment, host tallies and robots cache into the
//! checkpoint directory, and waits twice more while the coordinator commits the cut.
//! [`load_tallies`] reads the tallies back on a resume.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::frontier::QueuedUrl;

use super::{Batch, HostTally, Shard};
use crate::engine::CheckpointCut;
use crate::routing::shard_of;

/// The host tallies of a checkpoint directory (`checkpoint::tallies`), routed to
/// their shards. A damaged file is an error naming it.
pub(crate) fn load_tallies(
    dir: &std::path::Path,
    shards: usize,
) -> Result<Vec<HashMap<String, HostTally>>, crate::checkpoint::CheckpointError> {
    let mut out: Vec<HashMap<String, HostTally>> = (0..shards).map(|_| HashMap::new()).collect();
    for row in crate::checkpoint::tallies::read_dir(dir)? {
        let tally = HostTally {
            pages: row.pages,
            consecutive_failures: row.consecutive_failures,
            parked: row.parked,
            ..HostTally::default()
        };
        if let Some(m) = out.get_mut(shard_of(&row.host, shards)) {
            m.insert(row.host, tally);
        }
    }
    Ok(out)
}

impl Shard {
    /// The checkpoint protocol (see `docs/architecture.md`): stop, flush links to
    /// peers, wait; drain the inbox, wait; dump the frontier (with the URLs in flight,
    /// which will be fetched again after a resume), wait; go on.
    pub(super) fn checkpoint(&mut self, cut: &Arc<CheckpointCut>) {
        self.flush_outboxes();
        // A full peer inbox could keep a batch here; the barrier below would then lose
        // it, so push it into our own frontier instead (the host is routed by key on
        // resume, so ownership does not matter for the dump).
        let unsent: Vec<Batch> = self.outboxes.iter_mut().map(std::mem::take).collect();
        self.push_local(unsent.into_iter().flatten());
        // Every record made before the cut reaches the channel before the coordinator
        // asks the output thread for its positions (after barrier 2).
        self.flush_output();
        cut.barrier.wait();
        self.take_inbox();
        self.flush_output();
        cut.barrier.wait();
        let path = cut.dir.join(format!("frontier-{:04}.seg", self.index));
        let result = self.dump_frontier(&path);
        if let Err(e) = result {
            tracing::error!(shard = self.index, error = %e, "checkpoint frontier dump failed");
            cut.failed.store(true, Ordering::Release);
        }
        let path = cut
            .dir
            .join(crate::checkpoint::tallies::file_name(self.index));
        if let Err(e) = self.dump_tallies(&path) {
            tracing::error!(shard = self.index, error = %e, "checkpoint tally dump failed");
            cut.failed.store(true, Ordering::Release);
        }
        // The robots cache is a cache: failing to write it costs refetches after a
        // resume, not correctness, so it does not fail the cut (the partial file goes).
        let path = cut.dir.join(format!("robots-{:04}.bin", self.index));
        let clock = crate::robots::persist::Clock::now();
        if let Err(e) = crate::robots::dump::write_file(&path, self.core.robots_mut(), clock) {
            tracing::warn!(shard = self.index, error = %e, "checkpoint robots dump failed; a resume refetches robots.txt");
            let _ = std::fs::remove_file(&path);
        }
        cut.barrier.wait();
        cut.barrier.wait();
    }

    /// Writes the host tallies (`checkpoint::tallies`). Pages in flight are dumped as
    /// queued URLs, so they are taken off their host's count: the resumed crawl counts
    /// them again when it fetches them.
    fn dump_tallies(
        &self,
        path: &std::path::Path,
    ) -> Result<u64, crate::checkpoint::CheckpointError> {
        let in_flight = self.core.pages_in_flight_by_host();
        let rows = self.core.tallies().iter().map(|(host, t)| {
            let pages = t
                .pages
                .saturating_sub(in_flight.get(host.as_str()).copied().unwrap_or(0));
            crate::checkpoint::tallies::TallyRow {
                host: host.clone(),
                pages,
                consecutive_failures: t.consecutive_failures,
                parked: t.parked,
            }
        });
        crate::checkpoint::tallies::write_file(path, rows)
    }

    /// Writes the URLs a checkpoint keeps ([`Core::checkpoint_queued`]: pages in
    /// flight, then the frontier) into one segment.
    /// Writes the shard's queued URLs to the segment at `path`, but the line's blocks
    /// on disk, whose log files are kept beside it and listed in `frontier-NNNN.line`
    /// (`frontier/kept.rs`), so a checkpoint at width does not copy millions of URLs.
    fn dump_frontier(
        &mut self,
        path: &std::path::Path,
    ) -> Result<u64, crate::frontier::SegmentError> {
        use crate::frontier::kept;
        let dir = path.parent().unwrap_or(std::path::Path::new("."));
        let prefix = format!("frontier-{:04}-line", self.index);
        let mut w = crate::frontier::SegmentWriter::create(path)?;
        let mut err = None;
        let write = |host: &str, item: &QueuedUrl| {
            if err.is_none() {
                if let Err(e) = w.append(host, item) {
                    err = Some(e);
                }
            }
        };
        let refs = match self.core.checkpoint_queued(dir, &prefix, write) {
            Ok(refs) => refs,
            Err(e) => {
                tracing::error!(error = %e, "frontier listing failed");
                return Err(crate::frontier::SegmentError::Io(std::io::Error::other(
                    e.to_string(),
                )));
            }
        };
        if let Some(e) = err {
            return Err(e);
        }
        if !refs.is_empty() {
            kept::write_refs(&dir.join(kept::line_file_name(self.index)), &refs)?;
        }
        let n = w.records();
        w.sync()?;
        Ok(n)
    }
}

/// The shard's side of the checkpoint barriers, with the coordinator's side played by
/// a thread: no socket (the fetcher's event loop is created, never used).
#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, AtomicU64};
    use std::sync::Barrier;
    use std::time::Instant;

    use crossbeam_channel::{bounded, unbounded};

    use super::*;
    use crate::engine::inbox::{Added, InboxWaker};
    use crate::engine::shard::ShardParts;
    use crate::engine::{CrawlConfig, Shared};
    use crate::fetch::FetchLimits;
    use crate::frontier::{Frontier, FrontierConfig, SegmentReader};
    use crate::net::{Fetcher, FetcherConfig};
    use crate::routing::InboundBatch;
    use crate::seen::{Backing, ContentSeen, SeenConfig, SeenSet};

    fn item(url: &str) -> QueuedUrl {
        QueuedUrl {
            url: url.to_owned(),
            via: Some("http://a.test/".to_owned()),
            hops: "L".to_owned(),
            attempts: 0,
        }
    }

    #[test]
    fn a_checkpoint_dumps_queued_unsent_inbox_received_and_added_urls_between_its_barriers() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut config = CrawlConfig::new(dir.path().join("out"));
        config.shards = 2;
        config.warc = false;
        let seen_config = SeenConfig {
            backing: Backing::Memory,
            ..SeenConfig::new(10_000, 1e-6)
        };
        let shared = Arc::new(Shared::from_parts(
            config,
            FetchLimits::default(),
            SeenSet::create_with(dir.path().join("seen.bits"), &seen_config).expect("seen"),
            ContentSeen::create_backed(dir.path().join("fp.bits"), 1_000, 1e-6, Backing::Memory)
                .expect("fingerprints"),
            None,
            Arc::new(AtomicU64::new(0)),
        ));
        let mut frontier =
            Frontier::new(FrontierConfig::new(dir.path().join("frontier"))).expect("frontier");
        frontier
            .push(
                "http://a.test",
                item("http://a.test/queued"),
                Instant::now(),
            )
            .expect("push");
        let fetcher = Fetcher::new(FetcherConfig::default()).expect("fetcher");
        let own_waker = Arc::new(InboxWaker::new(fetcher.waker()));
        let peer_poll = mio::Poll::new().expect("poll");
        let peer_waker = Arc::new(InboxWaker::new(Arc::new(
            mio::Waker::new(peer_poll.registry(), mio::Token(0)).expect("waker"),
        )));
        let (own_tx, own_rx) = bounded::<Batch>(4);
        // The peer's inbox is full: a batch routed to it stays in our outbox.
        let (peer_tx, _peer_rx) = bounded::<Batch>(1);
        peer_tx.send(Vec::new()).expect("fill");
        let (output_tx, _output_rx) = unbounded();
        let (_control_tx, control_rx) = unbounded();
        let (received_tx, received_rx) = bounded::<InboundBatch>(4);
        let (added_tx, added_rx) = bounded::<Added>(4);
        let mut shard = Shard::new(ShardParts {
            index: 0,
            shared: Arc::clone(&shared),
            frontier,
            fetcher,
            filter: Arc::new(crate::url::UrlFilter::new(Default::default(), &[]).expect("filter")),
            inbox: own_rx,
            received: received_rx,
            added: added_rx,
            peers: vec![own_tx.clone(), peer_tx],
            peer_wakers: vec![own_waker, peer_waker],
            output: output_tx,
            control: control_rx,
            tallies: HashMap::new(),
            robots: crate::engine::core::robots_cache(&shared.core.settings, 0),
            warc: None,
        });
        shard.route(1, "http://b.test".to_owned(), item("http://b.test/unsent"));
        // A peer's batch that reached our inbox before barrier 1.
        own_tx
            .send(vec![(
                "http://c.test".to_owned(),
                item("http://c.test/inbox"),
            )])
            .expect("send");
        // A gzipped sitemap another farm node sent before barrier 1, for a host of this
        // shard: admitted at the cut (the sitemap hop exempts its `.gz`), so dumped.
        let received_host = ["d.test", "e.test", "f.test", "g.test", "h.test"]
            .iter()
            .map(|h| format!("http://{h}"))
            .find(|h| shard_of(h, 2) == 0)
            .expect("a host of shard 0");
        let received_url = format!("{received_host}/sitemap.xml.gz");
        shared.core.outstanding.add(1);
        received_tx
            .send(vec![crate::routing::InboundLink {
                url: url::Url::parse(&received_url).expect("url"),
                host: received_host.clone(),
                via: Some("http://a.test/robots.txt".to_owned()),
                hops: "S".to_owned(),
                grant: vec!["http://a.test".to_owned()],
            }])
            .expect("send");
        // A URL `trawl add` handed over, which the coordinator sent before barrier 1
        // (counted outstanding on its way): admitted at the cut, so dumped, and its
        // batch file may go once this checkpoint commits.
        let added_url = format!("{received_host}/added");
        shared.core.outstanding.add(1);
        added_tx.send(vec![added_url.clone()]).expect("send");
        let cp_dir = dir.path().join("cp");
        std::fs::create_dir_all(&cp_dir).expect("cp dir");
        let cut = Arc::new(CheckpointCut {
            barrier: Barrier::new(2),
            dir: cp_dir.clone(),
            failed: AtomicBool::new(false),
        });
        let coordinator = {
            let cut = Arc::clone(&cut);
            std::thread::spawn(move || {
                for _ in 0..4 {
                    cut.barrier.wait();
                }
            })
        };
        shard.checkpoint(&cut);
        coordinator.join().expect("coordinator");
        assert!(!cut.failed.load(Ordering::Acquire));
        let mut r = SegmentReader::open(&cp_dir.join("frontier-0000.seg")).expect("segment");
        let mut urls = Vec::new();
        while let Some(rec) = r.next_record().expect("record") {
            urls.push((rec.host, rec.item.url));
        }
        urls.sort();
        assert_eq!(
            urls,
            vec![
                (
                    "http://a.test".to_owned(),
                    "http://a.test/queued".to_owned()
                ),
                (
                    "http://b.test".to_owned(),
                    "http://b.test/unsent".to_owned()
                ),
                ("http://c.test".to_owned(), "http://c.test/inbox".to_owned()),
                (received_host.clone(), added_url),
                (received_host, received_url),
            ]
        );
        assert!(cp_dir
            .join(crate::checkpoint::tallies::file_name(0))
            .exists());
        assert!(cp_dir.join("robots-0000.bin").exists());
    }
}
