//! Path patterns of `allow`/`disallow` rules, their percent-encoding normalization, and
//! a wildcard matcher that stays linear on hostile input.
//!
//! RFC 9309 §2.2.3 gives two special characters: `*` matches any sequence of octets and
//! a `$` at the end of a pattern anchors it to the end of the path. Everything else is
//! a literal prefix match (§2.2.2). A backtracking glob matcher is exponential on
//! patterns like `/*a*a*a*a*b`, and robots.txt is attacker-controlled input, so this
//! matcher splits a pattern at its stars into literal segments and places each segment
//! at its *leftmost* occurrence after the previous one (memchr's `memmem`, linear in
//! the haystack). For globs whose only metacharacter is `*`, leftmost placement is
//! optimal: any later placement of a segment leaves strictly less room for the rest, so
//! if a match exists the greedy one finds it. The anchored last segment is the one
//! exception: it must sit at the very end, so it is checked as a suffix.
//!
//! Cost: every byte of the path is scanned at most once per segment boundary, so a
//! match is `O(path + pattern)` — no state explosion, no backtracking.

#![deny(clippy::indexing_slicing)]

use std::borrow::Cow;

use memchr::memmem;

use crate::ascii::{hex_value, percent_escape};

/// Needles up to this long are searched with `memchr` on their first byte and a
/// direct comparison: no searcher setup, and at most `SHORT_NEEDLE_BYTES` compares per
/// haystack byte, so the search stays linear. Longer needles use memchr's Two-Way
/// `memmem`, linear for any needle.
const SHORT_NEEDLE_BYTES: usize = 16;

/// Leftmost occurrence of `needle` in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let Some((&first, rest)) = needle.split_first() else {
        return Some(0);
    };
    if needle.len() > SHORT_NEEDLE_BYTES {
        return memmem::find(hay, needle);
    }
    let mut from = 0;
    while let Some(at) = hay.get(from..).and_then(|h| memchr::memchr(first, h)) {
        let start = from + at;
        if hay.get(start + 1..start + needle.len()) == Some(rest) {
            return Some(start);
        }
        from = start + 1;
    }
    None
}

/// Whether `b` is an RFC 3986 *unreserved* character, whose percent-encoded and raw
/// forms are equivalent (RFC 3986 §2.3), so `%7E` and `~` compare equal.
fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// Whether a raw byte cannot appear unencoded in a URL path or query and is therefore
/// percent-encoded before comparison: controls, space, non-ASCII (so a raw UTF-8 `é`
/// in a robots.txt compares equal to `%C3%A9` in a URL) and the ASCII characters that
/// URL parsers always escape. Reserved characters (`/ ? ; = & * $ ...`) are kept raw:
/// their encoded and raw forms are *not* equivalent.
fn needs_encoding(b: u8) -> bool {
    b <= 0x20
        || b >= 0x7F
        || matches!(
            b,
            b'"' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'{' | b'|' | b'}'
        )
}

fn push_encoded(out: &mut Vec<u8>, b: u8) {
    out.extend_from_slice(&percent_escape(b));
}

/// Which side of a comparison a string is on. They differ in one point (RFC 9309
/// §2.2.3): in a pattern `*` and `$` are metacharacters, so a URL's literal `*` or `$`
/// is compared in its encoded form (`%2A`, `%24`), which is how a pattern names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// A rule's pattern: `*` and `$` pass through.
    Pattern,
    /// The path of a URL being checked (or a literal 1996-style pattern).
    Target,
}

/// Whether `input` is already in normal form, so the hot path can skip allocating.
fn is_normal(input: &[u8], side: Side) -> bool {
    let body = match (side, input.split_last()) {
        (Side::Pattern, Some((b'$', body))) => body,
        _ => input,
    };
    body.iter()
        .all(|&b| b != b'%' && b != b'$' && !needs_encoding(b))
        && (side == Side::Pattern || memchr::memchr(b'*', input).is_none())
}

/// Reserved characters that RFC 9309's own percent-encoding table (§2.2.2) treats
/// as equal to their encoded form inside the query: `/foo/bar?baz=https://foo.bar`
/// matches `/foo/bar?baz=https%3A%2F%2Ffoo.bar`. These four have no delimiter role
/// in a query (RFC 3986 §3.4); `& = + ;` do and stay distinct.
fn is_query_plain(b: u8) -> bool {
    matches!(b, b':' | b'/' | b'?' | b'@')
}

