//! Link extraction throughput: trawl's scanner beside lol_html and html5ever doing
//! the same job (the `href`/`src` values of `a`, `area`, `link`, `frame`, `iframe`),
//! on synthweb-like pages and on a small realistic corpus. Every engine's link count
//! is checked against the others before anything is timed.
//!
//! A third group runs on real pages: Debian's OpenJDK 17 API documentation
//! (`openjdk-17-doc`, `/usr/share/doc/openjdk-17-jre-headless/api/`), whose index
//! pages carry thousands of `../` links each, the shape that showed the old per-page
//! cap and the `url` crate's share of a real crawl's CPU. The group is skipped, with a
//! note, where the package is not installed.
//!
//!   cargo bench --bench links

use std::cell::Cell;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use html5ever::tendril::TendrilSink;
use markup5ever_rcdom::{Handle, NodeData, RcDom};
use trawl::html::fingerprint as fp;
use trawl::html::{for_each_raw_link, Links};
use url::Url;

#[path = "support/html_mix.rs"]
mod html_mix;
#[path = "support/pages.rs"]
mod pages;

/// trawl, scan only: raw values, as lol_html hands them out.
fn trawl_raw(page: &[u8]) -> (usize, usize) {
    let mut count = 0;
    let mut bytes = 0;
    for_each_raw_link(page, false, |_, v| {
        count += 1;
        bytes += v.len();
    });
    (count, bytes)
}

/// trawl, the full job: decode, resolve, canonicalize and deduplicate every link,
/// robots meta; each link as a `Url` (the library and `trawl links` form).
fn trawl_extract(base: &Url, page: &[u8], charset: &'static encoding_rs::Encoding) -> usize {
    let links = Links::extract(base, page, Some(charset));
    links
        .links
        .iter()
        .filter(|l| l.tag != trawl::html::Tag::Meta)
        .count()
}

/// The same job as the crawler runs it: each link as its canonical string (the crawl
/// key), simple references spliced without the `url` crate.
fn trawl_keys(base: &Url, page: &[u8], charset: &'static encoding_rs::Encoding) -> usize {
    let options = trawl::html::ExtractOptions::default();
    Links::extract_keys(base, page, Some(charset), &options)
        .links
        .iter()
        .filter(|l| l.tag != trawl::html::Tag::Meta)
        .count()
}

/// The distinct canonical links of `page` by a slow reference: every raw value
/// decoded and canonicalized one by one with `trawl::url::canonicalize_with`.
fn reference_links(
    base: &Url,
    page: &[u8],
    charset: &'static encoding_rs::Encoding,
) -> std::collections::HashSet<String> {
    let mut reference = std::collections::HashSet::new();
    for_each_raw_link(page, false, |_, v| {
        let (text, _) = charset.decode_without_bom_handling(v);
        let href = trawl::html::decode_attribute(&text).into_owned();
        let options = trawl::url::CanonOptions::default();
        if let Ok(u) = trawl::url::canonicalize_with(base, &href, &options, Some(charset)) {
            reference.insert(String::from(u));
        }
    });
    reference
}

fn lol(page: &[u8], charset: &'static encoding_rs::Encoding) -> (usize, usize) {
    use lol_html::{element, HtmlRewriter, Settings};
    let count = Cell::new(0usize);
    let bytes = Cell::new(0usize);
    let record = |v: Option<String>| {
        if let Some(v) = v {
            count.set(count.get() + 1);
            bytes.set(bytes.get() + v.len());
        }
    };
    let settings = Settings::new()
        .append_element_content_handler(element!("a[href], area[href], link[href]", |el| {
            record(el.get_attribute("href"));
            Ok(())
        }))
        .append_element_content_handler(element!("frame[src], iframe[src]", |el| {
            record(el.get_attribute("src"));
            Ok(())
        }))
        .with_encoding(lol_html::AsciiCompatibleEncoding::new(charset).expect("ascii-compatible"));
    let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
    rewriter.write(page).expect("lol_html write");
    rewriter.end().expect("lol_html end");
    (count.get(), bytes.get())
}

