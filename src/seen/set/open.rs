//! Creating, opening, restoring and verifying a [`SeenSet`]'s file: sizing, the
//! header and checksum checks, the exclusive lock, and mapping or loading the bits.

use super::{
    losses_per_insertion, stats_from, sync_parent_dir, temp_path, Backing, LogState, SeenConfig,
    SeenSet, Stats, Stripe, COPY_CHUNK_BYTES, STRIPES,
};
use crate::seen::dirty::DirtyBlocks;
use crate::seen::error::{Error, ErrorKind};
use crate::seen::hash::{Hasher, DEFAULT_SEED};
use crate::seen::header::{Header, HeaderError, Purpose, State, HEADER_BYTES};
use crate::seen::model::BLOCK_BITS;
use crate::sys::fs::lock_exclusive;
use crate::sys::mmap::MappedWords;
use crate::sys::procfs::physical_ram_bytes;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use xxhash_rust::xxh3::Xxh3;

impl SeenSet {
    /// full. Fails if the file exists.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidSize`] for impossible sizes; I/O errors otherwise.
    pub fn create(path: impl AsRef<Path>, capacity: u64, fp: f64) -> Result<Self, Error> {
        Self::create_with(path, &SeenConfig::new(capacity, fp))
    }

    /// Creates a new set from a full [`SeenConfig`].
    ///
    /// The file is created sparse (`set_len`), so even a multi-gigabyte set is created
    /// instantly and takes disk blocks only where bits get set.
    ///
    /// # Errors
    /// As [`SeenSet::create`].
    pub fn create_with(path: impl AsRef<Path>, config: &SeenConfig) -> Result<Self, Error> {
        let path = path.as_ref();
        let header = new_header(config, path)?;
        let huge_pages = config.huge_pages;
        Self::create_from_header(
            path,
            &header,
            config.lock_in_ram,
            config.backing,
            huge_pages,
        )
    }

    /// A set on no file of any filesystem: its bits live in an anonymous memory file
    /// (`memfd_create`), for callers that must open no file, such as the crawl core's
    /// tests. It works as a [`Backing::Memory`] set; a checkpoint of it writes where
    /// it is told, as any other.
    ///
    /// # Errors
    /// As [`SeenSet::create`].
    pub fn anonymous(config: &SeenConfig) -> Result<Self, Error> {
        let path = Path::new("anonymous-presence-bits");
        let header = new_header(config, path)?;
        let io = |e| Error::io(path, e);
        let file = crate::sys::mmap::anonymous_file().map_err(io)?;
        file.set_len(header.file_bytes()).map_err(io)?;
        file.write_all_at(&header.encode(), 0).map_err(io)?;
        Self::map(path, file, &header, false, Backing::Memory, false)
    }

    /// Creates an empty, open set file with `header`'s parameters (and seed).
    pub(super) fn create_from_header(
        path: &Path,
        header: &Header,
        lock_in_ram: bool,
        backing: Backing,
        huge_pages: bool,
    ) -> Result<Self, Error> {
        let header = Header {
            state: State::Open,
            inserted: 0,
            set_bits: 0,
            expected_lost: 0.0,
            bits_checksum: 0,
            ..*header
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        lock(&file, path)?;
        let io = |e| Error::io(path, e);
        file.set_len(header.file_bytes()).map_err(io)?;
        file.write_all_at(&header.encode(), 0).map_err(io)?;
        file.sync_all().map_err(io)?;
        sync_parent_dir(path).map_err(io)?;
        Self::map(path, file, &header, lock_in_ram, backing, huge_pages)
    }

    /// Opens a sealed set (a snapshot, or a set closed with [`SeenSet::close`]) for
    /// reading and writing. The whole file is validated first: header magic, version,
    /// checksum and parameters, exact length, and the checksum of the bit region. The
    /// file is then marked open (unsealed) on disk before any bit can change, so a crash
    /// from here on leaves a file that `open` refuses.
    ///
    /// Opening a snapshot in place makes that snapshot the live file; to resume from a
    /// checkpoint while keeping it, use [`SeenSet::restore`].
    ///
    /// # Errors
    /// [`ErrorKind::Locked`] if the file is in use; [`ErrorKind::Unsealed`] for a live
    /// file that was never closed; the validation kinds for damage; I/O errors.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        Self::open_with(path, None, false, Backing::Mapped)
    }

