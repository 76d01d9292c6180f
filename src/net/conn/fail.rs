//! How failures become [`After::Failed`]: mapping socket, HTTP and decoding errors to
//! the [`FailReason`] an outcome reports.

use std::io;

use super::exchange::{Exchange, ResponseProgress};
use super::{After, Conn, Step};
use crate::fetch::{
    DnsFailure, FailReason, FetchOutcome, ProxyFailKind, ProxyFailure, TimeoutPhase,
};
use crate::http::{DecodeError, HttpError, SharedBytes};
use crate::net::egress::status::{self, OriginFailure, ProxyErrorKind, ProxyVerdict, ReplyClass};

/// A failed `connect()` (at once or reported later by the socket).
pub(crate) fn connect_reason(e: &io::Error) -> FailReason {
    match e.kind() {
        io::ErrorKind::ConnectionRefused => FailReason::Refused,
        io::ErrorKind::ConnectionReset => FailReason::Reset,
        _ => FailReason::Connect(e.to_string()),
    }
}

/// The one place a proxy's verdict becomes a [`FailReason`] (notes-29 §4): the proxy's
/// own failure gets its proxy outcome with `detail`; a failure it reports for the
/// destination gets the reason a direct fetch would have had, so it counts toward the
/// origin as it would without a proxy.
pub(crate) fn verdict_reason(verdict: ProxyVerdict, detail: &str) -> FailReason {
    use OriginFailure as O;
    match verdict {
        ProxyVerdict::Own(kind) => FailReason::Proxy(ProxyFailure::new(proxy_kind(kind), detail)),
        ProxyVerdict::Origin(origin) => match origin {
            O::Dns(status::DnsFailure::NoSuchName) => FailReason::Dns(DnsFailure::NoSuchName),
            O::Dns(status::DnsFailure::TimedOut) => FailReason::Dns(DnsFailure::TimedOut),
            O::Dns(status::DnsFailure::NoAddress) => FailReason::Dns(DnsFailure::NoAddress),
            O::Dns(status::DnsFailure::Failed) => FailReason::Dns(DnsFailure::ServerFailure),
            O::Refused => FailReason::Refused,
            O::ConnectTimeout => FailReason::Timeout(TimeoutPhase::Connect),
            O::Unreachable => FailReason::Connect(format!("unreachable ({detail})")),
            O::Reset => FailReason::Reset,
            O::Tls => FailReason::Tls(format!("at the proxy ({detail})")),
            O::ResponseTimeout => FailReason::Timeout(TimeoutPhase::FirstByte),
            O::BadResponse => FailReason::Protocol(HttpError::NotHttp),
        },
    }
}

/// The fetch vocabulary's name for a proxy failure kind.
fn proxy_kind(kind: ProxyErrorKind) -> ProxyFailKind {
    match kind {
        ProxyErrorKind::Unreachable => ProxyFailKind::Unreachable,
        ProxyErrorKind::Auth => ProxyFailKind::Auth,
        ProxyErrorKind::Error => ProxyFailKind::Error,
        ProxyErrorKind::Protocol => ProxyFailKind::Protocol,
    }
}

/// A failed `connect()` to a proxy: the proxy's failure, never the origin's.
pub(crate) fn proxy_connect_reason(e: &io::Error) -> FailReason {
    FailReason::Proxy(ProxyFailure::new(ProxyFailKind::Unreachable, e.to_string()))
}

/// The proxy failed: the exchange ends with its outcome, neither retried nor sent to
/// another address (the route's health decides when to try the proxy again).
pub(super) fn proxy_failed(ex: Exchange, kind: ProxyFailKind, detail: impl Into<String>) -> Step {
    Step::Done(failed(
        ex,
        None,
        FailReason::Proxy(ProxyFailure::new(kind, detail)),
    ))
}

/// An answer to an absolute-form request through an HTTP proxy: a 407, or a 502-504 the
/// proxy marks as its own (`Proxy-Status`, `X-Squid-Error`), is the proxy's verdict,
/// and the outcome becomes that failure (the head stays, for the record). Any other
/// answer is the origin's, recorded as fetched.
pub(crate) fn proxied_answer(outcome: &mut FetchOutcome, conn: &Conn) {
    let Some(head) = outcome.head.as_ref().filter(|_| conn.absolute) else {
        return;
    };
    if !matches!(head.status, 407 | 502..=504) || outcome.error.is_some() {
        return;
    }
    let mut proxy_status: Vec<u8> = Vec::new();
    for v in head.headers_named("proxy-status") {
        if !proxy_status.is_empty() {
            proxy_status.push(b',');
        }
        proxy_status.extend_from_slice(v);
    }
    let proxy_status = (!proxy_status.is_empty()).then_some(&proxy_status[..]);
    let squid = head.header("x-squid-error");
    if let ReplyClass::Failed {
        verdict,
        error_type,
    } = status::classify(head.status, false, proxy_status, squid)
    {
        let detail = error_type.unwrap_or_else(|| format!("proxy answered {}", head.status));
        outcome.error = Some(verdict_reason(verdict, &detail));
        // The proxy's error page is not the origin's answer: no status for the URL in
        // the crawl log, and no `response` record in the WARC.
        outcome.head = None;
        outcome.payload = None;
        outcome.body = SharedBytes::default();
        outcome.body_complete = false;
    }
}

