//! One WARC record: named header fields and a block, serialized exactly as the WARC 1.1
//! "file and record model" lays it out:
//!
//! ```text
//! WARC/1.1 CRLF
//! (Name: value CRLF)*     -- WARC-Type first, Content-Length last
//! CRLF
//! block                   -- Content-Length bytes
//! CRLF CRLF
//! ```
//!
//! Sans-IO: a record is built from borrowed parts and written into any `io::Write`
//! (a gzip encoder in practice); it never touches a file itself.

use std::borrow::Cow;
use std::fmt;
use std::io::{self, Write};

use crate::provenance::date::WarcDate;
use crate::provenance::digest::{Digest, DigestHasher};

/// The version line every record starts with.
pub const WARC_VERSION_LINE: &[u8] = b"WARC/1.1\r\n";

/// The two line ends that close every record after its block.
pub const RECORD_TRAILER: &[u8] = b"\r\n\r\n";

/// `WARC-Type` values trawl writes (WARC 1.1, "WARC record types").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecordType {
    /// Describes the crawl and the file; first record of every file.
    Warcinfo,
    /// A full HTTP response as received.
    Response,
    /// The HTTP request as sent.
    Request,
    /// Crawler-side facts about a capture (outlinks, timings).
    Metadata,
    /// A capture whose payload duplicates an earlier one; the block holds headers only.
    Revisit,
    /// A resource fetched without a protocol envelope (e.g. DNS answers, screenshots).
    Resource,
}

impl RecordType {
    /// The `WARC-Type` field value.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Warcinfo => "warcinfo",
            Self::Response => "response",
            Self::Request => "request",
            Self::Metadata => "metadata",
            Self::Revisit => "revisit",
            Self::Resource => "resource",
        }
    }
}

impl fmt::Display for RecordType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `WARC-Record-ID`: a version 4 UUID written as `<urn:uuid:...>` (WARC 1.1 asks for
/// a globally unique URI in angle brackets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RecordId(uuid::Uuid);

impl RecordId {
    /// A fresh random id.
    pub fn new_v4() -> Self {
        Self(uuid::Uuid::new_v4())
    }

    /// An id from a fixed UUID (tests and reproducible output).
    pub const fn from_uuid(uuid: uuid::Uuid) -> Self {
        Self(uuid)
    }

    /// The UUID inside.
    pub const fn uuid(&self) -> uuid::Uuid {
        self.0
    }

    /// Length of the text [`fmt::Display`] writes.
    pub(crate) const ENCODED_LEN: usize = 11 + 36;

    /// The `<urn:uuid:...>` text in `buf`, without an allocation.
    pub(crate) fn encode(self, buf: &mut [u8; Self::ENCODED_LEN]) -> &[u8] {
        let (prefix, rest) = buf.split_at_mut(10);
        prefix.copy_from_slice(b"<urn:uuid:");
        let (uuid, close) = rest.split_at_mut(36);
        self.0.hyphenated().encode_lower(uuid);
        close.copy_from_slice(b">");
        buf
    }
}

impl fmt::Display for RecordId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<urn:uuid:{}>", self.0.hyphenated())
    }
}

/// Reads back what [`fmt::Display`] writes (`<urn:uuid:...>`), e.g. a record id kept
/// in the re-crawl index for `WARC-Refers-To`.
impl std::str::FromStr for RecordId {
    type Err = uuid::Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let inner = s
            .strip_prefix("<urn:uuid:")
            .and_then(|r| r.strip_suffix('>'))
            .unwrap_or(s);
        uuid::Uuid::parse_str(inner).map(Self)
    }
}

/// A record field value that cannot be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("warc field {name} has a line break or control byte in its value")]
pub struct FieldValueError {
    /// The field whose value was refused.
    pub name: &'static str,
}

/// A WARC record ready to serialize: header fields in order, and the block as a list of
/// borrowed parts (an HTTP head and a body, say) so no copy joins them. Field values are
/// borrowed or kept as ids and digests, and formatted only as the head is written.
#[derive(Debug, Clone)]
pub struct Record<'a> {
    record_type: RecordType,
    id: RecordId,
    date: WarcDate,
    fields: Vec<(&'static str, Value<'a>)>,
    content_type: Option<Cow<'a, str>>,
    block: Vec<&'a [u8]>,
    block_digest: BlockDigest,
}

