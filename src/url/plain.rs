//! Canonical `http(s)` URLs read from their text, without the `url` crate's parse.
//!
//! The crawl keeps its URLs as canonical strings (the serialization of a parsed
//! [`url::Url`]), and the hot paths that only need a URL's parts (its host, path and
//! query for the filters, its origin for the host key, the whole text for a `Referer`)
//! would parse each one again. A [`PlainUrl`] is the same answer cut from the text:
//! [`PlainUrl::new`] accepts only the shapes that the WHATWG parser serializes to
//! exactly themselves and that canonicalization leaves as they are, the shapes the
//! link resolver's fast path writes ([`super::resolve`]): a lower-case `http://` or
//! `https://`, a plain host (lower-case ASCII labels or a canonical IPv4 address), a
//! port only if it is not the scheme's default and has no leading zero, a path of
//! bytes copied as they are with no `.` or `..` segment, a query likewise, and no
//! userinfo or fragment. Anything else (`None`) means "parse it".

use url::Host;

use super::resolve::{all_in, is, is_canonical_ipv4, is_plain_host, PATH, QUERY};

/// An `http(s)` URL whose text is its own parse and its own canonical form, with
/// the offsets of its parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PlainUrl<'a> {
    text: &'a str,
    spans: Spans,
}

/// A [`PlainUrl`] that owns its text: read once, its parts at hand later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlainKey {
    text: String,
    spans: Spans,
}

impl PlainKey {
    /// `text` as a plain URL, or given back if it is not one.
    ///
    /// # Errors
    /// `text` itself when [`PlainUrl::new`] refuses it.
    pub(crate) fn new(text: String) -> Result<PlainKey, String> {
        match PlainUrl::new(&text) {
            Some(PlainUrl { spans, .. }) => Ok(PlainKey { text, spans }),
            None => Err(text),
        }
    }

    /// The parts.
    pub(crate) fn get(&self) -> PlainUrl<'_> {
        PlainUrl {
            text: &self.text,
            spans: self.spans,
        }
    }

    /// The text.
    pub(crate) fn into_string(self) -> String {
        self.text
    }
}

/// Where the parts of a [`PlainUrl`] end, as byte offsets into its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Spans {
    https: bool,
    /// Start of the host (after `scheme://`).
    host_start: usize,
    /// End of the host (a `:port` or the path follows).
    host_end: usize,
    /// End of `scheme://host[:port]`: the path starts here.
    origin_end: usize,
    /// End of the path: `?query` or the end of the text follows.
    path_end: usize,
}

impl<'a> PlainUrl<'a> {
    /// The parts of `text` if it is a plain URL (see the module docs); `None` for
    /// anything the `url` crate might serialize otherwise, or that is not `http(s)`.
    pub(crate) fn new(text: &'a str) -> Option<PlainUrl<'a>> {
        let (https, host_start) = if text.starts_with("http://") {
            (false, "http://".len())
        } else if text.starts_with("https://") {
            (true, "https://".len())
        } else {
            return None;
        };
        let rest = text.get(host_start..)?;
        // The path is required: `http://h` serializes as `http://h/`.
        let origin_end = host_start + rest.find('/')?;
        let host_port = text.get(host_start..origin_end)?;
        let (host, port) = match host_port.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        };
        if !is_plain_host(host) || host.bytes().any(|b| b.is_ascii_uppercase()) {
            return None;
        }
        if let Some(port) = port {
            if !is_own_port(port, if https { 443 } else { 80 }) {
                return None;
            }
        }
        let path_end = origin_end + plain_path_len(text.get(origin_end..)?.as_bytes())?;
        let query_ok = text
            .get(path_end..)?
            .strip_prefix('?')
            .is_none_or(|q| all_in(q.as_bytes(), QUERY));
        if !query_ok {
            return None;
        }
        let spans = Spans {
            https,
            host_start,
            host_end: host_start + host.len(),
            origin_end,
            path_end,
        };
        Some(PlainUrl { text, spans })
    }

    /// The whole URL, as given.
    pub(crate) fn as_str(&self) -> &'a str {
        self.text
    }

    /// Whether the scheme is `https`.
    pub(crate) fn is_https(&self) -> bool {
        self.spans.https
    }

    /// The host, as [`url::Url::host_str`] gives it.
    pub(crate) fn host_str(&self) -> &'a str {
        self.text
            .get(self.spans.host_start..self.spans.host_end)
            .unwrap_or("")
    }

    /// The host, as [`url::Url::host`] gives it: a canonical IPv4 address or a domain.
    pub(crate) fn host(&self) -> Host<&'a str> {
        let host = self.host_str();
        if is_canonical_ipv4(host.as_bytes()) {
            if let Ok(ip) = host.parse() {
                return Host::Ipv4(ip);
            }
        }
        Host::Domain(host)
    }

    /// `scheme://host[:port]`: the ASCII serialization of the URL's origin, which is
    /// the crawl's host key ([`crate::routing::host_key`]).
    pub(crate) fn origin(&self) -> &'a str {
        self.text.get(..self.spans.origin_end).unwrap_or("")
    }

    /// The path, as [`url::Url::path`] gives it.
    pub(crate) fn path(&self) -> &'a str {
        self.text
            .get(self.spans.origin_end..self.spans.path_end)
            .unwrap_or("")
    }

    /// The query without its `?`, as [`url::Url::query`] gives it.
    pub(crate) fn query(&self) -> Option<&'a str> {
        self.text.get(self.spans.path_end..)?.strip_prefix('?')
    }
}

