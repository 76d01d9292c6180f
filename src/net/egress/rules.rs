//! Which route for which URL: the `--proxy-rules` grammar, curl's `NO_PROXY` matcher,
//! and [`Routes`], the compiled table that [`Routes::pick`] consults per request.
//!
//! Order (notes §2; the first answer wins): the rules file; then `--proxy`, which gives
//! way to `--noproxy` or, without it, to the environment's `NO_PROXY`; then the
//! environment's per-scheme proxies ([`super::env`]); then `direct`.
//!
//! The rules grammar, one item a line (`#` at a line's start or after a blank starts a
//! comment):
//!
//! ```text
//! squid=http://proxy.corp:3128      # NAME=URL names a route
//! .onion            socks5h://127.0.0.1:9050
//! https:.example.org squid          # scheme prefix; .suffix = the domain and below
//! intranet.corp     direct          # exact host
//! 10.0.0.0/8        direct          # CIDR, matches IP-literal hosts only
//! *                 squid
//! ```

#![deny(clippy::indexing_slicing)]

use std::fmt;
use std::net::IpAddr;

use super::env::{self, EnvProxies};
use super::secret::Credentials;
use super::url::{redact, ProxyUrl, ProxyUrlError};

/// A route's index in [`Routes::routes`]; [`DIRECT`] is 0.
pub type RouteId = u16;

/// The route that connects straight to the origin.
pub const DIRECT: RouteId = 0;

/// Rules read from one file at most.
pub const MAX_RULES: usize = 100_000;

/// The longest rules line read.
pub const MAX_RULE_LINE_BYTES: usize = 4096;

/// One way out: straight to the origin, or through a proxy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// The name shown in the crawl log, the status page and `stats.json`: `direct`, a
    /// rules file's name for it, or the proxy URL without credentials.
    pub label: String,
    /// The proxy; `None` for direct.
    pub proxy: Option<ProxyUrl>,
}

/// A host pattern of a rules line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostPattern {
    /// `*`: every host.
    Any,
    /// `host`: that host only.
    Exact(String),
    /// `.suffix`: the domain and every name below it.
    Suffix(String),
    /// An IP or CIDR: IP-literal hosts in it.
    Net(IpNet),
}

/// An address and a prefix length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpNet {
    addr: IpAddr,
    prefix: u8,
}

impl IpNet {
    /// Parses `addr` or `addr/prefix` (an IPv6 address with or without brackets). A
    /// prefix of 0, as in curl, means the whole address.
    pub fn parse(s: &str) -> Option<Self> {
        let (addr, prefix) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let addr: IpAddr = unbracket(addr).parse().ok()?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(p) if !p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit()) => {
                match p.parse::<u8>().ok()? {
                    0 => max,
                    n if n <= max => n,
                    _ => return None,
                }
            }
            Some(_) => return None,
        };
        Some(Self { addr, prefix })
    }

    /// Whether `ip` is in the network.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let shift = |bits: u32| -> u32 { bits.saturating_sub(u32::from(self.prefix)) };
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let s = shift(32);
                u32::from(net).checked_shr(s).unwrap_or(0)
                    == u32::from(ip).checked_shr(s).unwrap_or(0)
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let s = shift(128);
                u128::from(net).checked_shr(s).unwrap_or(0)
                    == u128::from(ip).checked_shr(s).unwrap_or(0)
            }
            _ => false,
        }
    }
}

/// A host as the matchers see it: without a trailing dot or IPv6 brackets, and its
/// address when it is an IP literal.
#[derive(Clone, Copy, Debug)]
pub struct HostName<'a> {
    name: &'a str,
    ip: Option<IpAddr>,
}

impl<'a> HostName<'a> {
    /// Normalises a URL's host (`url::Url::host_str` form: `[::1]`, `a.test.`).
    pub fn new(host: &'a str) -> Self {
        let name = unbracket(host.strip_suffix('.').unwrap_or(host));
        let looks_ip =
            name.contains(':') || name.bytes().next().is_some_and(|b| b.is_ascii_digit());
        let ip = if looks_ip { name.parse().ok() } else { None };
        Self { name, ip }
    }

