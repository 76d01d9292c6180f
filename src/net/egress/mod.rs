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
//! - [`env`](mod@env): the proxy environment variables, read as curl reads them.
//! - [`connect`]: the HTTP `CONNECT` handshake.
//! - [`socks5`]: the SOCKS5 handshake (RFC 1928, RFC 1929).
//! - [`status`]: whose failure a proxy's error is (`Proxy-Status`, `X-Squid-Error`),
//!   as a typed [`status::ProxyVerdict`].
//! - `via`: what a connection needs to know about its route's proxy.
//! - [`book`]: [`book::Egress`], the routes made ready for connecting (proxy addresses,
//!   `Via`s, the `--per-proxy-connections` count).
//!
//! Guide: `docs/network.md`.

pub mod book;
pub mod connect;
pub mod env;
pub mod rules;
pub mod secret;
pub mod socks5;
pub mod status;
pub mod url;
pub(crate) mod via;

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

/// Fuzz entry point for `CONNECT` replies (`fuzz/fuzz_targets/proxy_connect_reply.rs`):
/// parsing never panics; a complete head is incomplete one byte shorter; and feeding the
/// bytes to a [`connect::ConnectClient`] in two pieces gives the same reply and
/// surplus.
pub fn fuzz_connect_reply(data: &[u8]) {
    let whole = connect::parse_reply(data);
    if let Ok(Some(reply)) = &whole {
        assert!(reply.head_bytes <= data.len());
        let shorter = data
            .get(..reply.head_bytes.saturating_sub(1))
            .unwrap_or(&[]);
        assert!(matches!(connect::parse_reply(shorter), Ok(None)));
        if (200..300).contains(&reply.status) {
            assert_eq!(reply.class, status::ReplyClass::Tunnel);
        }
    }
    let Ok(mut client) = connect::ConnectClient::new("a.test", 443, None) else {
        return;
    };
    client.wrote(client.pending().len());
    let split = data.first().map_or(0, |&b| usize::from(b)).min(data.len());
    let (first, second) = data.split_at(split);
    let fed = match client.feed(first) {
        Ok(None) => client.feed(second).map(|d| (d, data.len())),
        other => other.map(|d| (d, split)),
    };
    match (&whole, &fed) {
        (Ok(Some(reply)), Ok((Some(done), fed_bytes))) => {
            assert_eq!(&done.reply, reply);
            assert_eq!(done.surplus, fed_bytes - reply.head_bytes);
        }
        (Ok(None), Ok((None, _))) => {}
        (Err(a), Err(b)) => assert_eq!(a, b),
        (a, b) => panic!("one-shot {a:?}, two pieces {b:?}"),
    }
}

/// Fuzz entry point for SOCKS5 server messages (`fuzz/fuzz_targets/socks5_reply.rs`):
/// the first byte picks the target and whether credentials are offered, the rest is
/// the server's byte stream. Fed byte by byte or all at once, the handshake ends the
/// same way (unless the stream runs past a message, which at once is out of turn), and
/// never panics.
pub fn fuzz_socks5_reply(data: &[u8]) {
    let Some((&mode, stream)) = data.split_first() else {
        return;
    };
    let creds = secret::Credentials {
        user: "u".into(),
        pass: secret::Secret::new(b"pw".to_vec()),
        source: secret::CredSource::Url("fuzz".into()),
    };
    let target = match mode & 3 {
        0 => socks5::Target::Name("a.test", 443),
        1 => socks5::Target::Addr(std::net::SocketAddr::from(([10, 1, 2, 3], 80))),
        _ => socks5::Target::Addr(std::net::SocketAddr::from((
            [0u16, 0, 0, 0, 0, 0, 0, 1],
            8080,
        ))),
    };
    let creds = (mode & 4 != 0).then_some(&creds);
    let _ = socks5::parse_reply(stream);
    let _ = socks5::parse_method_reply(stream);
    let _ = socks5::parse_auth_reply(stream);
    let drive = |chunk: usize| {
        let Ok(mut c) = socks5::Socks5Client::new(target, creds) else {
            return None;
        };
        let mut rest = stream;
        let mut end = Ok(None);
        while !rest.is_empty() {
            c.wrote(c.pending().len());
            let n = chunk.min(rest.len());
            let (piece, tail) = rest.split_at(n);
            rest = tail;
            end = c.feed(piece);
            if !matches!(end, Ok(None)) {
                break;
            }
        }
        // Surplus counts the bytes not fed as well.
        Some(end.map(|d| d.map(|d| (d.bound, d.surplus + rest.len()))))
    };
    let (one, all) = (drive(1), drive(usize::MAX));
    // Fed at once, bytes past a middle message are out of turn; fed byte by byte they
    // are the next message. Otherwise both ways end the same.
    if !matches!(all, Some(Err(socks5::Socks5Error::OutOfTurn))) {
        assert_eq!(one, all);
    }
}

/// Fuzz entry point for `Proxy-Status` and `X-Squid-Error` values
/// (`fuzz/fuzz_targets/proxy_status.rs`): parsing never panics, and the classification
/// keeps its fixed points (a 2xx to `CONNECT` is a tunnel, 407 is the proxy's
/// authentication failure, an absolute-form answer other than 502-504 is the origin's).
pub fn fuzz_status(data: &[u8]) {
    if let Ok(Some(e)) = status::nearest_error(data) {
        assert!(e.error.len() <= status::MAX_ERROR_TYPE_BYTES);
    }
    let _ = status::parse_squid_error(data);
    for code in [200, 204, 403, 407, 500, 502, 503, 504] {
        for tunnel in [false, true] {
            let class = status::classify(code, tunnel, Some(data), Some(data));
            if tunnel && (200..300).contains(&code) {
                assert_eq!(class, status::ReplyClass::Tunnel);
            } else if code == 407 {
                assert!(matches!(
                    class,
                    status::ReplyClass::Failed {
                        verdict: status::ProxyVerdict::Own(status::ProxyErrorKind::Auth),
                        ..
                    }
                ));
            } else if !tunnel && !(502..=504).contains(&code) {
                assert_eq!(class, status::ReplyClass::Answer);
            } else if tunnel {
                assert!(matches!(class, status::ReplyClass::Failed { .. }));
            }
        }
    }
}
