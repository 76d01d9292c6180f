//! The little HTTP/1.1 knowledge the WARC writer needs (RFC 9112): find a header in a
//! response head, tell whether the body is chunked, rename the `Transfer-Encoding`
//! field, and remove chunked framing from a body that may have been cut short.
//!
//! These functions read bytes that came from the network, so they never index out of
//! bounds and never fail: a malformed chunked body yields what could be decoded and
//! `complete: false`.

#![deny(clippy::indexing_slicing)]

use crate::ascii::trim_ows;

/// The field name a `Transfer-Encoding` header is renamed to when the writer stores a
/// de-chunked body (see `docs/warc.md`, "Payload digest and transfer coding").
pub const RENAMED_TRANSFER_ENCODING: &[u8] = b"X-Trawl-Transfer-Encoding";

/// The lines of a head, each with its line end, up to and excluding the empty line.
fn header_lines(head: &[u8]) -> impl Iterator<Item = &[u8]> {
    head.split_inclusive(|&b| b == b'\n')
        .skip(1)
        .take_while(|line| !matches!(trim_line_end(line), []))
}

fn trim_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Splits `Name: value` into the name and the trimmed value.
fn split_field(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let line = trim_line_end(line);
    let colon = line.iter().position(|&b| b == b':')?;
    let (name, rest) = line.split_at(colon);
    Some((name, trim_ows(rest.get(1..).unwrap_or_default())))
}

/// The values of every field called `name` (case-insensitive), in order.
pub fn header_values<'h>(head: &'h [u8], name: &'h [u8]) -> impl Iterator<Item = &'h [u8]> {
    header_lines(head).filter_map(move |line| {
        let (field, value) = split_field(line)?;
        field.eq_ignore_ascii_case(name).then_some(value)
    })
}

/// The first value of the field `name`, if any.
pub fn header_value<'h>(head: &'h [u8], name: &'h [u8]) -> Option<&'h [u8]> {
    header_values(head, name).next()
}

/// Whether the body is chunked: the last transfer coding named (over all
/// `Transfer-Encoding` fields) is `chunked` (RFC 9112 section 6.3).
pub fn is_chunked(head: &[u8]) -> bool {
    let last = header_values(head, b"transfer-encoding")
        .flat_map(|value| value.split(|&b| b == b','))
        .map(trim_ows)
        .filter(|coding| !coding.is_empty())
        .last();
    last.is_some_and(|coding| coding.eq_ignore_ascii_case(b"chunked"))
}

/// Whether the body has a content coding that compresses (`gzip`, `br`, `deflate`,
/// `zstd`, `compress`...): any `Content-Encoding` value other than `identity`. Such a
/// body does not shrink under deflate again; the writer stores it (gzip level 0).
pub fn has_content_coding(head: &[u8]) -> bool {
    header_values(head, b"content-encoding")
        .flat_map(|value| value.split(|&b| b == b','))
        .map(trim_ows)
        .any(|coding| !coding.is_empty() && !coding.eq_ignore_ascii_case(b"identity"))
}

/// The status code of a response head: the three digits after `HTTP/x.y ` on its
/// first line (RFC 9112 section 4), `None` if the line does not read that way.
pub fn status_code(head: &[u8]) -> Option<u16> {
    let line = trim_line_end(head.split(|&b| b == b'\n').next()?);
    let rest = line.strip_prefix(b"HTTP/")?;
    let space = rest.iter().position(|&b| b == b' ')?;
    let code = rest.get(space + 1..)?;
    match code {
        [a @ b'1'..=b'9', b @ b'0'..=b'9', c @ b'0'..=b'9']
        | [a @ b'1'..=b'9', b @ b'0'..=b'9', c @ b'0'..=b'9', b' ', ..] => {
            Some(u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0'))
        }
        _ => None,
    }
}

/// Whether the head has any `Transfer-Encoding` field.
pub fn has_transfer_encoding(head: &[u8]) -> bool {
    header_value(head, b"transfer-encoding").is_some()
}

/// The head with every `Transfer-Encoding` field renamed to
/// [`RENAMED_TRANSFER_ENCODING`], values and everything else untouched, so that the
/// stored message reads as a body delimited by the end of the record while the original
/// coding stays on record.
pub fn rename_transfer_encoding(head: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(head.len() + 8);
    let mut in_headers = false;
    let mut done = false;
    for line in head.split_inclusive(|&b| b == b'\n') {
        if !in_headers || done {
            out.extend_from_slice(line);
            in_headers = true;
            continue;
        }
        if trim_line_end(line).is_empty() {
            done = true;
            out.extend_from_slice(line);
            continue;
        }
        match split_field(line) {
            Some((name, _)) if name.eq_ignore_ascii_case(b"transfer-encoding") => {
                out.extend_from_slice(RENAMED_TRANSFER_ENCODING);
                out.extend_from_slice(line.get(name.len()..).unwrap_or_default());
            }
            _ => out.extend_from_slice(line),
        }
    }
    out
}

/// The result of removing chunked framing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dechunked {
    /// The data of every chunk decoded (all of it, or as much as `max_bytes` allowed).
    pub payload: Vec<u8>,
    /// True when the last chunk (size 0) was seen; trailer fields are not kept.
    pub complete: bool,
}