/// A header field value, formatted when the head is written.
#[derive(Debug, Clone)]
enum Value<'a> {
    Text(Cow<'a, str>),
    Id(RecordId),
    Digest(Digest),
    Date(WarcDate),
}

/// Whether a record carries `WARC-Block-Digest`, and whether its value is known yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockDigest {
    Absent,
    /// Computed over the parts at serialization.
    Compute,
    /// Computed by the caller already (with the payload digest, in one pass over the
    /// body: [`crate::provenance::digest::digest_pair`]).
    Known(Digest),
}

impl<'a> Record<'a> {
    /// A record with the three mandatory fields besides `Content-Length`:
    /// `WARC-Type`, `WARC-Record-ID`, `WARC-Date`.
    pub fn new(record_type: RecordType, id: RecordId, date: WarcDate) -> Self {
        Self {
            record_type,
            id,
            date,
            fields: Vec::with_capacity(8),
            content_type: None,
            block: Vec::new(),
            block_digest: BlockDigest::Absent,
        }
    }

    /// The record's `WARC-Type`.
    pub fn record_type(&self) -> RecordType {
        self.record_type
    }

    /// Adds a header field after the ones already there.
    ///
    /// # Errors
    /// [`FieldValueError`] when the value holds CR, LF or another control byte, which
    /// would break the record's framing (a header injection).
    pub fn field(
        mut self,
        name: &'static str,
        value: impl Into<Cow<'a, str>>,
    ) -> Result<Self, FieldValueError> {
        let value = value.into();
        if value.bytes().any(|b| b.is_ascii_control() && b != b'\t') {
            return Err(FieldValueError { name });
        }
        self.fields.push((name, Value::Text(value)));
        Ok(self)
    }

    /// Adds a field whose value is a record id (`WARC-Concurrent-To`, ...): nothing to
    /// check, formatted when written.
    pub(crate) fn id_field(mut self, name: &'static str, id: RecordId) -> Self {
        self.fields.push((name, Value::Id(id)));
        self
    }

    /// Adds a field whose value is a digest (`WARC-Payload-Digest`).
    pub(crate) fn digest_field(mut self, name: &'static str, digest: Digest) -> Self {
        self.fields.push((name, Value::Digest(digest)));
        self
    }

    /// Adds a field whose value is a date (`WARC-Refers-To-Date`).
    pub(crate) fn date_field(mut self, name: &'static str, date: WarcDate) -> Self {
        self.fields.push((name, Value::Date(date)));
        self
    }

    /// Sets `Content-Type`, written just before `Content-Length`.
    ///
    /// # Errors
    /// As [`Record::field`].
    pub fn content_type(mut self, value: impl Into<Cow<'a, str>>) -> Result<Self, FieldValueError> {
        let value = value.into();
        if value.bytes().any(|b| b.is_ascii_control()) {
            return Err(FieldValueError {
                name: "Content-Type",
            });
        }
        self.content_type = Some(value);
        Ok(self)
    }

    /// Appends a part to the block.
    pub fn block_part(mut self, part: &'a [u8]) -> Self {
        if !part.is_empty() {
            self.block.push(part);
        }
        self
    }

    /// Asks for a `WARC-Block-Digest` over the whole block, computed at serialization.
    pub fn with_block_digest(mut self) -> Self {
        self.block_digest = BlockDigest::Compute;
        self
    }

    /// Carries `WARC-Block-Digest: digest`, which the caller computed over exactly the
    /// block's parts (tests check it against [`Record::block_digest`]).
    pub fn with_known_block_digest(mut self, digest: Digest) -> Self {
        self.block_digest = BlockDigest::Known(digest);
        self
    }

    /// The block length, the `Content-Length` value.
    pub fn block_len(&self) -> u64 {
        self.block.iter().map(|p| p.len() as u64).sum()
    }

