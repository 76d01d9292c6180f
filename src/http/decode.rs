//! Content decoding (RFC 9110 §8.4.1): gzip, deflate and br, streaming and capped.
//!
//! A compressed body is the one place where a few network bytes can turn into gigabytes
//! of memory. [`ContentDecoder`] therefore decodes in bounded steps (at most
//! [`OUTPUT_STEP_BYTES`] per inflate call) and checks two caps after every step: the
//! total decoded bytes ([`DecodeLimits::max_decoded_bytes`]) and the ratio of decoded to
//! compressed bytes ([`DecodeLimits::max_expansion_ratio`], enforced once the output
//! passes [`RATIO_GRACE_BYTES`] so that small, very repetitive pages pass). A bomb thus
//! ends as [`DecodeError::TooLarge`] or [`DecodeError::RatioExceeded`] with at most one
//! step of overshoot, never as an out-of-memory abort.
//!
//! - gzip (RFC 1952): the member header is parsed here (FEXTRA, FNAME, FCOMMENT, FHCRC),
//!   the deflate data is inflated raw, and the CRC-32 and size trailer are checked.
//!   Several members are decoded one after the other, as RFC 1952 §2.2 says; bytes after
//!   the last member that do not start another member (padding some servers add) are
//!   ignored.
//! - deflate: RFC 9110 means a zlib stream (RFC 1950), but many servers send raw deflate
//!   (RFC 1951). As browsers do, the first two bytes decide: a valid zlib header selects
//!   zlib, anything else raw deflate.
//! - br (RFC 7932): brotli-decompressor's streaming state machine, with large windows
//!   off (the RFC 7932 window is at most 16 MiB, which bounds the decoder's memory).
//!
//! Decoded bytes are appended to the caller's buffer as they come, so on an error the
//! output so far is still there (useful for a truncated body).

#![deny(clippy::indexing_slicing)]

use std::fmt;

use brotli_decompressor::{
    Allocator, BrotliDecompressStream, BrotliResult, BrotliState, SliceWrapper, SliceWrapperMut,
    StandardAlloc,
};
use flate2::{Decompress, FlushDecompress, Status};

use crate::ascii::trim_ows;

/// Most output produced by one inflate call; caps are checked between calls.
pub const OUTPUT_STEP_BYTES: usize = 32 * 1024;

/// Output size below which the expansion ratio is not enforced: a 64 KiB page of
/// repeated markup may legitimately compress 100:1 or more.
pub const RATIO_GRACE_BYTES: u64 = 64 * 1024;

/// A content coding trawl can decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContentEncoding {
    /// No coding (or `identity`).
    Identity,
    /// `gzip` (also `x-gzip`).
    Gzip,
    /// `deflate`: zlib or, leniently, raw deflate.
    Deflate,
    /// `br`: brotli.
    Brotli,
}

impl ContentEncoding {
    /// The coding named by a `Content-Encoding` value (`None`: no such field).
    ///
    /// # Errors
    /// [`DecodeError::Unsupported`] for an unknown coding or for more than one coding
    /// (`gzip, br`), which deployed servers do not send.
    pub fn from_header(value: Option<&[u8]>) -> Result<Self, DecodeError> {
        let Some(value) = value else {
            return Ok(ContentEncoding::Identity);
        };
        let mut found = ContentEncoding::Identity;
        for token in value.split(|&b| b == b',') {
            let token = trim_ows(token);
            let coding = if token.is_empty() || token.eq_ignore_ascii_case(b"identity") {
                continue;
            } else if token.eq_ignore_ascii_case(b"gzip") || token.eq_ignore_ascii_case(b"x-gzip") {
                ContentEncoding::Gzip
            } else if token.eq_ignore_ascii_case(b"deflate") {
                ContentEncoding::Deflate
            } else if token.eq_ignore_ascii_case(b"br") {
                ContentEncoding::Brotli
            } else {
                return Err(DecodeError::Unsupported);
            };
            if found != ContentEncoding::Identity {
                return Err(DecodeError::Unsupported);
            }
            found = coding;
        }
        Ok(found)
    }
}

/// Caps on decoding one body.
#[derive(Clone, Copy, Debug)]
pub struct DecodeLimits {
    /// Most decoded bytes.
    pub max_decoded_bytes: u64,
    /// Most decoded bytes per compressed byte (beyond [`RATIO_GRACE_BYTES`]); 0 turns
    /// the ratio check off.
    pub max_expansion_ratio: u32,
}

impl Default for DecodeLimits {
    /// 64 MiB decoded and a ratio of 100: text compresses 5-20x, a bomb 1000x.
    fn default() -> Self {
        DecodeLimits {
            max_decoded_bytes: 64 * 1024 * 1024,
            max_expansion_ratio: 100,
        }
    }
}

