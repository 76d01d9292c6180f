//! Fuzz the re-crawl index reader: `trawl::recrawl::fuzz_read` must never panic, and
//! checks that every entry read re-encodes to the bytes it came from.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    trawl::recrawl::fuzz_read(data);
});
