//! Extractor table tests (HTML Standard attribute parsing, base, meta) and the
//! property test against html5ever.

use std::collections::BTreeSet;

use proptest::prelude::*;

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

/// The acceptance case of issue 11: 20,000 hrefs, 10,000 of them distinct, give
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

// ---------------------------------------------------------------------------------
// Property test: our scanner against html5ever's full tree builder.

/// A link-bearing element as both sides see it: tag, then the relevant attributes.
type Seen = BTreeSet<String>;

/// Our side: the scanner with a recording visitor, values decoded as the extractor
/// does, CR normalized as the HTML input stream does.
fn ours(html: &str) -> Seen {
    #[derive(Default)]
    struct Rec<'a> {
        out: Seen,
        tag: Option<&'static str>,
        attrs: Vec<(String, &'a [u8])>,
    }
    impl<'a> Visitor<'a> for Rec<'a> {
        fn start_tag(&mut self, _name: &'a [u8], class: TagClass) -> bool {
            self.tag = match class {
                TagClass::A => Some("a"),
                TagClass::Area => Some("area"),
                TagClass::Link => Some("link"),
                TagClass::Frame => Some("frame"),
                TagClass::Iframe => Some("iframe"),
                TagClass::Img => Some("img"),
                TagClass::Base => Some("base"),
                TagClass::Meta => Some("meta"),
                _ => None,
            };
            self.attrs.clear();
            self.tag.is_some()
        }
        fn attribute(&mut self, name: &'a [u8], value: &'a [u8]) {
            let name = String::from_utf8_lossy(name).to_ascii_lowercase();
            if !self.attrs.iter().any(|(n, _)| *n == name) {
                self.attrs.push((name, value));
            }
        }
        fn start_tag_done(&mut self) -> ControlFlow<()> {
            if let Some(tag) = self.tag.take() {
                let get = |n: &str| {
                    self.attrs.iter().find(|(a, _)| a == n).map(|(_, v)| {
                        decode_attribute(&String::from_utf8_lossy(v))
                            .replace("\r\n", "\n")
                            .replace('\r', "\n")
                    })
                };
                if let Some(s) = describe(tag, get) {
                    self.out.insert(s);
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut rec = Rec::default();
    scan::scan(html.as_bytes(), &mut rec);
    rec.out
}

/// One line per element with a value we extract.
fn describe(tag: &str, get: impl Fn(&str) -> Option<String>) -> Option<String> {
    let attrs: &[&str] = match tag {
        "a" | "area" | "link" => &["href", "rel"],
        "frame" | "iframe" | "img" => &["src"],
        "base" => &["href"],
        "meta" => &["name", "http-equiv", "content", "charset"],
        _ => return None,
    };
    let key = match tag {
        "frame" | "iframe" | "img" => "src",
        "meta" => "content",
        _ => "href",
    };
    if tag != "meta" && get(key).is_none() {
        return None;
    }
    let mut s = tag.to_owned();
    for a in attrs {
        if let Some(v) = get(a) {
            s.push_str(&format!(" {a}={v:?}"));
        }
    }
    Some(s)
}

/// html5ever's side: a full parse (scripting disabled, as for a crawler), then a walk
/// of the tree including template contents.
fn theirs(html: &str) -> Seen {
    use html5ever::tendril::TendrilSink;
    use markup5ever_rcdom::{Handle, NodeData, RcDom};

    fn walk(node: &Handle, out: &mut Seen) {
        if let NodeData::Element {
            name,
            attrs,
            template_contents,
            ..
        } = &node.data
        {
            let html_ns = &*name.ns == "http://www.w3.org/1999/xhtml";
            let tag: &str = &name.local;
            let relevant = match tag {
                "a" | "area" | "link" | "frame" | "iframe" | "img" => true,
                "base" | "meta" => html_ns,
                _ => false,
            };
            if relevant {
                let attrs = attrs.borrow();
                let get = |n: &str| {
                    attrs
                        .iter()
                        .find(|a| a.name.ns.is_empty() && &*a.name.local == n)
                        .map(|a| a.value.to_string())
                };
                if let Some(s) = describe(tag, get) {
                    out.insert(s);
                }
            }
            if let Some(contents) = template_contents.borrow().as_ref() {
                walk(contents, out);
            }
        }
        for child in node.children.borrow().iter() {
            walk(child, out);
        }
    }

    let opts = html5ever::ParseOpts {
        tree_builder: html5ever::tree_builder::TreeBuilderOpts {
            scripting_enabled: false,
            ..Default::default()
        },
        ..Default::default()
    };
    let dom = html5ever::parse_document(RcDom::default(), opts).one(html);
    let mut out = Seen::new();
    walk(&dom.document, &mut out);
    out
}

fn pick(items: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop::sample::select(items).prop_map(str::to_owned)
}

fn attribute() -> impl Strategy<Value = String> {
    let names = pick(&[
        "href",
        "HREF",
        "src",
        "rel",
        "name",
        "content",
        "http-equiv",
        "charset",
        "title",
        "class",
        "data-x",
        "=x",
        "href",
        "src",
    ]);
    let values = pick(&[
        "x",
        "/p",
        "http://h/a?b=1&c=2",
        "&amp;",
        "a&copy=1",
        "a&copy;b",
        "&copy",
        "&notit;",
        "&#x41;&#66",
        "&#x80;&#0;",
        "a b",
        " spaced ",
        "tab\tnl\nx\r\ny",
        "a>b",
        "",
        "nofollow",
        "NoFollow noopener",
        "robots",
        "noindex, nofollow",
        "refresh",
        "0; url=/r",
        "text/html; charset=windows-1252",
        "caf\u{e9}",
        "&lt;a href=no&gt;",
        "&Aacute&AElig;",
        "a\"b",
        "a'b",
        "a=b",
        "&#",
        "&;",
        "/x/../y",
        "\u{0}",
        "<!--",
        "-->",
        "</a>",
    ]);
    let quotes = pick(&["\"", "'", "", "none"]);
    (names, values, quotes).prop_map(|(n, v, q)| match q.as_str() {
        "none" => n,
        "" => format!("{n}={v}"),
        q => format!("{n}={q}{v}{q}"),
    })
}

fn start_tag(names: &'static [&'static str]) -> BoxedStrategy<String> {
    let seps = pick(&[" ", "\n", "\t", "/", " / ", "  ", "\x0c"]);
    let ends = pick(&[">", "/>", " >", "\n>"]);
    (
        pick(names),
        prop::collection::vec((seps, attribute()), 0..5),
        ends,
    )
        .prop_map(|(name, attrs, end)| {
            let mut s = format!("<{name}");
            for (sep, attr) in attrs {
                // The first separator must be whitespace or `/` to end the name.
                s.push_str(if sep.is_empty() { " " } else { &sep });
                s.push_str(&attr);
            }
            s.push_str(&end);
            s
        })
        .boxed()
}

fn fragment() -> impl Strategy<Value = String> {
    let link_tags = start_tag(&[
        "a", "A", "area", "link", "LINK", "iframe", "img", "image", "IMG", "base", "meta", "Meta",
    ]);
    let other_tags = start_tag(&[
        "div", "span", "p", "b", "i", "ul", "li", "h1", "section", "em", "br", "hr", "input",
        "table", "tr", "td", "template", "noscript", "body", "head", "html",
    ]);
    let raw = (
        pick(&[
            "script", "style", "textarea", "title", "xmp", "noembed", "noframes", "iframe",
            "SCRIPT",
        ]),
        prop::collection::vec(
            pick(&[
                "x",
                "<a href=inraw>",
                "</scriptx>",
                "<!--",
                "-->",
                "<script>",
                "</script >",
                "'</'",
                "<",
                "-",
                "--",
                "</styl",
                "</title",
                "<!-- <script> ",
            ]),
            0..6,
        ),
        pick(&["</{}>", "</{} x='>'>", "</{}\n>", "</{}/>", "</{}"]),
    )
        .prop_map(|(name, body, close)| {
            let close = close.replace("{}", &name.to_ascii_uppercase());
            format!("<{name}>{}{close}", body.concat())
        });
    let foreign = (
        pick(&["svg", "math"]),
        prop::collection::vec(
            prop_oneof![
                pick(&[
                    "<a href=svglink></a>",
                    "<rect/>",
                    "<g><rect></rect></g>",
                    "<style><a href=svgstyle></style>",
                    "<![CDATA[ <a href=cdata> ]]>",
                    "<![CDATA[ x > y",
                    "<image href=svgimg/>",
                    "<image src=svgimg2>",
                    "<p>",
                    "<div>",
                    "<base href=svgbase>",
                    "<script><a href=svgscript></script>",
                    "<a xlink:href=xl></a>",
                    "<svg><a href=inner></a></svg>",
                    "<math><a href=m></a></math>",
                ]),
                link_tags.clone(),
            ],
            0..6,
        ),
    )
        .prop_map(|(name, body)| format!("<{name}>{}</{name}>", body.concat()));
    prop_oneof![
        4 => pick(&[
            "hello ", "a < b ", "x & y ", "&amp; ", "&lt;a href=no&gt;", " ", "\n", "5 > 3",
            "<", "</", "<3", "< a href=no>", "\u{e9}", "&#", "]]>", "-->", "</a>", "</div>",
            "</p>", "</b title='>'>", "</>", "</ x>", "<!doctype html>", "<?x <a href=q> ?>",
            "<![CDATA[ <a href=cd> ]]>", "<!-- <a href=c> -->", "<!--><a href=abrupt>",
            "<!---><a href=abrupt2>", "<!-- --!><a href=bang>", "<!-- -- -><a href=stillin>-->",
        ]),
        6 => link_tags,
        3 => other_tags,
        2 => raw,
        1 => foreign,
    ]
}

proptest! {
    // At least 400 cases; PROPTEST_CASES raises it for a longer hunt.
    #![proptest_config(ProptestConfig { cases: ProptestConfig::default().cases.max(400), .. ProptestConfig::default() })]
    #[test]
    fn same_links_as_html5ever(parts in prop::collection::vec(fragment(), 0..24)) {
        let html = parts.concat();
        prop_assert_eq!(ours(&html), theirs(&html), "html: {:?}", html);
    }
}

#[test]
fn same_links_as_html5ever_on_fixed_cases() {
    for html in [
        "<a href=x><p><a href=y></p>text",
        "<table><a href=t><tr><td><a href=u></table>",
        "<template><a href=tpl></template>",
        "<noscript><a href=ns></noscript>",
        "<head><noscript><link href=nsl></noscript></head>",
        "<svg><p><style><a href=x></style>",
        "<math><a href=m></math>",
        "<image src=x><svg><image href=y/></svg>",
        "<a href=\"a\"b=c>",
        "<a href=x",
        "<frameset><frame src=f></frameset>",
    ] {
        assert_eq!(ours(html), theirs(html), "{html:?}");
    }
}

// ---------------------------------------------------------------------------------
// Property test: deduplication and the cap against a naive reference.

/// A page of `<a>`/`<link>` elements drawn from a small pool of references (so
/// duplicates, spellings of one URL, rejections and `nofollow` mix).
fn link_page() -> impl Strategy<Value = Vec<(&'static str, &'static str, bool)>> {
    let href = prop::sample::select(vec![
        "a",
        "./a",
        "a#x",
        "/dir/a",
        "../dir/a",
        "b?q=1",
        "b?q=1#f",
        "%62?q=1",
        "B",
        "//example.com/dir/a",
        "http://EXAMPLE.com:80/dir/a",
        "mailto:x",
        "javascript:0",
        "http://./",
        "http://[bad",
        "c d",
        "é",
        "/",
        "",
        "#top",
    ]);
    let tag = prop::sample::select(vec!["a", "link", "area"]);
    prop::collection::vec((tag, href, any::<bool>()), 0..40)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, .. ProptestConfig::default() })]
    /// `extract_keys` lists exactly the distinct canonical URLs in first-occurrence
    /// order (as canonicalizing each value one by one gives them), a link is
    /// nofollow only if every occurrence is, and with a cap it keeps the first `cap`
    /// distinct links and counts the others.
    #[test]
    fn distinct_links_match_a_naive_reference(
        elements in link_page(),
        cap in 1usize..8,
    ) {
        let mut html = String::new();
        for (tag, href, nofollow) in &elements {
            let rel = if *nofollow { " rel=nofollow" } else { "" };
            html.push_str(&format!("<{tag}{rel} href=\"{href}\">"));
        }
        let mut order: Vec<String> = Vec::new();
        let mut follow: std::collections::HashMap<String, bool> = Default::default();
        for (_, href, nofollow) in &elements {
            if let Ok(u) = crate::url::canonicalize(&base(), href) {
                let key = String::from(u);
                if !follow.contains_key(&key) {
                    order.push(key.clone());
                }
                *follow.entry(key).or_insert(false) |= !nofollow;
            }
        }
        let page = Links::extract_keys(&base(), html.as_bytes(), None, &ExtractOptions::default());
        let got: Vec<(String, bool)> = page.links.iter()
            .filter_map(|l| l.url.clone().ok().map(|u| (u, l.nofollow)))
            .collect();
        let want: Vec<(String, bool)> = order.iter().map(|k| (k.clone(), !follow[k])).collect();
        prop_assert_eq!(&got, &want, "html: {}", html);
        prop_assert_eq!(page.links_dropped, 0);

        let capped = ExtractOptions { max_links: cap, ..ExtractOptions::default() };
        let page = Links::extract_keys(&base(), html.as_bytes(), None, &capped);
        let got: Vec<String> = page.links.iter().filter_map(|l| l.url.clone().ok()).collect();
        let kept = order.len().min(cap);
        prop_assert_eq!(&got[..], &order[..kept]);
        prop_assert_eq!(page.links_dropped, order.len() - kept);
    }
}
