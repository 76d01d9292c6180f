//! Operating a running crawl: the control API's requests and the rules an operator sets
//! for the rest of a crawl. Sans-IO: the listener that serves the API is
//! `engine/observe/metrics/server.rs`, the glue that acts on a command `engine/control.rs`, the
//! client `trawl ctl` (`cli/ctl.rs`). See `docs/control.md`.
//!
//! - `request.rs`: `POST /api/control/<verb>` and its JSON body to a [`Command`] or a
//!   4xx [`ApiError`]; the token and `Origin` checks ([`authorize`]).
//! - `rules.rs`: blocked hosts and URL prefixes, raised host delays ([`Rules`]), kept
//!   in every checkpoint.

mod error;
mod live;
mod request;
mod rules;

pub use error::{status_line, ApiError};
pub use live::OperatorRules;
pub use request::{
    authorize, has_token, is_control_path, parse_command, Command, Credentials, CONTROL_PREFIX,
    MAX_ADD_URLS, MAX_BODY_BYTES, MAX_DELAY_MS, VERBS,
};
pub use rules::{normalize_host, Block, Rules, MAX_RULES};

/// File in the output directory holding the control token (mode 0600).
pub const TOKEN_FILE: &str = "control.token";
/// File in the output directory holding the listener's address (`IP:PORT`).
pub const ADDR_FILE: &str = "control.addr";
/// File in a checkpoint directory holding the operator's [`Rules`].
pub const RULES_FILE: &str = "operator.json";
/// The crawl-log annotation of a URL an operator's block refused.
pub const BLOCKED_NOTE: &str = "filter:blocked-by-operator";
