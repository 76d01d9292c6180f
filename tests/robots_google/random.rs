//! Seeded random files: trawl agrees with Google exactly without the RFC readings, and
//! with Google on the RFC reading with them.

use trawl::robots::pattern::{normalize, Side};
use trawl::robots::{Mode, Rules};

use crate::generate::{generate, path, seed, short, Features};
use crate::oracle::{google_allows, trawl_reason};
use crate::AGENT;

const FILES: usize = 1_500;
const PATHS_PER_FILE: usize = 8;

#[test]
fn random_files_without_rfc_readings_agree_with_google_exactly() {
    let mut rng = fastrand::Rng::with_seed(seed());
    let mut cases = 0;
    let mut disallowed = 0;
    let mut failures = Vec::new();
    for _ in 0..FILES {
        let file = generate(&mut rng, Features::GOOGLE);
        assert!(!file.used_other_records && !file.used_percent && !file.used_no_slash);
        let text = String::from_utf8(file.raw.clone()).expect("generated files are UTF-8");
        let rules = Rules::parse(&file.raw, AGENT, Mode::Rfc9309);
        for _ in 0..PATHS_PER_FILE {
            let path = path(&mut rng, Features::GOOGLE);
            let ours = rules.allowed(&path);
            let google = google_allows(&text, &path);
            cases += 1;
            disallowed += usize::from(!ours);
            if ours != google && failures.len() < 3 {
                failures.push(format!(
                    "path {path:?}: trawl {ours} ({}), google {google}\n{}",
                    trawl_reason(&rules, &path),
                    short(&text)
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "trawl and Google disagree:\n{}",
        failures.join("\n\n")
    );
    // The test must exercise both verdicts.
    assert!(
        disallowed > cases / 10 && disallowed < cases * 9 / 10,
        "{disallowed} of {cases} disallowed"
    );
}

#[test]
fn random_files_with_rfc_readings_agree_with_google_on_the_rfc_reading() {
    let mut rng = fastrand::Rng::with_seed(seed() ^ 0x5eed);
    let mut cases = 0;
    // Disagreements on the raw file, by the features the case used (a case can count
    // under several): other records, percent-encoding, no slash, /robots.txt.
    let mut raw_disagreements = [0usize; 4];
    let mut raw_total = 0;
    let mut failures = Vec::new();
    for _ in 0..FILES {
        let file = generate(&mut rng, Features::ALL);
        let text = String::from_utf8(file.raw.clone()).expect("generated files are UTF-8");
        let rules = Rules::parse(&file.raw, AGENT, Mode::Rfc9309);
        for _ in 0..PATHS_PER_FILE {
            let path = path(&mut rng, Features::ALL);
            let normalized = String::from_utf8(normalize(path.as_bytes(), Side::Target).into())
                .expect("normalized paths are ASCII");
            let ours = rules.allowed(&path);
            let is_robots_txt = normalized == "/robots.txt";
            let rfc_reading = is_robots_txt || google_allows(&file.rfc, &normalized);
            cases += 1;
            if ours != rfc_reading && failures.len() < 3 {
                failures.push(format!(
                    "path {path:?}: trawl {ours} ({}), google on the RFC reading {rfc_reading}\n\
                     raw {}\nrfc {}",
                    trawl_reason(&rules, &path),
                    short(&text),
                    short(&file.rfc)
                ));
            }
            if ours != google_allows(&text, &path) {
                raw_total += 1;
                // Explained only by a feature this case used.
                let path_percent = normalized != path;
                let explained = [
                    file.used_other_records,
                    file.used_percent || path_percent,
                    file.used_no_slash,
                    is_robots_txt,
                ];
                for (count, used) in raw_disagreements.iter_mut().zip(explained) {
                    *count += usize::from(used);
                }
                match explained.iter().any(|&e| e) {
                    true => {}
                    false if failures.len() < 3 => failures.push(format!(
                        "unexplained: path {path:?}: trawl {ours}\nraw {}",
                        short(&text)
                    )),
                    false => {}
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    eprintln!(
        "{cases} cases; trawl differs from Google on the raw file in {raw_total}, by feature \
         {raw_disagreements:?} \
         (other records, percent-encoding, missing slash, /robots.txt), all equal on the \
         RFC reading"
    );
    // Each reading must actually have been exercised.
    assert!(
        raw_disagreements.iter().all(|&n| n > 0),
        "{raw_disagreements:?}"
    );
}
