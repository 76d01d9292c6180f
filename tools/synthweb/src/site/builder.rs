//! The HTML page builder: writes a page's markup and records each link as written,
//! then finishes it into a response.

use crate::hash::{hash_bytes, hash_words, Rng};
use crate::hosts::HostRole;
use crate::html::{
    self, Alias, Charset, CharsetLabel, Element, HiddenIn, Link, LinkKind, Origin, Spelling,
};

use super::response::{simple, Framing, PageView, Scheme};
use super::Site;

pub(super) struct Builder<'a> {
    site: &'a Site,
    pub(super) scheme: Scheme,
    pub(super) host: u32,
    pub(super) here: Origin,
    base_dir: String,
    pub(super) charset: Charset,
    pub(super) html: String,
    pub(super) links: Vec<Link>,
    pub(super) rng: Rng,
    pub(super) quirks: bool,
}

impl Builder<'_> {
    /// Write a link and record it.
    pub(super) fn link(
        &mut self,
        element: Element,
        to_host: u32,
        path_q: &str,
        kind: LinkKind,
        text: &str,
    ) {
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
    pub(super) fn relative_link(&mut self, href: &str, path: &str, text: &str) {
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

    pub(super) fn hidden(&mut self, within: HiddenIn, k: u32) {
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

    pub(super) fn non_http(&mut self, mailto: bool) {
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
    pub(super) fn page_rng(&self, index: u32, key: &str) -> Rng {
        Rng::new(hash_bytes(
            hash_words(&[self.cfg.seed, u64::from(index), 0xBA6E]),
            key.as_bytes(),
        ))
    }

    pub(super) fn builder(
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

    #[allow(clippy::too_many_arguments, reason = "internal helper")]
    pub(super) fn finish(
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
}

pub(super) fn encoded_len(s: &str, charset: Charset) -> usize {
    match charset {
        Charset::Utf8 => s.len(),
        Charset::Windows1252 => s.chars().count(),
    }
}
