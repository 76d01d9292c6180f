//! The generator: for any `(scheme, host, target)` what the server answers, and the
//! outgoing links of the page as the generator intends them. Pure: no I/O, no clock, no
//! per-host state. The server (crate::server) and the manifest walker both use this.

use std::net::Ipv4Addr;

use crate::changes::{self, Change};
use crate::coding::{self, Coding};
use crate::config::{ConfigError, SiteConfig};
use crate::hash::{hash_bytes, hash_words, Rng};
use crate::hosts::{self, HostRole, HostileKind, TrapKind};
use crate::html::{
    self, Alias, Charset, CharsetLabel, Element, HiddenIn, Link, LinkKind, Origin, Spelling,
};
use crate::robots::{self, RobotsEntry, RobotsFetch, RobotsVerdict};

/// URL scheme of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// Plain HTTP.
    Http,
    /// HTTPS.
    Https,
}

impl Scheme {
    /// `http` or `https`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Http => "http",
            Self::Https => "https",
        }
    }
}

/// How the body is delimited on the wire (RFC 9112 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Framing {
    /// `Content-Length`.
    ContentLength,
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// No length: the body ends when the server closes the connection.
    Close,
}

/// A response as the generator defines it (the server adds framing headers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Header fields other than framing ones (Content-Type, Location, Retry-After,
    /// ETag, Last-Modified, X-Robots-Tag, Content-Encoding, Vary).
    pub headers: Vec<(&'static str, String)>,
    /// Body (after any content coding).
    pub body: Vec<u8>,
    /// Body framing.
    pub framing: Framing,
    /// The hostile behaviour the server applies instead of a clean write, if any.
    pub hostile: Option<HostileKind>,
}

impl Response {
    /// First value of header `name` (case-insensitive).
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A page with everything the manifest walker needs.
#[derive(Debug, Clone)]
pub struct PageView {
    /// The identity-coded response.
    pub response: Response,
    /// Outgoing links in document order (hidden ones included, marked).
    pub links: Vec<Link>,
    /// Content of `<meta name="robots">`, if any.
    pub meta_robots: Option<String>,
    /// Value of the `X-Robots-Tag` header, if any.
    pub x_robots_tag: Option<String>,
    /// Charset of an HTML page.
    pub charset: Option<Charset>,
    /// Role of the host.
    pub role: HostRole,
    /// For trap pages: hops from the host root `/`.
    pub trap_depth: Option<u32>,
    /// For 3xx: the canonical absolute URL of `Location`.
    pub redirect_to: Option<String>,
}

/// What a host answers at `/robots.txt`.
#[derive(Debug, Clone)]
pub struct RobotsModel {
    /// Catalogue entry.
    pub entry: RobotsEntry,
    /// Status.
    pub status: u16,
    /// `Location` (canonical absolute URL) for redirect entries.
    pub location: Option<String>,
    /// Body bytes (as served, identity coding).
    pub body: Vec<u8>,
    /// The structured meaning.
    pub fetch: RobotsFetch,
}

/// Request header values that change the answer.
#[derive(Debug, Clone, Copy, Default)]
pub struct Conditions<'a> {
    /// `If-None-Match`.
    pub if_none_match: Option<&'a str>,
    /// `If-Modified-Since`.
    pub if_modified_since: Option<&'a str>,
}

/// Largest request-target the generator serves; longer ones get 414.
pub const MAX_TARGET_BYTES: usize = 8_192;

/// The synthetic web.
#[derive(Debug, Clone)]
pub struct Site {
    cfg: SiteConfig,
}

const WIKI: [&str; 4] = ["Café", "Über", "Ñandú", "東京"];
const SMALL_K: u32 = 3;
const WIKI_K: u32 = 8;
const QUERY_K: u32 = 4;
const SESSION_PAGES: u32 = 50;
const DUP_VARIANTS: u32 = 20;
const MILLION: u32 = 1_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe {
    Private,
    PrivateOpen,
    Php,
    Php5,
    HtmlY,
    Tmp,
}
const PROBES: [Probe; 6] = [
    Probe::Private,
    Probe::PrivateOpen,
    Probe::Php,
    Probe::Php5,
    Probe::HtmlY,
    Probe::Tmp,
];

impl Probe {
    fn path(self, k: u32) -> String {
        match self {
            Self::Private => format!("/private/{k}"),
            Self::PrivateOpen => format!("/private/open/{k}"),
            Self::Php => format!("/x/{k}.php"),
            Self::Php5 => format!("/x/{k}.php5"),
            Self::HtmlY => format!("/x/{k}.html?y=1"),
            Self::Tmp => format!("/tmp/{k}"),
        }
    }
}

/// Decode `%XX` of unreserved characters and upper-case the hex of the others, so
/// syntactic aliases of a target find the same page (RFC 3986 6.2.2).
#[must_use]
pub fn normalize_target(target: &str) -> String {
    let b = target.as_bytes();
    let mut out = String::with_capacity(b.len());
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if c == b'%' {
            if let Some(hex) = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
            {
                if let Ok(v) = u8::from_str_radix(hex, 16) {
                    if v.is_ascii_alphanumeric() || matches!(v, b'-' | b'.' | b'_' | b'~') {
                        out.push(v as char);
                    } else {
                        out.push('%');
                        out.push_str(&hex.to_ascii_uppercase());
                    }
                    i += 3;
                    continue;
                }
            }
        }
        // Non-ASCII bytes in a target are invalid; keep them percent-encoded.
        if c.is_ascii() {
            out.push(c as char);
        } else {
            out.push_str(&format!("%{c:02X}"));
        }
        i += 1;
    }
    out
}

fn parse_u32(s: &str) -> Option<u32> {
    if s.is_empty() || s.len() > 9 || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    if s.len() > 1 && s.starts_with('0') {
        return None;
    }
    s.parse().ok()
}

/// What [`Site::wide_page`] needs of the page being built.
struct WidePage<'a> {
    index: u32,
    role: HostRole,
    full: &'a str,
    label: CharsetLabel,
    framing: Framing,
    meta_robots: Option<&'a str>,
    x_robots: Option<&'a str>,
}

struct Builder<'a> {
    site: &'a Site,
    scheme: Scheme,
    host: u32,
    here: Origin,
    base_dir: String,
    charset: Charset,
    html: String,
    links: Vec<Link>,
    rng: Rng,
    quirks: bool,
}

