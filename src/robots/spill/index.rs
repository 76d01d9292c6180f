//! The RAM index of spilled hosts: 12 bytes a host in a swiss table, so that an
//! inactive host costs at most 32 bytes of RAM however the table happens to be sized.
//!
//! A slot packs 96 bits: 44 bits of the host key's hash and the record's location
//! (11 bits of log file id, 27 bits of byte offset, 14 bits of length in 256-byte
//! units). The key itself is not kept: it is checked against the record read back,
//! so two hosts whose 44-bit hashes agree share one slot and the second to spill
//! takes it (the first's rules are refetched when next needed; at 10 million hosts
//! about three such pairs are expected).
//!
//! Why 12 bytes rather than a `(u64, u64)`: the table holds `buckets * (slot + 1)`
//! bytes with at least 7/16 of its buckets full (it doubles past 7/8), so a host costs
//! at most `(12 + 1) * 16 / 7 = 29.7` bytes with 12-byte slots but 38.9 with 16. The
//! table is shrunk when removals leave it above that bound (see [`Index::remove`]).
//! Sub-tables smaller than 4 KiB are let be, so the bound is 32 bytes a host beyond a
//! fixed 1 MiB ([`FIXED_BYTES`]).

use hashbrown::HashTable;

/// Bits of the key hash kept.
pub const HASH_BITS: u32 = 44;
/// Bits of the log file id: ids `0..BATCH_FILE`; [`BATCH_FILE`] names the batch.
const FILE_BITS: u32 = 11;
/// Bits of a byte offset: files (and batches) stay below 128 MiB.
const OFFSET_BITS: u32 = 27;
/// Bits of a length in [`LEN_UNIT_BYTES`] units (minus one).
const UNITS_BITS: u32 = 14;
/// The file id of a record still in the unwritten batch (offset into the batch).
pub const BATCH_FILE: u16 = (1 << FILE_BITS) - 1;
/// Log file ids in use at most.
pub const MAX_FILES: u16 = BATCH_FILE;
/// The largest byte offset a location can name.
pub const MAX_OFFSET: u64 = (1 << OFFSET_BITS) - 1;
/// Lengths are kept rounded up to this; a read takes the rounded length (or up to
/// the end of the file) and the frame inside says where the record ends.
pub const LEN_UNIT_BYTES: usize = 256;
/// The longest record (frame included) a location can name: 4 MiB.
pub const MAX_FRAME_BYTES: usize = LEN_UNIT_BYTES << UNITS_BITS;
/// RAM per indexed host the table never exceeds (beyond a small fixed floor).
pub const MAX_BYTES_PER_HOST: usize = 32;
/// Sub-table bytes below which the per-host bound is not enforced by shrinking (so
/// the bound holds beyond a fixed 1 MiB over all sub-tables).
const SHRINK_FLOOR_BYTES: usize = 4 << 10;
/// RAM the index may hold beyond [`MAX_BYTES_PER_HOST`] a host: small sub-tables.
#[cfg(test)]
pub const FIXED_BYTES: usize = 256 * SHRINK_FLOOR_BYTES;

/// Where a spilled record lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loc {
    /// Log file id, or [`BATCH_FILE`].
    pub file: u16,
    /// Byte offset of the record's frame in the file (or batch).
    pub offset: u32,
    /// Bytes to read: the frame's length rounded up to [`LEN_UNIT_BYTES`].
    pub read_bytes: u32,
}

impl Loc {
    /// The location of a frame of `frame_bytes` at `offset` of `file`; `None` if the
    /// packing cannot name it (the caller keeps such a record out of the tier).
    pub fn new(file: u16, offset: u64, frame_bytes: usize) -> Option<Loc> {
        if file > BATCH_FILE || offset > MAX_OFFSET || frame_bytes == 0 {
            return None;
        }
        if frame_bytes > MAX_FRAME_BYTES {
            return None;
        }
        let units = frame_bytes.div_ceil(LEN_UNIT_BYTES);
        Some(Loc {
            file,
            offset: u32::try_from(offset).ok()?,
            read_bytes: u32::try_from(units * LEN_UNIT_BYTES).ok()?,
        })
    }

    fn pack(self) -> u64 {
        let units = u64::from(self.read_bytes) / LEN_UNIT_BYTES as u64 - 1;
        u64::from(self.file)
            | (u64::from(self.offset) << FILE_BITS)
            | (units << (FILE_BITS + OFFSET_BITS))
    }

