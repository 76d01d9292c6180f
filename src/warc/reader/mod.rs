//! The one WARC reader: a record head parsed from bytes, a push parser for one record,
//! and an iterator over the records of a file.
//!
//! Three layers, as httparse and rustls keep theirs:
//! - [`RecordHead::parse`] is sans-IO: a version line, fields and the blank line from
//!   the caller's bytes into a typed head (fields, `Content-Length`, head length), or
//!   [`Status::Partial`] when the blank line has not arrived yet. Bounded: a head over
//!   [`MAX_HEAD_BYTES`] or with more than [`MAX_FIELDS`] fields is an error.
//! - [`RecordSink`] takes the bytes of exactly one record in pieces of any size (what a
//!   gzip member decodes to) and checks that they form one whole record: head,
//!   `Content-Length` bytes of block, CRLF CRLF, nothing more. It keeps the head and at
//!   most `max_block_bytes` of the block, so memory stays bounded whatever the file.
//! - [`Records`] walks a file (`.warc.gz` with one gzip member per record, or plain
//!   `.warc`) from any `BufRead`, each [`Record`] with its byte range in the file.
//!
//! Used by crash repair (`repair::scan_reader`), the restamping of compressed captures
//! (`compressed::restamp`) and the re-crawl's outlinks reader (`recrawl::outlinks`).
//! Nothing here panics on input: damaged bytes are a [`Damage`], typed.

use std::io::{self, BufRead, Read, Write};
use std::ops::Range;

use flate2::bufread::GzDecoder;

/// Longest record head accepted, in bytes (trawl's are well under 2 KiB; the bound
/// keeps a damaged file from growing a buffer).
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// Most fields accepted in one head (trawl writes at most 15).
pub const MAX_FIELDS: usize = 256;

/// Block bytes a [`Records`] keeps of each record unless told otherwise.
pub const DEFAULT_MAX_BLOCK_BYTES: usize = 1 << 20;

/// The two version lines a record may start with.
const VERSION_LINES: [(&[u8], Version); 2] = [
    (b"WARC/1.0\r\n", Version::V1_0),
    (b"WARC/1.1\r\n", Version::V1_1),
];

/// Bytes of either version line, CRLF included.
const VERSION_LINE_BYTES: usize = 10;

/// The end of a head, and of a record after its block.
const BLANK: &[u8] = b"\r\n\r\n";

/// Why bytes are not a record head. Small and `Copy`, as httparse's errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HeadError {
    /// The first line is not `WARC/1.0` or `WARC/1.1`.
    #[error("not a WARC/1.0 or WARC/1.1 record")]
    Version,
    /// No blank line within [`MAX_HEAD_BYTES`].
    #[error("record head too long")]
    TooLong,
    /// More than [`MAX_FIELDS`] fields.
    #[error("too many fields in record head")]
    TooManyFields,
    /// The head is not UTF-8 (WARC 1.1 §4).
    #[error("record head is not utf-8")]
    NotUtf8,
    /// A line that is neither `name: value` nor the continuation of a field.
    #[error("malformed field in record head")]
    BadField,
    /// A `Content-Length` that is not a decimal number.
    #[error("content-length is not a number")]
    BadContentLength,
}

/// The WARC version a record declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// `WARC/1.0`.
    V1_0,
    /// `WARC/1.1`, what trawl writes.
    V1_1,
}

/// The outcome of parsing bytes that may hold only the start of a head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status<T> {
    /// More bytes are needed.
    Partial,
    /// The head, complete.
    Complete(T),
}

/// A field's name and value (trimmed), as byte ranges into [`RecordHead`]'s text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FieldSpan {
    name: Range<usize>,
    value: Range<usize>,
}

/// A parsed record head: its version, its fields in order, its `Content-Length`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordHead {
    /// The head's bytes, version line through the blank line.
    text: String,
    version: Version,
    fields: Vec<FieldSpan>,
    content_length: Option<u64>,
}