/// The fuzz entry's check ([`super::fuzz_canonicalize`]): a text [`PlainUrl::new`]
/// accepts parses to itself, is its own canonical form, and has the parsed URL's host,
/// origin, path and query. Panics otherwise (a fuzz finding).
pub(crate) fn assert_plain_is_its_parse(text: &str) {
    let Some(plain) = PlainUrl::new(text) else {
        return;
    };
    let url = url::Url::parse(text).ok();
    assert_eq!(
        url.as_ref().map(url::Url::as_str),
        Some(text),
        "plain URL parses otherwise"
    );
    let canonical = super::canonicalize_absolute(text).map(String::from);
    assert_eq!(canonical.as_deref(), Ok(text), "plain URL is not canonical");
    if let Some(url) = url {
        assert_eq!(Some(plain.host_str()), url.host_str());
        assert_eq!(Some(plain.host()), url.host());
        assert_eq!(plain.origin(), url.origin().ascii_serialization());
        assert_eq!(plain.path(), url.path());
        assert_eq!(plain.query(), url.query());
    }
}

/// The length of the path that starts `tail` (up to a `?` or the end) if all its bytes
/// are copied as they are ([`PATH`]) and no segment is `.` or `..`; one pass.
fn plain_path_len(tail: &[u8]) -> Option<usize> {
    // Dots since the segment began: 1 or 2 make a dot segment, 3 stands for "not
    // only dots" (the first byte is the path's `/`, which resets it).
    let mut dots = 3u8;
    for (i, &b) in tail.iter().enumerate() {
        match b {
            b'/' | b'?' if matches!(dots, 1 | 2) => return None,
            b'/' => dots = 0,
            b'?' => return Some(i),
            b'.' => dots = (dots + 1).min(3),
            _ if is(PATH, b) => dots = 3,
            _ => return None,
        }
    }
    (!matches!(dots, 1 | 2)).then_some(tail.len())
}

/// Whether `port` is a port as the parser writes it back: decimal digits without a
/// leading zero, at most 65535, not the scheme's `default` (which the parser drops).
fn is_own_port(port: &str, default: u16) -> bool {
    let digits = port.bytes().all(|b| b.is_ascii_digit());
    digits && !port.starts_with('0') && port.parse::<u16>().is_ok_and(|p| p != default)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use url::Url;

    use super::*;

    #[test]
    fn plain_shapes_and_the_rest() {
        for text in [
            "http://a.example/",
            "https://a.example/x/y.html?q=1&r=/s?t",
            "http://a.example:8080/",
            "https://a.example:80/",
            "http://127.0.0.1:3000/p",
            "http://a_b.example/p;x=1,2:3@4!$&'()*+~",
            "http://a.example/?",
            "http://a.example//x",
            "http://a.example/.../x..",
        ] {
            let plain = PlainUrl::new(text).unwrap_or_else(|| panic!("{text}"));
            let url = Url::parse(text).unwrap();
            assert_eq!(url.as_str(), text);
            assert_eq!(plain.as_str(), text);
            assert_eq!(plain.is_https(), url.scheme() == "https");
            assert_eq!(Some(plain.host_str()), url.host_str());
            assert_eq!(Some(plain.host()), url.host());
            assert_eq!(plain.origin(), url.origin().ascii_serialization());
            assert_eq!(plain.path(), url.path());
            assert_eq!(plain.query(), url.query());
        }
        for text in [
            "",
            "http://a.example",
            "HTTP://a.example/",
            "http://A.example/",
            "ftp://a.example/",
            "http://a.example:80/",
            "https://a.example:443/",
            "http://a.example:/",
            "http://a.example:08080/",
            "http://a.example:65536/",
            "http://a.example./",
            "http://xn--bcher-kva.example/",
            "http://1.2.3/",
            "http://01.2.3.4/",
            "http://a.123/",
            "http://[::1]/",
            "http://u@a.example/",
            "http://u:p@a.example/",
            "http://a.example/#f",
            "http://a.example/a/./b",
            "http://a.example/a/..",
            "http://a.example/%7e",
            "http://a.example/a b",
            "http://a.example/a\\b",
            "http://a.example/a^b",
            "http://a.example/é",
            "http://a.example/?a'b",
            "http://a.example/\t",
            " http://a.example/",
        ] {
            assert_eq!(PlainUrl::new(text), None, "{text:?}");
        }
    }

    fn urlish() -> impl Strategy<Value = String> {
        let scheme = prop_oneof![Just("http://"), Just("https://"), Just("HTTP://")];
        let host = prop_oneof![
            "[a-zA-Z0-9_.-]{0,12}",
            "[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}",
            "(xn--)?[a-z]{1,4}(\\.[a-z0-9]{1,4}){0,2}\\.?",
        ];
        let port = prop_oneof![Just(String::new()), ":[0-9]{0,6}"];
        let path = prop_oneof![
            "(/|[a-z0-9._~!$&'()*+,;=:@-]|\\.\\.?/){0,12}(\\?[a-z=&/?']{0,6})?",
            "(/|[a-zA-Z0-9._~!$&'()*+,;=:@%?#^\\\\ \t-]|\\.\\.?/){0,12}",
        ];
        (scheme, host, port, path).prop_map(|(s, h, p, t)| format!("{s}{h}{p}{t}"))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 20_000, .. ProptestConfig::default() })]

        /// A plain URL is its own parse, its own canonical form, and its parts are
        /// the parsed URL's.
        #[test]
        fn plain_urls_are_their_own_parse(text in urlish()) {
            assert_plain_is_its_parse(&text);
        }
    }
}
