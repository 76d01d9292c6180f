#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use std::io::{self, Read, Write};

use super::*;

const TEST: Format = Format::new(*b"TRWLTEST", 3, 1 << 16);

// ---- varints ----

#[test]
fn varints_round_trip_at_every_width() {
    let mut values = vec![0u64, 1, 127, 128, 255, 300, 16_383, 16_384, u64::MAX];
    values.extend((0..64).map(|s| 1u64 << s));
    values.extend((1..64).map(|s| (1u64 << s) - 1));
    for v in values {
        let mut buf = Vec::new();
        put_varint(&mut buf, v);
        let bits = 64 - v.leading_zeros() as usize;
        assert_eq!(buf.len(), bits.div_ceil(7).max(1), "width of {v}");
        buf.push(0xAA); // a following field stays put
        let mut input = buf.as_slice();
        assert_eq!(take_varint(&mut input), Ok(v));
        assert_eq!(input, &[0xAA]);
    }
}

#[test]
fn a_varint_cut_short_is_truncated_and_consumes_nothing() {
    let mut buf = Vec::new();
    put_varint(&mut buf, u64::MAX);
    for cut in 0..buf.len() {
        let mut input = &buf[..cut];
        assert_eq!(take_varint(&mut input), Err(VarintError::Truncated));
        assert_eq!(input.len(), cut);
    }
}

#[test]
fn a_varint_beyond_64_bits_is_an_overflow() {
    // Ten bytes whose last carries more than the one bit left.
    let mut ten = vec![0xFF; 9];
    ten.push(0x02);
    assert_eq!(take_varint(&mut ten.as_slice()), Err(VarintError::Overflow));
    // Eleven bytes.
    let mut eleven = vec![0x80; 10];
    eleven.push(0x00);
    let mut input = eleven.as_slice();
    assert_eq!(take_varint(&mut input), Err(VarintError::Overflow));
    assert_eq!(input.len(), 11);
    // The largest ten-byte varint is u64::MAX.
    let mut max = vec![0xFF; 9];
    max.push(0x01);
    assert_eq!(take_varint(&mut max.as_slice()), Ok(u64::MAX));
    // A non-minimal encoding still decodes (readers are lenient, writers minimal).
    assert_eq!(take_varint(&mut [0x80, 0x80, 0x00].as_slice()), Ok(0));
}

#[test]
fn length_prefixed_bytes_round_trip_and_refuse_short_input() {
    let mut buf = Vec::new();
    put_bytes(&mut buf, b"hello");
    put_bytes(&mut buf, b"");
    let mut input = buf.as_slice();
    assert_eq!(take_bytes(&mut input), Ok(&b"hello"[..]));
    assert_eq!(take_bytes(&mut input), Ok(&b""[..]));
    assert!(input.is_empty());
    for cut in 0..6 {
        let mut input = &buf[..cut];
        assert_eq!(take_bytes(&mut input), Err(VarintError::Truncated));
        assert_eq!(input.len(), cut, "nothing consumed on an error");
    }
    let mut huge = Vec::new();
    put_varint(&mut huge, u64::MAX);
    assert!(take_bytes(&mut huge.as_slice()).is_err());
}

// ---- headers ----

#[test]
fn headers_check_magic_length_and_version_in_that_order() {
    let h = TEST.header();
    assert_eq!(&h[..8], b"TRWLTEST");
    assert_eq!(u32_at(&h, 8), Some(3));
    assert_eq!(TEST.check(&h), Ok(()));
    let mut longer = h.to_vec();
    longer.extend_from_slice(b"records");
    assert_eq!(TEST.check(&longer), Ok(()));
    assert_eq!(TEST.check(b""), Err(HeaderError::Truncated));
    assert_eq!(TEST.check(&h[..5]), Err(HeaderError::Truncated));
    assert_eq!(TEST.check(&h[..11]), Err(HeaderError::Truncated));
    assert_eq!(TEST.check(b"NOT"), Err(HeaderError::BadMagic));
    assert_eq!(
        TEST.check(b"TRWLSEG\0\x02\0\0\0"),
        Err(HeaderError::BadMagic)
    );
    let other = Format::new(*b"TRWLTEST", 2, 1).header();
    assert_eq!(
        TEST.check(&other),
        Err(HeaderError::UnsupportedVersion {
            found: 2,
            expected: 3
        })
    );
    assert_eq!(
        HeaderError::UnsupportedVersion {
            found: 2,
            expected: 3
        }
        .to_string(),
        "format version 2 (this build reads version 3)"
    );
}

