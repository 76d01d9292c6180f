//! What a fetch is asked to do: one [`FetchRequest`].

use std::net::SocketAddr;

use crate::fetch::FetchLimits;
use crate::http::RequestHead;

/// One request for the fetcher.
#[derive(Clone, Debug)]
pub struct FetchRequest {
    /// Caller's id, echoed in the outcome.
    pub id: u64,
    /// The request head (method, URL, headers).
    pub head: RequestHead,
    /// Caps for this request.
    pub limits: FetchLimits,
    /// Connect to this address instead of resolving the URL's host.
    pub addr: Option<SocketAddr>,
}

impl FetchRequest {
    /// A GET of `url` with default limits.
    pub fn get(id: u64, url: url::Url, user_agent: String) -> Self {
        Self {
            id,
            head: RequestHead::get(url, user_agent),
            limits: FetchLimits::default(),
            addr: None,
        }
    }
}