    /// The SHA-1 of the block.
    pub fn block_digest(&self) -> Digest {
        let mut hasher = DigestHasher::new();
        for part in &self.block {
            hasher.update(part);
        }
        hasher.finish()
    }

    /// The header text up to and including the blank line that ends it.
    pub fn header_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(512);
        // Writing into a Vec cannot fail.
        let _ = self.write_head(&mut out);
        out
    }

    /// Writes the header text through a buffer on the stack: one write of the sink for
    /// a usual head, and no allocation.
    fn write_head<W: Write>(&self, sink: &mut W) -> io::Result<()> {
        let mut head = HeadWriter::new(sink);
        head.push(WARC_VERSION_LINE)?;
        head.field("WARC-Type", self.record_type.as_str().as_bytes())?;
        head.field(
            "WARC-Record-ID",
            self.id.encode(&mut [0; RecordId::ENCODED_LEN]),
        )?;
        head.field("WARC-Date", format_date(self.date, &mut [0; 32]))?;
        for (name, value) in &self.fields {
            match value {
                Value::Text(text) => head.field(name, text.as_bytes())?,
                Value::Id(id) => head.field(name, id.encode(&mut [0; RecordId::ENCODED_LEN]))?,
                Value::Digest(d) => head.field(name, format_digest(*d, &mut [0; 40]))?,
                Value::Date(date) => head.field(name, format_date(*date, &mut [0; 32]))?,
            }
        }
        let digest = match self.block_digest {
            BlockDigest::Absent => None,
            BlockDigest::Compute => Some(self.block_digest()),
            BlockDigest::Known(d) => Some(d),
        };
        if let Some(digest) = digest {
            head.field("WARC-Block-Digest", format_digest(digest, &mut [0; 40]))?;
        }
        if let Some(content_type) = &self.content_type {
            head.field("Content-Type", content_type.as_bytes())?;
        }
        let mut len = [0u8; 20];
        head.field("Content-Length", format_u64(self.block_len(), &mut len))?;
        head.push(b"\r\n")?;
        head.flush()
    }

    /// Writes the whole record: header, block, trailing CRLF CRLF.
    ///
    /// # Errors
    /// Whatever the sink returns.
    pub fn write_to<W: Write>(&self, sink: &mut W) -> io::Result<()> {
        self.write_head(sink)?;
        for part in &self.block {
            sink.write_all(part)?;
        }
        sink.write_all(RECORD_TRAILER)
    }

    /// The serialized record in one buffer (tests, small records).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        // Writing into a Vec cannot fail.
        let _ = self.write_to(&mut out);
        out
    }
}

/// Gathers a record head in a stack buffer and writes it to the sink in one piece
/// (pieces that do not fit go on their own).
struct HeadWriter<'w, W: Write> {
    sink: &'w mut W,
    buf: [u8; 1024],
    len: usize,
}

impl<'w, W: Write> HeadWriter<'w, W> {
    fn new(sink: &'w mut W) -> Self {
        Self {
            sink,
            buf: [0; 1024],
            len: 0,
        }
    }

    fn push(&mut self, bytes: &[u8]) -> io::Result<()> {
        let end = self.len + bytes.len();
        if let Some(slot) = self.buf.get_mut(self.len..end) {
            slot.copy_from_slice(bytes);
            self.len = end;
            return Ok(());
        }
        self.flush()?;
        if bytes.len() >= self.buf.len() {
            return self.sink.write_all(bytes);
        }
        self.push(bytes)
    }

    fn field(&mut self, name: &str, value: &[u8]) -> io::Result<()> {
        self.push(name.as_bytes())?;
        self.push(b": ")?;
        self.push(value)?;
        self.push(b"\r\n")
    }

    fn flush(&mut self) -> io::Result<()> {
        let gathered = self.buf.get(..self.len).unwrap_or_default();
        self.len = 0;
        self.sink.write_all(gathered)
    }
}

/// `WARC-Date` text (27 bytes) formatted into `buf`, without an allocation.
fn format_date(date: WarcDate, buf: &mut [u8; 32]) -> &[u8] {
    format_into(buf, format_args!("{date}"))
}

