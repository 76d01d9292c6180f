//! The presence bits' memory: a mapped region (of the set's file, or anonymous) seen
//! as `[AtomicU64]`, its `madvise`, `mlock` and `msync` (memmap2's safe calls), and the
//! CPU prefetch hint. `seen::set` and `seen::dirty` use it; the file's lock is
//! [`super::fs::lock_exclusive`].
//!
//! Everything here is small on purpose; the argument for why it is sound is in
//! `docs/safety.md`. In short: `SeenSet` creates (or validates) the file itself, holds
//! an exclusive `flock` on it for as long as it is mapped, never truncates or resizes
//! it while mapped, and only ever touches the mapped bytes through atomic operations,
//! so concurrent access from many threads (and write-back by the kernel) is never a
//! data race in the Rust memory model.
#![allow(
    unsafe_code,
    reason = "the mmap'd presence bits need raw-pointer access; the OS seam (src/sys), see docs/safety.md"
)]

use std::fs::File;
use std::io;
use std::sync::atomic::AtomicU64;

use memmap2::{Advice, MmapOptions, MmapRaw};

/// A writable shared mapping of `len_bytes` bytes of a file, starting at `offset`,
/// viewed as a slice of `AtomicU64`.
///
/// Invariants (checked in [`MappedWords::map`]): the mapped pointer is 8-byte aligned
/// and the length is a non-zero multiple of 8. The mapping lives exactly as long as
/// this value; the slice returned by [`MappedWords::words`] borrows it.
pub(crate) struct MappedWords {
    map: MmapRaw,
    words: usize,
}

impl std::fmt::Debug for MappedWords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MappedWords")
            .field("words", &self.words)
            .finish()
    }
}

