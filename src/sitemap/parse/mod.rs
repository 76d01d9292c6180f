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
mod tests;