/// Removes chunked framing (RFC 9112 section 7.1) from `body`, keeping at most
/// `max_bytes` of data. Lenient where it is harmless (bare LF line ends, chunk
/// extensions, a missing CRLF after the last chunk) and never fails: on malformed or
/// cut-off input it returns the data decoded so far with `complete: false`.
pub fn dechunk(body: &[u8], max_bytes: usize) -> Dechunked {
    let mut payload = Vec::with_capacity(body.len().min(max_bytes));
    let mut rest = body;
    loop {
        let Some(line_end) = rest.iter().position(|&b| b == b'\n') else {
            return Dechunked {
                payload,
                complete: false,
            };
        };
        let (line, after) = rest.split_at(line_end);
        let after = after.get(1..).unwrap_or_default();
        let size_text = line.split(|&b| b == b';').next().unwrap_or_default();
        let Some(size) = parse_hex(trim_ows(trim_line_end(size_text))) else {
            return Dechunked {
                payload,
                complete: false,
            };
        };
        if size == 0 {
            return Dechunked {
                payload,
                complete: true,
            };
        }
        let available = after.len().min(size);
        let (data, tail) = after.split_at(available);
        let room = max_bytes.saturating_sub(payload.len());
        payload.extend_from_slice(data.get(..room.min(data.len())).unwrap_or_default());
        if available < size || room < data.len() {
            return Dechunked {
                payload,
                complete: false,
            };
        }
        rest = tail
            .strip_prefix(b"\r\n")
            .or_else(|| tail.strip_prefix(b"\n"))
            .unwrap_or(tail);
    }
}

fn parse_hex(text: &[u8]) -> Option<usize> {
    if text.is_empty() || text.len() > 15 {
        return None;
    }
    text.iter().try_fold(0usize, |acc, &b| {
        let digit = char::from(b).to_digit(16)?;
        acc.checked_mul(16)?.checked_add(digit as usize)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_codes() {
        assert_eq!(status_code(b"HTTP/1.1 200 OK\r\nA: b\r\n\r\n"), Some(200));
        assert_eq!(status_code(b"HTTP/1.0 404\r\n\r\n"), Some(404));
        assert_eq!(status_code(b"HTTP/1.1 206 Partial Content\n\n"), Some(206));
        assert_eq!(status_code(b"HTTP/1.1 20 OK\r\n"), None);
        assert_eq!(status_code(b"HTTP/1.1 2000 OK\r\n"), None);
        assert_eq!(status_code(b"HTTP/1.1 099 OK\r\n"), None);
        assert_eq!(status_code(b"ICY 200 OK\r\n"), None);
        assert_eq!(status_code(b""), None);
    }

    const HEAD: &[u8] = b"HTTP/1.1 200 OK\r\n\
        Content-Type: text/html\r\n\
        transfer-encoding:  gzip , Chunked \r\n\
        X-Other: a\r\n\r\n";

    #[test]
    fn finds_headers_case_insensitively() {
        assert_eq!(header_value(HEAD, b"content-type"), Some(&b"text/html"[..]));
        assert_eq!(header_value(HEAD, b"X-OTHER"), Some(&b"a"[..]));
        assert_eq!(header_value(HEAD, b"missing"), None);
        // The status line is never a field, even if it holds a colon.
        assert_eq!(
            header_value(b"HTTP/1.1 200 a:b\r\n\r\n", b"HTTP/1.1 200 a"),
            None
        );
    }

    #[test]
    fn content_coding_other_than_identity() {
        assert!(has_content_coding(
            b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\n\r\n"
        ));
        assert!(has_content_coding(
            b"HTTP/1.1 200 OK\r\ncontent-encoding: identity, GZIP\r\n\r\n"
        ));
        assert!(!has_content_coding(
            b"HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\n\r\n"
        ));
        assert!(!has_content_coding(
            b"HTTP/1.1 200 OK\r\nContent-Type: x\r\n\r\n"
        ));
    }

    #[test]
    fn chunked_only_when_last_coding() {
        assert!(is_chunked(HEAD));
        assert!(is_chunked(
            b"HTTP/1.1 200 OK\nTransfer-Encoding: gzip\nTransfer-Encoding: chunked\n\n"
        ));
        assert!(!is_chunked(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"
        ));
        assert!(!is_chunked(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n"));
        assert!(!is_chunked(b""));
    }

    #[test]
    fn rename_touches_only_the_field_name() {
        let renamed = rename_transfer_encoding(HEAD);
        assert_eq!(
            renamed,
            b"HTTP/1.1 200 OK\r\n\
              Content-Type: text/html\r\n\
              X-Trawl-Transfer-Encoding:  gzip , Chunked \r\n\
              X-Other: a\r\n\r\n"
        );
        assert!(!has_transfer_encoding(&renamed));
        let plain = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        assert_eq!(rename_transfer_encoding(plain), plain);
    }

    #[test]
    fn dechunks_well_formed_and_lenient_bodies() {
        let table: &[(&[u8], &[u8], bool)] = &[
            (
                b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
                b"hello world",
                true,
            ),
            (
                b"5;ext=1\r\nhello\r\n0\r\nTrailer: x\r\n\r\n",
                b"hello",
                true,
            ),
            (b"A\nabcdefghij\n0\n\n", b"abcdefghij", true),
            (b"5\r\nhel", b"hel", false),
            (b"5\r\nhello\r\n", b"hello", false),
            (b"zz\r\nhello\r\n0\r\n\r\n", b"", false),
            (b"", b"", false),
            (b"ffffffffffffffffffff\r\nx", b"", false),
        ];
        for (body, payload, complete) in table {
            let out = dechunk(body, usize::MAX);
            assert_eq!(out.payload, *payload, "body {body:?}");
            assert_eq!(out.complete, *complete, "body {body:?}");
        }
    }

    #[test]
    fn dechunk_respects_the_cap() {
        let out = dechunk(b"5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n", 7);
        assert_eq!(out.payload, b"hellowo");
        assert!(!out.complete);
        let exact = dechunk(b"5\r\nhello\r\n0\r\n\r\n", 5);
        assert_eq!(exact.payload, b"hello");
        assert!(exact.complete);
    }
}