pub(super) fn io_reason(e: &io::Error) -> FailReason {
    match e.kind() {
        io::ErrorKind::ConnectionReset
        | io::ErrorKind::ConnectionAborted
        | io::ErrorKind::BrokenPipe => FailReason::Reset,
        io::ErrorKind::UnexpectedEof => FailReason::ClosedEarly,
        _ => FailReason::Io(e.to_string()),
    }
}

pub(super) fn http_reason(e: HttpError) -> FailReason {
    match e {
        HttpError::BodyTooLarge => FailReason::TooLarge,
        HttpError::ClosedBeforeResponse => FailReason::ClosedEarly,
        e => FailReason::Protocol(e),
    }
}

pub(super) fn decode_reason(e: DecodeError) -> FailReason {
    match e {
        DecodeError::TooLarge | DecodeError::RatioExceeded => FailReason::TooLarge,
        e => FailReason::Decode(e),
    }
}

/// A failure that is neither retried nor sent to another address.
pub(super) fn failed(
    ex: Exchange,
    reading: Option<Box<ResponseProgress>>,
    reason: FailReason,
) -> After {
    After::Failed {
        ex,
        reading,
        reason,
        retryable: false,
        next_addr: false,
    }
}

/// A connect failure: the loop may try the host's next address.
pub(super) fn connect_failed(ex: Exchange, e: &io::Error) -> After {
    After::Failed {
        ex,
        reading: None,
        reason: connect_reason(e),
        retryable: false,
        next_addr: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proxys_verdict_maps_to_its_own_outcome_or_the_direct_reason() {
        use OriginFailure as O;
        let own = |k| ProxyVerdict::Own(k);
        let origin = ProxyVerdict::Origin;
        let p = |k, d: &str| FailReason::Proxy(ProxyFailure::new(k, d));
        let cases = [
            (
                own(ProxyErrorKind::Unreachable),
                p(ProxyFailKind::Unreachable, "d"),
            ),
            (own(ProxyErrorKind::Auth), p(ProxyFailKind::Auth, "d")),
            (own(ProxyErrorKind::Error), p(ProxyFailKind::Error, "d")),
            (
                own(ProxyErrorKind::Protocol),
                p(ProxyFailKind::Protocol, "d"),
            ),
            (
                origin(O::Dns(status::DnsFailure::NoSuchName)),
                FailReason::Dns(DnsFailure::NoSuchName),
            ),
            (
                origin(O::Dns(status::DnsFailure::TimedOut)),
                FailReason::Dns(DnsFailure::TimedOut),
            ),
            (
                origin(O::Dns(status::DnsFailure::NoAddress)),
                FailReason::Dns(DnsFailure::NoAddress),
            ),
            (
                origin(O::Dns(status::DnsFailure::Failed)),
                FailReason::Dns(DnsFailure::ServerFailure),
            ),
            (origin(O::Refused), FailReason::Refused),
            (
                origin(O::ConnectTimeout),
                FailReason::Timeout(TimeoutPhase::Connect),
            ),
            (
                origin(O::Unreachable),
                FailReason::Connect("unreachable (d)".into()),
            ),
            (origin(O::Reset), FailReason::Reset),
            (origin(O::Tls), FailReason::Tls("at the proxy (d)".into())),
            (
                origin(O::ResponseTimeout),
                FailReason::Timeout(TimeoutPhase::FirstByte),
            ),
            (
                origin(O::BadResponse),
                FailReason::Protocol(HttpError::NotHttp),
            ),
        ];
        for (verdict, want) in cases {
            assert_eq!(verdict_reason(verdict, "d"), want, "{verdict:?}");
        }
    }

    #[test]
    fn squid_and_socks_failures_reach_the_reasons_the_notes_promise() {
        // ERR_DNS_FAIL: the name is dead, as if trawl had resolved it.
        let v = status::squid_verdict("ERR_DNS_FAIL", None);
        assert_eq!(
            verdict_reason(v, "x"),
            FailReason::Dns(DnsFailure::NoSuchName)
        );
        let v = status::squid_verdict("ERR_CONNECT_FAIL", Some(111));
        assert_eq!(verdict_reason(v, "x"), FailReason::Refused);
        let v = crate::net::egress::socks5::rep_verdict(0x06);
        assert_eq!(
            verdict_reason(v, "x"),
            FailReason::Timeout(TimeoutPhase::Connect)
        );
        let v = crate::net::egress::socks5::rep_verdict(0x02);
        assert!(matches!(
            verdict_reason(v, "x"),
            FailReason::Proxy(ProxyFailure {
                kind: ProxyFailKind::Error,
                ..
            })
        ));
    }
}
