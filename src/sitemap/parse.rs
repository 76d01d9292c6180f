//! The sitemap parser: bytes of one fetched sitemap in, entries out.

use std::borrow::Cow;
use std::io::{BufReader, Read};

use quick_xml::events::Event;
use quick_xml::Reader;

use super::LastMod;

/// Longest `<loc>` kept, in bytes. sitemaps.org asks for URLs under 2,048 characters;
/// four times that leaves room for percent-encoding while bounding memory.
pub const MAX_LOC_BYTES: usize = 8_192;

/// The caps one sitemap file is read under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most entries kept per file (protocol: 50,000); later ones are counted, dropped.
    pub max_urls: usize,
    /// Most bytes read after decompression (protocol: 50 MB = 52,428,800 bytes);
    /// reading stops there. One XML event is buffered whole, so this also bounds the
    /// parser's peak memory.
    pub max_uncompressed_bytes: u64,
    /// Depth at which an index is refused: the sitemap named by robots.txt or
    /// `--sitemap` has depth 0, the files an index lists depth + 1. With 2, an index may
    /// list an index that lists sitemaps (one nesting level beyond the protocol).
    pub max_index_depth: u8,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_urls: 50_000,
            max_uncompressed_bytes: 52_428_800,
            max_index_depth: 2,
        }
    }
}

/// A urlset (pages) or an index (more sitemaps).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SitemapKind {
    /// `<urlset>`: entries are pages.
    UrlSet,
    /// `<sitemapindex>`: entries are sitemaps, one level deeper.
    Index,
}

/// One `<url>` or `<sitemap>` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `<loc>` with entities decoded and surrounding whitespace trimmed; not yet
    /// resolved or canonicalized (the caller does that, like for any link).
    pub loc: String,
    /// `<lastmod>`, when present and a valid W3C datetime.
    pub lastmod: Option<LastMod>,
}

/// Entries left out of a file that was otherwise read, by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Skipped {
    /// `<url>`/`<sitemap>` without a `<loc>` (or an empty one).
    pub no_loc: u64,
    /// `<loc>` longer than [`MAX_LOC_BYTES`].
    pub too_long: u64,
    /// `<lastmod>` present but not a W3C datetime (the entry is kept, without it).
    pub bad_lastmod: u64,
}

/// A cap that cut a file short: the entries before it are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// More entries than `max_urls`: `cap` kept, `dropped` more listed after them.
    Urls {
        /// Entries kept.
        cap: usize,
        /// Entries read past the cap and dropped.
        dropped: u64,
    },
    /// Decompressed size reached `max_uncompressed_bytes`; reading stopped there.
    Bytes {
        /// The cap, in bytes.
        cap_bytes: u64,
    },
}

/// One parsed sitemap file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sitemap {
    /// Pages or sitemaps.
    pub kind: SitemapKind,
    /// Entries in document order, at most `max_urls`.
    pub entries: Vec<Entry>,
    /// Entries left out, by reason.
    pub skipped: Skipped,
    /// The caps that cut the file, in the order they struck (empty when none did; log
    /// each: data was dropped).
    pub cuts: Vec<Cut>,
    /// Whether the body was gzip-compressed (detected by its magic bytes).
    pub gzip: bool,
    /// Bytes read after decompression.
    pub uncompressed_bytes: u64,
}

/// Why a file gave no entries at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SitemapError {
    /// The root element is neither `urlset` nor `sitemapindex` (or there is none).
    #[error("not a sitemap (root element is not urlset or sitemapindex)")]
    NotASitemap,
    /// A document type declaration: refused, so no entity can be declared or expanded.
    #[error("sitemap has a DOCTYPE (refused: no entity expansion)")]
    Doctype,
    /// An index deeper than `max_index_depth`.
    #[error("sitemap index nested {depth} deep (limit {limit})")]
    TooDeep {
        /// Depth of this file.
        depth: u8,
        /// The limit.
        limit: u8,
    },
    /// The gzip stream is corrupt.
    #[error("sitemap gzip stream is corrupt")]
    Gzip,
    /// The XML is not well-formed (or not UTF-8, or uses an unknown entity).
    #[error("malformed sitemap XML near byte {offset}")]
    Malformed {
        /// Position (in decompressed bytes) where the reader stopped.
        offset: u64,
    },
}

