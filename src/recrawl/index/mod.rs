//! The re-crawl index: URL → validators, fetch date, payload digest, hop path,
//! referrer, WARC location.
//!
//! Written append-only while a crawl runs, read by the next crawl without opening a
//! WARC file. Version 2 is built on the shared on-disk records (`crate::disk`): a
//! [`Format`] header and `varint len | crc32 | payload` frames.
//!
//! ```text
//! header  12 bytes: magic "TRAWLRIX" | version u32 LE (2)
//! record  varint payload_len | crc32(payload) u32 LE | payload (at most 64 KiB)
//! payload flags u8 (bit 0: ETag present, bit 1: Last-Modified present)
//!         status u16 LE | fetched_at_us i64 LE
//!         warc_offset varint | payload_bytes varint
//!         url, etag, last_modified, payload_digest, record_id, warc_file, hops, via:
//!             each varint length + UTF-8 bytes (absent validators have length 0,
//!             no referrer too: a referrer is a URL, never empty)
//! ```
//!
//! Every varint is in its shortest form, so an entry has exactly one encoding (the
//! fuzz check re-encodes what it reads). What the fields mean is on [`IndexEntry`]:
//! `record_id`, `fetched_at_us` and `payload_digest` are those of the capture that
//! holds the payload; `warc_file` and `warc_offset` the record the crawl that wrote the
//! index wrote for the URL (its response, or its revisit), followed in that file by its
//! `metadata` record.
//!
//! A later record for the same URL supersedes an earlier one. A record cut short at the
//! end of the file (a crash in the middle of an append), or a zero-filled tail, is a
//! torn tail: the reader stops before it and says so ([`Recovered`]), and
//! [`IndexWriter::open_append`] truncates it. Anything else that does not check out
//! (magic, version, a checksum in the middle of the file, an impossible length, fields
//! that do not parse) is an [`IndexError`] naming the byte offset, never a panic.
//!
//! Version 1 (the build before, its own framing) is still read: [`legacy`].

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::disk::{self, Format, RecordError, RecordReader};

pub mod legacy;
mod read_at;
mod writer;

pub use read_at::{read_entry_at, ReadAt};
pub use writer::IndexWriter;

/// File name of the index inside a crawl's output directory.
pub const INDEX_FILE: &str = "recrawl.idx";
/// The first eight bytes of an index file.
pub const INDEX_MAGIC: &[u8; 8] = b"TRAWLRIX";
/// The format version this code writes (it also reads [`legacy::VERSION`]).
pub const INDEX_VERSION: u32 = 2;
/// Largest record payload accepted, in bytes: eight strings of at most a few KiB each.
pub const MAX_RECORD_BYTES: usize = 64 * 1024;
/// The file format written: magic, version, payload cap.
pub const FORMAT: Format = Format::new(*INDEX_MAGIC, INDEX_VERSION, MAX_RECORD_BYTES);

/// Header bytes of a version-2 file, where its first record starts.
pub const HEADER_BYTES: usize = disk::HEADER_BYTES;

/// The header of a version-2 file.
pub fn header() -> [u8; HEADER_BYTES] {
    FORMAT.header()
}

/// Bytes read at once by [`read_entry_at`]: a typical record (about 250 bytes) and its
/// frame in one positioned read.
const READ_AT_BYTES: usize = 512;

/// The validators of one capture, sent back as `If-None-Match` / `If-Modified-Since`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Validators {
    /// `ETag` exactly as the server sent it (quotes and `W/` included).
    pub etag: Option<String>,
    /// `Last-Modified` exactly as the server sent it (RFC 9110 13.1.3: send it back
    /// verbatim).
    pub last_modified: Option<String>,
}

/// One URL as the re-crawl needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    /// The canonical URL fetched.
    pub url: String,
    /// HTTP status of the capture.
    pub status: u16,
    /// When the capture holding the payload was made (its WARC-Date, what a revisit's
    /// `WARC-Refers-To-Date` names), Unix microseconds.
    pub fetched_at_us: i64,
    /// ETag and Last-Modified of the latest answer that sent any.
    pub validators: Validators,
    /// `WARC-Payload-Digest` of the capture holding the payload (e.g. `sha1:BASE32`),
    /// empty when none.
    pub payload_digest: String,
    /// `WARC-Record-ID` of the capture holding the payload (its response record), what
    /// a revisit's `WARC-Refers-To` names.
    pub record_id: String,
    /// WARC file of the record the crawl that wrote this index wrote for the URL (a
    /// response, or a revisit), relative to that crawl's `warc/` directory.
    pub warc_file: String,
    /// Byte offset of that record in `warc_file`; its `metadata` record (outlinks)
    /// follows it.
    pub warc_offset: u64,
    /// Length of the payload (entity body): the bytes a `304` saves next time.
    pub payload_bytes: u64,
    /// The hop path from the seed (`QueuedUrl::hops`, e.g. `LLM`); `None` in a
    /// version-1 index, which did not keep it.
    pub hops: Option<String>,
    /// The referrer the URL was queued with (`QueuedUrl::via`), so a re-crawl queues it
    /// with the same one: its crawl-log line names it, and a sitemap a robots.txt named
    /// gets that robots.txt's permission again. `None` for a seed, and in a version-1
    /// index, which did not keep it. Never `Some("")` (written as no referrer).
    pub via: Option<String>,
}

