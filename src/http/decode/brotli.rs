//! `br` (RFC 7932): brotli-decompressor's streaming state machine in bounded steps, with
//! its ring buffers recycled per thread ([`RingPool`]).

#![deny(clippy::indexing_slicing)]

use brotli_decompressor::{
    Allocator, BrotliDecompressStream, BrotliResult, BrotliState, SliceWrapper, SliceWrapperMut,
    StandardAlloc,
};

use super::{Budget, DecodeError};

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

/// Compressed bytes a `br` body may hold back before decoding starts
/// ([`BrotliDecoder::push`]).
pub(super) const HOLD_BYTES: usize = 64 * 1024;

/// br: brotli-decompressor's stream state.
///
/// A body that arrives in pieces is held back, up to [`HOLD_BYTES`] compressed, and
/// decoded when it is complete ([`BrotliDecoder::flush`] from `finish`) or grows past
/// that. Decoding piece by piece kept a decoder, and its ring buffer of the whole
/// window (4 MiB at the usual lgwin 22, zeroed when new), alive for every response in
/// flight: with more such responses on a thread than [`RING_POOL_BUFFERS`], each took a
/// fresh zeroed buffer, and a crawl whose pages came in pieces (through a SOCKS proxy,
/// or any server writing in small slices) spent half its CPU in `memset`
/// (tools/proxybench, docs/benchmarks.md) and held megabytes per connection. Held
/// back, a page decodes in one pass, one pooled ring buffer at a time per thread.
pub(super) struct BrotliDecoder {
    state: BrotliState<RingPool, StandardAlloc, StandardAlloc>,
    pub(super) done: bool,
    /// Compressed bytes not decoded yet (empty once decoding has started).
    held: Vec<u8>,
    /// Decoding has started: later input goes straight to the decoder.
    streaming: bool,
}

impl BrotliDecoder {
    pub(super) fn new() -> Self {
        BrotliDecoder {
            // `new_strict`: RFC 7932 windows only (large-window streams are not `br`).
            state: BrotliState::new_strict(
                RingPool,
                StandardAlloc::default(),
                StandardAlloc::default(),
            ),
            done: false,
            held: Vec::new(),
            streaming: false,
        }
    }

    /// Takes the next compressed bytes: held back while the body is small, decoded once
    /// it passes [`HOLD_BYTES`].
    pub(super) fn push(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        budget: &mut Budget<'_>,
    ) -> Result<(), DecodeError> {
        if !self.streaming {
            if self.held.len() + input.len() <= HOLD_BYTES {
                self.held.extend_from_slice(input);
                return Ok(());
            }
            self.streaming = true;
            let held = std::mem::take(&mut self.held);
            self.decode(&held, out, budget)?;
        }
        self.decode(input, out, budget)
    }

    /// The body ended: decodes what was held back.
    pub(super) fn flush(
        &mut self,
        out: &mut Vec<u8>,
        budget: &mut Budget<'_>,
    ) -> Result<(), DecodeError> {
        self.streaming = true;
        let held = std::mem::take(&mut self.held);
        if held.is_empty() {
            return Ok(());
        }
        self.decode(&held, out, budget)
    }

    fn decode(
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