impl RecordHead {
    /// Parses the head at the start of `bytes` (what follows it is not looked at).
    ///
    /// A missing `Content-Length` is not an error here (a head alone says nothing of
    /// a block); [`RecordSink`] and [`Records`] require one.
    ///
    /// # Errors
    /// [`HeadError`] when the bytes cannot be the start of a head.
    pub fn parse(bytes: &[u8]) -> Result<Status<Self>, HeadError> {
        let (version_len, version) = version_line(bytes)?;
        let Some(version) = version else {
            return Ok(Status::Partial);
        };
        // The version line's CRLF may be the first half of the blank line.
        let window = bytes.get(..MAX_HEAD_BYTES).unwrap_or(bytes);
        let blank = window
            .get(version_len - 2..)
            .and_then(|rest| memchr::memmem::find(rest, BLANK));
        let Some(blank) = blank.map(|at| at + version_len - 2) else {
            return if bytes.len() >= MAX_HEAD_BYTES {
                Err(HeadError::TooLong)
            } else {
                Ok(Status::Partial)
            };
        };
        let head = bytes.get(..blank + BLANK.len()).unwrap_or_default();
        let text = std::str::from_utf8(head).map_err(|_| HeadError::NotUtf8)?;
        let fields = parse_fields(text, version_len, blank + 2)?;
        let mut head = Self {
            text: text.to_owned(),
            version,
            fields,
            content_length: None,
        };
        if let Some(value) = head.field("Content-Length") {
            if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
                return Err(HeadError::BadContentLength);
            }
            head.content_length = Some(value.parse().map_err(|_| HeadError::BadContentLength)?);
        }
        Ok(Status::Complete(head))
    }

    /// The version its first line declares.
    pub fn version(&self) -> Version {
        self.version
    }

    /// Bytes of the head, version line through the blank line: where the block starts.
    pub fn len_bytes(&self) -> usize {
        self.text.len()
    }

    /// The head's text, version line through the blank line.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The block's length, from `Content-Length` (the first, when there are several).
    pub fn content_length(&self) -> Option<u64> {
        self.content_length
    }

    /// Bytes of the whole record: head, block and the closing CRLF CRLF.
    pub fn record_len_bytes(&self) -> Option<u64> {
        self.content_length?
            .checked_add(self.text.len() as u64)?
            .checked_add(BLANK.len() as u64)
    }

    /// The fields as (name, value) in order, values trimmed.
    pub fn fields(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.fields.iter().map(|f| {
            (
                self.text.get(f.name.clone()).unwrap_or_default(),
                self.text.get(f.value.clone()).unwrap_or_default(),
            )
        })
    }

    /// The value of the first field named `name` (ASCII case-insensitive).
    pub fn field(&self, name: &str) -> Option<&str> {
        self.text.get(self.field_range(name)?)
    }

    /// Where the value of the first field named `name` lies in the record's bytes (the
    /// head starts the record), so it can be replaced in place.
    pub fn field_range(&self, name: &str) -> Option<Range<usize>> {
        self.fields
            .iter()
            .find(|f| {
                self.text
                    .get(f.name.clone())
                    .is_some_and(|n| n.eq_ignore_ascii_case(name))
            })
            .map(|f| f.value.clone())
    }

    /// `WARC-Type`.
    pub fn record_type(&self) -> Option<&str> {
        self.field("WARC-Type")
    }

    /// `WARC-Record-ID`.
    pub fn record_id(&self) -> Option<&str> {
        self.field("WARC-Record-ID")
    }

    /// `WARC-Target-URI`.
    pub fn target_uri(&self) -> Option<&str> {
        self.field("WARC-Target-URI")
    }
}

/// The version line at the start of `bytes`: its length and version, or `None` for
/// the version when `bytes` is a proper prefix of one.
fn version_line(bytes: &[u8]) -> Result<(usize, Option<Version>), HeadError> {
    for (line, version) in VERSION_LINES {
        let n = line.len().min(bytes.len());
        if bytes.get(..n) == line.get(..n) {
            let complete = (n == line.len()).then_some(version);
            return Ok((line.len(), complete));
        }
    }
    Err(HeadError::Version)
}

