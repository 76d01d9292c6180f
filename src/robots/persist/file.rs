//! The robots cache file's I/O: writing one shard's cache to `robots-NNNN.bin`,
//! reading it back record by record (skipping damaged ones), and loading every
//! shard's file of a checkpoint. The record encoding these use is the sans-IO code
//! of the parent module.

#![deny(clippy::indexing_slicing)]

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;

use super::{
    decode_entry, decode_meta, encode_entry, encode_meta, put_varint, Clock, Input, Meta,
    StoredEntry, StoredState, HEADER_BYTES, MAGIC, MAX_RECORD_BYTES, TYPE_END, TYPE_ENTRY,
    TYPE_META, VERSION,
};
use crate::frontier::segment::read_full;
use crate::robots::cache::{HostKey, RobotsCache};
use crate::robots::policy::{PolicyConfig, RobotsPolicy};

/// What [`write_file`] wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteStats {
    /// Hosts written.
    pub entries: u64,
    /// Hosts held but not worth keeping (never fetched, first fetch in flight) or
    /// too large for a record.
    pub skipped: u64,
    pub bytes: u64,
}

/// Writes the cache to `path` (least recently used host first) and fsyncs it.
///
/// # Errors
/// I/O errors.
pub fn write_file(path: &Path, cache: &RobotsCache, clock: Clock) -> io::Result<WriteStats> {
    let mut w = BufWriter::new(File::create(path)?);
    let mut stats = WriteStats::default();
    w.write_all(MAGIC)?;
    w.write_all(&VERSION.to_le_bytes())?;
    stats.bytes = HEADER_BYTES;
    let mut payload = vec![TYPE_META];
    encode_meta(&Meta::of(cache.config(), clock.wall_ms), &mut payload);
    stats.bytes += write_record(&mut w, &payload)?;
    for (key, policy) in cache.entries_lru() {
        let Some(state) = StoredState::of(policy.state(), clock) else {
            stats.skipped += 1;
            continue;
        };
        payload.clear();
        payload.push(TYPE_ENTRY);
        encode_entry(
            &StoredEntry {
                key: key.clone(),
                robots_url: policy.robots_url().clone(),
                state,
            },
            &mut payload,
        );
        if payload.len() > MAX_RECORD_BYTES {
            stats.skipped += 1;
            continue;
        }
        stats.bytes += write_record(&mut w, &payload)?;
        stats.entries += 1;
    }
    payload.clear();
    payload.push(TYPE_END);
    put_varint(&mut payload, stats.entries);
    stats.bytes += write_record(&mut w, &payload)?;
    let file = w.into_inner().map_err(io::IntoInnerError::into_error)?;
    file.sync_all()?;
    Ok(stats)
}

fn write_record(w: &mut impl Write, payload: &[u8]) -> io::Result<u64> {
    let len = u32::try_from(payload.len()).map_err(|_| io::Error::other("record too large"))?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(&crc32fast::hash(payload).to_le_bytes())?;
    w.write_all(payload)?;
    Ok(8 + u64::from(len))
}

/// Damage found while reading a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    /// Byte offset of the bad record (or 0 for the header).
    pub offset: u64,
    pub message: String,
}

/// Everything read from one file: the meta record, the entries that checked out, and
/// the damage met on the way.
#[derive(Clone, Debug, Default)]
pub struct FileContents {
    /// `None` when the header or the meta record is damaged (no entry is then used).
    pub meta: Option<Meta>,
    pub entries: Vec<StoredEntry>,
    pub damage: Vec<Damage>,
    /// Bytes read through.
    pub bytes: u64,
    /// The entry count the end record states (`None` without a readable end record).
    pub written: Option<u64>,
}

