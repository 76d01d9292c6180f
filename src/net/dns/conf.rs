//! The system's resolver settings, parsed the way glibc reads them: `/etc/resolv.conf`
//! (`nameserver`, `search`, `domain`, `options ndots: timeout: attempts: rotate`) and
//! `/etc/hosts`. Sans-IO: these functions take the files' text.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

/// glibc reads at most three `nameserver` lines (`MAXNS`).
pub const MAX_NAMESERVERS: usize = 3;
/// glibc keeps at most six search domains (`MAXDNSRCH`).
pub const MAX_SEARCH_DOMAINS: usize = 6;

/// What `/etc/resolv.conf` says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvConf {
    /// Servers to ask, in order (port 53 unless the test rig says otherwise).
    pub nameservers: Vec<SocketAddr>,
    /// Search domains, in order (`search`, or the last `domain` line).
    pub search: Vec<String>,
    /// A name with fewer dots than this tries the search list first.
    pub ndots: u32,
    /// How long to wait for one answer before the next try (`timeout:`).
    pub timeout: Duration,
    /// Rounds over all servers (`attempts:`).
    pub attempts: u32,
    /// Start at a different server each lookup (`rotate`).
    pub rotate: bool,
}

impl Default for ResolvConf {
    /// glibc's defaults: no file means one server on the local host, ndots 1, 5 s, 2
    /// rounds.
    fn default() -> Self {
        Self {
            nameservers: Vec::new(),
            search: Vec::new(),
            ndots: 1,
            timeout: Duration::from_secs(5),
            attempts: 2,
            rotate: false,
        }
    }
}

impl ResolvConf {
    /// Parses the text of a resolv.conf. Unknown lines and bad values are skipped, as
    /// glibc does; with no usable `nameserver` the local host (127.0.0.1:53) is used.
    /// A `nameserver` may carry a port as `addr#port` or `[v6]:port` (for test rigs;
    /// glibc only knows port 53).
    pub fn parse(text: &str) -> Self {
        let mut c = Self::default();
        for line in text.lines() {
            // glibc: a comment is a line starting with `#` or `;` (so `addr#port` works).
            if line.starts_with(['#', ';']) {
                continue;
            }
            let mut words = line.split_whitespace();
            match words.next() {
                Some("nameserver") => {
                    if let Some(addr) = words.next().and_then(parse_server) {
                        if c.nameservers.len() < MAX_NAMESERVERS {
                            c.nameservers.push(addr);
                        }
                    }
                }
                Some("domain") => {
                    if let Some(d) = words.next() {
                        c.search = vec![normalize(d)];
                    }
                }
                Some("search") => {
                    c.search = words
                        .map(normalize)
                        .filter(|d| !d.is_empty())
                        .take(MAX_SEARCH_DOMAINS)
                        .collect();
                }
                Some("options") => {
                    for opt in words {
                        c.option(opt);
                    }
                }
                _ => {}
            }
        }
        if c.nameservers.is_empty() {
            c.nameservers
                .push(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 53));
        }
        c
    }

    fn option(&mut self, opt: &str) {
        let (name, value) = opt.split_once(':').unwrap_or((opt, ""));
        let n = value.parse::<u32>().ok();
        match (name, n) {
            ("ndots", Some(n)) => self.ndots = n.min(15),
            ("timeout", Some(n)) => self.timeout = Duration::from_secs(u64::from(n.clamp(1, 30))),
            ("attempts", Some(n)) => self.attempts = n.clamp(1, 5),
            ("rotate", _) => self.rotate = true,
            _ => {}
        }
    }

    /// The names to ask for `host`, in order, as glibc's `res_search` does: a trailing
    /// dot means absolute (only the name itself); a name with at least `ndots` dots is
    /// tried as is first, then with each search domain; one with fewer tries the search
    /// domains first and itself last.
    pub fn candidates(&self, host: &str) -> Vec<String> {
        if let Some(abs) = host.strip_suffix('.') {
            return vec![abs.to_owned()];
        }
        let dots = host.bytes().filter(|b| *b == b'.').count();
        let searched = self.search.iter().map(|d| format!("{host}.{d}"));
        if dots >= self.ndots as usize {
            std::iter::once(host.to_owned()).chain(searched).collect()
        } else {
            searched.chain(std::iter::once(host.to_owned())).collect()
        }
    }
}

fn normalize(domain: &str) -> String {
    domain.trim_end_matches('.').to_ascii_lowercase()
}

