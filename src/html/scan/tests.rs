use super::names::CONTAINER_SLOTS;
use super::*;

/// Records `tag attr=value` for interesting tags, and end tags.
#[derive(Default)]
struct Record {
    out: Vec<String>,
    current: Option<String>,
}

impl<'a> Visitor<'a> for Record {
    fn start_tag(&mut self, name: &'a [u8], class: TagClass) -> bool {
        if class.is_interesting() {
            self.current = Some(String::from_utf8_lossy(name).to_ascii_lowercase());
            true
        } else {
            self.current = None;
            false
        }
    }
    fn attribute(&mut self, name: &'a [u8], value: &'a [u8]) {
        if let Some(cur) = &mut self.current {
            cur.push_str(&format!(
                " {}={}",
                String::from_utf8_lossy(name).to_ascii_lowercase(),
                String::from_utf8_lossy(value)
            ));
        }
    }
    fn start_tag_done(&mut self) -> ControlFlow<()> {
        if let Some(cur) = self.current.take() {
            self.out.push(cur);
        }
        ControlFlow::Continue(())
    }
}

fn tags(html: &str) -> Vec<String> {
    let mut r = Record::default();
    scan(html.as_bytes(), &mut r);
    r.out
}

#[test]
fn attribute_syntaxes() {
    assert_eq!(
        tags("<A HREF=x>"),
        ["a href=x"],
        "names are case-insensitive"
    );
    assert_eq!(tags("<a href='x y'>"), ["a href=x y"]);
    assert_eq!(tags("<a href=\"x'y\">"), ["a href=x'y"]);
    assert_eq!(tags("<a href = \n x >"), ["a href=x"]);
    assert_eq!(tags("<a href=x/>"), ["a href=x/"]);
    assert_eq!(tags("<a href=\"x\"/>"), ["a href=x"]);
    assert_eq!(tags("<a/href=x>"), ["a href=x"]);
    assert_eq!(tags("<a href=\"x\"title=y>"), ["a href=x title=y"]);
    assert_eq!(tags("<a =href=x>"), ["a =href=x"]);
    assert_eq!(tags("<a href>"), ["a href="]);
    assert_eq!(tags("<a href=>"), ["a href="]);
    assert_eq!(tags("<a title=\">\" href=x>"), ["a title=> href=x"]);
    assert_eq!(tags("<a href=a\"b>"), ["a href=a\"b"]);
    assert_eq!(tags("<a\thref=x\x0chref=y>"), ["a href=x href=y"]);
}

#[test]
fn tags_cut_by_end_of_file_are_dropped() {
    assert!(tags("<a href=x").is_empty());
    assert!(tags("<a href=\"x>").is_empty());
    assert!(tags("<a href=x /").is_empty());
    assert_eq!(tags("<a href=x><a href=\"y"), ["a href=x"]);
}

#[test]
fn quotes_in_uninteresting_tags() {
    assert_eq!(tags("<div title='>'><a href=x>"), ["a href=x"]);
    assert_eq!(tags("<div a=b\"><a href=x>"), ["a href=x"]);
    assert_eq!(tags("<div \"x\"><a href=y>"), ["a href=y"]);
    assert_eq!(tags("</div title='>'><a href=x>"), ["a href=x"]);
}

#[test]
fn comments_and_declarations() {
    assert!(tags("<!-- <a href=x> -->").is_empty());
    assert_eq!(tags("<!--><a href=x>"), ["a href=x"]);
    assert_eq!(tags("<!---><a href=x>"), ["a href=x"]);
    assert_eq!(tags("<!-- --!><a href=x>"), ["a href=x"]);
    assert!(tags("<!-- -- ><a href=x>").is_empty());
    assert_eq!(tags("<!-- ---><a href=x>"), ["a href=x"]);
    assert_eq!(tags("<!DOCTYPE html PUBLIC \"a>\"<a href=x>"), ["a href=x"]);
    assert_eq!(tags("<?php echo 1 ?><a href=x>"), ["a href=x"]);
    assert_eq!(tags("</ x><a href=x>"), ["a href=x"]);
    assert_eq!(tags("</><a href=x>"), ["a href=x"]);
    assert_eq!(tags("< a href=x><a href=y>"), ["a href=y"]);
    // CDATA is a bogus comment in HTML content ...
    assert_eq!(tags("<![CDATA[ x > <a href=y> ]]>"), ["a href=y"]);
    // ... and a real CDATA section in SVG.
    assert!(tags("<svg><![CDATA[ x > <a href=y> ]]></svg>").is_empty());
}