    /// Whether the name is `domain` or below it (case-insensitive, on a label boundary).
    fn is_in_domain(&self, domain: &str) -> bool {
        let (n, d) = (self.name.as_bytes(), domain.as_bytes());
        if n.len() == d.len() {
            return n.eq_ignore_ascii_case(d);
        }
        n.len() > d.len()
            && n.get(n.len() - d.len() - 1) == Some(&b'.')
            && n.get(n.len() - d.len()..)
                .is_some_and(|tail| tail.eq_ignore_ascii_case(d))
    }
}

impl HostPattern {
    /// Whether the pattern matches `host`.
    pub fn matches(&self, host: &HostName<'_>) -> bool {
        match self {
            Self::Any => true,
            Self::Exact(name) => host.ip.is_none() && host.name.eq_ignore_ascii_case(name),
            Self::Suffix(domain) => host.ip.is_none() && host.is_in_domain(domain),
            Self::Net(net) => host.ip.is_some_and(|ip| net.contains(ip)),
        }
    }

    fn parse(s: &str) -> Option<Self> {
        if s == "*" {
            return Some(Self::Any);
        }
        if let Some(net) = IpNet::parse(s) {
            return Some(Self::Net(net));
        }
        let (suffix, name) = match s.strip_prefix('.') {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let name = name.strip_suffix('.').unwrap_or(name);
        let valid = !name.is_empty()
            && !name.starts_with('.')
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
        if !valid {
            return None;
        }
        let name = name.to_ascii_lowercase();
        Some(if suffix {
            Self::Suffix(name)
        } else {
            Self::Exact(name)
        })
    }
}

/// curl's `NO_PROXY` / `--noproxy` list (curl 7.88.1, the oracle `tests/proxy_env.rs`
/// runs): entries split at commas and blanks; a leading dot ignored; a name matches
/// itself and the names below it; an IP or CIDR matches IP-literal hosts; ports never
/// match; only a list that is exactly `*` matches everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NoProxy {
    all: bool,
    names: Vec<String>,
    nets: Vec<IpNet>,
}

impl NoProxy {
    /// Reads a list; entries that can never match are kept out, never an error (curl
    /// ignores them as well).
    pub fn parse(list: &str) -> Self {
        if list == "*" {
            return Self {
                all: true,
                ..Self::default()
            };
        }
        let mut out = Self::default();
        for entry in list.split(|c: char| c == ',' || c.is_ascii_whitespace()) {
            if entry.is_empty() {
                continue;
            }
            if entry
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_digit() || b == b'[' || b == b':')
                || entry.contains(':')
            {
                if let Some(net) = IpNet::parse(entry) {
                    out.nets.push(net);
                    continue;
                }
            }
            let name = entry.strip_prefix('.').unwrap_or(entry);
            let name = name.strip_suffix('.').unwrap_or(name);
            if !name.is_empty() {
                out.names.push(name.to_ascii_lowercase());
            }
        }
        out
    }

    /// Whether `host` bypasses the proxy.
    pub fn matches(&self, host: &HostName<'_>) -> bool {
        if self.all {
            return true;
        }
        match host.ip {
            Some(ip) => self.nets.iter().any(|n| n.contains(ip)),
            None => self.names.iter().any(|d| host.is_in_domain(d)),
        }
    }
}

#[derive(Clone, Debug)]
struct Rule {
    /// `Some(true)` for `https:` only, `Some(false)` for `http:` only.
    https: Option<bool>,
    pattern: HostPattern,
    route: RouteId,
}

#[derive(Clone, Debug)]
enum Fallback {
    Direct,
    /// `--proxy`, with the list that bypasses it.
    Proxy {
        route: RouteId,
        no_proxy: NoProxy,
    },
    /// The environment's per-scheme proxies.
    Env {
        http: RouteId,
        https: RouteId,
        no_proxy: NoProxy,
    },
}

