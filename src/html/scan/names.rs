//! What the scanner knows about tag names: the [`TagClass`] of a start tag (in HTML and
//! in foreign content), the HTML breakout tags that leave SVG/MathML, and the perfect
//! hash of the HTML elements whose open count decides whether an end tag leaves foreign
//! content.

#![deny(clippy::indexing_slicing)]

/// What the scanner knows about a start tag's name (ASCII case-insensitive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TagClass {
    /// `<a>`
    A,
    /// `<area>`
    Area,
    /// `<link>`
    Link,
    /// `<frame>`
    Frame,
    /// `<iframe>` (a link, and raw text in HTML content)
    Iframe,
    /// `<img>`, and `<image>` in HTML content (the tree builder renames it)
    Img,
    /// `<base>` (HTML content only)
    Base,
    /// `<meta>` (HTML content only)
    Meta,
    /// `<script>`: script data state
    Script,
    /// `<style>`, `<xmp>`, `<noembed>`, `<noframes>`: raw text
    RawText,
    /// `<textarea>`, `<title>`: escapable raw text (RCDATA)
    RcData,
    /// `<plaintext>`: the rest of the document is text
    Plaintext,
    /// `<svg>` or `<math>`: enters foreign content
    Foreign,
    /// Anything else.
    Other,
}

impl TagClass {
    /// Whether this start tag carries a link or page metadata.
    pub(crate) fn is_interesting(self) -> bool {
        matches!(
            self,
            TagClass::A
                | TagClass::Area
                | TagClass::Link
                | TagClass::Frame
                | TagClass::Iframe
                | TagClass::Img
                | TagClass::Base
                | TagClass::Meta
        )
    }
}

/// Classifies a start tag name outside foreign content.
pub(super) fn classify(name: &[u8]) -> TagClass {
    let eq = |s: &[u8]| name.eq_ignore_ascii_case(s);
    match name.len() {
        1 if eq(b"a") => TagClass::A,
        3 if eq(b"img") => TagClass::Img,
        3 if eq(b"svg") => TagClass::Foreign,
        3 if eq(b"xmp") => TagClass::RawText,
        4 if eq(b"area") => TagClass::Area,
        4 if eq(b"link") => TagClass::Link,
        4 if eq(b"base") => TagClass::Base,
        4 if eq(b"meta") => TagClass::Meta,
        4 if eq(b"math") => TagClass::Foreign,
        5 if eq(b"frame") => TagClass::Frame,
        5 if eq(b"image") => TagClass::Img,
        5 if eq(b"style") => TagClass::RawText,
        5 if eq(b"title") => TagClass::RcData,
        6 if eq(b"iframe") => TagClass::Iframe,
        6 if eq(b"script") => TagClass::Script,
        7 if eq(b"noembed") => TagClass::RawText,
        8 if eq(b"noframes") => TagClass::RawText,
        8 if eq(b"textarea") => TagClass::RcData,
        9 if eq(b"plaintext") => TagClass::Plaintext,
        _ => TagClass::Other,
    }
}

/// Classifies a start tag name inside SVG or MathML: nothing is raw text there, and
/// `base`, `meta` and `image` are not the HTML elements.
pub(super) fn classify_foreign(name: &[u8]) -> TagClass {
    match classify(name) {
        class @ (TagClass::A
        | TagClass::Area
        | TagClass::Link
        | TagClass::Frame
        | TagClass::Iframe
        | TagClass::Foreign) => class,
        TagClass::Img if name.len() == 3 => TagClass::Img,
        _ => TagClass::Other,
    }
}