    fn unpack(v: u64) -> Loc {
        let file = (v & ((1 << FILE_BITS) - 1)) as u16;
        let offset = ((v >> FILE_BITS) & MAX_OFFSET) as u32;
        let units = (v >> (FILE_BITS + OFFSET_BITS)) & ((1 << UNITS_BITS) - 1);
        Loc {
            file,
            offset,
            read_bytes: ((units + 1) * LEN_UNIT_BYTES as u64) as u32,
        }
    }
}

/// One slot: 44 bits of hash and 52 of location, in three `u32`s (align 4, 12 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slot([u32; 3]);

impl Slot {
    fn new(hash: u64, loc: Loc) -> Slot {
        let bits = u128::from(hash & hash_mask()) | (u128::from(loc.pack()) << HASH_BITS);
        Slot([bits as u32, (bits >> 32) as u32, (bits >> 64) as u32])
    }

    fn bits(self) -> u128 {
        let [a, b, c] = self.0;
        u128::from(a) | (u128::from(b) << 32) | (u128::from(c) << 64)
    }

    fn hash(self) -> u64 {
        (self.bits() as u64) & hash_mask()
    }

    fn loc(self) -> Loc {
        Loc::unpack((self.bits() >> HASH_BITS) as u64)
    }
}

const fn hash_mask() -> u64 {
    (1 << HASH_BITS) - 1
}