/// A reader that ends at `cap` bytes and remembers that it did.
struct Capped<R> {
    inner: R,
    left: u64,
    read: u64,
    hit: bool,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            // One probe byte tells a file of exactly `cap` bytes from a longer one.
            let mut probe = [0u8; 1];
            if !self.hit && self.inner.read(&mut probe)? > 0 {
                self.hit = true;
            }
            return Ok(0);
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(buf.get_mut(..want).unwrap_or_default())?;
        self.left -= n as u64;
        self.read += n as u64;
        Ok(n)
    }
}

/// Where the parser is inside the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Loc,
    LastMod,
}

/// Parse one sitemap body (plain or gzip, detected by magic; XML, or text with one URL
/// a line) found at `depth` (0 for a sitemap named by robots.txt or the operator,
/// parent + 1 for an index's children).
///
/// # Errors
/// A [`SitemapError`] when the file yields nothing usable: not a sitemap, a DOCTYPE, an
/// index too deep, a corrupt gzip stream, malformed XML. Caps are not errors: they cut
/// the file and say so in [`Sitemap::cuts`].
pub fn parse(body: &[u8], depth: u8, limits: &Limits) -> Result<Sitemap, SitemapError> {
    let gzip = body.starts_with(&[0x1F, 0x8B]);
    let source: Box<dyn Read + '_> = if gzip {
        Box::new(flate2::read::MultiGzDecoder::new(body))
    } else {
        Box::new(body)
    };
    let capped = Capped {
        inner: source,
        left: limits.max_uncompressed_bytes,
        read: 0,
        hit: false,
    };
    let mut input = BufReader::with_capacity(16 * 1024, capped);
    // The first byte that is not whitespace (or a byte order mark) says which kind of
    // file this is: `<` an XML sitemap, anything else a text sitemap (one URL a line).
    match first_byte(&mut input) {
        Ok(Some(b'<')) => parse_xml(input, gzip, depth, limits),
        Ok(Some(_)) => parse_text(input, gzip, limits),
        Ok(None) => Err(SitemapError::NotASitemap),
        Err(_) if gzip => Err(SitemapError::Gzip),
        Err(_) => Err(SitemapError::Malformed {
            offset: input.get_ref().read,
        }),
    }
}

type Input<'a> = BufReader<Capped<Box<dyn Read + 'a>>>;

/// Skips a UTF-8 byte order mark and whitespace; the next byte, `None` at the end.
fn first_byte(input: &mut Input<'_>) -> std::io::Result<Option<u8>> {
    use std::io::BufRead;
    if input.fill_buf()?.starts_with(b"\xEF\xBB\xBF") {
        input.consume(3);
    }
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok(None);
        }
        match buf.iter().position(|b| !b.is_ascii_whitespace()) {
            Some(i) => {
                let first = buf.get(i).copied();
                input.consume(i);
                return Ok(first);
            }
            None => {
                let n = buf.len();
                input.consume(n);
            }
        }
    }
}

