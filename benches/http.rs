//! Micro-benchmarks of the HTTP layer's hot paths, each beside a same-run baseline and
//! each checking its answer:
//! - head parsing (ns per response) vs bare httparse on the same bytes;
//! - chunked decoding (bytes/s) vs a plain copy of the same data;
//! - gzip and brotli decoding (bytes/s of output) vs flate2's and brotli's own readers;
//! - writing a crawl's GET (ns per request), with a canonical `Referer` and without one.
//!
//! Run: `cargo bench --bench http`.

use std::hint::black_box;
use std::io::{Read, Write};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use trawl::http::{
    write_request, ContentDecoder, ContentEncoding, DecodeLimits, Method, RequestHead,
    ResponseLimits, ResponseReader,
};

/// Response heads as real servers send them (nginx, Apache, a CDN), 10-20 fields.
fn heads() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        (
            "nginx_12",
            b"HTTP/1.1 200 OK\r\n\
Server: nginx/1.24.0\r\n\
Date: Sun, 22 Nov 2026 10:00:00 GMT\r\n\
Content-Type: text/html; charset=utf-8\r\n\
Content-Length: 0\r\n\
Last-Modified: Fri, 20 Nov 2026 08:12:44 GMT\r\n\
Connection: keep-alive\r\n\
ETag: \"6560a3bc-1f2a\"\r\n\
Cache-Control: max-age=600\r\n\
Expires: Sun, 22 Nov 2026 10:10:00 GMT\r\n\
Vary: Accept-Encoding\r\n\
X-Content-Type-Options: nosniff\r\n\
Accept-Ranges: bytes\r\n\r\n"
                .to_vec(),
        ),
        (
            "cdn_20",
            b"HTTP/1.1 200 OK\r\n\
Content-Type: text/html; charset=UTF-8\r\n\
Content-Length: 0\r\n\
Connection: keep-alive\r\n\
Date: Sun, 22 Nov 2026 10:00:00 GMT\r\n\
Server: ECAcc (nyb/1D2E)\r\n\
Cache-Control: public, max-age=0, must-revalidate\r\n\
Age: 1234\r\n\
ETag: W/\"a1b2c3d4e5f60718293a4b5c6d7e8f90\"\r\n\
Last-Modified: Thu, 19 Nov 2026 17:40:02 GMT\r\n\
Vary: Accept-Encoding, Cookie\r\n\
X-Cache: HIT\r\n\
X-Cache-Hits: 17\r\n\
X-Served-By: cache-ewr18133-EWR\r\n\
X-Timer: S1763805600.123456,VS0,VE1\r\n\
Strict-Transport-Security: max-age=31536000; includeSubDomains; preload\r\n\
Content-Security-Policy: default-src 'self'; img-src * data:; script-src 'self' https://cdn.example.com\r\n\
Set-Cookie: session=9f8e7d6c5b4a39281706; Path=/; Secure; HttpOnly; SameSite=Lax\r\n\
Link: <https://cdn.example.com/style.css>; rel=preload; as=style\r\n\
Alt-Svc: h3=\":443\"; ma=86400\r\n\
Referrer-Policy: strict-origin-when-cross-origin\r\n\r\n"
                .to_vec(),
        ),
    ]
}

fn head_parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("http_head_parse");
    for (name, head) in heads() {
        let fields = head.windows(2).filter(|w| w == b"\r\n").count() - 2;
        group.throughput(Throughput::Elements(1));
        group.bench_with_input(BenchmarkId::new("trawl_reader", name), &head, |b, head| {
            let mut body = Vec::new();
            b.iter(|| {
                let mut reader = ResponseReader::new(Method::Get, ResponseLimits::default());
                let feed = reader.feed(black_box(head), &mut body).expect("valid head");
                assert!(feed.done && feed.consumed == head.len());
                let parsed = reader.head().expect("head");
                assert!(parsed.status == 200 && parsed.headers.len() == fields);
                black_box(reader.keep_alive())
            })
        });
        group.bench_with_input(
            BenchmarkId::new("httparse_baseline", name),
            &head,
            |b, head| {
                b.iter(|| {
                    let mut headers = [httparse::EMPTY_HEADER; 128];
                    let mut response = httparse::Response::new(&mut headers);
                    let status = response.parse(black_box(head)).expect("valid head");
                    assert!(status == httparse::Status::Complete(head.len()));
                    assert!(response.code == Some(200) && response.headers.len() == fields);
                    black_box(response.headers.len())
                })
            },
        );
    }
    group.finish();
}

