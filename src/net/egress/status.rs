//! Whose failure is a proxy's error answer: `Proxy-Status` (RFC 9209) and squid's
//! `X-Squid-Error`, mapped to a typed [`ProxyVerdict`] (notes §4).
//!
//! A proxy's error answer is either about the proxy itself (its configuration, its
//! limits, a refusal: [`ProxyVerdict::Own`], which must never count toward giving up the
//! origin) or about the destination it tried to reach for us (a dead name, a refused
//! port: [`ProxyVerdict::Origin`], which counts as it would on a direct fetch, or a dead
//! origin behind a proxy would be retried forever). The fetcher turns a verdict into its
//! `FailReason` (a later step of issue 29).
//!
//! `Proxy-Status` is a Structured Fields list (RFC 8941); each intermediary appends its
//! member, so the last member is the proxy nearest to trawl, the only one that speaks
//! for our route.

#![deny(clippy::indexing_slicing)]

/// Members of a `Proxy-Status` list read at most.
pub const MAX_STATUS_MEMBERS: usize = 32;
/// Parameters of one member read at most.
pub const MAX_STATUS_PARAMS: usize = 32;
/// The longest error type kept for an annotation (`via-proxy:<error-type>`).
pub const MAX_ERROR_TYPE_BYTES: usize = 64;

/// A failure of the proxy itself, or of the protocol spoken with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProxyErrorKind {
    /// Connecting to the proxy failed, or it closed before answering
    /// (`proxy-unreachable`).
    Unreachable,
    /// The proxy refused our credentials, or wants some (`proxy-auth`; not retried).
    Auth,
    /// The proxy answered with an error of its own (`proxy-error`).
    Error,
    /// The proxy's answer does not parse (`proxy-protocol`).
    Protocol,
}

/// How a name failed, as the proxy reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DnsFailure {
    /// NXDOMAIN (or squid's `ERR_DNS_FAIL`): the name is dead.
    NoSuchName,
    /// The resolver timed out.
    TimedOut,
    /// The name has no address.
    NoAddress,
    /// Another DNS error (SERVFAIL, REFUSED, no rcode given).
    Failed,
}

/// The destination's own failure, reported by the proxy that tried it: the reason a
/// direct fetch would have got.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OriginFailure {
    /// The name did not resolve.
    Dns(DnsFailure),
    /// The origin refused the connection.
    Refused,
    /// Connecting to the origin timed out.
    ConnectTimeout,
    /// The origin's network or host is unreachable.
    Unreachable,
    /// The origin reset or closed the connection.
    Reset,
    /// TLS with the origin failed.
    Tls,
    /// The origin did not answer in time.
    ResponseTimeout,
    /// The origin's response was malformed or too large for the proxy.
    BadResponse,
}

/// Whose failure a proxy's error is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProxyVerdict {
    /// The proxy's own: never counts toward giving up the origin.
    Own(ProxyErrorKind),
    /// The origin's, as the proxy saw it: counts as a direct failure would.
    Origin(OriginFailure),
}

/// What a proxy's response head means for the request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplyClass {
    /// A 2xx answer to `CONNECT`: the tunnel is open.
    Tunnel,
    /// The origin's own response (relayed by the proxy): recorded as fetched.
    Answer,
    /// A failure, and the error type the proxy named (`dns_error`, `ERR_CONNECT_FAIL`),
    /// for the `via-proxy:` annotation.
    Failed {
        /// Whose failure.
        verdict: ProxyVerdict,
        /// The proxy's name for it, when it gave one (at most
        /// [`MAX_ERROR_TYPE_BYTES`], `[A-Za-z0-9_.-]` only).
        error_type: Option<String>,
    },
}

