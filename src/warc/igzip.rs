//! ISA-L's igzip, called through its C API (`isal-sys`), one stateless call per gzip
//! member, with the stream and the level buffer kept between members.
//!
//! Why not the `isal-rs` wrapper: it builds a fresh 82 KB `isal_zstream` on the stack
//! for every call (copied twice as it moves), allocates and zeroes the level buffer
//! (276 KiB at igzip's level 1) for every call, and calls `assume_init` on a
//! `hufftables` struct ISA-L never writes (undefined behaviour in safe code). Here the
//! stream is boxed once and `isal_deflate_stateless_init` resets it, and the level
//! buffer is allocated once per encoder (ISA-L initializes the part it uses itself).
//!
//! Level 0 writes every member with one set of Huffman codes given beforehand
//! ([`HuffmanCodes`]): ISA-L's default codes, deflate's fixed ones, or codes fitted to
//! small records, built once per process from a built-in sample. None of these builds
//! a code per member, which is what libdeflate's cost is on small records (`docs/warc.md`).
//!
//! The whole input is in memory (a serialized record), so the stateless call
//! compresses it in one go; the output buffer gets ISA-L's documented bound (the input
//! as stored blocks plus headers), so it never overflows.

#![allow(
    unsafe_code,
    reason = "ISA-L's C API: the stream init and the stateless deflate call, a zeroed C \
              struct, and the output length ISA-L wrote (docs/safety.md)"
)]

use std::io;
use std::sync::OnceLock;

use isal_sys::igzip_lib as sys;

/// igzip's own levels: 0 (fastest, no level buffer), 1 and 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IgzipLevel {
    Zero,
    One,
    Three,
}

impl IgzipLevel {
    fn number(self) -> u32 {
        match self {
            Self::Zero => 0,
            Self::One => 1,
            Self::Three => 3,
        }
    }

    /// ISA-L's suggested level-buffer size for the level (`ISAL_DEF_LVLx_DEFAULT`).
    fn buffer_bytes(self) -> usize {
        match self {
            Self::Zero => sys::ISAL_DEF_LVL0_DEFAULT as usize,
            Self::One => sys::ISAL_DEF_LVL1_DEFAULT as usize,
            Self::Three => sys::ISAL_DEF_LVL3_DEFAULT as usize,
        }
    }
}

/// The Huffman codes igzip's level 0 writes with (levels 1 and 3 build their own for
/// each block and ignore this).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HuffmanCodes {
    /// ISA-L's built-in codes, made for general data (about 110 bytes of block header
    /// in every member).
    Default,
    /// deflate's fixed codes (RFC 1951, 3.2.6): no block header, but 8 or 9 bits for
    /// every literal.
    Fixed,
    /// Codes fitted to WARC and HTTP heads and `outlink:` lines ([`SMALL_RECORD_SAMPLE`]),
    /// built once per process (78 bytes of block header): for the records of a capture
    /// other than the page, 0.3-3 KB.
    SmallRecords,
}

/// A reusable igzip compressor for whole gzip members.
pub struct Igzip {
    /// Boxed: 82 KB, and ISA-L keeps pointers into the caller's buffers only for the
    /// duration of a call, so the box never needs to stay pinned between calls.
    stream: Box<sys::isal_zstream>,
    level: IgzipLevel,
    codes: HuffmanCodes,
    level_buf: Vec<u8>,
}

// SAFETY: the raw pointers inside the stream point into the caller's buffers only
// during `compress` (they are nulled before it returns) or to Huffman tables in a
// `static` (ISA-L's or ours, never written once built); ISA-L keeps no thread-local
// state, so the compressor may move to another thread between calls.
unsafe impl Send for Igzip {}

impl std::fmt::Debug for Igzip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Igzip")
            .field("level", &self.level)
            .finish_non_exhaustive()
    }
}

impl Igzip {
    /// A compressor at `level`.
    pub fn new(level: IgzipLevel) -> Self {
        Self::with_codes(level, HuffmanCodes::Default)
    }

    /// A compressor at `level` writing with `codes` (at level 0; the other levels make
    /// their own).
    pub fn with_codes(level: IgzipLevel, codes: HuffmanCodes) -> Self {
        // SAFETY: `isal_zstream` is a C struct of integers, raw pointers and arrays of
        // them (bindgen's enums are `c_uint` aliases), for which all-zero bytes are a
        // valid value; `isal_deflate_stateless_init` sets every field it reads before
        // each call anyway. Tested by `members_round_trip_at_every_level`.
        let stream: Box<sys::isal_zstream> = unsafe { Box::new(std::mem::zeroed()) };
        Self {
            stream,
            level,
            codes,
            level_buf: vec![0; level.buffer_bytes()],
        }
    }

