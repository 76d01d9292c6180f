//! Where the port deviates from Google's C++ parser, and why the oracle works around it.

use crate::oracle::{google_allows, port_allows, trawl_allows, wildcard_matches};

#[test]
fn port_deviation_wildcard_matcher() {
    // robots.cc keeps every path offset a pattern prefix can end at; the port's
    // `Vec::insert` (where the C++ assigns `pos[i] = ...`) shifts the list, so after
    // the first offset that matches only copies of it survive: a `*` commits to the
    // first occurrence of the next byte.
    let robots = "user-agent: *\ndisallow: /*/feed/\n";
    let path = "/en/x/feed/a";
    assert!(wildcard_matches(path.as_bytes(), b"/*/feed/"));
    assert!(!google_allows(robots, path), "the C++ matcher disallows");
    assert!(port_allows(robots, path), "the port misses the match");
    assert!(!trawl_allows(robots.as_bytes(), path));
}

#[test]
fn port_deviation_bom_not_skipped() {
    // robots.cc skips the BOM bytes EF BB BF; the port compares each *character* to
    // those bytes, so U+FEFF stays in the first line and `user-agent` is not read.
    let robots = "\u{FEFF}user-agent: *\ndisallow: /x\n";
    assert!(port_allows(robots, "/x"), "the port loses the first line");
    assert!(!google_allows(robots, "/x"));
    assert!(!trawl_allows(robots.as_bytes(), "/x"));
}

#[test]
fn port_deviation_stray_percent_dropped() {
    // When a value needs escaping (here for `é`), robots.cc copies a `%` that is not
    // followed by two hex digits; the port drops the `%` and the two bytes after it,
    // so `/%zzé` becomes `/%C3%A9`.
    let robots = "user-agent: *\ndisallow: /%zzé\n";
    assert!(
        !port_allows(robots, "/%C3%A9"),
        "the port's rule lost `%zz`"
    );
    assert!(trawl_allows(robots.as_bytes(), "/%C3%A9"));
    assert!(!trawl_allows(robots.as_bytes(), "/%25zz%C3%A9"));
}

#[test]
fn port_deviation_leading_space_without_colon() {
    // robots.cc strips the line before looking for the whitespace separator; the port
    // does not, so a colon-less line that starts with a space gets an empty key.
    let robots = "user-agent: *\n  disallow /x\n";
    assert!(port_allows(robots, "/x"), "the port ignores the line");
    assert!(!trawl_allows(robots.as_bytes(), "/x"));
}

#[test]
fn port_deviation_unicode_whitespace_trimmed() {
    // robots.cc strips ASCII whitespace only; the port uses `str::trim`, which also
    // strips U+00A0 and the other Unicode spaces, so `/x\u{a0}` loses its last byte.
    let robots = "user-agent: *\ndisallow: /x\u{a0}\n";
    assert!(!port_allows(robots, "/x"), "the port's rule became /x");
    assert!(trawl_allows(robots.as_bytes(), "/x"));
    assert!(!trawl_allows(robots.as_bytes(), "/x%C2%A0"));
}