/// Which layout a file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexVersion {
    /// The build before: its own framing, no hop paths ([`legacy`]).
    V1,
    /// [`FORMAT`].
    V2,
}

impl IndexVersion {
    /// Bytes of the header, where the first record starts.
    pub fn header_bytes(self) -> u64 {
        match self {
            Self::V1 => legacy::HEADER_BYTES as u64,
            Self::V2 => disk::HEADER_BYTES as u64,
        }
    }
}

/// Why an index cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// The file does not start with [`INDEX_MAGIC`].
    #[error("not a trawl re-crawl index (bad magic)")]
    BadMagic,
    /// A version this code does not read.
    #[error("re-crawl index version {0} is not supported (this trawl reads versions 1 and 2)")]
    UnsupportedVersion(u32),
    /// A version-1 index (read, but never appended to: a resume of a crawl started by
    /// the build before).
    #[error(
        "re-crawl index {0} is version 1 and cannot be appended to (this trawl writes \
         version 2): resume with the trawl that started the crawl"
    )]
    OldVersion(PathBuf),
    /// The header's checksum does not match (version 1).
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
    #[error("re-crawl index record at byte {offset} has an impossible length")]
    RecordLength {
        /// Offset of the record.
        offset: u64,
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

/// Why a frame could not be read (both layouts), before it is told whether that is a
/// torn tail or damage.
#[derive(Debug)]
pub(crate) enum FrameError {
    /// The input ends inside the frame.
    Truncated,
    /// The length is beyond the maximum (or, in version 1, below the minimum).
    TooLong,
    /// Read whole, but the checksum does not match.
    Checksum,
    /// Reading failed.
    Io(io::Error),
}

/// Encodes one entry as a framed version-2 record.
///
/// # Errors
/// [`io::ErrorKind::InvalidInput`] when the payload is longer than
/// [`MAX_RECORD_BYTES`].
pub fn encode(entry: &IndexEntry) -> io::Result<Vec<u8>> {
    let payload = encode_payload(entry)?;
    let mut out = Vec::with_capacity(payload.len() + disk::MAX_FRAME_HEAD_BYTES);
    disk::write_record(&mut out, &payload)?;
    Ok(out)
}

/// The payload of `entry`'s version-2 record.
fn encode_payload(entry: &IndexEntry) -> io::Result<Vec<u8>> {
    let mut p = Vec::with_capacity(64 + entry.url.len() + entry.warc_file.len());
    p.push(entry.flags());
    p.extend_from_slice(&entry.status.to_le_bytes());
    p.extend_from_slice(&entry.fetched_at_us.to_le_bytes());
    disk::put_varint(&mut p, entry.warc_offset);
    disk::put_varint(&mut p, entry.payload_bytes);
    for s in entry.strings() {
        disk::put_bytes(&mut p, s.as_bytes());
    }
    disk::put_bytes(&mut p, entry.hops.as_deref().unwrap_or("").as_bytes());
    disk::put_bytes(&mut p, entry.via.as_deref().unwrap_or("").as_bytes());
    if p.len() > MAX_RECORD_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "index record too large",
        ));
    }
    Ok(p)
}

