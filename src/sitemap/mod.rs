//! Sitemaps (sitemaps.org protocol 0.9): XML sitemaps and sitemap indexes, plain or
//! gzip-compressed, read by a sans-IO parser over quick-xml's streaming reader.
//!
//! - [`parse`] reads one fetched sitemap body into [`Sitemap`] entries, enforcing the
//!   protocol's caps ([`Limits`]: 50,000 URLs and 50 MB uncompressed per file) and a
//!   bound on index nesting. A cap that drops data is reported in [`Sitemap::cuts`]
//!   (the caller logs it); malformed input is a [`SitemapError`]. Never a panic.
//! - [`admit`] is the sitemaps.org host rule as a pure function: a sitemap may list
//!   only URLs under its own location, unless the robots.txt of the URL's host pointed
//!   to it (directly, or to an index above it).
//! - [`SitemapWalk`] follows sitemaps from a robots.txt (or the operator's
//!   `--sitemap`) through indexes to admitted pages, fetch by fetch, with a [`Note`]
//!   for everything dropped, keeping per-walk state (the crawl itself queues sitemap
//!   fetches as ordinary URLs with hop `S`: `src/engine/core/sitemaps.rs`).
//! - [`LastMod`] parses `<lastmod>` (W3C datetime) so a re-crawl can compare it with
//!   the previous fetch date; [`LastModTable`] keeps the dates a re-crawl read, per URL.
//! - [`Grants`] remembers, per sitemap, the origins whose robots.txt named it or an
//!   index above it: the permission [`admit`] takes, along the whole chain.
//!
//! Entity expansion is off by construction: a `<!DOCTYPE` (the only place entities can
//! be declared) is refused, and only the five predefined entities and numeric
//! character references are decoded. `docs/sitemaps.md` tells what is integrated.

// Every file below reads bytes from the network: no slice indexing and no panics
// (STYLE.md §5). Tests are exempt through clippy.toml.
#![deny(clippy::indexing_slicing, clippy::expect_used, clippy::panic)]

mod grants;
mod lastmod;
mod lastmod_table;
mod parse;
mod scope;
mod walk;

pub use grants::{Granted, Grants};
pub use lastmod::LastMod;
pub use lastmod_table::LastModTable;
pub use parse::{
    parse, Cut, Entry, Limits, Sitemap, SitemapError, SitemapKind, Skipped, MAX_LOC_BYTES,
};
pub use scope::{admit, Admission, Refusal};
pub use walk::{Listed, Note, SitemapFetch, SitemapWalk, Step, WalkLimits};

/// Fuzz entry point: parses `data` as a sitemap (plain, and gzip-wrapped when it starts
/// with the gzip magic) under small caps, and checks the invariants every result must
/// keep: at most `max_urls` entries, no entry without a location, entries of an index
/// only in an index. Must never panic.
pub fn fuzz_parse(data: &[u8]) {
    let limits = Limits {
        max_urls: 64,
        max_uncompressed_bytes: 1 << 20,
        max_index_depth: 2,
    };
    for depth in [0, 2] {
        if let Ok(map) = parse(data, depth, &limits) {
            assert!(map.entries.len() <= limits.max_urls);
            assert!(map.entries.iter().all(|e| !e.loc.is_empty()));
            assert!(map.uncompressed_bytes <= limits.max_uncompressed_bytes);
            if map.kind == SitemapKind::Index {
                assert!(depth < limits.max_index_depth);
            }
            for cut in &map.cuts {
                if let Cut::Urls { cap, .. } = cut {
                    assert_eq!(map.entries.len(), *cap);
                }
            }
        }
    }
    // Every entry's location judged against a fixed sitemap: no panic on any text.
    let text = String::from_utf8_lossy(data);
    if let (Ok(sitemap), Some(line)) = (
        ::url::Url::parse("http://fuzz.example/dir/sitemap.xml"),
        text.lines().next(),
    ) {
        if let Ok(url) = ::url::Url::parse(line) {
            let _ = admit(&sitemap, &url, &["http://other.example".to_owned()]);
        }
    }
    let _ = LastMod::parse(&text);
}
