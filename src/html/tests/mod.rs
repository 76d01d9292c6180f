//! Extractor table tests (HTML Standard attribute parsing, base, meta); the property
//! tests against html5ever and a naive deduplication are in the submodules.

use super::*;

fn base() -> Url {
    Url::parse("http://example.com/dir/page.html").expect("base")
}

fn urls(page: &PageLinks) -> Vec<String> {
    page.links
        .iter()
        .map(|l| match &l.url {
            Ok(u) => u.to_string(),
            Err(r) => format!("!{}", r.code()),
        })
        .collect()
}

fn extract(html: &str) -> PageLinks {
    Links::extract(&base(), html.as_bytes(), None)
}

#[test]
fn extracts_the_link_elements() {
    let page = extract(
        "<a href=a1>x</a><AREA HREF='/a2'><link rel=stylesheet href=s.css>\
         <frame src=f><iframe src=//other.example/i></iframe><img src=i.png>\
         <a name=x>no href</a><link rel=icon>",
    );
    assert_eq!(
        urls(&page),
        [
            "http://example.com/dir/a1",
            "http://example.com/a2",
            "http://example.com/dir/s.css",
            "http://example.com/dir/f",
            "http://other.example/i",
        ]
    );
    let tags: Vec<(&str, &str)> = page
        .links
        .iter()
        .map(|l| (l.tag.name(), l.attr.name()))
        .collect();
    assert_eq!(
        tags,
        [
            ("a", "href"),
            ("area", "href"),
            ("link", "href"),
            ("frame", "src"),
            ("iframe", "src")
        ]
    );
    assert_eq!(page.links[2].rel.as_deref(), Some("stylesheet"));
    let with_images = Links::extract_with(
        &base(),
        b"<img src=i.png><image src=j.png>",
        None,
        &ExtractOptions {
            include_images: true,
            ..ExtractOptions::default()
        },
    );
    assert_eq!(
        urls(&with_images),
        [
            "http://example.com/dir/i.png",
            "http://example.com/dir/j.png"
        ]
    );
    assert!(with_images.links.iter().all(|l| l.tag == Tag::Img));
}

#[test]
fn attribute_values_per_html_standard() {
    for (html, expected) in [
        // whitespace stripped, tabs and newlines removed (URL parser)
        ("<a href='  \n /a\tb\nc \r\n '>", "http://example.com/abc"),
        (
            "<a href=\"/x?a=1&amp;b=2\">",
            "http://example.com/x?a=1&b=2",
        ),
        (
            "<a href=\"/x?a=1&copy=2\">",
            "http://example.com/x?a=1&copy=2",
        ),
        (
            "<a href=\"/x?a=1&copy;=2\">",
            "http://example.com/x?a=1%C2%A9=2",
        ),
        ("<a href=\"/x?a=1&copy\">", "http://example.com/x?a=1%C2%A9"),
        ("<a href=/&#x41;&#66;&#0067;>", "http://example.com/ABC"),
        ("<a href=/&#128;>", "http://example.com/%E2%82%AC"),
        ("<a href='/a&lt;b&gt;'>", "http://example.com/a%3Cb%3E"),
        ("<a href='/caf\u{e9}'>", "http://example.com/caf%C3%A9"),
        ("<a href=\"/\u{0}\">", "http://example.com/%EF%BF%BD"),
        ("<a href=/a href=/b>", "http://example.com/a"),
        (
            "<a title=x href=/first HREF=/second>",
            "http://example.com/first",
        ),
        ("<a\nhref\n=\n'/nl'\n>", "http://example.com/nl"),
        ("<a href=#frag>", "http://example.com/dir/page.html"),
        ("<a href=''>", "http://example.com/dir/page.html"),
        ("<a href>", "http://example.com/dir/page.html"),
        ("<a href='javascript:go()'>", "!unsupported_scheme"),
        ("<a href='mailto:x@y'>", "!unsupported_scheme"),
        ("<a href='http://'>", "!invalid_url"),
        ("<a href=///other.example/p>", "http://other.example/p"),
    ] {
        assert_eq!(urls(&extract(html)), [expected], "{html:?}");
    }
}

#[test]
fn skipped_regions() {
    let page = extract(
        "<!-- <a href=c1> --><script>var s='<a href=\"s1\">';</script>\
         <style>a[href='<a href=st>']{}</style><textarea><a href=t1></textarea>\
         <title><a href=ti></title><![CDATA[x]]><a href=ok1>\
         <script><!--<script></script><a href=s2>--></script><a href=ok2>",
    );
    assert_eq!(
        urls(&page),
        ["http://example.com/dir/ok1", "http://example.com/dir/ok2"]
    );
}

