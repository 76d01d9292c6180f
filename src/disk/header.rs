//! File headers: 8 magic bytes naming the kind of file, then its format version as a
//! u32 LE. A reader checks both before it reads anything else, so a file of another
//! kind, or written by a build with another format, is refused with a clear error.
//! Plus the little-endian field readers of fixed-layout headers.

/// Bytes of a header: magic and version.
pub const HEADER_BYTES: usize = 12;

/// One file format: its magic, the version this build writes and reads, and the
/// largest record payload it accepts (a larger length on read is damage).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    pub magic: [u8; 8],
    pub version: u32,
    pub max_payload_bytes: usize,
}

/// Why a header was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// Fewer than [`HEADER_BYTES`] bytes.
    #[error("the file ends inside its header (truncated)")]
    Truncated,
    /// The magic is not this format's: not one of our files, or another kind.
    #[error("bad magic: not a file of this kind")]
    BadMagic,
    /// Our kind of file, written in a format version this build does not read.
    #[error("format version {found} (this build reads version {expected})")]
    UnsupportedVersion { found: u32, expected: u32 },
}

impl Format {
    pub const fn new(magic: [u8; 8], version: u32, max_payload_bytes: usize) -> Self {
        Self {
            magic,
            version,
            max_payload_bytes,
        }
    }

    /// The header to write at the start of a file.
    pub fn header(&self) -> [u8; HEADER_BYTES] {
        let mut h = [0u8; HEADER_BYTES];
        let (magic, version) = h.split_at_mut(8);
        magic.copy_from_slice(&self.magic);
        version.copy_from_slice(&self.version.to_le_bytes());
        h
    }

    /// Checks the header at the start of `bytes` (which may hold more): magic (as far
    /// as there are bytes), length, then version.
    ///
    /// # Errors
    /// The [`HeaderError`] met first.
    pub fn check(&self, bytes: &[u8]) -> Result<(), HeaderError> {
        // Magic first, on what there is: a short file of another kind is not ours,
        // a short prefix of our magic is a truncated one of ours.
        let n = bytes.len().min(self.magic.len());
        if bytes.get(..n) != self.magic.get(..n) {
            return Err(HeaderError::BadMagic);
        }
        if bytes.len() < HEADER_BYTES {
            return Err(HeaderError::Truncated);
        }
        let found = u32_at(bytes, 8).ok_or(HeaderError::Truncated)?;
        if found != self.version {
            return Err(HeaderError::UnsupportedVersion {
                found,
                expected: self.version,
            });
        }
        Ok(())
    }
}

/// The u32 LE at byte `off` of `b`; `None` past the end.
pub fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    let bytes = b.get(off..off.checked_add(4)?)?;
    Some(u32::from_le_bytes(bytes.try_into().ok()?))
}

/// The u64 LE at byte `off` of `b`; `None` past the end.
pub fn u64_at(b: &[u8], off: usize) -> Option<u64> {
    let bytes = b.get(off..off.checked_add(8)?)?;
    Some(u64::from_le_bytes(bytes.try_into().ok()?))
}
