//! The network layer: a hand-written mio event loop ([`Fetcher`]) driving thousands of
//! keep-alive HTTP/1.1 and HTTPS connections, with its own DNS client on the same loop, per-phase deadlines
//! and bounded memory. Only this module owns sockets (STYLE.md §2); the HTTP protocol
//! itself is the sans-IO `crate::http`.
//!
//! Guide: `docs/fetcher.md` (phases, deadlines, pools, TLS, DNS, outcomes, memory).
//!
//! ```no_run
//! use std::time::Duration;
//! use trawl::fetch::FetchRequest;
//! use trawl::net::{Fetcher, FetcherConfig};
//!
//! let mut fetcher = Fetcher::new(FetcherConfig::default())?;
//! let url = url::Url::parse("http://example.org/")?;
//! fetcher.submit(FetchRequest::get(1, url, trawl::default_user_agent()));
//! fetcher.run_until_idle(Duration::from_secs(30), |outcome| {
//!     // A failure is a value: `outcome.error` says which phase and why.
//!     println!("{} {:?} {:?}", outcome.url, outcome.status(), outcome.error);
//! })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod address;
mod admission;
mod bind;
mod config;
mod conn;
pub mod dns;
pub mod egress;
mod fetcher;
pub mod per_ip;
mod pool;
mod request;
mod slab;
mod timer;

pub use address::is_blocked_address;
pub use bind::{BindAddrs, BindError};
pub use config::{Deadlines, FetcherConfig, PoolConfig};
pub use dns::{parse_hosts_file, parse_resolve, DnsConfig, DnsOverride, DnsStats};
pub use fetcher::{Fetcher, FetcherError, FetcherStats};
pub use per_ip::IpSlots;
pub use pool::PoolKey;
pub use request::Submitter;