/// What the operator gave: the inputs [`Routes::build`] compiles.
#[derive(Clone, Copy, Default)]
pub struct RouteSpec<'a> {
    /// `--proxy-rules`: the file's name (for errors and credential sources) and text.
    pub rules: Option<(&'a str, &'a str)>,
    /// `--proxy URL`.
    pub proxy: Option<&'a str>,
    /// `--noproxy LIST`.
    pub noproxy: Option<&'a str>,
    /// The environment, read as curl reads it; `None` with `--no-proxy-env`.
    pub env: Option<env::Lookup<'a>>,
}

/// Why the routes cannot be built. The message quotes no credentials.
#[derive(Debug, thiserror::Error)]
pub enum RoutesError {
    /// A rules line that does not parse.
    #[error("{file}:{line}: {what}")]
    Rules {
        /// The rules file.
        file: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong, with any userinfo replaced by `***@`.
        what: String,
    },
    /// `--proxy`'s value.
    #[error("--proxy {shown}: {source}")]
    Proxy {
        /// The value, redacted.
        shown: String,
        /// Why.
        source: ProxyUrlError,
    },
    /// An environment variable's value.
    #[error(transparent)]
    Env(#[from] env::EnvError),
    /// More than [`MAX_RULES`] rules or 65,535 proxies.
    #[error("too many proxy rules or routes")]
    TooMany,
}

/// The compiled route table, shared by every fetcher.
#[derive(Clone, Debug)]
pub struct Routes {
    routes: Vec<Route>,
    rules: Vec<Rule>,
    fallback: Fallback,
}

impl Default for Routes {
    /// Direct only.
    fn default() -> Self {
        Self {
            routes: vec![direct()],
            rules: Vec::new(),
            fallback: Fallback::Direct,
        }
    }
}

impl Routes {
    /// Compiles the operator's inputs.
    ///
    /// # Errors
    /// [`RoutesError`] for a rules line, `--proxy` value or proxy variable that does not
    /// parse, or too many rules.
    pub fn build(spec: RouteSpec<'_>) -> Result<Self, RoutesError> {
        let mut t = Self::default();
        if let Some((file, text)) = spec.rules {
            t.read_rules(file, text)?;
        }
        // With `--proxy`, only the bypass list is read from the environment.
        let env = match spec.proxy {
            None => spec.env.map(EnvProxies::read).transpose()?,
            Some(_) => spec.env.map(|get| EnvProxies {
                no_proxy: env::no_proxy(get),
                ..EnvProxies::default()
            }),
        };
        let env_no_proxy = env.as_ref().and_then(|e| e.no_proxy.as_deref());
        let no_proxy = NoProxy::parse(spec.noproxy.or(env_no_proxy).unwrap_or(""));
        t.fallback = if let Some(raw) = spec.proxy {
            let url = ProxyUrl::parse(raw, "--proxy").map_err(|source| RoutesError::Proxy {
                shown: redact(raw),
                source,
            })?;
            let route = t.add(None, url)?;
            Fallback::Proxy { route, no_proxy }
        } else if let Some(env) = env {
            let http = env
                .http
                .map(|u| t.add(None, u))
                .transpose()?
                .unwrap_or(DIRECT);
            let https = env
                .https
                .map(|u| t.add(None, u))
                .transpose()?
                .unwrap_or(DIRECT);
            if http == DIRECT && https == DIRECT {
                Fallback::Direct
            } else {
                Fallback::Env {
                    http,
                    https,
                    no_proxy,
                }
            }
        } else {
            Fallback::Direct
        };
        Ok(t)
    }

