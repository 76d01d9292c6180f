//! The disk tier's seam: a [`SpillStore`] holds numbered log files and does exactly
//! what it is told (create one with its header, write at an offset, read at an
//! offset, read one through, remove one). Which file, where, and when a file dies is
//! decided by the tier (`spill/mod.rs`), which does no I/O of its own.
//!
//! Two implementations: [`FileStore`] (files `spill-NNNN.log` in the shard's robots
//! directory) and [`MemStore`] (the same bytes in memory, for the cache's tests and
//! `RobotsCache::new`: no temporary directory, and its call counts and fault switches
//! let a test prove what was read and written).

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use ahash::AHashMap;

use super::FORMAT;

/// Numbered append-only log files.
pub trait SpillStore: std::fmt::Debug + Send {
    /// Creates (or truncates) log file `file` and writes the format header.
    ///
    /// # Errors
    /// The file (or its directory) could not be created or written.
    fn create(&mut self, file: u16) -> io::Result<()>;

    /// Writes `bytes` at `offset` of `file` (one positioned write; after a failure the
    /// caller writes at the same offset again).
    ///
    /// # Errors
    /// The write failed or came short.
    fn write_at(&mut self, file: u16, offset: u64, bytes: &[u8]) -> io::Result<()>;

    /// Reads from `offset` of `file` into `buf` until it is full or the file ends (one
    /// positioned read in the common case); returns the bytes read.
    ///
    /// # Errors
    /// The file is gone or the read failed.
    fn read_at(&mut self, file: u16, offset: u64, buf: &mut [u8]) -> io::Result<usize>;

    /// A reader of the whole of `file` from its first byte (header included), for a
    /// checkpoint to stream the live records through bounded memory.
    ///
    /// # Errors
    /// The file could not be opened.
    fn scan(&self, file: u16) -> io::Result<Box<dyn Read + '_>>;

    /// Removes `file` (a missing file is no error).
    ///
    /// # Errors
    /// The file could not be removed.
    fn remove(&mut self, file: u16) -> io::Result<()>;

    /// The path of `file`, for messages.
    fn path(&self, file: u16) -> PathBuf;

    /// Makes the first `len` bytes of log file `file` durable and gives them a second
    /// name, `to` (a checkpoint's): a hard link where the file system allows one (the
    /// file is append-only, so the checkpoint reads the first `len` bytes whatever is
    /// appended later), a copy of those bytes otherwise.
    fn keep_as(&mut self, file: u16, len: u64, to: &Path) -> io::Result<()>;
}

/// Log files `spill-NNNN.log` in a directory.
#[derive(Debug)]
pub struct FileStore {
    dir: PathBuf,
    /// Whether `dir` was created and emptied of an earlier run's logs.
    prepared: bool,
    /// The last file written, kept open (writes go to one file at a time).
    writer: Option<(u16, File)>,
    /// The last file read from, kept open: one handle at a time bounds the
    /// descriptors however many files are live.
    reader: Option<(u16, File)>,
}

impl FileStore {
    /// A store in `dir`. Nothing is touched until the first file is created: then the
    /// directory is created, and log files an earlier run left in it are removed (a
    /// resume restores the robots cache from its checkpoint, never from these).
    pub fn new(dir: &Path) -> FileStore {
        FileStore {
            dir: dir.to_path_buf(),
            prepared: false,
            writer: None,
            reader: None,
        }
    }

    fn prepare(&mut self) -> io::Result<()> {
        if self.prepared {
            return Ok(());
        }
        std::fs::create_dir_all(&self.dir)?;
        for entry in std::fs::read_dir(&self.dir)? {
            let entry = entry?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with("spill-") && name.ends_with(".log") {
                std::fs::remove_file(entry.path())?;
            }
        }
        self.prepared = true;
        Ok(())
    }

    fn handle(&mut self, file: u16) -> io::Result<&File> {
        if let Some((id, f)) = &self.writer {
            if *id == file {
                return Ok(f);
            }
        }
        if self.reader.as_ref().is_none_or(|(id, _)| *id != file) {
            self.reader = Some((file, File::open(self.path(file))?));
        }
        match &self.reader {
            Some((_, f)) => Ok(f),
            None => Err(io::Error::other("no log file")),
        }
    }
}