/// Normalizes the percent-encoding of a URL path (or rule pattern) so that
/// equivalent spellings compare equal byte for byte:
///
/// - `%XX` naming an unreserved character is decoded (`%7E` -> `~`, `%41` -> `A`);
/// - any other `%XX` is kept, with upper-case hex (`%2f` -> `%2F`, which stays
///   distinct from `/` in the path, as RFC 9309 §2.2.2 and the 1996 draft require);
///   in the query (after the first raw `?`) `%3A %2F %3F %40` are decoded, following
///   the RFC's example table;
/// - a `%` not followed by two hex digits is itself encoded as `%25`;
/// - raw bytes that cannot appear in a URL (non-ASCII UTF-8, controls, space, ...) are
///   percent-encoded with upper-case hex;
/// - on the [`Side::Target`] side, raw `*` and `$` are encoded as `%2A` and `%24`;
///   in a pattern, a `$` that is not the last byte is encoded too.
///
/// The result only has to be canonical, not pretty.
pub fn normalize(input: &[u8], side: Side) -> Cow<'_, [u8]> {
    if is_normal(input, side) {
        return Cow::Borrowed(input);
    }
    let mut out = Vec::with_capacity(input.len() + 8);
    let mut in_query = false;
    let mut i = 0;
    while let Some(&b) = input.get(i) {
        if b == b'%' {
            let hi = input.get(i + 1).copied().and_then(hex_value);
            let lo = input.get(i + 2).copied().and_then(hex_value);
            if let (Some(hi), Some(lo)) = (hi, lo) {
                let decoded = (hi << 4) | lo;
                if is_unreserved(decoded) || (in_query && is_query_plain(decoded)) {
                    out.push(decoded);
                } else {
                    push_encoded(&mut out, decoded);
                }
                i += 3;
                continue;
            }
            push_encoded(&mut out, b'%');
        } else if needs_encoding(b)
            || (side == Side::Target && (b == b'*' || b == b'$'))
            // Only a final `$` anchors; elsewhere it is a literal (as in Google's
            // parser), compared like a URL's `$`.
            || (b == b'$' && i + 1 != input.len())
        {
            push_encoded(&mut out, b);
        } else {
            in_query |= b == b'?';
            out.push(b);
        }
        i += 1;
    }
    Cow::Owned(out)
}

/// How a pattern's metacharacters are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// RFC 9309: `*` is a wildcard, a final `$` anchors the end.
    Wildcards,
    /// The 1994/1996 conventions: every character is literal, a pattern is a prefix.
    Literal,
}

/// A compiled, normalized path pattern.
///
/// Shape: `prefix (* segment)* [$]`. The prefix must match at offset 0, each later
/// segment is placed leftmost after the previous one, and with `$` the last segment
/// must end exactly at the end of the path.
#[derive(Clone, Debug)]
pub struct Pattern {
    /// The normalized pattern text, stars and `$` included (its length is the rule's
    /// priority, RFC 9309 §2.2.2 "most octets").
    text: Box<[u8]>,
    /// What only patterns with a `*` need, boxed apart: most rules of a large
    /// robots.txt are plain prefixes, and a cache of a million hosts' rules is mostly
    /// these structs, so the common case stays 32 bytes (the boxed part alone is 48).
    wild: Option<Box<Wildcards>>,
    /// Bytes that must start the path.
    prefix_len: u32,
    /// Whether the pattern ended in `$`.
    anchored: bool,
}

/// The star-related part of a [`Pattern`].
#[derive(Clone, Debug)]
struct Wildcards {
    /// Literal segments after each `*`, as byte ranges of the pattern text: plain
    /// offsets keep a compiled rule small, and searching needs no prepared state.
    segments: Box<[(u32, u32)]>,
    /// The set of bytes the segments after the prefix contain: a path lacking any of
    /// them cannot match, which rejects most wildcard rules without a search.
    needs: ByteSet,
}

/// A set of ASCII bytes as a 128-bit mask. Normalized text is all ASCII.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ByteSet(u128);

impl ByteSet {
    /// The set of ASCII bytes in `bytes` (others are ignored).
    pub fn of(bytes: &[u8]) -> ByteSet {
        ByteSet(
            bytes
                .iter()
                .filter(|b| b.is_ascii())
                .fold(0u128, |m, &b| m | (1u128 << b)),
        )
    }

    /// Takes `byte` out of the set.
    pub fn remove(&mut self, byte: u8) {
        if byte.is_ascii() {
            self.0 &= !(1u128 << byte);
        }
    }

    /// Whether every byte of `self` is in `other`.
    pub fn is_subset(self, other: ByteSet) -> bool {
        self.0 & !other.0 == 0
    }
}

