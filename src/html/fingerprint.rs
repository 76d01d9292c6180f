//! Content fingerprints for duplicate detection: an exact 128-bit digest of the page
//! bytes, and a near-duplicate digest that leaves out what changes between copies of
//! a trap page (digits: dates, counters, session numbers; and tag attributes: session
//! ids in links, per-request tokens), as BUbiNG does, so calendar and session-id
//! traps collapse to one fingerprint.

use xxhash_rust::xxh3::{xxh3_128, Xxh3};

use super::scan::{self, TagClass, Visitor};

/// A 128-bit digest of the exact page bytes (XXH3-128: fast, well distributed, not
/// cryptographic — a site that wants to collide can, which costs it only its own
/// crawl coverage).
pub fn fingerprint(page: &[u8]) -> u128 {
    xxh3_128(page)
}

/// A 128-bit digest of the page's text and tag names only: ASCII digits are removed
/// from the text, attributes from tags, and comments are dropped. Two pages that differ
/// only in numbers or attribute values (links with session ids, dates of a calendar)
/// get the same value.
pub fn near_duplicate_fingerprint(page: &[u8]) -> u128 {
    let mut hasher = NearDuplicate {
        hasher: Xxh3::new(),
    };
    scan::scan(page, &mut hasher);
    hasher.hasher.digest128()
}

struct NearDuplicate {
    hasher: Xxh3,
}

impl<'a> Visitor<'a> for NearDuplicate {
    fn text(&mut self, text: &'a [u8]) {
        for run in text.split(u8::is_ascii_digit) {
            self.hasher.update(run);
        }
    }

    fn start_tag(&mut self, name: &'a [u8], _class: TagClass) -> bool {
        self.hasher.update(b"<");
        for b in name {
            self.hasher.update(&[b.to_ascii_lowercase()]);
        }
        self.hasher.update(b">");
        false
    }

    fn end_tag(&mut self, name: &'a [u8]) {
        self.hasher.update(b"</");
        for b in name {
            self.hasher.update(&[b.to_ascii_lowercase()]);
        }
        self.hasher.update(b">");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_digest_distinguishes_any_change() {
        assert_eq!(fingerprint(b"<p>a</p>"), fingerprint(b"<p>a</p>"));
        assert_ne!(fingerprint(b"<p>a</p>"), fingerprint(b"<p>b</p>"));
        assert_ne!(fingerprint(b""), fingerprint(b" "));
    }

    #[test]
    fn near_duplicates_ignore_digits_and_attributes() {
        let a = b"<html><body><h1>March 2031</h1><a href='/cal?m=3&sid=ab12'>next</a><!-- 0.03s --></body></html>";
        let b = b"<HTML><body><h1>March 1999</h1><a href=\"/cal?m=4&sid=zz99\" class=x>next</a><!-- 0.04s --></body></html>";
        assert_eq!(near_duplicate_fingerprint(a), near_duplicate_fingerprint(b));
        let c = b"<html><body><h1>April 2031</h1><a href='/cal?m=3'>next</a></body></html>";
        assert_ne!(near_duplicate_fingerprint(a), near_duplicate_fingerprint(c));
        let d = b"<html><body><h2>March 2031</h2><a href='/cal?m=3'>next</a></body></html>";
        assert_ne!(near_duplicate_fingerprint(a), near_duplicate_fingerprint(d));
    }
}
