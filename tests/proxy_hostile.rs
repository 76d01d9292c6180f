//! What squid 5.7 makes of synthweb's hostile hosts (issue 29, notes §13: "squid turns
//! some hostile behaviour into its own 502s: record the mapping"): for each hostile
//! host, the head squid answers an absolute-form `GET` with, and its answer to a
//! `CONNECT` (the behaviour then reaches the client inside the tunnel, as it would
//! directly). Each answer is given to trawl's classifier too, and what trawl would
//! make of it is printed beside what it means (`MISREAD` where they differ), without
//! failing the test. The table is in docs/network.md, "What the real servers send".

mod crawl_support;
mod proxy_support;

use std::time::Duration;

use proxy_support::{header, response_head, status_of, Lab, SquidConfig, HOSTILE_WORLD};
use trawl::net::egress::status::{classify, OriginFailure, ProxyVerdict, ReplyClass};

#[test]
fn proxy_hostile() {
    proxy_support::run_in_namespace("inner_proxy_hostile", false, Duration::from_secs(300));
}

#[test]
fn inner_proxy_hostile() {
    let Some(lab) = Lab::enter(&HOSTILE_WORLD) else {
        return;
    };
    proxy_support::run_cases(&lab, &[("squid_in_front_of_hostile_hosts", squid_in_front)]);
}

/// One hostile host: its index, behaviour, and squid's answer to a `GET` of `/p/1`
/// (status, `X-Squid-Error`), and what that answer means for the origin.
type HostileCase = (
    usize,
    &'static str,
    u16,
    Option<&'static str>,
    Option<ProxyVerdict>,
);

fn squid_in_front(lab: &Lab) {
    use OriginFailure as O;
    let squid = lab.squid(
        "hostile",
        SquidConfig {
            read_timeout_secs: 3,
            connect_timeout_secs: 3,
            ..SquidConfig::default()
        },
    );
    let origin = |o| Some(ProxyVerdict::Origin(o));
    // A 200 relayed from a broken origin is squid relaying what it could: the damage
    // (a cut body, a bad chunk) reaches trawl in the body, which trawl reads itself.
    let cases: Vec<HostileCase> = vec![
        (
            8,
            "head 1 byte a second",
            504,
            Some("ERR_READ_TIMEOUT 0"),
            origin(O::ResponseTimeout),
        ),
        (9, "chunked body without end", 200, None, None),
        (10, "Content-Length twice the body, close", 200, None, None),
        (
            11,
            "Content-Length half the body, a fake second response",
            200,
            None,
            None,
        ),
        (12, "a bad chunk size line", 200, None, None),
        (
            13,
            "a 1 MiB header block",
            502,
            Some("ERR_TOO_BIG 0"),
            origin(O::BadResponse),
        ),
        (
            14,
            "10,000 header fields",
            502,
            Some("ERR_TOO_BIG 0"),
            origin(O::BadResponse),
        ),
        (15, "bare LF line ends", 200, None, None),
        (16, "gzip bomb", 200, None, None),
        (17, "half the body, then RST", 200, None, None),
        (
            18,
            "closed before any response byte",
            502,
            Some("ERR_ZERO_SIZE_OBJECT 0"),
            origin(O::Reset),
        ),
        (
            19,
            "never answered",
            504,
            Some("ERR_READ_TIMEOUT 0"),
            origin(O::ResponseTimeout),
        ),
        (20, "HTTP/0.9 reply (no status line)", 200, None, None),
        (21, "4 KiB of binary garbage", 200, None, None),
        (22, "TLS fails (plain HTTP normal)", 200, None, None),
        (
            23,
            "expired certificate (plain HTTP normal)",
            200,
            None,
            None,
        ),
    ];
    let results: Vec<(HostileCase, String, String)> = std::thread::scope(|s| {
        let handles: Vec<_> = cases
            .into_iter()
            .map(|c| {
                let h = &lab.hosts[c.0];
                let squid = &squid;
                s.spawn(move || {
                    let authority = format!("{}:{}", h.name, h.http_port);
                    let get =
                        format!("GET http://{authority}/p/1 HTTP/1.1\r\nHost: {authority}\r\n\r\n");
                    let tls = format!("{}:{}", h.name, h.https_port);
                    let connect = format!("CONNECT {tls} HTTP/1.1\r\nHost: {tls}\r\n\r\n");
                    let limit = Duration::from_secs(15);
                    (
                        c,
                        response_head(squid.addr(), get.as_bytes(), limit),
                        response_head(squid.addr(), connect.as_bytes(), limit),
                    )
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("probe"))
            .collect()
    });
    let mut report = Vec::new();
    let mut wrong = Vec::new();
    for ((host, what, status, squid_error, meaning), head, tunnel) in results {
        let got = (status_of(&head), header(&head, "X-Squid-Error"));
        if got != (status, squid_error) || status_of(&tunnel) != 200 {
            wrong.push(format!(
                "host {host} ({what}): GET got {got:?}, CONNECT got {:?}:\n{head}",
                tunnel.lines().next()
            ));
            continue;
        }
        let trawl = match classify(
            status,
            false,
            header(&head, "Proxy-Status").map(str::as_bytes),
            header(&head, "X-Squid-Error").map(str::as_bytes),
        ) {
            ReplyClass::Failed { verdict, .. } => Some(verdict),
            ReplyClass::Tunnel | ReplyClass::Answer => None,
        };
        let mark = if trawl == meaning { "" } else { "  MISREAD" };
        report.push(format!(
            "host {host:>2} {what:<54} GET: {status} {:<24} CONNECT: 200; means {meaning:?}, \
             trawl reads {trawl:?}{mark}",
            squid_error.unwrap_or("-")
        ));
    }
    eprintln!(
        "squid 5.7 in front of hostile hosts:\n{}",
        report.join("\n")
    );
    assert!(
        wrong.is_empty(),
        "squid answered otherwise:\n{}",
        wrong.join("\n")
    );
}
