//! Egress: how trawl reaches an origin when it does not connect straight to it (issue
//! 29). Everything here is sans-IO (STYLE.md §2): pure functions and small state
//! machines over bytes and strings, fuzzed where they parse. The connection phases that
//! drive them live in `net/conn/`.
//!
//! - [`url`]: proxy URLs as curl reads them (`http://`, `https://`, `socks5://`,
//!   `socks5h://`).
//! - [`secret`]: [`secret::Secret`], bytes that print as `***`, and where credentials
//!   came from.
//!
//! Guide: `docs/network.md`.

pub mod secret;
pub mod url;

/// Fuzz entry point for proxy URLs (`fuzz/fuzz_targets/proxy_url.rs`, replayed by
/// `tests/fuzz_proxy.rs`): parsing never panics, a parsed URL's `Display` (a route's
/// label) never holds credentials, and the label parses back to the same endpoint.
pub fn fuzz_url(data: &[u8]) {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    let redacted = url::redact(raw);
    if let Some((_, after)) = raw.rsplit_once('@') {
        assert!(redacted.ends_with(&format!("***@{after}")), "{redacted}");
    }
    if let Ok(parsed) = url::ProxyUrl::parse(raw, "fuzz") {
        let label = parsed.to_string();
        assert!(!label.contains('@'), "{label}");
        let again = url::ProxyUrl::parse(&label, "fuzz");
        assert!(
            matches!(&again, Ok(p) if p.kind == parsed.kind && p.host == parsed.host && p.port == parsed.port && p.auth.is_none()),
            "{label}: {again:?}"
        );
    }
}
