//! Appending to an index as a crawl goes ([`IndexWriter`]).

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::*;

/// The writer's buffer: larger than the largest framed record, so every record goes
/// through it whole. A flush that fails (no space left) then keeps the unwritten bytes
/// buffered, and an append that fails leaves nothing of its record behind: the output
/// thread can retry either once space is back without tearing the file.
const BUFFER_BYTES: usize = MAX_RECORD_BYTES + 64 * 1024;

/// Appends entries to an index as a crawl goes.
pub struct IndexWriter {
    out: BufWriter<File>,
    path: PathBuf,
    entries: u64,
    /// The file's length once everything appended is flushed (a record boundary).
    bytes: u64,
}

impl IndexWriter {
    /// Create a new index at `path` (an existing file is an error: a crawl never
    /// overwrites its predecessor's index).
    ///
    /// # Errors
    /// [`IndexError::Io`].
    pub fn create(path: &Path) -> Result<Self, IndexError> {
        let io_err = |source| IndexError::Io {
            path: path.to_owned(),
            source,
        };
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(io_err)?;
        file.write_all(&FORMAT.header()).map_err(io_err)?;
        file.sync_all().map_err(io_err)?;
        Ok(Self {
            out: BufWriter::with_capacity(BUFFER_BYTES, file),
            path: path.to_owned(),
            entries: 0,
            bytes: disk::HEADER_BYTES as u64,
        })
    }

    /// Reopen the index of a resumed crawl for appending: check it, count its entries
    /// and cut a torn tail (returned, for the crawl log).
    ///
    /// # Errors
    /// Any [`IndexError`] of the existing file: a damaged index is not appended to,
    /// nor one of version 1 ([`IndexError::OldVersion`]).
    pub fn open_append(path: &Path) -> Result<(Self, Option<Recovered>), IndexError> {
        let io_err = |source| IndexError::Io {
            path: path.to_owned(),
            source,
        };
        let mut reader = IndexReader::open(path)?;
        if reader.version() != IndexVersion::V2 {
            return Err(IndexError::OldVersion(path.to_owned()));
        }
        let mut entries = 0;
        for entry in &mut reader {
            entry?;
            entries += 1;
        }
        let recovered = reader.recovered();
        let valid = reader.valid_bytes();
        let mut file = OpenOptions::new().write(true).open(path).map_err(io_err)?;
        if recovered.is_some() {
            file.set_len(valid).map_err(io_err)?;
            file.sync_all().map_err(io_err)?;
        }
        file.seek(SeekFrom::Start(valid)).map_err(io_err)?;
        Ok((
            Self {
                out: BufWriter::with_capacity(BUFFER_BYTES, file),
                path: path.to_owned(),
                entries,
                bytes: valid,
            },
            recovered,
        ))
    }

    /// Append one entry (buffered; durable after [`IndexWriter::sync`]).
    ///
    /// # Errors
    /// [`IndexError::Io`], also for an entry too large to encode.
    pub fn append(&mut self, entry: &IndexEntry) -> Result<(), IndexError> {
        let io_err = |source| IndexError::Io {
            path: self.path.clone(),
            source,
        };
        let payload = encode_payload(entry).map_err(io_err)?;
        // The whole frame in one write (see `BUFFER_BYTES`).
        let mut frame = Vec::with_capacity(payload.len() + 16);
        disk::write_record(&mut frame, &payload).map_err(io_err)?;
        self.out.write_all(&frame).map_err(io_err)?;
        self.entries += 1;
        self.bytes += frame.len() as u64;
        Ok(())
    }

    /// Flush and fsync: called when a checkpoint commits, so every entry of a
    /// committed capture is on disk. Returns the file's length then, which the
    /// checkpoint records: a resume cuts the index back to it (entries written after
    /// the cut describe WARC records the resume cuts off too).
    ///
    /// # Errors
    /// [`IndexError::Io`].
    pub fn sync(&mut self) -> Result<u64, IndexError> {
        let io_err = |source| IndexError::Io {
            path: self.path.clone(),
            source,
        };
        self.out.flush().map_err(io_err)?;
        self.out.get_ref().sync_data().map_err(io_err)?;
        Ok(self.bytes)
    }

    /// Entries in the file (read at open plus appended).
    pub fn entries(&self) -> u64 {
        self.entries
    }
}
