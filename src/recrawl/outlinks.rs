//! The outlinks of an earlier capture, read back from its WARC `metadata` record, so a
//! page answered `304 Not Modified` in a re-crawl still leads to the pages it links
//! (the site's shape is kept without re-reading bodies).
//!
//! trawl writes a capture's records in one write, `request`, `response` (or
//! `revisit`), `metadata`, each its own gzip member; the re-crawl index gives the
//! offset of the response or revisit record the previous crawl wrote for the URL. So
//! the reader inflates the member at that offset (to skip it, keeping its header's
//! `WARC-Record-ID`), then the next member, and takes its `outlink: URL HOP` lines if
//! it is the `metadata` record concurrent to the record skipped
//! (`WARC-Concurrent-To`). A revisit's metadata record carries the links it was given
//! (the previous crawl's), so links survive any number of re-crawls of an unchanged
//! page. Two small inflates and one seek per 304; the body of a response is inflated
//! only to be skipped (a `BufRead` gzip decoder must run to the member's end to find
//! the next one). Both records are read with the one WARC reader
//! ([`crate::warc::reader::Records`]).

use std::fs::File;
use std::io::{self, BufReader, Seek, SeekFrom};
use std::path::Path;

use super::index::IndexEntry;
use super::previous::Previous;
use crate::provenance::Hop;
use crate::warc::reader::{Damage, Framing, ReadError, RecordHead, Records, Status};

/// Largest metadata block read, in bytes: far above `max_links_per_page` lines.
const MAX_METADATA_BYTES: usize = 16 << 20;

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
    /// The record at the offset is not one of the URL's (no `WARC-Record-ID`, or
    /// another `WARC-Target-URI`), or the record after it is not its `metadata`
    /// record.
    #[error("no metadata record follows the capture in {file} at byte {offset}")]
    NoMetadata {
        /// The WARC file.
        file: String,
        /// The response record's offset.
        offset: u64,
    },
}

/// The outlinks (at most `max_links`, in the order written) of the capture `entry`
/// describes, its WARC file looked up in the first of `warc_dirs` that holds it. `Ok(links, more)`: `more` counts
/// the links past `max_links` that were not returned.
///
/// # Errors
/// [`OutlinksError`] when the file cannot be read or holds no metadata record there.
pub fn read_outlinks(
    warc_dirs: &[std::path::PathBuf],
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
    // The first directory of the chain that holds the file (see
    // `Previous::warc_dirs`); the previous crawl's own when none does.
    let path = warc_dirs
        .iter()
        .map(|d| d.join(&entry.warc_file))
        .find(|p| p.exists())
        .or_else(|| warc_dirs.first().map(|d| d.join(&entry.warc_file)))
        .unwrap_or_else(|| Path::new(&entry.warc_file).to_path_buf());
    let mut file = File::open(path).map_err(io_err)?;
    file.seek(SeekFrom::Start(entry.warc_offset))
        .map_err(io_err)?;
    let mut records =
        Records::new(BufReader::new(file), Framing::GzipMembers).starting_at(entry.warc_offset);
    // Skip the response (or revisit) record, keeping its head.
    records.set_max_block_bytes(0);
    let skipped = match records.next() {
        Some(Ok(record)) => record.head,
        Some(Err(e)) => return Err(read_err(entry, e)),
        None => return Err(no_metadata(entry)),
    };
    let id = match (skipped.record_id(), skipped.target_uri()) {
        (Some(id), target) if target.is_none_or(|t| t == entry.url) => id.to_owned(),
        _ => return Err(no_metadata(entry)),
    };
    records.set_max_block_bytes(MAX_METADATA_BYTES);
    let metadata = match records.next() {
        Some(Ok(record)) => record,
        Some(Err(e)) => return Err(read_err(entry, e)),
        None => return Err(no_metadata(entry)),
    };
    metadata_outlinks(&metadata.head, &metadata.block, &id, max_links)
        .ok_or_else(|| no_metadata(entry))
}

/// A read that failed: the file's fault (I/O, a member that does not inflate) or not
/// the records expected there.
fn read_err(entry: &IndexEntry, e: ReadError) -> OutlinksError {
    let source = match e {
        ReadError::Io(source) => source,
        ReadError::Damaged {
            damage: Damage::Gzip,
            ..
        } => io::Error::new(io::ErrorKind::InvalidData, e),
        ReadError::Damaged { .. } => return no_metadata(entry),
    };
    OutlinksError::Io {
        file: entry.warc_file.clone(),
        source,
    }
}

fn no_metadata(entry: &IndexEntry) -> OutlinksError {
    OutlinksError::NoMetadata {
        file: entry.warc_file.clone(),
        offset: entry.warc_offset,
    }
}