    /// [`SeenSet::open`] with a choice of [`Backing`] and of `mlock`.
    ///
    /// # Errors
    /// As [`SeenSet::open`].
    pub fn open_backed(
        path: impl AsRef<Path>,
        backing: Backing,
        lock_in_ram: bool,
    ) -> Result<Self, Error> {
        Self::open_with(path, None, lock_in_ram, backing)
    }

    pub(crate) fn open_with(
        path: impl AsRef<Path>,
        purpose: Option<Purpose>,
        lock_in_ram: bool,
        backing: Backing,
    ) -> Result<Self, Error> {
        let path = path.as_ref();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        lock(&file, path)?;
        let mut header = validate_file(&file, path)?;
        if let Some(p) = purpose {
            if p != header.purpose {
                return Err(Error::new(ErrorKind::WrongPurpose, path));
            }
        }
        header.state = State::Open;
        let io = |e| Error::io(path, e);
        file.write_all_at(&header.encode(), 0).map_err(io)?;
        file.sync_all().map_err(io)?;
        let dense = is_dense(&header);
        let set = Self::map(path, file, &header, lock_in_ram, backing, dense)?;
        if backing == Backing::Memory {
            set.load_bits().map_err(io)?;
        }
        // Counters carried over from the file.
        if let Some(s) = set.stripes.first() {
            s.add(header.inserted, header.set_bits, header.expected_lost);
        }
        Ok(set)
    }

    /// Validates a seen-set file without opening it for writing: the same checks as
    /// [`SeenSet::open`], reading the file with plain reads, no lock, no mapping. Returns
    /// the statistics stored in it.
    ///
    /// # Errors
    /// As [`SeenSet::open`], minus `Locked`.
    pub fn verify(path: impl AsRef<Path>) -> Result<Stats, Error> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let h = validate_file(&file, path)?;
        Ok(stats_from(&h))
    }

    /// Copies the snapshot at `snapshot` to `live` (write, fsync, rename, fsync dir) and
    /// opens the copy, leaving the snapshot untouched for the next recovery.
    ///
    /// # Errors
    /// As [`SeenSet::verify`] on the snapshot, or I/O errors.
    pub fn restore(snapshot: impl AsRef<Path>, live: impl AsRef<Path>) -> Result<Self, Error> {
        Self::restore_backed(snapshot, live, Backing::default())
    }

    /// [`SeenSet::restore`] with a choice of [`Backing`].
    ///
    /// # Errors
    /// As [`SeenSet::restore`].
    pub fn restore_backed(
        snapshot: impl AsRef<Path>,
        live: impl AsRef<Path>,
        backing: Backing,
    ) -> Result<Self, Error> {
        let (snapshot, live) = (snapshot.as_ref(), live.as_ref());
        Self::verify(snapshot)?;
        let tmp = temp_path(live);
        let io = |e| Error::io(live, e);
        std::fs::copy(snapshot, &tmp).map_err(io)?;
        File::open(&tmp).and_then(|f| f.sync_all()).map_err(io)?;
        std::fs::rename(&tmp, live).map_err(io)?;
        sync_parent_dir(live).map_err(io)?;
        Self::open_backed(live, backing, false)
    }

    pub(super) fn map(
        path: &Path,
        file: File,
        header: &Header,
        lock_in_ram: bool,
        backing: Backing,
        huge_pages: bool,
    ) -> Result<Self, Error> {
        let io = |e| Error::io(path, e);
        let len = usize::try_from(header.bit_bytes()).map_err(|_| {
            Error::new(ErrorKind::InvalidSize, path).with_detail("larger than the address space")
        })?;
        let map = match backing {
            Backing::Mapped => MappedWords::map(&file, HEADER_BYTES, len),
            Backing::Memory => MappedWords::anon(len),
        }
        .map_err(io)?;
        map.advise_random().map_err(io)?;
        if huge_pages && huge_pages_fit(backing, len) {
            // Before the first touch, or faults take 4 KiB pages that khugepaged collapses
            // only at its own pace (4,096 pages every 10 s by default).
            if let Err(e) = map.advise_huge() {
                tracing::debug!(error = %e, "madvise(MADV_HUGEPAGE) refused; staying on 4 KiB pages");
            }
        }
        if lock_in_ram {
            map.lock_in_ram().map_err(io)?;
        }
        let k = header.k;
        let block_fp_by_popcount = (0..=BLOCK_BITS)
            .map(|p| (p as f64 / BLOCK_BITS as f64).powi(k as i32))
            .collect();
        let lost_per_insert_by_popcount = (0..=BLOCK_BITS)
            .map(|p| losses_per_insertion((p as f64 / BLOCK_BITS as f64).powi(k as i32)))
            .collect();
        Ok(Self {
            path: path.to_path_buf(),
            file,
            map,
            hasher: Hasher {
                seed: header.seed,
                blocks: header.blocks,
                k,
            },
            capacity: header.capacity,
            target_fp: header.target_fp,
            purpose: header.purpose,
            backing,
            stripes: (0..STRIPES).map(|_| Stripe::default()).collect(),
            block_fp_by_popcount,
            lost_per_insert_by_popcount,
            warned_over_capacity: AtomicBool::new(false),
            dirty: DirtyBlocks::new(header.blocks).map_err(io)?,
            log: Mutex::new(LogState {
                nonzero: vec![0u64; usize::try_from(header.blocks.div_ceil(64)).unwrap_or(0)],
                base_bytes: 0,
            }),
        })
    }

    /// Reads the file's bit region into memory-backed words (before the set is shared).
    pub(super) fn load_bits(&self) -> io::Result<()> {
        let mut buf = vec![0u8; COPY_CHUNK_BYTES];
        let mut offset = HEADER_BYTES;
        for words in self.map.words().chunks(COPY_CHUNK_BYTES / 8) {
            let bytes = buf.get_mut(..words.len() * 8).unwrap_or_default();
            self.file.read_exact_at(bytes, offset)?;
            for (src, w) in bytes.chunks_exact(8).zip(words) {
                let mut le = [0u8; 8];
                le.copy_from_slice(src);
                w.store(u64::from_le_bytes(le).to_le(), Ordering::Relaxed);
            }
            offset += bytes.len() as u64;
        }
        Ok(())
    }
}