    /// The route for a URL of scheme `https` (or http) on `host` (the URL's host as
    /// `url::Url::host_str` gives it).
    pub fn pick(&self, https: bool, host: &str) -> RouteId {
        let host = HostName::new(host);
        for rule in &self.rules {
            if rule.https.is_none_or(|h| h == https) && rule.pattern.matches(&host) {
                return rule.route;
            }
        }
        match &self.fallback {
            Fallback::Direct => DIRECT,
            Fallback::Proxy { route, no_proxy } => {
                if no_proxy.matches(&host) {
                    DIRECT
                } else {
                    *route
                }
            }
            Fallback::Env {
                http,
                https: s,
                no_proxy,
            } => {
                let route = if https { *s } else { *http };
                if route == DIRECT || no_proxy.matches(&host) {
                    DIRECT
                } else {
                    route
                }
            }
        }
    }

    /// Every route, [`DIRECT`] first; a [`RouteId`] indexes it.
    pub fn routes(&self) -> &[Route] {
        &self.routes
    }

    /// The route `id` (direct for an id this table never gave out).
    pub fn route(&self, id: RouteId) -> &Route {
        let all = &self.routes;
        all.get(usize::from(id))
            .or(all.first())
            .unwrap_or(&DIRECT_ROUTE)
    }

    /// Gives `creds` to every proxy route whose URL carried none
    /// (`--proxy-user-file`, `--proxy-user-env`).
    pub fn set_missing_credentials(&mut self, creds: &Credentials) {
        for route in &mut self.routes {
            if let Some(url) = route.proxy.as_mut().filter(|u| u.auth.is_none()) {
                url.auth = Some(creds.clone());
            }
        }
    }

    /// A description of the table without credentials or where they came from: its
    /// rules, fallback and each route's label and proxy endpoint. Equal tables give
    /// equal text (the farm compares nodes by it).
    pub fn describe(&self) -> String {
        use std::fmt::Write as _;
        let mut out = format!("{:?}|{:?}", self.rules, self.fallback);
        for r in &self.routes {
            let _ = match &r.proxy {
                Some(p) => write!(
                    out,
                    "|{}={}://{}:{}",
                    r.label,
                    p.kind.scheme(),
                    p.host,
                    p.port
                ),
                None => write!(out, "|{}", r.label),
            };
        }
        out
    }

    /// Whether any route goes through a proxy.
    pub fn has_proxies(&self) -> bool {
        self.routes.len() > 1
    }

    /// Adds a route (or finds the same one), named `name` or labelled by its URL.
    fn add(&mut self, name: Option<&str>, url: ProxyUrl) -> Result<RouteId, RoutesError> {
        let label = name.map_or_else(|| url.to_string(), str::to_owned);
        if let Some(i) = self
            .routes
            .iter()
            .position(|r| r.label == label && r.proxy.as_ref() == Some(&url))
        {
            return RouteId::try_from(i).map_err(|_| RoutesError::TooMany);
        }
        let id = RouteId::try_from(self.routes.len()).map_err(|_| RoutesError::TooMany)?;
        self.routes.push(Route {
            label,
            proxy: Some(url),
        });
        Ok(id)
    }

