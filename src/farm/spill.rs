//! Outgoing links waiting to be sent: in RAM up to a cap, past it in a spill file, so a
//! long Redis outage or an owner that has fallen behind costs disk, not memory, and
//! loses nothing. The same record format (a `u32` length, then a [`wire`] entry) holds
//! the outbox a checkpoint keeps (`farm-outbox.bin`).
#![deny(clippy::indexing_slicing)]

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::wire::{Entry, WireLink};

/// Links per record written to the spill file.
const DISK_RECORD_URLS: usize = 512;

/// Outgoing links by partition.
pub(crate) struct Spill {
    node: u32,
    ram: BTreeMap<u32, Vec<WireLink>>,
    ram_urls: usize,
    cap_urls: usize,
    /// Links past the RAM cap not yet written (a record's worth at most).
    overflow: Vec<(u32, WireLink)>,
    disk: DiskSpill,
}

struct DiskSpill {
    path: PathBuf,
    file: Option<File>,
    written_bytes: u64,
    read_bytes: u64,
    urls: u64,
}

impl Spill {
    pub fn new(node: u32, cap_urls: usize, path: PathBuf) -> Self {
        Self {
            node,
            ram: BTreeMap::new(),
            ram_urls: 0,
            cap_urls,
            overflow: Vec::new(),
            disk: DiskSpill {
                path,
                file: None,
                written_bytes: 0,
                read_bytes: 0,
                urls: 0,
            },
        }
    }

    /// Links waiting in all tiers.
    pub fn urls(&self) -> u64 {
        self.ram_urls as u64 + self.overflow.len() as u64 + self.disk.urls
    }

    pub fn is_empty(&self) -> bool {
        self.urls() == 0
    }

    /// Bytes in the spill file.
    pub fn disk_bytes(&self) -> u64 {
        self.disk.written_bytes.saturating_sub(self.disk.read_bytes)
    }

    /// Queues a link for its partition.
    ///
    /// # Errors
    /// Writing the spill file failed (the link is kept in RAM then: nothing is lost,
    /// the cap is exceeded, and the caller logs it).
    pub fn push(&mut self, partition: u32, link: WireLink) -> io::Result<()> {
        if self.ram_urls < self.cap_urls && self.disk.urls == 0 && self.overflow.is_empty() {
            self.ram.entry(partition).or_default().push(link);
            self.ram_urls += 1;
            return Ok(());
        }
        self.overflow.push((partition, link));
        if self.overflow.len() >= DISK_RECORD_URLS {
            return self.write_overflow();
        }
        Ok(())
    }

    fn write_overflow(&mut self) -> io::Result<()> {
        let batch = std::mem::take(&mut self.overflow);
        let n = batch.len() as u64;
        let mut by: BTreeMap<u32, Vec<WireLink>> = BTreeMap::new();
        for (p, l) in batch {
            by.entry(p).or_default().push(l);
        }
        if let Err(e) = self.disk.append(self.node, &by) {
            // Keep them in RAM rather than lose them.
            for (p, links) in by {
                self.ram_urls += links.len();
                self.ram.entry(p).or_default().extend(links);
            }
            return Err(e);
        }
        self.disk.urls += n;
        Ok(())
    }

    /// Up to `max_urls` links of each partition that `ready` allows, taken out (put
    /// them back with [`Spill::put_back`] if they could not be sent).
    pub fn take(
        &mut self,
        max_urls: usize,
        ready: impl Fn(u32) -> bool,
    ) -> Vec<(u32, Vec<WireLink>)> {
        self.refill();
        let mut out = Vec::new();
        let parts: Vec<u32> = self.ram.keys().copied().filter(|&p| ready(p)).collect();
        for p in parts {
            if let Some(links) = self.ram.get_mut(&p) {
                let n = links.len().min(max_urls);
                let batch: Vec<WireLink> = links.drain(..n).collect();
                if links.is_empty() {
                    self.ram.remove(&p);
                }
                self.ram_urls -= batch.len();
                out.push((p, batch));
            }
        }
        out
    }

    /// Returns links [`Spill::take`] gave out that were not sent.
    pub fn put_back(&mut self, batches: Vec<(u32, Vec<WireLink>)>) {
        for (p, links) in batches {
            self.ram_urls += links.len();
            let slot = self.ram.entry(p).or_default();
            let tail = std::mem::replace(slot, links);
            slot.extend(tail);
        }
    }

