//! The re-crawl's decisions, sans-IO: what to ask for a URL the previous crawl fetched
//! ([`plan`]), what the answer means ([`classify`]), the counts `stats.json` reports
//! ([`RecrawlStats`]) and the WARC fields of a revisit record ([`revisit_fields`]).

use serde::{Deserialize, Serialize};

use super::index::{IndexEntry, Validators};
use crate::provenance::WarcDate;
use crate::sitemap::LastMod;

/// `WARC-Profile` of a revisit for a `304 Not Modified` (WARC 1.1 §6.7.3).
pub const PROFILE_SERVER_NOT_MODIFIED: &str =
    "http://netpreserve.org/warc/1.1/revisit/server-not-modified";
/// `WARC-Profile` of a revisit for a 200 whose payload digest equals the previous one.
pub const PROFILE_IDENTICAL_PAYLOAD: &str =
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";

/// What to do with a sitemap `<lastmod>` that is not newer than the previous fetch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LastmodPolicy {
    /// Fetch conditionally anyway (the default: a lastmod can be wrong).
    #[default]
    Conditional,
    /// Skip the URL (`trawl crawl --sitemap-lastmod skip`).
    Skip,
}

/// The request for one URL of a re-crawl.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Do not fetch: the sitemap says it has not changed since the previous fetch.
    Skip,
    /// Fetch, with these conditional header values (none: an unconditional GET).
    Fetch {
        /// `If-None-Match`: the previous ETag.
        if_none_match: Option<String>,
        /// `If-Modified-Since`: the previous Last-Modified, verbatim.
        if_modified_since: Option<String>,
    },
}

/// Decide the request for a URL given its previous capture (if the previous crawl
/// fetched it), its sitemap `<lastmod>` (if a sitemap listed it) and the policy.
/// Validators are sent only from a 2xx capture (a 404's ETag validates nothing).
#[must_use]
pub fn plan(prev: Option<&IndexEntry>, lastmod: Option<LastMod>, policy: LastmodPolicy) -> Plan {
    let Some(prev) = prev else {
        return Plan::Fetch {
            if_none_match: None,
            if_modified_since: None,
        };
    };
    let fetched_secs = prev.fetched_at_us.div_euclid(1_000_000);
    // The lastmod's whole period must end by the fetch (a day-only date of the fetch
    // day may name an edit after it).
    let unchanged_by_lastmod = lastmod.is_some_and(|l| l.until <= fetched_secs);
    if policy == LastmodPolicy::Skip && unchanged_by_lastmod && (200..300).contains(&prev.status) {
        return Plan::Skip;
    }
    if !(200..300).contains(&prev.status) {
        return Plan::Fetch {
            if_none_match: None,
            if_modified_since: None,
        };
    }
    let Validators {
        etag,
        last_modified,
    } = &prev.validators;
    Plan::Fetch {
        if_none_match: etag.clone(),
        if_modified_since: last_modified.clone(),
    }
}

/// What a re-crawl's answer means for a URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// `304`: a revisit record, server-not-modified profile; logged `not-modified`.
    NotModified,
    /// 2xx with the previous payload digest: a revisit, identical-payload profile.
    Unchanged,
    /// 2xx with another payload: written in full, links followed.
    Changed,
    /// 404 or 410 where the previous crawl had a page: logged `gone`.
    Gone,
    /// A URL the previous crawl did not fetch.
    New,
    /// Anything else (errors, redirects): handled as in any crawl.
    Other,
}

/// Classify an answer against the previous capture.
#[must_use]
pub fn classify(prev: Option<&IndexEntry>, status: u16, payload_digest: Option<&str>) -> Verdict {
    match (prev, status) {
        (None, 200..=299) => Verdict::New,
        (None, _) => Verdict::Other,
        (Some(_), 304) => Verdict::NotModified,
        (Some(p), 404 | 410) if !matches!(p.status, 404 | 410) => Verdict::Gone,
        (Some(p), 200..=299) => {
            if payload_digest.is_some_and(|d| !d.is_empty() && d == p.payload_digest) {
                Verdict::Unchanged
            } else {
                Verdict::Changed
            }
        }
        (Some(_), _) => Verdict::Other,
    }
}