#[test]
fn raw_text_elements() {
    assert!(tags("<script><a href=x></script>").is_empty());
    assert_eq!(
        tags("<script>'</scriptx>'<a href=x></SCRIPT ><a href=y>"),
        ["a href=y"]
    );
    assert_eq!(tags("<script/><a href=x></script><a href=y>"), ["a href=y"]);
    assert!(tags("<style><a href=x></style>").is_empty());
    assert!(tags("<textarea><a href=x></textarea>").is_empty());
    assert!(tags("<title><a href=x></title>").is_empty());
    assert!(tags("<xmp><a href=x></xmp>").is_empty());
    assert!(tags("<noembed><a href=x></noembed>").is_empty());
    assert!(tags("<noframes><a href=x></noframes>").is_empty());
    assert_eq!(tags("<iframe src=f><a href=x></iframe>"), ["iframe src=f"]);
    assert!(tags("<plaintext></plaintext><a href=x>").is_empty());
    assert_eq!(tags("<noscript><a href=x></noscript>"), ["a href=x"]);
    // In SVG, <style> and <title> are not raw text ...
    assert_eq!(tags("<svg><title><a href=x></title></svg>"), ["a href=x"]);
    assert!(tags("<svg><style><base href=x></style></svg>").is_empty());
    // ... but inside an integration point start tags follow the HTML rules.
    assert!(tags("<svg><title><script><a href=x></title></svg>").is_empty());
    assert_eq!(
        tags("<svg><desc><base href=x></desc></svg>"),
        ["base href=x"]
    );
    assert!(tags("<svg><g><base href=x></g></svg>").is_empty());
    assert!(tags("<math><mi><style><a href=x></style></mi></math>").is_empty());
    assert_eq!(tags("<math><title><style><a href=x></style>"), ["a href=x"]);
    // A breakout tag leaves foreign content.
    assert!(tags("<svg><p><style><a href=x></style>").is_empty());
}

#[test]
fn script_escapes() {
    // `<!--` then `</script>` still ends the script.
    assert_eq!(tags("<script><!-- x </script><a href=y>"), ["a href=y"]);
    // Double-escaped: the inner </script> does not end it ...
    assert_eq!(
        tags("<script><!--<script></script><a href=x>--></script><a href=y>"),
        ["a href=y"]
    );
    // ... but `-->` inside the double escape returns to script data.
    assert_eq!(
        tags("<script><!--<script>--></script><a href=y>"),
        ["a href=y"]
    );
    assert_eq!(tags("<script><!--></script><a href=y>"), ["a href=y"]);
    assert!(tags("<script><<script><a href=x></script>").is_empty());
    assert!(tags("<script><!--x<<script><a href=x></script>").is_empty());
    assert_eq!(
        tags("<script><!---><script></script><a href=y>"),
        ["a href=y"]
    );
}

#[test]
fn html_container_table_is_a_perfect_hash() {
    for (i, name) in HTML_CONTAINERS.iter().enumerate() {
        assert_eq!(html_container(name), Some(i));
        assert_eq!(html_container(&name.to_ascii_uppercase()), Some(i));
    }
    let used = CONTAINER_SLOTS.iter().filter(|&&s| s != u8::MAX).count();
    assert_eq!(used, HTML_CONTAINERS.len());
    for other in [&b"p"[..], b"svg", b"x", b"divs", b"", b"\xc4\xb0"] {
        assert_eq!(html_container(other), None, "{other:?}");
    }
}

