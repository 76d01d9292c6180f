//! Request-targets as the generator reads them: normalized aliases and strict numbers.

/// Decode `%XX` of unreserved characters and upper-case the hex of the others, so
/// syntactic aliases of a target find the same page (RFC 3986 6.2.2).
#[must_use]
pub fn normalize_target(target: &str) -> String {
    let b = target.as_bytes();
    let mut out = String::with_capacity(b.len());
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if c == b'%' {
            if let Some(hex) = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
            {
                if let Ok(v) = u8::from_str_radix(hex, 16) {
                    if v.is_ascii_alphanumeric() || matches!(v, b'-' | b'.' | b'_' | b'~') {
                        out.push(v as char);
                    } else {
                        out.push('%');
                        out.push_str(&hex.to_ascii_uppercase());
                    }
                    i += 3;
                    continue;
                }
            }
        }
        // Non-ASCII bytes in a target are invalid; keep them percent-encoded.
        if c.is_ascii() {
            out.push(c as char);
        } else {
            out.push_str(&format!("%{c:02X}"));
        }
        i += 1;
    }
    out
}

pub(super) fn parse_u32(s: &str) -> Option<u32> {
    if s.is_empty() || s.len() > 9 || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    if s.len() > 1 && s.starts_with('0') {
        return None;
    }
    s.parse().ok()
}