/// The re-crawl counts of `stats.json`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecrawlStats {
    /// Answered `304`.
    pub not_modified: u64,
    /// 2xx with an identical payload.
    pub unchanged: u64,
    /// 2xx with a new payload.
    pub changed: u64,
    /// 404/410 where a page was.
    pub gone: u64,
    /// Fetched for the first time.
    pub new: u64,
    /// Skipped on a sitemap lastmod.
    pub skipped: u64,
    /// Payload bytes not transferred: the previous payload length of every `304`.
    pub bytes_saved: u64,
}

impl RecrawlStats {
    /// Count one answer.
    pub fn record(&mut self, prev: Option<&IndexEntry>, verdict: Verdict) {
        match verdict {
            Verdict::NotModified => {
                self.not_modified += 1;
                self.bytes_saved += prev.map_or(0, |p| p.payload_bytes);
            }
            Verdict::Unchanged => self.unchanged += 1,
            Verdict::Changed => self.changed += 1,
            Verdict::Gone => self.gone += 1,
            Verdict::New => self.new += 1,
            Verdict::Other => {}
        }
    }
}

/// The WARC header fields a revisit record for `verdict` carries besides the usual
/// ones (`WARC-Type: revisit`, `WARC-Target-URI`, `WARC-Date` of the new fetch):
/// the profile and the reference to the earlier capture. `None` for verdicts that are
/// not revisits.
#[must_use]
pub fn revisit_fields(prev: &IndexEntry, verdict: Verdict) -> Option<Vec<(&'static str, String)>> {
    let profile = match verdict {
        Verdict::NotModified => PROFILE_SERVER_NOT_MODIFIED,
        Verdict::Unchanged => PROFILE_IDENTICAL_PAYLOAD,
        _ => return None,
    };
    let mut fields = vec![
        ("WARC-Profile", profile.to_owned()),
        ("WARC-Refers-To-Target-URI", prev.url.clone()),
        (
            "WARC-Refers-To-Date",
            WarcDate::from_unix_micros(prev.fetched_at_us).to_string(),
        ),
    ];
    if !prev.record_id.is_empty() {
        fields.push(("WARC-Refers-To", prev.record_id.clone()));
    }
    if verdict == Verdict::Unchanged && !prev.payload_digest.is_empty() {
        fields.push(("WARC-Payload-Digest", prev.payload_digest.clone()));
    }
    Some(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prev(status: u16) -> IndexEntry {
        IndexEntry {
            url: "http://a.example/p/1".to_owned(),
            status,
            // 2025-07-01T00:00:00.5Z
            fetched_at_us: 1_751_328_000_500_000,
            validators: Validators {
                etag: Some("\"abc\"".to_owned()),
                last_modified: Some("Mon, 30 Jun 2025 10:00:00 GMT".to_owned()),
            },
            payload_digest: "sha1:AAAA".to_owned(),
            record_id: "<urn:uuid:1>".to_owned(),
            warc_file: "a.warc.gz".to_owned(),
            warc_offset: 0,
            payload_bytes: 12_345,
            hops: Some(String::new()),
            via: None,
        }
    }

    #[test]
    fn plans() {
        let cond = Plan::Fetch {
            if_none_match: Some("\"abc\"".to_owned()),
            if_modified_since: Some("Mon, 30 Jun 2025 10:00:00 GMT".to_owned()),
        };
        let plain = Plan::Fetch {
            if_none_match: None,
            if_modified_since: None,
        };
        let p = prev(200);
        let older = LastMod::parse("2025-06-30");
        let newer = LastMod::parse("2025-07-02");
        assert_eq!(plan(None, newer, LastmodPolicy::Skip), plain);
        assert_eq!(plan(Some(&p), None, LastmodPolicy::Conditional), cond);
        assert_eq!(plan(Some(&p), older, LastmodPolicy::Conditional), cond);
        assert_eq!(plan(Some(&p), older, LastmodPolicy::Skip), Plan::Skip);
        assert_eq!(plan(Some(&p), newer, LastmodPolicy::Skip), cond);
        // The same second as the fetch counts as not newer.
        assert_eq!(
            plan(
                Some(&p),
                LastMod::parse("2025-07-01T00:00:00Z"),
                LastmodPolicy::Skip
            ),
            Plan::Skip
        );
        assert_eq!(
            plan(Some(&prev(404)), None, LastmodPolicy::Conditional),
            plain
        );
        assert_eq!(plan(Some(&prev(404)), older, LastmodPolicy::Skip), plain);
        let mut only_lm = prev(200);
        only_lm.validators.etag = None;
        assert!(matches!(
            plan(Some(&only_lm), None, LastmodPolicy::Conditional),
            Plan::Fetch {
                if_none_match: None,
                if_modified_since: Some(_)
            }
        ));
    }

    #[test]
    fn verdicts_and_stats() {
        let p = prev(200);
        let cases = [
            (Some(&p), 304, None, Verdict::NotModified),
            (Some(&p), 200, Some("sha1:AAAA"), Verdict::Unchanged),
            (Some(&p), 200, Some("sha1:BBBB"), Verdict::Changed),
            (Some(&p), 200, None, Verdict::Changed),
            (Some(&p), 404, None, Verdict::Gone),
            (Some(&p), 410, None, Verdict::Gone),
            (Some(&p), 503, None, Verdict::Other),
            (None, 200, Some("sha1:AAAA"), Verdict::New),
            (None, 404, None, Verdict::Other),
        ];
        let mut stats = RecrawlStats::default();
        for (prev, status, digest, want) in cases {
            let got = classify(prev, status, digest);
            assert_eq!(got, want, "{status} {digest:?}");
            stats.record(prev, got);
        }
        let gone_again = prev(404);
        assert_eq!(classify(Some(&gone_again), 404, None), Verdict::Other);
        assert_eq!(
            stats,
            RecrawlStats {
                not_modified: 1,
                unchanged: 1,
                changed: 2,
                gone: 2,
                new: 1,
                skipped: 0,
                bytes_saved: 12_345
            }
        );
        let json = serde_json::to_value(stats).unwrap();
        assert_eq!(json["bytes_saved"], 12_345);
        assert_eq!(
            serde_json::to_value(Verdict::NotModified).unwrap(),
            "not-modified"
        );
    }

    #[test]
    fn revisit_fields_refer_to_the_earlier_capture() {
        let p = prev(200);
        let f = revisit_fields(&p, Verdict::NotModified).unwrap();
        assert_eq!(
            f,
            [
                ("WARC-Profile", PROFILE_SERVER_NOT_MODIFIED.to_owned()),
                (
                    "WARC-Refers-To-Target-URI",
                    "http://a.example/p/1".to_owned()
                ),
                (
                    "WARC-Refers-To-Date",
                    "2025-07-01T00:00:00.500000Z".to_owned()
                ),
                ("WARC-Refers-To", "<urn:uuid:1>".to_owned()),
            ]
        );
        let f = revisit_fields(&p, Verdict::Unchanged).unwrap();
        assert_eq!(f[0].1, PROFILE_IDENTICAL_PAYLOAD);
        assert_eq!(
            f.last().unwrap(),
            &("WARC-Payload-Digest", "sha1:AAAA".to_owned())
        );
        assert!(revisit_fields(&p, Verdict::Changed).is_none());
    }

    /// Review: a date-only `<lastmod>` names a whole day. A page fetched at 10:00 on
    /// that day and changed at 15:00 still says that day: it must not be skipped
    /// (else every later re-crawl skips it too, the date never moving).
    #[test]
    fn a_date_only_lastmod_of_the_fetch_day_does_not_skip() {
        let day = crate::sitemap::LastMod::parse("2026-11-25").unwrap();
        let mut p = prev(200);
        p.fetched_at_us = (day.secs + 10 * 3600) * 1_000_000;
        assert_ne!(plan(Some(&p), Some(day), LastmodPolicy::Skip), Plan::Skip);
    }
}