    fn read_rules(&mut self, file: &str, text: &str) -> Result<(), RoutesError> {
        let mut names: Vec<(String, RouteId)> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let err = |what: String| RoutesError::Rules {
                file: file.to_owned(),
                line,
                what,
            };
            if raw.len() > MAX_RULE_LINE_BYTES {
                return Err(err(format!("line longer than {MAX_RULE_LINE_BYTES} bytes")));
            }
            let body = strip_comment(raw);
            let mut words = body.split_ascii_whitespace();
            let (Some(first), second, third) = (words.next(), words.next(), words.next()) else {
                continue;
            };
            if third.is_some() {
                return Err(err(format!(
                    "expected `PATTERN ROUTE`, found {}",
                    redact(body.trim())
                )));
            }
            let source = format!("{file}:{line}");
            let Some(route) = second else {
                // `NAME=URL`: a named route.
                let Some((name, url)) = first.split_once('=').filter(|(n, _)| is_route_name(n))
                else {
                    return Err(err(format!(
                        "expected `PATTERN ROUTE` or `NAME=URL`, found {}",
                        redact(first)
                    )));
                };
                let parsed = ProxyUrl::parse(url, &source)
                    .map_err(|e| err(format!("{}: {e}", redact(url))))?;
                if names.iter().any(|(n, _)| n == name) {
                    return Err(err(format!("route {name} named twice")));
                }
                let id = self.add(Some(name), parsed)?;
                names.push((name.to_owned(), id));
                continue;
            };
            let (https, pattern) = split_scheme(first);
            let pattern = HostPattern::parse(pattern)
                .ok_or_else(|| err(format!("bad host pattern {}", redact(first))))?;
            let route = if route == "direct" {
                DIRECT
            } else if let Some((_, id)) = names.iter().find(|(n, _)| n == route) {
                *id
            } else if route.contains("://") || route.contains(':') {
                let parsed = ProxyUrl::parse(route, &source)
                    .map_err(|e| err(format!("{}: {e}", redact(route))))?;
                self.add(None, parsed)?
            } else {
                return Err(err(format!("unknown route {}", redact(route))));
            };
            if self.rules.len() >= MAX_RULES {
                return Err(RoutesError::TooMany);
            }
            self.rules.push(Rule {
                https,
                pattern,
                route,
            });
        }
        Ok(())
    }
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label)
    }
}

static DIRECT_ROUTE: Route = Route {
    label: String::new(),
    proxy: None,
};

fn direct() -> Route {
    Route {
        label: "direct".to_owned(),
        proxy: None,
    }
}

fn unbracket(s: &str) -> &str {
    s.strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .unwrap_or(s)
}

fn is_route_name(name: &str) -> bool {
    !name.is_empty()
        && name != "direct"
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
}

/// `http:PATTERN` / `https:PATTERN` (case-insensitive); an IPv6 pattern keeps its colons.
fn split_scheme(word: &str) -> (Option<bool>, &str) {
    for (prefix, https) in [("https:", true), ("http:", false)] {
        if word.len() > prefix.len()
            && word
                .get(..prefix.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(prefix))
        {
            return (Some(https), word.get(prefix.len()..).unwrap_or(""));
        }
    }
    (None, word)
}

