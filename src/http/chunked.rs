//! The chunked transfer coding (RFC 9112 §7.1), decoded as a sans-IO state machine.
//!
//! The decoder never buffers: it walks the framing bytes one state at a time and hands
//! back the chunk data as ranges of the caller's input, so a caller that caps the body
//! (see [`super::response::ResponseReader`]) can stop in the middle of a chunk, and a
//! caller that does not cap it copies each data byte exactly once.
//!
//! Leniency, chosen to match what deployed servers send (and what browsers accept):
//! - a bare LF ends a line wherever CRLF is expected;
//! - spaces or tabs after the chunk size are skipped (the grammar allows them only
//!   before `;`, some servers pad the size);
//! - chunk extensions are skipped without interpretation;
//! - trailer fields are read and discarded (RFC 9110 §6.5 lets a recipient discard them);
//!   their total size is capped by [`ChunkedLimits::max_trailer_bytes`].
//!
//! Strictness, chosen so that framing can never be misread:
//! - the size must be at least one hex digit and must fit in a `u64`;
//! - chunk data must be followed by exactly CRLF or LF;
//! - a CR anywhere in the framing must be followed by LF;
//! - a size line (size plus extensions) longer than [`ChunkedLimits::max_line_bytes`] is
//!   an error, so an endless line cannot keep the decoder busy without progress.

#![deny(clippy::indexing_slicing)]

use std::fmt;
use std::ops::Range;

use crate::ascii::hex_value;

/// Caps on the framing bytes a chunked body may carry besides its data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkedLimits {
    /// Longest chunk-size line (hex size, padding and extensions, without the line end).
    pub max_line_bytes: usize,
    /// Most bytes of trailer section (all trailer lines and their line ends).
    pub max_trailer_bytes: usize,
}

impl Default for ChunkedLimits {
    /// 4 KiB per size line and 16 KiB of trailers: far above anything legitimate (a size
    /// line is normally under 20 bytes, trailers are rare) and small enough to bound work.
    fn default() -> Self {
        ChunkedLimits {
            max_line_bytes: 4096,
            max_trailer_bytes: 16 * 1024,
        }
    }
}

/// Ways a chunked body can be malformed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkedError {
    /// The chunk size is missing or contains a byte that is not a hex digit.
    InvalidSize,
    /// The chunk size does not fit in 64 bits.
    SizeOverflow,
    /// A size line (size and extensions) is longer than the limit.
    LineTooLong,
    /// A CR not followed by LF, or a control byte inside a size line or trailer.
    InvalidLineEnd,
    /// Chunk data is not followed by a line end.
    MissingDataTerminator,
    /// The trailer section is larger than the limit.
    TrailersTooLarge,
}

impl fmt::Display for ChunkedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ChunkedError::InvalidSize => "invalid chunk size",
            ChunkedError::SizeOverflow => "chunk size overflows 64 bits",
            ChunkedError::LineTooLong => "chunk size line too long",
            ChunkedError::InvalidLineEnd => "invalid line end in chunked framing",
            ChunkedError::MissingDataTerminator => "chunk data not followed by a line end",
            ChunkedError::TrailersTooLarge => "chunked trailers too large",
        })
    }
}

impl std::error::Error for ChunkedError {}

/// One step of decoding: how much input was consumed, which part of it is chunk data,
/// and whether the last chunk and trailers have been seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// Input bytes consumed by this step (framing and data).
    pub consumed: usize,
    /// The chunk data found in this step, as a range of the input (possibly empty).
    /// It always lies inside `0..consumed`.
    pub data: Range<usize>,
    /// The body is complete: bytes after `consumed` belong to the next message.
    pub done: bool,
}

