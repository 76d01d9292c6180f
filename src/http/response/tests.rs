use super::*;
use crate::http::{run_responses, ResponseRun};

fn limits() -> ResponseLimits {
    ResponseLimits::default()
}

/// Reads `input` as a whole, in pieces of every size from 1 to 7, and byte by byte;
/// all must agree. Returns the runs.
fn read_all(input: &[u8], method: Method, limits: ResponseLimits) -> Vec<ResponseRun> {
    let whole = run_responses(input, &[usize::MAX], method, limits);
    for size in 1..=7 {
        let pieces = run_responses(input, &[size], method, limits);
        assert_eq!(whole, pieces, "piece size {size} differs for {input:?}");
    }
    let irregular = run_responses(input, &[3, 1, 11, 2, 64], method, limits);
    assert_eq!(whole, irregular, "irregular pieces differ for {input:?}");
    whole
}

fn one(input: &[u8]) -> ResponseRun {
    let runs = read_all(input, Method::Get, limits());
    assert_eq!(
        runs.len(),
        1,
        "expected one response in {input:?}: {runs:?}"
    );
    runs.into_iter().next().unwrap()
}

/// Expected outcome of one response: status (0: no head), body, error, keep-alive.
struct Case {
    name: &'static str,
    input: &'static [u8],
    status: u16,
    body: &'static [u8],
    error: Option<HttpError>,
    keep_alive: bool,
}

macro_rules! case {
    ($name:literal, $input:expr, $status:expr, $body:expr, $error:expr, $ka:expr) => {
        Case {
            name: $name,
            input: $input,
            status: $status,
            body: $body,
            error: $error,
            keep_alive: $ka,
        }
    };
}