/// The line up to a `#` at its start or after a blank.
fn strip_comment(line: &str) -> &str {
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'#' && (i == 0 || bytes.get(i - 1).is_some_and(u8::is_ascii_whitespace)) {
            return line.get(..i).unwrap_or("");
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    const P: &str = "http://127.0.0.1:9";
    const Q: &str = "http://127.0.0.2:9";

    #[derive(serde::Deserialize)]
    struct Row {
        row: String,
        env: HashMap<String, String>,
        url: String,
        route: String,
        #[serde(default)]
        no_proxy_env: bool,
    }

    fn env_of(row: &Row) -> HashMap<String, String> {
        let expand = |v: &str| match v {
            "P" => P.to_owned(),
            "Q" => Q.to_owned(),
            _ => v.to_owned(),
        };
        row.env
            .iter()
            .map(|(k, v)| (k.clone(), expand(v)))
            .collect()
    }

    /// The environment table of notes §10 (read by `super::env`), the same rows `tests/proxy_env.rs` replays
    /// through curl.
    #[test]
    fn curl_environment_table() {
        let rows: Vec<Row> =
            serde_json::from_str(include_str!("../../../tests/data/proxy_env/table.json"))
                .expect("table parses");
        assert!(rows.len() >= 12);
        for row in &rows {
            let env = env_of(row);
            let get = |name: &str| env.get(name).cloned();
            let routes = Routes::build(RouteSpec {
                env: if row.no_proxy_env { None } else { Some(&get) },
                ..RouteSpec::default()
            })
            .unwrap_or_else(|e| panic!("row {}: {e}", row.row));
            let url = url::Url::parse(&row.url).expect("row URL");
            let route =
                routes.route(routes.pick(url.scheme() == "https", url.host_str().unwrap_or("")));
            let got = match route.proxy.as_ref().map(|p| p.authority()) {
                None => "direct",
                Some(a) if a == "127.0.0.1:9" => "P",
                Some(a) if a == "127.0.0.2:9" => "Q",
                Some(_) => "other",
            };
            assert_eq!(got, row.route, "row {}", row.row);
        }
    }

    fn rules(text: &str) -> Result<Routes, RoutesError> {
        Routes::build(RouteSpec {
            rules: Some(("rules.txt", text)),
            ..RouteSpec::default()
        })
    }

    fn label(t: &Routes, https: bool, host: &str) -> String {
        t.route(t.pick(https, host)).label.clone()
    }

    #[test]
    fn rules_first_match_wins() {
        let t = rules(
            "# comment\n\
             squid=http://u:secret@proxy.corp:3128\n\
             \n\
             .onion socks5h://127.0.0.1:9050   # tor\n\
             https:.example.org squid\n\
             intranet.corp direct\n\
             10.0.0.0/8 direct\n\
             [::1] direct\n\
             HTTP:plain.test http://p2:8080\n\
             * squid\n",
        )
        .expect("rules parse");
        let cases: &[(bool, &str, &str)] = &[
            (false, "abc.onion", "socks5h://127.0.0.1:9050"),
            (true, "www.example.org", "squid"),
            (true, "example.org", "squid"),
            (true, "example.org.", "squid"),
            (false, "intranet.corp", "direct"),
            (false, "www.intranet.corp", "squid"),
            (false, "10.9.8.7", "direct"),
            (false, "11.0.0.1", "squid"),
            (false, "[::1]", "direct"),
            (false, "plain.test", "http://p2:8080"),
            (true, "plain.test", "squid"),
            (false, "Intranet.Corp", "direct"),
        ];
        for &(https, host, want) in cases {
            assert_eq!(label(&t, https, host), want, "{https} {host}");
        }
        assert_eq!(t.routes().len(), 4, "direct, squid, tor, p2");
        let squid = t.route(t.pick(true, "example.org"));
        let auth = squid
            .proxy
            .as_ref()
            .and_then(|p| p.auth.as_ref())
            .expect("credentials");
        assert_eq!(auth.source.to_string(), "url:rules.txt:2");
        assert!(!format!("{t:?}").contains("secret"));
    }

    #[test]
    fn proxy_flag_gives_way_to_noproxy_or_no_proxy() {
        let env = |name: &str| match name {
            "NO_PROXY" => Some("skip.test".to_owned()),
            // Never read with --proxy: a broken value cannot stop the crawl.
            "http_proxy" | "all_proxy" => Some("socks4://broken".to_owned()),
            _ => None,
        };
        let with = |noproxy: Option<&str>, env: Option<env::Lookup<'_>>| {
            let t = Routes::build(RouteSpec {
                proxy: Some("http://u:pw@p:3128"),
                noproxy,
                env,
                ..RouteSpec::default()
            })
            .expect("builds");
            (
                label(&t, false, "a.skip.test"),
                label(&t, true, "other.test"),
            )
        };
        let p = "http://p:3128".to_owned();
        assert_eq!(with(None, Some(&env)), ("direct".to_owned(), p.clone()));
        assert_eq!(with(None, None), (p.clone(), p.clone()));
        assert_eq!(
            with(Some("other.test"), Some(&env)),
            (p.clone(), "direct".to_owned())
        );
        let err = Routes::build(RouteSpec {
            proxy: Some("ftp://u:pw@p"),
            ..RouteSpec::default()
        })
        .map(|_| ())
        .expect_err("ftp");
        assert_eq!(err.to_string(), "--proxy ftp://***@p: unknown proxy scheme (use http://, https://, socks5:// or socks5h://)");
        // Without --proxy the same environment is an error that names the variable.
        let err = Routes::build(RouteSpec {
            env: Some(&env),
            ..RouteSpec::default()
        })
        .map(|_| ())
        .expect_err("socks4 in http_proxy");
        assert!(
            err.to_string().starts_with("http_proxy=socks4://broken: "),
            "{err}"
        );
    }

    #[test]
    fn no_rule_no_proxy_is_direct() {
        let t = Routes::default();
        assert_eq!(t.pick(true, "a.test"), DIRECT);
        assert_eq!(t.route(DIRECT).label, "direct");
        assert_eq!(t.route(999).label, "direct");
        assert!(!t.has_proxies());
    }

    #[test]
    fn rule_errors_name_the_line_and_hide_credentials() {
        let table: &[(&str, &str)] = &[
            ("a.test", "rules.txt:1: expected `PATTERN ROUTE` or `NAME=URL`, found a.test"),
            ("\n* squid", "rules.txt:2: unknown route squid"),
            ("a b c", "rules.txt:1: expected `PATTERN ROUTE`, found a b c"),
            ("a!b direct", "rules.txt:1: bad host pattern a!b"),
            ("* socks4://u:pw@h", "rules.txt:1: socks4://***@h: SOCKS4 proxies are not supported (use socks5:// or socks5h://)"),
            ("x=http://u:pw@h:0", "rules.txt:1: http://***@h:0: bad proxy port"),
            ("x=http://h\nx=http://i", "rules.txt:2: route x named twice"),
            ("direct=http://h", "rules.txt:1: expected `PATTERN ROUTE` or `NAME=URL`, found direct=http://h"),
            ("10.0.0.0/33 direct", "rules.txt:1: bad host pattern 10.0.0.0/33"),
            ("..a direct", "rules.txt:1: bad host pattern ..a"),
        ];
        for &(text, want) in table {
            let got = rules(text).map(|_| ()).expect_err(text).to_string();
            assert_eq!(got, want, "{text}");
            assert!(!got.contains("pw"), "{got}");
        }
        let long = format!("{} direct", "a".repeat(MAX_RULE_LINE_BYTES));
        assert!(matches!(
            rules(&long),
            Err(RoutesError::Rules { line: 1, .. })
        ));
    }

    #[test]
    fn ip_nets() {
        let net = IpNet::parse("10.0.0.0/8").expect("net");
        assert!(net.contains("10.255.0.1".parse().expect("ip")));
        assert!(!net.contains("11.0.0.1".parse().expect("ip")));
        assert!(!net.contains("::1".parse().expect("ip")));
        let v6 = IpNet::parse("[2001:db8::]/32").expect("net");
        assert!(v6.contains("2001:db8:1::1".parse().expect("ip")));
        assert!(!v6.contains("2001:db9::1".parse().expect("ip")));
        let exact = IpNet::parse("10.1.2.3/0").expect("curl: /0 is exact");
        assert!(!exact.contains("10.1.2.4".parse().expect("ip")));
        for bad in [
            "10.0.0.0/",
            "10.0.0.0/x",
            "::1/129",
            "a.test",
            "10.0.0.0/1000",
        ] {
            assert_eq!(IpNet::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn no_proxy_as_curl_7_88() {
        let m = |list: &str, host: &str| NoProxy::parse(list).matches(&HostName::new(host));
        assert!(m("example.test", "www.example.test"));
        assert!(m(".example.test", "example.test"));
        assert!(!m("example.test", "nonexample.test"));
        assert!(m("*", "a.test"));
        assert!(!m("*,x", "a.test"));
        assert!(!m("*.test", "a.test"));
        assert!(m("10.0.0.0/8", "10.1.2.3"));
        assert!(m("::1", "[::1]"));
        assert!(m("a.test", "A.TEST."));
        assert!(!m("a.test:8080", "a.test"));
        assert!(!m("", "a.test"));
        assert!(m("localhost,,a.test", "a.test"));
        assert!(m("x.test a.test", "a.test"));
        assert!(!m("10.1.2.3", "a.test"));
        assert!(!m("a.test", "10.1.2.3"));
    }
}
