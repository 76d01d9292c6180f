//! Politeness: simultaneous connections per host and per address, and the gap between
//! request starts on one host.

use std::collections::HashMap;

use crate::formats::LogLine;

use super::report::Report;
use super::{len_u64, CheckPolicy};

/// The host name of a Host header value: lower-case already, port stripped (IPv6
/// literals keep their brackets).
pub(super) fn host_name(host: &str) -> &str {
    match host.rfind(':') {
        Some(colon) if !host.get(colon..).is_some_and(|tail| tail.contains(']')) => {
            host.get(..colon).unwrap_or(host)
        }
        _ => host,
    }
}

pub(super) fn check_politeness(order: &[&LogLine], policy: &CheckPolicy, report: &mut Report) {
    let mut by_host: HashMap<&str, Vec<&LogLine>> = HashMap::new();
    for line in order {
        if !line.host.is_empty() {
            by_host.entry(host_name(&line.host)).or_default().push(line);
        }
    }
    report.hosts = len_u64(by_host.len());
    let mut hosts: Vec<(&str, Vec<&LogLine>)> = by_host.into_iter().collect();
    hosts.sort_by(|a, b| a.0.cmp(b.0));
    for (host, lines) in hosts {
        let connections = max_simultaneous_connections(&lines);
        if connections > report.max_connections {
            report.max_connections = connections;
            report.max_connections_host = Some(host.to_owned());
        }
        if policy
            .per_host_connections
            .is_some_and(|cap| connections > cap)
        {
            report
                .over_connection_limit
                .push(|| format!("{host}: {connections} connections"));
        }
        // `lines` is in start order.
        let gap = lines
            .windows(2)
            .filter_map(|w| Some(w.get(1)?.t_us.saturating_sub(w.first()?.t_us)))
            .min();
        if let Some(gap) = gap {
            if report.min_gap_us.is_none_or(|min| gap < min) {
                report.min_gap_us = Some(gap);
                report.min_gap_host = Some(host.to_owned());
            }
            if policy.min_gap_us.is_some_and(|min| gap < min) {
                report
                    .under_delay
                    .push(|| format!("{host}: {gap} us between request starts"));
            }
        }
    }
}

/// The per-address cap: connections with a request in progress at once, per local IP
/// the server accepted them on (every port, scheme and host name of that address).
/// Idle keep-alive connections are invisible in a request log, so this is a lower
/// bound of the connections the crawler held open.
pub(super) fn check_per_ip(order: &[&LogLine], policy: &CheckPolicy, report: &mut Report) {
    let mut by_ip: HashMap<std::net::IpAddr, Vec<&LogLine>> = HashMap::new();
    for line in order {
        by_ip
            .entry(line.local.ip().to_canonical())
            .or_default()
            .push(line);
    }
    report.addresses = len_u64(by_ip.len());
    let mut addrs: Vec<_> = by_ip.into_iter().collect();
    addrs.sort_by_key(|(ip, _)| *ip);
    for (ip, lines) in addrs {
        let connections = max_simultaneous_connections(&lines);
        if connections > report.max_ip_connections {
            report.max_ip_connections = connections;
            report.max_ip_connections_addr = Some(ip.to_string());
        }
        if policy
            .per_ip_connections
            .is_some_and(|cap| connections > cap)
        {
            report
                .over_ip_connection_limit
                .push(|| format!("{ip}: {connections} connections"));
        }
    }
}

/// How much earlier than its `end_us` stamp a response may count as over. The server
/// stamps `end_us` when its write of the last byte returns to the task, after an
/// `.await`; a client on loopback can have read that byte and sent its next request (on
/// a new connection, if the old one was closed) before the stamp: a few tens of
/// microseconds on a quiet machine, but on a loaded 2-core one the server task can wait
/// a scheduling period between the write and the stamp (2.6 ms seen in `crawl_e2e`
/// while the whole test suite ran; the crawl log showed the fetch complete before the
/// next one started). Overlaps shorter than this are that race, not two connections at
/// work; a crawler that really used two connections at once shows it on the slow and
/// trickled pages, whose responses last far longer.
pub const END_STAMP_SLACK_US: u64 = 5_000;

/// Largest number of distinct connections with a request in progress at one instant.
/// A request occupies `[t_us, end_us - END_STAMP_SLACK_US)` (never less than one
/// microsecond): one ending when another starts does not overlap it.
fn max_simultaneous_connections(lines: &[&LogLine]) -> u32 {
    // Events sorted by time, ends before starts at the same instant.
    let mut events: Vec<(u64, bool, u64)> = Vec::with_capacity(lines.len() * 2);
    for line in lines {
        events.push((line.t_us, true, line.conn));
        // At least one microsecond long, so that its end never sorts before its start.
        let end = line.end_us.saturating_sub(END_STAMP_SLACK_US);
        events.push((end.max(line.t_us + 1), false, line.conn));
    }
    events.sort_unstable();
    let mut active: HashMap<u64, u32> = HashMap::new();
    let (mut open, mut max) = (0u32, 0u32);
    for (_, is_start, conn) in events {
        let count = active.entry(conn).or_insert(0);
        if is_start {
            if *count == 0 {
                open += 1;
                max = max.max(open);
            }
            *count += 1;
        } else {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open = open.saturating_sub(1);
            }
        }
    }
    max
}