/// Ways decoding can fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The compressed data is malformed (bad header, bad deflate data, CRC mismatch).
    Corrupt,
    /// The compressed data ends before the end of the stream.
    Truncated,
    /// More than `max_decoded_bytes` of output.
    TooLarge,
    /// Output grew beyond `max_expansion_ratio` times the input.
    RatioExceeded,
    /// A content coding trawl does not decode.
    Unsupported,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DecodeError::Corrupt => "corrupt compressed body",
            DecodeError::Truncated => "compressed body ends early",
            DecodeError::TooLarge => "decoded body too large",
            DecodeError::RatioExceeded => "decoded body exceeds expansion ratio",
            DecodeError::Unsupported => "unsupported content coding",
        })
    }
}

impl std::error::Error for DecodeError {}

/// Streaming decoder: push raw body chunks, get decoded bytes appended to `out`.
pub struct ContentDecoder {
    codec: Codec,
    limits: DecodeLimits,
    /// Compressed bytes pushed so far.
    input_bytes: u64,
    /// Decoded bytes produced so far.
    output_bytes: u64,
    /// Set by the first error; every later call repeats it.
    failed: Option<DecodeError>,
    /// Output buffer for one decoding step, allocated on first use: decoding into it and
    /// copying out avoids zero-filling the caller's buffer on every push.
    scratch: Vec<u8>,
}

impl fmt::Debug for ContentDecoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ContentDecoder")
            .field("input_bytes", &self.input_bytes)
            .field("output_bytes", &self.output_bytes)
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

enum Codec {
    Identity,
    Deflate(DeflateState),
    Gzip(Box<GzipState>),
    Brotli(Box<BrotliDecoder>),
}

/// Running totals checked against the caps.
struct Budget<'a> {
    limits: &'a DecodeLimits,
    input_bytes: u64,
    output_bytes: &'a mut u64,
    /// The decoder's step buffer ([`OUTPUT_STEP_BYTES`] long).
    scratch: &'a mut [u8],
}

impl Budget<'_> {
    /// Output room for the next step: one byte more than the cap allows, so that a
    /// stream exceeding the cap is detected rather than silently cut.
    fn step_room(&self) -> usize {
        let left = self
            .limits
            .max_decoded_bytes
            .saturating_sub(*self.output_bytes)
            .saturating_add(1);
        usize::try_from(left)
            .unwrap_or(usize::MAX)
            .min(OUTPUT_STEP_BYTES)
    }

    fn add_output(&mut self, n: usize) -> Result<(), DecodeError> {
        *self.output_bytes += n as u64;
        let out = *self.output_bytes;
        if out > self.limits.max_decoded_bytes {
            return Err(DecodeError::TooLarge);
        }
        let ratio = u64::from(self.limits.max_expansion_ratio);
        if ratio > 0 && out > RATIO_GRACE_BYTES && out > self.input_bytes.saturating_mul(ratio) {
            return Err(DecodeError::RatioExceeded);
        }
        Ok(())
    }
}

impl ContentDecoder {
    /// A decoder for `encoding` under `limits`.
    pub fn new(encoding: ContentEncoding, limits: DecodeLimits) -> Self {
        let codec = match encoding {
            ContentEncoding::Identity => Codec::Identity,
            ContentEncoding::Deflate => Codec::Deflate(DeflateState::Sniff {
                buf: [0; 2],
                len: 0,
            }),
            ContentEncoding::Gzip => Codec::Gzip(Box::new(GzipState::new())),
            ContentEncoding::Brotli => Codec::Brotli(Box::new(BrotliDecoder::new())),
        };
        ContentDecoder {
            codec,
            limits,
            input_bytes: 0,
            output_bytes: 0,
            failed: None,
            scratch: Vec::new(),
        }
    }

    /// Decoded bytes produced so far.
    pub fn decoded_bytes(&self) -> u64 {
        self.output_bytes
    }

    /// Compressed bytes pushed so far.
    pub fn encoded_bytes(&self) -> u64 {
        self.input_bytes
    }

