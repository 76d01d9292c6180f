//! The disk tier's seam: a [`BlockStore`] keeps the blocks of spilled URLs (built by
//! [`super::block`]) in append-only log files and reads one back by its position.
//!
//! Two implementations: [`FileStore`] (log files `blocks-NNNNNNNN.log` in the shard's
//! frontier directory, the crawl's) and [`MemStore`] (the same bytes in memory, for
//! the crawl core's tests and benchmarks: no temporary directory, and its call counts
//! and fault switches let a test prove what the frontier read and when).
//!
//! A log file is reference-counted by its live blocks: the frontier
//! [`BlockStore::release`]s a block once it read it back (or dropped it), and a file
//! whose blocks are all released is deleted as soon as it is no longer the file being
//! appended to. A file kept alive by a few blocks of a slow host keeps its whole size
//! on disk until they are consumed (see `docs/frontier.md`, "Waste").

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use ahash::AHashMap;

use crate::disk::{Format, HEADER_BYTES};

/// The block log format: magic `TRWLBLK\0`, version 1. Every file starts with this
/// header; blocks follow, each a framed record (see [`super::block`]).
pub const FORMAT: Format = Format::new(*b"TRWLBLK\0", 1, super::block::MAX_BLOCK_BYTES);

/// Where one block lives: a few bytes per block, never per URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockRef {
    /// The log file's id ([`UNWRITTEN`] while the block waits in the write batch).
    pub file: u32,
    /// Byte offset of the block in its file (in the write batch while unwritten).
    pub offset: u32,
    /// Bytes of the block, frame included.
    pub len: u32,
    /// URLs in the block.
    pub count: u32,
}

/// The file id of a block still in the frontier's write batch.
pub const UNWRITTEN: u32 = u32::MAX;

/// Append-only block storage with reference-counted log files.
pub trait BlockStore: std::fmt::Debug + Send {
    /// Appends `bytes` (the encoded blocks of one batch, `blocks` of them) with one
    /// write at the end of the current log file; a new file is started first when
    /// the current one holds data and would grow past its size limit. Returns the
    /// file id and the offset of the first byte. On an error nothing is counted
    /// live, and a later append writes at the same offset again.
    ///
    /// # Errors
    /// The file could not be created or written.
    fn append(&mut self, bytes: &[u8], blocks: u32) -> io::Result<(u32, u32)>;

    /// Reads `len` bytes at `offset` of `file` into `buf` (one positioned read).
    ///
    /// # Errors
    /// The file is gone or the read failed or came short.
    fn read(&mut self, file: u32, offset: u32, len: u32, buf: &mut Vec<u8>) -> io::Result<()>;

    /// One block of `file` is no longer needed; the file is deleted once none is
    /// live and it is not the file being appended to.
    ///
    /// # Errors
    /// The file could not be deleted (it is forgotten anyway).
    /// Makes log file `file` durable and gives it a second name, `to` (a
    /// checkpoint's): a hard link where the file system allows one, else a copy. Log
    /// files are append-only and never truncated in place, so the blocks a checkpoint
    /// names stay readable there whatever the frontier does next.
    fn keep_as(&mut self, file: u32, to: &Path) -> io::Result<()>;

    fn release(&mut self, file: u32) -> io::Result<()>;

    /// Bytes of the log files on disk (live blocks and dead ones, headers included).
    fn bytes(&self) -> u64;

    /// Log files on disk.
    fn files(&self) -> u64;

    /// The path of `file`, for messages.
    fn path(&self, file: u32) -> PathBuf;

    /// The file being appended to (or the next one), for messages about a write.
    fn current(&self) -> u32;
}

/// One log file's bookkeeping.
#[derive(Debug, Default)]
struct LogFile {
    /// Bytes written, header included.
    bytes: u64,
    /// Blocks not released yet.
    live: u64,
}

/// The reference counts and rotation shared by both stores: which file is current,
/// and which files die when.
#[derive(Debug)]
struct Ledger {
    files: AHashMap<u32, LogFile>,
    current: Option<u32>,
    next_id: u32,
    file_bytes: u64,
    total_bytes: u64,
}

impl Ledger {
    fn new(file_bytes: u64) -> Self {
        Self {
            files: AHashMap::new(),
            current: None,
            next_id: 0,
            file_bytes: file_bytes.clamp(4096, u64::from(u32::MAX) / 2),
            total_bytes: 0,
        }
    }

    /// The file to append `len` bytes to: the current one, or a new one (returned as
    /// `(id, true)`; the caller creates it, writes the header and calls
    /// [`Ledger::opened`]). A retired current file with no live block is returned in
    /// `dead` for deletion.
    fn target(&mut self, len: usize) -> (u32, bool, Option<u32>) {
        if let Some(id) = self.current {
            let f = self.files.get(&id);
            let used = f.map_or(0, |f| f.bytes);
            let has_data = used > HEADER_BYTES as u64;
            if !has_data || used + len as u64 <= self.file_bytes {
                return (id, false, None);
            }
            self.current = None;
            let dead = f.is_some_and(|f| f.live == 0).then_some(id);
            if let Some(d) = dead {
                self.forget(d);
            }
            let id = self.next_id;
            self.next_id = self.next_id.wrapping_add(1);
            return (id, true, dead);
        }
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        (id, true, None)
    }

