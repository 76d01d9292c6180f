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

/// The duplicate-content digest the crawl uses: [`fingerprint`] of the page bytes with
/// every mention of the page's own directory, and of that directory's parent, replaced
/// by a marker. `path` is the URL path the page was fetched from (no query).
///
/// Why: a directory that contains itself (a symlink `sub -> .`, a server that maps
/// every `/a/sub/...` to `/a/`) serves the same listing at `/a/`, `/a/sub/`,
/// `/a/sub/sub/`, ... differing only where the listing names its own location (`Index
/// of /a/sub/`, a parent link `/a/`). With those mentions abstracted, each level has
/// the fingerprint of the one above, and the crawl's duplicate rule (a page whose
/// fingerprint was seen is recorded but its links are not followed) stops the loop
/// after one level, whatever the names of its self-links, long before the URL filters
/// (a segment at most 3 times) would. Everything else stays exact: pages that differ
/// in a digit, a relative link or any text keep different fingerprints, so
/// near-identical legitimate pages (pagination, galleries, products) are all followed.
/// The price: two sibling directories whose pages are identical except for naming
/// themselves count as copies, and only the first one's links are followed.
pub fn page_fingerprint(path: &[u8], page: &[u8]) -> u128 {
    let needles = own_locations(path);
    // Each needle is a prefix of the one before it (the directory, then the same
    // without its `/`, then the parent, ...), so a mention of any of them starts with
    // the shortest: one substring search for it finds every candidate, where a search
    // for `/` would stop at every end tag and link of the page.
    let Some(shortest) = needles.last() else {
        return fingerprint(page);
    };
    let finder = memchr::memmem::Finder::new(shortest);
    // Made at the first mention: most pages have none, and one-shot XXH3 of the
    // whole page (the same digest as streaming it) is faster than the streaming form.
    let mut hasher: Option<Xxh3> = None;
    let mut rest = page;
    let mut from = 0;
    // (`rest` is the unhashed tail; after a mention the byte before `rest` is never
    // `<`.)
    while let Some(at) = rest.get(from..).and_then(|r| finder.find(r)) {
        let start = from + at;
        let tail = rest.get(start..).unwrap_or_default();
        // `</a>` is an end tag, not a mention of the directory `/a`.
        let is_end_tag = start > 0 && rest.get(start - 1) == Some(&b'<');
        match needles
            .iter()
            .position(|n| !is_end_tag && tail.starts_with(n))
        {
            Some(k) => {
                let hasher = hasher.get_or_insert_with(Xxh3::new);
                hasher.update(rest.get(..start).unwrap_or_default());
                hasher.update(OWN_MARKERS.get(k).map_or(&[0][..], |m| &m[..]));
                let len = needles.get(k).map_or(1, |n| n.len());
                rest = rest.get(start + len..).unwrap_or_default();
                from = 0;
            }
            None => from = start + 1,
        }
    }
    match hasher {
        Some(mut hasher) => {
            hasher.update(rest);
            hasher.digest128()
        }
        None => fingerprint(page),
    }
}

/// Stand-ins for the page's directory, the same without its final `/`, its parent
/// directory and the same without its final `/` (bytes that cannot occur in a path).
const OWN_MARKERS: [[u8; 2]; 4] = [[0, b'D'], [0, b'd'], [0, b'P'], [0, b'p']];