fn parse_server(s: &str) -> Option<SocketAddr> {
    if let Ok(addr) = s.parse::<SocketAddr>() {
        return Some(addr);
    }
    if let Some((ip, port)) = s.split_once('#') {
        return Some(SocketAddr::new(ip.parse().ok()?, port.parse().ok()?));
    }
    // A scoped IPv6 address (fe80::1%eth0) is not supported: std cannot parse it.
    Some(SocketAddr::new(s.parse().ok()?, 53))
}

/// Parses `/etc/hosts`: `address name [alias...]` per line, `#` comments. Returns
/// (lower-cased name, address) pairs in file order.
pub fn parse_etc_hosts(text: &str) -> Vec<(String, IpAddr)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("");
        let mut words = line.split_whitespace();
        let Some(ip) = words.next().and_then(|a| a.parse::<IpAddr>().ok()) else {
            continue;
        };
        for name in words {
            out.push((normalize(name), ip));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolv_conf_like_glibc() {
        let c = ResolvConf::parse(
            "# comment\nnameserver 10.0.0.1\nnameserver ::1\nnameserver 127.0.0.1#5353\n\
             nameserver 10.0.0.4\nsearch a.test B.test.\noptions ndots:2 timeout:1 attempts:3 rotate\n",
        );
        assert_eq!(c.nameservers.len(), 3, "at most three servers");
        assert_eq!(c.nameservers[1], "[::1]:53".parse::<SocketAddr>().unwrap());
        assert_eq!(c.nameservers[2].port(), 5353);
        assert_eq!(c.search, vec!["a.test", "b.test"]);
        assert_eq!((c.ndots, c.attempts, c.rotate), (2, 3, true));
        assert_eq!(c.timeout, Duration::from_secs(1));
    }

    #[test]
    fn empty_file_means_local_server_and_defaults() {
        let c = ResolvConf::parse("");
        assert_eq!(
            c.nameservers,
            vec!["127.0.0.1:53".parse::<SocketAddr>().unwrap()]
        );
        assert_eq!((c.ndots, c.attempts), (1, 2));
        assert_eq!(c.timeout, Duration::from_secs(5));
    }

    #[test]
    fn the_last_of_search_and_domain_wins() {
        let c = ResolvConf::parse("search a.test b.test\ndomain c.test\n");
        assert_eq!(c.search, vec!["c.test"]);
    }

    #[test]
    fn candidates_follow_ndots_and_the_trailing_dot() {
        let c = ResolvConf::parse("search corp.test\noptions ndots:1\n");
        assert_eq!(c.candidates("www"), vec!["www.corp.test", "www"]);
        assert_eq!(
            c.candidates("www.example.org"),
            vec!["www.example.org", "www.example.org.corp.test"]
        );
        assert_eq!(c.candidates("www."), vec!["www"]);
        let none = ResolvConf::parse("");
        assert_eq!(none.candidates("example.org"), vec!["example.org"]);
    }

    #[test]
    fn etc_hosts_names_and_aliases() {
        let h = parse_etc_hosts(
            "127.0.0.1 localhost Loco\n::1 localhost ip6-localhost # x\nbad line\n",
        );
        assert_eq!(h.len(), 4);
        assert_eq!(h[1].0, "loco");
        assert!(h[2].1.is_ipv6());
    }
}

/// Whether `/proc/net/if_inet6` (`text`) lists an IPv6 address usable beyond this
/// machine: on an interface other than `lo`, not link-local (`fe80::/10`). Each line:
/// the address in 32 hex digits, then index, prefix length, scope, flags, name.
pub fn has_global_ipv6(text: &str) -> bool {
    text.lines().any(|line| {
        let mut fields = line.split_whitespace();
        let (Some(addr), Some(name)) = (fields.next(), fields.last()) else {
            return false;
        };
        let link_local = addr.get(..3).is_some_and(|p| {
            p.eq_ignore_ascii_case("fe8")
                || p.eq_ignore_ascii_case("fe9")
                || p.eq_ignore_ascii_case("fea")
                || p.eq_ignore_ascii_case("feb")
        });
        name != "lo" && addr.len() == 32 && !link_local
    })
}

#[cfg(test)]
mod ipv6_tests {
    use super::has_global_ipv6;

    #[test]
    fn only_a_non_loopback_non_link_local_address_counts() {
        let lo = "00000000000000000000000000000001 01 80 10 80       lo\n";
        let link = "fe8000000000000000fc00fffe000001 04 40 20 80     eth0\n";
        let global = "fd000000000000000000000000000002 04 40 00 82     eth0\n";
        assert!(!has_global_ipv6(""));
        assert!(!has_global_ipv6(lo));
        assert!(!has_global_ipv6(&format!("{lo}{link}")));
        assert!(has_global_ipv6(&format!("{lo}{link}{global}")));
        assert!(!has_global_ipv6("garbage\n\n"));
    }
}
