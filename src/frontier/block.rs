//! Blocks: a run of one host's spilled URLs, written and read back as one unit.
//!
//! ```text
//! block:   varint payload_len | crc32(payload): u32 LE | payload     (crate::disk framing)
//! payload: varint n | n times (varint record_len | record)
//! record:  a segment record payload (segment.rs), front-coded against the previous
//!          record of the same block (the first against nothing)
//! ```
//!
//! A block stands alone: its records are coded against each other only, so one
//! positioned read of `len` bytes decodes it, and a damaged block loses only itself.
//! The checksum covers the whole payload; a block whose checksum, framing or records
//! do not decode is reported as damaged, never decoded as garbage.
//!
//! A host's buffer is a block being built: its records are encoded as they are
//! pushed ([`Builder::push`], about 40 bytes a URL instead of a `QueuedUrl`'s 250 in
//! RAM), and [`Builder::seal`] frames them.

use super::segment::{CodingContext, Record};
use super::QueuedUrl;
use crate::disk::{put_varint, take_bytes, take_varint, write_record, RecordReader};

/// The largest block payload accepted on read (a block holds tens of URLs, each
/// capped far below this by the crawl filters).
pub const MAX_BLOCK_BYTES: usize = 1 << 26;

/// The records of a block being built, encoded as they come.
#[derive(Debug, Default)]
pub struct Builder {
    records: Vec<u8>,
    count: u32,
    context: CodingContext,
}

impl Builder {
    /// Appends `item` of `host`. `scratch` is reused between calls.
    pub fn push(&mut self, host: &str, item: &QueuedUrl, scratch: &mut Vec<u8>) {
        scratch.clear();
        self.context.encode(host, item, scratch);
        self.context.remember(item);
        put_varint(&mut self.records, scratch.len() as u64);
        self.records.extend_from_slice(scratch);
        self.count += 1;
    }

    /// URLs pushed since the last seal.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Heap bytes held (records and the coding context), for the RAM budget.
    pub fn heap_bytes(&self) -> usize {
        self.records.capacity() + self.context.heap_bytes()
    }

    /// Appends the block of the records pushed to `out` and starts afresh (freeing
    /// what it held); returns the block's bytes and URL count.
    pub fn seal(&mut self, out: &mut Vec<u8>) -> (usize, u32) {
        let mut payload = Vec::with_capacity(self.records.len() + 5);
        put_varint(&mut payload, u64::from(self.count));
        payload.extend_from_slice(&self.records);
        let count = self.count;
        *self = Self::default();
        let before = out.len();
        // Writing into a Vec cannot fail.
        let _ = write_record(out, &payload);
        (out.len() - before, count)
    }

    /// The records pushed, decoded, in order (the buffer is listed or moved to RAM).
    pub fn records(&self) -> Option<Vec<Record>> {
        decode_records(&self.records, self.count as usize)
    }
}

/// A host's buffer: a [`Builder`] allocated when the first URL comes and freed by the
/// seal, so a host whose backlog is all in blocks pays 8 bytes for it.
#[derive(Debug, Default)]
pub struct Buffer(Option<Box<Builder>>);

/// Bytes of a boxed [`Builder`] as allocated.
const BUILDER_BYTES: usize = (std::mem::size_of::<Builder>() + 8).next_multiple_of(16);

impl Buffer {
    /// As [`Builder::push`].
    pub fn push(&mut self, host: &str, item: &QueuedUrl, scratch: &mut Vec<u8>) {
        self.0
            .get_or_insert_with(Box::default)
            .push(host, item, scratch);
    }

    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |b| b.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Heap bytes held, the box included.
    pub fn heap_bytes(&self) -> usize {
        self.0
            .as_ref()
            .map_or(0, |b| BUILDER_BYTES + b.heap_bytes())
    }

    /// As [`Builder::seal`]; the buffer is freed.
    pub fn seal(&mut self, out: &mut Vec<u8>) -> (usize, u32) {
        self.0.take().map_or((0, 0), |mut b| b.seal(out))
    }