impl Builder<'_> {
    /// Write a link and record it.
    fn link(&mut self, element: Element, to_host: u32, path_q: &str, kind: LinkKind, text: &str) {
        let scheme = if to_host == self.host {
            self.scheme
        } else {
            self.site.link_scheme(self.scheme, to_host)
        };
        let target = self.site.origin(scheme, to_host);
        let url = format!("{}{}", target.canonical(), path_q);
        let (raw, url) = match kind {
            LinkKind::Hidden(_) => (path_q.to_owned(), Some(url)),
            // Wide mode's cross-host links in benchmark mode: absolute, or they would
            // point at this host.
            _ if !self.quirks
                && to_host != self.host
                && (self.site.cfg.fanout.is_some() || self.site.cfg.mesh.is_some()) =>
            {
                (url.clone(), Some(url))
            }
            _ if !self.quirks => (path_q.to_owned(), Some(url)),
            _ => {
                let same = to_host == self.host;
                let alias = if same {
                    *self
                        .rng
                        .pick(&html::SAME_HOST_ALIASES)
                        .unwrap_or(&Alias::RootRelative)
                } else {
                    *self
                        .rng
                        .pick(&html::CROSS_HOST_ALIASES)
                        .unwrap_or(&Alias::Absolute)
                };
                let spelling = match self.rng.below(3) {
                    0 => Spelling::Canonical,
                    1 => Spelling::LowerHex,
                    _ => Spelling::Raw,
                };
                let mut h = html::spell_href(
                    alias,
                    &self.here,
                    &self.base_dir,
                    &target,
                    path_q,
                    spelling,
                    self.charset,
                );
                if element == Element::A && self.rng.chance(15) {
                    h.push_str(&format!("#sec{}", self.rng.below(9)));
                }
                if element == Element::A && self.rng.chance(10) {
                    let mid = h.len() / 2;
                    let mid = (mid..h.len())
                        .find(|&i| h.is_char_boundary(i))
                        .unwrap_or(h.len());
                    h = format!("\n  {}\n\t{}  \n", &h[..mid], &h[mid..]);
                }
                (h, Some(url))
            }
        };
        let written = html::escape(&raw);
        let q = if self.quirks && self.rng.chance(10) {
            '\''
        } else {
            '"'
        };
        let attr = format!("{q}{written}{q}");
        match element {
            Element::A => {
                let rel = if kind == LinkKind::NoFollowRel { " rel=\"nofollow\"" } else { "" };
                self.html.push_str(&format!("<a href={attr}{rel}>{text}</a>\n"));
            }
            Element::Area => self.html.push_str(&format!(
                "<map name=\"m{n}\"><area shape=\"rect\" coords=\"0,0,10,10\" href={attr} alt=\"{text}\"></map>\n",
                n = self.links.len()
            )),
            Element::Frame => self.html.push_str(&format!("<frame src={attr} name=\"{text}\">\n")),
            Element::IFrame => {
                self.html.push_str(&format!("<iframe src={attr} title=\"{text}\"></iframe>\n"));
            }
            Element::Link => {
                let rel = if kind == LinkKind::Resource { "stylesheet" } else { "alternate" };
                self.html.push_str(&format!("<link rel=\"{rel}\" href={attr}>\n"));
            }
            Element::Img => self.html.push_str(&format!("<img src={attr} alt=\"{text}\">\n")),
            Element::MetaRefresh => self.html.push_str(&format!(
                "<meta http-equiv=\"refresh\" content=\"0; url={written}\">\n"
            )),
        }
        self.links.push(Link {
            element,
            href: written,
            url,
            kind,
        });
    }

    /// An `<a>` written as `href` (relative as given), resolving to `path` on this host.
    fn relative_link(&mut self, href: &str, path: &str, text: &str) {
        let written = html::escape(href);
        self.html
            .push_str(&format!("<a href=\"{written}\">{text}</a>\n"));
        self.links.push(Link {
            element: Element::A,
            href: written,
            url: Some(format!("{}{}", self.here.canonical(), path)),
            kind: LinkKind::Follow,
        });
    }

    fn hidden(&mut self, within: HiddenIn, k: u32) {
        let name = match within {
            HiddenIn::Comment => "comment",
            HiddenIn::Script => "script",
            HiddenIn::Style => "style",
        };
        let path = format!("/hidden/{name}/{k}");
        let url = format!("{}{}", self.here.canonical(), path);
        match within {
            HiddenIn::Comment => self.html.push_str(&format!(
                "<!-- old menu: <a href=\"{path}\">hidden</a> -->\n"
            )),
            HiddenIn::Script => self.html.push_str(&format!(
                "<script>\nvar next = \"{path}\";\ndocument.write('<a href=\"{path}\">x</a>');\n</script>\n"
            )),
            HiddenIn::Style => self.html.push_str(&format!(
                "<style>\n/* <a href=\"{path}\">styled</a> */\n.c{k} {{ color: #333; }}\n</style>\n"
            )),
        }
        self.links.push(Link {
            element: Element::A,
            href: path,
            url: Some(url),
            kind: LinkKind::Hidden(within),
        });
    }

    fn non_http(&mut self, mailto: bool) {
        let href = if mailto {
            format!("mailto:webmaster@{}", self.here.host)
        } else {
            "javascript:void(0)".to_owned()
        };
        self.html
            .push_str(&format!("<a href=\"{href}\">contact</a>\n"));
        self.links.push(Link {
            element: Element::A,
            href,
            url: None,
            kind: LinkKind::NonHttp,
        });
    }
}

impl Site {
    /// Build a site.
    ///
    /// # Errors
    /// The config's first [`ConfigError`].
    pub fn new(cfg: SiteConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(Self { cfg })
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &SiteConfig {
        &self.cfg
    }

    /// Number of hosts.
    #[must_use]
    pub fn host_count(&self) -> u32 {
        self.cfg.hosts
    }

    /// Name of host `index`.
    #[must_use]
    pub fn host_name(&self, index: u32) -> String {
        hosts::host_name(self.cfg.hosts, index)
    }

    /// Index for a Host header value (port ignored, case-insensitive).
    #[must_use]
    pub fn host_index(&self, host_header: &str) -> Option<u32> {
        hosts::host_index(self.cfg.hosts, host_header)
    }

    /// Loopback address of host `index`.
    #[must_use]
    pub fn host_addr(&self, index: u32) -> Ipv4Addr {
        hosts::host_addr(&self.cfg, index)
    }

    /// Role of host `index`.
    #[must_use]
    pub fn role(&self, index: u32) -> HostRole {
        hosts::role(self.cfg.profiles, index)
    }

    /// Port for a scheme.
    #[must_use]
    pub fn port(&self, scheme: Scheme) -> u16 {
        match scheme {
            Scheme::Http => self.cfg.http_port,
            Scheme::Https => self.cfg.tls_port.unwrap_or(self.cfg.http_port),
        }
    }

    /// Origin of a host.
    #[must_use]
    pub fn origin(&self, scheme: Scheme, index: u32) -> Origin {
        Origin {
            scheme: scheme.as_str(),
            host: self.host_name(index),
            port: self.port(scheme),
        }
    }

    /// Canonical URL `scheme://host:port{path_q}`.
    #[must_use]
    pub fn url(&self, scheme: Scheme, index: u32, path_q: &str) -> String {
        format!("{}{}", self.origin(scheme, index).canonical(), path_q)
    }

    /// Seed host indices: host 0, every special host of the active profiles, and every
    /// `seed_stride`-th host.
    pub fn seed_hosts(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.cfg.hosts).filter(move |&i| {
            i == 0 || i % self.cfg.seed_stride == 0 || self.role(i) != HostRole::Normal
        })
    }

