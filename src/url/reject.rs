//! Why a URL did not become a crawl key: one `Copy` enum shared by canonicalization,
//! the crawl filters and the link extractor, so that the crawl log has one vocabulary.

use std::fmt;

/// The reason a link or URL was dropped.
///
/// [`Reject::code`] gives a stable `snake_case` name for the crawl log and the CLI;
/// `Display` gives a short human message with the numbers that made the limit fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reject {
    /// The WHATWG URL parser returned failure (after our fixes for the `url` crate's
    /// deviations), so the link is dropped as a browser would.
    InvalidUrl(url::ParseError),
    /// The URL parsed, but its scheme is not `http` or `https` (`mailto:`,
    /// `javascript:`, `ftp:`, `data:` ...).
    UnsupportedScheme,
    /// The canonical URL is longer than the configured maximum.
    TooLong {
        /// Length of the canonical URL in bytes.
        bytes: usize,
        /// The configured maximum.
        max_bytes: usize,
    },
    /// A path segment occurs too often, or a run of 2-3 segments repeats: the shape
    /// of a symbolic-link cycle or a relative-link trap (`/a/b/a/b/a/b/`).
    RepeatedSegments,
    /// More path segments than the configured maximum.
    TooDeep {
        /// Number of non-empty path segments.
        depth: usize,
        /// The configured maximum.
        max_depth: usize,
    },
    /// The last path segment has an extension on the blocked list (archives,
    /// executables, images, audio, video by default).
    BlockedExtension,
    /// A dynamic URL (`cgi` in the path or a query) while dynamic URLs are refused.
    Dynamic,
    /// The host, a URL prefix or a regex of the blacklist matched.
    Blacklisted,
    /// The URL is outside the crawl scope (seed hosts, seed domains or regexes).
    OutOfScope,
    /// The link is further from a seed than the configured number of hops.
    TooManyHops {
        /// Hops from the nearest seed.
        hops: u32,
        /// The configured maximum.
        max_hops: u32,
    },
    /// An attribute value of the page was longer than the extractor's cap, so the
    /// link was not read.
    AttributeTooLong {
        /// Length of the raw attribute value in bytes.
        bytes: usize,
        /// The configured maximum.
        max_bytes: usize,
    },
}

impl Reject {
    /// The stable `snake_case` reason code written to the crawl log.
    pub fn code(&self) -> &'static str {
        match self {
            Reject::InvalidUrl(_) => "invalid_url",
            Reject::UnsupportedScheme => "unsupported_scheme",
            Reject::TooLong { .. } => "too_long",
            Reject::RepeatedSegments => "repeated_segments",
            Reject::TooDeep { .. } => "too_deep",
            Reject::BlockedExtension => "blocked_extension",
            Reject::Dynamic => "dynamic",
            Reject::Blacklisted => "blacklisted",
            Reject::OutOfScope => "out_of_scope",
            Reject::TooManyHops { .. } => "too_many_hops",
            Reject::AttributeTooLong { .. } => "attribute_too_long",
        }
    }

    /// Every reason code, in declaration order (for documentation and log readers).
    pub const CODES: &'static [&'static str] = &[
        "invalid_url",
        "unsupported_scheme",
        "too_long",
        "repeated_segments",
        "too_deep",
        "blocked_extension",
        "dynamic",
        "blacklisted",
        "out_of_scope",
        "too_many_hops",
        "attribute_too_long",
    ];
}

impl fmt::Display for Reject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reject::InvalidUrl(err) => write!(f, "invalid url: {err}"),
            Reject::UnsupportedScheme => f.write_str("scheme is not http or https"),
            Reject::TooLong { bytes, max_bytes } => {
                write!(f, "url too long: {bytes} bytes > {max_bytes}")
            }
            Reject::RepeatedSegments => f.write_str("repeated path segments"),
            Reject::TooDeep { depth, max_depth } => {
                write!(f, "path too deep: {depth} segments > {max_depth}")
            }
            Reject::BlockedExtension => f.write_str("blocked file extension"),
            Reject::Dynamic => f.write_str("dynamic url"),
            Reject::Blacklisted => f.write_str("blacklisted"),
            Reject::OutOfScope => f.write_str("out of scope"),
            Reject::TooManyHops { hops, max_hops } => {
                write!(f, "too many hops from a seed: {hops} > {max_hops}")
            }
            Reject::AttributeTooLong { bytes, max_bytes } => {
                write!(f, "attribute too long: {bytes} bytes > {max_bytes}")
            }
        }
    }
}

impl std::error::Error for Reject {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Reject::InvalidUrl(err) => Some(err),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stable_and_listed() {
        let all = [
            Reject::InvalidUrl(url::ParseError::EmptyHost),
            Reject::UnsupportedScheme,
            Reject::TooLong {
                bytes: 3000,
                max_bytes: 2048,
            },
            Reject::RepeatedSegments,
            Reject::TooDeep {
                depth: 40,
                max_depth: 20,
            },
            Reject::BlockedExtension,
            Reject::Dynamic,
            Reject::Blacklisted,
            Reject::OutOfScope,
            Reject::TooManyHops {
                hops: 9,
                max_hops: 8,
            },
            Reject::AttributeTooLong {
                bytes: 70_000,
                max_bytes: 65_536,
            },
        ];
        let codes: Vec<&str> = all.iter().map(Reject::code).collect();
        assert_eq!(codes, Reject::CODES);
        assert_eq!(
            Reject::TooLong {
                bytes: 3000,
                max_bytes: 2048
            }
            .to_string(),
            "url too long: 3000 bytes > 2048"
        );
    }
}
