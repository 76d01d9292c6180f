//! The generator of random robots.txt files, with or without the four readings where
//! RFC 9309 and Google differ, and the file as RFC 9309 reads it.

use trawl::robots::pattern::{normalize, Side};
use trawl::robots::MAX_LINE_BYTES;

/// Which RFC-over-Google readings a generated file may exercise.
#[derive(Clone, Copy, Debug)]
pub struct Features {
    /// Sitemap, crawl-delay and unknown lines between `user-agent` lines (RFC §2.2.4:
    /// they must not end a group; Google ends it).
    pub other_records: bool,
    /// Percent-encoded unreserved octets, lower-case or stray `%`, characters the RFC
    /// percent-encodes, inner spaces and a non-final `$` (RFC §2.2.2 normalization).
    pub percent: bool,
    /// Values without a leading `/` (trawl prepends one; Google's never match).
    pub no_slash: bool,
    /// The path `/robots.txt` (always allowed, RFC §2.2.2).
    pub robots_txt: bool,
}

impl Features {
    pub const GOOGLE: Features = Features {
        other_records: false,
        percent: false,
        no_slash: false,
        robots_txt: false,
    };
    pub const ALL: Features = Features {
        other_records: true,
        percent: true,
        no_slash: true,
        robots_txt: true,
    };
}

/// What a generated line means.
#[derive(Clone, Debug, PartialEq)]
pub enum Meaning {
    Agent(String),
    Rule {
        allow: bool,
        value: String,
    },
    /// A sitemap, crawl-delay or unknown field: ends a group for Google, not for trawl.
    Other,
    /// Blank, comment, or a line neither parser reads as a field.
    Nothing,
}

pub struct Generated {
    pub raw: Vec<u8>,
    /// The same file as RFC 9309 reads it, written plainly.
    pub rfc: String,
    /// Features the file actually used.
    pub used_other_records: bool,
    pub used_percent: bool,
    pub used_no_slash: bool,
}

pub fn pick<'a>(rng: &mut fastrand::Rng, items: &[&'a str]) -> &'a str {
    items[rng.usize(..items.len())]
}

/// Path pieces both parsers read alike.
pub const PLAIN: &[&str] = &[
    "a",
    "b",
    "ab",
    "/",
    "/",
    "x.html",
    "index.html",
    "index.htm",
    "?",
    "=",
    "&",
    "-",
    "_",
    "~",
    ".",
    "q",
    "%C3%A9",
    "%25",
    "page",
    "1",
    "2",
];
/// Pieces whose reading differs (RFC §2.2.2 normalization).
pub const PERCENT: &[&str] = &[
    "%41", "%61", "%7E", "%7e", "%2F", "%2f", "%3A", "%c3%a9", "%", "%z", "%zz", "|", "^",
];

pub fn value(rng: &mut fastrand::Rng, features: Features, used_percent: &mut bool) -> String {
    let mut v = String::new();
    match rng.u8(..20) {
        0 if features.no_slash => {}
        1 => v.push('*'),
        _ => v.push('/'),
    }
    for _ in 0..rng.usize(..6) {
        match rng.u8(..20) {
            0..=2 => v.push('*'),
            3 => v.push_str(pick(rng, &["é", "ü", "中", "🦀"])),
            4 => v.push_str("%c3%a9"), // lower-case hex of a non-ASCII octet: both upper-case it
            5 if features.percent => {
                *used_percent = true;
                v.push_str(pick(rng, PERCENT));
            }
            6 if features.percent => {
                *used_percent = true;
                v.push_str(pick(rng, &["$", " "]));
            }
            _ => v.push_str(pick(rng, PLAIN)),
        }
    }
    // Both parsers trim the value, so a space may only be inside it.
    let mut v = v.trim_matches(' ').to_owned();
    if v.is_empty() {
        v.push('/');
    }
    if rng.u8(..6) == 0 {
        v.push('$');
    }
    v
}

/// A failing file, shortened for the report.
pub fn short(text: &str) -> String {
    let mut s = format!("{text:?}");
    if s.len() > 1_500 {
        let mut cut = 1_500;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("...");
    }
    s
}

