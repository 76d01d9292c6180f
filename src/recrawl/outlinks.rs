//! The outlinks of an earlier capture, read back from its WARC `metadata` record, so a
//! page answered `304 Not Modified` in a re-crawl still leads to the pages it links
//! (issue 14: "the site's shape is kept without re-reading bodies").
//!
//! trawl writes a capture's records in one write, `request`, `response`, `metadata`,
//! each its own gzip member; the re-crawl index gives the response record's offset.
//! So the reader inflates the member at that offset (the response, to skip it), then
//! the next member, and takes its `outlink: URL HOP` lines if it is the `metadata`
//! record that refers to that response (`WARC-Concurrent-To`). Two small inflates and
//! one seek per 304; the body of the response is inflated only to be skipped (a
//! `BufRead` gzip decoder must run to the member's end to find the next one).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use flate2::bufread::GzDecoder;

use super::index::IndexEntry;
use crate::provenance::Hop;

/// Largest metadata record read, in bytes: far above `max_links_per_page` lines.
const MAX_METADATA_BYTES: u64 = 16 << 20;

/// Why an earlier capture's outlinks could not be read (logged; the page's links
/// are then only those the seeds already give).
#[derive(Debug, thiserror::Error)]
pub enum OutlinksError {
    /// Opening, seeking or inflating the WARC file failed.
    #[error("cannot read {file}: {source}")]
    Io {
        /// The WARC file.
        file: String,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// The record after the response is not its `metadata` record.
    #[error("no metadata record follows the capture in {file} at byte {offset}")]
    NoMetadata {
        /// The WARC file.
        file: String,
        /// The response record's offset.
        offset: u64,
    },
}

/// The outlinks (at most `max_links`, in the order written) of the capture `entry`
/// describes, its WARC file looked up in `warc_dir`. `Ok(links, more)`: `more` counts
/// the links past `max_links` that were not returned.
///
/// # Errors
/// [`OutlinksError`] when the file cannot be read or holds no metadata record there.
pub fn read_outlinks(
    warc_dir: &Path,
    entry: &IndexEntry,
    max_links: usize,
) -> Result<(Vec<(String, Hop)>, usize), OutlinksError> {
    let io_err = |source| OutlinksError::Io {
        file: entry.warc_file.clone(),
        source,
    };
    // The file name comes from an index file: refuse anything but a plain name.
    if entry.warc_file.contains(['/', '\\']) || entry.warc_file.starts_with('.') {
        return Err(io_err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not a plain file name",
        )));
    }
    let mut file = File::open(warc_dir.join(&entry.warc_file)).map_err(io_err)?;
    file.seek(SeekFrom::Start(entry.warc_offset))
        .map_err(io_err)?;
    let mut input = BufReader::new(file);
    // Skip the response (or revisit) member whole.
    io::copy(&mut GzDecoder::new(&mut input), &mut io::sink()).map_err(io_err)?;
    if input.fill_buf().map_err(io_err)?.is_empty() {
        return Err(no_metadata(entry));
    }
    let mut record = Vec::new();
    GzDecoder::new(&mut input)
        .take(MAX_METADATA_BYTES)
        .read_to_end(&mut record)
        .map_err(io_err)?;
    parse_metadata(&record, &entry.record_id, max_links).ok_or_else(|| no_metadata(entry))
}

fn no_metadata(entry: &IndexEntry) -> OutlinksError {
    OutlinksError::NoMetadata {
        file: entry.warc_file.clone(),
        offset: entry.warc_offset,
    }
}

/// The outlinks of a `metadata` record (one record's bytes) concurrent to the response
/// `response_id`; `None` when it is another record.
pub fn parse_metadata(
    record: &[u8],
    response_id: &str,
    max_links: usize,
) -> Option<(Vec<(String, Hop)>, usize)> {
    let text = std::str::from_utf8(record).ok()?;
    let (head, block) = text.split_once("\r\n\r\n")?;
    let mut is_metadata = false;
    let mut concurrent = false;
    for line in head.split("\r\n") {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("WARC-Type") {
            is_metadata = value == "metadata";
        } else if name.eq_ignore_ascii_case("WARC-Concurrent-To") {
            concurrent |= response_id.is_empty() || value == response_id;
        }
    }
    if !(is_metadata && concurrent) {
        return None;
    }
    let mut links = Vec::new();
    let mut more = 0usize;
    for line in block.split("\r\n") {
        let Some(rest) = line.strip_prefix("outlink: ") else {
            continue;
        };
        let Some((url, hop)) = rest.rsplit_once(' ') else {
            continue;
        };
        let mut codes = hop.chars();
        let (Some(code), None) = (codes.next(), codes.next()) else {
            continue;
        };
        let Some(hop) = Hop::from_code(code) else {
            continue;
        };
        if links.len() < max_links {
            links.push((url.to_owned(), hop));
        } else {
            more += 1;
        }
    }
    Some((links, more))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outlinks_of_the_concurrent_metadata_record() {
        let rec = b"WARC/1.1\r\nWARC-Type: metadata\r\nWARC-Concurrent-To: <urn:uuid:1>\r\n\
Content-Length: 9\r\n\r\nvia: http://a/\r\noutlink: http://a/x L\r\noutlink: http://a/y.png E\r\n\
outlink: http://a/z R\r\noutlink: bad\r\n\r\n\r\n";
        let (links, more) = parse_metadata(rec, "<urn:uuid:1>", 2).unwrap();
        assert_eq!(
            links,
            [
                ("http://a/x".to_owned(), Hop::Link),
                ("http://a/y.png".to_owned(), Hop::Embed)
            ]
        );
        assert_eq!(more, 1);
        assert!(parse_metadata(rec, "<urn:uuid:2>", 9).is_none());
        assert!(parse_metadata(b"WARC/1.1\r\nWARC-Type: response\r\n\r\n", "", 9).is_none());
        assert!(parse_metadata(b"\xff\xfe", "", 9).is_none());
    }
}
