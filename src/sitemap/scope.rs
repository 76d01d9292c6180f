//! The sitemaps.org host rule: which URLs a sitemap may list.
//!
//! "A Sitemap file located at http://example.com/catalog/sitemap.xml can include any
//! URLs starting with http://example.com/catalog/ but can not include URLs starting
//! with http://example.com/images/" — same scheme, host and port, and a path under the
//! sitemap's directory. Exception (cross submission): the robots.txt of the URL's host
//! names the sitemap in a `Sitemap:` line. trawl extends that permission from an index
//! named in robots.txt to the sitemaps the index lists, since site owners name their
//! index, not every file under it (`docs/sitemaps.md`).

use url::Url;

/// Why a listed URL is admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Same origin, path under the sitemap's directory.
    UnderLocation,
    /// The robots.txt of the URL's origin named this sitemap (or an index above it).
    RobotsPermission,
}

/// Why a listed URL is refused (log it with its sitemap).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Another scheme, host or port, and that origin's robots.txt did not name the
    /// sitemap.
    #[error("sitemap lists a URL of another origin without robots.txt permission")]
    OtherOrigin,
    /// Same origin, but outside the sitemap's directory.
    #[error("sitemap lists a URL outside its own directory")]
    OutsidePath,
    /// Not an http(s) URL.
    #[error("sitemap lists a URL that is not http or https")]
    NotHttp,
}

/// Judge `url`, listed by the sitemap at `sitemap`. `robots_origins` are the ASCII
/// serializations (`http://host:port`, as [`url::Origin::ascii_serialization`] gives)
/// of the origins whose robots.txt named this sitemap or an index that led to it.
///
/// # Errors
/// The [`Refusal`] when the URL may not be taken from this sitemap.
pub fn admit(sitemap: &Url, url: &Url, robots_origins: &[String]) -> Result<Admission, Refusal> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Refusal::NotHttp);
    }
    let origin = url.origin();
    if origin == sitemap.origin() {
        let path = sitemap.path();
        let dir = path
            .get(..path.rfind('/').map_or(0, |i| i + 1))
            .unwrap_or("/");
        if url.path().starts_with(dir) {
            return Ok(Admission::UnderLocation);
        }
    }
    let serial = origin.ascii_serialization();
    if robots_origins.contains(&serial) {
        return Ok(Admission::RobotsPermission);
    }
    if origin == sitemap.origin() {
        Err(Refusal::OutsidePath)
    } else {
        Err(Refusal::OtherOrigin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn the_sitemaps_org_examples() {
        let map = u("http://example.com/catalog/sitemap.xml");
        let none: [String; 0] = [];
        for (listed, verdict) in [
            (
                "http://example.com/catalog/show?item=1",
                Ok(Admission::UnderLocation),
            ),
            ("http://example.com/catalog/", Ok(Admission::UnderLocation)),
            (
                "http://example.com:80/catalog/a",
                Ok(Admission::UnderLocation),
            ),
            ("http://example.com/images/x.png", Err(Refusal::OutsidePath)),
            ("http://example.com/catalogue/x", Err(Refusal::OutsidePath)),
            ("https://example.com/catalog/x", Err(Refusal::OtherOrigin)),
            (
                "http://example.com:8080/catalog/x",
                Err(Refusal::OtherOrigin),
            ),
            (
                "http://www.example.com/catalog/x",
                Err(Refusal::OtherOrigin),
            ),
            ("ftp://example.com/catalog/x", Err(Refusal::NotHttp)),
        ] {
            assert_eq!(admit(&map, &u(listed), &none), verdict, "{listed}");
        }
        // A sitemap at the root may list the whole origin.
        let root = u("http://example.com/sitemap.xml");
        assert_eq!(
            admit(&root, &u("http://example.com/images/x.png"), &none),
            Ok(Admission::UnderLocation)
        );
    }

    #[test]
    fn robots_txt_permission_opens_its_own_origin_only() {
        let map = u("http://a.example/maps/sitemap.xml");
        let b_named_it = ["http://b.example".to_owned()];
        assert_eq!(
            admit(&map, &u("http://b.example/p/1"), &b_named_it),
            Ok(Admission::RobotsPermission)
        );
        assert_eq!(
            admit(&map, &u("http://c.example/p/1"), &b_named_it),
            Err(Refusal::OtherOrigin)
        );
        // The sitemap's own host naming it lifts the directory restriction.
        let a_named_it = ["http://a.example".to_owned()];
        assert_eq!(
            admit(&map, &u("http://a.example/elsewhere"), &a_named_it),
            Ok(Admission::RobotsPermission)
        );
        // Ports are part of the origin.
        let port = ["http://b.example:8080".to_owned()];
        assert_eq!(
            admit(&map, &u("http://b.example:8080/x"), &port),
            Ok(Admission::RobotsPermission)
        );
        assert_eq!(
            admit(&map, &u("http://b.example/x"), &port),
            Err(Refusal::OtherOrigin)
        );
    }
}