/// `sha1:` + 32 base32 characters, into `buf`.
fn format_digest(digest: Digest, buf: &mut [u8; 40]) -> &[u8] {
    let label = crate::provenance::digest::SHA1_LABEL.as_bytes();
    let (head, tail) = buf.split_at_mut(label.len() + 1);
    if let Some((colon, label_slot)) = head.split_last_mut() {
        label_slot.copy_from_slice(label);
        *colon = b':';
    }
    let encoded = data_encoding::BASE32.encode_len(digest.as_bytes().len());
    if let Some(out) = tail.get_mut(..encoded) {
        data_encoding::BASE32.encode_mut(digest.as_bytes(), out);
    }
    buf.get(..label.len() + 1 + encoded).unwrap_or_default()
}

fn format_u64(value: u64, buf: &mut [u8; 20]) -> &[u8] {
    format_into(buf, format_args!("{value}"))
}

/// Formats into `buf` (large enough for what callers format: checked by tests).
fn format_into<'b>(buf: &'b mut [u8], args: fmt::Arguments<'_>) -> &'b [u8] {
    let capacity = buf.len();
    let mut rest: &mut [u8] = &mut *buf;
    let _ = rest.write_fmt(args);
    let used = capacity - rest.len();
    buf.get(..used).unwrap_or_default()
}

