//! The scanner as it was before the block masks (`marks`), kept verbatim as the
//! oracle of the differential tests in `tests.rs`: the new scanner must report the same
//! events on every input.

#![deny(clippy::indexing_slicing)]

use memchr::{memchr, memchr2, memchr3, memmem};

use super::names::{classify, classify_foreign, html_container, is_breakout, HTML_CONTAINERS};
use super::{ends_name, foreign_name, is_space, ForeignName, TagClass, Visitor, MAX_FOREIGN_DEPTH};

/// Scans `bytes` as the old scanner did.
pub(super) fn scan<'a>(bytes: &'a [u8], visitor: &mut impl Visitor<'a>) {
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
