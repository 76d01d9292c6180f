//! `deflate`: the bounded inflate step shared with gzip, and the zlib-or-raw sniffing
//! decoder (a valid RFC 1950 header selects zlib, anything else raw RFC 1951 deflate, as
//! browsers do).

#![deny(clippy::indexing_slicing)]

use flate2::{Decompress, FlushDecompress, Status};

use super::{Budget, DecodeError};

/// Inflates `input` with `z` until the input is used up, the stream ends, or an error;
/// returns the bytes consumed and whether the deflate stream ended. Every output byte is
/// also passed to `on_output` (the gzip CRC).
pub(super) fn inflate(
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
pub(super) enum DeflateState {
    Sniff { buf: [u8; 2], len: usize },
    Stream { z: Box<Decompress>, ended: bool },
}

impl DeflateState {
    pub(super) fn push(
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

    pub(super) fn is_complete(&self) -> bool {
        matches!(self, DeflateState::Stream { ended: true, .. })
    }
}

/// RFC 1950 §2.2: CM = 8, window ≤ 32 KiB, FCHECK valid, no preset dictionary.
pub(super) fn is_zlib_header([cmf, flg]: [u8; 2]) -> bool {
    cmf & 0x0f == 8
        && cmf >> 4 <= 7
        && (u16::from(cmf) << 8 | u16::from(flg)) % 31 == 0
        && flg & 0x20 == 0
}
