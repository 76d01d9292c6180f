//! The records of one finished fetch, built from plain values: its crawl-log line, its
//! WARC capture (with the `metadata` record of its referrer, hop path and links, or a
//! revisit in a re-crawl) and the facts of this crawl's re-crawl index entry.
//!
//! [`build`] touches no socket, no file and no clock: the time comes in as an input.
//! What needs the world happens around it in the driver (`mod.rs`): judging a page
//! answer against the previous crawl and reading a `304`'s links back from its WARC
//! files before; the handler's hooks, compressing the capture, counting and sending
//! to the output thread after.

use std::time::Duration;

use crate::crawllog::{LogRecord, Outcome};
use crate::engine::core::hops_path;
use crate::fetch::{FailReason, FetchOutcome, ProxyFailKind};
use crate::frontier::QueuedUrl;
use crate::http::ResponseHead;
use crate::provenance::{FetchTimings, Hop};
use crate::provenance::{Truncation, WarcDate};
use crate::recrawl::{IndexFacts, Judgement, Verdict};
use crate::warc::{Capture, CaptureMetadata, Outlink};

/// A finished fetch as the core hands it to the driver (`Action::Record`).
pub(super) struct Fetched<'a> {
    pub outcome: &'a FetchOutcome,
    /// The page the URL was found on (for a robots.txt, the URL it was fetched for).
    pub via: Option<&'a str>,
    /// The hop path from the seed (`P` for a robots.txt).
    pub hops: &'a str,
    /// For a page: its queued URL and the links found on it (canonical URL and hop).
    /// `None` for a robots.txt, which has no metadata record and no index entry.
    pub page: Option<(&'a QueuedUrl, &'a [(String, Hop)])>,
    /// The core's annotations for the log line (`noindex`, ...).
    pub annotations: &'a [String],
}

/// What a re-crawl learnt about a page answer before its records are built (all
/// empty in a first crawl).
#[derive(Default)]
pub(super) struct Recrawled<'a> {
    /// The answer judged against the previous capture (the core's, `core/recrawl.rs`).
    pub judgement: Option<&'a Judgement>,
    /// A `304`'s links, read back from the previous crawl (`None` when not read, or
    /// when they could not be).
    pub previous_links: Option<&'a [(String, Hop)]>,
    /// The annotations reading them left (`previous-links:N`, `links-truncated:M`,
    /// `previous-links-error`), after the verdict's on the log line.
    pub notes: &'a [String],
}

/// The settings that decide which records a fetch gets.
#[derive(Debug, Clone, Copy)]
pub(super) struct RecordPolicy {
    /// WARC output is on: captures and index entries are made.
    pub warc: bool,
    /// A page the core annotated `noindex` gets its log line only.
    pub skip_noindex: bool,
}

/// The records of one fetch, for the handler's hooks and the output thread.
#[derive(Debug)]
pub(super) struct Records {
    pub log: LogRecord,
    /// Uncompressed; `None` without WARC output, without a response head, or for a
    /// skipped `noindex` page.
    pub capture: Option<Capture>,
    /// This crawl's index entry for a page answer (WARC output only).
    pub index: Option<Box<IndexFacts>>,
}

/// Builds the records of `fetched` as of `now`, the time of its log line and the
/// `WARC-Date` of its capture.
pub(super) fn build(
    policy: RecordPolicy,
    fetched: &Fetched<'_>,
    recrawl: &Recrawled<'_>,
    now: WarcDate,
) -> Records {
    let o = fetched.outcome;
    let outcome = o.error.as_ref().map_or(Outcome::Fetched, outcome_of);
    let mut log = LogRecord::new(now, o.url.as_str(), outcome);
    log.status = o.status();
    log.bytes = o.wire_bytes;
    log.hops = hops_path(fetched.hops);
    log.via = fetched.via.map(str::to_owned);
    log.timings = timings_of(o);
    log.media_type = o.head.as_ref().and_then(ResponseHead::media_type);
    log.annotations.extend_from_slice(fetched.annotations);
    if let Some(r) = &o.error {
        log.annotations.push(format!("error:{r}"));
    }
    if o.body_truncated {
        log.truncated = Some(Truncation::Length);
    }
    let judgement = recrawl.judgement;
    if let Some(note) = judgement.and_then(Judgement::annotation) {
        log.annotations.push(note.to_owned());
    }
    log.annotations.extend_from_slice(recrawl.notes);
    let kept =
        policy.warc && !(policy.skip_noindex && fetched.annotations.iter().any(|a| a == "noindex"));
    let index = fetched
        .page
        .filter(|_| kept)
        .and_then(|(item, _)| IndexFacts::of_outcome(o, item, now, judgement))
        .map(Box::new);
    // The capture shares the outcome's buffers (request, head, payload): no copy.
    let capture = kept
        .then(|| Capture::from_outcome(o, now))
        .flatten()
        .map(|mut capture| {
            capture.revisit = judgement.and_then(|j| j.revisit.clone());
            capture.metadata = fetched
                .page
                .map(|(item, links)| metadata(o, item, links, judgement, recrawl));
            capture
        });
    Records {
        log,
        capture,
        index,
    }
}