#[test]
fn base_href_applies_to_later_links() {
    let page = extract(
        "<a href=before><base href='http://cdn.example/root/'><base href='http://second.example/'>\
         <a href=after><a href='/abs'>",
    );
    assert_eq!(
        urls(&page),
        [
            "http://example.com/dir/before",
            "http://cdn.example/root/after",
            "http://cdn.example/abs"
        ]
    );
    assert_eq!(page.base.as_str(), "http://cdn.example/root/");
    // A relative base resolves against the page URL; a bad first base is still first.
    let page = extract("<base href=sub/><a href=x>");
    assert_eq!(page.base.as_str(), "http://example.com/dir/sub/");
    let page = extract("<base href='http://['><base href='http://b.example/'><a href=x>");
    assert_eq!(page.base.as_str(), "http://example.com/dir/page.html");
    assert_eq!(urls(&page), ["http://example.com/dir/x"]);
    let page = extract("<base target=_top><base href='//b.example/'><a href=x>");
    assert_eq!(urls(&page), ["http://b.example/x"]);
}

#[test]
fn rel_nofollow() {
    let page = extract(
        "<a href=a rel=nofollow><a href=b rel='NoFollow noopener'><a href=c rel=nofollowx>\
         <link rel='nofollow stylesheet' href=d><a href=e>",
    );
    let flags: Vec<bool> = page.links.iter().map(|l| l.nofollow).collect();
    assert_eq!(flags, [true, true, false, true, false]);
}

#[test]
fn robots_meta() {
    let robots = |html: &str| extract(html).robots;
    assert_eq!(robots("<p>"), RobotsMeta::default());
    let r = robots("<META NAME=ROBOTS CONTENT='NOINDEX'>");
    assert!(!r.index && r.follow && r.archive);
    let r = robots("<meta name=robots content='index,follow'><meta name=trawl content=nofollow>");
    assert!(r.index && !r.follow);
    let r = robots("<meta name=googlebot content=none><meta name=' robots ' content=noarchive>");
    assert!(r.index && r.follow && !r.archive);
    let r = robots("<meta name=robots content=none><meta name=robots content=all>");
    assert!(!r.index && !r.follow);
    let r = robots("<meta content=noindex name=robots>");
    assert!(!r.index);
    let r = robots("<!-- <meta name=robots content=noindex> -->");
    assert!(r.index);
}

#[test]
fn meta_refresh_and_charset() {
    let page = extract(
        "<meta http-equiv=Refresh content='5; URL=/next'><meta http-equiv=refresh content='0;url=/second'>\
         <meta http-equiv=refresh content='3'>",
    );
    assert_eq!(urls(&page), ["http://example.com/next"]);
    assert_eq!(page.links[0].tag, Tag::Meta);
    assert_eq!(
        page.refresh.as_ref().map(Url::as_str),
        Some("http://example.com/next")
    );
    let page = extract("<meta charset=' Shift_JIS '>");
    assert_eq!(page.meta_charset, Some(encoding_rs::SHIFT_JIS));
    let page = extract("<meta http-equiv=content-type content='text/html; charset=iso-8859-1'>");
    assert_eq!(page.meta_charset, Some(encoding_rs::WINDOWS_1252));
    let page = extract("<meta charset=utf-16le>");
    assert_eq!(page.meta_charset, Some(encoding_rs::UTF_8));
}

#[test]
fn legacy_encodings() {
    // windows-1252 page: the path is UTF-8, the query windows-1252.
    let html = b"<a href='/caf\xe9?q=caf\xe9&amp;r=&#x20AC;'>";
    let page = Links::extract(&base(), html, Some(encoding_rs::WINDOWS_1252));
    assert_eq!(urls(&page), ["http://example.com/caf%C3%A9?q=caf%E9&r=%80"]);
    // The meta charset applies when the caller knows none.
    let html = b"<meta charset=windows-1252><a href='/?q=\xe9'>";
    let page = Links::extract(&base(), html, None);
    assert_eq!(urls(&page), ["http://example.com/?q=%E9"]);
    assert_eq!(page.encoding, encoding_rs::WINDOWS_1252);
    // ... but not over the caller's charset.
    let page = Links::extract(&base(), html, Some(encoding_rs::UTF_8));
    assert_eq!(urls(&page), ["http://example.com/?q=%EF%BF%BD"]);
    // Shift_JIS query, unmappable characters as escaped references.
    let html = "<a href='/?q=\u{3042}&#x1F600;'>";
    let (sjis, _, _) = encoding_rs::SHIFT_JIS.encode(html);
    let page = Links::extract(&base(), &sjis, Some(encoding_rs::SHIFT_JIS));
    assert_eq!(urls(&page), ["http://example.com/?q=%82%A0%26%23128512%3B"]);
    // UTF-16 with a BOM: decoded first, URLs encoded as UTF-8.
    let mut utf16 = vec![0xFF, 0xFE];
    for unit in "<a href='/\u{e9}?q=\u{e9}'>".encode_utf16() {
        utf16.extend_from_slice(&unit.to_le_bytes());
    }
    let page = Links::extract(&base(), &utf16, None);
    assert_eq!(urls(&page), ["http://example.com/%C3%A9?q=%C3%A9"]);
}

