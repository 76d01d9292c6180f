//! Replays the committed fuzz corpus of the `sitemap` target through the same entry
//! point the fuzzer calls, so every input that once found a bug stays fixed.

mod fuzz_support;

#[test]
fn replay_sitemap_corpus() {
    fuzz_support::replay("sitemap", 20, trawl::sitemap::fuzz_parse);
}

/// A bounded, seeded mutation run over the corpus: a little of what the fuzzer does.
#[test]
fn seeded_mutations_never_panic() {
    fuzz_support::mutate("sitemap", 14, 600, trawl::sitemap::fuzz_parse);
}