/// Decodes a version-2 payload (its checksum already checked); `offset` names the
/// record in errors.
///
/// # Errors
/// [`IndexError::BadRecord`].
pub fn decode_payload(payload: &[u8], offset: u64) -> Result<IndexEntry, IndexError> {
    let bad = |reason| IndexError::BadRecord { offset, reason };
    let (&flags, rest) = payload.split_first().ok_or(bad("short fixed fields"))?;
    if flags & !0b11 != 0 {
        return Err(bad("unknown flags"));
    }
    let (status, rest) = rest
        .split_first_chunk::<2>()
        .ok_or(bad("short fixed fields"))?;
    let (date, mut rest) = rest
        .split_first_chunk::<8>()
        .ok_or(bad("short fixed fields"))?;
    let warc_offset = take_uvarint(&mut rest).ok_or(bad("bad varint"))?;
    let payload_bytes = take_uvarint(&mut rest).ok_or(bad("bad varint"))?;
    let mut strings = [""; 8];
    for s in &mut strings {
        *s = take_str(&mut rest).ok_or(bad("bad string field"))?;
    }
    if !rest.is_empty() {
        return Err(bad("bytes after the last field"));
    }
    let [url, etag, last_modified, payload_digest, record_id, warc_file, hops, via] = strings;
    if hops
        .chars()
        .any(|c| crate::provenance::Hop::from_code(c).is_none())
    {
        return Err(bad("unknown hop code"));
    }
    let mut entry = Fields {
        flags,
        status: u16::from_le_bytes(*status),
        fetched_at_us: i64::from_le_bytes(*date),
        warc_offset,
        payload_bytes,
        strings: [
            url,
            etag,
            last_modified,
            payload_digest,
            record_id,
            warc_file,
        ],
    }
    .entry(offset)?;
    entry.hops = Some(hops.to_owned());
    entry.via = (!via.is_empty()).then(|| via.to_owned());
    Ok(entry)
}

/// The fields both layouts hold, as decoded.
pub(crate) struct Fields<'a> {
    pub flags: u8,
    pub status: u16,
    pub fetched_at_us: i64,
    pub warc_offset: u64,
    pub payload_bytes: u64,
    /// In [`IndexEntry::strings`] order.
    pub strings: [&'a str; 6],
}

impl Fields<'_> {
    /// The entry (without a hop path or referrer), once the fields check out.
    ///
    /// # Errors
    /// [`IndexError::BadRecord`] for an empty URL or validator text without its flag.
    pub fn entry(self, offset: u64) -> Result<IndexEntry, IndexError> {
        let bad = |reason| IndexError::BadRecord { offset, reason };
        let flags = self.flags;
        let [url, etag, last_modified, payload_digest, record_id, warc_file] = self.strings;
        if url.is_empty() {
            return Err(bad("empty url"));
        }
        if (flags & 1 == 0 && !etag.is_empty()) || (flags & 2 == 0 && !last_modified.is_empty()) {
            return Err(bad("validator text without its flag"));
        }
        let present = |bit: u8, s: &str| (flags & bit != 0).then(|| s.to_owned());
        Ok(IndexEntry {
            url: url.to_owned(),
            status: self.status,
            fetched_at_us: self.fetched_at_us,
            validators: Validators {
                etag: present(1, etag),
                last_modified: present(2, last_modified),
            },
            payload_digest: payload_digest.to_owned(),
            record_id: record_id.to_owned(),
            warc_file: warc_file.to_owned(),
            warc_offset: self.warc_offset,
            payload_bytes: self.payload_bytes,
            hops: None,
            via: None,
        })
    }
}

impl IndexEntry {
    /// The string fields both layouts write, in their order: URL, ETag, Last-Modified,
    /// payload digest, record id, WARC file (absent validators empty).
    pub(crate) fn strings(&self) -> [&str; 6] {
        [
            self.url.as_str(),
            self.validators.etag.as_deref().unwrap_or(""),
            self.validators.last_modified.as_deref().unwrap_or(""),
            self.payload_digest.as_str(),
            self.record_id.as_str(),
            self.warc_file.as_str(),
        ]
    }

    /// The flags byte: bit 0 ETag present, bit 1 Last-Modified present.
    pub(crate) fn flags(&self) -> u8 {
        u8::from(self.validators.etag.is_some())
            | (u8::from(self.validators.last_modified.is_some()) << 1)
    }
}

/// Bytes of `v` as a shortest-form varint.
fn varint_bytes(v: u64) -> usize {
    (64 - v.leading_zeros()).max(1).div_ceil(7) as usize
}

/// A varint in its shortest form (anything longer is refused: one encoding per entry).
fn take_uvarint(input: &mut &[u8]) -> Option<u64> {
    let before = input.len();
    let v = disk::take_varint(input).ok()?;
    (before - input.len() == varint_bytes(v)).then_some(v)
}

fn take_str<'a>(input: &mut &'a [u8]) -> Option<&'a str> {
    let len = usize::try_from(take_uvarint(input)?).ok()?;
    if len > input.len() {
        return None;
    }
    let (s, rest) = input.split_at(len);
    *input = rest;
    std::str::from_utf8(s).ok()
}

