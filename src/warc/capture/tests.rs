use super::*;
use crate::fetch::{FailReason, FetchOutcome, TimeoutPhase};
use crate::http::chunked::ChunkedError;
use crate::http::ResponseHead;
use crate::http::{DecodeError, HttpError};

const REQUEST: &[u8] = b"GET /page HTTP/1.1\r\nHost: a.example\r\nUser-Agent: trawl\r\n\r\n";
const HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\n";
const CHUNKED_HEAD: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n";

fn ids() -> CaptureIds {
    CaptureIds {
        request: RecordId::from_uuid(uuid::Uuid::from_u128(1)),
        response: RecordId::from_uuid(uuid::Uuid::from_u128(2)),
        metadata: RecordId::from_uuid(uuid::Uuid::from_u128(3)),
    }
}

fn warcinfo_id() -> RecordId {
    RecordId::from_uuid(uuid::Uuid::from_u128(0xabc))
}

/// A capture of a response with head `head` and payload (body without transfer
/// coding) `payload`.
fn capture(head: &[u8], payload: &[u8]) -> Capture {
    Capture {
        target_uri: "http://a.example/page".into(),
        date: WarcDate::from_unix_micros(1_790_075_101_250_000),
        ip: Some("127.0.0.1".parse().unwrap()),
        request: REQUEST.into(),
        response: HttpResponse::new(&ResponseHead::parse(head).unwrap(), payload.into()),
        truncated: None,
        revisit: None,
        metadata: None,
    }
}

fn encode(capture: &Capture) -> (Vec<Vec<u8>>, Digest) {
    let mut records = Vec::new();
    let digest = encode_capture(capture, ids(), warcinfo_id(), |r| {
        records.push(r.to_bytes());
        Ok(())
    })
    .unwrap();
    (records, digest)
}

/// Splits a serialized record into its header text and block, checking framing.
fn split(record: &[u8]) -> (String, Vec<u8>) {
    let end = record.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let header = String::from_utf8(record[..end].to_vec()).unwrap();
    let len: usize = field(&header, "Content-Length").parse().unwrap();
    assert_eq!(record.len(), end + len + 4, "framing of {header}");
    assert!(record.ends_with(b"\r\n\r\n"));
    (header, record[end..end + len].to_vec())
}

fn field<'h>(header: &'h str, name: &str) -> &'h str {
    header
        .lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(": ")))
        .unwrap_or_else(|| panic!("no {name} in {header}"))
}

#[test]
fn exact_request_and_response_headers() {
    let (records, digest) = encode(&capture(HEAD, b"hello"));
    assert_eq!(records.len(), 2);
    let mut response_block = HEAD.to_vec();
    response_block.extend_from_slice(b"hello");
    let expected_request = format!(
        "WARC/1.1\r\n\
             WARC-Type: request\r\n\
             WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-000000000001>\r\n\
             WARC-Date: 2026-09-22T11:05:01.250000Z\r\n\
             WARC-Target-URI: http://a.example/page\r\n\
             WARC-Warcinfo-ID: <urn:uuid:00000000-0000-0000-0000-000000000abc>\r\n\
             WARC-IP-Address: 127.0.0.1\r\n\
             WARC-Concurrent-To: <urn:uuid:00000000-0000-0000-0000-000000000002>\r\n\
             WARC-Block-Digest: {}\r\n\
             Content-Type: application/http;msgtype=request\r\n\
             Content-Length: {}\r\n\r\n",
        Digest::of(REQUEST),
        REQUEST.len()
    );
    let expected_response = format!(
        "WARC/1.1\r\n\
             WARC-Type: response\r\n\
             WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-000000000002>\r\n\
             WARC-Date: 2026-09-22T11:05:01.250000Z\r\n\
             WARC-Target-URI: http://a.example/page\r\n\
             WARC-Warcinfo-ID: <urn:uuid:00000000-0000-0000-0000-000000000abc>\r\n\
             WARC-IP-Address: 127.0.0.1\r\n\
             WARC-Payload-Digest: sha1:VL2MMHO4YXUKFWV63YHTWSBM3GXKSQ2N\r\n\
             WARC-Block-Digest: {}\r\n\
             Content-Type: application/http;msgtype=response\r\n\
             Content-Length: {}\r\n\r\n",
        Digest::of(&response_block),
        response_block.len()
    );
    let (request_header, request_block) = split(&records[0]);
    assert_eq!(request_header, expected_request);
    assert_eq!(request_block, REQUEST);
    let (response_header, block) = split(&records[1]);
    assert_eq!(response_header, expected_response);
    assert_eq!(block, response_block);
    assert_eq!(digest.to_string(), "sha1:VL2MMHO4YXUKFWV63YHTWSBM3GXKSQ2N");
}

