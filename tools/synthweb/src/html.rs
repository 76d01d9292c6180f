//! HTML page assembly: filler text, link spellings (the aliases canonicalization must
//! collapse), charsets. The page builder in `site/builder.rs` writes markup into a `String` and
//! records every link it writes, with its canonical URL, so the body and the link list
//! never disagree.

use crate::hash::Rng;

/// The element a link is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Element {
    /// `<a href>`
    A,
    /// `<area href>`
    Area,
    /// `<frame src>` (inside a `<frameset>` page)
    Frame,
    /// `<iframe src>`
    IFrame,
    /// `<link href>`
    Link,
    /// `<img src>`
    Img,
    /// `<meta http-equiv="refresh" content="0; url=...">`
    MetaRefresh,
}

/// Where a hidden link sits (it must not be extracted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HiddenIn {
    /// Inside `<!-- ... -->`.
    Comment,
    /// Inside `<script>` text.
    Script,
    /// Inside `<style>` text.
    Style,
}

/// What a crawler should do with a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkKind {
    /// An ordinary extractable link to an HTML page or redirect.
    Follow,
    /// An extractable `<a rel="nofollow">`.
    NoFollowRel,
    /// Text that looks like a link but sits in a comment, script or style.
    Hidden(HiddenIn),
    /// `javascript:` or `mailto:`: not an HTTP URL.
    NonHttp,
    /// A non-HTML resource (`img`, `link rel=stylesheet`, a PDF).
    Resource,
    /// A `<meta http-equiv="refresh">` target.
    Refresh,
}

/// A link as the generator wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// Element.
    pub element: Element,
    /// The attribute value as written (HTML character references not decoded; for
    /// windows-1252 pages the text before encoding to that charset).
    pub href: String,
    /// The canonical absolute URL (see SYNTHWEB-FORMATS.md), `None` for non-HTTP links.
    pub url: Option<String>,
    /// Kind.
    pub kind: LinkKind,
}

/// The charset a page is served in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Charset {
    /// UTF-8.
    Utf8,
    /// windows-1252, labelled `windows-1252` or `iso-8859-1` (the same WHATWG encoding).
    Windows1252,
}

/// Where a charset label is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CharsetLabel {
    /// Both the Content-Type header and `<meta charset>`.
    Both(&'static str),
    /// Only the header.
    Header(&'static str),
    /// Only `<meta charset>`.
    Meta(&'static str),
}

impl CharsetLabel {
    /// Label to put in the Content-Type header, if any.
    #[must_use]
    pub fn header(self) -> Option<&'static str> {
        match self {
            Self::Both(l) | Self::Header(l) => Some(l),
            Self::Meta(_) => None,
        }
    }

    /// Label to put in `<meta charset>`, if any.
    #[must_use]
    pub fn meta(self) -> Option<&'static str> {
        match self {
            Self::Both(l) | Self::Meta(l) => Some(l),
            Self::Header(_) => None,
        }
    }
}

/// Encode text for a charset. Characters outside windows-1252 become `?` (the generator
/// only writes representable ones there).
#[must_use]
pub fn encode_text(text: &str, charset: Charset) -> Vec<u8> {
    match charset {
        Charset::Utf8 => text.as_bytes().to_vec(),
        Charset::Windows1252 => text.chars().map(to_cp1252).collect(),
    }
}

fn to_cp1252(c: char) -> u8 {
    let u = c as u32;
    if u < 0x80 || (0xA0..=0xFF).contains(&u) {
        return u as u8;
    }
    match c {
        '€' => 0x80,
        '‚' => 0x82,
        '„' => 0x84,
        '…' => 0x85,
        '‘' => 0x91,
        '’' => 0x92,
        '“' => 0x93,
        '”' => 0x94,
        '–' => 0x96,
        '—' => 0x97,
        '™' => 0x99,
        _ => b'?',
    }
}

/// Whether every character of `s` exists in windows-1252.
#[must_use]
pub fn fits_cp1252(s: &str) -> bool {
    s.chars().all(|c| to_cp1252(c) != b'?' || c == '?')
}

