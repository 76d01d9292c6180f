//! Replays the committed fuzz corpus of the `recrawl_index` target through the same
//! entry point the fuzzer calls, so every input that once found a bug stays fixed.

mod fuzz_support;

#[test]
fn replay_recrawl_index_corpus() {
    fuzz_support::replay("recrawl_index", 20, trawl::recrawl::fuzz_read);
}

/// A bounded, seeded mutation run over the corpus: a little of what the fuzzer does.
#[test]
fn seeded_mutations_never_panic() {
    fuzz_support::mutate("recrawl_index", 14, 3_000, trawl::recrawl::fuzz_read);
}
