//! Append-only segment files: the frontier's disk tier.
//!
//! A segment is a header followed by length-prefixed, checksummed records:
//!
//! ```text
//! header:  b"TRWLSEG\0" | version: u32 LE (2)
//! record:  varint payload_len | crc32(payload): u32 LE | payload
//! payload: flags: u8
//!          | varint url_shared | varint n | n bytes     url, front-coded
//!          | host                                       see flags
//!          | via                                        see flags
//!          | varint hops_shared | varint n | n bytes    hops, front-coded
//!          | attempts: u8
//! flags:   bit 0  via present
//!          bit 1  via equals the previous record's via (nothing stored)
//!          bit 2  host is the first `varint len` bytes of the url (only the length
//!                 is stored), else `varint len | bytes`
//! via (present, not the previous one): varint via_shared | varint n | n bytes,
//!          front-coded against the previous record's via
//! ```
//!
//! "Front-coded" means: the first `shared` bytes are those of the same field in the
//! previous record of the file, then `n` new bytes follow. The links of one page are
//! queued together, so consecutive records usually share the via (the page), the host
//! and a prefix of the URL; the host key `scheme://host:port` is usually a prefix of
//! the URL. A record of a 45-byte URL then costs about 35 bytes on disk instead of the
//! ~115 of the version-1 layout (lengths, crc, host, url, via and hops in full).
//!
//! Segments are written sequentially and read back sequentially (the decoder keeps the
//! previous record, as the encoder did), so the disk tier costs one sequential write
//! and one sequential read per URL that spills. Every record has its own checksum: a
//! record whose checksum does not match, or a record cut short by a crash, ends the
//! readable part of a segment with a typed error, so a torn tail is detected and never
//! decoded as garbage; the records before it are intact and decodable, since a record
//! depends only on the records before it.

#![deny(clippy::indexing_slicing)]

use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::QueuedUrl;
use crate::disk::{
    put_bytes, put_varint, take_bytes, take_varint, write_record, Format, HeaderError, RecordError,
    RecordReader,
};

/// A record larger than this is refused on write and treated as corruption on read.
/// URLs are capped far below this by the crawl filters.
pub const MAX_RECORD_BYTES: usize = 1 << 20;
/// The segment format: magic `TRWLSEG\0`, version 2 (the front-coded records above;
/// version 1 files, whole fields, are refused as a bad header).
pub const FORMAT: Format = Format::new(*b"TRWLSEG\0", 2, MAX_RECORD_BYTES);
const HEADER_BYTES: u64 = crate::disk::HEADER_BYTES as u64;

/// Why a segment could not be written or read.
#[derive(Debug)]
pub enum SegmentError {
    /// The operating system refused a file operation.
    Io(io::Error),
    /// The file does not start with the segment magic or has an unknown version.
    BadHeader,
    /// A record's checksum or length is wrong: the file is damaged from here on.
    Corrupt { offset: u64 },
    /// The file ends inside a record (a write torn by a crash).
    Truncated { offset: u64 },
    /// A record to write exceeds [`MAX_RECORD_BYTES`].
    RecordTooLarge,
}

impl std::fmt::Display for SegmentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Io(e) => write!(f, "segment i/o: {e}"),
            Self::BadHeader => write!(f, "segment header is not a trawl frontier segment"),
            Self::Corrupt { offset } => write!(f, "segment record at byte {offset} is corrupt"),
            Self::Truncated { offset } => {
                write!(f, "segment ends inside the record at byte {offset}")
            }
            Self::RecordTooLarge => write!(f, "frontier record too large"),
        }
    }
}

impl std::error::Error for SegmentError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for SegmentError {
    fn from(e: io::Error) -> Self {
        Self::Io(e)
    }
}

/// One frontier record as stored: the owning host and the queued URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub host: String,
    pub item: QueuedUrl,
}

/// Bytes `a` and `b` share at the front.
fn shared_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Writes `field` front-coded against `prev` (see the module docs).
fn put_front_coded(out: &mut Vec<u8>, prev: &[u8], field: &[u8]) {
    let shared = shared_prefix(prev, field);
    put_varint(out, shared as u64);
    put_bytes(out, field.get(shared..).unwrap_or_default());
}

