//! Fuzzes the `Proxy-Status` / `X-Squid-Error` reader: see
//! `trawl::net::egress::fuzz_status` for the properties checked.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    trawl::net::egress::fuzz_status(data);
});
