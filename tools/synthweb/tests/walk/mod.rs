//! An independent crawler for the manifest tests: a blocking HTTP/1.1 client over
//! `std::net`, a small HTML link scanner, WHATWG resolution by the `url` crate plus
//! trawl's percent rules, and its own RFC 9309 robots.txt parser. It shares no code with
//! the synthweb generator or its manifest walker: it only sees the bytes the server
//! sends, so a manifest that agrees with it agrees with what a crawler can observe.
//!
//! Everything is bounded: response bytes, fetch count and wall time.

#![allow(dead_code, reason = "each test binary uses a different part")]

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use url::Url;

mod html;
mod http;
mod robots;
mod urls;

pub use http::get;

use html::{header_nofollow, scan};
use robots::{parse_robots, Robots};
use urls::{canonical, decode_body, is_trap};

/// Longest URL a trawl-default crawler fetches.
pub const MAX_URL_BYTES: usize = 2048;
/// Longest redirect chain followed.
pub const MAX_REDIRECTS: u32 = 5;

/// The crawl policy of the walk (trawl's defaults, as the manifest assumes).
#[derive(Debug, Clone)]
pub struct WalkPolicy {
    pub robots_4xx_disallow: bool,
    pub max_pages_per_host: usize,
    pub max_fetches: usize,
    pub max_time: Duration,
}

/// What the walk saw.
#[derive(Debug, Default)]
pub struct WalkResult {
    /// Canonical URLs fetched (robots files excluded).
    pub fetched: BTreeSet<String>,
    /// Canonical URLs seen as links but refused by robots.txt.
    pub disallowed: BTreeSet<String>,
    /// Canonical URLs refused by the trap filters.
    pub filtered: BTreeSet<String>,
    /// Fetch errors (hostile hosts), by URL.
    pub errors: Vec<(String, String)>,
    /// True when the walk stopped at its fetch or time bound.
    pub truncated: bool,
}

/// Crawl from `seeds`, breadth-first over one global FIFO queue but with per-host
/// budgets, robots.txt first per origin, redirects followed, exact content duplicates
/// not followed. `hosts` maps host names to (address, http port).
pub fn walk(seeds: &[String], hosts: &HashMap<String, IpAddr>, policy: &WalkPolicy) -> WalkResult {
    let started = Instant::now();
    let mut result = WalkResult::default();
    let mut queue: VecDeque<(String, u32)> = seeds.iter().map(|s| (s.clone(), 0)).collect();
    let mut seen: HashSet<String> = seeds.iter().cloned().collect();
    let mut robots: HashMap<String, Robots> = HashMap::new();
    let mut per_host: HashMap<String, usize> = HashMap::new();
    let mut fingerprints: HashSet<Vec<u8>> = HashSet::new();
    let mut fetches = 0usize;
    while let Some((url_text, redirects)) = queue.pop_front() {
        if fetches >= policy.max_fetches || started.elapsed() > policy.max_time {
            result.truncated = true;
            break;
        }
        if is_trap(&url_text) {
            result.filtered.insert(url_text);
            continue;
        }
        let Ok(url) = Url::parse(&url_text) else {
            continue;
        };
        let Some(host) = url.host_str().map(str::to_owned) else {
            continue;
        };
        let Some(&ip) = hosts.get(&host) else {
            continue;
        };
        let Some(port) = url.port_or_known_default() else {
            continue;
        };
        let origin = url.origin().ascii_serialization();
        let host_header = format!("{host}:{port}");
        let rules = robots
            .entry(origin.clone())
            .or_insert_with(|| fetch_robots(&url, hosts, policy.robots_4xx_disallow))
            .clone();
        let target = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_owned(),
        };
        if !rules.allows(&target) {
            result.disallowed.insert(url_text);
            continue;
        }
        let count = per_host.entry(host.clone()).or_default();
        if *count >= policy.max_pages_per_host {
            continue;
        }
        *count += 1;
        fetches += 1;
        let response = match get(SocketAddr::new(ip, port), &host_header, &target) {
            Ok(r) => r,
            Err(e) => {
                result.errors.push((url_text, e));
                continue;
            }
        };
        result.fetched.insert(url_text.clone());
        let mut enqueue = |link: String, redirects: u32| {
            if seen.insert(link.clone()) {
                queue.push_back((link, redirects));
            }
        };
        if (300..400).contains(&response.status) {
            if redirects < MAX_REDIRECTS {
                if let Some(target) = response
                    .header("location")
                    .and_then(|l| canonical(&url, l, false))
                {
                    enqueue(target, redirects + 1);
                }
            }
            continue;
        }
        let is_html = response
            .header("content-type")
            .is_some_and(|ct| ct.to_ascii_lowercase().starts_with("text/html"));
        if !(200..300).contains(&response.status) || !is_html || header_nofollow(&response) {
            continue;
        }
        if !fingerprints.insert(own_locations_abstracted(url.path(), &response.body)) {
            continue;
        }
        let (text, legacy) = decode_body(&response);
        let links = scan(&text);
        if links.nofollow {
            continue;
        }
        let base = links
            .base
            .as_deref()
            .and_then(|b| url.join(b.trim()).ok())
            .unwrap_or_else(|| url.clone());
        for href in &links.hrefs {
            if let Some(link) = canonical(&base, href, legacy) {
                enqueue(link, 0);
            }
        }
    }
    result
}

