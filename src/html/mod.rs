//! Links out of HTML, fast: a one-pass tag scanner over the raw page bytes (no DOM),
//! walking 64-byte bit masks of `<`, `>` and quotes, character references decoded as
//! the HTML Standard does inside attributes, every link canonicalized into a crawl key,
//! plus the page's robots directives, refresh target, declared charset and content
//! fingerprints.
//!
//! Entry point: [`Links::extract`]. Behaviour and the documented differences from a
//! full HTML5 parser are in `docs/urls.md`.

// No panics on page bytes either (STYLE.md §5); tests are exempt through clippy.toml.
#![deny(clippy::indexing_slicing, clippy::expect_used, clippy::panic)]

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::ControlFlow;

use encoding_rs::{Encoding, UTF_8};
use url::Url;

use crate::url::{document_base, CanonOptions, Reject, Resolved, Resolver};

pub mod charref;
mod entities;
pub mod fingerprint;
pub mod meta;
mod scan;

pub use charref::decode_attribute;
pub use fingerprint::{fingerprint, near_duplicate_fingerprint};
pub use meta::RobotsMeta;

use scan::{TagClass, Visitor};

/// The element a link came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tag {
    /// `<a href>`
    A,
    /// `<area href>`
    Area,
    /// `<link href>` (see [`Link::rel`])
    Link,
    /// `<frame src>`
    Frame,
    /// `<iframe src>`
    Iframe,
    /// `<img src>` (and `<image src>`), only with [`ExtractOptions::include_images`]
    Img,
    /// `<meta http-equiv="refresh" content="...; url=...">`
    Meta,
}

impl Tag {
    /// The lower-case element name.
    pub fn name(self) -> &'static str {
        match self {
            Tag::A => "a",
            Tag::Area => "area",
            Tag::Link => "link",
            Tag::Frame => "frame",
            Tag::Iframe => "iframe",
            Tag::Img => "img",
            Tag::Meta => "meta",
        }
    }

    /// The attribute that holds this element's URL.
    pub fn attribute(self) -> Attr {
        match self {
            Tag::A | Tag::Area | Tag::Link => Attr::Href,
            Tag::Frame | Tag::Iframe | Tag::Img => Attr::Src,
            Tag::Meta => Attr::Content,
        }
    }
}

/// The attribute a link came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Attr {
    /// `href`
    Href,
    /// `src`
    Src,
    /// `content` (meta refresh)
    Content,
}

impl Attr {
    /// The lower-case attribute name.
    pub fn name(self) -> &'static str {
        match self {
            Attr::Href => "href",
            Attr::Src => "src",
            Attr::Content => "content",
        }
    }
}

/// One distinct link of a page. `U` is the canonical URL's type: [`Url`] from
/// [`Links::extract`], the canonical string from [`Links::extract_keys`] (the
/// crawler's form, which skips a parse per link).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link<U = Url> {
    /// The element.
    pub tag: Tag,
    /// The attribute.
    pub attr: Attr,
    /// The `rel` attribute of `<a>`, `<area>` or `<link>`, decoded, as written.
    pub rel: Option<String>,
    /// `rel` contains the token `nofollow` (ASCII case-insensitive) on every
    /// occurrence of this link: one followable occurrence makes the link followable
    /// (and gives it its tag and `rel`).
    pub nofollow: bool,
    /// The canonical URL, or why the link was dropped.
    pub url: Result<U, Reject>,
}

/// Limits and switches of the extractor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractOptions {
    /// Also report `<img src>` (default off: a crawler of pages rarely wants images).
    pub include_images: bool,
    /// Most distinct canonical links reported per page (default
    /// [`ExtractOptions::DEFAULT_MAX_LINKS`]). Duplicates are merged before the cap
    /// counts, so a page repeating its 5,000 links twice is whole; links past the
    /// cap are counted in [`PageLinks::links_dropped`], never lost silently. Rejected
    /// values have a budget of their own of the same size (so junk cannot crowd out
    /// links), past which they are counted in [`PageLinks::rejects_dropped`].
    pub max_links: usize,
    /// Longest attribute value read as a URL, in bytes (default 128 KiB). Longer
    /// values give [`Reject::AttributeTooLong`] and are counted in
    /// [`PageLinks::long_attributes`]; the crawl's URL length filter is separate and
    /// much shorter.
    pub max_attribute_bytes: usize,
    /// Most page bytes scanned (default 32 MiB); the rest is ignored and counted in
    /// [`PageLinks::unscanned_bytes`].
    pub max_scan_bytes: usize,
    /// Canonicalization options for every link.
    pub canon: CanonOptions,
    /// The robot's own `<meta name>` besides `robots` (default `trawl`).
    pub robot_name: String,
}

