//! What the engine hands the writer for one fetch (a [`Capture`]), and how it becomes
//! WARC records: `request`, then `response` (or `revisit`), then `metadata`, all tied to
//! the response by `WARC-Concurrent-To` and to their file's `warcinfo` by
//! `WARC-Warcinfo-ID`. Also the `warcinfo` record itself.
//!
//! Sans-IO: records are handed to a callback; the file writer compresses them.

use std::borrow::Cow;
use std::io;
use std::net::IpAddr;
use std::ops::Range;

use super::record::{sanitize_uri, FieldValueError, Record, RecordId, RecordType};
use crate::fetch::{FailReason, FetchOutcome};
use crate::http::{ResponseHead, SharedBytes};
use crate::provenance::date::WarcDate;
use crate::provenance::digest::{Digest, DigestHasher};
use crate::provenance::{FetchTimings, Hop, Truncation};

/// `Content-Type` of `request` records.
pub const HTTP_REQUEST_TYPE: &str = "application/http;msgtype=request";
/// `Content-Type` of `response` and `revisit` records.
pub const HTTP_RESPONSE_TYPE: &str = "application/http;msgtype=response";
/// `Content-Type` of `warcinfo` and `metadata` records (registered by WARC 1.1).
pub const WARC_FIELDS_TYPE: &str = "application/warc-fields";
/// The revisit profile trawl writes (WARC 1.1, "Profile: Identical Payload Digest").
pub const IDENTICAL_PAYLOAD_PROFILE: &str =
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";
/// The revisit profile of a `304 Not Modified` answer to a conditional request.
pub const SERVER_NOT_MODIFIED_PROFILE: &str =
    "http://netpreserve.org/warc/1.1/revisit/server-not-modified";
/// The `conformsTo` value of the `warcinfo` record.
pub const WARC_1_1_SPEC_URL: &str =
    "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/";

/// The field name a `Transfer-Encoding` field is stored under, since the stored body
/// is the payload with the transfer coding removed (see `docs/warc.md`, "Payload digest
/// and transfer coding").
pub const RENAMED_TRANSFER_ENCODING: &[u8] = b"X-Trawl-Transfer-Encoding";

/// An HTTP response as a WARC `response` record stores it, taken from the fetcher's
/// typed values: nothing here parses the head or de-chunks the body again.
///
/// How codings are stored (WARC 1.1, and what trawl has always written): the body is
/// the *payload*, the message body with its transfer coding (chunked) removed and its
/// content coding (gzip, br) kept, and `Transfer-Encoding` fields are renamed to
/// [`RENAMED_TRANSFER_ENCODING`], so the stored message reads as a body delimited by
/// the end of the record. The payload digest then covers the entity body without
/// transfer coding, as WARC 1.1 prescribes, and is also what warcio, pywb and Heritrix
/// compute over the block after the head.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpResponse {
    /// Status line, fields and the empty line, as received ([`ResponseHead::raw`]).
    pub head: SharedBytes,
    /// The status code.
    pub status: u16,
    /// Where the names of the `Transfer-Encoding` fields are in `head` (recorded by the
    /// parser): the stored head renames them.
    pub transfer_encoding_names: Vec<Range<usize>>,
    /// The body has a content coding other than identity: compressed data already,
    /// which the writer stores at gzip level 0.
    pub content_coded: bool,
    /// The payload: the body with the transfer coding removed, content coding kept.
    pub payload: SharedBytes,
}

impl HttpResponse {
    /// The response with head `head` and payload `payload` (shared, not copied).
    pub fn new(head: &ResponseHead, payload: SharedBytes) -> Self {
        Self {
            head: head.raw.clone(),
            status: head.status,
            transfer_encoding_names: head.field_name_ranges("transfer-encoding").collect(),
            content_coded: head.has_content_coding(),
            payload,
        }
    }

    /// The head as stored: the received bytes, with every `Transfer-Encoding` field
    /// name replaced by [`RENAMED_TRANSFER_ENCODING`] (values and everything else
    /// untouched). Borrowed when there is nothing to rename.
    pub fn stored_head(&self) -> Cow<'_, [u8]> {
        if self.transfer_encoding_names.is_empty() {
            return Cow::Borrowed(&self.head);
        }
        let renames = self.transfer_encoding_names.len();
        let mut out =
            Vec::with_capacity(self.head.len() + renames * RENAMED_TRANSFER_ENCODING.len());
        let mut at = 0usize;
        for name in &self.transfer_encoding_names {
            out.extend_from_slice(self.head.get(at..name.start).unwrap_or_default());
            out.extend_from_slice(RENAMED_TRANSFER_ENCODING);
            at = name.end.max(at);
        }
        out.extend_from_slice(self.head.get(at..).unwrap_or_default());
        Cow::Owned(out)
    }
}