#[test]
fn stray_end_tags_in_foreign_content() {
    // A case the html5ever property test found: `</svg>` inside the CDATA section is
    // text, and `</a>` with no HTML `<a>` open is ignored (HTML Standard §13.2.6.5,
    // then the in-body "any other end tag" rule), so `<base>` is still SVG's.
    assert!(tags("<svg><![CDATA[ x > y</svg>]]></a><base href=\"x\">").is_empty());
    assert!(tags("<svg></div><base href=x>").is_empty());
    // With an `<a>` or `<div>` open outside, its end tag closes the foreign content.
    assert_eq!(
        tags("<a href=1><svg></a><base href=x>"),
        ["a href=1", "base href=x"]
    );
    assert_eq!(tags("<DIV><svg></div><base href=x>"), ["base href=x"]);
    // ... once: a second stray `</div>` finds no div open.
    assert!(tags("<div><svg></div><svg></div><base href=x>").is_empty());
    // An SVG `<a>` is not an HTML one: its end tag closes it, not the SVG.
    assert!(tags("<svg><a href=s></a></a><base href=x>") == ["a href=s"]);
}

#[test]
fn image_is_img_only_in_html() {
    assert_eq!(tags("<image src=x>"), ["image src=x"]);
    assert!(tags("<svg><image href=x></svg>").is_empty());
    assert_eq!(tags("<svg><a href=x></a></svg>"), ["a href=x"]);
}

/// Every event a scan reports, for comparing two scanners.
#[derive(Debug, PartialEq)]
enum Event<'a> {
    Text(&'a [u8]),
    Start(&'a [u8], TagClass),
    Attribute(&'a [u8], &'a [u8]),
    Done,
    End(&'a [u8]),
}

/// Records every event; wants the attributes of every tag, of the interesting ones
/// only (as the link collector does) or of none, and stops after `stop_after` tags.
struct Events<'a> {
    out: Vec<Event<'a>>,
    wants: fn(TagClass) -> bool,
    stop_after: usize,
}

impl<'a> Visitor<'a> for Events<'a> {
    fn text(&mut self, text: &'a [u8]) {
        self.out.push(Event::Text(text));
    }
    fn start_tag(&mut self, name: &'a [u8], class: TagClass) -> bool {
        self.out.push(Event::Start(name, class));
        (self.wants)(class)
    }
    fn attribute(&mut self, name: &'a [u8], value: &'a [u8]) {
        self.out.push(Event::Attribute(name, value));
    }
    fn start_tag_done(&mut self) -> ControlFlow<()> {
        self.out.push(Event::Done);
        self.stop_after = self.stop_after.saturating_sub(1);
        if self.stop_after == 0 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }
    fn end_tag(&mut self, name: &'a [u8]) {
        self.out.push(Event::End(name));
    }
}

/// Which scanner [`events`] runs.
#[derive(Clone, Copy, Debug)]
enum Which {
    Oracle,
    Simd,
    Scalar,
}

fn events(
    page: &[u8],
    which: Which,
    wants: fn(TagClass) -> bool,
    stop_after: usize,
) -> Vec<Event<'_>> {
    let mut events = Events {
        out: Vec::new(),
        wants,
        stop_after,
    };
    match which {
        Which::Oracle => oracle::scan(page, &mut events),
        Which::Simd => scan(page, &mut events),
        Which::Scalar => scan_with(Marks::with_simd(page, false), &mut events),
    }
    events.out
}

/// The new scanner (SIMD and scalar masks) reports exactly the old scanner's events.
fn same_as_oracle(page: &[u8]) {
    let wants: [fn(TagClass) -> bool; 3] = [|_| true, TagClass::is_interesting, |_| false];
    for (w, wants) in wants.into_iter().enumerate() {
        for stop_after in [usize::MAX, 3] {
            let want = events(page, Which::Oracle, wants, stop_after);
            for which in [Which::Simd, Which::Scalar] {
                assert_eq!(
                    events(page, which, wants, stop_after),
                    want,
                    "{which:?}, wants #{w}, stop after {stop_after}: {:?}",
                    String::from_utf8_lossy(page)
                );
            }
        }
    }
}

