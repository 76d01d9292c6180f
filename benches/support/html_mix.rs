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

use trawl::provenance::WarcDate;
use trawl::warc::{Record, RecordId, RecordType};

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