/// The earlier capture a duplicate payload refers to (for a `revisit` record).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevisitOf {
    /// The payload digest shared by both captures.
    pub payload_digest: Digest,
    /// `WARC-Refers-To-Target-URI`: the URL of the original capture.
    pub target_uri: String,
    /// `WARC-Refers-To-Date`: the `WARC-Date` of the original capture.
    pub date: WarcDate,
    /// `WARC-Refers-To`: the original response record's id, when known.
    pub record_id: Option<RecordId>,
    /// Why the payload is not stored again (`WARC-Profile`).
    pub profile: RevisitProfile,
}

/// The WARC 1.1 revisit profiles trawl writes (§6.7).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RevisitProfile {
    /// §6.7.2: the payload digest equals an earlier capture's. The block is the
    /// response head only, so the record says `WARC-Truncated: length`.
    #[default]
    IdenticalPayload,
    /// §6.7.3: the server answered `304 Not Modified` to a conditional request built
    /// from an earlier capture's validators. The block is the whole 304 response.
    ServerNotModified,
}

impl RevisitProfile {
    /// The `WARC-Profile` URI.
    pub const fn uri(self) -> &'static str {
        match self {
            Self::IdenticalPayload => IDENTICAL_PAYLOAD_PROFILE,
            Self::ServerNotModified => SERVER_NOT_MODIFIED_PROFILE,
        }
    }
}

/// A link found in the response, for the `metadata` record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outlink {
    /// The absolute URL.
    pub url: String,
    /// How it was found (`L` link, `E` embed, `R` redirect...).
    pub hop: Hop,
}

/// Crawler-side facts about a capture, written as a `metadata` record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CaptureMetadata {
    /// The URL whose page linked here, if any.
    pub via: Option<String>,
    /// The hop codes from the seed, Heritrix style (`LLE`).
    pub hops_path: String,
    /// Links found in the response.
    pub outlinks: Vec<Outlink>,
    /// The page's links are not known: a re-crawl's `304` whose links could not be
    /// read back from the earlier capture. Written as `outlinksUnknown:
    /// previous-links-error`, so a later re-crawl reports the loss again instead of
    /// finding a page without links.
    pub outlinks_unknown: bool,
    /// How long each step of the fetch took.
    pub timings: FetchTimings,
}

/// One fetch, as the engine submits it to the writer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    /// The URL fetched (`WARC-Target-URI`).
    pub target_uri: String,
    /// When the request was sent (`WARC-Date` of every record of the capture).
    pub date: WarcDate,
    /// The server's address (`WARC-IP-Address`).
    pub ip: Option<IpAddr>,
    /// The request bytes exactly as sent; empty means no `request` record.
    pub request: SharedBytes,
    /// The response as received.
    pub response: HttpResponse,
    /// Why the body is incomplete, if it is (`WARC-Truncated`).
    pub truncated: Option<Truncation>,
    /// Set when the payload duplicates an earlier capture: a `revisit` record with the
    /// response head only is written instead of a `response`.
    pub revisit: Option<RevisitOf>,
    /// Outlinks and timings; `None` means no `metadata` record.
    pub metadata: Option<CaptureMetadata>,
}

impl Capture {
    /// The capture of a fetch, from the fetcher's typed values and sharing its buffers
    /// (request bytes, head bytes, payload): no byte of the body is copied. `None` when
    /// no response head arrived (nothing to archive). `metadata` is left for the caller.
    ///
    /// `WARC-Truncated` ([`truncation_of`]) says why a payload is not whole.
    pub fn from_outcome(outcome: &FetchOutcome, date: WarcDate) -> Option<Self> {
        let head = outcome.head.as_ref()?;
        let truncated = truncation_of(outcome);
        Some(Self {
            target_uri: outcome.url.to_string(),
            date,
            ip: outcome.peer.map(|p| p.ip()),
            request: outcome.request.clone(),
            response: HttpResponse::new(head, outcome.payload.clone().unwrap_or_default()),
            truncated,
            revisit: None,
            metadata: None,
        })
    }
}