impl ExtractOptions {
    /// The default [`ExtractOptions::max_links`]: over three times the distinct
    /// links of the largest real index page we measured (javadoc's `index-7.html`:
    /// 25,240 links, 14,984 distinct), so only traps and generated pages reach it.
    pub const DEFAULT_MAX_LINKS: usize = 50_000;
}

impl Default for ExtractOptions {
    fn default() -> Self {
        ExtractOptions {
            include_images: false,
            max_links: Self::DEFAULT_MAX_LINKS,
            max_attribute_bytes: 128 * 1024,
            max_scan_bytes: 32 * 1024 * 1024,
            canon: CanonOptions::default(),
            robot_name: "trawl".to_owned(),
        }
    }
}

/// Everything the extractor learned from one page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageLinks<U = Url> {
    /// Distinct links (one per canonical URL; a rejected value once per value and
    /// reason) in the document order of their first occurrence.
    pub links: Vec<Link<U>>,
    /// The effective base URL: the first `<base href>` parsed against the page URL
    /// (canonical if `http(s)`; any other scheme as parsed, and then relative links
    /// cannot resolve), or the page URL. It applies to the links after the `<base>`
    /// element.
    pub base: Url,
    /// Robots directives from `<meta name="robots">` and `<meta name="trawl">`.
    pub robots: RobotsMeta,
    /// The first meta refresh target (also among `links`).
    pub refresh: Option<U>,
    /// The encoding the first `<meta charset>` or `http-equiv="content-type"`
    /// declared, if any.
    pub meta_charset: Option<&'static Encoding>,
    /// The encoding used for the page at its end (BOM, the caller's charset, or the
    /// meta charset once seen; UTF-8 otherwise).
    pub encoding: &'static Encoding,
    /// Distinct canonical links found after [`ExtractOptions::max_links`] was
    /// reached, not in `links` (0: the cap did not fire). Counted by 64-bit hash.
    pub links_dropped: usize,
    /// Occurrences of rejected values past their own budget of
    /// [`ExtractOptions::max_links`] distinct values, not in `links` (they would
    /// not have been followed either).
    pub rejects_dropped: usize,
    /// Bytes of the page past [`ExtractOptions::max_scan_bytes`], not scanned.
    pub unscanned_bytes: usize,
    /// Link, base and refresh values not read because they were longer than
    /// [`ExtractOptions::max_attribute_bytes`] (every occurrence; the links are in
    /// `links` as [`Reject::AttributeTooLong`]).
    pub long_attributes: usize,
}

impl<U> PageLinks<U> {
    /// Whether a cap dropped anything (links, rejected values, bytes or attribute
    /// values).
    pub fn is_truncated(&self) -> bool {
        self.links_dropped > 0
            || self.rejects_dropped > 0
            || self.unscanned_bytes > 0
            || self.long_attributes > 0
    }
}

/// The link extractor (see the module documentation).
#[derive(Debug, Clone, Copy, Default)]
pub struct Links;

impl Links {
    /// Extracts the links of `page`, fetched from `base`, with the default options.
    /// `charset` is the encoding from the HTTP `Content-Type`, if any; a byte order
    /// mark overrides it, and without either the page's `<meta charset>` applies from
    /// where it appears (UTF-8 before it).
    pub fn extract(base: &Url, page: &[u8], charset: Option<&'static Encoding>) -> PageLinks {
        Links::extract_with(base, page, charset, &ExtractOptions::default())
    }

