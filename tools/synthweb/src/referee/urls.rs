//! Which URLs were fetched: missed, forbidden, duplicate and retried URLs, sitemap-only
//! URLs, and targets not sent in canonical form.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use crate::formats::{self, LogLine, Manifest};

use super::report::Report;
use super::robots_first::robots_files;
use super::{len_u64, CheckPolicy};

/// What happened to one URL so far.
#[derive(Debug, Default)]
struct UrlState {
    last_status: u16,
    pub(super) retries: u32,
}

/// Whether a response status excuses asking again: no response at all, a timeout, a
/// rate limit or a server error.
fn is_retryable(status: u16) -> bool {
    matches!(status, 0 | 408 | 429 | 500..=599)
}

/// The request-targets of sitemap files the manifest names (`sitemap_files=`).
pub(super) fn sitemap_files(manifest: &Manifest) -> HashSet<&str> {
    manifest
        .header
        .params
        .get(formats::SITEMAP_FILES_PARAM)
        .map(|list| list.split(',').filter(|s| !s.is_empty()).collect())
        .unwrap_or_default()
}

pub(super) fn check_urls(
    order: &[&LogLine],
    manifest: &Manifest,
    policy: &CheckPolicy,
    report: &mut Report,
) {
    let robots_files = robots_files(manifest);
    let sitemap_files = sitemap_files(manifest);
    let mut seen: HashMap<String, UrlState> = HashMap::new();
    let mut fetched_must: HashSet<&str> = HashSet::new();
    let mut fetched_sitemap_only: HashSet<&str> = HashSet::new();
    let mut unlisted: HashSet<String> = HashSet::new();
    // Per URL: (requests, conditional, 304, served a page).
    let mut by_url: HashMap<String, (u64, u64, u64, bool)> = HashMap::new();
    for line in order {
        if robots_files.contains(line.target.as_str()) {
            report.robots_requests += 1;
            continue;
        }
        if sitemap_files.contains(line.target.as_str()) {
            report.sitemap_requests += 1;
            continue;
        }
        report.page_requests += 1;
        report.page_body_bytes = report.page_body_bytes.saturating_add(line.body_bytes);
        if line.is_conditional() {
            report.conditional_requests += 1;
        }
        if line.status == 304 {
            report.not_modified += 1;
        }
        let canonical = canonical_target(&line.target);
        let tally = by_url
            .entry(format!("{}://{}{}", line.scheme, line.host, canonical))
            .or_default();
        tally.0 += 1;
        tally.1 += u64::from(line.is_conditional());
        tally.2 += u64::from(line.status == 304);
        tally.3 |= matches!(line.status, 200..=299 | 304);
        // A crawler sends origin-form targets (RFC 9112 3.2.1); anything else is as wrong
        // as an alias.
        if canonical != line.target || !line.target.starts_with('/') {
            report.non_canonical_targets.push(|| line.url());
        }
        let url = format!("{}://{}{}", line.scheme, line.host, canonical);
        match (manifest.must.get(&url), manifest.sitemap_only.get(&url)) {
            (Some(must), _) => {
                fetched_must.insert(must.as_str());
            }
            (None, Some(listed)) => {
                fetched_sitemap_only.insert(listed.as_str());
            }
            (None, None) => {
                if manifest.forbidden.contains(&url) {
                    report.forbidden_fetched.push(|| url.clone());
                } else {
                    report.unlisted_requests += 1;
                    if !unlisted.insert(url) {
                        report.unlisted_repeats += 1;
                    }
                }
                // Repeats are judged for M URLs only (see the module docs).
                continue;
            }
        }
        match seen.get_mut(&url) {
            None => {
                seen.insert(
                    url,
                    UrlState {
                        last_status: line.status,
                        retries: 0,
                    },
                );
            }
            Some(state) => {
                if line.is_conditional() {
                    report.revalidations += 1;
                } else if is_retryable(state.last_status) {
                    report.retries += 1;
                    state.retries += 1;
                    if state.retries == policy.max_retries.saturating_add(1) {
                        report.excessive_retries.push(|| url.clone());
                    }
                } else {
                    report.duplicates.push(|| url.clone());
                }
                state.last_status = line.status;
            }
        }
    }
    for (requests, conditional, not_modified, _) in by_url.values().filter(|t| t.3) {
        report.requests_for_pages += requests;
        report.conditional_for_pages += conditional;
        report.not_modified_for_pages += not_modified;
    }
    report.must_fetched = len_u64(fetched_must.len());
    for url in &manifest.must {
        if !fetched_must.contains(url.as_str()) {
            report.missed.push(|| url.clone());
        }
    }
    report.sitemap_only_fetched = len_u64(fetched_sitemap_only.len());
    for url in &manifest.sitemap_only {
        if !fetched_sitemap_only.contains(url.as_str()) {
            report.sitemap_missed.push(|| url.clone());
        }
    }
}

/// The canonical form of a request-target by trawl's rule 5: `%XX` escapes of
/// unreserved characters (`A-Z a-z 0-9 - . _ ~`) decoded, the hex digits of every other
/// escape upper-cased, raw non-ASCII characters and controls percent-encoded as UTF-8
/// (as URL serialization does), nothing else changed (a `%` not followed by two hex
/// digits stays).
pub fn canonical_target(target: &str) -> String {
    let bytes = target.as_bytes();
    let mut out = String::with_capacity(target.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let escape = match (bytes.get(i + 1), bytes.get(i + 2)) {
            (Some(&h), Some(&l)) if b == b'%' => hex(h).zip(hex(l)).map(|(h, l)| h * 16 + l),
            _ => None,
        };
        match escape {
            Some(v) if v.is_ascii_alphanumeric() || matches!(v, b'-' | b'.' | b'_' | b'~') => {
                out.push(char::from(v));
                i += 3;
            }
            Some(v) => {
                let _ = write!(out, "%{v:02X}");
                i += 3;
            }
            None => {
                // Copy the whole UTF-8 character starting here (targets are `str`).
                let ch = target.get(i..).and_then(|rest| rest.chars().next());
                match ch {
                    // Non-ASCII and controls are percent-encoded in a serialized URL
                    // (WHATWG): a raw one is sent only by a crawler that skipped that.
                    Some(ch) if !ch.is_ascii() || ch.is_ascii_control() => {
                        let mut utf8 = [0u8; 4];
                        for byte in ch.encode_utf8(&mut utf8).bytes() {
                            let _ = write!(out, "%{byte:02X}");
                        }
                        i += ch.len_utf8();
                    }
                    Some(ch) => {
                        out.push(ch);
                        i += ch.len_utf8();
                    }
                    None => break,
                }
            }
        }
    }
    out
}

fn hex(b: u8) -> Option<u8> {
    char::from(b)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}
