//! The caps one request is fetched under: what the HTTP reader and the content decoder
//! may take before they stop, and whether the payload is kept as it came off the wire.

use crate::http::{DecodeLimits, ResponseLimits};

/// Limits for one request.
#[derive(Clone, Copy, Debug)]
pub struct FetchLimits {
    /// Head and body caps for the HTTP reader.
    pub response: ResponseLimits,
    /// Caps for content decoding (decoded bytes, expansion ratio).
    pub decode: DecodeLimits,
    /// Keep the payload as it came off the wire ([`crate::fetch::FetchOutcome::payload`],
    /// what a WARC record stores) when the body has a content coding. An identity body
    /// is its own payload and is always shared; a coded one costs a second buffer, so
    /// only a crawl that writes WARC files asks for it.
    pub keep_payload: bool,
}

impl Default for FetchLimits {
    fn default() -> Self {
        let response = ResponseLimits::default();
        Self {
            response,
            decode: DecodeLimits {
                max_decoded_bytes: 64 << 20,
                max_expansion_ratio: 100,
            },
            keep_payload: false,
        }
    }
}
