//! Replays the RFC 9309 conformance table in `tests/data/robots_conformance/`.
//!
//! Each suite names the RFC section and rule it checks; every case asserts the verdict
//! and the line of the deciding rule. All failures are collected and reported together.

mod robots_support;

use trawl::robots::{Mode, Rules};

use robots_support::load;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

#[test]
fn conformance_table() {
    let table = load();
    let mut failures = Vec::new();
    let mut count = 0;
    for suite in &table.suite {
        assert!(
            !suite.rfc.is_empty() && !suite.rule.is_empty(),
            "suite names its rule"
        );
        let mode = match suite.mode.as_deref() {
            None | Some("rfc9309") => Mode::Rfc9309,
            Some("draft1996") => Mode::Draft1996,
            Some(other) => panic!("unknown mode {other}"),
        };
        let mut bytes = match (&suite.robots, &suite.robots_hex) {
            (Some(text), None) => text.as_bytes().to_vec(),
            (None, Some(h)) => hex(h),
            _ => panic!(
                "suite {:?} needs exactly one of robots, robots_hex",
                suite.rule
            ),
        };
        if let Some(pad) = suite.pad_bytes {
            while bytes.len() < pad {
                bytes.extend_from_slice(b"# padding line to make the file large\n");
            }
        }
        let rules = Rules::parse(&bytes, &suite.agent, mode);
        for case in &suite.cases {
            count += 1;
            let decision = rules.decide(&case.url);
            let line = decision.line().unwrap_or(0);
            if decision.allowed != case.allowed || line != case.line {
                failures.push(format!(
                    "§{} {}: agent {:?} url {:?}: want allowed={} line={}, got allowed={} line={} ({:?})",
                    suite.rfc,
                    suite.rule,
                    suite.agent,
                    case.url,
                    case.allowed,
                    case.line,
                    decision.allowed,
                    line,
                    decision.rule().map(ToString::to_string),
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {count} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        count >= 150,
        "the table must hold at least 150 cases, it has {count}"
    );
}

#[test]
fn table_covers_the_rfc_sections() {
    let table = load();
    for section in [
        "2.1", "2.2", "2.2.1", "2.2.2", "2.2.3", "2.2.4", "2.5", "5.1", "5.2",
    ] {
        assert!(
            table.suite.iter().any(|s| s.rfc == section),
            "no conformance suite for RFC 9309 §{section}"
        );
    }
}
