//! Which addresses a crawler may connect to. Judged on the resolved address, just before
//! `connect()`, so neither a DNS answer nor a redirect can smuggle an internal target in;
//! the crawl engine asks the same question of seeds and redirects before they get here.

use std::net::IpAddr;

/// Addresses a crawler must not connect to unless the operator opts in: loopback,
/// private (RFC 1918, unique-local fc00::/7), link-local, shared (100.64/10),
/// multicast, broadcast, documentation and unspecified addresses. Checked on the
/// resolved address, so a DNS answer cannot smuggle an internal target in. IPv4-mapped
/// IPv6 addresses are judged as the IPv4 address they carry.
pub fn is_blocked_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_multicast()
                || v4.is_broadcast()
                || v4.is_unspecified()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || a >= 240
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_blocked_address(IpAddr::V4(v4));
            }
            let [first, second, ..] = v6.segments();
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || first == 0x2001 && second == 0x0db8
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocked(s: &str) -> bool {
        is_blocked_address(s.parse().unwrap_or(IpAddr::from([8, 8, 8, 8])))
    }

    #[test]
    fn internal_v4_ranges_are_blocked() {
        for a in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.0.1",
            "0.0.0.0",
            "0.1.2.3",
            "100.64.0.1",
            "100.127.255.255",
            "224.0.0.1",
            "255.255.255.255",
            "240.0.0.1",
            "192.0.2.1",
            "198.51.100.7",
            "203.0.113.9",
        ] {
            assert!(blocked(a), "{a} should be blocked");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for a in [
            "8.8.8.8",
            "100.63.255.255",
            "100.128.0.1",
            "172.32.0.1",
            "2606:4700::1111",
        ] {
            assert!(!blocked(a), "{a} should pass");
        }
    }

    #[test]
    fn internal_v6_ranges_are_blocked() {
        for a in [
            "::1",
            "::",
            "ff02::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "2001:db8::1",
        ] {
            assert!(blocked(a), "{a} should be blocked");
        }
    }

    #[test]
    fn v4_mapped_v6_is_judged_as_v4() {
        assert!(blocked("::ffff:127.0.0.1"));
        assert!(blocked("::ffff:10.0.0.1"));
        assert!(!blocked("::ffff:8.8.4.4"));
    }
}
