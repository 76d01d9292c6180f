//! The one-pass tag scanner: a hand-written subset of the HTML Standard's tokenizer
//! (§13.2.5) over raw bytes, with no DOM and no allocation. It walks from tag to tag
//! by bit masks of `<` and of `>`/quotes built 64 bytes at a time (`marks`: SSE2 on
//! x86_64), so a tag costs a few bit operations rather than a `memchr` call; comments
//! and raw text, long hops, still use `memchr`/`memmem`.
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

use memchr::{memchr, memchr2, memmem};

mod marks;
mod names;
#[cfg(test)]
mod oracle;

use marks::{Mark, Marks};
pub(crate) use names::TagClass;
use names::{classify, classify_foreign, html_container, is_breakout, HTML_CONTAINERS};

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

/// Scans `bytes` (an ASCII-compatible encoding) and reports to `visitor`.
pub(crate) fn scan<'a>(bytes: &'a [u8], visitor: &mut impl Visitor<'a>) {
    scan_with(Marks::new(bytes), visitor);
}

fn scan_with<'a>(marks: Marks<'a>, visitor: &mut impl Visitor<'a>) {
    let mut scanner = Scanner {
        bytes: marks.bytes(),
        marks,
        foreign: Vec::new(),
        html_open: [0; HTML_CONTAINERS.len()],
        counting: false,
    };
    scanner.run(visitor);
}

struct Scanner<'a> {
    bytes: &'a [u8],
    /// Where the next `<`, `>` or quote is.
    marks: Marks<'a>,
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
    /// Whether `html_open` is kept up to date: only from the first foreign element on,
    /// as it is read only in foreign content (a name lookup per tag cost the scan of a
    /// page without SVG or MathML a sixth of its time); [`Scanner::start_counting`]
    /// catches up.
    counting: bool,
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
            let Some(lt) = self.marks.next(Mark::Lt, pos) else {
                visitor.text(self.from(pos));
                return;
            };
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
        let Some((next, _)) = self.skip_attributes(name_end) else {
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

    /// The counts of open HTML elements as they stand at `lt`, where the first foreign
    /// element starts: the page up to there scanned again, counting (it tokenizes as it
    /// did in this scan: every token before `lt` ended by `lt`, in HTML content, and
    /// the visitor did not stop). At most one extra pass over the page.
    #[cold]
    fn start_counting(&mut self, lt: usize) {
        struct Nobody;
        impl Visitor<'_> for Nobody {
            fn start_tag(&mut self, _: &[u8], _: TagClass) -> bool {
                false
            }
        }
        let prefix = self.slice(0, lt);
        let mut before = Scanner {
            bytes: prefix,
            marks: self.marks.over(prefix),
            foreign: Vec::new(),
            html_open: [0; HTML_CONTAINERS.len()],
            counting: true,
        };
        before.run(&mut Nobody);
        self.html_open = before.html_open;
        self.counting = true;
    }

    /// An HTML start tag: one more open element of its name, if counted.
    #[inline]
    fn html_start(&mut self, name: &[u8]) {
        if !self.counting {
            return;
        }
        if let Some(n) = html_container(name).and_then(|i| self.html_open.get_mut(i)) {
            *n = n.saturating_add(1);
        }
    }

    /// An end tag handled by the HTML rules: one fewer open element of its name.
    #[inline]
    fn html_end(&mut self, name: &[u8]) {
        if !self.counting {
            return;
        }
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
                if !self.counting {
                    self.start_counting(lt);
                }
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

    /// Skips the attributes of a tag nobody wants (and of every end tag): when no
    /// quote occurs before the next `>`, that `>` ends the tag; otherwise the full
    /// attribute grammar runs.
    #[inline]
    fn skip_attributes(&mut self, from: usize) -> Option<(usize, bool)> {
        // `<p>`, `</p>`: the name ends at the `>`.
        if self.byte(from) == Some(b'>') {
            return Some((from + 1, false));
        }
        let n = self.marks.next(Mark::Stop, from)?;
        // `/>` needs the grammar: `<svg width=1/>` is not self-closing.
        if self.byte(n) == Some(b'>') && (n == from || self.byte(n - 1) != Some(b'/')) {
            return Some((n + 1, false));
        }
        self.attributes(from, &mut |_, _| {})
    }

    /// The attribute states of the tokenizer (§13.2.5.32-42) from just after the tag
    /// name. Calls `on_attribute(name, raw value)` for each attribute; returns the
    /// position after `>` and the self-closing flag, or `None` at end of file (the
    /// tokenizer then drops the tag).
    fn attributes(
        &mut self,
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
                    let end = self.marks.next_stop_byte(quote, start)?;
                    on_attribute(name, self.slice(start, end));
                    i = end + 1;
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
mod tests;
