//! Page-level robots directives: `<meta name="robots">` and `X-Robots-Tag`.
//!
//! Both carry the same comma-separated directive list (`noindex, nofollow`). Every
//! source can only restrict: the result is the conjunction of all of them, so the most
//! restrictive wins, which is also the conservative answer for contradictory lists
//! (`index, noindex`) that the Robots FAQ leaves undefined.

#![deny(clippy::indexing_slicing)]

use super::parse::product_token;

/// What a page allows the crawler to do with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PageDirectives {
    /// The page may be kept/indexed (`noindex` clears it).
    pub index: bool,
    /// Its links may be followed (`nofollow` clears it).
    pub follow: bool,
    /// It may be archived (`noarchive` clears it).
    pub archive: bool,
}

impl Default for PageDirectives {
    fn default() -> Self {
        PageDirectives::ALL
    }
}

/// Directives that take a `name: value` argument, so their colon is not an agent
/// prefix.
const COLON_DIRECTIVES: [&str; 4] = [
    "unavailable_after",
    "max-snippet",
    "max-image-preview",
    "max-video-preview",
];

impl PageDirectives {
    /// No restriction (`all`, or nothing said).
    pub const ALL: PageDirectives = PageDirectives {
        index: true,
        follow: true,
        archive: true,
    };

    /// `none`: neither index nor follow.
    pub const NONE: PageDirectives = PageDirectives {
        index: false,
        follow: false,
        archive: true,
    };

    /// The directives of a `<meta name="robots" content="...">` value.
    pub fn from_meta_content(content: &str) -> PageDirectives {
        let mut d = PageDirectives::ALL;
        d.apply_list(content);
        d
    }

    /// Whether a `<meta name=...>` applies to a crawler with this `User-Agent`:
    /// `robots` applies to all, a name equal to the crawler's product token to it.
    pub fn meta_name_applies(name: &str, agent: &str) -> bool {
        let name = name.trim();
        name.eq_ignore_ascii_case("robots")
            || (!name.is_empty()
                && *product_token(agent.as_bytes()) == *name.to_ascii_lowercase().as_bytes())
    }

    /// The directives of a response's `X-Robots-Tag` header values (one per header
    /// line, in order) for the crawler `agent`. A value may start with an agent prefix
    /// (`trawl: nofollow`), which limits the directives after it, up to the next
    /// prefix, to that crawler; unprefixed directives apply to every crawler.
    pub fn from_x_robots_tag<'a>(
        values: impl IntoIterator<Item = &'a str>,
        agent: &str,
    ) -> PageDirectives {
        let token = product_token(agent.as_bytes());
        let mut d = PageDirectives::ALL;
        for value in values {
            // Each header line starts out addressed to everyone.
            let mut applies = true;
            for item in value.split(',') {
                let mut item = item.trim();
                if let Some((head, tail)) = item.split_once(':') {
                    let head_lower = head.trim().to_ascii_lowercase();
                    if !COLON_DIRECTIVES.contains(&head_lower.as_str()) {
                        applies = *product_token(head_lower.as_bytes()) == *token
                            && !head_lower.trim().is_empty();
                        item = tail.trim();
                    }
                }
                if applies {
                    d.apply_list(item);
                }
            }
        }
        d
    }

    /// The most restrictive combination of two sets (meta tag and header).
    pub fn restrict(self, other: PageDirectives) -> PageDirectives {
        PageDirectives {
            index: self.index && other.index,
            follow: self.follow && other.follow,
            archive: self.archive && other.archive,
        }
    }

    /// Applies a directive list, case-insensitively. Unknown tokens (`nosnippet`,
    /// dates of `unavailable_after`) are ignored; `index`, `follow` and `all` cannot
    /// undo a restriction.
    fn apply_list(&mut self, list: &str) {
        for token in list.split([',', ' ', '\t', ';']).filter(|t| !t.is_empty()) {
            match token.to_ascii_lowercase().as_str() {
                "none" => {
                    self.index = false;
                    self.follow = false;
                }
                "noindex" => self.index = false,
                "nofollow" => self.follow = false,
                "noarchive" => self.archive = false,
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn pd(index: bool, follow: bool, archive: bool) -> PageDirectives {
        PageDirectives {
            index,
            follow,
            archive,
        }
    }

    #[test]
    fn meta_content_table() {
        let cases = [
            ("", pd(true, true, true)),
            ("all", pd(true, true, true)),
            ("index, follow", pd(true, true, true)),
            ("NOINDEX", pd(false, true, true)),
            ("noindex,nofollow", pd(false, false, true)),
            ("NoFollow", pd(true, false, true)),
            ("none", pd(false, false, true)),
            ("noarchive", pd(true, true, false)),
            ("index, noindex", pd(false, true, true)),
            ("noindex, index", pd(false, true, true)),
            ("all, none", pd(false, false, true)),
            ("nosnippet, max-snippet:20", pd(true, true, true)),
            (
                "  noindex ,  nofollow , noarchive ",
                pd(false, false, false),
            ),
        ];
        for (content, want) in cases {
            assert_eq!(
                PageDirectives::from_meta_content(content),
                want,
                "{content:?}"
            );
        }
    }

    #[test]
    fn x_robots_tag_table() {
        let agent = "trawl/0.1 (+https://example)";
        let cases: &[(&[&str], PageDirectives)] = &[
            (&["noindex"], pd(false, true, true)),
            (&["trawl: nofollow"], pd(true, false, true)),
            (&["Trawl: NOFOLLOW, noarchive"], pd(true, false, false)),
            (&["otherbot: noindex, nofollow"], pd(true, true, true)),
            (
                &["otherbot: noindex", "trawl: nofollow"],
                pd(true, false, true),
            ),
            (&["noarchive", "otherbot: none"], pd(true, true, false)),
            (
                &["unavailable_after: Friday, 25-Jun-2010 15:00:00 EST"],
                pd(true, true, true),
            ),
            (
                &["unavailable_after: 25 Jun 2010 15:00:00 PST, noindex"],
                pd(false, true, true),
            ),
            (
                &["otherbot: noindex, trawl: noarchive"],
                pd(true, true, false),
            ),
            (&["none"], pd(false, false, true)),
            (&[": noindex"], pd(true, true, true)),
        ];
        for (values, want) in cases {
            let got = PageDirectives::from_x_robots_tag(values.iter().copied(), agent);
            assert_eq!(got, *want, "{values:?}");
        }
    }

    #[test]
    fn meta_and_header_most_restrictive_wins() {
        let meta = PageDirectives::from_meta_content("noindex");
        let header = PageDirectives::from_x_robots_tag(["trawl: nofollow"], "trawl");
        assert_eq!(meta.restrict(header), pd(false, false, true));
    }

    #[test]
    fn meta_names() {
        assert!(PageDirectives::meta_name_applies("ROBOTS", "trawl"));
        assert!(PageDirectives::meta_name_applies("Trawl", "trawl/1.0"));
        assert!(!PageDirectives::meta_name_applies("googlebot", "trawl"));
        assert!(!PageDirectives::meta_name_applies("", ""));
    }
}
