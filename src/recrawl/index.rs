//! The re-crawl index: URL → validators, fetch date, payload digest, WARC location.
//!
//! Written append-only while a crawl runs, read by the next crawl without opening a
//! WARC file. Layout (all integers little-endian):
//!
//! ```text
//! header  16 bytes: magic "TRAWLRIX" | version u32 (1) | crc32 of the 12 bytes before
//! record  len u32 | crc32 u32 of the payload | payload (len bytes, at most 64 KiB)
//! payload flags u8 (bit 0: ETag present, bit 1: Last-Modified present)
//!         fetched_at_us i64 (Unix microseconds, the WARC-Date of the capture)
//!         status u16
//!         warc_offset u64 (byte offset of the response record in its file)
//!         payload_bytes u64 (entity body length: what a 304 saves)
//!         url, etag, last_modified, payload_digest, record_id, warc_file:
//!             each u16 length + UTF-8 bytes (absent validators have length 0)
//! ```
//!
//! A later record for the same URL supersedes an earlier one. A record cut short at the
//! end of the file (a crash in the middle of an append) is a torn tail: the reader
//! stops before it and says so ([`Recovered`]), and [`IndexWriter::open_append`]
//! truncates it. Anything else that does not check out (magic, version, a checksum in
//! the middle of the file, an impossible length) is an [`IndexError`] naming the byte
//! offset, never a panic.
//!
//! The framing (length + CRC32 records behind a magic/version header) is what the
//! shared on-disk records module (`src/disk/`, issue 12) provides; this file carries
//! its own until that module is merged, and should move onto it then.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// File name of the index inside a crawl's output directory.
pub const INDEX_FILE: &str = "recrawl.idx";
/// The first eight bytes of an index file.
pub const INDEX_MAGIC: &[u8; 8] = b"TRAWLRIX";
/// The format version this code writes and reads.
pub const INDEX_VERSION: u32 = 1;
/// Header size in bytes.
pub const HEADER_BYTES: usize = 16;
/// Largest record payload accepted, in bytes: six strings of at most a few KiB each.
pub const MAX_RECORD_BYTES: u32 = 64 * 1024;

const FIXED_PAYLOAD_BYTES: usize = 1 + 8 + 2 + 8 + 8;

/// The validators of one capture, sent back as `If-None-Match` / `If-Modified-Since`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Validators {
    /// `ETag` exactly as the server sent it (quotes and `W/` included).
    pub etag: Option<String>,
    /// `Last-Modified` exactly as the server sent it (RFC 9110 13.1.3: send it back
    /// verbatim).
    pub last_modified: Option<String>,
}

/// One capture as the re-crawl needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    /// The canonical URL fetched.
    pub url: String,
    /// HTTP status of the capture.
    pub status: u16,
    /// When it was fetched (the WARC-Date of the response record), Unix microseconds.
    pub fetched_at_us: i64,
    /// ETag and Last-Modified.
    pub validators: Validators,
    /// `WARC-Payload-Digest` of the capture (e.g. `sha1:BASE32`), empty when none.
    pub payload_digest: String,
    /// `WARC-Record-ID` of the response record, for `WARC-Refers-To` in a revisit.
    pub record_id: String,
    /// WARC file name, relative to the crawl's output directory.
    pub warc_file: String,
    /// Byte offset of the response record in `warc_file`.
    pub warc_offset: u64,
    /// Length of the payload (entity body): the bytes a `304` saves next time.
    pub payload_bytes: u64,
}

/// Why an index cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// The file does not start with [`INDEX_MAGIC`].
    #[error("not a trawl re-crawl index (bad magic)")]
    BadMagic,
    /// A version this code does not read.
    #[error("re-crawl index version {0} is not supported (this trawl reads version 1)")]
    UnsupportedVersion(u32),
    /// The header's checksum does not match.
    #[error("re-crawl index header is damaged (checksum mismatch)")]
    HeaderChecksum,
    /// Shorter than a header.
    #[error("re-crawl index is truncated inside its header")]
    TruncatedHeader,
    /// A record's checksum does not match and more data follows it.
    #[error("re-crawl index record at byte {offset} is damaged (checksum mismatch)")]
    RecordChecksum {
        /// Offset of the record's length field.
        offset: u64,
    },
    /// A record length over [`MAX_RECORD_BYTES`] (or under the fixed part).
    #[error("re-crawl index record at byte {offset} has an impossible length {len}")]
    RecordLength {
        /// Offset of the record.
        offset: u64,
        /// The length read.
        len: u32,
    },
    /// A record whose checksum is right but whose fields do not parse.
    #[error("re-crawl index record at byte {offset} is malformed: {reason}")]
    BadRecord {
        /// Offset of the record.
        offset: u64,
        /// What is wrong.
        reason: &'static str,
    },
    /// Reading or writing the file failed.
    #[error("re-crawl index {path}: i/o error")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