/// Why the payload of `outcome` is not whole, as WARC 1.1's `WARC-Truncated` reasons:
/// `length` when a cap cut the body; `time` when a deadline ended it; `disconnect` when
/// the connection broke off before the framing's end (closed early, reset, a body short
/// of its Content-Length or last chunk); `unspecified` for any other body that did not
/// end where its framing said (a malformed chunk, an unsupported content coding), or a
/// payload that was not kept. `None` for a whole payload.
pub fn truncation_of(outcome: &FetchOutcome) -> Option<Truncation> {
    use crate::http::HttpError;
    if outcome.body_truncated || matches!(outcome.error, Some(FailReason::TooLarge)) {
        return Some(Truncation::Length);
    }
    if outcome.body_complete && outcome.payload.is_some() {
        return None;
    }
    Some(match &outcome.error {
        Some(FailReason::Timeout(_)) => Truncation::Time,
        Some(
            FailReason::ClosedEarly
            | FailReason::Reset
            | FailReason::Io(_)
            | FailReason::Protocol(HttpError::IncompleteBody | HttpError::IncompleteChunkedBody),
        ) => Truncation::Disconnect,
        _ => Truncation::Unspecified,
    })
}

/// What the writer did with a capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureWritten {
    /// The `response` (or `revisit`) record's id.
    pub response_id: RecordId,
    /// The payload digest, as written in `WARC-Payload-Digest`.
    pub payload_digest: Digest,
    /// Final name of the file holding the records.
    pub file_name: String,
    /// Offset of the first record of the capture in that file (compressed bytes).
    pub offset: u64,
    /// Offset of the `response` or `revisit` record, the one CDX indexes and the crawl
    /// log point at.
    pub response_offset: u64,
    /// Compressed bytes the capture took.
    pub bytes: u64,
    /// Whether the response was written as a `revisit` record (its payload duplicates
    /// an earlier capture's).
    pub revisit: bool,
}

/// The fields of a `warcinfo` record (WARC 1.1's `software`, `robots`, `operator`,
/// `hostname`, `http-header-user-agent`, `http-header-from`, plus `format` and
/// `conformsTo` from its examples and `isPartOf`/`description` from Dublin Core).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarcinfoFields {
    /// Name and version of the crawler.
    pub software: String,
    /// robots.txt policy (`obey`, or a description of the policy).
    pub robots: String,
    /// Who runs the crawl (contact).
    pub operator: Option<String>,
    /// The `User-Agent` sent.
    pub user_agent: Option<String>,
    /// The `From` header sent.
    pub from: Option<String>,
    /// Host name of the crawling machine.
    pub hostname: Option<String>,
    /// Name of the crawl or collection this file belongs to.
    pub is_part_of: Option<String>,
    /// Free text about the crawl.
    pub description: Option<String>,
}

impl Default for WarcinfoFields {
    fn default() -> Self {
        Self {
            software: crate::default_user_agent(),
            robots: "obey".to_owned(),
            operator: None,
            user_agent: Some(crate::default_user_agent()),
            from: None,
            hostname: None,
            is_part_of: None,
            description: None,
        }
    }
}

impl WarcinfoFields {
    /// The `application/warc-fields` block.
    pub fn block(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(512);
        push_warc_field(&mut out, "software", &self.software);
        if let Some(hostname) = &self.hostname {
            push_warc_field(&mut out, "hostname", hostname);
        }
        push_warc_field(&mut out, "format", "WARC File Format 1.1");
        push_warc_field(&mut out, "conformsTo", WARC_1_1_SPEC_URL);
        push_warc_field(&mut out, "robots", &self.robots);
        let optional = [
            ("operator", &self.operator),
            ("http-header-user-agent", &self.user_agent),
            ("http-header-from", &self.from),
            ("isPartOf", &self.is_part_of),
            ("description", &self.description),
        ];
        for (name, value) in optional {
            if let Some(value) = value {
                push_warc_field(&mut out, name, value);
            }
        }
        out
    }
}

/// Appends `name: value CRLF`, replacing line breaks and other controls in the value by
/// spaces (a `warc-fields` value is one line; an operator string is not worth an error).
fn push_warc_field(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    push_field_value(out, value);
    out.extend_from_slice(b"\r\n");
}

/// Appends a `warc-fields` value with controls replaced by spaces; values without any
/// (nearly all) are copied in one piece.
fn push_field_value(out: &mut Vec<u8>, value: &str) {
    if value.bytes().any(|b| b.is_ascii_control()) {
        out.extend(
            value
                .bytes()
                .map(|b| if b.is_ascii_control() { b' ' } else { b }),
        );
    } else {
        out.extend_from_slice(value.as_bytes());
    }
}

