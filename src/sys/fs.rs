//! Filesystem calls std lacks: `statvfs(3)` for free space, `flock(2)` for the lock
//! that keeps a second process off a mapped file.
#![allow(
    unsafe_code,
    reason = "statvfs and flock through libc; the OS seam (src/sys), see docs/safety.md"
)]

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// What `statvfs` says of a filesystem, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FsSpace {
    /// Bytes an unprivileged process may still write (`f_bavail × f_frsize`).
    pub available_bytes: u64,
    /// The filesystem's size (`f_blocks × f_frsize`).
    pub total_bytes: u64,
}

/// Measures the filesystem that holds `path`.
///
/// # Errors
/// `statvfs` failed (the path is gone), or the path holds a NUL byte.
pub fn statvfs(path: &Path) -> io::Result<FsSpace> {
    let path = std::ffi::CString::new(path.as_os_str().as_bytes())?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `path` is a NUL-terminated string that lives across the call, and `st`
    // points to writable memory of the size and alignment of `struct statvfs`.
    let rc = unsafe { libc::statvfs(path.as_ptr(), st.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: statvfs returned 0, so it filled the whole struct.
    let st = unsafe { st.assume_init() };
    #[allow(
        clippy::unnecessary_cast,
        reason = "the field types differ between platforms (u32 or u64)"
    )]
    let (frsize, bavail, blocks) = (st.f_frsize as u64, st.f_bavail as u64, st.f_blocks as u64);
    Ok(FsSpace {
        available_bytes: bavail.saturating_mul(frsize),
        total_bytes: blocks.saturating_mul(frsize),
    })
}

/// Takes an exclusive, non-blocking advisory lock (`flock(LOCK_EX | LOCK_NB)`) on
/// `file`; it is released when the file descriptor is closed (when the `File` drops).
///
/// Returns `Ok(false)` if another open file description holds the lock.
///
/// # Errors
/// Any `flock` failure other than "would block".
pub fn lock_exclusive(file: &File) -> io::Result<bool> {
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is a valid open descriptor borrowed from `file` for the duration of the
    // call; flock only reads the integer arguments and touches no memory of ours.
    let rc = unsafe { libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(true);
    }
    let err = io::Error::last_os_error();
    if err.kind() == io::ErrorKind::WouldBlock {
        Ok(false)
    } else {
        Err(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Covers both `statvfs` blocks: a real directory, a missing one, a NUL byte.
    #[test]
    fn statvfs_measures_a_real_filesystem() {
        let dir = tempfile::tempdir().unwrap();
        let space = statvfs(dir.path()).unwrap();
        assert!(space.total_bytes > 0);
        assert!(space.available_bytes <= space.total_bytes);
        let gone = statvfs(&dir.path().join("missing")).unwrap_err();
        assert_eq!(gone.kind(), io::ErrorKind::NotFound);
        assert!(statvfs(Path::new("a\0b")).is_err());
    }

    /// Covers the `flock` call: a second description of the same file cannot lock it
    /// until the first closes.
    #[test]
    fn exclusive_lock_excludes_a_second_opener() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let first = File::create(&path).unwrap();
        assert!(lock_exclusive(&first).unwrap());
        let second = File::open(&path).unwrap();
        assert!(!lock_exclusive(&second).unwrap());
        drop(first);
        assert!(lock_exclusive(&second).unwrap());
    }
}