/// The table's hash of a kept 44-bit hash: spread over 64 bits (the table takes its
/// bucket from the low bits and its tag from the top seven).
fn spread(hash: u64) -> u64 {
    (hash & hash_mask()).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Sub-tables of the index, chosen by the top bits of the kept hash.
const SHARDS: usize = 256;
/// Bits of the kept hash that choose the sub-table.
const SHARD_BITS: u32 = 8;

/// The index: key hash to record location, in [`SHARDS`] sub-tables. Why not one
/// table: a table doubles all at once, holding its old and its new allocation during
/// the move (three times its size at that instant: 300 MB more for ten million hosts);
/// a sub-table doubles alone, by 1/256 of the whole. (Either way the allocator keeps
/// some of the freed old tables resident for a while: see docs/robots.md, "Disk
/// tier".)
#[derive(Debug)]
pub struct Index {
    tables: Box<[HashTable<Slot>]>,
    len: usize,
    bytes: usize,
}

impl Default for Index {
    fn default() -> Self {
        Index {
            tables: (0..SHARDS).map(|_| HashTable::new()).collect(),
            len: 0,
            bytes: 0,
        }
    }
}

impl Index {
    /// Hosts indexed.
    pub fn len(&self) -> usize {
        self.len
    }

    fn table(&self, h: u64) -> Option<&HashTable<Slot>> {
        self.tables.get((h >> (HASH_BITS - SHARD_BITS)) as usize)
    }

    fn table_mut(&mut self, h: u64) -> Option<&mut HashTable<Slot>> {
        self.tables
            .get_mut((h >> (HASH_BITS - SHARD_BITS)) as usize)
    }

    /// The location of the record with key hash `hash`.
    pub fn get(&self, hash: u64) -> Option<Loc> {
        let h = hash & hash_mask();
        self.table(h)?
            .find(spread(h), |s| s.hash() == h)
            .map(|s| s.loc())
    }

    /// Indexes a record; returns the location it displaced (another host with the same
    /// 44-bit hash).
    pub fn insert(&mut self, hash: u64, loc: Loc) -> Option<Loc> {
        let h = hash & hash_mask();
        let slot = Slot::new(h, loc);
        let table = self.table_mut(h)?;
        if let Some(s) = table.find_mut(spread(h), |s| s.hash() == h) {
            let old = s.loc();
            *s = slot;
            return Some(old);
        }
        let before = table.allocation_size();
        table.insert_unique(spread(h), slot, |s| spread(s.hash()));
        let after = table.allocation_size();
        self.bytes = self.bytes + after - before;
        self.len += 1;
        None
    }

    /// Moves the record of `hash` from `from` to `to` (a batch written to its file);
    /// false if `hash` no longer points at `from` (the host left the tier meanwhile).
    pub fn relocate(&mut self, hash: u64, from: Loc, to: Loc) -> bool {
        let h = hash & hash_mask();
        let Some(table) = self.table_mut(h) else {
            return false;
        };
        match table.find_mut(spread(h), |s| s.hash() == h) {
            Some(s) if s.loc() == from => {
                *s = Slot::new(h, to);
                true
            }
            _ => false,
        }
    }

    /// Removes `hash`'s entry; returns its location. Shrinks the sub-table when it
    /// holds more than [`MAX_BYTES_PER_HOST`] a host (after many hosts left the tier),
    /// so the bound holds on the way down as on the way up.
    pub fn remove(&mut self, hash: u64) -> Option<Loc> {
        let h = hash & hash_mask();
        let table = self.table_mut(h)?;
        let loc = match table.find_entry(spread(h), |s| s.hash() == h) {
            Ok(e) => e.remove().0.loc(),
            Err(_) => return None,
        };
        let before = table.allocation_size();
        if before > SHRINK_FLOOR_BYTES && before > MAX_BYTES_PER_HOST * table.len() {
            table.shrink_to_fit(|s| spread(s.hash()));
        }
        let after = table.allocation_size();
        self.bytes = self.bytes + after - before;
        self.len -= 1;
        Some(loc)
    }

    /// Heap bytes of the sub-tables (slots and control bytes), as allocated, and
    /// their headers.
    pub fn bytes(&self) -> usize {
        self.bytes + SHARDS * std::mem::size_of::<HashTable<Slot>>()
    }

    /// Bytes of one slot.
    #[cfg(test)]
    pub const SLOT_BYTES: usize = std::mem::size_of::<Slot>();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_is_twelve_bytes_and_a_host_at_most_32() {
        assert_eq!(Index::SLOT_BYTES, 12);
        assert_eq!(std::mem::align_of::<Slot>(), 4);
        // Worst case: just after the table doubled, 7/16 of its buckets are full, and
        // each bucket costs a slot and a control byte.
        let worst = (Index::SLOT_BYTES + 1) as f64 * 16.0 / 7.0;
        assert!(worst <= MAX_BYTES_PER_HOST as f64, "{worst}");
    }

    #[test]
    fn measured_bytes_per_host_stay_under_the_bound_growing_and_shrinking() {
        let mut index = Index::default();
        let loc = Loc::new(3, 1000, 300).unwrap();
        let key = |i: u64| i.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 20;
        let bound = |len: usize| MAX_BYTES_PER_HOST * len + FIXED_BYTES;
        let n = 400_000u64;
        for i in 0..n {
            index.insert(key(i), loc);
            assert!(index.bytes() <= bound(index.len()), "growing at {i}");
        }
        let real: usize = index.tables.iter().map(HashTable::allocation_size).sum();
        assert_eq!(
            index.bytes(),
            real + SHARDS * std::mem::size_of::<HashTable<Slot>>()
        );
        // Far below the bound in practice: 13 bytes a bucket, 7/16 to 7/8 full.
        assert!(index.bytes() < 30 * index.len(), "{}", index.bytes());
        for i in 0..n - 5_000 {
            assert!(index.remove(key(i)).is_some());
            assert!(index.bytes() <= bound(index.len()), "shrinking at {i}");
        }
        assert_eq!(index.len(), 5_000);
        for i in n - 5_000..n {
            assert_eq!(index.get(key(i)), Some(loc));
        }
    }

    #[test]
    fn locations_round_trip_at_their_limits() {
        for (file, offset, frame) in [
            (0u16, 0u64, 1usize),
            (BATCH_FILE, MAX_OFFSET, MAX_FRAME_BYTES),
            (17, 123_456_789, 257),
        ] {
            let loc = Loc::new(file, offset, frame).unwrap();
            assert!(loc.read_bytes as usize >= frame);
            assert!((loc.read_bytes as usize) < frame + LEN_UNIT_BYTES);
            let mut index = Index::default();
            index.insert(u64::MAX, loc);
            assert_eq!(index.get(u64::MAX), Some(loc));
        }
        assert_eq!(Loc::new(0, MAX_OFFSET + 1, 10), None);
        assert_eq!(Loc::new(0, 0, MAX_FRAME_BYTES + 1), None);
    }

    #[test]
    fn equal_hashes_share_a_slot() {
        let mut index = Index::default();
        let a = Loc::new(1, 10, 10).unwrap();
        let b = Loc::new(2, 20, 10).unwrap();
        assert_eq!(index.insert(7, a), None);
        assert_eq!(
            index.insert(7 | (1 << 50), b),
            Some(a),
            "bits above 44 ignored"
        );
        assert_eq!(index.len(), 1);
        assert!(!index.relocate(7, a, b));
        assert!(index.relocate(7, b, a));
        assert_eq!(index.remove(7), Some(a));
        assert_eq!(index.get(7), None);
    }
}
