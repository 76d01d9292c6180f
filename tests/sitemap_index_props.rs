//! Property tests against the truth the input was built from: random sitemaps
//! (escaped characters, CDATA, whitespace, comments, extension elements, optional and
//! invalid lastmods, plain or gzip) parse to exactly the entries written; random index
//! entries survive a write and a read of the re-crawl index, and any cut of the file
//! reads back as a prefix plus a reported torn tail.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::io::Write;

use proptest::prelude::*;
use trawl::recrawl::index::{encode, IndexReader, HEADER_BYTES};
use trawl::recrawl::{IndexEntry, Validators};
use trawl::sitemap::{parse, LastMod, Limits};

/// A URL path with characters that must be escaped in XML.
fn path() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("a".to_owned()),
            Just("&".to_owned()),
            Just("<".to_owned()),
            Just(">".to_owned()),
            Just("'".to_owned()),
            Just("\"".to_owned()),
            Just("é".to_owned()),
            Just("/".to_owned()),
            Just("?q=1".to_owned()),
            "[a-z0-9]{1,8}",
        ],
        0..8,
    )
    .prop_map(|parts| parts.concat())
}

#[derive(Debug, Clone)]
struct Written {
    path: String,
    lastmod: Option<(String, Option<i64>)>,
    cdata: bool,
    noise: u8,
}

fn written() -> impl Strategy<Value = Written> {
    let lastmod = prop_oneof![
        Just(None),
        Just(Some(("2025-07-01".to_owned(), Some(1_751_328_000)))),
        Just(Some((
            "2025-07-01T02:00:00+02:00".to_owned(),
            Some(1_751_328_000)
        ))),
        Just(Some(("2024".to_owned(), Some(1_704_067_200)))),
        Just(Some(("last tuesday".to_owned(), None))),
    ];
    (path(), lastmod, any::<bool>(), 0u8..4).prop_map(|(path, lastmod, cdata, noise)| Written {
        path,
        lastmod,
        cdata,
        noise,
    })
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('\'', "&apos;")
        .replace('"', "&#34;")
}

fn render(entries: &[Written]) -> String {
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- generated -->\n\
         <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\" \
         xmlns:image=\"http://www.google.com/schemas/sitemap-image/1.1\">\n",
    );
    for e in entries {
        let loc = format!("http://a.example/{}", e.path);
        let loc = if e.cdata && !loc.contains("]]>") {
            format!("<![CDATA[{loc}]]>")
        } else {
            escape(&loc)
        };
        s.push_str("<url>");
        if e.noise & 1 == 1 {
            s.push_str("<image:image><image:loc>http://a.example/i.png</image:loc></image:image>");
        }
        s.push_str(&format!("\n  <loc> {loc}\n</loc>"));
        if let Some((text, _)) = &e.lastmod {
            s.push_str(&format!("<lastmod>{text}</lastmod>"));
        }
        if e.noise & 2 == 2 {
            s.push_str("<!-- c --><priority>0.5</priority>");
        }
        s.push_str("</url>\n");
    }
    s.push_str("</urlset>\n");
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn sitemaps_parse_to_what_was_written(entries in proptest::collection::vec(written(), 0..40), gz in any::<bool>()) {
        let xml = render(&entries);
        let body = if gz {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(xml.as_bytes()).unwrap();
            e.finish().unwrap()
        } else {
            xml.clone().into_bytes()
        };
        let map = parse(&body, 0, &Limits::default()).unwrap();
        prop_assert_eq!(map.gzip, gz);
        prop_assert_eq!(map.entries.len(), entries.len());
        for (got, want) in map.entries.iter().zip(&entries) {
            prop_assert_eq!(&got.loc, &format!("http://a.example/{}", want.path).trim().to_owned());
            let want_lastmod = want.lastmod.as_ref().and_then(|(_, secs)| *secs);
            prop_assert_eq!(got.lastmod.map(|l: LastMod| l.secs), want_lastmod);
        }
        let bad = entries.iter().filter(|e| matches!(e.lastmod, Some((_, None)))).count() as u64;
        prop_assert_eq!(map.skipped.bad_lastmod, bad);
        // A cap below the count keeps exactly the first entries.
        if entries.len() > 3 {
            let limits = Limits { max_urls: 3, ..Limits::default() };
            let cut = parse(&body, 0, &limits).unwrap();
            prop_assert_eq!(cut.entries.len(), 3);
            prop_assert_eq!(&cut.entries[..], &map.entries[..3]);
        }
    }

    #[test]
    fn index_entries_round_trip_and_any_cut_reads_a_prefix(
        urls in proptest::collection::vec("[a-z0-9/é?=&]{1,60}", 1..12),
        etags in proptest::collection::vec(proptest::option::of("\"[a-z0-9]{0,20}\""), 12),
        cut_at in any::<proptest::sample::Index>(),
    ) {
        let entries: Vec<IndexEntry> = urls.iter().enumerate().map(|(i, u)| IndexEntry {
            url: format!("http://a.example/{u}"),
            status: 200 + (i as u16 % 3) * 102,
            fetched_at_us: 1_764_000_000_000_000 + i as i64,
            validators: Validators {
                etag: etags[i].clone(),
                last_modified: (i % 2 == 0).then(|| "Tue, 01 Jul 2025 08:00:00 GMT".to_owned()),
            },
            payload_digest: format!("sha1:{i}"),
            record_id: format!("<urn:uuid:{i}>"),
            warc_file: "a.warc.gz".to_owned(),
            warc_offset: i as u64 * 1000,
            payload_bytes: i as u64,
            hops: Some("LM".repeat(i % 3)),
            via: (i % 3 > 0).then(|| format!("http://a.example/{i}")),
        }).collect();
        let mut file = trawl::recrawl::index::header().to_vec();
        let mut ends = vec![HEADER_BYTES];
        for e in &entries {
            file.extend(encode(e).unwrap());
            ends.push(file.len());
        }
        let read: Vec<IndexEntry> = IndexReader::new(&file[..], std::path::Path::new("p"))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        prop_assert_eq!(&read, &entries);
        let cut = HEADER_BYTES + cut_at.index(file.len() - HEADER_BYTES + 1);
        let mut reader = IndexReader::new(&file[..cut], std::path::Path::new("p")).unwrap();
        let prefix: Vec<IndexEntry> = (&mut reader).collect::<Result<_, _>>().unwrap();
        let whole = ends.iter().filter(|&&e| e <= cut).count() - 1;
        prop_assert_eq!(&prefix[..], &entries[..whole]);
        let torn = (cut - ends[whole]) as u64;
        prop_assert_eq!(reader.recovered().map(|r| r.torn_bytes).unwrap_or(0), torn);
    }
}
