//! Captures compressed off the writer thread.
//!
//! Deflate is what WARC output costs (~470 µs a page on the single output thread;
//! `docs/benchmarks.md`, "WARC at crawl speed"). gzip members are independent, so each
//! shard compresses the records of its own captures with a [`CaptureCompressor`] and
//! sends a [`CompressedCapture`]; the writer thread only does what must stay in one
//! order: the revisit decision (the payload-digest index), file rotation, appending,
//! and positions for checkpoints.
//!
//! Two things the shard cannot know are settled by the writer:
//! - **Revisits.** The shard compresses a full `response` record. When the writer's
//!   index finds the payload already written, it builds the `revisit` record (head only,
//!   a few hundred bytes) itself and drops the compressed response. To spare that
//!   deflate, the shard first asks the index's hint tags ([`RevisitHints`]): on a hint
//!   it ships the response uncompressed (head and payload shared, not copied, with its
//!   block digest), and the writer builds the revisit or, when the index no longer
//!   holds the digest (evicted, forgotten at a rotation, a wrong hint), compresses the
//!   response itself. The output is the same bytes either way.
//! - **The file's `warcinfo` id.** Every record names its file's `warcinfo` record. The
//!   writer publishes the id of the file the next capture will land in
//!   ([`WarcinfoSlot`]); a capture compressed just before a rotation carries the old id,
//!   and the writer then decompresses its members, puts the new id in (same length) and
//!   compresses them again. That happens only to the captures in flight at a rotation.
//!
//! A capture's members travel in the buffer they were compressed into: the writer's
//! [`MemberPool`] lends a compressor an empty buffer to swap for it, and the capture
//! gives its buffer back when the writer is done with it (dropped), so in a steady
//! state no buffer is allocated or copied per capture. When every pooled buffer is out
//! (a writer far behind), a capture gets an exact-size copy instead.

use std::io::{self, Read};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

use super::capture::{
    push_metadata_block, Capture, CaptureIds, Envelope, RevisitOf, StoredResponse,
};
use super::dedup::RevisitHints;
use super::error::WarcError;
use super::gzip::{Deflater, MemberEncoder};
use super::reader::{RecordHead, Status};
use super::record::{RecordId, RecordType};
use crate::http::SharedBytes;
use crate::provenance::date::WarcDate;
use crate::provenance::digest::Digest;

/// The `warcinfo` record id of the file the next capture will be appended to, shared
/// between the writer (which sets it) and the compressors (which read it).
#[derive(Debug, Clone)]
pub struct WarcinfoSlot(Arc<Mutex<RecordId>>);

impl WarcinfoSlot {
    pub(super) fn new(id: RecordId) -> Self {
        Self(Arc::new(Mutex::new(id)))
    }

    /// The id published last.
    pub fn current(&self) -> RecordId {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn publish(&self, id: RecordId) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = id;
    }
}

/// Buffers for captures' members, lent to compressors and given back by the captures
/// (see the module docs). Bounded by construction: [`MemberPool::BUFFERS`] buffers of at
/// most [`MemberPool::MAX_BUFFER_BYTES`] each; a larger one is replaced by an empty one
/// when it comes back.
///
/// A stack, not a queue: the buffer given back last is lent first, still in the cache,
/// so a writer that keeps up cycles through a few buffers, not all of them.
#[derive(Debug, Clone)]
pub(super) struct MemberPool(Arc<Mutex<Vec<Vec<u8>>>>);

impl MemberPool {
    /// Buffers in the pool: more than the captures a shard batches and the writer's
    /// channel holds in a crawl that keeps up with its disk.
    const BUFFERS: usize = 128;
    /// The largest buffer kept: a page's records with room for deflate's bound.
    const MAX_BUFFER_BYTES: usize = 128 * 1024;

    pub(super) fn new() -> Self {
        let buffers = std::iter::repeat_with(Vec::new).take(Self::BUFFERS);
        Self(Arc::new(Mutex::new(buffers.collect())))
    }

    fn stack(&self) -> std::sync::MutexGuard<'_, Vec<Vec<u8>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// An empty buffer, if one is in the pool.
    fn lend(&self) -> Option<Vec<u8>> {
        self.stack().pop()
    }

