//! synthweb: a deterministic synthetic web served on loopback, with a referee that judges
//! a crawl from the server's side (see docs/synthweb.md).

pub mod formats;
pub mod referee;