/// Where the decoder is inside the chunked body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Reading hex digits of a chunk size; `digits` counts the digits seen so far.
    Size { value: u64, digits: u32 },
    /// After the size digits: optional padding, then `;` or the line end.
    AfterSize { value: u64 },
    /// Inside chunk extensions, skipping until the line end.
    Extension { value: u64 },
    /// Saw CR at the end of the size line; LF must follow.
    SizeLf { value: u64 },
    /// Inside chunk data, `remaining` bytes to go.
    Data { remaining: u64 },
    /// Chunk data finished; CRLF or LF must follow.
    DataCr,
    /// Saw CR after chunk data; LF must follow.
    DataLf,
    /// At the start of a trailer line (or of the final empty line).
    TrailerStart,
    /// Inside a trailer field line.
    TrailerLine,
    /// Saw CR inside a trailer line; LF must follow.
    TrailerLf,
    /// Saw CR at the start of a trailer line: this is the final empty line.
    FinalLf,
    /// The body is complete.
    Done,
}

/// Sans-IO decoder for one chunked body.
#[derive(Clone, Debug)]
pub struct ChunkedDecoder {
    state: State,
    limits: ChunkedLimits,
    /// Bytes of the current size line, for [`ChunkedLimits::max_line_bytes`].
    line_bytes: usize,
    /// Bytes of the trailer section so far, for [`ChunkedLimits::max_trailer_bytes`].
    trailer_bytes: usize,
}

impl Default for ChunkedDecoder {
    fn default() -> Self {
        ChunkedDecoder::new(ChunkedLimits::default())
    }
}

impl ChunkedDecoder {
    /// A decoder positioned at the first chunk-size line.
    pub fn new(limits: ChunkedLimits) -> Self {
        ChunkedDecoder {
            state: State::Size {
                value: 0,
                digits: 0,
            },
            limits,
            line_bytes: 0,
            trailer_bytes: 0,
        }
    }

    /// True once the last chunk and the trailer section have been read.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// True while inside chunk data (the next input bytes are data).
    pub fn is_in_data(&self) -> bool {
        matches!(self.state, State::Data { .. })
    }

    /// Consumes framing bytes from `input` until it reaches chunk data, the end of the
    /// body, or the end of the input, and returns the data found (at most the rest of
    /// the current chunk, and never more than `max_data` bytes).
    ///
    /// Call it again with the unconsumed input to continue. A step with an empty data
    /// range and `consumed == input.len()` means more input is needed (or the body is
    /// done).
    ///
    /// # Errors
    /// A [`ChunkedError`] when the framing is malformed; the decoder must then be
    /// discarded (the connection's framing is lost).
    pub fn step(&mut self, input: &[u8], max_data: u64) -> Result<Step, ChunkedError> {
        let mut pos = 0usize;
        while let Some(&byte) = input.get(pos) {
            match self.state {
                State::Data { remaining } => {
                    let available = (input.len() - pos) as u64;
                    let take = remaining.min(available).min(max_data);
                    // `take <= available`, which is a usize, so the cast is lossless.
                    let end = pos + take as usize;
                    let left = remaining - take;
                    self.state = if left == 0 {
                        State::DataCr
                    } else {
                        State::Data { remaining: left }
                    };
                    return Ok(Step {
                        consumed: end,
                        data: pos..end,
                        done: false,
                    });
                }
                State::Done => break,
                _ => {
                    pos += 1;
                    self.framing_byte(byte)?;
                    if self.state == State::Done {
                        break;
                    }
                }
            }
        }
        Ok(Step {
            consumed: pos,
            data: pos..pos,
            done: self.state == State::Done,
        })
    }

