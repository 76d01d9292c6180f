//! A gzip bomb built by hand: a single fixed-Huffman deflate block made of one literal
//! zero followed by back-references `<length 258, distance 1>`, 13 bits each, so 1 GiB
//! of zeros costs about 6.5 MB. Gzipped once more (the stream is periodic), it shrinks
//! to a few KB: `Content-Encoding: gzip, gzip` then inflates to 1 GiB.

use std::io::Write;
use std::sync::OnceLock;

struct Bits {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl Bits {
    fn push(&mut self, value: u64, count: u32) {
        self.acc |= value << self.n;
        self.n += count;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    /// Huffman codes go most-significant bit first.
    fn push_code(&mut self, code: u64, len: u32) {
        let mut rev = 0u64;
        for i in 0..len {
            rev |= ((code >> i) & 1) << (len - 1 - i);
        }
        self.push(rev, len);
    }

    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

/// A gzip member whose content is `1 + 258 * units` zero bytes.
#[must_use]
pub fn gzip_zeros(units: u64) -> Vec<u8> {
    let mut b = Bits {
        out: Vec::with_capacity((units * 13 / 8 + 64) as usize),
        acc: 0,
        n: 0,
    };
    b.out
        .extend_from_slice(&[0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF]);
    b.push(1, 1); // BFINAL
    b.push(1, 2); // BTYPE = fixed Huffman
    b.push_code(0x30, 8); // literal 0
    for _ in 0..units {
        b.push_code(0b1100_0101, 8); // length symbol 285 = 258
        b.push_code(0, 5); // distance code 0 = 1
    }
    b.push_code(0, 7); // end of block
    let mut out = b.finish();
    let total = 1 + 258 * units;
    out.extend_from_slice(&crc_of_zeros(total).to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out
}

/// A gzip member whose content is `prefix` followed by `1 + 258 * units` copies of
/// `fill`: a bomb that starts like a real document (a sitemap's XML declaration and
/// `<urlset>`, then whitespace), so a reader meets its size cap, not a syntax error.
#[must_use]
pub fn gzip_prefixed_run(prefix: &[u8], fill: u8, units: u64) -> Vec<u8> {
    let mut b = Bits {
        out: Vec::with_capacity((units * 13 / 8) as usize + 64 + prefix.len() * 2),
        acc: 0,
        n: 0,
    };
    b.out
        .extend_from_slice(&[0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF]);
    b.push(1, 1); // BFINAL
    b.push(1, 2); // BTYPE = fixed Huffman
    for &c in prefix.iter().chain(std::iter::once(&fill)) {
        push_literal(&mut b, c);
    }
    for _ in 0..units {
        b.push_code(0b1100_0101, 8); // length symbol 285 = 258
        b.push_code(0, 5); // distance code 0 = 1
    }
    b.push_code(0, 7); // end of block
    let mut out = b.finish();
    let run = 1 + 258 * units;
    let mut crc = crc32fast::Hasher::new();
    crc.update(prefix);
    let tail = crc32fast::Hasher::new_with_initial_len(crc_of_run(fill, run), run);
    crc.combine(&tail);
    out.extend_from_slice(&crc.finalize().to_le_bytes());
    out.extend_from_slice(&((prefix.len() as u64 + run) as u32).to_le_bytes());
    out
}

/// A fixed-Huffman literal (RFC 1951 3.2.6): 8 bits for 0..=143, 9 bits above.
fn push_literal(b: &mut Bits, c: u8) {
    if c < 144 {
        b.push_code(0x30 + u64::from(c), 8);
    } else {
        b.push_code(0x190 + u64::from(c - 144), 9);
    }
}

/// CRC-32 of `n` zero bytes, by combining CRCs of doubling runs.
#[must_use]
pub fn crc_of_zeros(n: u64) -> u32 {
    crc_of_run(0, n)
}

/// CRC-32 of `n` copies of `fill`, by combining CRCs of doubling runs.
#[must_use]
pub fn crc_of_run(fill: u8, n: u64) -> u32 {
    let block = [fill; 4096];
    let mut acc = crc32fast::Hasher::new();
    let mut rest = n;
    let mut run = crc32fast::Hasher::new();
    run.update(&block);
    let run_len = block.len() as u64;
    let mut small = rest % run_len;
    rest -= small;
    // Binary decomposition of the remaining multiple of 4096.
    let mut units = rest / run_len;
    while units > 0 {
        if units & 1 == 1 {
            acc.combine(&run);
        }
        let copy = run.clone();
        run.combine(&copy);
        units >>= 1;
    }
    while small > 0 {
        let k = small.min(block.len() as u64) as usize;
        acc.update(&block[..k]);
        small -= k as u64;
    }
    acc.finalize()
}

/// Units for 1 GiB.
pub const GIB_UNITS: u64 = (1 << 30) / 258;

/// The single-layer bomb (about 6.5 MB inflating to 1 GiB), built once.
pub fn single() -> &'static [u8] {
    static B: OnceLock<Vec<u8>> = OnceLock::new();
    B.get_or_init(|| gzip_zeros(GIB_UNITS))
}

/// The double-layer bomb (a few KB; `Content-Encoding: gzip, gzip`), built once.
pub fn double() -> &'static [u8] {
    static B: OnceLock<Vec<u8>> = OnceLock::new();
    B.get_or_init(|| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let inner = single();
        if e.write_all(inner).is_err() {
            return inner.to_vec();
        }
        e.finish().unwrap_or_else(|_| inner.to_vec())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn small_bomb_inflates_exactly() {
        let units = 10_000;
        let gz = gzip_zeros(units);
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out.len() as u64, 1 + 258 * units);
        assert!(out.iter().all(|&b| b == 0));
        let mut h = crc32fast::Hasher::new();
        h.update(&vec![0u8; 12_345]);
        assert_eq!(crc_of_zeros(12_345), h.finalize());
    }

    #[test]
    fn prefixed_run_inflates_exactly() {
        let units = 5_000;
        let prefix: &[u8] = b"<?xml version=\"1.0\"?>\n<urlset>\xC3\xA9";
        let gz = gzip_prefixed_run(prefix, b' ', units);
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out.len() as u64, prefix.len() as u64 + 1 + 258 * units);
        assert!(out.starts_with(prefix));
        assert!(out[prefix.len()..].iter().all(|&b| b == b' '));
    }
}
