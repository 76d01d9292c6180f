//! Canonicalization throughput (URLs per second): `trawl::url::canonicalize` on the
//! links of the synthweb-like pages and realistic corpus, beside the `url` crate's
//! bare `Url::join` in the same run (the parse that canonicalization builds on).
//! A second group canonicalizes every link of three real pages of Debian's OpenJDK 17
//! API documentation (skipped where `openjdk-17-doc` is not installed).
//!
//! A third group takes the pages of the cpubench `static20-identity` site (20 hosts
//! named by IPv4 address, ~40 links a page, a third of them absolute on the page's
//! own origin; skipped where `tools/cpubench` has not generated it): every link
//! resolved with one resolver per page, and the whole `Links::extract_keys`.
//!
//!   cargo bench --bench canon

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use trawl::html::{decode_attribute, for_each_raw_link, ExtractOptions, Links};
use trawl::url::{canonicalize, CanonOptions, Resolved, Resolver};
use url::Url;

#[path = "support/pages.rs"]
mod pages;

/// Real-shaped references: every link of the benchmark pages, decoded, plus a few
/// awkward ones (escapes, dot segments, default ports, IDN, fragments).
fn references() -> Vec<String> {
    let mut refs = Vec::new();
    let mut pages = pages::synthweb_pages(20);
    pages.extend(pages::realistic_corpus().into_iter().map(|p| p.1));
    for page in &pages {
        for_each_raw_link(page, true, |_, raw| {
            refs.push(decode_attribute(&String::from_utf8_lossy(raw)).into_owned());
        });
    }
    for extra in [
        "HTTP://WWW.Example.COM:80/%7Euser/a/./b/../c?q=%2f%41#frag",
        "https://example.com:443/path/%e2%82%ac?x=1&y=%3D",
        "//cdn.example.net/a/b/c.js",
        "../../up/two?z",
        "http://b\u{fc}cher.example/",
        "mailto:someone@example.com",
        "#top",
    ] {
        refs.push(extra.to_owned());
    }
    refs
}

fn canon(c: &mut Criterion) {
    let base = Url::parse("http://bench.example/dir/page.html").expect("base");
    let refs = references();
    // Validate: every result is a fixed point; count accepted and rejected.
    let mut ok = 0;
    for r in &refs {
        if let Ok(u) = canonicalize(&base, r) {
            assert_eq!(canonicalize(&base, u.as_str()).as_ref(), Ok(&u), "{r}");
            ok += 1;
        }
    }
    eprintln!("canon: {} references, {ok} canonical", refs.len());
    assert!(ok >= refs.len() - 2);
    let mut group = c.benchmark_group("canon");
    group.throughput(Throughput::Elements(refs.len() as u64));
    group.bench_function("trawl_canonicalize", |b| {
        b.iter(|| {
            refs.iter()
                .filter(|r| canonicalize(&base, r).is_ok())
                .count()
        })
    });
    let resolver = Resolver::new(base.clone(), CanonOptions::default(), None);
    group.bench_function("trawl_resolver", |b| {
        let mut scratch = String::new();
        b.iter(|| {
            refs.iter()
                .filter(|r| resolver.resolve(r, &mut scratch).is_ok())
                .count()
        })
    });
    group.bench_function("url_join_baseline", |b| {
        b.iter(|| refs.iter().filter(|r| base.join(r).is_ok()).count())
    });
    group.finish();
}

/// Where Debian installs the OpenJDK 17 API documentation.
const JAVADOC: &str = "/usr/share/doc/openjdk-17-jre-headless/api";

/// Every link of three javadoc pages, decoded, each with the URL of its page.
fn javadoc_references() -> Vec<(Url, String)> {
    let mut refs = Vec::new();
    for path in [
        "allclasses-index.html",
        "index-files/index-19.html",
        "java.base/java/util/package-summary.html",
    ] {
        let Ok(page) = std::fs::read(format!("{JAVADOC}/{path}")) else {
            continue;
        };
        let base = Url::parse(&format!("http://docs.example/api/{path}")).expect("base");
        for_each_raw_link(&page, false, |_, raw| {
            let href = decode_attribute(&String::from_utf8_lossy(raw)).into_owned();
            refs.push((base.clone(), href));
        });
    }
    refs
}