    /// [`Links::extract`] with explicit options.
    pub fn extract_with(
        base: &Url,
        page: &[u8],
        charset: Option<&'static Encoding>,
        options: &ExtractOptions,
    ) -> PageLinks {
        let keys = Links::extract_keys(base, page, charset, options);
        // A canonical URL parses to itself (canonicalization is idempotent); the
        // error arm cannot be reached in practice and keeps the link as a rejection.
        let parse = |s: String| Url::parse(&s).map_err(Reject::InvalidUrl);
        PageLinks {
            links: keys
                .links
                .into_iter()
                .map(|l| Link {
                    tag: l.tag,
                    attr: l.attr,
                    rel: l.rel,
                    nofollow: l.nofollow,
                    url: l.url.and_then(parse),
                })
                .collect(),
            base: keys.base,
            robots: keys.robots,
            refresh: keys.refresh.and_then(|s| parse(s).ok()),
            meta_charset: keys.meta_charset,
            encoding: keys.encoding,
            links_dropped: keys.links_dropped,
            rejects_dropped: keys.rejects_dropped,
            unscanned_bytes: keys.unscanned_bytes,
            long_attributes: keys.long_attributes,
        }
    }

    /// [`Links::extract_with`] giving each canonical URL as its string (the crawl
    /// key) without building a [`Url`] per link: simple references are spliced onto
    /// the canonical page URL directly ([`Resolver`]), and a repeated link costs a
    /// hash lookup and no allocation.
    pub fn extract_keys(
        base: &Url,
        page: &[u8],
        charset: Option<&'static Encoding>,
        options: &ExtractOptions,
    ) -> PageLinks<String> {
        let unscanned_bytes = page.len().saturating_sub(options.max_scan_bytes);
        let page = page.get(..options.max_scan_bytes).unwrap_or(page);
        let (bom, bom_len) = match Encoding::for_bom(page) {
            Some((enc, len)) => (Some(enc), len),
            None => (None, 0),
        };
        let page = page.get(bom_len..).unwrap_or_default();
        let declared = bom.or(charset);
        let encoding = declared.unwrap_or(UTF_8);
        // UTF-16, ISO-2022-JP, replacement: markup bytes are not ASCII, so the whole
        // page is decoded first; URL queries then use the encoding's output encoding.
        let decoded: Cow<'_, str>;
        let (bytes, scan_encoding) = if encoding.is_ascii_compatible() {
            (page, encoding)
        } else {
            decoded = encoding.decode_without_bom_handling(page).0;
            (decoded.as_bytes(), encoding.output_encoding())
        };
        // Sized once for the page's likely links (one per 256 bytes is more than most
        // pages have: static20 pages one per 490, the synthweb-like ones one per 345),
        // instead of five or six doublings of each vector and of the map per page.
        let expected = (bytes.len() / 256).clamp(8, 4096).min(options.max_links);
        let mut collector = Collector {
            options,
            page_url: base,
            resolver: Resolver::new(base.clone(), options.canon.clone(), Some(scan_encoding)),
            base_seen: false,
            encoding: scan_encoding,
            encoding_locked: declared.is_some(),
            links: Vec::with_capacity(expected),
            dedup: Dedup::with_capacity(expected),
            scratch: String::new(),
            robots: RobotsMeta::default(),
            refresh: None,
            meta_charset: None,
            long_attributes: 0,
            element: Element::default(),
        };
        scan::scan(bytes, &mut collector);
        if !encoding.is_ascii_compatible() {
            collector.encoding = encoding;
        }
        PageLinks {
            links: collector.links,
            base: collector.resolver.into_base(),
            robots: collector.robots,
            refresh: collector.refresh,
            meta_charset: collector.meta_charset,
            encoding: collector.encoding,
            links_dropped: collector.dedup.dropped.len(),
            rejects_dropped: collector.dedup.rejects_dropped,
            unscanned_bytes,
            long_attributes: collector.long_attributes,
        }
    }
}