/// The fields of `text[from..to]`, lines each ending in CRLF; a line starting with a
/// space or tab continues the field before it (WARC 1.0's folding).
fn parse_fields(text: &str, from: usize, to: usize) -> Result<Vec<FieldSpan>, HeadError> {
    let mut fields: Vec<FieldSpan> = Vec::new();
    let mut at = from;
    while at < to {
        let line_end = text
            .get(at..to)
            .and_then(|rest| rest.find("\r\n"))
            .map_or(to, |n| at + n);
        let line = text.get(at..line_end).ok_or(HeadError::BadField)?;
        if line.starts_with([' ', '\t']) {
            let last = fields.last_mut().ok_or(HeadError::BadField)?;
            let content = line.trim_matches([' ', '\t']);
            if !content.is_empty() {
                let content_start = at + (line.len() - line.trim_start_matches([' ', '\t']).len());
                if last.value.is_empty() {
                    last.value.start = content_start;
                }
                last.value.end = content_start + content.len();
            }
        } else {
            let colon = line.find(':').ok_or(HeadError::BadField)?;
            if colon == 0 {
                return Err(HeadError::BadField);
            }
            if fields.len() == MAX_FIELDS {
                return Err(HeadError::TooManyFields);
            }
            let raw = line.get(colon + 1..).unwrap_or_default();
            let lead = raw.len() - raw.trim_start_matches([' ', '\t']).len();
            let value = raw.trim_matches([' ', '\t']);
            let start = at + colon + 1 + lead;
            fields.push(FieldSpan {
                name: at..at + colon,
                value: start..start + value.len(),
            });
        }
        at = line_end + 2;
    }
    Ok(fields)
}

/// Why bytes do not form whole records. `Copy`, with the head's cause kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Damage {
    /// The head does not parse.
    #[error("bad record head")]
    Head(#[source] HeadError),
    /// The head has no `Content-Length`.
    #[error("record head has no content-length")]
    NoContentLength,
    /// A gzip member does not decode (bad data, CRC-32 or length, or cut off).
    #[error("gzip member does not decode")]
    Gzip,
    /// The bytes end before the record does.
    #[error("record cut short")]
    Truncated,
    /// The block is not followed by CRLF CRLF.
    #[error("record does not end in a blank line")]
    NoEnd,
    /// Bytes follow the record inside its gzip member.
    #[error("more than one record in a gzip member")]
    TrailingBytes,
}

/// A push parser for exactly one record, fed in pieces (a [`Write`] too, so a gzip
/// decoder can be copied into it). Keeps the head and the first `max_block_bytes` of
/// the block; the rest is counted, not kept.
#[derive(Debug)]
pub struct RecordSink {
    max_block_bytes: usize,
    head_bytes: Vec<u8>,
    head: Option<RecordHead>,
    block: Vec<u8>,
    /// Bytes after the head: block plus the closing blank line, once the head is known.
    rest_expected: u64,
    rest_seen: u64,
    tail: [u8; 4],
    damage: Option<Damage>,
}

impl RecordSink {
    /// A sink keeping up to `max_block_bytes` of the block.
    pub fn new(max_block_bytes: usize) -> Self {
        Self {
            max_block_bytes,
            head_bytes: Vec::new(),
            head: None,
            block: Vec::new(),
            rest_expected: 0,
            rest_seen: 0,
            tail: [0; 4],
            damage: None,
        }
    }

    /// Takes the next bytes of the record. After damage the rest is ignored.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.damage.is_some() {
            return;
        }
        if self.head.is_some() {
            self.take_rest(bytes);
            return;
        }
        let before = self.head_bytes.len();
        let room = MAX_HEAD_BYTES.saturating_sub(before);
        let taken = bytes.get(..room.min(bytes.len())).unwrap_or_default();
        self.head_bytes.extend_from_slice(taken);
        // Parse only when it can say something new: the version line still arriving,
        // a blank line in the new bytes, or the bound reached.
        let search_from = before.saturating_sub(BLANK.len() - 1);
        let has_blank = self
            .head_bytes
            .get(search_from..)
            .is_some_and(|new| memchr::memmem::find(new, BLANK).is_some());
        if !(before < VERSION_LINE_BYTES || has_blank || self.head_bytes.len() >= MAX_HEAD_BYTES) {
            return;
        }
        match RecordHead::parse(&self.head_bytes) {
            Ok(Status::Partial) => {}
            Err(e) => self.damage = Some(Damage::Head(e)),
            Ok(Status::Complete(head)) => {
                let Some(len) = head.content_length() else {
                    self.damage = Some(Damage::NoContentLength);
                    return;
                };
                self.rest_expected = len.saturating_add(BLANK.len() as u64);
                let at = head.len_bytes().min(self.head_bytes.len());
                let after_head = self.head_bytes.split_off(at);
                self.head_bytes = Vec::new();
                self.head = Some(head);
                self.take_rest(&after_head);
                self.take_rest(bytes.get(taken.len()..).unwrap_or_default());
            }
        }
    }

    fn take_rest(&mut self, bytes: &[u8]) {
        let block_len = self.rest_expected.saturating_sub(BLANK.len() as u64);
        let keep_to = block_len.min(self.max_block_bytes as u64);
        if self.rest_seen < keep_to {
            let want = usize::try_from(keep_to - self.rest_seen).unwrap_or(usize::MAX);
            self.block
                .extend_from_slice(bytes.get(..want.min(bytes.len())).unwrap_or(bytes));
        }
        self.rest_seen = self.rest_seen.saturating_add(bytes.len() as u64);
        for &b in bytes.iter().rev().take(4).rev() {
            self.tail.rotate_left(1);
            self.tail[3] = b;
        }
        if self.rest_seen > self.rest_expected {
            self.damage = Some(Damage::TrailingBytes);
        }
    }

    /// Whether everything pushed so far is exactly one whole record.
    pub fn is_complete(&self) -> bool {
        self.damage.is_none()
            && self.head.is_some()
            && self.rest_seen == self.rest_expected
            && self.tail == *b"\r\n\r\n"
    }

    /// The record's head and the block bytes kept.
    ///
    /// # Errors
    /// The [`Damage`] when the bytes pushed are not exactly one whole record.
    pub fn finish(self) -> Result<(RecordHead, Vec<u8>), Damage> {
        if let Some(damage) = self.damage {
            return Err(damage);
        }
        let Some(head) = self.head else {
            return Err(Damage::Truncated);
        };
        if self.rest_seen < self.rest_expected {
            return Err(Damage::Truncated);
        }
        if self.tail != *b"\r\n\r\n" {
            return Err(Damage::NoEnd);
        }
        Ok((head, self.block))
    }
}

