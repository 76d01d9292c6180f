//! The line kept by reference in a checkpoint. At width most queued URLs wait in the
//! line (`line.rs`), in blocks of the frontier's log files, which are append-only and
//! never truncated in place. So a checkpoint need not copy them: each log file holding
//! a line block gets a second name beside the checkpoint's segment
//! (`frontier-NNNN-line-FFFFFFFF.log`, a hard link, made durable; a copy where links
//! fail), and `frontier-NNNN.line` lists the blocks in line order. A checkpoint then
//! writes the hosts' queues and the line's few RAM records, not ten million URLs.
//!
//! ```text
//! frontier-NNNN.line:
//!   header:  b"TRWLLIN\0" | version: u32 LE (1)
//!   record:  varint payload_len | crc32(payload): u32 LE | payload
//!   payload: varint name_len | file name | varint offset | varint len | varint urls
//! ```
//!
//! A resume pushes the segment's URLs, then the line blocks' in order (the line's
//! newest RAM records, written into the segment, come back ahead of the blocks: a
//! reordering of at most a block of new hosts). The list is strict like the segment:
//! a damaged record, a missing file or a block that does not decode is an error.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::segment::Record;
use super::{Frontier, FrontierError};
use crate::disk::{
    put_bytes, put_varint, take_bytes, take_varint, Format, RecordError, RecordReader,
};

/// The list's format.
pub const FORMAT: Format = Format::new(*b"TRWLLIN\0", 1, 4096);

/// One line block a checkpoint keeps by reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineRef {
    /// The kept log file's name, in the checkpoint's directory.
    pub file: String,
    pub offset: u32,
    pub len: u32,
    /// URLs (and markers) the block holds.
    pub urls: u32,
}

/// File name of shard `shard`'s line list in a checkpoint.
pub fn line_file_name(shard: usize) -> String {
    format!("frontier-{shard:04}.line")
}

/// Why a line list or a kept block could not be read.
#[derive(Debug, thiserror::Error)]
pub enum KeptError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{}: damaged at byte {offset}: {what}", path.display())]
    Damaged {
        path: PathBuf,
        offset: u64,
        what: String,
    },
}

/// Writes the line list and fsyncs it.
///
/// # Errors
/// I/O errors.
pub fn write_refs(path: &Path, refs: &[LineRef]) -> io::Result<()> {
    let mut w = BufWriter::new(File::create(path)?);
    w.write_all(&FORMAT.header())?;
    let mut payload = Vec::new();
    for r in refs {
        payload.clear();
        put_bytes(&mut payload, r.file.as_bytes());
        put_varint(&mut payload, u64::from(r.offset));
        put_varint(&mut payload, u64::from(r.len));
        put_varint(&mut payload, u64::from(r.urls));
        crate::disk::write_record(&mut w, &payload)?;
    }
    w.into_inner()
        .map_err(io::IntoInnerError::into_error)?
        .sync_all()
}

/// Every line list of checkpoint directory `dir`, in shard order.
///
/// # Errors
/// The directory cannot be listed, or a list is unreadable or damaged.
pub fn line_lists(dir: &Path) -> Result<Vec<Vec<LineRef>>, KeptError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|source| KeptError::Io {
            path: dir.to_path_buf(),
            source,
        })?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("frontier-") && n.ends_with(".line"))
        })
        .collect();
    files.sort();
    files.iter().map(|f| read_refs(f)).collect()
}

/// Reads a line list; a checkpoint without one (older builds, or a crawl with no line
/// on disk) has none.
///
/// # Errors
/// The file is unreadable or damaged.
pub fn read_refs(path: &Path) -> Result<Vec<LineRef>, KeptError> {
    let io_err = |source| KeptError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err(e)),
    };
    let damaged = |offset, what: String| KeptError::Damaged {
        path: path.to_path_buf(),
        offset,
        what,
    };
    let mut r = RecordReader::open(BufReader::new(file), &FORMAT).map_err(|e| match e {
        RecordError::Io(e) => io_err(e),
        e => damaged(0, e.to_string()),
    })?;
    let mut refs = Vec::new();
    let mut payload = Vec::new();
    loop {
        let offset = match r.next_record(&mut payload) {
            Ok(Some(offset)) => offset,
            Ok(None) => return Ok(refs),
            Err(RecordError::Io(e)) => return Err(io_err(e)),
            Err(e) => return Err(damaged(r.offset(), e.to_string())),
        };
        let mut input = &payload[..];
        let decoded = (|| {
            let name = std::str::from_utf8(take_bytes(&mut input).ok()?).ok()?;
            // A name, never a path: a damaged list must not point elsewhere.
            if name.is_empty() || name.contains('/') || name.starts_with('.') {
                return None;
            }
            let mut num = || u32::try_from(take_varint(&mut input).ok()?).ok();
            let (off, len, urls) = (num()?, num()?, num()?);
            input.is_empty().then(|| LineRef {
                file: name.to_owned(),
                offset: off,
                len,
                urls,
            })
        })();
        match decoded {
            Some(r) => refs.push(r),
            None => return Err(damaged(offset, "malformed line reference".to_owned())),
        }
    }
}

