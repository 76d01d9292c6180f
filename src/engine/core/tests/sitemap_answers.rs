//! Core tests: how a sitemap answer is told from a page (a redirected sitemap, an
//! XHTML page a sitemap lists, a text sitemap whose body was cut), each against
//! made-up answers with their own header fields.

use std::collections::HashMap;

use super::sitemaps::{any_scope, run_answers, urlset, Answer, Trace};
use super::*;

/// A robots.txt `Sitemap:` URL that redirects (http → https, or a moved file)
/// is still a sitemap: its target's entries must be read.
#[test]
fn a_redirected_sitemap_is_still_read() {
    let www = "http://www.a.test/";
    let mut h = harness_with(&[www], any_scope, |_| {});
    let mut now = h.t0;
    let mut fetched: Vec<String> = Vec::new();
    for _ in 0..100 {
        let actions = h.schedule(now);
        for a in &actions {
            match a {
                Action::FetchRobots(r) => {
                    let body =
                        "User-agent: *\nAllow: /\nSitemap: http://www.a.test/old-sitemap.xml\n";
                    h.feed(
                        response(r.id, r.head.url.as_str(), 200, &[], body.as_bytes()),
                        now,
                    );
                }
                Action::Fetch(r) => {
                    let url = r.head.url.to_string();
                    fetched.push(url.clone());
                    let o = match url.as_str() {
                        "http://www.a.test/old-sitemap.xml" => response(
                            r.id,
                            &url,
                            301,
                            &[("Location", "http://www.a.test/sitemap.xml")],
                            b"",
                        ),
                        "http://www.a.test/sitemap.xml" => response(
                            r.id,
                            &url,
                            200,
                            &[("Content-Type", "application/xml")],
                            &urlset(&[("http://www.a.test/only-in-sitemap", None)]),
                        ),
                        _ => response(
                            r.id,
                            &url,
                            200,
                            &[("Content-Type", "text/html")],
                            b"<html></html>",
                        ),
                    };
                    h.feed(o, now);
                }
                _ => {}
            }
        }
        if h.outstanding() == 0 && h.core.in_flight() == 0 {
            break;
        }
        now = now.plus(secs(2));
    }
    assert!(
        fetched.iter().any(|u| u == "http://www.a.test/sitemap.xml"),
        "{fetched:?}"
    );
    assert!(
        fetched
            .iter()
            .any(|u| u == "http://www.a.test/only-in-sitemap"),
        "the redirected sitemap was not read: {fetched:?}"
    );
}

/// Runs until done (`sitemaps::run_answers`): robots.txt answered with `robots`, each
/// page with `web`. The URLs requested in order, and each one's last annotations.
fn answer_run(
    h: &mut Harness,
    robots: &str,
    web: &dyn Fn(&str) -> Answer,
) -> (Vec<String>, HashMap<String, Vec<String>>) {
    let mut trace = Trace::default();
    run_answers(h, None, &|_| robots.to_owned(), web, &mut trace);
    let fetched = trace.requests.into_iter().map(|(u, _)| u).collect();
    (fetched, trace.notes)
}

/// an XHTML page (XML prolog, served as text/html) that a sitemap lists is a
/// page: its links must be followed, not read as a failed sitemap.
#[test]
fn an_xhtml_page_listed_in_a_sitemap_keeps_its_links() {
    let mut h = harness_with(&["http://www.a.test/"], any_scope, |_| {});
    let robots = "User-agent: *\nAllow: /\nSitemap: http://www.a.test/sitemap.xml\n";
    let web = |url: &str| {
        match url {
        "http://www.a.test/sitemap.xml" => (
            200,
            vec![("Content-Type", "application/xml".to_owned())],
            urlset(&[("http://www.a.test/page.html", None)]),
        ),
        "http://www.a.test/page.html" => (
            200,
            vec![("Content-Type", "text/html".to_owned())],
            b"<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<html xmlns=\"http://www.w3.org/1999/xhtml\"><body><a href=\"/deep\">d</a></body></html>".to_vec(),
        ),
        _ => (200, vec![("Content-Type", "text/html".to_owned())], b"<html></html>".to_vec()),
    }
    };
    let (fetched, notes) = answer_run(&mut h, robots, &web);
    assert!(
        fetched.iter().any(|u| u == "http://www.a.test/deep"),
        "links of the XHTML page lost: {fetched:?} {:?}",
        notes.get("http://www.a.test/page.html")
    );
}

/// a text sitemap whose body the page cap cut (path without `sitemap`, so no
/// widened caps) must not queue the cut-off last line as a URL.
#[test]
fn a_cut_text_sitemap_does_not_queue_a_partial_url() {
    let mut h = harness_with(&["http://www.a.test/"], any_scope, |_| {});
    let robots = "User-agent: *\nAllow: /\nSitemap: http://www.a.test/urls.txt\n";
    let web = |url: &str| match url {
        "http://www.a.test/urls.txt" => (
            200,
            vec![
                ("Content-Type", "text/plain".to_owned()),
                ("X-Test-Body-Cut", "1".to_owned()),
            ],
            b"http://www.a.test/one\nhttp://www.a.test/tw".to_vec(),
        ),
        _ => (
            200,
            vec![("Content-Type", "text/html".to_owned())],
            b"<html></html>".to_vec(),
        ),
    };
    let (fetched, _) = answer_run(&mut h, robots, &web);
    assert!(
        fetched.iter().any(|u| u == "http://www.a.test/one"),
        "{fetched:?}"
    );
    assert!(
        !fetched.iter().any(|u| u == "http://www.a.test/tw"),
        "the cut-off line was fetched as a URL: {fetched:?}"
    );
}