    /// The most bytes a member of `len` input bytes can take: the input as stored
    /// blocks (5 bytes a 64 KiB block), the gzip header and trailer, with room to spare.
    pub fn bound(len: usize) -> usize {
        len + len / 4096 + 1024
    }

    /// Appends `raw` to `out` as one complete gzip member.
    ///
    /// # Errors
    /// When ISA-L reports a failure (it does not with the bound given); `out` is then
    /// left as it was.
    pub fn compress(&mut self, raw: &[u8], out: &mut Vec<u8>) -> io::Result<()> {
        let (Ok(avail_in), Ok(level_buf_size)) = (
            u32::try_from(raw.len()),
            u32::try_from(self.level_buf.len()),
        ) else {
            return Err(io::Error::other("igzip: record over 4 GiB"));
        };
        let start = out.len();
        let bound = Self::bound(raw.len());
        out.reserve(bound);
        let spare = out.spare_capacity_mut();
        let avail_out = u32::try_from(spare.len().min(bound)).unwrap_or(u32::MAX);
        let stream = &mut *self.stream;
        // SAFETY: `stream` is a valid, exclusively borrowed `isal_zstream`.
        unsafe { sys::isal_deflate_stateless_init(stream) };
        stream.level = self.level.number();
        stream.level_buf = if self.level_buf.is_empty() {
            std::ptr::null_mut()
        } else {
            self.level_buf.as_mut_ptr()
        };
        stream.level_buf_size = level_buf_size;
        stream.gzip_flag = sys::IGZIP_GZIP as u16;
        let (tables, kind) = match self.codes {
            HuffmanCodes::Default => (std::ptr::null_mut(), sys::IGZIP_HUFFTABLE_DEFAULT),
            HuffmanCodes::Fixed => (std::ptr::null_mut(), sys::IGZIP_HUFFTABLE_STATIC),
            // ISA-L reads the tables through a `*mut` it never writes through.
            HuffmanCodes::SmallRecords => match small_record_tables() {
                Some(tables) => (
                    std::ptr::from_ref(tables).cast_mut(),
                    sys::IGZIP_HUFFTABLE_CUSTOM,
                ),
                None => (std::ptr::null_mut(), sys::IGZIP_HUFFTABLE_DEFAULT),
            },
        };
        // SAFETY: `stream` was just initialized (the state ISA-L requires); `tables` is
        // null (not read for these kinds) or points to tables in a `static`, which
        // outlive the stream.
        let rc = unsafe { sys::isal_deflate_set_hufftables(stream, tables, kind as i32) };
        if rc != sys::COMP_OK as i32 {
            return Err(io::Error::other(format!("igzip: tables error {rc}")));
        }
        stream.flush = sys::NO_FLUSH as u16;
        stream.end_of_stream = 1;
        // ISA-L reads the input through a `*mut` it never writes through.
        stream.next_in = raw.as_ptr().cast_mut();
        stream.avail_in = avail_in;
        stream.next_out = spare.as_mut_ptr().cast::<u8>();
        stream.avail_out = avail_out;
        // SAFETY: `next_in`/`avail_in` describe `raw`, borrowed for this call;
        // `next_out`/`avail_out` describe uninitialized spare capacity of `out` that
        // ISA-L only writes; `level_buf`/`level_buf_size` describe our buffer (or null
        // and 0 at level 0, which needs none). None of these pointers is kept after
        // the call: the next call re-initializes the stream.
        let rc = unsafe { sys::isal_deflate_stateless(stream) };
        let written = stream.total_out as usize;
        stream.next_in = std::ptr::null_mut();
        stream.next_out = std::ptr::null_mut();
        stream.level_buf = std::ptr::null_mut();
        if rc != sys::COMP_OK as i32 || written > avail_out as usize {
            return Err(io::Error::other(format!("igzip: error {rc}")));
        }
        // SAFETY: ISA-L wrote `written` bytes (at most `avail_out`, checked above) at
        // the start of the spare capacity.
        unsafe { out.set_len(start + written) };
        Ok(())
    }
}