/// Bytes a version-2 frame of a `len`-byte payload takes.
fn frame_bytes(len: usize) -> u64 {
    (varint_bytes(len as u64) + 4 + len) as u64
}

/// Reads and checks the header at the start of `input`.
///
/// # Errors
/// [`IndexError::TruncatedHeader`], [`IndexError::BadMagic`],
/// [`IndexError::HeaderChecksum`] (version 1), [`IndexError::UnsupportedVersion`], or
/// an I/O error (`path` names the file).
pub fn read_header(input: &mut impl Read, path: &Path) -> Result<IndexVersion, IndexError> {
    let io_err = |source| IndexError::Io {
        path: path.to_owned(),
        source,
    };
    let mut h = [0u8; disk::HEADER_BYTES];
    let n = disk::read_full(input, &mut h).map_err(io_err)?;
    let got = h.get(..n).unwrap_or_default();
    let magic_n = n.min(INDEX_MAGIC.len());
    if got.get(..magic_n) != INDEX_MAGIC.get(..magic_n) {
        return Err(IndexError::BadMagic);
    }
    let version = disk::u32_at(got, 8).ok_or(IndexError::TruncatedHeader)?;
    match version {
        INDEX_VERSION => Ok(IndexVersion::V2),
        legacy::VERSION => {
            let mut crc = [0u8; 4];
            if disk::read_full(input, &mut crc).map_err(io_err)? != crc.len() {
                return Err(IndexError::TruncatedHeader);
            }
            legacy::check_header_crc(crc)?;
            Ok(IndexVersion::V1)
        }
        other => Err(IndexError::UnsupportedVersion(other)),
    }
}

/// A reader that counts the bytes taken and where the last non-zero byte was, so a
/// zero-filled tail (the file grew, its data never reached the disk) is told from
/// damage.
struct Tracked<R> {
    inner: R,
    pos: u64,
    /// Position just past the last non-zero byte read.
    nonzero_end: u64,
}

impl<R: Read> Read for Tracked<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(i) = buf.get(..n).and_then(|b| b.iter().rposition(|&x| x != 0)) {
            self.nonzero_end = self.pos + i as u64 + 1;
        }
        self.pos += n as u64;
        Ok(n)
    }
}

/// Reads an index file record by record, without holding it in memory.
pub struct IndexReader<R> {
    input: Tracked<BufReader<R>>,
    path: PathBuf,
    version: IndexVersion,
    /// File offset of the next record.
    offset: u64,
    payload: Vec<u8>,
    recovered: Option<Recovered>,
    done: bool,
}

impl IndexReader<File> {
    /// Open `path` and check its header.
    ///
    /// # Errors
    /// [`IndexError::Io`] when the file cannot be read, or the header errors of
    /// [`read_header`].
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
    pub fn new(input: R, path: &Path) -> Result<Self, IndexError> {
        let mut input = BufReader::with_capacity(64 * 1024, input);
        let version = read_header(&mut input, path)?;
        let offset = version.header_bytes();
        Ok(Self {
            input: Tracked {
                inner: input,
                pos: offset,
                nonzero_end: offset,
            },
            path: path.to_owned(),
            version,
            offset,
            payload: Vec::new(),
            recovered: None,
            done: false,
        })
    }

    /// The file's layout.
    pub fn version(&self) -> IndexVersion {
        self.version
    }

    /// The torn tail found at the end, once the reader has reached it.
    pub fn recovered(&self) -> Option<Recovered> {
        self.recovered
    }

    /// Offset just past the last complete record read so far.
    pub fn valid_bytes(&self) -> u64 {
        self.offset
    }

    /// The next entry and the offset of its record; `None` at the end (or after an
    /// error, or a torn tail, see [`IndexReader::recovered`]).
    pub fn next_entry(&mut self) -> Option<Result<(u64, IndexEntry), IndexError>> {
        if self.done {
            return None;
        }
        let at = self.offset;
        let frame = match self.version {
            IndexVersion::V2 => self.next_frame(at),
            IndexVersion::V1 => legacy::next_frame(&mut self.input, &mut self.payload),
        };
        match frame {
            Ok(None) => {
                self.done = true;
                None
            }
            Ok(Some(bytes)) => {
                let decoded = match self.version {
                    IndexVersion::V2 if bytes != frame_bytes(self.payload.len()) => {
                        Err(IndexError::BadRecord {
                            offset: at,
                            reason: "length not in its shortest form",
                        })
                    }
                    IndexVersion::V2 => decode_payload(&self.payload, at),
                    IndexVersion::V1 => legacy::decode(&self.payload, at),
                };
                match decoded {
                    Ok(entry) => {
                        self.offset = at + bytes;
                        Some(Ok((at, entry)))
                    }
                    Err(e) => self.torn_if_zeros(at, at, e),
                }
            }
            Err(FrameError::Truncated) => self.torn(at),
            Err(FrameError::Checksum) => {
                // Only zeros (or nothing) after the frame: a torn write.
                let end = self.input.pos;
                self.torn_if_zeros(at, end, IndexError::RecordChecksum { offset: at })
            }
            Err(FrameError::TooLong) => {
                self.torn_if_zeros(at, at, IndexError::RecordLength { offset: at })
            }
            Err(FrameError::Io(source)) => self.fail(IndexError::Io {
                path: self.path.clone(),
                source,
            }),
        }
    }

