//! Fuzzes the HTTP/1.1 response reader: see `trawl::http::fuzz_response` for the input
//! layout and the properties checked.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    trawl::http::fuzz_response(data);
});