/// The scan alone, without decoding or resolution: calls `f(tag, raw value)` for each
/// `<a>`/`<area>`/`<link>` `href`, `<frame>`/`<iframe>` `src` (and `<img>` `src` with
/// `include_images`), in document order, with the same tokenizer rules as
/// [`Links::extract`]. Values are the raw attribute bytes (character references not
/// decoded). For callers that resolve lazily, and for measuring the scanner.
pub fn for_each_raw_link<'a>(page: &'a [u8], include_images: bool, f: impl FnMut(Tag, &'a [u8])) {
    struct Raw<'a, F> {
        f: F,
        include_images: bool,
        tag: Option<Tag>,
        value: Option<&'a [u8]>,
    }
    impl<'a, F: FnMut(Tag, &'a [u8])> Visitor<'a> for Raw<'a, F> {
        #[inline]
        fn start_tag(&mut self, _name: &'a [u8], class: TagClass) -> bool {
            self.tag = match class {
                TagClass::A => Some(Tag::A),
                TagClass::Area => Some(Tag::Area),
                TagClass::Link => Some(Tag::Link),
                TagClass::Frame => Some(Tag::Frame),
                TagClass::Iframe => Some(Tag::Iframe),
                TagClass::Img if self.include_images => Some(Tag::Img),
                _ => None,
            };
            self.value = None;
            self.tag.is_some()
        }
        #[inline]
        fn attribute(&mut self, name: &'a [u8], value: &'a [u8]) {
            let wanted: &[u8] = match self.tag {
                Some(Tag::A | Tag::Area | Tag::Link) => b"href",
                _ => b"src",
            };
            if self.value.is_none() && name.eq_ignore_ascii_case(wanted) {
                self.value = Some(value);
            }
        }
        #[inline]
        fn start_tag_done(&mut self) -> ControlFlow<()> {
            if let (Some(tag), Some(value)) = (self.tag.take(), self.value.take()) {
                (self.f)(tag, value);
            }
            ControlFlow::Continue(())
        }
    }
    scan::scan(
        page,
        &mut Raw {
            f,
            include_images,
            tag: None,
            value: None,
        },
    );
}

/// Raw attribute values of the current interesting start tag (first occurrence).
#[derive(Default)]
struct Element<'a> {
    class: Option<TagClass>,
    href: Option<&'a [u8]>,
    src: Option<&'a [u8]>,
    rel: Option<&'a [u8]>,
    name: Option<&'a [u8]>,
    content: Option<&'a [u8]>,
    http_equiv: Option<&'a [u8]>,
    charset: Option<&'a [u8]>,
}

struct Collector<'a, 'o> {
    options: &'o ExtractOptions,
    page_url: &'o Url,
    /// The document base (page URL or `<base href>`), the options and the encoding.
    resolver: Resolver,
    base_seen: bool,
    encoding: &'static Encoding,
    encoding_locked: bool,
    links: Vec<Link<String>>,
    dedup: Dedup<'a>,
    /// The fast path's output buffer, reused for every link of the page.
    scratch: String,
    robots: RobotsMeta,
    refresh: Option<String>,
    meta_charset: Option<&'static Encoding>,
    long_attributes: usize,
    element: Element<'a>,
}

/// A `Hasher` for keys that are already hashes (the map below is keyed by a
/// DoS-resistant hash of the link, so hashing again would be wasted work).
#[derive(Default)]
struct PreHashed(u64);

impl Hasher for PreHashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type PreHashedBuild = BuildHasherDefault<PreHashed>;

/// The distinct links of a page so far: a map from the hash of a link's key to its
/// latest entry in `links`, with collision chains through `next`, so a repeated link
/// is found without storing its key twice or allocating. The key is the canonical
/// URL, or for a rejected value the reason and the raw attribute bytes. The hash is
/// aHash with random keys, so a page cannot make the chains long on purpose.
struct Dedup<'a> {
    hasher: ahash::RandomState,
    heads: HashMap<u64, u32, PreHashedBuild>,
    /// Per entry of `links`: the previous entry with the same hash (`u32::MAX`: none).
    next: Vec<u32>,
    /// Per entry of `links`: the raw attribute value (compared for rejections).
    raw: Vec<&'a [u8]>,
    /// Hashes of the distinct canonical links seen after the cap.
    dropped: HashSet<u64, PreHashedBuild>,
    /// Entries of `links` that are canonical links and rejected values.
    canonical: usize,
    rejected: usize,
    /// Rejected values seen after their budget.
    rejects_dropped: usize,
}