    /// Seed URLs, one per seed host root (HTTP, or HTTPS for a mesh's HTTPS-only host).
    pub fn seeds(&self) -> impl Iterator<Item = String> + '_ {
        self.seed_hosts()
            .map(|i| self.url(self.link_scheme(Scheme::Http, i), i, "/"))
    }

    /// Whether host `index` is HTTPS-only (mesh mode's `https_percent`; never host 0).
    #[must_use]
    pub fn is_https_only(&self, index: u32) -> bool {
        self.cfg.mesh.is_some_and(|m| {
            index != 0
                && hash_words(&[self.cfg.seed, u64::from(index), 0x7715]) % 100
                    < u64::from(m.https_percent)
        })
    }

    /// The scheme of a link to host `index` from a page served over `from`: the
    /// host's own scheme in mesh mode (HTTPS-only hosts are linked `https://`, the
    /// others `http://`), else the page's.
    #[must_use]
    pub fn link_scheme(&self, from: Scheme, index: u32) -> Scheme {
        match self.cfg.mesh {
            Some(_) if self.is_https_only(index) => Scheme::Https,
            Some(_) => Scheme::Http,
            None => from,
        }
    }

    /// The content coding of a response for an `Accept-Encoding` value: none in mesh
    /// mode (every page then costs the same bytes on a paced server), else negotiated.
    #[must_use]
    pub fn coding_for(&self, accept_encoding: Option<&str>) -> Coding {
        if self.cfg.mesh.is_some() {
            Coding::Identity
        } else {
            coding::negotiate(accept_encoding)
        }
    }

    /// The name of dead host `k` of mesh mode, e.g. `d000042.dead.test`.
    #[must_use]
    pub fn dead_name(&self, k: u32) -> String {
        format!(
            "d{k:0w$}.{}",
            crate::config::DEAD_DOMAIN,
            w = hosts::name_width(self.cfg.hosts)
        )
    }

    /// Pages `/p/1..n` of a host (`n` exclusive).
    #[must_use]
    pub fn page_count(&self, index: u32) -> u32 {
        if self.role(index) == HostRole::Trap(TrapKind::MillionPages) {
            return MILLION;
        }
        let mut r = Rng::new(hash_words(&[self.cfg.seed, u64::from(index), 0x5A6E]));
        r.range(
            u64::from(self.cfg.pages_per_host.min),
            u64::from(self.cfg.pages_per_host.max),
        ) as u32
    }

    /// The robots catalogue entry of a host.
    #[must_use]
    pub fn robots_entry(&self, index: u32) -> RobotsEntry {
        if self.cfg.mesh.is_some() {
            return RobotsEntry::AllowAll;
        }
        robots::host_entry(self.cfg.profiles, index)
    }

    /// What `/robots.txt` of a host answers.
    #[must_use]
    pub fn robots(&self, scheme: Scheme, index: u32) -> RobotsModel {
        let entry = self.robots_entry(index);
        let fetch = entry.fetch();
        let location = match &fetch {
            RobotsFetch::Redirect {
                cross_host, path, ..
            } => Some(self.url(scheme, if *cross_host { 0 } else { index }, path)),
            _ => None,
        };
        RobotsModel {
            entry,
            status: entry.status(),
            location,
            body: entry.body(),
            fetch,
        }
    }

    /// The oracle: may `agent` fetch `path_and_query` on host `index`? Evaluated from the
    /// catalogue entry's structured rules with RFC 9309 semantics.
    #[must_use]
    pub fn robots_allows(
        &self,
        index: u32,
        agent: &str,
        path_and_query: &str,
        robots_4xx_disallow: bool,
    ) -> RobotsVerdict {
        robots::verdict(
            self.robots_entry(index),
            agent,
            path_and_query,
            robots_4xx_disallow,
        )
    }

    /// Crawl-delay (seconds) a host asks of `agent`.
    #[must_use]
    pub fn crawl_delay_secs(&self, index: u32, agent: &str) -> Option<u32> {
        match self.robots_entry(index).fetch() {
            RobotsFetch::Rules(g) => robots::crawl_delay_secs(&g, agent),
            RobotsFetch::Redirect { target, .. } => robots::crawl_delay_secs(&target, agent),
            _ => None,
        }
    }

    /// The response to `GET target` for a Host header value, with content coding applied
    /// per `coding` (only to 200 responses with a textual type). Unknown hosts get 404.
    #[must_use]
    pub fn representation(
        &self,
        scheme: Scheme,
        host_header: &str,
        target: &str,
        coding: Coding,
    ) -> Response {
        let Some(index) = self.host_index(host_header) else {
            return simple(404, "text/plain; charset=utf-8", b"unknown host\n".to_vec());
        };
        let coding = if self.cfg.mesh.is_some() {
            Coding::Identity
        } else {
            coding
        };
        let mut resp = self.page(scheme, index, target).response;
        if coding != Coding::Identity && resp.status == 200 && resp.hostile.is_none() {
            let textual = resp
                .header("Content-Type")
                .is_some_and(|t| t.starts_with("text/") || t.starts_with("application/json"));
            if textual {
                if let Ok(enc) = coding::encode(coding, &resp.body) {
                    resp.body = enc;
                    if let Some(tok) = coding.token() {
                        resp.headers.push(("Content-Encoding", tok.to_owned()));
                        // A strong ETag names one representation: each coding gets its own.
                        for (n, v) in &mut resp.headers {
                            if *n == "ETag" {
                                *v = format!("{}-{tok}\"", v.trim_end_matches('"'));
                            }
                        }
                    }
                    resp.headers.push(("Vary", "Accept-Encoding".to_owned()));
                }
            }
        }
        resp
    }

    /// A `304 Not Modified` for `resp` if the conditions say the client's copy is current
    /// (If-None-Match takes precedence over If-Modified-Since, RFC 9110 13.2.2).
    #[must_use]
    pub fn not_modified(resp: &Response, cond: Conditions<'_>) -> Option<Response> {
        if resp.status != 200 || resp.hostile.is_some() {
            return None;
        }
        let etag = resp.header("ETag")?;
        let hit = if let Some(inm) = cond.if_none_match {
            coding::none_match_hits(inm, etag)
        } else if let Some(ims) = cond.if_modified_since {
            let lm = resp
                .header("Last-Modified")
                .and_then(coding::parse_http_date);
            match (coding::parse_http_date(ims), lm) {
                (Some(since), Some(lm)) => lm <= since,
                _ => false,
            }
        } else {
            false
        };
        hit.then(|| {
            let headers = resp
                .headers
                .iter()
                .filter(|(n, _)| matches!(*n, "ETag" | "Last-Modified" | "Vary"))
                .cloned()
                .collect();
            Response {
                status: 304,
                headers,
                body: Vec::new(),
                framing: Framing::ContentLength,
                hostile: None,
            }
        })
    }

    /// Everything about `target` on host `index`: the identity-coded response and the
    /// links the page carries.
    #[must_use]
    pub fn page(&self, scheme: Scheme, index: u32, target: &str) -> PageView {
        let role = self.role(index);
        let mut view = if target.len() > MAX_TARGET_BYTES {
            self.plain_view(
                role,
                simple(414, "text/plain; charset=utf-8", b"URI too long\n".to_vec()),
            )
        } else {
            let t = normalize_target(target);
            let (path, query) = match t.split_once('?') {
                Some((p, q)) => (p, Some(q)),
                None => (t.as_str(), None),
            };
            if path == "/robots.txt" && query.is_none() {
                self.robots_view(scheme, index, role)
            } else {
                match role {
                    HostRole::Trap(kind) => self.trap_page(scheme, index, kind, path, query),
                    HostRole::Normal | HostRole::Hostile(_) => {
                        self.normal_page(scheme, index, role, &t, path, query)
                    }
                }
            }
        };
        if let HostRole::Hostile(kind) = role {
            let applies = !(kind.is_tls_only() && scheme == Scheme::Http)
                && normalize_target(target) != "/robots.txt";
            if applies {
                view.response.hostile = Some(kind);
                if !kind.delivers_page() {
                    view.links.clear();
                }
            }
        }
        view
    }

    fn plain_view(&self, role: HostRole, response: Response) -> PageView {
        PageView {
            response,
            links: Vec::new(),
            meta_robots: None,
            x_robots_tag: None,
            charset: None,
            role,
            trap_depth: None,
            redirect_to: None,
        }
    }

    fn robots_view(&self, scheme: Scheme, index: u32, role: HostRole) -> PageView {
        let m = self.robots(scheme, index);
        let mut resp = if m.status == 200 {
            let mut body = m.body;
            if self.cfg.profiles.sitemaps {
                if let Some(line) = crate::sitemaps::robots_line(self, scheme, index) {
                    body.extend_from_slice(line.as_bytes());
                }
            }
            if self.cfg.profiles.sitemap_chain {
                if let Some(lines) = crate::chain::robots_lines(self, scheme, index) {
                    body.extend_from_slice(lines.as_bytes());
                }
            }
            let mut r = simple(200, "text/plain; charset=utf-8", body);
            self.validators(&mut r, index, "/robots.txt");
            r
        } else if let Some(loc) = &m.location {
            let mut r = simple(
                m.status,
                "text/html; charset=utf-8",
                b"<p>moved</p>\n".to_vec(),
            );
            r.headers.push(("Location", loc.clone()));
            r
        } else {
            let mut r = simple(
                m.status,
                "text/html; charset=utf-8",
                format!("<html><body><h1>{}</h1></body></html>\n", m.status).into_bytes(),
            );
            if m.status == 503 {
                r.headers.push(("Retry-After", "3".to_owned()));
            }
            r
        };
        resp.framing = Framing::ContentLength;
        let mut v = self.plain_view(role, resp);
        v.redirect_to = m.location;
        v
    }

    fn validators(&self, r: &mut Response, index: u32, path: &str) {
        let h = hash_bytes(hash_words(&[self.cfg.seed, u64::from(index)]), &r.body);
        r.headers.push(("ETag", format!("\"{h:016x}\"")));
        let secs = self.last_modified_secs(index, path);
        r.headers
            .push(("Last-Modified", coding::format_http_date(secs)));
    }

    /// Last-Modified of `path` on host `index`, in seconds since the epoch: between
    /// 2020-01-01 and about 2025-06 in generation 0; later for a changed or new page.
    #[must_use]
    pub fn last_modified_secs(&self, index: u32, path: &str) -> i64 {
        if matches!(
            self.change_at(index, path),
            Some(Change::Changed | Change::New)
        ) {
            return changes::changed_last_modified_secs(&self.cfg, index, path);
        }
        let lm_h = hash_bytes(self.cfg.seed ^ u64::from(index), path.as_bytes());
        1_577_836_800 + (lm_h % (2_000 * 86_400)) as i64
    }

    /// The `<lastmod>` of the sitemap files themselves.
    #[must_use]
    pub fn file_lastmod(&self) -> i64 {
        if changes::active(&self.cfg) {
            changes::changed_last_modified_secs(&self.cfg, 0, crate::sitemaps::INDEX)
        } else {
            // 2025-06-30T00:00:00Z
            1_751_241_600
        }
    }

    /// How `path` (a request-target in canonical form) on host `index` differs from
    /// generation 0 (see [`crate::changes`]). Only ordinary hosts change.
    #[must_use]
    pub fn change_at(&self, index: u32, path: &str) -> Option<Change> {
        if !changes::active(&self.cfg) || self.role(index) != HostRole::Normal {
            return None;
        }
        if path == "/" {
            return (self.new_page_count(index) > 0).then_some(Change::Changed);
        }
        if let Some(k) = path.strip_prefix("/p/").and_then(parse_u32) {
            if k >= 1 && k < self.page_count(index) {
                return changes::of_page(&self.cfg, index, k);
            }
            return None;
        }
        let k = path.strip_prefix("/new/").and_then(parse_u32)?;
        (k < self.new_page_count(index)).then_some(Change::New)
    }

    /// Whether `path` on host `index` vanished in this generation.
    #[must_use]
    pub fn is_gone(&self, index: u32, path: &str) -> bool {
        matches!(self.change_at(index, path), Some(Change::Gone(_)))
    }

    /// Pages `/new/0..n` host `index` gained in this generation.
    #[must_use]
    pub fn new_page_count(&self, index: u32) -> u32 {
        if !changes::active(&self.cfg) || self.role(index) != HostRole::Normal {
            return 0;
        }
        changes::new_pages(&self.cfg, self.page_count(index))
    }

    /// Every URL (canonical, HTTP) that differs from generation 0, with how, host by
    /// host in page order: the root, `/p/k`, then `/new/k`.
    pub fn changes(&self) -> impl Iterator<Item = (String, Change)> + '_ {
        (0..self.cfg.hosts)
            .filter(move |&i| changes::active(&self.cfg) && self.role(i) == HostRole::Normal)
            .flat_map(move |i| {
                let root = self
                    .change_at(i, "/")
                    .map(|c| (self.url(Scheme::Http, i, "/"), c));
                let pages = (1..self.page_count(i)).filter_map(move |k| {
                    changes::of_page(&self.cfg, i, k)
                        .map(|c| (self.url(Scheme::Http, i, &format!("/p/{k}")), c))
                });
                let new = (0..self.new_page_count(i))
                    .map(move |k| (self.url(Scheme::Http, i, &format!("/new/{k}")), Change::New));
                root.into_iter().chain(pages).chain(new)
            })
    }

    fn page_rng(&self, index: u32, key: &str) -> Rng {
        Rng::new(hash_bytes(
            hash_words(&[self.cfg.seed, u64::from(index), 0xBA6E]),
            key.as_bytes(),
        ))
    }

    fn builder(
        &self,
        scheme: Scheme,
        index: u32,
        key: &str,
        charset: Charset,
        base_dir: &str,
    ) -> Builder<'_> {
        Builder {
            site: self,
            scheme,
            host: index,
            here: self.origin(scheme, index),
            base_dir: base_dir.to_owned(),
            charset,
            html: String::new(),
            links: Vec::new(),
            rng: self.page_rng(index, key),
            quirks: !self.cfg.fixed_size,
        }
    }

    #[allow(
        clippy::too_many_lines,
        reason = "one routing table reads best in one place"
    )]
    fn normal_page(
        &self,
        scheme: Scheme,
        index: u32,
        role: HostRole,
        full: &str,
        path: &str,
        query: Option<&str>,
    ) -> PageView {
        let segs: Vec<&str> = path.split('/').skip(1).collect();
        let n_pages = self.page_count(index);
        let small = |k: u32, max: u32| k < max;
        let not_found = || {
            self.plain_view(
                role,
                simple(
                    404,
                    "text/html; charset=utf-8",
                    b"<html><body><h1>404 Not Found</h1></body></html>\n".to_vec(),
                ),
            )
        };
        let q_none = query.is_none();
        match segs.as_slice() {
            [""] if q_none => self.html_page(scheme, index, role, full, PageKind::Root),
            ["p", k] if q_none => match parse_u32(k) {
                Some(k) if k >= 1 && k < n_pages => {
                    if let Some(Change::Gone(status)) = self.change_at(index, full) {
                        return self.plain_view(
                            role,
                            simple(
                                status,
                                "text/html; charset=utf-8",
                                format!("<html><body><h1>{status}</h1></body></html>\n")
                                    .into_bytes(),
                            ),
                        );
                    }
                    self.html_page(scheme, index, role, full, PageKind::Page(k))
                }
                _ => not_found(),
            },
            ["new", _] if q_none && self.change_at(index, full) == Some(Change::New) => {
                self.html_page(scheme, index, role, full, PageKind::Small)
            }
            ["sm", _]
                if q_none
                    && self.cfg.profiles.sitemaps
                    && index == crate::sitemaps::HOST
                    && crate::sitemaps::sitemap_only_page(full).is_some() =>
            {
                self.html_page(scheme, index, role, full, PageKind::SitemapOnly)
            }
            ["smb", _]
                if q_none
                    && self.cfg.profiles.sitemaps
                    && index == crate::sitemaps::CHAIN_HOST
                    && crate::sitemaps::chain_page(full).is_some() =>
            {
                self.html_page(scheme, index, role, full, PageKind::SitemapOnly)
            }
            ["smx", _]
                if q_none
                    && self.cfg.profiles.sitemaps
                    && index == crate::sitemaps::CROSS_HOST
                    && crate::sitemaps::cross_page(full).is_some() =>
            {
                self.html_page(scheme, index, role, full, PageKind::Small)
            }
            [f] if q_none
                && self.cfg.profiles.sitemaps
                && index == crate::sitemaps::HOST
                && f.starts_with("sitemap") =>
            {
                match crate::sitemaps::file(self, scheme, full) {
                    Some((ctype, body)) => {
                        let mut r = simple(200, ctype, body);
                        self.validators(&mut r, index, full);
                        self.plain_view(role, r)
                    }
                    None => not_found(),
                }
            }
            [f] if q_none && self.cfg.profiles.sitemap_chain && f.starts_with("chain-") => {
                match crate::chain::file(self, scheme, index, full) {
                    Some((ctype, body)) => {
                        let mut r = simple(200, ctype, body);
                        self.validators(&mut r, index, full);
                        self.plain_view(role, r)
                    }
                    None => not_found(),
                }
            }
            [_] if q_none
                && self.cfg.profiles.sitemap_chain
                && crate::chain::is_orphan(self, index, full) =>
            {
                self.html_page(scheme, index, role, full, PageKind::SitemapOnly)
            }
            [t, ""] if q_none && t.starts_with("~u") => match parse_u32(&t[2..]) {
                Some(k) if small(k, SMALL_K) => {
                    self.html_page(scheme, index, role, full, PageKind::Small)
                }
                _ => not_found(),
            },
            ["wiki", name] if q_none => {
                let ok = (0..WIKI_K).any(|k| *name == wiki_segment(k));
                if ok {
                    self.html_page(scheme, index, role, full, PageKind::Small)
                } else {
                    not_found()
                }
            }
            ["q", k] => match (parse_u32(k), query) {
                (Some(k), Some(q)) if small(k, QUERY_K) && q == format!("a={k}&b=two") => {
                    self.html_page(scheme, index, role, full, PageKind::Small)
                }
                _ => not_found(),
            },
            _ if PROBES
                .iter()
                .any(|p| (0..SMALL_K).any(|k| p.path(k) == full)) =>
            {
                self.html_page(scheme, index, role, full, PageKind::Small)
            }
            ["soft404", k] if q_none && parse_u32(k).is_some_and(|k| small(k, SMALL_K)) => {
                self.html_page(scheme, index, role, full, PageKind::Soft404)
            }
            ["m", k] if q_none => match parse_u32(k) {
                Some(k) if small(k, SMALL_K) => self.html_page(
                    scheme,
                    index,
                    role,
                    full,
                    PageKind::Refresh(k.min(n_pages - 1).max(1)),
                ),
                _ => not_found(),
            },
            ["fs", k] if q_none && parse_u32(k).is_some_and(|k| small(k, 2)) => {
                self.html_page(scheme, index, role, full, PageKind::Frameset)
            }
            ["hidden", w, k]
                if q_none
                    && matches!(*w, "comment" | "script" | "style")
                    && parse_u32(k).is_some_and(|k| small(k, SMALL_K)) =>
            {
                self.html_page(scheme, index, role, full, PageKind::Small)
            }
            ["r", code, k] if q_none && matches!(*code, "301" | "302" | "303" | "307" | "308") => {
                match parse_u32(k) {
                    Some(k) if k >= 1 && k < n_pages => {
                        let status: u16 = code.parse().unwrap_or(302);
                        // 301 and 308 use an absolute Location, the others a relative one.
                        let loc = if matches!(status, 301 | 308) {
                            self.url(scheme, index, &format!("/p/{k}"))
                        } else {
                            format!("/p/{k}")
                        };
                        self.redirect(scheme, role, status, loc, &format!("/p/{k}"), index)
                    }
                    _ => not_found(),
                }
            }
            ["r", "chain", n, k] if q_none => match (parse_u32(n), parse_u32(k)) {
                (Some(n), Some(k)) if (1..=5).contains(&n) && k >= 1 && k < n_pages => {
                    let next = if n > 1 {
                        format!("/r/chain/{}/{k}", n - 1)
                    } else {
                        format!("/p/{k}")
                    };
                    self.redirect(scheme, role, 302, next.clone(), &next, index)
                }
                _ => not_found(),
            },
            ["r", "loop", ab] if q_none && matches!(*ab, "a" | "b") => {
                let next = if *ab == "a" { "/r/loop/b" } else { "/r/loop/a" };
                self.redirect(scheme, role, 302, next.to_owned(), next, index)
            }
            ["r", "x", h] if q_none => match parse_u32(h) {
                Some(h) if h < self.cfg.hosts => {
                    self.redirect(scheme, role, 301, self.url(scheme, h, "/"), "/", h)
                }
                _ => not_found(),
            },
            ["e", code, k] if q_none && parse_u32(k).is_some_and(|k| small(k, SMALL_K)) => {
                let status: u16 = match *code {
                    "404" => 404,
                    "410" => 410,
                    "500" => 500,
                    "503" => 503,
                    "429" => 429,
                    _ => return not_found(),
                };
                let mut r = simple(
                    status,
                    "text/html; charset=utf-8",
                    format!("<html><body><h1>error {status}</h1></body></html>\n").into_bytes(),
                );
                match status {
                    503 => r.headers.push(("Retry-After", "3".to_owned())),
                    429 => r.headers.push(("Retry-After", "5".to_owned())),
                    _ => {}
                }
                self.plain_view(role, r)
            }
            ["img", f] if q_none => {
                let (k, ext) = f.split_once('.').unwrap_or((f, ""));
                match (parse_u32(k), ext) {
                    (Some(k), "png" | "jpg" | "gif") if small(k, 4) => {
                        self.resource(role, index, full, ext)
                    }
                    _ => not_found(),
                }
            }
            ["doc", f] if q_none => match f.strip_suffix(".pdf").and_then(parse_u32) {
                Some(k) if small(k, 2) => self.resource(role, index, full, "pdf"),
                _ => not_found(),
            },
            ["s", "site.css"] if q_none => self.resource(role, index, full, "css"),
            ["robots-real.txt"] if q_none => {
                let mut r = simple(
                    200,
                    "text/plain; charset=utf-8",
                    robots::REAL_TXT.as_bytes().to_vec(),
                );
                self.validators(&mut r, index, full);
                self.plain_view(role, r)
            }
            ["robots-cross.txt"] if q_none => {
                let mut r = simple(
                    200,
                    "text/plain; charset=utf-8",
                    robots::CROSS_TXT.as_bytes().to_vec(),
                );
                self.validators(&mut r, index, full);
                self.plain_view(role, r)
            }
            _ => not_found(),
        }
    }

    #[allow(clippy::too_many_arguments, reason = "internal helper")]
    fn redirect(
        &self,
        scheme: Scheme,
        role: HostRole,
        status: u16,
        location: String,
        to_path: &str,
        to_host: u32,
    ) -> PageView {
        let mut r = simple(
            status,
            "text/html; charset=utf-8",
            format!(
                "<html><body><a href=\"{}\">moved</a></body></html>\n",
                html::escape(&location)
            )
            .into_bytes(),
        );
        r.headers.push(("Location", location));
        let mut v = self.plain_view(role, r);
        v.redirect_to = Some(self.url(scheme, to_host, to_path));
        v
    }

    fn resource(&self, role: HostRole, index: u32, full: &str, ext: &str) -> PageView {
        let mut rng = self.page_rng(index, full);
        let (ctype, mut body): (&str, Vec<u8>) = match ext {
            "png" => (
                "image/png",
                b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR".to_vec(),
            ),
            "jpg" => ("image/jpeg", b"\xFF\xD8\xFF\xE0\x00\x10JFIF\x00".to_vec()),
            "gif" => ("image/gif", b"GIF89a\x01\x00\x01\x00".to_vec()),
            "pdf" => ("application/pdf", b"%PDF-1.4\n%\xE2\xE3\xCF\xD3\n".to_vec()),
            _ => (
                "text/css; charset=utf-8",
                b"body { font-family: serif; }\n".to_vec(),
            ),
        };
        if ext != "css" {
            let n = rng.range(200, 2_000);
            body.extend((0..n).map(|_| rng.next_u64() as u8));
        }
        let mut r = simple(200, ctype, body);
        self.validators(&mut r, index, full);
        self.plain_view(role, r)
    }

    fn html_page(
        &self,
        scheme: Scheme,
        index: u32,
        role: HostRole,
        full: &str,
        kind: PageKind,
    ) -> PageView {
        let mut prng = self.page_rng(index, full);
        let fixed = self.cfg.fixed_size;
        let charset =
            if !fixed && matches!(kind, PageKind::Page(_) | PageKind::Small) && prng.chance(20) {
                Charset::Windows1252
            } else {
                Charset::Utf8
            };
        let label = match (charset, prng.below(3)) {
            (Charset::Utf8, 0) => CharsetLabel::Header("utf-8"),
            (Charset::Utf8, _) => CharsetLabel::Both("utf-8"),
            (Charset::Windows1252, 0) => CharsetLabel::Header("windows-1252"),
            (Charset::Windows1252, 1) => CharsetLabel::Meta("iso-8859-1"),
            (Charset::Windows1252, _) => CharsetLabel::Both("windows-1252"),
        };
        let page_dir = match full
            .split('?')
            .next()
            .and_then(|p| p.rfind('/').map(|i| &p[..=i]))
        {
            Some(d) => d.to_owned(),
            None => "/".to_owned(),
        };
        let with_base = !fixed && matches!(kind, PageKind::Page(_)) && prng.chance(10);
        let base_dir = if with_base {
            format!("/base/d{}/", prng.below(5))
        } else {
            page_dir
        };
        let (meta_robots, x_robots) = if !fixed && matches!(kind, PageKind::Page(_)) {
            let m = match prng.below(100) {
                0..=3 => Some("noindex"),
                4..=7 => Some("nofollow"),
                8..=10 => Some("none"),
                11..=12 => Some("NOINDEX, NOFOLLOW"),
                _ => None,
            };
            let x = match prng.below(100) {
                0..=2 => Some("noindex"),
                3..=5 => Some("nofollow"),
                _ => None,
            };
            (m, x)
        } else {
            (None, None)
        };
        let framing = if fixed || !matches!(kind, PageKind::Page(_)) {
            Framing::ContentLength
        } else {
            match prng.below(10) {
                0..=6 => Framing::ContentLength,
                7..=8 => Framing::Chunked,
                _ => Framing::Close,
            }
        };
        let target_bytes = match kind {
            PageKind::Root | PageKind::Page(_) => prng.range(
                u64::from(self.cfg.page_bytes.min),
                u64::from(self.cfg.page_bytes.max),
            ) as usize,
            _ => prng.range(800, 2_500) as usize,
        };

        let mut b = self.builder(scheme, index, full, charset, &base_dir);
        let title = match kind {
            PageKind::Soft404 => "Page not found".to_owned(),
            _ => format!("{} {}", self.host_name(index), full),
        };
        b.html
            .push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n");
        if let Some(l) = label.meta() {
            b.html.push_str(&format!("<meta charset=\"{l}\">\n"));
        }
        b.html
            .push_str(&format!("<title>{}</title>\n", html::escape(&title)));
        if with_base {
            if prng.chance(50) {
                b.html.push_str(&format!("<base href=\"{}\">\n", base_dir));
            } else {
                b.html.push_str(&format!(
                    "<base href=\"{}{}\">\n",
                    b.here.canonical(),
                    base_dir
                ));
            }
        }
        if let Some(m) = meta_robots {
            b.html
                .push_str(&format!("<meta name=\"robots\" content=\"{m}\">\n"));
        }
        let n_pages = self.page_count(index);
        if let PageKind::Refresh(k) = kind {
            b.link(
                Element::MetaRefresh,
                index,
                &format!("/p/{k}"),
                LinkKind::Refresh,
                "",
            );
        }
        if b.quirks && matches!(kind, PageKind::Root | PageKind::Page(_)) {
            b.link(Element::Link, index, "/s/site.css", LinkKind::Resource, "");
            if kind != PageKind::Root || prng.chance(50) {
                let j = prng.range(1, u64::from(n_pages - 1)) as u32;
                b.link(
                    Element::Link,
                    index,
                    &format!("/p/{j}"),
                    LinkKind::Follow,
                    "",
                );
            }
        }
        b.html.push_str("</head>\n");
        if kind == PageKind::Frameset {
            b.html.push_str("<frameset cols=\"50%,50%\">\n");
            for _ in 0..2 {
                let j = prng.range(1, u64::from(n_pages - 1)) as u32;
                b.link(
                    Element::Frame,
                    index,
                    &format!("/p/{j}"),
                    LinkKind::Follow,
                    "f",
                );
            }
            b.html.push_str("</frameset>\n</html>\n");
            return self.finish(
                b,
                index,
                role,
                full,
                label,
                framing,
                meta_robots,
                x_robots,
                None,
            );
        }
        b.html
            .push_str(&format!("<body>\n<h1>{}</h1>\n", html::escape(&title)));
        if kind == PageKind::Soft404 {
            b.html
                .push_str("<p>Sorry, the page you asked for does not exist.</p>\n");
        }
        if let Some(c @ (Change::Changed | Change::New)) = self.change_at(index, full) {
            b.html.push_str(&format!(
                "<p class=\"rev\">revision {} ({})</p>\n",
                self.cfg.generation,
                c.word()
            ));
        }

        // Plan links.
        if let (Some(mesh), PageKind::Root | PageKind::Page(_)) = (self.cfg.mesh, kind) {
            let page = WidePage {
                index,
                role,
                full,
                label,
                framing,
                meta_robots,
                x_robots,
            };
            return self.mesh_page(b, &mut prng, mesh, kind, target_bytes, &page);
        }
        if let (Some(fanout), PageKind::Root | PageKind::Page(_)) = (self.cfg.fanout, kind) {
            let page = WidePage {
                index,
                role,
                full,
                label,
                framing,
                meta_robots,
                x_robots,
            };
            return self.wide_page(b, &mut prng, fanout, target_bytes, &page);
        }
        let degree = match kind {
            PageKind::Root | PageKind::Page(_) => prng.range(
                u64::from(self.cfg.out_degree.min),
                u64::from(self.cfg.out_degree.max),
            ) as usize,
            PageKind::SitemapOnly => 1,
            _ => 4,
        };
        let mut plan: Vec<Planned> = Vec::with_capacity(degree + 32);
        match kind {
            PageKind::Root => {
                for j in 1..n_pages.min(degree as u32 / 2 + 1) {
                    plan.push(Planned::Same(
                        format!("/p/{j}"),
                        Element::A,
                        LinkKind::Follow,
                    ));
                }
                if b.quirks {
                    for s in 0..SPECIALS {
                        plan.push(Planned::Special(s));
                    }
                }
                for k in 0..self.new_page_count(index) {
                    plan.push(Planned::Same(
                        format!("/new/{k}"),
                        Element::A,
                        LinkKind::Follow,
                    ));
                }
                if index == 0 {
                    for i in 1..hosts::min_hosts(self.cfg.profiles) {
                        if self.role(i) != HostRole::Normal {
                            plan.push(Planned::Cross(i, "/".to_owned()));
                        }
                    }
                }
            }
            PageKind::Page(k) => {
                if k + 1 < n_pages {
                    plan.push(Planned::Same(
                        format!("/p/{}", k + 1),
                        Element::A,
                        LinkKind::Follow,
                    ));
                }
                plan.push(Planned::Same("/".to_owned(), Element::A, LinkKind::Follow));
            }
            _ => {
                plan.push(Planned::Same("/".to_owned(), Element::A, LinkKind::Follow));
            }
        }
        // A page new in this generation links only to pages generation 0 has (no
        // special URLs): its own URL is then the only one it adds to the web, and the
        // changes file's `new` lines are every URL a re-crawl finds new.
        let new_page = kind == PageKind::Small && self.change_at(index, full) == Some(Change::New);
        while plan.len() < degree {
            let roll = prng.below(100);
            if roll < 55 || !b.quirks || (new_page && roll >= 67) {
                let j = prng.range(1, u64::from(n_pages - 1)) as u32;
                plan.push(Planned::Same(
                    format!("/p/{j}"),
                    Element::A,
                    LinkKind::Follow,
                ));
            } else if roll < 67 {
                let h = prng.below(u64::from(self.cfg.hosts)) as u32;
                let h = if self.role(h) == HostRole::Normal {
                    h
                } else {
                    0
                };
                let path = if prng.chance(50) {
                    "/".to_owned()
                } else {
                    format!("/p/{}", prng.range(1, u64::from(self.page_count(h) - 1)))
                };
                plan.push(Planned::Cross(h, path));
            } else {
                plan.push(Planned::Special(prng.below(SPECIALS as u64) as usize));
            }
        }

        // Write links spread through filler text.
        let per_link = target_bytes.saturating_sub(1_000) / (plan.len() + 1);
        for p in plan {
            let words = per_link.min(2_000);
            if words > 40 {
                html::filler(&mut b.html, &mut prng, words.saturating_sub(120), charset);
            }
            match p {
                Planned::Same(path, el, kind) => b.link(el, index, &path, kind, "next"),
                Planned::Cross(h, path) => {
                    b.link(Element::A, h, &path, LinkKind::Follow, "elsewhere")
                }
                Planned::Special(s) => self.special(&mut b, &mut prng, s, n_pages),
            }
        }
        let closing = "</body>\n</html>\n";
        let have = encoded_len(&b.html, charset);
        if have + closing.len() < target_bytes {
            let want = target_bytes - have - closing.len();
            if want > 200 {
                html::filler(&mut b.html, &mut prng, want - 150, charset);
            }
            let have = encoded_len(&b.html, charset);
            if have + closing.len() < target_bytes {
                let pad = target_bytes - have - closing.len();
                b.html.extend(std::iter::repeat_n(' ', pad));
            }
        }
        b.html.push_str(closing);
        self.finish(
            b,
            index,
            role,
            full,
            label,
            framing,
            meta_robots,
            x_robots,
            None,
        )
    }

    /// The body of a wide-mode page (see [`SiteConfig::fanout`]): `fanout` absolute
    /// links to `/p/j` of random ordinary hosts (a special host's draw becomes host 0),
    /// padded to the page size when that is larger.
    fn wide_page(
        &self,
        mut b: Builder<'_>,
        prng: &mut Rng,
        fanout: u32,
        target_bytes: usize,
        page: &WidePage<'_>,
    ) -> PageView {
        b.html.push_str("<body>\n");
        for _ in 0..fanout {
            let h = prng.below(u64::from(self.cfg.hosts)) as u32;
            let h = if self.role(h) == HostRole::Normal {
                h
            } else {
                0
            };
            let j = prng.range(1, u64::from(self.page_count(h) - 1));
            b.link(Element::A, h, &format!("/p/{j}"), LinkKind::Follow, "w");
        }
        let closing = "</body>\n</html>\n";
        let have = encoded_len(&b.html, b.charset);
        if have + closing.len() < target_bytes {
            let pad = target_bytes - have - closing.len();
            b.html.extend(std::iter::repeat_n(' ', pad));
        }
        b.html.push_str(closing);
        self.finish(
            b,
            page.index,
            page.role,
            page.full,
            page.label,
            page.framing,
            page.meta_robots,
            page.x_robots,
            None,
        )
    }

    /// The body of a mesh-mode page (see [`crate::config::Mesh`]): a link to every other
    /// page of its host, then `cross_links` absolute links to other hosts' roots (a
    /// `dead_percent` share of them to dead names), text spread between them, padded
    /// to the page size.
    fn mesh_page(
        &self,
        mut b: Builder<'_>,
        prng: &mut Rng,
        mesh: crate::config::Mesh,
        kind: PageKind,
        target_bytes: usize,
        page: &WidePage<'_>,
    ) -> PageView {
        let index = page.index;
        let n_pages = self.page_count(index);
        let mut same: Vec<String> = Vec::with_capacity(n_pages as usize);
        if kind != PageKind::Root {
            same.push("/".to_owned());
        }
        for j in 1..n_pages {
            if kind != PageKind::Page(j) {
                same.push(format!("/p/{j}"));
            }
        }
        let per_link =
            target_bytes.saturating_sub(1_000) / (same.len() + mesh.cross_links as usize + 1);
        let text = |b: &mut Builder<'_>, prng: &mut Rng| {
            if per_link > 160 {
                html::filler(&mut b.html, prng, per_link - 120, Charset::Utf8);
            }
        };
        for path in same {
            text(&mut b, prng);
            b.link(Element::A, index, &path, LinkKind::Follow, "here");
        }
        for _ in 0..mesh.cross_links {
            text(&mut b, prng);
            if prng.below(100) < u64::from(mesh.dead_percent) {
                let k = prng.below(u64::from(self.cfg.hosts)) as u32;
                let url = format!("http://{}:{}/", self.dead_name(k), self.cfg.http_port);
                b.html.push_str(&format!("<a href=\"{url}\">gone</a>\n"));
                b.links.push(Link {
                    element: Element::A,
                    href: url.clone(),
                    url: Some(url),
                    kind: LinkKind::Follow,
                });
                continue;
            }
            let mut h = prng.below(u64::from(self.cfg.hosts)) as u32;
            if h == index && self.cfg.hosts > 1 {
                h = (h + 1) % self.cfg.hosts;
            }
            b.link(Element::A, h, "/", LinkKind::Follow, "elsewhere");
        }
        let closing = "</body>\n</html>\n";
        let have = encoded_len(&b.html, b.charset);
        if have + closing.len() < target_bytes {
            let want = target_bytes - have - closing.len();
            if want > 200 {
                html::filler(&mut b.html, prng, want - 150, b.charset);
            }
            let have = encoded_len(&b.html, b.charset);
            if have + closing.len() < target_bytes {
                let pad = target_bytes - have - closing.len();
                b.html.extend(std::iter::repeat_n(' ', pad));
            }
        }
        b.html.push_str(closing);
        self.finish(
            b,
            page.index,
            page.role,
            page.full,
            page.label,
            page.framing,
            page.meta_robots,
            page.x_robots,
            None,
        )
    }

    fn special(&self, b: &mut Builder<'_>, rng: &mut Rng, s: usize, n_pages: u32) {
        let index = b.host;
        let j = rng.range(1, u64::from(n_pages - 1)) as u32;
        let k = rng.below(u64::from(SMALL_K)) as u32;
        match s {
            0 => {
                let code = *rng.pick(&[301, 302, 303, 307, 308]).unwrap_or(&301);
                b.link(
                    Element::A,
                    index,
                    &format!("/r/{code}/{j}"),
                    LinkKind::Follow,
                    "moved",
                );
            }
            1 => b.link(
                Element::A,
                index,
                &format!("/r/chain/{}/{j}", rng.range(2, 4)),
                LinkKind::Follow,
                "chain",
            ),
            2 => b.link(Element::A, index, "/r/loop/a", LinkKind::Follow, "loop"),
            3 => {
                let h = rng.below(u64::from(self.cfg.hosts)) as u32;
                let h = if self.role(h) == HostRole::Normal {
                    h
                } else {
                    0
                };
                b.link(
                    Element::A,
                    index,
                    &format!("/r/x/{h}"),
                    LinkKind::Follow,
                    "away",
                );
            }
            4 => {
                let code = *rng
                    .pick(&["404", "410", "500", "503", "429"])
                    .unwrap_or(&"404");
                b.link(
                    Element::A,
                    index,
                    &format!("/e/{code}/{k}"),
                    LinkKind::Follow,
                    "error",
                );
            }
            5 => b.link(
                Element::A,
                index,
                &format!("/soft404/{k}"),
                LinkKind::Follow,
                "gone",
            ),
            6 => b.link(
                Element::A,
                index,
                &format!("/m/{k}"),
                LinkKind::Follow,
                "refresh",
            ),
            7 => b.link(
                Element::A,
                index,
                &format!("/~u{k}/"),
                LinkKind::Follow,
                "tilde",
            ),
            8 => {
                let w = rng.below(u64::from(WIKI_K)) as u32;
                b.link(
                    Element::A,
                    index,
                    &format!("/wiki/{}", wiki_segment(w)),
                    LinkKind::Follow,
                    "wiki",
                );
            }
            9 => {
                let q = rng.below(u64::from(QUERY_K)) as u32;
                b.link(
                    Element::A,
                    index,
                    &format!("/q/{q}?a={q}&b=two"),
                    LinkKind::Follow,
                    "query",
                );
            }
            10 => {
                let p = *rng.pick(&PROBES).unwrap_or(&Probe::Private);
                b.link(Element::A, index, &p.path(k), LinkKind::Follow, "probe");
            }
            11 => b.link(
                Element::A,
                index,
                &format!("/fs/{}", k % 2),
                LinkKind::Follow,
                "frames",
            ),
            12 => b.link(
                Element::IFrame,
                index,
                &format!("/p/{j}"),
                LinkKind::Follow,
                "frame",
            ),
            13 => b.link(
                Element::Area,
                index,
                &format!("/p/{j}"),
                LinkKind::Follow,
                "area",
            ),
            14 => {
                let ext = *rng.pick(&["png", "jpg", "gif"]).unwrap_or(&"png");
                b.link(
                    Element::Img,
                    index,
                    &format!("/img/{}.{ext}", rng.below(4)),
                    LinkKind::Resource,
                    "pic",
                );
            }
            15 => b.link(
                Element::A,
                index,
                &format!("/doc/{}.pdf", k % 2),
                LinkKind::Resource,
                "pdf",
            ),
            16 => b.link(
                Element::A,
                index,
                &format!("/p/{j}"),
                LinkKind::NoFollowRel,
                "sponsored",
            ),
            17 => b.non_http(false),
            18 => b.non_http(true),
            19 => b.hidden(HiddenIn::Comment, k),
            20 => b.hidden(HiddenIn::Script, k),
            _ => b.hidden(HiddenIn::Style, k),
        }
    }

    #[allow(clippy::too_many_arguments, reason = "internal helper")]
    fn finish(
        &self,
        b: Builder<'_>,
        index: u32,
        role: HostRole,
        full: &str,
        label: CharsetLabel,
        framing: Framing,
        meta_robots: Option<&str>,
        x_robots: Option<&str>,
        trap_depth: Option<u32>,
    ) -> PageView {
        let body = html::encode_text(&b.html, b.charset);
        let ctype = match label.header() {
            Some(l) => format!("text/html; charset={l}"),
            None => "text/html".to_owned(),
        };
        let mut r = simple(200, "", body);
        r.headers.clear();
        r.headers.push(("Content-Type", ctype));
        r.framing = framing;
        self.validators(&mut r, index, full);
        if let Some(x) = x_robots {
            r.headers.push(("X-Robots-Tag", x.to_owned()));
        }
        PageView {
            response: r,
            links: b.links,
            meta_robots: meta_robots.map(str::to_owned),
            x_robots_tag: x_robots.map(str::to_owned),
            charset: Some(b.charset),
            role,
            trap_depth,
            redirect_to: None,
        }
    }

    fn trap_page(
        &self,
        scheme: Scheme,
        index: u32,
        kind: TrapKind,
        path: &str,
        query: Option<&str>,
    ) -> PageView {
        let role = HostRole::Trap(kind);
        let not_found = || {
            self.plain_view(
                role,
                simple(
                    404,
                    "text/html; charset=utf-8",
                    b"<html><body><h1>404 Not Found</h1></body></html>\n".to_vec(),
                ),
            )
        };
        let full = match query {
            Some(q) => format!("{path}?{q}"),
            None => path.to_owned(),
        };
        let mut b = self.builder(scheme, index, &full, Charset::Utf8, "/");
        b.quirks = false;
        let mut links: Vec<String> = Vec::new();
        let depth: u32;
        let mut key = full.clone();
        let mut heading: Option<String> = None;
        if path == "/" && query.is_none() {
            depth = 0;
            links.push(match kind {
                TrapKind::Calendar => "/cal/2031/07".to_owned(),
                TrapKind::SymlinkLoop => "/d/".to_owned(),
                TrapKind::PeriodTwo => "/a/".to_owned(),
                TrapKind::SessionIds => format!("/sess/0?sid={}", sid(self.cfg.seed, 1, 0)),
                TrapKind::Duplicates => "/dup/0".to_owned(),
                TrapKind::GrowingUrls => format!("/grow/{}/", grow_segment(self.cfg.seed, 0)),
                TrapKind::MillionPages => "/p/0".to_owned(),
            });
            if kind == TrapKind::MillionPages {
                links.extend((1..10).map(|k| format!("/p/{k}")));
            }
            if kind == TrapKind::SymlinkLoop {
                links.push(LISTING_ROOT.to_owned());
            }
        } else {
            match (kind, query) {
                (TrapKind::Calendar, None) => {
                    let segs: Vec<&str> = path.split('/').collect();
                    let (Some(y), Some(m)) = (
                        segs.get(2).and_then(|y| y.parse::<u32>().ok()),
                        segs.get(3).and_then(|m| m.parse::<u32>().ok()),
                    ) else {
                        return not_found();
                    };
                    if segs.len() != 4
                        || segs.get(1) != Some(&"cal")
                        || !(1..=12).contains(&m)
                        || !(2031..=9999).contains(&y)
                        || segs.get(2).map(|s| s.len()) != Some(4)
                        || segs.get(3).map(|s| s.len()) != Some(2)
                        || (y == 2031 && m < 7)
                    {
                        return not_found();
                    }
                    depth = (y - 2031) * 12 + m - 7 + 1;
                    // A real calendar names its month; without it, the same month of
                    // two years would be the same page to a fingerprint that abstracts
                    // the page's own directory (`/cal/2032/`).
                    heading = Some(format!("{y}-{m:02}"));
                    let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
                    if ny <= 9999 {
                        links.push(format!("/cal/{ny}/{nm:02}"));
                    }
                    key = "/cal".to_owned();
                }
                (TrapKind::SymlinkLoop, None) if path.starts_with(LISTING_ROOT) => {
                    return self.listing_page(scheme, index, path);
                }
                (TrapKind::SymlinkLoop, None) => {
                    let Some(rest) = path.strip_prefix("/d/") else {
                        return not_found();
                    };
                    if !rest.is_empty()
                        && (!rest.ends_with("sub/")
                            || rest
                                .split('/')
                                .filter(|s| !s.is_empty())
                                .any(|s| s != "sub"))
                    {
                        return not_found();
                    }
                    depth = rest.matches("sub/").count() as u32 + 1;
                    links.push(format!("{path}sub/"));
                    key = "/d/".to_owned();
                }
                (TrapKind::PeriodTwo, None) => {
                    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
                    let ok = path.ends_with('/')
                        && segs
                            .iter()
                            .enumerate()
                            .all(|(i, s)| *s == if i % 2 == 0 { "a" } else { "b" });
                    if !ok {
                        return not_found();
                    }
                    depth = segs.len() as u32;
                    let next = if segs.len() % 2 == 1 { "b" } else { "a" };
                    links.push(format!("{path}{next}/"));
                    key = "/a/".to_owned();
                }
                (TrapKind::SessionIds, q) => {
                    let Some(k) = path
                        .strip_prefix("/sess/")
                        .and_then(parse_u32)
                        .filter(|k| *k < SESSION_PAGES)
                    else {
                        return not_found();
                    };
                    let d = q
                        .and_then(|q| q.strip_prefix("sid=d"))
                        .and_then(|s| s.split_once('x'))
                        .and_then(|(d, _)| parse_u32(d))
                        .unwrap_or(0);
                    depth = d;
                    for step in [1, 7] {
                        let nk = (k + step) % SESSION_PAGES;
                        links.push(format!(
                            "/sess/{nk}?sid={}",
                            sid(self.cfg.seed ^ u64::from(k), d + 1, nk)
                        ));
                    }
                    key = format!("/sess/{k}");
                }
                (TrapKind::Duplicates, q) => {
                    let Some(v) = path
                        .strip_prefix("/dup/")
                        .and_then(parse_u32)
                        .filter(|v| *v < DUP_VARIANTS)
                    else {
                        return not_found();
                    };
                    if let Some(q) = q {
                        if q.strip_prefix("ref=")
                            .and_then(parse_u32)
                            .is_none_or(|r| r >= 5)
                        {
                            return not_found();
                        }
                    }
                    let _ = v;
                    depth = 1 + u32::from(path != "/dup/0" || query.is_some());
                    links.extend((0..DUP_VARIANTS).map(|v| format!("/dup/{v}")));
                    links.extend((0..5).map(|r| format!("/dup/0?ref={r}")));
                    key = "/dup".to_owned();
                }
                (TrapKind::GrowingUrls, None) => {
                    let Some(rest) = path.strip_prefix("/grow/") else {
                        return not_found();
                    };
                    let segs: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
                    let ok = rest.ends_with('/')
                        && !segs.is_empty()
                        && segs
                            .iter()
                            .enumerate()
                            .all(|(i, s)| *s == grow_segment(self.cfg.seed, i as u32));
                    if !ok {
                        return not_found();
                    }
                    depth = segs.len() as u32;
                    links.push(format!("{path}{}/", grow_segment(self.cfg.seed, depth)));
                    key = "/grow".to_owned();
                }
                (TrapKind::MillionPages, None) => {
                    let Some(k) = path
                        .strip_prefix("/p/")
                        .and_then(parse_u32)
                        .filter(|k| *k < MILLION)
                    else {
                        return not_found();
                    };
                    depth = k + 1;
                    let mut r = self.page_rng(index, path);
                    links.extend(
                        (1..=5)
                            .map(|s| k + s)
                            .filter(|j| *j < MILLION)
                            .map(|j| format!("/p/{j}")),
                    );
                    links.extend((0..5).map(|_| format!("/p/{}", r.below(u64::from(MILLION)))));
                    key = path.to_owned();
                }
                _ => return not_found(),
            }
        }
        // Same body for every URL of a duplicate/session family: text keyed by `key`.
        let mut rng = self.page_rng(index, &key);
        b.html.push_str(&format!("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{}</title></head>\n<body>\n", html::escape(&key)));
        if let Some(h) = &heading {
            b.html.push_str(&format!("<h1>{h}</h1>\n"));
        }
        html::filler(&mut b.html, &mut rng, 1_500, Charset::Utf8);
        for l in &links {
            b.link(Element::A, index, l, LinkKind::Follow, "next");
        }
        b.html.push_str("</body></html>\n");
        self.finish(
            b,
            index,
            role,
            &key,
            CharsetLabel::Both("utf-8"),
            Framing::ContentLength,
            None,
            None,
            Some(depth),
        )
    }
}