impl Pattern {
    /// Compiles a rule value (already trimmed of whitespace and comments).
    pub fn new(raw: &[u8], syntax: Syntax) -> Self {
        let side = match syntax {
            Syntax::Wildcards => Side::Pattern,
            Syntax::Literal => Side::Target,
        };
        let text: Box<[u8]> = normalize(raw, side).into_owned().into_boxed_slice();
        match syntax {
            Syntax::Literal => Pattern {
                prefix_len: u32::try_from(text.len()).unwrap_or(u32::MAX),
                text,
                wild: None,
                anchored: false,
            },
            Syntax::Wildcards => {
                let (body, anchored) = match text.split_last() {
                    Some((b'$', body)) => (body, true),
                    _ => (&text[..], false),
                };
                // Star positions split the body into the prefix and the segments.
                let stars: Vec<usize> = memchr::memchr_iter(b'*', body).collect();
                let prefix_len = stars.first().copied().unwrap_or(body.len());
                let offset = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
                let mut segments = Vec::with_capacity(stars.len());
                for (k, &star) in stars.iter().enumerate() {
                    let end = stars.get(k + 1).copied().unwrap_or(body.len());
                    let is_last = k + 1 == stars.len();
                    // Consecutive stars give empty middle segments, which match
                    // anywhere and are dropped; the last one is kept (it may carry
                    // the `$` anchor, and `/a*` must still need nothing more).
                    if end > star + 1 || is_last {
                        segments.push((offset(star + 1), offset(end)));
                    }
                }
                let wild = (!segments.is_empty()).then(|| {
                    let mut needs = ByteSet::of(body.get(prefix_len..).unwrap_or_default());
                    needs.remove(b'*');
                    Box::new(Wildcards {
                        segments: segments.into_boxed_slice(),
                        needs,
                    })
                });
                Pattern {
                    prefix_len: offset(prefix_len),
                    wild,
                    anchored,
                    text,
                }
            }
        }
    }

    /// The normalized pattern text.
    pub fn as_bytes(&self) -> &[u8] {
        &self.text
    }

    /// Length in octets of the normalized pattern: the rule's priority.
    pub fn len(&self) -> usize {
        self.text.len()
    }

    /// Whether the pattern is empty (an empty `disallow` value, which matches nothing
    /// under RFC 9309 and is never compiled into a rule).
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The literal bytes every matching path starts with.
    pub fn literal_prefix(&self) -> &[u8] {
        self.text
            .get(..self.prefix_len as usize)
            .unwrap_or_default()
    }

    /// Approximate heap bytes held, for the byte-bounded cache.
    pub fn heap_bytes(&self) -> usize {
        self.text.len()
            + self.wild.as_ref().map_or(0, |w| {
                std::mem::size_of::<Wildcards>()
                    + w.segments.len() * std::mem::size_of::<(u32, u32)>()
            })
    }

    fn segment(&self, range: (u32, u32)) -> &[u8] {
        self.text
            .get(range.0 as usize..range.1 as usize)
            .unwrap_or_default()
    }

    /// Whether the pattern matches `path`, which must already be normalized.
    pub fn matches(&self, path: &[u8]) -> bool {
        self.matches_counting(path, &mut 0)
    }

    /// [`Pattern::matches`] with the precomputed [`ByteSet`] of `path`, which lets a
    /// rule set reject wildcard rules whose segments use bytes the path lacks.
    pub fn matches_with(&self, path: &[u8], path_bytes: ByteSet) -> bool {
        self.wild
            .as_ref()
            .is_none_or(|w| w.needs.is_subset(path_bytes))
            && self.matches_counting(path, &mut 0)
    }

    /// [`Pattern::matches`], adding to `scanned` the number of path bytes handed to
    /// substring searches. Tests use it to show that matching is linear: the total is
    /// bounded by `path.len() * 2 + pattern.len()` whatever the pattern.
    pub fn matches_counting(&self, path: &[u8], scanned: &mut usize) -> bool {
        if !path.starts_with(self.literal_prefix()) {
            return false;
        }
        let mut pos = self.prefix_len as usize;
        let segments = self.wild.as_ref().map_or(&[][..], |w| &w.segments[..]);
        let Some((last, middle)) = segments.split_last() else {
            return !self.anchored || path.len() == pos;
        };
        for &range in middle {
            let seg = self.segment(range);
            let hay = path.get(pos..).unwrap_or_default();
            match find(hay, seg) {
                Some(at) => {
                    *scanned += at + seg.len();
                    pos += at + seg.len();
                }
                None => {
                    *scanned += hay.len();
                    return false;
                }
            }
        }
        let tail = self.segment(*last);
        if self.anchored {
            // The last segment must end the path and must not overlap what the
            // earlier segments consumed.
            *scanned += tail.len();
            path.len() >= pos + tail.len() && path.ends_with(tail)
        } else {
            let hay = path.get(pos..).unwrap_or_default();
            *scanned += hay.len();
            find(hay, tail).is_some()
        }
    }
}