/// Builds the `warcinfo` record that opens the file `file_name`.
///
/// # Errors
/// [`FieldValueError`] if the file name holds a control byte.
pub fn warcinfo_record<'a>(
    id: RecordId,
    date: WarcDate,
    file_name: &str,
    block: &'a [u8],
) -> Result<Record<'a>, FieldValueError> {
    Ok(Record::new(RecordType::Warcinfo, id, date)
        .field("WARC-Filename", file_name.to_owned())?
        .content_type(WARC_FIELDS_TYPE)?
        .block_part(block)
        .with_block_digest())
}

/// The ids of the records of one capture, drawn before serialization so that records
/// can point at each other whatever order they are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaptureIds {
    /// The `request` record.
    pub request: RecordId,
    /// The `response` or `revisit` record.
    pub response: RecordId,
    /// The `metadata` record.
    pub metadata: RecordId,
}

impl CaptureIds {
    /// Three fresh random ids.
    pub fn new_v4() -> Self {
        Self {
            request: RecordId::new_v4(),
            response: RecordId::new_v4(),
            metadata: RecordId::new_v4(),
        }
    }
}

/// The response block's head and body as stored, and its two digests, computed in one
/// pass over the body ([`crate::provenance::digest::digest_pair`]).
pub(super) struct StoredResponse<'c> {
    head: Cow<'c, [u8]>,
    body: &'c [u8],
    block_digest: Digest,
    payload_digest: Digest,
}

impl<'c> StoredResponse<'c> {
    pub(super) fn new(response: &'c HttpResponse) -> Self {
        let head = response.stored_head();
        let (block_digest, payload_digest) =
            crate::provenance::digest::digest_pair(&head, &response.payload);
        Self {
            head,
            body: &response.payload,
            block_digest,
            payload_digest,
        }
    }

    /// A response already prepared once: `head` as stored, `body` the payload, and
    /// the digests computed then (a response shipped uncompressed to the writer,
    /// `super::compressed`).
    pub(super) fn from_parts(
        head: &'c [u8],
        body: &'c [u8],
        block_digest: Digest,
        payload_digest: Digest,
    ) -> Self {
        Self {
            head: Cow::Borrowed(head),
            body,
            block_digest,
            payload_digest,
        }
    }

    /// The block digest (over the stored head and the payload).
    pub(super) fn block_digest(&self) -> Digest {
        self.block_digest
    }

    /// The payload digest (over the body without transfer coding).
    pub(super) fn payload_digest(&self) -> Digest {
        self.payload_digest
    }

    /// Bytes of payload (the body without transfer coding).
    pub(super) fn payload_len(&self) -> u64 {
        self.body.len() as u64
    }

    /// The head as it will be stored.
    pub(super) fn head(&self) -> &[u8] {
        &self.head
    }

    /// The stored head as a shared buffer: `response`'s own when nothing was renamed.
    pub(super) fn into_head(self, response: &HttpResponse) -> SharedBytes {
        match self.head {
            Cow::Borrowed(_) => response.head.clone(),
            Cow::Owned(head) => head.into(),
        }
    }
}