/// Classifies a proxy's response head.
///
/// `tunnel` is true for the answer to our `CONNECT`, false for a request sent in
/// absolute form. `proxy_status` and `squid_error` are the header values (several
/// `Proxy-Status` lines joined with `,`); a value that does not parse counts as absent.
///
/// - A 2xx to `CONNECT` opens the tunnel; 407 is always the proxy's (`Auth`).
/// - Any other answer to `CONNECT` is a failure: the origin's when the proxy says so
///   (the table in [`error_type_verdict`] and [`squid_verdict`]), else the proxy's own.
/// - In absolute form, a 502, 503 or 504 marked by the proxy is a failure as above; any
///   other answer, and a 5xx with no mark, is the origin's response.
pub fn classify(
    status: u16,
    tunnel: bool,
    proxy_status: Option<&[u8]>,
    squid_error: Option<&[u8]>,
) -> ReplyClass {
    if tunnel && (200..300).contains(&status) {
        return ReplyClass::Tunnel;
    }
    if status == 407 {
        return ReplyClass::Failed {
            verdict: ProxyVerdict::Own(ProxyErrorKind::Auth),
            error_type: None,
        };
    }
    if !tunnel && !matches!(status, 502..=504) {
        return ReplyClass::Answer;
    }
    let nearest = proxy_status.and_then(|v| nearest_error(v).ok().flatten());
    let marked = match nearest {
        Some(e) => Some((error_type_verdict(&e.error, e.rcode.as_deref()), e.error)),
        None => squid_error
            .and_then(parse_squid_error)
            .map(|s| (squid_verdict(&s.code, s.errno), s.code)),
    };
    match (marked, tunnel) {
        (Some((verdict, name)), _) => ReplyClass::Failed {
            verdict,
            error_type: Some(name),
        },
        (None, true) => ReplyClass::Failed {
            verdict: ProxyVerdict::Own(ProxyErrorKind::Error),
            error_type: None,
        },
        (None, false) => ReplyClass::Answer,
    }
}

/// The error the nearest proxy reports in a `Proxy-Status` list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusError {
    /// The `error` parameter (an RFC 9209 error type).
    pub error: String,
    /// The `rcode` parameter, for `dns_error`.
    pub rcode: Option<String>,
}

/// Why a `Proxy-Status` value is not a Structured Fields list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StatusParseError {
    /// Not a list of items with parameters (RFC 8941 §4.2).
    #[error("malformed Proxy-Status list")]
    Malformed,
    /// More than [`MAX_STATUS_MEMBERS`] members or [`MAX_STATUS_PARAMS`] parameters.
    #[error("Proxy-Status list too long")]
    TooLong,
}

/// The last member's `error` (and `rcode`), if it has one.
///
/// # Errors
/// [`StatusParseError`] when the value is not an RFC 8941 list.
pub fn nearest_error(value: &[u8]) -> Result<Option<StatusError>, StatusParseError> {
    let members = parse_list(value)?;
    let Some(last) = members.last() else {
        return Ok(None);
    };
    let text = |key: &str| {
        last.iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| match v {
                Bare::Text(t) => Some(t.clone()),
                Bare::Other => None,
            })
    };
    Ok(text("error").map(|error| StatusError {
        error: sanitize(&error),
        rcode: text("rcode"),
    }))
}

/// The verdict for an RFC 9209 error type (§2.3), `rcode` for `dns_error`. Types about
/// the destination are the origin's; the proxy's own and unknown types are the proxy's.
pub fn error_type_verdict(error: &str, rcode: Option<&str>) -> ProxyVerdict {
    use OriginFailure as O;
    let origin = match error {
        "dns_error" => match rcode {
            Some(r) if r.eq_ignore_ascii_case("NXDOMAIN") => O::Dns(DnsFailure::NoSuchName),
            _ => O::Dns(DnsFailure::Failed),
        },
        "dns_timeout" => O::Dns(DnsFailure::TimedOut),
        "destination_not_found" => O::Dns(DnsFailure::NoAddress),
        "destination_unavailable" | "destination_ip_unroutable" => O::Unreachable,
        "connection_refused" => O::Refused,
        "connection_timeout" => O::ConnectTimeout,
        "connection_terminated" => O::Reset,
        "connection_read_timeout" | "connection_write_timeout" | "http_response_timeout" => {
            O::ResponseTimeout
        }
        "tls_protocol_error" | "tls_certificate_error" | "tls_alert_received" => O::Tls,
        "http_response_incomplete"
        | "http_response_header_section_size"
        | "http_response_header_size"
        | "http_response_body_size"
        | "http_response_trailer_section_size"
        | "http_response_trailer_size"
        | "http_response_transfer_coding"
        | "http_response_content_coding"
        | "http_upgrade_failed"
        | "http_protocol_error" => O::BadResponse,
        // proxy_internal_error, proxy_configuration_error, proxy_loop_detected,
        // proxy_internal_response, http_request_denied, http_request_error,
        // destination_ip_prohibited, connection_limit_reached, and types this table
        // does not know: the proxy's.
        _ => return ProxyVerdict::Own(ProxyErrorKind::Error),
    };
    ProxyVerdict::Origin(origin)
}