#[test]
fn caps() {
    let html: String = (0..10).map(|i| format!("<a href=x{i}>")).collect();
    let opts = ExtractOptions {
        max_links: 3,
        ..ExtractOptions::default()
    };
    let page = Links::extract_with(&base(), html.as_bytes(), None, &opts);
    assert_eq!(page.links.len(), 3);
    assert_eq!(
        page.links_dropped, 7,
        "every distinct link past the cap is counted"
    );
    assert!(page.is_truncated());
    // Rejected values have their own budget: junk does not crowd out links.
    let junk: String = (0..10).map(|i| format!("<a href=mailto:{i}@x>")).collect();
    let page = Links::extract_with(&base(), format!("{junk}{html}").as_bytes(), None, &opts);
    assert_eq!(page.links.iter().filter(|l| l.url.is_ok()).count(), 3);
    assert_eq!(page.links.iter().filter(|l| l.url.is_err()).count(), 3);
    assert_eq!((page.links_dropped, page.rejects_dropped), (7, 7));
    // Repeats of one link never reach a cap.
    let page = extract(&"<a href=x>".repeat(60_000));
    assert_eq!(page.links.len(), 1);
    assert_eq!(page.links_dropped, 0);
    assert!(!page.is_truncated());

    let long = format!("<a href='/{}'><a href=/short>", "x".repeat(70_000));
    let page = extract(&long);
    assert!(page.links[0].url.is_ok(), "64 KB+ attributes are read");
    assert_eq!(page.long_attributes, 0);
    let opts = ExtractOptions {
        max_attribute_bytes: 1000,
        ..ExtractOptions::default()
    };
    let page = Links::extract_with(&base(), long.as_bytes(), None, &opts);
    assert_eq!(
        urls(&page),
        ["!attribute_too_long", "http://example.com/short"]
    );
    assert_eq!(page.long_attributes, 1);
    // A long `<base href>` and a long refresh target are counted too.
    let long_base = format!(
        "<base href='/{0}'><meta http-equiv=refresh content='0; url=/{0}'><a href=a>",
        "y".repeat(2000)
    );
    let page = Links::extract_with(&base(), long_base.as_bytes(), None, &opts);
    assert_eq!(page.long_attributes, 2);
    assert_eq!(
        urls(&page),
        ["!attribute_too_long", "http://example.com/dir/a"]
    );

    let opts = ExtractOptions {
        max_scan_bytes: 20,
        ..ExtractOptions::default()
    };
    let page = Links::extract_with(&base(), b"<a href=/one><a href=/two>", None, &opts);
    assert_eq!(urls(&page), ["http://example.com/one"]);
    assert_eq!(page.unscanned_bytes, 6);
    assert!(page.is_truncated());
}

/// Duplicates merge before the links cap: 20,000 hrefs, 10,000 of them distinct, give
/// 10,000 links (the old extractor stopped at 5,000 hrefs, duplicates included).
#[test]
fn duplicates_merge_before_the_cap() {
    let mut html = String::new();
    for i in 0..10_000 {
        html.push_str(&format!("<a href='/p/{i}.html#top'>{i}</a>"));
    }
    for i in 0..10_000 {
        html.push_str(&format!("<a href=\"../p/{i}.html\">again</a>"));
    }
    let page = extract(&html);
    assert_eq!(page.links.len(), 10_000);
    assert_eq!(page.links_dropped, 0);
    assert_eq!(
        page.links[9_999].url.as_ref().map(Url::as_str),
        Ok("http://example.com/p/9999.html")
    );
    let keys = Links::extract_keys(&base(), html.as_bytes(), None, &ExtractOptions::default());
    assert_eq!(keys.links.len(), 10_000);
    // A smaller cap keeps the first distinct links and counts the rest, not the
    // duplicates of kept links.
    let opts = ExtractOptions {
        max_links: 4_000,
        ..ExtractOptions::default()
    };
    let page = Links::extract_keys(&base(), html.as_bytes(), None, &opts);
    assert_eq!(page.links.len(), 4_000);
    assert_eq!(page.links_dropped, 6_000);
    assert_eq!(
        page.links[3_999].url.as_deref(),
        Ok("http://example.com/p/3999.html")
    );
}