/// The page's own locations, longest first: its directory (`/a/sub/` for
/// `/a/sub/x.html` and for `/a/sub/`), the directory without its final slash
/// (`/a/sub`, as listing titles write it), the parent directory and the parent without
/// its slash. The root `/` is never a needle (it occurs in every link).
fn own_locations(path: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::with_capacity(4);
    let dir_end = memchr::memrchr(b'/', path).map_or(0, |i| i + 1);
    let dir = path.get(..dir_end).unwrap_or_default();
    let bare = |d: &'_ [u8]| -> Option<usize> { (d.len() > 1).then(|| d.len() - 1) };
    if let Some(n) = bare(dir) {
        out.push(dir);
        out.push(dir.get(..n).unwrap_or_default());
        let parent_end = dir
            .get(..n)
            .and_then(|d| memchr::memrchr(b'/', d))
            .map_or(0, |i| i + 1);
        let parent = dir.get(..parent_end).unwrap_or_default();
        if let Some(m) = bare(parent) {
            out.push(parent);
            out.push(parent.get(..m).unwrap_or_default());
        }
    }
    out
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

    /// An Apache-style listing of `dir` that lists itself (`sub/`, `alt/`, `index.html`).
    fn listing(dir: &str) -> Vec<u8> {
        let parent = match dir.trim_end_matches('/').rfind('/') {
            Some(i) => &dir[..=i],
            None => "/",
        };
        format!(
            "<html><head><title>Index of {}</title></head><body><h1>Index of {dir}</h1>\
             <a href=\"{parent}\">Parent Directory</a> <a href=\"sub/\">sub/</a> \
             <a href=\"alt/\">alt/</a> <a href=\"http://h{dir}index.html\">index.html</a>\
             </body></html>",
            dir.trim_end_matches('/')
        )
        .into_bytes()
    }

    #[test]
    fn self_listing_loop_levels_share_a_fingerprint() {
        let levels = [
            "/a/sub/",
            "/a/sub/sub/",
            "/a/sub/alt/",
            "/a/sub/alt/sub/sub/",
        ];
        let prints: Vec<u128> = levels
            .iter()
            .map(|d| page_fingerprint(d.as_bytes(), &listing(d)))
            .collect();
        assert!(prints.iter().all(|p| *p == prints[0]), "{prints:x?}");
        // The same page fetched as `index.html` of the directory.
        let d = "/a/sub/alt/";
        assert_eq!(
            page_fingerprint(b"/a/sub/alt/index.html", &listing(d)),
            prints[0]
        );
        // Exact copies are still copies; the root has no own location.
        assert_eq!(
            page_fingerprint(b"/", b"<p>x</p>"),
            fingerprint(b"<p>x</p>")
        );
    }

    #[test]
    fn near_identical_legitimate_pages_keep_distinct_fingerprints() {
        let fp = |path: &str, body: &str| page_fingerprint(path.as_bytes(), body.as_bytes());
        let pairs = [
            // Pagination: only a digit differs.
            (
                ("/list", "<a href='/list?page=2'>next</a> items 11-20"),
                ("/list", "<a href='/list?page=3'>next</a> items 21-30"),
            ),
            // A gallery: only the relative links differ.
            (
                ("/g/1.html", "<a href='photo1.html'><img src='t1.jpg'></a>"),
                ("/g/2.html", "<a href='photo2.html'><img src='t2.jpg'></a>"),
            ),
            // Products in one directory: one word differs.
            (
                ("/shop/a", "<h1>Red shirt</h1><a href='/shop/cart'>buy</a>"),
                ("/shop/b", "<h1>Blue shirt</h1><a href='/shop/cart'>buy</a>"),
            ),
            // Sibling directories linking into *other* directories.
            (
                (
                    "/docs/en/",
                    "<a href='/docs/en/intro'>intro</a> <a href='/blog/en'>blog</a>",
                ),
                (
                    "/docs/fr/",
                    "<a href='/docs/fr/intro'>intro</a> <a href='/blog/fr'>blog</a>",
                ),
            ),
            // Listings of two directories with different entries.
            (
                (
                    "/pub/a/",
                    "<h1>Index of /pub/a</h1><a href='x.tar'>x.tar</a>",
                ),
                (
                    "/pub/b/",
                    "<h1>Index of /pub/b</h1><a href='y.tar'>y.tar</a>",
                ),
            ),
        ];
        for ((pa, ba), (pb, bb)) in pairs {
            assert_ne!(fp(pa, ba), fp(pb, bb), "{pa} vs {pb}");
        }
    }

    /// The first form of [`page_fingerprint`], kept as the oracle: it stopped at every
    /// `/` of the page and tried each needle there.
    fn page_fingerprint_by_slash(path: &[u8], page: &[u8]) -> u128 {
        let needles = own_locations(path);
        if needles.is_empty() {
            return fingerprint(page);
        }
        let mut hasher = Xxh3::new();
        let mut rest = page;
        let mut from = 0;
        while let Some(at) = rest.get(from..).and_then(|r| memchr::memchr(b'/', r)) {
            let start = from + at;
            let tail = &rest[start..];
            let is_end_tag = start > 0 && rest[start - 1] == b'<';
            match needles
                .iter()
                .position(|n| !is_end_tag && tail.starts_with(n))
            {
                Some(k) => {
                    hasher.update(&rest[..start]);
                    hasher.update(&OWN_MARKERS[k]);
                    rest = &rest[start + needles[k].len()..];
                    from = 0;
                }
                None => from = start + 1,
            }
        }
        hasher.update(rest);
        hasher.digest128()
    }

    #[test]
    fn substring_search_agrees_with_the_slash_walk() {
        // Pages built from pieces that mention the path's locations in every way
        // (whole, bare, as end tags, overlapping, at the ends), shuffled by a fixed
        // generator.
        let paths: [&[u8]; 7] = [
            b"/a/sub/x.html",
            b"/a/",
            b"/a/sub/",
            b"//x",
            b"/aa/a/",
            b"/x.html",
            b"/a/a/a/",
        ];
        let pieces: [&[u8]; 14] = [
            b"/a/sub/",
            b"/a/sub",
            b"/a/",
            b"/a",
            b"</a>",
            b"<",
            b"/",
            b"a",
            b"sub",
            b"</a/sub>",
            b"//",
            b"/aa",
            b"text ",
            b"/a/a",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for path in paths {
            for _ in 0..300 {
                let mut page = Vec::new();
                for _ in 0..(next() % 24) {
                    page.extend_from_slice(pieces[(next() % pieces.len() as u64) as usize]);
                }
                assert_eq!(
                    page_fingerprint(path, &page),
                    page_fingerprint_by_slash(path, &page),
                    "{:?} {:?}",
                    String::from_utf8_lossy(path),
                    String::from_utf8_lossy(&page)
                );
            }
        }
    }

    #[test]
    fn own_locations_of_paths() {
        let locs = |p: &str| {
            own_locations(p.as_bytes())
                .iter()
                .map(|n| String::from_utf8_lossy(n).into_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(locs("/a/sub/x.html"), ["/a/sub/", "/a/sub", "/a/", "/a"]);
        assert_eq!(locs("/a/"), ["/a/", "/a"]);
        assert_eq!(locs("/x.html"), Vec::<String>::new());
        assert_eq!(locs(""), Vec::<String>::new());
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