impl Dedup<'_> {
    /// Room for `links` distinct links without growing.
    fn with_capacity(links: usize) -> Self {
        Dedup {
            hasher: ahash::RandomState::new(),
            heads: HashMap::with_capacity_and_hasher(links, PreHashedBuild::default()),
            next: Vec::with_capacity(links),
            raw: Vec::with_capacity(links),
            dropped: HashSet::default(),
            canonical: 0,
            rejected: 0,
            rejects_dropped: 0,
        }
    }
}

impl<'a> Dedup<'a> {
    fn hash(&self, url: &Result<Resolved<'_>, Reject>, raw: &[u8]) -> u64 {
        match url {
            Ok(r) => self.hasher.hash_one(r.as_str()),
            Err(e) => self.hasher.hash_one((e.code(), raw)),
        }
    }

    /// The entry of `links` equal to this link, if any.
    fn find(
        &self,
        links: &[Link<String>],
        hash: u64,
        url: &Result<Resolved<'_>, Reject>,
        raw: &[u8],
    ) -> Option<usize> {
        let mut at = self.heads.get(&hash).copied();
        while let Some(i) = at {
            let i = i as usize;
            let same = match (links.get(i).map(|l| &l.url), url) {
                (Some(Ok(have)), Ok(new)) => have.as_str() == new.as_str(),
                (Some(Err(have)), Err(new)) => {
                    have == new && self.raw.get(i).is_some_and(|r| *r == raw)
                }
                _ => false,
            };
            if same {
                return Some(i);
            }
            at = self.next.get(i).copied().filter(|&n| n != u32::MAX);
        }
        None
    }

    /// Records that the entry just pushed at `index` has `hash`.
    fn insert(&mut self, hash: u64, index: usize, raw: &'a [u8]) {
        let index = u32::try_from(index).unwrap_or(u32::MAX);
        let previous = self.heads.insert(hash, index).unwrap_or(u32::MAX);
        self.next.push(previous);
        self.raw.push(raw);
    }
}

fn set_once<'a>(slot: &mut Option<&'a [u8]>, value: &'a [u8]) {
    if slot.is_none() {
        *slot = Some(value);
    }
}

fn trim_ascii_space(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_ascii_whitespace())
}

impl<'a> Visitor<'a> for Collector<'a, '_> {
    #[inline]
    fn start_tag(&mut self, _name: &'a [u8], class: TagClass) -> bool {
        let wanted =
            class.is_interesting() && (class != TagClass::Img || self.options.include_images);
        if wanted {
            self.element = Element {
                class: Some(class),
                ..Element::default()
            };
        } else {
            self.element.class = None;
        }
        wanted
    }

    fn attribute(&mut self, name: &'a [u8], value: &'a [u8]) {
        let e = &mut self.element;
        let is = |n: &[u8]| name.eq_ignore_ascii_case(n);
        match name.len() {
            3 if is(b"src") => set_once(&mut e.src, value),
            3 if is(b"rel") => set_once(&mut e.rel, value),
            4 if is(b"href") => set_once(&mut e.href, value),
            4 if is(b"name") => set_once(&mut e.name, value),
            7 if is(b"content") => set_once(&mut e.content, value),
            7 if is(b"charset") => set_once(&mut e.charset, value),
            10 if is(b"http-equiv") => set_once(&mut e.http_equiv, value),
            _ => {}
        }
    }

    fn start_tag_done(&mut self) -> ControlFlow<()> {
        let Some(class) = self.element.class.take() else {
            return ControlFlow::Continue(());
        };
        let element = std::mem::take(&mut self.element);
        match class {
            TagClass::A => self.link(Tag::A, element.href, element.rel),
            TagClass::Area => self.link(Tag::Area, element.href, element.rel),
            TagClass::Link => self.link(Tag::Link, element.href, element.rel),
            TagClass::Frame => self.link(Tag::Frame, element.src, None),
            TagClass::Iframe => self.link(Tag::Iframe, element.src, None),
            TagClass::Img => self.link(Tag::Img, element.src, None),
            TagClass::Base => {
                self.base_element(element.href);
                ControlFlow::Continue(())
            }
            TagClass::Meta => self.meta(&element),
            _ => ControlFlow::Continue(()),
        }
    }
}

