//! Identification: every request names the agent in `User-Agent` and carries `From`
//! and `Host`.

use crate::formats::LogLine;

use super::report::Report;
use super::CheckPolicy;

pub(super) fn check_identification(order: &[&LogLine], policy: &CheckPolicy, report: &mut Report) {
    let blank = |v: &Option<String>| v.as_deref().is_none_or(|s| s.trim().is_empty());
    for line in order {
        if blank(&line.user_agent) {
            report.missing_user_agent.push(|| line.url());
        } else if let Some(ua) = &line.user_agent {
            if !names_agent(ua, &policy.agent) {
                report.user_agent_without_agent.push(|| ua.clone());
            }
        }
        if blank(&line.from) {
            report.missing_from.push(|| line.url());
        }
        if line.host.is_empty() {
            report
                .missing_host
                .push(|| format!("{} {}", line.local, line.target));
        }
    }
}

/// Whether the User-Agent value contains `agent` as a whole product token (bounded by
/// characters outside `[A-Za-z_-]`), case-insensitively: RFC 9309 §2.2.1 asks crawlers
/// to send the token they match robots.txt groups with.
pub fn names_agent(user_agent: &str, agent: &str) -> bool {
    let is_token = |b: u8| b.is_ascii_alphabetic() || b == b'_' || b == b'-';
    let ua = user_agent.as_bytes();
    let needle = agent.as_bytes();
    if needle.is_empty() || needle.len() > ua.len() {
        return false;
    }
    (0..=ua.len() - needle.len()).any(|start| {
        let end = start + needle.len();
        ua.get(start..end)
            .is_some_and(|w| w.eq_ignore_ascii_case(needle))
            && (start == 0 || ua.get(start - 1).is_some_and(|&b| !is_token(b)))
            && ua.get(end).is_none_or(|&b| !is_token(b))
    })
}
