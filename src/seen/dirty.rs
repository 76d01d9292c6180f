//! Which 64-byte blocks of a set changed since the last checkpoint took them.
//!
//! A checkpoint that rewrote the whole bit region would cost time and I/O in proportion
//! to `--seen-capacity`, not to the crawl; so every insertion that sets a bit marks its
//! block here, and a checkpoint writes only the marked blocks (`docs/seen.md`,
//! "Incremental checkpoints").
//!
//! Two levels, both of atomic words: one bit per block (1/512 of the bit region, in a
//! lazily zeroed anonymous mapping, so it costs memory only where keys landed) and one
//! summary bit per word of that, so taking the marks reads words in proportion to the
//! blocks that changed, never the whole map.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::sys::mmap::MappedWords;

/// The dirty-block map of one set.
#[derive(Debug)]
pub(crate) struct DirtyBlocks {
    /// Bit `b % 64` of word `b / 64`: block `b` changed.
    marks: MappedWords,
    /// Bit `w % 64` of word `w / 64`: word `w` of `marks` may be non-zero.
    summary: Box<[AtomicU64]>,
    blocks: u64,
}

impl DirtyBlocks {
    /// A map for `blocks` blocks, all clean.
    ///
    /// # Errors
    /// The anonymous mapping fails.
    pub(crate) fn new(blocks: u64) -> io::Result<Self> {
        let words = blocks.div_ceil(64).max(1);
        let bytes = usize::try_from(words * 8)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "dirty map too large"))?;
        let summary_words = usize::try_from(words.div_ceil(64)).unwrap_or(usize::MAX);
        Ok(Self {
            marks: MappedWords::anon(bytes)?,
            summary: (0..summary_words).map(|_| AtomicU64::new(0)).collect(),
            blocks,
        })
    }

    /// Marks `block` as changed. Called after the block's bits were set; the release
    /// ordering makes those bits visible to the taker that sees the mark.
    #[inline]
    pub(crate) fn mark(&self, block: u64) {
        let w = (block / 64) as usize;
        let bit = 1u64 << (block % 64);
        let Some(word) = self.marks.words().get(w) else {
            return;
        };
        // Most insertions during a busy epoch land in a word already marked: a plain
        // load keeps the cache line shared instead of bouncing it between cores.
        if word.load(Ordering::Relaxed) & bit != 0 {
            return;
        }
        let old = word.fetch_or(bit, Ordering::Release);
        if old == 0 {
            // This thread made the word non-zero, so it owns telling the summary. A
            // taker that swapped the word to zero in between makes the next caller
            // see zero again and set the summary again: marks are never lost.
            if let Some(s) = self.summary.get(w / 64) {
                s.fetch_or(1u64 << (w % 64), Ordering::Release);
            }
        }
    }

    /// Hints the CPU to fetch the word that holds `block`'s mark, which
    /// [`DirtyBlocks::mark`] is about to read.
    #[inline]
    pub(crate) fn prefetch(&self, block: u64) {
        self.marks.prefetch((block / 64) as usize);
    }

    /// Takes every mark (clearing it) and returns the marked blocks in ascending order.
    /// A block marked while this runs is either in the result or stays marked for the
    /// next call.
    pub(crate) fn take(&self) -> Vec<u64> {
        let mut out = Vec::new();
        let words = self.marks.words();
        for (si, s) in self.summary.iter().enumerate() {
            let mut sbits = s.swap(0, Ordering::AcqRel);
            while sbits != 0 {
                let w = si * 64 + sbits.trailing_zeros() as usize;
                sbits &= sbits - 1;
                let Some(word) = words.get(w) else {
                    continue;
                };
                let mut bits = word.swap(0, Ordering::AcqRel);
                while bits != 0 {
                    let block = w as u64 * 64 + u64::from(bits.trailing_zeros());
                    bits &= bits - 1;
                    if block < self.blocks {
                        out.push(block);
                    }
                }
            }
        }
        out
    }

    /// Marks `blocks` again: the checkpoint that took them was not committed, so the
    /// next one must write them.
    pub(crate) fn remark(&self, blocks: &[u64]) {
        for &b in blocks {
            self.mark(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn take_returns_marked_blocks_once_in_order() {
        let d = DirtyBlocks::new(100_000).unwrap();
        for b in [99_999, 5, 64, 5, 63, 4096 * 3 + 1] {
            d.mark(b);
        }
        assert_eq!(d.take(), vec![5, 63, 64, 4096 * 3 + 1, 99_999]);
        assert!(d.take().is_empty());
        d.remark(&[7, 70_000]);
        assert_eq!(d.take(), vec![7, 70_000]);
        // Out of range marks are ignored, never a panic.
        d.mark(u64::MAX);
        assert!(d.take().is_empty());
    }

    #[test]
    fn marks_from_many_threads_are_all_taken() {
        let d = DirtyBlocks::new(1 << 20).unwrap();
        let mut taken = Vec::new();
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let d = &d;
                s.spawn(move || {
                    for i in 0..20_000u64 {
                        d.mark((i * 7919 + t * 104_729) % (1 << 20));
                    }
                });
            }
            for _ in 0..50 {
                taken.extend(d.take());
            }
        });
        taken.extend(d.take());
        taken.sort_unstable();
        taken.dedup();
        let mut want: Vec<u64> = (0..4u64)
            .flat_map(|t| (0..20_000u64).map(move |i| (i * 7919 + t * 104_729) % (1 << 20)))
            .collect();
        want.sort_unstable();
        want.dedup();
        assert_eq!(taken, want);
    }
}