    fn give_back(&self, mut buffer: Vec<u8>) {
        if buffer.capacity() > Self::MAX_BUFFER_BYTES {
            buffer = Vec::new();
        }
        buffer.clear();
        let mut stack = self.stack();
        if stack.len() < Self::BUFFERS {
            stack.push(buffer);
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.stack().len()
    }
}

/// Compresses captures into gzip members for a writer; one per shard thread (it keeps
/// a compressor state, so it is not shared). Made by
/// [`super::WarcWriter::compressor`]; a clone has the same settings and its own
/// compressor state.
#[derive(Debug, Clone)]
pub struct CaptureCompressor {
    encoder: MemberEncoder,
    /// Level 0 (stored blocks), for responses whose body has a content coding: deflate
    /// finds nothing to remove in gzip or brotli output and spends most of the
    /// capture's CPU trying (`docs/warc.md`, "Compression level and implementation").
    stored: MemberEncoder,
    warcinfo: WarcinfoSlot,
    /// The writer's index tags: a response whose payload is likely a revisit is sent
    /// uncompressed. `None`: every response is compressed here.
    hints: Option<RevisitHints>,
    /// Members being built; a capture takes it and leaves a buffer from `pool` in its
    /// place (or gets an exact-size copy when the pool is empty).
    scratch: Vec<u8>,
    pool: MemberPool,
    /// The `metadata` record's block, reused.
    metadata: Vec<u8>,
}

/// One gzip member of a [`CompressedCapture`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Member {
    pub(super) record_type: RecordType,
    /// Byte range in [`CompressedCapture::members`].
    pub(super) start: usize,
    pub(super) end: usize,
    /// Uncompressed record bytes.
    pub(super) raw_bytes: u64,
}

/// A response shipped uncompressed (its payload likely a revisit): what the writer
/// needs to write it in full after all. The head is [`CompressedCapture::stored_head`].
#[derive(Debug, Clone)]
pub(super) struct RawResponse {
    pub(super) payload: SharedBytes,
    pub(super) block_digest: Digest,
}

/// A capture's records as finished gzip members, plus what the writer needs to turn
/// the response into a revisit.
#[derive(Debug, Clone)]
pub struct CompressedCapture {
    pub(super) target_uri: String,
    pub(super) date: WarcDate,
    pub(super) ip: Option<IpAddr>,
    pub(super) has_request: bool,
    pub(super) ids: CaptureIds,
    /// The `WARC-Warcinfo-ID` written in the members.
    pub(super) warcinfo_id: RecordId,
    /// The response head as stored (for a revisit record); the capture's own buffer
    /// when nothing was renamed in it.
    pub(super) stored_head: SharedBytes,
    pub(super) payload_digest: Digest,
    pub(super) payload_len: u64,
    /// Whether the response may be deduplicated: complete, untruncated, 2xx, and not
    /// already a revisit chosen by the caller. The size threshold is the writer's.
    pub(super) complete_2xx: bool,
    /// The caller chose a revisit (`Capture::revisit`): the members hold it already.
    pub(super) caller_revisit: bool,
    /// The response, uncompressed: its part in `parts` is an empty range.
    pub(super) raw_response: Option<RawResponse>,
    pub(super) members: Vec<u8>,
    pub(super) parts: Vec<Member>,
    /// Where `members` goes back when the capture is dropped (`None`: an exact-size copy,
    /// not the pool's).
    pool: Option<MemberPool>,
}

impl Drop for CompressedCapture {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.take() {
            pool.give_back(std::mem::take(&mut self.members));
        }
    }
}

impl CompressedCapture {
    /// The capture's URL.
    pub fn target_uri(&self) -> &str {
        &self.target_uri
    }

    /// True when the caller chose the revisit (`Capture::revisit`, a re-crawl's
    /// verdict) rather than the writer's payload-digest index.
    pub fn is_caller_revisit(&self) -> bool {
        self.caller_revisit
    }

    /// Compressed bytes of all its members (without a response shipped
    /// uncompressed).
    pub fn compressed_bytes(&self) -> usize {
        self.members.len()
    }
}

impl CaptureCompressor {
    pub(super) fn new(
        deflater: Deflater,
        level: u32,
        warcinfo: WarcinfoSlot,
        hints: Option<RevisitHints>,
        pool: MemberPool,
    ) -> Self {
        Self {
            encoder: MemberEncoder::with_deflater(deflater, level),
            stored: MemberEncoder::with_deflater(deflater, 0),
            warcinfo,
            hints,
            scratch: Vec::with_capacity(64 * 1024),
            pool,
            metadata: Vec::new(),
        }
    }

    /// The same compressor without revisit hints: every response compressed here, as
    /// before hints existed (tests and measurements compare the two; the output bytes
    /// are the same).
    #[must_use]
    pub fn without_hints(mut self) -> Self {
        self.hints = None;
        self
    }

