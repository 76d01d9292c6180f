//! Links out of HTML, fast: a one-pass, memchr-driven tag scanner over the raw page
//! bytes (no DOM), character references decoded as the HTML Standard does inside
//! attributes, every link canonicalized into a crawl key, plus the page's robots
//! directives, refresh target, declared charset and content fingerprints.
//!
//! Entry point: [`Links::extract`]. Behaviour and the documented differences from a
//! full HTML5 parser are in `docs/urls.md`.

#![deny(clippy::indexing_slicing)]

use std::borrow::Cow;
use std::ops::ControlFlow;

use encoding_rs::{Encoding, UTF_8};
use url::Url;

use crate::url::{canonicalize_with, CanonOptions, Reject};

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

/// One link of a page, in document order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The element.
    pub tag: Tag,
    /// The attribute.
    pub attr: Attr,
    /// The `rel` attribute of `<a>`, `<area>` or `<link>`, decoded, as written.
    pub rel: Option<String>,
    /// `rel` contains the token `nofollow` (ASCII case-insensitive).
    pub nofollow: bool,
    /// The canonical URL, or why the link was dropped.
    pub url: Result<Url, Reject>,
}

/// Limits and switches of the extractor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractOptions {
    /// Also report `<img src>` (default off: a crawler of pages rarely wants images).
    pub include_images: bool,
    /// Most links reported per page (default 5,000); the scan stops at the cap.
    pub max_links: usize,
    /// Longest attribute value read as a URL, in bytes (default 128 KiB). Longer
    /// values give [`Reject::AttributeTooLong`]; the crawl's URL length filter is
    /// separate and much shorter.
    pub max_attribute_bytes: usize,
    /// Most page bytes scanned (default 32 MiB); the rest is ignored.
    pub max_scan_bytes: usize,
    /// Canonicalization options for every link.
    pub canon: CanonOptions,
    /// The robot's own `<meta name>` besides `robots` (default `trawl`).
    pub robot_name: String,
}

impl Default for ExtractOptions {
    fn default() -> Self {
        ExtractOptions {
            include_images: false,
            max_links: 5_000,
            max_attribute_bytes: 128 * 1024,
            max_scan_bytes: 32 * 1024 * 1024,
            canon: CanonOptions::default(),
            robot_name: "trawl".to_owned(),
        }
    }
}

/// Everything the extractor learned from one page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageLinks {
    /// Links in document order (duplicates kept).
    pub links: Vec<Link>,
    /// The effective base URL: the first `<base href>` resolved against the page URL,
    /// or the page URL. It applies to the links after the `<base>` element.
    pub base: Url,
    /// Robots directives from `<meta name="robots">` and `<meta name="trawl">`.
    pub robots: RobotsMeta,
    /// The first meta refresh target (also among `links`).
    pub refresh: Option<Url>,
    /// The encoding the first `<meta charset>` or `http-equiv="content-type"`
    /// declared, if any.
    pub meta_charset: Option<&'static Encoding>,
    /// The encoding used for the page at its end (BOM, the caller's charset, or the
    /// meta charset once seen; UTF-8 otherwise).
    pub encoding: &'static Encoding,
    /// The scan stopped at [`ExtractOptions::max_links`].
    pub links_capped: bool,
    /// The page was longer than [`ExtractOptions::max_scan_bytes`].
    pub bytes_capped: bool,
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
        let bytes_capped = page.len() > options.max_scan_bytes;
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
        let mut collector = Collector {
            options,
            page_url: base,
            base: base.clone(),
            base_seen: false,
            encoding: scan_encoding,
            encoding_locked: declared.is_some(),
            links: Vec::new(),
            robots: RobotsMeta::default(),
            refresh: None,
            meta_charset: None,
            links_capped: false,
            element: Element::default(),
        };
        scan::scan(bytes, &mut collector);
        if !encoding.is_ascii_compatible() {
            collector.encoding = encoding;
        }
        PageLinks {
            links: collector.links,
            base: collector.base,
            robots: collector.robots,
            refresh: collector.refresh,
            meta_charset: collector.meta_charset,
            encoding: collector.encoding,
            links_capped: collector.links_capped,
            bytes_capped,
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
    base: Url,
    base_seen: bool,
    encoding: &'static Encoding,
    encoding_locked: bool,
    links: Vec<Link>,
    robots: RobotsMeta,
    refresh: Option<Url>,
    meta_charset: Option<&'static Encoding>,
    links_capped: bool,
    element: Element<'a>,
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
            String::from_utf8_lossy(raw)
        } else {
            self.encoding.decode_without_bom_handling(raw).0
        };
        match text {
            Cow::Borrowed(s) => decode_attribute(s),
            Cow::Owned(s) => Cow::Owned(decode_attribute(&s).into_owned()),
        }
    }

    fn resolve(&self, raw: &'a [u8]) -> Result<Url, Reject> {
        if raw.len() > self.options.max_attribute_bytes {
            return Err(Reject::AttributeTooLong {
                bytes: raw.len(),
                max_bytes: self.options.max_attribute_bytes,
            });
        }
        let href = self.value(raw);
        canonicalize_with(&self.base, &href, &self.options.canon, Some(self.encoding))
    }

    fn push(&mut self, link: Link) -> ControlFlow<()> {
        if self.links.len() >= self.options.max_links {
            self.links_capped = true;
            return ControlFlow::Break(());
        }
        self.links.push(link);
        ControlFlow::Continue(())
    }

    fn link(&mut self, tag: Tag, url: Option<&'a [u8]>, rel: Option<&'a [u8]>) -> ControlFlow<()> {
        let Some(raw) = url else {
            return ControlFlow::Continue(());
        };
        let rel = rel.map(|r| self.value(r).into_owned());
        let nofollow = rel.as_deref().is_some_and(|r| {
            r.split(|c: char| c.is_ascii_whitespace())
                .any(|t| t.eq_ignore_ascii_case("nofollow"))
        });
        let url = self.resolve(raw);
        self.push(Link {
            tag,
            attr: tag.attribute(),
            rel,
            nofollow,
            url,
        })
    }

    /// The first `<base href>` decides the base, even if its URL is unusable (the
    /// page URL then stays the base), as the HTML Standard's "frozen base URL" does.
    fn base_element(&mut self, href: Option<&'a [u8]>) {
        let Some(raw) = href else { return };
        if self.base_seen {
            return;
        }
        self.base_seen = true;
        if raw.len() > self.options.max_attribute_bytes {
            return;
        }
        let href = self.value(raw);
        if let Ok(base) = canonicalize_with(
            self.page_url,
            &href,
            &CanonOptions::default(),
            Some(self.encoding),
        ) {
            self.base = base;
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
                        let url = if target.len() > self.options.max_attribute_bytes {
                            Err(Reject::AttributeTooLong {
                                bytes: target.len(),
                                max_bytes: self.options.max_attribute_bytes,
                            })
                        } else {
                            canonicalize_with(
                                &self.base,
                                target,
                                &self.options.canon,
                                Some(self.encoding),
                            )
                        };
                        if let Ok(u) = &url {
                            self.refresh = Some(u.clone());
                        }
                        return self.push(Link {
                            tag: Tag::Meta,
                            attr: Attr::Content,
                            rel: None,
                            nofollow: false,
                            url,
                        });
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
        assert!(page.links.len() <= small.max_links);
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