/// Serializes a capture's records in order (`request`, `response` or `revisit`,
/// `metadata`), handing each to `emit`. Returns the payload digest written.
///
/// # Errors
/// `InvalidInput` for a field value that cannot be written (see [`FieldValueError`]),
/// or whatever `emit` returns.
pub fn encode_capture(
    capture: &Capture,
    ids: CaptureIds,
    warcinfo_id: RecordId,
    emit: impl FnMut(&Record<'_>) -> io::Result<()>,
) -> io::Result<Digest> {
    let stored = StoredResponse::new(&capture.response);
    encode_stored(
        capture,
        &stored,
        capture.revisit.as_ref(),
        ids,
        warcinfo_id,
        emit,
    )
}

/// [`encode_capture`] with the response already prepared (its payload digest known)
/// and the revisit decision made by the caller (the writer's revisit index).
pub(super) fn encode_stored(
    capture: &Capture,
    stored: &StoredResponse<'_>,
    revisit: Option<&RevisitOf>,
    ids: CaptureIds,
    warcinfo_id: RecordId,
    mut emit: impl FnMut(&Record<'_>) -> io::Result<()>,
) -> io::Result<Digest> {
    let envelope = Envelope::new(capture, ids, warcinfo_id);
    if !capture.request.is_empty() {
        emit(&envelope.request_record(&capture.request)?)?;
    }
    let payload_digest = match revisit {
        Some(revisit) => {
            emit(&envelope.revisit_record(&stored.head, revisit)?)?;
            revisit.payload_digest
        }
        None => {
            emit(&envelope.response_record(stored, capture.truncated)?)?;
            stored.payload_digest
        }
    };
    if let Some(metadata) = &capture.metadata {
        let block = metadata_block(metadata);
        emit(&envelope.metadata_record(&block)?)?;
    }
    Ok(payload_digest)
}

/// The fields every record of a capture shares, formatted once: what a `revisit`
/// record needs besides the head when the writer decides on it after the capture's
/// other records were compressed elsewhere (`super::compressed`).
#[derive(Debug, Clone)]
pub(super) struct Envelope<'c> {
    uri: Cow<'c, str>,
    date: WarcDate,
    warcinfo: RecordId,
    ip: Option<IpText>,
    ids: CaptureIds,
    has_request: bool,
}

/// An IP address as the text of `WARC-IP-Address`, formatted once per capture into a
/// buffer of its own (no allocation).
#[derive(Debug, Clone, Copy)]
struct IpText {
    buf: [u8; 48],
    len: usize,
}

impl IpText {
    fn new(ip: IpAddr) -> Self {
        let mut buf = [0u8; 48];
        let mut rest: &mut [u8] = &mut buf;
        // An IPv6 address is at most 45 characters: the buffer always holds it.
        let _ = io::Write::write_fmt(&mut rest, format_args!("{ip}"));
        let len = 48 - rest.len();
        Self { buf, len }
    }

    fn as_str(&self) -> &str {
        // Written from `Display`: UTF-8 (ASCII) always.
        self.buf
            .get(..self.len)
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or_default()
    }
}

impl<'c> Envelope<'c> {
    pub(super) fn new(capture: &'c Capture, ids: CaptureIds, warcinfo_id: RecordId) -> Self {
        Self::from_parts(
            &capture.target_uri,
            capture.date,
            capture.ip,
            !capture.request.is_empty(),
            ids,
            warcinfo_id,
        )
    }

    pub(super) fn from_parts(
        target_uri: &'c str,
        date: WarcDate,
        ip: Option<IpAddr>,
        has_request: bool,
        ids: CaptureIds,
        warcinfo_id: RecordId,
    ) -> Self {
        Self {
            uri: sanitize_uri(target_uri),
            date,
            warcinfo: warcinfo_id,
            ip: ip.map(IpText::new),
            ids,
            has_request,
        }
    }

    fn common(&self, record_type: RecordType, id: RecordId) -> Result<Record<'_>, FieldValueError> {
        let mut record = Record::new(record_type, id, self.date)
            .field("WARC-Target-URI", self.uri.as_ref())?
            .id_field("WARC-Warcinfo-ID", self.warcinfo);
        if let Some(ip) = &self.ip {
            record = record.field("WARC-IP-Address", ip.as_str())?;
        }
        Ok(record)
    }

    pub(super) fn request_record<'a>(&'a self, request: &'a [u8]) -> io::Result<Record<'a>> {
        Ok(self
            .common(RecordType::Request, self.ids.request)
            .map(|r| r.id_field("WARC-Concurrent-To", self.ids.response))
            .and_then(|r| r.content_type(HTTP_REQUEST_TYPE))
            .map_err(invalid)?
            .block_part(request)
            .with_block_digest())
    }

    pub(super) fn response_record<'a>(
        &'a self,
        stored: &'a StoredResponse<'_>,
        truncated: Option<Truncation>,
    ) -> io::Result<Record<'a>> {
        let mut record = self
            .common(RecordType::Response, self.ids.response)
            .map(|r| r.digest_field("WARC-Payload-Digest", stored.payload_digest))
            .map_err(invalid)?;
        if let Some(truncated) = truncated {
            record = record
                .field("WARC-Truncated", truncated.as_str())
                .map_err(invalid)?;
        }
        Ok(record
            .content_type(HTTP_RESPONSE_TYPE)
            .map_err(invalid)?
            .block_part(&stored.head)
            .block_part(stored.body)
            .with_known_block_digest(stored.block_digest))
    }

    /// A `revisit` stores the head only; the storage policy has already renamed its
    /// `Transfer-Encoding` so it reads like the original capture's head.
    pub(super) fn revisit_record<'a>(
        &'a self,
        head: &'a [u8],
        revisit: &'a RevisitOf,
    ) -> io::Result<Record<'a>> {
        let mut record = self
            .common(RecordType::Revisit, self.ids.response)
            .map_err(invalid)?;
        if self.has_request {
            record = record.id_field("WARC-Concurrent-To", self.ids.request);
        }
        let mut record = Ok::<_, FieldValueError>(record)
            .and_then(|r| r.field("WARC-Profile", revisit.profile.uri()))
            .and_then(|r| {
                r.field(
                    "WARC-Refers-To-Target-URI",
                    sanitize_uri(&revisit.target_uri),
                )
            })
            .map(|r| {
                r.date_field("WARC-Refers-To-Date", revisit.date)
                    .digest_field("WARC-Payload-Digest", revisit.payload_digest)
            })
            .map_err(invalid)?;
        if revisit.profile == RevisitProfile::IdenticalPayload {
            // WARC 1.1 identical-payload-digest profile: a block cut to the headers
            // "shall" say so with WARC-Truncated: length. A 304's block is whole.
            record = record
                .field("WARC-Truncated", Truncation::Length.as_str())
                .map_err(invalid)?;
        }
        if let Some(original) = revisit.record_id {
            record = record.id_field("WARC-Refers-To", original);
        }
        Ok(record
            .content_type(HTTP_RESPONSE_TYPE)
            .map_err(invalid)?
            .block_part(head)
            .with_block_digest())
    }

    pub(super) fn metadata_record<'a>(&'a self, block: &'a [u8]) -> io::Result<Record<'a>> {
        Ok(self
            .common(RecordType::Metadata, self.ids.metadata)
            .map(|r| r.id_field("WARC-Concurrent-To", self.ids.response))
            .and_then(|r| r.content_type(WARC_FIELDS_TYPE))
            .map_err(invalid)?
            .block_part(block)
            .with_block_digest())
    }
}