#[test]
fn a_followable_occurrence_wins_over_nofollow() {
    let page = extract(
        "<a rel=nofollow href=/x>1</a><link rel='nofollow' href=/x>\
         <a rel='next' href=/x#f>2</a><a rel=nofollow href=/x>3</a>\
         <a rel=nofollow href=/y><a href=javascript:1><a href=javascript:1><a href=javascript:2>",
    );
    let got: Vec<(&str, Option<&str>, bool, String)> = page
        .links
        .iter()
        .map(|l| {
            let url = match &l.url {
                Ok(u) => u.to_string(),
                Err(r) => format!("!{}", r.code()),
            };
            (l.tag.name(), l.rel.as_deref(), l.nofollow, url)
        })
        .collect();
    assert_eq!(
        got,
        [
            ("a", Some("next"), false, "http://example.com/x".to_owned()),
            (
                "a",
                Some("nofollow"),
                true,
                "http://example.com/y".to_owned()
            ),
            ("a", None, false, "!unsupported_scheme".to_owned()),
            ("a", None, false, "!unsupported_scheme".to_owned()),
        ],
        "rejections merge per raw value"
    );
}

/// WHATWG URL Standard: a base URL with an opaque path ("cannot-be-a-base":
/// `javascript:`, `mailto:`, `data:`) fails every relative reference (the basic
/// URL parser's "no scheme state" returns failure unless the input is only a
/// fragment); a hierarchical non-http base gives non-http links. HTML's frozen base
/// URL keeps such a base (only a parse failure falls back to the page URL).
#[test]
fn non_hierarchical_base_makes_relative_links_unresolvable() {
    for base_href in [
        "javascript:void(0)",
        "mailto:webmaster@example.com",
        "data:text/html,x",
    ] {
        let page = extract(&format!(
            "<a href=before><base href='{base_href}'><a href=rel><a href=/abs><a href=?q>\
             <a href=#frag><a href=//other.example/p><a href=https://example.org/ok>"
        ));
        assert_eq!(page.base.as_str(), base_href);
        // `rel`, `/abs`, `?q` and even `//other.example/p` fail ("no scheme state":
        // base with an opaque path and input not starting with `#`); `#frag` gives
        // the base itself with a fragment, not http.
        assert_eq!(
            urls(&page),
            [
                "http://example.com/dir/before",
                "!invalid_url",
                "!invalid_url",
                "!invalid_url",
                "!unsupported_scheme",
                "!invalid_url",
                "https://example.org/ok",
            ],
            "base {base_href}"
        );
        // The keys API agrees.
        let keys = Links::extract_keys(
            &base(),
            format!("<base href='{base_href}'><a href=rel>").as_bytes(),
            None,
            &ExtractOptions::default(),
        );
        assert!(matches!(keys.links[0].url, Err(Reject::InvalidUrl(_))));
    }
    let page = extract("<base href=ftp://files.example/pub/><a href=x><a href=http://h.example/>");
    assert_eq!(urls(&page), ["!unsupported_scheme", "http://h.example/"]);
    // A base that fails to parse leaves the page URL as the base.
    let page = extract("<base href='http://[bad/'><a href=x>");
    assert_eq!(urls(&page), ["http://example.com/dir/x"]);
    // A base of dots only parses (WHATWG) but names no host: links under it are
    // rejected, not moved to the page's host.
    let page = extract("<base href='http://.../d/'><a href=x><a href=http://h.example/>");
    assert_eq!(urls(&page), ["!invalid_url", "http://h.example/"]);
}

#[test]
fn hosts_of_dots_are_rejected() {
    let page = extract(
        "<a href=http://./><a href=http://.../x><a href=//../y><a href='http://%2e/'>\
         <a href=http://example.com./z>",
    );
    assert_eq!(
        urls(&page),
        [
            "!invalid_url",
            "!invalid_url",
            "!invalid_url",
            "!invalid_url",
            "http://example.com/z"
        ],
    );
}

#[test]
fn fuzz_entry_point_survives_odd_input() {
    for data in [
        &b""[..],
        b"<",
        b"<a",
        b"<a href='",
        b"<!--",
        b"<script><!--<script>",
        b"<svg><![CDATA[",
        b"\xff\xfe<\x00a\x00",
        b"<a href=&#xFFFFFFFFFFFF;>",
        b"<meta http-equiv=refresh content='0;url=\xff'>",
    ] {
        fuzz_extract(data);
    }
}

mod dedup;
mod vs_html5ever;
