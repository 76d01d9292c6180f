//! What `<meta>` elements tell a crawler: robots directives, the refresh target and
//! the declared character encoding. Each parser follows its standard text (the HTML
//! Standard's "shared declarative refresh steps" and "extracting a character encoding
//! from a meta element"; the robots META conventions) and takes decoded values.

#![deny(clippy::indexing_slicing)]

use encoding_rs::Encoding;

/// Robots directives of a page, from `<meta name="robots">` and
/// `<meta name="trawl">`. Every flag starts `true`; a restrictive directive anywhere
/// turns it off and nothing turns it back on, so contradictions resolve to the more
/// restrictive reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RobotsMeta {
    /// `false` after `noindex` or `none`: do not keep the page.
    pub index: bool,
    /// `false` after `nofollow` or `none`: do not follow the page's links.
    pub follow: bool,
    /// `false` after `noarchive`: do not serve a cached copy.
    pub archive: bool,
}

impl Default for RobotsMeta {
    fn default() -> Self {
        RobotsMeta {
            index: true,
            follow: true,
            archive: true,
        }
    }
}

impl RobotsMeta {
    /// Applies one `content` value: comma- (or space-) separated, case-insensitive
    /// tokens. `index`, `follow`, `all` and `archive` are the defaults and cannot undo a
    /// restriction; unknown tokens are ignored.
    pub fn apply(&mut self, content: &str) {
        for token in content
            .split(|c: char| c == ',' || c.is_ascii_whitespace())
            .filter(|t| !t.is_empty())
        {
            let is = |name: &str| token.eq_ignore_ascii_case(name);
            if is("noindex") {
                self.index = false;
            } else if is("nofollow") {
                self.follow = false;
            } else if is("none") {
                self.index = false;
                self.follow = false;
            } else if is("noarchive") {
                self.archive = false;
            }
        }
    }
}

fn skip_space(s: &[u8], mut i: usize) -> usize {
    while s.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The URL part of a `<meta http-equiv="refresh" content="...">` value, per the
/// HTML Standard's shared declarative refresh steps: `None` when the content is
/// malformed or names no URL (a refresh of the page itself).
pub fn refresh_url(content: &str) -> Option<&str> {
    let s = content.as_bytes();
    let mut i = skip_space(s, 0);
    let digits = s
        .get(i..)
        .unwrap_or_default()
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if digits == 0 && s.get(i) != Some(&b'.') {
        return None;
    }
    i += digits;
    while s.get(i).is_some_and(|b| b.is_ascii_digit() || *b == b'.') {
        i += 1;
    }
    match s.get(i) {
        None => return None,
        Some(b';' | b',') => {}
        Some(b) if b.is_ascii_whitespace() => {}
        Some(_) => return None,
    }
    i = skip_space(s, i);
    if matches!(s.get(i), Some(b';' | b',')) {
        i += 1;
    }
    i = skip_space(s, i);
    if i >= s.len() {
        return None;
    }
    let mut url_start = i;
    // `url=` (any case) is optional; on a mismatch the whole rest is the URL.
    if matches!(s.get(i), Some(b'u' | b'U')) {
        let mut j = i + 1;
        if matches!(s.get(j), Some(b'r' | b'R')) && matches!(s.get(j + 1), Some(b'l' | b'L')) {
            j = skip_space(s, j + 2);
            if s.get(j) == Some(&b'=') {
                url_start = skip_space(s, j + 1);
            }
        }
    }
    let rest = content.get(url_start..)?;
    let url = match rest.as_bytes().first() {
        Some(&q @ (b'"' | b'\'')) => {
            let inner = rest.get(1..)?;
            match inner.find(char::from(q)) {
                Some(end) => inner.get(..end)?,
                None => inner,
            }
        }
        _ => rest,
    };
    Some(url)
}

/// The encoding named by a `Content-Type`-style value (`text/html; charset=x`), per
/// the HTML Standard's "extracting a character encoding from a meta element".
pub fn charset_from_content(content: &str) -> Option<&'static Encoding> {
    let s = content.as_bytes();
    let mut from = 0;
    loop {
        let lower = s.get(from..)?;
        let at = from
            + lower
                .windows(7)
                .position(|w| w.eq_ignore_ascii_case(b"charset"))?;
        let mut i = skip_space(s, at + 7);
        if s.get(i) != Some(&b'=') {
            from = at + 7;
            continue;
        }
        i = skip_space(s, i + 1);
        let value = match s.get(i) {
            Some(&q @ (b'"' | b'\'')) => {
                let rest = s.get(i + 1..)?;
                let end = memchr::memchr(q, rest)?;
                rest.get(..end)?
            }
            Some(_) => {
                let rest = s.get(i..)?;
                let end = rest
                    .iter()
                    .position(|b| b.is_ascii_whitespace() || *b == b';')
                    .unwrap_or(rest.len());
                rest.get(..end)?
            }
            None => return None,
        };
        return Encoding::for_label(value);
    }
}

