//! `tallies-NNNN.bin`: one shard's per-host tallies (pages fetched, consecutive
//! failures, parked), so a resume neither hands every host a fresh
//! `--max-pages-per-host` budget nor forgets which hosts were failing.
//!
//! ```text
//! header:  b"TRWLTAL\0" | version: u32 LE (2)
//! record:  varint payload_len | crc32(payload): u32 LE | payload   (`crate::disk`)
//! payload: 'T' | varint host_len | host | varint pages | varint failures | parked u8
//!          'Z' | varint rows                                        (last record)
//! ```
//!
//! Version 1 was the tab-separated text of builds before 2026-11-25
//! (`tallies-NNNN.tsv`: `host<TAB>pages<TAB>failures<TAB>parked`, no header, no
//! checksum, a bad number read as 0). It is still read, strictly: a line that is not
//! four well-formed fields is an error naming the file and the line.
//!
//! Unlike the robots cache, the tallies are state, like the frontier: a damaged file
//! (bad header, checksum, a row that does not decode, a missing end record) stops a
//! resume with an error naming the file and the byte, and `trawl inspect` reports it.
//! This module is the file format only; the engine maps rows to its `HostTally`.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::CheckpointError;
use crate::disk::{
    put_bytes, put_varint, take_bytes, take_varint, write_record, DiskError, Format, Op,
    RecordError, RecordReader,
};

/// The tallies format: magic `TRWLTAL\0`, version 2 (version 1 was the TSV).
pub const FORMAT: Format = Format::new(*b"TRWLTAL\0", 2, MAX_ROW_BYTES);
/// A row larger than this is damage (host keys are bounded by `--max-url-bytes`).
const MAX_ROW_BYTES: usize = 64 << 10;
const TYPE_ROW: u8 = b'T';
const TYPE_END: u8 = b'Z';

/// One host's tallies as stored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TallyRow {
    /// The host key (`scheme://host:port`).
    pub host: String,
    /// Pages fetched from the host (those in flight at the cut not counted: they are
    /// in the frontier dump and fetched again).
    pub pages: u64,
    pub consecutive_failures: u32,
    /// Whether the host was parked for failing.
    pub parked: bool,
}

/// The file name of shard `shard`'s tallies.
pub fn file_name(shard: usize) -> String {
    format!("tallies-{shard:04}.bin")
}

/// The file name of shard `shard`'s tallies in checkpoints of older builds.
pub fn legacy_file_name(shard: usize) -> String {
    format!("tallies-{shard:04}.tsv")
}

/// Encodes one row's payload (type byte included).
pub fn encode_row(row: &TallyRow, out: &mut Vec<u8>) {
    out.push(TYPE_ROW);
    put_bytes(out, row.host.as_bytes());
    put_varint(out, row.pages);
    put_varint(out, u64::from(row.consecutive_failures));
    out.push(u8::from(row.parked));
}

/// Decodes a row payload written by [`encode_row`]; `Err` names what is wrong.
///
/// # Errors
/// A short or overlong payload, a host that is empty or not UTF-8, a failure count
/// beyond u32, a parked byte other than 0 or 1.
pub fn decode_row(payload: &[u8]) -> Result<TallyRow, &'static str> {
    let Some((&TYPE_ROW, mut input)) = payload.split_first() else {
        return Err("not a row record");
    };
    let host = take_bytes(&mut input).map_err(|_| "host")?;
    let host = std::str::from_utf8(host)
        .ok()
        .filter(|h| !h.is_empty())
        .ok_or("host")?
        .to_owned();
    let pages = take_varint(&mut input).map_err(|_| "pages")?;
    let consecutive_failures = take_varint(&mut input)
        .ok()
        .and_then(|f| u32::try_from(f).ok())
        .ok_or("consecutive failures")?;
    let parked = match input {
        [0] => false,
        [1] => true,
        _ => return Err("parked flag"),
    };
    Ok(TallyRow {
        host,
        pages,
        consecutive_failures,
        parked,
    })
}

/// Writes `rows` to `path` (created or truncated) with an end record, and fsyncs it;
/// returns the bytes written.
///
/// # Errors
/// The failed operation on `path`.
pub fn write_file(
    path: &Path,
    rows: impl IntoIterator<Item = TallyRow>,
) -> Result<u64, CheckpointError> {
    let file = File::create(path).map_err(DiskError::at(Op::Create, path))?;
    let mut w = BufWriter::new(file);
    let write = DiskError::at(Op::Write, path);
    let result = (|| -> io::Result<u64> {
        w.write_all(&FORMAT.header())?;
        let mut bytes = crate::disk::HEADER_BYTES as u64;
        let mut n = 0u64;
        let mut payload = Vec::new();
        for row in rows {
            payload.clear();
            encode_row(&row, &mut payload);
            bytes += write_record(&mut w, &payload)?;
            n += 1;
        }
        payload.clear();
        payload.push(TYPE_END);
        put_varint(&mut payload, n);
        bytes += write_record(&mut w, &payload)?;
        w.flush()?;
        Ok(bytes)
    })();
    let bytes = result.map_err(write)?;
    w.get_ref()
        .sync_all()
        .map_err(DiskError::at(Op::Fsync, path))?;
    Ok(bytes)
}