/// The `metadata` record of a page's capture.
fn metadata(
    o: &FetchOutcome,
    item: &QueuedUrl,
    links: &[(String, Hop)],
    judgement: Option<&Judgement>,
    recrawl: &Recrawled<'_>,
) -> CaptureMetadata {
    // A 304 whose links could not be read back: the metadata record says so.
    let links_unknown = recrawl.previous_links.is_none()
        && judgement.is_some_and(|j| j.verdict == Verdict::NotModified);
    CaptureMetadata {
        via: item.via.clone(),
        hops_path: item.hops.clone(),
        // A 304's links are the previous crawl's: written again, so the next re-crawl
        // finds them after this revisit.
        outlinks: links
            .iter()
            .chain(recrawl.previous_links.into_iter().flatten())
            .map(|(url, hop)| Outlink {
                url: url.clone(),
                hop: *hop,
            })
            .collect(),
        outlinks_unknown: links_unknown,
        timings: timings_of(o),
    }
}

/// The crawl-log outcome of a failed fetch.
fn outcome_of(r: &FailReason) -> Outcome {
    match r {
        FailReason::Dns(_) => Outcome::DnsError,
        FailReason::Refused | FailReason::Connect(_) => Outcome::ConnectError,
        FailReason::Tls(_) => Outcome::TlsError,
        FailReason::Timeout(_) => Outcome::Timeout,
        FailReason::BlockedAddress => Outcome::BlockedAddress,
        FailReason::InvalidUrl(_) => Outcome::Filtered,
        FailReason::Proxy(p) => match p.kind {
            ProxyFailKind::Unreachable => Outcome::ProxyUnreachable,
            ProxyFailKind::Auth => Outcome::ProxyAuth,
            ProxyFailKind::Error | ProxyFailKind::Protocol => Outcome::ProxyError,
        },
        _ => Outcome::ProtocolError,
    }
}

fn timings_of(o: &FetchOutcome) -> FetchTimings {
    let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    FetchTimings {
        dns_ms: o.timings.dns.map(ms),
        connect_ms: o.timings.connect.map(ms),
        proxy_ms: o.timings.proxy.map(ms),
        tls_ms: o.timings.tls.map(ms),
        first_byte_ms: o.timings.first_byte.map(ms),
        total_ms: Some(ms(o.timings.total)),
    }
}

/// Records built in memory from outcomes made up here: no socket, no file, no clock.
#[cfg(test)]
mod tests {
    use url::Url;

    use super::*;
    use crate::fetch::{DnsFailure, TimeoutPhase};
    use crate::http::SharedBytes;
    use crate::recrawl::{judge, IndexEntry, Validators};

    const ON: RecordPolicy = RecordPolicy {
        warc: true,
        skip_noindex: true,
    };

    fn now() -> WarcDate {
        WarcDate::from_unix_micros(1_800_000_000_123_456)
    }

    fn failure(url: &str, reason: FailReason) -> FetchOutcome {
        FetchOutcome::failed(
            7,
            Url::parse(url).expect("url"),
            SharedBytes::default(),
            reason,
        )
    }

    fn response(url: &str, status: u16, headers: &[(&str, &str)], body: &[u8]) -> FetchOutcome {
        let mut o = FetchOutcome::answered(7, url, status, headers, body);
        o.payload = Some(body.into());
        o
    }

    fn html(url: &str) -> FetchOutcome {
        response(
            url,
            200,
            &[("Content-Type", "text/html; charset=utf-8")],
            b"<a href=x>x</a>",
        )
    }

    fn queued(url: &str, hops: &str, via: Option<&str>) -> QueuedUrl {
        QueuedUrl {
            url: url.to_owned(),
            via: via.map(str::to_owned),
            hops: hops.to_owned(),
            attempts: 0,
        }
    }