/// squid's `X-Squid-Error: CODE [errno]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SquidError {
    /// `ERR_…`.
    pub code: String,
    /// The system error number squid appends (`111` for ECONNREFUSED).
    pub errno: Option<u32>,
}

/// Parses an `X-Squid-Error` value; `None` unless it starts with an `ERR_` code.
pub fn parse_squid_error(value: &[u8]) -> Option<SquidError> {
    let text = std::str::from_utf8(value).ok()?.trim();
    let mut words = text.split_ascii_whitespace();
    let code = words.next()?;
    let valid = code.starts_with("ERR_")
        && code.len() <= MAX_ERROR_TYPE_BYTES
        && code
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    if !valid {
        return None;
    }
    let errno = words.next().and_then(|w| w.parse().ok());
    Some(SquidError {
        code: code.to_owned(),
        errno,
    })
}

/// The verdict for a squid error code (squid 5's `errors/` templates).
pub fn squid_verdict(code: &str, errno: Option<u32>) -> ProxyVerdict {
    use OriginFailure as O;
    let origin = match code {
        "ERR_DNS_FAIL" => O::Dns(DnsFailure::NoSuchName),
        "ERR_CONNECT_FAIL" => match errno {
            Some(111) => O::Refused,        // ECONNREFUSED
            Some(110) => O::ConnectTimeout, // ETIMEDOUT
            Some(104) => O::Reset,          // ECONNRESET
            _ => O::Unreachable,
        },
        "ERR_READ_TIMEOUT" | "ERR_LIFETIME_EXP" => O::ResponseTimeout,
        "ERR_ZERO_SIZE_OBJECT" => O::Reset,
        // squid 5.7 (Debian 12) answers a name that does not resolve with
        // `ERR_READ_ERROR 0` (GET) or `ERR_CANNOT_FORWARD 0` (CONNECT), not
        // ERR_DNS_FAIL (squid bug 5294, fixed in squid 6); an origin's reset reads
        // `ERR_READ_ERROR 104`. Both say squid could not reach the destination: the
        // origin's failure, counted as a direct one would be (measured,
        // docs/network.md "What the real servers send").
        "ERR_READ_ERROR" => match errno {
            Some(104) => O::Reset,
            _ => O::Unreachable,
        },
        "ERR_CANNOT_FORWARD" => O::Unreachable,
        // The origin's response head was too large for squid (hostile hosts: a 1 MiB
        // header block): the origin's bad answer, as trawl would judge it directly.
        "ERR_INVALID_RESP" | "ERR_TOO_BIG" => O::BadResponse,
        "ERR_SECURE_CONNECT_FAIL" => O::Tls,
        "ERR_CACHE_ACCESS_DENIED" => return ProxyVerdict::Own(ProxyErrorKind::Auth),
        // ERR_ACCESS_DENIED, ERR_GATEWAY_FAILURE, ERR_SHUTTING_DOWN, ERR_INVALID_REQ,
        // and the rest: the proxy's.
        _ => return ProxyVerdict::Own(ProxyErrorKind::Error),
    };
    ProxyVerdict::Origin(origin)
}

/// A parameter's value: a token or string as text; numbers, booleans and byte
/// sequences are not needed.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Bare {
    Text(String),
    Other,
}

type Params = Vec<(String, Bare)>;

