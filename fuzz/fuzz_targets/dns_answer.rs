//! Fuzzes the DNS wire parser and query builder: see `trawl::net::dns::fuzz_answer` for
//! the properties checked.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    trawl::net::dns::fuzz_answer(data);
});