pub fn path(rng: &mut fastrand::Rng, features: Features) -> String {
    if features.robots_txt && rng.u8(..40) == 0 {
        return "/robots.txt".to_owned();
    }
    if rng.u8(..40) == 0 {
        // Around the length of a cut long line.
        let a = MAX_LINE_BYTES - b"allow: ".len() + rng.usize(..40) - rng.usize(..40);
        return format!("/{}b", "a".repeat(a));
    }
    let mut p = String::from("/");
    for _ in 0..rng.usize(..7) {
        match rng.u8(..20) {
            // Characters the RFC percent-encodes before comparing (`*` and `$` are
            // named `%2A` and `%24` in rules, §2.2.3): a wildcard can then match the
            // `2` of `%24`, which Google, comparing raw, does not see.
            0..=2 if features.percent => p.push_str(pick(rng, &["*", "$", "|", "^"])),
            3..=4 if features.percent => p.push_str(pick(rng, PERCENT)),
            _ => p.push_str(pick(rng, PLAIN)),
        }
    }
    p.retain(|c| c != ' ' && c != '#');
    p
}

/// Random spellings of a field name that Google's parser accepts.
pub fn key_spelling(rng: &mut fastrand::Rng, names: &[&str]) -> String {
    let name = pick(rng, names);
    let mut key: String = name
        .chars()
        .map(|c| {
            if rng.bool() {
                c.to_ascii_uppercase()
            } else {
                c
            }
        })
        .collect();
    if rng.u8(..10) == 0 {
        key.push_str(pick(rng, &["s", "ed", "-x"])); // names match as prefixes
    }
    key
}

/// Whitespace around keys and values: space, tab, vertical tab, form feed.
pub fn ws(rng: &mut fastrand::Rng) -> &'static str {
    match rng.u8(..8) {
        0..=3 => "",
        4 => " ",
        5 => "\t",
        6 => " \x0B",
        _ => "\x0C ",
    }
}