/// A pseudo-random body of `len` bytes.
fn body_bytes(len: usize) -> Vec<u8> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn chunk_encode(body: &[u8], chunk: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + body.len() / chunk * 12 + 16);
    for piece in body.chunks(chunk) {
        out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        out.extend_from_slice(piece);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

fn chunked_decode(c: &mut Criterion) {
    let body = body_bytes(4 << 20);
    let mut group = c.benchmark_group("http_chunked_decode");
    group.throughput(Throughput::Bytes(body.len() as u64));
    for chunk in [1024usize, 16 * 1024] {
        let encoded = chunk_encode(&body, chunk);
        // Fed as a socket would: 64 KiB reads.
        group.bench_with_input(BenchmarkId::new("trawl", chunk), &encoded, |b, encoded| {
            let mut out = Vec::with_capacity(body.len());
            b.iter(|| {
                out.clear();
                let mut d = trawl::http::chunked::ChunkedDecoder::default();
                let mut done = false;
                for read in encoded.chunks(64 * 1024) {
                    let mut pos = 0;
                    while pos < read.len() && !done {
                        let (n, d_done) = d.decode(&read[pos..], &mut out).expect("valid");
                        pos += n;
                        done = d_done;
                    }
                }
                assert!(done && out.len() == body.len() && out[..] == body[..]);
            })
        });
    }
    group.bench_function("copy_baseline", |b| {
        let mut out = Vec::with_capacity(body.len());
        b.iter(|| {
            out.clear();
            for read in body.chunks(64 * 1024) {
                out.extend_from_slice(black_box(read));
            }
            assert!(out.len() == body.len() && out[..] == body[..]);
        })
    });
    group.finish();
}

/// About 1 MiB of HTML-like text.
fn page() -> Vec<u8> {
    let mut page = b"<!doctype html><html><head><title>bench</title></head><body>\n".to_vec();
    let mut i = 0u32;
    while page.len() < 1 << 20 {
        page.extend_from_slice(
            format!(
                "<div class=\"item\" id=\"i{i}\"><a href=\"/section/{}/page-{i}.html\">Item {i}</a> \
                 <span>{} comments, score {}</span></div>\n",
                i % 37,
                (i * 7919) % 1000,
                (i * 104_729) % 977
            )
            .as_bytes(),
        );
        i += 1;
    }
    page
}

fn content_decode(c: &mut Criterion) {
    let page = page();
    let limits = DecodeLimits {
        max_decoded_bytes: 1 << 30,
        max_expansion_ratio: 1000,
    };
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
    gz.write_all(&page).expect("vec");
    let gz = gz.finish().expect("vec");
    let mut br = Vec::new();
    {
        let mut w = brotli::CompressorWriter::new(&mut br, 4096, 5, 22);
        w.write_all(&page).expect("vec");
    }
    let mut group = c.benchmark_group("http_content_decode");
    group.throughput(Throughput::Bytes(page.len() as u64));
    for (name, encoding, input) in [
        ("gzip", ContentEncoding::Gzip, &gz),
        ("br", ContentEncoding::Brotli, &br),
    ] {
        group.bench_function(BenchmarkId::new("trawl", name), |b| {
            let mut out = Vec::with_capacity(page.len());
            b.iter(|| {
                out.clear();
                let mut d = ContentDecoder::new(encoding, limits);
                for read in input.chunks(16 * 1024) {
                    d.push(black_box(read), &mut out).expect("valid");
                }
                d.finish(&mut out).expect("complete");
                assert!(out.len() == page.len() && out[..] == page[..]);
            })
        });
    }
    group.bench_function(BenchmarkId::new("flate2_reader_baseline", "gzip"), |b| {
        let mut out = Vec::with_capacity(page.len());
        b.iter(|| {
            out.clear();
            flate2::read::MultiGzDecoder::new(black_box(&gz[..]))
                .read_to_end(&mut out)
                .expect("valid");
            assert!(out.len() == page.len() && out[..] == page[..]);
        })
    });
    group.bench_function(BenchmarkId::new("brotli_reader_baseline", "br"), |b| {
        let mut out = Vec::with_capacity(page.len());
        b.iter(|| {
            out.clear();
            brotli::Decompressor::new(black_box(&br[..]), 16 * 1024)
                .read_to_end(&mut out)
                .expect("valid");
            assert!(out.len() == page.len() && out[..] == page[..]);
        })
    });
    group.finish();
}

/// One page request as the crawl writes it: the `Referer` is the linking page's
/// canonical URL; the baseline is the same request without it.
fn request_write(c: &mut Criterion) {
    let mut group = c.benchmark_group("http_request_write");
    group.throughput(Throughput::Elements(1));
    let url = url::Url::parse("http://host-07.test:8080/section/page-0123.html").expect("url");
    let referer = "http://host-07.test:8080/section/index-0042.html?sort=name";
    for (name, referer) in [("no_referer", None), ("canonical_referer", Some(referer))] {
        let mut req = RequestHead::get(url.clone(), trawl::default_user_agent());
        req.referer = referer.map(str::to_owned);
        group.bench_function(name, |b| {
            let mut out = Vec::with_capacity(512);
            b.iter(|| {
                out.clear();
                write_request(black_box(&req), &mut out);
                assert!(out.ends_with(b"\r\n\r\n"));
                black_box(out.len())
            })
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    head_parse,
    chunked_decode,
    content_decode,
    request_write
);
criterion_main!(benches);