#[test]
fn chunked_stores_payload_and_renames_header() {
    let (records, digest) = encode(&capture(CHUNKED_HEAD, b"hello world"));
    let (header, block) = split(&records[1]);
    let renamed: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\
        X-Trawl-Transfer-Encoding: chunked\r\n\r\n";
    let mut expected_block = renamed.to_vec();
    expected_block.extend_from_slice(b"hello world");
    assert_eq!(block, expected_block);
    assert_eq!(digest, Digest::of(b"hello world"));
    assert_eq!(field(&header, "WARC-Payload-Digest"), digest.to_string());
    assert_eq!(
        field(&header, "WARC-Block-Digest"),
        Digest::of(&expected_block).to_string()
    );
    assert_eq!(
        response_block_digest(&capture(CHUNKED_HEAD, b"hello world").response),
        Digest::of(&expected_block)
    );
    assert!(!header.contains("WARC-Truncated"));
}

#[test]
fn stored_head_renames_every_transfer_encoding_name_only() {
    let head: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\
        transfer-encoding:  gzip , Chunked \r\nX-Other: a\r\nTransfer-Encoding: chunked\r\n\r\n";
    let response = HttpResponse::new(&ResponseHead::parse(head).unwrap(), SharedBytes::default());
    assert_eq!(response.transfer_encoding_names.len(), 2);
    assert_eq!(
        &response.stored_head()[..],
        &b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\
        X-Trawl-Transfer-Encoding:  gzip , Chunked \r\nX-Other: a\r\n\
        X-Trawl-Transfer-Encoding: chunked\r\n\r\n"[..]
    );
    // Nothing to rename: the received bytes themselves, borrowed.
    let plain = HttpResponse::new(&ResponseHead::parse(HEAD).unwrap(), SharedBytes::default());
    assert!(matches!(plain.stored_head(), Cow::Borrowed(h) if h == HEAD));
    assert!(!plain.content_coded);
    assert_eq!(plain.status, 200);
}

#[test]
fn truncated_capture_says_why() {
    let mut told = capture(HEAD, b"hel");
    told.truncated = Some(Truncation::Disconnect);
    let (records, _) = encode(&told);
    assert_eq!(field(&split(&records[1]).0, "WARC-Truncated"), "disconnect");
}

/// A fetch outcome as the fetcher would give it for a response of `head` and `payload`
/// (identity coding: the payload is the body, one shared buffer).
fn outcome(head: &[u8], payload: &[u8]) -> FetchOutcome {
    let url = url::Url::parse("http://a.example/page").unwrap();
    let mut o = FetchOutcome::failed(1, url, REQUEST.into(), FailReason::Reset);
    o.error = None;
    o.head = Some(ResponseHead::parse(head).unwrap());
    o.body = payload.into();
    o.payload = Some(o.body.clone());
    o.body_complete = true;
    o.peer = Some("127.0.0.1:80".parse().unwrap());
    o
}

