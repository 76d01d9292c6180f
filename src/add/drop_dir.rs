//! The drop directory `OUT/add/`, through which URLs reach a running crawl.
//!
//! The writer side ([`write_batch`], used by `trawl add`, the control API and the
//! library's `CrawlHandle`) writes a file under a
//! temporary name starting with `.`, fsyncs it, renames it to `NAME.urls` and fsyncs
//! the directory, so the crawl sees either the whole file or none of it. The crawl side
//! ([`DropDir`]) polls the directory, parses new files ([`parse_batch`], sans-IO),
//! hands their URLs over, and deletes a file only once a checkpoint that holds its URLs
//! has committed. After a crash (kill -9) every file not yet deleted is read again on
//! resume; the presence bits drop the URLs the checkpoint already had, so none is lost
//! and none is fetched twice.
//!
//! Checkpoint bookkeeping: the engine tells [`DropDir::cut_begun`] when the frontier
//! cut of checkpoint `E` starts, and [`DropDir::committed`] when `E` is durable. A batch
//! handed over before the cut of `E` began is in `E`; one handed over later waits for
//! `E + 1`.

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use super::batch::{parse_batch, render_batch, Batch, BATCH_HEADER};

/// The drop directory's name inside a crawl's output directory.
pub const ADD_DIR: &str = "add";
/// Suffix of a complete batch file.
pub const BATCH_SUFFIX: &str = ".urls";
/// Largest batch file read, in bytes (larger ones are refused, left in place, logged).
pub const MAX_BATCH_BYTES: u64 = 64 << 20;