/// A deliberately naive reference matcher: plain recursive backtracking over the raw
/// pattern, exponential in the worst case but obviously right. Property tests and the
/// fuzz target check [`Pattern::matches`] against it. Both inputs must be normalized.
#[doc(hidden)]
pub fn naive_matches(pattern: &[u8], path: &[u8]) -> bool {
    fn go(p: &[u8], s: &[u8]) -> bool {
        match p.split_first() {
            None => true, // pattern exhausted: a prefix match
            Some((b'$', [])) => s.is_empty(),
            Some((b'*', rest)) => (0..=s.len()).any(|k| go(rest, s.get(k..).unwrap_or_default())),
            Some((c, rest)) => match s.split_first() {
                Some((d, s_rest)) if c == d => go(rest, s_rest),
                _ => false,
            },
        }
    }
    go(pattern, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, path: &str) -> bool {
        let p = Pattern::new(pattern.as_bytes(), Syntax::Wildcards);
        p.matches(&normalize(path.as_bytes(), Side::Target))
    }

    #[test]
    fn normalization_table() {
        let cases: &[(&str, &str)] = &[
            ("/a%7eb", "/a~b"),
            ("/%41%42", "/AB"),
            ("/a%2fb", "/a%2Fb"),
            ("/a%2Fb", "/a%2Fb"),
            ("/%e2%82%ac", "/%E2%82%AC"),
            ("/€", "/%E2%82%AC"),
            ("/a b", "/a%20b"),
            ("/100%", "/100%25"),
            ("/%zz", "/%25zz"),
            ("/%3F", "/%3F"),
            ("/*$", "/*$"),
            ("/q?u=https%3a%2f%2fx", "/q?u=https://x"),
            ("/a%2Fb?c%2Fd", "/a%2Fb?c/d"),
            ("/a?b=%26%3d", "/a?b=%26%3D"),
            ("/plain/path?q=1", "/plain/path?q=1"),
        ];
        for (input, want) in cases {
            assert_eq!(
                normalize(input.as_bytes(), Side::Pattern).as_ref(),
                want.as_bytes(),
                "normalize({input:?})"
            );
        }
    }

    #[test]
    fn wildcard_table() {
        let cases: &[(&str, &str, bool)] = &[
            ("/", "/anything", true),
            ("/fish", "/fish.html", true),
            ("/fish", "/Fish", false),
            ("/fish*", "/fishheads/yummy", true),
            ("/*.php", "/index.php", true),
            ("/*.php", "/filename.php/", true),
            ("/*.php", "/windows.PHP", false),
            ("/*.php$", "/filename.php", true),
            ("/*.php$", "/filename.php?x", false),
            ("/*.php$", "/filename.php/", false),
            ("/fish*.php", "/fish.php", true),
            ("/fish*.php", "/fishheads/catfish.php?p", true),
            ("/fish*.php", "/Fish.PHP", false),
            ("/a$", "/a", true),
            ("/a$", "/ab", false),
            ("/a*$", "/abc", true),
            ("*", "/x", true),
            ("/a$b", "/a$b/c", true),
            ("/a$b", "/a%24b/c", true),
            ("/a%24b", "/a$b/c", true),
            ("/file-%2A.html", "/file-*.html", true),
            ("/ab*b$", "/ab", false),
            ("/ab*b$", "/abb", true),
            ("/a**b", "/axxb", true),
            ("/a*b*c", "/abxc", true),
            ("/a*b*c", "/acb", false),
        ];
        for (pattern, path, want) in cases {
            assert_eq!(m(pattern, path), *want, "{pattern:?} vs {path:?}");
            assert_eq!(
                naive_matches(
                    Pattern::new(pattern.as_bytes(), Syntax::Wildcards).as_bytes(),
                    &normalize(path.as_bytes(), Side::Target)
                ),
                *want,
                "naive {pattern:?} vs {path:?}"
            );
        }
    }

    #[test]
    fn literal_syntax_treats_metacharacters_as_text() {
        let p = Pattern::new(b"/tmp/*", Syntax::Literal);
        assert!(p.matches(&normalize(b"/tmp/*x", Side::Target)));
        assert!(!p.matches(b"/tmp/x"));
    }
}