const WORDS: [&str; 48] = [
    "the",
    "crawler",
    "walks",
    "a",
    "synthetic",
    "web",
    "of",
    "pages",
    "links",
    "and",
    "hosts",
    "every",
    "byte",
    "comes",
    "from",
    "seed",
    "host",
    "path",
    "robots",
    "politeness",
    "delay",
    "frontier",
    "queue",
    "fetch",
    "parse",
    "extract",
    "canonical",
    "alias",
    "redirect",
    "status",
    "header",
    "body",
    "chunk",
    "gzip",
    "brotli",
    "deflate",
    "window",
    "river",
    "mountain",
    "harbour",
    "lantern",
    "orchard",
    "meadow",
    "copper",
    "violet",
    "granite",
    "willow",
    "ember",
];
const WORDS_UTF8: [&str; 6] = ["café", "naïve", "東京", "ñandú", "Ærø", "“quoted”"];
const WORDS_CP1252: [&str; 6] = ["café", "naïve", "façade", "Ærø", "“quoted”", "€5"];

/// A fixed corpus of paragraphs per charset, built once: filler text is copied from it
/// (starting at a random paragraph), which is far cheaper than drawing word by word.
struct Corpus {
    text: String,
    /// Byte offsets where paragraphs start.
    starts: Vec<usize>,
}

const CORPUS_BYTES: usize = 256 * 1024;

fn corpus(charset: Charset) -> &'static Corpus {
    static UTF8: std::sync::OnceLock<Corpus> = std::sync::OnceLock::new();
    static CP1252: std::sync::OnceLock<Corpus> = std::sync::OnceLock::new();
    let cell = match charset {
        Charset::Utf8 => &UTF8,
        Charset::Windows1252 => &CP1252,
    };
    cell.get_or_init(|| {
        let mut rng = Rng::new(0xC0DE_u64 ^ charset as u64);
        let mut text = String::with_capacity(CORPUS_BYTES + 1024);
        let mut starts = Vec::new();
        while text.len() < CORPUS_BYTES {
            starts.push(text.len());
            text.push_str("<p>");
            let n = rng.range(20, 60);
            for i in 0..n {
                if i > 0 {
                    text.push(' ');
                }
                let w = if rng.chance(6) {
                    let list = match charset {
                        Charset::Utf8 => &WORDS_UTF8,
                        Charset::Windows1252 => &WORDS_CP1252,
                    };
                    rng.pick(list).copied().unwrap_or("x")
                } else {
                    rng.pick(&WORDS).copied().unwrap_or("x")
                };
                text.push_str(w);
            }
            text.push_str(".</p>\n");
        }
        Corpus { text, starts }
    })
}

/// Write paragraph text, at most `bytes` bytes (UTF-8), ending at a paragraph or word
/// boundary. Deterministic in `rng`.
pub fn filler(out: &mut String, rng: &mut Rng, bytes: usize, charset: Charset) {
    let c = corpus(charset);
    let mut budget = bytes;
    while budget > 16 {
        let Some(&start) = c.starts.get(rng.below(c.starts.len() as u64) as usize) else {
            return;
        };
        let rest = c.text.get(start..).unwrap_or("");
        if rest.len() <= budget {
            out.push_str(rest);
            budget -= rest.len();
            continue;
        }
        // Cut inside the corpus: whole paragraphs first, then words of the last one.
        let mut end = budget;
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let window = &rest[..end];
        // Newlines occur only at paragraph ends in the corpus (memrchr, not a substring search).
        let whole = window.rfind('\n').map_or(0, |i| i + 1);
        out.push_str(&rest[..whole]);
        budget -= whole;
        let tail = &rest[whole..];
        // Partial paragraph: "<p>" + words + ".</p>\n" within what is left.
        if budget > 16 {
            let room = budget - 9;
            let mut end = room.min(tail.len());
            while !tail.is_char_boundary(end) {
                end -= 1;
            }
            let cut = tail[..end].rfind(' ').unwrap_or(0);
            if cut > 3 {
                out.push_str(&tail[..cut]);
                out.push_str(".</p>\n");
            }
        }
        return;
    }
}

/// Escape text for an HTML attribute or text node.
#[must_use]
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            _ => o.push(c),
        }
    }
    o
}