    fn page<'a>(
        o: &'a FetchOutcome,
        item: &'a QueuedUrl,
        links: &'a [(String, Hop)],
        annotations: &'a [String],
    ) -> Fetched<'a> {
        Fetched {
            outcome: o,
            via: item.via.as_deref(),
            hops: &item.hops,
            page: Some((item, links)),
            annotations,
        }
    }

    fn previous(url: &str) -> IndexEntry {
        IndexEntry {
            url: url.to_owned(),
            status: 200,
            fetched_at_us: 1_700_000_000_000_000,
            validators: Validators {
                etag: Some("\"e1\"".to_owned()),
                last_modified: None,
            },
            payload_digest: "sha1:3DNNVLSLRQXZMT24WPIPEESIW24CFHAZ".to_owned(),
            record_id: "<urn:uuid:00000000-0000-4000-8000-000000000001>".to_owned(),
            warc_file: "trawl-20231114221320-00000-0.warc.gz".to_owned(),
            warc_offset: 4096,
            payload_bytes: 15,
            hops: Some("L".to_owned()),
            via: Some("http://a.test/".to_owned()),
        }
    }

    #[test]
    fn a_page_answer_gets_its_line_capture_and_index_entry_at_the_given_time() {
        let mut o = html("http://a.test/p");
        o.timings.dns = Some(Duration::from_millis(3));
        o.timings.total = Duration::from_millis(1500);
        let item = queued("http://a.test/p", "LL", Some("http://a.test/"));
        let links = vec![("http://a.test/x".to_owned(), Hop::Link)];
        let r = build(
            ON,
            &page(&o, &item, &links, &[]),
            &Recrawled::default(),
            now(),
        );
        let log = &r.log;
        assert_eq!(log.time, now());
        assert_eq!(log.url, "http://a.test/p");
        assert_eq!(log.outcome, Outcome::Fetched);
        assert_eq!(log.status, Some(200));
        assert_eq!(log.bytes, 115);
        assert_eq!(log.hops.as_str(), "LL");
        assert_eq!(log.via.as_deref(), Some("http://a.test/"));
        assert_eq!(log.media_type.as_deref(), Some("text/html"));
        assert_eq!(log.timings.dns_ms, Some(3));
        assert_eq!(log.timings.connect_ms, None);
        assert_eq!(log.timings.total_ms, Some(1500));
        assert!(log.annotations.is_empty());
        assert_eq!(log.truncated, None);
        let capture = r.capture.expect("a capture");
        assert_eq!(capture.date, now());
        assert_eq!(capture.target_uri, "http://a.test/p");
        assert!(capture.revisit.is_none());
        assert_eq!(
            capture.metadata,
            Some(CaptureMetadata {
                via: Some("http://a.test/".to_owned()),
                hops_path: "LL".to_owned(),
                outlinks: vec![Outlink {
                    url: "http://a.test/x".to_owned(),
                    hop: Hop::Link,
                }],
                outlinks_unknown: false,
                timings: log.timings,
            })
        );
        let index = r.index.expect("an index entry");
        assert!(matches!(
            *index,
            IndexFacts::Capture { status: 200, fetched_at_us, ref hops, .. }
                if fetched_at_us == now().unix_micros() && hops == "LL"
        ));
    }

    #[test]
    fn a_failure_gets_its_outcome_and_reason_on_the_line_only() {
        let cases = [
            (FailReason::Dns(DnsFailure::NoSuchName), Outcome::DnsError),
            (FailReason::Refused, Outcome::ConnectError),
            (
                FailReason::Connect("unreachable".to_owned()),
                Outcome::ConnectError,
            ),
            (
                FailReason::Tls("bad certificate".to_owned()),
                Outcome::TlsError,
            ),
            (FailReason::Timeout(TimeoutPhase::Total), Outcome::Timeout),
            (FailReason::BlockedAddress, Outcome::BlockedAddress),
            (FailReason::InvalidUrl("no host"), Outcome::Filtered),
            (FailReason::Reset, Outcome::ProtocolError),
            (FailReason::ClosedEarly, Outcome::ProtocolError),
            (FailReason::TooLarge, Outcome::ProtocolError),
        ];
        let item = queued("http://a.test/p", "L", None);
        for (reason, expected) in cases {
            let note = format!("error:{reason}");
            let o = failure("http://a.test/p", reason);
            let r = build(
                ON,
                &page(&o, &item, &[], &["core-note".to_owned()]),
                &Recrawled::default(),
                now(),
            );
            assert_eq!(r.log.outcome, expected, "{note}");
            assert_eq!(r.log.status, None, "{note}");
            assert_eq!(
                r.log.annotations,
                vec!["core-note".to_owned(), note.clone()]
            );
            assert!(r.capture.is_none(), "{note}");
            assert!(r.index.is_none(), "{note}");
        }
    }

    /// Which settings and annotations keep a capture and an index entry.
    #[test]
    fn noindex_and_warc_off_leave_the_line_alone() {
        let noindex = ["noindex".to_owned()];
        let cases: [(bool, bool, &[String], bool); 5] = [
            (true, true, &noindex, false),
            (true, false, &noindex, true),
            (true, true, &[], true),
            (false, false, &[], false),
            (false, true, &noindex, false),
        ];
        let o = html("http://a.test/p");
        let item = queued("http://a.test/p", "L", None);
        for (warc, skip_noindex, annotations, kept) in cases {
            let policy = RecordPolicy { warc, skip_noindex };
            let r = build(
                policy,
                &page(&o, &item, &[], annotations),
                &Recrawled::default(),
                now(),
            );
            let case = format!("{policy:?} {annotations:?}");
            assert_eq!(r.log.annotations, annotations, "{case}");
            assert_eq!(r.log.outcome, Outcome::Fetched, "{case}");
            assert_eq!(r.capture.is_some(), kept, "{case}");
            assert_eq!(r.index.is_some(), kept, "{case}");
        }
    }

    #[test]
    fn a_robots_fetch_is_captured_without_metadata_or_index_entry() {
        let o = response(
            "http://a.test/robots.txt",
            200,
            &[("Content-Type", "text/plain")],
            b"User-agent: *\nDisallow:\n",
        );
        let fetched = Fetched {
            outcome: &o,
            via: Some("http://a.test/p"),
            hops: "P",
            page: None,
            annotations: &[],
        };
        let r = build(ON, &fetched, &Recrawled::default(), now());
        assert_eq!(r.log.hops.as_str(), "P");
        assert_eq!(r.log.via.as_deref(), Some("http://a.test/p"));
        assert_eq!(r.log.media_type.as_deref(), Some("text/plain"));
        let capture = r.capture.expect("a capture");
        assert!(capture.metadata.is_none());
        assert!(r.index.is_none());
    }

    #[test]
    fn a_body_cut_at_its_cap_is_marked_truncated() {
        let mut o = html("http://a.test/p");
        o.body_truncated = true;
        let item = queued("http://a.test/p", "L", None);
        let r = build(ON, &page(&o, &item, &[], &[]), &Recrawled::default(), now());
        assert_eq!(r.log.truncated, Some(Truncation::Length));
    }

    /// A re-crawl's 304: the verdict, then the notes of reading the links back, on the
    /// line; a revisit capture whose metadata carries the previous links forward, or
    /// says they are unknown; an index entry carried forward.
    #[test]
    fn a_recrawl_304_carries_the_previous_links_forward() {
        let url = "http://a.test/p";
        let o = response(url, 304, &[("ETag", "\"e1\"")], b"");
        let item = queued(url, "L", Some("http://a.test/"));
        let judgement = judge(Some(previous(url)), 304, Some(b""));
        let old = vec![("http://a.test/old".to_owned(), Hop::Link)];
        let cases = [
            (Some(old.as_slice()), "previous-links:1"),
            (None, "previous-links-error"),
        ];
        for (previous_links, note) in cases {
            let notes = [note.to_owned()];
            let recrawled = Recrawled {
                judgement: Some(&judgement),
                previous_links,
                notes: &notes,
            };
            let r = build(ON, &page(&o, &item, &[], &[]), &recrawled, now());
            assert_eq!(r.log.status, Some(304));
            assert_eq!(
                r.log.annotations,
                vec!["not-modified".to_owned(), note.to_owned()]
            );
            let capture = r.capture.expect("a capture");
            assert!(capture.revisit.is_some(), "{note}");
            let metadata = capture.metadata.expect("metadata");
            let outlinks: Vec<&str> = metadata.outlinks.iter().map(|l| l.url.as_str()).collect();
            let expected: &[&str] = if previous_links.is_some() {
                &["http://a.test/old"]
            } else {
                &[]
            };
            assert_eq!(outlinks, expected, "{note}");
            assert_eq!(metadata.outlinks_unknown, previous_links.is_none());
            let index = r.index.expect("an index entry");
            assert!(matches!(*index, IndexFacts::CarryForward(_)), "{note}");
        }
    }

    /// Outside a re-crawl's 304 no links are unknown, whatever was read.
    #[test]
    fn a_first_crawl_page_never_has_unknown_links() {
        let url = "http://a.test/p";
        let o = html(url);
        let item = queued(url, "L", None);
        let judgement = judge(None, 200, Some(b"<a href=x>x</a>"));
        let recrawled = Recrawled {
            judgement: Some(&judgement),
            previous_links: None,
            notes: &[],
        };
        let r = build(ON, &page(&o, &item, &[], &[]), &recrawled, now());
        assert_eq!(r.log.annotations, vec!["new".to_owned()]);
        let capture = r.capture.expect("a capture");
        assert!(capture.revisit.is_none());
        assert!(!capture.metadata.expect("metadata").outlinks_unknown);
        assert!(matches!(
            r.index.as_deref(),
            Some(IndexFacts::Capture { .. })
        ));
    }
}
