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

use crate::ascii::trim_ows;

mod brotli;
mod deflate;
mod gzip;

use brotli::BrotliDecoder;
use deflate::DeflateState;
use gzip::GzipState;

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

/// The caps' view for one call, the step buffer allocated on first use.
fn budget<'a>(
    limits: &'a DecodeLimits,
    input_bytes: u64,
    output_bytes: &'a mut u64,
    scratch: &'a mut Vec<u8>,
) -> Budget<'a> {
    if scratch.is_empty() {
        *scratch = vec![0; OUTPUT_STEP_BYTES];
    }
    Budget {
        limits,
        input_bytes,
        output_bytes,
        scratch,
    }
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
        let result = match &mut self.codec {
            Codec::Identity => {
                out.extend_from_slice(input);
                // The ratio is 1: only the size cap applies.
                self.output_bytes += input.len() as u64;
                if self.output_bytes > self.limits.max_decoded_bytes {
                    Err(DecodeError::TooLarge)
                } else {
                    Ok(())
                }
            }
            codec => {
                let mut budget = budget(
                    &self.limits,
                    self.input_bytes,
                    &mut self.output_bytes,
                    &mut self.scratch,
                );
                match codec {
                    Codec::Identity => Ok(()),
                    Codec::Deflate(state) => state.push(input, out, &mut budget),
                    Codec::Gzip(state) => state.push(input, out, &mut budget),
                    Codec::Brotli(state) => state.push(input, out, &mut budget),
                }
            }
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
    pub fn finish(&mut self, out: &mut Vec<u8>) -> Result<(), DecodeError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        if let Codec::Brotli(state) = &mut self.codec {
            // A `br` body held back while it arrived is decoded now.
            let mut budget = budget(
                &self.limits,
                self.input_bytes,
                &mut self.output_bytes,
                &mut self.scratch,
            );
            if let Err(e) = state.flush(out, &mut budget) {
                self.failed = Some(e);
                return Err(e);
            }
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

#[cfg(test)]
mod tests;
