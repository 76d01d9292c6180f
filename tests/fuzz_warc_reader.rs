//! Replays the committed fuzz corpus of the `warc_reader` target through the same
//! entry point the fuzzer calls, so every input that once found a bug stays fixed.

mod fuzz_support;

#[test]
fn replay_warc_reader_corpus() {
    fuzz_support::replay("warc_reader", 12, trawl::warc::reader::fuzz_read);
}

/// A bounded, seeded mutation run over the corpus: a little of what the fuzzer does.
#[test]
fn seeded_mutations_never_panic() {
    fuzz_support::mutate("warc_reader", 21, 3_000, trawl::warc::reader::fuzz_read);
}