/// What [`HuffmanCodes::SmallRecords`] is fitted to (typical text, not taken from any
/// benchmark's pages): the records of a capture other than
/// a page's response, as the writer serializes them (a WARC `request` record with its
/// HTTP request head, a `metadata` record with `via`, `hopsFromSeed` and `outlink:`
/// lines, a `revisit`), with typical URLs. Each record is counted as its own member.
const SMALL_RECORD_SAMPLE: [&str; 3] = [
    "WARC/1.1\r\nWARC-Type: request\r\nWARC-Record-ID: <urn:uuid:0a8f2c4e-7b1d-4e59-9c3a-5f6d2e8b1a47>\r\n\
     WARC-Date: 2026-12-06T06:34:07.123456Z\r\nWARC-Target-URI: https://www.example.org/news/2026/12/climate-report-finds-record-heat.html\r\n\
     WARC-IP-Address: 93.184.216.34\r\nWARC-Concurrent-To: <urn:uuid:3e5b9d71-24c8-4f0a-b6e2-91d7c4a8f053>\r\n\
     WARC-Block-Digest: sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\r\nContent-Type: application/http; msgtype=request\r\n\
     Content-Length: 243\r\n\r\nGET /news/2026/12/climate-report-finds-record-heat.html HTTP/1.1\r\nHost: www.example.org\r\n\
     User-Agent: trawl/0.1 (+https://github.com/trawl-crawler/trawl)\r\nFrom: crawler@example.com\r\n\
     Accept: text/html,application/xhtml+xml,*/*;q=0.8\r\nAccept-Encoding: gzip, deflate, br, zstd\r\n\r\n\r\n\r\n",
    "WARC/1.1\r\nWARC-Type: metadata\r\nWARC-Record-ID: <urn:uuid:c94b1e07-5d3a-4f86-a2e9-6b0f7d18c325>\r\n\
     WARC-Date: 2026-12-06T06:34:07.123456Z\r\nWARC-Target-URI: https://www.example.org/news/2026/12/climate-report-finds-record-heat.html\r\n\
     WARC-Concurrent-To: <urn:uuid:3e5b9d71-24c8-4f0a-b6e2-91d7c4a8f053>\r\n\
     WARC-Block-Digest: sha1:V7LQ2DKX4MZ3QF6TNB5R8WJYHC2GPA9E\r\nContent-Type: application/warc-fields\r\n\
     Content-Length: 1123\r\n\r\nvia: https://www.example.org/news/\r\nhopsFromSeed: LL\r\n\
     fetchTimeMs: 12\r\noutlink: https://www.example.org/ L\r\noutlink: https://www.example.org/news/ L\r\n\
     outlink: https://www.example.org/news/2026/12/storm-season-ends-early.html L\r\n\
     outlink: https://www.example.org/science/index-of-bridge-was-431.html L\r\n\
     outlink: https://www.example.org/sport/the-final-match-report-1891.html L\r\n\
     outlink: https://www.example.org/culture/review-a-new-museum-opens-751.html L\r\n\
     outlink: https://www.example.org/about/contact?lang=en&ref=footer L\r\n\
     outlink: https://cdn.example.net/static/css/site-2026.min.css E\r\n\
     outlink: https://cdn.example.net/static/js/app.bundle.4f9a1c.js E\r\n\
     outlink: https://cdn.example.net/images/2026/12/heat-map_1200x630.jpg E\r\n\
     outlink: http://127.0.0.31/science/crawler-link-on-1481.html L\r\n\
     outlink: http://127.0.0.31/science/to-review-crawler-1321.html L\r\n\
     outlink: http://127.0.0.31/world/at-on-status-752.html L\r\n\
     outlink: https://en.wikipedia.org/wiki/Web_crawler L\r\n\r\n\r\n",
    "WARC/1.1\r\nWARC-Type: revisit\r\nWARC-Record-ID: <urn:uuid:5f2a8e41-93c7-4b0d-8e16-d4a7b92c0f58>\r\n\
     WARC-Date: 2026-12-06T06:34:09.654321Z\r\nWARC-Target-URI: https://www.example.org/news/?page=2\r\n\
     WARC-IP-Address: 93.184.216.34\r\nWARC-Profile: http://netpreserve.org/warc/1.1/revisit/identical-payload-digest\r\n\
     WARC-Refers-To-Target-URI: https://www.example.org/news/\r\nWARC-Refers-To-Date: 2026-12-06T06:30:01.000000Z\r\n\
     WARC-Payload-Digest: sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\r\nWARC-Block-Digest: sha1:QW4BZ7N2YH5K3RDXJ6CTM8GPVF9LE2SA\r\n\
     Content-Type: application/http; msgtype=response\r\nContent-Length: 262\r\n\r\n\
     HTTP/1.1 200 OK\r\nServer: nginx/1.24.0\r\nDate: Sun, 06 Dec 2026 06:34:09 GMT\r\n\
     Content-Type: text/html; charset=utf-8\r\nContent-Length: 20513\r\nLast-Modified: Fri, 27 Nov 2026 18:00:00 GMT\r\n\
     Connection: keep-alive\r\nETag: \"6745a1b0-5021\"\r\nAccept-Ranges: bytes\r\n\r\n\r\n\r\n",
];