/// Fetch and interpret an origin's robots.txt (redirects followed up to 5, also across
/// hosts; the result applies to the original origin).
fn fetch_robots(url: &Url, hosts: &HashMap<String, IpAddr>, robots_4xx_disallow: bool) -> Robots {
    let mut current = match url.join("/robots.txt") {
        Ok(u) => u,
        Err(_) => return Robots::DisallowAll,
    };
    for _ in 0..=MAX_REDIRECTS {
        let (Some(host), Some(port)) = (current.host_str(), current.port_or_known_default()) else {
            return Robots::DisallowAll;
        };
        let Some(&ip) = hosts.get(host) else {
            return Robots::AllowAll;
        };
        let target = current.path().to_owned();
        let response = match get(
            SocketAddr::new(ip, port),
            &format!("{host}:{port}"),
            &target,
        ) {
            Ok(r) => r,
            Err(_) => return Robots::DisallowAll,
        };
        match response.status {
            200..=299 => return parse_robots(&response.body, "trawl"),
            300..=399 => match response
                .header("location")
                .and_then(|l| current.join(l).ok())
            {
                Some(next) => current = next,
                None => return Robots::AllowAll,
            },
            401 | 403 if robots_4xx_disallow => return Robots::DisallowAll,
            429 => return Robots::DisallowAll,
            400..=499 => return Robots::AllowAll,
            _ => return Robots::DisallowAll,
        }
    }
    // Too many redirects: RFC 9309 2.3.1.2 allows treating it as unavailable (4xx).
    Robots::AllowAll
}

/// trawl's duplicate reading, written here a third time on purpose (the walker checks
/// the manifest, which models trawl): the body with each mention of the page's own
/// directory (with and without its final `/`) and of its parent (the same), tried in
/// that order, replaced by a marker; never the root `/`, never right after `<`.
fn own_locations_abstracted(path: &str, body: &[u8]) -> Vec<u8> {
    let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
    let mut needles: Vec<String> = Vec::new();
    if dir.len() > 1 {
        let bare = &dir[..dir.len() - 1];
        let parent = &bare[..bare.rfind('/').map_or(0, |i| i + 1)];
        needles.push(dir.to_owned());
        needles.push(bare.to_owned());
        if parent.len() > 1 {
            needles.push(parent.to_owned());
            needles.push(parent[..parent.len() - 1].to_owned());
        }
    }
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        let after_lt = i > 0 && body[i - 1] == b'<';
        let hit = (body[i] == b'/' && !after_lt)
            .then(|| {
                needles
                    .iter()
                    .position(|n| body[i..].starts_with(n.as_bytes()))
            })
            .flatten();
        match hit {
            Some(k) => {
                out.extend_from_slice(&[0, b"DdPp"[k]]);
                i += needles[k].len();
            }
            None => {
                out.push(body[i]);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::html::decode_refs;
    use super::robots::wildcard_match;
    use super::*;

    #[test]
    fn walker_parts() {
        let links = scan(
            "<html><head><base href='/b/'><meta name=ROBOTS content='noindex, NOFOLLOW'></head>\
             <!-- <a href=/hidden> --><script>x='<a href=/s>'</script><A HREF = \" x?a=1&amp;b=2 \">\
             <iframe src=/f></iframe><meta http-equiv=refresh content='0; URL=/r'><img src=/i.png>",
        );
        assert_eq!(links.base.as_deref(), Some("/b/"));
        assert!(links.nofollow);
        assert_eq!(links.hrefs, [" x?a=1&b=2 ", "/f", "/r"]);
        let base = Url::parse("http://h.test:8080/b/").unwrap();
        assert_eq!(
            canonical(&base, "%7Ex/%2f?q=%7e#f", false).unwrap(),
            "http://h.test:8080/b/~x/%2F?q=~"
        );
        assert_eq!(
            canonical(&base, "HTTP://H.TEST:80/", false).unwrap(),
            "http://h.test/"
        );
        assert_eq!(canonical(&base, "mailto:a@b", false), None);
        assert!(is_trap("http://h/a/b/a/b/a/b/"));
        assert!(is_trap("http://h/d/sub/sub/sub/sub/"));
        assert!(!is_trap("http://h/d/sub/sub/sub/"));
        assert!(is_trap("http://h/x/y/z/x/y/z/x/y/z"));
        let r = parse_robots(b"\xEF\xBB\xBFUser-agent: *\r\nDisallow: /\r\n\r\nUser-Agent: otherbot\nuser-agent: TRAWL\nDisallow: /tmp/ # c\n", "trawl");
        assert!(r.allows("/p/1") && !r.allows("/tmp/x") && r.allows("/robots.txt"));
        assert!(
            wildcard_match("/x/*.php$", "/x/a.php") && !wildcard_match("/x/*.php$", "/x/a.php?y")
        );
        assert_eq!(
            decode_refs("a&amp;b&amp c&ampc&amp=d&#65;&#x42;"),
            "a&b& c&ampc&amp=dAB"
        );
    }
}
