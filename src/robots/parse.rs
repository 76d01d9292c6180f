//! The robots.txt parser: bytes in, groups of rules out, never an error.
//!
//! RFC 9309 §2.2 asks crawlers to be liberal: one bad line must not void a file, so the
//! parser has no failure mode. It works on bytes (a robots.txt need not be valid UTF-8)
//! and keeps line numbers so a verdict can name the line that decided it.

#![deny(clippy::indexing_slicing)]

use std::time::Duration;

use memchr::{memchr, memchr2};

/// How much of a robots.txt is parsed: RFC 9309 §2.5 asks for at least 500 KiB.
pub const MAX_ROBOTS_BYTES: usize = 500 * 1024;

/// Which conventions the parser and matcher follow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mode {
    /// RFC 9309 (2022): groups merged, longest match wins, `*` and `$` wildcards.
    #[default]
    Rfc9309,
    /// The 1994 standard and 1996 draft as the seeds describe them: blank lines end
    /// records, the first record whose agent value contains the robot's name is used
    /// (else the first `*` record), the first matching rule in file order wins, rule
    /// values are literal prefixes and a line may list several whitespace-separated
    /// paths.
    Draft1996,
}

/// Whether a rule grants or denies access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RuleKind {
    /// `allow:`.
    Allow,
    /// `disallow:`.
    Disallow,
}

impl RuleKind {
    /// The field name as written in a robots.txt.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleKind::Allow => "allow",
            RuleKind::Disallow => "disallow",
        }
    }
}

/// A rule as read from the file, before compilation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawRule {
    /// Allow or disallow.
    pub kind: RuleKind,
    /// The value, trimmed, comment removed, never empty.
    pub value: Box<[u8]>,
    /// 1-based line number.
    pub line: u32,
}

/// One `user-agent` line of a group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentLine {
    /// The whole value, ASCII-lower-cased (used by the 1996 substring rule).
    pub value_lower: Box<[u8]>,
    /// The product token (`[A-Za-z_-]+` prefix of the value), ASCII-lower-cased.
    pub token_lower: Box<[u8]>,
    /// Whether this line is the `*` wildcard.
    pub is_global: bool,
    /// 1-based line number.
    pub line: u32,
}

/// A group: one or more `user-agent` lines and the rules that follow them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Group {
    /// The agents the group applies to.
    pub agents: Vec<AgentLine>,
    /// Its rules, in file order.
    pub rules: Vec<RawRule>,
    /// The group's `crawl-delay`, if it had a valid one (the first one wins).
    pub crawl_delay: Option<Duration>,
}

/// A `sitemap:` line. Sitemaps are not tied to any group (RFC 9309 §2.2.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sitemap {
    /// The URL as written (lossily decoded as UTF-8).
    pub url: String,
    /// 1-based line number.
    pub line: u32,
}

/// What the parser saw, for logs and for the tester.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParseReport {
    /// Lines read.
    pub lines: u32,
    /// Lines that were neither blank, a comment, nor a field the parser uses.
    pub ignored_lines: u32,
    /// Bytes parsed (at most [`MAX_ROBOTS_BYTES`], without a cut final line).
    pub bytes_parsed: usize,
    /// Whether the input was longer than [`MAX_ROBOTS_BYTES`] and cut.
    pub truncated: bool,
    /// Lines longer than [`MAX_LINE_BYTES`], whose tail was not read.
    pub long_lines: u32,
}

/// A parsed robots.txt, for every agent. Compile the part that concerns one crawler
/// with [`RobotsTxt::rules_for`](crate::robots::RobotsTxt::rules_for).
#[derive(Clone, Debug, PartialEq)]
pub struct RobotsTxt {
    pub(crate) mode: Mode,
    pub(crate) groups: Vec<Group>,
    pub(crate) sitemaps: Vec<Sitemap>,
    pub(crate) report: ParseReport,
}

/// The fields the parser acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    UserAgent,
    Rule(RuleKind),
    Sitemap,
    CrawlDelay,
    Other,
}