/// A torn tail found at the end of the file: bytes of a record whose append did not
/// complete (a crash). Reported so the caller can log it; not an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recovered {
    /// Offset where the complete records end.
    pub valid_bytes: u64,
    /// Bytes after it that were not a complete record.
    pub torn_bytes: u64,
}

/// The header bytes of a version-1 index.
#[must_use]
pub fn header() -> [u8; HEADER_BYTES] {
    let mut h = [0u8; HEADER_BYTES];
    let (magic, rest) = h.split_at_mut(8);
    magic.copy_from_slice(INDEX_MAGIC);
    let (version, crc) = rest.split_at_mut(4);
    version.copy_from_slice(&INDEX_VERSION.to_le_bytes());
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(INDEX_MAGIC);
    hasher.update(&INDEX_VERSION.to_le_bytes());
    crc.copy_from_slice(&hasher.finalize().to_le_bytes());
    h
}

/// Check a header.
///
/// # Errors
/// [`IndexError::TruncatedHeader`], [`IndexError::BadMagic`],
/// [`IndexError::HeaderChecksum`] or [`IndexError::UnsupportedVersion`].
pub fn check_header(bytes: &[u8]) -> Result<(), IndexError> {
    let h = bytes
        .get(..HEADER_BYTES)
        .ok_or(IndexError::TruncatedHeader)?;
    let (magic, rest) = h.split_at(8);
    if magic != INDEX_MAGIC {
        return Err(IndexError::BadMagic);
    }
    let (version, crc) = rest.split_at(4);
    let version = u32::from_le_bytes(
        version
            .try_into()
            .map_err(|_| IndexError::TruncatedHeader)?,
    );
    let crc = u32::from_le_bytes(crc.try_into().map_err(|_| IndexError::TruncatedHeader)?);
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(magic);
    hasher.update(&version.to_le_bytes());
    if hasher.finalize() != crc {
        return Err(IndexError::HeaderChecksum);
    }
    if version != INDEX_VERSION {
        return Err(IndexError::UnsupportedVersion(version));
    }
    Ok(())
}

/// Encode one entry as a framed record (length, CRC, payload).
///
/// # Errors
/// [`io::ErrorKind::InvalidInput`] when a string is longer than 65,535 bytes or the
/// record longer than [`MAX_RECORD_BYTES`].
pub fn encode(entry: &IndexEntry) -> io::Result<Vec<u8>> {
    let v = &entry.validators;
    let mut p = Vec::with_capacity(64 + entry.url.len() + entry.warc_file.len());
    let flags = u8::from(v.etag.is_some()) | (u8::from(v.last_modified.is_some()) << 1);
    p.push(flags);
    p.extend_from_slice(&entry.fetched_at_us.to_le_bytes());
    p.extend_from_slice(&entry.status.to_le_bytes());
    p.extend_from_slice(&entry.warc_offset.to_le_bytes());
    p.extend_from_slice(&entry.payload_bytes.to_le_bytes());
    for s in [
        entry.url.as_str(),
        v.etag.as_deref().unwrap_or(""),
        v.last_modified.as_deref().unwrap_or(""),
        entry.payload_digest.as_str(),
        entry.record_id.as_str(),
        entry.warc_file.as_str(),
    ] {
        let len = u16::try_from(s.len()).map_err(|_| {
            io::Error::new(io::ErrorKind::InvalidInput, "index field over 65535 bytes")
        })?;
        p.extend_from_slice(&len.to_le_bytes());
        p.extend_from_slice(s.as_bytes());
    }
    let len = u32::try_from(p.len())
        .ok()
        .filter(|l| *l <= MAX_RECORD_BYTES)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "index record too large"))?;
    let mut out = Vec::with_capacity(8 + p.len());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&p).to_le_bytes());
    out.extend_from_slice(&p);
    Ok(out)
}

