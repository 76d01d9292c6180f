//! The status page: one self-contained HTML file (`status.html`: markup, style and a
//! small plain script, no external asset, no build step) embedded in the binary, and the
//! JSON it polls. The page draws its plots as SVG in the browser from `/api/status`.

use crate::engine::Stats;

/// The page served at `/`.
pub(super) const PAGE: &str = include_str!("status.html");

/// Extra header lines of the page: it may run only its own inline script and style,
/// fetch only from this listener, load nothing else, and never be framed.
pub(super) const PAGE_HEADERS: &str = "Content-Security-Policy: default-src 'none'; \
     script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; \
     img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'\r\n\
     X-Frame-Options: DENY\r\nReferrer-Policy: no-referrer\r\n";

/// `s` as JSON, the same document as `stats.json`.
pub(super) fn json(s: &Stats) -> String {
    // Stats holds only numbers, strings and maps with string keys: this cannot fail.
    serde_json::to_string(s).unwrap_or_else(|_| "{}".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_self_contained() {
        assert!(PAGE.starts_with("<!doctype html>"));
        // Nothing fetched from elsewhere: no external script, style, image or font.
        for needle in ["src=\"http", "href=\"http", "url(http", "@import", "//cdn"] {
            assert!(!PAGE.contains(needle), "{needle}");
        }
        assert!(PAGE.contains("fetch(\"/api/status\""));
        assert!(PAGE.contains("2000"), "refresh period");
    }

    #[test]
    fn every_panel_and_control_has_a_stable_id() {
        for id in [
            "plots",
            "now",
            "caps",
            "farm",
            "controls",
            "operator",
            "hosts-busiest",
            "hosts-failing",
            "errors",
            "btn-pause",
            "btn-resume",
            "btn-checkpoint",
            "btn-stop",
            "form-add",
            "form-block",
            "form-delay",
            "control-result",
        ] {
            assert!(PAGE.contains(&format!("id=\"{id}\"")), "{id}");
        }
        // Crawl data (URLs from the web) is inserted as text, never parsed as HTML.
        assert!(!PAGE.contains("innerHTML") && !PAGE.contains("insertAdjacentHTML"));
        // The token stays in the tab: read from the fragment, kept in sessionStorage.
        assert!(PAGE.contains("sessionStorage") && PAGE.contains("location.hash"));
        assert!(!PAGE.contains("localStorage"));
    }

    #[test]
    fn stats_serialize_like_stats_json() {
        let mut s = Stats {
            pages: 3,
            ..Stats::default()
        };
        s.outcomes.insert("fetched".to_owned(), 3);
        let v: serde_json::Value = serde_json::from_str(&json(&s)).unwrap();
        assert_eq!(v["pages"], 3);
        assert_eq!(v["outcomes"]["fetched"], 3);
        assert!(v["width"]["requests_in_flight"].is_u64());
    }
}