/// Reads a front-coded field; `None` if the shared length exceeds `prev` or the
/// result is not UTF-8.
fn take_front_coded(input: &mut &[u8], prev: &str) -> Option<String> {
    let shared = usize::try_from(take_varint(input).ok()?).ok()?;
    let head = prev.as_bytes().get(..shared)?;
    let tail = take_bytes(input).ok()?;
    let mut v = Vec::with_capacity(shared + tail.len());
    v.extend_from_slice(head);
    v.extend_from_slice(tail);
    String::from_utf8(v).ok()
}

const FLAG_VIA: u8 = 1;
const FLAG_SAME_VIA: u8 = 2;
const FLAG_HOST_IN_URL: u8 = 4;

/// The previous record of a file, which the next one is coded against. The writer and
/// the reader of one file each keep one, fed the same records in the same order.
#[derive(Debug, Default)]
pub struct CodingContext {
    url: String,
    via: Option<String>,
    hops: String,
}

impl CodingContext {
    /// Heap bytes the context holds (its strings' allocations, as the allocator
    /// rounds them), for a caller that counts its RAM.
    pub fn heap_bytes(&self) -> usize {
        super::heap_chunk(self.url.capacity())
            + self
                .via
                .as_ref()
                .map_or(0, |v| super::heap_chunk(v.capacity()))
            + super::heap_chunk(self.hops.capacity())
    }

    /// Encodes a record's payload (without length and checksum) after the previous
    /// one. The caller then [`CodingContext::remember`]s the record if it is written.
    pub fn encode(&self, host: &str, item: &QueuedUrl, out: &mut Vec<u8>) {
        let host_in_url = !host.is_empty() && item.url.starts_with(host);
        let mut flags = 0;
        if item.via.is_some() {
            flags |= FLAG_VIA;
            if item.via == self.via {
                flags |= FLAG_SAME_VIA;
            }
        }
        if host_in_url {
            flags |= FLAG_HOST_IN_URL;
        }
        out.push(flags);
        put_front_coded(out, self.url.as_bytes(), item.url.as_bytes());
        if host_in_url {
            put_varint(out, host.len() as u64);
        } else {
            put_bytes(out, host.as_bytes());
        }
        if let Some(via) = &item.via {
            if flags & FLAG_SAME_VIA == 0 {
                let prev = self.via.as_deref().unwrap_or("");
                put_front_coded(out, prev.as_bytes(), via.as_bytes());
            }
        }
        put_front_coded(out, self.hops.as_bytes(), item.hops.as_bytes());
        out.push(item.attempts);
    }

    /// Makes `item` the previous record (a record without a via keeps the via of the
    /// one before, as the decoder does).
    pub fn remember(&mut self, item: &QueuedUrl) {
        item.url.clone_into(&mut self.url);
        if item.via.is_some() && item.via != self.via {
            self.via.clone_from(&item.via);
        }
        item.hops.clone_into(&mut self.hops);
    }

    /// Decodes a payload written by [`CodingContext::encode`] after the same previous
    /// records; `None` if it is malformed (the context is then unchanged).
    pub fn decode(&mut self, mut input: &[u8]) -> Option<Record> {
        let (&flags, rest) = input.split_first()?;
        input = rest;
        if flags & !(FLAG_VIA | FLAG_SAME_VIA | FLAG_HOST_IN_URL) != 0
            || flags & (FLAG_VIA | FLAG_SAME_VIA) == FLAG_SAME_VIA
        {
            return None;
        }
        let url = take_front_coded(&mut input, &self.url)?;
        let host = if flags & FLAG_HOST_IN_URL != 0 {
            let len = usize::try_from(take_varint(&mut input).ok()?).ok()?;
            url.get(..len).filter(|h| !h.is_empty())?.to_owned()
        } else {
            String::from_utf8(take_bytes(&mut input).ok()?.to_vec()).ok()?
        };
        let via = match (flags & FLAG_VIA != 0, flags & FLAG_SAME_VIA != 0) {
            (false, _) => None,
            (true, true) => Some(self.via.clone()?),
            (true, false) => Some(take_front_coded(
                &mut input,
                self.via.as_deref().unwrap_or(""),
            )?),
        };
        let hops = take_front_coded(&mut input, &self.hops)?;
        let (&attempts, rest) = input.split_first()?;
        if !rest.is_empty() {
            return None;
        }
        let item = QueuedUrl {
            url,
            via,
            hops,
            attempts,
        };
        self.remember(&item);
        Some(Record { host, item })
    }
}