/// The [`HuffmanCodes::SmallRecords`] tables, built on first use from
/// [`SMALL_RECORD_SAMPLE`] (ISA-L gives every symbol a code, so any input encodes);
/// `None` if ISA-L refused to build them (it does not on this sample).
fn small_record_tables() -> Option<&'static sys::isal_hufftables> {
    static TABLES: OnceLock<Option<Box<sys::isal_hufftables>>> = OnceLock::new();
    TABLES
        .get_or_init(|| {
            // SAFETY: both are C structs of integer arrays, for which all-zero bytes are
            // a valid value: an empty histogram, and tables ISA-L overwrites.
            let (mut histogram, mut tables): (
                Box<sys::isal_huff_histogram>,
                Box<sys::isal_hufftables>,
            ) = unsafe { (Box::new(std::mem::zeroed()), Box::new(std::mem::zeroed())) };
            for record in SMALL_RECORD_SAMPLE {
                let len = i32::try_from(record.len()).unwrap_or(i32::MAX);
                // SAFETY: ISA-L reads `len` bytes of `record` (through a `*mut` it never
                // writes through) and adds to `histogram`, exclusively borrowed.
                unsafe {
                    sys::isal_update_histogram(record.as_ptr().cast_mut(), len, &mut *histogram);
                }
            }
            // SAFETY: both pointers are to valid, exclusively borrowed structs.
            let rc = unsafe { sys::isal_create_hufftables(&mut *tables, &mut *histogram) };
            (rc == 0).then_some(tables)
        })
        .as_deref()
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    fn gunzip(member: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(member)
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    #[test]
    fn members_round_trip_at_every_level() {
        let text: Vec<u8> = b"<p>a crawler's page of text, <a href=\"/x\">links</a></p>\n"
            .iter()
            .copied()
            .cycle()
            .take(150_000)
            .collect();
        let noise: Vec<u8> = (0..200_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let every_byte: Vec<u8> = (0..=255u8).rev().cycle().take(3000).collect();
        let cases = [
            (IgzipLevel::Zero, HuffmanCodes::Default),
            (IgzipLevel::Zero, HuffmanCodes::Fixed),
            (IgzipLevel::Zero, HuffmanCodes::SmallRecords),
            (IgzipLevel::One, HuffmanCodes::Default),
            (IgzipLevel::Three, HuffmanCodes::Default),
            (IgzipLevel::One, HuffmanCodes::SmallRecords),
        ];
        for (level, codes) in cases {
            let mut z = Igzip::with_codes(level, codes);
            let inputs = [&b""[..], b"x", &text[..100], &every_byte, &text, &noise];
            for input in inputs {
                // Twice, and after other inputs: the reused state must not leak.
                for _ in 0..2 {
                    let mut out = b"prefix".to_vec();
                    z.compress(input, &mut out).unwrap();
                    assert_eq!(&out[..6], b"prefix");
                    assert!(out.len() - 6 <= Igzip::bound(input.len()));
                    let case = format!("{level:?} {codes:?} {}", input.len());
                    assert_eq!(gunzip(&out[6..]), input, "{case}");
                }
            }
            let mut out = Vec::new();
            z.compress(&text, &mut out).unwrap();
            assert!(
                out.len() < text.len() / 10,
                "{level:?} {codes:?} compresses"
            );
        }
    }

    /// The codes fitted to small records: built once, and on a capture's `metadata`
    /// record (not the sample's) smaller than both other kinds of codes at level 0.
    #[test]
    fn small_record_codes_are_built_once_and_fit_small_records() {
        let first = small_record_tables().unwrap();
        assert!(std::ptr::eq(first, small_record_tables().unwrap()));
        let mut metadata = String::from(
            "WARC/1.1\r\nWARC-Type: metadata\r\nWARC-Record-ID: \
             <urn:uuid:00000000-0000-0000-0000-000000000007>\r\n\
             WARC-Date: 2026-11-28T06:00:00.000000Z\r\n\
             WARC-Target-URI: http://10.1.2.3/shop/item-77.html\r\n\
             Content-Type: application/warc-fields\r\nContent-Length: 999\r\n\r\n\
             via: http://10.1.2.3/shop/\r\nhopsFromSeed: LLL\r\n",
        );
        let words = [
            "garden", "river", "budget", "museum", "queue", "station", "theatre",
        ];
        let sections = ["news", "sport", "travel", "food", "tech"];
        for i in 0..40 {
            let (a, b) = (words[i % 7], words[i * 3 % 7]);
            let section = sections[i % 5];
            metadata += &format!(
                "outlink: http://10.1.2.3/{section}/{a}-{b}-{}.html L\r\n",
                i * 37
            );
        }
        let size = |codes| {
            let mut out = Vec::new();
            Igzip::with_codes(IgzipLevel::Zero, codes)
                .compress(metadata.as_bytes(), &mut out)
                .unwrap();
            assert_eq!(gunzip(&out), metadata.as_bytes());
            out.len()
        };
        let fitted = size(HuffmanCodes::SmallRecords);
        assert!(fitted < size(HuffmanCodes::Default), "{fitted}");
        assert!(fitted < size(HuffmanCodes::Fixed), "{fitted}");
    }
}
