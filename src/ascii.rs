//! Byte-level helpers of the text protocols trawl reads and writes: optional
//! whitespace (RFC 9110 §5.6.3), hex digits and percent-encoding (RFC 3986 §2.1).
//!
//! One copy for the HTTP reader, the WARC HTTP helpers, URL canonicalization and the
//! robots.txt matcher, which each had their own; a fix to one (say, what counts as
//! whitespace) must reach all of them.

// Every file below reads bytes from the network or the disk: no slice indexing and no
// panics (STYLE.md §5). Tests are exempt through clippy.toml.
#![deny(clippy::indexing_slicing, clippy::expect_used, clippy::panic)]

/// Strips optional whitespace (SP, HTAB) from both ends of a field value.
pub(crate) fn trim_ows(mut value: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = value {
        value = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = value {
        value = rest;
    }
    value
}

/// The value of an ASCII hex digit, either case.
pub(crate) const fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// `b` percent-encoded with upper-case hex digits, the form RFC 3986 §2.1 says URI
/// producers should use (`%2F`, not `%2f`).
pub(crate) fn percent_escape(b: u8) -> [u8; 3] {
    let digit = |nibble: u8| HEX_UPPER.get(usize::from(nibble)).copied().unwrap_or(b'0');
    [b'%', digit(b >> 4), digit(b & 0x0f)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_ows_strips_spaces_and_tabs_only() {
        let cases: &[(&[u8], &[u8])] = &[
            (b"", b""),
            (b" \t ", b""),
            (b"gzip", b"gzip"),
            (b" \tgzip , br\t ", b"gzip , br"),
            (b"\r\nx\r\n", b"\r\nx\r\n"),
            (b"a b", b"a b"),
        ];
        for &(input, want) in cases {
            assert_eq!(
                trim_ows(input),
                want,
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn hex_value_agrees_with_from_str_radix_on_every_byte() {
        for b in 0..=u8::MAX {
            let want = char::from(b)
                .to_digit(16)
                .and_then(|d| u8::try_from(d).ok());
            assert_eq!(hex_value(b), want, "byte {b:#04x}");
        }
    }

    #[test]
    fn percent_escape_round_trips_every_byte_in_upper_case() {
        for b in 0..=u8::MAX {
            let [pct, hi, lo] = percent_escape(b);
            assert_eq!(pct, b'%');
            assert!(!hi.is_ascii_lowercase() && !lo.is_ascii_lowercase());
            let value = hex_value(hi).zip(hex_value(lo)).map(|(h, l)| h << 4 | l);
            assert_eq!(value, Some(b));
        }
    }
}