/// What [`decode`] found at the front of a buffer.
#[derive(Debug, PartialEq, Eq)]
pub enum Decoded {
    /// A record and the bytes it took.
    Entry(IndexEntry, usize),
    /// The buffer holds only the start of a record (or nothing): more bytes needed, or
    /// at the end of the file a torn tail.
    Incomplete,
    /// A complete frame of this many bytes whose checksum does not match: damaged, or
    /// at the very end of the file a torn write.
    BadChecksum(usize),
}

/// Decode the record at the front of `buf` (sans-IO; `offset` only names positions in
/// errors).
///
/// # Errors
/// [`IndexError::RecordLength`] or [`IndexError::BadRecord`].
pub fn decode(buf: &[u8], offset: u64) -> Result<Decoded, IndexError> {
    let (Some(len), Some(crc)) = (read_u32(buf, 0), read_u32(buf, 4)) else {
        return Ok(Decoded::Incomplete);
    };
    if len > MAX_RECORD_BYTES || (len as usize) < FIXED_PAYLOAD_BYTES + 12 {
        return Err(IndexError::RecordLength { offset, len });
    }
    let Some(payload) = buf.get(8..8 + len as usize) else {
        return Ok(Decoded::Incomplete);
    };
    if crc32fast::hash(payload) != crc {
        return Ok(Decoded::BadChecksum(8 + len as usize));
    }
    let bad = |reason| IndexError::BadRecord { offset, reason };
    let mut r = Cursor {
        buf: payload,
        at: 0,
    };
    let flags = r.u8().ok_or(bad("short fixed fields"))?;
    if flags & !0b11 != 0 {
        return Err(bad("unknown flags"));
    }
    let fetched_at_us = r.i64().ok_or(bad("short fixed fields"))?;
    let status = r.u16().ok_or(bad("short fixed fields"))?;
    let warc_offset = r.u64().ok_or(bad("short fixed fields"))?;
    let payload_bytes = r.u64().ok_or(bad("short fixed fields"))?;
    let mut strings = [""; 6];
    for s in &mut strings {
        *s = r.string().ok_or(bad("string field runs past the record"))?;
    }
    if r.at != payload.len() {
        return Err(bad("bytes after the last field"));
    }
    let [url, etag, last_modified, payload_digest, record_id, warc_file] = strings;
    if url.is_empty() {
        return Err(bad("empty url"));
    }
    let present = |bit: u8, s: &str| (flags & bit != 0).then(|| s.to_owned());
    if (flags & 1 == 0 && !etag.is_empty()) || (flags & 2 == 0 && !last_modified.is_empty()) {
        return Err(bad("validator text without its flag"));
    }
    Ok(Decoded::Entry(
        IndexEntry {
            url: url.to_owned(),
            status,
            fetched_at_us,
            validators: Validators {
                etag: present(1, etag),
                last_modified: present(2, last_modified),
            },
            payload_digest: payload_digest.to_owned(),
            record_id: record_id.to_owned(),
            warc_file: warc_file.to_owned(),
            warc_offset,
            payload_bytes,
        },
        8 + len as usize,
    ))
}

fn read_u32(buf: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(buf.get(at..at + 4)?.try_into().ok()?))
}

struct Cursor<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.buf.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1)?.first().copied()
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn string(&mut self) -> Option<&'a str> {
        let n = self.u16()? as usize;
        std::str::from_utf8(self.take(n)?).ok()
    }
}

/// Reads an index file record by record, without holding it in memory.
pub struct IndexReader<R> {
    input: R,
    path: PathBuf,
    buf: Vec<u8>,
    /// Start of unconsumed bytes in `buf`.
    start: usize,
    /// File offset of `buf[start]`.
    offset: u64,
    eof: bool,
    recovered: Option<Recovered>,
    failed: bool,
}