/// Maps a field name to a field the way Google's open-source parser does, so a file
/// reads the same to trawl as to the crawler most webmasters test against: the name is
/// compared case-insensitively as a *prefix* (`disallowed: /x` and `user-agents: x`
/// count), with Google's list of frequent misspellings (`useragent`, `user agent`,
/// `dissallow`, `dissalow`, `disalow`, `diasllow`, `disallaw`, `site-map`), checked in
/// Google's order (user-agent, allow, disallow, sitemap). `crawl-delay`, which Google
/// ignores, is trawl's own extension and is matched exactly (with its common spellings).
fn classify(key: &[u8]) -> Field {
    let starts = |prefix: &[u8]| {
        key.get(..prefix.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
    };
    let any = |prefixes: &[&[u8]]| prefixes.iter().any(|p| starts(p));
    if any(&[b"user-agent", b"useragent", b"user agent"]) {
        Field::UserAgent
    } else if starts(b"allow") {
        Field::Rule(RuleKind::Allow)
    } else if any(&[
        b"disallow",
        b"dissallow",
        b"dissalow",
        b"disalow",
        b"diasllow",
        b"disallaw",
    ]) {
        Field::Rule(RuleKind::Disallow)
    } else if any(&[b"sitemap", b"site-map"]) {
        Field::Sitemap
    } else if [
        &b"crawl-delay"[..],
        b"crawldelay",
        b"crawl delay",
        b"crawl_delay",
    ]
    .iter()
    .any(|name| key.eq_ignore_ascii_case(name))
    {
        Field::CrawlDelay
    } else {
        Field::Other
    }
}

/// Splits a line's content (comment removed, trimmed) into key and value: at the first
/// colon, or, as Google's parser tolerates forgotten colons, at the whitespace of a
/// line holding exactly two words (`Disallow /private`, `User-agent googlebot`). A line
/// of three or more words without a colon is not guessed at. `None` for lines with no
/// separator or an empty key.
fn split_key_value(content: &[u8]) -> Option<(&[u8], &[u8])> {
    let (key, value) = match memchr(b':', content) {
        Some(colon) => (content.get(..colon)?, content.get(colon + 1..)?),
        None => {
            let sep = memchr2(b' ', b'\t', content)?;
            let value = trim(content.get(sep..)?);
            if memchr2(b' ', b'\t', value).is_some() {
                return None; // more than two words
            }
            (content.get(..sep)?, value)
        }
    };
    let key = trim(key);
    (!key.is_empty()).then(|| (key, trim(value)))
}

/// Lines are cut to this many bytes, as Google's parser cuts them (8 × the 2,083-byte
/// URL limit of old browsers, less one): a longer line is no legitimate rule, and the
/// cut keeps a hostile file from making one line arbitrarily large. Counted in
/// [`ParseReport::long_lines`].
pub const MAX_LINE_BYTES: usize = 2083 * 8 - 1;

/// Whether `b` is ASCII whitespace in C's sense (space, tab, LF, VT, FF, CR). RFC 9309
/// §2.2 names only space and tab, but Google's parser strips all of these around keys
/// and values, and a stray vertical tab should not turn `/private` into another rule.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')
}

/// Strips [`is_space`] whitespace from both ends.
fn trim(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if !is_space(*first) {
            break;
        }
        s = rest;
    }
    while let [rest @ .., last] = s {
        if !is_space(*last) {
            break;
        }
        s = rest;
    }
    s
}

/// The product token of an agent string: its longest `[A-Za-z_-]` prefix (RFC 9309
/// §2.2.1), ASCII-lower-cased. `"Trawl/1.0 (+https://...)"` gives `"trawl"`.
pub fn product_token(agent: &[u8]) -> Box<[u8]> {
    let agent = trim(agent);
    let end = agent
        .iter()
        .position(|b| !(b.is_ascii_alphabetic() || *b == b'_' || *b == b'-'))
        .unwrap_or(agent.len());
    agent
        .get(..end)
        .unwrap_or_default()
        .to_ascii_lowercase()
        .into_boxed_slice()
}

