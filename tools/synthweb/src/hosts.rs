//! Host names, indices, addresses and roles. Nothing here allocates per host: a host is
//! an index, and its name, address, role and robots entry are computed from it.
//!
//! Fixed special host indices (documented in docs/synthweb.md):
//!
//! | index | profile | role |
//! |------:|---------|------|
//! | 0 | always | ordinary host, allow-all robots, the root seed; its `/` links every special host |
//! | 1 | traps | endless calendar `/cal/2031/07` -> next month forever |
//! | 2 | traps | symlink-style loop `/d/sub/sub/...` |
//! | 3 | traps | period-2 loop `/a/b/a/b/...` |
//! | 4 | traps | session id in every URL (`?sid=`), new id per page, same content |
//! | 5 | traps | the same content under many URLs (`/dup/...`) |
//! | 6 | traps | URLs that grow on every hop, past 4 KB (then 414) |
//! | 7 | traps | a host with 1,000,000 pages |
//! | 8..=23 | hostile | one [`HostileKind`] each, in declaration order |
//!
//! When a profile is off its indices are ordinary hosts.

use std::net::Ipv4Addr;

use crate::config::{Profiles, SiteConfig};

/// The DNS suffix of every synthetic host (`.test` is reserved for testing, RFC 2606).
pub const DOMAIN: &str = "synth.test";

/// A crawler trap (profile `traps`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TrapKind {
    /// `/cal/YYYY/MM` links the next month forever.
    Calendar,
    /// `/d/` links `sub/`, `/d/sub/` links `sub/`, ... (a symlink pointing to itself).
    SymlinkLoop,
    /// `/a/` links `b/`, `/a/b/` links `a/`, ... (period-2 path loop).
    PeriodTwo,
    /// Every URL carries a fresh `?sid=`; content is the same whatever the sid.
    SessionIds,
    /// One body served under many URLs.
    Duplicates,
    /// Each hop appends a 64-byte segment; targets past 8 KiB get 414.
    GrowingUrls,
    /// `/p/0` .. `/p/999999`.
    MillionPages,
}

/// The trap hosts, by index.
pub const TRAP_HOSTS: [(u32, TrapKind); 7] = [
    (1, TrapKind::Calendar),
    (2, TrapKind::SymlinkLoop),
    (3, TrapKind::PeriodTwo),
    (4, TrapKind::SessionIds),
    (5, TrapKind::Duplicates),
    (6, TrapKind::GrowingUrls),
    (7, TrapKind::MillionPages),
];

/// A misbehaving server (profile `hostile`). Each applies to every path of its host
/// except `/robots.txt` (served as allow-all so a crawler gets to meet the behaviour).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HostileKind {
    /// The response head trickles out at 1 byte per second.
    SlowHeaders,
    /// A chunked body that never ends (paced, until the client leaves or limits hit).
    EndlessBody,
    /// `Content-Length` larger than the body sent, then close.
    LengthTooLong,
    /// `Content-Length` smaller than the bytes sent (surplus garbage follows).
    LengthTooShort,
    /// `Transfer-Encoding: chunked` with invalid chunk-size lines.
    BadChunks,
    /// A 1 MiB response header block.
    HugeHeaderBlock,
    /// 10,000 response header fields.
    ManyHeaders,
    /// A well-formed page whose head uses bare LF line ends.
    BareLf,
    /// `Content-Encoding: gzip, gzip`: a few KB that inflate to 1 GiB (twice gzipped);
    /// paths under `/single/` send one gzip layer (about 1 MB inflating to 1 GiB).
    GzipBomb,
    /// Connection reset (RST) in the middle of the body.
    ResetMidBody,
    /// The connection is closed after the request, before any response byte.
    CloseBeforeResponse,
    /// The request is read and never answered (connection held open).
    NeverAnswer,
    /// An HTTP/0.9-style reply: body bytes with no status line or headers, then close.
    Http09,
    /// Binary garbage instead of a response, then close.
    Garbage,
    /// With `--tls`: the TLS handshake fails (no certificate for this name).
    TlsHandshakeFailure,
    /// With `--tls`: the certificate presented expired in 2001.
    TlsExpiredCert,
}