    /// Decodes `input` (the next raw body bytes), appending the output to `out`.
    ///
    /// # Errors
    /// A [`DecodeError`] when the data is corrupt or a cap is hit; output produced before
    /// the error stays in `out`, and every later call returns the same error.
    pub fn push(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<(), DecodeError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        self.input_bytes += input.len() as u64;
        if self.scratch.is_empty() && !matches!(self.codec, Codec::Identity) {
            self.scratch = vec![0; OUTPUT_STEP_BYTES];
        }
        let mut budget = Budget {
            limits: &self.limits,
            input_bytes: self.input_bytes,
            output_bytes: &mut self.output_bytes,
            scratch: &mut self.scratch,
        };
        let result = match &mut self.codec {
            Codec::Identity => {
                out.extend_from_slice(input);
                // The ratio is 1: only the size cap applies.
                *budget.output_bytes += input.len() as u64;
                if *budget.output_bytes > budget.limits.max_decoded_bytes {
                    Err(DecodeError::TooLarge)
                } else {
                    Ok(())
                }
            }
            Codec::Deflate(state) => state.push(input, out, &mut budget),
            Codec::Gzip(state) => state.push(input, out, &mut budget),
            Codec::Brotli(state) => state.push(input, out, &mut budget),
        };
        if let Err(e) = result {
            self.failed = Some(e);
        }
        result
    }

    /// Ends the body: checks that the compressed stream was complete.
    ///
    /// An empty body is accepted for every coding (servers send `Content-Encoding: gzip`
    /// on empty responses).
    ///
    /// # Errors
    /// [`DecodeError::Truncated`] when the stream stops early, or the earlier error.
    pub fn finish(&mut self, _out: &mut Vec<u8>) -> Result<(), DecodeError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        let complete = self.input_bytes == 0
            || match &self.codec {
                Codec::Identity => true,
                Codec::Deflate(state) => state.is_complete(),
                Codec::Gzip(state) => state.is_complete(),
                Codec::Brotli(state) => state.done,
            };
        if complete {
            Ok(())
        } else {
            self.failed = Some(DecodeError::Truncated);
            Err(DecodeError::Truncated)
        }
    }
}

/// Inflates `input` with `z` until the input is used up, the stream ends, or an error;
/// returns the bytes consumed and whether the deflate stream ended. Every output byte is
/// also passed to `on_output` (the gzip CRC).
fn inflate(
    z: &mut Decompress,
    input: &[u8],
    out: &mut Vec<u8>,
    budget: &mut Budget<'_>,
    mut on_output: impl FnMut(&[u8]),
) -> Result<(usize, bool), DecodeError> {
    let mut pos = 0usize;
    loop {
        let room = budget.step_room();
        let before_in = z.total_in();
        let before_out = z.total_out();
        let rest = input.get(pos..).unwrap_or_default();
        let step_out = budget.scratch.get_mut(..room).unwrap_or_default();
        let status = z.decompress(rest, step_out, FlushDecompress::None);
        // Both deltas are bounded by slice lengths, which are usizes.
        let used = (z.total_in() - before_in) as usize;
        let produced = (z.total_out() - before_out) as usize;
        pos += used;
        let decoded = step_out.get(..produced).unwrap_or_default();
        out.extend_from_slice(decoded);
        on_output(decoded);
        budget.add_output(produced)?;
        match status {
            Ok(Status::StreamEnd) => return Ok((pos, true)),
            Ok(Status::Ok) | Ok(Status::BufError) => {
                let input_done = pos >= input.len();
                if (input_done && produced < room) || (used == 0 && produced == 0) {
                    return Ok((pos, false));
                }
            }
            Err(_) => return Err(DecodeError::Corrupt),
        }
    }
}

/// `deflate`: sniffing the first two bytes, then a zlib or raw inflater.
enum DeflateState {
    Sniff { buf: [u8; 2], len: usize },
    Stream { z: Box<Decompress>, ended: bool },
}

impl DeflateState {
    fn push(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        budget: &mut Budget<'_>,
    ) -> Result<(), DecodeError> {
        let mut input = input;
        if let DeflateState::Sniff { buf, len } = self {
            while *len < 2 {
                let Some((&first, rest)) = input.split_first() else {
                    return Ok(());
                };
                if let Some(slot) = buf.get_mut(*len) {
                    *slot = first;
                }
                *len += 1;
                input = rest;
            }
            let header = *buf;
            let mut z = Box::new(Decompress::new(is_zlib_header(header)));
            let (_, ended) = inflate(&mut z, &header, out, budget, |_| {})?;
            *self = DeflateState::Stream { z, ended };
        }
        if let DeflateState::Stream { z, ended } = self {
            // Bytes after the end of the stream are ignored, as browsers do.
            if !*ended && !input.is_empty() {
                let (_, end) = inflate(z, input, out, budget, |_| {})?;
                *ended = end;
            }
        }
        Ok(())
    }

    fn is_complete(&self) -> bool {
        matches!(self, DeflateState::Stream { ended: true, .. })
    }
}