/// The HTML Standard's list of start tags that break out of foreign content (§13.2.6.5;
/// `font` counts only with `color`, `face` or `size`, which this scanner ignores).
pub(super) fn is_breakout(name: &[u8]) -> bool {
    const NAMES: &[&[u8]] = &[
        b"b",
        b"big",
        b"blockquote",
        b"body",
        b"br",
        b"center",
        b"code",
        b"dd",
        b"div",
        b"dl",
        b"dt",
        b"em",
        b"embed",
        b"h1",
        b"h2",
        b"h3",
        b"h4",
        b"h5",
        b"h6",
        b"head",
        b"hr",
        b"i",
        b"img",
        b"li",
        b"listing",
        b"menu",
        b"meta",
        b"nobr",
        b"ol",
        b"p",
        b"pre",
        b"ruby",
        b"s",
        b"small",
        b"span",
        b"strong",
        b"strike",
        b"sub",
        b"sup",
        b"table",
        b"tt",
        b"u",
        b"ul",
        b"var",
    ];
    name.len() <= 10 && NAMES.iter().any(|n| name.eq_ignore_ascii_case(n))
}

/// HTML elements that commonly contain inline SVG or MathML, whose open count the
/// scanner keeps (see [`super::Scanner::close_foreign`]).
pub(super) const HTML_CONTAINERS: [&[u8]; 40] = [
    b"a",
    b"article",
    b"aside",
    b"b",
    b"blockquote",
    b"body",
    b"button",
    b"center",
    b"dd",
    b"div",
    b"dl",
    b"dt",
    b"em",
    b"figure",
    b"footer",
    b"form",
    b"h1",
    b"h2",
    b"h3",
    b"h4",
    b"h5",
    b"h6",
    b"header",
    b"html",
    b"i",
    b"label",
    b"li",
    b"main",
    b"nav",
    b"ol",
    b"section",
    b"small",
    b"span",
    b"strong",
    b"table",
    b"td",
    b"th",
    b"tr",
    b"u",
    b"ul",
];

/// [`HTML_CONTAINERS`] by [`container_slot`] (255: none): a perfect hash, so the
/// lookup done for every HTML start and end tag costs one hash and one comparison
/// (a `match` over the names cost the scan 24 % more instructions on javadoc pages).
/// `html_container_table_is_a_perfect_hash` checks it.
pub(super) const CONTAINER_SLOTS: [u8; 128] = [
    20, 255, 14, 255, 21, 255, 255, 32, 11, 12, 15, 2, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 35, 255, 255, 255, 255, 30, 255, 255, 255, 255, 4, 255, 255, 255, 255, 29, 36,
    255, 255, 7, 255, 255, 255, 255, 255, 31, 34, 0, 255, 255, 255, 255, 255, 255, 255, 24, 22,
    255, 255, 255, 23, 255, 9, 255, 26, 255, 5, 38, 8, 255, 255, 255, 255, 255, 13, 33, 37, 255,
    255, 255, 3, 39, 255, 255, 255, 27, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 28, 255,
    25, 255, 10, 255, 255, 255, 255, 255, 255, 1, 16, 255, 255, 255, 17, 255, 255, 255, 18, 255,
    255, 255, 19, 255, 6, 255,
];

fn container_slot(len: usize, first: u8, last: u8) -> usize {
    (len.wrapping_mul(50) + usize::from(first) * 29 + (usize::from(last) << 2)) & 127
}

/// The index of `name` in [`HTML_CONTAINERS`] (ASCII case-insensitive). Bytes are
/// folded with `| 0x20`, exact for letters and digits (the names' bytes); the rare
/// control byte it folds onto a digit (`0x11` onto `1`) only miscounts a bogus tag.
#[inline]
pub(super) fn html_container(name: &[u8]) -> Option<usize> {
    let len = name.len();
    if len > 10 {
        return None;
    }
    let slot = container_slot(len, *name.first()? | 0x20, *name.last()? | 0x20);
    let index = usize::from(*CONTAINER_SLOTS.get(slot)?);
    let candidate = HTML_CONTAINERS.get(index)?;
    let same = candidate.len() == len && name.iter().zip(*candidate).all(|(a, b)| a | 0x20 == *b);
    same.then_some(index)
}