/// Why a batch file or the drop directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum DropError {
    /// The file does not start with [`BATCH_HEADER`].
    #[error("{name}: not a trawl add batch (first line is not `{BATCH_HEADER}`)")]
    NotABatch {
        /// File name.
        name: String,
    },
    /// The file is larger than [`MAX_BATCH_BYTES`].
    #[error("{name}: batch of {bytes} bytes is over the {MAX_BATCH_BYTES}-byte limit")]
    TooLarge {
        /// File name.
        name: String,
        /// Its size.
        bytes: u64,
    },
    /// An I/O error on a path.
    #[error("{path}: {op} failed")]
    Io {
        /// What was being done.
        op: &'static str,
        /// Where.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

fn io_err<'a>(op: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> DropError + 'a {
    move |source| DropError::Io {
        op,
        path: path.to_owned(),
        source,
    }
}

/// Write `urls` as a new batch in `out/add/` atomically (temporary file, fsync,
/// rename, fsync of the directory) and return the batch's path. `out` must exist (a
/// crawl's output directory); `add/` is created if needed.
///
/// # Errors
/// [`DropError::Io`] naming the step and path that failed; a temporary file is
/// removed on failure.
pub fn write_batch(out: &Path, urls: &[String]) -> Result<PathBuf, DropError> {
    if !out.is_dir() {
        return Err(DropError::Io {
            op: "finding the crawl output directory",
            path: out.to_owned(),
            source: io::Error::from(io::ErrorKind::NotFound),
        });
    }
    let dir = out.join(ADD_DIR);
    fs::create_dir_all(&dir).map_err(io_err("creating the drop directory", &dir))?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let unique = uuid::Uuid::new_v4().simple().to_string();
    let base = format!(
        "{stamp:020}-{}-{}",
        std::process::id(),
        unique.get(..8).unwrap_or("0")
    );
    let tmp = dir.join(format!(".{base}.tmp"));
    let done = dir.join(format!("{base}{BATCH_SUFFIX}"));
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(io_err("creating the batch", &tmp))?;
        let text = render_batch(urls);
        f.write_all(text.as_bytes())
            .map_err(io_err("writing the batch", &tmp))?;
        f.sync_all().map_err(io_err("syncing the batch", &tmp))?;
        fs::rename(&tmp, &done).map_err(io_err("renaming the batch into place", &done))?;
        File::open(&dir)
            .and_then(|d| d.sync_all())
            .map_err(io_err("syncing the drop directory", &dir))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map(|()| done)
}

/// The crawl's side of the drop directory.
#[derive(Debug)]
pub struct DropDir {
    dir: PathBuf,
    /// Files read this run (read again only after a restart).
    picked: BTreeSet<String>,
    /// Batches handed over, with the first checkpoint epoch that holds them.
    pending: Vec<(String, u64)>,
    /// Epoch of the first checkpoint whose cut has not begun.
    next_epoch: u64,
    /// Files refused (not a batch, too large): left in place, reported once.
    refused: BTreeSet<String>,
}

impl DropDir {
    /// The drop directory of crawl output `out`, created if missing.
    /// `last_committed_epoch` is the epoch of the checkpoint the crawl resumed from (0
    /// for a fresh crawl).
    ///
    /// # Errors
    /// [`DropError::Io`] when the directory cannot be created.
    pub fn open(out: &Path, last_committed_epoch: u64) -> Result<Self, DropError> {
        let dir = out.join(ADD_DIR);
        fs::create_dir_all(&dir).map_err(io_err("creating the drop directory", &dir))?;
        Ok(Self {
            dir,
            picked: BTreeSet::new(),
            pending: Vec::new(),
            next_epoch: last_committed_epoch + 1,
            refused: BTreeSet::new(),
        })
    }

    /// Read the batch files that appeared since the last poll, oldest name first.
    /// Files refused (not a batch, too large) are returned as errors once each and
    /// left in place for the operator; they never stop the others.
    ///
    /// # Errors
    /// [`DropError::Io`] when the directory cannot be listed.
    pub fn poll(&mut self) -> Result<(Vec<Batch>, Vec<DropError>), DropError> {
        let mut names: Vec<String> = fs::read_dir(&self.dir)
            .map_err(io_err("listing the drop directory", &self.dir))?
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| !n.starts_with('.') && n.ends_with(BATCH_SUFFIX))
            .filter(|n| !self.picked.contains(n) && !self.refused.contains(n))
            .collect();
        names.sort();
        let mut batches = Vec::new();
        let mut errors = Vec::new();
        for name in names {
            let path = self.dir.join(&name);
            let read = (|| {
                let f = File::open(&path).map_err(io_err("opening a batch", &path))?;
                let bytes = f
                    .metadata()
                    .map_err(io_err("reading a batch", &path))?
                    .len();
                if bytes > MAX_BATCH_BYTES {
                    return Err(DropError::TooLarge {
                        name: name.clone(),
                        bytes,
                    });
                }
                let mut data = Vec::new();
                f.take(MAX_BATCH_BYTES + 1)
                    .read_to_end(&mut data)
                    .map_err(io_err("reading a batch", &path))?;
                parse_batch(&name, &data)
            })();
            match read {
                Ok(batch) => {
                    self.picked.insert(name);
                    batches.push(batch);
                }
                Err(e @ DropError::Io { .. }) => errors.push(e),
                Err(e) => {
                    self.refused.insert(name);
                    errors.push(e);
                }
            }
        }
        Ok((batches, errors))
    }

    /// The URLs of batch `name` are in the crawl's frontier (or refused by its scope):
    /// the file may go once the next checkpoint whose cut begins from now commits.
    pub fn handed_over(&mut self, name: &str) {
        self.pending.push((name.to_owned(), self.next_epoch));
    }

    /// The frontier cut of checkpoint `epoch` begins: batches handed over from now on
    /// are in a later checkpoint.
    pub fn cut_begun(&mut self, epoch: u64) {
        self.next_epoch = self.next_epoch.max(epoch + 1);
    }

    /// Checkpoint `epoch` committed: delete the files of the batches it holds, then
    /// fsync the directory. Returns their names.
    ///
    /// # Errors
    /// [`DropError::Io`] for a file that cannot be removed (it stays pending and is
    /// tried again at the next commit; a restart would read it again, which the
    /// presence bits make harmless).
    pub fn committed(&mut self, epoch: u64) -> Result<Vec<String>, DropError> {
        let (done, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|(_, e)| *e <= epoch);
        self.pending = keep;
        let mut removed = Vec::new();
        let mut first_error = None;
        for (name, e) in done {
            let path = self.dir.join(&name);
            match fs::remove_file(&path) {
                Ok(()) => removed.push(name),
                Err(err) if err.kind() == io::ErrorKind::NotFound => removed.push(name),
                Err(err) => {
                    self.pending.push((name, e));
                    first_error.get_or_insert(DropError::Io {
                        op: "removing a committed batch",
                        path,
                        source: err,
                    });
                }
            }
        }
        if !removed.is_empty() {
            File::open(&self.dir)
                .and_then(|d| d.sync_all())
                .map_err(io_err("syncing the drop directory", &self.dir))?;
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(removed),
        }
    }

    /// Batches handed over whose files still wait for a checkpoint.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn written_batches_are_polled_once_and_deleted_after_their_checkpoint() {
        let out = tempfile::tempdir().unwrap();
        let mut dd = DropDir::open(out.path(), 0).unwrap();
        assert_eq!(dd.poll().unwrap().0.len(), 0);
        let p1 = write_batch(out.path(), &urls(&["http://a.example/1"])).unwrap();
        let p2 = write_batch(
            out.path(),
            &urls(&["http://a.example/2", "http://a.example/3"]),
        )
        .unwrap();
        // A half-written file of a crashed `trawl add` is never read.
        fs::write(
            out.path().join(ADD_DIR).join(".123.tmp"),
            "# trawl add v1\nhttp://x/",
        )
        .unwrap();
        let (batches, errors) = dd.poll().unwrap();
        assert!(errors.is_empty());
        assert_eq!(batches.len(), 2);
        assert_eq!(batches[0].urls, urls(&["http://a.example/1"]));
        assert_eq!(batches[1].urls.len(), 2);
        assert!(dd.poll().unwrap().0.is_empty(), "picked once per run");
        // Batch 1 handed over before the cut of checkpoint 1, batch 2 after it began.
        dd.handed_over(&batches[0].name);
        dd.cut_begun(1);
        dd.handed_over(&batches[1].name);
        assert_eq!(dd.committed(1).unwrap(), [batches[0].name.clone()]);
        assert!(!p1.exists() && p2.exists());
        dd.cut_begun(2);
        assert_eq!(dd.committed(2).unwrap(), [batches[1].name.clone()]);
        assert!(!p2.exists());
        assert_eq!(dd.pending(), 0);
    }

    #[test]
    fn a_restart_reads_every_file_not_yet_deleted() {
        let out = tempfile::tempdir().unwrap();
        write_batch(out.path(), &urls(&["http://a.example/1"])).unwrap();
        let mut dd = DropDir::open(out.path(), 0).unwrap();
        let (b, _) = dd.poll().unwrap();
        dd.handed_over(&b[0].name);
        // kill -9 before any checkpoint: nothing deleted; the next run reads it again.
        drop(dd);
        let mut again = DropDir::open(out.path(), 0).unwrap();
        let (b2, _) = again.poll().unwrap();
        assert_eq!(b2, b);
        // Resumed from checkpoint 4: the first checkpoint of this run is 5.
        let mut resumed = DropDir::open(out.path(), 4).unwrap();
        let (b3, _) = resumed.poll().unwrap();
        resumed.handed_over(&b3[0].name);
        assert!(resumed.committed(4).unwrap().is_empty());
        assert_eq!(resumed.committed(5).unwrap().len(), 1);
    }

    #[test]
    fn bad_files_are_refused_once_and_left_in_place() {
        let out = tempfile::tempdir().unwrap();
        let mut dd = DropDir::open(out.path(), 0).unwrap();
        let junk = out.path().join(ADD_DIR).join("junk.urls");
        fs::write(&junk, "http://a.example/\n").unwrap();
        let (batches, errors) = dd.poll().unwrap();
        assert!(batches.is_empty());
        assert_eq!(errors.len(), 1);
        assert!(errors[0].to_string().contains("not a trawl add batch"));
        assert!(dd.poll().unwrap().1.is_empty(), "reported once");
        assert!(junk.exists());
    }

    #[test]
    fn write_batch_needs_an_existing_output_directory() {
        let out = tempfile::tempdir().unwrap();
        let missing = out.path().join("nope");
        let err = write_batch(&missing, &urls(&["http://a.example/"])).unwrap_err();
        assert!(err
            .to_string()
            .contains("finding the crawl output directory"));
        assert!(!missing.exists());
    }
}