/// RFC 8941 §4.2.1 (lists of items with parameters; inner lists are refused).
fn parse_list(input: &[u8]) -> Result<Vec<Params>, StatusParseError> {
    let mut p = Cursor { s: input, i: 0 };
    let mut members = Vec::new();
    p.skip(|b| b == b' ' || b == b'\t');
    if p.at_end() {
        return Ok(members);
    }
    loop {
        if members.len() >= MAX_STATUS_MEMBERS {
            return Err(StatusParseError::TooLong);
        }
        p.bare_item()?;
        members.push(p.params()?);
        p.skip(|b| b == b' ' || b == b'\t');
        if p.at_end() {
            return Ok(members);
        }
        if p.next() != Some(b',') {
            return Err(StatusParseError::Malformed);
        }
        p.skip(|b| b == b' ' || b == b'\t');
        if p.at_end() {
            return Err(StatusParseError::Malformed);
        }
    }
}

struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.i += 1;
        Some(b)
    }

    fn at_end(&self) -> bool {
        self.i >= self.s.len()
    }

    fn skip(&mut self, f: impl Fn(u8) -> bool) {
        while self.peek().is_some_and(&f) {
            self.i += 1;
        }
    }

    fn take(&mut self, f: impl Fn(u8) -> bool) -> &[u8] {
        let start = self.i;
        self.skip(f);
        self.s.get(start..self.i).unwrap_or(&[])
    }

    fn params(&mut self) -> Result<Params, StatusParseError> {
        let mut params = Params::new();
        while self.peek() == Some(b';') {
            self.i += 1;
            self.skip(|b| b == b' ');
            let first = self.peek().ok_or(StatusParseError::Malformed)?;
            if !(first.is_ascii_lowercase() || first == b'*') {
                return Err(StatusParseError::Malformed);
            }
            let key = self.take(|b| {
                b.is_ascii_lowercase()
                    || b.is_ascii_digit()
                    || matches!(b, b'_' | b'-' | b'.' | b'*')
            });
            let key = String::from_utf8_lossy(key).into_owned();
            let value = if self.peek() == Some(b'=') {
                self.i += 1;
                self.bare_item()?
            } else {
                Bare::Other
            };
            if params.len() >= MAX_STATUS_PARAMS {
                return Err(StatusParseError::TooLong);
            }
            params.push((key, value));
        }
        Ok(params)
    }

    fn bare_item(&mut self) -> Result<Bare, StatusParseError> {
        match self.peek().ok_or(StatusParseError::Malformed)? {
            b'"' => self.string(),
            b'-' | b'0'..=b'9' => {
                self.i += 1;
                let digits = self.take(|b| b.is_ascii_digit() || b == b'.');
                if digits.len() > 20 || digits.iter().filter(|&&b| b == b'.').count() > 1 {
                    return Err(StatusParseError::Malformed);
                }
                Ok(Bare::Other)
            }
            b'?' => {
                self.i += 1;
                match self.next() {
                    Some(b'0' | b'1') => Ok(Bare::Other),
                    _ => Err(StatusParseError::Malformed),
                }
            }
            b':' => {
                self.i += 1;
                self.skip(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='));
                match self.next() {
                    Some(b':') => Ok(Bare::Other),
                    _ => Err(StatusParseError::Malformed),
                }
            }
            b if b.is_ascii_alphabetic() || b == b'*' => {
                let token =
                    self.take(|b| b.is_ascii_alphanumeric() || b":/!#$%&'*+-.^_`|~".contains(&b));
                Ok(Bare::Text(String::from_utf8_lossy(token).into_owned()))
            }
            _ => Err(StatusParseError::Malformed),
        }
    }

    fn string(&mut self) -> Result<Bare, StatusParseError> {
        self.i += 1;
        let mut out = Vec::new();
        loop {
            match self.next().ok_or(StatusParseError::Malformed)? {
                b'"' => return Ok(Bare::Text(String::from_utf8_lossy(&out).into_owned())),
                b'\\' => match self.next() {
                    Some(c @ (b'"' | b'\\')) => out.push(c),
                    _ => return Err(StatusParseError::Malformed),
                },
                c @ 0x20..=0x7e => out.push(c),
                _ => return Err(StatusParseError::Malformed),
            }
        }
    }
}

