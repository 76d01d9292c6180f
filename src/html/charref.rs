//! Character references as the HTML Standard decodes them *inside attribute values*
//! (§13.2.5.72-80): named references (longest match in the full table, legacy names
//! without `;` included), decimal and hexadecimal numeric references with the C1
//! replacement table, and the attribute rule that leaves `&copy=2` alone when a
//! reference without `;` is followed by `=` or an ASCII alphanumeric. U+0000 becomes
//! U+FFFD, as the attribute value states do.

#![deny(clippy::indexing_slicing)]

use std::borrow::Cow;

use super::entities::{LONGEST_NAME_BYTES, NAMED};

/// Decodes the character references of one attribute value (already converted to
/// Unicode). Borrowed when there is nothing to decode.
pub fn decode_attribute(value: &str) -> Cow<'_, str> {
    let bytes = value.as_bytes();
    if memchr::memchr2(b'&', 0, bytes).is_none() {
        return Cow::Borrowed(value);
    }
    let mut out = String::with_capacity(value.len());
    let mut i = 0;
    let mut copied = 0;
    while let Some(n) = memchr::memchr2(b'&', 0, bytes.get(i..).unwrap_or_default()) {
        let at = i + n;
        out.push_str(value.get(copied..at).unwrap_or(""));
        if bytes.get(at) == Some(&0) {
            out.push('\u{fffd}');
            i = at + 1;
            copied = i;
            continue;
        }
        match reference(bytes.get(at + 1..).unwrap_or_default()) {
            Some((first, second, consumed)) => {
                out.push(first);
                if let Some(second) = second {
                    out.push(second);
                }
                i = at + 1 + consumed;
            }
            None => {
                out.push('&');
                i = at + 1;
            }
        }
        copied = i;
    }
    out.push_str(value.get(copied..).unwrap_or(""));
    Cow::Owned(out)
}

/// Decodes the reference after an `&`: the characters and how many bytes after the
/// `&` they consumed, or `None` when the `&` is literal.
fn reference(after: &[u8]) -> Option<(char, Option<char>, usize)> {
    match after.first()? {
        b'#' => numeric(after.get(1..).unwrap_or_default()).map(|(c, n)| (c, None, n + 1)),
        b if b.is_ascii_alphanumeric() => named(after),
        _ => None,
    }
}

/// `&#...`: decimal or `x`/`X` hexadecimal, at least one digit, optional `;`.
fn numeric(after_hash: &[u8]) -> Option<(char, usize)> {
    let (radix, start) = match after_hash.first() {
        Some(b'x' | b'X') => (16, 1),
        _ => (10, 0),
    };
    let digits = after_hash
        .get(start..)
        .unwrap_or_default()
        .iter()
        .take_while(|b| char::from(**b).is_digit(radix))
        .count();
    if digits == 0 {
        return None;
    }
    let mut value: u32 = 0;
    for b in after_hash.get(start..start + digits).unwrap_or_default() {
        let d = char::from(*b).to_digit(radix).unwrap_or(0);
        // Saturate above the Unicode range: the value is then replaced anyway.
        value = value.saturating_mul(radix).saturating_add(d).min(0x11_0000);
    }
    let mut consumed = start + digits;
    if after_hash.get(consumed) == Some(&b';') {
        consumed += 1;
    }
    Some((numeric_value(value), consumed))
}

/// The "numeric character reference end state": zero, surrogates and values beyond
/// U+10FFFF become U+FFFD; 0x80-0x9F are read as windows-1252.
fn numeric_value(value: u32) -> char {
    const C1: [u32; 32] = [
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
        0x2039, 0x0152, 0x8D, 0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013,
        0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
    ];
    let value = match value {
        0x80..=0x9F => C1
            .get(usize::try_from(value - 0x80).unwrap_or(0))
            .copied()
            .unwrap_or(value),
        _ => value,
    };
    match value {
        0 => '\u{fffd}',
        v => char::from_u32(v).unwrap_or('\u{fffd}'),
    }
}

/// A named reference: the longest table name that is a prefix of the input.
fn named(after: &[u8]) -> Option<(char, Option<char>, usize)> {
    let run = after
        .iter()
        .take(LONGEST_NAME_BYTES)
        .take_while(|b| b.is_ascii_alphanumeric())
        .count();
    let with_semicolon = if after.get(run) == Some(&b';') {
        run + 1
    } else {
        run
    };
    for len in (1..=with_semicolon.min(LONGEST_NAME_BYTES)).rev() {
        let candidate = after.get(..len).unwrap_or_default();
        let Ok(index) = NAMED.binary_search_by(|(name, _, _)| name.as_bytes().cmp(candidate))
        else {
            continue;
        };
        let &(_, first, second) = NAMED.get(index)?;
        if candidate.last() != Some(&b';') {
            // Attribute rule: `&copy=2`, `&notit` stay as written.
            if let Some(next) = after.get(len) {
                if *next == b'=' || next.is_ascii_alphanumeric() {
                    return None;
                }
            }
        }
        let first = char::from_u32(first)?;
        let second = if second == 0 {
            None
        } else {
            char::from_u32(second)
        };
        return Some((first, second, len));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        for (input, expected) in [
            ("plain", "plain"),
            ("a&amp;b", "a&b"),
            ("a&ampb", "a&ampb"),
            ("a&amp=b", "a&amp=b"),
            ("a&amp;=b", "a&=b"),
            ("a&amp b", "a& b"),
            ("a&amp", "a&"),
            ("?x=1&copy=2", "?x=1&copy=2"),
            ("?x=1&copy;=2", "?x=1\u{a9}=2"),
            ("&copy.", "\u{a9}."),
            ("&notit;", "&notit;"),
            ("&notin;", "\u{2209}"),
            ("&not-it", "\u{ac}-it"),
            ("&NotANamedReference;", "&NotANamedReference;"),
            ("&lt&gt", "<>"),
            ("&LT;", "<"),
            ("&Lt;", "\u{226a}"),
            ("&NotEqualTilde;", "\u{2242}\u{338}"),
            ("&CounterClockwiseContourIntegral;", "\u{2233}"),
            ("&#65;&#x42;&#X43;&#0068", "ABCD"),
            ("&#x;&#;&#xg", "&#x;&#;&#xg"),
            ("&#0;", "\u{fffd}"),
            ("&#x80;&#x9d;", "\u{20ac}\u{9d}"),
            ("&#xD800;", "\u{fffd}"),
            ("&#x110000;", "\u{fffd}"),
            ("&#99999999999999999999;", "\u{fffd}"),
            ("&#x1F600;", "\u{1f600}"),
            ("&#10;", "\n"),
            ("a\u{0}b", "a\u{fffd}b"),
            ("&", "&"),
            ("&&amp;", "&&"),
            ("&#38;amp;", "&amp;"),
        ] {
            assert_eq!(decode_attribute(input), expected, "{input:?}");
        }
    }

    #[test]
    fn entity_table_matches_html5ever() {
        let theirs = &html5ever::data::NAMED_ENTITIES;
        let mut count = 0;
        for (name, first, second) in NAMED {
            assert_eq!(theirs.get(*name), Some(&(*first, *second)), "{name}");
            count += 1;
        }
        let real = theirs.entries().filter(|(_, v)| v.0 != 0).count();
        assert_eq!(count, real);
        assert_eq!(count, 2231);
        assert!(NAMED
            .windows(2)
            .all(|w| w[0].0.as_bytes() < w[1].0.as_bytes()));
    }
}