impl Write for RecordSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.push(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// How the records of a file are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// One gzip member per record (`.warc.gz`, what trawl writes).
    GzipMembers,
    /// Records one after another, uncompressed (`.warc`).
    Plain,
}

impl Framing {
    /// The framing of a file that starts with `prefix`: gzip's magic or not.
    pub fn detect(prefix: &[u8]) -> Self {
        if prefix.starts_with(&[0x1f, 0x8b]) {
            Self::GzipMembers
        } else {
            Self::Plain
        }
    }
}

/// One record read by [`Records`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Where it starts in the file (its gzip member's start for `.warc.gz`).
    pub offset: u64,
    /// Where it ends: the start of the next one.
    pub end: u64,
    /// Its head.
    pub head: RecordHead,
    /// The start of its block: all of it unless the block is over the reader's
    /// `max_block_bytes` (compare with [`RecordHead::content_length`]).
    pub block: Vec<u8>,
}

/// Why [`Records`] stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The input failed where a record was to start (inside a gzip member, a failing
    /// input reads as a damaged member).
    #[error("cannot read the warc input")]
    Io(#[source] io::Error),
    /// The bytes at `offset` are not a whole record.
    #[error("damaged warc record at byte {offset}")]
    Damaged {
        /// Where the damaged record (or member) starts.
        offset: u64,
        /// What is wrong with it.
        #[source]
        damage: Damage,
    },
}

/// The records of a WARC file, in order, from any `BufRead` (a file, a slice). Stops
/// after the first error: what follows damage is not trusted.
#[derive(Debug)]
pub struct Records<R> {
    input: CountingReader<R>,
    framing: Framing,
    max_block_bytes: usize,
    done: bool,
}

impl<R: BufRead> Records<R> {
    /// Records of `input`, which starts at a record boundary; offsets count from 0.
    pub fn new(input: R, framing: Framing) -> Self {
        Self {
            input: CountingReader {
                inner: input,
                pos: 0,
            },
            framing,
            max_block_bytes: DEFAULT_MAX_BLOCK_BYTES,
            done: false,
        }
    }

    /// Offsets count from `offset`: for an input seeked there in its file.
    #[must_use]
    pub fn starting_at(mut self, offset: u64) -> Self {
        self.input.pos = offset;
        self
    }

    /// Keeps at most `max_block_bytes` of each block from the next record on (0: heads
    /// only, as crash repair reads).
    pub fn set_max_block_bytes(&mut self, max_block_bytes: usize) {
        self.max_block_bytes = max_block_bytes;
    }

    /// Where the next record starts.
    pub fn position(&self) -> u64 {
        self.input.pos
    }

    fn read_gzip(&mut self, offset: u64) -> Result<Record, Damage> {
        let mut sink = RecordSink::new(self.max_block_bytes);
        io::copy(&mut GzDecoder::new(&mut self.input), &mut sink).map_err(|_| Damage::Gzip)?;
        let (head, block) = sink.finish()?;
        Ok(Record {
            offset,
            end: self.input.pos,
            head,
            block,
        })
    }