fn html5ever_count(page: &[u8]) -> usize {
    fn walk(node: &Handle, n: &mut usize) {
        if let NodeData::Element { name, attrs, .. } = &node.data {
            let attr = match &*name.local {
                "a" | "area" | "link" => Some("href"),
                "frame" | "iframe" => Some("src"),
                _ => None,
            };
            if let Some(attr) = attr {
                if attrs
                    .borrow()
                    .iter()
                    .any(|a| a.name.ns.is_empty() && &*a.name.local == attr)
                {
                    *n += 1;
                }
            }
        }
        for child in node.children.borrow().iter() {
            walk(child, n);
        }
    }
    let opts = html5ever::ParseOpts {
        tree_builder: html5ever::tree_builder::TreeBuilderOpts {
            scripting_enabled: false,
            ..Default::default()
        },
        ..Default::default()
    };
    let dom = html5ever::parse_document(RcDom::default(), opts)
        .from_utf8()
        .one(page);
    let mut n = 0;
    walk(&dom.document, &mut n);
    n
}

fn validate(name: &str, page: &[u8], charset: &'static encoding_rs::Encoding) -> usize {
    let base = Url::parse("http://bench.example/dir/page.html").expect("base");
    let (ours, _) = trawl_raw(page);
    let (theirs, _) = lol(page, charset);
    assert_eq!(ours, theirs, "{name}: trawl vs lol_html link count");
    if charset == encoding_rs::UTF_8 {
        assert_eq!(ours, html5ever_count(page), "{name}: trawl vs html5ever");
    }
    let reference = reference_links(&base, page, charset);
    let keys: std::collections::HashSet<String> =
        Links::extract_keys(&base, page, Some(charset), &Default::default())
            .links
            .into_iter()
            .filter(|l| l.tag != trawl::html::Tag::Meta)
            .filter_map(|l| l.url.ok())
            .collect();
    assert_eq!(keys, reference, "{name}: distinct canonical links");
    assert_eq!(
        trawl_extract(&base, page, charset),
        reference.len(),
        "{name}: Url form"
    );
    ours
}

