//! The robots cache file's I/O: writing one shard's cache (its RAM entries and its
//! disk tier's) to `robots-NNNN.bin`, reading it back record by record (skipping
//! damaged ones), and loading every shard's file of a checkpoint. The record encoding
//! these use is the sans-IO code of `persist`, which knows nothing of the cache (the
//! disk tier encodes with it too).

#![deny(clippy::indexing_slicing)]

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::path::Path;

use super::persist::{
    decode_entry, decode_meta, decode_tier, encode_entry, encode_meta, encode_tier, Clock, Meta,
    StoredEntry, TierFiles, FORMAT, HEADER_BYTES, MAX_RECORD_BYTES, TYPE_END, TYPE_ENTRY,
    TYPE_META, TYPE_TIER,
};
use crate::disk::{put_varint, write_record, HeaderError, RecordError, RecordReader};
use crate::robots::cache::RobotsCache;
use crate::robots::policy::{PolicyConfig, RobotsPolicy};
use crate::routing::HostKey;

/// What [`write_file`] wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteStats {
    /// Hosts written.
    pub entries: u64,
    /// Hosts held but not worth keeping (never fetched, first fetch in flight) or
    /// too large for a record.
    pub skipped: u64,
    pub bytes: u64,
    /// Of the hosts written, those read back from the cache's disk tier.
    pub spilled: u64,
    /// Records of the disk tier that could not be read back (their hosts are not in
    /// the file, and a resume fetches their robots.txt again).
    pub damaged: u64,
    /// The disk tier's log files kept beside the file (hard links), and the bytes
    /// they hold for it: the tier's hosts are there, not in the file.
    pub tier_files: u64,
    pub tier_bytes: u64,
}

/// Writes the cache to `path` and fsyncs it: the disk tier's hosts first (they are
/// older than any in RAM, and a resume restores oldest first so recency survives),
/// then those in RAM, least recently used first.
///
/// The tier is kept by reference: its log files get a second name beside `path`
/// (`robots-NNNN-tier-NNNNNN.log`, hard links of append-only files, made durable) and
/// the file records them ([`TierFiles`]), so a checkpoint writes what the tier appended
/// since the last one, not the whole tier (ten million hosts' rules are about 1 GB).
/// If they cannot be kept (a full disk, say) the tier's hosts are read back and written
/// into the file one at a time instead, as before. Memory stays bounded either way.
///
/// # Errors
/// I/O errors.
pub fn write_file(path: &Path, cache: &mut RobotsCache, clock: Clock) -> io::Result<WriteStats> {
    let mut w = BufWriter::new(File::create(path)?);
    let mut stats = WriteStats::default();
    w.write_all(&FORMAT.header())?;
    stats.bytes = HEADER_BYTES;
    let mut payload = vec![TYPE_META];
    encode_meta(&Meta::of(cache.config(), clock.wall_ms), &mut payload);
    stats.bytes += write_record(&mut w, &payload)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let prefix = format!(
        "{}-tier",
        path.file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("robots")
    );
    match cache.keep_tier_logs(dir, &prefix, clock) {
        Ok(None) => {}
        Ok(Some(tier)) => {
            payload.clear();
            payload.push(TYPE_TIER);
            encode_tier(&tier, &mut payload);
            stats.bytes += write_record(&mut w, &payload)?;
            stats.tier_files = tier.files.len() as u64;
            stats.tier_bytes = tier.files.iter().map(|(_, len)| len).sum();
            stats.spilled = cache.spilled() as u64;
        }
        Err(e) => {
            tracing::warn!(file = %path.display(), error = %e, "robots disk tier: its log files could not be kept with the checkpoint; its hosts are written into the robots file instead");
            write_spilled_inline(&mut w, &mut payload, cache, clock, &mut stats)?;
        }
    }
    for (key, policy) in cache.entries_lru() {
        match write_entry(&mut w, &mut payload, key, policy, clock)? {
            Some(n) => {
                stats.bytes += n;
                stats.entries += 1;
            }
            None => stats.skipped += 1,
        }
    }
    payload.clear();
    payload.push(TYPE_END);
    put_varint(&mut payload, stats.entries);
    stats.bytes += write_record(&mut w, &payload)?;
    let file = w.into_inner().map_err(io::IntoInnerError::into_error)?;
    file.sync_all()?;
    Ok(stats)
}