    fn read_plain(&mut self, offset: u64) -> Result<Result<Record, Damage>, io::Error> {
        let mut sink = RecordSink::new(self.max_block_bytes);
        let mut head = Vec::new();
        while !head.ends_with(BLANK) && head.len() < MAX_HEAD_BYTES {
            let limit = (MAX_HEAD_BYTES - head.len()) as u64;
            if (&mut self.input).take(limit).read_until(b'\n', &mut head)? == 0 {
                break;
            }
        }
        sink.push(&head);
        let rest = match sink.head.as_ref() {
            Some(_) => sink.rest_expected,
            None => return Ok(Err(sink.finish().err().unwrap_or(Damage::Truncated))),
        };
        io::copy(&mut (&mut self.input).take(rest), &mut sink)?;
        Ok(sink.finish().map(|(head, block)| Record {
            offset,
            end: self.input.pos,
            head,
            block,
        }))
    }
}

impl<R: BufRead> Iterator for Records<R> {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let offset = self.input.pos;
        let item = match self.input.fill_buf() {
            Err(e) => Err(ReadError::Io(e)),
            Ok([]) => {
                self.done = true;
                return None;
            }
            Ok(_) => match self.framing {
                Framing::GzipMembers => self
                    .read_gzip(offset)
                    .map_err(|damage| ReadError::Damaged { offset, damage }),
                Framing::Plain => match self.read_plain(offset) {
                    Ok(read) => read.map_err(|damage| ReadError::Damaged { offset, damage }),
                    Err(e) => Err(ReadError::Io(e)),
                },
            },
        };
        self.done = item.is_err();
        Some(item)
    }
}

/// A `BufRead` that counts the bytes consumed from it, so a gzip decoder (which
/// consumes exactly one member) tells where its member ended.
#[derive(Debug)]
struct CountingReader<R> {
    inner: R,
    pos: u64,
}

impl<R: BufRead> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos = self.pos.saturating_add(n as u64);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for CountingReader<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.pos = self.pos.saturating_add(amt as u64);
        self.inner.consume(amt);
    }
}

/// Fuzz entry point (`fuzz/fuzz_targets/warc_reader.rs`, replayed over the committed
/// corpus by `tests/fuzz_warc_reader.rs`): runs the head parser, the one-record sink
/// and the file reader in both framings over `data` and checks their invariants. Must
/// never panic.
pub fn fuzz_read(data: &[u8]) {
    if let Ok(Status::Complete(head)) = RecordHead::parse(data) {
        // A head is a prefix of the input, and parses alone to itself.
        assert!(data.starts_with(head.as_str().as_bytes()));
        assert_eq!(
            RecordHead::parse(head.as_str().as_bytes()),
            Ok(Status::Complete(head.clone()))
        );
        for (name, value) in head.fields() {
            let range = head.field_range(name);
            assert!(range.is_some_and(|r| data.get(r).is_some()));
            assert_eq!(value.trim_matches([' ', '\t']), value);
        }
    }
    // The sink decides the same whatever the pieces.
    let mut whole = RecordSink::new(64);
    whole.push(data);
    let mut pieces = RecordSink::new(64);
    for piece in data.chunks(7) {
        pieces.push(piece);
    }
    assert_eq!(whole.is_complete(), pieces.is_complete());
    assert_eq!(whole.finish(), pieces.finish());
    for framing in [Framing::GzipMembers, Framing::Plain] {
        let mut end = 0;
        let mut count = 0;
        for item in Records::new(data, framing) {
            match item {
                Ok(record) => {
                    assert_eq!(record.offset, end);
                    assert!(record.end > record.offset && record.end <= data.len() as u64);
                    let block_len = record.head.content_length().unwrap_or(0);
                    assert!(record.block.len() as u64 <= block_len);
                    end = record.end;
                    count += 1;
                }
                // A slice never fails to read: only damage stops the reader.
                Err(error) => assert!(
                    matches!(error, ReadError::Damaged { offset, .. } if offset == end),
                    "{error:?} after byte {end}"
                ),
            }
        }
        // The records found stand alone: the input cut after them reads the same.
        let prefix = data
            .get(..usize::try_from(end).unwrap_or(usize::MAX))
            .unwrap_or(data);
        let again: Vec<_> = Records::new(prefix, framing).collect();
        assert_eq!(again.len(), count);
        assert!(again.iter().all(Result::is_ok));
    }
}

#[cfg(test)]
mod tests;
