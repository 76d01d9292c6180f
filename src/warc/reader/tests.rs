use std::io::Write;

use flate2::write::GzEncoder;
use flate2::Compression;

use super::*;

fn record(fields: &str, block: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "WARC/1.1\r\n{fields}Content-Length: {}\r\n\r\n",
        block.len()
    )
    .into_bytes();
    out.extend_from_slice(block);
    out.extend_from_slice(b"\r\n\r\n");
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn complete(bytes: &[u8]) -> RecordHead {
    match RecordHead::parse(bytes) {
        Ok(Status::Complete(head)) => head,
        other => panic!("{other:?}"),
    }
}

#[test]
fn heads_parse_to_typed_fields() {
    let bytes = record(
        "WARC-Type: response\r\nwarc-record-id:  <urn:uuid:1> \r\nWARC-Target-URI: http://a.test/\r\n",
        b"hello",
    );
    let head = complete(&bytes);
    assert_eq!(head.version(), Version::V1_1);
    assert_eq!(head.record_type(), Some("response"));
    assert_eq!(head.record_id(), Some("<urn:uuid:1>"));
    assert_eq!(head.target_uri(), Some("http://a.test/"));
    assert_eq!(head.content_length(), Some(5));
    assert_eq!(head.record_len_bytes(), Some(bytes.len() as u64));
    assert_eq!(&bytes[head.len_bytes()..head.len_bytes() + 5], b"hello");
    let range = head.field_range("WARC-Record-ID").unwrap();
    assert_eq!(&bytes[range], b"<urn:uuid:1>");
    assert_eq!(head.fields().count(), 4);
    assert_eq!(head.field("Missing"), None);
    // WARC/1.0, no fields at all, and a folded value.
    let old = complete(b"WARC/1.0\r\n\r\n");
    assert_eq!((old.version(), old.fields().count()), (Version::V1_0, 0));
    let folded = complete(b"WARC/1.1\r\nA: one\r\n  two \r\nB:\r\n\r\n");
    assert_eq!(folded.field("A"), Some("one\r\n  two"));
    assert_eq!(folded.field("b"), Some(""));
}

#[test]
fn heads_are_partial_until_the_blank_line() {
    let bytes = record("WARC-Type: resource\r\n", b"x");
    let end = complete(&bytes).len_bytes();
    for cut in 0..end {
        assert_eq!(
            RecordHead::parse(&bytes[..cut]),
            Ok(Status::Partial),
            "cut at {cut}"
        );
    }
}

#[test]
fn bad_heads_are_typed_errors() {
    let many = "A: b\r\n".repeat(MAX_FIELDS + 1);
    let long = format!("WARC/1.1\r\nA: {}", "x".repeat(MAX_HEAD_BYTES));
    for (bytes, error) in [
        (&b"HTTP/1.1 200 OK\r\n\r\n"[..], HeadError::Version),
        (b"WARC/1.2\r\n\r\n", HeadError::Version),
        (b"WARC/1.1 \r\n\r\n", HeadError::Version),
        (b"\x1f\x8b\x08", HeadError::Version),
        (long.as_bytes(), HeadError::TooLong),
        (b"WARC/1.1\r\nA: \xff\r\n\r\n", HeadError::NotUtf8),
        (b"WARC/1.1\r\nno colon\r\n\r\n", HeadError::BadField),
        (b"WARC/1.1\r\n: empty name\r\n\r\n", HeadError::BadField),
        (b"WARC/1.1\r\n folded first\r\n\r\n", HeadError::BadField),
        (
            b"WARC/1.1\r\nContent-Length: +5\r\n\r\n",
            HeadError::BadContentLength,
        ),
        (
            b"WARC/1.1\r\nContent-Length: \r\n\r\n",
            HeadError::BadContentLength,
        ),
        (
            b"WARC/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
            HeadError::BadContentLength,
        ),
    ] {
        assert_eq!(
            RecordHead::parse(bytes),
            Err(error),
            "{:?}",
            String::from_utf8_lossy(bytes)
        );
    }
    let many = format!("WARC/1.1\r\n{many}\r\n");
    assert_eq!(
        RecordHead::parse(many.as_bytes()),
        Err(HeadError::TooManyFields)
    );
}

#[test]
fn the_sink_takes_one_whole_record_in_any_pieces() {
    let bytes = record("WARC-Type: resource\r\n", b"0123456789");
    for piece in [1, 2, 3, 7, bytes.len()] {
        let mut sink = RecordSink::new(4);
        for chunk in bytes.chunks(piece) {
            sink.push(chunk);
        }
        assert!(sink.is_complete(), "pieces of {piece}");
        let (head, block) = sink.finish().unwrap();
        assert_eq!(head.content_length(), Some(10));
        assert_eq!(block, b"0123", "only max_block_bytes kept");
    }
    let sink_of = |bytes: &[u8]| {
        let mut sink = RecordSink::new(usize::MAX);
        sink.push(bytes);
        sink.finish().map(|(_, block)| block)
    };
    assert_eq!(sink_of(&bytes).unwrap(), b"0123456789");
    assert_eq!(sink_of(&bytes[..bytes.len() - 1]), Err(Damage::Truncated));
    assert_eq!(sink_of(&bytes[..20]), Err(Damage::Truncated));
    assert_eq!(sink_of(b""), Err(Damage::Truncated));
    let mut two = bytes.clone();
    two.extend_from_slice(&bytes);
    assert_eq!(sink_of(&two), Err(Damage::TrailingBytes));
    let mut no_end = bytes.clone();
    let at = no_end.len() - 2;
    no_end[at] = b'x';
    assert_eq!(sink_of(&no_end), Err(Damage::NoEnd));
    assert_eq!(
        sink_of(b"WARC/1.1\r\nWARC-Type: x\r\n\r\n\r\n\r\n"),
        Err(Damage::NoContentLength)
    );
    assert_eq!(
        sink_of(b"GET / HTTP/1.1"),
        Err(Damage::Head(HeadError::Version))
    );
}

