//! Fuzzes the proxy URL parser: see `trawl::net::egress::fuzz_url` for the properties
//! checked.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    trawl::net::egress::fuzz_url(data);
});