/// A text sitemap (sitemaps.org "Text file"): one absolute `http`/`https` URL a line,
/// UTF-8, nothing else; under the same caps as XML (entries, bytes after
/// decompression, [`MAX_LOC_BYTES`] a line). Blank lines are passed over; a line that
/// is not such a URL is counted in `skipped.no_loc`. A file whose first line is not a
/// URL is [`SitemapError::NotASitemap`] (a page or a robots.txt served as text).
fn parse_text(mut input: Input<'_>, gzip: bool, limits: &Limits) -> Result<Sitemap, SitemapError> {
    use std::io::BufRead;
    let mut map = Sitemap {
        kind: SitemapKind::UrlSet,
        entries: Vec::new(),
        skipped: Skipped::default(),
        cuts: Vec::new(),
        gzip,
        uncompressed_bytes: 0,
    };
    let mut line: Vec<u8> = Vec::new();
    let mut too_long = false;
    let mut dropped: u64 = 0;
    let mut first = true;
    loop {
        let buf = match input.fill_buf() {
            Ok(buf) => buf,
            Err(_) if gzip => return Err(SitemapError::Gzip),
            Err(_) => {
                return Err(SitemapError::Malformed {
                    offset: input.get_ref().read,
                })
            }
        };
        let at_end = buf.is_empty();
        let (chunk, used, ends_line) = match memchr::memchr(b'\n', buf) {
            Some(i) => (buf.get(..i).unwrap_or_default(), i + 1, true),
            None => (buf, buf.len(), at_end),
        };
        if line.len() + chunk.len() > MAX_LOC_BYTES {
            too_long = true;
        } else {
            line.extend_from_slice(chunk);
        }
        input.consume(used);
        // A last line the byte cap cut short is not a URL: the cut says it was lost.
        let cut_short = at_end && input.get_ref().hit;
        if ends_line && !cut_short {
            let text = line.trim_ascii();
            if too_long {
                map.skipped.too_long += 1;
            } else if !text.is_empty() {
                match text_url(text) {
                    Some(_) if map.entries.len() >= limits.max_urls => dropped += 1,
                    Some(url) => map.entries.push(Entry {
                        loc: url.to_owned(),
                        lastmod: None,
                    }),
                    None if first => return Err(SitemapError::NotASitemap),
                    None => map.skipped.no_loc += 1,
                }
                first = false;
            }
            line.clear();
            too_long = false;
        }
        if at_end {
            break;
        }
    }
    let capped = input.get_ref();
    map.uncompressed_bytes = capped.read;
    if dropped > 0 {
        map.cuts.push(Cut::Urls {
            cap: limits.max_urls,
            dropped,
        });
    }
    if capped.hit {
        map.cuts.push(Cut::Bytes {
            cap_bytes: limits.max_uncompressed_bytes,
        });
    }
    Ok(map)
}

/// A text sitemap line as a URL: UTF-8, `http://` or `https://` (any case), no
/// whitespace inside.
fn text_url(line: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(line).ok()?;
    let scheme_ok = ["http://", "https://"].iter().any(|p| {
        text.get(..p.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(p))
    });
    (scheme_ok && text.len() > 8 && !text.contains(|c: char| c.is_whitespace())).then_some(text)
}

