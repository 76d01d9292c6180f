//! The files as the tests read them back: each gzip member decoded on its own.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use flate2::bufread::GzDecoder;

pub fn warc_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().unwrap().ends_with(".warc.gz"))
        .collect();
    files.sort();
    files
}

/// Decompresses the members of a file one by one: (offset, record bytes) per member.
pub fn members(path: &Path) -> Vec<(u64, Vec<u8>)> {
    let data = fs::read(path).unwrap();
    let mut rest: &[u8] = &data;
    let mut out = Vec::new();
    while !rest.is_empty() {
        let offset = (data.len() - rest.len()) as u64;
        let mut record = Vec::new();
        // A `&[u8]` is a `BufRead` that the decoder advances past exactly one member.
        GzDecoder::new(&mut rest).read_to_end(&mut record).unwrap();
        out.push((offset, record));
    }
    out
}

/// (header text, block) of one serialized record, checking its framing.
pub fn split(record: &[u8]) -> (String, Vec<u8>) {
    let end = record.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let header = String::from_utf8(record[..end].to_vec()).unwrap();
    let len: usize = field(&header, "Content-Length").unwrap().parse().unwrap();
    assert_eq!(
        record.len(),
        end + len + 4,
        "one record per member: {header}"
    );
    assert!(record.ends_with(b"\r\n\r\n"));
    (header, record[end..end + len].to_vec())
}

pub fn field<'h>(header: &'h str, name: &str) -> Option<&'h str> {
    header
        .lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(": ")))
}

/// Where gzip members written by flate2 start: its fixed 10-byte header (no mtime, no
/// name). A naive reference for the scanner's boundaries.
/// Offsets of the gzip members of a whole file, found by decoding them one after the
/// other (scanning for the gzip magic would also match gzip bodies, which are stored
/// uncompressed since content-coded bodies are kept at level 0).
pub fn member_starts(data: &[u8]) -> Vec<u64> {
    let mut starts = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        starts.push((data.len() - rest.len()) as u64);
        let mut sink = Vec::new();
        GzDecoder::new(&mut rest).read_to_end(&mut sink).unwrap();
    }
    starts
}
