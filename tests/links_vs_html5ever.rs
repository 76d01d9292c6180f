//! On the synthweb-like pages and the realistic corpus of the benchmarks, the set of
//! canonical links `Links::extract` finds equals the set found by a full HTML5 parse
//! (html5ever + rcdom, scripting disabled) followed by the same canonicalization.

use std::collections::BTreeSet;

use html5ever::tendril::TendrilSink;
use markup5ever_rcdom::{Handle, NodeData, RcDom};
use trawl::html::{Links, Tag};
use trawl::url::{canonicalize_with, CanonOptions};
use url::Url;

#[path = "../benches/support/pages.rs"]
mod pages;

fn theirs(base: &Url, html: &str, charset: &'static encoding_rs::Encoding) -> BTreeSet<String> {
    fn walk(node: &Handle, out: &mut Vec<String>) {
        if let NodeData::Element {
            name,
            attrs,
            template_contents,
            ..
        } = &node.data
        {
            let attr = match &*name.local {
                "a" | "area" | "link" => Some("href"),
                "frame" | "iframe" => Some("src"),
                _ => None,
            };
            if let Some(attr) = attr {
                if let Some(a) = attrs
                    .borrow()
                    .iter()
                    .find(|a| a.name.ns.is_empty() && &*a.name.local == attr)
                {
                    out.push(a.value.to_string());
                }
            }
            if let Some(t) = template_contents.borrow().as_ref() {
                walk(t, out);
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
    let mut raw = Vec::new();
    walk(&dom.document, &mut raw);
    raw.iter()
        .filter_map(|v| canonicalize_with(base, v, &CanonOptions::default(), Some(charset)).ok())
        .map(String::from)
        .collect()
}

fn ours(base: &Url, page: &[u8], charset: &'static encoding_rs::Encoding) -> BTreeSet<String> {
    Links::extract(base, page, Some(charset))
        .links
        .into_iter()
        .filter(|l| l.tag != Tag::Meta)
        .filter_map(|l| l.url.ok())
        .map(String::from)
        .collect()
}

#[test]
fn synthweb_pages_match_html5ever() {
    let base = Url::parse("http://synthweb.example/section/page.html").expect("base");
    for (i, page) in pages::synthweb_pages(12).iter().enumerate() {
        let html = std::str::from_utf8(page).expect("utf-8 page");
        let ours = ours(&base, page, encoding_rs::UTF_8);
        assert!(ours.len() > 20, "page {i} has links");
        assert_eq!(ours, theirs(&base, html, encoding_rs::UTF_8), "page {i}");
    }
}

#[test]
fn realistic_corpus_matches_html5ever() {
    let base = Url::parse("https://www.example.com/a/b.html").expect("base");
    for (name, page, label) in pages::realistic_corpus() {
        let charset = encoding_rs::Encoding::for_label(label.as_bytes()).expect("label");
        let (html, _, _) = charset.decode(&page);
        let ours = ours(&base, &page, charset);
        assert!(!ours.is_empty(), "{name} has links");
        assert_eq!(ours, theirs(&base, &html, charset), "{name}");
    }
}