/// Parses a `crawl-delay` value: a non-negative decimal number of seconds.
fn parse_delay(value: &[u8]) -> Option<Duration> {
    let text = std::str::from_utf8(value).ok()?;
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let secs: f64 = text.parse().ok()?;
    Duration::try_from_secs_f64(secs).ok()
}

/// Splits the parsed prefix of `bytes` into lines, dropping a BOM and a cut final line.
fn parsed_prefix(bytes: &[u8]) -> (&[u8], bool) {
    // A UTF-8 BOM, or a cut-off start of one (as Google's parser also skips), is not
    // part of the first line.
    let bom = [0xEF, 0xBB, 0xBF]
        .iter()
        .zip(bytes)
        .take_while(|(a, b)| a == b)
        .count();
    let bytes = bytes.get(bom..).unwrap_or_default();
    if bytes.len() <= MAX_ROBOTS_BYTES {
        return (bytes, false);
    }
    let head = bytes.get(..MAX_ROBOTS_BYTES).unwrap_or(bytes);
    // If the byte right after the cut ends a line, the last line is whole.
    if matches!(bytes.get(MAX_ROBOTS_BYTES), Some(b'\r' | b'\n')) {
        return (head, true);
    }
    // Otherwise drop the partial last line: a cut `disallow: /private` would become a
    // different rule.
    let end = memchr::memrchr2(b'\r', b'\n', head).map_or(0, |i| i + 1);
    (head.get(..end).unwrap_or_default(), true)
}

/// Iterates over lines ended by CR, LF or CRLF.
struct Lines<'a> {
    rest: Option<&'a [u8]>,
}

impl<'a> Iterator for Lines<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let rest = self.rest?;
        match memchr2(b'\r', b'\n', rest) {
            Some(i) => {
                let line = rest.get(..i).unwrap_or_default();
                let skip = if rest.get(i..i + 2) == Some(b"\r\n") {
                    2
                } else {
                    1
                };
                let tail = rest.get(i + skip..).unwrap_or_default();
                self.rest = if tail.is_empty() { None } else { Some(tail) };
                Some(line)
            }
            None => {
                self.rest = None;
                Some(rest)
            }
        }
    }
}