#[test]
fn same_events_as_the_old_scanner_on_the_fuzz_corpus() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/html_links");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).expect("corpus directory") {
        let page = std::fs::read(entry.expect("dir entry").path()).expect("corpus file");
        same_as_oracle(&page);
        count += 1;
    }
    assert!(count >= 20, "only {count} corpus files");
}

#[test]
fn same_events_as_the_old_scanner_on_odd_markup() {
    for page in [
        &b""[..],
        b"<",
        b"</",
        b"<a",
        b"<a href='",
        b"<a href=x/>",
        b"<p/><br/ ><x y=1/>",
        b"</p title='>'>x</p a=\"b>",
        b"<!--",
        b"<!---->",
        b"<script><!--<script>",
        b"<svg><![CDATA[",
        b"<svg><![CDATA[ ]]></svg><a href=x>",
        b"<math><mi><style></style></mi></math><a href=y>",
        b"<title>a</title><textarea></textarea x><a href=1>",
        b"<plaintext><a href=x>",
        b"<div a=b\"><a href=x>",
        b"<a\thref=x\x0chref=y>",
    ] {
        same_as_oracle(page);
    }
}

/// Markup-heavy garbage: fragments that steer the tokenizer's states, glued at random,
/// with random bytes and runs long enough to cross 64-byte blocks.
fn garbage(seed: u64, pieces: usize) -> Vec<u8> {
    const PIECES: &[&[u8]] = &[
        b"<",
        b">",
        b"</",
        b"/>",
        b"/",
        b"\"",
        b"'",
        b"=",
        b" ",
        b"\t",
        b"\n",
        b"<!--",
        b"-->",
        b"--!>",
        b"-",
        b"<!",
        b"<?",
        b"<![CDATA[",
        b"]]>",
        b"<a",
        b"<A HREF",
        b" href=",
        b"<a href=\"",
        b"<base href=",
        b"<meta name=robots content=",
        b"<p>",
        b"</p>",
        b"<div",
        b"</div>",
        b"<script>",
        b"</script>",
        b"</SCRIPT ",
        b"<script",
        b"<style>",
        b"</style>",
        b"<title>",
        b"</title>",
        b"<textarea>",
        b"</textarea>",
        b"<svg>",
        b"</svg>",
        b"<math>",
        b"</math>",
        b"<mi>",
        b"<desc>",
        b"<foreignObject>",
        b"<img src=",
        b"<iframe src=x>",
        b"</iframe>",
        b"<plaintext>",
        b"<xmp>",
        b"</xmp>",
        b"x",
        b"text ",
        b"&amp;",
        b"\xc3\xa9",
        b"\xff",
        b"<svg",
        b"<svg/>",
        b"<math",
        b"<svg><a>",
        b"<div>",
        b"<a>",
        b"</a>",
        b"<b>",
        b"</b>",
        b"</p",
        b"<table>",
        b"</table>",
        b"<base href=x>",
        b"</desc>",
        b"<title",
        b"<br/>",
        b" x=1/",
        b"<svg width=1/>",
    ];
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = Vec::new();
    for _ in 0..pieces {
        let r = next();
        match r % 16 {
            0 => out.extend(std::iter::repeat_n(b'x', (r >> 8) as usize % 150)),
            1 => out.push((r >> 8) as u8),
            _ => {
                let piece = PIECES.get((r >> 8) as usize % PIECES.len()).copied();
                out.extend_from_slice(piece.unwrap_or_default());
            }
        }
    }
    out
}

#[test]
fn same_events_as_the_old_scanner_on_garbage() {
    for seed in 0..3000 {
        same_as_oracle(&garbage(seed, 1 + (seed as usize % 120)));
    }
}