#[test]
fn framing_table() {
    use HttpError as E;
    let cases = [
        case!("content-length", b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 200, b"hello", None, true),
        case!("zero length", b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 200, b"", None, true),
        case!("chunked", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-T: 1\r\n\r\n", 200, b"hello world", None, true),
        case!("chunked uppercase", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: CHUNKED\r\n\r\n1\r\na\r\n0\r\n\r\n", 200, b"a", None, true),
        case!("close delimited", b"HTTP/1.1 200 OK\r\n\r\nuntil close", 200, b"until close", None, false),
        case!("connection close", b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", 200, b"ok", None, false),
        case!("connection close in list", b"HTTP/1.1 200 OK\r\nConnection: foo, Close\r\nContent-Length: 2\r\n\r\nok", 200, b"ok", None, false),
        case!("http/1.0 default close", b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", 200, b"ok", None, false),
        case!("http/1.0 keep-alive", b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok", 200, b"ok", None, true),
        case!("http/1.0 keep-alive but close-delimited", b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\nok", 200, b"ok", None, false),
        case!("204 ignores length", b"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n", 204, b"", None, true),
        case!("304 ignores chunked", b"HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n", 304, b"", None, true),
        case!("skip 100", b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", 200, b"x", None, true),
        case!("skip 103 with fields", b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", 200, b"x", None, true),
        case!("101 is an error", b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", 0, b"", Some(E::UnexpectedSwitchingProtocols), false),
        case!("duplicate equal lengths", b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", 200, b"abc", None, true),
        case!("equal length list", b"HTTP/1.1 200 OK\r\nContent-Length: 3, 3,3\r\n\r\nabc", 200, b"abc", None, true),
        case!("differing lengths", b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 0, b"", Some(E::ConflictingContentLength), false),
        case!("differing length list", b"HTTP/1.1 200 OK\r\nContent-Length: 3, 4\r\n\r\nabcd", 0, b"", Some(E::ConflictingContentLength), false),
        case!("negative length", b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", 0, b"", Some(E::InvalidContentLength), false),
        case!("plus length", b"HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\nx", 0, b"", Some(E::InvalidContentLength), false),
        case!("hex length", b"HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n", 0, b"", Some(E::InvalidContentLength), false),
        case!("empty length", b"HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n", 0, b"", Some(E::InvalidContentLength), false),
        case!("overflowing length", b"HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551616\r\n\r\n", 0, b"", Some(E::InvalidContentLength), false),
        case!("te and cl: chunked wins, close", b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n", 200, b"ab", None, false),
        case!("te chunked not final: until close", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nraw", 200, b"raw", None, false),
        case!("te gzip only: until close", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 1\r\n\r\nraw", 200, b"raw", None, false),
        case!("te split over fields", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n", 200, b"z", None, true),
        case!("te identity ignored", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 2\r\n\r\nok", 200, b"ok", None, true),
        case!("http/1.0 te: until close", b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n1\r\nz\r\n0\r\n\r\n", 200, b"1\r\nz\r\n0\r\n\r\n", None, false),
        case!("bare lf", b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok", 200, b"ok", None, true),
        case!("bare lf chunked", b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n2\nok\n0\n\n", 200, b"ok", None, true),
        case!("mixed line ends", b"HTTP/1.1 200 OK\r\nContent-Length: 2\n\r\nok", 200, b"ok", None, true),
        case!("leading blank lines", b"\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 200, b"ok", None, true),
        case!("no reason", b"HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok", 200, b"ok", None, true),
        case!("obs-fold", b"HTTP/1.1 200 OK\r\nX-Long: a\r\n b\r\nContent-Length: 2\r\n\r\nok", 200, b"ok", None, true),
        case!("space before colon", b"HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok", 200, b"ok", None, true),
        case!("invalid header line ignored", b"HTTP/1.1 200 OK\r\nBad Header: x\r\nContent-Length: 2\r\n\r\nok", 200, b"ok", None, true),
        case!("http/0.9", b"<html><body>hello</body></html>\n\n", 0, b"", Some(E::NotHttp), false),
        case!("http/0.9 no newline", b"<html>", 0, b"", Some(E::NotHttp), false),
        case!("binary garbage", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 0, b"", Some(E::NotHttp), false),
        case!("lowercase http", b"http/1.1 200 OK\r\n\r\n", 0, b"", Some(E::NotHttp), false),
        case!("http/2 version", b"HTTP/2 200\r\n\r\n", 0, b"", Some(E::UnsupportedVersion), false),
        case!("http/1.2 is read as 1.1", b"HTTP/1.2 200 OK\r\nContent-Length: 2\r\n\r\nok", 200, b"ok", None, true),
        case!("http/1.10 is not a version", b"HTTP/1.10 200 OK\r\n\r\n", 0, b"", Some(E::UnsupportedVersion), false),
        case!("http/3.0 version", b"HTTP/3.0 200 OK\r\n\r\n", 0, b"", Some(E::UnsupportedVersion), false),
        case!("bad status", b"HTTP/1.1 2x0 OK\r\n\r\n", 0, b"", Some(E::InvalidStatus), false),
        case!("status below 100", b"HTTP/1.1 099 Odd\r\n\r\n", 0, b"", Some(E::InvalidStatus), false),
        case!("nul in header", b"HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n", 0, b"", Some(E::InvalidHeader), false),
        case!("lone cr in head", b"HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n", 0, b"", Some(E::InvalidHeader), false),
        case!("closed before response", b"", 0, b"", Some(E::ClosedBeforeResponse), false),
        case!("closed after stray line end", b"\r\n", 0, b"", Some(E::ClosedBeforeResponse), false),
        case!("closed in head", b"HTTP/1.1 200 OK\r\nContent-Len", 0, b"", Some(E::IncompleteHead), false),
        case!("closed in length body", b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", 200, b"short", Some(E::IncompleteBody), false),
        case!("closed in chunked body", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", 200, b"hel", Some(E::IncompleteChunkedBody), false),
        case!("closed before last chunk", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", 200, b"hello", Some(E::IncompleteChunkedBody), false),
        case!("bad chunk size", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 200, b"", Some(E::Chunked(ChunkedError::InvalidSize)), false),
        case!("chunk size overflow", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\n", 200, b"", Some(E::Chunked(ChunkedError::SizeOverflow)), false),
    ];
    for case in cases {
        let runs = read_all(case.input, Method::Get, limits());
        let run = &runs[0];
        assert_eq!(run.error, case.error, "{}: error", case.name);
        let status = run.head.as_ref().map_or(0, |h| h.status);
        if case.error.is_none() || case.status != 0 {
            assert_eq!(status, case.status, "{}: status", case.name);
        }
        assert_eq!(run.body, case.body, "{}: body", case.name);
        assert_eq!(run.keep_alive, case.keep_alive, "{}: keep-alive", case.name);
    }
}

#[test]
fn head_request_has_no_body() {
    let input = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nTransfer-Encoding: chunked\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
    let runs = read_all(input, Method::Head, limits());
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].head.as_ref().unwrap().status, 200);
    assert!(runs[0].body.is_empty());
    assert_eq!(runs[1].head.as_ref().unwrap().status, 404);
}

#[test]
fn pipelined_responses_on_one_buffer() {
    let input = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none\
HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\ntwo\r\n0\r\n\r\n\
HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n\
HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nfour and the rest";
    let runs = read_all(input, Method::Get, limits());
    let bodies: Vec<&[u8]> = runs.iter().map(|r| r.body.as_slice()).collect();
    assert_eq!(bodies, [&b"one"[..], b"two", b"", b"four and the rest"]);
    let statuses: Vec<u16> = runs
        .iter()
        .map(|r| r.head.as_ref().unwrap().status)
        .collect();
    assert_eq!(statuses, [200, 200, 304, 200]);
    assert_eq!(runs.iter().map(|r| r.consumed).sum::<usize>(), input.len());
    assert!(runs.iter().all(|r| r.error.is_none()));
}

#[test]
fn feed_stops_at_end_of_response() {
    let input = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 204 No Content\r\n\r\n";
    let mut reader = ResponseReader::new(Method::Get, limits());
    let mut body = Vec::new();
    let feed = reader.feed(input, &mut body).unwrap();
    assert!(feed.done);
    assert_eq!(&input[feed.consumed..], b"HTTP/1.1 204 No Content\r\n\r\n");
    // A finished reader takes nothing more.
    assert_eq!(
        reader.feed(b"more", &mut body).unwrap(),
        Feed {
            consumed: 0,
            done: true
        }
    );
    assert!(reader.keep_alive());
    assert_eq!(reader.wire_body_bytes(), 2);
}

#[test]
fn head_fields_are_kept_in_order_and_found_case_insensitively() {
    let run = one(b"HTTP/1.1 200 Very OK\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nX-Fold: one\r\n\ttwo\r\nContent-Length: 0\r\n\r\n");
    let head = run.head.unwrap();
    assert_eq!(head.reason, "Very OK");
    assert_eq!(head.minor_version, 1);
    assert_eq!(head.header("SET-COOKIE"), Some(&b"a=1"[..]));
    let cookies: Vec<&[u8]> = head.headers_named("Set-Cookie").collect();
    assert_eq!(cookies, [&b"a=1"[..], b"b=2"]);
    assert_eq!(head.headers[1].0, "set-cookie");
    assert_eq!(head.header("x-fold"), Some(&b"one  \ttwo"[..]));
    assert!(head.header("missing").is_none());
}

#[test]
fn head_caps() {
    let mut small = limits();
    small.max_head_bytes = 40;
    let input = b"HTTP/1.1 200 OK\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
    let runs = read_all(input, Method::Get, small);
    assert_eq!(runs[0].error, Some(HttpError::HeadTooLarge));
    // No empty line ever: the cap still ends it.
    let endless = vec![b'a'; 100];
    let mut stream = b"HTTP/1.1 200 OK\r\nX: ".to_vec();
    stream.extend_from_slice(&endless);
    let runs = read_all(&stream, Method::Get, small);
    assert_eq!(runs[0].error, Some(HttpError::HeadTooLarge));
    // Blank lines use up the cap before the prefix is judged, split or not.
    let mut late = vec![b'\r'; 38];
    late.extend_from_slice(b"HTT\r\r,");
    assert_eq!(
        read_all(&late, Method::Get, small)[0].error,
        Some(HttpError::HeadTooLarge)
    );
    // Endless blank lines count too.
    let runs = read_all(&[b'\n'; 100], Method::Get, small);
    assert_eq!(runs[0].error, Some(HttpError::HeadTooLarge));
    // Exactly at the cap is fine.
    let exact = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: 1\r\n\r\n";
    small.max_head_bytes = exact.len();
    assert_eq!(read_all(exact, Method::Get, small)[0].error, None);
    small.max_head_bytes = exact.len() - 1;
    assert_eq!(
        read_all(exact, Method::Get, small)[0].error,
        Some(HttpError::HeadTooLarge)
    );

    let mut few = limits();
    few.max_headers = 2;
    let input = b"HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n";
    assert_eq!(
        read_all(input, Method::Get, few)[0].error,
        Some(HttpError::TooManyHeaders)
    );
    few.max_headers = 3;
    assert_eq!(read_all(input, Method::Get, few)[0].error, None);
}

#[test]
fn too_many_interim_responses() {
    let mut input = Vec::new();
    for _ in 0..=MAX_INTERIM_RESPONSES {
        input.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
    }
    input.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(one(&input).error, Some(HttpError::TooManyInterimResponses));
}

#[test]
fn body_cap_truncates_or_aborts() {
    let truncate = ResponseLimits {
        max_body_bytes: 4,
        ..limits()
    };
    let abort = ResponseLimits {
        body_limit_mode: BodyLimitMode::Abort,
        ..truncate
    };
    let inputs: [&[u8]; 3] = [
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n012\r\n7\r\n3456789\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\n\r\n0123456789",
    ];
    for input in inputs {
        let runs = read_all(input, Method::Get, truncate);
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].body, b"0123");
        assert!(runs[0].truncated, "{input:?}");
        assert!(!runs[0].keep_alive);
        assert_eq!(runs[0].error, None);
        let runs = read_all(input, Method::Get, abort);
        assert_eq!(runs[0].error, Some(HttpError::BodyTooLarge), "{input:?}");
    }
    // A body exactly at the cap is complete, not truncated.
    let exact: [&[u8]; 3] = [
        b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n0123",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n0123\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\n\r\n0123",
    ];
    for input in exact {
        for l in [truncate, abort] {
            let runs = read_all(input, Method::Get, l);
            assert_eq!(runs[0].body, b"0123");
            assert!(!runs[0].truncated, "{input:?}");
            assert_eq!(runs[0].error, None, "{input:?}");
        }
    }
    // Abort knows from Content-Length before any body byte.
    let mut reader = ResponseReader::new(Method::Get, abort);
    let err = reader
        .feed(
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n",
            &mut Vec::new(),
        )
        .unwrap_err();
    assert_eq!(err, HttpError::BodyTooLarge);
    assert_eq!(reader.head().unwrap().status, 200);
}

#[test]
fn errors_repeat_and_eof_after_done_is_fine() {
    let mut reader = ResponseReader::new(Method::Get, limits());
    let mut body = Vec::new();
    assert_eq!(
        reader.feed(b"SSH-2.0-OpenSSH\r\n", &mut body),
        Err(HttpError::NotHttp)
    );
    assert_eq!(
        reader.feed(b"HTTP/1.1 200 OK\r\n\r\n", &mut body),
        Err(HttpError::NotHttp)
    );
    assert_eq!(reader.on_eof(), Err(HttpError::NotHttp));
    assert_eq!(reader.error(), Some(HttpError::NotHttp));

    let mut reader = ResponseReader::new(Method::Get, limits());
    reader
        .feed(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", &mut body)
        .unwrap();
    assert!(reader.is_done());
    assert_eq!(reader.on_eof(), Ok(()));
}

#[test]
fn close_delimited_body_ends_at_eof() {
    let mut reader = ResponseReader::new(Method::Get, limits());
    let mut body = Vec::new();
    let feed = reader
        .feed(b"HTTP/1.1 200 OK\r\n\r\nabc", &mut body)
        .unwrap();
    assert!(!feed.done);
    assert_eq!(feed.consumed, 22);
    reader.feed(b"def", &mut body).unwrap();
    assert!(!reader.is_done());
    assert_eq!(reader.on_eof(), Ok(()));
    assert!(reader.is_done());
    assert!(!reader.keep_alive());
    assert_eq!(body, b"abcdef");
    assert_eq!(reader.wire_body_bytes(), 6);
}

/// Random splits of random well-formed and damaged streams: feeding in pieces always
/// equals feeding whole (a property test with a fixed seed, so failures reproduce).
#[test]
fn piecewise_feeding_equals_whole_feeding() {
    let templates: [&[u8]; 6] = [
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n0\r\nT: v\r\n\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\nContent-Length: 3\n\nabc\r\nHTTP/1.0 200 OK\r\n\r\nrest",
        b"HTTP/1.1 301 Moved\r\nLocation: /x\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1a\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 1\r\n\r\nx",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
        b"HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\nContent-Length: 4\r\n\r\nnope",
    ];
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for _ in 0..400 {
        let template = templates[(next() % templates.len() as u64) as usize];
        let mut input = template.to_vec();
        // Damage one byte in half of the runs.
        if next() % 2 == 0 {
            let at = (next() % input.len() as u64) as usize;
            input[at] = (next() % 256) as u8;
        }
        let small = ResponseLimits {
            max_body_bytes: next() % 40,
            body_limit_mode: if next() % 2 == 0 {
                BodyLimitMode::Truncate
            } else {
                BodyLimitMode::Abort
            },
            ..limits()
        };
        let splits: Vec<usize> = (0..5).map(|_| (next() % 9) as usize + 1).collect();
        for l in [limits(), small] {
            let whole = run_responses(&input, &[usize::MAX], Method::Get, l);
            let pieces = run_responses(&input, &splits, Method::Get, l);
            assert_eq!(whole, pieces, "{input:?} split {splits:?}");
        }
    }
}

// --- The head as typed values, parsed once: raw bytes, field positions, helpers ---

#[test]
fn head_keeps_the_bytes_of_the_final_head_only() {
    let input =
        b"\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nA: b\r\nContent-Length: 2\r\n\r\nhi";
    let run = one(input);
    let head = run.head.unwrap();
    // Leading blank lines and the interim head are not part of the stored head.
    assert_eq!(
        head.raw,
        b"HTTP/1.1 200 OK\r\nA: b\r\nContent-Length: 2\r\n\r\n"
    );
    assert_eq!(run.body, b"hi");
    // Whole or byte by byte, the raw bytes agree (`read_all` compared the runs).
    assert_eq!(ResponseHead::parse(&head.raw), Ok(head));
}

#[test]
fn field_name_ranges_point_at_each_name_as_received() {
    let raw: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding : gzip\r\nX: 1\r\n\
        transfer-encoding:chunked\r\n\r\n";
    let head = ResponseHead::parse(raw).unwrap();
    let ranges: Vec<_> = head.field_name_ranges("TRANSFER-ENCODING").collect();
    assert_eq!(ranges.len(), 2);
    let names: Vec<&[u8]> = ranges.iter().map(|r| &raw[r.clone()]).collect();
    assert_eq!(names, [&b"Transfer-Encoding"[..], b"transfer-encoding"]);
    assert_eq!(
        head.field_name_ranges("x").map(|r| &raw[r]).next(),
        Some(&b"X"[..])
    );
    assert_eq!(head.field_name_ranges("missing").count(), 0);
    // A folded value is unfolded in `headers`; the raw bytes and positions stay.
    let folded = b"HTTP/1.1 200 OK\r\nA: one\r\n two\r\nB: 3\r\n\r\n";
    let head = ResponseHead::parse(folded).unwrap();
    assert_eq!(head.header("a"), Some(&b"one   two"[..]));
    let b = head.field_name_ranges("b").next().unwrap();
    assert_eq!(&folded[b], b"B");
    // HTTP/1.2 is parsed from a copy as 1.1; raw and positions are the original's.
    let newer = b"HTTP/1.2 200 OK\r\nC: d\r\n\r\n";
    let head = ResponseHead::parse(newer).unwrap();
    assert_eq!((head.minor_version, &head.raw[..]), (2, &newer[..]));
    assert_eq!(&newer[head.field_name_ranges("c").next().unwrap()], b"C");
}

#[test]
fn parse_wants_exactly_one_complete_head() {
    assert!(ResponseHead::parse(b"HTTP/1.1 204 No Content\r\n\r\n").is_ok());
    assert_eq!(
        ResponseHead::parse(b"HTTP/1.1 200 OK\r\n\r\nbody"),
        Err(HttpError::InvalidNewLine)
    );
    assert_eq!(
        ResponseHead::parse(b"HTTP/1.1 200 OK\r\nA: b\r\n"),
        Err(HttpError::InvalidNewLine)
    );
    assert_eq!(
        ResponseHead::parse(b"ICY 200 OK\r\n\r\n"),
        Err(HttpError::NotHttp)
    );
}

#[test]
fn feed_head_stops_where_the_body_begins() {
    let input = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
    let mut reader = ResponseReader::new(Method::Get, limits());
    let fed = reader.feed_head(input).unwrap();
    assert_eq!(
        fed,
        Feed {
            consumed: input.len() - 5,
            done: false
        }
    );
    assert_eq!(reader.head().map(|h| h.status), Some(200));
    // Nothing more is taken by `feed_head`; `feed` reads the body.
    assert_eq!(reader.feed_head(b"hello").unwrap().consumed, 0);
    let mut body = Vec::new();
    assert_eq!(
        reader.feed(b"hello", &mut body).unwrap(),
        Feed {
            consumed: 5,
            done: true
        }
    );
    assert_eq!(body, b"hello");
    // A bodiless response is done at its head; a head in pieces is taken whole.
    let mut reader = ResponseReader::new(Method::Get, limits());
    assert_eq!(reader.feed_head(b"HTTP/1.1 304 Not").unwrap().consumed, 16);
    let fed = reader.feed_head(b" Modified\r\n\r\nnext").unwrap();
    assert_eq!(
        fed,
        Feed {
            consumed: 13,
            done: true
        }
    );
    assert_eq!(reader.into_head().map(|h| h.status), Some(304));
}

#[test]
fn header_helpers() {
    let head = ResponseHead::parse(
        b"HTTP/1.1 503 Busy\r\nContent-Type: Text/HTML; Charset=\"ISO-8859-2\"\r\n\
          Content-Length: 12\r\nContent-Encoding: identity, br\r\nRetry-After: 120\r\n\r\n",
    )
    .unwrap();
    assert_eq!(head.media_type().as_deref(), Some("text/html"));
    assert!(head.is_html());
    assert_eq!(head.charset(), Some(encoding_rs::ISO_8859_2));
    assert_eq!(head.content_length(), Some(12));
    assert!(head.has_content_coding());
    let now = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(784_111_777);
    assert_eq!(
        head.retry_after(now),
        Some(std::time::Duration::from_secs(120))
    );

    let bare = ResponseHead::parse(
        b"HTTP/1.1 429 Slow\r\nContent-Encoding: identity\r\nContent-Type: image/png\r\n\
          Retry-After: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n",
    )
    .unwrap();
    assert!(!bare.has_content_coding());
    assert!(!bare.is_html());
    assert_eq!(bare.charset(), None);
    assert_eq!(bare.content_length(), None);
    // 784111777 is 1994-11-06 08:49:37 UTC: an HTTP-date 60 s ahead, and one passed.
    assert_eq!(
        bare.retry_after(now - std::time::Duration::from_secs(60)),
        Some(std::time::Duration::from_secs(60))
    );
    assert_eq!(
        bare.retry_after(now + std::time::Duration::from_secs(1)),
        None
    );
    // No Content-Type: treated as HTML.
    assert!(ResponseHead::parse(b"HTTP/1.1 200 OK\r\n\r\n")
        .unwrap()
        .is_html());
}

#[test]
fn is_html_agrees_with_the_media_type() {
    for value in [
        &b"text/html"[..],
        b"TEXT/HTML; charset=utf-8",
        b"  text/html  ;",
        b"application/XHTML+xml",
        b"text/htmlx",
        b"text/plain",
        b"",
        b"  ; charset=utf-8",
        b"text/h\xfftml",
        b"t\xc3\xa9xt/html",
    ] {
        let mut raw = b"HTTP/1.1 200 OK\r\nContent-Type: ".to_vec();
        raw.extend_from_slice(value);
        raw.extend_from_slice(b"\r\n\r\n");
        let head = ResponseHead::parse(&raw).unwrap();
        let by_media_type = match head.media_type() {
            Some(mt) => mt == "text/html" || mt == "application/xhtml+xml",
            None => true,
        };
        assert_eq!(
            head.is_html(),
            by_media_type,
            "{:?}",
            String::from_utf8_lossy(value)
        );
    }
}
