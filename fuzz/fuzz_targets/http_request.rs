//! Fuzzes the request-head parser the metrics and status listener uses: see
//! `trawl::http::fuzz_request` for the input layout and the properties checked.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    trawl::http::fuzz_request(data);
});