/// Makes a URL safe for a WARC field or a `warc-fields` line: bytes that no URL may hold
/// raw (controls, space, DEL) are percent-encoded, the rest kept. URLs from the `url`
/// crate never hold these, so this is a check and no copy on the hot path. The result
/// holds no control byte.
pub fn sanitize_uri(uri: &str) -> std::borrow::Cow<'_, str> {
    if uri_is_clean(uri.as_bytes()) {
        return std::borrow::Cow::Borrowed(uri);
    }
    let mut out = String::with_capacity(uri.len() + 8);
    for ch in uri.chars() {
        if ch <= ' ' || ch == '\u{7f}' {
            out.push_str(&format!("%{:02X}", ch as u32));
        } else {
            out.push(ch);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// No byte that [`sanitize_uri`] encodes. Checked 16 bytes at a time without a branch
/// inside (the compiler makes that a vector compare): a page's dozens of outlinks pass
/// through here.
fn uri_is_clean(uri: &[u8]) -> bool {
    let forbidden = |b: u8| (b <= b' ') | (b == 0x7f);
    let mut chunks = uri.chunks_exact(16);
    for chunk in &mut chunks {
        if chunk.iter().fold(false, |bad, &b| bad | forbidden(b)) {
            return false;
        }
    }
    !chunks.remainder().iter().any(|&b| forbidden(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed_id() -> RecordId {
        RecordId::from_uuid(uuid::Uuid::from_u128(
            0x0123_4567_89ab_4cde_8f01_2345_6789_abcd,
        ))
    }

    #[test]
    fn exact_bytes_of_a_small_resource_record() {
        let date = WarcDate::from_unix_micros(1_790_075_101_000_000);
        let record = Record::new(RecordType::Resource, fixed_id(), date)
            .field("WARC-Target-URI", "http://example.com/a")
            .unwrap()
            .content_type("text/plain")
            .unwrap()
            .block_part(b"hello ")
            .block_part(b"world")
            .with_block_digest();
        let expected = format!(
            "WARC/1.1\r\n\
             WARC-Type: resource\r\n\
             WARC-Record-ID: <urn:uuid:01234567-89ab-4cde-8f01-23456789abcd>\r\n\
             WARC-Date: 2026-09-22T11:05:01.000000Z\r\n\
             WARC-Target-URI: http://example.com/a\r\n\
             WARC-Block-Digest: {}\r\n\
             Content-Type: text/plain\r\n\
             Content-Length: 11\r\n\
             \r\n\
             hello world\r\n\r\n",
            Digest::of(b"hello world")
        );
        assert_eq!(String::from_utf8(record.to_bytes()).unwrap(), expected);
        assert_eq!(
            Digest::of(b"hello world").to_string(),
            "sha1:FKXGYNOJJ7H3IFO35FPUBC445EPOQRXN"
        );
    }

    #[test]
    fn empty_block_has_zero_length() {
        let record = Record::new(
            RecordType::Metadata,
            fixed_id(),
            WarcDate::from_unix_micros(0),
        )
        .block_part(b"");
        let bytes = record.to_bytes();
        let text = String::from_utf8(bytes).unwrap();
        assert!(
            text.ends_with("Content-Length: 0\r\n\r\n\r\n\r\n"),
            "{text:?}"
        );
    }

    #[test]
    fn refuses_line_breaks_in_fields() {
        let record = Record::new(
            RecordType::Request,
            fixed_id(),
            WarcDate::from_unix_micros(0),
        );
        let err = record
            .clone()
            .field("WARC-Target-URI", "http://a/\r\nX-Evil: 1")
            .unwrap_err();
        assert_eq!(err.name, "WARC-Target-URI");
        assert!(record.clone().content_type("text/html\n").is_err());
        assert!(record.field("WARC-Target-URI", "http://a/\tb").is_ok());
    }

    #[test]
    fn sanitize_encodes_only_forbidden_bytes() {
        assert!(matches!(
            sanitize_uri("http://a/b?c=d"),
            std::borrow::Cow::Borrowed("http://a/b?c=d")
        ));
        assert_eq!(
            sanitize_uri("http://a/b c\r\n\u{7f}é"),
            "http://a/b%20c%0D%0A%7Fé"
        );
        // Every position of a long URL, in the 16-byte chunks and in the rest.
        let clean = "http://a.test/".to_owned() + &"é-x".repeat(12);
        assert!(matches!(
            sanitize_uri(&clean),
            std::borrow::Cow::Borrowed(_)
        ));
        for at in 0..clean.len() {
            for bad in [b' ', b'\n', 0x7f] {
                let mut uri = clean.clone().into_bytes();
                if !clean.is_char_boundary(at) || !clean.is_char_boundary(at + 1) {
                    continue;
                }
                uri[at] = bad;
                let uri = String::from_utf8(uri).unwrap();
                assert!(
                    matches!(sanitize_uri(&uri), std::borrow::Cow::Owned(_)),
                    "{at}"
                );
            }
        }
    }

    /// Ids, digests and dates formatted in place read as their `Display` text, and a
    /// head longer than the stack buffer (a long URL) comes out whole and in order.
    #[test]
    fn typed_values_and_long_heads_write_as_text() {
        let id = RecordId::new_v4();
        assert_eq!(
            id.encode(&mut [0; RecordId::ENCODED_LEN]),
            id.to_string().as_bytes()
        );
        let digest = Digest::of(b"abc");
        assert_eq!(
            format_digest(digest, &mut [0; 40]),
            digest.to_string().as_bytes()
        );
        let date = WarcDate::from_unix_micros(4_102_444_799_999_999);
        assert_eq!(format_date(date, &mut [0; 32]), date.to_string().as_bytes());
        assert_eq!(format_u64(u64::MAX, &mut [0; 20]), b"18446744073709551615");
        for uri_len in [10, 900, 1020, 5000] {
            let uri = format!("http://a/{}", "x".repeat(uri_len));
            let record = Record::new(RecordType::Response, id, date)
                .field("WARC-Target-URI", uri.as_str())
                .unwrap()
                .id_field("WARC-Concurrent-To", id)
                .digest_field("WARC-Payload-Digest", digest)
                .date_field("WARC-Refers-To-Date", date)
                .block_part(b"block");
            let want = format!(
                "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: {id}\r\n\
                 WARC-Date: {date}\r\nWARC-Target-URI: {uri}\r\n\
                 WARC-Concurrent-To: {id}\r\nWARC-Payload-Digest: {digest}\r\n\
                 WARC-Refers-To-Date: {date}\r\nContent-Length: 5\r\n\r\nblock\r\n\r\n"
            );
            assert_eq!(String::from_utf8(record.to_bytes()).unwrap(), want);
        }
    }
}