    /// Builds and compresses `capture`'s records with fresh record ids.
    ///
    /// # Errors
    /// [`WarcError::Record`] for a field value that cannot be written (the capture is
    /// then refused as a whole, as the writer would).
    pub fn compress(&mut self, capture: &Capture) -> Result<CompressedCapture, WarcError> {
        self.compress_with_ids(capture, CaptureIds::new_v4())
    }

    /// [`CaptureCompressor::compress`] with given record ids.
    ///
    /// # Errors
    /// As [`CaptureCompressor::compress`].
    pub fn compress_with_ids(
        &mut self,
        capture: &Capture,
        ids: CaptureIds,
    ) -> Result<CompressedCapture, WarcError> {
        let warcinfo_id = self.warcinfo.current();
        self.build(capture, ids, warcinfo_id)
            .map_err(|source| WarcError::Record {
                uri: capture.target_uri.clone(),
                source,
            })
    }

    fn build(
        &mut self,
        capture: &Capture,
        ids: CaptureIds,
        warcinfo_id: RecordId,
    ) -> io::Result<CompressedCapture> {
        let stored = StoredResponse::new(&capture.response);
        let envelope = Envelope::new(capture, ids, warcinfo_id);
        let mut members = std::mem::take(&mut self.scratch);
        members.clear();
        let encoded = capture.response.content_coded;
        let complete_2xx = capture.revisit.is_none()
            && capture.truncated.is_none()
            && (200..300).contains(&capture.response.status);
        let mut parts = Vec::with_capacity(3);
        let mut raw_response = None;
        if !capture.request.is_empty() {
            let record = envelope.request_record(&capture.request)?;
            push(&mut parts, &mut self.encoder, &mut members, &record)?;
        }
        let payload_digest = match &capture.revisit {
            Some(revisit) => {
                let record = envelope.revisit_record(stored.head(), revisit)?;
                push(&mut parts, &mut self.encoder, &mut members, &record)?;
                revisit.payload_digest
            }
            // A likely revisit: not deflated here (a content-coded body is stored at
            // level 0, which costs a copy, so it is not worth the round trip).
            None if complete_2xx
                && !encoded
                && self.hints.as_ref().is_some_and(|hints| {
                    hints.likely_revisit(&stored.payload_digest(), stored.payload_len())
                }) =>
            {
                parts.push(Member {
                    record_type: RecordType::Response,
                    start: members.len(),
                    end: members.len(),
                    raw_bytes: 0,
                });
                raw_response = Some(RawResponse {
                    payload: capture.response.payload.clone(),
                    block_digest: stored.block_digest(),
                });
                stored.payload_digest()
            }
            None => {
                let record = envelope.response_record(&stored, capture.truncated)?;
                let encoder = if encoded {
                    &mut self.stored
                } else {
                    &mut self.encoder
                };
                push(&mut parts, encoder, &mut members, &record)?;
                stored.payload_digest()
            }
        };
        if let Some(metadata) = &capture.metadata {
            if self.metadata.capacity() > MemberPool::MAX_BUFFER_BYTES {
                self.metadata = Vec::new();
            }
            self.metadata.clear();
            push_metadata_block(&mut self.metadata, metadata);
            let record = envelope.metadata_record(&self.metadata)?;
            push(&mut parts, &mut self.encoder, &mut members, &record)?;
        }
        // The capture takes the buffer; a lent one is the next scratch.
        let (members, pool) = match self.pool.lend() {
            Some(spare) => {
                self.scratch = spare;
                (members, Some(self.pool.clone()))
            }
            None => {
                let exact = members.as_slice().to_vec();
                self.scratch = members;
                (exact, None)
            }
        };
        let payload_len = stored.payload_len();
        Ok(CompressedCapture {
            target_uri: capture.target_uri.clone(),
            date: capture.date,
            ip: capture.ip,
            has_request: !capture.request.is_empty(),
            ids,
            warcinfo_id,
            stored_head: stored.into_head(&capture.response),
            payload_digest,
            payload_len,
            complete_2xx,
            caller_revisit: capture.revisit.is_some(),
            raw_response,
            members,
            parts,
            pool,
        })
    }
}

/// Appends `record` to `members` as one gzip member and notes its part.
fn push(
    parts: &mut Vec<Member>,
    encoder: &mut MemberEncoder,
    members: &mut Vec<u8>,
    record: &super::Record<'_>,
) -> io::Result<()> {
    let start = members.len();
    let raw_bytes = encoder.append(members, record)?;
    parts.push(Member {
        record_type: record.record_type(),
        start,
        end: members.len(),
        raw_bytes,
    });
    Ok(())
}

