//! trawl: a low-level, memory-bounded web crawl engine.
//!
//! The engine is built from sans-IO parts (URL canonicalization, robots.txt, the
//! HTTP/1.1 response reader, the HTML link scanner) driven by hand-written mio event
//! loops, one per shard thread. See `docs/architecture.md` for the way one URL travels
//! through the engine and where each concept lives.

pub mod add;
mod ascii;
pub mod bytesize;
mod calendar;
pub mod checkpoint;
pub mod control;
pub mod crawllog;
pub mod disk;
pub mod engine;
pub mod farm;
pub mod fetch;
pub mod frontier;
pub mod handler;
pub mod html;
pub mod http;
pub mod inspect;
pub mod net;
pub mod options;
pub mod provenance;
pub mod recrawl;
pub mod robots;
pub mod routing;
pub mod seen;
pub mod sitemap;
pub mod sys;
pub mod tls;
pub mod url;
pub mod warc;

// The library's public face: the one place that re-exports another module's items
// (tools/modgraph/rules.toml, `[reexports]`, names this file and no other). Every
// other item has one path, its home module's; these are the hooks an embedder
// implements (examples/pipeline.rs), offered at the crate root as well.
pub use handler::{Handler, Page};

/// The crate version, as Cargo saw it at build time.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The URL that describes this robot, sent in the default `User-Agent` so that a
/// webmaster who sees trawl in a log can find out who is crawling and why.
pub const ROBOT_INFO_URL: &str = "https://github.com/trawl-crawler/trawl";

/// The default `User-Agent`: robot name, version and a URL, as the robot etiquette of
/// the Robots FAQ asks. The product token `trawl` is what robots.txt groups match.
pub fn default_user_agent() -> String {
    format!("trawl/{VERSION} (+{ROBOT_INFO_URL})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_user_agent_names_robot_version_and_url() {
        let ua = default_user_agent();
        assert!(ua.starts_with("trawl/"));
        assert!(ua.contains(VERSION));
        assert!(ua.contains("(+https://"));
    }
}