fn invalid(err: FieldValueError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, err)
}

/// The `metadata` field saying a page's links are not known
/// ([`CaptureMetadata::outlinks_unknown`]).
pub const OUTLINKS_UNKNOWN: &str = "outlinksUnknown";

/// The `metadata` block: `warc-fields` lines in the style Heritrix writes and tools
/// such as pywb and the Wayback Machine's indexers read.
pub fn metadata_block(metadata: &CaptureMetadata) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + metadata.outlinks.len() * 64);
    push_metadata_block(&mut out, metadata);
    out
}

/// [`metadata_block`] appended to `out` (a buffer reused from capture to capture).
pub(super) fn push_metadata_block(out: &mut Vec<u8>, metadata: &CaptureMetadata) {
    if let Some(via) = &metadata.via {
        push_uri_field(out, "via", via);
    }
    if !metadata.hops_path.is_empty() {
        push_warc_field(out, "hopsFromSeed", &metadata.hops_path);
    }
    let t = &metadata.timings;
    let timings = [
        ("dnsTimeMs", t.dns_ms),
        ("connectTimeMs", t.connect_ms),
        ("tlsTimeMs", t.tls_ms),
        ("firstByteTimeMs", t.first_byte_ms),
        ("fetchTimeMs", t.total_ms),
    ];
    for (name, value) in timings {
        if let Some(value) = value {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            let _ = io::Write::write_fmt(out, format_args!("{value}\r\n"));
        }
    }
    if metadata.outlinks_unknown {
        push_warc_field(out, OUTLINKS_UNKNOWN, "previous-links-error");
    }
    for link in &metadata.outlinks {
        // `outlink: URL HOP`, written in place (no line built first: a page has dozens).
        out.extend_from_slice(b"outlink: ");
        out.extend_from_slice(sanitize_uri(&link.url).as_bytes());
        out.push(b' ');
        let mut hop = [0u8; 4];
        push_field_value(out, link.hop.code().encode_utf8(&mut hop));
        out.extend_from_slice(b"\r\n");
    }
}

/// `name: URL CRLF`: a sanitized URL holds no control byte, so it goes in as it is.
fn push_uri_field(out: &mut Vec<u8>, name: &str, uri: &str) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(sanitize_uri(uri).as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// The SHA-1 of a response block as [`encode_capture`] would store it, for tests and
/// tools that want to predict `WARC-Block-Digest`.
pub fn response_block_digest(response: &HttpResponse) -> Digest {
    let stored = StoredResponse::new(response);
    let mut hasher = DigestHasher::new();
    hasher.update(&stored.head);
    hasher.update(stored.body);
    let digest = hasher.finish();
    debug_assert_eq!(digest, stored.block_digest);
    digest
}

#[cfg(test)]
mod tests;