impl RobotsTxt {
    /// Parses a robots.txt body. Never fails: lines it cannot use are counted in the
    /// [`ParseReport`] and skipped. Only the first [`MAX_ROBOTS_BYTES`] are read.
    pub fn parse(bytes: &[u8], mode: Mode) -> RobotsTxt {
        let (text, truncated) = parsed_prefix(bytes);
        let mut report = ParseReport {
            truncated,
            bytes_parsed: text.len(),
            ..ParseReport::default()
        };
        let mut groups: Vec<Group> = Vec::new();
        let mut sitemaps = Vec::new();
        // Index of the group rules currently go to; `None` before the first
        // `user-agent` line (such rules belong to nobody and are ignored).
        let mut current: Option<usize> = None;
        // Whether the last group line was a `user-agent` line, so another one extends
        // the same group instead of starting a new one.
        let mut in_agents = false;
        let lines = Lines {
            rest: if text.is_empty() { None } else { Some(text) },
        };
        for (number, raw_line) in lines.enumerate() {
            let line_no = u32::try_from(number + 1).unwrap_or(u32::MAX);
            report.lines = line_no;
            if trim(raw_line).is_empty() {
                if mode == Mode::Draft1996 {
                    // 1996 draft: records are separated by blank lines.
                    current = None;
                    in_agents = false;
                }
                continue;
            }
            let raw_line = match raw_line.get(..MAX_LINE_BYTES) {
                Some(head) if raw_line.len() > MAX_LINE_BYTES => {
                    report.long_lines += 1;
                    head
                }
                _ => raw_line,
            };
            let content = match memchr(b'#', raw_line) {
                Some(i) => raw_line.get(..i).unwrap_or_default(),
                None => raw_line,
            };
            let content = trim(content);
            if content.is_empty() {
                continue; // a comment line
            }
            let Some((key, value)) = split_key_value(content) else {
                report.ignored_lines += 1;
                continue;
            };
            match classify(key) {
                Field::UserAgent => {
                    let group = match current {
                        Some(i) if in_agents => i,
                        _ => {
                            groups.push(Group::default());
                            groups.len() - 1
                        }
                    };
                    current = Some(group);
                    in_agents = true;
                    let is_global = match value {
                        [b'*'] => true,
                        [b'*', next, ..] => is_space(*next),
                        _ => false,
                    };
                    if let Some(g) = groups.get_mut(group) {
                        g.agents.push(AgentLine {
                            value_lower: value.to_ascii_lowercase().into_boxed_slice(),
                            token_lower: product_token(value),
                            is_global,
                            line: line_no,
                        });
                    }
                }
                Field::Rule(kind) => {
                    in_agents = false;
                    let Some(g) = current.and_then(|i| groups.get_mut(i)) else {
                        report.ignored_lines += 1;
                        continue;
                    };
                    match mode {
                        Mode::Rfc9309 => {
                            if !value.is_empty() {
                                let value = rule_value(value);
                                let index_dir = match kind {
                                    RuleKind::Allow => index_page_dir(&value),
                                    RuleKind::Disallow => None,
                                };
                                g.rules.push(RawRule {
                                    kind,
                                    value,
                                    line: line_no,
                                });
                                if let Some(dir) = index_dir {
                                    g.rules.push(RawRule {
                                        kind,
                                        value: dir,
                                        line: line_no,
                                    });
                                }
                            }
                        }
                        Mode::Draft1996 => {
                            for path in value
                                .split(|b| *b == b' ' || *b == b'\t')
                                .filter(|p| !p.is_empty())
                            {
                                g.rules.push(RawRule {
                                    kind,
                                    value: path.to_vec().into_boxed_slice(),
                                    line: line_no,
                                });
                            }
                        }
                    }
                }
                Field::CrawlDelay => {
                    // An extension record: it must not change how the group lines
                    // around it are read (RFC 9309 §2.2.4), so `in_agents` is kept.
                    match (current.and_then(|i| groups.get_mut(i)), parse_delay(value)) {
                        (Some(g), Some(delay)) => {
                            g.crawl_delay.get_or_insert(delay);
                        }
                        _ => report.ignored_lines += 1,
                    }
                }
                Field::Sitemap => {
                    if value.is_empty() {
                        report.ignored_lines += 1;
                    } else {
                        sitemaps.push(Sitemap {
                            url: String::from_utf8_lossy(value).into_owned(),
                            line: line_no,
                        });
                    }
                }
                Field::Other => report.ignored_lines += 1,
            }
        }
        RobotsTxt {
            mode,
            groups,
            sitemaps,
            report,
        }
    }

    /// The conventions this file was parsed with.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The groups, in file order.
    pub fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// The `sitemap:` URLs, in file order.
    pub fn sitemaps(&self) -> &[Sitemap] {
        &self.sitemaps
    }

    /// What the parser saw.
    pub fn report(&self) -> ParseReport {
        self.report
    }
}

/// An RFC 9309 rule value. The grammar requires a leading `/` (or a `*` wildcard);
/// webmasters who write `disallow: private/` mean `/private/`, so a missing slash is
/// added rather than the rule silently never matching (docs/robots.md, "readings").
fn rule_value(value: &[u8]) -> Box<[u8]> {
    match value.first() {
        Some(b'/' | b'*') => value.to_vec().into_boxed_slice(),
        _ => {
            let mut v = Vec::with_capacity(value.len() + 1);
            v.push(b'/');
            v.extend_from_slice(value);
            v.into_boxed_slice()
        }
    }
}