#[test]
fn records_of_a_gzip_file_with_their_offsets() {
    let first = gzip(&record("WARC-Type: warcinfo\r\n", b"info"));
    let second = gzip(&record("WARC-Type: response\r\n", &[7; 3000]));
    let file = [first.clone(), second.clone()].concat();
    let records: Vec<_> = Records::new(&file[..], Framing::GzipMembers)
        .map(Result::unwrap)
        .collect();
    assert_eq!(records.len(), 2);
    assert_eq!((records[0].offset, records[0].end), (0, first.len() as u64));
    assert_eq!(records[1].offset, first.len() as u64);
    assert_eq!(records[1].end, file.len() as u64);
    assert_eq!(records[0].block, b"info");
    assert_eq!(records[1].head.record_type(), Some("response"));
    assert_eq!(records[1].block.len(), 3000);
    // Offsets of a reader started inside a file count from there.
    let mut from_second = Records::new(&second[..], Framing::GzipMembers).starting_at(100);
    from_second.set_max_block_bytes(0);
    let only = from_second.next().unwrap().unwrap();
    assert_eq!((only.offset, only.end), (100, 100 + second.len() as u64));
    assert!(only.block.is_empty());
    assert!(from_second.next().is_none());
    assert_eq!(from_second.position(), 100 + second.len() as u64);
    assert_eq!(Framing::detect(&file), Framing::GzipMembers);
}

#[test]
fn a_torn_member_ends_the_records_with_damage() {
    let first = gzip(&record("WARC-Type: warcinfo\r\n", b"info"));
    let second = gzip(&record("WARC-Type: response\r\n", b"body"));
    let torn = [&first[..], &second[..second.len() - 3]].concat();
    let mut records = Records::new(&torn[..], Framing::GzipMembers);
    assert!(records.next().unwrap().is_ok());
    let err = records.next().unwrap().unwrap_err();
    assert!(
        matches!(err, ReadError::Damaged { offset, damage: Damage::Gzip } if offset == first.len() as u64),
        "{err:?}"
    );
    assert!(records.next().is_none(), "nothing after damage");
    // Two records in one member are not a record per member.
    let double = gzip(&[record("", b"a"), record("", b"b")].concat());
    let err = Records::new(&double[..], Framing::GzipMembers)
        .next()
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(
            err,
            ReadError::Damaged {
                damage: Damage::TrailingBytes,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn records_of_a_plain_file() {
    let first = record("WARC-Type: warcinfo\r\n", b"info");
    let second = record(
        "WARC-Type: resource\r\n",
        b"\r\n\r\nbody with blank lines\r\n\r\n",
    );
    let file = [first.clone(), second.clone()].concat();
    assert_eq!(Framing::detect(&file), Framing::Plain);
    let records: Vec<_> = Records::new(&file[..], Framing::Plain)
        .map(Result::unwrap)
        .collect();
    assert_eq!(records.len(), 2);
    assert_eq!(records[1].offset, first.len() as u64);
    assert_eq!(records[1].end, file.len() as u64);
    assert_eq!(records[1].block, b"\r\n\r\nbody with blank lines\r\n\r\n");
    let cut = &file[..file.len() - 5];
    let mut records = Records::new(cut, Framing::Plain);
    assert!(records.next().unwrap().is_ok());
    let err = records.next().unwrap().unwrap_err();
    assert!(
        matches!(
            err,
            ReadError::Damaged {
                damage: Damage::Truncated,
                ..
            }
        ),
        "{err:?}"
    );
    let garbage = Records::new(&b"GET / HTTP/1.1\r\n\r\n"[..], Framing::Plain)
        .next()
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(
            garbage,
            ReadError::Damaged {
                offset: 0,
                damage: Damage::Head(HeadError::Version)
            }
        ),
        "{garbage:?}"
    );
}

/// A reader that fails: an error where a record starts is `Io`, not damage.
#[test]
fn input_errors_at_a_boundary_are_io_errors() {
    struct Failing;
    impl std::io::Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk"))
        }
    }
    let input = std::io::BufReader::new(Failing);
    let err = Records::new(input, Framing::GzipMembers)
        .next()
        .unwrap()
        .unwrap_err();
    assert!(matches!(err, ReadError::Io(_)), "{err:?}");
}

#[test]
fn the_fuzz_entry_point_takes_valid_and_damaged_files() {
    let file = [
        gzip(&record("WARC-Type: warcinfo\r\n", b"info")),
        gzip(&record("WARC-Type: response\r\n", b"body")),
    ]
    .concat();
    for cut in [0, 1, 10, file.len() / 2, file.len() - 1, file.len()] {
        fuzz_read(&file[..cut]);
    }
    fuzz_read(&record("A: b\r\n", b"x"));
    fuzz_read(b"WARC/1.1\r\n\r\n");
}