#[test]
fn capture_from_outcome_shares_the_fetchers_buffers() {
    let o = outcome(HEAD, b"hello");
    let date = WarcDate::from_unix_micros(1_790_075_101_250_000);
    let c = Capture::from_outcome(&o, date).unwrap();
    let head = o.head.as_ref().unwrap();
    assert!(c.request.is_shared_with(&o.request));
    assert!(c.response.head.is_shared_with(&head.raw));
    assert!(c.response.payload.is_shared_with(&o.body));
    assert_eq!(c.truncated, None);
    // The records are those of the capture built by hand from the same bytes.
    assert_eq!(encode(&c), encode(&capture(HEAD, b"hello")));
    // No head, no capture.
    let url = url::Url::parse("http://a.example/").unwrap();
    let failed = FetchOutcome::failed(2, url, SharedBytes::default(), FailReason::Refused);
    assert!(Capture::from_outcome(&failed, date).is_none());
}

#[test]
fn capture_from_outcome_marks_cut_and_broken_bodies() {
    let date = WarcDate::from_unix_micros(0);
    let mut cut = outcome(HEAD, b"hel");
    cut.body_truncated = true;
    cut.body_complete = false;
    assert_eq!(
        Capture::from_outcome(&cut, date).unwrap().truncated,
        Some(Truncation::Length)
    );
    let mut torn = outcome(CHUNKED_HEAD, b"hello wo");
    torn.body_complete = false;
    torn.error = Some(FailReason::Protocol(HttpError::IncompleteChunkedBody));
    let c = Capture::from_outcome(&torn, date).unwrap();
    assert_eq!(c.truncated, Some(Truncation::Disconnect));
    let (records, digest) = encode(&c);
    assert_eq!(field(&split(&records[1]).0, "WARC-Truncated"), "disconnect");
    assert_eq!(digest, Digest::of(b"hello wo"));
    // Each way a body can end early, and its WARC 1.1 reason.
    let table = [
        (
            FailReason::Timeout(TimeoutPhase::ReadIdle),
            Truncation::Time,
        ),
        (FailReason::Timeout(TimeoutPhase::Total), Truncation::Time),
        (FailReason::ClosedEarly, Truncation::Disconnect),
        (FailReason::Reset, Truncation::Disconnect),
        (
            FailReason::Protocol(HttpError::IncompleteBody),
            Truncation::Disconnect,
        ),
        (
            FailReason::Protocol(HttpError::Chunked(ChunkedError::InvalidSize)),
            Truncation::Unspecified,
        ),
        (
            FailReason::Decode(DecodeError::Unsupported),
            Truncation::Unspecified,
        ),
        (FailReason::TooLarge, Truncation::Length),
    ];
    for (error, reason) in table {
        let mut o = outcome(HEAD, b"he");
        o.body_complete = false;
        o.error = Some(error.clone());
        assert_eq!(truncation_of(&o), Some(reason), "{error:?}");
    }
    // A whole payload is not truncated, whatever else failed (a decoder error after
    // the framing ended).
    let mut decoded_badly = outcome(HEAD, b"hello");
    decoded_badly.error = Some(FailReason::Decode(DecodeError::Unsupported));
    assert_eq!(truncation_of(&decoded_badly), None);
    // A content-coded payload that was not kept: the record says it is incomplete.
    let mut unkept = outcome(HEAD, b"hello");
    unkept.payload = None;
    assert_eq!(
        Capture::from_outcome(&unkept, date).unwrap().truncated,
        Some(Truncation::Unspecified)
    );
}