    fn opened(&mut self, id: u32) {
        self.files.insert(
            id,
            LogFile {
                bytes: HEADER_BYTES as u64,
                live: 0,
            },
        );
        self.total_bytes += HEADER_BYTES as u64;
        self.current = Some(id);
    }

    /// Records an append of `len` bytes and `blocks` blocks; returns the offset.
    fn appended(&mut self, id: u32, len: usize, blocks: u32) -> u32 {
        let Some(f) = self.files.get_mut(&id) else {
            return 0;
        };
        let offset = f.bytes;
        f.bytes += len as u64;
        f.live += u64::from(blocks);
        self.total_bytes += len as u64;
        u32::try_from(offset).unwrap_or(u32::MAX)
    }

    /// Releases one block of `id`; true if the file is now dead (to delete).
    fn release(&mut self, id: u32) -> bool {
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

    fn forget(&mut self, id: u32) {
        if let Some(f) = self.files.remove(&id) {
            self.total_bytes = self.total_bytes.saturating_sub(f.bytes);
        }
    }
}

/// Block log files in a directory: `blocks-NNNNNNNN.log`, each a header and blocks.
#[derive(Debug)]
pub struct FileStore {
    dir: PathBuf,
    ledger: Ledger,
    /// The file being appended to (also read through).
    writer: Option<(u32, File)>,
    /// The last file read from, kept open: reads of one host's blocks cluster, and one
    /// handle at a time bounds the descriptors however many files are live.
    reader: Option<(u32, File)>,
}

impl FileStore {
    /// A store in `dir` (created if missing), with log files of about `file_bytes`.
    /// Log files left in `dir` by an earlier run are overwritten as their ids come
    /// up; the engine empties the directory before a crawl starts.
    ///
    /// # Errors
    /// The directory cannot be created.
    pub fn open(dir: &Path, file_bytes: u64) -> io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        Ok(Self {
            dir: dir.to_path_buf(),
            ledger: Ledger::new(file_bytes),
            writer: None,
            reader: None,
        })
    }