impl IndexReader<File> {
    /// Open `path` and check its header.
    ///
    /// # Errors
    /// [`IndexError::Io`] when the file cannot be read, or the header errors of
    /// [`check_header`].
    pub fn open(path: &Path) -> Result<Self, IndexError> {
        let file = File::open(path).map_err(|source| IndexError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::new(file, path)
    }
}

impl<R: Read> IndexReader<R> {
    /// Read the header from `input`; `path` names the file in errors.
    ///
    /// # Errors
    /// As [`IndexReader::open`].
    pub fn new(mut input: R, path: &Path) -> Result<Self, IndexError> {
        let mut h = Vec::with_capacity(HEADER_BYTES);
        (&mut input)
            .take(HEADER_BYTES as u64)
            .read_to_end(&mut h)
            .map_err(|source| IndexError::Io {
                path: path.to_owned(),
                source,
            })?;
        check_header(&h)?;
        Ok(Self {
            input,
            path: path.to_owned(),
            buf: Vec::with_capacity(128 * 1024),
            start: 0,
            offset: HEADER_BYTES as u64,
            eof: false,
            recovered: None,
            failed: false,
        })
    }

    /// The torn tail found at the end, once the reader has reached it.
    pub fn recovered(&self) -> Option<Recovered> {
        self.recovered
    }

    /// Offset just past the last complete record read so far.
    pub fn valid_bytes(&self) -> u64 {
        self.offset
    }

    fn fill(&mut self) -> Result<(), IndexError> {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        let mut chunk = [0u8; 64 * 1024];
        let n = loop {
            match self.input.read(&mut chunk) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(IndexError::Io {
                        path: self.path.clone(),
                        source,
                    })
                }
            }
        };
        if n == 0 {
            self.eof = true;
        }
        self.buf
            .extend_from_slice(chunk.get(..n).unwrap_or_default());
        Ok(())
    }
}

