//! trawl's robots.txt verdicts against Google's parser, on the conformance table and on
//! seeded random files.
//!
//! The oracle is the `robotstxt` crate (a Rust port of google/robotstxt's `robots.cc`)
//! with its wildcard matcher replaced by [`GoogleStrategy`], because the port's own
//! matcher is wrong (see `port_deviation_wildcard_matcher`). The other places where the
//! port deviates from the C++ parser are each shown by a test below and kept out of
//! the oracle's input (a BOM is skipped before the port sees it, as the C++ does).
//!
//! trawl follows Google except where RFC 9309 says otherwise; the four readings are
//! listed in `docs/robots.md` ("Agreement with Google's parser"). The random test
//! proves both halves:
//!
//! - files made without those four features (`Features::GOOGLE`): trawl's verdict
//!   equals the oracle's on the file as written, for every path;
//! - files made with them (`Features::ALL`): trawl's verdict on the file as written
//!   equals the oracle's on the file's RFC 9309 reading (other records dropped,
//!   values and paths percent-normalized, a missing leading `/` added, `/robots.txt`
//!   allowed), and every case where the oracle on the raw file disagrees carries one of
//!   the four features (a disagreement without one fails the test).
//!
//! Set `TRAWL_ROBOTS_SEED` to run other seeds.

#[path = "../robots_support/mod.rs"]
mod robots_support;

// The harness: the oracle and the generator of random files.
mod generate;
mod oracle;

// The tests.
mod conformance;
mod deviations;
mod random;

const AGENT: &str = "trawl";
const HOST: &str = "http://example.com";
