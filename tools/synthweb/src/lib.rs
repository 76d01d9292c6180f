//! synthweb: a deterministic synthetic web served on loopback, for testing and
//! benchmarking crawlers. Every response is a pure function of `(seed, host, path)`.
//!
//! Guide: `docs/synthweb.md`. File formats: `SYNTHWEB-FORMATS.md` (quoted in the guide).
//!
//! The library exposes the generator to the manifest walker and the referee:
//! - [`config::SiteConfig`] describes the web; [`site::Site::new`] validates it.
//! - [`site::Site::page`] answers `(scheme, host index, target)` with the response and
//!   the page's links (each with its raw `href`, canonical URL and [`html::LinkKind`]).
//! - [`site::Site::robots`] and [`site::Site::robots_allows`] model each host's
//!   robots.txt ([`robots::CATALOGUE`]) and judge URLs with RFC 9309 semantics.
//! - [`hosts`] maps names, indices, addresses and roles (trap and hostile host indices).
//! - [`formats`] reads and writes the request log, hosts, seeds and manifest files;
//!   [`referee`] judges a crawl from the request log against a manifest.

pub mod bomb;
pub mod chain;
pub mod changes;
pub mod coding;
pub mod config;
pub mod dns;
pub mod formats;
pub mod hash;
pub mod hosts;
pub mod html;
pub mod manifest;
pub mod referee;
pub mod robots;
pub mod server;
pub mod site;
pub mod sitemaps;

pub use config::{Profiles, SiteConfig, Span};
pub use hosts::{HostRole, HostileKind, TrapKind};
pub use html::{Element, HiddenIn, Link, LinkKind};
pub use robots::{RobotsEntry, RobotsVerdict};
pub use site::{PageView, Response, Scheme, Site};