/// An error type fit for an annotation: at most [`MAX_ERROR_TYPE_BYTES`] of
/// `[A-Za-z0-9_.-]`, anything else dropped.
fn sanitize(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        .take(MAX_ERROR_TYPE_BYTES)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(verdict: ProxyVerdict, name: Option<&str>) -> ReplyClass {
        ReplyClass::Failed {
            verdict,
            error_type: name.map(str::to_owned),
        }
    }

    /// A `Proxy-Status` value and the nearest error (type, rcode) it reports.
    type StatusCase<'a> = (&'a str, Option<(&'a str, Option<&'a str>)>);

    #[test]
    fn proxy_status_lists() {
        let table: &[StatusCase<'_>] = &[
            ("", None),
            ("proxy.example", None),
            (
                r#"r.example; error=dns_error; rcode="NXDOMAIN""#,
                Some(("dns_error", Some("NXDOMAIN"))),
            ),
            (
                r#"origin-side; error=connection_refused, "near proxy"; error=http_request_denied; details="no \"way\"""#,
                Some(("http_request_denied", None)),
            ),
            ("a; error=connection_timeout, b", None),
            (
                "squid; error=dns_error; rcode=NXDOMAIN; info-code=3; x=?1; y=:AAE=:; z=1.5",
                Some(("dns_error", Some("NXDOMAIN"))),
            ),
            (
                "*x; error=\"tls_alert_received\"",
                Some(("tls_alert_received", None)),
            ),
        ];
        for &(value, want) in table {
            let got = nearest_error(value.as_bytes()).unwrap_or_else(|e| panic!("{value}: {e}"));
            let want = want.map(|(e, r)| StatusError {
                error: e.into(),
                rcode: r.map(Into::into),
            });
            assert_eq!(got, want, "{value}");
        }
        for bad in [
            "a,",
            ",a",
            "a;",
            "a;E=1",
            "\"open",
            "a; e=\"\\x\"",
            "(inner)",
            "a b",
            "a;e=?2",
            "a;e=:abc",
            "a;e=1.2.3",
        ] {
            assert_eq!(
                nearest_error(bad.as_bytes()),
                Err(StatusParseError::Malformed),
                "{bad}"
            );
        }
        let long = vec!["p"; MAX_STATUS_MEMBERS + 1].join(",");
        assert_eq!(
            nearest_error(long.as_bytes()),
            Err(StatusParseError::TooLong)
        );
    }

    #[test]
    fn squid_errors() {
        assert_eq!(
            parse_squid_error(b"ERR_CONNECT_FAIL 111"),
            Some(SquidError {
                code: "ERR_CONNECT_FAIL".into(),
                errno: Some(111)
            })
        );
        assert_eq!(
            parse_squid_error(b" ERR_DNS_FAIL 0 "),
            Some(SquidError {
                code: "ERR_DNS_FAIL".into(),
                errno: Some(0)
            })
        );
        assert_eq!(parse_squid_error(b"err_dns_fail"), None);
        assert_eq!(parse_squid_error(b"OK"), None);
        assert_eq!(parse_squid_error(b"\xff"), None);
    }

    #[test]
    fn verdicts_of_notes_section_4() {
        use DnsFailure as D;
        use OriginFailure as O;
        use ProxyErrorKind as K;
        use ProxyVerdict::{Origin, Own};
        let types: &[(&str, Option<&str>, ProxyVerdict)] = &[
            ("dns_error", Some("NXDOMAIN"), Origin(O::Dns(D::NoSuchName))),
            ("dns_error", Some("SERVFAIL"), Origin(O::Dns(D::Failed))),
            ("dns_error", None, Origin(O::Dns(D::Failed))),
            ("dns_timeout", None, Origin(O::Dns(D::TimedOut))),
            ("destination_not_found", None, Origin(O::Dns(D::NoAddress))),
            ("destination_unavailable", None, Origin(O::Unreachable)),
            ("destination_ip_unroutable", None, Origin(O::Unreachable)),
            ("connection_refused", None, Origin(O::Refused)),
            ("connection_timeout", None, Origin(O::ConnectTimeout)),
            ("connection_terminated", None, Origin(O::Reset)),
            ("http_response_timeout", None, Origin(O::ResponseTimeout)),
            ("tls_certificate_error", None, Origin(O::Tls)),
            ("http_response_incomplete", None, Origin(O::BadResponse)),
            ("proxy_internal_error", None, Own(K::Error)),
            ("proxy_configuration_error", None, Own(K::Error)),
            ("proxy_loop_detected", None, Own(K::Error)),
            ("http_request_denied", None, Own(K::Error)),
            ("destination_ip_prohibited", None, Own(K::Error)),
            ("connection_limit_reached", None, Own(K::Error)),
            ("something_new", None, Own(K::Error)),
        ];
        for &(error, rcode, want) in types {
            assert_eq!(error_type_verdict(error, rcode), want, "{error}");
        }
        let squid: &[(&str, Option<u32>, ProxyVerdict)] = &[
            ("ERR_DNS_FAIL", Some(0), Origin(O::Dns(D::NoSuchName))),
            ("ERR_CONNECT_FAIL", Some(111), Origin(O::Refused)),
            ("ERR_CONNECT_FAIL", Some(110), Origin(O::ConnectTimeout)),
            ("ERR_CONNECT_FAIL", Some(113), Origin(O::Unreachable)),
            ("ERR_READ_TIMEOUT", None, Origin(O::ResponseTimeout)),
            ("ERR_SECURE_CONNECT_FAIL", None, Origin(O::Tls)),
            ("ERR_CACHE_ACCESS_DENIED", None, Own(K::Auth)),
            ("ERR_ACCESS_DENIED", None, Own(K::Error)),
            ("ERR_TOO_BIG", Some(0), Origin(O::BadResponse)),
            // squid 5.7's answers for a dead name (bug 5294) and an origin's reset.
            ("ERR_READ_ERROR", Some(0), Origin(O::Unreachable)),
            ("ERR_READ_ERROR", Some(104), Origin(O::Reset)),
            ("ERR_CANNOT_FORWARD", Some(0), Origin(O::Unreachable)),
            ("ERR_GATEWAY_FAILURE", None, Own(K::Error)),
        ];
        for &(code, errno, want) in squid {
            assert_eq!(squid_verdict(code, errno), want, "{code}");
        }
    }

    #[test]
    fn classify_connect_and_absolute_form() {
        use ProxyVerdict::{Origin, Own};
        let ps = Some(&b"squid; error=connection_refused"[..]);
        let sq = Some(&b"ERR_DNS_FAIL 0"[..]);
        assert_eq!(classify(200, true, ps, sq), ReplyClass::Tunnel);
        assert_eq!(
            classify(407, true, None, None),
            failed(Own(ProxyErrorKind::Auth), None)
        );
        assert_eq!(
            classify(407, false, None, None),
            failed(Own(ProxyErrorKind::Auth), None)
        );
        // Proxy-Status wins over X-Squid-Error.
        assert_eq!(
            classify(503, true, ps, sq),
            failed(Origin(OriginFailure::Refused), Some("connection_refused"))
        );
        assert_eq!(
            classify(503, false, None, sq),
            failed(
                Origin(OriginFailure::Dns(DnsFailure::NoSuchName)),
                Some("ERR_DNS_FAIL")
            )
        );
        // An unmarked CONNECT failure is the proxy's; an unmarked 5xx is the origin's.
        assert_eq!(
            classify(503, true, None, None),
            failed(Own(ProxyErrorKind::Error), None)
        );
        assert_eq!(
            classify(403, true, None, None),
            failed(Own(ProxyErrorKind::Error), None)
        );
        assert_eq!(classify(503, false, None, None), ReplyClass::Answer);
        // Only 502-504 are read for marks in absolute form.
        assert_eq!(classify(500, false, ps, sq), ReplyClass::Answer);
        assert_eq!(classify(200, false, ps, sq), ReplyClass::Answer);
        // A malformed Proxy-Status counts as absent.
        assert_eq!(
            classify(502, false, Some(b"bad value;"), sq),
            failed(
                Origin(OriginFailure::Dns(DnsFailure::NoSuchName)),
                Some("ERR_DNS_FAIL")
            )
        );
        // A member that forwarded without error: not our proxy's mark.
        assert_eq!(
            classify(
                502,
                false,
                Some(b"far; error=proxy_internal_error, near"),
                None
            ),
            ReplyClass::Answer
        );
    }
}