#[test]
fn little_endian_fields_are_none_past_the_end() {
    let b = [1u8, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0];
    assert_eq!(u32_at(&b, 0), Some(1));
    assert_eq!(u32_at(&b, 4), Some(2));
    assert_eq!(u64_at(&b, 4), Some(2));
    assert_eq!(u32_at(&b, 9), None);
    assert_eq!(u64_at(&b, 5), None);
    assert_eq!(u64_at(&b, usize::MAX - 2), None);
}

// ---- records ----

fn file_of(payloads: &[Vec<u8>]) -> Vec<u8> {
    let mut out = TEST.header().to_vec();
    for p in payloads {
        let n = write_record(&mut out, p).unwrap();
        assert!(n as usize >= p.len() + 5 && n as usize <= p.len() + MAX_FRAME_HEAD_BYTES);
    }
    out
}

fn payloads() -> Vec<Vec<u8>> {
    (0..40u32)
        .map(|i| {
            (0..(i * 37) % 300)
                .map(|j| (i * 31 + j) as u8)
                .collect::<Vec<u8>>()
        })
        .collect()
}

fn read_all(bytes: &[u8]) -> (Vec<Vec<u8>>, Result<(), RecordError>) {
    let mut r = match RecordReader::open(bytes, &TEST) {
        Ok(r) => r,
        Err(e) => return (Vec::new(), Err(e)),
    };
    let mut out = Vec::new();
    let mut buf = Vec::new();
    loop {
        match r.next_record(&mut buf) {
            Ok(Some(_)) => out.push(buf.clone()),
            Ok(None) => return (out, Ok(())),
            Err(e) => return (out, Err(e)),
        }
    }
}

#[test]
fn records_round_trip_with_their_offsets() {
    let want = payloads();
    let bytes = file_of(&want);
    let mut r = RecordReader::open(bytes.as_slice(), &TEST).unwrap();
    let mut buf = Vec::new();
    let mut expect_at = HEADER_BYTES as u64;
    for p in &want {
        assert_eq!(r.next_record(&mut buf).unwrap(), Some(expect_at));
        assert_eq!(&buf, p);
        expect_at = r.offset();
    }
    assert_eq!(r.next_record(&mut buf).unwrap(), None);
    assert_eq!(r.offset(), bytes.len() as u64);
    assert!(r.is_at_end().unwrap());
}

#[test]
fn every_truncation_keeps_the_records_before_it() {
    let want = payloads();
    let bytes = file_of(&want);
    // Record boundaries, to know which cuts are clean.
    let mut ends = vec![HEADER_BYTES];
    let mut r = RecordReader::open(bytes.as_slice(), &TEST).unwrap();
    let mut buf = Vec::new();
    while r.next_record(&mut buf).unwrap().is_some() {
        ends.push(r.offset() as usize);
    }
    for cut in 0..bytes.len() {
        let (got, end) = read_all(&bytes[..cut]);
        assert_eq!(got[..], want[..got.len()], "cut at {cut}");
        if cut < HEADER_BYTES {
            assert!(matches!(
                end,
                Err(RecordError::Header(HeaderError::Truncated))
            ));
        } else if ends.contains(&cut) {
            assert!(end.is_ok(), "cut at a boundary {cut}: {end:?}");
        } else {
            let start = *ends.iter().rev().find(|&&e| e < cut).unwrap() as u64;
            assert!(
                matches!(end, Err(RecordError::Truncated { offset }) if offset == start),
                "cut at {cut}: {end:?}"
            );
        }
    }
}

