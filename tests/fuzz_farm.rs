//! Replays the committed fuzz corpus of farm stream entries through the entry point
//! the fuzzer calls (`trawl::farm::fuzz_wire`), so `cargo test` keeps it honest, and
//! checks that every damaged form of a good entry is refused with a typed error.
#![allow(clippy::unwrap_used, reason = "test code")]

use trawl::farm::{Entry, WireLink};

#[test]
fn farm_wire_corpus_replays_without_panics() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/farm_wire");
    let mut n = 0;
    let mut good = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        trawl::farm::fuzz_wire(&data);
        good += usize::from(Entry::decode(&data).is_ok());
        n += 1;
    }
    assert!(n >= 5, "corpus too small: {n} files in {}", dir.display());
    assert!(good >= 4, "the corpus holds good entries too: {good}");
    // Entries of the format before grants are refused by their version.
    for name in ["v1_empty", "v1_one", "v1_many"] {
        let data = std::fs::read(dir.join(name)).unwrap();
        assert_eq!(
            Entry::decode(&data),
            Err(trawl::farm::WireError::Version(1)),
            "{name}"
        );
    }
    let granted = Entry::decode(&std::fs::read(dir.join("granted")).unwrap()).unwrap();
    assert_eq!(
        granted.links[1].grant,
        ["http://f.test", "https://g.test:8443"]
    );
}

#[test]
fn random_damage_never_panics_and_is_never_read_as_good() {
    let e = Entry {
        from_node: 1,
        partition: 77,
        links: (0..20)
            .map(|i| WireLink {
                url: format!("http://h{i}.test/p"),
                via: "http://v.test/".to_owned(),
                hops: "LL".to_owned(),
                grant: if i % 5 == 0 {
                    vec!["http://g.test".to_owned()]
                } else {
                    Vec::new()
                },
            })
            .collect(),
    };
    let good = e.encode();
    let mut rng = fastrand::Rng::with_seed(13);
    for _ in 0..5000 {
        let mut bad = good.clone();
        for _ in 0..rng.usize(1..4) {
            let at = rng.usize(..bad.len());
            bad[at] ^= 1 << rng.u8(0..8);
        }
        trawl::farm::fuzz_wire(&bad);
        if bad != good {
            assert_ne!(Entry::decode(&bad).ok(), Some(e.clone()));
        }
    }
}