#[test]
fn revisit_has_profile_refers_to_and_head_only() {
    let mut dup = capture(HEAD, b"hello");
    let original = RecordId::from_uuid(uuid::Uuid::from_u128(9));
    dup.revisit = Some(RevisitOf {
        payload_digest: Digest::of(b"hello"),
        target_uri: "http://b.example/first".into(),
        date: WarcDate::from_unix_micros(1_700_000_000_000_000),
        record_id: Some(original),
        profile: RevisitProfile::IdenticalPayload,
    });
    let (records, digest) = encode(&dup);
    assert_eq!(digest, Digest::of(b"hello"));
    let (header, block) = split(&records[1]);
    assert_eq!(field(&header, "WARC-Type"), "revisit");
    assert_eq!(field(&header, "WARC-Profile"), IDENTICAL_PAYLOAD_PROFILE);
    assert_eq!(
        field(&header, "WARC-Refers-To-Target-URI"),
        "http://b.example/first"
    );
    assert_eq!(
        field(&header, "WARC-Refers-To-Date"),
        "2023-11-14T22:13:20.000000Z"
    );
    assert_eq!(field(&header, "WARC-Refers-To"), original.to_string());
    assert_eq!(field(&header, "WARC-Payload-Digest"), digest.to_string());
    assert_eq!(field(&header, "WARC-Truncated"), "length");
    assert_eq!(field(&header, "Content-Type"), HTTP_RESPONSE_TYPE);
    assert_eq!(block, HEAD);
    assert_eq!(
        field(&header, "WARC-Block-Digest"),
        Digest::of(HEAD).to_string()
    );
}

#[test]
fn metadata_lists_outlinks_and_timings() {
    let mut with_meta = capture(HEAD, b"hello");
    with_meta.request = SharedBytes::default();
    with_meta.metadata = Some(CaptureMetadata {
        via: Some("http://a.example/".into()),
        hops_path: "LL".into(),
        outlinks_unknown: false,
        outlinks: vec![
            Outlink {
                url: "http://a.example/x".into(),
                hop: Hop::Link,
            },
            Outlink {
                url: "http://a.example/i mg.png".into(),
                hop: Hop::Embed,
            },
        ],
        timings: FetchTimings {
            dns_ms: Some(1),
            connect_ms: Some(2),
            proxy_ms: None,
            tls_ms: None,
            first_byte_ms: Some(3),
            total_ms: Some(4),
        },
    });
    let (records, _) = encode(&with_meta);
    assert_eq!(
        records.len(),
        2,
        "no request record when the request is empty"
    );
    let (header, block) = split(&records[1]);
    assert_eq!(field(&header, "WARC-Type"), "metadata");
    assert_eq!(field(&header, "Content-Type"), WARC_FIELDS_TYPE);
    assert_eq!(
        field(&header, "WARC-Concurrent-To"),
        ids().response.to_string()
    );
    assert_eq!(
        String::from_utf8(block).unwrap(),
        "via: http://a.example/\r\n\
             hopsFromSeed: LL\r\n\
             dnsTimeMs: 1\r\n\
             connectTimeMs: 2\r\n\
             firstByteTimeMs: 3\r\n\
             fetchTimeMs: 4\r\n\
             outlink: http://a.example/x L\r\n\
             outlink: http://a.example/i%20mg.png E\r\n"
    );
}

#[test]
fn warcinfo_record_fields() {
    let info = WarcinfoFields {
        operator: Some("Ops <ops@example.org>".into()),
        from: Some("ops@example.org\r\nX: y".into()),
        ..WarcinfoFields::default()
    };
    let block = info.block();
    let record = warcinfo_record(
        warcinfo_id(),
        WarcDate::from_unix_micros(0),
        "trawl-19700101000000-00000-0.warc.gz",
        &block,
    )
    .unwrap();
    let (header, block) = split(&record.to_bytes());
    assert_eq!(field(&header, "WARC-Type"), "warcinfo");
    assert_eq!(
        field(&header, "WARC-Filename"),
        "trawl-19700101000000-00000-0.warc.gz"
    );
    assert_eq!(field(&header, "Content-Type"), WARC_FIELDS_TYPE);
    let text = String::from_utf8(block).unwrap();
    assert!(text.starts_with("software: trawl/"), "{text}");
    for line in [
            "format: WARC File Format 1.1\r\n",
            "conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n",
            "robots: obey\r\n",
            "operator: Ops <ops@example.org>\r\n",
            "http-header-from: ops@example.org  X: y\r\n",
        ] {
            assert!(text.contains(line), "{line:?} in {text}");
        }
}
