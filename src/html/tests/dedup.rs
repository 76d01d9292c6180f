//! Property test: deduplication and the cap against a naive reference.

use proptest::prelude::*;

use super::*;

/// A page of `<a>`/`<link>` elements drawn from a small pool of references (so
/// duplicates, spellings of one URL, rejections and `nofollow` mix).
fn link_page() -> impl Strategy<Value = Vec<(&'static str, &'static str, bool)>> {
    let href = prop::sample::select(vec![
        "a",
        "./a",
        "a#x",
        "/dir/a",
        "../dir/a",
        "b?q=1",
        "b?q=1#f",
        "%62?q=1",
        "B",
        "//example.com/dir/a",
        "http://EXAMPLE.com:80/dir/a",
        "mailto:x",
        "javascript:0",
        "http://./",
        "http://[bad",
        "c d",
        "é",
        "/",
        "",
        "#top",
    ]);
    let tag = prop::sample::select(vec!["a", "link", "area"]);
    prop::collection::vec((tag, href, any::<bool>()), 0..40)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, .. ProptestConfig::default() })]
    /// `extract_keys` lists exactly the distinct canonical URLs in first-occurrence
    /// order (as canonicalizing each value one by one gives them), a link is
    /// nofollow only if every occurrence is, and with a cap it keeps the first `cap`
    /// distinct links and counts the others.
    #[test]
    fn distinct_links_match_a_naive_reference(
        elements in link_page(),
        cap in 1usize..8,
    ) {
        let mut html = String::new();
        for (tag, href, nofollow) in &elements {
            let rel = if *nofollow { " rel=nofollow" } else { "" };
            html.push_str(&format!("<{tag}{rel} href=\"{href}\">"));
        }
        let mut order: Vec<String> = Vec::new();
        let mut follow: std::collections::HashMap<String, bool> = Default::default();
        for (_, href, nofollow) in &elements {
            if let Ok(u) = crate::url::canonicalize(&base(), href) {
                let key = String::from(u);
                if !follow.contains_key(&key) {
                    order.push(key.clone());
                }
                *follow.entry(key).or_insert(false) |= !nofollow;
            }
        }
        let page = Links::extract_keys(&base(), html.as_bytes(), None, &ExtractOptions::default());
        let got: Vec<(String, bool)> = page.links.iter()
            .filter_map(|l| l.url.clone().ok().map(|u| (u, l.nofollow)))
            .collect();
        let want: Vec<(String, bool)> = order.iter().map(|k| (k.clone(), !follow[k])).collect();
        prop_assert_eq!(&got, &want, "html: {}", html);
        prop_assert_eq!(page.links_dropped, 0);

        let capped = ExtractOptions { max_links: cap, ..ExtractOptions::default() };
        let page = Links::extract_keys(&base(), html.as_bytes(), None, &capped);
        let got: Vec<String> = page.links.iter().filter_map(|l| l.url.clone().ok()).collect();
        let kept = order.len().min(cap);
        prop_assert_eq!(&got[..], &order[..kept]);
        prop_assert_eq!(page.links_dropped, order.len() - kept);
    }
}
