//! The real page mix the WARC deflate choice is measured on (`docs/warc.md`,
//! "Compression level and implementation"): identity-coded HTML pages of 5-100 KB from
//! three sources, each page wrapped in a WARC `response` record (WARC header, HTTP
//! head, page) as the writer stores it, one gzip member per record.
//!
//! - `javadoc`: the Debian OpenJDK 17 API docs (`apt-get install openjdk-17-doc`),
//!   `/usr/share/doc/openjdk-17-jre-headless/api`;
//! - `python`: the Debian Python 3.11 docs (`apt-get install python3.11-doc`),
//!   `/usr/share/doc/python3.11/html`;
//! - `static`: the generated news-like site of the real-site benchmark,
//!   `python3 tools/realsite/gensite.py DIR 4 1200 31`, from `$TRAWL_STATIC_SITE`
//!   (default `/tmp/trawl-gensite`).
//!
//! Per source, the `.html` files of 5,000-100,000 bytes, sorted by path, and up to
//! [`PER_SOURCE`] of them evenly spaced: a fixed, reproducible set. A missing source is
//! left out (and said so on stderr).

#![allow(dead_code)] // shared by a bench and an example, each using part of it

use std::path::{Path, PathBuf};

use std::io::Read;

use trawl::http::ResponseHead;
use trawl::provenance::{FetchTimings, Hop, WarcDate};
use trawl::warc::gzip::IGZIP_MIN_BYTES;
use trawl::warc::{Capture, CaptureMetadata, HttpResponse, Outlink, Record, RecordId, RecordType};

/// Pages taken from each source at most.
pub const PER_SOURCE: usize = 600;

/// One source's pages.
pub struct Source {
    pub name: &'static str,
    pub pages: Vec<Vec<u8>>,
    /// Where each page was read from.
    pub paths: Vec<PathBuf>,
}

/// The sources found on this machine, in a fixed order.
pub fn sources() -> Vec<Source> {
    let static_site =
        std::env::var("TRAWL_STATIC_SITE").unwrap_or_else(|_| "/tmp/trawl-gensite".to_owned());
    let dirs = [
        (
            "javadoc",
            PathBuf::from("/usr/share/doc/openjdk-17-jre-headless/api"),
        ),
        ("python", PathBuf::from("/usr/share/doc/python3.11/html")),
        ("static", PathBuf::from(static_site)),
    ];
    dirs.into_iter()
        .filter_map(|(name, dir)| dir_source(name, &dir, PER_SOURCE))
        .collect()
}

/// The `.html` files of 5,000-100,000 bytes under `dir`, sorted by path, `n` of them
/// evenly spaced, with their paths; `None` (said on stderr) when there are none.
pub fn dir_source(name: &'static str, dir: &Path, n: usize) -> Option<Source> {
    let paths = html_files(dir);
    if paths.is_empty() {
        eprintln!(
            "html mix: no pages of 5-100 KB under {}, {name} left out",
            dir.display()
        );
        return None;
    }
    let (paths, pages) = spaced(&paths, n)
        .into_iter()
        .filter_map(|p| Some((p.clone(), std::fs::read(p).ok()?)))
        .unzip();
    Some(Source { name, pages, paths })
}

/// `page` as a serialized `response` record of URL number `n`: WARC header, HTTP
/// response head, page.
pub fn response_record(page: &[u8], n: usize) -> Vec<u8> {
    let head = format!(
        "HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: Sat, 28 Nov 2026 06:00:00 GMT\r\n\
         Content-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Last-Modified: Fri, 27 Nov 2026 18:00:00 GMT\r\nConnection: keep-alive\r\n\
         ETag: \"6745a1b0-{n:x}\"\r\nAccept-Ranges: bytes\r\n\r\n",
        page.len()
    );
    let id = RecordId::from_uuid(uuid::Uuid::from_u128(0x1000 + n as u128));
    let record = Record::new(
        RecordType::Response,
        id,
        WarcDate::from_unix_micros(1_796_000_000_000_000),
    )
    .field(
        "WARC-Target-URI",
        format!("http://127.0.0.31/section/page-{n}.html"),
    )
    .and_then(|r| r.field("WARC-IP-Address", "127.0.0.31"))
    .and_then(|r| r.content_type("application/http; msgtype=response"))
    .unwrap_or_else(|e| panic!("record: {e}"))
    .block_part(head.as_bytes())
    .block_part(page)
    .with_block_digest();
    record.to_bytes()
}