/// An XML sitemap or sitemap index, `input` at its first `<`.
fn parse_xml(
    input: Input<'_>,
    gzip: bool,
    depth: u8,
    limits: &Limits,
) -> Result<Sitemap, SitemapError> {
    let mut reader = Reader::from_reader(input);
    let config = reader.config_mut();
    config.check_end_names = true;
    config.expand_empty_elements = false;

    let mut map = Sitemap {
        kind: SitemapKind::UrlSet,
        entries: Vec::new(),
        skipped: Skipped::default(),
        cuts: Vec::new(),
        gzip,
        uncompressed_bytes: 0,
    };
    let mut root_seen = false;
    let mut root_closed = false;
    let mut in_entry = false;
    // Elements open inside the entry: only its direct children (depth 1) are its
    // fields, so `<image:image><image:loc>` never adds to the page's `<loc>`.
    let mut child_depth: u32 = 0;
    // Elements open outside any entry, below the root.
    let mut outer_depth: u32 = 0;
    let mut field: Option<Field> = None;
    let mut loc = String::new();
    let mut loc_too_long = false;
    let mut lastmod = String::new();
    let mut dropped: u64 = 0;
    let mut buf = Vec::new();
    let mut entry_name: &[u8] = b"url";

    loop {
        buf.clear();
        let event = reader.read_event_into(&mut buf);
        let capped = reader.get_ref().get_ref();
        map.uncompressed_bytes = capped.read;
        let event = match event {
            Ok(e) => e,
            Err(e) => {
                if capped.hit {
                    map.cuts.push(Cut::Bytes {
                        cap_bytes: limits.max_uncompressed_bytes,
                    });
                    break;
                }
                if gzip && matches!(e, quick_xml::Error::Io(_)) {
                    return Err(SitemapError::Gzip);
                }
                return Err(SitemapError::Malformed {
                    offset: reader.error_position(),
                });
            }
        };
        let malformed = |r: &Reader<_>| SitemapError::Malformed {
            offset: Reader::buffer_position(r),
        };
        match event {
            Event::DocType(_) => return Err(SitemapError::Doctype),
            Event::Start(ref e) | Event::Empty(ref e) if !root_seen => {
                root_seen = true;
                // `<urlset/>` is a valid, empty sitemap.
                root_closed = matches!(event, Event::Empty(_));
                map.kind = root_kind(e.local_name().as_ref(), depth, limits)?;
                if map.kind == SitemapKind::Index {
                    entry_name = b"sitemap";
                }
            }
            Event::Start(_) | Event::Empty(_) if root_closed => return Err(malformed(&reader)),
            Event::Start(e) => {
                let name = e.local_name();
                if in_entry {
                    child_depth += 1;
                    if child_depth == 1 {
                        field = match name.as_ref() {
                            b"loc" => Some(Field::Loc),
                            b"lastmod" => Some(Field::LastMod),
                            _ => None,
                        };
                    }
                } else if outer_depth == 0 && name.as_ref() == entry_name {
                    in_entry = true;
                    child_depth = 0;
                    loc.clear();
                    lastmod.clear();
                    loc_too_long = false;
                } else {
                    outer_depth += 1;
                }
            }
            Event::Empty(e) => {
                // `<url/>` is an entry without a location.
                if !in_entry && outer_depth == 0 && e.local_name().as_ref() == entry_name {
                    map.skipped.no_loc += 1;
                }
            }
            Event::End(_) => match (in_entry, child_depth) {
                // The entry's own end tag (the reader checks that names match).
                (true, 0) => {
                    in_entry = false;
                    field = None;
                    let lm = if lastmod.trim().is_empty() {
                        None
                    } else {
                        let parsed = LastMod::parse(&lastmod);
                        if parsed.is_none() {
                            map.skipped.bad_lastmod += 1;
                        }
                        parsed
                    };
                    let trimmed = loc.trim();
                    if loc_too_long {
                        map.skipped.too_long += 1;
                    } else if trimmed.is_empty() {
                        map.skipped.no_loc += 1;
                    } else if map.entries.len() >= limits.max_urls {
                        dropped += 1;
                    } else {
                        map.entries.push(Entry {
                            loc: trimmed.to_owned(),
                            lastmod: lm,
                        });
                    }
                }
                (true, d) => {
                    if d == 1 {
                        field = None;
                    }
                    child_depth = d - 1;
                }
                (false, _) if outer_depth > 0 => outer_depth -= 1,
                (false, _) => root_closed = true,
            },
            Event::Text(t) => {
                if let Some(f) = field {
                    let text = t.xml10_content().map_err(|_| malformed(&reader))?;
                    append(f, &text, &mut loc, &mut lastmod, &mut loc_too_long);
                } else if root_closed || !root_seen {
                    // Only whitespace may surround the root element.
                    let raw = t.into_inner();
                    if !raw.iter().all(u8::is_ascii_whitespace) {
                        return Err(malformed(&reader));
                    }
                }
            }
            Event::CData(c) => {
                if let Some(f) = field {
                    let raw = c.into_inner();
                    let text = std::str::from_utf8(&raw).map_err(|_| malformed(&reader))?;
                    append(f, text, &mut loc, &mut lastmod, &mut loc_too_long);
                }
            }
            Event::GeneralRef(r) => {
                let text: Cow<'_, str> = if let Ok(Some(ch)) = r.resolve_char_ref() {
                    Cow::Owned(ch.to_string())
                } else {
                    let name = r.decode().map_err(|_| malformed(&reader))?;
                    match quick_xml::escape::resolve_xml_entity(&name) {
                        Some(s) => Cow::Borrowed(s),
                        // Only the five predefined entities exist without a DTD.
                        None => return Err(malformed(&reader)),
                    }
                };
                if let Some(f) = field {
                    append(f, &text, &mut loc, &mut lastmod, &mut loc_too_long);
                }
            }
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
            Event::Eof => {
                if reader.get_ref().get_ref().hit {
                    map.cuts.push(Cut::Bytes {
                        cap_bytes: limits.max_uncompressed_bytes,
                    });
                    break;
                }
                if !root_seen {
                    return Err(SitemapError::NotASitemap);
                }
                if !root_closed {
                    return Err(malformed(&reader));
                }
                break;
            }
        }
    }
    if dropped > 0 {
        // The URL cap struck first (if the byte cap struck too, `dropped` counts the
        // entries read before it).
        map.cuts.insert(
            0,
            Cut::Urls {
                cap: limits.max_urls,
                dropped,
            },
        );
    }
    if !root_seen {
        return Err(SitemapError::NotASitemap);
    }
    Ok(map)
}