/// RFC 1950 §2.2: CM = 8, window ≤ 32 KiB, FCHECK valid, no preset dictionary.
fn is_zlib_header([cmf, flg]: [u8; 2]) -> bool {
    cmf & 0x0f == 8
        && cmf >> 4 <= 7
        && (u16::from(cmf) << 8 | u16::from(flg)) % 31 == 0
        && flg & 0x20 == 0
}

/// gzip: member header, raw deflate data, CRC-32 and size trailer; repeated.
struct GzipState {
    phase: GzipPhase,
    z: Decompress,
    crc: crc32fast::Hasher,
    /// Decoded size of the current member, modulo 2^32 (RFC 1952 ISIZE).
    member_size: u32,
    /// Header or trailer bytes collected so far (fixed-size parts).
    buf: [u8; 10],
    buf_len: usize,
    /// Members completed.
    members: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GzipPhase {
    /// The 10-byte fixed header.
    Fixed,
    /// The 2-byte FEXTRA length; `flags` are the header flags still to handle.
    ExtraLen { flags: u8 },
    /// FEXTRA payload bytes to skip.
    Extra { flags: u8, remaining: u16 },
    /// A zero-terminated FNAME.
    Name { flags: u8 },
    /// A zero-terminated FCOMMENT.
    Comment { flags: u8 },
    /// The 2-byte header CRC.
    HeaderCrc,
    /// Deflate data.
    Data,
    /// The 8-byte trailer.
    Trailer,
    /// Between members: another member or trailing padding follows.
    Between,
    /// Trailing bytes that are not a gzip member: ignored.
    Garbage,
}

const FHCRC: u8 = 0x02;
const FEXTRA: u8 = 0x04;
const FNAME: u8 = 0x08;
const FCOMMENT: u8 = 0x10;
const FRESERVED: u8 = 0xe0;

impl GzipState {
    fn new() -> Self {
        GzipState {
            phase: GzipPhase::Fixed,
            z: Decompress::new(false),
            crc: crc32fast::Hasher::new(),
            member_size: 0,
            buf: [0; 10],
            buf_len: 0,
            members: 0,
        }
    }

    fn is_complete(&self) -> bool {
        match self.phase {
            GzipPhase::Between | GzipPhase::Garbage => true,
            // Nothing of a further member arrived.
            GzipPhase::Fixed => self.members > 0 && self.buf_len == 0,
            _ => false,
        }
    }

    /// Collects `n` bytes into `buf`; returns true when complete.
    fn collect(&mut self, input: &mut &[u8], n: usize) -> bool {
        while self.buf_len < n {
            let Some((&b, rest)) = input.split_first() else {
                return false;
            };
            if let Some(slot) = self.buf.get_mut(self.buf_len) {
                *slot = b;
            }
            self.buf_len += 1;
            *input = rest;
        }
        self.buf_len = 0;
        true
    }

    /// Skips a zero-terminated field; returns true when its terminator was seen.
    fn skip_zstring(input: &mut &[u8]) -> bool {
        match memchr::memchr(0, input) {
            Some(i) => {
                *input = input.get(i + 1..).unwrap_or_default();
                true
            }
            None => {
                *input = &[];
                false
            }
        }
    }

    /// The header phase after the fields in `flags` that are already handled.
    fn next_header_phase(flags: u8) -> GzipPhase {
        if flags & FEXTRA != 0 {
            GzipPhase::ExtraLen { flags }
        } else if flags & FNAME != 0 {
            GzipPhase::Name { flags }
        } else if flags & FCOMMENT != 0 {
            GzipPhase::Comment { flags }
        } else if flags & FHCRC != 0 {
            GzipPhase::HeaderCrc
        } else {
            GzipPhase::Data
        }
    }