/// Encodes a record's payload as the first record of a file.
pub fn encode_payload(host: &str, item: &QueuedUrl, out: &mut Vec<u8>) {
    CodingContext::default().encode(host, item, out);
}

/// Decodes a payload written by [`encode_payload`]; `None` if it is malformed.
pub fn decode_payload(input: &[u8]) -> Option<Record> {
    CodingContext::default().decode(input)
}

/// Appends records to one segment file.
#[derive(Debug)]
pub struct SegmentWriter {
    path: PathBuf,
    out: BufWriter<File>,
    bytes: u64,
    records: u64,
    scratch: Vec<u8>,
    context: CodingContext,
}

impl SegmentWriter {
    /// Creates a new segment file (it must not exist yet) and writes its header.
    ///
    /// # Errors
    /// Any I/O error creating or writing the file.
    pub fn create(path: &Path) -> Result<Self, SegmentError> {
        let file = OpenOptions::new().write(true).create_new(true).open(path)?;
        let mut out = BufWriter::with_capacity(64 * 1024, file);
        out.write_all(&FORMAT.header())?;
        Ok(Self {
            path: path.to_path_buf(),
            out,
            bytes: HEADER_BYTES,
            records: 0,
            scratch: Vec::with_capacity(512),
            context: CodingContext::default(),
        })
    }

    /// Appends one record.
    ///
    /// # Errors
    /// I/O errors, or [`SegmentError::RecordTooLarge`].
    pub fn append(&mut self, host: &str, item: &QueuedUrl) -> Result<(), SegmentError> {
        self.scratch.clear();
        self.context.encode(host, item, &mut self.scratch);
        if self.scratch.len() > MAX_RECORD_BYTES {
            return Err(SegmentError::RecordTooLarge);
        }
        self.context.remember(item);
        self.bytes += write_record(&mut self.out, &self.scratch)?;
        self.records += 1;
        Ok(())
    }

    /// Bytes written so far, header included.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes buffered records to the operating system (not to the disk platter:
    /// durability is the checkpoint's job, which calls [`SegmentWriter::sync`]).
    ///
    /// # Errors
    /// Any I/O error.
    pub fn flush(&mut self) -> Result<(), SegmentError> {
        self.out.flush()?;
        Ok(())
    }

    /// Flushes and fsyncs the file.
    ///
    /// # Errors
    /// Any I/O error.
    pub fn sync(&mut self) -> Result<(), SegmentError> {
        self.out.flush()?;
        self.out.get_ref().sync_data()?;
        Ok(())
    }

    /// Flushes and closes the segment, returning its path and record count.
    ///
    /// # Errors
    /// Any I/O error on the final flush.
    pub fn seal(mut self) -> Result<(PathBuf, u64), SegmentError> {
        self.out.flush()?;
        Ok((self.path, self.records))
    }
}

/// Reads a segment sequentially, record by record.
#[derive(Debug)]
pub struct SegmentReader {
    records: RecordReader<BufReader<File>>,
    /// Offset after the last record decoded (a record whose frame reads but whose
    /// payload does not decode is not counted as read).
    offset: u64,
    buf: Vec<u8>,
    context: CodingContext,
}