/// The disk tier's hosts, read back one at a time and written into the file.
fn write_spilled_inline(
    w: &mut impl Write,
    payload: &mut Vec<u8>,
    cache: &RobotsCache,
    clock: Clock,
    stats: &mut WriteStats,
) -> io::Result<()> {
    let mut failed = None;
    let scan = cache.for_each_spilled(|key, policy| {
        if failed.is_some() {
            return;
        }
        match write_entry(w, payload, &key, &policy, clock) {
            Ok(Some(n)) => {
                stats.bytes += n;
                stats.entries += 1;
            }
            Ok(None) => stats.skipped += 1,
            Err(e) => failed = Some(e),
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    stats.spilled = scan.entries;
    stats.damaged = scan.damaged;
    Ok(())
}

/// Writes one host's entry record; `Ok(None)` for a state not worth keeping or an
/// entry too large for a record.
fn write_entry(
    w: &mut impl Write,
    payload: &mut Vec<u8>,
    key: &HostKey,
    policy: &RobotsPolicy,
    clock: Clock,
) -> io::Result<Option<u64>> {
    let Some(entry) = StoredEntry::of(key, policy, clock) else {
        return Ok(None);
    };
    payload.clear();
    payload.push(TYPE_ENTRY);
    encode_entry(&entry, payload);
    if payload.len() > MAX_RECORD_BYTES {
        return Ok(None);
    }
    write_record(w, payload).map(Some)
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
    /// The disk tier's log files the checkpoint keeps beside the file, if any.
    pub tier: Option<TierFiles>,
}

/// What [`read_each`] hands out, in file order.
#[derive(Debug)]
pub enum Item {
    /// The disk tier's log files (before any entry): their hosts are older than the
    /// file's own.
    Tier(TierFiles),
    Entry(Box<StoredEntry>),
}

/// Reads a whole file. Never fails on damage: bad records are skipped and listed in
/// [`FileContents::damage`]; only the failure to open or read is an `Err`.
///
/// # Errors
/// I/O errors other than a short read.
pub fn read_file(path: &Path) -> io::Result<FileContents> {
    let mut entries = Vec::new();
    let mut out = read_each(path, |_, item| {
        if let Item::Entry(e) = item {
            entries.push(*e);
        }
    })?;
    if out.meta.is_some() {
        out.entries = entries;
    }
    Ok(out)
}

/// [`read_file`] record by record: `on_item` gets each entry that decodes (and the tier
/// record, if any), with the
/// file's meta record (always read first), and the returned contents hold no entries.
/// So a checkpoint of millions of hosts loads in the RAM of one entry.
///
/// # Errors
/// I/O errors.
pub fn read_each(path: &Path, mut on_item: impl FnMut(&Meta, Item)) -> io::Result<FileContents> {
    let mut out = FileContents::default();
    let mut r = match RecordReader::open(BufReader::new(File::open(path)?), &FORMAT) {
        Ok(r) => r,
        Err(RecordError::Io(e)) => return Err(e),
        Err(e) => {
            out.damage.push(Damage {
                offset: 0,
                message: match e {
                    RecordError::Header(HeaderError::Truncated) => {
                        "the file ends inside the header (truncated)".to_owned()
                    }
                    RecordError::Header(HeaderError::UnsupportedVersion { found, expected }) => {
                        format!(
                            "robots file of format version {found} (an older build's; this \
                             build reads version {expected}): not used, its hosts' robots.txt \
                             are refetched"
                        )
                    }
                    _ => "bad header: not a trawl robots file".to_owned(),
                },
            });
            return Ok(out);
        }
    };
    out.bytes = HEADER_BYTES;
    let mut first = true;
    let mut ended = false;
    let mut payload = Vec::new();
    loop {
        let offset = match r.next_record(&mut payload) {
            Ok(Some(offset)) => offset,
            Ok(None) => break,
            Err(RecordError::Io(e)) => return Err(e),
            Err(RecordError::Checksum { offset }) => {
                out.bytes = r.offset();
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
            Err(RecordError::TooLong { offset }) => {
                out.damage.push(Damage {
                    offset,
                    message: "record length is implausible: the rest of the file is unreadable"
                        .to_owned(),
                });
                break;
            }
            Err(RecordError::Truncated { offset }) => {
                out.damage.push(truncated(offset));
                break;
            }
            // The header was read by `open`.
            Err(RecordError::Header(_)) => {
                out.damage.push(truncated(r.offset()));
                break;
            }
        };
        out.bytes = r.offset();
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
                Ok(e) => {
                    if let Some(meta) = &out.meta {
                        on_item(meta, Item::Entry(Box::new(e)));
                    }
                }
                Err(e) => out.damage.push(Damage {
                    offset,
                    message: format!("{e}: entry skipped"),
                }),
            },
            TYPE_TIER => match decode_tier(body) {
                Ok(tier) => {
                    out.tier = Some(tier.clone());
                    if let Some(meta) = &out.meta {
                        on_item(meta, Item::Tier(tier));
                    }
                }
                Err(e) => out.damage.push(Damage {
                    offset,
                    message: format!("{e} (tier record): the disk tier's hosts are refetched"),
                }),
            },
            TYPE_END => {
                let mut rest = body;
                match crate::disk::take_varint(&mut rest) {
                    Ok(n) if rest.is_empty() => out.written = Some(n),
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
    if ended && !r.is_at_end()? {
        out.damage.push(Damage {
            offset: out.bytes,
            message: "bytes after the end record".to_owned(),
        });
    }
    if out.meta.is_none() && out.damage.is_empty() {
        out.damage.push(Damage {
            offset: HEADER_BYTES,
            message: "no meta record".to_owned(),
        });
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
    /// What the load went through.
    pub stats: LoadStats,
}

/// What [`load_dir_into`] went through.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadStats {
    /// Hosts handed on.
    pub entries: u64,
    /// Robots files read.
    pub files: u64,
    /// Files not used at all: unreadable, bad header or meta record, or compiled for
    /// another agent, mode or 401/403 reading.
    pub ignored_files: u64,
    /// Damage met (skipped records, truncations).
    pub damaged: u64,
}

/// [`load_dir_into`], collected (tests, small crawls).
pub fn load_dir(dir: &Path, config: &PolicyConfig, clock: Clock) -> Loaded {
    let mut entries = Vec::new();
    let stats = load_dir_into(dir, config, clock, |key, policy| {
        entries.push((key, policy))
    });
    Loaded { entries, stats }
}

/// Loads every `robots-*.bin` of a checkpoint directory for a crawl with `config`,
/// handing each live host to `sink` as it is read (file by file in shard order, least
/// recently used first), so the load holds one entry at a time, not the checkpoint's
/// millions (a resume at a million hosts once peaked 260 MiB above the crawl for a
/// list of them). Never fails: a missing or unreadable file, damaged records or rules
/// compiled for other settings only mean refetching those hosts' robots.txt, and each
/// is logged as a warning.
pub fn load_dir_into(
    dir: &Path,
    config: &PolicyConfig,
    clock: Clock,
    mut sink: impl FnMut(HostKey, RobotsPolicy),
) -> LoadStats {
    let mut loaded = LoadStats::default();
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
        let mut handed = 0u64;
        let dir = file.parent().unwrap_or(Path::new("."));
        let mut tier_damage = 0u64;
        let read = read_each(&file, |meta, item| {
            if !meta.matches(config) {
                return;
            }
            match item {
                Item::Entry(e) => {
                    let (key, policy) = e.into_policy(clock, config);
                    sink(key, policy);
                    handed += 1;
                }
                Item::Tier(tier) => {
                    let (n, damaged) = load_tier(dir, &tier, config, clock, &mut sink);
                    handed += n;
                    tier_damage += damaged;
                }
            }
        });
        loaded.damaged += tier_damage;
        let contents = match read {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(file = %file.display(), error = %e, "robots file unreadable; its hosts' robots.txt will be refetched");
                loaded.ignored_files += 1;
                loaded.entries += handed;
                continue;
            }
        };
        loaded.entries += handed;
        for d in &contents.damage {
            tracing::warn!(file = %file.display(), offset = d.offset, "{}", d.message);
        }
        loaded.damaged += contents.damage.len() as u64;
        match &contents.meta {
            None => loaded.ignored_files += 1,
            Some(meta) if !meta.matches(config) => {
                tracing::warn!(file = %file.display(), "robots rules were compiled for another agent, mode or 401/403 reading; they will be refetched");
                loaded.ignored_files += 1;
            }
            Some(_) => {}
        }
    }
    loaded
}

/// What [`read_tier`] went through.
#[derive(Debug, Default)]
pub struct TierRead {
    /// Log files read (all or in part).
    pub files: u64,
    /// Bytes the tier record names, over all its files.
    pub bytes: u64,
    /// Entries handed out (a host met twice counts twice).
    pub entries: u64,
    /// Missing or unreadable files, damaged records: each with its file.
    pub damage: Vec<(std::path::PathBuf, Damage)>,
}

/// Reads a checkpoint's disk tier logs (named by its robots file's tier record, in the
/// file's directory `dir`), oldest first, each up to the length recorded, handing every
/// entry to `on_entry` with its times in wall-clock milliseconds. A host may come more
/// than once: the later entry is the newer.
pub fn read_tier(dir: &Path, tier: &TierFiles, mut on_entry: impl FnMut(StoredEntry)) -> TierRead {
    use super::spill::{ANCHOR_MS, FORMAT as TIER_FORMAT};
    use std::io::Read;
    let mut out = TierRead::default();
    let mut payload = Vec::new();
    for (name, len) in &tier.files {
        let path = dir.join(name);
        out.bytes += len;
        let opened = File::open(&path)
            .map_err(RecordError::Io)
            .and_then(|f| RecordReader::open(BufReader::new(f).take(*len), &TIER_FORMAT));
        let mut reader = match opened {
            Ok(r) => r,
            Err(e) => {
                let message = format!("disk tier log unreadable ({e}): its hosts are refetched");
                out.damage.push((path, Damage { offset: 0, message }));
                continue;
            }
        };
        out.files += 1;
        loop {
            match reader.next_record(&mut payload) {
                Ok(Some(offset)) => match decode_entry(&payload) {
                    Ok(e) => {
                        on_entry(e.rebased(ANCHOR_MS, tier.anchor_wall_ms));
                        out.entries += 1;
                    }
                    Err(e) => out.damage.push((
                        path.clone(),
                        Damage {
                            offset,
                            message: format!("{e}: disk tier entry skipped"),
                        },
                    )),
                },
                Ok(None) => break,
                Err(RecordError::Checksum { offset }) => out.damage.push((
                    path.clone(),
                    Damage {
                        offset,
                        message: "disk tier record checksum mismatch: entry skipped".to_owned(),
                    },
                )),
                Err(e) => {
                    let offset = reader.offset();
                    out.damage.push((
                        path.clone(),
                        Damage {
                            offset,
                            message: format!(
                                "disk tier log cut short ({e}): the rest is refetched"
                            ),
                        },
                    ));
                    break;
                }
            }
        }
        if reader.offset() < *len {
            out.damage.push((
                path.clone(),
                Damage {
                    offset: reader.offset(),
                    message: format!("disk tier log shorter than the {len} bytes recorded"),
                },
            ));
        }
    }
    out
}

/// The hosts of a checkpoint's disk tier logs ([`read_tier`]), each handed to `sink`
/// as a live policy; damage is logged. Returns the hosts handed and the damage met.
fn load_tier(
    dir: &Path,
    tier: &TierFiles,
    config: &PolicyConfig,
    clock: Clock,
    sink: &mut impl FnMut(HostKey, RobotsPolicy),
) -> (u64, u64) {
    let read = read_tier(dir, tier, |e| {
        let (key, policy) = e.into_policy(clock, config);
        sink(key, policy);
    });
    for (path, d) in &read.damage {
        tracing::warn!(file = %path.display(), offset = d.offset, "{}", d.message);
    }
    (read.entries, read.damage.len() as u64)
}