fn canon_javadoc(c: &mut Criterion) {
    let refs = javadoc_references();
    if refs.is_empty() {
        eprintln!("canon/javadoc: {JAVADOC} not installed (apt install openjdk-17-doc); skipped");
        return;
    }
    let ok = refs
        .iter()
        .filter(|(b, r)| canonicalize(b, r).is_ok())
        .count();
    eprintln!("canon/javadoc: {} references, {ok} canonical", refs.len());
    assert!(
        ok * 10 >= refs.len() * 9,
        "javadoc links are nearly all http"
    );
    // The crawler's form: one resolver per page (the refs are grouped by page),
    // simple references spliced into a reused buffer; checked against
    // `canonicalize` on every reference first.
    let mut pages: Vec<(Resolver, Vec<&str>)> = Vec::new();
    for (base, href) in &refs {
        if pages.last().is_none_or(|(r, _)| r.base() != base) {
            let resolver = Resolver::new(base.clone(), CanonOptions::default(), None);
            pages.push((resolver, Vec::new()));
        }
        if let Some((_, hrefs)) = pages.last_mut() {
            hrefs.push(href);
        }
    }
    let mut scratch = String::new();
    for (resolver, hrefs) in &pages {
        for href in hrefs {
            let slow = canonicalize(resolver.base(), href).map(String::from);
            let fast = resolver
                .resolve(href, &mut scratch)
                .map(Resolved::into_string);
            assert_eq!(fast, slow, "{href}");
        }
    }
    let mut group = c.benchmark_group("canon/javadoc");
    group.throughput(Throughput::Elements(refs.len() as u64));
    group.bench_function("trawl_canonicalize", |b| {
        b.iter(|| {
            refs.iter()
                .filter(|(b, r)| canonicalize(b, r).is_ok())
                .count()
        })
    });
    group.bench_function("trawl_resolver", |b| {
        let mut scratch = String::new();
        b.iter(|| {
            let mut ok = 0;
            for (resolver, hrefs) in &pages {
                for href in hrefs {
                    ok += usize::from(resolver.resolve(href, &mut scratch).is_ok());
                }
            }
            ok
        })
    });
    group.bench_function("url_join_baseline", |b| {
        b.iter(|| refs.iter().filter(|(b, r)| b.join(r).is_ok()).count())
    });
    group.finish();
}

/// Where `tools/cpubench/run.sh` generates the `static20-identity` site (one
/// directory per host address); `CPUBENCH_STATIC20` overrides it.
const STATIC20: &str = "/var/tmp/cpubench-static20";

/// Up to `max` pages of the static20 site, each with its URL.
fn static20_pages(max: usize) -> Vec<(Url, Vec<u8>)> {
    let root = std::env::var("CPUBENCH_STATIC20").unwrap_or_else(|_| STATIC20.to_owned());
    let mut files = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from(&root)];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "html") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
        .into_iter()
        .take(max)
        .filter_map(|path| {
            let rel = path.strip_prefix(&root).ok()?.to_str()?.to_owned();
            let url = Url::parse(&format!("http://{rel}")).ok()?;
            Some((url, std::fs::read(&path).ok()?))
        })
        .collect()
}

fn canon_static20(c: &mut Criterion) {
    let pages = static20_pages(200);
    if pages.is_empty() {
        eprintln!("canon/static20: {STATIC20} not generated (tools/cpubench/run.sh); skipped");
        return;
    }
    let per_page: Vec<(Resolver, Vec<String>)> = pages
        .iter()
        .map(|(url, page)| {
            let mut hrefs = Vec::new();
            for_each_raw_link(page, false, |_, raw| {
                hrefs.push(decode_attribute(&String::from_utf8_lossy(raw)).into_owned());
            });
            (
                Resolver::new(url.clone(), CanonOptions::default(), None),
                hrefs,
            )
        })
        .collect();
    let links: usize = per_page.iter().map(|(_, h)| h.len()).sum();
    let mut scratch = String::new();
    let mut spliced = 0;
    for (resolver, hrefs) in &per_page {
        for href in hrefs {
            let slow = canonicalize(resolver.base(), href).map(String::from);
            let fast = resolver.resolve(href, &mut scratch);
            spliced += usize::from(matches!(fast, Ok(Resolved::Spliced(_))));
            assert_eq!(fast.map(Resolved::into_string), slow, "{href}");
        }
    }
    eprintln!(
        "canon/static20: {} pages, {links} links, {spliced} spliced",
        pages.len()
    );
    let mut group = c.benchmark_group("canon/static20");
    group.throughput(Throughput::Elements(pages.len() as u64));
    group.bench_function("resolve_per_page", |b| {
        let mut scratch = String::new();
        b.iter(|| {
            let mut ok = 0;
            for (resolver, hrefs) in &per_page {
                for href in hrefs {
                    ok += usize::from(resolver.resolve(href, &mut scratch).is_ok());
                }
            }
            ok
        })
    });
    // The scan alone, for the share of extract_keys that is not resolution.
    group.bench_function("scan_per_page", |b| {
        b.iter(|| {
            let mut n = 0;
            for (_, page) in &pages {
                for_each_raw_link(page, false, |_, raw| n += raw.len());
            }
            n
        })
    });
    let options = ExtractOptions::default();
    group.bench_function("extract_keys_per_page", |b| {
        b.iter(|| {
            pages
                .iter()
                .map(|(url, page)| Links::extract_keys(url, page, None, &options).links.len())
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(3));
    targets = canon, canon_javadoc, canon_static20
}
criterion_main!(benches);
