//! Property test: our scanner against html5ever's full tree builder.

use std::collections::BTreeSet;

use proptest::prelude::*;

use super::*;

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