/// The members to append for `capture` in a file whose `warcinfo` id is
/// `warcinfo_id`, into `out`: the shard's members as they are, except the response
/// replaced by a `revisit` record when `revisit` is given, a response shipped
/// uncompressed compressed here when it is not, and every member re-made with the
/// file's id when the shard used another. Returns per member its type, its offset in
/// `out` and its uncompressed size.
///
/// # Errors
/// [`io::Error`] if a member does not decode (it always does: we made it) or a field
/// cannot be written.
pub(super) fn assemble(
    capture: &CompressedCapture,
    revisit: Option<&RevisitOf>,
    warcinfo_id: RecordId,
    encoder: &mut MemberEncoder,
    out: &mut Vec<u8>,
) -> io::Result<Vec<(RecordType, usize, u64)>> {
    let mut placed = Vec::with_capacity(capture.parts.len());
    let same_file = capture.warcinfo_id == warcinfo_id;
    let envelope = Envelope::from_parts(
        &capture.target_uri,
        capture.date,
        capture.ip,
        capture.has_request,
        capture.ids,
        warcinfo_id,
    );
    for part in &capture.parts {
        let at = out.len();
        if let (Some(revisit), RecordType::Response) = (revisit, part.record_type) {
            let record = envelope.revisit_record(&capture.stored_head, revisit)?;
            let raw = encoder.append(out, &record)?;
            placed.push((RecordType::Revisit, at, raw));
            continue;
        }
        if let (Some(response), RecordType::Response) = (&capture.raw_response, part.record_type) {
            // The hint was wrong or went stale: the response is written in full after
            // all, exactly as the shard would have compressed it.
            let stored = StoredResponse::from_parts(
                &capture.stored_head,
                &response.payload,
                response.block_digest,
                capture.payload_digest,
            );
            let record = envelope.response_record(&stored, None)?;
            let raw = encoder.append(out, &record)?;
            placed.push((RecordType::Response, at, raw));
            continue;
        }
        let member = capture
            .members
            .get(part.start..part.end)
            .ok_or_else(|| io::Error::other("member range outside the capture"))?;
        if same_file {
            out.extend_from_slice(member);
        } else {
            let raw = restamp(member, capture.warcinfo_id, warcinfo_id)?;
            encoder.append_raw(out, &raw)?;
        }
        placed.push((part.record_type, at, part.raw_bytes));
    }
    Ok(placed)
}