impl SpillStore for FileStore {
    fn create(&mut self, file: u16) -> io::Result<()> {
        self.prepare()?;
        if self.reader.as_ref().is_some_and(|(id, _)| *id == file) {
            self.reader = None;
        }
        // A new inode, never the old one truncated in place: a checkpoint may hold
        // the old file under a second name (`keep_as`).
        match std::fs::remove_file(self.path(file)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(self.path(file))?;
        f.write_all_at(&FORMAT.header(), 0)?;
        self.writer = Some((file, f));
        Ok(())
    }

    fn write_at(&mut self, file: u16, offset: u64, bytes: &[u8]) -> io::Result<()> {
        if self.writer.as_ref().is_none_or(|(id, _)| *id != file) {
            let f = OpenOptions::new().write(true).open(self.path(file))?;
            self.writer = Some((file, f));
        }
        match &self.writer {
            Some((_, f)) => f.write_all_at(bytes, offset),
            None => Err(io::Error::other("no log file")),
        }
    }

    fn read_at(&mut self, file: u16, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let f = self.handle(file)?;
        let mut filled = 0;
        while let Some(rest) = buf.get_mut(filled..).filter(|r| !r.is_empty()) {
            match f.read_at(rest, offset + filled as u64) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(filled)
    }

    fn scan(&self, file: u16) -> io::Result<Box<dyn Read + '_>> {
        Ok(Box::new(io::BufReader::with_capacity(
            256 << 10,
            File::open(self.path(file))?,
        )))
    }

    fn remove(&mut self, file: u16) -> io::Result<()> {
        if self.reader.as_ref().is_some_and(|(id, _)| *id == file) {
            self.reader = None;
        }
        if self.writer.as_ref().is_some_and(|(id, _)| *id == file) {
            self.writer = None;
        }
        match std::fs::remove_file(self.path(file)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    fn path(&self, file: u16) -> PathBuf {
        self.dir.join(format!("spill-{file:04}.log"))
    }

    fn keep_as(&mut self, file: u16, len: u64, to: &Path) -> io::Result<()> {
        crate::disk::keep_as(&self.path(file), len, to)
    }
}

/// Calls a [`MemStore`] has seen, for tests that prove what the tier did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemCalls {
    pub creates: u64,
    pub writes: u64,
    pub reads: u64,
    pub removes: u64,
}

#[derive(Debug, Default)]
struct MemInner {
    files: AHashMap<u16, Vec<u8>>,
    calls: MemCalls,
    fail_writes: bool,
    fail_reads: bool,
}

/// Log files in memory, with the same header and records as [`FileStore`]. A clone is
/// a handle on the same store (a test keeps one to count calls and inject faults).
#[derive(Clone, Debug, Default)]
pub struct MemStore {
    inner: Arc<Mutex<MemInner>>,
}

impl MemStore {
    /// An empty store.
    pub fn new() -> MemStore {
        MemStore::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, MemInner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The calls made so far.
    pub fn calls(&self) -> MemCalls {
        self.lock().calls
    }

    /// Makes every create and write fail (a full disk) until set back.
    pub fn set_fail_writes(&self, fail: bool) {
        self.lock().fail_writes = fail;
    }

    /// Makes every read fail until set back.
    pub fn set_fail_reads(&self, fail: bool) {
        self.lock().fail_reads = fail;
    }

    /// Flips bits of the byte at `offset` of `file` (damage, for tests); false if
    /// there is no such byte.
    pub fn flip_byte(&self, file: u16, offset: u64) -> bool {
        let mut inner = self.lock();
        let byte = usize::try_from(offset)
            .ok()
            .and_then(|o| inner.files.get_mut(&file)?.get_mut(o));
        match byte {
            Some(b) => {
                *b ^= 0x5a;
                true
            }
            None => false,
        }
    }

    /// Ids of the files that exist, sorted.
    pub fn file_ids(&self) -> Vec<u16> {
        let mut ids: Vec<u16> = self.lock().files.keys().copied().collect();
        ids.sort_unstable();
        ids
    }

    /// Bytes of all files.
    pub fn bytes(&self) -> u64 {
        self.lock().files.values().map(|f| f.len() as u64).sum()
    }
}

impl SpillStore for MemStore {
    fn create(&mut self, file: u16) -> io::Result<()> {
        let mut inner = self.lock();
        inner.calls.creates += 1;
        if inner.fail_writes {
            return Err(io::Error::other("injected create failure"));
        }
        inner.files.insert(file, FORMAT.header().to_vec());
        Ok(())
    }

    fn write_at(&mut self, file: u16, offset: u64, bytes: &[u8]) -> io::Result<()> {
        let mut inner = self.lock();
        inner.calls.writes += 1;
        if inner.fail_writes {
            return Err(io::Error::other("injected write failure"));
        }
        let data = inner
            .files
            .get_mut(&file)
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        let start = usize::try_from(offset).map_err(io::Error::other)?;
        let end = start + bytes.len();
        if data.len() < end {
            data.resize(end, 0);
        }
        if let Some(dst) = data.get_mut(start..end) {
            dst.copy_from_slice(bytes);
        }
        Ok(())
    }

    fn read_at(&mut self, file: u16, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let mut inner = self.lock();
        inner.calls.reads += 1;
        if inner.fail_reads {
            return Err(io::Error::other("injected read failure"));
        }
        let data = inner
            .files
            .get(&file)
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        let start = usize::try_from(offset).map_err(io::Error::other)?;
        let src = data.get(start..).unwrap_or_default();
        let n = src.len().min(buf.len());
        if let (Some(dst), Some(src)) = (buf.get_mut(..n), src.get(..n)) {
            dst.copy_from_slice(src);
        }
        Ok(n)
    }

    fn scan(&self, file: u16) -> io::Result<Box<dyn Read + '_>> {
        let data = self
            .lock()
            .files
            .get(&file)
            .cloned()
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        Ok(Box::new(io::Cursor::new(data)))
    }

    fn remove(&mut self, file: u16) -> io::Result<()> {
        let mut inner = self.lock();
        inner.calls.removes += 1;
        inner.files.remove(&file);
        Ok(())
    }

    fn path(&self, file: u16) -> PathBuf {
        PathBuf::from(format!("memory:spill-{file:04}.log"))
    }

    fn keep_as(&mut self, file: u16, len: u64, to: &Path) -> io::Result<()> {
        let data = self
            .lock()
            .files
            .get(&file)
            .cloned()
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        let len = usize::try_from(len).map_err(io::Error::other)?;
        std::fs::write(to, data.get(..len).unwrap_or(&data))
    }
}