/// The encoding a `<meta>` declares, adjusted as the prescan does: UTF-16 becomes
/// UTF-8 and x-user-defined becomes windows-1252.
pub fn declared_encoding(label_or_content: Option<&'static Encoding>) -> Option<&'static Encoding> {
    let enc = label_or_content?;
    Some(
        if enc == encoding_rs::UTF_16BE || enc == encoding_rs::UTF_16LE {
            encoding_rs::UTF_8
        } else if enc == encoding_rs::X_USER_DEFINED {
            encoding_rs::WINDOWS_1252
        } else {
            enc
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn robots_directives() {
        for (content, index, follow, archive) in [
            ("", true, true, true),
            ("index, follow", true, true, true),
            ("NOINDEX", false, true, true),
            ("noindex,nofollow", false, false, true),
            ("none", false, false, true),
            ("all", true, true, true),
            ("noarchive", true, true, false),
            ("follow, nofollow", true, false, true),
            ("nofollow,follow", true, false, true),
            ("all, none", false, false, true),
            (" NoIndex ,  NoFollow ", false, false, true),
            ("noindex nofollow", false, false, true),
            ("max-snippet:20, unknown", true, true, true),
        ] {
            let mut m = RobotsMeta::default();
            m.apply(content);
            assert_eq!(
                m,
                RobotsMeta {
                    index,
                    follow,
                    archive
                },
                "{content:?}"
            );
        }
        let mut m = RobotsMeta::default();
        m.apply("noindex");
        m.apply("index, follow");
        assert!(!m.index, "a later permissive tag does not undo noindex");
    }

    #[test]
    fn refresh() {
        for (content, expected) in [
            ("5; url=http://x/", Some("http://x/")),
            ("5;URL='http://x/?a=1'", Some("http://x/?a=1")),
            ("0; url=\"/a b\" tail", Some("/a b")),
            ("0,http://x/", Some("http://x/")),
            ("0 http://x/", Some("http://x/")),
            ("  3.5 ; url = /p", Some("/p")),
            (".5; url=/p", Some("/p")),
            ("0; urn:x", Some("urn:x")),
            ("0; u=/p", Some("u=/p")),
            ("0; url /p", Some("url /p")),
            ("0; url='/p", Some("/p")),
            ("5", None),
            ("5;", None),
            ("x; url=/p", None),
            ("5x; url=/p", None),
            ("", None),
        ] {
            assert_eq!(refresh_url(content), expected, "{content:?}");
        }
    }

    #[test]
    fn charsets() {
        assert_eq!(
            charset_from_content("text/html; charset=ISO-8859-1"),
            Some(encoding_rs::WINDOWS_1252)
        );
        assert_eq!(
            charset_from_content("text/html;charset = \"shift_jis\""),
            Some(encoding_rs::SHIFT_JIS)
        );
        assert_eq!(
            charset_from_content("text/html; charsetx; charset=utf-8;x"),
            Some(encoding_rs::UTF_8)
        );
        assert_eq!(charset_from_content("text/html"), None);
        assert_eq!(charset_from_content("charset='utf-8"), None);
        assert_eq!(charset_from_content("charset=bogus"), None);
        assert_eq!(
            declared_encoding(Some(encoding_rs::UTF_16LE)),
            Some(encoding_rs::UTF_8)
        );
    }
}