impl SegmentReader {
    /// Opens a segment and checks its header.
    ///
    /// # Errors
    /// I/O errors or [`SegmentError::BadHeader`].
    pub fn open(path: &Path) -> Result<Self, SegmentError> {
        let input = BufReader::with_capacity(64 * 1024, File::open(path)?);
        let records = RecordReader::open(input, &FORMAT).map_err(|e| match e {
            RecordError::Io(e) => SegmentError::Io(e),
            _ => SegmentError::BadHeader,
        })?;
        Ok(Self {
            records,
            offset: HEADER_BYTES,
            buf: Vec::new(),
            context: CodingContext::default(),
        })
    }

    /// The next record, `Ok(None)` at a clean end of file.
    ///
    /// # Errors
    /// [`SegmentError::Truncated`] for a record cut short, [`SegmentError::Corrupt`]
    /// for a bad length or checksum, or an I/O error.
    pub fn next_record(&mut self) -> Result<Option<Record>, SegmentError> {
        let Some(start) = self
            .records
            .next_record(&mut self.buf)
            .map_err(|e| match e {
                RecordError::Io(e) => SegmentError::Io(e),
                RecordError::Truncated { offset } => SegmentError::Truncated { offset },
                RecordError::TooLong { offset } | RecordError::Checksum { offset } => {
                    SegmentError::Corrupt { offset }
                }
                RecordError::Header(HeaderError::Truncated) => {
                    SegmentError::Truncated { offset: 0 }
                }
                RecordError::Header(_) => SegmentError::BadHeader,
            })?
        else {
            return Ok(None);
        };
        let record = self
            .context
            .decode(&self.buf)
            .ok_or(SegmentError::Corrupt { offset: start })?;
        self.offset = self.records.offset();
        Ok(Some(record))
    }

    /// Byte offset of the next record.
    pub fn offset(&self) -> u64 {
        self.offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(url: &str) -> QueuedUrl {
        QueuedUrl {
            url: url.to_string(),
            via: Some("http://a.test/".into()),
            hops: "LL".into(),
            attempts: 1,
        }
    }

    #[test]
    fn records_round_trip_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let mut w = SegmentWriter::create(&path).unwrap();
        for i in 0..1000 {
            w.append("a.test", &item(&format!("http://a.test/{i}")))
                .unwrap();
        }
        let (path, n) = w.seal().unwrap();
        assert_eq!(n, 1000);
        let mut r = SegmentReader::open(&path).unwrap();
        for i in 0..1000 {
            let rec = r.next_record().unwrap().unwrap();
            assert_eq!(rec.host, "a.test");
            assert_eq!(rec.item, item(&format!("http://a.test/{i}")));
        }
        assert!(r.next_record().unwrap().is_none());
    }

    /// Front coding against the previous record: a mixed sequence (vias present,
    /// absent, repeated, changing; hosts inside and outside the URL; non-ASCII; empty
    /// hops) reads back exactly, and the links of one page cost far less than their
    /// text.
    #[test]
    fn front_coded_records_round_trip_and_are_compact() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let mut w = SegmentWriter::create(&path).unwrap();
        let mut want = Vec::new();
        for i in 0..3000u32 {
            let host = match i % 7 {
                0 => "https://b.test:443".to_owned(),
                1 => String::new(),
                _ => format!("http://h{:06}.synth.test:8080", i % 97),
            };
            let item = QueuedUrl {
                url: format!("http://h{:06}.synth.test:8080/p/{i}/Ü", i % 97),
                via: match i % 11 {
                    0 => None,
                    1..=5 => Some(format!("http://a.test/page/{}", i / 50)),
                    _ => Some(format!("http://a.test/other/{}", i % 3)),
                },
                hops: "L".repeat((i % 5) as usize),
                attempts: (i % 3) as u8,
            };
            w.append(&host, &item).unwrap();
            want.push(Record { host, item });
        }
        w.seal().unwrap();
        let mut r = SegmentReader::open(&path).unwrap();
        for rec in &want {
            assert_eq!(&r.next_record().unwrap().unwrap(), rec);
        }
        assert!(r.next_record().unwrap().is_none());

