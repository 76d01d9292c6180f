//! Ending a farm, sans-IO: the quiescence detector. When is every node idle with no
//! link in flight anywhere?
//!
//! Each node publishes its [`NodeState`] under a key that expires unless refreshed
//! (a heartbeat), with an `activity` counter it bumps whenever it does anything (sends
//! or receives links, or starts work again). A node calls itself idle only when it has
//! nothing queued or in flight, nothing waiting to be sent, every received entry
//! acknowledged, and a checkpoint taken since its last activity (so a `kill -9` and a
//! resume bring it back idle, not to older work).
//!
//! A [`Detector`] takes snapshots: all node states (one `MGET`), *then* the length of
//! every partition stream. The farm is finished when two consecutive snapshots are
//! quiet (every node present and idle, every stream empty) with the same activity
//! counters. Why this is safe against a slow node: a node idle with the same counter
//! in both snapshots was idle for the whole time between its two readings, and an idle
//! node adds nothing to a stream (it has nothing to send) and removes nothing (it has
//! nothing unacknowledged). Every stream length of the first snapshot was read inside
//! that window (after all the first state readings, before all the second ones), so
//! the streams were empty while no node could change them, and no node had work: the
//! farm was quiescent at that moment, and stays so. A slow node (a long GC-free pause,
//! a stopped process) either keeps its counter and its idleness — then it did nothing —
//! or its key expires and it counts as busy. A dead node counts as busy until it is
//! resumed; the others wait for it (`docs/farm.md`, "Ending").

use serde::{Deserialize, Serialize};

/// What a node publishes (as JSON) for the others' snapshots and `trawl farm status`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeState {
    pub node: u32,
    /// Nothing to do and nothing owed to anyone (see the module docs).
    pub idle: bool,
    /// The node saw the farm finish and exited.
    pub done: bool,
    /// Bumped on every send, receive and return to work.
    pub activity: u64,
    pub links_sent: u64,
    pub links_received: u64,
    pub batches_sent: u64,
    pub batches_received: u64,
    /// Received entries not yet acknowledged (waiting for a checkpoint).
    pub unacked_entries: u64,
    /// Outgoing links waiting (Redis unreachable, or an owner's stream full).
    pub spilled_urls: u64,
    pub pages: u64,
    pub outstanding: u64,
    pub unix_ms: u64,
}

/// One snapshot: every node's state (`None`: missing or expired) and the total number
/// of entries in all partition streams, read after the states.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub nodes: Vec<Option<NodeState>>,
    pub stream_entries: u64,
}

impl Snapshot {
    /// The activity counters if this snapshot is quiet: every node present and idle
    /// (or done), every stream empty.
    pub fn quiet(&self) -> Option<Vec<u64>> {
        if self.stream_entries != 0 {
            return None;
        }
        self.nodes
            .iter()
            .map(|n| match n {
                Some(s) if s.idle || s.done => Some(s.activity),
                _ => None,
            })
            .collect()
    }
}

/// Two consecutive quiet snapshots with the same counters end the farm.
#[derive(Debug, Default)]
pub struct Detector {
    previous: Option<Vec<u64>>,
}

impl Detector {
    /// Feeds the next snapshot; true once the farm is finished.
    pub fn observe(&mut self, snap: &Snapshot) -> bool {
        match snap.quiet() {
            Some(counters) => {
                let done = self.previous.as_ref() == Some(&counters);
                self.previous = Some(counters);
                done
            }
            None => {
                self.previous = None;
                false
            }
        }
    }

    /// Forgets the last quiet snapshot (this node did something since).
    pub fn reset(&mut self) {
        self.previous = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(node: u32, idle: bool, activity: u64) -> Option<NodeState> {
        Some(NodeState {
            node,
            idle,
            activity,
            ..NodeState::default()
        })
    }

    fn snap(nodes: Vec<Option<NodeState>>, stream_entries: u64) -> Snapshot {
        Snapshot {
            nodes,
            stream_entries,
        }
    }

    #[test]
    fn two_identical_quiet_snapshots_end_the_farm() {
        let mut d = Detector::default();
        let s = snap(vec![state(0, true, 4), state(1, true, 9)], 0);
        assert!(!d.observe(&s));
        assert!(d.observe(&s));
    }

    #[test]
    fn activity_between_snapshots_is_not_quiescence() {
        let mut d = Detector::default();
        assert!(!d.observe(&snap(vec![state(0, true, 4), state(1, true, 9)], 0)));
        // Node 1 received links and went idle again in between: its counter moved.
        assert!(!d.observe(&snap(vec![state(0, true, 4), state(1, true, 11)], 0)));
        assert!(d.observe(&snap(vec![state(0, true, 4), state(1, true, 11)], 0)));
    }

    #[test]
    fn a_busy_missing_or_expired_node_or_a_full_stream_blocks_the_end() {
        let mut d = Detector::default();
        let busy = snap(vec![state(0, true, 1), state(1, false, 2)], 0);
        let missing = snap(vec![state(0, true, 1), None], 0);
        let in_flight = snap(vec![state(0, true, 1), state(1, true, 2)], 3);
        for s in [&busy, &missing, &in_flight] {
            assert!(!d.observe(s));
            assert!(!d.observe(s));
        }
        // A quiet snapshot after a busy one is only the first of two.
        let quiet = snap(vec![state(0, true, 1), state(1, true, 2)], 0);
        assert!(!d.observe(&quiet));
        assert!(!d.observe(&missing));
        assert!(!d.observe(&quiet));
        assert!(d.observe(&quiet));
    }

    #[test]
    fn a_done_node_counts_as_idle() {
        let mut d = Detector::default();
        let mut done = state(1, false, 7);
        if let Some(s) = done.as_mut() {
            s.done = true;
        }
        let s = snap(vec![state(0, true, 1), done], 0);
        assert!(!d.observe(&s));
        assert!(d.observe(&s));
    }
}
