//! Captures of every shape for the writer, and its configuration in the tests.

use std::path::Path;

use trawl::http::{Method, ResponseHead, ResponseLimits};
use trawl::provenance::{Digest, FetchTimings, Hop, Truncation, WarcDate};
use trawl::warc::{Capture, CaptureMetadata, HttpResponse, Outlink, RevisitOf, WarcWriterConfig};

// sample captures

pub const CHUNKED_HEAD: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n";

pub fn body(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let words = [
        "<p>", "trawl ", "crawl ", "warc ", "</p>\n", "record ", "a href ",
    ];
    let mut out = Vec::with_capacity(n + 16);
    while out.len() < n {
        out.extend_from_slice(words[rng.usize(..words.len())].as_bytes());
    }
    out.truncate(n);
    out
}

/// The response the fetcher's reader makes of `wire` (a head and its framed body): the
/// parsed head and the payload with the transfer coding removed, as a crawl hands them
/// to the writer.
pub fn from_wire(wire: &[u8]) -> HttpResponse {
    let run =
        trawl::http::run_responses(wire, &[usize::MAX], Method::Get, ResponseLimits::default())
            .remove(0);
    HttpResponse::new(&run.head.unwrap(), run.body.into())
}

/// A response of head `head` whose payload is `payload` as given (a body cut short, or
/// none at all for a revisit).
pub fn from_parts(head: &[u8], payload: &[u8]) -> HttpResponse {
    HttpResponse::new(&ResponseHead::parse(head).unwrap(), payload.into())
}

pub fn with_head(head: &[u8], body: &[u8]) -> Vec<u8> {
    [head, body].concat()
}

pub fn chunk(payload: &[u8], size: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for piece in payload.chunks(size) {
        out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        out.extend_from_slice(piece);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

/// A mix of capture shapes: plain, chunked, gzip content coding, truncated, revisit,
/// with and without request and metadata records.
pub fn sample_capture(i: u64) -> Capture {
    let uri = format!("http://host{}.example/page/{i}?q=a%20b", i % 3);
    let payload = body(200 + (i as usize * 397) % 5000, i);
    let mut capture = Capture {
        target_uri: uri.clone(),
        date: WarcDate::now(),
        ip: Some(if i % 2 == 0 {
            "127.0.0.1".parse().unwrap()
        } else {
            "::1".parse().unwrap()
        }),
        request: format!(
            "GET /page/{i} HTTP/1.1\r\nHost: host.example\r\nUser-Agent: trawl/test\r\n\r\n"
        )
        .as_bytes()
        .into(),
        response: HttpResponse::default(),
        truncated: None,
        revisit: None,
        metadata: Some(CaptureMetadata {
            via: Some("http://host0.example/".into()),
            hops_path: "LL".into(),
            outlinks_unknown: false,
            outlinks: vec![
                Outlink {
                    url: format!("{uri}/next"),
                    hop: Hop::Link,
                },
                Outlink {
                    url: "http://host1.example/logo.png".into(),
                    hop: Hop::Embed,
                },
            ],
            timings: FetchTimings {
                total_ms: Some(i),
                ..FetchTimings::default()
            },
        }),
    };
    match i % 6 {
        0 | 1 => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n",
                payload.len()
            );
            capture.response = from_wire(&with_head(head.as_bytes(), &payload));
        }
        2 => {
            capture.response = from_wire(&with_head(CHUNKED_HEAD, &chunk(&payload, 1000)));
        }
        3 => {
            capture.response = from_wire(&with_head(CHUNKED_HEAD, &chunk(&payload, 333)));
            capture.metadata = None;
        }
        4 => {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            std::io::Write::write_all(&mut gz, &payload).unwrap();
            let encoded = gz.finish().unwrap();
            let head = format!(
                "HTTP/1.1 404 Not Found\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
                encoded.len() + 100
            );
            capture.response = from_parts(head.as_bytes(), &encoded);
            capture.truncated = Some(Truncation::Disconnect);
            capture.request = Default::default();
        }
        _ => {
            capture.response = from_parts(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\n",
                b"",
            );
            capture.revisit = Some(RevisitOf {
                payload_digest: Digest::of(b"hello"),
                target_uri: "http://host0.example/first".into(),
                date: WarcDate::from_unix_micros(1_700_000_000_000_000),
                record_id: None,
                profile: trawl::warc::RevisitProfile::IdenticalPayload,
            });
        }
    }
    capture
}

/// The de-chunked payload of a sample capture.
pub fn http_payload(capture: &Capture) -> Vec<u8> {
    capture.response.payload.to_vec()
}

pub fn config(dir: &Path) -> WarcWriterConfig {
    let mut config = WarcWriterConfig::new(dir);
    config.warcinfo.from = Some("ops@example.org".into());
    config.gzip_level = 1;
    config
}

/// A writer in `dir` whose files hold two captures of `payload` (a rotation before
/// every third): the size of a file with one, plus some slack for the random record
/// ids (which compress a little differently).
pub fn two_capture_writer(dir: &Path, payload: &[u8]) -> trawl::warc::WarcWriter {
    let scratch = tempfile::tempdir().unwrap();
    let mut probe = trawl::warc::WarcWriter::new(config(scratch.path())).unwrap();
    probe
        .write_capture(&plain_capture("http://a.example/s", "200 OK", payload))
        .unwrap();
    let one = probe.position().unwrap().offset;
    let mut config = config(dir);
    config.max_file_bytes = one + 100;
    trawl::warc::WarcWriter::new(config).unwrap()
}

/// A plain capture of `payload` at `uri` with the given status, request included.
pub fn plain_capture(uri: &str, status: &str, payload: &[u8]) -> Capture {
    Capture {
        target_uri: uri.to_owned(),
        date: WarcDate::now(),
        ip: Some("127.0.0.1".parse().unwrap()),
        request: format!("GET {uri} HTTP/1.1\r\nHost: a.example\r\n\r\n")
            .as_bytes()
            .into(),
        response: from_wire(&with_head(
            format!(
                "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n",
                payload.len()
            )
            .as_bytes(),
            payload,
        )),
        truncated: None,
        revisit: None,
        metadata: None,
    }
}
