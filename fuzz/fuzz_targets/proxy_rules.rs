//! Fuzzes the `--proxy-rules` grammar and the `NO_PROXY` list: see
//! `trawl::net::egress::fuzz_rules` for the properties checked.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    trawl::net::egress::fuzz_rules(data);
});
