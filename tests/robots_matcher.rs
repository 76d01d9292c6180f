//! The wildcard matcher against a naive reference, and its linear cost on hostile
//! patterns.

use proptest::prelude::*;
use trawl::robots::pattern::{naive_matches, normalize, Pattern, Side, Syntax};
use trawl::robots::{Mode, RuleKind, Rules};

fn pattern_strategy() -> impl Strategy<Value = String> {
    // A small alphabet makes matches (and near misses) frequent.
    (
        prop::collection::vec(
            prop::sample::select(vec!['a', 'b', '/', '*', '*', '.', '%', '2', 'F', '?']),
            0..12,
        ),
        any::<bool>(),
    )
        .prop_map(|(chars, anchored)| {
            let mut s: String = std::iter::once('/').chain(chars).collect();
            if anchored {
                s.push('$');
            }
            s
        })
}

fn path_strategy() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec!['a', 'b', '/', '.', '%', '2', 'F', '?', '$', '*']),
        0..24,
    )
    .prop_map(|chars| std::iter::once('/').chain(chars).collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn linear_matcher_agrees_with_naive(pattern in pattern_strategy(), path in path_strategy()) {
        let compiled = Pattern::new(pattern.as_bytes(), Syntax::Wildcards);
        let target = normalize(path.as_bytes(), Side::Target);
        prop_assert_eq!(
            compiled.matches(&target),
            naive_matches(compiled.as_bytes(), &target),
            "pattern {:?} (normalized {:?}) path {:?}", pattern,
            String::from_utf8_lossy(compiled.as_bytes()), String::from_utf8_lossy(&target)
        );
    }

}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// The compiled rule set (sorted, indexed, early exit) decides like the obvious
    /// reading of RFC 9309 §2.2.2: among all matching rules take the longest pattern,
    /// allow on a tie, allow when nothing matches.
    #[test]
    fn rules_agree_with_naive_longest_match(
        rules in prop::collection::vec((any::<bool>(), pattern_strategy()), 0..30),
        paths in prop::collection::vec(path_strategy(), 1..8),
    ) {
        let mut text = String::from("user-agent: *\n");
        for (allow, p) in &rules {
            text.push_str(if *allow { "allow: " } else { "disallow: " });
            text.push_str(p);
            text.push('\n');
        }
        let compiled = Rules::parse(text.as_bytes(), "trawl", Mode::Rfc9309);
        for path in &paths {
            let target = normalize(path.as_bytes(), Side::Target);
            let mut best: Option<(usize, bool)> = None;
            for rule in compiled.rules() {
                if naive_matches(rule.pattern(), &target) {
                    let candidate = (rule.pattern().len(), rule.kind() == RuleKind::Allow);
                    best = Some(match best {
                        Some(b) if b >= candidate => b,
                        _ => candidate,
                    });
                }
            }
            let want = path == "/robots.txt" || best.is_none_or(|(_, allow)| allow);
            prop_assert_eq!(compiled.decide(path).allowed, want, "path {:?} in\n{}", path, text);
        }
    }
}

#[test]
fn hostile_pattern_is_linear() {
    // `/*a*a*a...*b` against `/aaaa...`: a backtracking matcher explores an
    // exponential number of ways to place the `a`s before failing on the `b`.
    let mut pattern = String::from("/");
    for _ in 0..2_000 {
        pattern.push_str("*a");
    }
    pattern.push_str("*b");
    let path = format!("/{}", "a".repeat(200_000));
    let compiled = Pattern::new(pattern.as_bytes(), Syntax::Wildcards);
    let mut scanned = 0;
    assert!(!compiled.matches_counting(path.as_bytes(), &mut scanned));
    // Linear: every path byte is looked at a bounded number of times.
    assert!(
        scanned <= 2 * path.len() + pattern.len(),
        "scanned {scanned} bytes"
    );

    // The anchored variant and a matching variant stay linear too.
    let anchored = Pattern::new(format!("{pattern}$").as_bytes(), Syntax::Wildcards);
    let mut scanned = 0;
    assert!(!anchored.matches_counting(path.as_bytes(), &mut scanned));
    assert!(scanned <= 2 * path.len() + pattern.len());
    let hit = format!("{path}b");
    let mut scanned = 0;
    assert!(compiled.matches_counting(hit.as_bytes(), &mut scanned));
    assert!(scanned <= 2 * hit.len() + pattern.len());
}

#[test]
fn hostile_robots_file_completes() {
    // A whole file of hostile rules against long URLs: finishes (the hang guard is
    // the test harness; with backtracking this would not end in our lifetime).
    let mut text = String::from("user-agent: *\n");
    for i in 0..200 {
        text.push_str("disallow: /");
        for _ in 0..(50 + i) {
            text.push_str("*a");
        }
        text.push_str("*b\n");
    }
    let rules = Rules::parse(text.as_bytes(), "trawl", Mode::Rfc9309);
    let url = format!("http://example.com/{}", "a".repeat(20_000));
    assert!(rules.allowed(&url));
    assert!(!rules.allowed(&format!("{url}b")));
}