/// Google's parser reads `allow: /dir/index.html` (or `.htm`) as also allowing the
/// directory URL `/dir/` itself, since servers answer both with the same page. Returns
/// that second pattern, `/dir/$`, for an allow value whose last segment starts with
/// `index.htm` (compared after percent-normalization, so `/ind%65x.html` counts).
fn index_page_dir(value: &[u8]) -> Option<Box<[u8]>> {
    let normalized =
        crate::robots::pattern::normalize(value, crate::robots::pattern::Side::Pattern);
    let slash = memchr::memrchr(b'/', &normalized)?;
    if !normalized.get(slash..)?.starts_with(b"/index.htm") {
        return None;
    }
    let mut dir = normalized.get(..=slash)?.to_vec();
    dir.push(b'$');
    Some(dir.into_boxed_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_on_cr_lf_and_crlf() {
        let lines: Vec<&[u8]> = Lines {
            rest: Some(b"a\rb\nc\r\nd\r\n\ne"),
        }
        .collect();
        assert_eq!(lines, vec![&b"a"[..], b"b", b"c", b"d", b"", b"e"]);
    }

    #[test]
    fn field_names_and_misspellings() {
        assert_eq!(classify(b"User-Agent"), Field::UserAgent);
        assert_eq!(classify(b"user agent"), Field::UserAgent);
        assert_eq!(classify(b"USERAGENT"), Field::UserAgent);
        assert_eq!(classify(b"Dissallow"), Field::Rule(RuleKind::Disallow));
        assert_eq!(classify(b"aLLow"), Field::Rule(RuleKind::Allow));
        assert_eq!(classify(b"Site-map"), Field::Sitemap);
        assert_eq!(classify(b"Crawl-delay"), Field::CrawlDelay);
        assert_eq!(classify(b"host"), Field::Other);
        assert_eq!(
            classify(b"a-very-long-field-name-that-overflows"),
            Field::Other
        );
        // Google compares names as prefixes...
        assert_eq!(classify(b"Disallowed"), Field::Rule(RuleKind::Disallow));
        assert_eq!(classify(b"user-agents"), Field::UserAgent);
        assert_eq!(classify(b"sitemaps"), Field::Sitemap);
        // ...but not with other separators or inner whitespace runs.
        assert_eq!(classify(b"user_agent"), Field::Other);
        assert_eq!(classify(b"user  agent"), Field::Other);
        assert_eq!(classify(b"dis allow"), Field::Other);
        assert_eq!(classify(b"crawl-delayed"), Field::Other);
    }

    #[test]
    fn key_value_with_and_without_colon() {
        let kv = |line: &[u8]| split_key_value(line).map(|(k, v)| (k.to_vec(), v.to_vec()));
        let pair = |k: &[u8], v: &[u8]| Some((k.to_vec(), v.to_vec()));
        assert_eq!(kv(b"Disallow: /a"), pair(b"Disallow", b"/a"));
        assert_eq!(kv(b"Disallow :/a: b"), pair(b"Disallow", b"/a: b"));
        assert_eq!(kv(b"Disallow /private"), pair(b"Disallow", b"/private"));
        assert_eq!(
            kv(b"User-agent \t googlebot"),
            pair(b"User-agent", b"googlebot")
        );
        assert_eq!(kv(b"disallow: "), pair(b"disallow", b""));
        // Three words without a colon are not guessed at; one word has no value.
        assert_eq!(kv(b"user agent googlebot"), None);
        assert_eq!(kv(b"disallow"), None);
        assert_eq!(kv(b": /x"), None);
    }

    #[test]
    fn missing_colon_lines_are_rules() {
        let robots = RobotsTxt::parse(
            b"User-agent googlebot\nDisallow /private\nallow /private/ok # note\n\
              disallow /a /b\n",
            Mode::Rfc9309,
        );
        assert_eq!(robots.groups.len(), 1);
        assert_eq!(&*robots.groups[0].agents[0].token_lower, b"googlebot");
        let rules: Vec<&[u8]> = robots.groups[0].rules.iter().map(|r| &*r.value).collect();
        assert_eq!(rules, vec![&b"/private"[..], b"/private/ok"]);
        assert_eq!(robots.report.ignored_lines, 1, "the three-word line");
    }

    #[test]
    fn vertical_tab_and_form_feed_are_whitespace() {
        let robots = RobotsTxt::parse(
            b"user-agent:\x0b*\x0c\ndisallow:\x0c/x\x0b\n",
            Mode::Rfc9309,
        );
        assert!(robots.groups[0].agents[0].is_global);
        assert_eq!(&*robots.groups[0].rules[0].value, b"/x");
        let robots = RobotsTxt::parse(b"user-agent: *\x0bbot\n", Mode::Rfc9309);
        assert!(robots.groups[0].agents[0].is_global, "`*` then whitespace");
    }

    #[test]
    fn long_lines_are_cut_and_counted() {
        let mut body = b"user-agent: *\ndisallow: /".to_vec();
        body.resize(body.len() + MAX_LINE_BYTES, b'a');
        body.extend_from_slice(b"tail\nallow: /b\n");
        let robots = RobotsTxt::parse(&body, Mode::Rfc9309);
        assert_eq!(robots.report.long_lines, 1);
        let rules = &robots.groups[0].rules;
        assert_eq!(rules[0].value.len(), MAX_LINE_BYTES - b"disallow: ".len());
        assert!(rules[0].value.iter().skip(1).all(|&b| b == b'a'));
        assert_eq!(&*rules[1].value, b"/b", "the next line is read whole");
    }

    #[test]
    fn allow_of_an_index_page_also_allows_its_directory() {
        let robots = RobotsTxt::parse(
            b"user-agent: *\nallow: /d/index.html\nallow: /e/ind%65x.htm\n\
              allow: /f/index.php\ndisallow: /g/index.html\n",
            Mode::Rfc9309,
        );
        let rules: Vec<(RuleKind, &[u8])> = robots.groups[0]
            .rules
            .iter()
            .map(|r| (r.kind, &*r.value))
            .collect();
        assert_eq!(
            rules,
            vec![
                (RuleKind::Allow, &b"/d/index.html"[..]),
                (RuleKind::Allow, b"/d/$"),
                (RuleKind::Allow, b"/e/ind%65x.htm"),
                (RuleKind::Allow, b"/e/$"),
                (RuleKind::Allow, b"/f/index.php"),
                (RuleKind::Disallow, b"/g/index.html"),
            ]
        );
    }

    #[test]
    fn product_token_stops_at_first_other_character() {
        assert_eq!(&*product_token(b"Trawl/1.0 (+https://x)"), b"trawl");
        assert_eq!(&*product_token(b"Foo_Bar-Baz2"), b"foo_bar-baz");
        assert_eq!(&*product_token(b"*"), b"");
    }

    #[test]
    fn cut_last_line_is_dropped() {
        let mut body = b"user-agent: *\n".to_vec();
        while body.len() < MAX_ROBOTS_BYTES - 5 {
            body.extend_from_slice(b"allow: /a\n");
        }
        body.extend_from_slice(b"disallow: /private\n");
        let robots = RobotsTxt::parse(&body, Mode::Rfc9309);
        assert!(robots.report.truncated);
        assert!(robots.groups[0]
            .rules
            .iter()
            .all(|r| r.kind == RuleKind::Allow));
    }

    #[test]
    fn bom_and_partial_bom_are_skipped_only_at_the_start() {
        for body in [
            &b"\xEF\xBB\xBFuser-agent: *\ndisallow: /x\n"[..],
            b"\xEF\xBBuser-agent: *\ndisallow: /x\n",
            b"\xEFuser-agent: *\ndisallow: /x\n",
        ] {
            let robots = RobotsTxt::parse(body, Mode::Rfc9309);
            assert_eq!(robots.groups.len(), 1, "{body:?}");
            assert_eq!(robots.groups[0].rules.len(), 1);
        }
        let robots = RobotsTxt::parse(
            b"\n\xEF\xBB\xBFuser-agent: *\ndisallow: /x\n",
            Mode::Rfc9309,
        );
        assert!(
            robots.groups.is_empty(),
            "a BOM after the start is not skipped"
        );
    }

    #[test]
    fn crawl_delay_values() {
        assert_eq!(parse_delay(b"10"), Some(Duration::from_secs(10)));
        assert_eq!(parse_delay(b"0.5"), Some(Duration::from_millis(500)));
        assert_eq!(parse_delay(b"-1"), None);
        assert_eq!(parse_delay(b"soon"), None);
        assert_eq!(parse_delay(b""), None);
    }
}