/// The outlinks of a `metadata` record (one record's bytes) concurrent to the record
/// `response_id` (a response or a revisit); `None` when it is another record.
pub fn parse_metadata(
    record: &[u8],
    response_id: &str,
    max_links: usize,
) -> Option<(Vec<(String, Hop)>, usize)> {
    let Ok(Status::Complete(head)) = RecordHead::parse(record) else {
        return None;
    };
    metadata_outlinks(
        &head,
        record.get(head.len_bytes()..)?,
        response_id,
        max_links,
    )
}

/// [`parse_metadata`] over a record already read: its head and (the start of) its
/// block.
fn metadata_outlinks(
    head: &RecordHead,
    block: &[u8],
    response_id: &str,
    max_links: usize,
) -> Option<(Vec<(String, Hop)>, usize)> {
    let is_metadata = head.record_type() == Some("metadata");
    let concurrent = head.fields().any(|(name, value)| {
        name.eq_ignore_ascii_case("WARC-Concurrent-To") && value == response_id
    });
    if !(is_metadata && concurrent) {
        return None;
    }
    let block = std::str::from_utf8(block).ok()?;
    let mut links = Vec::new();
    let mut more = 0usize;
    for line in block.split("\r\n") {
        // A re-crawl that could not read this page's links said so: still unknown.
        if line
            .split_once(':')
            .is_some_and(|(name, _)| name == crate::warc::OUTLINKS_UNKNOWN)
        {
            return None;
        }
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

/// The links of the previous capture `entry`, read back from its `metadata` record
/// along the chain of previous crawls ([`Previous::warc_dirs`], [`read_outlinks`]),
/// at most `max_links`: for a page answered `304 Not Modified` in a re-crawl, or a URL
/// skipped on its sitemap `<lastmod>`. Annotates the crawl-log line:
/// `previous-links:N`, plus `links-truncated:M` past the cap, or
/// `previous-links-error` when they could not be read (the page's links are then only
/// those the previous URLs give).
pub fn previous_links(
    previous: &Previous,
    entry: &IndexEntry,
    max_links: usize,
    annotations: &mut Vec<String>,
) -> Option<Vec<(String, Hop)>> {
    match read_outlinks(previous.warc_dirs(), entry, max_links) {
        Ok((links, more)) => {
            annotations.push(format!("previous-links:{}", links.len()));
            if more > 0 {
                annotations.push(format!("links-truncated:{more}"));
            }
            Some(links)
        }
        Err(e) => {
            tracing::debug!(url = %entry.url, error = %e, "re-crawl: previous outlinks not read");
            annotations.push("previous-links-error".to_owned());
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A re-crawl that could not read a 304 page's links wrote
    /// `outlinksUnknown`: the next one reports the loss again, not a page without links.
    #[test]
    fn links_written_as_unknown_stay_unknown() {
        let block = crate::warc::capture::metadata_block(&crate::warc::CaptureMetadata {
            outlinks_unknown: true,
            ..Default::default()
        });
        let block = String::from_utf8(block).unwrap();
        assert!(
            block.contains("outlinksUnknown: previous-links-error\r\n"),
            "{block}"
        );
        let rec = format!(
            "WARC/1.1\r\nWARC-Type: metadata\r\nWARC-Concurrent-To: <urn:uuid:1>\r\n\r\n{block}\r\n\r\n"
        );
        assert_eq!(parse_metadata(rec.as_bytes(), "<urn:uuid:1>", 10), None);
        let known = rec.replace("outlinksUnknown: previous-links-error\r\n", "");
        assert_eq!(
            parse_metadata(known.as_bytes(), "<urn:uuid:1>", 10),
            Some((Vec::new(), 0))
        );
    }

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
        assert!(parse_metadata(rec, "", 9).is_none(), "an id is required");
    }

    /// The skipped record's head names the id the metadata record must be
    /// concurrent to, and its target.
    #[test]
    fn the_skipped_record_names_its_id_and_target() {
        let rec = b"WARC/1.1\r\nWARC-Type: revisit\r\nWARC-Record-ID: <urn:uuid:9>\r\n\
WARC-Target-URI: http://a/x\r\n\r\nHTTP/1.1 304\r\n";
        let Ok(Status::Complete(head)) = RecordHead::parse(rec) else {
            panic!("head of {rec:?}");
        };
        assert_eq!(head.record_id(), Some("<urn:uuid:9>"));
        assert_eq!(head.target_uri(), Some("http://a/x"));
        assert_eq!(
            RecordHead::parse(b"WARC/1.1\r\nWARC-Type: x"),
            Ok(Status::Partial)
        );
    }
}