impl<'a> Collector<'a, '_> {
    /// Converts a raw attribute value to text: the page's encoding to Unicode, then
    /// character references.
    fn value(&self, raw: &'a [u8]) -> Cow<'a, str> {
        let text = if self.encoding == UTF_8 {
            // `from_utf8` has an ASCII fast path that the lossy decoder lacks.
            match std::str::from_utf8(raw) {
                Ok(s) => Cow::Borrowed(s),
                Err(_) => String::from_utf8_lossy(raw),
            }
        } else {
            self.encoding.decode_without_bom_handling(raw).0
        };
        match text {
            Cow::Borrowed(s) => decode_attribute(s),
            Cow::Owned(s) => Cow::Owned(decode_attribute(&s).into_owned()),
        }
    }

    /// The canonical URL of a raw link value, spliced into `scratch` when simple.
    fn resolve<'s>(
        &mut self,
        raw: &'a [u8],
        scratch: &'s mut String,
    ) -> Result<Resolved<'s>, Reject> {
        if raw.len() > self.options.max_attribute_bytes {
            self.long_attributes += 1;
            return Err(Reject::AttributeTooLong {
                bytes: raw.len(),
                max_bytes: self.options.max_attribute_bytes,
            });
        }
        let href = self.value(raw);
        self.resolver.resolve(&href, scratch)
    }

    /// Adds a link unless an equal one is there already (then a followable
    /// occurrence only upgrades a nofollow entry), or counts it as dropped past the
    /// cap. The scan does not stop at the cap: later links are still resolved, so
    /// the count of what was dropped is exact and later duplicates still merge.
    fn add(
        &mut self,
        tag: Tag,
        raw: &'a [u8],
        rel: Option<&'a [u8]>,
        nofollow: bool,
        url: Result<Resolved<'_>, Reject>,
    ) {
        let hash = self.dedup.hash(&url, raw);
        if let Some(i) = self.dedup.find(&self.links, hash, &url, raw) {
            let upgrade = !nofollow && self.links.get(i).is_some_and(|l| l.nofollow);
            if upgrade {
                let rel = rel.map(|r| self.value(r).into_owned());
                if let Some(link) = self.links.get_mut(i) {
                    link.tag = tag;
                    link.attr = tag.attribute();
                    link.rel = rel;
                    link.nofollow = false;
                }
            }
            return;
        }
        let d = &mut self.dedup;
        if url.is_ok() {
            if d.canonical >= self.options.max_links {
                d.dropped.insert(hash);
                return;
            }
            d.canonical += 1;
        } else {
            if d.rejected >= self.options.max_links {
                d.rejects_dropped += 1;
                return;
            }
            d.rejected += 1;
        }
        let rel = rel.map(|r| self.value(r).into_owned());
        self.dedup.insert(hash, self.links.len(), raw);
        self.links.push(Link {
            tag,
            attr: tag.attribute(),
            rel,
            nofollow,
            url: url.map(Resolved::into_string),
        });
    }

    fn link(&mut self, tag: Tag, url: Option<&'a [u8]>, rel: Option<&'a [u8]>) -> ControlFlow<()> {
        let Some(raw) = url else {
            return ControlFlow::Continue(());
        };
        let nofollow = rel.is_some_and(|r| {
            self.value(r)
                .split(|c: char| c.is_ascii_whitespace())
                .any(|t| t.eq_ignore_ascii_case("nofollow"))
        });
        let mut scratch = std::mem::take(&mut self.scratch);
        let resolved = self.resolve(raw, &mut scratch);
        self.add(tag, raw, rel, nofollow, resolved);
        self.scratch = scratch;
        ControlFlow::Continue(())
    }

    /// The first `<base href>` decides the base, as the HTML Standard's "frozen
    /// base URL" does: its value parsed against the page URL; if that fails, the
    /// page URL stays the base. A base in another scheme is kept: `javascript:`,
    /// `mailto:` or `data:` (no hierarchical path) makes every relative link after it
    /// unresolvable (`invalid_url`), `ftp:` makes them `unsupported_scheme`; they are
    /// never resolved against the page URL instead.
    fn base_element(&mut self, href: Option<&'a [u8]>) {
        let Some(raw) = href else { return };
        if self.base_seen {
            return;
        }
        self.base_seen = true;
        if raw.len() > self.options.max_attribute_bytes {
            self.long_attributes += 1;
            return;
        }
        let href = self.value(raw);
        if let Some(base) = document_base(self.page_url, &href, Some(self.encoding)) {
            self.resolver = Resolver::new(base, self.options.canon.clone(), Some(self.encoding));
        }
    }

    fn meta(&mut self, element: &Element<'a>) -> ControlFlow<()> {
        if let Some(raw) = element.charset {
            let label = self.value(raw);
            self.declare_charset(Encoding::for_label(trim_ascii_space(&label).as_bytes()));
        }
        let content = element.content.map(|raw| self.value(raw));
        if let (Some(equiv), Some(content)) = (element.http_equiv, content.as_deref()) {
            let equiv = self.value(equiv);
            let equiv = trim_ascii_space(&equiv);
            if equiv.eq_ignore_ascii_case("refresh") {
                if self.refresh.is_none() {
                    if let Some(target) = meta::refresh_url(content) {
                        let mut scratch = std::mem::take(&mut self.scratch);
                        let url = if target.len() > self.options.max_attribute_bytes {
                            self.long_attributes += 1;
                            Err(Reject::AttributeTooLong {
                                bytes: target.len(),
                                max_bytes: self.options.max_attribute_bytes,
                            })
                        } else {
                            self.resolver.resolve(target, &mut scratch)
                        };
                        if let Ok(u) = &url {
                            self.refresh = Some(u.as_str().to_owned());
                        }
                        let raw = element.content.unwrap_or_default();
                        self.add(Tag::Meta, raw, None, false, url);
                        self.scratch = scratch;
                        return ControlFlow::Continue(());
                    }
                }
            } else if equiv.eq_ignore_ascii_case("content-type") {
                self.declare_charset(meta::charset_from_content(content));
            }
        }
        if let (Some(name), Some(content)) = (element.name, content.as_deref()) {
            let name = self.value(name);
            let name = trim_ascii_space(&name);
            if name.eq_ignore_ascii_case("robots")
                || name.eq_ignore_ascii_case(&self.options.robot_name)
            {
                self.robots.apply(content);
            }
        }
        ControlFlow::Continue(())
    }

    fn declare_charset(&mut self, encoding: Option<&'static Encoding>) {
        let Some(encoding) = meta::declared_encoding(encoding) else {
            return;
        };
        if self.meta_charset.is_some() {
            return;
        }
        self.meta_charset = Some(encoding);
        if !self.encoding_locked && encoding.is_ascii_compatible() {
            self.encoding = encoding;
            self.resolver.set_encoding(Some(encoding));
            self.encoding_locked = true;
        }
    }
}