/// The hostile hosts, by index.
pub const HOSTILE_HOSTS: [(u32, HostileKind); 16] = [
    (8, HostileKind::SlowHeaders),
    (9, HostileKind::EndlessBody),
    (10, HostileKind::LengthTooLong),
    (11, HostileKind::LengthTooShort),
    (12, HostileKind::BadChunks),
    (13, HostileKind::HugeHeaderBlock),
    (14, HostileKind::ManyHeaders),
    (15, HostileKind::BareLf),
    (16, HostileKind::GzipBomb),
    (17, HostileKind::ResetMidBody),
    (18, HostileKind::CloseBeforeResponse),
    (19, HostileKind::NeverAnswer),
    (20, HostileKind::Http09),
    (21, HostileKind::Garbage),
    (22, HostileKind::TlsHandshakeFailure),
    (23, HostileKind::TlsExpiredCert),
];

impl HostileKind {
    /// True for the two behaviours that only exist on the HTTPS side.
    #[must_use]
    pub fn is_tls_only(self) -> bool {
        matches!(self, Self::TlsHandshakeFailure | Self::TlsExpiredCert)
    }

    /// True when the behaviour still delivers a well-formed page (links extractable).
    #[must_use]
    pub fn delivers_page(self) -> bool {
        matches!(self, Self::BareLf)
    }
}

/// What a host is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HostRole {
    /// An ordinary host: pages, HTTP variety, one robots catalogue entry.
    Normal,
    /// A trap host (allow-all robots).
    Trap(TrapKind),
    /// A hostile host (allow-all robots).
    Hostile(HostileKind),
}

/// Smallest host count the profiles need.
#[must_use]
pub fn min_hosts(p: Profiles) -> u32 {
    let base = if p.hostile {
        24
    } else if p.traps {
        8
    } else {
        1
    };
    // The cross-host sitemap of host 0 lists URLs of host 2; the chain's ring needs
    // three hosts for a sitemap two hosts away from the robots.txt naming its index.
    if p.sitemaps || p.sitemap_chain {
        base.max(3)
    } else {
        base
    }
}

/// The role of host `index` under `profiles`.
#[must_use]
pub fn role(profiles: Profiles, index: u32) -> HostRole {
    if profiles.traps {
        if let Some((_, k)) = TRAP_HOSTS.iter().find(|(i, _)| *i == index) {
            return HostRole::Trap(*k);
        }
    }
    if profiles.hostile {
        if let Some((_, k)) = HOSTILE_HOSTS.iter().find(|(i, _)| *i == index) {
            return HostRole::Hostile(*k);
        }
    }
    HostRole::Normal
}

/// Digits in host names for a web of `hosts` hosts (at least 6).
#[must_use]
pub fn name_width(hosts: u32) -> usize {
    let digits = hosts.saturating_sub(1).max(1).ilog10() as usize + 1;
    digits.max(6)
}

/// The name of host `index`, e.g. `h000042.synth.test`.
#[must_use]
pub fn host_name(hosts: u32, index: u32) -> String {
    format!("h{index:0w$}.{DOMAIN}", w = name_width(hosts))
}

/// The index named by a Host header value (`h000042.synth.test` or with `:port`),
/// compared case-insensitively; `None` for any other name or an index out of range.
#[must_use]
pub fn host_index(hosts: u32, host_header: &str) -> Option<u32> {
    let name = strip_port(host_header.trim());
    let width = name_width(hosts);
    let b = name.as_bytes();
    let first = b.first()?;
    if !first.eq_ignore_ascii_case(&b'h') {
        return None;
    }
    let digits = b.get(1..1 + width)?;
    if !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let rest = b.get(1 + width..)?;
    if rest.len() != DOMAIN.len() + 1
        || rest.first() != Some(&b'.')
        || !rest.get(1..)?.eq_ignore_ascii_case(DOMAIN.as_bytes())
    {
        return None;
    }
    let idx: u32 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    (idx < hosts).then_some(idx)
}

