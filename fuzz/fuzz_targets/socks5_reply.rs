//! Fuzzes the SOCKS5 handshake: see
//! `trawl::net::egress::fuzz_socks5_reply` for the properties checked.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    trawl::net::egress::fuzz_socks5_reply(data);
});
