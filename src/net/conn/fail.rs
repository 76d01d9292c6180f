//! How failures become [`After::Failed`]: mapping socket, HTTP and decoding errors to
//! the [`FailReason`] an outcome reports.

use std::io;

use super::exchange::{Exchange, ResponseProgress};
use super::After;
use crate::fetch::{DnsFailure, FailReason, ProxyFailKind, ProxyFailure, TimeoutPhase};
use crate::http::{DecodeError, HttpError};
use crate::net::egress::status::{self, OriginFailure, ProxyErrorKind, ProxyVerdict};

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
#[allow(dead_code, reason = "the proxy phases use it (issue 29 step 5)")]
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
#[allow(dead_code, reason = "the proxy phases use it (issue 29 step 5)")]
pub(crate) fn proxy_kind(kind: ProxyErrorKind) -> ProxyFailKind {
    match kind {
        ProxyErrorKind::Unreachable => ProxyFailKind::Unreachable,
        ProxyErrorKind::Auth => ProxyFailKind::Auth,
        ProxyErrorKind::Error => ProxyFailKind::Error,
        ProxyErrorKind::Protocol => ProxyFailKind::Protocol,
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