fn bench_set(
    c: &mut Criterion,
    group_name: &str,
    pages: &[(String, Vec<u8>, &'static encoding_rs::Encoding)],
) {
    let total: usize = pages.iter().map(|p| p.1.len()).sum();
    let mut links = 0;
    for (name, page, charset) in pages {
        links += validate(name, page, charset);
    }
    eprintln!(
        "{group_name}: {} pages, {total} bytes, {links} links (validated)",
        pages.len()
    );
    let base = Url::parse("http://bench.example/dir/page.html").expect("base");
    let mut group = c.benchmark_group(group_name);
    group.throughput(Throughput::Bytes(total as u64));
    group.bench_function(BenchmarkId::new("trawl_scan", total), |b| {
        b.iter(|| pages.iter().map(|p| trawl_raw(&p.1).0).sum::<usize>())
    });
    group.bench_function(BenchmarkId::new("trawl_extract_canonical", total), |b| {
        b.iter(|| {
            pages
                .iter()
                .map(|p| trawl_extract(&base, &p.1, p.2))
                .sum::<usize>()
        })
    });
    group.bench_function(BenchmarkId::new("trawl_extract_keys", total), |b| {
        b.iter(|| {
            pages
                .iter()
                .map(|p| trawl_keys(&base, &p.1, p.2))
                .sum::<usize>()
        })
    });
    group.bench_function(BenchmarkId::new("lol_html", total), |b| {
        b.iter(|| pages.iter().map(|p| lol(&p.1, p.2).0).sum::<usize>())
    });
    group.sample_size(10);
    group.bench_function(BenchmarkId::new("html5ever_rcdom", total), |b| {
        b.iter(|| pages.iter().map(|p| html5ever_count(&p.1)).sum::<usize>())
    });
    group.finish();
}

fn links(c: &mut Criterion) {
    let synth: Vec<_> = pages::synthweb_pages(50)
        .into_iter()
        .enumerate()
        .map(|(i, p)| (format!("synthweb-{i}"), p, encoding_rs::UTF_8))
        .collect();
    bench_set(c, "links/synthweb-20k", &synth);
    let corpus: Vec<_> = pages::realistic_corpus()
        .into_iter()
        .map(|(name, page, label)| {
            let enc = encoding_rs::Encoding::for_label(label.as_bytes()).expect("label");
            (name.to_owned(), page, enc)
        })
        .collect();
    bench_set(c, "links/realistic", &corpus);
}

/// Where Debian installs the OpenJDK 17 API documentation.
const JAVADOC: &str = "/usr/share/doc/openjdk-17-jre-headless/api";

/// Three real javadoc pages (two big indexes and a package summary), each with the
/// URL it would have on a documentation server, so `../` links resolve inside it.
fn javadoc_pages() -> Vec<(String, Vec<u8>, Url)> {
    let mut out = Vec::new();
    for path in [
        "allclasses-index.html",
        "index-files/index-19.html",
        "java.base/java/util/package-summary.html",
    ] {
        let Ok(page) = std::fs::read(format!("{JAVADOC}/{path}")) else {
            continue;
        };
        let base = Url::parse(&format!("http://docs.example/api/{path}")).expect("base");
        out.push((path.to_owned(), page, base));
    }
    out
}

/// The full extraction with no practical link cap, as the crawler would run it on
/// these pages.
fn uncapped() -> trawl::html::ExtractOptions {
    trawl::html::ExtractOptions {
        max_links: 1 << 30,
        ..trawl::html::ExtractOptions::default()
    }
}

/// The distinct canonical links of `page` two ways, which must agree: the extractor's,
/// and every raw value decoded and canonicalized one by one.
fn validate_javadoc(name: &str, page: &[u8], base: &Url) -> (usize, usize) {
    use std::collections::HashSet;
    let mut raw = 0;
    let mut reference = HashSet::new();
    for_each_raw_link(page, false, |_, v| {
        raw += 1;
        let href = trawl::html::decode_attribute(&String::from_utf8_lossy(v)).into_owned();
        if let Ok(u) = trawl::url::canonicalize(base, &href) {
            reference.insert(String::from(u));
        }
    });
    assert_eq!(
        raw,
        lol(page, encoding_rs::UTF_8).0,
        "{name}: trawl vs lol_html"
    );
    let extracted: HashSet<String> =
        Links::extract_with(base, page, Some(encoding_rs::UTF_8), &uncapped())
            .links
            .into_iter()
            .filter(|l| l.tag != trawl::html::Tag::Meta)
            .filter_map(|l| l.url.ok().map(String::from))
            .collect();
    assert_eq!(
        extracted, reference,
        "{name}: extractor vs one-by-one canonicalization"
    );
    let keys = Links::extract_keys(base, page, Some(encoding_rs::UTF_8), &uncapped()).links;
    let key_set: HashSet<String> = keys.iter().filter_map(|l| l.url.clone().ok()).collect();
    assert_eq!(
        key_set, reference,
        "{name}: keys vs one-by-one canonicalization"
    );
    assert_eq!(key_set.len(), keys.len(), "{name}: keys are distinct");
    (raw, reference.len())
}

fn javadoc(c: &mut Criterion) {
    let pages = javadoc_pages();
    if pages.is_empty() {
        eprintln!("links/javadoc: {JAVADOC} not installed (apt install openjdk-17-doc); skipped");
        return;
    }
    let total: usize = pages.iter().map(|p| p.1.len()).sum();
    let (mut raw, mut distinct) = (0, 0);
    for (name, page, base) in &pages {
        let (r, d) = validate_javadoc(name, page, base);
        eprintln!(
            "links/javadoc: {name}: {} bytes, {r} links, {d} distinct canonical",
            page.len()
        );
        raw += r;
        distinct += d;
    }
    eprintln!(
        "links/javadoc: {} pages, {total} bytes, {raw} links, {distinct} distinct (validated)",
        pages.len()
    );
    let options = uncapped();
    let mut group = c.benchmark_group("links/javadoc");
    group.throughput(Throughput::Elements(raw as u64));
    group.bench_function("trawl_scan", |b| {
        b.iter(|| pages.iter().map(|p| trawl_raw(&p.1).0).sum::<usize>())
    });
    group.bench_function("trawl_extract_url", |b| {
        b.iter(|| {
            pages
                .iter()
                .map(|p| {
                    Links::extract_with(&p.2, &p.1, Some(encoding_rs::UTF_8), &options)
                        .links
                        .len()
                })
                .sum::<usize>()
        })
    });
    group.bench_function("trawl_extract_keys", |b| {
        b.iter(|| {
            pages
                .iter()
                .map(|p| {
                    Links::extract_keys(&p.2, &p.1, Some(encoding_rs::UTF_8), &options)
                        .links
                        .len()
                })
                .sum::<usize>()
        })
    });
    group.bench_function("lol_html", |b| {
        b.iter(|| {
            pages
                .iter()
                .map(|p| lol(&p.1, encoding_rs::UTF_8).0)
                .sum::<usize>()
        })
    });
    group.finish();
}

/// Pages of the mix scanned again and again while they stay in the L2 cache, as a page
/// just received is; the whole mix (12 MB a source) streams from memory.
const HOT_PAGES: usize = 16;

/// This thread's time on a CPU so far, in ns (`/proc/thread-self/schedstat`, first
/// field), `None` where the kernel does not say.
fn on_cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

/// The scan's time on the CPU per page of `pages` (hot, scanned 2,000 times), the least
/// of five rounds: unlike wall time it leaves out the time the thread waits for a CPU,
/// so it holds on a shared, loaded machine.
fn on_cpu_per_page(name: &str, pages: &[Vec<u8>]) {
    let mut best = u64::MAX;
    for _ in 0..5 {
        let Some(start) = on_cpu_ns() else { return };
        let mut links = 0;
        for _ in 0..2_000 {
            for page in pages {
                links += trawl_raw(std::hint::black_box(page)).0;
            }
        }
        std::hint::black_box(links);
        let Some(end) = on_cpu_ns() else { return };
        best = best.min((end - start) / (2_000 * pages.len() as u64));
    }
    let bytes = pages.iter().map(Vec::len).sum::<usize>() / pages.len().max(1);
    eprintln!(
        "links/mix-{name}-hot: scan on the CPU {best} ns a page of {bytes} bytes (least of 5)"
    );
}

/// The real page mix (`benches/support/html_mix.rs`: javadoc, python docs and the
/// generated static site, `TRAWL_STATIC_SITE=/var/tmp/cpubench-static20/127.0.0.31` for
/// the pages of the `static20-identity` cpubench case), per source: the scan alone (on
/// all the pages, and on [`HOT_PAGES`] of them) and the crawler's whole extraction, in
/// bytes a second (µs per 20 KB page = 20,480 ÷ MB/s). Raw link counts are checked
/// against lol_html first.
fn mix(c: &mut Criterion) {
    let base = Url::parse("http://bench.example/dir/page.html").expect("base");
    let options = trawl::html::ExtractOptions::default();
    for source in html_mix::sources() {
        let total: usize = source.pages.iter().map(Vec::len).sum();
        for (i, page) in source.pages.iter().enumerate() {
            let ours = trawl_raw(page).0;
            let theirs = lol(page, encoding_rs::UTF_8).0;
            assert_eq!(ours, theirs, "{} page {i}: trawl vs lol_html", source.name);
        }
        eprintln!(
            "links/mix-{}: {} pages, {total} bytes (validated)",
            source.name,
            source.pages.len()
        );
        let mut group = c.benchmark_group(format!("links/mix-{}", source.name));
        group.throughput(Throughput::Bytes(total as u64));
        group.bench_function("trawl_scan", |b| {
            b.iter(|| source.pages.iter().map(|p| trawl_raw(p).0).sum::<usize>())
        });
        group.finish();
        let hot = source.pages.get(..HOT_PAGES).unwrap_or(&source.pages);
        let hot_total: usize = hot.iter().map(Vec::len).sum();
        on_cpu_per_page(source.name, hot);
        let mut group = c.benchmark_group(format!("links/mix-{}-hot", source.name));
        group.throughput(Throughput::Bytes(hot_total as u64));
        group.bench_function("trawl_scan", |b| {
            b.iter(|| hot.iter().map(|p| trawl_raw(p).0).sum::<usize>())
        });
        group.finish();
        let mut group = c.benchmark_group(format!("links/mix-{}", source.name));
        group.throughput(Throughput::Bytes(total as u64));
        group.bench_function("trawl_extract_keys", |b| {
            b.iter(|| {
                source
                    .pages
                    .iter()
                    .map(|p| {
                        Links::extract_keys(&base, p, Some(encoding_rs::UTF_8), &options)
                            .links
                            .len()
                    })
                    .sum::<usize>()
            })
        });
        group.finish();
    }
}

/// The duplicate-content digest every fetched page pays (`page_fingerprint`: XXH3 with
/// the page's own directory abstracted) beside plain XXH3 of the same bytes: what the
/// search for the page's own locations adds.
fn fingerprints(c: &mut Criterion) {
    let synth = pages::synthweb_pages(50);
    let total: usize = synth.iter().map(|p| p.len()).sum();
    let mut group = c.benchmark_group("fingerprint");
    group.throughput(Throughput::Bytes(total as u64));
    group.bench_function("xxh3_128", |b| {
        b.iter(|| {
            synth
                .iter()
                .map(|p| fp::fingerprint(p))
                .fold(0, |a, x| a ^ x)
        })
    });
    group.bench_function("page_fingerprint", |b| {
        b.iter(|| {
            synth
                .iter()
                .map(|p| fp::page_fingerprint(b"/culture/sub/page-1.html", p))
                .fold(0, |a, x| a ^ x)
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(3));
    targets = links, javadoc, mix, fingerprints
}
criterion_main!(benches);
