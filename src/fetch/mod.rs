//! The fetch vocabulary: what is asked of a fetch ([`FetchRequest`], under
//! [`FetchLimits`]) and what comes back ([`FetchOutcome`], with a [`FailReason`] when it
//! failed). A leaf: the network layer (`net`) answers requests with outcomes, and the
//! crawl core (`engine::core`), the WARC writer (`warc`) and the re-crawl judgement read
//! them, none of them importing another for these words.

mod limits;
mod outcome;
mod request;
mod route;

pub use limits::FetchLimits;
pub use outcome::{
    DnsFailure, FailReason, FetchOutcome, ProxyFailKind, ProxyFailure, TimeoutPhase, Timings,
};
pub use request::FetchRequest;
pub use route::{RouteHealth, RouteState};
