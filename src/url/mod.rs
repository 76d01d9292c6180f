//! URLs as crawl keys: canonicalization ([`canonicalize`]) and the crawl's trap and
//! scope filters ([`UrlFilter`]), with one reason vocabulary ([`Reject`]) for the
//! crawl log. Rules and reason codes are listed in `docs/urls.md`.

// Every file below reads bytes from the network or the disk: no slice indexing and no
// panics (STYLE.md §5). Tests are exempt through clippy.toml.
#![deny(clippy::indexing_slicing, clippy::expect_used, clippy::panic)]

pub mod canon;
pub mod filter;
pub(crate) mod plain;
mod reject;
pub mod resolve;

pub use canon::{
    canonicalize, canonicalize_absolute, canonicalize_with, document_base,
    normalize_percent_encoding, CanonOptions,
};
pub use filter::{Blacklist, FilterBuildError, FilterConfig, Scope, UrlFilter};
pub use reject::Reject;
pub use resolve::{Resolved, Resolver};

/// Fuzz entry point for the canonicalizer: the input is split at the first newline
/// into a base and a reference; nothing may panic, every canonical URL must be a
/// fixed point of canonicalization, the [`Resolver`] (splice fast path) must
/// answer exactly as [`canonicalize_with`] does, and a URL read from its text
/// (`plain`) must have the parts the parser gives it.
pub fn fuzz_canonicalize(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (base, href) = text
        .split_once('\n')
        .unwrap_or(("http://fuzz.example/a/b", &text));
    let Ok(base) = ::url::Url::parse(base) else {
        return;
    };
    for options in [
        CanonOptions::default(),
        CanonOptions {
            strip_session_ids: true,
            sort_query: true,
        },
    ] {
        for encoding in [None, Some(encoding_rs::WINDOWS_1252)] {
            let reference = canonicalize_with(&base, href, &options, encoding);
            let resolver = Resolver::new(base.clone(), options.clone(), encoding);
            let resolved = resolver
                .resolve(href, &mut String::new())
                .map(Resolved::into_string);
            assert_eq!(
                resolved,
                reference.clone().map(String::from),
                "resolver differs from canonicalize_with"
            );
            if let Ok(once) = reference {
                let twice = canonicalize_with(&base, once.as_str(), &options, None);
                assert_eq!(
                    twice.as_ref(),
                    Ok(&once),
                    "canonicalization is not idempotent"
                );
            }
        }
    }
    // Links are admitted from their text when `plain` accepts it: whatever it accepts
    // must be what the parser makes of it, raw input and canonical output alike.
    plain::assert_plain_is_its_parse(href);
    if let Ok(once) = canonicalize_with(&base, href, &CanonOptions::default(), None) {
        plain::assert_plain_is_its_parse(once.as_str());
    }
    let _ = filter::UrlFilter::default_for_fuzz().check_str(href, 0);
}