    /// Moves spilled links back into RAM while there is room.
    fn refill(&mut self) {
        // Half the cap, at least one link: a cap of 1 must still bring links back.
        let low = self.cap_urls.div_ceil(2);
        while self.ram_urls < low && (self.disk.urls > 0 || !self.overflow.is_empty()) {
            if self.disk.urls == 0 {
                for (p, l) in std::mem::take(&mut self.overflow) {
                    self.ram.entry(p).or_default().push(l);
                    self.ram_urls += 1;
                }
                break;
            }
            match self.disk.read_record() {
                Ok(Some(e)) => {
                    self.disk.urls = self.disk.urls.saturating_sub(e.links.len() as u64);
                    self.ram_urls += e.links.len();
                    self.ram.entry(e.partition).or_default().extend(e.links);
                }
                Ok(None) => {
                    self.disk.reset();
                }
                Err(e) => {
                    tracing::error!(path = %self.disk.path.display(), error = %e, lost = self.disk.urls,
                        "farm spill file unreadable: its links are lost from this run (the last checkpoint's outbox still holds those sent before it)");
                    self.disk.reset();
                }
            }
        }
    }

    /// Writes every waiting link to `path` (a checkpoint's outbox) and syncs it.
    ///
    /// # Errors
    /// Reading the spill file or writing the outbox failed.
    pub fn write_all(&mut self, path: &Path) -> io::Result<u64> {
        // Bring everything into RAM first: the outbox must hold the spill file's links
        // too (a resume starts without the spill file).
        let cap = self.cap_urls;
        self.cap_urls = usize::MAX;
        self.refill();
        self.cap_urls = cap;
        let mut w = BufWriter::new(File::create(path)?);
        let mut n = 0;
        for (&p, links) in &self.ram {
            for chunk in links.chunks(DISK_RECORD_URLS) {
                write_record(&mut w, self.node, p, chunk)?;
                n += chunk.len() as u64;
            }
        }
        let f = w.into_inner().map_err(io::IntoInnerError::into_error)?;
        f.sync_all()?;
        Ok(n)
    }
}

impl DiskSpill {
    fn append(&mut self, node: u32, by: &BTreeMap<u32, Vec<WireLink>>) -> io::Result<()> {
        if self.file.is_none() {
            if let Some(dir) = self.path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            self.file = Some(
                OpenOptions::new()
                    .create(true)
                    .read(true)
                    .write(true)
                    .truncate(true)
                    .open(&self.path)?,
            );
            self.written_bytes = 0;
            self.read_bytes = 0;
        }
        let Some(f) = self.file.as_mut() else {
            return Err(io::Error::other("spill file not open"));
        };
        f.seek(SeekFrom::Start(self.written_bytes))?;
        let mut w = BufWriter::new(f);
        let mut bytes = 0;
        for (&p, links) in by {
            bytes += write_record(&mut w, node, p, links)?;
        }
        w.flush()?;
        self.written_bytes += bytes;
        Ok(())
    }

    fn read_record(&mut self) -> io::Result<Option<Entry>> {
        if self.read_bytes >= self.written_bytes {
            return Ok(None);
        }
        let Some(f) = self.file.as_mut() else {
            return Ok(None);
        };
        f.seek(SeekFrom::Start(self.read_bytes))?;
        let mut r = BufReader::new(f);
        match read_record(&mut r)? {
            Some((e, bytes)) => {
                self.read_bytes += bytes;
                Ok(Some(e))
            }
            None => Ok(None),
        }
    }

    fn reset(&mut self) {
        self.file = None;
        self.written_bytes = 0;
        self.read_bytes = 0;
        self.urls = 0;
        let _ = std::fs::remove_file(&self.path);
    }
}

fn write_record(
    w: &mut impl Write,
    node: u32,
    partition: u32,
    links: &[WireLink],
) -> io::Result<u64> {
    let e = Entry {
        from_node: node,
        partition,
        links: links.to_vec(),
    };
    let bytes = e.encode();
    let len = u32::try_from(bytes.len()).map_err(|_| io::Error::other("spill record too large"))?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(&bytes)?;
    Ok(4 + u64::from(len))
}

