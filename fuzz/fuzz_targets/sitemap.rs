//! Fuzz the sitemap parser: `trawl::sitemap::fuzz_parse` must never panic, and checks
//! the caps and the host rule as it goes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    trawl::sitemap::fuzz_parse(data);
});
