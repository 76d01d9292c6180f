use std::io::Write;

use super::deflate::is_zlib_header;
use super::gzip::FHCRC;
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
        // A small `br` body is held back until the body ends (brotli.rs, HOLD_BYTES):
        // its cap is met at `finish`, with the same bound on memory.
        let pushed = d.push(&input, &mut out);
        let result = pushed.and_then(|()| d.finish(&mut out));
        assert_eq!(result, Err(DecodeError::TooLarge), "{encoding:?}");
        if encoding != ContentEncoding::Brotli {
            assert_eq!(pushed, Err(DecodeError::TooLarge), "{encoding:?}");
        }
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

/// A `br` body that arrives in pieces is held back and decoded once at the end when
/// small, and streamed once it passes `HOLD_BYTES`; either way the output is the same.
#[test]
fn brotli_in_pieces_is_held_back_while_small_and_streamed_past_the_hold() {
    let limits = DecodeLimits {
        max_decoded_bytes: 64 << 20,
        max_expansion_ratio: 0,
    };
    // Text that compresses a little (a pseudo-random walk over words), so the large
    // body's compressed form passes the hold.
    let mut text = Vec::new();
    let mut x: u32 = 7;
    while text.len() < 3 << 20 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        text.extend_from_slice(format!("w{} ", (x >> 8) % 50_000).as_bytes());
    }
    for len in [20_000usize, text.len()] {
        let plain = &text[..len];
        let body = brotli(plain);
        assert_eq!(body.len() > 64 * 1024, len > 20_000, "{}", body.len());
        let mut d = ContentDecoder::new(ContentEncoding::Brotli, limits);
        let mut out = Vec::new();
        for piece in body.chunks(1400) {
            d.push(piece, &mut out).unwrap();
        }
        if body.len() <= 64 * 1024 {
            assert!(out.is_empty(), "a small body is held back until its end");
        } else {
            assert!(!out.is_empty(), "a large body streams");
        }
        d.finish(&mut out).unwrap();
        assert_eq!(out, plain, "{len}");
    }
}
