//! The host table: one small [`Host`] per known host, in slots addressed by a `u32`
//! id, found by name through a hash index of ids (so the name is stored once).

use std::collections::VecDeque;
use std::time::Instant;

use hashbrown::HashTable;

use super::block::Buffer;
use super::store::BlockRef;
use super::QueuedUrl;

pub(super) type HostId = u32;

/// One host's queue and schedule state. The queue is, in order: `ram` (its head),
/// then `spill` (blocks on disk, oldest first, then the partial buffer).
#[derive(Debug)]
pub(super) struct Host {
    pub name: Box<str>,
    pub ram: VecDeque<QueuedUrl>,
    /// The rest of the queue, beyond RAM; `None` when there is none (most hosts),
    /// so a host without a backlog pays 8 bytes for it.
    pub spill: Option<Box<Spill>>,
    pub eligible_at: Instant,
    /// Generation of this host's live heap entry; older entries are skipped (lazy
    /// deletion).
    pub heap_gen: u64,
    pub in_flight: u32,
    pub on_heap: bool,
    /// The engine holds the queue (robots.txt being fetched) until `release`.
    pub held: bool,
    /// On the frontier's idle list (at most once).
    pub idle_listed: bool,
    /// In the active set: on the schedule when servable. An inactive host with a
    /// queue waits in the line (`waiting`) for its activation.
    pub active: bool,
    /// Inactive with a queue, and a marker for it in the line: the marker activates it.
    pub waiting: bool,
    /// URLs taken since its activation (the activation's budget is counted in these).
    pub takes: u16,
    /// Active beyond its address's bound (`address.rs`): goes to the back of the line
    /// at its next turn with nothing in flight.
    pub crowded: bool,
    /// Its server's address as last seen ([`super::address::AddrKey`]; 0: not known).
    pub addr: u64,
}

/// The part of a host's queue beyond its RAM head.
#[derive(Debug, Default)]
pub(super) struct Spill {
    /// Blocks, oldest first; the last `unwritten` wait in the frontier's write batch.
    pub blocks: VecDeque<BlockRef>,
    /// URLs not yet in a block (the newest of the queue), encoded as they came.
    pub pending: Buffer,
    pub unwritten: u32,
}

impl Spill {
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty() && self.pending.is_empty()
    }
}

impl Host {
    pub fn new(name: &str, now: Instant) -> Self {
        Self {
            name: name.into(),
            ram: VecDeque::new(),
            spill: None,
            eligible_at: now,
            heap_gen: 0,
            in_flight: 0,
            on_heap: false,
            held: false,
            idle_listed: false,
            active: false,
            waiting: false,
            takes: 0,
            crowded: false,
            addr: 0,
        }
    }

    /// Whether anything is queued (RAM head, blocks or buffer).
    pub fn has_queue(&self) -> bool {
        !self.ram.is_empty() || self.spill.is_some()
    }

    /// Has something to serve and may be served (active, not held, a fetch slot free).
    pub fn is_servable(&self, max_in_flight: u32) -> bool {
        self.active && !self.held && self.in_flight < max_in_flight && self.has_queue()
    }

    /// Holds nothing and owes nothing: may be forgotten once `now` passed its instant.
    pub fn is_idle(&self, now: Instant) -> bool {
        self.ram.is_empty()
            && self.spill.is_none()
            && self.in_flight == 0
            && !self.held
            && !self.on_heap
            && !self.active
            && !self.waiting
            && self.eligible_at <= now
    }
}

/// Hosts by id and by name.
#[derive(Debug, Default)]
pub(super) struct HostTable {
    slots: Vec<Option<Host>>,
    free: Vec<HostId>,
    index: HashTable<HostId>,
    hasher: ahash::RandomState,
}

impl HostTable {
    fn hash(&self, name: &str) -> u64 {
        self.hasher.hash_one(name)
    }

    pub fn find(&self, name: &str) -> Option<HostId> {
        let slots = &self.slots;
        self.index
            .find(
                self.hash(name),
                |&id| matches!(slots.get(id as usize), Some(Some(h)) if &*h.name == name),
            )
            .copied()
    }

    pub fn get(&self, id: HostId) -> Option<&Host> {
        self.slots.get(id as usize).and_then(Option::as_ref)
    }

    pub fn get_mut(&mut self, id: HostId) -> Option<&mut Host> {
        self.slots.get_mut(id as usize).and_then(Option::as_mut)
    }

    /// Inserts a host not in the table yet.
    pub fn insert(&mut self, host: Host) -> HostId {
        let hash = self.hash(&host.name);
        let id = if let Some(id) = self.free.pop() {
            if let Some(slot) = self.slots.get_mut(id as usize) {
                *slot = Some(host);
            }
            id
        } else {
            self.slots.push(Some(host));
            u32::try_from(self.slots.len() - 1).unwrap_or(u32::MAX)
        };
        let (slots, hasher) = (&self.slots, &self.hasher);
        self.index
            .insert_unique(hash, id, |&i| match slots.get(i as usize) {
                Some(Some(h)) => hasher.hash_one(&*h.name),
                _ => 0,
            });
        id
    }

    pub fn remove(&mut self, id: HostId) -> Option<Host> {
        let name_hash = self.get(id).map(|h| self.hash(&h.name))?;
        if let Ok(entry) = self.index.find_entry(name_hash, |&i| i == id) {
            entry.remove();
        }
        let host = self.slots.get_mut(id as usize).and_then(Option::take);
        self.free.push(id);
        host
    }

    /// Hosts in the table.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Every host with its id.
    pub fn iter(&self) -> impl Iterator<Item = (HostId, &Host)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, h)| Some((u32::try_from(i).ok()?, h.as_ref()?)))
    }

    /// Ids of the slots (live or free), for a scan that mutates hosts.
    pub fn ids(&self) -> std::ops::Range<HostId> {
        0..u32::try_from(self.slots.len()).unwrap_or(u32::MAX)
    }
}