/// Percent-encode a path segment's non-ASCII characters as UTF-8 (upper-case hex),
/// as the WHATWG URL parser does for paths.
#[must_use]
pub fn pct_utf8(s: &str) -> String {
    let mut o = String::with_capacity(s.len() * 3);
    for b in s.bytes() {
        if b.is_ascii() {
            o.push(b as char);
        } else {
            o.push_str(&format!("%{b:02X}"));
        }
    }
    o
}

/// How the path part of a link is spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    /// Exactly the canonical text.
    Canonical,
    /// `%xx` with lower-case hex; `~` as `%7e`.
    LowerHex,
    /// Percent-encoded UTF-8 decoded to raw characters; `~` as `%7E`.
    Raw,
}

/// Respell a canonical path (or a suffix starting at a segment boundary).
#[must_use]
pub fn spell(path: &str, spelling: Spelling, charset: Charset) -> String {
    match spelling {
        Spelling::Canonical => path.to_owned(),
        Spelling::LowerHex => {
            let mut o = String::with_capacity(path.len() + 8);
            let mut chars = path.chars().peekable();
            while let Some(c) = chars.next() {
                if c == '%' {
                    o.push('%');
                    for _ in 0..2 {
                        if let Some(h) = chars.next() {
                            o.push(h.to_ascii_lowercase());
                        }
                    }
                } else if c == '~' {
                    o.push_str("%7e");
                } else {
                    o.push(c);
                }
            }
            o
        }
        Spelling::Raw => {
            let decoded = pct_decode_utf8(path);
            let decoded = match decoded {
                Some(d) if charset == Charset::Utf8 || fits_cp1252(&d) => d,
                _ => path.to_owned(),
            };
            decoded.replace('~', "%7E")
        }
    }
}

fn pct_decode_utf8(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b.get(i) {
            Some(b'%') => {
                let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            Some(&c) => {
                out.push(c);
                i += 1;
            }
            None => break,
        }
    }
    String::from_utf8(out).ok()
}

/// The syntactic form a link takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alias {
    /// `x` (target in the base directory).
    Relative,
    /// `./x`.
    DotRelative,
    /// `../../x` climbing to the root (and past it, which clamps).
    DotDotRelative,
    /// `/x`.
    RootRelative,
    /// `http://host:port/x`.
    Absolute,
    /// `//host:port/x`.
    ProtocolRelative,
    /// `HTTP://HOST:port/x`.
    UpperSchemeHost,
    /// `http://host:80/x` when the port is the default, else `http://host:0PORT/x`.
    ExplicitPort,
}

/// All aliases usable for a same-host target.
pub const SAME_HOST_ALIASES: [Alias; 8] = [
    Alias::Relative,
    Alias::DotRelative,
    Alias::DotDotRelative,
    Alias::RootRelative,
    Alias::Absolute,
    Alias::ProtocolRelative,
    Alias::UpperSchemeHost,
    Alias::ExplicitPort,
];
/// Aliases usable for a cross-host target.
pub const CROSS_HOST_ALIASES: [Alias; 4] = [
    Alias::Absolute,
    Alias::ProtocolRelative,
    Alias::UpperSchemeHost,
    Alias::ExplicitPort,
];

/// Everything needed to spell a URL in a page.
#[derive(Debug, Clone)]
pub struct Origin {
    /// `http` or `https`.
    pub scheme: &'static str,
    /// Host name, lower case.
    pub host: String,
    /// Port.
    pub port: u16,
}

impl Origin {
    /// Whether the port is the scheme's default.
    #[must_use]
    pub fn default_port(&self) -> bool {
        (self.scheme == "http" && self.port == 80) || (self.scheme == "https" && self.port == 443)
    }

    /// `scheme://host[:port]` in canonical form.
    #[must_use]
    pub fn canonical(&self) -> String {
        if self.default_port() {
            format!("{}://{}", self.scheme, self.host)
        } else {
            format!("{}://{}:{}", self.scheme, self.host, self.port)
        }
    }

