//! The one-pass tag scanner: a hand-written subset of the HTML Standard's tokenizer
//! (§13.2.5) over raw bytes, driven by `memchr`, with no DOM and no allocation.
//!
//! It follows the tokenizer exactly where the link set depends on it: tag and
//! attribute name rules, the three attribute value syntaxes, duplicate attributes
//! (first wins), tags cut by end of file (dropped), comments (including `<!-->` and
//! `--!>`), bogus comments, DOCTYPE, `<![CDATA[` (a CDATA section only in SVG/MathML,
//! a bogus comment elsewhere), and the raw-text elements whose content is not markup:
//! `<script>` (with its escaped and double-escaped states), `<style>`, `<xmp>`,
//! `<iframe>`, `<noembed>`, `<noframes>`, `<textarea>`, `<title>`, `<plaintext>`.
//! The tree builder's effects that change tokenization are approximated by a foreign
//! content depth (inside `<svg>`/`<math>` those elements are not raw text, and the
//! HTML breakout tags leave foreign content). `docs/urls.md` lists what differs from a
//! full parser.

#![deny(clippy::indexing_slicing)]

use std::ops::ControlFlow;

use memchr::{memchr, memchr2, memchr3, memmem};

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

/// Receives the scanner's findings. Default methods ignore everything, so a visitor
/// that needs only links pays nothing for text.
pub(crate) trait Visitor<'a> {
    /// Text content: data between tags, raw text, RCDATA and CDATA sections.
    fn text(&mut self, _text: &'a [u8]) {}
    /// A start tag begins; return `true` to receive its attributes.
    fn start_tag(&mut self, name: &'a [u8], class: TagClass) -> bool;
    /// An attribute of the current start tag (raw bytes: no character references
    /// decoded). Duplicates are passed too; the first one is the attribute.
    fn attribute(&mut self, _name: &'a [u8], _value: &'a [u8]) {}
    /// The current start tag is complete (a tag cut by end of file never completes).
    /// `Break` stops the scan.
    fn start_tag_done(&mut self) -> ControlFlow<()> {
        ControlFlow::Continue(())
    }
    /// An end tag (its attributes, which HTML ignores, are skipped).
    fn end_tag(&mut self, _name: &'a [u8]) {}
}

/// HTML whitespace as the tokenizer sees it: tab, LF, FF, space, and CR (which input
/// preprocessing turns into LF).
#[inline]
fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

/// Bytes that end a tag name or an attribute name.
#[inline]
fn ends_name(b: u8) -> bool {
    is_space(b) || b == b'/' || b == b'>'
}

/// Classifies a start tag name outside foreign content.
fn classify(name: &[u8]) -> TagClass {
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
fn classify_foreign(name: &[u8]) -> TagClass {
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
fn is_breakout(name: &[u8]) -> bool {
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
/// scanner keeps (see [`Scanner::close_foreign`]).
const HTML_CONTAINERS: [&[u8]; 40] = [
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
const CONTAINER_SLOTS: [u8; 128] = [
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
fn html_container(name: &[u8]) -> Option<usize> {
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

/// Scans `bytes` (an ASCII-compatible encoding) and reports to `visitor`.
pub(crate) fn scan<'a>(bytes: &'a [u8], visitor: &mut impl Visitor<'a>) {
    let mut scanner = Scanner {
        bytes,
        foreign: Vec::new(),
        html_open: [0; HTML_CONTAINERS.len()],
    };
    scanner.run(visitor);
}

struct Scanner<'a> {
    bytes: &'a [u8],
    /// Open SVG/MathML elements (lower-case names, truncated), innermost last; empty
    /// in HTML content. Inside foreign content raw-text elements are ordinary and
    /// `<![CDATA[` starts a CDATA section. Capped at [`MAX_FOREIGN_DEPTH`].
    foreign: Vec<ForeignName>,
    /// Start tags minus end tags seen in HTML content of each [`html_container`]
    /// element (saturating): an end tag in foreign content closes the foreign content
    /// only if such an element is open outside it (HTML Standard §13.2.6.5, "any other
    /// end tag", then the in-body rules, which ignore an end tag with no element of
    /// that name in scope). Elements the tree builder closes implicitly stay counted,
    /// which errs toward leaving foreign content, as the scanner did before it counted.
    html_open: [u16; HTML_CONTAINERS.len()],
}

/// Deepest foreign element nesting tracked; deeper elements are not pushed.
const MAX_FOREIGN_DEPTH: usize = 256;

/// A foreign element name: length, then up to 15 lower-case bytes.
type ForeignName = [u8; 16];

fn foreign_name(name: &[u8]) -> ForeignName {
    let mut out = [0u8; 16];
    let len = name.len().min(15);
    out[0] = u8::try_from(len).unwrap_or(15);
    for (dst, src) in out.iter_mut().skip(1).zip(name.iter().take(len)) {
        *dst = src.to_ascii_lowercase();
    }
    out
}

impl<'a> Scanner<'a> {
    fn byte(&self, i: usize) -> Option<u8> {
        self.bytes.get(i).copied()
    }

    fn from(&self, i: usize) -> &'a [u8] {
        self.bytes.get(i..).unwrap_or_default()
    }

    fn slice(&self, start: usize, end: usize) -> &'a [u8] {
        self.bytes.get(start..end).unwrap_or_default()
    }

    fn run(&mut self, visitor: &mut impl Visitor<'a>) {
        let len = self.bytes.len();
        let mut pos = 0;
        while pos < len {
            let Some(off) = memchr(b'<', self.from(pos)) else {
                visitor.text(self.from(pos));
                return;
            };
            let lt = pos + off;
            if lt > pos {
                visitor.text(self.slice(pos, lt));
            }
            let next = match self.byte(lt + 1) {
                Some(b'!') => self.markup_declaration(lt, visitor),
                Some(b'/') => self.end_tag(lt, visitor),
                Some(b'?') => self.bogus_comment(lt + 2),
                Some(c) if c.is_ascii_alphabetic() => match self.start_tag(lt, visitor) {
                    Some(next) => next,
                    None => return,
                },
                _ => {
                    visitor.text(self.slice(lt, lt + 1));
                    lt + 1
                }
            };
            pos = next;
        }
    }

    /// `<!`: comment, DOCTYPE, CDATA section or bogus comment. Returns the position
    /// after it.
    fn markup_declaration(&mut self, lt: usize, visitor: &mut impl Visitor<'a>) -> usize {
        let rest = self.from(lt + 2);
        if rest.starts_with(b"--") {
            return self.comment(lt + 4);
        }
        if !self.foreign.is_empty() && rest.starts_with(b"[CDATA[") {
            let start = lt + 9;
            return match memmem::find(self.from(start), b"]]>") {
                Some(n) => {
                    visitor.text(self.slice(start, start + n));
                    start + n + 3
                }
                None => {
                    visitor.text(self.from(start));
                    self.bytes.len()
                }
            };
        }
        // DOCTYPE ends at the first `>` even inside its quoted identifiers (the
        // tokenizer's abrupt-doctype errors), exactly like a bogus comment.
        self.bogus_comment(lt + 2)
    }

    /// Comment body starting after `<!--`.
    fn comment(&self, start: usize) -> usize {
        match (self.byte(start), self.byte(start + 1)) {
            (Some(b'>'), _) => return start + 1,
            (Some(b'-'), Some(b'>')) => return start + 2,
            _ => {}
        }
        let finder = memmem::Finder::new(b"--");
        let mut at = start;
        while let Some(n) = finder.find(self.from(at)) {
            let dashes = at + n;
            match (self.byte(dashes + 2), self.byte(dashes + 3)) {
                (Some(b'>'), _) => return dashes + 3,
                (Some(b'!'), Some(b'>')) => return dashes + 4,
                _ => at = dashes + 1,
            }
        }
        self.bytes.len()
    }

    /// Bogus comment (and DOCTYPE, `<?...>`, `</ ...>`): up to the first `>`.
    fn bogus_comment(&self, start: usize) -> usize {
        match memchr(b'>', self.from(start)) {
            Some(n) => start + n + 1,
            None => self.bytes.len(),
        }
    }

    /// `</`: an end tag, `</>` (ignored), or a bogus comment.
    fn end_tag(&mut self, lt: usize, visitor: &mut impl Visitor<'a>) -> usize {
        match self.byte(lt + 2) {
            Some(c) if c.is_ascii_alphabetic() => {}
            Some(b'>') => return lt + 3,
            Some(_) => return self.bogus_comment(lt + 2),
            None => {
                visitor.text(self.from(lt));
                return self.bytes.len();
            }
        }
        let name_start = lt + 2;
        let name_end = self.name_end(name_start + 1);
        let name = self.slice(name_start, name_end);
        let Some((next, _)) = self.attributes(name_end, &mut |_, _| {}) else {
            return self.bytes.len();
        };
        if self.foreign.is_empty() || self.close_foreign(name) {
            self.html_end(name);
        }
        visitor.end_tag(name);
        next
    }

    fn open_foreign(&mut self, name: &[u8]) {
        if self.foreign.len() < MAX_FOREIGN_DEPTH {
            self.foreign.push(foreign_name(name));
        }
    }

    /// Whether the innermost open foreign element is an SVG HTML integration point
    /// (`foreignObject`, `desc`, `title`) or a MathML text integration point (`mi`,
    /// `mo`, `mn`, `ms`, `mtext`), where start tags follow the HTML rules. The
    /// namespace is that of the nearest open `<svg>` or `<math>`. (`annotation-xml`
    /// depends on its `encoding` attribute and is not treated as one.)
    fn in_integration_point(&self) -> bool {
        let Some(top) = self.foreign.last() else {
            return false;
        };
        let svg = foreign_name(b"svg");
        let math = foreign_name(b"math");
        let in_svg = self
            .foreign
            .iter()
            .rev()
            .find(|n| **n == svg || **n == math)
            .is_some_and(|n| *n == svg);
        let points: &[&[u8]] = if in_svg {
            &[b"foreignobject", b"desc", b"title"]
        } else {
            &[b"mi", b"mo", b"mn", b"ms", b"mtext"]
        };
        points.iter().any(|p| foreign_name(p) == *top)
    }

    /// An HTML start tag: one more open element of its name, if counted.
    #[inline]
    fn html_start(&mut self, name: &[u8]) {
        if let Some(n) = html_container(name).and_then(|i| self.html_open.get_mut(i)) {
            *n = n.saturating_add(1);
        }
    }

    /// An end tag handled by the HTML rules: one fewer open element of its name.
    #[inline]
    fn html_end(&mut self, name: &[u8]) {
        if let Some(n) = html_container(name).and_then(|i| self.html_open.get_mut(i)) {
            *n = n.saturating_sub(1);
        }
    }

    /// An end tag in foreign content (§13.2.6.5): it closes the nearest open foreign
    /// element of that name; `</p>` and `</br>` leave foreign content; another name is
    /// handled by the HTML rules, which leave foreign content only if an HTML element
    /// of that name is open outside it (otherwise the tag is ignored: `<svg></a>` with
    /// no `<a>` open stays in SVG). Returns whether the HTML rules took the tag.
    fn close_foreign(&mut self, name: &[u8]) -> bool {
        if name.eq_ignore_ascii_case(b"p") || name.eq_ignore_ascii_case(b"br") {
            self.foreign.clear();
            return true;
        }
        let wanted = foreign_name(name);
        match self.foreign.iter().rposition(|open| *open == wanted) {
            Some(index) => {
                self.foreign.truncate(index);
                false
            }
            None => {
                let open = html_container(name)
                    .and_then(|i| self.html_open.get(i))
                    .is_some_and(|n| *n > 0);
                if open {
                    self.foreign.clear();
                }
                open
            }
        }
    }

    /// The end of a tag name starting at or before `from`.
    #[inline]
    fn name_end(&self, from: usize) -> usize {
        let rest = self.from(from);
        from + rest
            .iter()
            .position(|&b| ends_name(b))
            .unwrap_or(rest.len())
    }

    /// A start tag at `lt`. Returns the position after it (and after the content of a
    /// raw-text element), or `None` to stop (end of file inside the tag, or the
    /// visitor asked to stop).
    fn start_tag(&mut self, lt: usize, visitor: &mut impl Visitor<'a>) -> Option<usize> {
        let name_start = lt + 1;
        let name_end = self.name_end(name_start + 1);
        let name = self.slice(name_start, name_end);
        // In an integration point start tags follow the HTML rules (§13.2.6: the tree
        // construction dispatcher), so `<svg><title><script>` starts script data.
        let integration = !self.foreign.is_empty() && self.in_integration_point();
        let class = if self.foreign.is_empty() || integration {
            classify(name)
        } else if is_breakout(name) {
            self.foreign.clear();
            classify(name)
        } else {
            classify_foreign(name)
        };
        let wants_attributes = visitor.start_tag(name, class);
        let (next, self_closing) = if wants_attributes {
            self.attributes(name_end, &mut |n, v| visitor.attribute(n, v))?
        } else {
            self.skip_attributes(name_end)?
        };
        if visitor.start_tag_done().is_break() {
            return None;
        }
        if !self.foreign.is_empty() && !integration {
            if !self_closing {
                self.open_foreign(name);
            }
            return Some(next);
        }
        // In HTML content `/>` does not close a non-void element: `<script/>` still
        // starts script data.
        Some(match class {
            TagClass::Foreign if !self_closing => {
                self.open_foreign(name);
                next
            }
            TagClass::Script => self.script_data(next, visitor),
            TagClass::RawText | TagClass::RcData | TagClass::Iframe => {
                self.raw_text(next, name, visitor)
            }
            TagClass::Plaintext => {
                visitor.text(self.from(next));
                self.bytes.len()
            }
            // HTML elements inside an integration point are not tracked: their content
            // is taken as part of the integration point's.
            TagClass::A | TagClass::Other if self.foreign.is_empty() => {
                self.html_start(name);
                next
            }
            _ => next,
        })
    }

    /// Skips the attributes of a tag nobody wants: when no quote occurs before the
    /// next `>`, that `>` ends the tag; otherwise the full attribute grammar runs.
    #[inline]
    fn skip_attributes(&self, from: usize) -> Option<(usize, bool)> {
        let rest = self.from(from);
        match memchr3(b'>', b'"', b'\'', rest) {
            // `/>` needs the grammar: `<svg width=1/>` is not self-closing.
            Some(n) if rest.get(n) == Some(&b'>') && (n == 0 || rest.get(n - 1) != Some(&b'/')) => {
                Some((from + n + 1, false))
            }
            Some(_) => self.attributes(from, &mut |_, _| {}),
            None => None,
        }
    }

    /// The attribute states of the tokenizer (§13.2.5.32-42) from just after the tag
    /// name. Calls `on_attribute(name, raw value)` for each attribute; returns the
    /// position after `>` and the self-closing flag, or `None` at end of file (the
    /// tokenizer then drops the tag).
    fn attributes(
        &self,
        mut i: usize,
        on_attribute: &mut impl FnMut(&'a [u8], &'a [u8]),
    ) -> Option<(usize, bool)> {
        let b = self.bytes;
        loop {
            // Before attribute name.
            let c = *b.get(i)?;
            if is_space(c) {
                i += 1;
                continue;
            }
            match c {
                b'/' => {
                    if *b.get(i + 1)? == b'>' {
                        return Some((i + 2, true));
                    }
                    i += 1;
                    continue;
                }
                b'>' => return Some((i + 1, false)),
                _ => {}
            }
            // Attribute name: the first byte may be `=` (a parse error, kept).
            let name_start = i;
            i += 1;
            loop {
                let c = *b.get(i)?;
                if ends_name(c) || c == b'=' {
                    break;
                }
                i += 1;
            }
            let name = self.slice(name_start, i);
            // After attribute name.
            while is_space(*b.get(i)?) {
                i += 1;
            }
            if *b.get(i)? != b'=' {
                on_attribute(name, &[]);
                continue;
            }
            i += 1;
            // Before attribute value.
            while is_space(*b.get(i)?) {
                i += 1;
            }
            match *b.get(i)? {
                quote @ (b'"' | b'\'') => {
                    let start = i + 1;
                    let n = memchr(quote, self.from(start))?;
                    on_attribute(name, self.slice(start, start + n));
                    i = start + n + 1;
                }
                b'>' => {
                    on_attribute(name, &[]);
                    return Some((i + 1, false));
                }
                _ => {
                    let start = i;
                    loop {
                        let c = *b.get(i)?;
                        if is_space(c) || c == b'>' {
                            break;
                        }
                        i += 1;
                    }
                    on_attribute(name, self.slice(start, i));
                }
            }
        }
    }

    /// Is there an appropriate end tag `</name` + delimiter at `at`?
    fn is_end_tag_for(&self, at: usize, name: &[u8]) -> bool {
        let start = at + 2;
        self.byte(at + 1) == Some(b'/')
            && self
                .slice(start, start + name.len())
                .eq_ignore_ascii_case(name)
            && self.byte(start + name.len()).is_some_and(ends_name)
    }

    /// Raw text or RCDATA content up to `</name`; the end tag itself is then parsed.
    fn raw_text(&mut self, start: usize, name: &[u8], visitor: &mut impl Visitor<'a>) -> usize {
        let finder = memmem::Finder::new(b"</");
        let mut at = start;
        while let Some(n) = finder.find(self.from(at)) {
            let lt = at + n;
            if self.is_end_tag_for(lt, name) {
                visitor.text(self.slice(start, lt));
                return self.end_tag(lt, visitor);
            }
            at = lt + 2;
        }
        visitor.text(self.from(start));
        self.bytes.len()
    }

    /// Script data with its escaped (`<!--`) and double-escaped (`<!--<script>`)
    /// states, in which `</script>` means different things (§13.2.5.15-31).
    fn script_data(&mut self, start: usize, visitor: &mut impl Visitor<'a>) -> usize {
        #[derive(Clone, Copy)]
        enum State {
            Data,
            Escaped,
            DoubleEscaped,
        }
        let mut state = State::Data;
        let mut i = start;
        loop {
            let rest = self.from(i);
            let found = match state {
                State::Data => memchr(b'<', rest),
                State::Escaped | State::DoubleEscaped => memchr2(b'<', b'-', rest),
            };
            let Some(n) = found else {
                visitor.text(self.from(start));
                return self.bytes.len();
            };
            let at = i + n;
            match (state, self.byte(at)) {
                (State::Data, _) => {
                    if self.is_end_tag_for(at, b"script") {
                        visitor.text(self.slice(start, at));
                        return self.end_tag(at, visitor);
                    }
                    if self.from(at + 1).starts_with(b"!--") {
                        // `<!--` leaves the tokenizer in the escaped dash-dash state:
                        // resume at its `--` so that `<!-->` and `<!--->` end it.
                        i = at + 2;
                        state = State::Escaped;
                    } else {
                        i = at + 1;
                    }
                }
                (_, Some(b'-')) => {
                    // `--` followed by `>` leaves both escaped states; more dashes
                    // stay in the dash-dash state.
                    let mut j = at + 1;
                    if self.byte(j) == Some(b'-') {
                        while self.byte(j) == Some(b'-') {
                            j += 1;
                        }
                        if self.byte(j) == Some(b'>') {
                            state = State::Data;
                            j += 1;
                        }
                    }
                    i = j;
                }
                (State::Escaped, _) => {
                    if self.is_end_tag_for(at, b"script") {
                        visitor.text(self.slice(start, at));
                        return self.end_tag(at, visitor);
                    }
                    if self.is_script_word(at + 1) {
                        state = State::DoubleEscaped;
                        i = at + 7;
                    } else {
                        i = at + 1;
                    }
                }
                (State::DoubleEscaped, _) => {
                    if self.byte(at + 1) == Some(b'/') && self.is_script_word(at + 2) {
                        state = State::Escaped;
                        i = at + 8;
                    } else {
                        i = at + 1;
                    }
                }
            }
        }
    }

    /// `script` (any case) at `at` followed by whitespace, `/` or `>`.
    fn is_script_word(&self, at: usize) -> bool {
        self.slice(at, at + 6).eq_ignore_ascii_case(b"script")
            && self.byte(at + 6).is_some_and(ends_name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records `tag attr=value` for interesting tags, and end tags.
    #[derive(Default)]
    struct Record {
        out: Vec<String>,
        current: Option<String>,
    }

    impl<'a> Visitor<'a> for Record {
        fn start_tag(&mut self, name: &'a [u8], class: TagClass) -> bool {
            if class.is_interesting() {
                self.current = Some(String::from_utf8_lossy(name).to_ascii_lowercase());
                true
            } else {
                self.current = None;
                false
            }
        }
        fn attribute(&mut self, name: &'a [u8], value: &'a [u8]) {
            if let Some(cur) = &mut self.current {
                cur.push_str(&format!(
                    " {}={}",
                    String::from_utf8_lossy(name).to_ascii_lowercase(),
                    String::from_utf8_lossy(value)
                ));
            }
        }
        fn start_tag_done(&mut self) -> ControlFlow<()> {
            if let Some(cur) = self.current.take() {
                self.out.push(cur);
            }
            ControlFlow::Continue(())
        }
    }

    fn tags(html: &str) -> Vec<String> {
        let mut r = Record::default();
        scan(html.as_bytes(), &mut r);
        r.out
    }

    #[test]
    fn attribute_syntaxes() {
        assert_eq!(
            tags("<A HREF=x>"),
            ["a href=x"],
            "names are case-insensitive"
        );
        assert_eq!(tags("<a href='x y'>"), ["a href=x y"]);
        assert_eq!(tags("<a href=\"x'y\">"), ["a href=x'y"]);
        assert_eq!(tags("<a href = \n x >"), ["a href=x"]);
        assert_eq!(tags("<a href=x/>"), ["a href=x/"]);
        assert_eq!(tags("<a href=\"x\"/>"), ["a href=x"]);
        assert_eq!(tags("<a/href=x>"), ["a href=x"]);
        assert_eq!(tags("<a href=\"x\"title=y>"), ["a href=x title=y"]);
        assert_eq!(tags("<a =href=x>"), ["a =href=x"]);
        assert_eq!(tags("<a href>"), ["a href="]);
        assert_eq!(tags("<a href=>"), ["a href="]);
        assert_eq!(tags("<a title=\">\" href=x>"), ["a title=> href=x"]);
        assert_eq!(tags("<a href=a\"b>"), ["a href=a\"b"]);
        assert_eq!(tags("<a\thref=x\x0chref=y>"), ["a href=x href=y"]);
    }

    #[test]
    fn tags_cut_by_end_of_file_are_dropped() {
        assert!(tags("<a href=x").is_empty());
        assert!(tags("<a href=\"x>").is_empty());
        assert!(tags("<a href=x /").is_empty());
        assert_eq!(tags("<a href=x><a href=\"y"), ["a href=x"]);
    }

    #[test]
    fn quotes_in_uninteresting_tags() {
        assert_eq!(tags("<div title='>'><a href=x>"), ["a href=x"]);
        assert_eq!(tags("<div a=b\"><a href=x>"), ["a href=x"]);
        assert_eq!(tags("<div \"x\"><a href=y>"), ["a href=y"]);
        assert_eq!(tags("</div title='>'><a href=x>"), ["a href=x"]);
    }

    #[test]
    fn comments_and_declarations() {
        assert!(tags("<!-- <a href=x> -->").is_empty());
        assert_eq!(tags("<!--><a href=x>"), ["a href=x"]);
        assert_eq!(tags("<!---><a href=x>"), ["a href=x"]);
        assert_eq!(tags("<!-- --!><a href=x>"), ["a href=x"]);
        assert!(tags("<!-- -- ><a href=x>").is_empty());
        assert_eq!(tags("<!-- ---><a href=x>"), ["a href=x"]);
        assert_eq!(tags("<!DOCTYPE html PUBLIC \"a>\"<a href=x>"), ["a href=x"]);
        assert_eq!(tags("<?php echo 1 ?><a href=x>"), ["a href=x"]);
        assert_eq!(tags("</ x><a href=x>"), ["a href=x"]);
        assert_eq!(tags("</><a href=x>"), ["a href=x"]);
        assert_eq!(tags("< a href=x><a href=y>"), ["a href=y"]);
        // CDATA is a bogus comment in HTML content ...
        assert_eq!(tags("<![CDATA[ x > <a href=y> ]]>"), ["a href=y"]);
        // ... and a real CDATA section in SVG.
        assert!(tags("<svg><![CDATA[ x > <a href=y> ]]></svg>").is_empty());
    }

    #[test]
    fn raw_text_elements() {
        assert!(tags("<script><a href=x></script>").is_empty());
        assert_eq!(
            tags("<script>'</scriptx>'<a href=x></SCRIPT ><a href=y>"),
            ["a href=y"]
        );
        assert_eq!(tags("<script/><a href=x></script><a href=y>"), ["a href=y"]);
        assert!(tags("<style><a href=x></style>").is_empty());
        assert!(tags("<textarea><a href=x></textarea>").is_empty());
        assert!(tags("<title><a href=x></title>").is_empty());
        assert!(tags("<xmp><a href=x></xmp>").is_empty());
        assert!(tags("<noembed><a href=x></noembed>").is_empty());
        assert!(tags("<noframes><a href=x></noframes>").is_empty());
        assert_eq!(tags("<iframe src=f><a href=x></iframe>"), ["iframe src=f"]);
        assert!(tags("<plaintext></plaintext><a href=x>").is_empty());
        assert_eq!(tags("<noscript><a href=x></noscript>"), ["a href=x"]);
        // In SVG, <style> and <title> are not raw text ...
        assert_eq!(tags("<svg><title><a href=x></title></svg>"), ["a href=x"]);
        assert!(tags("<svg><style><base href=x></style></svg>").is_empty());
        // ... but inside an integration point start tags follow the HTML rules.
        assert!(tags("<svg><title><script><a href=x></title></svg>").is_empty());
        assert_eq!(
            tags("<svg><desc><base href=x></desc></svg>"),
            ["base href=x"]
        );
        assert!(tags("<svg><g><base href=x></g></svg>").is_empty());
        assert!(tags("<math><mi><style><a href=x></style></mi></math>").is_empty());
        assert_eq!(tags("<math><title><style><a href=x></style>"), ["a href=x"]);
        // A breakout tag leaves foreign content.
        assert!(tags("<svg><p><style><a href=x></style>").is_empty());
    }

    #[test]
    fn script_escapes() {
        // `<!--` then `</script>` still ends the script.
        assert_eq!(tags("<script><!-- x </script><a href=y>"), ["a href=y"]);
        // Double-escaped: the inner </script> does not end it ...
        assert_eq!(
            tags("<script><!--<script></script><a href=x>--></script><a href=y>"),
            ["a href=y"]
        );
        // ... but `-->` inside the double escape returns to script data.
        assert_eq!(
            tags("<script><!--<script>--></script><a href=y>"),
            ["a href=y"]
        );
        assert_eq!(tags("<script><!--></script><a href=y>"), ["a href=y"]);
        assert!(tags("<script><<script><a href=x></script>").is_empty());
        assert!(tags("<script><!--x<<script><a href=x></script>").is_empty());
        assert_eq!(
            tags("<script><!---><script></script><a href=y>"),
            ["a href=y"]
        );
    }

    #[test]
    fn html_container_table_is_a_perfect_hash() {
        for (i, name) in HTML_CONTAINERS.iter().enumerate() {
            assert_eq!(html_container(name), Some(i));
            assert_eq!(html_container(&name.to_ascii_uppercase()), Some(i));
        }
        let used = CONTAINER_SLOTS.iter().filter(|&&s| s != u8::MAX).count();
        assert_eq!(used, HTML_CONTAINERS.len());
        for other in [&b"p"[..], b"svg", b"x", b"divs", b"", b"\xc4\xb0"] {
            assert_eq!(html_container(other), None, "{other:?}");
        }
    }

    #[test]
    fn stray_end_tags_in_foreign_content() {
        // The proptest case of issue 11: `</svg>` inside the CDATA section is text,
        // and `</a>` with no HTML `<a>` open is ignored (HTML Standard §13.2.6.5, then
        // the in-body "any other end tag" rule), so `<base>` is still SVG's.
        assert!(tags("<svg><![CDATA[ x > y</svg>]]></a><base href=\"x\">").is_empty());
        assert!(tags("<svg></div><base href=x>").is_empty());
        // With an `<a>` or `<div>` open outside, its end tag closes the foreign content.
        assert_eq!(
            tags("<a href=1><svg></a><base href=x>"),
            ["a href=1", "base href=x"]
        );
        assert_eq!(tags("<DIV><svg></div><base href=x>"), ["base href=x"]);
        // ... once: a second stray `</div>` finds no div open.
        assert!(tags("<div><svg></div><svg></div><base href=x>").is_empty());
        // An SVG `<a>` is not an HTML one: its end tag closes it, not the SVG.
        assert!(tags("<svg><a href=s></a></a><base href=x>") == ["a href=s"]);
    }

    #[test]
    fn image_is_img_only_in_html() {
        assert_eq!(tags("<image src=x>"), ["image src=x"]);
        assert!(tags("<svg><image href=x></svg>").is_empty());
        assert_eq!(tags("<svg><a href=x></a></svg>"), ["a href=x"]);
    }
}
