//! Egress: how trawl reaches an origin when it does not connect straight to it (issue
//! 29). Everything here is sans-IO (STYLE.md §2): pure functions and small state
//! machines over bytes and strings, fuzzed where they parse. The connection phases that
//! drive them live in `net/conn/`.
//!
//! - [`url`]: proxy URLs as curl reads them (`http://`, `https://`, `socks5://`,
//!   `socks5h://`).
//! - [`secret`]: [`secret::Secret`], bytes that print as `***`, and where credentials
//!   came from.
//! - [`rules`]: the `--proxy-rules` grammar, curl's `NO_PROXY` matcher and
//!   [`rules::Routes`], which picks a route per scheme and host.
//! - [`env`]: the proxy environment variables, read as curl reads them.
//!
//! Guide: `docs/network.md`.

pub mod env;
pub mod rules;
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

/// Fuzz entry point for the rules grammar (`fuzz/fuzz_targets/proxy_rules.rs`): reading
/// never panics; a route's label never holds credentials; and every route picked for a few
/// probe hosts exists.
pub fn fuzz_rules(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // NO_PROXY and `--noproxy` lists take the same text.
    let no_proxy = rules::NoProxy::parse(text);
    let spec = rules::RouteSpec {
        rules: Some(("fuzz", text)),
        noproxy: Some(text),
        ..rules::RouteSpec::default()
    };
    match rules::Routes::build(spec) {
        Ok(routes) => {
            for host in [
                "a.test",
                "www.example.org",
                "10.1.2.3",
                "[::1]",
                "A.TEST.",
                "",
            ] {
                let host_name = rules::HostName::new(host);
                let _ = no_proxy.matches(&host_name);
                for https in [false, true] {
                    let id = routes.pick(https, host);
                    assert!(usize::from(id) < routes.routes().len());
                }
            }
            for route in routes.routes() {
                assert!(!route.label.contains('@'), "{}", route.label);
            }
        }
        Err(e) => {
            let shown = e.to_string();
            assert!(
                !shown.contains("://") || !shown.contains('@') || shown.contains("***@"),
                "{shown}"
            );
        }
    }
}