fn lock(file: &File, path: &Path) -> Result<(), Error> {
    match lock_exclusive(file) {
        Ok(true) => Ok(()),
        Ok(false) => Err(Error::new(ErrorKind::Locked, path)),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// Reads and checks header, length and bit checksum of an (unlocked or locked) file.
fn validate_file(file: &File, path: &Path) -> Result<Header, Error> {
    let io = |e| Error::io(path, e);
    let len = file.metadata().map_err(io)?.len();
    let mut head = vec![0u8; HEADER_BYTES.min(len) as usize];
    file.read_exact_at(&mut head, 0).map_err(io)?;
    let header = Header::decode(&head).map_err(|e| match e {
        HeaderError::Truncated => {
            Error::new(ErrorKind::Truncated, path).with_detail(format!("{len} bytes"))
        }
        HeaderError::BadMagic => Error::new(ErrorKind::BadMagic, path),
        HeaderError::UnsupportedVersion(v) => {
            Error::new(ErrorKind::UnsupportedVersion, path).with_detail(format!("version {v}"))
        }
        HeaderError::Checksum => Error::new(ErrorKind::HeaderChecksum, path),
        HeaderError::BadParameters(what) => {
            Error::new(ErrorKind::BadParameters, path).with_detail(what)
        }
    })?;
    let want = header.file_bytes();
    if len < want {
        return Err(
            Error::new(ErrorKind::Truncated, path).with_detail(format!("{len} of {want} bytes"))
        );
    }
    if len > want {
        return Err(
            Error::new(ErrorKind::TrailingBytes, path).with_detail(format!("{len} > {want} bytes"))
        );
    }
    if header.state != State::Sealed {
        return Err(Error::new(ErrorKind::Unsealed, path));
    }
    let mut hasher = Xxh3::new();
    let mut buf = vec![0u8; COPY_CHUNK_BYTES];
    let mut offset = HEADER_BYTES;
    while offset < want {
        let n = (want - offset).min(COPY_CHUNK_BYTES as u64) as usize;
        let chunk = buf.get_mut(..n).unwrap_or_default();
        file.read_exact_at(chunk, offset).map_err(io)?;
        hasher.update(chunk);
        offset += n as u64;
    }
    if hasher.digest() != header.bits_checksum {
        return Err(Error::new(ErrorKind::BitsChecksum, path));
    }
    Ok(header)
}

/// Whether a set already holds as many keys as it has 4 KiB pages (64 blocks each): by
/// then about 63 % of its pages are touched anyway, and huge pages cost no memory the
/// keys did not already make resident.
pub(super) fn is_dense(header: &Header) -> bool {
    header.inserted >= header.blocks / 64
}

/// Whether huge pages suit `len_bytes` of bits in `backing`. `Memory` always: the bits
/// are in RAM anyway. `Mapped` when the bits fit in half the machine's RAM: where they
/// do not (the reason to choose `Mapped`), the kernel would read and write the file in
/// 2 MiB folios, 512 times the I/O of the random 4 KiB access it needs. Keys hash
/// uniformly, so on 4 KiB pages nearly every access to a set far beyond the cache
/// misses the TLB as well as the cache (measured: ~25 ns less CPU an insertion on huge
/// pages, 1e8 keys into a 2e8 set, `docs/benchmarks.md`).
fn huge_pages_fit(backing: Backing, len_bytes: usize) -> bool {
    match backing {
        Backing::Memory => true,
        Backing::Mapped => {
            physical_ram_bytes().is_some_and(|ram| (len_bytes as u64).saturating_mul(2) <= ram)
        }
    }
}

/// The header of a new, empty set sized from `config` (`path` names it in errors).
fn new_header(config: &SeenConfig, path: &Path) -> Result<Header, Error> {
    let sizing = config.resolve().ok_or_else(|| {
        Error::new(ErrorKind::InvalidSize, path).with_detail(format!(
            "capacity {} fp {}",
            config.capacity, config.target_fp
        ))
    })?;
    Ok(Header {
        state: State::Open,
        purpose: config.purpose,
        seed: DEFAULT_SEED,
        k: sizing.k,
        blocks: sizing.blocks,
        capacity: config.capacity,
        target_fp: config.target_fp,
        inserted: 0,
        set_bits: 0,
        expected_lost: 0.0,
        bits_checksum: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_pages_follow_the_backing_and_the_ram() {
        assert!(huge_pages_fit(Backing::Memory, usize::MAX));
        let ram = physical_ram_bytes().expect("/proc/meminfo has MemTotal");
        assert!(ram >= 1 << 20, "MemTotal {ram}");
        assert!(huge_pages_fit(Backing::Mapped, 1 << 21));
        let all_ram = usize::try_from(ram).unwrap_or(usize::MAX);
        assert!(!huge_pages_fit(Backing::Mapped, all_ram));
    }

    /// Huge pages are asked for from creation only when the config says so: a fresh
    /// set's memory follows its keys by default (the resident bytes of a 1e8-key set
    /// with 1,000 keys stay a few pages a key).
    #[test]
    fn a_fresh_sparse_set_stays_on_small_pages_unless_asked() {
        let dir = tempfile::tempdir().unwrap();
        for (name, huge) in [("small", false), ("huge", true)] {
            let config = SeenConfig {
                backing: Backing::Memory,
                huge_pages: huge,
                ..SeenConfig::new(100_000_000, 0.01)
            };
            let set = SeenSet::create_with(dir.path().join(name), &config).unwrap();
            for i in 0u64..1000 {
                set.test_and_set(&i.to_le_bytes());
            }
            let resident = set.resident_bytes().unwrap();
            if !huge {
                assert!(resident <= 1000 * 8192, "{resident} bytes resident");
            }
            assert!(set.contains(&7u64.to_le_bytes()));
        }
    }
}
