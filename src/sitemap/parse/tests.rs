use std::io::Write;

use super::*;

const NS: &str = "xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"";

fn urlset(body: &str) -> String {
    format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset {NS}>{body}</urlset>\n")
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn ok(text: &str) -> Sitemap {
    parse(text.as_bytes(), 0, &Limits::default()).unwrap()
}

#[test]
fn urlset_entries_with_lastmod_and_entities() {
    let map = ok(&urlset(
        "<url><loc> http://a.example/x?a=1&amp;b=2 </loc><lastmod>2025-07-01</lastmod>\
         <changefreq>daily</changefreq><priority>0.5</priority></url>\
         <url><loc><![CDATA[http://a.example/c?d=<e>]]></loc></url>\
         <url><loc>http://a.example/&#233;&#x41;</loc><lastmod>soon</lastmod></url>\
         <!-- a comment --><url><lastmod>2025-07-01</lastmod></url><url/>",
    ));
    assert_eq!(map.kind, SitemapKind::UrlSet);
    let locs: Vec<&str> = map.entries.iter().map(|e| e.loc.as_str()).collect();
    assert_eq!(
        locs,
        [
            "http://a.example/x?a=1&b=2",
            "http://a.example/c?d=<e>",
            "http://a.example/éA"
        ]
    );
    assert_eq!(map.entries[0].lastmod.map(|l| l.secs), Some(1_751_328_000));
    assert_eq!(map.entries[2].lastmod, None);
    assert_eq!(
        map.skipped,
        Skipped {
            no_loc: 2,
            too_long: 0,
            bad_lastmod: 1
        }
    );
    assert!(map.cuts.is_empty() && !map.gzip);
}

#[test]
fn only_direct_children_of_an_entry_are_its_fields() {
    let map = ok(&urlset(
        "<url><loc>http://a.example/p</loc>\
         <image:image xmlns:image=\"http://www.google.com/schemas/sitemap-image/1.1\">\
         <image:loc>http://a.example/i.png</image:loc></image:image>\
         <xhtml:link xmlns:xhtml=\"http://www.w3.org/1999/xhtml\" rel=\"alternate\" href=\"http://a.example/de\"/>\
         </url><extra><url><loc>http://a.example/nested</loc></url></extra>",
    ));
    let locs: Vec<&str> = map.entries.iter().map(|e| e.loc.as_str()).collect();
    assert_eq!(locs, ["http://a.example/p"]);
    // An empty root is an empty sitemap.
    for empty in ["<urlset/>", "<?xml version=\"1.0\"?>\n<sitemapindex/>\n"] {
        let map = ok(empty);
        assert!(map.entries.is_empty() && map.cuts.is_empty(), "{empty}");
    }
}

#[test]
fn index_entries_and_prefixed_names() {
    let text = "<?xml version=\"1.0\"?><sm:sitemapindex xmlns:sm=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
         <sm:sitemap><sm:loc>http://a.example/s1.xml</sm:loc><sm:lastmod>2024-01-02T03:04:05Z</sm:lastmod></sm:sitemap>\
         <sm:sitemap><sm:loc>http://a.example/s2.xml.gz</sm:loc></sm:sitemap></sm:sitemapindex>";
    let map = ok(text);
    assert_eq!(map.kind, SitemapKind::Index);
    assert_eq!(map.entries.len(), 2);
    assert_eq!(map.entries[1].loc, "http://a.example/s2.xml.gz");
    // Depth: an index at depth 1 is fine, at 2 refused by default.
    assert!(parse(text.as_bytes(), 1, &Limits::default()).is_ok());
    assert_eq!(
        parse(text.as_bytes(), 2, &Limits::default()),
        Err(SitemapError::TooDeep { depth: 2, limit: 2 })
    );
    // A urlset is fine at any depth.
    assert!(parse(urlset("").as_bytes(), 9, &Limits::default()).is_ok());
}

#[test]
fn gzip_is_detected_by_magic() {
    let plain = urlset("<url><loc>http://a.example/1</loc></url>");
    let map = parse(&gz(plain.as_bytes()), 0, &Limits::default()).unwrap();
    assert!(map.gzip);
    assert_eq!(map.entries.len(), 1);
    assert_eq!(map.uncompressed_bytes, plain.len() as u64);
    let mut broken = gz(plain.as_bytes());
    let mid = broken.len() / 2;
    broken[mid] ^= 0xFF;
    broken.truncate(broken.len() - 4);
    assert!(matches!(
        parse(&broken, 0, &Limits::default()),
        Err(SitemapError::Gzip | SitemapError::Malformed { .. })
    ));
}

#[test]
fn url_cap_keeps_the_first_entries_and_counts_the_rest() {
    let body: String = (0..15)
        .map(|k| format!("<url><loc>http://a.example/{k}</loc></url>"))
        .collect();
    let limits = Limits {
        max_urls: 10,
        ..Limits::default()
    };
    let map = parse(urlset(&body).as_bytes(), 0, &limits).unwrap();
    assert_eq!(map.entries.len(), 10);
    assert_eq!(map.entries[9].loc, "http://a.example/9");
    assert_eq!(
        map.cuts,
        [Cut::Urls {
            cap: 10,
            dropped: 5
        }]
    );
}

#[test]
fn byte_cap_stops_reading_and_keeps_what_came_before() {
    let mut text = urlset("<url><loc>http://a.example/1</loc></url>");
    // Spaces between the entry and `</urlset>\n`.
    text.insert_str(text.len() - 10, &" ".repeat(5_000));
    let limits = Limits {
        max_uncompressed_bytes: 1_000,
        ..Limits::default()
    };
    for body in [text.as_bytes().to_vec(), gz(text.as_bytes())] {
        let map = parse(&body, 0, &limits).unwrap();
        assert_eq!(map.entries.len(), 1);
        assert_eq!(map.cuts, [Cut::Bytes { cap_bytes: 1_000 }]);
        assert_eq!(map.uncompressed_bytes, 1_000);
    }
    // Exactly at the cap is not over it.
    let exact = urlset("");
    let limits = Limits {
        max_uncompressed_bytes: exact.len() as u64,
        ..Limits::default()
    };
    assert!(parse(exact.as_bytes(), 0, &limits).unwrap().cuts.is_empty());
}

#[test]
fn long_locations_are_skipped() {
    let long = format!("http://a.example/{}", "x".repeat(MAX_LOC_BYTES));
    let map = ok(&urlset(&format!(
        "<url><loc>{long}</loc></url><url><loc>http://a.example/ok</loc></url>"
    )));
    assert_eq!(map.entries.len(), 1);
    assert_eq!(map.skipped.too_long, 1);
}

/// sitemaps.org "Text file": one URL a line, UTF-8, the same caps.
#[test]
fn text_sitemaps_one_url_a_line() {
    let text = "\u{FEFF}\n  http://a.test/1\r\nHTTPS://a.test/2\n\n# a comment\nnot a url\n\
                http://a.test/with space\nhttp://a.test/3";
    let map = ok(text);
    assert_eq!(map.kind, SitemapKind::UrlSet);
    let locs: Vec<&str> = map.entries.iter().map(|e| e.loc.as_str()).collect();
    assert_eq!(
        locs,
        ["http://a.test/1", "HTTPS://a.test/2", "http://a.test/3"]
    );
    assert!(map.entries.iter().all(|e| e.lastmod.is_none()));
    assert_eq!(map.skipped.no_loc, 3);
    assert!(map.cuts.is_empty());
    // Gzip-compressed, like an XML one.
    let map = parse(&gz(b"http://a.test/x\n"), 0, &Limits::default()).unwrap();
    assert!(map.gzip);
    assert_eq!(map.entries.len(), 1);
    // Caps: entries, line length, bytes.
    let limits = Limits {
        max_urls: 2,
        max_uncompressed_bytes: 1_000,
        max_index_depth: 2,
    };
    let many: String = (0..5).map(|i| format!("http://a.test/{i}\n")).collect();
    let map = parse(many.as_bytes(), 0, &limits).unwrap();
    assert_eq!(map.entries.len(), 2);
    assert_eq!(map.cuts, [Cut::Urls { cap: 2, dropped: 3 }]);
    let long = format!(
        "http://a.test/ok\nhttp://a.test/{}\n",
        "x".repeat(MAX_LOC_BYTES)
    );
    let map = ok(&long);
    assert_eq!((map.entries.len(), map.skipped.too_long), (1, 1));
    let big: String = (0..200).map(|i| format!("http://a.test/{i}\n")).collect();
    let map = parse(big.as_bytes(), 0, &limits).unwrap();
    assert!(map.cuts.contains(&Cut::Bytes { cap_bytes: 1_000 }));
    assert_eq!(map.uncompressed_bytes, 1_000);
    // The line the cap cut in two is not taken as a shorter URL.
    let cut = format!("http://a.test/first\nhttp://a.test/{}", "y".repeat(2_000));
    let map = parse(cut.as_bytes(), 0, &limits).unwrap();
    let locs: Vec<&str> = map.entries.iter().map(|e| e.loc.as_str()).collect();
    assert_eq!(locs, ["http://a.test/first"]);
}

#[test]
fn refusals() {
    for (text, err) in [
        ("", SitemapError::NotASitemap),
        ("   ", SitemapError::NotASitemap),
        ("<html><body>hi</body></html>", SitemapError::NotASitemap),
        // Text whose first line is not a URL: a robots.txt, a page served as text.
        ("User-agent: *\nDisallow:\n", SitemapError::NotASitemap),
        ("see http://a/x\n", SitemapError::NotASitemap),
        (
            "<?xml version=\"1.0\"?><!DOCTYPE urlset [<!ENTITY a \"aaaa\">]><urlset><url><loc>&a;</loc></url></urlset>",
            SitemapError::Doctype,
        ),
    ] {
        let got = parse(text.as_bytes(), 0, &Limits::default());
        match (got, err) {
            (Err(SitemapError::Malformed { .. }), SitemapError::Malformed { .. }) => {}
            (got, err) => assert_eq!(got, Err(err), "{text:?}"),
        }
    }
    for text in [
        urlset("<url><loc>http://a/</lo></url>"),
        urlset("<url><loc>http://a/&bogus;</loc></url>"),
        "<urlset><url><loc>http://a/</loc></url>".to_owned(),
        format!("{}<urlset/>", urlset("")),
        "<urlset></urlset> trailing".to_owned(),
    ] {
        assert!(
            matches!(
                parse(text.as_bytes(), 0, &Limits::default()),
                Err(SitemapError::Malformed { .. })
            ),
            "{text:?}"
        );
    }
    let not_utf8 = [
        b"<urlset><url><loc>http://a/".as_slice(),
        &[0xFF, 0xFE],
        b"</loc></url></urlset>",
    ]
    .concat();
    assert!(matches!(
        parse(&not_utf8, 0, &Limits::default()),
        Err(SitemapError::Malformed { .. })
    ));
}
