//! What the generator answers: a response (status, headers, body, framing), the page
//! view the manifest walker reads, and the request conditions that change the answer.

use crate::hosts::{HostRole, HostileKind};
use crate::html::{Charset, Link};

use super::Site;

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

pub(super) fn simple(status: u16, ctype: &str, body: Vec<u8>) -> Response {
    Response {
        status,
        headers: vec![("Content-Type", ctype.to_owned())],
        body,
        framing: Framing::ContentLength,
        hostile: None,
    }
}

impl Site {
    pub(super) fn plain_view(&self, role: HostRole, response: Response) -> PageView {
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
}