    fn next_frame(&mut self, at: u64) -> Result<Option<u64>, FrameError> {
        let mut frames = RecordReader::headless(&mut self.input, at, MAX_RECORD_BYTES);
        match frames.next_record(&mut self.payload) {
            Ok(Some(_)) => Ok(Some(frames.offset() - at)),
            Ok(None) => Ok(None),
            Err(RecordError::Truncated { .. }) => Err(FrameError::Truncated),
            Err(RecordError::TooLong { .. }) => Err(FrameError::TooLong),
            Err(RecordError::Checksum { .. }) => Err(FrameError::Checksum),
            Err(RecordError::Io(e)) => Err(FrameError::Io(e)),
            Err(RecordError::Header(_)) => Err(FrameError::TooLong),
        }
    }

    /// Reads to the end: if every byte from `zeros_from` on is zero, the record at
    /// `at` starts a torn tail; otherwise `err` stands.
    fn torn_if_zeros(
        &mut self,
        at: u64,
        zeros_from: u64,
        err: IndexError,
    ) -> Option<Result<(u64, IndexEntry), IndexError>> {
        if let Err(source) = io::copy(&mut self.input, &mut io::sink()) {
            return self.fail(IndexError::Io {
                path: self.path.clone(),
                source,
            });
        }
        if self.input.nonzero_end <= zeros_from {
            self.torn(at)
        } else {
            self.fail(err)
        }
    }

    /// The record at `at` and everything after it is a torn tail.
    fn torn(&mut self, at: u64) -> Option<Result<(u64, IndexEntry), IndexError>> {
        if let Err(source) = io::copy(&mut self.input, &mut io::sink()) {
            return self.fail(IndexError::Io {
                path: self.path.clone(),
                source,
            });
        }
        self.done = true;
        let torn = self.input.pos.saturating_sub(at);
        if torn > 0 {
            self.recovered = Some(Recovered {
                valid_bytes: at,
                torn_bytes: torn,
            });
        }
        None
    }

    fn fail(&mut self, err: IndexError) -> Option<Result<(u64, IndexEntry), IndexError>> {
        self.done = true;
        Some(Err(err))
    }
}

impl<R: Read> Iterator for IndexReader<R> {
    type Item = Result<IndexEntry, IndexError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_entry().map(|r| r.map(|(_, e)| e))
    }
}

/// The previous crawl as a test or tool reads it whole: the latest entry of every URL
/// (a later record supersedes an earlier one), and the torn tail if there was one.
/// Holds every URL in memory; the crawl itself uses `recrawl::Previous`, which holds
/// 16 bytes per URL.
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

/// Fuzz entry point for the reader: `data` is taken as a whole index file (either
/// version). Nothing may panic; every entry read must encode back to exactly the bytes
/// it was read from, and read back the same at its offset by [`read_entry_at`].
pub fn fuzz_read(data: &[u8]) {
    let path = Path::new("fuzz");
    let Ok(mut reader) = IndexReader::new(data, path) else {
        return;
    };
    let version = reader.version();
    while let Some(Ok((at, entry))) = reader.next_entry() {
        let bytes = match version {
            IndexVersion::V2 => encode(&entry),
            IndexVersion::V1 => legacy::encode(&entry),
        };
        let Ok(bytes) = bytes else { return };
        let from = usize::try_from(at).unwrap_or(usize::MAX);
        let original = data.get(from..from.saturating_add(bytes.len()));
        assert_eq!(original, Some(bytes.as_slice()), "re-encoding differs");
        let again = read_entry_at(data, version, at, path);
        assert_eq!(again.ok().as_ref(), Some(&entry), "positioned read differs");
    }
}

#[cfg(test)]
mod tests;
