//! Fuzzes the byte parsers of `trawl::warc` (chunked bodies, response heads, damaged
//! `.warc.gz` files, dates, digests, crawl-log lines) through `trawl::warc::fuzz_parse` and
//! `trawl::crawllog::fuzz_parse`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    trawl::warc::fuzz_parse(data);
    trawl::crawllog::fuzz_parse(data);
});
