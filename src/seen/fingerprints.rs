//! The second instance of the structure: a set of 128-bit content fingerprints, so a
//! page whose body was already seen under another URL is not parsed for links again.

use std::path::Path;

use super::error::Error;
use super::header::Purpose;
use super::set::{Backing, LogRef, PendingLog, SeenConfig, SeenSet, SnapshotInfo, Stats};

/// A [`SeenSet`] whose keys are 128-bit content digests, stored with purpose
/// "content fingerprints" in its header so it cannot be opened as a URL set by mistake
/// (and vice versa).
#[derive(Debug)]
pub struct ContentSeen {
    inner: SeenSet,
}

impl ContentSeen {
    /// Creates a fingerprint set for `capacity` pages at `fp` false positives when full.
    ///
    /// # Errors
    /// As [`SeenSet::create`].
    pub fn create(path: impl AsRef<Path>, capacity: u64, fp: f64) -> Result<Self, Error> {
        Self::create_backed(path, capacity, fp, Backing::default())
    }

    /// A set on no file (see [`SeenSet::anonymous`]).
    ///
    /// # Errors
    /// As [`SeenSet::anonymous`].
    pub fn anonymous(capacity: u64, fp: f64) -> Result<Self, Error> {
        let config = SeenConfig {
            purpose: Purpose::ContentFingerprints,
            backing: Backing::Memory,
            ..SeenConfig::new(capacity, fp)
        };
        Ok(Self {
            inner: SeenSet::anonymous(&config)?,
        })
    }

    /// [`ContentSeen::create`] with a choice of [`Backing`].
    ///
    /// # Errors
    /// As [`SeenSet::create`].
    pub fn create_backed(
        path: impl AsRef<Path>,
        capacity: u64,
        fp: f64,
        backing: Backing,
    ) -> Result<Self, Error> {
        let config = SeenConfig {
            purpose: Purpose::ContentFingerprints,
            backing,
            ..SeenConfig::new(capacity, fp)
        };
        Ok(Self {
            inner: SeenSet::create_with(path, &config)?,
        })
    }

    /// Opens a sealed fingerprint set.
    ///
    /// # Errors
    /// As [`SeenSet::open`], plus [`super::ErrorKind::WrongPurpose`] for a URL set.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        Self::open_backed(path, Backing::default())
    }

    /// [`ContentSeen::open`] with a choice of [`Backing`].
    ///
    /// # Errors
    /// As [`ContentSeen::open`].
    pub fn open_backed(path: impl AsRef<Path>, backing: Backing) -> Result<Self, Error> {
        Ok(Self {
            inner: SeenSet::open_with(path, Some(Purpose::ContentFingerprints), false, backing)?,
        })
    }

    /// Records `digest`; true if it was (probably) seen before.
    pub fn test_and_set(&self, digest: u128) -> bool {
        self.inner.test_and_set(&digest.to_le_bytes())
    }

    /// True if `digest` was (probably) seen.
    pub fn contains(&self, digest: u128) -> bool {
        self.inner.contains(&digest.to_le_bytes())
    }

    /// Counters and model figures.
    pub fn stats(&self) -> Stats {
        self.inner.stats()
    }

    /// Atomic, checksummed copy; see [`SeenSet::snapshot_to`].
    ///
    /// # Errors
    /// I/O errors.
    pub fn snapshot_to(&self, path: impl AsRef<Path>) -> Result<SnapshotInfo, Error> {
        self.inner.snapshot_to(path)
    }

    /// Incremental checkpoint; see [`SeenSet::checkpoint_log`].
    ///
    /// # Errors
    /// I/O errors.
    pub fn checkpoint_log(
        &self,
        dir: &Path,
        name: &str,
        prev: Option<&LogRef>,
        epoch: u64,
    ) -> Result<PendingLog<'_>, Error> {
        self.inner.checkpoint_log(dir, name, prev, epoch)
    }

    /// Rebuilds a fingerprint set from its presence log; see [`SeenSet::restore_log`].
    ///
    /// # Errors
    /// As [`SeenSet::restore_log`], plus [`super::ErrorKind::WrongPurpose`] for a URL set.
    pub fn restore_log(
        log: &LogRef,
        live: impl AsRef<Path>,
        backing: Backing,
    ) -> Result<Self, Error> {
        Ok(Self {
            inner: SeenSet::restore_log(log, live, backing, Some(Purpose::ContentFingerprints))?,
        })
    }

    /// Bytes of the bits resident in memory; see [`SeenSet::resident_bytes`].
    pub fn resident_bytes(&self) -> Option<u64> {
        self.inner.resident_bytes()
    }

    /// Where the bits' mapping starts; see [`SeenSet::mapping_address`].
    pub(crate) fn mapping_address(&self) -> usize {
        self.inner.mapping_address()
    }

    /// Seals the file; see [`SeenSet::close`].
    ///
    /// # Errors
    /// I/O errors.
    pub fn close(self) -> Result<(), Error> {
        self.inner.close()
    }
}