impl MappedWords {
    /// Maps `len_bytes` of `file` at `offset` read-write and shared.
    ///
    /// The caller must hold the exclusive lock from [`super::fs::lock_exclusive`] on `file` and must
    /// not change the file's length while the returned value lives; `SeenSet` guarantees
    /// both (see `docs/safety.md`).
    ///
    /// # Errors
    /// The `mmap` call fails, or the mapping is not 8-byte aligned or has a length that is
    /// zero or not a multiple of 8 (returned as `InvalidInput`, never reached with the
    /// offsets `SeenSet` uses).
    pub(crate) fn map(file: &File, offset: u64, len_bytes: usize) -> io::Result<Self> {
        if len_bytes == 0 || len_bytes % 8 != 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "mapping length not a multiple of 8",
            ));
        }
        let map = MmapOptions::new()
            .offset(offset)
            .len(len_bytes)
            .map_raw(file)?;
        Self::words_over(map, len_bytes)
    }

    /// The words of `map`, once it is known to be `len_bytes` long and aligned for
    /// `AtomicU64` (both mappings are checked the same way).
    fn words_over(map: MmapRaw, len_bytes: usize) -> io::Result<Self> {
        if map.as_ptr().align_offset(std::mem::align_of::<AtomicU64>()) != 0
            || map.len() != len_bytes
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "mapping not aligned for AtomicU64",
            ));
        }
        Ok(Self {
            map,
            words: len_bytes / 8,
        })
    }

    /// An anonymous (RAM-only, zero-filled) mapping of `len_bytes`, for sets that keep
    /// their bits in memory and write them to their file explicitly. Pages are 4 KiB
    /// until [`MappedWords::advise_huge`]: a sparse set then costs memory only for the
    /// pages its keys touched.
    ///
    /// # Errors
    /// The `mmap` call fails, or the length is zero or not a multiple of 8.
    pub(crate) fn anon(len_bytes: usize) -> io::Result<Self> {
        if len_bytes == 0 || len_bytes % 8 != 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "mapping length not a multiple of 8",
            ));
        }
        let map = MmapRaw::from(MmapOptions::new().len(len_bytes).map_anon()?);
        Self::words_over(map, len_bytes)
    }

    /// The mapped region as atomic words.
    pub(crate) fn words(&self) -> &[AtomicU64] {
        // SAFETY: `map`/`anon` checked that the pointer is non-null (mmap succeeded), aligned
        // for AtomicU64 and valid for `words * 8` bytes. The mapping is writable (shared file
        // mapping, or private anonymous memory that only this value owns: the `MmapMut` it
        // came from was converted into `MmapRaw` without ever being dereferenced) and
        // stays valid for the lifetime of `self`, which the returned slice borrows. Every
        // access to these bytes, from any thread of this process, goes through this atomic
        // view, so there are no data races. No other process writes the file: we hold an
        // exclusive flock on it, and we never truncate it while mapped (a truncation by a
        // process that ignores the lock would raise SIGBUS, a crash, not undefined memory
        // access). AtomicU64 has the same size and alignment as u64 and every bit pattern
        // is a valid value, so reading bytes the kernel paged in from disk is fine.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr().cast::<AtomicU64>(), self.words) }
    }

    /// Hints the CPU to fetch the 64-byte block that starts at word `word` into cache,
    /// so a batch can have many misses in flight at once. Out-of-range indexes are
    /// ignored.
    #[inline]
    pub(crate) fn prefetch(&self, word: usize) {
        let Some(target) = self.words().get(word) else {
            return;
        };
        prefetch_ptr(std::ptr::from_ref(target).cast::<u8>());
    }

    /// Asks for transparent huge pages, so a dense multi-gigabyte set does not miss the
    /// TLB on every access (ignored where THP is disabled). Faults in the region then
    /// take 2 MiB pages and khugepaged collapses the pages already there.
    pub(crate) fn advise_huge(&self) -> io::Result<()> {
        self.map.advise(Advice::HugePage)
    }

    /// Asks the kernel not to read ahead: access to the bits is uniformly random.
    pub(crate) fn advise_random(&self) -> io::Result<()> {
        self.map.advise(Advice::Random)
    }

    /// Locks the mapped pages in RAM (`mlock`), so the set is never paged out.
    pub(crate) fn lock_in_ram(&self) -> io::Result<()> {
        self.map.lock()
    }

    /// Bytes of this mapping resident in the process now: the `Rss` of the mapping
    /// that starts at our address in `/proc/self/smaps` (file-backed or anonymous, huge
    /// pages included). `None` if the file cannot be read or has no such mapping.
    pub(crate) fn resident_bytes(&self) -> Option<u64> {
        super::procfs::mapping_rss_bytes(self.address())
    }

    /// Where the mapping starts, as `/proc/self/smaps` names it.
    pub(crate) fn address(&self) -> usize {
        self.map.as_ptr() as usize
    }

    /// Writes dirty mapped pages back to the file and waits (`msync(MS_SYNC)`).
    pub(crate) fn flush(&self) -> io::Result<()> {
        self.map.flush()
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn prefetch_ptr(ptr: *const u8) {
    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    // SAFETY: `prefetch` is a hint: it never faults, even on an invalid address, and has no
    // effect on program semantics. SSE (which provides it) is part of the x86_64 baseline.
    // The pointer here comes from a live `&AtomicU64` inside the mapping anyway.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(ptr.cast::<i8>()) }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn prefetch_ptr(ptr: *const u8) {
    // No stable prefetch intrinsic elsewhere: the batch still overlaps the misses through
    // independent loads in the apply loop. Keep the pointer "used" at no cost.
    let _ = ptr;
}

/// An anonymous memory file (Linux `memfd_create`): a file descriptor on no
/// filesystem, freed with its last reference ([`crate::seen::SeenSet::anonymous`]).
///
/// # Errors
/// The system call failed (no memory, too many open files).
pub(crate) fn anonymous_file() -> std::io::Result<std::fs::File> {
    use std::os::fd::FromRawFd;
    const NAME: &std::ffi::CStr = c"trawl-presence-bits";
    // SAFETY: `NAME` is a valid NUL-terminated string that outlives the call;
    // `memfd_create` reads it and returns a new descriptor or -1.
    let fd = unsafe { libc::memfd_create(NAME.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor this process owns and nothing else holds;
    // the `File` takes sole ownership and closes it on drop.
    Ok(unsafe { std::fs::File::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::*;

    fn sized_file(len: u64) -> (tempfile::TempDir, File) {
        let dir = tempfile::tempdir().unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(dir.path().join("f"))
            .unwrap();
        file.set_len(len).unwrap();
        (dir, file)
    }

    /// Covers `words` (the slice view): writes through the atomics reach the file.
    #[test]
    fn words_view_reads_and_writes_the_file() {
        let (_dir, file) = sized_file(4096 + 4096);
        let mapped = MappedWords::map(&file, 4096, 4096).unwrap();
        let words = mapped.words();
        assert_eq!(words.len(), 512);
        assert_eq!(words[3].fetch_or(0b101, Ordering::Relaxed), 0);
        assert_eq!(words[3].load(Ordering::Relaxed), 0b101);
        mapped.flush().unwrap();
        let mut buf = [0u8; 8];
        std::os::unix::fs::FileExt::read_exact_at(&file, &mut buf, 4096 + 3 * 8).unwrap();
        assert_eq!(u64::from_ne_bytes(buf), 0b101);
    }

    /// Covers `prefetch_ptr` (in and out of range) and the advice/lock helpers.
    #[test]
    fn prefetch_and_advice_are_harmless() {
        let (_dir, file) = sized_file(8192);
        let mapped = MappedWords::map(&file, 0, 8192).unwrap();
        mapped.prefetch(0);
        mapped.prefetch(1023);
        mapped.prefetch(1024);
        mapped.prefetch(usize::MAX);
        mapped.advise_random().unwrap();
        // mlock may be refused by RLIMIT_MEMLOCK in a sandbox; either answer is fine, it
        // must not crash.
        let _ = mapped.lock_in_ram();
        assert_eq!(mapped.words()[1023].load(Ordering::Relaxed), 0);
    }

    /// Covers `words` over an anonymous mapping.
    #[test]
    fn anonymous_words_start_zero_and_take_writes() {
        let mapped = MappedWords::anon(1 << 21).unwrap();
        let words = mapped.words();
        assert_eq!(words.len(), (1 << 21) / 8);
        assert!(words
            .iter()
            .step_by(4096)
            .all(|w| w.load(Ordering::Relaxed) == 0));
        words[100].fetch_or(1 << 63, Ordering::Relaxed);
        assert_eq!(words[100].load(Ordering::Relaxed), 1 << 63);
        assert!(MappedWords::anon(0).is_err());
    }

    /// The resident bytes of a mapping read with others in one read of smaps: the pages
    /// touched are there, and an address with no mapping adds nothing. (The mapping is
    /// advised random access, as the presence bits are, so the kernel does not merge it
    /// with a neighbouring anonymous mapping, which would move its start.)
    #[test]
    fn resident_bytes_in_one_read_of_smaps() {
        let a = MappedWords::anon(1 << 20).unwrap();
        a.advise_random().unwrap();
        for w in a.words().iter().step_by(512).take(16) {
            w.fetch_or(1, Ordering::Relaxed);
        }
        if !std::path::Path::new("/proc/self/smaps").exists() {
            return;
        }
        let alone = a.resident_bytes().unwrap();
        assert!(alone >= 16 * 4096, "{alone}");
        let read = crate::sys::procfs::mappings_rss_bytes(&[a.address(), 0x1000]).unwrap();
        assert!(read >= 16 * 4096, "{read}");
    }

    #[test]
    fn map_rejects_bad_lengths() {
        let (_dir, file) = sized_file(8192);
        assert!(MappedWords::map(&file, 0, 0).is_err());
        assert!(MappedWords::map(&file, 0, 12).is_err());
    }

    #[test]
    fn an_anonymous_file_holds_what_is_written_and_maps() {
        use std::os::unix::fs::FileExt;
        let file = anonymous_file().unwrap();
        file.set_len(8192).unwrap();
        file.write_all_at(&[7u8; 8], 4096).unwrap();
        let mut back = [0u8; 8];
        file.read_exact_at(&mut back, 4096).unwrap();
        assert_eq!(back, [7u8; 8]);
        let mapped = MappedWords::map(&file, 4096, 4096).unwrap();
        assert_eq!(mapped.words().len(), 512);
    }
}
