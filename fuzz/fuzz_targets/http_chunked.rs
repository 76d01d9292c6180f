//! Fuzzes the chunked transfer-coding decoder: see `trawl::http::fuzz_chunked` for the
//! input layout and the properties checked.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    trawl::http::fuzz_chunked(data);
});