/// Fuzz entry point for the extractor: any bytes, as UTF-8, windows-1252 and
/// UTF-16LE pages, with small caps so the caps are exercised. Nothing may panic; the
/// caps hold; every canonical link is a fixed point of canonicalization.
pub fn fuzz_extract(data: &[u8]) {
    let Ok(base) = Url::parse("http://fuzz.example/dir/page.html") else {
        return;
    };
    let small = ExtractOptions {
        include_images: true,
        max_links: 50,
        max_attribute_bytes: 200,
        ..ExtractOptions::default()
    };
    for charset in [
        None,
        Some(encoding_rs::WINDOWS_1252),
        Some(encoding_rs::UTF_16LE),
    ] {
        let page = Links::extract_with(&base, data, charset, &small);
        assert!(page.links.len() <= 2 * small.max_links);
        let canonical = page.links.iter().filter(|l| l.url.is_ok()).count();
        assert!(canonical <= small.max_links);
        for link in page.links.iter().take(5) {
            if let Ok(url) = &link.url {
                let again = crate::url::canonicalize(&base, url.as_str());
                assert_eq!(again.as_ref(), Ok(url), "link not canonical");
            }
        }
    }
    let _ = Links::extract(&base, data, None);
    let _ = near_duplicate_fingerprint(data);
}

#[cfg(test)]
mod tests;
