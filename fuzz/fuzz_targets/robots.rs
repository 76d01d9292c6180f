//! Fuzz the robots.txt parser and matcher: `trawl::robots::fuzz_parse` must never
//! panic, and checks the linear matcher against the naive one as it goes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    trawl::robots::fuzz_parse(data);
});