impl<R: Read> Iterator for IndexReader<R> {
    type Item = Result<IndexEntry, IndexError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.recovered.is_some() {
            return None;
        }
        loop {
            let pending = self.buf.get(self.start..).unwrap_or_default();
            let pending_len = pending.len();
            let zeros = pending.iter().all(|b| *b == 0);
            let decoded = decode(pending, self.offset);
            match decoded {
                Ok(Decoded::Entry(entry, used)) => {
                    self.start += used;
                    self.offset += used as u64;
                    return Some(Ok(entry));
                }
                Ok(Decoded::Incomplete) if !self.eof => {
                    if let Err(e) = self.fill() {
                        self.failed = true;
                        return Some(Err(e));
                    }
                }
                // Bytes after the bad frame: damage in the middle of the file.
                Ok(Decoded::BadChecksum(frame)) if pending_len > frame => {
                    self.failed = true;
                    return Some(Err(IndexError::RecordChecksum {
                        offset: self.offset,
                    }));
                }
                // Whether more bytes follow decides torn write vs damage.
                Ok(Decoded::BadChecksum(_)) if !self.eof => {
                    if let Err(e) = self.fill() {
                        self.failed = true;
                        return Some(Err(e));
                    }
                }
                Ok(Decoded::Incomplete | Decoded::BadChecksum(_)) => {
                    let torn = (self.buf.len() - self.start) as u64;
                    if torn > 0 {
                        self.recovered = Some(Recovered {
                            valid_bytes: self.offset,
                            torn_bytes: torn,
                        });
                    }
                    return None;
                }
                // A zero-filled tail (the file grew, its data never reached the disk)
                // is a torn tail too, once the end of the file shows it is all zeros.
                Err(_) if zeros && !self.eof => {
                    if let Err(e) = self.fill() {
                        self.failed = true;
                        return Some(Err(e));
                    }
                }
                Err(_) if zeros => {
                    self.recovered = Some(Recovered {
                        valid_bytes: self.offset,
                        torn_bytes: pending_len as u64,
                    });
                    return None;
                }
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

/// The previous crawl as a re-crawl starts from it: the latest entry of every URL
/// (a later record supersedes an earlier one), and the torn tail if there was one.
/// Holds every URL in memory; a re-crawl of more URLs than fit streams the
/// [`IndexReader`] instead.
///
/// # Errors
/// Any [`IndexError`]: a damaged index is refused whole, never half-used.
pub fn read_latest(
    path: &Path,
) -> Result<
    (
        std::collections::HashMap<String, IndexEntry>,
        Option<Recovered>,
    ),
    IndexError,
> {
    let mut reader = IndexReader::open(path)?;
    let mut latest = std::collections::HashMap::new();
    for entry in &mut reader {
        let entry = entry?;
        latest.insert(entry.url.clone(), entry);
    }
    Ok((latest, reader.recovered()))
}

/// Appends entries to an index as a crawl goes.
pub struct IndexWriter {
    out: BufWriter<File>,
    path: PathBuf,
    entries: u64,
}

impl IndexWriter {
    /// Create a new index at `path` (an existing file is an error: a crawl never
    /// overwrites its predecessor's index).
    ///
    /// # Errors
    /// [`IndexError::Io`].
    pub fn create(path: &Path) -> Result<Self, IndexError> {
        let io_err = |source| IndexError::Io {
            path: path.to_owned(),
            source,
        };
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(io_err)?;
        file.write_all(&header()).map_err(io_err)?;
        file.sync_all().map_err(io_err)?;
        Ok(Self {
            out: BufWriter::new(file),
            path: path.to_owned(),
            entries: 0,
        })
    }

    /// Reopen the index of a resumed crawl for appending: check it, count its entries
    /// and cut a torn tail (returned, for the crawl log).
    ///
    /// # Errors
    /// Any [`IndexError`] of the existing file: a damaged index is not appended to.
    pub fn open_append(path: &Path) -> Result<(Self, Option<Recovered>), IndexError> {
        let io_err = |source| IndexError::Io {
            path: path.to_owned(),
            source,
        };
        let mut reader = IndexReader::open(path)?;
        let mut entries = 0;
        for entry in &mut reader {
            entry?;
            entries += 1;
        }
        let recovered = reader.recovered();
        let valid = reader.valid_bytes();
        let mut file = OpenOptions::new().write(true).open(path).map_err(io_err)?;
        if recovered.is_some() {
            file.set_len(valid).map_err(io_err)?;
            file.sync_all().map_err(io_err)?;
        }
        file.seek(SeekFrom::Start(valid)).map_err(io_err)?;
        Ok((
            Self {
                out: BufWriter::new(file),
                path: path.to_owned(),
                entries,
            },
            recovered,
        ))
    }

    /// Append one entry (buffered; durable after [`IndexWriter::sync`]).
    ///
    /// # Errors
    /// [`IndexError::Io`], also for an entry too large to encode.
    pub fn append(&mut self, entry: &IndexEntry) -> Result<(), IndexError> {
        let record = encode(entry).map_err(|source| IndexError::Io {
            path: self.path.clone(),
            source,
        })?;
        self.out
            .write_all(&record)
            .map_err(|source| IndexError::Io {
                path: self.path.clone(),
                source,
            })?;
        self.entries += 1;
        Ok(())
    }

    /// Flush and fsync: called when a checkpoint commits, so every entry of a
    /// committed capture is on disk.
    ///
    /// # Errors
    /// [`IndexError::Io`].
    pub fn sync(&mut self) -> Result<(), IndexError> {
        let io_err = |source| IndexError::Io {
            path: self.path.clone(),
            source,
        };
        self.out.flush().map_err(io_err)?;
        self.out.get_ref().sync_data().map_err(io_err)
    }

    /// Entries in the file (read at open plus appended).
    pub fn entries(&self) -> u64 {
        self.entries
    }
}

/// Fuzz entry point for the reader: `data` is taken as a whole index file. Nothing may
/// panic; every entry read must encode back to the bytes it was read from.
pub fn fuzz_read(data: &[u8]) {
    let Ok(reader) = IndexReader::new(data, Path::new("fuzz")) else {
        return;
    };
    let mut at = HEADER_BYTES;
    for entry in reader {
        let Ok(entry) = entry else { return };
        let bytes = encode(&entry);
        let Ok(bytes) = bytes else { return };
        let original = data.get(at..at + bytes.len());
        assert_eq!(original, Some(bytes.as_slice()), "re-encoding differs");
        at += bytes.len();
    }
}

#[cfg(test)]
mod tests;