/// The kind of a document from its root element's local name, refusing an index too
/// deep.
fn root_kind(name: &[u8], depth: u8, limits: &Limits) -> Result<SitemapKind, SitemapError> {
    match name {
        b"urlset" => Ok(SitemapKind::UrlSet),
        b"sitemapindex" if depth >= limits.max_index_depth => Err(SitemapError::TooDeep {
            depth,
            limit: limits.max_index_depth,
        }),
        b"sitemapindex" => Ok(SitemapKind::Index),
        _ => Err(SitemapError::NotASitemap),
    }
}

/// Add decoded text to the field being read, bounding `<loc>` at [`MAX_LOC_BYTES`] and
/// `<lastmod>` at 64 bytes (no valid datetime is longer).
fn append(f: Field, text: &str, loc: &mut String, lastmod: &mut String, too_long: &mut bool) {
    match f {
        Field::Loc => {
            if loc.len() + text.len() > MAX_LOC_BYTES {
                *too_long = true;
            } else {
                loc.push_str(text);
            }
        }
        Field::LastMod => {
            if lastmod.len() + text.len() <= 64 {
                lastmod.push_str(text);
            } else {
                lastmod.clear();
                lastmod.push_str("invalid");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    const NS: &str = "xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"";

    fn urlset(body: &str) -> String {
        format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset {NS}>{body}</urlset>\n")
    }

    fn gz(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    fn ok(text: &str) -> Sitemap {
        parse(text.as_bytes(), 0, &Limits::default()).unwrap()
    }

    #[test]
    fn urlset_entries_with_lastmod_and_entities() {
        let map = ok(&urlset(
            "<url><loc> http://a.example/x?a=1&amp;b=2 </loc><lastmod>2025-07-01</lastmod>\
             <changefreq>daily</changefreq><priority>0.5</priority></url>\
             <url><loc><![CDATA[http://a.example/c?d=<e>]]></loc></url>\
             <url><loc>http://a.example/&#233;&#x41;</loc><lastmod>soon</lastmod></url>\
             <!-- a comment --><url><lastmod>2025-07-01</lastmod></url><url/>",
        ));
        assert_eq!(map.kind, SitemapKind::UrlSet);
        let locs: Vec<&str> = map.entries.iter().map(|e| e.loc.as_str()).collect();
        assert_eq!(
            locs,
            [
                "http://a.example/x?a=1&b=2",
                "http://a.example/c?d=<e>",
                "http://a.example/éA"
            ]
        );
        assert_eq!(map.entries[0].lastmod.map(|l| l.secs), Some(1_751_328_000));
        assert_eq!(map.entries[2].lastmod, None);
        assert_eq!(
            map.skipped,
            Skipped {
                no_loc: 2,
                too_long: 0,
                bad_lastmod: 1
            }
        );
        assert!(map.cuts.is_empty() && !map.gzip);
    }

    #[test]
    fn only_direct_children_of_an_entry_are_its_fields() {
        let map = ok(&urlset(
            "<url><loc>http://a.example/p</loc>\
             <image:image xmlns:image=\"http://www.google.com/schemas/sitemap-image/1.1\">\
             <image:loc>http://a.example/i.png</image:loc></image:image>\
             <xhtml:link xmlns:xhtml=\"http://www.w3.org/1999/xhtml\" rel=\"alternate\" href=\"http://a.example/de\"/>\
             </url><extra><url><loc>http://a.example/nested</loc></url></extra>",
        ));
        let locs: Vec<&str> = map.entries.iter().map(|e| e.loc.as_str()).collect();
        assert_eq!(locs, ["http://a.example/p"]);
        // An empty root is an empty sitemap.
        for empty in ["<urlset/>", "<?xml version=\"1.0\"?>\n<sitemapindex/>\n"] {
            let map = ok(empty);
            assert!(map.entries.is_empty() && map.cuts.is_empty(), "{empty}");
        }
    }

    #[test]
    fn index_entries_and_prefixed_names() {
        let text = "<?xml version=\"1.0\"?><sm:sitemapindex xmlns:sm=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
             <sm:sitemap><sm:loc>http://a.example/s1.xml</sm:loc><sm:lastmod>2024-01-02T03:04:05Z</sm:lastmod></sm:sitemap>\
             <sm:sitemap><sm:loc>http://a.example/s2.xml.gz</sm:loc></sm:sitemap></sm:sitemapindex>";
        let map = ok(text);
        assert_eq!(map.kind, SitemapKind::Index);
        assert_eq!(map.entries.len(), 2);
        assert_eq!(map.entries[1].loc, "http://a.example/s2.xml.gz");
        // Depth: an index at depth 1 is fine, at 2 refused by default.
        assert!(parse(text.as_bytes(), 1, &Limits::default()).is_ok());
        assert_eq!(
            parse(text.as_bytes(), 2, &Limits::default()),
            Err(SitemapError::TooDeep { depth: 2, limit: 2 })
        );
        // A urlset is fine at any depth.
        assert!(parse(urlset("").as_bytes(), 9, &Limits::default()).is_ok());
    }

    #[test]
    fn gzip_is_detected_by_magic() {
        let plain = urlset("<url><loc>http://a.example/1</loc></url>");
        let map = parse(&gz(plain.as_bytes()), 0, &Limits::default()).unwrap();
        assert!(map.gzip);
        assert_eq!(map.entries.len(), 1);
        assert_eq!(map.uncompressed_bytes, plain.len() as u64);
        let mut broken = gz(plain.as_bytes());
        let mid = broken.len() / 2;
        broken[mid] ^= 0xFF;
        broken.truncate(broken.len() - 4);
        assert!(matches!(
            parse(&broken, 0, &Limits::default()),
            Err(SitemapError::Gzip | SitemapError::Malformed { .. })
        ));
    }

    #[test]
    fn url_cap_keeps_the_first_entries_and_counts_the_rest() {
        let body: String = (0..15)
            .map(|k| format!("<url><loc>http://a.example/{k}</loc></url>"))
            .collect();
        let limits = Limits {
            max_urls: 10,
            ..Limits::default()
        };
        let map = parse(urlset(&body).as_bytes(), 0, &limits).unwrap();
        assert_eq!(map.entries.len(), 10);
        assert_eq!(map.entries[9].loc, "http://a.example/9");
        assert_eq!(
            map.cuts,
            [Cut::Urls {
                cap: 10,
                dropped: 5
            }]
        );
    }

    #[test]
    fn byte_cap_stops_reading_and_keeps_what_came_before() {
        let mut text = urlset("<url><loc>http://a.example/1</loc></url>");
        // Spaces between the entry and `</urlset>\n`.
        text.insert_str(text.len() - 10, &" ".repeat(5_000));
        let limits = Limits {
            max_uncompressed_bytes: 1_000,
            ..Limits::default()
        };
        for body in [text.as_bytes().to_vec(), gz(text.as_bytes())] {
            let map = parse(&body, 0, &limits).unwrap();
            assert_eq!(map.entries.len(), 1);
            assert_eq!(map.cuts, [Cut::Bytes { cap_bytes: 1_000 }]);
            assert_eq!(map.uncompressed_bytes, 1_000);
        }
        // Exactly at the cap is not over it.
        let exact = urlset("");
        let limits = Limits {
            max_uncompressed_bytes: exact.len() as u64,
            ..Limits::default()
        };
        assert!(parse(exact.as_bytes(), 0, &limits).unwrap().cuts.is_empty());
    }

    #[test]
    fn long_locations_are_skipped() {
        let long = format!("http://a.example/{}", "x".repeat(MAX_LOC_BYTES));
        let map = ok(&urlset(&format!(
            "<url><loc>{long}</loc></url><url><loc>http://a.example/ok</loc></url>"
        )));
        assert_eq!(map.entries.len(), 1);
        assert_eq!(map.skipped.too_long, 1);
    }

    /// sitemaps.org "Text file": one URL a line, UTF-8, the same caps.
    #[test]
    fn text_sitemaps_one_url_a_line() {
        let text = "\u{FEFF}\n  http://a.test/1\r\nHTTPS://a.test/2\n\n# a comment\nnot a url\n\
                    http://a.test/with space\nhttp://a.test/3";
        let map = ok(text);
        assert_eq!(map.kind, SitemapKind::UrlSet);
        let locs: Vec<&str> = map.entries.iter().map(|e| e.loc.as_str()).collect();
        assert_eq!(
            locs,
            ["http://a.test/1", "HTTPS://a.test/2", "http://a.test/3"]
        );
        assert!(map.entries.iter().all(|e| e.lastmod.is_none()));
        assert_eq!(map.skipped.no_loc, 3);
        assert!(map.cuts.is_empty());
        // Gzip-compressed, like an XML one.
        let map = parse(&gz(b"http://a.test/x\n"), 0, &Limits::default()).unwrap();
        assert!(map.gzip);
        assert_eq!(map.entries.len(), 1);
        // Caps: entries, line length, bytes.
        let limits = Limits {
            max_urls: 2,
            max_uncompressed_bytes: 1_000,
            max_index_depth: 2,
        };
        let many: String = (0..5).map(|i| format!("http://a.test/{i}\n")).collect();
        let map = parse(many.as_bytes(), 0, &limits).unwrap();
        assert_eq!(map.entries.len(), 2);
        assert_eq!(map.cuts, [Cut::Urls { cap: 2, dropped: 3 }]);
        let long = format!(
            "http://a.test/ok\nhttp://a.test/{}\n",
            "x".repeat(MAX_LOC_BYTES)
        );
        let map = ok(&long);
        assert_eq!((map.entries.len(), map.skipped.too_long), (1, 1));
        let big: String = (0..200).map(|i| format!("http://a.test/{i}\n")).collect();
        let map = parse(big.as_bytes(), 0, &limits).unwrap();
        assert!(map.cuts.contains(&Cut::Bytes { cap_bytes: 1_000 }));
        assert_eq!(map.uncompressed_bytes, 1_000);
        // The line the cap cut in two is not taken as a shorter URL.
        let cut = format!("http://a.test/first\nhttp://a.test/{}", "y".repeat(2_000));
        let map = parse(cut.as_bytes(), 0, &limits).unwrap();
        let locs: Vec<&str> = map.entries.iter().map(|e| e.loc.as_str()).collect();
        assert_eq!(locs, ["http://a.test/first"]);
    }

    #[test]
    fn refusals() {
        for (text, err) in [
            ("", SitemapError::NotASitemap),
            ("   ", SitemapError::NotASitemap),
            ("<html><body>hi</body></html>", SitemapError::NotASitemap),
            // Text whose first line is not a URL: a robots.txt, a page served as text.
            ("User-agent: *\nDisallow:\n", SitemapError::NotASitemap),
            ("see http://a/x\n", SitemapError::NotASitemap),
            (
                "<?xml version=\"1.0\"?><!DOCTYPE urlset [<!ENTITY a \"aaaa\">]><urlset><url><loc>&a;</loc></url></urlset>",
                SitemapError::Doctype,
            ),
        ] {
            let got = parse(text.as_bytes(), 0, &Limits::default());
            match (got, err) {
                (Err(SitemapError::Malformed { .. }), SitemapError::Malformed { .. }) => {}
                (got, err) => assert_eq!(got, Err(err), "{text:?}"),
            }
        }
        for text in [
            urlset("<url><loc>http://a/</lo></url>"),
            urlset("<url><loc>http://a/&bogus;</loc></url>"),
            "<urlset><url><loc>http://a/</loc></url>".to_owned(),
            format!("{}<urlset/>", urlset("")),
            "<urlset></urlset> trailing".to_owned(),
        ] {
            assert!(
                matches!(
                    parse(text.as_bytes(), 0, &Limits::default()),
                    Err(SitemapError::Malformed { .. })
                ),
                "{text:?}"
            );
        }
        let not_utf8 = [
            b"<urlset><url><loc>http://a/".as_slice(),
            &[0xFF, 0xFE],
            b"</loc></url></urlset>",
        ]
        .concat();
        assert!(matches!(
            parse(&not_utf8, 0, &Limits::default()),
            Err(SitemapError::Malformed { .. })
        ));
    }
}