fn damaged(path: &Path, detail: String) -> CheckpointError {
    CheckpointError::Damaged {
        path: path.to_path_buf(),
        detail,
    }
}

/// Reads a tallies file: the binary format, or (by its `.tsv` name) the text of older
/// builds. Returns the rows and the bytes read through.
///
/// # Errors
/// [`CheckpointError::Io`] if the file cannot be opened or read;
/// [`CheckpointError::Damaged`], naming the byte (or the line), for a bad header, a
/// record cut short or failing its checksum, a row that does not decode, an end record
/// that is missing or disagrees with the rows, or bytes after it.
pub fn read_file(path: &Path) -> Result<(Vec<TallyRow>, u64), CheckpointError> {
    let file = File::open(path).map_err(DiskError::at(Op::Open, path))?;
    if path.extension().is_some_and(|e| e == "tsv") {
        return read_legacy(path, BufReader::new(file));
    }
    let read = |e| CheckpointError::from(DiskError::at(Op::Read, path)(e));
    let mut r = match RecordReader::open(BufReader::new(file), &FORMAT) {
        Ok(r) => r,
        Err(RecordError::Io(e)) => return Err(read(e)),
        Err(e) => return Err(damaged(path, format!("bad header: {e}"))),
    };
    let mut rows = Vec::new();
    let mut payload = Vec::new();
    loop {
        let at = match r.next_record(&mut payload) {
            Ok(Some(at)) => at,
            Ok(None) => {
                return Err(damaged(
                    path,
                    format!(
                        "at byte {}: the file ends before its end record (truncated)",
                        r.offset()
                    ),
                ))
            }
            Err(RecordError::Io(e)) => return Err(read(e)),
            Err(e) => return Err(damaged(path, e.to_string())),
        };
        if payload.first() == Some(&TYPE_END) {
            let mut input = payload.get(1..).unwrap_or_default();
            let n = take_varint(&mut input).ok().filter(|_| input.is_empty());
            if n != Some(rows.len() as u64) {
                return Err(damaged(
                    path,
                    format!("at byte {at}: the end record does not count the rows read"),
                ));
            }
            if !r.is_at_end().map_err(read)? {
                return Err(damaged(
                    path,
                    format!("at byte {}: bytes after the end record", r.offset()),
                ));
            }
            return Ok((rows, r.offset()));
        }
        let row = decode_row(&payload)
            .map_err(|what| damaged(path, format!("at byte {at}: bad row ({what})")))?;
        rows.push(row);
    }
}

/// The text format of older builds, read strictly.
fn read_legacy(path: &Path, input: impl BufRead) -> Result<(Vec<TallyRow>, u64), CheckpointError> {
    let mut rows = Vec::new();
    let mut bytes = 0u64;
    for (n, line) in input.lines().enumerate() {
        let line = line.map_err(|e| CheckpointError::from(DiskError::at(Op::Read, path)(e)))?;
        bytes += line.len() as u64 + 1;
        let row = parse_legacy_line(&line).ok_or_else(|| {
            damaged(
                path,
                format!(
                    "line {} is not `host<TAB>pages<TAB>failures<TAB>parked`",
                    n + 1
                ),
            )
        })?;
        rows.push(row);
    }
    Ok((rows, bytes))
}

fn parse_legacy_line(line: &str) -> Option<TallyRow> {
    let mut f = line.split('\t');
    let (Some(host), Some(pages), Some(failures), Some(parked), None) =
        (f.next(), f.next(), f.next(), f.next(), f.next())
    else {
        return None;
    };
    Some(TallyRow {
        host: Some(host).filter(|h| !h.is_empty())?.to_owned(),
        pages: pages.parse().ok()?,
        consecutive_failures: failures.parse().ok()?,
        parked: match parked {
            "0" => false,
            "1" => true,
            _ => return None,
        },
    })
}