    fn authority(&self, alias: Alias) -> String {
        match alias {
            Alias::UpperSchemeHost => {
                let a = if self.default_port() {
                    self.host.to_ascii_uppercase()
                } else {
                    format!("{}:{}", self.host.to_ascii_uppercase(), self.port)
                };
                a
            }
            Alias::ExplicitPort => {
                if self.default_port() {
                    format!("{}:{}", self.host, self.port)
                } else {
                    format!("{}:0{}", self.host, self.port)
                }
            }
            _ => {
                if self.default_port() {
                    self.host.clone()
                } else {
                    format!("{}:{}", self.host, self.port)
                }
            }
        }
    }
}

/// Spell the link to canonical `path_q` on `target` as seen from a page whose base
/// directory is `base_dir` on `here`. Falls back to root-relative when a relative form
/// does not apply.
#[must_use]
pub fn spell_href(
    alias: Alias,
    here: &Origin,
    base_dir: &str,
    target: &Origin,
    path_q: &str,
    spelling: Spelling,
    charset: Charset,
) -> String {
    let same = here.host == target.host && here.port == target.port && here.scheme == target.scheme;
    let alias = if !same && !CROSS_HOST_ALIASES.contains(&alias) {
        Alias::Absolute
    } else {
        alias
    };
    let sp = |s: &str| spell(s, spelling, charset);
    match alias {
        Alias::Relative | Alias::DotRelative => match path_q.strip_prefix(base_dir) {
            Some(rest) if !rest.is_empty() && !rest.starts_with('?') && !rest.starts_with('/') => {
                if alias == Alias::Relative {
                    sp(rest)
                } else {
                    format!("./{}", sp(rest))
                }
            }
            Some("") => "./".to_owned(),
            _ => sp(path_q),
        },
        Alias::DotDotRelative => {
            let depth = base_dir.matches('/').count().saturating_sub(1).max(1);
            let tail = path_q.strip_prefix('/').unwrap_or(path_q);
            format!("{}{}", "../".repeat(depth), sp(tail))
        }
        Alias::RootRelative => sp(path_q),
        Alias::Absolute => format!(
            "{}://{}{}",
            target.scheme,
            target.authority(alias),
            sp(path_q)
        ),
        Alias::ProtocolRelative => format!("//{}{}", target.authority(alias), sp(path_q)),
        Alias::UpperSchemeHost => format!(
            "{}://{}{}",
            target.scheme.to_ascii_uppercase(),
            target.authority(alias),
            sp(path_q)
        ),
        Alias::ExplicitPort => {
            format!(
                "{}://{}{}",
                target.scheme,
                target.authority(alias),
                sp(path_q)
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(host: &str) -> Origin {
        Origin {
            scheme: "http",
            host: host.to_owned(),
            port: 8080,
        }
    }

    #[test]
    fn spells_aliases() {
        let h = o("h000001.synth.test");
        let s = |a| spell_href(a, &h, "/p/", &h, "/p/7", Spelling::Canonical, Charset::Utf8);
        assert_eq!(s(Alias::Relative), "7");
        assert_eq!(s(Alias::DotRelative), "./7");
        assert_eq!(s(Alias::DotDotRelative), "../p/7");
        assert_eq!(s(Alias::RootRelative), "/p/7");
        assert_eq!(s(Alias::Absolute), "http://h000001.synth.test:8080/p/7");
        assert_eq!(s(Alias::ProtocolRelative), "//h000001.synth.test:8080/p/7");
        assert_eq!(
            s(Alias::UpperSchemeHost),
            "HTTP://H000001.SYNTH.TEST:8080/p/7"
        );
        assert_eq!(
            s(Alias::ExplicitPort),
            "http://h000001.synth.test:08080/p/7"
        );
        assert_eq!(
            spell("/wiki/Caf%C3%A9_1", Spelling::Raw, Charset::Windows1252),
            "/wiki/Café_1"
        );
        assert_eq!(
            spell("/wiki/%E6%9D%B1_1", Spelling::Raw, Charset::Windows1252),
            "/wiki/%E6%9D%B1_1"
        );
        assert_eq!(spell("/~u1/", Spelling::LowerHex, Charset::Utf8), "/%7eu1/");
        assert_eq!(pct_utf8("/wiki/Café"), "/wiki/Caf%C3%A9");
        assert_eq!(encode_text("é“", Charset::Windows1252), vec![0xE9, 0x93]);
    }
}