    /// As [`Builder::records`] (an empty list for an empty buffer).
    pub fn records(&self) -> Option<Vec<Record>> {
        self.0.as_ref().map_or(Some(Vec::new()), |b| b.records())
    }
}

/// Appends one block of `host`'s `items` to `out`; returns the bytes appended.
/// `scratch` is reused between calls.
pub fn encode<'a>(
    host: &str,
    items: impl Iterator<Item = &'a QueuedUrl>,
    out: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
) -> usize {
    let mut b = Builder::default();
    for item in items {
        b.push(host, item, scratch);
    }
    b.seal(out).0
}

/// Decodes a block read back whole (`bytes`, framed as written by
/// [`Builder::seal`]); `None` if it is damaged (bad length, checksum or record).
pub fn decode(bytes: &[u8]) -> Option<Vec<Record>> {
    let mut reader = RecordReader::headless(bytes, 0, MAX_BLOCK_BYTES);
    let mut payload = Vec::new();
    reader.next_record(&mut payload).ok()??;
    if reader.offset() != bytes.len() as u64 {
        return None;
    }
    let mut input = payload.as_slice();
    let n = usize::try_from(take_varint(&mut input).ok()?).ok()?;
    decode_records(input, n)
}

/// `n` records, each `varint len | record`, filling `input` exactly.
fn decode_records(mut input: &[u8], n: usize) -> Option<Vec<Record>> {
    // Each record takes at least two bytes: a count beyond that is damage.
    if n > input.len() {
        return None;
    }
    let mut context = CodingContext::default();
    let mut records = Vec::with_capacity(n);
    for _ in 0..n {
        let record = take_bytes(&mut input).ok()?;
        records.push(context.decode(record)?);
    }
    input.is_empty().then_some(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(i: usize) -> QueuedUrl {
        QueuedUrl {
            url: format!("http://a.test/p/{i}"),
            via: (i % 3 != 0).then(|| "http://a.test/".to_owned()),
            hops: "LL".into(),
            attempts: (i % 2) as u8,
        }
    }

    #[test]
    fn a_block_round_trips_and_damage_is_refused() {
        let items: Vec<QueuedUrl> = (0..40).map(item).collect();
        let mut out = vec![7u8; 5];
        let mut scratch = Vec::new();
        let n = encode("http://a.test", items.iter(), &mut out, &mut scratch);
        let bytes = out.get(5..).unwrap();
        assert_eq!(bytes.len(), n);
        assert!(n < 40 * 30, "front coding keeps a block small: {n} bytes");
        let back = decode(bytes).unwrap();
        assert_eq!(
            back.iter().map(|r| &r.item).collect::<Vec<_>>(),
            items.iter().collect::<Vec<_>>()
        );
        assert!(back.iter().all(|r| r.host == "http://a.test"));
        for at in [0, 3, n / 2, n - 1] {
            let mut bad = bytes.to_vec();
            bad[at] ^= 0x10;
            assert!(decode(&bad).is_none(), "flip at {at} not seen");
        }
        assert!(decode(&bytes[..n - 1]).is_none());
        let mut longer = bytes.to_vec();
        longer.push(0);
        assert!(decode(&longer).is_none());
    }

    #[test]
    fn a_builder_lists_its_records_and_starts_afresh_after_a_seal() {
        let mut b = Builder::default();
        let mut scratch = Vec::new();
        for i in 0..5 {
            b.push("http://a.test", &item(i), &mut scratch);
        }
        assert_eq!(b.len(), 5);
        let listed: Vec<QueuedUrl> = b.records().unwrap().into_iter().map(|r| r.item).collect();
        assert_eq!(listed, (0..5).map(item).collect::<Vec<_>>());
        assert!(b.heap_bytes() > 0);
        let mut out = Vec::new();
        let (len, count) = b.seal(&mut out);
        assert_eq!((len, count), (out.len(), 5));
        assert!(b.is_empty() && b.heap_bytes() == 0);
        b.push("http://a.test", &item(9), &mut scratch);
        b.seal(&mut out);
        let second = decode(&out[len..]).unwrap();
        assert_eq!(second[0].item, item(9));
    }
}