/// The tallies files of checkpoint directory `dir`, in name order: `tallies-*.bin`,
/// or the `tallies-*.tsv` of an older build's checkpoint when it holds no `.bin`.
///
/// # Errors
/// The directory cannot be listed.
pub fn files(dir: &Path) -> Result<Vec<PathBuf>, CheckpointError> {
    let list = std::fs::read_dir(dir).map_err(|e| CheckpointError::Io {
        op: "list",
        path: dir.to_path_buf(),
        source: e,
    })?;
    let (mut bin, mut tsv) = (Vec::new(), Vec::new());
    for entry in list {
        let path = entry
            .map_err(|e| CheckpointError::Io {
                op: "list",
                path: dir.to_path_buf(),
                source: e,
            })?
            .path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if name.starts_with("tallies-") {
            if name.ends_with(".bin") {
                bin.push(path);
            } else if name.ends_with(".tsv") {
                tsv.push(path);
            }
        }
    }
    let mut files = if bin.is_empty() { tsv } else { bin };
    files.sort();
    Ok(files)
}

/// Every row of every tallies file of checkpoint directory `dir`.
///
/// # Errors
/// As [`files`] and [`read_file`]: the first file that cannot be read or is damaged.
pub fn read_dir(dir: &Path) -> Result<Vec<TallyRow>, CheckpointError> {
    let mut rows = Vec::new();
    for file in files(dir)? {
        rows.extend(read_file(&file)?.0);
    }
    Ok(rows)
}

