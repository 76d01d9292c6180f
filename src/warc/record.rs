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
/// borrowed parts (an HTTP head and a body, say) so no copy joins them.
#[derive(Debug, Clone)]
pub struct Record<'a> {
    record_type: RecordType,
    fields: Vec<(&'static str, String)>,
    content_type: Option<String>,
    block: Vec<&'a [u8]>,
    block_digest: BlockDigest,
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
            fields: vec![
                ("WARC-Type", record_type.as_str().to_owned()),
                ("WARC-Record-ID", id.to_string()),
                ("WARC-Date", date.to_string()),
            ],
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
        value: impl Into<String>,
    ) -> Result<Self, FieldValueError> {
        let value = value.into();
        if value.bytes().any(|b| b.is_ascii_control() && b != b'\t') {
            return Err(FieldValueError { name });
        }
        self.fields.push((name, value));
        Ok(self)
    }

    /// Sets `Content-Type`, written just before `Content-Length`.
    ///
    /// # Errors
    /// As [`Record::field`].
    pub fn content_type(mut self, value: &str) -> Result<Self, FieldValueError> {
        if value.bytes().any(|b| b.is_ascii_control()) {
            return Err(FieldValueError {
                name: "Content-Type",
            });
        }
        self.content_type = Some(value.to_owned());
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
        out.extend_from_slice(WARC_VERSION_LINE);
        for (name, value) in &self.fields {
            push_field(&mut out, name, value);
        }
        let digest = match self.block_digest {
            BlockDigest::Absent => None,
            BlockDigest::Compute => Some(self.block_digest()),
            BlockDigest::Known(d) => Some(d),
        };
        if let Some(digest) = digest {
            push_field(&mut out, "WARC-Block-Digest", &digest.to_string());
        }
        if let Some(content_type) = &self.content_type {
            push_field(&mut out, "Content-Type", content_type);
        }
        push_field(&mut out, "Content-Length", &self.block_len().to_string());
        out.extend_from_slice(b"\r\n");
        out
    }

    /// Writes the whole record: header, block, trailing CRLF CRLF.
    ///
    /// # Errors
    /// Whatever the sink returns.
    pub fn write_to<W: Write>(&self, sink: &mut W) -> io::Result<()> {
        sink.write_all(&self.header_bytes())?;
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

fn push_field(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Makes a URL safe for a WARC field or a `warc-fields` line: bytes that no URL may hold
/// raw (controls, space, DEL) are percent-encoded, the rest kept. URLs from the `url`
/// crate never hold these, so this is a no-op on the hot path.
pub fn sanitize_uri(uri: &str) -> std::borrow::Cow<'_, str> {
    if !uri.bytes().any(|b| b <= b' ' || b == 0x7f) {
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
    }
}
