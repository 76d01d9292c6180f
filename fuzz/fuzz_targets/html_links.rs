//! Link extractor on arbitrary bytes: `trawl::html::fuzz_extract` must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    trawl::html::fuzz_extract(data);
});
