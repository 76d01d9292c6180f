//! Which log files exist, how full each is, how many live records each holds, which
//! one is appended to, and which id a new file takes. Sans-IO: the tier asks, then
//! tells the store what to do.
//!
//! A file lives while it is the one appended to or holds a live record; file ids are
//! reused once their file is gone, so the 11 bits of an index location always
//! suffice (up to [`MAX_FILES`] files live at once).

use ahash::AHashMap;

use super::index::MAX_FILES;
use crate::disk::HEADER_BYTES;

#[derive(Debug)]
struct LogFile {
    /// Bytes written, header included.
    bytes: u64,
    /// Records still indexed.
    live: u64,
    /// Opening order: ids are reused, so the order files were written in is this.
    seq: u64,
}

/// Where the next batch goes.
#[derive(Debug, PartialEq, Eq)]
pub struct Target {
    pub file: u16,
    /// The file must be created first (then [`Ledger::opened`]).
    pub new: bool,
    /// A retired file with no live record, to remove.
    pub dead: Option<u16>,
}

/// The log files' bookkeeping.
#[derive(Debug)]
pub struct Ledger {
    files: AHashMap<u16, LogFile>,
    current: Option<u16>,
    next_id: u16,
    file_bytes: u64,
    total_bytes: u64,
    /// Files opened so far (the next one's `seq`).
    opened: u64,
}

impl Ledger {
    /// No file yet; files rotate past about `file_bytes`.
    pub fn new(file_bytes: u64) -> Ledger {
        Ledger {
            files: AHashMap::new(),
            current: None,
            next_id: 0,
            file_bytes,
            total_bytes: 0,
            opened: 0,
        }
    }

    /// The file to append `len` bytes to: the current one while it has room (or holds
    /// no record yet), else a new one. `None` when every id is taken by a live file.
    pub fn target(&mut self, len: usize) -> Option<Target> {
        let mut dead = None;
        if let Some(id) = self.current {
            let used = self.files.get(&id).map_or(0, |f| f.bytes);
            if used <= HEADER_BYTES as u64 || used + len as u64 <= self.file_bytes {
                return Some(Target {
                    file: id,
                    new: false,
                    dead: None,
                });
            }
            self.current = None;
            if self.files.get(&id).is_some_and(|f| f.live == 0) {
                self.forget(id);
                dead = Some(id);
            }
        }
        let file = self.free_id()?;
        Some(Target {
            file,
            new: true,
            dead,
        })
    }

    fn free_id(&mut self) -> Option<u16> {
        for _ in 0..MAX_FILES {
            let id = self.next_id;
            self.next_id = (self.next_id + 1) % MAX_FILES;
            if !self.files.contains_key(&id) {
                return Some(id);
            }
        }
        None
    }

    /// File `id` was created (header written) and is now the one appended to.
    pub fn opened(&mut self, id: u16) {
        let header = HEADER_BYTES as u64;
        self.opened += 1;
        if let Some(old) = self.files.insert(
            id,
            LogFile {
                bytes: header,
                live: 0,
                seq: self.opened,
            },
        ) {
            self.total_bytes -= old.bytes;
        }
        self.total_bytes += header;
        self.current = Some(id);
    }

    /// Where the next append to `id` starts.
    pub fn end_of(&self, id: u16) -> u64 {
        self.files.get(&id).map_or(HEADER_BYTES as u64, |f| f.bytes)
    }

    /// `len` bytes holding `live` live records were appended to `id`.
    pub fn appended(&mut self, id: u16, len: usize, live: u64) {
        if let Some(f) = self.files.get_mut(&id) {
            f.bytes += len as u64;
            f.live += live;
            self.total_bytes += len as u64;
        }
    }

    /// One record of `id` died; true if the file is now dead (to remove).
    pub fn release(&mut self, id: u16) -> bool {
        let Some(f) = self.files.get_mut(&id) else {
            return false;
        };
        f.live = f.live.saturating_sub(1);
        if f.live == 0 && self.current != Some(id) {
            self.forget(id);
            return true;
        }
        false
    }

    fn forget(&mut self, id: u16) {
        if let Some(f) = self.files.remove(&id) {
            self.total_bytes = self.total_bytes.saturating_sub(f.bytes);
        }
    }

    /// Bytes of the files (live records, dead ones and headers).
    pub fn bytes(&self) -> u64 {
        self.total_bytes
    }

    /// Files that exist.
    pub fn files(&self) -> usize {
        self.files.len()
    }

    /// The ids of the files that exist with their written length, by id.
    pub fn file_list(&self) -> Vec<(u16, u64)> {
        let mut v: Vec<(u16, u64)> = self.files.iter().map(|(&id, f)| (id, f.bytes)).collect();
        v.sort_unstable();
        v
    }

    /// The files that exist, in the order they were opened: (id, opening number,
    /// written length). A record written later is in a later file, or later in the
    /// same one.
    pub fn files_in_order(&self) -> Vec<(u16, u64, u64)> {
        let mut v: Vec<(u16, u64, u64)> = self
            .files
            .iter()
            .map(|(&id, f)| (id, f.seq, f.bytes))
            .collect();
        v.sort_unstable_by_key(|&(_, seq, _)| seq);
        v
    }
}