#[test]
fn every_flipped_byte_is_detected() {
    let want = payloads();
    let bytes = file_of(&want);
    for at in 0..bytes.len() {
        let mut bad = bytes.clone();
        bad[at] ^= 0x41;
        let (got, end) = read_all(&bad);
        assert!(end.is_err(), "flip at {at} went unnoticed");
        for p in &got {
            assert!(want.contains(p), "flip at {at} decoded garbage");
        }
    }
}

#[test]
fn a_bad_checksum_leaves_the_reader_after_the_record() {
    let want = payloads();
    let mut bytes = file_of(&want);
    // The last payload byte of the second record.
    let mut r = RecordReader::open(bytes.as_slice(), &TEST).unwrap();
    let mut buf = Vec::new();
    r.next_record(&mut buf).unwrap();
    let second = r.offset();
    r.next_record(&mut buf).unwrap();
    let after = r.offset() as usize;
    bytes[after - 1] ^= 1;
    let mut r = RecordReader::open(bytes.as_slice(), &TEST).unwrap();
    r.next_record(&mut buf).unwrap();
    assert!(matches!(
        r.next_record(&mut buf),
        Err(RecordError::Checksum { offset }) if offset == second
    ));
    assert_eq!(r.next_record(&mut buf).unwrap(), Some(after as u64));
    assert_eq!(buf, want[2]);
}

#[test]
fn implausible_lengths_stop_without_allocating() {
    let mut bytes = TEST.header().to_vec();
    put_varint(&mut bytes, (1 << 16) + 1);
    bytes.extend_from_slice(&[0; 4]);
    assert!(matches!(
        read_all(&bytes).1,
        Err(RecordError::TooLong { offset: 12 })
    ));
    // Continuation bytes that can only grow past the maximum stop at the third byte,
    // before the input ends.
    let mut bytes = TEST.header().to_vec();
    bytes.extend_from_slice(&[0xFF, 0xFF, 0xFF]);
    assert!(matches!(
        read_all(&bytes).1,
        Err(RecordError::TooLong { offset: 12 })
    ));
    let endless = [0xFFu8; 64];
    let mut r = RecordReader::headless(&endless[..], 0, usize::MAX);
    assert!(matches!(
        r.next_record(&mut Vec::new()),
        Err(RecordError::TooLong { offset: 0 })
    ));
}

#[test]
fn headers_of_other_files_are_refused_before_any_record() {
    let mut other = Format::new(*b"TRWLTEST", 2, 1 << 16).header().to_vec();
    write_record(&mut other, b"x").unwrap();
    assert!(matches!(
        read_all(&other).1,
        Err(RecordError::Header(HeaderError::UnsupportedVersion {
            found: 2,
            ..
        }))
    ));
    assert!(matches!(
        read_all(b"garbage garbage").1,
        Err(RecordError::Header(HeaderError::BadMagic))
    ));
}

/// A reader that hands out one byte at a time and is interrupted in between.
struct Trickle<'a> {
    data: &'a [u8],
    interrupt: bool,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.interrupt = !self.interrupt;
        if self.interrupt {
            return Err(io::ErrorKind::Interrupted.into());
        }
        match (self.data.split_first(), buf.first_mut()) {
            (Some((&b, rest)), Some(slot)) => {
                *slot = b;
                self.data = rest;
                Ok(1)
            }
            _ => Ok(0),
        }
    }
}

#[test]
fn read_full_retries_interruptions_and_counts_a_short_read() {
    let mut t = Trickle {
        data: b"abcdef",
        interrupt: false,
    };
    let mut buf = [0u8; 4];
    assert_eq!(read_full(&mut t, &mut buf).unwrap(), 4);
    assert_eq!(&buf, b"abcd");
    assert_eq!(read_full(&mut t, &mut buf).unwrap(), 2);
    assert_eq!(read_full(&mut t, &mut buf).unwrap(), 0);
    assert_eq!(read_full(&mut t, &mut []).unwrap(), 0);
    // Records read through such a reader are the same.
    let want = payloads();
    let bytes = file_of(&want);
    let t = Trickle {
        data: &bytes,
        interrupt: false,
    };
    let mut r = RecordReader::open(t, &TEST).unwrap();
    let mut buf = Vec::new();
    for p in &want {
        r.next_record(&mut buf).unwrap();
        assert_eq!(&buf, p);
    }
    assert_eq!(r.next_record(&mut buf).unwrap(), None);
}