/// The host part of a Host header value (drops `:port`; leaves IPv6 literals alone).
#[must_use]
pub fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host;
    }
    match host.rsplit_once(':') {
        Some((h, p)) if p.bytes().all(|c| c.is_ascii_digit()) => h,
        _ => host,
    }
}

/// Most addresses spread addressing hands out: 127.1.0.1 ..= 127.254.255.254, the last
/// octet never `.0` or `.255`.
pub const MAX_SPREAD_ADDRESSES: u32 = 254 * 256 * 254;

/// The `slot`-th address of spread addressing: 127.1.0.1, .., 127.1.0.254, 127.1.1.1, ..
/// (the last octet skips `.0` and `.255`, which some stacks and tools treat as network
/// or broadcast addresses; 127.0.0.0/16 is left to the resolver and other services).
/// Slots past [`MAX_SPREAD_ADDRESSES`] wrap.
#[must_use]
pub fn spread_addr(slot: u32) -> Ipv4Addr {
    let slot = slot % MAX_SPREAD_ADDRESSES;
    let d = 1 + slot % 254;
    let c = (slot / 254) % 256;
    let b = 1 + slot / (254 * 256);
    Ipv4Addr::new(127, b as u8, c as u8, d as u8)
}

/// The loopback address host `index` is served on.
#[must_use]
pub fn host_addr(cfg: &SiteConfig, index: u32) -> Ipv4Addr {
    if let Some(k) = cfg.hosts_per_address {
        return spread_addr(index / k.max(1));
    }
    let base = u32::from(cfg.bind_base);
    Ipv4Addr::from(base.wrapping_add(index % cfg.bind_count.max(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(host_name(100, 42), "h000042.synth.test");
        assert_eq!(host_index(100, "h000042.synth.test"), Some(42));
        assert_eq!(host_index(100, "H000042.SYNTH.TEST:8080"), Some(42));
        assert_eq!(host_index(100, "h000142.synth.test"), None);
        assert_eq!(host_index(100, "h00042.synth.test"), None);
        assert_eq!(host_index(100, "h000042.synth.testx"), None);
        assert_eq!(host_index(100, "example.org"), None);
        assert_eq!(host_name(1_000_000, 999_999), "h999999.synth.test");
        assert_eq!(host_name(1_000_001, 7), "h0000007.synth.test");
    }

    #[test]
    fn spread_addresses_skip_zero_and_broadcast() {
        assert_eq!(spread_addr(0), Ipv4Addr::new(127, 1, 0, 1));
        assert_eq!(spread_addr(253), Ipv4Addr::new(127, 1, 0, 254));
        assert_eq!(spread_addr(254), Ipv4Addr::new(127, 1, 1, 1));
        assert_eq!(spread_addr(254 * 256), Ipv4Addr::new(127, 2, 0, 1));
        assert_eq!(
            spread_addr(MAX_SPREAD_ADDRESSES - 1),
            Ipv4Addr::new(127, 254, 255, 254)
        );
        let mut seen = std::collections::HashSet::new();
        for slot in 0..100_000 {
            let a = spread_addr(slot);
            assert!(a.is_loopback() && !matches!(a.octets()[3], 0 | 255), "{a}");
            assert!(seen.insert(a), "{a} twice");
        }
        let cfg = SiteConfig {
            hosts: 10,
            hosts_per_address: Some(3),
            ..SiteConfig::default()
        };
        let addrs: Vec<_> = (0..7).map(|i| host_addr(&cfg, i).octets()[3]).collect();
        assert_eq!(addrs, [1, 1, 1, 2, 2, 2, 3]);
    }

    #[test]
    fn roles_follow_profiles() {
        let all = Profiles {
            traps: true,
            hostile: true,
            ..Profiles::default()
        };
        assert_eq!(role(all, 1), HostRole::Trap(TrapKind::Calendar));
        assert_eq!(
            role(all, 23),
            HostRole::Hostile(HostileKind::TlsExpiredCert)
        );
        assert_eq!(role(all, 24), HostRole::Normal);
        assert_eq!(role(Profiles::default(), 1), HostRole::Normal);
    }
}