    fn delete(&mut self, id: u32) -> io::Result<()> {
        if self.reader.as_ref().is_some_and(|(r, _)| *r == id) {
            self.reader = None;
        }
        if self.writer.as_ref().is_some_and(|(w, _)| *w == id) {
            self.writer = None;
        }
        match std::fs::remove_file(self.path(id)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

impl BlockStore for FileStore {
    fn append(&mut self, bytes: &[u8], blocks: u32) -> io::Result<(u32, u32)> {
        let (id, new, dead) = self.ledger.target(bytes.len());
        if let Some(d) = dead {
            self.delete(d)?;
        }
        if new || self.writer.is_none() {
            let path = self.path(id);
            if new {
                // A new inode, never the old one truncated in place: a checkpoint may
                // hold the old file under a second name (`keep_as`).
                self.delete(id)?;
            }
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(new)
                .open(&path)?;
            file.write_all(&FORMAT.header())?;
            self.writer = Some((id, file));
            self.ledger.opened(id);
        }
        let Some((_, file)) = self.writer.as_mut() else {
            return Err(io::Error::other("no log file"));
        };
        let offset = self.ledger.files.get(&id).map_or(0, |f| f.bytes);
        // A positioned write: after a failed (perhaps partial) one the next append
        // writes at the same offset again.
        file.write_all_at(bytes, offset)?;
        Ok((id, self.ledger.appended(id, bytes.len(), blocks)))
    }

    fn read(&mut self, file: u32, offset: u32, len: u32, buf: &mut Vec<u8>) -> io::Result<()> {
        buf.resize(len as usize, 0);
        if let Some((id, f)) = &self.writer {
            if *id == file {
                return f.read_exact_at(buf, u64::from(offset));
            }
        }
        if self.reader.as_ref().is_none_or(|(id, _)| *id != file) {
            self.reader = Some((file, File::open(self.path(file))?));
        }
        match &self.reader {
            Some((_, f)) => f.read_exact_at(buf, u64::from(offset)),
            None => Err(io::Error::other("no log file")),
        }
    }

    fn release(&mut self, file: u32) -> io::Result<()> {
        if self.ledger.release(file) {
            self.delete(file)?;
        }
        Ok(())
    }

    fn bytes(&self) -> u64 {
        self.ledger.total_bytes
    }

    fn files(&self) -> u64 {
        self.ledger.files.len() as u64
    }

    fn path(&self, file: u32) -> PathBuf {
        self.dir.join(format!("blocks-{file:08}.log"))
    }

    fn keep_as(&mut self, file: u32, to: &Path) -> io::Result<()> {
        let len = self.ledger.files.get(&file).map_or(u64::MAX, |f| f.bytes);
        crate::disk::keep_as(&self.path(file), len, to)
    }

    fn current(&self) -> u32 {
        self.ledger.current.unwrap_or(self.ledger.next_id)
    }
}

/// Calls a [`MemStore`] has seen, for tests that prove what the frontier read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemCalls {
    pub appends: u64,
    pub reads: u64,
    pub releases: u64,
    /// Files deleted (all their blocks released).
    pub deleted: u64,
}

#[derive(Debug)]
struct MemInner {
    ledger: Ledger,
    data: AHashMap<u32, Vec<u8>>,
    calls: MemCalls,
    fail_appends: bool,
}

/// Log files in memory: the same header, blocks and reference counts as
/// [`FileStore`], so the frontier's tests exercise the real encoding. A clone is a
/// handle on the same store (a test keeps one to count calls and inject faults).
#[derive(Clone, Debug)]
pub struct MemStore {
    inner: Arc<Mutex<MemInner>>,
}

impl MemStore {
    /// An empty store whose "files" hold about `file_bytes`.
    pub fn new(file_bytes: u64) -> Self {
        Self {
            inner: Arc::new(Mutex::new(MemInner {
                ledger: Ledger::new(file_bytes),
                data: AHashMap::new(),
                calls: MemCalls::default(),
                fail_appends: false,
            })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, MemInner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The calls made so far.
    pub fn calls(&self) -> MemCalls {
        self.lock().calls
    }

    /// Makes every append fail (a full disk) until set back.
    pub fn set_fail_appends(&self, fail: bool) {
        self.lock().fail_appends = fail;
    }

    /// Flips bits of the byte at `offset` of `file` (damage, for tests); false if
    /// there is no such byte.
    pub fn flip_byte(&self, file: u32, offset: u32) -> bool {
        let mut inner = self.lock();
        match inner
            .data
            .get_mut(&file)
            .and_then(|d| d.get_mut(offset as usize))
        {
            Some(b) => {
                *b ^= 0x5a;
                true
            }
            None => false,
        }
    }

    /// Ids of the live files, sorted.
    pub fn file_ids(&self) -> Vec<u32> {
        let mut ids: Vec<u32> = self.lock().data.keys().copied().collect();
        ids.sort_unstable();
        ids
    }
}

impl BlockStore for MemStore {
    fn append(&mut self, bytes: &[u8], blocks: u32) -> io::Result<(u32, u32)> {
        let mut inner = self.lock();
        inner.calls.appends += 1;
        if inner.fail_appends {
            return Err(io::Error::other("injected write failure"));
        }
        let (id, new, dead) = inner.ledger.target(bytes.len());
        if let Some(d) = dead {
            inner.data.remove(&d);
            inner.calls.deleted += 1;
        }
        if new {
            inner.data.insert(id, FORMAT.header().to_vec());
            inner.ledger.opened(id);
        }
        let offset = inner.ledger.appended(id, bytes.len(), blocks);
        if let Some(d) = inner.data.get_mut(&id) {
            d.extend_from_slice(bytes);
        }
        Ok((id, offset))
    }

    fn read(&mut self, file: u32, offset: u32, len: u32, buf: &mut Vec<u8>) -> io::Result<()> {
        let mut inner = self.lock();
        inner.calls.reads += 1;
        let start = offset as usize;
        let bytes = inner
            .data
            .get(&file)
            .and_then(|d| d.get(start..start.checked_add(len as usize)?))
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        buf.clear();
        buf.extend_from_slice(bytes);
        Ok(())
    }

    fn release(&mut self, file: u32) -> io::Result<()> {
        let mut inner = self.lock();
        inner.calls.releases += 1;
        if inner.ledger.release(file) {
            inner.data.remove(&file);
            inner.calls.deleted += 1;
        }
        Ok(())
    }

    fn bytes(&self) -> u64 {
        self.lock().ledger.total_bytes
    }

    fn files(&self) -> u64 {
        self.lock().ledger.files.len() as u64
    }

    fn path(&self, file: u32) -> PathBuf {
        PathBuf::from(format!("memory:blocks-{file:08}.log"))
    }

    fn keep_as(&mut self, file: u32, to: &Path) -> io::Result<()> {
        let data = self
            .lock()
            .data
            .get(&file)
            .cloned()
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        std::fs::write(to, data)
    }

    fn current(&self) -> u32 {
        let inner = self.lock();
        inner.ledger.current.unwrap_or(inner.ledger.next_id)
    }
}
/// One positioned read of the written block `b` from `store` into `buf`, decoded:
/// `None` if it is damaged. The one block read of the frontier (a host's refill, the
/// line's front, a checkpoint's listing).
///
/// # Errors
/// [`super::FrontierError::Read`]: the read failed.
pub(super) fn load_block(
    store: &mut dyn BlockStore,
    b: BlockRef,
    buf: &mut Vec<u8>,
) -> Result<Option<Vec<super::segment::Record>>, super::FrontierError> {
    store
        .read(b.file, b.offset, b.len, buf)
        .map_err(|source| super::FrontierError::Read {
            path: store.path(b.file),
            offset: u64::from(b.offset),
            source,
        })?;
    Ok(super::block::decode(buf))
}