/// The records of one kept block, read from the checkpoint's directory `dir`.
///
/// # Errors
/// The file is missing or short, or the block does not decode.
pub fn read_block(dir: &Path, r: &LineRef, buf: &mut Vec<u8>) -> Result<Vec<Record>, KeptError> {
    let path = dir.join(&r.file);
    // A length no block can have is damage, not an allocation of up to 4 GiB.
    if r.len as usize > super::block::MAX_BLOCK_BYTES + crate::disk::MAX_FRAME_HEAD_BYTES {
        return Err(KeptError::Damaged {
            path,
            offset: u64::from(r.offset),
            what: format!("line block of {} bytes: longer than any block", r.len),
        });
    }
    buf.resize(r.len as usize, 0);
    File::open(&path)
        .and_then(|f| f.read_exact_at(buf, u64::from(r.offset)))
        .map_err(|source| KeptError::Io {
            path: path.clone(),
            source,
        })?;
    super::block::decode(buf).ok_or_else(|| KeptError::Damaged {
        path,
        offset: u64::from(r.offset),
        what: "line block does not decode (checksum or records)".to_owned(),
    })
}

impl Frontier {
    /// For a checkpoint, after [`Frontier::for_each_queued_but_line_blocks`] listed
    /// the rest: keeps each log file holding a line block in `dir` as
    /// `{prefix}-{file:08}.log` and returns the line's blocks in order.
    ///
    /// # Errors
    /// The write batch could not be appended, or a file could not be kept.
    pub fn keep_line_blocks(
        &mut self,
        dir: &Path,
        prefix: &str,
    ) -> Result<Vec<LineRef>, FrontierError> {
        self.flush_batch()?;
        let mut kept = std::collections::HashSet::new();
        let mut refs = Vec::with_capacity(self.line.blocks.len());
        for b in &self.line.blocks {
            let file = format!("{prefix}-{:08}.log", b.file);
            if kept.insert(b.file) {
                let to = dir.join(&file);
                self.store
                    .keep_as(b.file, &to)
                    .map_err(|source| FrontierError::Write { path: to, source })?;
            }
            refs.push(LineRef {
                file,
                offset: b.offset,
                len: b.len,
                urls: b.count,
            });
        }
        Ok(refs)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::frontier::{FrontierConfig, QueuedUrl};

    fn url(host: usize, i: usize) -> QueuedUrl {
        QueuedUrl::seed(format!("http://h{host}.test/{i}"))
    }

    /// Every queued URL as (host, url), sorted.
    fn all(f: &mut Frontier) -> Vec<(String, String)> {
        let mut v = Vec::new();
        f.for_each_queued(|h, u| v.push((h.to_owned(), u.url.clone())))
            .unwrap();
        v.sort();
        v
    }

    /// A checkpoint of the line by reference lists what a full listing lists, and
    /// stays readable after the frontier consumed its blocks and reused its files.
    #[test]
    fn the_line_kept_by_reference_lists_every_url_and_survives_the_frontier() {
        let now = Instant::now();
        let dir = tempfile::tempdir().unwrap();
        let mut c = FrontierConfig::new(dir.path().join("frontier"));
        c.block_urls = 64;
        c.segment_bytes = 16 << 10;
        c.max_active_hosts = 4;
        let mut f = Frontier::new(c).unwrap();
        // Hosts with no entry: their URLs wait in the line, in blocks on disk.
        for h in 0..3_000 {
            f.push(&format!("h{h}.test"), url(h, 0), now).unwrap();
        }
        // Two active hosts with queues of their own.
        for (host, _) in [
            f.take_ready(now).unwrap().unwrap(),
            f.take_ready(now).unwrap().unwrap(),
        ] {
            for i in 1..5 {
                f.push(&host, QueuedUrl::seed(format!("http://{host}/{i}")), now)
                    .unwrap();
            }
        }
        let expected = all(&mut f);
        let cp = dir.path().join("cp");
        std::fs::create_dir_all(&cp).unwrap();
        let mut listed = Vec::new();
        f.for_each_queued_but_line_blocks(|h, u| listed.push((h.to_owned(), u.url.clone())))
            .unwrap();
        let refs = f.keep_line_blocks(&cp, "frontier-0000-line").unwrap();
        assert!(refs.len() >= 10, "{} blocks", refs.len());
        assert!(
            listed.len() < 1_000,
            "the blocks' URLs are not copied: {}",
            listed.len()
        );
        write_refs(&cp.join(line_file_name(0)), &refs).unwrap();
        // The frontier goes on: the line is consumed, its files die and are reused.
        while let Some((host, _)) = f.take_ready(now).unwrap() {
            f.complete(&host, now);
        }
        for h in 3_000..6_000 {
            f.push(&format!("h{h}.test"), url(h, 0), now).unwrap();
        }
        // The checkpoint still reads every URL it listed.
        let lists = line_lists(&cp).unwrap();
        assert_eq!(lists, vec![refs]);
        let mut buf = Vec::new();
        for r in &lists[0] {
            for rec in read_block(&cp, r, &mut buf).unwrap() {
                if !rec.item.url.is_empty() {
                    listed.push((rec.host, rec.item.url));
                }
            }
        }
        listed.sort();
        assert_eq!(listed, expected);
        // A reference no block can match is an error, before any allocation.
        let huge = LineRef {
            len: u32::MAX,
            ..lists[0][0].clone()
        };
        assert!(matches!(
            read_block(&cp, &huge, &mut buf),
            Err(KeptError::Damaged { .. })
        ));
        // A damaged list is an error, not a silent loss.
        let mut bytes = std::fs::read(cp.join(line_file_name(0))).unwrap();
        let last = bytes.len() - 2;
        bytes[last] ^= 0x40;
        std::fs::write(cp.join(line_file_name(0)), bytes).unwrap();
        assert!(matches!(line_lists(&cp), Err(KeptError::Damaged { .. })));
    }
}