    /// Decodes as much of `input` as possible, appending chunk data to `out`.
    /// Returns the bytes consumed and whether the body is complete.
    ///
    /// # Errors
    /// As for [`ChunkedDecoder::step`].
    pub fn decode(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(usize, bool), ChunkedError> {
        let mut pos = 0usize;
        loop {
            let rest = input.get(pos..).unwrap_or_default();
            let step = self.step(rest, u64::MAX)?;
            if let Some(data) = rest.get(step.data.clone()) {
                out.extend_from_slice(data);
            }
            pos += step.consumed;
            if step.done || pos >= input.len() {
                return Ok((pos, step.done));
            }
        }
    }

    /// Advances the framing state machine by one byte (any state but `Data`/`Done`).
    fn framing_byte(&mut self, byte: u8) -> Result<(), ChunkedError> {
        self.state = match self.state {
            State::Size { value, digits } => {
                self.count_line_byte()?;
                match hex_value(byte) {
                    Some(d) => {
                        // Leading zeros never overflow; they only count against the line
                        // length cap.
                        if value > (u64::MAX >> 4) {
                            return Err(ChunkedError::SizeOverflow);
                        }
                        State::Size {
                            value: (value << 4) | u64::from(d),
                            digits: digits.saturating_add(1),
                        }
                    }
                    None if digits == 0 => return Err(ChunkedError::InvalidSize),
                    None => self.after_size(byte, value)?,
                }
            }
            State::AfterSize { value } => {
                self.count_line_byte()?;
                self.after_size(byte, value)?
            }
            State::Extension { value } => {
                self.count_line_byte()?;
                match byte {
                    b'\r' => State::SizeLf { value },
                    b'\n' => self.end_size_line(value),
                    // Extensions are tokens, quoted strings and separators; any other
                    // control byte means the stream is not chunked framing.
                    0..=8 | 10..=31 | 127 => return Err(ChunkedError::InvalidLineEnd),
                    _ => State::Extension { value },
                }
            }
            State::SizeLf { value } => {
                if byte != b'\n' {
                    return Err(ChunkedError::InvalidLineEnd);
                }
                self.end_size_line(value)
            }
            State::DataCr => match byte {
                b'\r' => State::DataLf,
                b'\n' => self.start_size_line(),
                _ => return Err(ChunkedError::MissingDataTerminator),
            },
            State::DataLf => {
                if byte != b'\n' {
                    return Err(ChunkedError::MissingDataTerminator);
                }
                self.start_size_line()
            }
            State::TrailerStart => {
                self.count_trailer_byte()?;
                match byte {
                    b'\r' => State::FinalLf,
                    b'\n' => State::Done,
                    0..=8 | 11..=31 | 127 => return Err(ChunkedError::InvalidLineEnd),
                    _ => State::TrailerLine,
                }
            }
            State::TrailerLine => {
                self.count_trailer_byte()?;
                match byte {
                    b'\r' => State::TrailerLf,
                    b'\n' => State::TrailerStart,
                    0..=8 | 11..=31 | 127 => return Err(ChunkedError::InvalidLineEnd),
                    _ => State::TrailerLine,
                }
            }
            State::TrailerLf => {
                self.count_trailer_byte()?;
                if byte != b'\n' {
                    return Err(ChunkedError::InvalidLineEnd);
                }
                State::TrailerStart
            }
            State::FinalLf => {
                self.count_trailer_byte()?;
                if byte != b'\n' {
                    return Err(ChunkedError::InvalidLineEnd);
                }
                State::Done
            }
            // Not reached: `step` handles these without calling here.
            State::Data { .. } | State::Done => self.state,
        };
        Ok(())
    }

    /// The byte after the size digits (and padding): padding, `;` or a line end.
    fn after_size(&mut self, byte: u8, value: u64) -> Result<State, ChunkedError> {
        Ok(match byte {
            b' ' | b'\t' => State::AfterSize { value },
            b';' => State::Extension { value },
            b'\r' => State::SizeLf { value },
            b'\n' => self.end_size_line(value),
            _ => return Err(ChunkedError::InvalidSize),
        })
    }

    fn end_size_line(&mut self, value: u64) -> State {
        self.line_bytes = 0;
        if value == 0 {
            State::TrailerStart
        } else {
            State::Data { remaining: value }
        }
    }

    fn start_size_line(&mut self) -> State {
        self.line_bytes = 0;
        State::Size {
            value: 0,
            digits: 0,
        }
    }

    fn count_line_byte(&mut self) -> Result<(), ChunkedError> {
        self.line_bytes += 1;
        if self.line_bytes > self.limits.max_line_bytes {
            return Err(ChunkedError::LineTooLong);
        }
        Ok(())
    }

    fn count_trailer_byte(&mut self) -> Result<(), ChunkedError> {
        self.trailer_bytes += 1;
        if self.trailer_bytes > self.limits.max_trailer_bytes {
            return Err(ChunkedError::TrailersTooLarge);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes `input` whole and byte by byte (which must agree); returns
    /// (data, consumed, done) or the error.
    fn decode(input: &[u8]) -> Result<(Vec<u8>, usize, bool), ChunkedError> {
        let mut whole = ChunkedDecoder::default();
        let mut out = Vec::new();
        let result = whole
            .decode(input, &mut out)
            .map(|(n, done)| (out, n, done));

        let mut bytewise = ChunkedDecoder::default();
        let mut out = Vec::new();
        let mut consumed = 0;
        let mut done = false;
        let mut error = None;
        for b in input {
            if done {
                break;
            }
            match bytewise.decode(std::slice::from_ref(b), &mut out) {
                Ok((n, d)) => {
                    consumed += n;
                    done = d;
                }
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        let bytewise_result = match error {
            Some(e) => Err(e),
            None => Ok((out, consumed, done)),
        };
        assert_eq!(result, bytewise_result, "{input:?}");
        result
    }

    #[test]
    fn decoding_table() {
        use ChunkedError as E;
        type Expect = Result<(&'static [u8], bool), ChunkedError>;
        let cases: &[(&[u8], Expect)] = &[
            (b"0\r\n\r\n", Ok((b"", true))),
            (b"5\r\nhello\r\n0\r\n\r\n", Ok((b"hello", true))),
            (b"5\nhello\n0\n\n", Ok((b"hello", true))),
            (b"A\r\n0123456789\r\n0\r\n\r\n", Ok((b"0123456789", true))),
            (b"a\r\n0123456789\r\n0\r\n\r\n", Ok((b"0123456789", true))),
            (b"000005\r\nhello\r\n0000\r\n\r\n", Ok((b"hello", true))),
            (
                b"5;name=value;other\r\nhello\r\n0;last\r\n\r\n",
                Ok((b"hello", true)),
            ),
            (
                b"5 ; name=\"quoted; value\"\r\nhello\r\n0\r\n\r\n",
                Ok((b"hello", true)),
            ),
            (b"5  \r\nhello\r\n0\r\n\r\n", Ok((b"hello", true))),
            (
                b"5\r\nhello\r\n0\r\nExpires: never\r\nX-Sum: 1\r\n\r\n",
                Ok((b"hello", true)),
            ),
            (b"5\r\nhello\r\n0\r\nX: 1\n\n", Ok((b"hello", true))),
            (b"ffffffffffffffff\r\nab", Ok((b"ab", false))),
            (b"5\r\nhel", Ok((b"hel", false))),
            (b"5\r\nhello\r\n0\r\n", Ok((b"hello", false))),
            (b"\r\n", Err(E::InvalidSize)),
            (b";ext\r\n", Err(E::InvalidSize)),
            (b"-1\r\n", Err(E::InvalidSize)),
            (b"0x5\r\nhello", Err(E::InvalidSize)),
            (b"5 5\r\n", Err(E::InvalidSize)),
            (b"g\r\n", Err(E::InvalidSize)),
            (b"10000000000000000\r\n", Err(E::SizeOverflow)),
            (b"fffffffffffffffff\r\n", Err(E::SizeOverflow)),
            (b"5\rhello", Err(E::InvalidLineEnd)),
            (b"5;a\0b\r\n", Err(E::InvalidLineEnd)),
            (b"5\r\nhelloX\r\n", Err(E::MissingDataTerminator)),
            (b"5\r\nhello\rX", Err(E::MissingDataTerminator)),
            (b"0\r\nX: 1\rY\r\n\r\n", Err(E::InvalidLineEnd)),
            (b"0\r\n\rX", Err(E::InvalidLineEnd)),
        ];
        for (input, expect) in cases {
            let got = decode(input);
            match (got, expect) {
                (Ok((data, consumed, done)), Ok((want, want_done))) => {
                    assert_eq!(&data[..], *want, "{input:?}");
                    assert_eq!(done, *want_done, "{input:?}");
                    if done {
                        assert_eq!(consumed, input.len(), "{input:?}");
                    }
                }
                (Err(e), Err(want)) => assert_eq!(e, *want, "{input:?}"),
                (got, _) => panic!("{input:?}: got {got:?}, want {expect:?}"),
            }
        }
    }

    #[test]
    fn stops_at_end_of_body() {
        let input = b"3\r\nabc\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n";
        let (data, consumed, done) = decode(input).unwrap();
        assert!(done);
        assert_eq!(data, b"abc");
        assert_eq!(&input[consumed..], b"HTTP/1.1 200 OK\r\n");
    }

    #[test]
    fn caps_on_lines_and_trailers() {
        let limits = ChunkedLimits {
            max_line_bytes: 8,
            max_trailer_bytes: 10,
        };
        let mut d = ChunkedDecoder::new(limits);
        assert_eq!(
            d.decode(b"5;abcdefgh\r\n", &mut Vec::new()),
            Err(ChunkedError::LineTooLong)
        );
        let mut d = ChunkedDecoder::new(limits);
        assert_eq!(
            d.decode(b"000000000005\r\n", &mut Vec::new()),
            Err(ChunkedError::LineTooLong)
        );
        let mut d = ChunkedDecoder::new(limits);
        assert_eq!(
            d.decode(b"0\r\nX-Long: 123456\r\n\r\n", &mut Vec::new()),
            Err(ChunkedError::TrailersTooLarge)
        );
        let mut d = ChunkedDecoder::new(limits);
        assert_eq!(
            d.decode(b"0\r\nX: 1\r\n\r\n", &mut Vec::new()),
            Ok((11, true))
        );
    }

    #[test]
    fn step_respects_max_data() {
        let input = b"a\r\n0123456789\r\n0\r\n\r\n";
        let mut d = ChunkedDecoder::default();
        let step = d.step(input, 4).unwrap();
        assert_eq!(&input[step.data.clone()], b"0123");
        assert!(d.is_in_data());
        let rest = &input[step.consumed..];
        let step = d.step(rest, 0).unwrap();
        assert_eq!(step.consumed, 0);
        assert!(step.data.is_empty());
        let step = d.step(rest, u64::MAX).unwrap();
        assert_eq!(&rest[step.data.clone()], b"456789");
        let rest = &rest[step.consumed..];
        let step = d.step(rest, u64::MAX).unwrap();
        assert!(step.done);
        assert_eq!(step.consumed, rest.len());
        assert!(d.is_done());
    }

    /// Random bodies with random chunking, fed in random pieces, decode to the original.
    #[test]
    fn round_trip_random_chunkings() {
        let mut rng = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for _ in 0..200 {
            let len = (next() % 2000) as usize;
            let body: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let mut encoded = Vec::new();
            let mut rest = &body[..];
            while !rest.is_empty() {
                let n = ((next() % 300) as usize + 1).min(rest.len());
                let ext = if next() % 4 == 0 { ";x=y" } else { "" };
                let eol: &[u8] = if next() % 3 == 0 { b"\n" } else { b"\r\n" };
                encoded.extend_from_slice(format!("{n:x}{ext}").as_bytes());
                encoded.extend_from_slice(eol);
                encoded.extend_from_slice(&rest[..n]);
                encoded.extend_from_slice(eol);
                rest = &rest[n..];
            }
            encoded.extend_from_slice(b"0\r\nTrailer: t\r\n\r\n");
            let mut d = ChunkedDecoder::default();
            let mut out = Vec::new();
            let mut pos = 0;
            while pos < encoded.len() {
                let n = ((next() % 50) as usize + 1).min(encoded.len() - pos);
                let (used, done) = d.decode(&encoded[pos..pos + n], &mut out).unwrap();
                pos += used;
                if done {
                    break;
                }
            }
            assert!(d.is_done());
            assert_eq!(pos, encoded.len());
            assert_eq!(out, body);
        }
    }
}
