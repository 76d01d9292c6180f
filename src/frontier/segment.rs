//! Append-only segment files: the frontier's disk tier.
//!
//! A segment is a header followed by length-prefixed, checksummed records:
//!
//! ```text
//! header:  b"TRWLSEG\0" | version: u32 LE
//! record:  payload_len: u32 LE | crc32(payload): u32 LE | payload
//! payload: varint host_len | host | varint url_len | url
//!          | varint via_len | via | varint hops_len | hops | attempts: u8
//! ```
//!
//! Segments are written sequentially and read back sequentially, so the disk tier
//! costs one sequential write and one sequential read per URL that spills. The encoding
//! is compact (no field names, varint lengths): a URL of 60 bytes on a host of 20 with
//! a via of 60 costs about 150 bytes on disk. A record whose checksum does not match,
//! or a record cut short by a crash, ends the readable part of a segment with a typed
//! error, so a torn tail is detected and never decoded as garbage.

#![deny(clippy::indexing_slicing)]

use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use super::QueuedUrl;

const MAGIC: &[u8; 8] = b"TRWLSEG\0";
const VERSION: u32 = 1;
const HEADER_BYTES: u64 = 12;
/// A record larger than this is refused on write and treated as corruption on read.
/// URLs are capped far below this by the crawl filters.
pub const MAX_RECORD_BYTES: usize = 1 << 20;

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

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn take_varint(input: &mut &[u8]) -> Option<u64> {
    let mut v: u64 = 0;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = input.split_first()?;
        *input = rest;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn take_str(input: &mut &[u8]) -> Option<String> {
    let len = usize::try_from(take_varint(input)?).ok()?;
    if len > input.len() {
        return None;
    }
    let (head, rest) = input.split_at(len);
    *input = rest;
    String::from_utf8(head.to_vec()).ok()
}

/// Encodes a record's payload (without length and checksum).
pub fn encode_payload(host: &str, item: &QueuedUrl, out: &mut Vec<u8>) {
    put_bytes(out, host.as_bytes());
    put_bytes(out, item.url.as_bytes());
    put_bytes(out, item.via.as_deref().unwrap_or("").as_bytes());
    put_bytes(out, item.hops.as_bytes());
    out.push(item.attempts);
}

/// Decodes a payload written by [`encode_payload`]; `None` if it is malformed.
pub fn decode_payload(mut input: &[u8]) -> Option<Record> {
    let host = take_str(&mut input)?;
    let url = take_str(&mut input)?;
    let via = take_str(&mut input)?;
    let hops = take_str(&mut input)?;
    let (&attempts, rest) = input.split_first()?;
    if !rest.is_empty() {
        return None;
    }
    let via = if via.is_empty() { None } else { Some(via) };
    Some(Record {
        host,
        item: QueuedUrl {
            url,
            via,
            hops,
            attempts,
        },
    })
}

/// Appends records to one segment file.
#[derive(Debug)]
pub struct SegmentWriter {
    path: PathBuf,
    out: BufWriter<File>,
    bytes: u64,
    records: u64,
    scratch: Vec<u8>,
}

impl SegmentWriter {
    /// Creates a new segment file (it must not exist yet) and writes its header.
    ///
    /// # Errors
    /// Any I/O error creating or writing the file.
    pub fn create(path: &Path) -> Result<Self, SegmentError> {
        let file = OpenOptions::new().write(true).create_new(true).open(path)?;
        let mut out = BufWriter::with_capacity(64 * 1024, file);
        out.write_all(MAGIC)?;
        out.write_all(&VERSION.to_le_bytes())?;
        Ok(Self {
            path: path.to_path_buf(),
            out,
            bytes: HEADER_BYTES,
            records: 0,
            scratch: Vec::with_capacity(512),
        })
    }

    /// Appends one record.
    ///
    /// # Errors
    /// I/O errors, or [`SegmentError::RecordTooLarge`].
    pub fn append(&mut self, host: &str, item: &QueuedUrl) -> Result<(), SegmentError> {
        self.scratch.clear();
        encode_payload(host, item, &mut self.scratch);
        if self.scratch.len() > MAX_RECORD_BYTES {
            return Err(SegmentError::RecordTooLarge);
        }
        let len = self.scratch.len() as u32;
        let crc = crc32fast::hash(&self.scratch);
        self.out.write_all(&len.to_le_bytes())?;
        self.out.write_all(&crc.to_le_bytes())?;
        self.out.write_all(&self.scratch)?;
        self.bytes += 8 + u64::from(len);
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
    input: BufReader<File>,
    offset: u64,
    buf: Vec<u8>,
}

impl SegmentReader {
    /// Opens a segment and checks its header.
    ///
    /// # Errors
    /// I/O errors or [`SegmentError::BadHeader`].
    pub fn open(path: &Path) -> Result<Self, SegmentError> {
        let mut input = BufReader::with_capacity(64 * 1024, File::open(path)?);
        let mut header = [0u8; HEADER_BYTES as usize];
        input.read_exact(&mut header).map_err(|e| match e.kind() {
            io::ErrorKind::UnexpectedEof => SegmentError::BadHeader,
            _ => SegmentError::Io(e),
        })?;
        if header.get(..8) != Some(&MAGIC[..])
            || header.get(8..12) != Some(&VERSION.to_le_bytes()[..])
        {
            return Err(SegmentError::BadHeader);
        }
        Ok(Self {
            input,
            offset: HEADER_BYTES,
            buf: Vec::new(),
        })
    }

    /// The next record, `Ok(None)` at a clean end of file.
    ///
    /// # Errors
    /// [`SegmentError::Truncated`] for a record cut short, [`SegmentError::Corrupt`]
    /// for a bad length or checksum, or an I/O error.
    pub fn next_record(&mut self) -> Result<Option<Record>, SegmentError> {
        let start = self.offset;
        let mut prefix = [0u8; 8];
        match read_full(&mut self.input, &mut prefix)? {
            0 => return Ok(None),
            8 => {}
            _ => return Err(SegmentError::Truncated { offset: start }),
        }
        let [l0, l1, l2, l3, c0, c1, c2, c3] = prefix;
        let len = u32::from_le_bytes([l0, l1, l2, l3]) as usize;
        let crc = u32::from_le_bytes([c0, c1, c2, c3]);
        if len > MAX_RECORD_BYTES {
            return Err(SegmentError::Corrupt { offset: start });
        }
        self.buf.resize(len, 0);
        if read_full(&mut self.input, &mut self.buf)? != len {
            return Err(SegmentError::Truncated { offset: start });
        }
        if crc32fast::hash(&self.buf) != crc {
            return Err(SegmentError::Corrupt { offset: start });
        }
        let record = decode_payload(&self.buf).ok_or(SegmentError::Corrupt { offset: start })?;
        self.offset += 8 + len as u64;
        Ok(Some(record))
    }

    /// Byte offset of the next record.
    pub fn offset(&self) -> u64 {
        self.offset
    }
}

/// Reads until `buf` is full or end of file; returns the bytes read.
fn read_full(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        let Some(rest) = buf.get_mut(filled..) else {
            break;
        };
        match input.read(rest) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
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