// ---- files ----

#[test]
fn replace_atomic_replaces_and_a_failed_write_keeps_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("CURRENT");
    replace_atomic(&path, |w| w.write_all(b"cp-000001")).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"cp-000001");
    replace_atomic(&path, |w| w.write_all(b"cp-000002")).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"cp-000002");
    assert!(!temp_path(&path).exists());
    let e = replace_atomic(&path, |w| {
        w.write_all(b"cp-0")?;
        Err(io::Error::other("disk on fire"))
    })
    .unwrap_err();
    assert_eq!(e.op, Op::Write);
    assert_eq!(e.path, temp_path(&path));
    assert_eq!(std::fs::read(&path).unwrap(), b"cp-000002");
    assert!(e.to_string().starts_with("cannot write "), "{e}");
    assert!(e.to_string().ends_with("CURRENT.tmp"), "{e}");
    assert_eq!(temp_path(&path).file_name().unwrap(), "CURRENT.tmp");
}

#[test]
fn failures_name_the_operation_and_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let e = sync_dir(&missing).unwrap_err();
    assert_eq!((e.op, e.path.as_path()), (Op::Open, missing.as_path()));
    assert_eq!(e.source.kind(), io::ErrorKind::NotFound);
    let e = replace_atomic(&missing.join("x"), |_| Ok(())).unwrap_err();
    assert_eq!(e.op, Op::Create);
    let e = write_synced(&missing.join("y"), b"y").unwrap_err();
    assert_eq!(e.op, Op::Create);
    let io: io::Error = e.into();
    assert_eq!(io.kind(), io::ErrorKind::NotFound);
    assert!(io.to_string().contains("cannot create"), "{io}");
    sync_dir(dir.path()).unwrap();
    sync_parent(&dir.path().join("anything")).unwrap();
    sync_parent(std::path::Path::new("bare-name")).unwrap();
    write_synced(&dir.path().join("z"), b"zz").unwrap();
    assert_eq!(std::fs::read(dir.path().join("z")).unwrap(), b"zz");
}

#[test]
fn fuzzing_garbage_never_panics() {
    let mut rng = fastrand::Rng::with_seed(12);
    let good = file_of(&payloads());
    fuzz_records(&good);
    fuzz_records(&good[HEADER_BYTES..]);
    for _ in 0..2000 {
        let mut data: Vec<u8> = if rng.bool() {
            good[..rng.usize(0..good.len())].to_vec()
        } else {
            (0..rng.usize(0..64)).map(|_| rng.u8(..)).collect()
        };
        for _ in 0..rng.usize(0..4) {
            if let Some(b) = data.get_mut(rng.usize(0..64)) {
                *b = rng.u8(..);
            }
        }
        fuzz_records(&data);
    }
}

#[test]
fn keep_as_names_a_file_again_and_the_name_outlives_the_original() {
    let dir = tempfile::tempdir().expect("tempdir");
    let from = dir.path().join("log");
    let to = dir.path().join("kept");
    std::fs::write(&from, b"first part").expect("write");
    std::fs::write(&to, b"an older checkpoint's file").expect("write");
    keep_as(&from, 10, &to).expect("keep");
    assert_eq!(std::fs::read(&to).expect("read"), b"first part");
    // The original goes (a dead log removed), the kept name stays.
    std::fs::remove_file(&from).expect("remove");
    assert_eq!(std::fs::read(&to).expect("read"), b"first part");
    assert!(
        keep_as(&from, 10, &to).is_err(),
        "a missing file is an error"
    );
}