/// Decodes a member and replaces the `WARC-Warcinfo-ID` in its head (ids have a fixed
/// length, so nothing else moves).
fn restamp(member: &[u8], old: RecordId, new: RecordId) -> io::Result<Vec<u8>> {
    let mut raw = Vec::with_capacity(member.len() * 4);
    flate2::read::GzDecoder::new(member).read_to_end(&mut raw)?;
    let head = match RecordHead::parse(&raw) {
        Ok(Status::Complete(head)) => head,
        Ok(Status::Partial) => return Err(io::Error::other("member has no whole record head")),
        Err(e) => return Err(io::Error::other(e)),
    };
    let (old, new) = (old.to_string(), new.to_string());
    let at = head
        .field_range("WARC-Warcinfo-ID")
        .filter(|range| raw.get(range.clone()) == Some(old.as_bytes()))
        .ok_or_else(|| io::Error::other("member has no warcinfo id to replace"))?;
    match raw.get_mut(at) {
        Some(slot) if slot.len() == new.len() => {
            slot.copy_from_slice(new.as_bytes());
            Ok(raw)
        }
        _ => Err(io::Error::other("warcinfo id of another length")),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;
    use crate::http::ResponseHead;
    use crate::warc::HttpResponse;

    fn capture(encoding: &str, body: &[u8]) -> Capture {
        let head = format!(
            "HTTP/1.1 200 OK\r\n{encoding}Content-Length: {}\r\n\r\n",
            body.len()
        );
        Capture {
            target_uri: "http://a.test/".to_owned(),
            date: WarcDate::from_unix_micros(0),
            ip: None,
            request: b"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n".into(),
            response: HttpResponse::new(
                &ResponseHead::parse(head.as_bytes()).unwrap(),
                body.to_vec().into(),
            ),
            truncated: None,
            revisit: None,
            metadata: None,
        }
    }

    fn response_member(c: &CompressedCapture) -> (&[u8], u64) {
        let part = c
            .parts
            .iter()
            .find(|p| p.record_type == RecordType::Response)
            .unwrap();
        (&c.members[part.start..part.end], part.raw_bytes)
    }

    #[test]
    fn content_coded_bodies_are_stored_and_others_compressed() {
        let body = b"<p>compressible text</p>".repeat(200);
        let mut compressor = CaptureCompressor::new(
            Deflater::Libdeflate,
            1,
            WarcinfoSlot::new(RecordId::new_v4()),
            None,
            MemberPool::new(),
        );
        let plain = compressor.compress(&capture("", &body)).unwrap();
        let (member, raw) = response_member(&plain);
        assert!((member.len() as u64) < raw / 4, "plain body compressed");
        let coded = compressor
            .compress(&capture("Content-Encoding: gzip\r\n", &body))
            .unwrap();
        let (member, raw) = response_member(&coded);
        assert!(member.len() as u64 > raw, "coded body stored");
        let mut decoded = Vec::new();
        flate2::read::GzDecoder::new(member)
            .read_to_end(&mut decoded)
            .unwrap();
        assert_eq!(decoded.len() as u64, raw);
        assert!(decoded.windows(body.len()).any(|w| w == body.as_slice()));
        // The request member is compressed as usual, and parts tile the buffer.
        assert_eq!(coded.parts.first().map(|p| p.start), Some(0));
        assert_eq!(coded.parts.last().map(|p| p.end), Some(coded.members.len()));
    }

    /// A capture takes the buffer its members were built in and gives it back when
    /// dropped; with the pool empty it gets an exact-size copy, given back to no one.
    #[test]
    fn member_buffers_go_round_through_the_pool() {
        let pool = MemberPool::new();
        let mut compressor = CaptureCompressor::new(
            Deflater::Libdeflate,
            1,
            WarcinfoSlot::new(RecordId::new_v4()),
            None,
            pool.clone(),
        );
        let body = b"<p>text</p>".repeat(100);
        for _ in 0..3 * MemberPool::BUFFERS {
            let c = compressor.compress(&capture("", &body)).unwrap();
            assert!(c.pool.is_some());
            assert_eq!(pool.len(), MemberPool::BUFFERS - 1);
            drop(c);
            assert_eq!(pool.len(), MemberPool::BUFFERS);
        }
        let lent: Vec<_> = std::iter::from_fn(|| pool.lend()).collect();
        let copy = compressor.compress(&capture("", &body)).unwrap();
        assert!(copy.pool.is_none());
        assert_eq!(copy.members.capacity(), copy.members.len());
        drop(copy);
        assert_eq!(pool.len(), 0);
        for buffer in lent {
            pool.give_back(buffer);
        }
        pool.give_back(Vec::with_capacity(MemberPool::MAX_BUFFER_BYTES + 1));
        assert_eq!(pool.len(), MemberPool::BUFFERS, "bounded");
        assert!(std::iter::from_fn(|| pool.lend())
            .all(|b| b.capacity() <= MemberPool::MAX_BUFFER_BYTES));
    }

    /// A capture compressed before a rotation gets the new file's warcinfo id, and
    /// nothing else in its records changes.
    #[test]
    fn restamping_replaces_only_the_warcinfo_id() {
        let (old, new) = (RecordId::new_v4(), RecordId::new_v4());
        let mut compressor = CaptureCompressor::new(
            Deflater::Libdeflate,
            1,
            WarcinfoSlot::new(old),
            None,
            MemberPool::new(),
        );
        let compressed = compressor.compress(&capture("", b"<p>hi</p>")).unwrap();
        for part in &compressed.parts {
            let member = &compressed.members[part.start..part.end];
            let mut before = Vec::new();
            flate2::read::GzDecoder::new(member)
                .read_to_end(&mut before)
                .unwrap();
            let after = restamp(member, old, new).unwrap();
            assert_eq!(after.len(), before.len());
            let head = match RecordHead::parse(&after) {
                Ok(Status::Complete(head)) => head,
                other => panic!("{other:?}"),
            };
            assert_eq!(
                head.field("WARC-Warcinfo-ID"),
                Some(new.to_string().as_str())
            );
            let at = head.field_range("WARC-Warcinfo-ID").unwrap();
            assert_eq!(after[..at.start], before[..at.start]);
            assert_eq!(after[at.end..], before[at.end..]);
            assert!(restamp(member, new, old).is_err(), "the old id is required");
        }
        assert!(restamp(b"not gzip", old, new).is_err());
    }
}