/// Reads one record; `None` at a clean end.
fn read_record(r: &mut impl Read) -> io::Result<Option<(Entry, u64)>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_le_bytes(len);
    if len > 64 << 20 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "farm record too large",
        ));
    }
    let mut buf = vec![0u8; len as usize];
    r.read_exact(&mut buf)?;
    let e = Entry::decode(&buf).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    Ok(Some((e, 4 + u64::from(len))))
}

/// Reads a checkpoint's outbox.
///
/// # Errors
/// The file is damaged (a checkpoint's files are synced before its manifest commits,
/// so damage is not a torn tail but a real fault, reported as such).
pub(crate) fn read_outbox(path: &Path) -> io::Result<Vec<Entry>> {
    let f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut r = BufReader::new(f);
    let mut out = Vec::new();
    while let Some((e, _)) = read_record(&mut r)? {
        out.push(e);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(i: usize) -> WireLink {
        WireLink {
            url: format!("http://h{i}.test/"),
            via: "http://v.test/".to_owned(),
            hops: "L".to_owned(),
            grant: if i % 7 == 0 {
                vec![format!("http://g{i}.test")]
            } else {
                Vec::new()
            },
        }
    }

    #[test]
    fn links_past_the_ram_cap_go_to_disk_and_all_come_back() {
        let tmp = tempfile::tempdir().unwrap();
        let mut s = Spill::new(1, 100, tmp.path().join("farm/spill.bin"));
        for i in 0..5000 {
            s.push((i % 7) as u32, link(i)).unwrap();
        }
        assert_eq!(s.urls(), 5000);
        assert!(s.disk_bytes() > 0, "spilled to disk");
        let mut got = std::collections::HashSet::new();
        for _ in 0..10_000 {
            let batches = s.take(64, |_| true);
            if batches.is_empty() && s.is_empty() {
                break;
            }
            for (p, links) in batches {
                for l in links {
                    let i: usize = l.url[8..l.url.len() - 6].parse().unwrap();
                    assert_eq!((i % 7) as u32, p);
                    assert!(got.insert(i));
                }
            }
        }
        assert_eq!(got.len(), 5000);
        assert!(s.is_empty());
    }

    #[test]
    fn a_ram_cap_of_one_still_gives_every_link_back() {
        let tmp = tempfile::tempdir().unwrap();
        let mut s = Spill::new(0, 1, tmp.path().join("spill.bin"));
        for i in 0..1200 {
            s.push(2, link(i)).unwrap();
        }
        let mut n = 0;
        for _ in 0..5000 {
            for (_, links) in s.take(7, |_| true) {
                n += links.len();
            }
            if s.is_empty() {
                break;
            }
        }
        assert_eq!(n, 1200);
    }

    #[test]
    fn held_partitions_wait_and_put_back_keeps_order() {
        let tmp = tempfile::tempdir().unwrap();
        let mut s = Spill::new(0, 1000, tmp.path().join("spill.bin"));
        for i in 0..10 {
            s.push(u32::from(i >= 5), link(i)).unwrap();
        }
        let b = s.take(3, |p| p == 1);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].1.len(), 3);
        s.put_back(b);
        let b = s.take(100, |p| p == 1);
        assert_eq!(b[0].1[0], link(5));
        assert_eq!(s.urls(), 5);
    }

    #[test]
    fn the_outbox_holds_ram_and_disk_links() {
        let tmp = tempfile::tempdir().unwrap();
        let mut s = Spill::new(2, 10, tmp.path().join("spill.bin"));
        for i in 0..700 {
            s.push(3, link(i)).unwrap();
        }
        let out = tmp.path().join("outbox.bin");
        assert_eq!(s.write_all(&out).unwrap(), 700);
        let entries = read_outbox(&out).unwrap();
        let n: usize = entries.iter().map(|e| e.links.len()).sum();
        assert_eq!(n, 700);
        assert!(entries.iter().all(|e| e.partition == 3 && e.from_node == 2));
        assert_eq!(s.urls(), 700, "writing the outbox keeps the links to send");
        let mut bad = std::fs::read(&out).unwrap();
        let at = bad.len() / 2;
        bad[at] ^= 1;
        std::fs::write(&out, bad).unwrap();
        assert!(read_outbox(&out).is_err());
    }
}