/// Fuzz entry point: decodes `data` as a tally row payload. Never panics; a row that
/// decodes re-encodes to the same bytes.
pub fn fuzz_row(data: &[u8]) {
    if let Ok(row) = decode_row(data) {
        let mut again = Vec::new();
        encode_row(&row, &mut again);
        assert_eq!(decode_row(&again), Ok(row), "tally row round trip");
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn rows() -> Vec<TallyRow> {
        (0..50u32)
            .map(|i| TallyRow {
                host: format!("http://h{i:06}.synth.test:8080"),
                pages: u64::from(i) * 1_000_003,
                consecutive_failures: i % 7,
                parked: i % 5 == 0,
            })
            .chain([TallyRow {
                host: "https://\u{fc}.test:443".into(),
                pages: u64::MAX,
                consecutive_failures: u32::MAX,
                parked: true,
            }])
            .collect()
    }

    fn written() -> (tempfile::TempDir, PathBuf, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(file_name(0));
        let n = write_file(&path, rows()).unwrap();
        let bytes = fs::read(&path).unwrap();
        assert_eq!(n, bytes.len() as u64);
        (dir, path, bytes)
    }

    fn detail(e: CheckpointError) -> String {
        match e {
            CheckpointError::Damaged { detail, .. } => detail,
            other => panic!("not damage: {other}"),
        }
    }

    #[test]
    fn rows_round_trip() {
        let (_dir, path, bytes) = written();
        let (got, read) = read_file(&path).unwrap();
        assert_eq!(got, rows());
        assert_eq!(read, bytes.len() as u64);
        let empty = path.with_file_name(file_name(1));
        write_file(&empty, Vec::new()).unwrap();
        assert_eq!(read_file(&empty).unwrap().0, Vec::new());
    }

    #[test]
    fn every_flipped_byte_and_every_truncation_is_an_error_naming_the_file() {
        let (_dir, path, bytes) = written();
        for at in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[at] ^= 0x24;
            fs::write(&path, &bad).unwrap();
            let e = read_file(&path).unwrap_err();
            assert!(e.to_string().contains("tallies-0000.bin"), "{e}");
            assert!(matches!(e, CheckpointError::Damaged { .. }), "flip at {at}");
        }
        for len in 0..bytes.len() {
            fs::write(&path, &bytes[..len]).unwrap();
            let d = detail(read_file(&path).unwrap_err());
            assert!(
                d.contains("truncated") || d.contains("header"),
                "cut at {len}: {d}"
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        fs::write(&path, &longer).unwrap();
        assert!(detail(read_file(&path).unwrap_err()).contains("after the end record"));
    }

    #[test]
    fn bad_rows_are_errors_not_zeros() {
        let row = |payload: &[u8]| decode_row(payload);
        let mut good = Vec::new();
        encode_row(&rows()[1], &mut good);
        assert_eq!(row(&good), Ok(rows()[1].clone()));
        let mut parked = good.clone();
        *parked.last_mut().unwrap() = 2;
        assert_eq!(row(&parked), Err("parked flag"));
        let mut long = good.clone();
        long.push(0);
        assert_eq!(row(&long), Err("parked flag"));
        assert_eq!(row(&good[..good.len() - 1]), Err("parked flag"));
        assert_eq!(row(&good[..good.len() - 2]), Err("consecutive failures"));
        assert_eq!(row(b"Z"), Err("not a row record"));
        assert_eq!(row(b""), Err("not a row record"));
        assert_eq!(row(b"T\x00\x00\x00\x00"), Err("host"));
        assert_eq!(row(b"T\x01\xff\x00\x00\x00"), Err("host"));
        let mut failures = vec![b'T'];
        put_bytes(&mut failures, b"http://a.test:80");
        put_varint(&mut failures, 1);
        put_varint(&mut failures, u64::from(u32::MAX) + 1);
        failures.push(0);
        assert_eq!(row(&failures), Err("consecutive failures"));
    }

    #[test]
    fn a_wrong_count_or_another_file_is_damage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(file_name(0));
        let mut bytes = FORMAT.header().to_vec();
        let mut payload = Vec::new();
        encode_row(&rows()[0], &mut payload);
        write_record(&mut bytes, &payload).unwrap();
        write_record(&mut bytes, &[TYPE_END, 2]).unwrap();
        fs::write(&path, &bytes).unwrap();
        assert!(detail(read_file(&path).unwrap_err()).contains("does not count"));
        fs::write(&path, b"TRWLSEG\0\x02\0\0\0").unwrap();
        assert!(detail(read_file(&path).unwrap_err()).contains("bad magic"));
        let mut v1 = Format::new(*b"TRWLTAL\0", 1, 1).header().to_vec();
        write_record(&mut v1, &[TYPE_END, 0]).unwrap();
        fs::write(&path, &v1).unwrap();
        assert!(detail(read_file(&path).unwrap_err()).contains("format version 1"));
        let e = read_file(&dir.path().join("missing.bin")).unwrap_err();
        assert!(matches!(e, CheckpointError::Io { op: "open", .. }), "{e}");
    }

    #[test]
    fn the_text_of_older_builds_is_read_strictly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(legacy_file_name(0));
        fs::write(
            &path,
            "http://a.test:80\t12\t0\t0\nhttp://b.test:80\t3\t4\t1\n",
        )
        .unwrap();
        let (got, bytes) = read_file(&path).unwrap();
        assert_eq!(bytes, 47);
        assert_eq!(got.len(), 2);
        assert_eq!(
            got[1],
            TallyRow {
                host: "http://b.test:80".into(),
                pages: 3,
                consecutive_failures: 4,
                parked: true,
            }
        );
        for bad in [
            "http://a.test:80\tx\t0\t0\n",
            "http://a.test:80\t1\t-1\t0\n",
            "http://a.test:80\t1\t0\t2\n",
            "http://a.test:80\t1\t0\n",
            "http://a.test:80\t1\t0\t0\textra\n",
            "\t1\t0\t0\n",
        ] {
            fs::write(&path, format!("http://ok.test:80\t1\t0\t0\n{bad}")).unwrap();
            let d = detail(read_file(&path).unwrap_err());
            assert!(d.contains("line 2"), "{bad:?}: {d}");
        }
    }

    #[test]
    fn files_prefer_the_binary_format_and_read_dir_reads_them_all() {
        let dir = tempfile::tempdir().unwrap();
        assert!(files(dir.path()).unwrap().is_empty());
        fs::write(
            dir.path().join(legacy_file_name(0)),
            "http://a.test:80\t1\t0\t0\n",
        )
        .unwrap();
        assert_eq!(read_dir(dir.path()).unwrap().len(), 1);
        write_file(&dir.path().join(file_name(1)), rows()).unwrap();
        write_file(&dir.path().join(file_name(0)), rows().into_iter().take(3)).unwrap();
        fs::write(dir.path().join("frontier-0000.seg"), b"x").unwrap();
        let f = files(dir.path()).unwrap();
        assert_eq!(f.len(), 2);
        assert!(f[0].ends_with(file_name(0)) && f[1].ends_with(file_name(1)));
        assert_eq!(read_dir(dir.path()).unwrap().len(), 3 + rows().len());
        fs::write(dir.path().join(file_name(1)), b"garbage").unwrap();
        let e = read_dir(dir.path()).unwrap_err();
        assert!(e.to_string().contains("tallies-0001.bin"), "{e}");
    }

    #[test]
    fn fuzzing_row_payloads_never_panics() {
        let mut rng = fastrand::Rng::with_seed(3);
        let mut good = Vec::new();
        encode_row(&rows()[3], &mut good);
        for _ in 0..3000 {
            let mut data = good[..rng.usize(0..=good.len())].to_vec();
            if let Some(b) = data.get_mut(rng.usize(0..good.len())) {
                *b = rng.u8(..);
            }
            fuzz_row(&data);
        }
    }
}