        // One page's links: same via, host in the URL.
        let path = dir.path().join("page");
        let mut w = SegmentWriter::create(&path).unwrap();
        let mut text = 0;
        for i in 0..1000u32 {
            let host = format!("http://h{:06}.synth.test:8080", (i * 7919) % 100_000);
            let item = QueuedUrl {
                url: format!("{host}/p/{}", (i * 104_729) % 1_000_000),
                via: Some("http://h000001.synth.test:8080/p/77".into()),
                hops: "LLL".into(),
                attempts: 0,
            };
            text += host.len() + item.url.len() + item.via.as_ref().unwrap().len() + 3;
            w.append(&host, &item).unwrap();
        }
        let bytes = w.bytes() - HEADER_BYTES;
        assert!(
            bytes * 2 < text as u64,
            "{bytes} bytes on disk for {text} bytes of text"
        );
    }

    #[test]
    fn empty_via_round_trips_as_none() {
        let mut buf = Vec::new();
        let it = QueuedUrl {
            url: "http://x.test/".into(),
            via: None,
            hops: String::new(),
            attempts: 0,
        };
        encode_payload("x.test", &it, &mut buf);
        assert_eq!(decode_payload(&buf).unwrap().item, it);
    }

    #[test]
    fn torn_tail_is_reported_as_truncated_after_the_good_records() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let mut w = SegmentWriter::create(&path).unwrap();
        for i in 0..10 {
            w.append("a.test", &item(&format!("http://a.test/{i}")))
                .unwrap();
        }
        w.seal().unwrap();
        let len = std::fs::metadata(&path).unwrap().len();
        let file = OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(len - 5).unwrap();
        let mut r = SegmentReader::open(&path).unwrap();
        for _ in 0..9 {
            assert!(r.next_record().unwrap().is_some());
        }
        assert!(matches!(
            r.next_record(),
            Err(SegmentError::Truncated { .. })
        ));
    }

    #[test]
    fn flipped_byte_is_reported_as_corrupt() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let mut w = SegmentWriter::create(&path).unwrap();
        w.append("a.test", &item("http://a.test/1")).unwrap();
        w.seal().unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 3;
        bytes[last] ^= 0x20;
        std::fs::write(&path, &bytes).unwrap();
        let mut r = SegmentReader::open(&path).unwrap();
        assert!(matches!(
            r.next_record(),
            Err(SegmentError::Corrupt { offset: 12 })
        ));
    }

    #[test]
    fn wrong_magic_is_a_bad_header() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        std::fs::write(&path, b"NOTASEGMENT!").unwrap();
        assert!(matches!(
            SegmentReader::open(&path),
            Err(SegmentError::BadHeader)
        ));
        std::fs::write(&path, b"TRW").unwrap();
        assert!(matches!(
            SegmentReader::open(&path),
            Err(SegmentError::BadHeader)
        ));
        // Version 1 (whole fields, u32 lengths) is another format: refused.
        std::fs::write(&path, b"TRWLSEG\0\x01\0\0\0\x05\0\0\0").unwrap();
        assert!(matches!(
            SegmentReader::open(&path),
            Err(SegmentError::BadHeader)
        ));
    }

    /// The offset stays at the last record decoded when the next one is damaged, so a
    /// report names the byte where the readable part ends.
    #[test]
    fn the_offset_stops_before_a_damaged_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let mut w = SegmentWriter::create(&path).unwrap();
        w.append("a.test", &item("http://a.test/1")).unwrap();
        let first_end = w.bytes();
        w.append("a.test", &item("http://a.test/2")).unwrap();
        w.seal().unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let mut r = SegmentReader::open(&path).unwrap();
        assert_eq!(r.offset(), HEADER_BYTES);
        assert!(r.next_record().unwrap().is_some());
        assert_eq!(r.offset(), first_end);
        assert!(matches!(
            r.next_record(),
            Err(SegmentError::Corrupt { offset }) if offset == first_end
        ));
        assert_eq!(r.offset(), first_end);
    }

    #[test]
    fn decoding_arbitrary_bytes_never_panics() {
        for seed in 0u32..2000 {
            let len = (seed % 40) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|i| (seed.wrapping_mul(2654435761).rotate_left(i as u32)) as u8)
                .collect();
            let _ = decode_payload(&bytes);
        }
    }
}