/// Where the self-listing directory loop of the symlink-loop host starts.
const LISTING_ROOT: &str = "/ls/";

/// The names under which the listed directory contains itself (two symlinks to `.`).
const LISTING_SELF_LINKS: [&str; 2] = ["sub", "alt"];

impl Site {
    /// The self-listing directory loop: `/ls/` and every `/ls/{sub,alt}/.../` serve an
    /// Apache-style listing of the same directory (`Index of /ls/sub`, a parent link,
    /// relative `index.html`, `sub/`, `alt/`), and every `index.html` the same static
    /// page. Only the listing's naming of its own location changes between levels, so
    /// with two self-links the URL filters alone (a segment at most 3 times) allow
    /// 134 fetches; trawl's fingerprint, which abstracts the page's own
    /// directory, stops it after the first level below `/ls/` (7 fetches).
    fn listing_page(&self, scheme: Scheme, index: u32, path: &str) -> PageView {
        let role = HostRole::Trap(TrapKind::SymlinkLoop);
        let (dir, file) = match path.rfind('/') {
            Some(i) => (&path[..=i], &path[i + 1..]),
            None => (path, ""),
        };
        let rest = dir.strip_prefix(LISTING_ROOT).unwrap_or("x");
        let valid = rest
            .split('/')
            .filter(|s| !s.is_empty())
            .all(|s| LISTING_SELF_LINKS.contains(&s))
            && (file.is_empty() || file == "index.html");
        if !valid {
            return self.plain_view(
                role,
                simple(
                    404,
                    "text/html; charset=utf-8",
                    b"<html><body><h1>404 Not Found</h1></body></html>\n".to_vec(),
                ),
            );
        }
        let depth = rest.matches('/').count() as u32 + 1;
        let mut b = self.builder(scheme, index, LISTING_ROOT, Charset::Utf8, dir);
        b.quirks = false;
        if file == "index.html" {
            // The same file at every level: byte-identical, links relative.
            b.html.push_str(
                "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>About this \
                 tree</title></head>\n<body>\n<p>Mirror notes.</p>\n",
            );
            for name in LISTING_SELF_LINKS {
                b.relative_link(&format!("{name}/"), &format!("{dir}{name}/"), name);
            }
        } else {
            let bare = dir.trim_end_matches('/');
            let parent = &bare[..=bare.rfind('/').unwrap_or(0)];
            b.html.push_str(&format!(
                "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Index of \
                 {bare}</title></head>\n<body>\n<h1>Index of {dir}</h1>\n"
            ));
            b.relative_link(parent, parent, "Parent Directory");
            b.relative_link("index.html", &format!("{dir}index.html"), "index.html");
            for name in LISTING_SELF_LINKS {
                b.relative_link(
                    &format!("{name}/"),
                    &format!("{dir}{name}/"),
                    &format!("{name}/"),
                );
            }
        }
        b.html.push_str("</body></html>\n");
        self.finish(
            b,
            index,
            role,
            path,
            CharsetLabel::Both("utf-8"),
            Framing::ContentLength,
            None,
            None,
            Some(depth),
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PageKind {
    Root,
    Page(u32),
    Small,
    /// A page only sitemaps list: it links only `/`, so that what a crawler reaches
    /// through it is exactly itself (the manifest's `S` lines).
    SitemapOnly,
    Soft404,
    Refresh(u32),
    Frameset,
}

enum Planned {
    Same(String, Element, LinkKind),
    Cross(u32, String),
    Special(usize),
}

const SPECIALS: usize = 22;

fn encoded_len(s: &str, charset: Charset) -> usize {
    match charset {
        Charset::Utf8 => s.len(),
        Charset::Windows1252 => s.chars().count(),
    }
}

fn wiki_segment(k: u32) -> String {
    let name = WIKI[(k as usize) % WIKI.len()];
    format!("{}_{k}", html::pct_utf8(name))
}

fn sid(seed: u64, depth: u32, k: u32) -> String {
    format!(
        "d{depth}x{:08x}",
        hash_words(&[seed, u64::from(depth), u64::from(k)]) as u32
    )
}

fn grow_segment(seed: u64, i: u32) -> String {
    let h = hash_words(&[seed, u64::from(i), 0x6E0]);
    format!("g{i:03}-{h:016x}{:016x}{:016x}", mix(h, 1), mix(h, 2))
}

fn mix(h: u64, n: u64) -> u64 {
    crate::hash::mix64(h ^ n)
}

fn simple(status: u16, ctype: &str, body: Vec<u8>) -> Response {
    Response {
        status,
        headers: vec![("Content-Type", ctype.to_owned())],
        body,
        framing: Framing::ContentLength,
        hostile: None,
    }
}