pub fn generate(rng: &mut fastrand::Rng, features: Features) -> Generated {
    let mut raw = Vec::new();
    if rng.u8(..8) == 0 {
        raw.extend_from_slice("\u{FEFF}".as_bytes());
    }
    let mut rfc = String::new();
    let mut used_percent = false;
    let mut used_no_slash = false;
    let mut used_other_records = false;
    let mut last_meaningful = Meaning::Nothing;
    let lines = rng.usize(1..24);
    for n in 0..lines {
        let meaning = match rng.u8(..20) {
            0..=4 => Meaning::Agent(
                pick(
                    rng,
                    &[
                        "*",
                        "*",
                        "trawl",
                        "Trawl/1.0",
                        "TRAWL",
                        "trawl-news",
                        "trawlbot",
                        "other",
                        "googlebot",
                        "* extra",
                        "*trawl",
                        "träwl",
                        "",
                    ],
                )
                .to_owned(),
            ),
            5..=14 => {
                let v = if rng.u8(..12) == 0 {
                    String::new()
                } else {
                    value(rng, features, &mut used_percent)
                };
                used_no_slash |= !v.is_empty() && !v.starts_with(['/', '*']);
                Meaning::Rule {
                    allow: rng.bool(),
                    value: v,
                }
            }
            15..=16 => Meaning::Other,
            _ => Meaning::Nothing,
        };
        // Other records between user-agent lines are where the readings differ.
        let meaning = match meaning {
            Meaning::Other
                if !features.other_records && matches!(last_meaningful, Meaning::Agent(_)) =>
            {
                Meaning::Nothing
            }
            m => m,
        };
        let mut line: Vec<u8> = Vec::new();
        let colon_free_ok = |v: &str| !v.is_empty() && !v.contains([' ', '\t']);
        match &meaning {
            Meaning::Agent(v) | Meaning::Rule { value: v, .. } => {
                let key = match &meaning {
                    Meaning::Agent(_) => {
                        key_spelling(rng, &["user-agent", "useragent", "user agent"])
                    }
                    Meaning::Rule { allow: true, .. } => key_spelling(rng, &["allow"]),
                    _ => key_spelling(
                        rng,
                        &[
                            "disallow",
                            "dissallow",
                            "dissalow",
                            "disalow",
                            "diasllow",
                            "disallaw",
                        ],
                    ),
                };
                let colon = !(colon_free_ok(v) && !key.contains(' ') && rng.u8(..4) == 0);
                if colon {
                    line.extend_from_slice(ws(rng).as_bytes());
                }
                line.extend_from_slice(key.as_bytes());
                if colon {
                    line.extend_from_slice(ws(rng).as_bytes());
                    line.push(b':');
                    line.extend_from_slice(ws(rng).as_bytes());
                } else {
                    line.extend_from_slice(pick(rng, &[" ", "\t", " \t "]).as_bytes());
                }
                line.extend_from_slice(v.as_bytes());
                line.extend_from_slice(ws(rng).as_bytes());
                if rng.u8(..6) == 0 {
                    line.extend_from_slice(b"# a comment: allow /x");
                }
            }
            Meaning::Other => {
                used_other_records |= matches!(last_meaningful, Meaning::Agent(_));
                let text = pick(
                    rng,
                    &[
                        "Sitemap: http://example.com/sitemap.xml",
                        "crawl-delay: 5",
                        "Crawl-delay 2",
                        "host: example.com",
                        "noindex: /x",
                        "clean-param: ref /a",
                        "user_agent: trawl",
                        "user  agent: trawl",
                    ],
                );
                line.extend_from_slice(text.as_bytes());
            }
            Meaning::Nothing => {
                let text = pick(
                    rng,
                    &[
                        "",
                        "   ",
                        "# disallow: /",
                        "this line has no colon",
                        "disallow /a /b",
                        "user agent trawl",
                        "word",
                        "<html><body>",
                        ":",
                        "\t# tabbed comment",
                    ],
                );
                line.extend_from_slice(text.as_bytes());
            }
        }
        // Now and then a line longer than Google's 16,663-byte cut (ASCII only: the
        // port miscounts a cut through a multi-byte character).
        let mut meaning = meaning;
        if rng.u8(..40) == 0 && line.is_ascii() {
            let (allow, prefix): (bool, &[u8]) = if rng.bool() {
                (true, b"allow: /")
            } else {
                (false, b"disallow: /")
            };
            let fill = MAX_LINE_BYTES + rng.usize(..40) - rng.usize(..40) - prefix.len();
            line = prefix.to_vec();
            line.extend(std::iter::repeat_n(b'a', fill));
            line.extend_from_slice(b"b");
            let cut = line.get(..MAX_LINE_BYTES).unwrap_or(&line);
            let value = String::from_utf8_lossy(cut.get(prefix.len() - 1..).unwrap_or_default())
                .into_owned();
            meaning = Meaning::Rule { allow, value };
        }
        raw.extend_from_slice(&line);
        if n + 1 < lines || rng.bool() {
            raw.extend_from_slice(pick(rng, &["\n", "\n", "\r\n", "\r"]).as_bytes());
        }
        match &meaning {
            Meaning::Agent(v) => rfc.push_str(&format!("user-agent: {v}\n")),
            Meaning::Rule { allow, value } => {
                let mut v = value.clone();
                if !v.is_empty() && !v.starts_with(['/', '*']) {
                    v.insert(0, '/');
                }
                let v = String::from_utf8(normalize(v.as_bytes(), Side::Pattern).into_owned())
                    .expect("normalized values are ASCII");
                let key = if *allow { "allow" } else { "disallow" };
                rfc.push_str(&format!("{key}: {v}\n"));
            }
            Meaning::Other | Meaning::Nothing => {}
        }
        if meaning != Meaning::Nothing {
            last_meaningful = meaning;
        }
    }
    Generated {
        raw,
        rfc,
        used_other_records,
        used_percent,
        used_no_slash,
    }
}

pub fn seed() -> u64 {
    std::env::var("TRAWL_ROBOTS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x7261_776c)
}