    fn push(
        &mut self,
        mut input: &[u8],
        out: &mut Vec<u8>,
        budget: &mut Budget<'_>,
    ) -> Result<(), DecodeError> {
        while !input.is_empty() {
            self.phase = match self.phase {
                GzipPhase::Fixed => {
                    if !self.collect(&mut input, 10) {
                        return Ok(());
                    }
                    let [id1, id2, cm, flags, ..] = self.buf;
                    if id1 != 0x1f || id2 != 0x8b || cm != 8 || flags & FRESERVED != 0 {
                        return Err(DecodeError::Corrupt);
                    }
                    Self::next_header_phase(flags)
                }
                GzipPhase::ExtraLen { flags } => {
                    if !self.collect(&mut input, 2) {
                        return Ok(());
                    }
                    let [lo, hi, ..] = self.buf;
                    GzipPhase::Extra {
                        flags,
                        remaining: u16::from_le_bytes([lo, hi]),
                    }
                }
                GzipPhase::Extra { flags, remaining } => {
                    let skip = usize::from(remaining).min(input.len());
                    input = input.get(skip..).unwrap_or_default();
                    // `skip <= remaining`, a u16.
                    let remaining = remaining - skip as u16;
                    if remaining > 0 {
                        GzipPhase::Extra { flags, remaining }
                    } else {
                        Self::next_header_phase(flags & !FEXTRA)
                    }
                }
                GzipPhase::Name { flags } => {
                    if !Self::skip_zstring(&mut input) {
                        return Ok(());
                    }
                    Self::next_header_phase(flags & !(FEXTRA | FNAME))
                }
                GzipPhase::Comment { flags } => {
                    if !Self::skip_zstring(&mut input) {
                        return Ok(());
                    }
                    Self::next_header_phase(flags & !(FEXTRA | FNAME | FCOMMENT))
                }
                GzipPhase::HeaderCrc => {
                    // The header CRC is optional and rarely sent; it guards only the
                    // header, whose fields we skip, so it is read and not checked.
                    if !self.collect(&mut input, 2) {
                        return Ok(());
                    }
                    GzipPhase::Data
                }
                GzipPhase::Data => {
                    let crc = &mut self.crc;
                    let size = &mut self.member_size;
                    let (used, ended) = inflate(&mut self.z, input, out, budget, |chunk| {
                        crc.update(chunk);
                        // ISIZE is the size modulo 2^32: truncation intended.
                        *size = size.wrapping_add(chunk.len() as u32);
                    })?;
                    input = input.get(used..).unwrap_or_default();
                    if !ended {
                        return Ok(());
                    }
                    GzipPhase::Trailer
                }
                GzipPhase::Trailer => {
                    if !self.collect(&mut input, 8) {
                        return Ok(());
                    }
                    let [c0, c1, c2, c3, s0, s1, s2, s3, ..] = self.buf;
                    let crc = std::mem::take(&mut self.crc).finalize();
                    if u32::from_le_bytes([c0, c1, c2, c3]) != crc
                        || u32::from_le_bytes([s0, s1, s2, s3]) != self.member_size
                    {
                        return Err(DecodeError::Corrupt);
                    }
                    self.members += 1;
                    self.member_size = 0;
                    self.z.reset(false);
                    GzipPhase::Between
                }
                GzipPhase::Between => {
                    // Another member starts with the magic; anything else (zero padding,
                    // junk) ends the body, as in browsers.
                    match input {
                        [0x1f, 0x8b, ..] => GzipPhase::Fixed,
                        [0x1f] => {
                            // Undecided until the next byte; keep it for the header.
                            self.buf = [0x1f, 0, 0, 0, 0, 0, 0, 0, 0, 0];
                            self.buf_len = 1;
                            input = &[];
                            GzipPhase::Fixed
                        }
                        _ => GzipPhase::Garbage,
                    }
                }
                GzipPhase::Garbage => {
                    input = &[];
                    GzipPhase::Garbage
                }
            };
        }
        Ok(())
    }
}

/// Byte buffers for brotli's ring buffer, recycled per thread.
///
/// A `br` stream written with the usual 4 MiB window (lgwin 22) that spans more than
/// one meta-block makes the decoder allocate a ring buffer of the whole window for
/// every response, even a 20 KB page; the standard allocator zeroes it, and that memset
/// was a quarter of a shard's CPU in the crawl benchmark. The decoder never reads ring
/// buffer bytes it has not written (the C reference mallocs it uninitialized and sets
/// only its last two bytes, as this port does), so a recycled buffer with stale bytes
/// decodes identically. Only large buffers are pooled, at most [`RING_POOL_BUFFERS`]
/// per thread, so the pool holds a bounded few MiB per shard.
#[derive(Clone, Copy, Debug, Default)]
struct RingPool;

/// Smallest buffer worth recycling: below it a fresh zeroed allocation is cheap.
const RING_POOL_MIN_BYTES: usize = 64 * 1024;
/// Largest buffer recycled (a 16 MiB window, RFC 7932's largest, plus slack).
const RING_POOL_MAX_BYTES: usize = (16 << 20) + 4096;
/// Buffers kept per thread.
const RING_POOL_BUFFERS: usize = 4;

thread_local! {
    static RING_BUFFERS: std::cell::RefCell<Vec<Box<[u8]>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// A ring-buffer allocation, handed back to the pool when the decoder frees it.
#[derive(Debug, Default)]
struct RingBlock(Box<[u8]>);

impl SliceWrapper<u8> for RingBlock {
    fn slice(&self) -> &[u8] {
        &self.0
    }
}

impl SliceWrapperMut<u8> for RingBlock {
    fn slice_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

impl Allocator<u8> for RingPool {
    type AllocatedMemory = RingBlock;

    fn alloc_cell(&mut self, len: usize) -> RingBlock {
        if (RING_POOL_MIN_BYTES..=RING_POOL_MAX_BYTES).contains(&len) {
            let reused = RING_BUFFERS.with(|pool| {
                let mut pool = pool.borrow_mut();
                let at = pool.iter().position(|b| b.len() == len)?;
                Some(pool.swap_remove(at))
            });
            if let Some(buf) = reused {
                return RingBlock(buf);
            }
        }
        RingBlock(vec![0; len].into_boxed_slice())
    }

    fn free_cell(&mut self, block: RingBlock) {
        let len = block.0.len();
        if (RING_POOL_MIN_BYTES..=RING_POOL_MAX_BYTES).contains(&len) {
            RING_BUFFERS.with(|pool| {
                let mut pool = pool.borrow_mut();
                if pool.len() >= RING_POOL_BUFFERS {
                    // Keep the newest sizes: evict the oldest buffer.
                    pool.remove(0);
                }
                pool.push(block.0);
            });
        }
    }
}

/// br: brotli-decompressor's stream state.
struct BrotliDecoder {
    state: BrotliState<RingPool, StandardAlloc, StandardAlloc>,
    done: bool,
}

impl BrotliDecoder {
    fn new() -> Self {
        BrotliDecoder {
            // `new_strict`: RFC 7932 windows only (large-window streams are not `br`).
            state: BrotliState::new_strict(
                RingPool,
                StandardAlloc::default(),
                StandardAlloc::default(),
            ),
            done: false,
        }
    }

    fn push(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        budget: &mut Budget<'_>,
    ) -> Result<(), DecodeError> {
        let mut pos = 0usize;
        while !self.done {
            let room = budget.step_room();
            let mut available_in = input.len() - pos;
            let mut input_offset = pos;
            let mut available_out = room;
            let mut output_offset = 0usize;
            let mut total_out = 0usize;
            let step_out = budget.scratch.get_mut(..room).unwrap_or_default();
            let result = BrotliDecompressStream(
                &mut available_in,
                &mut input_offset,
                input,
                &mut available_out,
                &mut output_offset,
                step_out,
                &mut total_out,
                &mut self.state,
            );
            out.extend_from_slice(step_out.get(..output_offset).unwrap_or_default());
            pos = input_offset;
            budget.add_output(output_offset)?;
            match result {
                BrotliResult::ResultSuccess => self.done = true,
                BrotliResult::NeedsMoreInput => return Ok(()),
                BrotliResult::NeedsMoreOutput => {}
                BrotliResult::ResultFailure => return Err(DecodeError::Corrupt),
            }
        }
        // Bytes after the end of the stream are ignored, as for deflate.
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn raw_deflate(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn brotli(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        {
            let mut w = ::brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
            w.write_all(data).unwrap();
        }
        out
    }

    fn limits() -> DecodeLimits {
        DecodeLimits {
            max_decoded_bytes: 1 << 24,
            max_expansion_ratio: 0,
        }
    }

    /// Decodes `input` whole and in pieces of `piece` bytes; both must agree.
    fn decode_with(
        encoding: ContentEncoding,
        input: &[u8],
        limits: DecodeLimits,
        piece: usize,
    ) -> Result<Vec<u8>, DecodeError> {
        let run = |size: usize| {
            let mut d = ContentDecoder::new(encoding, limits);
            let mut out = Vec::new();
            for chunk in input.chunks(size.max(1)) {
                d.push(chunk, &mut out)?;
            }
            d.finish(&mut out)?;
            Ok(out)
        };
        let whole = run(usize::MAX);
        let pieces = run(piece);
        assert_eq!(whole, pieces, "{encoding:?} in pieces of {piece}");
        whole
    }

    fn sample() -> Vec<u8> {
        (0..12_000u32)
            .flat_map(|i| format!("<p>line {i} of the page</p>\n").into_bytes())
            .collect()
    }

    #[test]
    fn every_coding_round_trips() {
        let data = sample();
        let cases = [
            (ContentEncoding::Identity, data.clone()),
            (ContentEncoding::Gzip, gzip(&data)),
            (ContentEncoding::Deflate, zlib(&data)),
            (ContentEncoding::Deflate, raw_deflate(&data)),
            (ContentEncoding::Brotli, brotli(&data)),
        ];
        for (encoding, encoded) in cases {
            for piece in [1, 7, 4096] {
                if piece == 1 && encoded.len() > 100_000 {
                    continue;
                }
                let out = decode_with(encoding, &encoded, limits(), piece).unwrap();
                assert!(out == data, "{encoding:?} piece {piece}");
            }
        }
    }

    #[test]
    fn small_and_empty_bodies() {
        for data in [&b""[..], b"a", b"hello"] {
            assert_eq!(
                decode_with(ContentEncoding::Gzip, &gzip(data), limits(), 1).unwrap(),
                data
            );
            assert_eq!(
                decode_with(ContentEncoding::Deflate, &zlib(data), limits(), 1).unwrap(),
                data
            );
            assert_eq!(
                decode_with(ContentEncoding::Deflate, &raw_deflate(data), limits(), 1).unwrap(),
                data
            );
            assert_eq!(
                decode_with(ContentEncoding::Brotli, &brotli(data), limits(), 1).unwrap(),
                data
            );
        }
        // An empty body with a coding is an empty body.
        for encoding in [
            ContentEncoding::Gzip,
            ContentEncoding::Deflate,
            ContentEncoding::Brotli,
        ] {
            assert_eq!(decode_with(encoding, b"", limits(), 1).unwrap(), b"");
        }
    }

    #[test]
    fn gzip_multi_member_and_trailing_padding() {
        let mut input = gzip(b"first ");
        input.extend_from_slice(&gzip(b"second"));
        assert_eq!(
            decode_with(ContentEncoding::Gzip, &input, limits(), 1).unwrap(),
            b"first second"
        );
        input.extend_from_slice(&[0, 0, 0, 0]);
        assert_eq!(
            decode_with(ContentEncoding::Gzip, &input, limits(), 3).unwrap(),
            b"first second"
        );
    }

    #[test]
    fn gzip_optional_header_fields() {
        let mut e = flate2::GzBuilder::new()
            .filename("index.html")
            .comment("a comment")
            .extra(vec![1, 2, 3, 4])
            .write(Vec::new(), flate2::Compression::default());
        e.write_all(b"with fields").unwrap();
        let mut input = e.finish().unwrap();
        assert_eq!(
            decode_with(ContentEncoding::Gzip, &input, limits(), 1).unwrap(),
            b"with fields"
        );
        // FHCRC: add the flag and two header-CRC bytes after the fixed header (+ fields).
        // Fixed header, XLEN and 4 extra bytes, "index.html\0", "a comment\0".
        let header_end = 10 + 2 + 4 + 11 + 10;
        input[3] |= FHCRC;
        input.splice(header_end..header_end, [0xab, 0xcd]);
        assert_eq!(
            decode_with(ContentEncoding::Gzip, &input, limits(), 2).unwrap(),
            b"with fields"
        );
    }

    #[test]
    fn corrupt_and_truncated() {
        let data = sample();
        let good = gzip(&data);
        let mut bad_crc = good.clone();
        let n = bad_crc.len();
        bad_crc[n - 8] ^= 1;
        assert_eq!(
            decode_with(ContentEncoding::Gzip, &bad_crc, limits(), 4096),
            Err(DecodeError::Corrupt)
        );
        let mut bad_size = good.clone();
        bad_size[n - 1] ^= 1;
        assert_eq!(
            decode_with(ContentEncoding::Gzip, &bad_size, limits(), 4096),
            Err(DecodeError::Corrupt)
        );
        let mut bad_magic = good.clone();
        bad_magic[0] = 0;
        assert_eq!(
            decode_with(ContentEncoding::Gzip, &bad_magic, limits(), 4096),
            Err(DecodeError::Corrupt)
        );
        assert_eq!(
            decode_with(
                ContentEncoding::Gzip,
                &good[..good.len() / 2],
                limits(),
                4096
            ),
            Err(DecodeError::Truncated)
        );
        assert_eq!(
            decode_with(
                ContentEncoding::Gzip,
                &good[..good.len() - 3],
                limits(),
                4096
            ),
            Err(DecodeError::Truncated)
        );
        let z = zlib(&data);
        assert_eq!(
            decode_with(ContentEncoding::Deflate, &z[..z.len() / 2], limits(), 4096),
            Err(DecodeError::Truncated)
        );
        let b = brotli(&data);
        assert_eq!(
            decode_with(ContentEncoding::Brotli, &b[..b.len() / 2], limits(), 4096),
            Err(DecodeError::Truncated)
        );
        assert_eq!(
            decode_with(
                ContentEncoding::Brotli,
                b"\xff\xff\xff\xff garbage",
                limits(),
                3
            ),
            Err(DecodeError::Corrupt)
        );
        assert_eq!(
            decode_with(
                ContentEncoding::Deflate,
                b"\xff\xff\xff\xff garbage",
                limits(),
                3
            ),
            Err(DecodeError::Corrupt)
        );
        // Partial output before the error is kept.
        let mut d = ContentDecoder::new(ContentEncoding::Gzip, limits());
        let mut out = Vec::new();
        d.push(&good[..good.len() / 2], &mut out).unwrap();
        assert!(!out.is_empty() && data.starts_with(&out));
        assert_eq!(d.finish(&mut out), Err(DecodeError::Truncated));
        assert_eq!(d.push(b"x", &mut out), Err(DecodeError::Truncated));
    }

    /// 10 MB of zeros gzipped (about 10 KB) with a 1 MB cap: a `TooLarge` outcome after
    /// at most one step of output past the cap, not 10 MB of memory.
    #[test]
    fn gzip_bomb_hits_size_cap() {
        let bomb = gzip(&vec![0u8; 10 * 1024 * 1024]);
        assert!(bomb.len() < 20 * 1024);
        let limits = DecodeLimits {
            max_decoded_bytes: 1024 * 1024,
            max_expansion_ratio: 0,
        };
        for encoding_input in [
            (ContentEncoding::Gzip, bomb.clone()),
            (ContentEncoding::Deflate, zlib(&vec![0u8; 10 * 1024 * 1024])),
            (
                ContentEncoding::Brotli,
                brotli(&vec![0u8; 10 * 1024 * 1024]),
            ),
        ] {
            let (encoding, input) = encoding_input;
            let mut d = ContentDecoder::new(encoding, limits);
            let mut out = Vec::new();
            assert_eq!(
                d.push(&input, &mut out),
                Err(DecodeError::TooLarge),
                "{encoding:?}"
            );
            assert!(
                out.len() as u64 <= limits.max_decoded_bytes + 1,
                "{encoding:?}"
            );
            assert!(out.capacity() <= 4 * 1024 * 1024, "{encoding:?}");
        }
    }

    #[test]
    fn expansion_ratio_cap() {
        let bomb = gzip(&vec![0u8; 10 * 1024 * 1024]);
        let limits = DecodeLimits {
            max_decoded_bytes: 1 << 30,
            max_expansion_ratio: 100,
        };
        let mut d = ContentDecoder::new(ContentEncoding::Gzip, limits);
        let mut out = Vec::new();
        assert_eq!(d.push(&bomb, &mut out), Err(DecodeError::RatioExceeded));
        assert!(out.len() < 2 * 1024 * 1024);
        // Ordinary text (about 10:1) passes the same ratio.
        let data = sample();
        let out = decode_with(ContentEncoding::Gzip, &gzip(&data), limits, 4096).unwrap();
        assert!(out == data);
        // Below the grace size a high ratio is fine.
        let small = vec![b'a'; (RATIO_GRACE_BYTES / 2) as usize];
        assert!(decode_with(ContentEncoding::Gzip, &gzip(&small), limits, 4096).is_ok());
    }

    #[test]
    fn identity_size_cap() {
        let limits = DecodeLimits {
            max_decoded_bytes: 4,
            max_expansion_ratio: 1,
        };
        assert_eq!(
            decode_with(ContentEncoding::Identity, b"1234", limits, 1).unwrap(),
            b"1234"
        );
        assert_eq!(
            decode_with(ContentEncoding::Identity, b"12345", limits, 1),
            Err(DecodeError::TooLarge)
        );
    }

    #[test]
    fn zlib_header_detection() {
        assert!(is_zlib_header([0x78, 0x9c]));
        assert!(is_zlib_header([0x78, 0x01]));
        assert!(is_zlib_header([0x78, 0xda]));
        assert!(!is_zlib_header([0x78, 0x9d]));
        // Preset dictionary: not decodable as zlib.
        assert!(!is_zlib_header([0x78, 0xbb]));
        assert!(!is_zlib_header([0x1f, 0x8b]));
    }

    #[test]
    fn content_encoding_header_table() {
        use ContentEncoding as C;
        type Case = (Option<&'static [u8]>, Result<C, DecodeError>);
        let cases: &[Case] = &[
            (None, Ok(C::Identity)),
            (Some(b""), Ok(C::Identity)),
            (Some(b"identity"), Ok(C::Identity)),
            (Some(b"gzip"), Ok(C::Gzip)),
            (Some(b" GZIP "), Ok(C::Gzip)),
            (Some(b"x-gzip"), Ok(C::Gzip)),
            (Some(b"deflate"), Ok(C::Deflate)),
            (Some(b"br"), Ok(C::Brotli)),
            (Some(b"identity, br"), Ok(C::Brotli)),
            (Some(b"gzip, br"), Err(DecodeError::Unsupported)),
            (Some(b"compress"), Err(DecodeError::Unsupported)),
            (Some(b"zstd"), Err(DecodeError::Unsupported)),
        ];
        for (value, want) in cases {
            assert_eq!(ContentEncoding::from_header(*value), *want, "{value:?}");
        }
    }
}