fn html_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "html")
                && path
                    .metadata()
                    .is_ok_and(|m| (5_000..=100_000).contains(&m.len()))
            {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// `n` of `paths`, evenly spaced (all of them when there are no more than `n`).
fn spaced(paths: &[PathBuf], n: usize) -> Vec<&PathBuf> {
    if paths.len() <= n {
        return paths.iter().collect();
    }
    (0..n)
        .filter_map(|i| paths.get(i * paths.len() / n))
        .collect()
}

/// A record type and serialized records of that type.
pub type RecordGroup = (String, Vec<Vec<u8>>);

/// The records under [`IGZIP_MIN_BYTES`] in the WARC files under `dir`, decoded, grouped
/// by `WARC-Type`.
pub fn small_records(dir: &Path) -> Vec<RecordGroup> {
    let mut groups: Vec<RecordGroup> = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .filter_map(|e| Some(e.ok()?.path()))
        .collect();
    files.sort();
    for file in files {
        let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("read: {e}"));
        let mut rest: &[u8] = &bytes;
        while !rest.is_empty() {
            let mut record = Vec::new();
            flate2::bufread::GzDecoder::new(&mut rest)
                .read_to_end(&mut record)
                .unwrap_or_else(|e| panic!("decode: {e}"));
            if record.len() >= IGZIP_MIN_BYTES {
                continue;
            }
            let head = String::from_utf8_lossy(record.get(..200).unwrap_or(&record));
            let kind = head
                .lines()
                .find_map(|l| l.strip_prefix("WARC-Type: "))
                .unwrap_or("?")
                .to_owned();
            match groups.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, records)) => records.push(record),
                None => groups.push((kind, vec![record])),
            }
        }
    }
    groups
}

/// `body` as a whole capture at `url`: a GET request, a 200 response, and metadata with
/// the page's own links as outlinks ([`outlinks`]).
pub fn capture(body: &[u8], url: &str) -> Capture {
    let head = format!(
        "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/html; charset=utf-8\r\n\
         Content-Length: {}\r\nLast-Modified: Fri, 27 Nov 2026 18:00:00 GMT\r\n\r\n",
        body.len()
    );
    let base = url::Url::parse(url).unwrap_or_else(|e| panic!("{url}: {e}"));
    let host = base.host_str().unwrap_or_default().to_owned();
    let via = base
        .join("./")
        .map_or_else(|_| url.to_owned(), String::from);
    Capture {
        target_uri: url.to_owned(),
        date: WarcDate::from_unix_micros(1_796_000_000_000_000),
        ip: host.parse().ok(),
        request: format!(
            "GET {} HTTP/1.1\r\nHost: {host}\r\n\
             User-Agent: trawl/0.1 (+https://github.com/trawl-crawler/trawl)\r\n\
             From: bench@example.org\r\nAccept: */*\r\nAccept-Encoding: gzip, deflate, br\r\n\r\n",
            base.path()
        )
        .into_bytes()
        .into(),
        response: HttpResponse::new(
            &ResponseHead::parse(head.as_bytes()).unwrap_or_else(|e| panic!("head: {e}")),
            body.to_vec().into(),
        ),
        truncated: None,
        revisit: None,
        metadata: Some(CaptureMetadata {
            via: Some(via),
            hops_path: "LL".into(),
            outlinks_unknown: false,
            outlinks: outlinks(body, &base),
            timings: FetchTimings {
                total_ms: Some(3),
                ..FetchTimings::default()
            },
        }),
    }
}

/// The page's `href` (links) and `src` (embeds) values, resolved against `base`, http(s)
/// only, without fragments, each once: a rough stand-in for the crawler's extractor.
pub fn outlinks(body: &[u8], base: &url::Url) -> Vec<Outlink> {
    let text = String::from_utf8_lossy(body);
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for (attr, hop) in [(" href=\"", Hop::Link), (" src=\"", Hop::Embed)] {
        for (at, _) in text.match_indices(attr) {
            let value = text.get(at + attr.len()..).unwrap_or_default();
            let Some(value) = value.split('"').next() else {
                continue;
            };
            let Ok(mut link) = base.join(value) else {
                continue;
            };
            link.set_fragment(None);
            if matches!(link.scheme(), "http" | "https") && seen.insert(link.to_string()) {
                out.push(Outlink {
                    url: link.into(),
                    hop,
                });
            }
        }
    }
    out
}