/// Reads a whole file. Never fails on damage: bad records are skipped and listed in
/// [`FileContents::damage`]; only the failure to open or read is an `Err`.
///
/// # Errors
/// I/O errors other than a short read.
pub fn read_file(path: &Path) -> io::Result<FileContents> {
    let mut r = BufReader::new(File::open(path)?);
    let mut out = FileContents::default();
    let mut header = [0u8; HEADER_BYTES as usize];
    match r.read_exact(&mut header) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
            out.damage.push(Damage {
                offset: 0,
                message: "the file ends inside the header (truncated)".to_owned(),
            });
            return Ok(out);
        }
        Err(e) => return Err(e),
    }
    if header.get(..8) != Some(&MAGIC[..]) || header.get(8..) != Some(&VERSION.to_le_bytes()[..]) {
        out.damage.push(Damage {
            offset: 0,
            message: "bad header: not a trawl robots file of version 1".to_owned(),
        });
        return Ok(out);
    }
    out.bytes = HEADER_BYTES;
    let mut first = true;
    let mut ended = false;
    let mut payload = Vec::new();
    loop {
        let offset = out.bytes;
        let mut head = [0u8; 8];
        match read_full(&mut r, &mut head)? {
            0 => break,
            8 => {}
            _ => {
                out.damage.push(truncated(offset));
                break;
            }
        }
        let [l0, l1, l2, l3, c0, c1, c2, c3] = head;
        let len = u32::from_le_bytes([l0, l1, l2, l3]) as usize;
        let crc = u32::from_le_bytes([c0, c1, c2, c3]);
        if len > MAX_RECORD_BYTES {
            out.damage.push(Damage {
                offset,
                message: format!(
                    "record length {len} is implausible: the rest of the file is unreadable"
                ),
            });
            break;
        }
        payload.resize(len, 0);
        if read_full(&mut r, &mut payload)? != len {
            out.damage.push(truncated(offset));
            break;
        }
        out.bytes += 8 + len as u64;
        if crc32fast::hash(&payload) != crc {
            out.damage.push(Damage {
                offset,
                message: if first {
                    "the meta record's checksum does not match: no entry is used".to_owned()
                } else {
                    "record checksum mismatch: entry skipped (its robots.txt is refetched)"
                        .to_owned()
                },
            });
            if first {
                break;
            }
            continue;
        }
        let (kind, body) = payload.split_first().map_or((0, &[][..]), |(k, b)| (*k, b));
        match kind {
            TYPE_META if first => match decode_meta(body) {
                Ok(m) => out.meta = Some(m),
                Err(e) => {
                    out.damage.push(Damage {
                        offset,
                        message: format!("{e} (meta record): no entry is used"),
                    });
                    break;
                }
            },
            _ if first => {
                out.damage.push(Damage {
                    offset,
                    message: "the first record is not the meta record: no entry is used".to_owned(),
                });
                break;
            }
            TYPE_ENTRY => match decode_entry(body) {
                Ok(e) => out.entries.push(e),
                Err(e) => out.damage.push(Damage {
                    offset,
                    message: format!("{e}: entry skipped"),
                }),
            },
            TYPE_END => {
                let mut i = Input(body);
                match i.varint("end") {
                    Ok(n) if i.0.is_empty() => out.written = Some(n),
                    _ => out.damage.push(Damage {
                        offset,
                        message: "malformed end record".to_owned(),
                    }),
                }
                ended = true;
                break;
            }
            _ => out.damage.push(Damage {
                offset,
                message: format!("unknown record type {kind}: skipped"),
            }),
        }
        first = false;
    }
    if out.meta.is_some() && !ended && out.damage.is_empty() {
        out.damage.push(Damage {
            offset: out.bytes,
            message: "the file ends before its end record (truncated)".to_owned(),
        });
    }
    if ended {
        let mut extra = [0u8; 1];
        if read_full(&mut r, &mut extra)? != 0 {
            out.damage.push(Damage {
                offset: out.bytes,
                message: "bytes after the end record".to_owned(),
            });
        }
    }
    if out.meta.is_none() && out.damage.is_empty() {
        out.damage.push(Damage {
            offset: HEADER_BYTES,
            message: "no meta record".to_owned(),
        });
    }
    if out.meta.is_none() {
        out.entries.clear();
    }
    Ok(out)
}

fn truncated(offset: u64) -> Damage {
    Damage {
        offset,
        message: "the file ends inside a record (truncated)".to_owned(),
    }
}

/// What [`load_dir`] restored.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Live policies, file by file (shard order), least recently used first.
    pub entries: Vec<(HostKey, RobotsPolicy)>,
    /// Robots files read.
    pub files: u64,
    /// Files not used at all: unreadable, bad header or meta record, or compiled for
    /// another agent, mode or 401/403 reading.
    pub ignored_files: u64,
    /// Damage met (skipped records, truncations).
    pub damaged: u64,
}

/// Loads every `robots-*.bin` of a checkpoint directory for a crawl with `config`.
/// Never fails: a missing or unreadable file, damaged records or rules compiled for
/// other settings only mean refetching those hosts' robots.txt, and each is logged as
/// a warning.
pub fn load_dir(dir: &Path, config: &PolicyConfig, clock: Clock) -> Loaded {
    let mut loaded = Loaded::default();
    let mut files: Vec<std::path::PathBuf> = match std::fs::read_dir(dir) {
        Ok(list) => list
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("robots-") && n.ends_with(".bin"))
            })
            .collect(),
        Err(e) => {
            tracing::warn!(dir = %dir.display(), error = %e, "cannot list the checkpoint's robots files");
            return loaded;
        }
    };
    files.sort();
    for file in files {
        loaded.files += 1;
        let contents = match read_file(&file) {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(file = %file.display(), error = %e, "robots file unreadable; its hosts' robots.txt will be refetched");
                loaded.ignored_files += 1;
                continue;
            }
        };
        for d in &contents.damage {
            tracing::warn!(file = %file.display(), offset = d.offset, "{}", d.message);
        }
        loaded.damaged += contents.damage.len() as u64;
        match &contents.meta {
            None => {
                loaded.ignored_files += 1;
                continue;
            }
            Some(meta) if !meta.matches(config) => {
                tracing::warn!(file = %file.display(), "robots rules were compiled for another agent, mode or 401/403 reading; they will be refetched");
                loaded.ignored_files += 1;
                continue;
            }
            Some(_) => {}
        }
        loaded.entries.extend(
            contents
                .entries
                .into_iter()
                .map(|e| e.into_policy(clock, config)),
        );
    }
    loaded
}
